"""Tests of sim/toy/binomial.py: the sampler is the exact inverse CDF (every path: settled, row counts, bracket,
bdtr finish), has the binomial law, and its precomputed offsets change nothing."""

import numpy as np
import pytest
from scipy import stats
from scipy.special import bdtr

from sim.toy.binomial import BinomialSampler, binomial_pmf


@pytest.mark.parametrize("G", [2, 8, 64, 200])
def test_binomial_sampler_is_exact_inverse_cdf(G):
    sampler = BinomialSampler(G)
    rng = np.random.default_rng(G)
    grid = np.arange(sampler.N + 1) / sampler.N
    p = np.concatenate([rng.random(200_000 // G), [0.0, 1.0, 1e-12, 1 - 1e-12], grid, grid + 1e-13])
    p = np.clip(p, 0.0, 1.0)
    U = rng.random(p.shape)
    brute = (U[:, None] >= bdtr(np.arange(G + 1)[None, :], G, p[:, None])).sum(axis=1)  # min{k: U < F(k)}
    np.testing.assert_array_equal(sampler.invert(U, p), brute)


def test_binomial_sampler_distribution():
    # 200k draws at p = 0.3, G = 8: chi-square against the binomial pmf (deterministic seed).
    k = BinomialSampler(8)(np.random.default_rng(0), np.full(200_000, 0.3))
    observed = np.bincount(k, minlength=9)
    expected = stats.binom.pmf(np.arange(9), 8, 0.3) * k.size
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_careful_paths_are_both_tested():
    # G <= ROW_COUNT_MAX counts along both CDF rows; larger G uses the guide bracket (test above: G = 200).
    assert 64 <= BinomialSampler.ROW_COUNT_MAX < 200


def test_offsets_precomputed_change_nothing():
    sampler = BinomialSampler(8)
    rng = np.random.default_rng(1)
    p, U = rng.random((30, 24)), rng.random((30, 24))
    np.testing.assert_array_equal(sampler.invert(U, p, sampler.offsets(U)), sampler.invert(U, p))
    assert sampler.invert(U, p).dtype == np.intp and sampler.invert(U, p).shape == (30, 24)


def test_binomial_pmf_sums_to_one_and_matches_scipy():
    p = np.array([0.0, 1e-9, 0.3, 0.5, 1.0])
    pmf = binomial_pmf(p, 7)  # (5, 8)
    np.testing.assert_allclose(pmf.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(pmf, stats.binom.pmf(np.arange(8)[None], 7, p[:, None]), rtol=1e-10, atol=1e-300)
