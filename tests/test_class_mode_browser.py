"""Class mode in Chromium: a lecturer at the projector and three students, each in a browser of their own
(assets/js/class_mode.js over ui/classroom_routes.py).

- The issue's scenario: the lecturer opens a class on Wasted groups asked as questions (?predict=1), three students
  open the class link (without ?predict=1: their pages follow the lecturer's into question mode), the projector says
  3 joined; the lecturer asks the first question, each student sends a guess, the histogram shows 3 guesses; the
  lecturer's Reveal shows the answer on all four screens (each student's verdict on their own guess); the lecturer
  moves G and the students' G follows. Then a second round beside the first; a student who explores on their own is
  not moved, and comes back with one click.
- The player: the lecturer steps Training dynamics' player and the students' players follow, and the lecturer's
  page change (from the app's navigation) brings the students to that page.
- Safety in the page: a student's page never holds the lecturer's token, nor any page the presenter key.
- The load generator's fidelity: every request the pages send to the class routes is one of
  scripts/bench_class_mode.py's SENDS, with the same body, so the benchmark's class sends what a class sends.
"""

from __future__ import annotations

import json
import re
from urllib.parse import urlsplit

import pytest

from scripts.bench_class_mode import API, LEAD_KEYS, SENDS
from tests.fixtures.serve import IDLE, browser_marks, launch_chromium, start_server
from tests.fixtures.viewpage import shown

pytestmark = browser_marks()
KEY = "class-Lecturer-Key-9Wm4Zq"
HALL = {"width": 1920, "height": 1080}
LAPTOP = {"width": 1280, "height": 900}
GUESSES = ("30", "34", "50")  # the chapter's answer is 33.7%


@pytest.fixture(scope="module")
def app():
    served = start_server(env={"GRPO_PRESENTER_KEY": KEY})
    yield served.url
    served.stop()


@pytest.fixture(scope="module")
def chromium(app):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = launch_chromium(pw)
        yield b
        b.close()


def open_page(chromium, url: str, viewport=LAPTOP):
    """A page in a browser context of its own (a student's own laptop), its script errors kept in page.errors."""
    context = chromium.new_context(viewport=viewport)
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.errors, page.sent = [], []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.on("request", lambda r: API in r.url and page.sent.append((r.method, r.url, r.post_data)))
    page.goto(url)
    page.wait_for_selector(IDLE, timeout=90_000)
    shown(page, timeout=90_000)
    return page


def lecturer_opens(chromium, app, view: str, query: str):
    page = open_page(chromium, f"{app}/{view}?presenter={KEY}&classroom=1&{query}", HALL)
    page.wait_for_function("!location.search.includes('presenter')")
    page.locator(".cm-bar").get_by_role("button", name="Open a class").click()
    page.locator(".cm-joined").wait_for()
    code = page.evaluate("window.grpoClass.code")
    assert re.fullmatch(r"[A-HJ-NP-Z2-9]{6}", code), code
    return page, code


def student_joins(chromium, app, view: str, code: str, predict: bool):
    page = open_page(chromium, f"{app}/{view}?class={code}")
    if predict:  # the lecturer's page is in question mode: the student's page follows it there (a new load)
        page.wait_for_function("window.grpoPage && window.grpoPage.page.flags.predict", timeout=90_000)
        shown(page, timeout=90_000)
    page.locator(".cm-bar", has_text="Your screen follows the lecturer's.").wait_for()
    return page


def kinds_sent(pages) -> set[str]:
    """The kinds of SENDS the pages sent to the class routes; each request must be one of them, body included."""
    templates = {(method, API + where): (kind, keys) for kind, (method, where, keys) in SENDS.items()}
    found = set()
    for page in pages:
        for method, url, body in page.sent:
            parts = urlsplit(url)
            where = re.sub(r"/_class/[A-HJ-NP-Z2-9]{6}/", "/_class/{code}/", parts.path)
            where = re.sub(r"/views/\w+$", "/views/{view}", where) + re.sub(r"id=[\w-]{16}", "?id={id}", parts.query)
            assert (method, where) in templates, (method, url)
            kind, keys = templates[(method, where)]
            data = None if body is None else json.loads(body)
            assert (None if data is None else set(data)) == keys, (kind, body)
            if kind == "lead":
                assert set(data["lead"]) == LEAD_KEYS, data
            found.add(kind)
    return found


