"""Both hosts accessible: axe-core finds no WCAG 2.0/2.1 A or AA violation on any page of the app or of a lesson,
and the player and the lesson's controls work from the keyboard.

axe-core runs in Chromium on what each page shows once it has drawn (tests/fixtures/axe.py; the file is vendored
in tests/vendor/, never fetched): every app page at 1280x800, in presenter mode (?classroom=1) at the projector's
1920x1080, and in predict mode (?predict=1) where the page has questions; every page of the default lesson the
same three ways. No rule is switched off (tests/fixtures/axe.py, DISABLED).

The keyboard tests press keys as a user does (Tab, Enter, Space, the arrows, Home, End) and check what each control
did: the player's Play, Back, Step, Reset, speed and timeline in the app and in a lesson, each chart a figure named
by its title and described by its caption (the app's and a lesson's charts alike: the shared player), the lesson's
own controls and presets, and predict mode's guess and Reveal. docs/accessibility.md says what is checked and what
is not.

Run: heavy python -m pytest tests/test_a11y_browser.py -m e2e
"""

from __future__ import annotations

import re

import pytest

from tests.fixtures.axe import report, run_axe
from tests.fixtures.drawn import QUIET, settle
from tests.fixtures.serve import browser_marks

pytestmark = browser_marks()
playwright_sync = pytest.importorskip("playwright.sync_api", reason="playwright (python) is not installed")
expect = playwright_sync.expect

APP_PAGES = ["", "training", "one_group", "wasted", "std_scaling", "passk", "kl_clip", "tinylm", "lab", "your_run",
             "your_prompts"]  # fmt: skip
PREDICT_PAGES = ["training", "wasted", "std_scaling", "passk", "kl_clip"]  # the pages with questions (?predict=1)
SMALL, PROJECTOR = {"width": 1280, "height": 800}, {"width": 1920, "height": 1080}
# (query, viewport): a laptop, presenter mode on a projector and on a laptop, questions first
MODES = [("", SMALL), ("?classroom=1", PROJECTOR), ("?classroom=1", SMALL), ("?predict=1", SMALL)]
MODE_IDS = ["1280", "classroom-1920", "classroom-1280", "predict-1280"]
APP_CASES = [(p, q, vp) for q, vp in MODES for p in APP_PAGES if q != "?predict=1" or p in PREDICT_PAGES]
# the contents and one page per view a lesson has (sim/views/catalog.py; the app-only views have none)
LESSON_PAGES = ["index", "one_group", "training", "wasted", "std_scaling", "passk", "kl_clip", "tinylm"]

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


def check_toolbar_shows_on_focus(page, chart: str) -> None:
    """Tab reaches a chart's Plotly toolbar (zoom, pan, download), and the focused button becomes visible (the
    toolbar is transparent until a hover or a focus; it fades in over 0.3 s)."""
    tab_to(page, f"{chart} .modebar-btn")
    page.wait_for_function("""() => { let o = 1;  // the opacity the focused button is painted with
      for (let e = document.activeElement; e; e = e.parentElement) o *= parseFloat(getComputedStyle(e).opacity);
      return o > 0.99; }""", timeout=5_000)


def test_app_player_by_keyboard(browser, server):
    ctx, page = open_page(browser, f"{server}/training", SMALL)
    try:
        slider = page.get_by_test_id("stSlider").filter(has_text="Group size G").get_by_role("slider")
        page.locator("body").focus()
        tab_to(page, "[data-testid=stSidebar] [data-testid=stSlider] input")  # the settings come first
        expect(slider).to_be_focused()
        page.keyboard.press("ArrowRight")
        page.wait_for_function("() => window.location.search.includes('G=9')")
        page.locator(".gp-title", has_text="(G = 9)").first.wait_for()
        settle(page)
        check_player_by_keyboard(page)
        check_charts_are_figures(page)
        check_toolbar_shows_on_focus(page, ".gp-plot")
    finally:
        ctx.close()


def test_app_kl_clip_charts_are_described(browser, server):
    """KL and clipping in the app: every chart a figure described by its caption, the ones whose caption is the
    paragraph below their row included (the same reading as a lesson's, test_lesson_kl_clip_by_keyboard)."""
    ctx, page = open_page(browser, f"{server}/kl_clip", SMALL)
    try:
        check_charts_are_figures(page, every=True)
    finally:
        ctx.close()


def test_app_predict_revealed_by_keyboard(browser, server):
    """Wasted groups' questions (ui/predict.py, Streamlit's widgets): type a guess, Tab to Reveal, Enter; the
    answer shows, and the page with an answer revealed has no violation either."""
    ctx, page = open_page(browser, f"{server}/wasted?predict=1", SMALL)
    try:
        tab_to(page, ".st-key-predict-wasted_g8-input input")
        page.keyboard.type("60")
        page.keyboard.press("Enter")  # commits the number: the rerun enables Reveal
        page.locator(".st-key-predict-wasted_g8-reveal button:not([disabled])").wait_for()
        tab_to(page, ".st-key-predict-wasted_g8-reveal button")
        page.keyboard.press("Enter")
        page.get_by_text("the chapter's answer").first.wait_for()
        expect(page.locator(".st-key-predict-wasted_g8-again button")).to_be_visible()
        settle(page)
        check_axe(page, "revealed")
    finally:
        ctx.close()


