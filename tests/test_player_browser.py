"""The browser player (assets/js/player.js) in headless Chromium, as the app's renderer draws a document the server
computed (ui/view.py show_doc) on tests/apps/player_app.py: Training's five charts, replayed over the iterations.

Checks: a 200-iteration Play draws every iteration, in order, with no websocket message sent; the speed
select caps the iterations per second; Pause lands on the frame on screen; Step, Back, Reset, the timeline and
the keyboard; a setting change mid-play (new data from the server for the same document) keeps t and keeps
playing, updating the charts in place (no re-mount); the data per setting at T = 500, S = 64 stays under 1 MB;
presenter mode's text sizes; zoom and hover survive playing; no console error and no request leaves the machine.
Records the bytes per setting (printed, and written as JSON to $GRPO_PLAYER_METRICS or
/tmp/grpo_player_metrics.json). How fast it plays and redraws is measured by scripts/bench_player.py, not here.
The same player plays the views the browser computes (assets/js/live.js): tests/test_browser.py plays Training
dynamics there.

Run: OMP_NUM_THREADS=1 python -m pytest tests/test_player_browser.py -m e2e -s
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from tests.fixtures.serve import IDLE, browser_marks

pytestmark = browser_marks()

METRICS_PATH = Path(os.environ.get("GRPO_PLAYER_METRICS", "/tmp/grpo_player_metrics.json"))
METRICS: dict[str, object] = {}
STATS = "window.grpoPlayers && window.grpoPlayers.toy"


SERVER_SCRIPT = "tests/apps/player_app.py"  # the conftest's `server` starts this


@pytest.fixture(scope="module")
def context(browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1100})  # one context: Plotly.js cached once
    yield ctx
    ctx.close()


class Watched:
    """A page with its console errors, outside requests and websocket traffic recorded."""

    def __init__(self, context, server: str, query: str = ""):
        self.page = p = context.new_page()
        p.set_default_timeout(30_000)
        self.errors: list[str] = []
        self.outside: list[str] = []
        self.sent: list[float] = []  # time of each websocket frame the page sent
        self.received_bytes: list[tuple[float, int]] = []
        p.on("console", lambda m: m.type == "error" and self.errors.append(f"{m.text} at {m.location}"))
        p.on("pageerror", lambda e: self.errors.append(str(e)))
        p.on("request", lambda r: r.url.startswith(("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:"))
             or self.outside.append(r.url))  # fmt: skip
        p.on("websocket", self._ws)
        p.goto(f"{server}/{query}")
        p.wait_for_selector(IDLE, timeout=60_000)
        p.wait_for_function(f"{STATS} && {STATS}.draws > 0", timeout=60_000)

    def _ws(self, ws) -> None:
        ws.on("framesent", lambda _: self.sent.append(time.monotonic()))
        ws.on("framereceived", lambda f: self.received_bytes.append((time.monotonic(), len(f))))

    def stats(self) -> dict:
        return self.page.evaluate(f"({STATS})")

    def label_t(self) -> int:
        return int(re.search(r"iteration (\d+)", self.page.locator(".gp-label").text_content()).group(1))

    def close(self) -> None:
        assert not self.errors, f"console errors: {self.errors}"
        assert not self.outside, f"requests leaving the machine: {self.outside}"
        self.page.close()


@pytest.fixture
def watched(context, server):
    opened: list[Watched] = []

    def open_(query: str = "") -> Watched:
        opened.append(Watched(context, server, query))
        return opened[-1]

    yield open_
    for w in opened:
        w.close()


def test_play_draws_every_iteration_without_server_messages(watched):
    w = watched()
    p = w.page
    p.locator(".gp-speed").select_option("60")
    before = w.stats()
    sent0, t0 = len(w.sent), time.monotonic()
    p.get_by_role("button", name="Play").click()
    p.wait_for_function(f"{STATS}.drawn.at(-1) === 200 && document.querySelector('.gp-root').dataset.playing === '0'")
    time.sleep(0.3)
    after = w.stats()
    drawn = after["drawn"][len(before["drawn"]) :]
    assert drawn == list(range(1, 201)), "every iteration 1..200 drawn once, in order"
    sent = [s for s in w.sent if s >= t0]
    assert not sent and len(w.sent) == sent0, f"{len(sent)} websocket frames sent while playing"
    # the cached array-attribute lookup (player.js) answers exactly what Plotly's own crawl answers
    same = p.evaluate(
        """() => { const f = Plotly.PlotSchema.findArrayAttributes;
                   return [...document.querySelectorAll('.gp-plot')].flatMap(g => g._fullData.map(
                       tr => JSON.stringify(f(tr)) === JSON.stringify(f.original(tr)))); }"""
    )
    assert len(same) == 11 and all(same)


def test_pause_step_back_reset_scrub_and_keyboard(watched):
    w = watched()
    p = w.page
    p.get_by_role("button", name="Play").click()
    p.wait_for_function(f"{STATS}.drawn.at(-1) >= 10")
    # read what is on screen and click Pause in the same task: no frame can come in between
    shown = p.evaluate(
        """() => { const t = document.querySelector('.gp-label').textContent;
                   document.querySelector('.gp-primary').click(); return t; }"""
    )
    shown_t = int(re.search(r"iteration (\d+)", shown).group(1))
    draws = w.stats()["draws"]
    time.sleep(0.5)
    assert w.label_t() == shown_t, "Pause stopped on the frame shown when it was clicked"
    assert w.stats()["draws"] == draws, "no frame drawn after Pause"
    assert p.locator(".gp-title", has_text="at iteration").text_content().endswith(f"iteration {shown_t}")
    assert p.locator(".gp-timeline").input_value() == str(shown_t)

    p.get_by_role("button", name="Step ▶").click()
    p.wait_for_function(f"{STATS}.drawn.at(-1) === {shown_t + 1}")
    assert w.label_t() == shown_t + 1
    p.get_by_role("button", name="◀ Back").click()
    p.wait_for_function(f"{STATS}.drawn.at(-1) === {shown_t}")

    timeline = p.locator(".gp-timeline")
    for target in (150, 40, 120):  # scrub forwards, back, forwards
        timeline.fill(str(target))
        p.wait_for_function(f"{STATS}.drawn.at(-1) === {target}")
        assert w.label_t() == target
        assert p.locator(".gp-title", has_text="at iteration").text_content().endswith(f"iteration {target}")

    p.get_by_role("button", name="⟲ Reset").click()
    p.wait_for_function(f"{STATS}.drawn.at(-1) === 0")
    assert w.label_t() == 0

    play = p.get_by_role("button", name="Play")
    play.focus()
    p.keyboard.press("ArrowRight")
    p.keyboard.press("ArrowRight")
    p.wait_for_function(f"{STATS}.drawn.at(-1) === 2")
    p.keyboard.press("ArrowLeft")
    p.wait_for_function(f"{STATS}.drawn.at(-1) === 1")
    p.keyboard.press(" ")
    p.wait_for_function("document.querySelector('.gp-root').dataset.playing === '1'")
    p.wait_for_function(f"{STATS}.drawn.at(-1) >= 4")
    p.keyboard.press(" ")
    p.wait_for_function("document.querySelector('.gp-root').dataset.playing === '0'")
    t = w.label_t()
    time.sleep(0.3)
    assert w.label_t() == t, "space paused"
    # speed: the select caps the iterations per second (10 it/s over about 1.5 s: it plays, and never faster; a
    # slow machine may draw fewer, which is scripts/bench_player.py's business, not this test's)
    p.locator(".gp-speed").select_option("10")
    p.get_by_role("button", name="Play").click()
    t0, start = time.monotonic(), w.label_t()
    time.sleep(1.5)
    rate = (w.label_t() - start) / (time.monotonic() - t0)
    p.get_by_role("button", name="Pause").click()
    assert 0 < rate <= 11, f"{rate:.1f} iterations/s at speed 10"
    buttons = p.locator(".gp-bar button")
    assert buttons.count() == 4 and all(buttons.nth(i).text_content().strip() for i in range(4))


def test_setting_change_mid_play_keeps_t_and_playing(watched):
    w = watched()
    p = w.page
    p.get_by_role("button", name="Play").click()
    p.wait_for_function(f"{STATS}.drawn.at(-1) >= 20")
    t_before = w.label_t()
    slider = p.get_by_test_id("stSlider").filter(has_text="Group size G").get_by_role("slider")
    slider.focus()
    slider.press("ArrowRight")
    p.locator(".gp-title", has_text="(G = 9)").first.wait_for()
    p.wait_for_function(f"{STATS}.loads === 2")
    assert p.evaluate("document.querySelector('.gp-root').dataset.playing") == "1", "still playing"
    t_after = w.label_t()
    assert t_after >= t_before, f"iteration kept ({t_before} -> {t_after})"
    p.wait_for_function(f"{STATS}.drawn.at(-1) > {t_after}")
    s = w.stats()
    assert s["newPlots"] == 5, "charts updated in place with Plotly.react, not re-mounted"
    assert p.locator(".gp-plot").count() == 5
    # a shorter run than the current iteration: t is clamped to the new T, and the run is over
    t_slider = p.get_by_test_id("stSlider").filter(has_text="Iterations T").get_by_role("slider")
    t_slider.focus()
    t_slider.press("Home")  # T = 10
    p.wait_for_function(f"{STATS}.loads === 3 && {STATS}.drawn.at(-1) === 10")
    assert p.locator(".gp-label").text_content() == "iteration 10 / 10"
    assert p.evaluate("document.querySelector('.gp-root').dataset.playing") == "0"


def move_g(w: Watched, g: int) -> int:
    """Press ArrowRight on the G slider (to g); wait for the new data drawn. -> bytes received."""
    p = w.page
    p.wait_for_selector(IDLE)
    slider = p.get_by_test_id("stSlider").filter(has_text="Group size G").get_by_role("slider")
    slider.focus()
    n0, t0 = len(w.received_bytes), p.evaluate("performance.now()")
    slider.press("ArrowRight")
    p.locator(".gp-title", has_text=f"(G = {g})").first.wait_for()
    p.wait_for_function(f"{STATS}.dataDrawnAt > {t0}")
    p.wait_for_selector(IDLE)
    return sum(n for _, n in w.received_bytes[n0:])


def test_bytes_per_setting_at_500_iterations_64_seeds(watched):
    w = watched("?T=500&S=64")
    size = move_g(w, 9)
    METRICS.update(bytes_per_setting_T500_S64=size)
    assert size <= 1_000_000, f"{size} bytes received for one setting change"


def test_presenter_mode_font_sizes(watched):
    w = watched("?classroom=1")
    sizes = w.page.evaluate(
        """() => {
        const px = (sel) => [...document.querySelectorAll(sel)].map(e => parseFloat(getComputedStyle(e).fontSize));
        return {ticks: px('.gp-plot .xtick text, .gp-plot .ytick text'), legend: px('.gp-legend-name'),
                axis: px('.gp-plot .xtitle, .gp-plot .ytitle'), titles: px('.gp-title'),
                play: px('.gp-primary'), other: px('.gp-bar button:not(.gp-primary)')};
    }"""
    )
    METRICS["presenter_font_px_min"] = {k: min(v) for k, v in sizes.items()}
    assert sizes["ticks"] and min(sizes["ticks"]) >= 20
    assert sizes["legend"] and min(sizes["legend"]) >= 20
    assert min(sizes["axis"]) >= 20
    assert min(sizes["titles"]) >= 22
    assert min(sizes["play"]) > max(sizes["other"]), "Play is the biggest button"


def test_zoom_and_hover_survive_playing(watched):
    w = watched()
    p = w.page
    p.locator(".gp-speed").select_option("30")
    plot = p.locator(".gp-plot").first
    box = plot.locator(".nsewdrag").first.bounding_box()
    y = box["y"] + box["height"] / 2
    p.mouse.move(box["x"] + 0.25 * box["width"], y)  # box-zoom on x from 25% to 50% of the axis
    p.mouse.down()
    p.mouse.move(box["x"] + 0.5 * box["width"], y + 5, steps=5)
    p.mouse.up()
    get_range = "document.querySelector('.gp-plot')._fullLayout.xaxis.range.map(v => Math.round(v))"
    p.wait_for_function(f"{get_range}[0] > 30")
    zoomed = p.evaluate(get_range)
    p.get_by_role("button", name="Play").click()
    p.mouse.move(box["x"] + 0.5 * box["width"], y)  # hover the zoomed chart: the unified hover box
    hover = p.locator(".gp-plot").first.locator(".hoverlayer .legend")
    hover.wait_for()
    p.wait_for_function(f"{STATS}.drawn.at(-1) >= 40")
    assert p.evaluate(get_range) == zoomed, "zoom kept while playing"
    assert hover.count() == 1, "hover box kept while playing"
    p.get_by_role("button", name="Pause").click()