def g_of(page) -> int:
    return page.evaluate("window.grpoPage.state.G")


def test_a_class_guesses_sees_the_histogram_gets_the_answer_and_follows_g(chromium, app):
    lecturer, code = lecturer_opens(chromium, app, "wasted", "predict=1")
    students = [student_joins(chromium, app, "wasted", code, predict=True) for _ in GUESSES]
    lecturer.locator(".cm-joined", has_text="3 joined").wait_for()

    # before the lecturer asks, a student cannot send (or reveal) anything
    first = students[0].locator(".gp-predict").first
    assert first.get_by_role("button", name="Send my guess").is_disabled()
    assert "has not asked this question yet" in first.inner_text()

    # the lecturer asks; each student sends one guess; the projector's histogram counts three
    lecturer.locator(".gp-predict").first.get_by_role("button", name="Ask the class").click()
    lecturer.locator(".cm-count", has_text="0 guesses").wait_for()
    for page, guess in zip(students, GUESSES, strict=True):
        box = page.locator(".gp-predict").first
        box.get_by_role("button", name="Send my guess").wait_for()
        box.locator("input.gp-guess").fill(guess)
        box.get_by_role("button", name="Send my guess").click()
        box.get_by_role("button", name="Sent").wait_for()
        assert box.locator("input.gp-guess").is_disabled()  # one guess per round
    lecturer.locator(".cm-count", has_text="3 guesses").wait_for()
    bars = lecturer.evaluate("[...document.querySelectorAll('.cm-col')].map((c) => c.textContent.trim())")
    assert sorted(int(b) for b in bars if b) == [1, 1, 1], bars
    # what follows the question (the charts, the table) still waits on every screen
    for page in (lecturer, *students):
        assert page.locator(".ls-then").first.is_hidden()

    # Reveal: the answer on all four screens; each student's verdict on their own guess
    lecturer.get_by_role("button", name="Reveal to everyone").click()
    lecturer.locator(".gp-predict").first.locator(".ls-answer", has_text="33.7%").wait_for()
    lecturer.locator(".cm-answer", has_text="33.7%").wait_for()
    for page, guess in zip(students, GUESSES, strict=True):
        page.locator(".gp-predict").first.get_by_text(f"Your guess {guess}.0%, the chapter's answer 33.7%").wait_for()
        page.locator(".gp-predict", has_text="And with G = 64?").wait_for()  # what waited for the Reveal is shown
    for page in (lecturer, *students):
        assert "33.7%" in page.locator(".gp-predict").first.inner_text()

    # the lecturer moves G; the students' G follows
    before = g_of(lecturer)
    slider = lecturer.locator("#ls-G")
    slider.focus()
    for _ in range(3):
        slider.press("ArrowRight")
    lecturer.wait_for_function(f"window.grpoPage.state.G === {before + 3}")
    for page in students:
        page.wait_for_function(f"window.grpoPage.state.G === {before + 3}", timeout=10_000)
        shown(page)
        assert page.locator("#ls-G").input_value() == str(before + 3)

    # a student explores on their own: the lecturer's next move leaves them; one click brings them back
    away = students[2]
    away.get_by_role("button", name="Explore on my own").click()
    away.locator(".cm-bar", has_text="You are exploring on your own.").wait_for()
    slider.press("ArrowRight")
    students[0].wait_for_function(f"window.grpoPage.state.G === {before + 4}", timeout=10_000)
    away.wait_for_timeout(1000)
    assert g_of(away) == before + 3
    away.get_by_role("button", name="Back to the lecturer").click()
    away.wait_for_function(f"window.grpoPage.state.G === {before + 4}", timeout=10_000)

    # another round of the second question, kept beside the first
    lecturer.locator(".gp-predict", has_text="And with G = 64?").get_by_role("button", name="Ask the class").click()
    box = students[0].locator(".gp-predict", has_text="And with G = 64?")
    box.locator("input.gp-guess").fill("90")
    box.get_by_role("button", name="Send my guess").click()
    box.get_by_role("button", name="Sent").wait_for()
    second = lecturer.locator(".gp-predict", has_text="And with G = 64?")
    second.locator(".cm-count", has_text="1 guess").wait_for()
    second.get_by_role("button", name="Another round").click()
    box.get_by_role("button", name="Send my guess").wait_for()  # the student's box asks again
    box.locator("input.gp-guess").fill("95")
    box.get_by_role("button", name="Send my guess").click()
    titles = second.locator(".cm-hist-title")
    titles.nth(1).filter(has_text="Round 2: 1 guess").wait_for()
    assert titles.nth(0).inner_text() == "Round 1: 1 guess"

    # the lecturer's token is nowhere in a student's page, nor the presenter key anywhere
    token = lecturer.evaluate("window.grpoClass.token")
    for page in students:
        assert token not in page.content() and KEY not in page.content()
        assert page.evaluate("sessionStorage.getItem('grpo-class-lecturer')") is None
        assert not page.errors, page.errors
    assert KEY not in lecturer.content() and not lecturer.errors, lecturer.errors

    # the class ends: every student's page says so and is theirs again
    lecturer.get_by_role("button", name="End the class").click()
    for page in students:
        page.locator(".cm-bar", has_text="The class has ended.").wait_for()
    assert kinds_sent([lecturer, *students]) >= {"open", "mine", "lead", "board", "ask", "reveal", "close", "join",
                                                 "events", "guess"}  # fmt: skip
    for page in (lecturer, *students):
        page.context.close()


