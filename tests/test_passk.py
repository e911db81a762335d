"""pass@k: estimator vs brute force over subsets, exact big-integer binomials, known-p form, crossings."""

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from sim.passk import (
    crossover_k,
    mean_pass_at_k,
    mean_pass_at_k_known_p,
    pass_at_k,
    pass_at_k_curves,
    pass_at_k_known_p,
)


def brute_force_pass_at_k(n, c, k):
    """Fraction of k-subsets of n samples (the first c correct) holding at least one correct sample."""
    samples = [1] * c + [0] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    return sum(any(samples[i] for i in s) for s in subsets) / len(subsets)


@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_matches_brute_force_over_all_subsets(n):
    for c in range(n + 1):
        for k in range(1, n + 1):
            assert pass_at_k(n, c, k) == pytest.approx(brute_force_pass_at_k(n, c, k), abs=1e-12)


def test_small_worked_value():
    # n = 4, c = 1, k = 2: 1 - C(3,2)/C(4,2) = 1 - 3/6 = 0.5
    assert pass_at_k(4, 1, 2) == pytest.approx(0.5, abs=1e-12)
    # k = 1 is plain accuracy c/n
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3, abs=1e-12)


def test_n_1024_against_exact_big_integer_binomials():
    n = 1024
    rng = np.random.default_rng(0)
    cs = rng.integers(0, n + 1, size=40)
    ks = rng.integers(1, n + 1, size=40)
    got = pass_at_k(n, cs, ks)
    for c, k, g in zip(cs.tolist(), ks.tolist(), got, strict=True):
        exact = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
        assert g == pytest.approx(float(exact), rel=1e-9, abs=1e-12)


def test_n_1024_curves_are_finite_monotone_and_bounded():
    n = 1024
    correct = np.array([0, 1, 2, 10, 100, 512, 1000, 1024])
    curves = pass_at_k_curves(n, correct)  # (P, n)
    assert curves.shape == (8, n)
    assert np.all(np.isfinite(curves))
    assert np.all((curves >= 0) & (curves <= 1))
    assert np.all(np.diff(curves, axis=1) >= -1e-12)  # more tries never hurt
    assert np.all(curves[0] == 0.0) and np.all(curves[-1] == 1.0)
    # c = 1: the one correct sample is in a k-subset with probability k/n
    np.testing.assert_allclose(curves[1], np.arange(1, n + 1) / n, atol=1e-12)


def test_estimator_matches_known_p_form_in_expectation():
    # E over c ~ Binomial(n, p) of the estimator equals 1 - (1-p)^k exactly (it is unbiased).
    from scipy.stats import binom

    n, p = 64, 0.05
    cs = np.arange(n + 1)
    weights = binom.pmf(cs, n, p)  # (n+1,)
    for k in (1, 4, 16, 64):
        expected = float(np.sum(weights * pass_at_k(n, cs, k)))
        assert expected == pytest.approx(1 - (1 - p) ** k, abs=1e-10)


def test_n_1024_sampled_roughly_matches_known_p():
    rng = np.random.default_rng(1)
    p = np.array([0.001, 0.01, 0.05, 0.3, 0.9])  # (P,)
    correct = rng.binomial(1024, p)
    ks = np.array([1, 8, 64, 512])
    est = pass_at_k_curves(1024, correct, ks)  # (P, K)
    truth = pass_at_k_known_p(p[:, None], ks[None, :])
    assert np.max(np.abs(est - truth)) < 0.2  # one draw of n = 1024: close, not exact


def test_mean_curve_is_mean_of_problem_curves():
    correct = [0, 3, 7]
    np.testing.assert_allclose(mean_pass_at_k(8, correct), pass_at_k_curves(8, correct).mean(axis=0))


