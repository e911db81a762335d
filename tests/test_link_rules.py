"""One reading of a link for both hosts: the rules of assets/js/control_rules.js and lesson_rules.js (every view's
page, in the app and in a lesson; the server reads no link), run under node on a table of links and the reading
each must give: decimal ASCII numbers only, a value out of range clamped, one off the slider's steps snapped, each
with one note; and on every control of every view, any link gives a value the control can hold (the server's own
check of a reported setting, sim/views/controls.py check_values, is the oracle). How the page applies them, in both
hosts, is tests/test_link_rules_browser.py's.

And the rest of lesson_rules.js: a repeated key takes its last value with a note; the link a page writes keeps
classroom, hide and predict as it read them; the contents page carries only its own keys; text from a link is shown
as sim.validate.neutral shows it (compared on every code point both Unicode versions assign); a recorded view's
document is parsed as JSON and an entry of the wrong shape refused."""

from __future__ import annotations

import math
import random
import re
import sys
import unicodedata

import pytest

from sim.validate import neutral
from sim.views.catalog import views
from sim.views.controls import PICKS_MAX, Choice, Flag, Num, Picks, check_values, to_json
from tests.fixtures.node import js

CONTROLS = [c for v in views() for c in v.controls if not isinstance(c, Picks)]  # the app's pages' too
TRAINING = {c.key: c for c in next(v for v in views() if v.name == "training").controls}
DECIMAL = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*\Z", re.ASCII)  # docs/security.md's numbers


def read(spec, raws: list[str]) -> list[tuple]:
    """(value, note or None): the page's reading of each raw link value of `spec`, in one node run."""
    c = to_json(spec)
    got = js([{"op": "call", "module": "control_rules", "fn": "parseUrlValue", "args": [c, raw]} for raw in raws])
    return [tuple(g) for g in got]


HOSTILE = [  # (control, raw, the value used, the note says)
    ("G", "1_6", 8, "is not a number from 2 to 64"),  # Python's float() reads 16
    ("seed", "٦٤", 0, "is not a number"),  # Arabic-Indic digits
    ("lr", "０.5", 0.2, "is not a number"),  # full-width digits
    ("G", "nan", 8, "is not a number"), ("G", "inf", 8, "is not a number"), ("G", "1e400", 8, "is not a number"),
    ("G", "0x10", 8, "is not a number"), ("G", " 16 ", 16, None), ("G", "16.", 16, None), ("G", "+16", 16, None),
    ("G", "16.5", 16, "is not on the slider's steps of 1"), ("G", "999", 64, "is outside the allowed range 2 to 64"),
    ("seed", "64.000001", 64, "is not on the slider's steps of 1"),  # a whole number's grid is exact
    ("lr", "0.23", 0.25, "is not on the slider's steps of 0.05"), ("lr", "3e-1", 0.3, None),
    ("beta", "0.04", 0.04, None), ("beta", "4e-2", 0.04, None), ("beta", "0.0400000000001", 0.0, "is not one of"),
    ("dyn", "TRUE", True, None), ("dyn", "1", False, "is not true or false"),
]


@pytest.mark.parametrize("key, raw, used, says", HOSTILE)
def test_a_hostile_link_value_reads_as_the_table_says(key, raw, used, says):
    ((value, note),) = read(TRAINING[key], [raw])
    assert value == used and isinstance(value, bool) == isinstance(used, bool), (value, note)  # JSON: 0 is 0.0
    assert note is None if says is None else says in note, note


def test_every_control_of_every_view_reads_any_link_to_a_value_it_can_hold():
    """Whatever a link says, the page shows a value its control can hold (the very check the server makes of a
    setting a page reports), and it says nothing only where the link wrote that value: a decimal number equal to it,
    one of the options as a link writes it (or the same number another way), true or false."""
    rng = random.Random(3)
    bad, quiet = [], 0
    for spec in CONTROLS:
        raws = raw_values(spec, rng)
        for raw, (value, note) in zip(raws, read(spec, raws), strict=True):
            try:
                check_values([spec], {spec.key: value})
            except ValueError as e:
                bad.append((spec.key, raw, value, str(e)))
            if note is None:
                quiet += 1
                if not said_exactly(spec, raw, value):
                    bad.append((spec.key, raw, value, "taken without a note"))
    assert not bad, bad[:8]
    assert quiet > len(CONTROLS)  # each control took some values as they are


