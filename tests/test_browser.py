"""The app in a real browser: headless Chromium (Playwright) against `streamlit run app.py`.

Checks: the first chart on a cold start (fresh server, fresh Chromium, /training?classroom=1), through app.py's
navigation, with Plotly.js, KaTeX and the renderer's bundle from the app's own routes; every page renders without
an exception, a refusal or a script error (the six views the browser draws, the pages the server computes, Home);
on Training dynamics Play runs every iteration in the browser with no message to the server, Pause stops on the
frame shown, Pin overlays a run and Unpin takes it away, the CSV export is the CLI's; a slow setting says it is
computing and keeps the old charts; the projector layout (1920x1080 ?classroom=1: the player and the first three
charts without scrolling; 1280x800: the player and the accuracy chart) and presenter-mode text sizes on every view.
What a control move does in both hosts (the redraw in place, the link, presets, the questions) is
tests/test_view_pages_browser.py's.

Records (printed, and written as JSON to $GRPO_BROWSER_METRICS or /tmp/grpo_browser_metrics.json) the layout and
the presenter sizes. No test here times anything: the cold start, Play's frame rate and a control's latency are
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
from sim.export import toy_history_csv
from sim.views import catalog
from sim.views.training import page_config
from tests.fixtures.drawn import QUIET, settle
from tests.fixtures.serve import browser_marks
from tests.fixtures.viewpage import shown, texts

pytestmark = browser_marks()
playwright_sync = pytest.importorskip("playwright.sync_api", reason="playwright (python) is not installed")

VIEWS = catalog.browser_views()  # their document computed in the page (sim/views/catalog.py)
PAGES = ["training", "", *(n for n in catalog.NAMES if n != "training")]  # /training first: a fresh server's link
METRICS_PATH = Path(os.environ.get("GRPO_BROWSER_METRICS", "/tmp/grpo_browser_metrics.json"))
METRICS: dict[str, object] = {}
STATS = "window.grpoPlayers.training"


def new_page(browser, width: int = 1400, height: int = 1000):
    ctx = browser.new_context(viewport={"width": width, "height": height}, accept_downloads=True)
    ctx.add_init_script(QUIET)
    p = ctx.new_page()
    p.set_default_timeout(60_000)
    p.errors = []
    p.on("pageerror", lambda e: p.errors.append(str(e)))
    return p


@pytest.fixture
def page(browser):
    p = new_page(browser)
    yield p
    p.context.close()


def open_training(page, server: str, query: str = "") -> None:
    page.goto(f"{server}/training{query}")
    shown(page)


def label_t(page) -> int:
    return int(re.search(r"iteration (\d+)", page.locator(".gp-label").first.text_content()).group(1))


def test_first_chart_on_a_cold_start():
    """A fresh server, a fresh Chromium, a link to /training?classroom=1: the player's charts are drawn, by a
    page that ran under app.py's navigation, with Plotly.js, KaTeX and the bundle from the app's own routes and
    without Streamlit's syntax highlighter. (How fast: scripts/bench_cold_start.py.) Requests no module fixture,
    so no other server is running."""
    t = cold_start()
    assert t["app_navigation"], "a first visit to /training ran the page without app.py's navigation"
    for route in ("plotly_js_s", "bundle_js_s", "katex_js_s"):
        assert t[route] is not None and t[route] < t["first_chart_s"], (route, t)  # from the app's routes
    assert t["highlighter_kb"] == 0, "a page loaded st.code's syntax highlighter"


def test_every_page_renders_without_exception(page, server):
    """Each page at its defaults: drawn (its charts by Plotly), with no exception, no refusal, no link correction
    and no script error; the six views are the renderer's page, the server's pages draw their documents with it."""
    for path in PAGES:
        page.goto(f"{server}/{path}")
        settle(page)
        where = f"/{path}"
        assert page.get_by_test_id("stException").count() == 0, f"exception on {where}"
        assert page.get_by_test_id("stSidebarNavLink").first.text_content().endswith("Home"), "not app.py's nav"
        assert not page.locator(".ls-error:visible, .gp-error:visible, .gp-msg:visible, .ls-note:visible").count(), \
            f"{where}: " + " ".join(texts(page, ".ls-error, .gp-error, .gp-msg, .ls-note"))
        if path in VIEWS:
            assert page.locator(".ls-page .ls-settings").count() == 1 and page.get_by_test_id("stSlider").count() == 0
            assert page.locator(".gp-chart .main-svg").count() >= 1, f"{where} drew no chart"
        elif path:
            assert page.locator(".ls-doc").count() >= 1, f"{where} has no document of the renderer"
        else:  # home: the front page's document (sim/views/home.py), a link to every page
            hrefs = page.locator(".ls-doc .ls-links a.ls-pagelink").evaluate_all("as => as.map(a => a.pathname)")
            assert {f"/{v}" for v in VIEWS} <= set(hrefs), hrefs
        if path == "passk":  # the toy's curves do not change with the iteration: no Play bar; the sharpening toy's do
            bars = page.locator(".gp-live .gp-bar")
            assert sorted(bars.nth(i).is_visible() for i in range(bars.count())) == [False, True]
        assert not page.errors, f"{where}: {page.errors}"


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
    on_screen = page.evaluate("() => { const t = document.querySelector('.gp-label').textContent;"
                              " document.querySelector('.gp-primary').click(); return t; }")
    time.sleep(0.5)
    assert page.locator(".gp-label").text_content() == on_screen, "Pause stops on the frame shown"
    t = label_t(page)
    page.locator(".gp-bar button", has_text="Step").click()
    page.wait_for_function(f"document.querySelector('.gp-label').textContent.startsWith('iteration {t + 1} ')",
                           timeout=5_000)  # the next animation frame draws it
    time.sleep(0.3)
    assert label_t(page) == t + 1, "Step moves exactly one iteration"
    assert not page.errors


NAMES = "(i) => [...document.querySelectorAll('.gp-plot')][i].data.map(t => t.name)"


def test_training_pin_unpin_and_the_csv_export(page, server):
    """Pin keeps the run on screen and overlays it, named by what differs, on the accuracy and the KL charts;
    Unpin takes it away. The CSV export (computed by the server on the click) is `python -m sim toy --out`'s."""
    open_training(page, server)
    page.get_by_role("button", name="Pin this run").click()
    shown(page)
    page.locator("#ls-beta-3").check()  # β = 0.04
    page.wait_for_function("window.grpoPage.shown.beta === 0.04")
    shown(page)
    assert "pinned (beta=0)" in page.evaluate(NAMES, 0) and "KL, pinned (beta=0)" in page.evaluate(NAMES, 4)
    page.get_by_role("button", name="Unpin").click()
    page.wait_for_function("![...document.querySelectorAll('.gp-plot')][0].data.some(t => t.name && "
                           "t.name.startsWith('pinned'))")
    page.get_by_role("button", name="Pin this run").wait_for()
    page.locator("#ls-beta-0").check()  # back to the defaults, whose CSV the CLI writes
    page.wait_for_function("window.grpoPage.shown.beta === 0")
    with page.expect_download() as d:
        page.get_by_role("button", name="Run history (CSV)").click()
    assert Path(d.value.path()).read_bytes() == toy_history_csv(page_config({})).encode()
    assert not page.errors


