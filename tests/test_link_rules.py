"""One reading of a link for both hosts: the rules of assets/js/control_rules.js and lesson_rules.js (the views'
pages in the app and in a lesson) and ui/controls.py's parse_url_value and picks_from_link (the app's pages whose
controls the server draws: TinyLM, Your run, Your prompts; the lab's setting), run on the same links and compared:
decimal ASCII numbers only, a value out of range clamped, one off the slider's steps snapped, each with the same
words; the same table of hostile links in both."""

from __future__ import annotations

import random

import pytest

from sim.views.catalog import views
from sim.views.controls import Choice, Flag, Num, Picks, to_json, url_text
from tests.fixtures.node import js
from ui.controls import parse_url_value, picks_from_link
from ui.view import PICKS_MAX

CONTROLS = [c for v in views() if v.lesson == "page" for c in v.controls if not isinstance(c, Picks)]
TRAINING = {c.key: c for c in next(v for v in views() if v.name == "training").controls}


def both(spec, raws: list[str]) -> list[tuple]:
    """(python, javascript) readings of each raw value, with the note each would show."""
    c = to_json(spec)
    got = js([{"op": "call", "module": "control_rules", "fn": "parseUrlValue", "args": [c, raw]} for raw in raws])
    return [(tuple(parse_url_value(spec, raw)), tuple(g)) for raw, g in zip(raws, got, strict=True)]


HOSTILE = [  # (control, raw, the value both use, the note says)
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
def test_a_hostile_link_value_reads_the_same_in_both_hosts(key, raw, used, says):
    ((py, page),) = both(TRAINING[key], [raw])
    assert py == page, (py, page)
    assert py[0] == used and (py[1] is None if says is None else says in py[1]), py


def test_every_control_of_every_view_reads_its_link_the_same_in_both_hosts():
    rng = random.Random(3)
    bad = []
    for spec in CONTROLS:
        for (py, page), raw in zip(both(spec, raws := raw_values(spec, rng)), raws, strict=True):
            if [py[0], py[1]] != [page[0], page[1]]:
                bad.append((spec.key, raw, py, page))
    assert not bad, bad[:8]


def test_the_note_is_worded_the_same():
    spec = TRAINING["G"]
    value, problem = parse_url_value(spec, "1_6")
    (note,) = js([{"op": "call", "module": "control_rules", "fn": "correction", "args": [to_json(spec), "1_6", value,
                                                                                        problem]}])
    assert note == "URL parameter G=1_6 is not a number from 2 to 64; using G = 8."


PICKS = [  # (the link's values, the picks, what the note names)
    (["2,3"], [2, 3], None), (["1", "4"], [1, 4], None), (["4", "1", "4"], [1, 4], None),
    (["0", "9", "x"], [9], "0,x"), (["1_6"], [], "1_6"), (["٣"], [], "٣"), ([f"{PICKS_MAX + 1}", "2"], [2], "1025"),
    (["2.0"], [2], None), (["2.5"], [], "2.5"), ([""], [], None),
]


@pytest.mark.parametrize("raw, picks, named", PICKS)
def test_picked_answers_read_the_same_in_both_hosts(raw, picks, named):
    py = picks_from_link("pick", raw, PICKS_MAX)
    (page,) = js([{"op": "call", "module": "lesson_rules", "fn": "picksFromLink", "args": ["pick", raw, PICKS_MAX]}])
    assert py[0] == page[0] == picks
    assert (py[1] is None) == (page[1] is None) == (named is None)
    if named:
        assert f"pick=`{named}`" in py[1] and f"pick={named} is not a whole number from 1 to {PICKS_MAX}" in page[1]


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
