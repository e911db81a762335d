"""The loss views, as both hosts draw them (assets/js/views.js under node): One group's weights and length bias for
every loss type, and KL and clipping's gradient weight against the ratio per objective. The charts and captions
hold sim's numbers (sim.exercises.length_effect, sim.kl_clip.chapter_token / weight_curves), checked here against
them."""

import numpy as np
import pytest

from sim.exercises import LOSS_TYPES, WORKED_EXAMPLE_REWARDS, WORKED_EXAMPLE_TOKENS, length_effect
from sim.kl_clip import ClipView, chapter_token, objectives
from tests.fixtures.node import js
from tests.test_views import captions, fields_of, table, walk


def docs(view: str, *changes: dict) -> list[list[dict]]:
    return js([{"op": "doc", "view": view, "fields": fields_of(view, c)} for c in changes])


def panels(blocks) -> list[dict]:
    """KL and clipping's six gradient-weight panels (one Charts block, the one chart spec)."""
    (b,) = [b for b in walk(blocks) if b["kind"] == "charts" and b["key"] == "weight_charts"]
    return b["charts"]


def said(blocks) -> str:
    return " ".join(captions(blocks))


def test_kl_clip_draws_a_gradient_weight_panel_per_objective_with_the_chapters_token():
    d, eps, cap, tau = docs("kl_clip", {}, {"eps": 0.3}, {"eps_high": 0.1}, {"tau_pos": 10.0})
    token = chapter_token(ClipView())
    for fig, name in zip(panels(d), list(objectives(ClipView())), strict=True):
        lines = {t["name"]: t for t in fig["traces"]}
        x = np.asarray(lines["A = +1"]["x"])
        at_one = np.argmin(abs(x - 1.0))
        assert lines["A = +1"]["y"][at_one] == pytest.approx(1.0, abs=0.02)  # REINFORCE at rho = 1, every objective
        assert lines["A = -1"]["y"][at_one] == pytest.approx(-1.0, abs=0.02)
        marked = lines["your token, A = +1"]
        assert marked["x"][0] == pytest.approx(1.25) and marked["y"][0] == pytest.approx(token["weights"][name]["pos"])
    assert panels(d)[0]["title"] == "PPO clip, ε = 0.20"
    text = said(d)
    # computed from sim.kl_clip.chapter_token: PPO 0 (silenced), clip-higher and CISPO 1.250, SAPO 1.231, GSPO 1.057
    assert "PPO's clip gives weight 0.000 (silenced" in text and "CISPO keeps it at 1.250" in text
    assert "SAPO's soft gate gives 1.231" in text and "response is 1.057 (4 tokens), so it gives 1.057" in text
    rows = {r[0]: r[1] for r in table(d, "weights_at_token")["rows"]}
    assert rows["CISPO, cap 1 + ε high = 1.28"] == pytest.approx(1.25)
    assert "PPO's clip gives weight 1.250;" in said(eps) and "silenced" not in said(eps)  # 1.25 < 1.3: still pushed
    assert "CISPO keeps it at 1.100" in said(cap) and panels(cap)[3]["title"] == "CISPO, cap 1 + ε high = 1.10"
    assert "SAPO's soft gate gives 0.351" in said(tau)  # a hot gate: 4 * 0.924142 * 0.075858 * 1.25 = 0.3505


def test_one_group_offers_every_loss_type_with_its_weights_and_length_bias():
    from sim.views.one_group import CONTROLS

    (loss,) = [c for c in CONTROLS if c.key == "loss"]
    assert list(loss.options) == list(LOSS_TYPES) and len(LOSS_TYPES) == 8
    d, luspo, cispo, sapo = docs("one_group", {}, {"loss": "luspo"}, {"loss": "cispo"}, {"loss": "sapo"})
    effect = length_effect(WORKED_EXAMPLE_TOKENS, WORKED_EXAMPLE_REWARDS)
    bias = {r[0]: r[1:] for r in table(d, "length_bias_table")["rows"]}
    assert list(bias) == [r["loss_type"] for r in effect["rows"]]
    assert bias["luspo"] == pytest.approx([-0.25, -0.25], abs=1e-4)  # A / G, a sum per answer
    text = said(d)
    assert "grpo and sapo average each answer over its own tokens" in text
    assert "(-0.0625 vs -0.0833; the chapter's -0.063 vs -0.083)" in text and "(luspo, -0.250)" in text

    def weights(blocks):
        return [r[5] for r in table(blocks, "weights_table")["rows"]]

    assert weights(luspo) == pytest.approx([0.25, -0.25, -0.25, 0.25], abs=1e-3)
    assert weights(cispo) == pytest.approx([1 / 13, -1 / 13, -1 / 13, 1 / 13], abs=1e-3)  # cap 5: dapo's, A / 13
    assert "ε_max = 5" in said(cispo)
    assert weights(sapo) == pytest.approx([1 / 12, -1 / 12, -1 / 16, 1 / 12], abs=1e-3)  # the gate is 1 at ratio 1
