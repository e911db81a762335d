"""Text from outside shown neutrally: a link's text in a page's note (assets/js/lesson_rules.js `shown`, what every
page's script says of a link it corrects) and sim.validate.neutral (lab messages, CLI errors, a visitor's file) write
bidi overrides and isolates, U+0085, U+2028/2029 and control characters as visible escapes. (`shown` against
`neutral` on every code point: tests/test_link_rules.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.validate import neutral
from tests.fixtures.node import js

ROOT = Path(__file__).resolve().parents[1]
INVISIBLE = ["\u202e", "\u202a", "\u202b", "\u202c", "\u202d", "\u2066", "\u2067", "\u2068", "\u2069", "\u200e",
             "\u200f", "\u0085", "\u2028", "\u2029", "\x00", "\x1b", "\t", "\r", "\n", "\x7f", "\u200b", "\ufeff"]


def shown(texts: list[str]) -> list[str]:
    """lesson_rules.js shown() of each text, in one node run."""
    return js([{"op": "call", "module": "lesson_rules", "fn": "shown", "args": [t]} for t in texts])


def test_a_links_text_escapes_every_invisible_character():
    for ch, said in zip(INVISIBLE, shown([f"0.5{ch}tail" for ch in INVISIBLE]), strict=True):
        assert ch not in said and f"\\u{ord(ch):04x}" in said and said.startswith("0.5\\u"), repr(ch)
        assert all(c.isprintable() for c in said)


def test_issue_input_and_the_cut():
    one, many = shown(["\u202e0.5", "\u202e" * 100])  # /wasted?p=%E2%80%AE0.5
    assert one == "\\u202e0.5"
    assert many.count("\\u202e") == 39 and many.endswith("…")
    assert neutral("line 1\nline\u2028 2\u202e", keep_newlines=True) == "line 1\nline\\u2028 2\\u202e"
    assert neutral("\U000e0041") == "\\U000e0041"  # a tag character, outside the BMP


@pytest.mark.integration
def test_a_student_message_with_bidi_characters_is_shown_escaped(monkeypatch, tmp_path):
    """The Lab's checks on a student's file (the document the server computes: ui/labpage.py): a message that
    carries U+202E, U+2028 and U+2066 reaches the page escaped, as plain text."""
    from streamlit.testing.v1 import AppTest

    from tests.fixtures.apptest import documents, report, walk

    source = (ROOT / "tests" / "fixtures" / "lab" / "raises" / "tasks.py").read_text()
    evil = source.replace("groups larger than 2", "\\u202egroups\\u2028larger\\u2066 than 2")
    assert evil != source
    (tmp_path / "tasks.py").write_text(evil)
    monkeypatch.setenv("GRPO_LAB_DIR", str(tmp_path))
    monkeypatch.delenv("GRPO_LAB_TIMEOUT", raising=False)
    at = report(AppTest.from_file(str(ROOT / "pages" / "lab.py"), default_timeout=60).run(), "lab")
    assert not at.exception, at.exception
    said = " ".join(b["text"] for blocks in documents(at) for b in walk(blocks) if b["kind"] == "note")
    assert "\\u202egroups" in said and "\\u2066 than 2" in said, said  # U+2028: a space or an escape
    assert not any(ch in said for ch in "\u202e\u2028\u2066")
