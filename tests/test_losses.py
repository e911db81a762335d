"""The losses beyond the chapter's GRPO (sim/losses.py through sim.grpo.policy_loss), on worked numbers in
the chapter's style: the chapter's token whose probability rose 0.40 -> 0.50 (ratio 1.25), one response of
a few tokens, arithmetic in a comment. TRL parity of the same losses is tests/test_trl_parity.py."""

import doctest
import math

import pytest
import torch

import sim.losses
from sim.grpo import LOSS_TYPES, policy_loss, trl_advice
from sim.losses import cispo_cap, sequence_log_ratio, vespo_weight

F64 = torch.float64
CHAPTER_RATIO = 0.50 / 0.40  # 1.25: "the probability of 5 in response 1 has risen from 0.40 to 0.50"


def weights(ratios, advantages, **kw) -> torch.Tensor:
    """-d loss / d log pi for responses whose token ratios are `ratios` (B, T), every token real."""
    ratios = torch.as_tensor(ratios, dtype=F64)
    logp = torch.zeros_like(ratios, requires_grad=True)  # log pi = 0, log pi_old = -log rho: ratio rho
    loss, _ = policy_loss(logp, -torch.log(ratios), None, torch.as_tensor(advantages, dtype=F64),
                          torch.ones_like(ratios), **kw)
    (grad,) = torch.autograd.grad(loss, logp)
    return -grad


def test_doctests():
    assert doctest.testmod(sim.losses).failed == 0


# ---------------------------------------------------------------- CISPO


def test_cispo_keeps_the_gradient_ppo_clips_on_the_chapters_token():
    # rho = 1.25, A = +1, eps = 0.2: PPO's objective min(1.25 A, 1.2 A) = 1.2 A is flat in rho: gradient 0.
    assert weights([[CHAPTER_RATIO]], [1.0], loss_type="grpo", clip_eps=0.2).item() == 0.0
    # CISPO with MiniMax-M1's cap 1 + eps = 1.2: weight sg(min(1.25, 1.2)) * A = 1.2, not 0
    assert weights([[CHAPTER_RATIO]], [1.0], loss_type="cispo", clip_eps_high=1.2).item() == pytest.approx(1.2)
    # with ScaleRL's cap 5 the ratio is below it: weight 1.25 * A, exactly what the unclipped surrogate gives
    assert weights([[CHAPTER_RATIO]], [1.0], loss_type="cispo", clip_eps_high=5.0).item() == pytest.approx(1.25)


def test_cispo_with_its_cap_unset_is_reinforce_shrunk_five_times():
    # TRL reads the cap as clip_eps_high, else clip_eps: unset, cap = 0.2 < 1, so even rho = 1 weighs 0.2 * A
    assert cispo_cap(0.2, None) == 0.2 and cispo_cap(0.2, 5.0) == 5.0
    assert weights([[1.0]], [1.0], loss_type="cispo").item() == pytest.approx(0.2)
    assert any("ScaleRL" in line for line in trl_advice("cispo", clip_eps_high=None))
    assert trl_advice("cispo", clip_eps_high=5.0) == []


def test_cispo_pushes_a_negative_token_below_the_clip_where_ppo_stops():
    # rho = 0.5, A = -1: PPO min(0.5 * -1, 0.8 * -1) = -0.8, flat: 0. CISPO: weight min(0.5, 5) * -1 = -0.5
    assert weights([[0.5]], [-1.0], loss_type="grpo").item() == 0.0
    assert weights([[0.5]], [-1.0], loss_type="cispo", clip_eps_high=5.0).item() == pytest.approx(-0.5)


# ---------------------------------------------------------------- SAPO


def test_sapo_gate_is_one_at_ratio_one_and_smooth_past_the_clip():
    # d/d log pi of (4/tau) sigmoid(tau (rho - 1)) A = 4 sigma (1 - sigma) rho A; at rho = 1: 4 * 0.5 * 0.5 = 1
    assert weights([[1.0]], [1.0], loss_type="sapo").item() == pytest.approx(1.0, abs=1e-12)
    assert weights([[1.0]], [-1.0], loss_type="sapo").item() == pytest.approx(-1.0, abs=1e-12)
    # the chapter's token, tau_pos = 1: sigma(0.25) = 0.562177; 4 * 0.562177 * 0.437823 * 1.25 = 1.2307
    s = 1 / (1 + math.exp(-0.25))
    assert s == pytest.approx(0.562177, abs=1e-6)
    w = weights([[CHAPTER_RATIO]], [1.0], loss_type="sapo").item()
    assert w == pytest.approx(4 * s * (1 - s) * 1.25, abs=1e-12) and w == pytest.approx(1.2307, abs=1e-4)
    # a hotter gate closes faster: tau = 10 at the same token: x = 2.5, 4 * 0.924142 * 0.075858 * 1.25 = 0.3505
    assert weights([[CHAPTER_RATIO]], [1.0], loss_type="sapo", sapo_temperature_pos=10.0).item() == pytest.approx(
        0.3505, abs=1e-4)


