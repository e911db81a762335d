"""Both hosts accessible: axe-core finds no WCAG 2.0/2.1 A or AA violation on any page of the app or of a lesson,
and a view's page works from the keyboard in both.

axe-core runs in Chromium on what each page shows once it has drawn (tests/fixtures/axe.py; the file is vendored
in tests/vendor/, never fetched): every app page at 1280x800, in presenter mode (?classroom=1) at the projector's
1920x1080 and at 1280x800, and in predict mode (?predict=1) where the page has questions; every page of the default
lesson the same ways. No rule is switched off (tests/fixtures/axe.py, DISABLED).

The keyboard tests press keys as a user does (Tab, Enter, Space, the arrows, Home, End) and check what each control
did, in the app and in a lesson (one renderer, assets/js/page.js, draws both; the app's page sits among Streamlit's
own elements, so its Tab order is checked too): the settings' range, radios, checkbox and presets; the player's
Play, Back, Step, Reset, speed and timeline; each chart a figure named by its title and described by its caption;
predict mode's guess and Reveal; the seed's slider and number box. docs/accessibility.md says what is checked and
what is not.

Run: heavy python -m pytest tests/test_a11y_browser.py -m e2e
"""

from __future__ import annotations

import re

import pytest

from sim.views import catalog
from tests.fixtures.axe import report, run_axe
from tests.fixtures.drawn import QUIET, settle
from tests.fixtures.serve import browser_marks
from tests.fixtures.viewpage import HOSTS, address

pytestmark = browser_marks()
playwright_sync = pytest.importorskip("playwright.sync_api", reason="playwright (python) is not installed")
expect = playwright_sync.expect

APP_PAGES = ["", *catalog.NAMES]  # home, then every view (sim/views/catalog.py)
PREDICT_PAGES = catalog.question_views()  # the pages with questions (?predict=1)
SMALL, PROJECTOR = {"width": 1280, "height": 800}, {"width": 1920, "height": 1080}
# the keyboard tests' window: wide enough that the app's charts, beside its navigation and the settings, keep Plotly's
# toolbar (a chart grid under 700 px has none: assets/js/player.js NARROW_PX)
KEYBOARD = {"width": 1600, "height": 900}
# (query, viewport): a laptop, presenter mode on a projector and on a laptop, questions first
MODES = [("", SMALL), ("?classroom=1", PROJECTOR), ("?classroom=1", SMALL), ("?predict=1", SMALL)]
MODE_IDS = ["1280", "classroom-1920", "classroom-1280", "predict-1280"]
APP_CASES = [(p, q, vp) for q, vp in MODES for p in APP_PAGES if q != "?predict=1" or p in PREDICT_PAGES]
# the contents and one page per view a lesson has (sim/views/catalog.py; the app-only views have none)
LESSON_PAGES = ["index", *(n for n in catalog.lesson_views() if catalog.view(n).lesson == "page")]

# The tallest scrolling content: the document's, or a scroll container's (Streamlit's main area and its sidebar).
CONTENT_HEIGHT = """() => Math.max(document.documentElement.scrollHeight, ...[...document.querySelectorAll('*')]
  .filter((e) => e.scrollHeight > e.clientHeight && /auto|scroll/.test(getComputedStyle(e).overflowY))
  .map((e) => e.scrollHeight + e.getBoundingClientRect().top))"""
MAX_HEIGHT = 16_000


def show_everything(page) -> None:
    """Make the viewport as tall as the page's content (its width unchanged), then settle: axe checks the colour
    contrast of what is on screen only, and Streamlit's main area and sidebar scroll inside the window, so text
    below the fold would otherwise go unchecked."""
    width = page.viewport_size["width"]
    for _ in range(3):  # the charts' resize can make the page taller
        height = min(int(page.evaluate(CONTENT_HEIGHT)) + 50, MAX_HEIGHT)
        if height <= page.viewport_size["height"]:
            break
        page.set_viewport_size({"width": width, "height": height})
        settle(page)


def check_axe(page, where: str) -> None:
    """No WCAG 2 A/AA violation on the whole page (the viewport made as tall as its content first)."""
    show_everything(page)
    violations = run_axe(page)
    assert not violations, f"{where}:\n{report(violations)}"


@pytest.fixture(scope="module")
def lesson_dir(tmp_path_factory):
    """The default lesson (every view), built once for the module."""
    from tests.fixtures import lesson

    return lesson.build(tmp_path_factory.mktemp("a11y") / "lesson", ["--quiet"])


def open_page(browser, url: str, viewport: dict):
    ctx = browser.new_context(viewport=viewport)
    ctx.add_init_script(QUIET)
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    page.goto(url)
    settle(page)
    return ctx, page


