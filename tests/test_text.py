"""Text from outside shown neutrally: `plain()` (the app's URL warnings) and `neutral()` (lab messages, CLI errors)
write bidi overrides and isolates, U+0085, U+2028/2029 and control characters as visible escapes. (The lesson's and
the view pages' twin, lesson_rules.js `shown`, is tested on the same characters in tests/test_link_rules.py.)"""

from __future__ import annotations

import pytest

from sim.validate import neutral
from ui.controls import plain

INVISIBLE = ["\u202e", "\u202a", "\u202b", "\u202c", "\u202d", "\u2066", "\u2067", "\u2068", "\u2069", "\u200e",
             "\u200f", "\u0085", "\u2028", "\u2029", "\x00", "\x1b", "\t", "\r", "\n", "\x7f", "\u200b", "\ufeff"]


@pytest.mark.parametrize("ch", INVISIBLE)
def test_plain_escapes_every_invisible_character(ch):
    shown = plain(f"0.5{ch}tail")
    assert ch not in shown and f"\\u{ord(ch):04x}" in shown and shown.startswith("`0.5\\u")
    assert all(c.isprintable() for c in shown)


def test_issue_input_and_the_cut():
    assert plain("\u202e0.5") == "`\\u202e0.5`"  # /wasted?p=%E2%80%AE0.5
    assert plain("\u202e" * 100).count("\\u202e") == 39 and plain("\u202e" * 100).endswith("…`")
    assert plain("`x`") == "`` `x` ``" and plain("") == "(empty)"
    assert neutral("line 1\nline\u2028 2\u202e", keep_newlines=True) == "line 1\nline\\u2028 2\\u202e"
    assert neutral("\U000e0041") == "\\U000e0041"  # a tag character, outside the BMP


@pytest.mark.integration
def test_a_student_message_with_bidi_characters_is_shown_escaped(monkeypatch, tmp_path):
    from tests.test_lab_page import FIXTURES
    from tests.test_lab_page import run as run_lab_page

    source = (FIXTURES / "raises" / "tasks.py").read_text()
    evil = source.replace("groups larger than 2", "\\u202egroups\\u2028larger\\u2066 than 2")
    assert evil != source
    (tmp_path / "tasks.py").write_text(evil)
    at = run_lab_page(monkeypatch, tmp_path)
    shown = " ".join(t.value for t in at.text)
    assert "\\u202egroups" in shown and "\\u2066 than 2" in shown, shown  # U+2028: a space or an escape
    assert not any(ch in shown for ch in "\u202e\u2028\u2066")