def test_lesson_predict_revealed_by_keyboard(browser, lesson_dir):
    """A lesson's questions (assets/js: doc.js, predict.js): the guess, Reveal, the answer, the next question and
    the charts; no violation after."""
    ctx, page = open_page(browser, (lesson_dir / "wasted.html").as_uri() + "?predict=1", SMALL)
    verdicts = page.locator("#ls-doc .gp-predict .gp-close, #ls-doc .gp-predict .gp-far")
    try:
        assert page.locator("#ls-doc .gp-chart:visible").count() == 0, "the charts wait for the answer"
        # the question at G = 8, then the one its answer reveals (G = 64), each by the keyboard
        for box in (".ls-doc > .ls-ask > .ls-question", ".ls-then .ls-question"):
            tab_to(page, f"{box} input.gp-guess")
            page.keyboard.type("60")
            tab_to(page, f"{box} button:not([disabled])")
            expect(page.locator(":focus")).to_have_text("Reveal")
            n = verdicts.count()
            page.keyboard.press("Enter")
            expect(verdicts).to_have_count(n + 1)  # the verdict
        page.locator("#ls-doc .gp-chart:visible").first.wait_for()
        settle(page)
        check_charts_are_figures(page)
        check_axe(page, "revealed")
    finally:
        ctx.close()


def test_app_predict_by_keyboard(browser, server):
    """Predict mode on Training dynamics: Tab to the guess, type it, Tab to Reveal, Enter: the charts appear."""
    ctx, page = open_page(browser, f"{server}/training?predict=1", SMALL)
    try:
        assert not page.locator(".gp-live-player").is_visible()
        tab_to(page, ".gp-guess")
        page.keyboard.type("80")
        page.keyboard.press("Tab")
        assert focused(page) == "gp-btn"
        page.keyboard.press("Enter")
        page.locator(".gp-live-player .main-svg").first.wait_for()
        expect(page.get_by_role("button", name="Guess again")).to_be_visible()
    finally:
        ctx.close()


def test_lesson_live_view_by_keyboard(browser, lesson_dir):
    """The lesson's Training dynamics (computed in the page): a range, a radio group, a checkbox and a preset, each
    from the keyboard, each changing the setting shown; then the player."""
    ctx, page = open_page(browser, (lesson_dir / "training.html").as_uri(), SMALL)
    try:
        shown = lambda key: page.evaluate(f"window.grpoLesson.shown[{key!r}]")  # noqa: E731
        changes = lambda: page.evaluate("window.grpoLesson.changes")  # noqa: E731
        tab_to(page, "#ls-G")
        page.keyboard.press("ArrowRight")
        page.wait_for_function("window.grpoLesson.shown.G === 9")
        tab_to(page, "input[type=radio][name=ls-beta]")
        beta = shown("beta")
        page.keyboard.press("ArrowRight")
        page.wait_for_function(f"window.grpoLesson.shown.beta !== {beta}")
        box = page.locator("#ls-controls input[type=checkbox]").first
        key = box.get_attribute("id").removeprefix("ls-")
        before = shown(key)
        tab_to(page, "#ls-controls input[type=checkbox]")
        page.keyboard.press("Space")
        page.wait_for_function(f"window.grpoLesson.shown[{key!r}] === {str(not before).lower()}")
        n = changes()
        tab_to(page, ".ls-preset:not([disabled])")
        page.keyboard.press("Enter")
        page.wait_for_function(f"window.grpoLesson.changes > {n}")
        settle(page)
        page.locator(".gp-label").first.wait_for()
        check_player_by_keyboard(page)
        check_charts_are_figures(page)
    finally:
        ctx.close()


def test_lesson_kl_clip_by_keyboard(browser, lesson_dir):
    """A lesson page computed in the page (KL and clipping): its first and last ranges from the keyboard, each changing
    the setting shown; its charts are figures named by their titles, described by their captions, and Tab reaches
    their toolbar."""
    ctx, page = open_page(browser, (lesson_dir / "kl_clip.html").as_uri(), SMALL)
    try:
        for selector, key in (("#ls-controls .ls-control:first-child input[type=range]", "ArrowRight"),
                              ("#ls-controls .ls-control:last-child input[type=range]", "ArrowLeft")):
            assert page.locator(selector).count(), f"KL and clipping has no {selector}"
            n = page.evaluate("window.grpoLesson.changes")
            page.locator("body").focus()
            tab_to(page, selector)
            page.keyboard.press(key)
            page.wait_for_function(f"window.grpoLesson.changes > {n}")
        settle(page)
        check_charts_are_figures(page, every=True)  # its captions are paragraphs below each row of charts
        check_toolbar_shows_on_focus(page, ".gp-plot")
    finally:
        ctx.close()


def test_lesson_seed_box_and_slider_have_their_own_names(browser, lesson_dir):
    """Training dynamics' seed: a slider and a number box to type into, two controls with two accessible names."""
    ctx, page = open_page(browser, (lesson_dir / "training.html").as_uri(), SMALL)
    try:
        box = page.locator("#ls-controls input.ls-number")
        assert box.count() >= 1
        for i in range(box.count()):
            slider = box.nth(i).locator("xpath=preceding-sibling::input[@type='range']")
            label = box.nth(i).locator("xpath=preceding-sibling::label").text_content()
            expect(slider).to_have_accessible_name(label)
            expect(box.nth(i)).to_have_accessible_name(f"{label}: type a number")
    finally:
        ctx.close()