@pytest.mark.parametrize("path,query,viewport", APP_CASES,
                         ids=[f"/{p}{q}-{vp['width']}" for p, q, vp in APP_CASES])
def test_app_page_has_no_wcag_violation(browser, server, path, query, viewport):
    ctx, page = open_page(browser, f"{server}/{path}{query}", viewport)
    try:
        assert page.get_by_test_id("stException").count() == 0
        check_axe(page, f"/{path}{query} at {viewport['width']} px")
    finally:
        ctx.close()


@pytest.mark.parametrize("name", LESSON_PAGES)
@pytest.mark.parametrize("query,viewport", MODES, ids=MODE_IDS)
def test_lesson_page_has_no_wcag_violation(browser, lesson_dir, name, query, viewport):
    ctx, page = open_page(browser, (lesson_dir / f"{name}.html").as_uri() + query, viewport)
    try:
        check_axe(page, f"lesson {name}.html{query} at {viewport['width']} px")
    finally:
        ctx.close()


def test_the_app_stays_light_in_a_dark_browser(browser, server):
    """The theme is fixed to light (config.toml: base = "light"; the viewer menu has no theme switch): a browser that
    prefers dark gets the same colours, so the light theme's contrast is the only one to check."""
    ctx = browser.new_context(viewport=SMALL, color_scheme="dark")
    ctx.add_init_script(QUIET)
    page = ctx.new_page()
    page.goto(f"{server}/one_group")
    settle(page)
    bg = page.evaluate("getComputedStyle(document.querySelector('[data-testid=stApp]')).backgroundColor")
    assert bg == "rgb(255, 255, 255)", bg
    try:
        check_axe(page, "/one_group in a dark browser")
    finally:
        ctx.close()


# ---- the keyboard ----
def focused(page) -> str:
    """What has focus: its class (the player's controls) or its role and accessible label."""
    return page.evaluate("""() => { const e = document.activeElement;
      if (typeof e.className === 'string' && e.className.startsWith('gp-')) return e.className;
      return `${e.tagName.toLowerCase()}:${e.getAttribute('aria-label') || e.id || e.textContent.trim().slice(0, 30)}`;
    }""")


def tab_to(page, selector: str, limit: int = 200) -> int:
    """Press Tab until the element `selector` matches has focus; the number of presses (fails past `limit`)."""
    for n in range(1, limit + 1):
        page.keyboard.press("Tab")
        if page.evaluate("(s) => document.activeElement && document.activeElement.matches(s)", selector):
            return n
    raise AssertionError(f"{limit} presses of Tab never reached {selector} (last: {focused(page)})")


def iteration(page) -> int:
    return int(re.search(r"iteration (\d+)", page.locator(".gp-label").first.text_content()).group(1))


def playing(page) -> bool:
    return page.locator(".gp-root").first.get_attribute("data-playing") == "1"


def check_player_by_keyboard(page) -> None:
    """From the focus before the player: Tab reaches Play, Back, Step, Reset, speed and the timeline in that order,
    each with a visible focus ring, and each does its job from the keyboard."""
    tab_to(page, ".gp-primary")
    order = [focused(page)]
    for _ in range(5):
        page.keyboard.press("Tab")
        order.append(focused(page))
    assert order == ["gp-btn gp-primary", "gp-btn ", "gp-btn ", "gp-btn ", "gp-speed", "gp-timeline"], order
    ring = page.evaluate("(() => { const s = getComputedStyle(document.activeElement);"
                         " return [s.outlineStyle, parseFloat(s.outlineWidth)]; })()")
    assert ring[0] != "none" and ring[1] >= 2, f"the timeline's focus is not visible: {ring}"
    play, back, step, reset = (page.locator(".gp-bar button").nth(i) for i in range(4))
    speed, timeline = page.locator(".gp-speed"), page.locator(".gp-timeline")

    play.focus()
    page.keyboard.press("Space")  # play
    page.wait_for_function("() => /iteration ([1-9]\\d*) /.test(document.querySelector('.gp-label').textContent)")
    assert playing(page)
    page.keyboard.press("Space")  # pause
    expect(play).to_have_accessible_name("Play")
    assert not playing(page)
    page.keyboard.press("Enter")  # play again
    expect(play).to_have_accessible_name("Pause")
    page.keyboard.press("Enter")
    expect(play).to_have_accessible_name("Play")

    reset.focus()
    page.keyboard.press("Enter")
    expect(page.locator(".gp-label")).to_contain_text("iteration 0 ")
    step.focus()
    page.keyboard.press("Space")  # Space on Step steps (it does not play)
    expect(page.locator(".gp-label")).to_contain_text("iteration 1 ")
    page.keyboard.press("Enter")
    expect(page.locator(".gp-label")).to_contain_text("iteration 2 ")
    page.keyboard.press("ArrowRight")  # the arrows step wherever focus is in the bar
    expect(page.locator(".gp-label")).to_contain_text("iteration 3 ")
    back.focus()
    page.keyboard.press("Space")
    expect(page.locator(".gp-label")).to_contain_text("iteration 2 ")
    assert not playing(page)
    reset.focus()
    page.keyboard.press("Space")
    expect(page.locator(".gp-label")).to_contain_text("iteration 0 ")
    assert page.locator(".gp-label").get_attribute("aria-live") == "polite", "a step is announced while paused"

    before = speed.input_value()
    speed.focus()
    page.keyboard.press("ArrowDown")
    assert speed.input_value() != before, "the arrows change the speed"

    timeline.focus()
    page.keyboard.press("ArrowRight")
    expect(page.locator(".gp-label")).to_contain_text("iteration 1 ")
    expect(timeline).to_have_attribute("aria-valuetext", re.compile(r"^iteration 1 of \d+$"))
    page.keyboard.press("End")
    T = int(timeline.get_attribute("max"))
    expect(page.locator(".gp-label")).to_contain_text(f"iteration {T} ")
    page.keyboard.press("Home")
    expect(page.locator(".gp-label")).to_contain_text("iteration 0 ")


