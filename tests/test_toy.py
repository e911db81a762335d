"""Tests of sim/toy/: the count-based fast path against sim.grpo + autograd, the exact binomial sampler,
the chapter's story under the defaults, and the run's contracts (seeds, prefix, validation)."""

import dataclasses
import itertools
import json

import numpy as np
import pytest
import torch
from scipy import stats

from sim import grpo
from sim.exercises import p_no_signal
from sim.toy import (
    STEP_METRICS,
    ToyConfig,
    advantage_table,
    count_update,
    expected_run,
    history_rows,
    make_difficulties,
    memory_mb,
    policy,
    reference_update,
    run_toy,
    run_toy_reference,
)
from sim.toy.model import bernoulli_entropy, bernoulli_kl, no_signal
from sim.toy.update import surrogate_grad


def get(h, name):
    """A history array by name: a state attribute or a step metric (TRL's names)."""
    return h.metrics[name] if name in h.metrics else getattr(h, name)


# ------------------------------------------------------------------------------------------------
# The fast path equals the reference (sim.grpo + autograd) on the same samples


def test_toy_advantage_table_chapter_example():
    # Chapter: rewards 1, 0, 0, 1 -> advantages +1, -1, -1, +1 (mean 0.5, population std 0.5; eps 1e-4
    # makes them 0.5 / 0.5001 = 0.9998). TRL's sample std sqrt(1/3) = 0.57735 gives 0.866.
    a_c, a_w = advantage_table(ToyConfig(group_size=4))
    assert a_c[2] == pytest.approx(0.5 / 0.5001) and a_w[2] == pytest.approx(-0.5 / 0.5001)
    a_c, _ = advantage_table(ToyConfig(group_size=4, ddof=1, eps=1e-8))
    assert a_c[2] == pytest.approx(0.5 / np.sqrt(1 / 3), rel=1e-7)
    # scale "batch" is not a table over k: the toy keeps it unscaled and divides by the batch std itself
    unscaled = advantage_table(ToyConfig(scale="none"))
    np.testing.assert_array_equal(advantage_table(ToyConfig(scale="batch"))[0], unscaled[0])


UPDATE_CASES = {
    "chapter default": dict(),
    "kl beta": dict(beta=0.3),
    "mu 4 clipped": dict(mu=4, lr=3.0, clip_eps=0.2, clip_eps_high=0.28, beta=0.05),
    "batch std sample": dict(scale="batch", ddof=1, lr=0.7),
    "rloo": dict(baseline="loo", mu=2, lr=2.0),
    "dr grpo no baseline": dict(baseline="none", scale="none", beta=0.1),
    "separate lr_w": dict(lr=0.5, lr_w=0.05, mu=3),
    "cispo mu 4 capped": dict(loss_type="cispo", mu=4, lr=3.0, clip_eps_high=1.1, beta=0.05),
    "cispo eps_max = clip_eps": dict(loss_type="cispo", mu=2, lr=2.0),  # TRL's reading: the weight capped at 0.2
    "cispo dynamic batch std": dict(loss_type="cispo", mu=3, lr=2.0, clip_eps_high=5.0, scale="batch", ddof=1),
}


def _cispo_loss(logp, old_logp, ref_logp, advantages, mask, *, loss_type, beta=0.0, clip_eps=0.2,
                clip_eps_high=None, **_):
    """CISPO by its equation (MiniMax-M1; TRL 1.16.0 loss_type="cispo", epsilon_high read as eps_max), for
    autograd, with one token per response (every aggregation is then the token mean):

        loss = mean_i [-sg(min(rho_i, eps_max)) A_i log pi_i + beta k3_i]
    """
    eps_max = clip_eps if clip_eps_high is None else clip_eps_high
    ratio = torch.exp(logp - old_logp)
    A = advantages.reshape(-1, 1)
    u = torch.exp(ref_logp - logp)
    k3 = u - (ref_logp - logp) - 1.0
    per_token = -torch.clamp(ratio, max=eps_max).detach() * A * logp + beta * k3
    capped = ((ratio > eps_max) & (A > 0)).to(logp.dtype)
    return per_token.mean(), {"kl": float(k3.detach().mean()), "cispo_clip_ratio": float(capped.mean())}