def test_a_slow_setting_says_it_is_computing_and_keeps_the_old_charts(page, server):
    """A setting that takes the engine a second or more in the browser (G = 64, 64 seeds, 500 iterations, μ = 8 and
    dynamic sampling): while the page's Web Worker computes, the view says so above the player, the previous charts
    stay on screen, the tab keeps answering, and the new ones replace them (assets/js/live.js). The server hears of
    none of it."""
    sent: list[float] = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda _: sent.append(time.monotonic())))
    open_training(page, server, "?G=64&seeds=64&T=500&mu=8&dyn=true&seed=4321")
    status = page.locator(".gp-live > .gp-status")  # the live part's (page.js has its own for a server's document)
    assert status.text_content() == "", "the status line is empty once the charts are there"
    time.sleep(0.5)
    t0 = time.monotonic()
    page.locator("#ls-seed").focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function("document.querySelector('.gp-live > .gp-status').textContent === 'Computing this setting…'")
    assert status.is_visible()
    assert page.locator(".gp-plot:visible").count() == 5, "the previous charts stay while the new ones compute"
    assert "(seed 4321)" in " ".join(texts(page, ".gp-title"))
    assert page.evaluate("1 + 1") == 2  # the page's main thread answers meanwhile: the engine runs in a Worker
    page.locator(".gp-title", has_text="(seed 4322)").first.wait_for(timeout=60_000)
    page.wait_for_function("document.querySelector('.gp-live > .gp-status').textContent === ''")
    assert not [s for s in sent if s >= t0], "the change sent the server a message"
    assert page.get_by_test_id("stException").count() == 0 and not page.errors


