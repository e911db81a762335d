"""sim/yourdata/plan.py: the all-wrong / all-correct estimators against brute-force enumeration, exact expectations and
sampling; the pool's curves, batch costs, pass@k, never-teach prompts and the toy's difficulties."""

from __future__ import annotations

import itertools
from fractions import Fraction
from math import comb

import numpy as np
import pytest
from scipy.special import expit

from sim.exercises import p_no_signal
from sim.passk import mean_pass_at_k, p_none_correct, pass_at_k
from sim.yourdata.plan import (
    GROUP_SIZES,
    PlanConfig,
    Pool,
    batch_costs,
    estimator_note,
    load_pool,
    never_teach,
    no_signal_curves,
    p_all_same,
    plan,
    text_report,
    toy_difficulties,
)
from sim.yourdata.plan import mean_pass_at_k as pool_pass_at_k


def counts_pool(c, n, ids=None) -> Pool:
    c, n = np.asarray(c, dtype=np.int64), np.broadcast_to(np.asarray(n, dtype=np.int64), np.shape(c)).copy()
    return Pool("t.csv", c / n, c, n, ids, tuple(range(2, 2 + c.size)))


def rates_pool(p) -> Pool:
    p = np.asarray(p, dtype=float)
    return Pool("t.csv", p, None, None, None, tuple(range(2, 2 + p.size)))


# ---- the estimator: brute force, exact expectation, sampling ------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_all_correct_and_all_wrong_match_enumerating_every_subset(n):
    """Oracle: draw G of the n samples (c correct) in every possible way; count the draws all correct / all
    wrong. That share is C(c, G)/C(n, G) (C(n - c, G)/C(n, G))."""
    for c in range(n + 1):
        samples = [1] * c + [0] * (n - c)
        for G in range(1, n + 1):
            draws = list(itertools.combinations(samples, G))
            right = sum(all(d) for d in draws) / len(draws)
            wrong = sum(not any(d) for d in draws) / len(draws)
            e = p_all_same(counts_pool([c], n), G)
            assert e["all_correct"][0] == pytest.approx(right, abs=1e-12)
            assert e["all_wrong"][0] == pytest.approx(wrong, abs=1e-12)
            assert e["unbiased"][0]


@pytest.mark.parametrize("n, G", [(8, 8), (8, 3), (16, 8), (64, 64), (10, 2)])
def test_the_estimates_are_unbiased_for_p_to_the_G(n, G):
    """Exact: averaged over c ~ Binomial(n, p), C(c, G)/C(n, G) is p^G and C(n - c, G)/C(n, G) is (1 - p)^G."""
    for p in (Fraction(1, 20), Fraction(1, 3), Fraction(9, 10)):
        binom = [comb(n, c) * p**c * (1 - p) ** (n - c) for c in range(n + 1)]  # exact Binomial(n, p)
        mean_right = sum(b * Fraction(comb(c, G), comb(n, G)) for c, b in enumerate(binom))
        mean_wrong = sum(b * Fraction(comb(n - c, G), comb(n, G)) for c, b in enumerate(binom))
        assert mean_right == p**G and mean_wrong == (1 - p) ** G
        # the float implementation, averaged the same way
        cs = np.arange(n + 1)
        w = np.array([float(b) for b in binom])
        e = p_all_same(counts_pool(cs, n), G)
        assert (w * e["all_correct"]).sum() == pytest.approx(float(p**G), rel=1e-9, abs=1e-300)
        assert (w * e["all_wrong"]).sum() == pytest.approx(float((1 - p) ** G), rel=1e-9)


def test_the_estimates_match_sampling_groups_from_the_samples():
    """Draw G of a prompt's n samples without replacement, 200,000 times: the share all correct / all wrong
    is within 4 standard errors of the estimate."""
    rng = np.random.default_rng(0)
    n, G, trials = 20, 5, 200_000
    for c in (3, 10, 17):
        samples = np.array([1] * c + [0] * (n - c))
        draws = samples[np.argsort(rng.random((trials, n)), axis=1)[:, :G]]  # (trials, G) without replacement
        e = p_all_same(counts_pool([c], n), G)
        for share, est in ((draws.all(axis=1).mean(), e["all_correct"][0]), ((draws == 0).all(axis=1).mean(),
                                                                               e["all_wrong"][0])):
            se = np.sqrt(max(est * (1 - est), 1e-12) / trials)
            assert abs(share - est) <= 4 * se + 1e-12, (c, share, est)