@pytest.fixture
def cispo_in_grpo(monkeypatch):
    """The reference takes every loss from sim.grpo.policy_loss. Where sim.grpo does not have CISPO yet, it
    gets CISPO's equation above; where it has it, the test uses sim.grpo's own."""
    if "cispo" in grpo.LOSS_TYPES:
        return
    real = grpo.policy_loss

    def policy_loss(*args, loss_type="grpo", **kw):
        return (_cispo_loss if loss_type == "cispo" else real)(*args, loss_type=loss_type, **kw)

    monkeypatch.setattr(grpo, "policy_loss", policy_loss)


def _random_state(rng, P):
    w = rng.normal()
    u = rng.normal(size=P)
    d = np.linspace(-2, 3, P)
    z_ref = rng.normal(size=P) * 0.5 + (w + u - d)  # a reference away from the current policy: KL > 0
    return w, u, d, z_ref


@pytest.mark.parametrize("name", list(UPDATE_CASES))
@pytest.mark.parametrize("dynamic", [False, True])
def test_count_update_equals_reference(name, dynamic, cispo_in_grpo):
    """Same sampled answers -> same update, to 1e-10: count path (numpy) vs sim.grpo + autograd (torch)."""
    cfg = ToyConfig(n_prompts=6, group_size=5, dynamic_sampling=dynamic, **UPDATE_CASES[name])
    rng = np.random.default_rng(7)
    for _ in range(3):
        w, u, d, z_ref = _random_state(rng, 6)
        p = 1 / (1 + np.exp(-(w + u - d)))
        if dynamic:  # a DAPO batch: any prompts, repeats allowed, no flat groups
            prompt = rng.integers(0, 6, size=9)
            rewards = (rng.random((9, 5)) < p[prompt, None]).astype(float)
            rewards[:, 0], rewards[:, 1] = 1.0, 0.0
        else:
            prompt = np.arange(6)
            rewards = (rng.random((6, 5)) < p[:, None]).astype(float)
            rewards[0], rewards[1] = 1.0, 0.0  # one all-correct and one all-wrong group
        w_ref, u_ref, m_ref = reference_update(w, u, prompt, rewards, cfg, d, z_ref)
        k = rewards.sum(axis=1)[None]
        w_new, u_new, m = count_update(np.array([w]), u[None], None if not dynamic else prompt[None], k,
                                       np.ones_like(k), cfg, d, z_ref[None])
        assert abs(w_new[0] - w_ref) < 1e-10
        np.testing.assert_allclose(u_new[0], u_ref, atol=1e-10, rtol=0)
        for key in ("loss", "grad_norm", "kl", "mean_abs_adv", "clip_ratio/region_mean"):
            assert abs(m[key][0] - m_ref[key]) < 1e-10, key
        if name in ("mu 4 clipped", "cispo mu 4 capped", "cispo eps_max = clip_eps"):
            assert m["clip_ratio/region_mean"][0] > 0  # the clip really acted, so the clipped branch is tested


def test_chapter_token_ppo_silences_cispo_keeps():
    """The chapter's token: pi rose 0.40 -> 0.50 (rho = 1.25 > 1 + 0.2) with A > 0. PPO's clip gives it no
    gradient; DAPO's clip-higher (0.28) still does; CISPO (eps_max 5) gives it rho A = 1.25 A."""
    a, rho = np.array([1.0, -1.0]), np.array([1.25, 1.25])
    s_ppo, clipped = surrogate_grad(a, rho, ToyConfig())
    np.testing.assert_array_equal(s_ppo, [0.0, -1.25])
    np.testing.assert_array_equal(clipped, [True, False])
    np.testing.assert_array_equal(surrogate_grad(a, rho, ToyConfig(clip_eps_high=0.28))[0], [1.25, -1.25])
    s_cispo, capped = surrogate_grad(a, rho, ToyConfig(loss_type="cispo", clip_eps_high=5.0))
    np.testing.assert_array_equal(s_cispo, [1.25, -1.25])
    assert not capped.any()


