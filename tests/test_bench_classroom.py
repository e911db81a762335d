"""The classroom bench and its headless browser tab (`scripts/st_client.py`).

- Unit tests on synthetic server messages: widget states, URL sync, button triggers, the message cache,
  fragment timers, the "new data" pattern, the CLI's errors.
- `test_tab_opens_a_page_as_chromium_does_and_a_move_sends_nothing` (browser): Chromium and a `Tab` open Training
  dynamics on the same server; their first messages are compared field by field; then Chromium moves G, presses
  Play and Pause, and sends nothing (the page computes it), as the bench's students send nothing.
- `test_a_short_class`: the bench itself, 40 students opening a new page every 2 s and the lecturer, for 10 s
  against a server it starts: no error, every page shown, no message for a setting, none from Chromium's moves.
"""

from __future__ import annotations

import asyncio
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from scripts.bench_classroom import parse_args
from scripts.st_client import Tab, js_string
from tests.fixtures.serve import CHROMIUM, ROOT, launch_chromium, start_server


def data_pattern(key: str, value) -> re.Pattern:
    """`G = 9` or `"G": 9`, not `G = 90`: what a test looks for in a chart's bytes (Tab.expect)."""
    return re.compile(rb'(?<![\w])"?' + key.encode() + rb'"?\s*[=:]\s*' + str(value).encode() + rb"(?:\.0+)?(?![\d.])")


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


@pytest.mark.parametrize(
    "argv, message",
    [
        ([], "one of the arguments --url --start-server is required"),
        (["--start-server", "--students", "-1"], "--students must be >= 0"),
        (["--start-server", "--duration", "0"], "must be > 0"),
        (["--start-server", "--duration", "soon"], "is not a number"),
        (["--url", "localhost:8501"], "--url must look like"),
        (["--start-server", "--json-out", "/no/such/dir/x.json"], "does not exist"),
        (["--url", "http://127.0.0.1:1", "--chromium-moves", "3"], "needs the server's PID"),
        (["--start-server", "--chromium-moves", "-1"], "--chromium-moves must be >= 0"),
    ],
)
def test_bad_flags_give_one_line_and_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        parse_args(argv)
    err = capsys.readouterr().err
    assert e.value.code == 2 and message in err and err.count("\n") == 1 and err.startswith("error: ")


# ---- Chromium and a Tab on the same server ----
def first_rerun(sent: list):
    return next(m.rerun_script for _, m in sent if m.WhichOneof("type") == "rerun_script")


def last_rerun(sent: list):
    return [m.rerun_script for _, m in sent if m.WhichOneof("type") == "rerun_script"][-1]


@pytest.mark.e2e
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing")
def test_tab_opens_a_page_as_chromium_does_and_a_move_sends_nothing():
    pytest.importorskip("playwright.sync_api")
    from playwright.sync_api import sync_playwright
    from streamlit.proto.BackMsg_pb2 import BackMsg

    from tests.fixtures.viewpage import move, shown

    server = start_server()
    try:
        async def tab_scenario():
            tab = Tab(server.url, "training", record=True)
            t = time.monotonic()
            await tab.open()
            assert await tab.wait_full_run(t, 60)
            t = await tab.navigate("wasted")  # the next page, from the navigation
            assert await tab.wait_full_run(t, 60)
            await tab.close()
            assert not tab.stats.errors
            return tab.record

        recorded = asyncio.run(tab_scenario())
        sent = []
        with sync_playwright() as pw:
            browser = launch_chromium(pw)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})

            def on_frame(payload):
                msg = BackMsg()
                msg.ParseFromString(payload if isinstance(payload, bytes) else payload.encode())
                sent.append((time.monotonic(), msg))

            page.on("websocket", lambda ws: ws.on("framesent", on_frame))
            page.goto(f"{server.url}/training")
            shown(page)
            page.wait_for_timeout(1000)
            opened = len(sent)
            move(page, "G", 1)
            page.get_by_role("button", name="Play").click()
            page.wait_for_timeout(1500)
            page.get_by_role("button", name="Pause").click()
            page.wait_for_timeout(1000)
            after = sent[opened:]
            page.locator("[data-testid=stSidebarNavLink][href$='/wasted']").click()  # the sidebar is open
            page.wait_for_function("location.pathname.endsWith('/wasted')")
            page.wait_for_timeout(1000)
            browser.close()
    finally:
        server.stop()
    chrome, tab = first_rerun(sent), first_rerun(recorded)
    assert (chrome.page_name, len(chrome.widget_states.widgets), chrome.query_string) == (
        tab.page_name, len(tab.widget_states.widgets), tab.query_string) == ("training", 0, "")
    assert sorted(f.name for f, _ in chrome.context_info.ListFields()) == sorted(
        f.name for f, _ in tab.context_info.ListFields())
    assert after == [], f"Chromium sent {len(after)} messages for a move, Play and Pause"
    chrome, tab = last_rerun(sent), last_rerun(recorded)  # the navigation's: the page's hash, nothing else
    assert chrome.page_script_hash and chrome.page_script_hash == tab.page_script_hash
    assert (chrome.page_name, len(chrome.widget_states.widgets), chrome.query_string) == (
        tab.page_name, len(tab.widget_states.widgets), tab.query_string) == ("", 0, "")


@pytest.mark.e2e
def test_a_short_class(tmp_path):
    """A short class against a server the bench starts: 40 students opening a new page every 2 s (20 pages a
    second) and trying a setting every 2 s, the lecturer opening the next view every 2 s, for 10 s; Chromium moving
    G 3 times first. No error, every page shown, no message for a setting."""
    out = tmp_path / "class.json"
    cmd = [sys.executable, "scripts/bench_classroom.py", "--start-server", "--students", "40", "--duration", "10",
           "--visit-every", "2", "--setting-every", "2", "--settle", "0", "--timeout", "40", "--chromium-moves", "3",
           "--json-out", str(out)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    result = json.loads(out.read_text())
    (line,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    assert result == json.loads(line)  # one JSON line, also in the file
    assert "| lecturer: the next page shown (p95) |" in proc.stdout  # then the figures and their targets
    assert result["errors"] == 0 and result["server_log_tracebacks"] == 0, result["error_samples"]
    assert result["lecturer_page_s"]["n"] >= 3 and result["students_loaded"] == 40
    assert result["student_page_s"]["n"] >= 80 and result["settings_tried"] >= 40
    assert result["messages_per_setting_tried"] == 0 and result["chromium"]["frames_sent"] == 0
    assert 0 < result["rss_idle_mb"] <= result["rss_peak_mb"]
