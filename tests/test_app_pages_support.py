"""sim/pages_support.py: the page-side views of sim.grpo, checked on the chapter's printed numbers."""

import numpy as np
import pytest

from sim.pages_support import clip_example, group_summary, kl_check, kl_estimators, surrogate_curve


def test_worked_group_one_zero_zero_one():
    # rewards 1,0,0,1: mean 0.5, population std 0.5 -> A = +-1 (up to eps = 1e-4); sample std sqrt(1/3) = 0.577
    g = group_summary([1, 0, 0, 1])
    assert g["mean"] == 0.5 and g["std_population"] == 0.5
    assert g["std_sample"] == pytest.approx(0.57735, abs=1e-5)
    np.testing.assert_allclose(g["advantages"], [1, -1, -1, 1], atol=1e-3)
    # TRL's sample std: 0.5 / 0.57735 = 0.866
    np.testing.assert_allclose(
        group_summary([1, 0, 0, 1], ddof=1)["advantages"], [0.866, -0.866, -0.866, 0.866], atol=1e-3
    )


def test_loss_reads_zero_while_gradient_does_not():
    # 1,0,0,0: std sqrt(0.25*0.75) = 0.433; A = 0.75/0.433 = 1.732 and -0.25/0.433 = -0.577
    g = group_summary([1, 0, 0, 0])
    np.testing.assert_allclose(g["advantages"], [1.732, -0.577, -0.577, -0.577], atol=1e-3)
    assert abs(g["loss"]) < 1e-12
    # d loss / d logp_i = -A_i / G  ->  norm = sqrt(sum A^2) / G = sqrt(G) / G = 0.5 (squares of A sum to G)
    assert g["grad_norm"] == pytest.approx(0.5, abs=1e-3)
    # all-equal group: zero advantages and zero gradient
    flat = group_summary([1, 1, 1, 1])
    assert flat["grad_norm"] == 0.0 and np.all(flat["advantages"] == 0)
    # without std the gradient norm shrinks to sqrt(0.75^2 + 3 * 0.25^2) / 4 = 0.2165
    assert group_summary([1, 0, 0, 0], scale_std=False)["grad_norm"] == pytest.approx(0.2165, abs=1e-4)


def test_kl_numeric_check_from_the_chapter():
    # pi = 0.6, pi_ref = 0.5: u = 0.833, k3 = 0.833 - log 0.833 - 1 = 0.0157, d k3 / d log pi = 1 - u = 0.167
    c = kl_check(0.6, 0.5)
    assert c["u"] == pytest.approx(0.8333, abs=1e-4)
    assert c["k3"] == pytest.approx(0.0157, abs=1e-4)
    assert c["dk3_dlogp"] == pytest.approx(0.1667, abs=1e-4)
    assert c["k1"] == pytest.approx(np.log(1.2))


def test_kl_estimators_properties():
    u = np.linspace(0.1, 3, 50)
    k = kl_estimators(u)
    assert np.all(k["k3"] >= 0) and np.all(k["k2"] >= 0)
    assert np.any(k["k1"] < 0)  # k1 = -log u is negative for u > 1
    one = kl_estimators([1.0])
    assert one["k1"][0] == one["k2"][0] == one["k3"][0] == 0.0
    with pytest.raises(ValueError, match="u = pi_ref / pi"):
        kl_estimators([0.0])


def test_clip_stops_the_push_at_040_to_050():
    # ratio 0.50 / 0.40 = 1.25 > 1.2: A > 0 gets no gradient
    c = clip_example(0.40, 0.50, 1.0, 0.2)
    assert c["ratio"] == pytest.approx(1.25) and c["clipped"] and c["slope"] == 0.0
    assert not clip_example(0.40, 0.45, 1.0, 0.2)["clipped"]  # 1.125 < 1.2 still pushed
    assert clip_example(0.40, 0.50, 1.0, 0.3)["slope"] == 1.0  # a wider clip lets it through


def test_surrogate_slopes_for_both_signs():
    rho = np.array([0.5, 0.9, 1.0, 1.1, 1.5])
    pos = surrogate_curve(rho, 1.0, 0.2)
    neg = surrogate_curve(rho, -1.0, 0.2)
    np.testing.assert_array_equal(pos["slope"], [1, 1, 1, 1, 0])  # flat past 1 + eps
    np.testing.assert_array_equal(neg["slope"], [0, -1, -1, -1, -1])  # flat below 1 - eps
    np.testing.assert_allclose(pos["surrogate"][2], 1.0)  # clip inert at ratio 1
