"""A view's page in Chromium, in both hosts: the app's (ui/view.py's component) and a lesson's from file://. One
renderer draws both (assets/js/page.js), so each test here runs in each host: a control move redraws in the page
(and, in the app, sends the server nothing); the address bar always reproduces the screen; links are data;
presets, Pin and New seed; the questions; a refused setting. Where a host has more (the app's exports, a
lesson's hash), its own test says so."""

from __future__ import annotations

import time
from urllib.parse import urlencode

import pytest

from sim.views import catalog
from tests.fixtures.serve import browser_marks
from tests.fixtures.viewpage import HOSTS, changes, link_part, move, shown, state, texts

pytestmark = browser_marks()
VIEWS = catalog.browser_views()  # every view whose page computes its document (sim/views/catalog.py)
SERVER_VIEWS = [v.name for v in catalog.views() if v.server and v.lesson == "app"]  # a visitor's file: the app's only
ADDRESS = [(h, v) for h in HOSTS for v in VIEWS] + [("app", v) for v in SERVER_VIEWS]


@pytest.mark.parametrize("host", HOSTS)
def test_a_control_move_redraws_in_the_page_and_the_link_follows(open_view, host):
    sent = []
    page = open_view(host, "training")
    page.on("websocket", lambda ws: ws.on("framesent", lambda f: sent.append(f)))
    time.sleep(0.5)
    move(page, "G", 3)
    assert state(page)["G"] == 11
    assert "(G = 11)" in " ".join(texts(page, ".gp-title"))
    assert "G=11" in link_part(host, page.url)
    assert not sent, "a control move sent the server a message"
    assert page.evaluate("Object.values(window.grpoPlayers)[0].newPlots") == 5, "the charts were updated in place"
    assert not page.errors


@pytest.mark.parametrize("host, view", ADDRESS)
def test_the_address_bar_reproduces_the_page(open_view, browser, host, view):
    """Every control given a bad value: each is corrected with a note, the address rewritten; the rewritten
    address, opened in a fresh browser, shows the same setting and no note."""
    page = open_view(host, view)
    controls = page.evaluate("window.grpoPage.page.controls")
    bad = {c["key"]: ("maybe" if c["kind"] in ("flag", "choice") else str(c["hi"] * 10 + 3)) for c in controls
           if c["kind"] != "picks"}
    page = open_view(host, view, urlencode(bad))
    note = page.locator(".ls-note").inner_text()
    for key in bad:
        assert f"URL parameter {key}=" in note, (key, note)
    setting, url = state(page), page.url
    fresh_ctx = browser.new_context()
    try:
        fresh = fresh_ctx.new_page()
        fresh.goto(url)
        shown(fresh)
        assert state(fresh) == setting, f"{url} does not reproduce the page"
        assert not fresh.locator(".ls-note").is_visible()
    finally:
        fresh_ctx.close()


HOSTILE = ["![x](http://127.0.0.1:9/pixel.png)", "[click me](https://evil.example/)",
           "<img src=http://127.0.0.1:9/h.png onerror=alert(1)>", "javascript:alert(1)", "$x^2$ **bold** `code`",
           "\u202e0.5\u2028", "A" * 10_000]


@pytest.mark.parametrize("host, view", [(h, v) for h in HOSTS for v in ("training", "one_group", "kl_clip", "tinylm")]
                         + [("app", "your_prompts")])  # six controls: each value of HOSTILE given to one
def test_hostile_link_values_are_plain_text(open_view, host, view, server):
    page = open_view(host, view)
    keys = [c["key"] for c in page.evaluate("window.grpoPage.page.controls")]
    query = {k: HOSTILE[i % len(HOSTILE)] for i, k in enumerate(keys)} | {"hide": "<b>x</b>,G"}
    page = open_view(host, view, urlencode(query))
    local = (server, "file://", "data:", "blob:")
    assert [u for u in page.requested if not u.startswith(local)] == [], "a request left the page's own origin"
    note = page.locator(".ls-note")
    html, text = note.inner_html(), note.inner_text()
    assert "<a " not in html and "<img" not in html and "katex" not in html and "<strong" not in html
    assert len(text) < 400 * len(keys) and "\\u202e" in text and "\u202e" not in text
    assert not page.errors


@pytest.mark.parametrize("host", HOSTS)
def test_presets_pin_and_new_seed(open_view, host):
    page = open_view(host, "training", "G=16&hide=seed")
    before = changes(page)
    page.get_by_role("button", name="Dr. GRPO (no std)").click()
    page.wait_for_function(f"window.grpoPage.changes > {before}")
    shown(page)
    assert (state(page)["scale"], state(page)["G"]) == ("none", 8)  # the rest back to the defaults
    page.get_by_role("button", name="Pin this run").click()
    shown(page)
    move(page, "G", 2)
    legends = " ".join(texts(page, ".gp-legend-name"))
    assert "pinned (G=8)" in legends and page.get_by_role("button", name="Unpin").is_visible()
    seed = page.get_by_role("button", name="New seed")
    assert seed.is_disabled() and "the link fixes seed" in seed.get_attribute("title")  # hide=seed: never moved
    assert not page.errors


