"""sim/grpo.py against the chapter's printed numbers, autograd, brute force and properties.

Gradients are taken with torch.autograd, never re-derived by hand: the point is that the loss
code, differentiated, reproduces the numbers the chapter computes on paper.
"""

import doctest
import itertools
import math
import subprocess
import sys

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import sim.grpo
from sim import grpo
from sim.grpo import (
    aggregate,
    clipped_surrogate,
    grad_norm,
    group_advantages,
    k1_kl,
    k2_kl,
    k3_kl,
    policy_loss,
)
from tests.fixtures.props import examples

F64 = torch.float64  # exact comparisons: every tensor below is built in float64

# rewards/lists for hypothesis: small groups of 0/1 or graded rewards
reward_values = st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0, -1.0])


def t(*xs):
    return torch.tensor(xs, dtype=torch.float64)


# ---------------------------------------------------------------- chapter numbers: advantages


def test_chapter_rewards_1001_give_plus_minus_one():
    # mean = 0.5, population std = sqrt(0.5 * 0.5) = 0.5, so A = (r - 0.5) / 0.5 = +1, -1, -1, +1
    adv = group_advantages(t(1, 0, 0, 1), 4, eps=0.0)
    assert adv.tolist() == [1.0, -1.0, -1.0, 1.0]
    # with the default eps = 1e-4: 0.5 / 0.5001 = 0.9998, still +-1 to 3 decimals
    assert torch.allclose(group_advantages(t(1, 0, 0, 1), 4), t(1, -1, -1, 1), atol=1e-3)


def test_chapter_rewards_1000_std_0433():
    # mean = 0.25, std = sqrt(0.25 * 0.75) = 0.4330; A = 0.75 / 0.433 = 1.732, -0.25 / 0.433 = -0.577
    r = t(1, 0, 0, 0)
    assert r.std(correction=0).item() == pytest.approx(0.433, abs=5e-4)
    adv = group_advantages(r, 4)
    assert adv[0].item() == pytest.approx(1.732, abs=1e-3)
    assert adv[1:].tolist() == pytest.approx([-0.577] * 3, abs=1e-3)
    assert adv.sum().item() == pytest.approx(0.0, abs=1e-12)  # "the advantages still sum to zero"


@pytest.mark.parametrize("value", [1.0, 0.0])
@pytest.mark.parametrize("scale", ["group", "batch", "none"])
@pytest.mark.parametrize("baseline", ["mean", "loo"])
def test_chapter_all_equal_group_gives_exactly_zero(value, scale, baseline):
    # rewards 1, 1, 1, 1 (and 0, 0, 0, 0): every response equals the mean, so every advantage is 0
    adv = group_advantages(torch.full((4,), value), 4, baseline=baseline, scale=scale)
    assert adv.tolist() == [0.0, 0.0, 0.0, 0.0]


def test_trl_sample_std_value():
    # TRL divides by the sample std: sqrt((4 * 0.25) / 3) = 0.577350, so A = 0.5 / (0.577350 + 1e-4) = 0.865875
    adv = group_advantages(t(1, 0, 0, 1), 4, ddof=1)
    assert adv.tolist() == pytest.approx([0.865875, -0.865875, -0.865875, 0.865875], abs=1e-6)


def test_chapter_mean_abs_advantage_1_of_8_vs_4_of_8():
    # 1 of 8 right: mean 0.125, std sqrt(0.125 * 0.875) = 0.3307; |A| = 0.875/0.3307 = 2.646 once and
    # 0.125/0.3307 = 0.378 seven times: mean (2.646 + 7 * 0.378) / 8 = 0.66. 4 of 8: std 0.5, |A| = 1.
    # Without the std: (0.875 + 7 * 0.125) / 8 = 0.22 versus 0.5.
    one, four = t(1, 0, 0, 0, 0, 0, 0, 0), t(1, 1, 1, 1, 0, 0, 0, 0)
    assert group_advantages(one, 8).abs().mean().item() == pytest.approx(0.66, abs=5e-3)
    assert group_advantages(four, 8).abs().mean().item() == pytest.approx(1.0, abs=1e-3)
    assert group_advantages(one, 8, scale="none").abs().mean().item() == pytest.approx(0.22, abs=5e-3)
    assert group_advantages(four, 8, scale="none").abs().mean().item() == pytest.approx(0.5, abs=1e-12)
    # "their squares always sum to G"
    assert (group_advantages(one, 8, eps=0.0) ** 2).sum().item() == pytest.approx(8.0, abs=1e-9)