def test_millions_of_samples_stay_finite_and_exact():
    n, c, G = 3_000_000, 1_234_567, 64
    e = p_all_same(counts_pool([c], n), G)
    exact_right = Fraction(comb(c, G), comb(n, G))
    exact_wrong = Fraction(comb(n - c, G), comb(n, G))
    assert e["all_correct"][0] == pytest.approx(float(exact_right), rel=1e-8)
    assert e["all_wrong"][0] == pytest.approx(float(exact_wrong), rel=1e-8)
    assert np.isfinite(p_none_correct(10**9, 5 * 10**8, 64))


def test_fewer_samples_than_G_hold_the_estimate_at_n_and_say_so():
    pool = counts_pool([1, 3, 0], [4, 16, 4])  # n = 4 < G = 8 for two prompts
    e = p_all_same(pool, 8)
    assert e["unbiased"].tolist() == [False, True, False]
    # held at G = n = 4: C(3, 4)/C(4, 4) = 0 and C(1, 4)/C(4, 4) = 0 for c = 1; C(4, 4)/C(4, 4) = 1 for c = 0
    assert e["all_correct"][0] == 0.0 and e["all_wrong"][0] == 0.0
    assert e["all_wrong"][2] == 1.0  # c = 0: never solved, all wrong at every G
    assert e["all_wrong"][1] == pytest.approx(comb(13, 8) / comb(16, 8))
    note = estimator_note(pool, 8)
    assert "2 prompts have n < G = 8 samples" in note and "held at its value at G = n" in note
    assert no_signal_curves(pool)["past_n"][GROUP_SIZES.tolist().index(8)] == pytest.approx(2 / 3)
    assert "true p" in estimator_note(rates_pool([0.5]), 8)


@pytest.mark.parametrize("seed", range(6))
def test_the_dead_share_and_pass_at_k_are_monotone_for_any_pool(seed):
    """Issue 34 item 6: a pool with n of 8 and 16 gave 0.390 dead at G = 16 and 0.455 at G = 17, and pass@16 0.7985 >
    pass@32 0.7910 (the plug-in past n jumped back up). Property: for random pools of mixed n, every prompt's
    all-wrong and all-correct estimates fall as G grows, so the pool's dead share does, and pass@k rises in k."""
    rng = np.random.default_rng(seed)
    n = rng.choice([1, 2, 3, 8, 16, 40, 64, 100], size=200)
    c = rng.binomial(n, rng.beta(0.6, 0.6, size=200))
    pool = counts_pool(c, n)
    curves = no_signal_curves(pool, np.arange(1, 130))
    for k in ("all_wrong", "all_correct", "no_signal"):
        assert np.all(np.diff(curves[k]) <= 1e-12), k
    pk = pool_pass_at_k(pool, ks=np.arange(1, 1100))
    assert np.all(np.diff(pk["mean"]) >= -1e-12)
    each = np.array([p_all_same(pool, G)["all_wrong"] for G in range(1, 130)])  # (G, P)
    assert np.all(np.diff(each, axis=0) <= 1e-12)


def test_the_issues_pool_of_n_8_and_16_no_longer_jumps_at_g_17():
    text = "correct,samples\n" + "".join(f"{c},{n}\n" for n in (8, 16) for c in range(n + 1))
    pool = load_pool(text.encode(), "mixed.csv")
    curves = no_signal_curves(pool)
    i16 = GROUP_SIZES.tolist().index(16)
    # past n each prompt is held at [c = 0] (all wrong) and [c = n] (all correct): 4 of the 26 prompts
    assert curves["no_signal"][i16] == curves["no_signal"][i16 + 1] == pytest.approx(4 / 26)
    pk = pool_pass_at_k(pool, ks=[16, 32])
    assert pk["mean"][0] == pk["mean"][1] == pytest.approx(24 / 26)  # held at pass@n = [c > 0]


