"""sim/kl_clip.py: the per-token KL estimators and PPO's clip, on the chapter's printed numbers."""

import numpy as np
import pytest

from sim.kl_clip import clip_example, kl_check, kl_estimators, surrogate_curve


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