# ---------------------------------------------------------------- chapter numbers: the worked example

# "8 5 <eos>", "7 5 <eos>", "8 1 5 <eos>", "8 5 <eos>" with rewards 1, 0, 0, 1; token ids are the digits,
# <eos> = 10. Padded to T = 4.
RESPONSES = [[8, 5, 10], [7, 5, 10], [8, 1, 5, 10], [8, 5, 10]]
LENGTHS = t(3, 3, 4, 3)
MASK = torch.tensor([[1, 1, 1, 0], [1, 1, 1, 0], [1, 1, 1, 1], [1, 1, 1, 0]], dtype=F64)  # (B, T)
V = 11  # vocabulary: digits 0-9 and <eos>


def _worked_example_loss():
    """GRPO loss (ratio 1, beta 0) of the worked example, as a function of log-probability leaves.

    The first token is sampled right after "=" by all four responses, so it reads the SAME
    log-probability table first_logp (V,) : logp[i, 0] = onehot(y_i0) @ first_logp.
    Later positions have their own contexts, so they get their own leaves rest (B, T - 1).
    """
    adv = group_advantages(t(1, 0, 0, 1), 4, eps=0.0)  # +1, -1, -1, +1 exactly
    first_logp = torch.full((V,), math.log(1 / V), dtype=F64, requires_grad=True)  # (V,)
    first = torch.nn.functional.one_hot(torch.tensor([r[0] for r in RESPONSES]), V).to(F64)  # (B, V)
    rest = torch.full((4, 3), -1.0, dtype=F64, requires_grad=True)  # (B, T-1)
    logp = torch.cat([(first @ first_logp)[:, None], rest], dim=1)  # (B, T)
    loss, _ = policy_loss(logp, None, None, adv, MASK, loss_type="grpo")
    return loss, first_logp, rest, adv


def test_worked_example_token_weights_by_autograd():
    # weight of each token's log-prob in the objective (= -d loss / d logp) is A_i / (G |y_i|):
    # +1/(4*3) = +1/12, -1/12, -1/(4*4) = -1/16, +1/12
    loss, _, rest, adv = _worked_example_loss()
    (g,) = torch.autograd.grad(loss, rest)
    weights = -g  # (B, T-1); padded position of responses 0, 1, 3 must get 0
    expected = t(1 / 12, -1 / 12, -1 / 16, 1 / 12)
    assert torch.allclose(weights[:, :2], expected[:, None].expand(4, 2), atol=1e-15)
    assert weights[2, 2].item() == pytest.approx(-1 / 16, abs=1e-15)  # the 4th token of "8 1 5 <eos>"
    assert weights[[0, 1, 3], 2].tolist() == [0.0, 0.0, 0.0]  # padding gets no gradient
    # "the long wrong answer is pushed down less per token (-0.063 versus -0.083)": -1/16 = -0.0625
    assert weights[2, 0].item() == pytest.approx(-0.063, abs=6e-4)
    assert weights[1, 0].item() == pytest.approx(-0.083, abs=5e-4)


def test_worked_example_first_token_credit_by_autograd():
    # first token 8 collects +1/12 + 1/12 - 1/16 = 0.1042 ~ +0.10; token 7 collects -1/12 = -0.083
    loss, first_logp, _, _ = _worked_example_loss()
    (g,) = torch.autograd.grad(loss, first_logp)
    push = -g  # (V,)
    assert push[8].item() == pytest.approx(1 / 12 + 1 / 12 - 1 / 16, abs=1e-15)
    assert push[8].item() == pytest.approx(0.10, abs=5e-3)
    assert push[7].item() == pytest.approx(-0.083, abs=5e-4)
    others = [v for v in range(V) if v not in (7, 8)]
    assert push[others].abs().max().item() == 0.0  # tokens nobody sampled first get nothing


def test_worked_example_loss_reads_zero_at_ratio_one():
    # on-policy every token's surrogate is rho * A_i = A_i, so each response's token mean is A_i and
    # the loss is -(1 - 1 - 1 + 1) / 4 = 0, while its gradient (above) is not
    loss, _, _, _ = _worked_example_loss()
    assert loss.item() == pytest.approx(0.0, abs=1e-15)