@pytest.mark.parametrize("width, height, query, visible", [
    (1920, 1080, "?classroom=1", [".gp-bar", ".gp-chart >> nth=0", ".gp-chart >> nth=1", ".gp-chart >> nth=2"]),
    (1280, 800, "", [".gp-bar", ".gp-chart >> nth=0"]),
])
def test_training_fits_the_screen(browser, server, width, height, query, visible):
    """What a lecturer projects without scrolling: the player's bar and the first charts, each whole (its title,
    plot and caption), inside the window."""
    p = new_page(browser, width, height)
    try:
        open_training(p, server, query)
        time.sleep(0.5)
        boxes = [p.locator(s).first.bounding_box() for s in visible]
        METRICS[f"layout_{width}x{height}"] = {s: {k: round(v) for k, v in b.items()} for s, b in
                                               zip(visible, boxes, strict=True)}
        for sel, box in zip(visible, boxes, strict=True):
            assert box is not None, sel
            if not (box["y"] >= 0 and box["y"] + box["height"] <= height):
                p.screenshot(path=str(METRICS_PATH.with_name(f"grpo_layout_{width}x{height}.png")))
            assert box["y"] >= 0 and box["y"] + box["height"] <= height, \
                f"{sel} at {box} is not on a {height}px screen ({METRICS[f'layout_{width}x{height}']})"
            assert box["x"] + box["width"] <= width, f"{sel} at {box} is wider than the screen"
    finally:
        p.context.close()


# Presenter mode (assets/js/doc.css): the charts' text 16 px or more (titles 22), formulas 26, and every other text a
# hall reads on the page (intro, controls, captions, tables, metrics, questions) 20 px or more
SIZES = """() => {
  const px = (sel) => [...document.querySelectorAll(sel)].filter(e => e.getClientRects().length)
                          .map(e => parseFloat(getComputedStyle(e).fontSize));
  const small = [];
  const walker = document.createTreeWalker(document.querySelector('.ls-page'), NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const e = n.parentElement;
    if (!n.textContent.trim() || !e.getClientRects().length || e.closest('.js-plotly-plot, .katex, .gp-title'))
      continue;
    const size = parseFloat(getComputedStyle(e).fontSize);
    const what = `${e.tagName.toLowerCase()}.${[...e.classList].join('.')}`;
    if (size < 20) small.push(`${what} ${size}px: ${n.textContent.trim().slice(0, 40)}`);
  }
  return {ticks: px('.xtick text, .ytick text'), legend: px('.gp-legend-name'), titles: px('.gp-title'),
          katex: px('.katex'), text: px('.ls-page p, .ls-page label, .ls-page td, .ls-metric-value'), small};
}"""


@pytest.mark.parametrize("path", VIEWS)
def test_presenter_mode_enlarges_what_a_class_reads(browser, server, path):
    p = new_page(browser, 1920, 1080)
    try:
        p.goto(f"{server}/{path}?classroom=1")
        shown(p)
        p.evaluate("document.querySelectorAll('.ls-page details').forEach((d) => (d.open = true))")  # intro, share
        time.sleep(0.5)
        s = p.evaluate(SIZES)
    finally:
        p.context.close()
    METRICS[f"presenter_px_{path}"] = {k: (min(v), max(v)) if v and k != "small" else v for k, v in s.items()}
    assert min(s["ticks"]) >= 20 and min(s["legend"]) >= 20 and min(s["titles"]) >= 22, s
    assert min(s["text"]) >= 20 and not s["small"], f"text under 20 px on /{path}: {s['small'][:8]}"
    assert not s["katex"] or min(s["katex"]) >= 26, "formulas enlarged"