def test_count_update_eps_zero_batch_std_of_one_reward_equals_reference():
    # eps = 0 (allowed: one range for every config, sim/settings.py) and every reward 1: batch std 0. Both
    # paths leave the advantages undivided (group_advantages' rule) instead of 0 / 0 or 1 / 0.
    cfg = ToyConfig(n_prompts=3, group_size=4, scale="batch", baseline="none", eps=0.0)
    d = np.linspace(-2, 3, 3)
    rewards = np.ones((3, 4))
    w_ref, u_ref, _ = reference_update(0.0, np.zeros(3), np.arange(3), rewards, cfg, d, d * 0)
    k = rewards.sum(axis=1)[None]
    w_new, u_new, _ = count_update(np.zeros(1), np.zeros((1, 3)), None, k, np.ones_like(k), cfg, d, d[None] * 0)
    assert np.isfinite(w_ref) and abs(w_new[0] - w_ref) < 1e-10
    np.testing.assert_allclose(u_new[0], u_ref, atol=1e-10, rtol=0)


def test_count_update_empty_batch_is_no_update():
    cfg = ToyConfig(n_prompts=3)
    w, u = np.zeros(2), np.zeros((2, 3))
    k, weight = np.zeros((2, 3)), np.zeros((2, 3))
    w2, u2, m = count_update(w, u, np.zeros((2, 3), dtype=int), k, weight, cfg, np.zeros(3), np.zeros((2, 3)))
    assert (w2 == 0).all() and (u2 == 0).all() and (m["grad_norm"] == 0).all()


# ------------------------------------------------------------------------------------------------
# Closed forms


def test_no_signal_equals_p_no_signal():
    z = np.linspace(-30, 30, 601)
    p_c, p_w, _, _ = policy(z)
    for G in (2, 8, 64, 1024):
        np.testing.assert_allclose(no_signal(p_c, p_w, G), p_no_signal(1 / (1 + np.exp(-z)), G),
                                   rtol=1e-9, atol=1e-300)


def test_bernoulli_kl_and_entropy_equal_scipy():
    """Means over prompts of KL(pi || pi_ref) and H(pi) against scipy.stats.entropy on explicit [p, 1 - p]."""
    rng = np.random.default_rng(5)
    z, z_ref = rng.normal(size=(3, 7)) * 4, rng.normal(size=(3, 7)) * 4
    now, ref = policy(z), policy(z_ref)
    pk, qk = np.stack([now[0], now[1]]), np.stack([ref[0], ref[1]])  # (2, 3, 7)
    np.testing.assert_allclose(bernoulli_kl(*now, ref[2], ref[3]), stats.entropy(pk, qk).mean(axis=-1), rtol=1e-12)
    np.testing.assert_allclose(bernoulli_entropy(*now), stats.entropy(pk).mean(axis=-1), rtol=1e-12)


# ------------------------------------------------------------------------------------------------
# run_toy's loop equals the reference, iteration by iteration, on its own samples

RUN_CASES = UPDATE_CASES | {
    "cispo capped at rho = 1": dict(loss_type="cispo", clip_eps_high=0.9),  # the clip acts at mu = 1
    "explicit difficulties": dict(n_prompts=3, difficulties=(-1.0, 0.5, 4.0), u_init=0.3, w_init=-0.2),
}


def replay_with_reference(h) -> int:
    """Re-does every iteration of the history h with reference_update (every answer, sim.grpo + autograd),
    from h's own state t and its own batch, and asserts that it gives h's state t + 1 and its metrics.
    Without dynamic sampling the batch is the first draws, h.counts[t]; with it, the refills are drawn
    again by runs._refill from the same keys (the sampler is not what is checked here: the update is).
    Returns the number of flat groups (all correct or all wrong) met, so a caller can ask for some."""
    from sim.rng import toy_keys
    from sim.toy.binomial import binomial_sampler
    from sim.toy.model import init_state
    from sim.toy.runs import _refill

    cfg = h.config
    S, G, P = cfg.n_seeds, cfg.group_size, len(h.difficulties)
    z_ref = init_state(cfg, S)[3]
    keys = toy_keys(cfg.seed, S)
    for t in range(cfg.iterations):
        k0 = h.counts[t].astype(np.intp)
        if cfg.dynamic_sampling:
            prompt, k, weight, answers = _refill(keys, t, k0, h.p[t], cfg, binomial_sampler(G))
        else:
            prompt, k, weight, answers = np.tile(np.arange(P), (S, 1)), k0, np.ones((S, P)), np.full(S, G * P)
        np.testing.assert_array_equal(h.answers[t + 1] - h.answers[t], answers)
        for s in range(S):
            kept = weight[s] > 0
            rewards = (np.arange(G) < k[s, kept, None]).astype(float)  # k[s, n] correct answers, then wrong ones
            w, u, m = reference_update(h.w[t, s], h.u[t, s], prompt[s, kept], rewards, cfg, h.difficulties,
                                       z_ref[s])
            assert abs(h.w[t + 1, s] - w) < 1e-10, (t, s)
            np.testing.assert_allclose(h.u[t + 1, s], u, atol=1e-10, rtol=0, err_msg=f"u at {t, s}")
            for key, value in m.items():
                assert abs(h.metrics[key][t, s] - value) < 1e-10, (key, t, s)
            assert h.metrics["n_groups"][t, s] == kept.sum()
    return int(((h.counts == 0) | (h.counts == G)).sum())