@pytest.mark.parametrize("host", HOSTS)
def test_reveal_takes_one_click_and_the_charts_wait_for_it(open_view, host):
    page = open_view(host, "wasted", "predict=1")
    assert page.locator(".gp-plot:visible").count() == 0  # everything waits for the guess (drawn hidden)
    box = page.locator(".gp-predict").first
    box.locator("input").fill("30")
    box.get_by_role("button", name="Reveal").click()  # one click, straight after typing
    page.locator(".gp-predict").nth(1).locator("input").fill("90")
    page.locator(".gp-predict").nth(1).get_by_role("button", name="Reveal").click()
    shown(page)
    assert page.locator(".gp-plot").count() == 2
    said = " ".join(texts(page, ".gp-close, .gp-far"))
    assert "off by 3.7 points, within ±5.0 points: close" in said and "off by 6.2 points" in said


@pytest.mark.parametrize("host", HOSTS)
def test_a_setting_whose_run_diverges_says_why_and_draws_nothing(open_view, host):
    page = open_view(host, "training", "mu=8&loss=cispo&eps_high=5&beta=0.1&G=2&lr=2&lr_w=2&d_min=-10&d_max=15&seeds=1")
    error = page.locator(".gp-error")
    error.wait_for(state="visible")
    assert error.inner_text().startswith("These settings cannot run:") and "diverged at iteration" in error.inner_text()
    assert page.locator(".gp-live-player").is_hidden()
    page.get_by_role("button", name="Chapter defaults").click()  # back to the defaults: charts again
    error.wait_for(state="hidden")
    shown(page)
    assert page.locator(".gp-live-player").is_visible()


def test_a_lesson_follows_a_new_hash_and_its_flags_win_over_the_query(open_view, exercise_lesson, view_context):
    page = open_view("lesson", "training", "G=12")
    page.evaluate("location.hash = 'G=20'")
    page.wait_for_function("window.grpoPage.shown && window.grpoPage.shown.G === 20")
    for search, fragment, big in (("?classroom=1", "classroom=0&G=16", False), ("?hide=G", "hide=&G=16", False),
                                  ("?predict=1", "predict=0", False)):
        url = (exercise_lesson / "training.html").as_uri() + search + "#" + fragment
        p = view_context.new_page()
        p.goto(url)
        shown(p)
        rewritten = p.url
        look = (p.evaluate("document.body.classList.contains('ls-classroom')"),
                p.locator("#ls-G").is_visible(), p.locator(".gp-predict:visible").count())
        p.reload()
        shown(p)
        again = (p.evaluate("document.body.classList.contains('ls-classroom')"),
                 p.locator("#ls-G").is_visible(), p.locator(".gp-predict:visible").count())
        assert rewritten == p.url and look == again, (url, rewritten, look, again)  # a reload changes nothing
        assert look[0] is big
        p.close()


def test_the_app_exports_on_a_click(open_view):
    page = open_view("app", "training", "G=12")
    move(page, "G", 1)
    with page.expect_download() as got:
        page.get_by_role("button", name="Settings (JSON)").click()
    assert '"G": 13' in got.value.path().read_text()
    page.get_by_role("button", name="TRL GRPOConfig").click()
    page.locator(".ls-result pre").wait_for()
    assert "num_generations=13" in page.locator(".ls-result pre").inner_text()
    assert "G=13" in link_part("app", page.url), "the server's rerun kept the address"


def test_the_app_follows_back_and_forward(open_view):
    page = open_view("app", "wasted", "p=0.2")
    page.evaluate("history.pushState(null, '', location.pathname + '?p=0.5'); history.back()")
    page.wait_for_function("window.grpoPage.shown && window.grpoPage.shown.p === 0.2")
    page.evaluate("history.forward()")
    page.wait_for_function("window.grpoPage.shown && window.grpoPage.shown.p === 0.5", timeout=30_000)


@pytest.mark.parametrize("host", HOSTS)
def test_an_options_words_select_it(open_view, host):
    """A radio's description is part of its label: clicking "0.04 (DeepSeekMath)" selects β = 0.04."""
    page = open_view(host, "training")
    before = changes(page)
    page.locator("label.ls-option", has_text="0.04 (DeepSeekMath)").click(position={"x": 60, "y": 8})
    page.wait_for_function(f"window.grpoPage.changes > {before}")
    shown(page)
    assert state(page)["beta"] == 0.04 and "beta=0.04" in link_part(host, page.url)