# ---------------------------------------------------------------- chapter numbers: KL and clip


def test_chapter_k3_value_and_gradient():
    # u = 0.5 / 0.6 = 0.8333; k3 = 0.8333 - log 0.8333 - 1 = 0.8333 + 0.1823 - 1 = 0.0157
    # d k3 / d log pi = 1 - u = 0.167
    logp = torch.tensor(math.log(0.6), dtype=F64, requires_grad=True)
    k3 = k3_kl(logp, torch.tensor(math.log(0.5), dtype=F64))
    assert k3.item() == pytest.approx(0.0157, abs=5e-5)
    (g,) = torch.autograd.grad(k3, logp)
    assert g.item() == pytest.approx(0.167, abs=5e-4)
    assert g.item() == pytest.approx(1 - 0.5 / 0.6, abs=1e-12)


def test_k1_k2_values():
    # k1 = log 0.6 - log 0.5 = log 1.2 = 0.1823; k2 = 0.1823^2 / 2 = 0.0166
    lp, ref = t(math.log(0.6)), t(math.log(0.5))
    assert k1_kl(lp, ref).item() == pytest.approx(0.1823, abs=5e-5)
    assert k2_kl(lp, ref).item() == pytest.approx(0.0166, abs=5e-5)
    # k1 can be negative: policy 0.4 below reference 0.5 gives log 0.8 = -0.223
    assert k1_kl(t(math.log(0.4)), ref).item() == pytest.approx(-0.2231, abs=5e-5)


def test_chapter_clip_ratio_125_gives_no_gradient():
    # probability of "5" in response 1 rose from 0.40 to 0.50: ratio 0.50 / 0.40 = 1.25 > 1 + 0.2
    old = torch.log(t([0.40]))  # (1, 1)
    logp = torch.log(t([0.50])).requires_grad_(True)
    loss, metrics = policy_loss(logp, old, None, t(1.0), torch.ones(1, 1), clip_eps=0.2)
    (g,) = torch.autograd.grad(loss, logp)
    assert torch.exp(logp - old).item() == pytest.approx(1.25)
    assert g.item() == 0.0
    assert loss.item() == pytest.approx(-1.2)  # the objective is frozen at the clip: 1.2 * A
    assert metrics["clip_ratio/high_mean"] == 1.0 and metrics["clip_ratio/region_mean"] == 1.0
    # the same ratio with a NEGATIVE advantage is not clipped: d loss / d logp = -A * rho = 1.25
    loss, metrics = policy_loss(logp, old, None, t(-1.0), torch.ones(1, 1), clip_eps=0.2)
    (g,) = torch.autograd.grad(loss, logp)
    assert g.item() == pytest.approx(1.25)
    assert metrics["clip_ratio/region_mean"] == 0.0
    # DAPO's clip-higher (eps_high = 0.28) lets 1.25 < 1.28 through again: gradient -A * rho = -1.25
    loss, _ = policy_loss(logp, old, None, t(1.0), torch.ones(1, 1), clip_eps=0.2, clip_eps_high=0.28)
    (g,) = torch.autograd.grad(loss, logp)
    assert g.item() == pytest.approx(-1.25)


def test_clip_low_side():
    # ratio 0.30 / 0.40 = 0.75 < 0.8: with A < 0 frozen (no gradient), with A > 0 still pushed up
    old, logp = torch.log(t([0.40])), torch.log(t([0.30])).requires_grad_(True)
    loss, m = policy_loss(logp, old, None, t(-1.0), torch.ones(1, 1))
    assert torch.autograd.grad(loss, logp)[0].item() == 0.0
    assert m["clip_ratio/low_mean"] == 1.0
    loss, m = policy_loss(logp, old, None, t(1.0), torch.ones(1, 1))
    assert torch.autograd.grad(loss, logp)[0].item() == pytest.approx(-0.75)
    assert m["clip_ratio/low_mean"] == 0.0