@pytest.mark.parametrize("name", list(RUN_CASES))
@pytest.mark.parametrize("dynamic", [False, True])
def test_run_toy_equals_reference_at_every_iteration(name, dynamic, cispo_in_grpo, one_torch_thread, monkeypatch):
    """The one training loop (update tables, arrays reused in place, metrics computed a few iterations at a
    time) against sim.grpo + autograd: every iteration's new parameters and metrics to 1e-10. Chunks of 4
    iterations, so that 10 iterations cross two chunk edges and end on a partial chunk."""
    import sim.toy.history

    extra = RUN_CASES[name]
    cfg = ToyConfig(**{"n_prompts": 6, "group_size": 5, "n_seeds": 2, "iterations": 10, "dynamic_sampling": dynamic,
                       **extra})
    monkeypatch.setattr(sim.toy.history, "CHUNK_CELLS", 4 * cfg.n_seeds * len(make_difficulties(cfg)))
    assert replay_with_reference(run_toy(cfg)) > 0  # flat groups occurred: the no-signal slots are covered


def test_run_toy_defaults_equal_reference_at_every_iteration(one_torch_thread, monkeypatch):
    """The chapter's defaults (24 prompts, G = 8), 4 seeds, over chunks of 6 iterations."""
    import sim.toy.history

    monkeypatch.setattr(sim.toy.history, "CHUNK_CELLS", 6 * 4 * 24)
    assert replay_with_reference(run_toy(ToyConfig(n_seeds=4, iterations=15))) > 0


@pytest.mark.parametrize("extra", [dict(beta=0.1), dict(dynamic_sampling=True, mu=2, scale="batch")])
def test_run_toy_does_not_depend_on_the_chunk_size(extra, monkeypatch):
    import sim.toy.history

    cfg = ToyConfig(n_seeds=3, iterations=23, **extra)
    a = run_toy(cfg)
    for cells in (4 * 3 * 24, 1):  # 4 iterations per chunk, then 1 (S * P > CHUNK_CELLS)
        monkeypatch.setattr(sim.toy.history, "CHUNK_CELLS", cells)
        b = run_toy(cfg)
        for field in ("counts", "p", "u", "w", "answers", "n_groups"):
            np.testing.assert_array_equal(get(a, field), get(b, field), err_msg=field)
        for field in ("kl_exact", "entropy", "expected_zero_frac", "loss", "kl", "mean_abs_adv", "grad_norm"):
            np.testing.assert_allclose(get(a, field), get(b, field), rtol=1e-14, atol=1e-15, err_msg=field)


def test_run_toy_where_sigmoid_underflows(monkeypatch):
    """policy() takes log sigmoid(z) ~ z where sigmoid(z) == 0 (z < -745 in float64), into run_toy's arrays
    too. Emulate the underflow at z < -20: the hardest prompt (d = 25) then has p = 0 and the run stays finite,
    with its log pi(correct) = z."""
    import sim.toy.model

    real = sim.toy.model.expit

    def expit_underflowing(z, out=None):
        p = np.where(z < -20, 0.0, real(z))
        if out is None:
            return p
        out[...] = p
        return out

    monkeypatch.setattr(sim.toy.model, "expit", expit_underflowing)
    z = np.array([-30.0, 0.0])
    np.testing.assert_array_equal(policy(z)[2], [-30.0, np.log(0.5)])
    h = run_toy(ToyConfig(d_max=25.0, iterations=20, n_seeds=2))
    assert (h.p[:, :, -1] == 0).all() and (h.counts[:, :, -1] == 0).all()
    for x in (h.kl_exact, h.entropy, h.u, *h.metrics.values()):
        assert np.isfinite(x).all()


