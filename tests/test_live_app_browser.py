"""The app's pages that compute in the browser (ui/live.py), in Chromium against `streamlit run app.py`: a slider
move redraws the charts from the engine run in the page (the server sends a config of a few hundred bytes, no
run), a pinned run is overlaid, the predict question is asked and answered in the page, the exports compute on the
server on click (the CSV is `python -m sim toy --out`'s), and Std scaling and pass@k draw their toys with their
words."""

from __future__ import annotations

import time

import pytest

from sim.export import toy_history_csv
from sim.views.training import page_config
from tests.fixtures.serve import IDLE, browser_marks

pytestmark = browser_marks()
STATS = "window.grpoPlayers && window.grpoPlayers.training"
NAMES = """(i) => [...document.querySelectorAll('.gp-plot')][i].data.map(t => t.name)"""


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    p = ctx.new_page()
    p.set_default_timeout(60_000)
    yield p
    ctx.close()


def open_page(page, server: str, path: str) -> None:
    page.goto(f"{server}/{path}")
    page.wait_for_selector(IDLE)


def slider(page, label: str):
    return page.get_by_test_id("stSlider").filter(has_text=label).first.get_by_role("slider")


def test_a_slider_move_is_computed_in_the_browser(page, server):
    received: list[tuple[float, int]] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda f: received.append(
        (time.monotonic(), len(f) if isinstance(f, bytes | str) else 0))))
    open_page(page, server, "training")
    page.wait_for_function(f"{STATS} && {STATS}.draws > 0")
    assert page.evaluate("window.grpoLive.training.worker"), "the engine ran in a Web Worker"
    g = slider(page, "Group size G")
    g.focus()
    t0 = time.monotonic()
    g.press("ArrowRight")
    page.locator(".gp-title", has_text="Groups with zero gradient (G = 9)").wait_for()
    page.wait_for_selector(IDLE)
    sent = sum(n for t, n in received if t >= t0)
    assert sent < 40_000, f"the server sent {sent} bytes for a new setting: a config, not a run"
    assert page.evaluate("window.grpoLive.training.shown") == 2 and page.evaluate(f"{STATS}.newPlots") == 5
    caption = page.locator(".gp-chart").nth(1).locator(".gp-caption").text_content()
    assert caption.startswith("No gradient: ") and "of groups at first" in caption
    assert page.get_by_test_id("stException").count() == 0


def test_pin_overlays_the_pinned_run_computed_in_the_page(page, server):
    open_page(page, server, "training")
    page.wait_for_function(f"{STATS} && {STATS}.draws > 0")
    page.get_by_role("button", name="Pin this run").click()
    page.wait_for_selector(IDLE)
    page.get_by_test_id("stRadio").filter(has_text="KL coefficient β").get_by_text("0.04", exact=True).click()
    page.wait_for_function("[...document.querySelectorAll('.gp-plot')][0].data.some(t => t.name && "
                           "t.name.startsWith('pinned (beta=0.0'))")
    assert "pinned (beta=0.0)" in page.evaluate(NAMES, 0) and "KL, pinned (beta=0.0)" in page.evaluate(NAMES, 4)
    page.get_by_role("button", name="Unpin").click()
    page.wait_for_function("![...document.querySelectorAll('.gp-plot')][0].data.some(t => t.name && "
                           "t.name.startsWith('pinned'))")


def test_predict_asks_in_the_page_and_the_charts_wait(page, server):
    open_page(page, server, "training?predict=1")
    box = page.locator(".gp-predict")
    box.wait_for(state="visible")
    assert "Around which iteration will its p pass 0.1" in box.text_content()
    assert page.locator(".gp-live-player").is_hidden()
    reveal = page.get_by_role("button", name="Reveal")
    assert reveal.is_disabled()
    page.get_by_label("Your guess").fill("9999")  # outside 0..200: refused, as the app's number box does
    assert "A guess must be a number from 0 to 200" in box.text_content() and reveal.is_disabled()
    page.get_by_label("Your guess").fill("100")
    reveal.click()
    page.wait_for_function(f"{STATS} && {STATS}.draws > 0")
    assert "Your guess 100, the chapter's answer" in box.text_content()
    page.get_by_role("button", name="Guess again").click()
    assert page.locator(".gp-live-player").is_hidden() and page.get_by_label("Your guess").input_value() == ""


def test_the_exports_compute_on_the_server_on_click(page, server):
    open_page(page, server, "training")
    page.wait_for_function(f"{STATS} && {STATS}.draws > 0")
    with page.expect_download() as d:
        page.get_by_role("button", name="Run history (CSV)").click()
    data = open(d.value.path(), "rb").read()
    assert data == toy_history_csv(page_config({})).encode()  # python -m sim toy --n-seeds 16 --lr-w 0.2 --out's
    with page.expect_download() as d:
        page.get_by_role("button", name="Settings (JSON)").click()
    assert b'"page": "training"' in open(d.value.path(), "rb").read()


def test_std_scaling_and_passk_draw_their_toys_in_the_page(page, server):
    open_page(page, server, "std_scaling")
    page.wait_for_function("window.grpoPlayers && window.grpoPlayers.std_scaling && "
                           "window.grpoPlayers.std_scaling.draws > 0")
    assert page.locator(".gp-live .gp-text").first.text_content().startswith("At the same learning rate 0.20")
    assert page.locator(".gp-below").first.text_content().startswith("Same toy and seeds; means over 16 seeds.")
    open_page(page, server, "passk")
    page.wait_for_function("window.grpoPlayers && window.grpoPlayers.sharpen && window.grpoPlayers.sharpen.draws > 0 "
                           "&& window.grpoPlayers.passk_toy && window.grpoPlayers.passk_toy.draws > 0")
    below = page.locator(".gp-below").all_text_contents()
    assert below[0].startswith("pass@1 0.245 → ") and below[1].startswith("One set of strategy logits")
    assert page.locator(".gp-root").first.locator(".gp-bar").is_hidden()  # a chart that does not change with t
    s = slider(page, "Sharpening toy: group size G")
    s.focus()
    s.press("ArrowRight")
    page.wait_for_function("window.grpoLive.sharpen.shown >= 2")
    assert page.get_by_test_id("stException").count() == 0
