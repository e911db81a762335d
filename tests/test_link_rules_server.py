"""The app's links read by the server (ui/controls.py: the pages whose controls Streamlit draws; the views the browser
computes read theirs with the same rules, tests/test_link_rules.py): a value that rounds to another one (p = 1e-308
shown as 0) is said; names in ?hide= that are none of the page's controls are warned about and dropped."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ui.controls import Choice, Num, parse_url_value

ROOT = Path(__file__).resolve().parents[1]
P = Num("p", "Solve rate p of the prompt", 0.0, 1.0, 0.05, 0.01, fmt="%.2f")  # pages/wasted.py's
BETA = Choice("beta", "KL coefficient β", (0.0, 0.001, 0.04), 0.0)


def page(path: str, **query) -> AppTest:
    at = AppTest.from_file(str(ROOT / path), default_timeout=60)
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


@pytest.mark.parametrize("raw, used", [("1e-308", 0.0), ("5e-324", 0.0), ("0.0500000001", 0.05), ("1-1e-12", None)])
def test_a_value_that_rounds_to_another_one_is_said(raw, used):
    if used is None:  # not a number at all
        assert parse_url_value(P, raw) == (0.05, "is not a number from 0.0 to 1.0")
        return
    assert parse_url_value(P, raw) == (used, "is not on the slider's steps of 0.01")


@pytest.mark.parametrize("raw", ["0.05", "5e-2", "0.30000000000000004", "0.3", "1", "0"])
def test_the_same_value_written_another_way_is_not(raw):
    assert parse_url_value(P, raw)[1] is None


@pytest.mark.parametrize("raw, problem", [("0.04", None), ("4e-2", None), ("0.0400000000001", "is not one of"),
                                          ("1e-320", "is not one of")])
def test_a_choice_is_matched_exactly(raw, problem):
    value, said = parse_url_value(BETA, raw)
    assert (said is None) if problem is None else said.startswith(problem)
    assert value == (0.04 if problem is None else 0.0)


@pytest.mark.integration
def test_tinylm_knows_its_own_controls():
    at = page("pages/tinylm.py", hide="tl_seed,tinylm_on,bogus")
    assert not at.exception
    assert at.query_params.get("hide") == "tl_seed,tinylm_on"
    assert any("`bogus`" in w.value for w in at.warning)