# ------------------------------------------------------------------------------------------------
# Distribution of whole runs: fast path vs the per-answer torch reference


@pytest.fixture
def one_torch_thread():
    """The reference does thousands of tiny torch ops: one thread avoids thread-pool overhead on 2 cores."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize("extra", [dict(), dict(dynamic_sampling=True, max_redraws=2, mu=2, beta=0.1)])
def test_run_toy_same_distribution_as_reference(extra, one_torch_thread):
    """Different random streams, same law: two-sample KS on w after 3 iterations (and answers spent)."""
    cfg = ToyConfig(iterations=3, lr=0.5, **extra)
    fast = run_toy(dataclasses.replace(cfg, n_seeds=1000, seed=1))
    slow = run_toy_reference(dataclasses.replace(cfg, n_seeds=100, seed=2))
    assert stats.ks_2samp(fast.w[-1], slow.w[-1]).pvalue > 1e-3
    assert stats.ks_2samp(fast.accuracy[-1], slow.accuracy[-1]).pvalue > 1e-3
    if cfg.dynamic_sampling:
        assert stats.ks_2samp(fast.answers[-1], slow.answers[-1]).pvalue > 1e-3
    np.testing.assert_allclose(fast.p[0, 0], slow.p[0, 0])  # same initial state


def test_zero_gradient_fraction_matches_closed_form():
    """Sampled share of flat groups vs mean_j p_j^G + (1 - p_j)^G at the sampled state.

    Given the past, each group is flat with probability q_tsj, independently, so the sum of
    (indicator - q) over all T*S*P groups has standard deviation sqrt(sum q (1 - q)): allow 4 of them.
    """
    h = run_toy(ToyConfig(iterations=60, n_seeds=128, seed=3))
    q = p_no_signal(h.p[:-1], 8)  # (T, S, P)
    flat = (h.counts == 0) | (h.counts == 8)
    diff = (flat - q).sum()
    assert abs(diff) < 4 * np.sqrt((q * (1 - q)).sum())
    np.testing.assert_allclose(h.metrics["expected_zero_frac"], q.mean(axis=2), rtol=1e-9)
    np.testing.assert_allclose(h.metrics["frac_reward_zero_std"], flat.mean(axis=2))


# ------------------------------------------------------------------------------------------------
# The average run


def test_expected_run_one_step_equals_enumeration():
    """mu = 1: the expected update is the probability-weighted mean of count_update over every (k_1, k_2)."""
    cfg = ToyConfig(n_prompts=2, d_min=-0.5, d_max=1.0, group_size=3, lr=0.7, beta=0.2, iterations=1)
    d = make_difficulties(cfg)
    p = 1 / (1 + np.exp(d))
    w_sum, u_sum = 0.0, np.zeros(2)
    for k1, k2 in itertools.product(range(4), range(4)):
        prob = stats.binom.pmf(k1, 3, p[0]) * stats.binom.pmf(k2, 3, p[1])
        w1, u1, _ = count_update(np.zeros(1), np.zeros((1, 2)), None, np.array([[k1, k2]]), np.ones((1, 2)),
                                 cfg, d, -d[None])
        w_sum, u_sum = w_sum + prob * w1[0], u_sum + prob * u1[0]
    e = expected_run(cfg)
    assert e.w[1, 0] == pytest.approx(w_sum, abs=1e-12)
    np.testing.assert_allclose(e.u[1, 0], u_sum, atol=1e-12)


@pytest.mark.parametrize("extra", [dict(), dict(beta=0.1, baseline="loo", ddof=1, lr_w=0.05),
                                   dict(loss_type="cispo", beta=0.02, scale="none"), dict(n_prompts=3, group_size=64),
                                   dict(lr=100.0, beta=0.1, iterations=20)])
def test_expected_run_folded_equals_the_weighted_slots(extra):
    """mu = 1: one slot per prompt holding E[n] and E[n s] is count_update over the P (G + 1) weighted slots.
    Also where p rounds to 1 (z > 37): both take P(k) from the logs (expected_pmf), so a wrong answer's rare
    chance, whose KL gradient grows as 1 / pi, counts in both (lr 100: before they shared expected_pmf, the
    slots form lost it and the two differed by 5e-5 after 20 iterations)."""
    from sim.toy.runs import _expected_folded, _expected_slots

    cfg = ToyConfig(**{"iterations": 80, **extra})
    a, b = _expected_folded(cfg, None), _expected_slots(cfg, None)
    for field in ("u", "w", "p", "accuracy", "kl_exact", "counts", *STEP_METRICS):
        np.testing.assert_allclose(get(a, field), get(b, field), rtol=1e-9, atol=1e-12, err_msg=field)


@pytest.mark.parametrize("extra", [dict(), dict(dynamic_sampling=True, max_redraws=16, iterations=60)])
def test_expected_run_tracks_mean_of_sampled_runs(extra):
    """The average-run line vs the mean of 256 sampled runs (200 iterations; 60 with dynamic sampling,
    whose expected run assumes unlimited redraws: 16 rounds leave a slot empty with probability q^17).

    Tolerance 0.03 in accuracy: the seed mean has a standard error of about 0.005 here, and the
    deterministic path x + E[update | x] differs from E[x_t] by the curvature of the update (small for lr 0.2).
    """
    cfg = ToyConfig(**extra)
    h, e = run_toy(dataclasses.replace(cfg, n_seeds=256)), expected_run(cfg)
    assert np.abs(h.accuracy.mean(axis=1) - e.accuracy[:, 0]).max() < 0.03
    assert np.abs(h.metrics["frac_all_correct"].mean(axis=1) - e.metrics["frac_all_correct"][:, 0]).max() < 0.05
    assert np.abs(h.answers[-1].mean() / e.answers[-1, 0] - 1) < 0.02


# ------------------------------------------------------------------------------------------------
# The chapter's story under the defaults


def test_defaults_show_the_chapter_story():
    h = run_toy(ToyConfig(n_seeds=64, seed=11))
    acc = h.accuracy.mean(axis=1)
    assert acc[0] == pytest.approx(0.245, abs=0.005)  # mean_j sigmoid(-d_j), d from -2 to 7
    assert acc[200] > 0.9
    hardest = h.p[:, :, -1]  # (T+1, S)
    assert (hardest[:80] < 0.1).all(axis=0).mean() >= 0.9  # stuck while its groups are all wrong
    assert hardest[200].mean() > 0.3  # then lifted once w has risen
    assert (h.w[200] > 3).all()
    easiest = h.p[:, :, 0]
    assert (easiest[50] > 0.97).all()  # easy prompts saturate early
    allc = h.metrics["frac_all_correct"].mean(axis=1)
    assert allc[:20].mean() < 0.1 and allc[-20:].mean() > 0.6  # wasted all-correct groups climb
    assert (np.diff(h.entropy.mean(axis=1)[20:]) < 0.01).all()  # entropy falls once learning starts


# ------------------------------------------------------------------------------------------------
# Contracts: seeds, prefix, validation, export


@pytest.mark.parametrize("extra", [dict(), dict(dynamic_sampling=True, mu=2, beta=0.1)])
def test_same_seed_same_history_and_prefix(extra):
    cfg = ToyConfig(iterations=40, n_seeds=5, **extra)
    a, b = run_toy(cfg), run_toy(cfg)
    short = run_toy(dataclasses.replace(cfg, iterations=15))
    for name in ("p", "w", "counts", "answers", "loss", "grad_norm", "kl", "frac_all_correct"):
        np.testing.assert_array_equal(get(a, name), get(b, name))
        np.testing.assert_array_equal(get(a, name)[: get(short, name).shape[0]], get(short, name))
    other = run_toy(dataclasses.replace(cfg, seed=1))
    assert not np.array_equal(a.counts, other.counts)


def test_history_shapes_and_finite():
    cfg = ToyConfig(iterations=7, n_seeds=3, n_prompts=5, beta=0.1)
    h = run_toy(cfg)
    assert h.p.shape == h.u.shape == (8, 3, 5) and h.counts.shape == (7, 3, 5)
    for name in ("accuracy", "w", "kl_exact", "entropy", "answers"):
        assert getattr(h, name).shape == (8, 3)
    assert set(h.metrics) == set(STEP_METRICS)
    for name in STEP_METRICS:
        assert h.metrics[name].shape == (7, 3)
        assert np.isfinite(h.metrics[name]).all()
    assert (h.kl_exact[0] == 0).all() and (h.kl_exact[1:] > 0).all()
    np.testing.assert_allclose(h.metrics["reward"], h.counts.mean(axis=2) / 8)
    assert (h.answers[:, 0] == np.arange(8) * 5 * 8).all()
    np.testing.assert_allclose(h.entropy[0], np.mean([stats.bernoulli.entropy(x) for x in h.p[0, 0]]))


BAD = [
    ("group_size", 1), ("group_size", 1025), ("group_size", 2.5), ("lr", -0.1), ("lr", float("nan")),
    ("lr_w", float("inf")), ("beta", -1.0), ("iterations", 0), ("iterations", 5001), ("n_seeds", 0),
    ("n_seeds", 1025), ("scale", "std"), ("baseline", "median"), ("ddof", 2), ("mu", 0), ("clip_eps", 0.0),
    ("clip_eps_high", -0.1), ("eps", -1e-9), ("eps", 1.5), ("d_min", float("nan")), ("n_prompts", 0),
    ("max_redraws", -1), ("seed", -1), ("dynamic_sampling", "yes"), ("difficulties", (1.0, 2.0)),
    ("u_init", float("nan")),
]


@pytest.mark.parametrize("field,value", BAD)
def test_bad_config_names_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        ToyConfig(**{field: value})


def test_too_large_run_is_refused():
    # 3 arrays of 5001 x 1024 x 24 float64 = 2,950 MB, over the 480 MB cap: refused before any allocation
    with pytest.raises(ValueError, match=r"about 2,950 MB of memory .* the cap is 480 MB"):
        ToyConfig(iterations=5000, n_seeds=1024)
    assert memory_mb(ToyConfig(iterations=500, n_seeds=64)) == pytest.approx(3 * 8 * 501 * 64 * 24 / 1e6)


def test_divergence_is_an_error_or_finite():
    """Extreme settings never give a silent NaN history."""
    for cfg in (ToyConfig(lr=1000, beta=100, iterations=50), ToyConfig(lr=1000, scale="none", baseline="none")):
        try:
            h = run_toy(cfg)
        except ValueError as err:
            assert "diverged" in str(err)
        else:
            assert all(np.isfinite(get(h, n)).all() for n in ("p", "w", "kl_exact", "loss", "grad_norm"))


def test_history_rows():
    h = run_toy(ToyConfig(iterations=5, n_seeds=3, n_prompts=4))
    rows = history_rows(h)
    assert len(rows) == 6 and [r["iteration"] for r in rows] == list(range(6))
    assert rows[0]["frac_all_correct"] is None and rows[3]["frac_all_correct"] == pytest.approx(
        h.metrics["frac_all_correct"][2].mean())
    assert rows[3]["clip_ratio/region_mean"] == 0.0 and rows[3]["frac_reward_zero_std"] is not None
    assert rows[5]["accuracy"] == pytest.approx(h.accuracy[5].mean())
    assert rows[2]["p_3"] == pytest.approx(h.p[2, :, 3].mean())
    assert rows[4]["accuracy_seed1"] == pytest.approx(h.accuracy[4, 1])
    json.dumps(rows)  # plain Python values


def test_a_custom_advantage_table_trains_the_toy():
    """run_toy / expected_run with advantage_table = the config's own table change nothing; another table
    (no std division, written by hand as a student might) changes the run; a bad table is refused."""
    cfg = ToyConfig(iterations=30, n_seeds=4)
    own = advantage_table(cfg)
    np.testing.assert_array_equal(run_toy(cfg, advantage_table=own).p, run_toy(cfg).p)
    np.testing.assert_array_equal(expected_run(cfg, advantage_table=own).p, expected_run(cfg).p)
    k = np.arange(9.0)
    no_std = (np.where(k > 0, 1 - k / 8, 0.0), np.where(k < 8, -k / 8, 0.0))  # r - mean, the Dr. GRPO table
    np.testing.assert_allclose(run_toy(cfg, advantage_table=no_std).p,
                               run_toy(dataclasses.replace(cfg, scale="none")).p, rtol=1e-12)
    with pytest.raises(ValueError, match="G \\+ 1 = 9"):
        run_toy(cfg, advantage_table=(k[:5], k[:5]))
    with pytest.raises(ValueError, match="NaN"):
        run_toy(cfg, advantage_table=(k * np.nan, k))
    with pytest.raises(ValueError, match="batch"):
        run_toy(dataclasses.replace(cfg, scale="batch"), advantage_table=own)