def test_clipped_surrogate_curve():
    # A > 0: rho * A up to 1 + eps, then flat; A < 0: flat below 1 - eps, then rho * A
    rho = t(0.5, 0.8, 1.0, 1.2, 1.5)
    assert clipped_surrogate(rho, 1.0).tolist() == pytest.approx([0.5, 0.8, 1.0, 1.2, 1.2])
    assert clipped_surrogate(rho, -1.0).tolist() == pytest.approx([-0.8, -0.8, -1.0, -1.2, -1.5])
    assert clipped_surrogate(rho, 2.0, 0.2, 0.28).tolist() == pytest.approx([1.0, 1.6, 2.0, 2.4, 2.56])


# ---------------------------------------------------------------- properties: advantages


@settings(max_examples=examples(40))
@given(
    st.integers(1, 4).flatmap(
        lambda P: st.integers(2, 6).flatmap(
            lambda G: st.tuples(st.just(G), st.lists(reward_values, min_size=P * G, max_size=P * G))
        )
    ),
    st.sampled_from(["group", "batch", "none"]),
    st.sampled_from([0, 1]),
)
def test_mean_baseline_sums_to_zero_and_loo_is_rescaled(case, scale, ddof):
    G, rewards = case
    r = torch.tensor(rewards, dtype=F64)
    adv = group_advantages(r, G, scale=scale, ddof=ddof)
    assert adv.reshape(-1, G).sum(dim=1).abs().max().item() < 1e-9  # zero sum per group
    # LOO: r_i - (S - r_i)/(G-1) = (G r_i - S)/(G-1) = G/(G-1) * (r_i - S/G)
    loo = group_advantages(r, G, baseline="loo", scale=scale, ddof=ddof)
    assert torch.allclose(loo, G / (G - 1) * adv, atol=1e-9)


@settings(max_examples=examples(40))
@given(st.integers(2, 8).flatmap(lambda G: st.lists(reward_values, min_size=G, max_size=G)))
def test_group_scale_gives_unit_std(rewards):
    # with eps = 0, every group with any spread has advantages of mean 0 and (population) std 1
    r = torch.tensor(rewards, dtype=F64)
    adv = group_advantages(r, len(rewards), eps=0.0)
    if r.max() == r.min():
        assert adv.abs().max().item() == 0.0
    else:
        assert adv.std(correction=0).item() == pytest.approx(1.0, abs=1e-9)
        assert (adv**2).sum().item() == pytest.approx(len(rewards), abs=1e-9)


def test_batch_scale_divides_by_batch_std():
    r = t(1, 0, 0, 0, 1, 1, 0, 1)  # two groups of 4
    adv = group_advantages(r, 4, scale="batch", ddof=1, eps=0.0)
    expected = (r.reshape(2, 4) - r.reshape(2, 4).mean(dim=1, keepdim=True)).reshape(-1) / r.std()
    assert torch.allclose(adv, expected, atol=1e-12)


def test_baseline_none_keeps_raw_rewards_of_flat_groups():
    # REINFORCE without baseline: a flat group keeps its reward, unscaled (not blown up by 1/eps)
    adv = group_advantages(t(1, 1, 1, 1, 1, 0, 0, 0), 4, baseline="none", eps=0.0)
    assert adv[:4].tolist() == [1.0, 1.0, 1.0, 1.0]
    assert adv[4].item() == pytest.approx(1 / math.sqrt(0.25 * 0.75))


# ---------------------------------------------------------------- properties: KL estimators


@settings(max_examples=examples(100))
@given(st.floats(-8, 0), st.floats(-8, 0))
def test_k3_and_k2_never_negative_and_zero_at_equality(lp, ref):
    lp_t, ref_t = t(lp), t(ref)
    assert k3_kl(lp_t, ref_t).item() >= 0.0
    assert k2_kl(lp_t, ref_t).item() >= 0.0
    assert k3_kl(lp_t, lp_t).item() == 0.0
    assert k2_kl(lp_t, lp_t).item() == 0.0 and k1_kl(lp_t, lp_t).item() == 0.0


def test_k3_is_never_negative_on_a_hundred_thousand_pairs():
    """k3 >= 0 for 10^5 pairs: log-probabilities across the range, and pairs a hair apart, where the naive
    exp(d) - d - 1 rounds below zero (lp = -1.04e-16, ref = 0 gave -1.1e-16)."""
    g = torch.Generator().manual_seed(36)
    lp = -8 * torch.rand(50_000, generator=g, dtype=F64)
    ref = -8 * torch.rand(50_000, generator=g, dtype=F64)
    near = -8 * torch.rand(50_000, generator=g, dtype=F64)
    tiny = torch.randn(50_000, generator=g, dtype=F64) * 10.0 ** -torch.randint(8, 18, (50_000,), generator=g)
    lp, ref = torch.cat([lp, near]), torch.cat([ref, near + tiny])
    assert float(k3_kl(lp, ref).min()) >= 0.0
    assert float(k3_kl(t(-1.04e-16), t(0.0))) >= 0.0


