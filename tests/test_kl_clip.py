"""sim/kl_clip.py: the per-token KL estimators and PPO's clip, on the chapter's printed numbers."""

import numpy as np
import pytest

from sim.kl_clip import clip_example, kl_check, kl_estimators, kl_monte_carlo, surrogate_curve


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


def test_monte_carlo_shows_bias_noise_and_sign():
    """pi = (0.6, 0.4) vs pi_ref = (0.5, 0.5): exact KL 0.0201. Expectations by hand: E[k1] = KL;
    E[k3] = E[u] - 1 - E[log u] = 0 + KL; E[k2] = 0.6 (log 1.2)^2/2 + 0.4 (log 0.8)^2/2 = 0.0199 (biased)."""
    mc = kl_monte_carlo([0.6, 0.4], [0.5, 0.5], [1, 10, 1000], repeats=4000, seed=1)
    exact = 0.6 * np.log(1.2) + 0.4 * np.log(0.8)
    assert mc["exact"] == pytest.approx(exact, abs=1e-15) and mc["exact"] == pytest.approx(0.0201, abs=1e-4)
    e_k2 = 0.6 * np.log(1.2) ** 2 / 2 + 0.4 * np.log(0.8) ** 2 / 2
    for name, expect in (("k1", exact), ("k3", exact), ("k2", e_k2)):
        se = mc[name]["std"] / np.sqrt(4000)
        assert np.all(np.abs(mc[name]["mean"] - expect) < 5 * se + 1e-12), name
    assert mc["k1"]["frac_negative"][0] == pytest.approx(0.4, abs=0.03)  # one token: negative when "other" is drawn
    assert (mc["k3"]["frac_negative"] == 0).all() and (mc["k2"]["frac_negative"] == 0).all()
    assert mc["k1"]["std"][0] > 3 * mc["k3"]["std"][0]  # k1 is the noisy one
    assert mc["k1"]["std"][2] < mc["k1"]["std"][0] / 20  # noise falls like 1/sqrt(n)
    with pytest.raises(ValueError, match="sum to 1"):
        kl_monte_carlo([0.6, 0.3], [0.5, 0.5], [1])


# ---- the clip's successors: gradient weight against the ratio (autograd on policy_loss) vs closed forms


def test_gradient_weights_against_closed_forms():
    from sim.kl_clip import RESPONSE_LENGTH, ClipView, objectives, weight_curves

    rho = np.linspace(0.2, 2.5, 47)
    view = ClipView()  # eps 0.2, eps high 0.28, delta 2, tau 1 / 1.05
    c = weight_curves(rho, view)
    inside = (rho >= 0.8) & (rho <= 1.2)
    # PPO: rho A inside the clip range; for A > 0 also below it (the min keeps rho A), 0 above; mirrored for A < 0
    np.testing.assert_allclose(c["PPO clip (grpo)"]["pos"], np.where(rho <= 1.2, rho, 0.0), atol=1e-12)
    np.testing.assert_allclose(c["PPO clip (grpo)"]["neg"], np.where(rho >= 0.8, -rho, 0.0), atol=1e-12)
    assert np.all(c["PPO clip (grpo)"]["pos"][inside] > 0)
    np.testing.assert_allclose(c["clip-higher (DAPO)"]["pos"], np.where(rho <= 1.28, rho, 0.0), atol=1e-12)
    np.testing.assert_allclose(c["two-sided (δ)"]["neg"], np.where((rho >= 0.8) & (rho <= 2.0), -rho, 0.0), atol=1e-12)
    np.testing.assert_allclose(c["CISPO"]["pos"], np.minimum(rho, 1.28), atol=1e-12)  # cap 1 + eps high
    np.testing.assert_allclose(c["CISPO"]["neg"], -np.minimum(rho, 1.28), atol=1e-12)  # never zero
    for key, sign, tau in (("pos", 1.0, 1.0), ("neg", -1.0, 1.05)):
        sig = 1 / (1 + np.exp(-tau * (rho - 1)))
        np.testing.assert_allclose(c["SAPO"][key], sign * 4 * sig * (1 - sig) * rho, atol=1e-12)
    s = rho ** (1 / RESPONSE_LENGTH)  # GSPO: the geometric mean with three tokens at ratio 1
    np.testing.assert_allclose(c["GSPO (sequence ratio)"]["pos"], np.where(s <= 1.2, s, 0.0), atol=1e-12)
    np.testing.assert_allclose(c["GSPO (sequence ratio)"]["neg"], np.where(s >= 0.8, -s, 0.0), atol=1e-12)
    assert set(objectives(view)) == set(c)


def test_chapter_token_under_each_objective():
    from sim.kl_clip import ClipView, chapter_token

    t = chapter_token(ClipView())
    w = t["weights"]
    # 0.50 / 0.40 = 1.25 > 1.2: PPO silences the token (weight 0); clip-higher (1.28) and CISPO (cap 1.28) keep 1.25
    assert t["ratio"] == pytest.approx(1.25) and w["PPO clip (grpo)"]["pos"] == 0.0
    assert w["clip-higher (DAPO)"]["pos"] == pytest.approx(1.25) and w["CISPO"]["pos"] == pytest.approx(1.25)
    # SAPO, tau = 1: 4 sigma(0.25) (1 - sigma(0.25)) * 1.25 = 4 * 0.562177 * 0.437823 * 1.25 = 1.2307
    assert w["SAPO"]["pos"] == pytest.approx(1.2307, abs=1e-4)
    # GSPO: s = 1.25 ** (1/4) = 1.0574 < 1.2, still pushed, with the response's ratio
    assert t["sequence_ratio"] == pytest.approx(1.0574, abs=1e-4)
    assert w["GSPO (sequence ratio)"]["pos"] == pytest.approx(t["sequence_ratio"])
    # A < 0 at 1.25: inside every lower clip, so every objective pushes it down (PPO: -1.25)
    assert w["PPO clip (grpo)"]["neg"] == pytest.approx(-1.25) and w["two-sided (δ)"]["neg"] == pytest.approx(-1.25)
    with pytest.raises(ValueError, match="probabilities"):
        chapter_token(ClipView(), 0.0, 0.5)
