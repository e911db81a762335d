"""TinyLM's runs on the app's server, as a page asks for them (ui/tinylm_api.py): the settings held to the page's own
controls, a request that is not one refused in one line, a run started, polled (its history sent once), paused,
left; the routes answer JSON, a 400 with one line for a bad request, and never a NaN."""

from __future__ import annotations

import asyncio
import json
import math
import time

import pytest

from sim.views import catalog
from ui import tinylm_api as api

VIEWER = "0123456789abcdef" * 2


def settings(**changed) -> dict:
    view = catalog.view("tinylm")
    state = view.defaults()
    return {c.field: state[c.key] for c in view.controls if c.field != "trl"} | changed


REFUSED = [  # (settings changed, what the page is told)
    ({"group_size": 33}, "Group size G (tl_G) = 33 is not a value of this page's control (a number from 2 to 32)"),
    ({"group_size": 8.5}, "Group size G (tl_G) = 8.5 is not a value"),
    ({"group_size": True}, "Group size G (tl_G) = True is not a value"),
    ({"lr": 0.0007}, "(tl_lr) = 0.0007 is not a value of this page's control (one of 0.0001, 0.0003, 0.0005, 0.001"),
    ({"iterations": 601}, "(tl_iters) = 601 is not a value"),
    ({"preset": "<b>x</b>"}, "Preset (tl_preset) = '<b>x</b>' is not a value"),
    ({"from_scratch": True}, "not a setting of this page: from_scratch"),
    ({"seed": float("nan")}, "(tl_seed) = nan is not a value"),
    ({"prompts_per_iter": 64, "group_size": 32, "eval_samples": 64, "mu": 4}, None),  # fits: refused or not by memory
]


@pytest.mark.parametrize("changed, says", REFUSED)
def test_settings_are_held_to_the_pages_controls(changed, says):
    if says is None:
        try:
            api.story_config(settings(**changed))
        except api.ApiError as e:
            assert str(e).startswith("they would not fit in the server's memory") and e.settings
        return
    with pytest.raises(api.ApiError) as e:
        api.story_config(settings(**changed))
    assert says in str(e.value) and e.value.settings and "\n" not in str(e.value)


def test_a_missing_setting_or_a_bad_viewer_is_one_line():
    with pytest.raises(api.ApiError, match="seed is missing"):
        api.story_config({k: v for k, v in settings().items() if k != "seed"})
    for viewer in (None, "x" * 32, "0" * 31, VIEWER + "0", 7):
        with pytest.raises(api.ApiError, match="viewer must be 32 hex digits"):
            api.handle(object(), "start", {"viewer": viewer, "settings": settings()})


def test_the_config_is_the_presets_with_the_pages_settings_on_top():
    cfg = api.story_config(settings(preset="chapter-lab", group_size=4, beta=0, eval_samples=8))
    assert cfg.grpo.blind_spot_prompts is False and cfg.grpo.group_size == 4 and cfg.grpo.beta == 0.0
    assert cfg.eval_samples == 8 and cfg.grpo.threads == 1 and not cfg.from_scratch


def test_nan_travels_as_null():
    assert api.plain({"a": [1.0, float("nan"), (float("inf"), 2)], "b": "x"}) == {"a": [1.0, None, [None, 2]], "b": "x"}


class Request:
    def __init__(self, body: bytes):
        self.raw = body

    async def body(self):
        return self.raw


def call(routes: dict, action: str, body) -> tuple[int, dict]:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    reply = asyncio.run(routes[action](Request(raw)))
    return reply.status_code, json.loads(reply.body)


class Server:  # what the routes read of the app's server: its one registry
    def __init__(self, registry):
        self.tinylm_registry = registry


def routes_of(registry) -> dict:
    return {r.path.rsplit("/", 1)[1]: r.endpoint for r in api.api_routes(Server(registry))}


def test_a_request_that_is_not_one_is_a_400_with_one_line():
    routes = routes_of(None)
    assert call(routes, "start", b"{") == (400, {"error": "a request is a JSON object"})
    assert call(routes, "start", b"[1]") == (400, {"error": "a request is a JSON object"})
    assert call(routes, "start", b" " * (api.MAX_BODY + 1))[1]["error"] == f"a request is at most {api.MAX_BODY} bytes"
    # a setting sim refuses: its reason alone, flagged, for the page to introduce with its sentence
    status, said = call(routes, "start", json.dumps({"viewer": VIEWER, "settings": settings(group_size=1)}).encode())
    assert status == 400 and said["settings"] is True and "Group size G (tl_G) = 1" in said["error"]
    assert [r.methods for r in api.api_routes(Server(None))] == [{"POST"}] * 4


@pytest.mark.integration
def test_a_run_on_the_server_starts_polls_pauses_and_ends():
    """A tiny run through the routes: its history arrives once (each poll sends what the page does not hold yet);
    its sole viewer may pause it; it finishes with pass@k; a second page with the same settings shares it."""
    from sim.tinylm.job import TinyLMRuns

    routes = routes_of(TinyLMRuns(max_concurrent=1))
    tiny = settings(iterations=6, prompts_per_iter=2, group_size=2, eval_samples=4)
    status, snap = call(routes, "start", {"viewer": VIEWER, "settings": tiny})
    assert status == 200 and snap["state"] in ("queued", "starting", "grpo") and snap["iterations"] == 6
    held, deadline = [], time.monotonic() + 120
    while snap["state"] != "done" and time.monotonic() < deadline:
        time.sleep(0.2)
        status, snap = call(routes, "snapshot", {"viewer": VIEWER, "since": len(held)})
        assert status == 200 and snap["history_from"] == len(held)
        held += snap["history"]
        if snap["state"] == "grpo" and snap["can_pause"] and not snap["paused"]:
            assert call(routes, "pause", {"viewer": VIEWER, "on": True})[1]["paused"] is True
            assert call(routes, "pause", {"viewer": VIEWER, "on": False})[1]["paused"] is False
    assert snap["state"] == "done" and [m["iteration"] for m in held] == [1, 2, 3, 4, 5, 6]
    assert snap["result"]["eval_samples"] == 4 and len(snap["result"]["pass_at_k_after"]) == 4
    assert all(v is None or math.isfinite(v) for m in held for v in m.values() if not isinstance(v, str))
    other = "f" * 32
    assert call(routes, "start", {"viewer": other, "settings": tiny})[1]["state"] == "done"  # replayed at once
    assert call(routes, "leave", {"viewer": VIEWER}) == (200, {"state": "stopped"})
    assert call(routes, "snapshot", {"viewer": "e" * 32, "since": 0})[1]["error"].startswith("This page watches no run")
