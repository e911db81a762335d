"""Issue 28, the lesson page's rules (assets/js/lesson_rules.js, run in node): rows 3 (data is parsed as JSON, and an
entry of the wrong shape is refused), 6 (invisible characters shown as sim.validate.neutral shows them), 14
(a repeated key takes its last value with a note; decimal numbers only; the contents page carries only its own
keys) and 4 (the hash a view writes keeps classroom, hide and predict).

The JS port of `neutral` is checked against Python's on every code point both Unicode versions assign."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from sim.validate import neutral
from ui.controls import plain

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")]
RULES = Path(__file__).resolve().parents[1] / "assets" / "js" / "lesson_rules.js"


def js(calls: list[list]) -> list:
    """Run each [function name, *args] of lesson_rules.js in node; their results (Maps and Sets as lists, NaN as
    the string "NaN")."""
    script = f"""
import * as rules from {json.dumps(RULES.as_uri())};
import {{ readFileSync }} from "node:fs";
const calls = JSON.parse(readFileSync(0, "utf8"));
const plainly = (x) => x instanceof Map ? [...x] : x instanceof Set ? [...x] : x;
const out = calls.map(([name, ...args]) => {{
  const r = rules[name](...args);
  return Number.isNaN(r) ? "NaN" : JSON.parse(JSON.stringify(r, (k, v) => plainly(v)));
}});
process.stdout.write(JSON.stringify(out));
"""
    done = subprocess.run(["node", "--input-type=module", "-e", script], input=json.dumps(calls), text=True,
                          capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_neutral_is_sim_validate_neutral_on_every_assigned_code_point():
    # Python 3.11 knows Unicode 14, node a later one: compare where Python's Unicode assigns the code point
    # (surrogates one at a time: in one JS string a high one and a low one would pair into another character)
    points = [c for c in range(sys.maxunicode + 1) if (c < 0x20000 or c % 97 == 0)
              and unicodedata.category(chr(c)) not in ("Cn", "Cs")]
    chunks = ["".join(chr(c) for c in points[i:i + 4096]) for i in range(0, len(points), 4096)]
    chunks += ["\ud800", "\udbff", "\udc00", "\udfff", "a\ud800b"]
    got = js([["neutral", c] for c in chunks])
    for chunk, result in zip(chunks, got, strict=True):
        assert result == neutral(chunk)


@pytest.mark.parametrize("text", ["G", "a" * 39, "a" * 40, "a" * 41, "\u202e61 lessons approved", "x\x00y\u2028z",
                                  "é" * 45, "😀" * 50, "`code`"])
def test_shown_is_the_apps_plain_text(text):
    assert js([["shown", text]])[0] == plain(text).strip("`").strip() or plain(text) == "(empty)"


def test_row_6_bidi_nul_and_line_separator_are_visible_escapes():
    got = js([["shown", "<U+202E>61 lessons approved".replace("<U+202E>", "\u202e")], ["shown", "a\x00b\u2028c"]])
    assert got == ["\\u202e61 lessons approved", "a\\u0000b\\u2028c"]


def test_row_14_a_repeated_key_takes_its_last_value_with_a_note():
    q, h, both = js([["readLink", "?G=4&G=16", ""], ["readLink", "", "#G=2&beta=0.1&G=32"],
                     ["readLink", "?G=4", "#G=16"]])
    assert dict(q["values"])["G"] == "16" and q["notes"] == ["G is given 2 times (4, 16); using the last one"]
    assert dict(h["values"])["G"] == "32" and h["fromHash"] == ["G", "beta"] and len(h["notes"]) == 1
    assert dict(both["values"])["G"] == "16" and both["notes"] == []  # the hash wins over the query, silently


@pytest.mark.parametrize("raw, value", [("16", 16), (" 16 ", 16), ("1e1", 10), (".5", 0.5), ("5.", 5), ("-2", -2),
                                        ("0x10", "NaN"), ("0b10", "NaN"), ("0o20", "NaN"), ("1_0", "NaN"),
                                        ("Infinity", "NaN"), ("", "NaN"), ("16px", "NaN"), ("١٦", "NaN")])
def test_row_14_decimal_numbers_only(raw, value):
    assert js([["decimal", raw]])[0] == value


def test_row_14_the_contents_page_carries_only_its_own_keys():
    got = js([["carryQuery", "?classroom=1&evil=%3Cimg%20src%3Dx%3E&hide=G,%3Cimg%3E,beta&predict=yes&G=4"],
              ["carryQuery", "?utm_source=junk&x=1"], ["carryQuery", "?classroom=1&classroom=0"]])
    assert got == ["?classroom=1&hide=G,beta&predict=1", "", ""]


def test_row_4_the_written_link_keeps_classroom_hide_and_predict_as_the_page_reads_them():
    """A flag the link carried is written back as the page reads it, 0 and empty included (a lesson's
    ?classroom=1#classroom=0 must stay 0 on a reload); one it did not carry is left out."""
    flags = {"classroom": True, "hide": ["beta"], "predict": True}
    got = js([["linkText", {"G": 4, "beta": 0, "scale": "group"}, flags],
              ["linkText", {"G": 4}, {"classroom": False, "hide": [], "predict": False}], ["linkText", {"G": 4}, {}]])
    assert got == ["G=4&beta=0&scale=group&classroom=1&hide=beta&predict=1", "G=4&classroom=0&hide=&predict=0", "G=4"]


def test_row_14_picked_answers_take_every_value_and_drop_what_is_not_one():
    """One group's picks hold several values (pick=1&pick=4, as Streamlit writes them): no note for the repeat; a
    value that is no whole number in range is dropped and said, as plain text."""
    link, picks, bad = js([["readLink", "?pick=1&pick=4", "", ["pick"]], ["picksFromLink", "pick", ["4", "1,4"], 64],
                           ["picksFromLink", "pick", ["2", "x<b>", "0", "1.5", "99"], 8]])
    assert dict(link["lists"])["pick"] == ["1", "4"] and link["notes"] == []
    assert picks == [[1, 4], None]
    assert bad[0] == [2] and bad[1] == "URL parameter pick=x<b>,0,1.5,99 is not a whole number from 1 to 8; left out"
    assert js([["linkText", {"G": 8, "pick": [1, 4]}, {}]])[0] == "G=8&pick=1&pick=4"


def test_row_3_a_recorded_document_parses_and_anything_else_is_refused(exercise_lesson):
    """A recorded view's page (TinyLM) holds its document as inline JSON: parsed, checked for the blocks a page
    draws, never run; anything else is refused with a reason."""
    page = (exercise_lesson / "tinylm.html").read_text(encoding="utf-8")
    text = re.search(r'<script type="application/json" id="ls-data">(.*?)</script>', page, flags=re.S).group(1)
    (doc, problem), = js([["parseDoc", text]])
    assert problem is None and isinstance(doc, list) and len(doc) > 5
    bad = ["42", 'grpoLesson.put("x", 42);', "parent.document.cookie", "null", "{}", '[{"kind": "text", "text": 1}]',
           '[{"kind": "table", "columns": ["a"], "rows": "x"}]', '[{"kind": "ask", "question": {"kind": "eval"}}]',
           '[{"kind": "charts", "payload": {"charts": 1}}]', '[{"kind": "live", "request": {}}]',
           '[{"kind": "columns", "columns": [[{"kind": "script"}]]}]']
    for doc, problem in js([["parseDoc", t] for t in bad]):
        assert doc is None and problem, (doc, problem)
