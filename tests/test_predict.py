"""ui/predict.py under AppTest (tests/apps/predict_demo.py): answers shown by default; with ?predict=1 the
answer and the chart wait for a guess and a Reveal; the guess stays out of the URL."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ui.predict import closeness

pytestmark = pytest.mark.integration

APP = str(Path(__file__).resolve().parent / "apps" / "predict_demo.py")


def run(**query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30)
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


def texts(at: AppTest) -> str:
    parts = [e.value for e in at.text] + [e.value for e in at.markdown] + [e.value for e in at.caption]
    parts += [e.value for e in at.success] + [e.value for e in at.warning]
    return "\n".join(str(p) for p in parts)


def reveal_button(at: AppTest, key: str):
    return at.button(key=f"predict-{key}-reveal")


def test_default_mode_shows_answers_and_chart():
    at = run()
    assert not at.exception
    body = texts(at)
    assert "CHART: wasted groups" in body
    assert "66%" in body and "Chapter's answer" in body
    assert "No: rho = 1.25 > 1.2, clipped" in body
    assert len(at.number_input) == 0 and len(at.radio) == 0


@pytest.mark.parametrize("flag", ["1", "true"])
def test_predict_mode_hides_answer_until_guess_and_reveal(flag):
    at = run(predict=flag)
    assert not at.exception
    body = texts(at)
    assert "66%" not in body and "0.66" not in body and "CHART" not in body and "chart hidden" in body
    assert reveal_button(at, "wasted").disabled  # no guess yet
    at.number_input(key="predict-wasted-input").set_value(40).run()
    assert "CHART" not in texts(at)  # a guess alone does not reveal
    assert not reveal_button(at, "wasted").disabled
    reveal_button(at, "wasted").click().run()
    body = texts(at)
    assert "CHART: wasted groups" in body
    assert "Your guess 40%" in body and "**66%**" in body and "off by 26%" in body and "(39% of the answer)" in body
    assert "not within ±5%" in body
    assert [w for w in at.warning if "Your guess" in w.value]  # a far guess is a warning, not a success
    assert "predict-wasted-input" not in dict(at.query_params) and "40" not in str(dict(at.query_params))


def test_close_guess_is_a_success_and_guess_again_hides_it():
    at = run(predict="1")
    at.number_input(key="predict-wasted-input").set_value(64).run()
    reveal_button(at, "wasted").click().run()
    assert [s for s in at.success if "close ±5%" in s.value]
    at.button(key="predict-wasted-again").click().run()
    assert "CHART" not in texts(at) and reveal_button(at, "wasted").disabled


def test_choice_right_and_wrong():
    at = run(predict="1")
    assert "1.25 > 1.2, clipped**" not in texts(at)
    at.radio(key="predict-clip-input").set_value("Yes: A > 0 pushes it up").run()
    reveal_button(at, "clip").click().run()
    assert [w for w in at.warning if "Not quite" in w.value and "No: rho = 1.25 > 1.2, clipped" in w.value]
    at.button(key="predict-clip-again").click().run()
    at.radio(key="predict-clip-input").set_value("No: rho = 1.25 > 1.2, clipped").run()
    reveal_button(at, "clip").click().run()
    assert [s for s in at.success if s.value.startswith("Right")]


def test_closeness():
    c = closeness(40, 66, 5)
    assert c["abs_err"] == 26 and c["rel_err"] == pytest.approx(26 / 66) and not c["close"]
    assert closeness(0.01, 0.0, 0.01) == {"abs_err": 0.01, "rel_err": None, "close": True}