def test_known_p_form_chapter_numbers():
    # 1 - 0.95^64 = 1 - 0.037524 = 0.962476; 1 - 0.99^64 = 1 - 0.525596 = 0.474404
    assert pass_at_k_known_p(0.05, 64) == pytest.approx(0.962476, abs=1e-6)
    assert pass_at_k_known_p(0.01, 64) == pytest.approx(0.474404, abs=1e-6)
    assert pass_at_k_known_p(1.0, 3) == 1.0 and pass_at_k_known_p(0.0, 3) == 0.0
    # tiny p keeps its digits: 1 - (1 - 1e-12)^2 = 2e-12 - 1e-24
    assert pass_at_k_known_p(1e-12, 2) == pytest.approx(2e-12, rel=1e-9)
    np.testing.assert_allclose(mean_pass_at_k_known_p([0.6, 0.05], [1]), [0.325])


@pytest.mark.parametrize(
    ("n", "c", "k", "field"),
    [(4, 5, 1, "c"), (4, 1, 5, "k"), (4, -1, 1, "c"), (0, 0, 1, "n"), (4, 1, 0, "k"), (4, 1.5, 1, "c")],
)
def test_bad_input_names_the_field(n, c, k, field):
    with pytest.raises(ValueError, match=rf"^{field}"):
        pass_at_k(n, c, k)


def test_bad_p_and_k_in_known_p_form():
    with pytest.raises(ValueError, match="p"):
        pass_at_k_known_p(1.5, 2)
    with pytest.raises(ValueError, match="k"):
        pass_at_k_known_p(0.5, 0)


def test_crossover_on_straight_lines():
    ks = np.array([1.0, 2.0, 3.0, 4.0])
    a = np.array([4.0, 3.0, 2.0, 1.0])
    b = np.array([1.0, 2.0, 3.0, 4.0])  # a - b = 3, 1, -1, -3: root at k = 2.5
    assert crossover_k(ks, a, b, scale="linear") == pytest.approx(2.5)
    # in log k the root is at exp((log 2 + log 3) / 2) = sqrt(6)
    assert crossover_k(ks, a, b) == pytest.approx(math.sqrt(6))
    assert crossover_k(ks, b, a, scale="linear") == pytest.approx(2.5)  # symmetric


def test_crossover_none_touching_and_ties():
    ks = np.arange(1, 6)
    assert crossover_k(ks, ks + 1.0, ks * 1.0) is None  # always above
    assert crossover_k(ks, ks * 1.0, ks * 1.0) is None  # identical
    a = np.array([2.0, 1.0, 1.0, 1.0, 0.0])
    b = np.ones(5)  # d = 1, 0, 0, 0, -1: they first touch at k = 2
    assert crossover_k(ks, a, b) == 2.0
    a = np.array([2.0, 1.0, 1.0, 1.0, 2.0])  # touches but returns to the same side: no crossing
    assert crossover_k(ks, a, b) is None


def test_crossover_of_chapter_toy_curves():
    # after - before: k = 2: (0.4^2 - 0.02^2 + 0.95^2 - 0.99^2)/2 = (0.16 - 0.0004 + 0.9025 - 0.9801)/2 = +0.041
    #                 k = 3: (0.064 - 0.000008 + 0.857375 - 0.970299)/2 = -0.0245
    ks = np.arange(1, 65)
    before = mean_pass_at_k_known_p([0.6, 0.05], ks)
    after = mean_pass_at_k_known_p([0.98, 0.01], ks)
    x = crossover_k(ks, after, before, scale="linear")
    assert x == pytest.approx(2 + 0.041 / (0.041 + 0.024466), abs=1e-3)
    assert 2 < crossover_k(ks, after, before) < 3


def test_crossover_validates():
    with pytest.raises(ValueError, match="scale"):
        crossover_k([1, 2], [0, 1], [1, 0], scale="sqrt")
    with pytest.raises(ValueError, match="increasing"):
        crossover_k([2, 1], [0, 1], [1, 0])
    with pytest.raises(ValueError, match="equal length"):
        crossover_k([1, 2], [0, 1, 2], [1, 0])