def check_charts_are_figures(page, every: bool = False) -> None:
    """Each chart of the player (the app's and a lesson's) is a figure named by its title and described by its
    caption, its text equivalent: its own, else the caption the page shows right below its row; a chart with
    neither has no description (not an empty one). `every`: each chart on the page is described."""
    boxes = page.locator(".gp-chart")
    assert boxes.count() >= 1
    described = 0
    for i in range(boxes.count()):
        box = boxes.nth(i)
        expect(box).to_have_role("figure")
        expect(box).to_have_accessible_name(box.locator(".gp-title").text_content())
        caption = box.locator(".gp-caption").text_content()
        by = box.get_attribute("aria-describedby")
        if caption:
            assert by == box.locator(".gp-caption").get_attribute("id")
        elif by is not None:  # the row's caption, which the page shows below the charts
            caption = page.locator(f"#{by}").text_content()
            assert caption, f"chart {i} is described by an empty element"
        expect(box).to_have_accessible_description(caption)
        described += bool(caption)
    assert described == boxes.count() if every else described >= 1, f"{described} of {boxes.count()} described"


def check_legend_by_keyboard(page, chart: str) -> None:
    """Tab reaches a chart's legend (the player's own buttons above the plot, assets/js/player.js drawLegend);
    Enter switches the name's traces off and on again, and the button says which (aria-pressed)."""
    tab_to(page, f"{chart} .gp-legend-item")
    item = page.locator(":focus")
    expect(item).to_have_attribute("aria-pressed", "true")
    page.keyboard.press("Enter")
    expect(item).to_have_attribute("aria-pressed", "false")
    page.keyboard.press("Enter")
    expect(item).to_have_attribute("aria-pressed", "true")


@pytest.fixture
def open_view(browser, server, lesson_dir):
    """Open a view's page in a host, drawn; closes its context after the test."""
    opened = []

    def opener(host: str, view: str, query: str = ""):
        ctx, page = open_page(browser, address(host, view, query, server=server, lesson=lesson_dir), KEYBOARD)
        opened.append(ctx)
        return page

    yield opener
    for ctx in opened:
        ctx.close()


def shown(page, key: str):
    return page.evaluate(f"window.grpoPage.shown[{key!r}]")


@pytest.mark.parametrize("host", HOSTS)
def test_view_controls_and_player_by_keyboard(open_view, host):
    """Training dynamics: from the page's start, Tab reaches the settings (the app's navigation first); a range, a
    radio group, a checkbox and a preset, each from the keyboard, each changing the setting shown; then the player,
    its charts as figures and their toolbar."""
    page = open_view(host, "training")
    page.locator("body").focus()
    tab_to(page, "#ls-G")
    page.keyboard.press("ArrowRight")
    page.wait_for_function("window.grpoPage.shown.G === 9")
    tab_to(page, "input[type=radio][name=ls-beta]")
    beta = shown(page, "beta")
    page.keyboard.press("ArrowRight")
    page.wait_for_function(f"window.grpoPage.shown.beta !== {beta}")
    box = page.locator(".ls-controls input[type=checkbox]").first
    key = box.get_attribute("id").removeprefix("ls-")
    before = shown(page, key)
    tab_to(page, ".ls-controls input[type=checkbox]")
    page.keyboard.press("Space")
    page.wait_for_function(f"window.grpoPage.shown[{key!r}] === {str(not before).lower()}")
    n = page.evaluate("window.grpoPage.changes")
    tab_to(page, ".ls-preset:not([disabled])")
    page.keyboard.press("Enter")
    page.wait_for_function(f"window.grpoPage.changes > {n}")
    settle(page)
    check_player_by_keyboard(page)
    check_charts_are_figures(page)
    check_legend_by_keyboard(page, ".gp-chart")