def test_estimators_expectations_against_exact_kl():
    # Exact expectations over a small vocabulary: E_pi[k1] = E_pi[k3] = KL(pi || ref) exactly
    # (both unbiased); E_pi[k2] - KL shrinks like size^3 while KL shrinks like size^2, so all three
    # agree to second order near u = 1 (Schulman 2020).
    g = torch.Generator().manual_seed(0)
    logits, direction = torch.randn(6, generator=g, dtype=F64), torch.randn(6, generator=g, dtype=F64)
    ref = torch.log_softmax(logits, 0)
    gaps = []
    for size in (0.1, 0.05, 0.025):
        logp = torch.log_softmax(logits + size * direction, 0)
        pi = logp.exp()
        kl = (pi * (logp - ref)).sum()
        assert (pi * k1_kl(logp, ref)).sum().item() == pytest.approx(kl.item(), rel=1e-10)
        assert (pi * k3_kl(logp, ref)).sum().item() == pytest.approx(kl.item(), rel=1e-9)
        gaps.append(abs((pi * k2_kl(logp, ref)).sum() - kl).item() / kl.item())
    # relative gap of k2 is first order in size: halving size halves it
    assert gaps[1] / gaps[0] == pytest.approx(0.5, abs=0.05)
    assert gaps[2] / gaps[1] == pytest.approx(0.5, abs=0.05)
    assert gaps[2] < 0.02


def test_k2_k3_agree_to_second_order_per_token():
    # k3 = e^d - d - 1 = d^2/2 + d^3/6 + ..., k2 = d^2/2: the difference is third order in d = log u
    lp = t(0.0)
    for d in (1e-1, 1e-2, 1e-3):
        diff = (k3_kl(lp, t(d)) - k2_kl(lp, t(d))).item()
        assert diff == pytest.approx(d**3 / 6, rel=0.1)


def test_kl_times_ratio_gradient_on_policy():
    # on-policy rho = 1 in value, so k3 * rho has the value of k3, but its gradient is
    # rho * (1 - u) + k3 * rho = (1 - u) + k3, as TRL's use_bias_correction_kl documents
    lp0, ref = math.log(0.6), t([math.log(0.5)])
    k3 = k3_kl(t([lp0]), ref).item()
    for times, expected in ((False, 1 - 0.5 / 0.6), (True, 1 - 0.5 / 0.6 + k3)):
        logp = t([lp0]).requires_grad_(True)
        loss, m = policy_loss(logp, None, ref, t(0.0), torch.ones(1, 1), beta=1.0, kl_times_ratio=times)
        assert loss.item() == pytest.approx(k3)
        assert torch.autograd.grad(loss, logp)[0].item() == pytest.approx(expected, abs=1e-12)
        assert m["kl"] == pytest.approx(0.0157, abs=5e-5)


# ---------------------------------------------------------------- properties: loss and aggregation


def _random_batch(seed, B=6, T=7):
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(1, T + 1, (B,), generator=g)
    mask = (torch.arange(T)[None, :] < lengths[:, None]).to(F64)  # (B, T)
    logp = -torch.rand(B, T, generator=g, dtype=F64) * 3  # (B, T)
    old = logp + 0.3 * torch.randn(B, T, generator=g, dtype=F64)
    ref = logp + 0.3 * torch.randn(B, T, generator=g, dtype=F64)
    adv = torch.randn(B, generator=g, dtype=F64)
    return logp, old, ref, adv, mask


