"""The loss views under AppTest: One group's weights and length bias for every loss type, and KL and
clipping's gradient weight against the ratio per objective. The charts and captions hold sim's numbers
(sim.exercises.length_effect, sim.kl_clip.chapter_token / weight_curves), checked here against them."""

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from sim.exercises import WORKED_EXAMPLE_REWARDS, WORKED_EXAMPLE_TOKENS, length_effect
from sim.kl_clip import ClipView, chapter_token, objectives
from tests.fixtures.apptest import charts, unescaped

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[1]


def page(path: str, **query) -> AppTest:
    at = AppTest.from_file(str(ROOT / path), default_timeout=60)
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


def panels(at: AppTest) -> list[dict]:
    """KL and clipping's six gradient-weight panels (one Charts block, the one chart spec)."""
    return charts(at)["weight_charts"]


def captions(at: AppTest) -> str:
    return " ".join(unescaped(c.value) for c in at.caption)


def test_kl_clip_draws_a_gradient_weight_panel_per_objective_with_the_chapters_token():
    at = page("pages/kl_clip.py")
    assert not at.exception
    token = chapter_token(ClipView())
    names = list(objectives(ClipView()))
    for fig, name in zip(panels(at), names, strict=True):
        lines = {t["name"]: t for t in fig["traces"]}
        x = np.asarray(lines["A = +1"]["x"])
        at_one = np.argmin(abs(x - 1.0))
        assert lines["A = +1"]["y"][at_one] == pytest.approx(1.0, abs=0.02)  # REINFORCE at rho = 1, every objective
        assert lines["A = -1"]["y"][at_one] == pytest.approx(-1.0, abs=0.02)
        marked = lines["your token, A = +1"]
        assert marked["x"][0] == pytest.approx(1.25) and marked["y"][0] == pytest.approx(token["weights"][name]["pos"])
    assert panels(at)[0]["title"] == "PPO clip, ε = 0.20"
    text = captions(at)
    # computed from sim.kl_clip.chapter_token: PPO 0 (silenced), clip-higher and CISPO 1.250, SAPO 1.231, GSPO 1.057
    assert "PPO's clip gives weight 0.000 (silenced" in text and "CISPO keeps it at 1.250" in text
    assert "SAPO's soft gate gives 1.231" in text and "response is 1.057 (4 tokens), so it gives 1.057" in text
    table = at.dataframe[0].value.set_index("objective") if at.dataframe else None
    assert table is not None and table.loc["CISPO, cap 1 + ε high = 1.28", "weight, A = +1"] == pytest.approx(1.25)

    at.slider(key="eps").set_value(0.3).run()  # 1.25 < 1.3: PPO keeps pushing the token
    assert "PPO's clip gives weight 1.250;" in captions(at) and "silenced" not in captions(at)
    at.slider(key="eps_high").set_value(0.1).run()  # CISPO's cap 1.1 < 1.25
    assert "CISPO keeps it at 1.100" in captions(at)
    assert panels(at)[3]["title"] == "CISPO, cap 1 + ε high = 1.10"
    at.slider(key="tau_pos").set_value(10.0).run()  # a hot gate: 4 * 0.924142 * 0.075858 * 1.25 = 0.3505
    assert "SAPO's soft gate gives 0.351" in captions(at)


def test_kl_clip_classroom_mode_runs():
    at = page("pages/kl_clip.py", classroom="1", p_new="0.6")  # ratio 1.5
    assert not at.exception and "ratio 1.500" in captions(at)


def test_one_group_offers_every_loss_type_with_its_weights_and_length_bias():
    at = page("pages/one_group.py")
    options = at.radio(key="loss").options
    assert len(options) == 8
    effect = length_effect(WORKED_EXAMPLE_TOKENS, WORKED_EXAMPLE_REWARDS)
    bias = at.dataframe[1].value.set_index("loss type")
    assert list(bias.index) == [r["loss_type"] for r in effect["rows"]]
    assert bias.loc["luspo"].tolist() == pytest.approx([-0.25, -0.25], abs=1e-4)  # A / G, a sum per answer
    text = captions(at)
    assert "grpo and sapo average each answer over its own tokens" in text
    assert "(-0.0625 vs -0.0833; the chapter's -0.063 vs -0.083)" in text and "(luspo, -0.250)" in text

    at.radio(key="loss").set_value("luspo").run()
    assert at.dataframe[0].value["weight per token"].tolist() == pytest.approx([0.25, -0.25, -0.25, 0.25], abs=1e-3)
    at.radio(key="loss").set_value("cispo").run()  # cap 5 (ScaleRL): at ratio 1 the weights are dapo's, A / 13
    assert at.dataframe[0].value["weight per token"].tolist() == pytest.approx([1 / 13, -1 / 13, -1 / 13, 1 / 13],
                                                                               abs=1e-3)
    assert "ε_max = 5" in captions(at)
    at.radio(key="loss").set_value("sapo").run()  # the gate is 1 at ratio 1: grpo's weights
    assert at.dataframe[0].value["weight per token"].tolist() == pytest.approx([1 / 12, -1 / 12, -1 / 16, 1 / 12],
                                                                               abs=1e-3)
    assert not at.exception
