"""Predict, then reveal (assets/js/predict.js, the questions of both hosts), its pure parts under node: the words
once a guess is revealed, a table of question and guess -> sentence; the accepted range; numbers that stay short.
The box itself (one click on Reveal after typing, Guess again) is walked in Chromium by tests/test_journeys.py."""

from __future__ import annotations

import pytest

from tests.fixtures.node import js

WASTED = {"question": "…", "answer": 33.7, "kind": "number", "unit": "%", "tolerance": 5, "fmt": ".1f", "lo": None,
          "hi": None, "explain": None}
K3 = {"question": "…", "answer": 0.0157, "kind": "number", "unit": None, "tolerance": 0.002, "fmt": ".4g", "lo": 0,
      "hi": None, "explain": "k3 = u − log u − 1 with u = π_ref / π."}
RUN = {**K3, "answer": 116, "tolerance": 23, "fmt": ".0f", "hi": 200, "whose": "this run's answer", "explain": None}
CLIP = {"question": "…", "answer": "no gradient: clipped", "kind": "choice",
        "options": ["still pushed", "no gradient: clipped"]}

VERDICTS = [  # (question, guess, close?, the sentence)
    (WASTED, 50.0, False, "Your guess 50.0%, the chapter's answer 33.7%: off by 16.3 points, not within ±5.0 points."),
    (WASTED, 30.0, True, "Your guess 30.0%, the chapter's answer 33.7%: off by 3.7 points, within ±5.0 points: close."),
    (WASTED, -0.0, False, "Your guess 0.0%, the chapter's answer 33.7%: off by 33.7 points, not within ±5.0 points."),
    (K3, 0.02, False, "Your guess 0.02, the chapter's answer 0.0157: off by 0.0043 (27% of the answer), not within "
     "±0.002."),
    (K3, 0.016, True, "Your guess 0.016, the chapter's answer 0.0157: off by 0.0003 (2% of the answer), within ±0.002: "
     "close."),
    (K3, 1e7, False, "Your guess 1e+7, the chapter's answer 0.0157: off by 1e+7 (6.37e+8 times the answer)"),
    (RUN, 100, True, "Your guess 100, this run's answer 116: off by 16 (14% of the answer), within ±23: close."),
    (WASTED, 0.34, False, "Your guess 0.34%, the chapter's answer 33.7%: off by 33.4 points, not within ±5.0 points."),
    (RUN, 60, False, "Your guess 60, this run's answer 116: off by 56 (48% of the answer), not within ±23."),
]


@pytest.mark.parametrize("q, guess, close, says", VERDICTS)
def test_a_revealed_guess_says_how_close_it_was(q, guess, close, says):
    (got,) = js([{"op": "call", "module": "predict", "fn": "verdict", "args": [q, guess]}])
    assert got[0] is close and got[1].startswith(says), got[1]


def test_a_percentage_typed_as_a_fraction_is_pointed_out():
    hints = js([{"op": "call", "module": "predict", "fn": "fractionHint", "args": [q, g]}
                for q, g in ((WASTED, 0.34), (WASTED, 34), (WASTED, 0), (K3, 0.34))])
    assert hints == ["This box takes percent: 0.34 reads as 0.34%. For 34% type 34.", None, None, None]


def test_a_choice_says_right_or_what_was_picked():
    right, wrong = js([{"op": "call", "module": "predict", "fn": "choiceVerdict", "args": [CLIP, pick]}
                       for pick in ("no gradient: clipped", "still pushed")])
    assert right == [True, "Right: no gradient: clipped."]
    assert wrong == [False, "Not quite: you picked “still pushed”; the chapter's answer is no gradient: clipped."]


def test_outside_question_mode_the_answer_says_whose_it_is():
    lines = js([{"op": "call", "module": "predict", "fn": "answerLine", "args": [q]} for q in (WASTED, K3, RUN)])
    assert lines == ["The chapter's answer: 33.7%.",
                     "The chapter's answer: 0.0157. k3 = u − log u − 1 with u = π_ref / π.", "This run's answer: 116."]


@pytest.mark.parametrize("guess, refused", [(1e308, True), (-1e308, True), (100.5, True), (-1, True), (100, False),
                                            (0, False)])
def test_a_guess_outside_the_answers_range_is_refused_in_a_short_line(guess, refused):
    (why,) = js([{"op": "call", "module": "predict", "fn": "outside", "args": [WASTED, guess]}])
    assert (why is not None) is refused
    if refused:
        assert "from 0.0% to 100.0%" in why and len(why) < 120 and "e+308" in why or guess in (100.5, -1)


def test_numbers_stay_short_and_never_minus_zero():
    got = js([{"op": "call", "module": "predict", "fn": "fmtNumber", "args": a} for a in (
        [1e308, ".1f", "%"], [-0.0, ".1f", "%"], [-0.0001, ".1f", "%"], [-3.25, ".1f", None],
        [12, ".0f", " s"])])
    assert got == ["1e+308%", "0.0%", "0.0%", "-3.3", "12 s"]  # -3.25 is a tie: away from zero, as toFixed
    ranges = js([{"op": "call", "module": "predict", "fn": "answerRange", "args": a} for a in (
        [34.4, "%", None, None], [2, None, 0, 5], [0.02, None, None, None])])
    assert ranges == [[0, 100], [0, 5], [-1000, 1000]]