def test_grouping_by_distinct_counts_equals_the_prompt_by_prompt_formula():
    """p_all_same computes each distinct (n, c) once: the same numbers as the formula prompt by prompt."""
    rng = np.random.default_rng(1)
    n = rng.integers(1, 40, size=300)
    c = rng.integers(0, n + 1)
    pool = counts_pool(c, n)
    for G in (2, 8, 33):
        e = p_all_same(pool, G)
        for i in range(300):
            if n[i] >= G:
                assert e["all_wrong"][i] == pytest.approx(comb(n[i] - c[i], G) / comb(n[i], G), abs=1e-12)
                assert e["all_correct"][i] == pytest.approx(comb(c[i], G) / comb(n[i], G), abs=1e-12)
            else:  # held at G = n: all wrong only if never solved
                assert e["all_wrong"][i] == float(c[i] == 0) and e["all_correct"][i] == float(c[i] == n[i])


# ---- the pool ---------------------------------------------------------------------------------------------

def test_the_chapters_prompt_p_005_in_a_pool():
    """Chapter 15: p = 0.05 yields signal 34% of the time with G = 8, 96% with G = 64."""
    curves = no_signal_curves(rates_pool([0.05] * 10))
    G = curves["group_sizes"].tolist()
    assert 1 - curves["no_signal"][G.index(8)] == pytest.approx(1 - 0.95**8 - 0.05**8)  # 0.3366
    assert round(1 - curves["no_signal"][G.index(8)], 2) == 0.34 and round(1 - curves["no_signal"][-1], 2) == 0.96


def test_a_spread_pool_wastes_at_least_what_equal_prompts_would():
    """Jensen: with known rates, mean_j p_j^G + (1 - p_j)^G >= r^G + (1 - r)^G at the mean rate r."""
    rng = np.random.default_rng(2)
    for _ in range(20):
        curves = no_signal_curves(rates_pool(rng.beta(0.5, 0.5, size=50)))
        assert np.all(curves["no_signal"] >= curves["equal_difficulty"] - 1e-12)
    same = no_signal_curves(rates_pool([0.3] * 5))
    np.testing.assert_allclose(same["no_signal"], p_no_signal(0.3, GROUP_SIZES))
    np.testing.assert_allclose(same["no_signal"], same["equal_difficulty"])


def test_batch_costs_worked_numbers():
    # B = 64 prompts, G = 8, half the groups dead: 512 answers, 256 wasted, 32 with signal; dynamic sampling
    # draws 64 / (1 - 0.5) = 128 groups, 1,024 answers. All dead: the batch never fills.
    c = batch_costs(np.array([0.5, 1.0]), np.array([8, 8]), 64)
    assert c["wasted_answers"].tolist() == [256.0, 512.0] and c["signal_groups"].tolist() == [32.0, 0.0]
    assert c["ds_groups"].tolist() == [128.0, np.inf] and c["ds_answers"][0] == 1024.0


def test_pool_pass_at_k_is_the_shared_estimator():
    rng = np.random.default_rng(3)
    c = rng.integers(0, 65, size=40)
    got = pool_pass_at_k(counts_pool(c, 64), ks=[1, 2, 8, 64])
    np.testing.assert_allclose(got["mean"], mean_pass_at_k(64, c, [1, 2, 8, 64]))
    assert got["unbiased"].tolist() == [1.0] * 4
    mixed = pool_pass_at_k(counts_pool([1, 2], [4, 64]), ks=[8])  # n = 4 < 8: held at pass@4 = 1 (c = 1 > 0)
    assert mixed["mean"][0] == pytest.approx((1 + float(pass_at_k(64, 2, 8))) / 2)
    assert mixed["unbiased"].tolist() == [0.5]


