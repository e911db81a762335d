"""A view's link, read and written in Chromium by both hosts (assets/js/page.js with control_rules.js and
lesson_rules.js: the app keeps the setting in the query, a lesson in the hash). The rules themselves, on a table of
links, run under node (tests/test_link_rules.py); here the page applies them as a person meets them:

- a value outside a control's range, off its steps, not an option or not a decimal number is corrected, with a
  note in the app's words naming it, and the address bar rewritten to say exactly what the page shows;
- a repeated key takes its last value, with a note; a repeated hide too;
- what a link says is shown as text: no markup, bidi overrides, NUL and line separators escaped;
- a hidden control keeps the link's value: presets that would set it are disabled and the others leave it alone,
  New seed never moves a hidden seed, the share and classroom links keep it;
- the share links copy what they show, and the app never loads st.code's syntax highlighter.

The lead's tests/test_view_pages_browser.py has the hostile-value and address-bar round trips on every view; a
lesson's own hash (a new hash followed, its flags kept) is tests/test_lesson_browser.py's.

Run: OMP_NUM_THREADS=1 python -m pytest tests/test_link_rules_browser.py -m e2e
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from tests.fixtures.serve import browser_marks
from tests.fixtures.viewpage import HOSTS, link_part, shown, state

pytestmark = browser_marks()


def link(host: str, page) -> dict[str, list[str]]:
    """The setting the address bar holds now: the app's query, a lesson's hash."""
    return parse_qs(link_part(host, page.url), keep_blank_values=True)


def note(page) -> str:
    return page.locator(".ls-note").inner_text()


@pytest.mark.parametrize("host", HOSTS)
def test_a_link_is_corrected_in_the_apps_words_and_nothing_from_it_is_markup(open_view, host):
    evil = "%3Cimg%20src%3Dx%20onerror%3Dwindow.pwned%3D1%3E"
    page = open_view(host, "training", f"G=99&beta={evil}&lr=0.23&seed=7.4&T=60")
    said = note(page)
    assert "URL parameter G=99 is outside the allowed range 2 to 64; using G = 64." in said, said
    assert "URL parameter lr=0.23 is not on the slider's steps of 0.05; using lr = 0.25." in said
    assert "URL parameter seed=7.4 is not on the slider's steps of 1; using seed = 7." in said
    assert "<img" in said and "is not one of 0, 0.001, 0.01, 0.04, 0.1; using beta = 0." in said
    assert page.evaluate("document.querySelectorAll('.ls-page img').length === 0 && !window.pwned")
    assert state(page) | {"G": 64, "lr": 0.25, "seed": 7, "T": 60, "beta": 0} == state(page)
    assert page.locator("#ls-G").input_value() == "64" and page.locator("#ls-beta-0").is_checked()
    assert link(host, page) == {"G": ["64"], "lr": ["0.25"], "seed": ["7"], "T": ["60"]}  # what the page shows
    assert not page.errors


@pytest.mark.parametrize("host", HOSTS)
def test_bidi_nul_and_line_separators_are_shown_escaped(open_view, host):
    page = open_view(host, "training", "G=%E2%80%AE61%20lessons%20approved&beta=a%00b%E2%80%A8c"
                                       "&lr=%E2%80%AE0.5%E2%81%A6x%E2%80%A8")  # U+202E, NUL, U+2028, U+2066
    said = note(page)
    assert "URL parameter G=\\u202e61 lessons approved is not a number from 2 to 64; using G = 8." in said, said
    assert "URL parameter beta=a\\u0000b\\u2028c is not one of 0, 0.001, 0.01, 0.04, 0.1" in said, said
    lr = said[said.index("URL parameter lr="):]  # the last note: read in order, nothing after the value reversed
    assert "\\u202e0.5\\u2066x\\u2028" in lr and lr.endswith("is not a number from 0.05 to 2; using lr = 0.2."), lr
    assert not any(ch in said for ch in "\u202e\x00\u2028\u2066")
    assert link(host, page) == {}  # every value refused: the defaults, which a link leaves out


@pytest.mark.parametrize("host", HOSTS)
def test_a_repeated_key_takes_its_last_value_and_numbers_are_decimal(open_view, host):
    page = open_view(host, "training", "G=4&G=16&beta=0.001&beta=0.04&dyn=true&dyn=false&dyn=true")
    assert (state(page)["G"], state(page)["beta"], state(page)["dyn"]) == (16, 0.04, True)
    assert page.locator("#ls-dyn").is_checked() and page.locator("#ls-beta-3").is_checked()
    assert link(host, page) == {"G": ["16"], "beta": ["0.04"], "dyn": ["true"]}  # one value each
    said = note(page)
    for key, n, values in (("G", 2, "4, 16"), ("beta", 2, "0.001, 0.04"), ("dyn", 3, "true, false, true")):
        assert f"URL parameter {key} is given {n} times ({values}); using the last one." in said, said
    page = open_view(host, "training", "G=0x10")
    assert state(page)["G"] == 8  # the default, not 16
    assert "URL parameter G=0x10 is not a number from 2 to 64; using G = 8." in note(page)


def share(page, button: str = "Copy this link") -> str:
    """The link a Share button gives: put on the clipboard (then "Copied.") or, where the clipboard cannot be used
    (a lesson from file://), shown for selecting."""
    panel = page.locator("details.ls-share")
    if not panel.evaluate("(d) => d.open"):
        page.get_by_text("Share / classroom link").click()
    b = page.get_by_role("button", name=button)
    b.click()
    out = b.locator("xpath=following-sibling::output[1]")
    page.wait_for_function("(e) => e.textContent !== ''", arg=out.element_handle())
    text = out.text_content()
    return page.evaluate("navigator.clipboard.readText()") if text == "Copied." else text


@pytest.mark.parametrize("host", HOSTS)
def test_a_hidden_seed_stays_the_links(open_view, host):
    """hide=seed: New seed is disabled, the seed control hidden, the link and both share links keep seed=5 (the
    last of two) and hide=seed; a repeated hide takes its last value too."""
    page = open_view(host, "training", "hide=G&hide=seed&seed=9&seed=5")
    said = note(page)
    assert "URL parameter hide is given 2 times (G, seed); using the last one." in said, said
    assert "URL parameter seed is given 2 times (9, 5); using the last one." in said
    assert page.locator("#ls-seed").is_hidden() and page.locator("#ls-G").is_visible()  # the last hide wins
    assert link(host, page) == {"seed": ["5"], "hide": ["seed"]}
    button = page.get_by_role("button", name="New seed")
    assert button.is_disabled() and button.get_attribute("title") == "the link fixes seed (hide=seed)"
    copied = parse_qs(urlsplit(share(page)).query if host == "app" else urlsplit(share(page)).fragment)
    assert copied == {"seed": ["5"], "hide": ["seed"]}, copied
    page.locator(".ls-hide label", has_text="Group size G").locator("input").check()
    classroom = urlsplit(share(page, "Copy the classroom link"))
    part = classroom.query if host == "app" else classroom.fragment
    assert parse_qs(part) == {"G": ["8"], "seed": ["5"], "classroom": ["1"], "hide": ["G"]}, part  # a hidden G too
    assert not page.errors


@pytest.mark.parametrize("host", HOSTS)
def test_a_preset_never_changes_a_hidden_setting(open_view, host):
    page = open_view(host, "training", "hide=lr_w&lr_w=0.5")
    skill = page.get_by_role("button", name="No shared skill (lr_w = 0)")
    assert skill.is_disabled() and skill.get_attribute("title") == "the link fixes lr_w (hide=lr_w)"
    page.get_by_role("button", name="R1-Zero's KL (β = 0.001)").click()  # sets beta, resets the visible rest
    page.wait_for_function("window.grpoPage.shown.beta === 0.001")
    shown(page)
    assert state(page)["lr_w"] == 0.5
    assert link(host, page) == {"beta": ["0.001"], "lr_w": ["0.5"], "hide": ["lr_w"]}
    copied = urlsplit(share(page))
    assert parse_qs(copied.query if host == "app" else copied.fragment) == link(host, page)


def test_the_apps_share_link_is_copied_and_no_highlighter_is_loaded(open_view, server):
    """The app: Copy puts the link shown on the clipboard; the TRL config is shown as text, and the page never loads
    st.code's 1.5 MB syntax highlighter."""
    page = open_view("app", "training", "G=16&seed=5")
    copied = share(page)
    assert copied == f"{server}/training?G=16&seed=5", copied
    page.get_by_role("button", name="TRL GRPOConfig").click()
    config = page.locator(".ls-result pre")
    config.wait_for()
    assert "GRPOConfig(" in config.inner_text() and "num_generations=16" in config.inner_text()
    loaded = page.evaluate("performance.getEntriesByType('resource').map(r => r.name)")
    assert not [n for n in loaded if "SyntaxHighlighter" in n], "st.code's highlighter was loaded"
