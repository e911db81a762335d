"""TinyLM's runs on the app's server, for the page that asks for one ("Start on the server"): small JSON routes over the
server's one registry (sim/tinylm/job.py TinyLMRuns: students who start the same settings share one run, a line for
the trainer's slots, a run stopped when nobody polls it). A page trains in its own browser by default
(assets/js/tinylm_run.js); this is the other way, for the command line's twin on the page and for a slow device.

    POST /api/tinylm/start     {viewer, settings}  -> the run's snapshot (settings: the page's fields, checked)
    POST /api/tinylm/snapshot  {viewer, since}     -> the run's snapshot, its history from `since` (and a heartbeat)
    POST /api/tinylm/pause     {viewer, on}        -> pause or resume (only a run's sole viewer may pause it)
    POST /api/tinylm/leave     {viewer}            -> stop watching (the run ends when nobody watches it)

`viewer` is the page's own random name (32 hex digits), never shown. A request is at most MAX_BODY bytes of JSON; a
bad one is a 400 with one line; nothing of it is ever echoed as markup. The page draws the snapshot with the same
code as a run in the browser (assets/js/tinylm_views.js).
"""

from __future__ import annotations

import asyncio
import json
import math
import re

MAX_BODY = 8192  # bytes of a request: the settings are about 400
VIEWER = re.compile(r"[0-9a-f]{32}\Z")
PREFIX = "/api/tinylm"
MAX_WAITING = 32  # runs waiting for a slot: past it a new run is refused (the page trains in the browser instead)


class ApiError(ValueError):
    """A request the page should not have sent: a 400 with this one line. `settings`: the line is sim's reason for
    refusing the run's settings, which the page introduces with its own sentence (player_charts.js cannotRun)."""

    def __init__(self, message: str, *, settings: bool = False):
        super().__init__(message)
        self.settings = settings


def story_config(fields: dict):
    """The StoryConfig for the page's settings (sim/views/tinylm.py SETTINGS, by field name), held to the page's own
    controls (ranges, steps, options), or ApiError; the memory cap checked before anything starts."""
    from sim.tinylm.grpo_train import GRPOConfig
    from sim.tinylm.memory import MemoryCapError, check_run
    from sim.tinylm.presets import preset_changes
    from sim.tinylm.story import StoryConfig
    from sim.views.controls import build_config, check_values
    from sim.views.tinylm import SETTINGS

    try:
        if not isinstance(fields, dict):
            raise ValueError("settings must be an object of the page's fields")
        spec = {s.field: s for s in SETTINGS}  # the page sends its fields (control_rules.js configOf)
        if missing := [f for f in spec if f not in fields]:
            raise ValueError(f"{missing[0]} is missing")
        by_key = check_values(SETTINGS, {spec[f].key if f in spec else f: v for f, v in fields.items()})
        grpo = build_config(GRPOConfig, SETTINGS, by_key, threads=1, **preset_changes(by_key["tl_preset"]))
        cfg = build_config(StoryConfig, SETTINGS, by_key, grpo=grpo)
        check_run(cfg.grpo.prompts_per_iter, cfg.grpo.group_size, cfg.sft.model, cfg.eval_samples)
    except MemoryCapError as e:
        raise ApiError(f"they would not fit in the server's memory: {e}", settings=True) from None
    except (ValueError, TypeError) as e:
        raise ApiError(str(e), settings=True) from None
    return cfg


def plain(x):
    """x as JSON takes it: a NaN or an infinity (a diverged step's grad_norm) is null, tuples are lists."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    return x


def snapshot(job, viewer: str, since: int = 0) -> dict:
    """The run's snapshot as the page reads it: its history from `since` (the page holds the rest), whether this
    viewer may pause it."""
    snap = job.snapshot(viewer)
    since = min(max(int(since), 0), len(snap["history"]))
    snap["history_from"] = since
    snap["history"] = snap["history"][since:]
    snap["can_pause"] = job.can_pause(viewer)
    return plain(snap)


def handle(runs, action: str, body: dict) -> dict:
    """One request on the registry `runs` (sim.tinylm.job.TinyLMRuns): the snapshot to answer, or ApiError."""
    viewer = body.get("viewer")
    if not isinstance(viewer, str) or not VIEWER.match(viewer):
        raise ApiError("viewer must be 32 hex digits")
    if action == "start":
        cfg = story_config(body.get("settings"))
        if runs.find(cfg) is None and runs.waiting() >= MAX_WAITING:
            raise ApiError(f"The server's trainer is busy ({MAX_WAITING} runs are waiting): train in your browser "
                           "instead (Start).")
        return snapshot(runs.join(cfg, viewer), viewer)
    job = runs.watched_by(viewer)
    if job is None and action == "leave":
        return {"state": "stopped"}  # nothing to leave (an ended run is forgotten): the same answer
    if job is None:
        raise ApiError("This page watches no run on the server: press Start on the server again.")
    if action == "snapshot":
        since = body.get("since", 0)
        if not isinstance(since, int) or isinstance(since, bool):
            raise ApiError("since must be a whole number")
        return snapshot(job, viewer, since)
    if action == "pause":
        if not isinstance(body.get("on"), bool):
            raise ApiError("on must be true or false")
        job.pause(viewer) if body["on"] else job.resume(viewer)
        return snapshot(job, viewer)
    if action == "leave":
        job.leave(viewer)
        return {"state": "stopped"}
    raise ApiError(f"unknown action {action[:40]!r}")


def api_routes(server) -> list:
    """The Starlette routes, POST only, on `server`'s TinyLM registry (taken when the first request comes: torch is
    imported then, not at the server's start). The registry's calls take locks and may start a process: they run off
    the event loop."""
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    def endpoint(action: str):
        async def serve(request):
            raw = await request.body()
            try:
                if len(raw) > MAX_BODY:
                    raise ApiError(f"a request is at most {MAX_BODY} bytes")
                try:
                    body = json.loads(raw)
                except (ValueError, UnicodeDecodeError):
                    raise ApiError("a request is a JSON object") from None
                if not isinstance(body, dict):
                    raise ApiError("a request is a JSON object")
                out = await asyncio.to_thread(handle, server.tinylm_registry, action, body)
            except ApiError as e:
                return JSONResponse({"error": str(e)} | ({"settings": True} if e.settings else {}), status_code=400)
            return JSONResponse(out, headers={"Cache-Control": "no-store"})

        return serve

    return [Route(f"{PREFIX}/{a}", endpoint(a), methods=["POST"]) for a in ("start", "snapshot", "pause", "leave")]