def test_sapo_loss_at_ratio_one_is_two_a_over_tau():
    # value (4/tau) sigmoid(0) A = 2 A / tau: with A = +1 and tau = 1 the loss reads -2, GRPO's -1
    logp = torch.zeros(1, 1, dtype=F64)
    loss, metrics = policy_loss(logp, None, None, torch.ones(1, dtype=F64), torch.ones(1, 1), loss_type="sapo")
    assert loss.item() == pytest.approx(-2.0)
    assert "clip_ratio/region_mean" not in metrics  # TRL logs no clip fractions for sapo


# ---------------------------------------------------------------- GSPO: one ratio per response


def test_gspo_ratio_is_the_geometric_mean_of_the_token_ratios():
    # four tokens at ratios 1.25, 1, 1, 1: s = (1.25 * 1 * 1 * 1) ** (1/4) = 1.057371
    log_ratio = torch.log(torch.tensor([[CHAPTER_RATIO, 1.0, 1.0, 1.0]], dtype=F64))
    s = torch.exp(sequence_log_ratio(log_ratio, torch.ones(1, 4))).item()
    assert s == pytest.approx(1.25 ** 0.25) and s == pytest.approx(1.057371, abs=1e-6)
    # padding does not count: the same response padded to 6 tokens has the same s
    padded = torch.cat([log_ratio, torch.tensor([[5.0, -5.0]], dtype=F64)], dim=1)
    mask = torch.tensor([[1, 1, 1, 1, 0, 0]], dtype=F64)
    assert torch.exp(sequence_log_ratio(padded, mask)).item() == pytest.approx(s)


def test_gspo_gives_every_token_the_sequence_weight_and_clips_the_whole_response():
    ratios = [[CHAPTER_RATIO, 1.0, 1.0, 1.0]]
    # token level (grpo, eps 0.2): the 1.25 token is clipped (0), the others get rho A / |y| = 1/4
    assert weights(ratios, [1.0]).tolist() == [[0.0, 0.25, 0.25, 0.25]]
    # sequence level, same eps: s = 1.0574 < 1.2, not clipped; d s / d log pi_t = s / 4 for every token: 0.2643
    w = weights(ratios, [1.0], importance_sampling_level="sequence")
    assert w.tolist()[0] == pytest.approx([1.25 ** 0.25 / 4] * 4) and w[0, 0].item() == pytest.approx(0.2643, 1e-3)
    # with GSPO's own eps (3e-4, 4e-4): s = 1.0574 > 1.0004, the whole response is clipped: every token 0
    w = weights(ratios, [1.0], importance_sampling_level="sequence", clip_eps=3e-4, clip_eps_high=4e-4)
    assert w.tolist() == [[0.0, 0.0, 0.0, 0.0]]


def test_luspo_removes_gspo_length_bias():
    # two responses, lengths 2 and 4, both A = +1, on-policy (s = 1), B = 2.
    # GSPO (grpo, sequence): loss = -(1/B) sum_i s_i A_i, d/d log pi_it = s_i A_i / (B |y_i|): 1/4 and 1/8 per token
    # LUSPO: loss = -(1/B) sum_i |y_i| s_i A_i, so d/d log pi_it = s_i A_i / B = 1/2 for every token
    mask = torch.tensor([[1, 1, 0, 0], [1, 1, 1, 1]], dtype=F64)
    out = {}
    for lt in ("grpo", "luspo"):
        logp = torch.zeros(2, 4, dtype=F64, requires_grad=True)
        loss, _ = policy_loss(logp, None, None, torch.ones(2, dtype=F64), mask, loss_type=lt,
                              importance_sampling_level="sequence")
        out[lt] = (-torch.autograd.grad(loss, logp)[0] * mask).tolist()
    assert out["grpo"] == [[0.25, 0.25, 0.0, 0.0], [0.125] * 4]
    assert out["luspo"] == [[0.5, 0.5, 0.0, 0.0], [0.5] * 4]


# ---------------------------------------------------------------- delta: two-sided clipping


def test_delta_stops_the_push_down_on_a_negative_token_whose_ratio_ran_away():
    # A = -1, rho = 2, eps = 0.2: PPO's min(2 * -1, 1.2 * -1) = -2 is the unclipped term: weight rho A = -2,
    # growing without bound with rho. delta = 1.5 caps it: min(1.5 * -1, 1.2 * -1) = -1.5, flat in rho: 0.
    assert weights([[2.0]], [-1.0]).item() == pytest.approx(-2.0)
    assert weights([[2.0]], [-1.0], delta=1.5).item() == 0.0
    # below delta nothing changes: rho = 1.4 keeps weight -1.4; and for A > 0 the usual clip already stops at 1.2
    assert weights([[1.4]], [-1.0], delta=1.5).item() == pytest.approx(-1.4)
    assert weights([[2.0]], [1.0], delta=1.5).item() == 0.0
    assert "ignores it" in trl_advice("sapo", delta=1.5)[0]


# ---------------------------------------------------------------- VESPO


