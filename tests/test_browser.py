"""The app in a real browser: headless Chromium (Playwright) against `streamlit run app.py`.

Checks: the first chart on a cold start (fresh server, fresh Chromium, /training?classroom=1), through app.py's
navigation and the app's own Plotly.js route; every page renders without an exception; on Training dynamics a
G slider move redraws the player's charts in place, Play runs in the browser with no message to the server,
Pause stops on the frame shown, and the page URL reopened in a fresh browser context restores the settings; a
slow setting says it is computing and keeps the old charts; the projector layout (1920x1080 ?classroom=1: the
player and the first three charts without scrolling; 1280x800: the player and the accuracy chart) and
presenter-mode text sizes on every page.
Records (printed, and written as JSON to $GRPO_BROWSER_METRICS or /tmp/grpo_browser_metrics.json) the layout and
the presenter sizes. No test here times anything: the cold start, Play's frame rate and the slider's latency are
measured by scripts/bench_cold_start.py and scripts/bench_player.py (docs/benchmarks.md).

Run: OMP_NUM_THREADS=1 python -m pytest tests/test_browser.py -m e2e -s
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from scripts.bench_cold_start import cold_start
from tests.fixtures.serve import IDLE, browser_marks

pytestmark = browser_marks()
playwright_sync = pytest.importorskip("playwright.sync_api", reason="playwright (python) is not installed")

CHART_PAGES = ["one_group", "wasted", "std_scaling", "passk", "kl_clip", "your_run", "your_prompts"]
PAGES = ["training", "", *CHART_PAGES, "tinylm", "lab"]  # /training first: a link opened on a fresh server
METRICS_PATH = Path(os.environ.get("GRPO_BROWSER_METRICS", "/tmp/grpo_browser_metrics.json"))
METRICS: dict[str, object] = {}
STATS = "window.grpoPlayers && window.grpoPlayers.training"


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    p = ctx.new_page()
    p.set_default_timeout(60_000)
    yield p
    ctx.close()


def wait_idle(page) -> None:
    page.wait_for_selector(IDLE, timeout=60_000)


def open_training(page, server: str, query: str = "") -> None:
    page.goto(f"{server}/training{query}")
    wait_idle(page)
    page.wait_for_function(f"{STATS} && {STATS}.draws > 0")


def label_t(page) -> int:
    return int(re.search(r"iteration (\d+)", page.locator(".gp-label").text_content()).group(1))


def test_first_chart_on_a_cold_start():
    """A fresh server, a fresh Chromium, a link to /training?classroom=1: the player's charts are drawn, by a
    page that ran under app.py's navigation, with Plotly.js from the app's own route and without Streamlit's
    syntax highlighter. (How fast: scripts/bench_cold_start.py.) Requests no module fixture, so no other server
    is running."""
    t = cold_start()
    assert t["app_navigation"], "a first visit to /training ran the page without app.py's navigation"
    assert t["plotly_js_s"] is not None and t["plotly_js_s"] < t["first_chart_s"]  # from the app's route
    assert t["highlighter_kb"] == 0, "a page loaded st.code's syntax highlighter"


def test_every_page_renders_without_exception(page, server):
    for path in PAGES:
        page.goto(f"{server}/{path}")
        wait_idle(page)
        if path in CHART_PAGES:
            page.locator(".gp-chart .js-plotly-plot").first.wait_for(timeout=60_000)  # the one chart spec, drawn
        elif path == "training":
            page.wait_for_function(f"{STATS} && {STATS}.draws > 0")
        elif path == "":
            page.get_by_test_id("stPageLink").first.wait_for()
        else:
            page.locator("h1").first.wait_for()
        assert page.get_by_test_id("stException").count() == 0, f"exception on /{path}"
        assert page.get_by_test_id("stSidebarNavLink").first.text_content().endswith("Home"), "not app.py's nav"


def g_slider(page):
    return page.get_by_test_id("stSlider").filter(has_text="Group size G").get_by_role("slider")


def test_training_slider_redraws_in_place_and_url_restores(page, browser, server):
    open_training(page, server)
    slider = g_slider(page)
    assert slider.input_value() == "8"
    for g in range(9, 15):
        slider.focus()
        slider.press("ArrowRight")
        page.locator(".gp-title", has_text=f"Groups with zero gradient (G = {g})").wait_for()
        wait_idle(page)
    assert page.evaluate(f"{STATS}.newPlots") == 5, "new data updates the five charts in place"

    page.wait_for_function("() => window.location.search.includes('G=14')", timeout=10_000)
    ctx = browser.new_context()
    fresh = ctx.new_page()
    fresh.goto(page.url)
    wait_idle(fresh)
    fresh.locator(".gp-title", has_text="Groups with zero gradient (G = 14)").wait_for(timeout=60_000)
    assert g_slider(fresh).input_value() == "14"
    ctx.close()


def test_training_play_runs_in_the_browser(page, server):
    sent: list[float] = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda _: sent.append(time.monotonic())))
    open_training(page, server)
    page.locator(".gp-speed").select_option("60")
    before = page.evaluate(f"({STATS})")
    t0 = time.monotonic()
    page.locator(".gp-primary").click()
    page.wait_for_function(f"{STATS}.drawn.at(-1) === 200 && document.querySelector('.gp-root').dataset.playing "
                           "=== '0'", timeout=60_000)
    after = page.evaluate(f"({STATS})")
    assert after["drawn"][len(before["drawn"]):] == list(range(1, 201)), "every iteration drawn once, in order"
    assert not [s for s in sent if s >= t0], "no websocket message while playing"

    page.locator(".gp-bar button", has_text="Reset").click()
    page.locator(".gp-primary").click()
    page.wait_for_function("() => /iteration ([3-9]\\d|1\\d\\d)/.test(document.querySelector('.gp-label').textContent)")
    shown = page.evaluate("() => { const t = document.querySelector('.gp-label').textContent;"
                          " document.querySelector('.gp-primary').click(); return t; }")
    time.sleep(0.5)
    assert page.locator(".gp-label").text_content() == shown, "Pause stops on the frame shown"
    t = label_t(page)
    page.locator(".gp-bar button", has_text="Step").click()
    page.wait_for_function(f"document.querySelector('.gp-label').textContent.startsWith('iteration {t + 1} ')",
                           timeout=5_000)  # the next animation frame draws it
    time.sleep(0.3)
    assert label_t(page) == t + 1, "Step moves exactly one iteration"


def test_a_slow_setting_says_it_is_computing_and_keeps_the_old_charts(page, server):
    """A setting that takes the engine a second or more in the browser (G = 64, 64 seeds, 500 iterations, μ = 8 and
    dynamic sampling): while the page's Web Worker computes, the view says so under the player, the previous charts
    stay on screen, the tab keeps answering, and the new ones replace them (assets/js/live.js). The server only sent a
    config."""
    open_training(page, server, "?G=64&seeds=64&T=500&mu=8&dyn=true&seed=4321")
    status = page.locator(".gp-status")
    assert status.text_content() == "", "the status line is empty once the charts are there"
    seed = page.get_by_test_id("stSlider").filter(has_text="Seed").first.get_by_role("slider")
    seed.focus()
    seed.press("ArrowRight")
    page.wait_for_function("document.querySelector('.gp-status').textContent === 'Computing this setting…'")
    assert page.locator(".gp-plot").count() == 5, "the previous charts stay while the new ones compute"
    assert page.evaluate("1 + 1") == 2  # the page's main thread answers meanwhile: the engine runs in a Worker
    page.locator(".gp-title", has_text="(seed 4322)").first.wait_for(timeout=60_000)
    page.wait_for_function("document.querySelector('.gp-status').textContent === ''")
    assert page.get_by_test_id("stException").count() == 0


def boxes(page, selectors: list[str]) -> list[dict]:
    return [page.locator(s).first.bounding_box() for s in selectors]


@pytest.mark.parametrize("width, height, query, visible", [
    (1920, 1080, "?classroom=1", [".gp-bar", ".gp-chart >> nth=0", ".gp-chart >> nth=1", ".gp-chart >> nth=2"]),
    (1280, 800, "", [".gp-bar", ".gp-chart >> nth=0"]),
])
def test_training_fits_the_screen(browser, server, width, height, query, visible):
    ctx = browser.new_context(viewport={"width": width, "height": height})
    p = ctx.new_page()
    p.set_default_timeout(60_000)
    open_training(p, server, query)
    time.sleep(0.5)
    for sel, box in zip(visible, boxes(p, visible), strict=True):
        assert box is not None, sel
        assert box["y"] >= 0 and box["y"] + box["height"] <= height, f"{sel} at {box} is not on a {height}px screen"
        assert box["x"] + box["width"] <= width, f"{sel} at {box} is wider than the screen"
    METRICS[f"layout_{width}x{height}"] = {s: {k: round(v) for k, v in b.items()} for s, b in
                                           zip(visible, boxes(p, visible), strict=True)}
    ctx.close()


SIZES = """() => {
  const px = (sel) => [...document.querySelectorAll(sel)].filter(e => e.getClientRects().length)
                          .map(e => parseFloat(getComputedStyle(e).fontSize));
  return {ticks: px('.xtick text, .ytick text'), legend: px('.legendtext'), titles: px('.gtitle, .gp-title'),
          captions: px('[data-testid=stCaptionContainer] p, .gp-caption'), katex: px('.katex'),
          tables: px('[data-testid=stTable] td')};
}"""


@pytest.mark.parametrize("path", ["training", "one_group", "wasted", "std_scaling", "passk", "kl_clip"])
def test_presenter_mode_enlarges_what_a_class_reads(browser, server, path):
    ctx = browser.new_context(viewport={"width": 1920, "height": 1080})
    p = ctx.new_page()
    p.set_default_timeout(60_000)
    p.goto(f"{server}/{path}?classroom=1")
    wait_idle(p)
    p.locator(".xtick text").first.wait_for()
    time.sleep(0.5)
    s = p.evaluate(SIZES)
    ctx.close()
    METRICS[f"presenter_px_{path}"] = {k: (min(v), max(v)) if v else None for k, v in s.items()}
    assert min(s["ticks"]) >= 16 and min(s["legend"]) >= 16 and min(s["titles"]) >= 22, s
    assert not s["captions"] or max(s["captions"]) <= min(s["ticks"]), "captions no larger than chart text"
    assert not s["katex"] or min(s["katex"]) >= 26, "formulas enlarged"
    assert not s["tables"] or min(s["tables"]) >= 20, "tables enlarged"