def url_text(value: object) -> str:
    """The oracle's own account of how a link writes a value: true/false, 8 for 8.0, the shortest digits."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)  # (from 1e-4 down Python writes 1e-05, JavaScript 0.00001: no control has such a value)


def said_exactly(spec, raw: str, value) -> bool:
    """Does the raw link text say `value` itself (no correction to note)?"""
    if isinstance(spec, Flag):
        return raw.strip().lower() == url_text(value)
    x = float(raw) if DECIMAL.match(raw) else math.nan
    if isinstance(spec, Choice):
        return raw == url_text(value) or (not isinstance(value, bool | str) and math.isclose(x, value, rel_tol=1e-12))
    return math.isclose(x, value, rel_tol=1e-12, abs_tol=0.0)


P = Num("p", "Solve rate p of the prompt", 0.0, 1.0, 0.05, 0.01, fmt="%.2f")  # Wasted groups' p
BETA = Choice("beta", "KL coefficient β", (0.0, 0.001, 0.04), 0.0)
ROUNDING = [  # (control, raw, the value used, the note says): a value that rounds to another one is said
    (P, "1e-308", 0.0, "is not on the slider's steps of 0.01"), (P, "5e-324", 0.0, "is not on the slider's steps"),
    (P, "0.0500000001", 0.05, "is not on the slider's steps"), (P, "1-1e-12", 0.05, "is not a number from 0 to 1"),
    (P, "0.05", 0.05, None), (P, "5e-2", 0.05, None), (P, "0.30000000000000004", 0.3, None), (P, "1", 1.0, None),
    (P, "0", 0.0, None), (BETA, "4e-2", 0.04, None), (BETA, "0.0400000000001", 0.0, "is not one of"),
    (BETA, "1e-320", 0.0, "is not one of"),
]


@pytest.mark.parametrize("spec, raw, used, says", ROUNDING)
def test_a_value_that_rounds_to_another_one_is_said_and_one_written_another_way_is_not(spec, raw, used, says):
    ((value, note),) = read(spec, [raw])
    assert value == used and (note is None if says is None else note.startswith(says)), (value, note)


def test_the_note_is_worded_as_the_app_says_it():
    spec = TRAINING["G"]
    ((value, problem),) = read(spec, ["1_6"])
    (note,) = js([{"op": "call", "module": "control_rules", "fn": "correction", "args": [to_json(spec), "1_6", value,
                                                                                        problem]}])
    assert note == "URL parameter G=1_6 is not a number from 2 to 64; using G = 8."


PICKS = [  # (the link's values, the picks, what the note names)
    (["2,3"], [2, 3], None), (["1", "4"], [1, 4], None), (["4", "1", "4"], [1, 4], None),
    (["0", "9", "x"], [9], "0,x"), (["1_6"], [], "1_6"), (["٣"], [], "٣"), ([f"{PICKS_MAX + 1}", "2"], [2], "1025"),
    (["2.0"], [2], None), (["2.5"], [], "2.5"), ([""], [], None),
]


@pytest.mark.parametrize("raw, picks, named", PICKS)
def test_picked_answers_read_as_the_table_says(raw, picks, named):
    ((got, note),) = js([{"op": "call", "module": "lesson_rules", "fn": "picksFromLink", "args": ["pick", raw,
                                                                                                 PICKS_MAX]}])
    assert got == picks
    assert (note is None) == (named is None)
    if named:
        assert note == f"URL parameter pick={named} is not a whole number from 1 to {PICKS_MAX}; left out"


def raw_values(spec, rng: random.Random) -> list[str]:
    if isinstance(spec, Flag):
        return ["true", "false", "TRUE", " false ", "1", "yes", "", "nope"]
    if isinstance(spec, Choice):
        out = [url_text(o) for o in spec.options] + [str(o) for o in spec.options] + ["", "x", "GROUP", "1e9"]
        out += [f"{o:.3e}" for o in spec.options if isinstance(o, int | float) and not isinstance(o, bool)]
        out += ["0.0400000000001", "0.04000000000000001", "1e-308", "5e-324", "0.28000000000000003", "٠.٠٤"]
        return out
    assert isinstance(spec, Num)
    span = spec.hi - spec.lo
    xs = [spec.lo, spec.hi, spec.default, spec.lo - 1, spec.hi + 1, spec.lo + spec.step / 2, spec.lo + spec.step * 1.5]
    xs += [spec.lo + rng.random() * span for _ in range(12)]
    xs += [spec.lo + rng.randint(0, int(span / spec.step)) * spec.step for _ in range(12)]
    out = [repr(x) for x in xs] + [f"{x:.2f}" for x in xs[:6]] + ["abc", "", "1e400", "-1e400", "nan", " 8 ", "8."]
    out += [repr(spec.default + 1e-13), repr(0.1 + 0.2), "1e-308", repr(spec.lo + spec.step * 3), "1_0", "８"]
    return out


def test_a_slider_shows_its_value_in_its_format():
    specs = [s for s in CONTROLS if isinstance(s, Num)]
    got = js([{"op": "call", "module": "control_rules", "fn": "valueText", "args": [to_json(s), s.default]}
              for s in specs])
    assert got == [(s.fmt % s.default) if s.fmt else url_text(s.default) for s in specs]


# ---- the rest of lesson_rules.js ---------------------------------------------------------------------------------

NAN = {"float": "nan"}  # as the harness returns NaN


def rules(calls: list[list]) -> list:
    """Each [function name, *args] of assets/js/lesson_rules.js, in one node run."""
    return js([{"op": "call", "module": "lesson_rules", "fn": name, "args": args} for name, *args in calls])


@pytest.mark.integration
def test_neutral_is_sim_validate_neutral_on_every_assigned_code_point():
    # Python 3.11 knows Unicode 14, node a later one: compare where Python's Unicode assigns the code point
    # (surrogates one at a time: in one JS string a high one and a low one would pair into another character)
    points = [c for c in range(sys.maxunicode + 1) if (c < 0x20000 or c % 97 == 0)
              and unicodedata.category(chr(c)) not in ("Cn", "Cs")]
    chunks = ["".join(chr(c) for c in points[i:i + 4096]) for i in range(0, len(points), 4096)]
    chunks += ["\ud800", "\udbff", "\udc00", "\udfff", "a\ud800b"]
    got = rules([["neutral", c] for c in chunks])
    for chunk, result in zip(chunks, got, strict=True):
        assert result == neutral(chunk)


@pytest.mark.integration
@pytest.mark.parametrize("text", ["G", "a" * 39, "a" * 40, "a" * 41, "\u202e61 lessons approved", "x\x00y\u2028z",
                                  "é" * 45, "😀" * 50, "`code`"])
def test_a_links_text_is_shown_cut_and_neutral(text):
    """Cut to 40 characters (code points: an emoji is one) with an ellipsis, then its invisible characters
    escaped as sim.validate.neutral escapes them."""
    cut = text if len(text) <= 40 else text[:39] + "…"
    assert rules([["shown", text]])[0] == neutral(cut)


@pytest.mark.integration
def test_bidi_nul_and_line_separator_are_visible_escapes():
    got = rules([["shown", "<U+202E>61 lessons approved".replace("<U+202E>", "\u202e")], ["shown", "a\x00b\u2028c"]])
    assert got == ["\\u202e61 lessons approved", "a\\u0000b\\u2028c"]


@pytest.mark.integration
def test_a_repeated_key_takes_its_last_value_with_a_note():
    q, h, both = rules([["readLink", "?G=4&G=16", ""], ["readLink", "", "#G=2&beta=0.1&G=32"],
                     ["readLink", "?G=4", "#G=16"]])
    assert dict(q["values"])["G"] == "16"
    assert q["notes"] == ["URL parameter G is given 2 times (4, 16); using the last one"]
    assert dict(h["values"])["G"] == "32" and h["fromHash"] == ["G", "beta"] and len(h["notes"]) == 1
    assert dict(both["values"])["G"] == "16" and both["notes"] == []  # the hash wins over the query, silently


@pytest.mark.integration
@pytest.mark.parametrize("raw, value", [("16", 16), (" 16 ", 16), ("1e1", 10), (".5", 0.5), ("5.", 5), ("-2", -2),
                                        ("0x10", NAN), ("0b10", NAN), ("0o20", NAN), ("1_0", NAN),
                                        ("Infinity", NAN), ("", NAN), ("16px", NAN), ("١٦", NAN)])
def test_decimal_numbers_only(raw, value):
    assert rules([["decimal", raw]])[0] == value


@pytest.mark.integration
def test_the_contents_page_carries_only_its_own_keys():
    got = rules([["carryQuery", "?classroom=1&evil=%3Cimg%20src%3Dx%3E&hide=G,%3Cimg%3E,beta&predict=yes&G=4"],
              ["carryQuery", "?utm_source=junk&x=1"], ["carryQuery", "?classroom=1&classroom=0"]])
    assert got == ["?classroom=1&hide=G,beta&predict=1", "", ""]


@pytest.mark.integration
def test_the_written_link_keeps_classroom_hide_and_predict_as_the_page_reads_them():
    """A flag the link carried is written back as the page reads it, 0 and empty included (a lesson's
    ?classroom=1#classroom=0 must stay 0 on a reload); one it did not carry is left out."""
    flags = {"classroom": True, "hide": ["beta"], "predict": True}
    got = rules([["linkText", {"G": 4, "beta": 0, "scale": "group"}, flags],
              ["linkText", {"G": 4}, {"classroom": False, "hide": [], "predict": False}], ["linkText", {"G": 4}, {}]])
    assert got == ["G=4&beta=0&scale=group&classroom=1&hide=beta&predict=1", "G=4&classroom=0&hide=&predict=0", "G=4"]


@pytest.mark.integration
def test_picked_answers_take_every_value_and_drop_what_is_not_one():
    """One group's picks hold several values (pick=1&pick=4, as Streamlit writes them): no note for the repeat; a
    value that is no whole number in range is dropped and said, as plain text."""
    link, picks, bad = rules([["readLink", "?pick=1&pick=4", "", ["pick"]], ["picksFromLink", "pick", ["4", "1,4"], 64],
                           ["picksFromLink", "pick", ["2", "x<b>", "0", "1.5", "99"], 8]])
    assert dict(link["lists"])["pick"] == ["1", "4"] and link["notes"] == []
    assert picks == [[1, 4], None]
    assert bad[0] == [2] and bad[1] == "URL parameter pick=x<b>,0,1.5,99 is not a whole number from 1 to 8; left out"
    assert rules([["linkText", {"G": 8, "pick": [1, 4]}, {}]])[0] == "G=8&pick=1&pick=4"


@pytest.mark.integration
def test_a_recorded_document_parses_and_anything_else_is_refused(exercise_lesson):
    """A recorded view's page (the Lab) holds its document as inline JSON: parsed, checked for the blocks a page
    draws, never run; anything else is refused with a reason."""
    page = (exercise_lesson / "lab.html").read_text(encoding="utf-8")
    text = re.search(r'<script type="application/json" id="ls-data">(.*?)</script>', page, flags=re.S).group(1)
    (doc, problem), = rules([["parseDoc", text]])
    assert problem is None and isinstance(doc, list) and len(doc) > 5
    bad = ["42", 'grpoLesson.put("x", 42);', "parent.document.cookie", "null", "{}", '[{"kind": "text", "text": 1}]',
           '[{"kind": "table", "columns": ["a"], "rows": "x"}]', '[{"kind": "ask", "question": {"kind": "eval"}}]',
           '[{"kind": "charts", "payload": {"charts": 1}}]', '[{"kind": "live", "request": {}}]',
           '[{"kind": "columns", "columns": [[{"kind": "script"}]]}]']
    for doc, problem in rules([["parseDoc", t] for t in bad]):
        assert doc is None and problem, (doc, problem)