@pytest.mark.parametrize("seed", range(5))
def test_ratio_one_gradient_is_reinforce_with_group_baseline(seed):
    # at rho = 1 the clipped loss's gradient equals that of -mean_i A_i mean_t logp_it (chapter)
    logp, _, _, _, mask = _random_batch(seed)
    adv = group_advantages(torch.randint(0, 2, (6,), generator=torch.Generator().manual_seed(seed)).double(), 3)
    a = logp.clone().requires_grad_(True)
    loss, m = policy_loss(a, None, None, adv, mask, loss_type="grpo")
    b = logp.clone().requires_grad_(True)
    reinforce = -(adv * (b * mask).sum(1) / mask.sum(1)).mean()
    ga, gb = torch.autograd.grad(loss, a)[0], torch.autograd.grad(reinforce, b)[0]
    assert torch.allclose(ga, gb, atol=1e-15)
    assert m["clip_ratio/region_mean"] == 0.0
    # the same with an explicit old_logp equal to logp
    c = logp.clone().requires_grad_(True)
    loss2, _ = policy_loss(c, logp.clone(), None, adv, mask)
    assert torch.allclose(torch.autograd.grad(loss2, c)[0], gb, atol=1e-15)


@pytest.mark.parametrize("seed", range(3))
def test_aggregation_against_hand_loops(seed):
    logp, _, _, _, mask = _random_batch(seed)
    x = logp  # any per-token loss
    B, T = x.shape
    rows = [[x[i, j].item() for j in range(T) if mask[i, j] == 1] for i in range(B)]
    grpo = sum(sum(r) / len(r) for r in rows) / B
    token_mean = sum(sum(r) for r in rows) / sum(len(r) for r in rows)
    dr = sum(sum(r) for r in rows) / (B * 10)
    assert aggregate(x, mask, "grpo").item() == pytest.approx(grpo, rel=1e-12)
    assert aggregate(x, mask, "bnpo").item() == pytest.approx(token_mean, rel=1e-12)
    assert aggregate(x, mask, "dapo").item() == pytest.approx(token_mean, rel=1e-12)
    assert aggregate(x, mask, "dr_grpo", max_completion_length=10).item() == pytest.approx(dr, rel=1e-12)
    # default max_completion_length is the padded width T
    assert aggregate(x, mask, "dr_grpo").item() == pytest.approx(dr * 10 / T, rel=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_policy_loss_against_per_token_loop(seed):
    # brute force: one python float per token, the chapter's pseudo-code, grpo aggregation
    logp, old, ref, adv, mask = _random_batch(seed)
    beta, eps = 0.04, 0.2
    total = 0.0
    for i in range(logp.shape[0]):
        objs = []
        for j in range(logp.shape[1]):
            if mask[i, j] == 0:
                continue
            rho = math.exp(logp[i, j].item() - old[i, j].item())
            A = adv[i].item()
            u = math.exp(ref[i, j].item() - logp[i, j].item())
            objs.append(min(rho * A, min(max(rho, 1 - eps), 1 + eps) * A) - beta * (u - math.log(u) - 1))
        total += -sum(objs) / len(objs)
    loss, _ = policy_loss(logp, old, ref, adv, mask, beta=beta, clip_eps=eps)
    assert loss.item() == pytest.approx(total / logp.shape[0], rel=1e-12)


def test_metrics_count_clipped_tokens():
    logp, old, ref, adv, mask = _random_batch(0)
    _, m = policy_loss(logp, old, ref, adv, mask, clip_eps=0.2)
    ratio, A = torch.exp(logp - old), adv[:, None]
    n = mask.sum()
    low = (((ratio < 0.8) & (A < 0)) * mask).sum() / n
    high = (((ratio > 1.2) & (A > 0)) * mask).sum() / n
    assert m["clip_ratio/low_mean"] == pytest.approx(low.item())
    assert m["clip_ratio/high_mean"] == pytest.approx(high.item())
    assert m["clip_ratio/region_mean"] == pytest.approx((low + high).item())
    assert m["kl"] == pytest.approx(((k3_kl(logp, ref) * mask).sum() / n).item())
    assert 0 < m["clip_ratio/region_mean"] < 1  # the random batch does exercise the clip


def test_grad_norm_matches_autograd_and_leaves_grad_untouched():
    logp, old, ref, adv, mask = _random_batch(1)
    x = logp.clone().requires_grad_(True)
    loss, _ = policy_loss(x, old, ref, adv, mask, beta=0.04)
    n = grad_norm(loss, x)
    assert x.grad is None
    loss.backward()
    assert n == pytest.approx(x.grad.norm().item(), rel=1e-12)


def test_docstring_examples():
    assert doctest.testmod(sim.grpo).failed == 0


@pytest.mark.integration
def test_engine_does_not_import_trl_or_ui():
    code = "import sys, sim.grpo; print(sorted({m.split('.')[0] for m in sys.modules}))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    for heavy in ("trl", "transformers", "streamlit", "plotly"):
        assert f"'{heavy}'" not in out


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "call, field",
    [
        (lambda: group_advantages(t(1, 0, 0), 2), "group_size"),
        (lambda: group_advantages(t(1, 0), 0), "group_size"),
        (lambda: group_advantages(t(1, 0), 2, baseline="median"), "baseline"),
        (lambda: group_advantages(t(1, 0), 2, scale="global"), "scale"),
        (lambda: group_advantages(t(1, 0), 2, ddof=2), "ddof"),
        (lambda: group_advantages(t(1, 0), 2, eps=-1.0), "eps"),
        (lambda: group_advantages(t(1, 0), 1, baseline="loo"), "group_size"),
        (lambda: aggregate(torch.zeros(2, 3), torch.ones(2, 3), "sum"), "loss_type"),
        (lambda: aggregate(torch.zeros(2, 3), torch.ones(2, 3), "dr_grpo", max_completion_length=0), "max_completion"),
        (lambda: aggregate(torch.zeros(2, 3), torch.ones(2, 4)), "mask"),
        (lambda: policy_loss(torch.zeros(2, 3), None, None, t(1, 1), torch.ones(2, 3), beta=-0.1), "beta"),
        (lambda: policy_loss(torch.zeros(2, 3), None, None, t(1, 1), torch.ones(2, 3), beta=0.1), "ref_logp"),
        (lambda: policy_loss(torch.zeros(2, 3), None, None, t(1, 1), torch.ones(2, 3), clip_eps=-0.1), "clip_eps"),
        (lambda: policy_loss(torch.zeros(2, 3), None, None, t(1, 1), torch.ones(2, 3), clip_eps=1.5), "clip_eps"),
        (
            lambda: policy_loss(torch.zeros(2, 3), None, None, t(1, 1), torch.ones(2, 3), clip_eps_high=-1),
            "clip_eps_high",
        ),
        (lambda: policy_loss(torch.zeros(2, 3), torch.zeros(2, 2), None, t(1, 1), torch.ones(2, 3)), "old_logp"),
        (lambda: policy_loss(torch.zeros(2, 3), None, torch.zeros(3, 3), t(1, 1), torch.ones(2, 3)), "ref_logp"),
        (lambda: policy_loss(torch.zeros(2, 3), None, None, t(1, 1, 1), torch.ones(2, 3)), "advantages"),
        (lambda: policy_loss(torch.zeros(2, 3), None, None, t(1, 1), torch.ones(2, 3), loss_type="x"), "loss_type"),
        (lambda: clipped_surrogate(t(1.0), 1.0, clip_eps=1.5), "clip_eps"),
    ],
)
def test_bad_input_raises_value_error_naming_the_field(call, field):
    with pytest.raises(ValueError, match=field):
        call()


