"""The classroom bench and its headless browser tab (`scripts/st_client.py`).

- Unit tests on synthetic server messages: widget states, URL sync, button triggers, the message cache,
  fragment timers, the "new data" pattern, the CLI's errors.
- `test_tab_sends_what_chromium_sends` (browser): Chromium and a `Tab` do the same things on the same
  server (open Training dynamics, Play, G 8 -> 9, Pause); their websocket messages are compared field by
  field, and the fragment-rerun rates are printed (run with -s to see them).
- `test_short_class_that_saturates_the_server`: the bench itself, 40 students each trying a new seed every 2 s
  and the lecturer, for 10 s against a server it starts: no
  error, and every lecturer change showed a chart carrying the new G.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from scripts.bench_classroom import data_pattern, parse_args
from scripts.st_client import Tab, js_string
from tests.fixtures.serve import CHROMIUM, IDLE, ROOT, launch_chromium, start_server


# ---- synthetic messages ----
class FakeSocket:
    def __init__(self):
        self.sent = []

    async def send(self, data: bytes):
        from streamlit.proto.BackMsg_pb2 import BackMsg

        msg = BackMsg()
        msg.ParseFromString(data)
        self.sent.append((time.monotonic(), msg))


def new_session(run_id: str, fragments=(), page="PAGE") -> ForwardMsg:
    m = ForwardMsg()
    m.new_session.page_script_hash = page
    m.new_session.config.max_cached_message_age = 2
    m.metadata.run.script_run_id = run_id
    m.metadata.run.fragment_ids.extend(fragments)
    return m


def finished(run_id: str, status: int = 0, fragments=()) -> ForwardMsg:
    m = ForwardMsg(script_finished=status)
    m.metadata.run.script_run_id = run_id
    m.metadata.run.fragment_ids.extend(fragments)
    return m


def slider(key: str, default: float, fragment: str = "") -> ForwardMsg:
    m = ForwardMsg()
    s = m.delta.new_element.slider
    s.id, s.label, s.min, s.max, s.query_param_key = f"$$ID-abc-{key}", key, 2, 64, key
    s.default.append(default)
    m.delta.fragment_id = fragment
    return m


def button(key: str, label: str, disabled: bool = False) -> ForwardMsg:
    m = ForwardMsg()
    b = m.delta.new_element.button
    b.id, b.label, b.disabled = f"$$ID-def-{key}", label, disabled
    return m


def chart(title: str, fragment: str = "") -> ForwardMsg:
    m = ForwardMsg()
    m.delta.new_element.plotly_chart.spec = json.dumps({"layout": {"title": {"text": title}}})
    m.delta.fragment_id = fragment
    return m


def feed(tab: Tab, *msgs: ForwardMsg) -> None:
    for m in msgs:
        tab._handle(m.SerializeToString(), time.monotonic())


def run(coro):
    return asyncio.run(coro)


def test_widget_states_url_and_trigger_as_the_frontend_sends_them():
    async def scenario():
        tab = Tab("http://h:1", "training", "classroom=1")
        tab._ws = ws = FakeSocket()
        await tab._send_rerun(first=True)
        feed(tab, new_session("r1"), slider("G", 8), button("play", "Play"), finished("r1"))
        await tab.set_value("G", 9)
        await tab.click("Play")
        await tab.set_value("G", 8)  # back to the default: the URL drops it
        return ws.sent

    sent = [m.rerun_script for _, m in run(scenario())]
    first, change, click, back = sent
    assert first.page_name == "training" and first.HasField("widget_states") and not first.widget_states.widgets
    assert first.page_script_hash == "" and first.query_string == "classroom=1"
    assert change.page_name == "" and change.page_script_hash == "PAGE"
    assert [(w.id, list(w.double_array_value.data)) for w in change.widget_states.widgets] == [("$$ID-abc-G", [9.0])]
    assert change.query_string == "classroom=1&G=9" and change.context_info.url.endswith("/training?classroom=1&G=9")
    assert [w.id for w in click.widget_states.widgets] == ["$$ID-abc-G", "$$ID-def-play"]
    assert click.widget_states.widgets[1].trigger_value and not click.fragment_id
    assert [w.id for w in back.widget_states.widgets] == ["$$ID-abc-G"]  # the trigger was sent once
    assert back.query_string == "classroom=1"
    assert js_string(9.0) == "9" and js_string(0.25) == "0.25" and js_string(True) == "true"


def test_disabled_or_missing_button_sends_nothing_and_stale_widgets_go():
    async def scenario():
        tab = Tab("http://h:1", "training")
        tab._ws = ws = FakeSocket()
        feed(tab, new_session("r1"), slider("G", 8), slider("old", 3), button("play", "Play", disabled=True))
        feed(tab, finished("r1"))
        assert await tab.click("Play") is None and await tab.click("Nope") is None
        feed(tab, new_session("r2"), slider("G", 8), finished("r2"))  # r2 no longer draws "old" nor Play
        assert tab.widget("old") is None and tab.button("Play") is None
        await tab._send_rerun()
        return ws.sent

    ((_, last),) = run(scenario())
    assert [w.id for w in last.rerun_script.widget_states.widgets] == ["$$ID-abc-G"]


def test_cache_refs_are_resolved_and_expire_after_max_age():
    tab = Tab("http://h:1", "training")
    big = chart("Mean accuracy (G = 9)")
    big.hash, big.metadata.cacheable = "H1", True
    feed(tab, new_session("r1"), big, finished("r1"))
    assert list(tab._cache) == ["H1"]
    ref = ForwardMsg(ref_hash="H1")
    ref.metadata.delta_path.extend([0, 3])
    hits = []

    async def expect_ref():
        fut = tab.expect(data_pattern("G", 9), since=0.0)
        feed(tab, new_session("r2"), ref)
        hits.append(await asyncio.wait_for(fut, 1))

    run(expect_ref())
    assert hits and not tab.stats.errors  # the ref was resolved to the cached chart and matched
    for i in (2, 3, 4):
        feed(tab, finished(f"r{i}"), new_session(f"r{i + 1}"))
    assert not tab._cache  # aged out after max_cached_message_age runs without a hit
    feed(tab, ForwardMsg(ref_hash="H1"))
    assert tab.stats.errors == ["cache miss H1"]


def test_fragment_timer_runs_on_a_grid_and_full_runs_cancel_it():
    async def scenario():
        tab = Tab("http://h:1", "training")
        tab._ws = ws = FakeSocket()
        feed(tab, new_session("r1"))
        tick = ForwardMsg()
        tick.auto_rerun.fragment_id, tick.auto_rerun.interval = "F", 0.05
        feed(tab, tick)
        first = tab.timers["F"][1]
        feed(tab, tick)  # the same interval again: the frontend keeps its timer
        assert tab.timers["F"][1] is first and tab.playing
        await asyncio.sleep(0.275)
        feed(tab, new_session("r2"))  # a full-app run: every timer stops
        assert not tab.playing
        await asyncio.sleep(0.1)
        return ws.sent

    sent = run(scenario())
    assert 4 <= len(sent) <= 6  # beats at 0.05, 0.10, ..., 0.25 s
    assert all(m.rerun_script.fragment_id == "F" and m.rerun_script.is_auto_rerun for _, m in sent)
    gaps = [b[0] - a[0] for a, b in zip(sent, sent[1:], strict=False)]
    assert statistics.median(gaps) == pytest.approx(0.05, abs=0.02)


def test_new_data_is_found_in_a_custom_component_and_only_in_runs_after_the_change():
    """The rewritten page may draw through st.components.v2: its JSON data must carry "G": value."""

    def component(data: dict) -> ForwardMsg:
        m = ForwardMsg()
        m.delta.new_element.bidi_component.component_name = "player"
        m.delta.new_element.bidi_component.json = json.dumps(data)
        return m

    async def scenario():
        tab = Tab("http://h:1", "training")
        feed(tab, new_session("r1"))
        since = time.monotonic()
        fut = tab.expect(data_pattern("G", 12), since)
        feed(tab, component({"G": 12, "acc": [0.2, 0.3]}))  # still the run from before the change
        assert not fut.done()
        feed(tab, new_session("r2"), component({"G": 11}), chart("Mean accuracy (G = 12)", fragment="F"))
        assert fut.done()  # a plotly chart counts too
        fut2 = tab.expect(data_pattern("G", 13), time.monotonic())
        feed(tab, new_session("r3"), component({"config": {"G": 13}, "acc": [0.2]}))
        assert fut2.done() and fut2.result() >= since

    run(scenario())


def test_new_data_pattern():
    p = data_pattern("G", 9)
    assert p.search(b"Mean accuracy over the 24 prompts (G = 9)")
    assert p.search(b'{"G": 9, "T": 200}') and p.search(b'{"G":9.0}')
    assert not p.search(b"(G = 90)") and not p.search(b"(G = 8)") and not p.search(b"logG = 9")
    assert not p.search(b"G = 9.5")


@pytest.mark.parametrize(
    "argv, message",
    [
        ([], "one of the arguments --url --start-server is required"),
        (["--start-server", "--students", "-1"], "--students must be >= 0"),
        (["--start-server", "--duration", "0"], "must be > 0"),
        (["--start-server", "--duration", "soon"], "is not a number"),
        (["--url", "localhost:8501"], "--url must look like"),
        (["--start-server", "--json-out", "/no/such/dir/x.json"], "does not exist"),
    ],
)
def test_bad_flags_give_one_line_and_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        parse_args(argv)
    err = capsys.readouterr().err
    assert e.value.code == 2 and message in err and err.count("\n") == 1 and err.startswith("error: ")


# ---- the same actions from Chromium and from a Tab ----
SCENARIO = (("Play", 3.0), ("G", 2.5), ("Pause", 1.0))  # (action, seconds to watch afterwards)


def chromium_messages(url: str) -> tuple[list, dict]:
    """What Chromium sends while a user opens Training dynamics, presses Play, moves G to 9, pauses."""
    from playwright.sync_api import sync_playwright
    from streamlit.proto.BackMsg_pb2 import BackMsg

    sent, marks = [], {}

    def on_socket(ws):
        def on_frame(payload):
            msg = BackMsg()
            msg.ParseFromString(payload if isinstance(payload, bytes) else payload.encode())
            sent.append((time.monotonic(), msg))

        ws.on("framesent", on_frame)

    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.on("websocket", on_socket)
        page.goto(f"{url}/training")
        g = page.get_by_test_id("stSlider").filter(has_text="Group size G").get_by_role("slider")
        g.wait_for(timeout=60_000)  # drawn (on a fresh server the first run only switches to st.navigation)
        page.wait_for_selector(IDLE, timeout=60_000)
        page.wait_for_timeout(1000)

        def wait_sent(pred, timeout=15.0):  # a busy Chromium sends seconds after the click: wait for it
            deadline = time.monotonic() + timeout
            while not any(pred(m.rerun_script) for _, m in sent[1:]) and time.monotonic() < deadline:
                page.wait_for_timeout(100)

        for action, watch in SCENARIO:
            marks[action] = time.monotonic()
            if action == "G":
                g.focus()
                g.press("ArrowRight")
                wait_sent(
                    lambda r: any(
                        w.id.endswith("-G") and w.double_array_value.data == [9.0] for w in r.widget_states.widgets
                    )
                )
            else:  # the Streamlit button, or the browser-side player's own button
                streamlit_button = page.get_by_test_id("stButton").get_by_role("button", name=action, exact=True)
                if streamlit_button.count():
                    streamlit_button.click()
                    wait_sent(lambda r: any(w.trigger_value for w in r.widget_states.widgets))
                elif (player := page.get_by_role("button", name=action, exact=True)).count():
                    player.first.click()
            page.wait_for_timeout(watch * 1000)
        browser.close()
    return sent, marks


def tab_messages(url: str) -> tuple[list, dict]:
    """What a Tab sends for the same actions."""
    marks = {}

    async def scenario():
        tab = Tab(url, "training", record=True)
        t = time.monotonic()
        await tab.open()
        assert await tab.wait_full_run(t, 60)
        await asyncio.sleep(1.0)
        for action, watch in SCENARIO:
            marks[action] = time.monotonic()
            if action == "G":
                await tab.set_value("G", 9)
            else:
                marks["streamlit_button"] = tab.button(action) is not None  # else: Play plays in the browser
                await tab.click(action)
            await asyncio.sleep(watch)
        await tab.close()
        assert not tab.stats.errors
        return tab.record

    return asyncio.run(scenario()), marks


def shape(sent: list, marks: dict) -> dict:
    """The facts compared between Chromium and the Tab."""
    reruns = [(t, m.rerun_script) for t, m in sent if m.WhichOneof("type") == "rerun_script"]
    first, later = reruns[0][1], [r for _, r in reruns[1:]]

    def trig(r):
        return [w.id.rsplit("-", 1)[-1] for w in r.widget_states.widgets if w.trigger_value]

    def value(r, key):
        w = next(w for w in r.widget_states.widgets if w.id.endswith(f"-{key}"))
        return list(w.double_array_value.data)

    auto = [(t, r) for t, r in reruns if r.is_auto_rerun]
    playing = [t for t, _ in auto if marks["Play"] < t < marks["Pause"]]
    gaps = [b - a for a, b in zip(playing, playing[1:], strict=False)]
    change = [(t, r) for t, r in reruns[1:] if not r.is_auto_rerun and not trig(r) and value(r, "G") == [9.0]]
    changed_at = change[0][0] if change else marks["Pause"]
    after = [r for t, r in auto if t > changed_at]
    return {
        "types": sorted({m.WhichOneof("type") for _, m in sent}),
        "not_auto_while_playing": sum(not r.is_auto_rerun for t, r in reruns if marks["Play"] <= t < changed_at),
        "first": (
            first.page_name,
            first.HasField("widget_states"),
            len(first.widget_states.widgets),
            first.page_script_hash,
            first.fragment_id,
        ),
        "page_script_hashes": sorted({r.page_script_hash for r in later}),
        "context_fields": sorted({f.name for _, r in reruns for f, _ in r.context_info.ListFields()}),
        "widgets": sorted((w.id, w.WhichOneof("value")) for w in later[0].widget_states.widgets if not w.trigger_value),
        "play_clicks": [(bool(r.fragment_id), r.is_auto_rerun) for r in later if "play" in trig(r)],
        "pause_sent": any("pause" in trig(r) and not r.is_auto_rerun for r in later),
        "change": [(r.query_string, r.fragment_id) for _, r in change],
        "change_sent_after_s": round(change[0][0] - marks["G"], 3) if change else None,
        "fragment_ids": sorted({r.fragment_id for _, r in auto}),
        "after_change": sorted({(r.query_string, tuple(value(r, "G"))) for r in after}),
        "uses_cache": any(r.cached_message_hashes for r in later),
        "ticks_per_s": len(playing) / (marks["Pause"] - marks["Play"]),
        "tick_gap_median_s": statistics.median(gaps) if gaps else None,
    }


@pytest.mark.e2e
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing")
def test_tab_sends_what_chromium_sends():
    pytest.importorskip("playwright.sync_api")
    server = start_server()
    url = server.url
    try:
        results = {}
        thread = threading.Thread(target=lambda: results.update(tab=tab_messages(url)))
        thread.start()  # the Tab plays in its own session while Chromium plays in another
        chrome = shape(*chromium_messages(url))
        thread.join()
    finally:
        server.stop()
    tab = shape(*results["tab"])
    print(f"\nChromium: {json.dumps(chrome)}\nTab:      {json.dumps(tab)}")
    for key in (
        "types",
        "not_auto_while_playing",
        "first",
        "page_script_hashes",
        "context_fields",
        "widgets",
        "play_clicks",
        "pause_sent",
        "change",
        "fragment_ids",
        "after_change",
        "uses_cache",
    ):
        assert tab[key] == chrome[key], key
    assert tab["types"] == ["rerun_script"] and tab["first"][:3] == ("training", True, 0)
    assert tab["change"] == [("G=9", "")]
    if results["tab"][1]["streamlit_button"]:  # today's page: Play is a button, each frame a fragment rerun
        assert tab["play_clicks"] == [(False, False)] and tab["after_change"] == [("G=9", (9.0,))]
        # Chromium's timer is a 0.5 s grid too, but its beats come late while it draws five Plotly charts
        # on this shared 2-core machine; the Tab (a browser with a core of its own) keeps the grid.
        assert tab["tick_gap_median_s"] == pytest.approx(0.5, abs=0.05)
        assert 0 < chrome["ticks_per_s"] <= tab["ticks_per_s"] + 0.2
    else:  # a browser-side player: pressing Play sends nothing, from Chromium as from the Tab
        assert tab["not_auto_while_playing"] == 0 and tab["fragment_ids"] == []


@pytest.mark.e2e
def test_short_class_that_saturates_the_server(tmp_path):
    """A short saturated class against a server the bench starts: 40 students each trying a new seed every 2 s
    (20 new settings a second, as 200 students every 10 s) and the lecturer moving G for 10 s. Zero errors,
    every change shown with its own new data, and the waits said on the page."""
    out = tmp_path / "class.json"
    cmd = [sys.executable, "scripts/bench_classroom.py", "--start-server", "--students", "40", "--duration", "10"]
    cmd += ["--move", "seed", "--setting-every", "2", "--settle", "0", "--timeout", "40", "--json-out", str(out)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    result = json.loads(out.read_text())
    (line,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    assert result == json.loads(line)  # one JSON line, also in the file
    assert "| lecturer: G moved, the new chart shown (p95) |" in proc.stdout  # then the figures and their targets
    assert result["errors"] == 0 and result["server_log_tracebacks"] == 0, result["error_samples"]
    lecturer, students = result["lecturer_latency_s"], result["student_latency_s"]
    # Each counted change is the page's data carrying the new value (its config: `"group_size": v`, `"seed": v`),
    # in a run that started after the change was sent: new data, not just a rerun.
    assert lecturer["n"] >= 2 and lecturer["timeouts"] == 0 and 0 < lecturer["p50"] <= lecturer["max"] < 40
    assert students["n"] >= 40 and students["timeouts"] == 0
    assert result["students_loaded"] == 40
    assert result["full_runs_per_s"] > 0 and result["server_cpu_pct"] > 0
    assert 0 < result["rss_idle_mb"] <= result["rss_peak_mb"]
    assert result["workers_pss_idle_mb"] == 0 and result["workers_cpu_s"] == 0  # no worker computes a page's run
    assert 0 < result["cpu_s_per_student_move"] and result["student_moves_in_class"] >= 40


def test_move_flag_and_what_marks_the_new_chart():
    from scripts.bench_classroom import move_pattern

    assert parse_args(["--start-server"]).move == "G"
    assert parse_args(["--start-server", "--move", "seed"]).move == "seed"
    with pytest.raises(SystemExit) as e:
        parse_args(["--start-server", "--move", "seed;rm"])
    assert e.value.code == 2
    title = b'"title": "Each prompt\'s p_j after {t} iterations (seed 123)"'
    assert move_pattern("seed", 123).search(title) and not move_pattern("seed", 12).search(title)
    assert move_pattern("G", 9).search(b"(G = 9)") and not move_pattern("G", 9).search(b"(G = 90)")
    config = b'{"request": {"view": "training", "config": {"group_size": 9, "seed": 123, "n_seeds": 16}}}'
    assert move_pattern("G", 9).search(config) and move_pattern("seed", 123).search(config)  # ui/live.py's data
    assert not move_pattern("G", 90).search(config) and not move_pattern("seed", 12).search(config)
