"""What must hold on every page, for every screen and moment, in both hosts: generated from the catalog of views
(sim/views/catalog.py), so a new view is covered with no new test. The checks are tests/fixtures/invariants.js.

- Every chart tells the truth: each trace is drawn where its own axes map its values (lines, stacked areas, bands,
  markers, bars, heatmaps), when the page opens, while it plays (Play pressed at once, before the page settles),
  at the run's end and after Reset + Step; no tick label hidden for lack of room.
- Every page fits its screen: no text under 20 px in presenter mode (chart ticks and legends included); the first
  chart wholly on the first screen at 1920x1080 presenter and on a 390x844 phone (a view that trains: its Start);
  nothing cut at a right edge, and a box that scrolls sideways shows that it does; no console error, script error
  or failed request.
- Questions ask before they tell: with ?predict=1, no question's answer is on screen before its Reveal.
"""

from __future__ import annotations

import pytest

from sim.views.catalog import NAMES, view
from tests.fixtures.drawn import DRAWN, QUIET, settle
from tests.fixtures.invariants import (
    PLAYERS,
    PRESENTER_PX,
    SIZES,
    Watch,
    check,
    players,
    press_play,
    reset_and_step,
    wait_until_played,
)
from tests.fixtures.serve import browser_marks

pytestmark = browser_marks()
HOME = "home"  # the app's home page, a lesson's contents page
PAGES = [("app", name) for name in (HOME, *NAMES)] + [
    ("lesson", name) for name in (HOME, *NAMES) if name == HOME or view(name).lesson != "app"]


@pytest.fixture(scope="module")
def lesson(tmp_path_factory):
    """Every view's lesson, as `python -m sim lesson build` writes it."""
    from tests.fixtures import lesson as lessons

    return lessons.build(tmp_path_factory.mktemp("invariants") / "lesson", ["--quiet"])


def address(host: str, name: str, server: str, lesson, flags: dict) -> str:
    query = "&".join(f"{k}={v}" for k, v in flags.items())
    if host == "app":
        return f"{server}/{'' if name == HOME else name}" + (f"?{query}" if query else "")
    page = "index" if name == HOME else name
    return (lesson / f"{page}.html").as_uri() + (f"#{query}" if query else "")


def new_page(browser, size: str):
    spec = SIZES[size]
    ctx = browser.new_context(viewport=spec["viewport"], is_mobile=spec.get("is_mobile", False),
                              has_touch=spec.get("has_touch", False))
    ctx.add_init_script(QUIET)
    page = ctx.new_page()
    page.set_default_timeout(90_000)
    return ctx, page


def play_at_once(page, timeout_ms: int = 90_000) -> int:
    """Press Play the moment a player is on the page, or return 0 once the page has drawn without one."""
    page.wait_for_function(f"() => document.querySelector({PLAYERS!r} + ' .gp-primary') || ({DRAWN})()",
                           timeout=timeout_ms, polling=50)
    return press_play(page) if players(page) else 0


def start_on_first_screen(page, size: str) -> list[str]:
    """A view that trains (TinyLM's): its first screen holds its Start, as a chart view's holds its first chart.
    Its own charts are what Start draws; the recorded runs' charts follow, below the trainer."""
    box = page.get_by_role("button", name="▶ Start").bounding_box()
    bottom = page.evaluate("innerHeight")
    if box is None or box["y"] < 0 or box["y"] + box["height"] > bottom:
        return [f"at {size} size: the trainer's Start at {box}, not on the first screen (0..{bottom} px)"]
    return []


def to_top(page) -> None:
    """Back to the top of the page (a click scrolls what it clicks into view), in either host."""
    page.evaluate("""() => { window.scrollTo(0, 0);
      for (const e of document.querySelectorAll('[data-testid=stMain], section.main')) e.scrollTop = 0; }""")
    page.wait_for_timeout(200)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize(("host", "name"), PAGES, ids=[f"{h}-{n}" for h, n in PAGES])
def test_every_chart_tells_the_truth_and_the_page_fits_its_screen(browser, server, lesson, host, name, size):
    presenter = SIZES[size]["presenter"]
    ctx, page = new_page(browser, size)
    try:
        watch = Watch(page)
        page.goto(address(host, name, server, lesson, {"classroom": 1} if presenter else {}))
        problems: list[str] = []

        def at(moment: str, *checks) -> None:
            for c in checks:
                args = (PRESENTER_PX,) if c == "smallText" else ()
                problems.extend(f"{moment}: {p}" for p in check(page, c, *args))

        if size == "laptop":  # opened and settled first; the other sizes press Play at once
            settle(page)
            at("when opened", "charts")
            n = press_play(page) if players(page) else 0
        else:
            n = play_at_once(page)
        if n:
            for _ in range(3):
                page.wait_for_timeout(250)
                at("while playing", "charts")
            wait_until_played(page)
            at("at the run's end", "charts", "captions")
            reset_and_step(page)
            at("after Reset + Step", "charts")
        settle(page)
        to_top(page)
        at("on screen", "cut")
        if not n:
            at("on screen", "captions")
        if presenter:
            at("in presenter mode", "smallText")
        if size != "laptop" and name != HOME and view(name).trainer:
            problems.extend(start_on_first_screen(page, size))
        elif size != "laptop":
            at(f"at {size} size", "firstChart")
        problems.extend(watch.problems)
        assert not problems, f"{host} {name} at {size}:\n" + "\n".join(dict.fromkeys(problems))
    finally:
        ctx.close()


QUESTION_PAGES = [(h, n) for h, n in PAGES if n != HOME]


@pytest.mark.parametrize(("host", "name"), QUESTION_PAGES, ids=[f"{h}-{n}" for h, n in QUESTION_PAGES])
def test_questions_ask_before_they_tell(browser, server, lesson, host, name):
    ctx, page = new_page(browser, "laptop")
    try:
        watch = Watch(page)
        page.goto(address(host, name, server, lesson, {"predict": 1}))
        settle(page)
        asked = page.evaluate("window.grpoQuestions ? window.grpoQuestions.size : 0")
        problems = check(page, "answers") + watch.problems
        assert not problems, f"{host} {name} with predict=1 ({asked} questions):\n" + "\n".join(problems)
    finally:
        ctx.close()