def test_never_teach_and_the_rule_of_three():
    pool = counts_pool([0, 3, 64, 0], 64, ids=("a", "b", "c", "=d"))
    nt = never_teach(pool)
    assert nt["all_wrong"]["rows"] == [0, 3] and nt["all_wrong"]["ids"] == ["a", "=d"]
    assert nt["all_wrong"]["lines"] == [2, 5] and nt["all_correct"]["count"] == 1
    # 0 of 64: the true rate may be up to 3/64 = 0.047, where G = 64 gives signal 1 - (61/64)^64 = 95%
    assert nt["rule_of_three"]["rate_up_to"] == pytest.approx(3 / 64)
    assert nt["rule_of_three"]["signal_at_64_up_to"] == pytest.approx(1 - (61 / 64) ** 64)
    curves = no_signal_curves(pool)
    assert curves["all_wrong"][-1] >= 0.5  # the two c = 0 prompts are all wrong at every G


def test_toy_difficulties_start_the_toy_at_the_pools_rates():
    d, how = toy_difficulties(rates_pool([0.9, 0.1, 0.5, 0.0]))
    np.testing.assert_allclose(expit(-d), [0.9, 0.5, 0.1, expit(-10)])  # easy to hard; a rate of 0 at d = 10
    assert "one toy prompt per prompt (4)" == how


def test_a_large_pool_becomes_its_quantiles():
    rng = np.random.default_rng(4)
    rates = rng.beta(0.7, 1.5, size=10_000)
    d, how = toy_difficulties(rates_pool(rates))
    toy = expit(-d)
    assert d.size == 256 and "256 toy prompts at the quantiles of the 10,000 rates" in how
    assert np.all(np.diff(d) >= 0)  # easy to hard
    assert np.isin(np.round(toy, 12), np.round(np.clip(rates, expit(-10), expit(10)), 12)).all()  # actual rates
    # toy prompt i (hardest last) stands for the pool's rates around quantile (i + 1/2)/256
    for i in (0, 64, 128, 255):
        level = 1 - (i + 0.5) / 256
        assert abs(np.mean(rates <= toy[i]) - level) <= 1 / 256 + 1e-9
    assert abs(toy.mean() - rates.mean()) < 0.01


def test_plan_and_its_report():
    text = "prompt,correct,samples\n" + "".join(f"p{i},{i % 9},8\n" for i in range(90))
    pool = load_pool(text.encode(), "pool.csv")
    p = plan(pool, PlanConfig(group_size=4, batch_prompts=10))
    i = p["group_sizes"].index(4)
    assert p["at_group_size"]["no_signal"] == pytest.approx(p["no_signal"][i])
    # c = 0 and c = 8 of 8 prompts are 2 in 9: never teach at any G
    assert p["never_teach"]["all_wrong"]["count"] == 10 and p["never_teach"]["all_correct"]["count"] == 10
    assert p["batch"]["wasted_answers"][i] == pytest.approx(10 * 4 * p["no_signal"][i])
    assert p["toy"]["reduction"] == "one toy prompt per prompt (90)" and len(p["toy"]["difficulties"]) == 90
    report = text_report(p)
    assert "pool.csv: 90 prompts" in report and "<- G" in report and "10 never solved (c = 0)" in report
    with pytest.raises(ValueError, match="group_size"):
        PlanConfig(group_size=65)


def test_the_toy_on_a_pool_starts_at_its_rates_and_moves_dead_groups_to_all_correct():
    from sim.toy import ToyConfig

    pool = rates_pool(np.linspace(0.05, 0.95, 30))
    d, _ = toy_difficulties(pool)
    toy = ToyConfig(n_prompts=30, difficulties=tuple(map(float, d)), group_size=8, iterations=100)
    t = plan(pool, PlanConfig(), toy)["toy"]["expected_run"]
    assert t["accuracy_first"] == pytest.approx(0.5)  # the toy starts at the pool's own mean rate
    assert t["accuracy_last"] > 0.9 and t["all_correct_last"] > t["all_correct_first"]
    assert t["all_wrong_last"] < t["all_wrong_first"]
