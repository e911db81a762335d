"""Issue 19 rows 8, 9, 10 in a real browser: the links the adversarial pass typed, on one server.

Row 8: a repeated key (`?G=4&G=16`, a radio's `beta=…&beta=…`, `hide=…&hide=…`) takes its last value on every
control, with a warning naming the parameter, and the address bar keeps that one value. Row 9: a bidi override
in a refused value is shown escaped (`\\u202e`), and the rest of the warning reads left to right. Row 10: with
`hide=seed`, "New seed" is disabled and the share link keeps seed=5 and hide=seed; with `hide=lr_w`, the
"No shared skill" preset is disabled and another preset leaves lr_w as the link says.
Run: python -m pytest tests/test_hardening_browser.py -m browser
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from tests.fixtures.serve import IDLE, browser_marks

pytestmark = browser_marks()


@pytest.fixture(scope="module")
def page(server, browser):
    """One tab for the module on the shared server and browser fixtures (tests/conftest.py)."""
    tab = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    tab.base = server
    yield tab
    tab.context.close()


def load(page, path: str) -> None:
    page.goto(f"{page.base}/{path}")
    settle(page)


def settle(page) -> None:
    page.wait_for_selector(IDLE, timeout=60_000)
    page.wait_for_timeout(700)  # a correction's rerun starts after the first run ends
    page.wait_for_selector(IDLE, timeout=60_000)


def query(page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query, keep_blank_values=True)


def warnings(page) -> list[str]:
    return [w.inner_text() for w in page.get_by_test_id("stAlertContentWarning").all()]


def slider(page, key: str):
    return page.locator(f".st-key-{key} input[type=range]")


def selected(page, key: str) -> str:
    return page.locator(f".st-key-{key} [role=radiogroup] [data-selected=true]").first.text_content()


def share_link(page) -> dict[str, list[str]]:
    """The sidebar's "This setup ... as one link" (the share box's first copy box, ui/copy_text.py)."""
    text = page.locator("[data-testid=stSidebar] .st-key-_share_this pre").text_content().strip()
    return parse_qs(urlsplit(text).query, keep_blank_values=True)


def test_repeated_keys_take_the_last_value_on_every_control(page):
    load(page, "training?G=4&G=16&beta=0.001&beta=0.04&dyn=true&dyn=false&dyn=true")
    assert slider(page, "G").input_value() == "16"  # was 8, the default, and G left the URL
    assert "0.04" in selected(page, "beta")
    assert page.locator(".st-key-dyn input[role=switch]").is_checked()
    assert query(page) == {"G": ["16"], "beta": ["0.04"], "dyn": ["true"]}  # one value each
    said = warnings(page)
    for key, n, values in (("G", 2, "4, 16"), ("beta", 2, "0.001, 0.04"), ("dyn", 3, "true, false, true")):
        assert any(f"URL parameter {key} is given {n} times ({values}); using the last one." in w for w in said), said


def test_repeated_hidden_key_and_repeated_hide(page):
    load(page, "training?hide=G&hide=seed&seed=9&seed=5")
    assert query(page) == {"hide": ["seed"], "seed": ["5"]}
    assert slider(page, "seed").count() == 0 and slider(page, "G").count() == 1  # the last hide wins
    said = warnings(page)
    assert any("URL parameter hide is given 2 times (G, seed); using the last one." in w for w in said), said
    assert any("URL parameter seed is given 2 times (9, 5); using the last one." in w for w in said), said
    assert share_link(page)["seed"] == ["5"] and share_link(page)["hide"] == ["seed"]


def test_bidi_override_is_shown_escaped(page):
    load(page, "training?lr=%E2%80%AE0.5%E2%81%A6x%E2%80%A8")  # U+202E, U+2066, U+2028 (the issue's /wasted?p=)
    said = [w for w in warnings(page) if "URL parameter lr=" in w]
    assert said and "\\u202e0.5\\u2066x\\u2028" in said[0] and "\u202e" not in said[0], said
    assert said[0].strip().endswith("using lr = 0.2.")  # read in order: nothing after the value is reversed
    assert "lr" not in query(page)


def test_new_seed_never_changes_a_hidden_seed(page):
    load(page, "training?hide=seed&seed=5")
    button = page.get_by_role("button", name="New seed")
    assert button.is_disabled() and slider(page, "seed").count() == 0
    link = share_link(page)
    assert link["seed"] == ["5"] and link["hide"] == ["seed"]  # was seed=2094 and no hide
    assert query(page) == {"hide": ["seed"], "seed": ["5"]}


def test_a_preset_never_changes_a_hidden_setting(page):
    load(page, "training?hide=lr_w&lr_w=0.5")
    assert page.get_by_role("button", name="No shared skill (lr_w = 0)").is_disabled()
    page.get_by_role("button", name="R1-Zero's KL (β = 0.001)").click()  # sets beta, resets the visible rest
    settle(page)
    assert "0.001" in selected(page, "beta")
    link = share_link(page)
    assert link["lr_w"] == ["0.5"] and link["hide"] == ["lr_w"] and link["beta"] == ["0.001"]
    assert query(page)["lr_w"] == ["0.5"] and query(page)["hide"] == ["lr_w"]


def test_the_copy_boxes_copy_their_text_without_loading_a_highlighter(page):
    """The share links and the TRL config are copy boxes (ui/copy_text.py): Copy puts the shown text on the
    clipboard, and the page never loads st.code's 1.5 MB syntax highlighter."""
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=page.base)
    load(page, "training?G=16&seed=5")
    page.get_by_test_id("stSidebar").get_by_text("Share / classroom link").click()
    shown = page.locator(".st-key-_share_this pre").text_content()
    assert parse_qs(urlsplit(shown).query) == {"G": ["16"], "seed": ["5"]}
    button = page.get_by_role("button", name="Copy this link")
    button.click()
    page.locator(".st-key-_share_this button").filter(has_text="Copied").wait_for()
    assert page.evaluate("navigator.clipboard.readText()") == shown
    page.get_by_text("Equivalent TRL GRPOConfig").click()
    trl = page.locator(".st-key-trl_config pre")
    assert "GRPOConfig(" in trl.text_content() and "num_generations=16" in trl.text_content()
    loaded = page.evaluate("performance.getEntriesByType('resource').map(r => r.name)")
    assert not [n for n in loaded if "SyntaxHighlighter" in n], "st.code's highlighter was loaded"