def test_students_follow_the_player_and_the_lecturers_page(chromium, app):
    lecturer, code = lecturer_opens(chromium, app, "training", "G=8")
    students = [student_joins(chromium, app, "training", code, predict=False) for _ in range(2)]
    lecturer.locator(".cm-joined", has_text="2 joined").wait_for()
    for page in students:
        assert g_of(page) == 8
    step = lecturer.locator(".gp-bar").first.get_by_role("button", name="Step ▶")
    for _ in range(3):
        step.click()
    for page in students:
        page.locator(".gp-label").first.filter(has_text=re.compile(r"iteration 3 /")).wait_for(timeout=10_000)
    # the lecturer opens Wasted groups from the app's navigation (the same session): the students' pages go there
    expand = lecturer.get_by_test_id("stExpandSidebarButton")
    if expand.is_visible():  # presenter mode folds the navigation as the page opens (assets/js/app_view.js)
        expand.click()
    lecturer.locator("[data-testid=stSidebarNavLink][href$='/wasted']").click()
    lecturer.wait_for_function("location.pathname.endsWith('/wasted')")
    for page in students:  # in place (no new page load, no script run): the address bar says where it is
        page.wait_for_function("location.pathname.endsWith('/wasted') && window.grpoPage.page.m.view === 'wasted'",
                               timeout=30_000)
        shown(page, timeout=90_000)
        page.locator(".cm-bar", has_text="Your screen follows the lecturer's.").wait_for()
        assert page.evaluate("performance.getEntriesByType('navigation').length") == 1  # the same page load
        headings = page.evaluate("[...document.querySelectorAll('h1')].filter((h) => h.offsetParent !== null)"
                                 ".map((h) => h.textContent.trim())")
        assert headings == ["Wasted groups"], headings  # the view's title, not Training dynamics'
        assert page.locator("#ls-p").count() == 1  # Wasted groups' own controls
        assert page.get_by_role("button", name="Run history (CSV)").count() == 0  # exports: the server's page's
    lecturer.locator(".cm-joined", has_text="2 joined").wait_for()
    # a reload keeps the class and the page the class is on
    students[0].reload()
    students[0].wait_for_selector(IDLE, timeout=90_000)
    shown(students[0], timeout=90_000)
    students[0].locator(".cm-bar", has_text="Your screen follows the lecturer's.").wait_for()
    assert students[0].evaluate("window.grpoPage.page.m.view") == "wasted"
    assert "view" in kinds_sent([lecturer, *students])
    for page in (lecturer, *students):
        assert not page.errors, page.errors
        page.context.close()