@pytest.mark.parametrize("G", [2, 5, 8])
@pytest.mark.parametrize("baseline,scale,ddof", list(itertools.product(["mean", "loo", "none"],
                                                                        ["group", "none"], [0, 1])))
def test_advantage_table_equals_group_advantages_on_shuffled_groups(G, baseline, scale, ddof):
    """Every 0/1 group with k correct, in any order, gets the table's A_correct / A_wrong."""
    table = grpo.advantage_table(G, baseline=baseline, scale=scale, ddof=ddof, eps=1e-4)  # (G+1, 2)
    gen = torch.Generator().manual_seed(G)
    for k in range(G + 1):
        r = torch.tensor([1.0] * k + [0.0] * (G - k), dtype=torch.float64)[torch.randperm(G, generator=gen)]
        adv = grpo.group_advantages(r, G, baseline=baseline, scale=scale, ddof=ddof, eps=1e-4)
        expect = torch.where(r > 0, table[k, 0], table[k, 1])
        torch.testing.assert_close(adv, expect, rtol=0, atol=1e-12)


def test_zero_std_on_tensors_and_arrays():
    r = [[1.0, 1.0, 1.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]
    assert grpo.zero_std(torch.tensor(r)).tolist() == [True, False, True]
    assert grpo.zero_std(np.array(r)).tolist() == [True, False, True]