def test_vespo_gamma_weight_is_one_on_policy_and_peaks_at_k_over_lambda():
    # phi(w) = e^lam w^k e^(-lam w), A >= 0: k = 2, lam = 3 (TRL's defaults)
    def phi(w, adv=1.0):
        log_ratio = torch.tensor([[math.log(w)]], dtype=F64)
        return vespo_weight(log_ratio, torch.ones(1, 1), torch.tensor([[adv]]), k_pos=2.0, lambda_pos=3.0,
                            k_neg=3.0, lambda_neg=2.0).item()

    assert phi(1.0) == pytest.approx(1.0)  # e^3 * 1 * e^-3
    # the chapter's ratio: e^(3 - 3.75) * 1.25^2 = 0.472367 * 1.5625 = 0.738073
    assert phi(CHAPTER_RATIO) == pytest.approx(0.738073, abs=1e-6)
    # peak at w = k / lam = 2/3: e^3 (4/9) e^-2 = 4e/9 = 1.208125
    assert phi(2 / 3) == pytest.approx(4 * math.e / 9) and phi(0.6) < phi(2 / 3) > phi(0.7)
    # A < 0 uses k = 3, lam = 2: e^(2 - 2.5) * 1.25^3 = 0.606531 * 1.953125 = 1.184630
    assert phi(CHAPTER_RATIO, -1.0) == pytest.approx(1.184630, abs=1e-6)


def test_vespo_ratio_is_the_product_over_tokens():
    # two tokens at 1.25 each: w = 1.5625 (not GSPO's 1.25); the loss's gradient on each token is phi(w) * A / 2
    w = 1.25 ** 2
    expect = math.exp(3 + 2 * math.log(w) - 3 * w) / 2
    assert weights([[CHAPTER_RATIO, CHAPTER_RATIO]], [1.0], loss_type="vespo").tolist()[0] == pytest.approx(
        [expect, expect])


# ---------------------------------------------------------------- properties


@pytest.mark.parametrize("loss_type,same_as", [("sapo", "grpo"), ("vespo", "dapo"), ("cispo", "dapo")])
@pytest.mark.parametrize("level", ["token", "sequence"])
def test_on_policy_every_loss_is_reinforce_with_its_aggregation(loss_type, same_as, level):
    # at rho = 1: SAPO's gate is 1, VESPO's phi(1) = 1, CISPO's weight min(1, 5) = 1: each is the REINFORCE
    # gradient of the loss type it aggregates like
    g = torch.Generator().manual_seed(0)
    mask = (torch.arange(5)[None, :] < torch.tensor([[3], [5], [1], [4]])).to(F64)  # (B, T) ragged
    adv = torch.randn(4, generator=g, dtype=F64)
    grads = []
    for lt in (loss_type, same_as):
        logp = (-torch.rand(4, 5, generator=g, dtype=F64)).requires_grad_(True)
        loss, _ = policy_loss(logp, None, None, adv, mask, loss_type=lt, clip_eps_high=5.0 if lt == "cispo" else None,
                              importance_sampling_level=level)
        grads.append(torch.autograd.grad(loss, logp)[0] * mask)
    torch.testing.assert_close(grads[0], grads[1], rtol=0, atol=1e-12)


@pytest.mark.parametrize("loss_type", LOSS_TYPES)
def test_every_loss_type_runs_with_padding_and_beta(loss_type):
    logp = torch.log(torch.full((2, 3), 0.5, dtype=F64)).requires_grad_(True)
    loss, metrics = policy_loss(logp, logp.detach() + 0.3, logp.detach() - 0.2, torch.tensor([1.0, -1.0], dtype=F64),
                                torch.tensor([[1, 1, 0], [1, 1, 1]]), loss_type=loss_type, beta=0.04,
                                clip_eps_high=5.0 if loss_type == "cispo" else None)
    assert math.isfinite(loss.item()) and metrics["kl"] > 0
    assert torch.autograd.grad(loss, logp)[0][0, 2] == 0  # padding gets no gradient


@pytest.mark.parametrize(
    "kw, name",
    [({"importance_sampling_level": "tokens"}, "importance_sampling_level"), ({"delta": 0.5}, "delta"),
     ({"sapo_temperature_pos": 0.0}, "sapo_temperature_pos"), ({"sapo_temperature_neg": -1.0}, "sapo_temperature_neg"),
     ({"vespo_k_pos": -1.0}, "vespo_k_pos"), ({"vespo_lambda_neg": float("nan")}, "vespo_lambda_neg"),
     ({"loss_type": "gspo"}, "loss_type"), ({"clip_eps": 0.0}, "clip_eps")],
)
def test_bad_loss_parameters_raise_naming_the_parameter(kw, name):
    with pytest.raises(ValueError, match=name):
        policy_loss(torch.zeros(1, 2), None, None, torch.ones(1), torch.ones(1, 2), **kw)


def test_trl_advice_repeats_trls_warnings():
    assert "sequence" in trl_advice("luspo", "token")[0]
    assert "token" in trl_advice("vespo", "sequence")[0]
    assert "length" in trl_advice("dapo", "sequence")[0]
    assert trl_advice("grpo", "sequence") == [] and trl_advice("luspo", "sequence") == []