@pytest.mark.parametrize("host", HOSTS)
def test_kl_clip_by_keyboard(open_view, host):
    """KL and clipping: its first and last ranges from the keyboard, each changing the setting shown; every chart a
    figure named by its title and described by its caption, the ones whose caption is the paragraph below their
    row included; Tab reaches their toolbar."""
    page = open_view(host, "kl_clip")
    for selector, key in ((".ls-controls .ls-control:first-child input[type=range]", "ArrowRight"),
                          (".ls-controls .ls-control:last-child input[type=range]", "ArrowLeft")):
        assert page.locator(selector).count(), f"KL and clipping has no {selector}"
        n = page.evaluate("window.grpoPage.changes")
        page.locator("body").focus()
        tab_to(page, selector)
        page.keyboard.press(key)
        page.wait_for_function(f"window.grpoPage.changes > {n}")
    settle(page)
    check_charts_are_figures(page, every=True)  # its captions are paragraphs below each row of charts
    check_legend_by_keyboard(page, ".gp-chart")


@pytest.mark.parametrize("host", HOSTS)
def test_questions_revealed_by_keyboard(open_view, host):
    """Wasted groups' questions (assets/js: doc.js, predict.js): the guess, Reveal, the answer, the next question and
    the charts; no violation after."""
    page = open_view(host, "wasted", "predict=1")
    verdicts = page.locator(".ls-doc .gp-predict .gp-close, .ls-doc .gp-predict .gp-far")
    assert page.locator(".ls-doc .gp-chart:visible").count() == 0, "the charts wait for the answer"
    # the question at G = 8, then the one its answer reveals (G = 64), each by the keyboard
    for box in (".ls-doc > .ls-ask > .ls-question", ".ls-then .ls-question"):
        tab_to(page, f"{box} input.gp-guess")
        page.keyboard.type("60")
        tab_to(page, f"{box} button:not([disabled])")
        expect(page.locator(":focus")).to_have_text("Reveal")
        n = verdicts.count()
        page.keyboard.press("Enter")
        expect(verdicts).to_have_count(n + 1)  # the verdict
    page.locator(".ls-doc .gp-chart:visible").first.wait_for()
    settle(page)
    check_charts_are_figures(page)
    check_axe(page, f"{host}: revealed")


@pytest.mark.parametrize("host", HOSTS)
def test_training_question_by_keyboard(open_view, host):
    """Predict mode on Training dynamics (the question of the run computed in the page): Tab to the guess; a guess
    outside the run's iterations is refused (Reveal stays disabled, the box says why); a good one, Tab to Reveal,
    Enter: the charts appear; Guess again, from the keyboard too, hides them and empties the box."""
    page = open_view(host, "training", "predict=1")
    box = page.locator(".gp-predict")
    assert "Around which iteration will its p pass 0.1" in box.text_content()
    assert not page.locator(".gp-live-player").is_visible()
    reveal = page.get_by_role("button", name="Reveal")
    tab_to(page, ".gp-guess")
    page.keyboard.type("9999")  # outside 0..200
    expect(box).to_contain_text("A guess must be a number from 0 to 200")
    assert reveal.is_disabled()
    page.keyboard.press("Control+A")
    page.keyboard.type("80")
    page.keyboard.press("Tab")
    expect(page.locator(":focus")).to_have_text("Reveal")
    page.keyboard.press("Enter")
    page.locator(".gp-live-player .main-svg").first.wait_for()
    expect(box).to_contain_text("Your guess 80, this run's answer 116: off by 36")
    again = page.get_by_role("button", name="Guess again")
    again.focus()
    page.keyboard.press("Enter")
    expect(page.locator(".gp-live-player")).to_be_hidden()
    expect(page.locator(".gp-guess")).to_have_value("")


@pytest.mark.parametrize("host", HOSTS)
def test_seed_box_and_slider_have_their_own_names(open_view, host):
    """Training dynamics' seed: a slider and a number box to type into, two controls with two accessible names."""
    page = open_view(host, "training")
    box = page.locator(".ls-controls input.ls-number")
    assert box.count() >= 1
    for i in range(box.count()):
        slider = box.nth(i).locator("xpath=preceding-sibling::input[@type='range']")
        label = box.nth(i).locator("xpath=preceding-sibling::label").text_content()
        expect(slider).to_have_accessible_name(label)
        expect(box.nth(i)).to_have_accessible_name(f"{label}: type a number")
