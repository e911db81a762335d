"""Issue 19 rows 9 and 15 without a browser: text from outside shown neutrally, the predict widget's numbers.

Row 9: `plain()` (URL warnings) and `neutral()` (lab messages, CLI errors) write bidi overrides and isolates,
U+0085, U+2028/2029 and control characters as visible escapes. Row 15: a guess of 1e308 is refused (outside
the answer's range) and never printed in 309 digits; "-0" is shown as 0; relative errors stay finite words.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sim.validate import neutral
from ui.controls import plain
from ui.predict import _fmt, _rel_text, answer_range

APP = str(Path(__file__).resolve().parent / "apps" / "predict_demo.py")
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
def test_predict_numbers_are_compact():
    assert _fmt(1e308, "{:.1f}", "%") == "1e+308%" and len(_fmt(-1e308, "{:.0f}", None)) < 10
    assert _fmt(-0.0, "{:.1f}", "%") == "0.0%" and _fmt(-0.0001, "{:.1f}", "%") == "0.0%"
    assert _fmt(-3.25, "{:.1f}", None) == "-3.2" and _fmt(12, "{:.0f}", " s") == "12 s"
    assert _rel_text(0.394) == " (39% of the answer)" and _rel_text(None) == ""
    assert _rel_text(2.5e7) == " (2.5e+07 times the answer)" and "inf" not in _rel_text(1e300)
    assert answer_range(34.4, "%", None, None) == (0.0, 100.0) and answer_range(2, None, 0, 5) == (0.0, 5.0)
    assert answer_range(0.02, None, None, None) == (-1000.0, 1000.0)


def _guess(value):
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params["predict"] = "1"
    at.run()
    at.number_input(key="predict-wasted-input").set_value(value).run()
    return at


@pytest.mark.parametrize("value", [1e308, -1e308, 100.5, -1])
def test_guess_outside_the_answers_range_is_refused(value):
    at = _guess(value)
    assert not at.exception
    warned = [w.value for w in at.warning if "outside that range" in w.value]
    assert warned and "from 0% to 100%" in warned[0] and len(warned[0]) < 120, warned
    assert at.button(key="predict-wasted-reveal").disabled  # nothing to reveal against


def test_minus_zero_guess_reads_as_zero():
    at = _guess(-0.0)
    at.button(key="predict-wasted-reveal").click().run()
    body = " ".join(w.value for w in at.warning)
    assert "Your guess 0%" in body and "-0" not in body and "(100% of the answer)" in body


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
