"""The KL leash and PPO's clip, one token at a time (Chapter 15, "Adding PPO's clip" and "Adding the KL leash").

Views over sim.grpo's estimators and surrogate, prepared for plotting: every number comes from a
sim.grpo function (k1_kl, k2_kl, k3_kl, clipped_surrogate), differentiated by autograd where a slope is
asked for. Plain floats and numpy arrays out. Shapes: N grid points.
"""

from __future__ import annotations

import numpy as np
import torch

from sim.grpo import clipped_surrogate, k1_kl, k2_kl, k3_kl


def kl_estimators(u) -> dict[str, np.ndarray]:
    """k1, k2, k3 per token as functions of u = pi_ref / pi (N,), via sim.grpo's estimators.

    Taking log pi = 0 and log pi_ref = log u gives exactly their ratio u.
    """
    u = torch.as_tensor(np.asarray(u, dtype=float))  # (N,)
    if torch.any(u <= 0):
        raise ValueError("u = pi_ref / pi must be > 0")
    logp, ref = torch.zeros_like(u), torch.log(u)
    return {"k1": k1_kl(logp, ref).numpy(), "k2": k2_kl(logp, ref).numpy(), "k3": k3_kl(logp, ref).numpy()}


def kl_check(pi: float, pi_ref: float) -> dict[str, float]:
    """The chapter's numeric check at one token: u, k1, k2, k3 and d k3 / d log pi (by autograd)."""
    if not (0 < pi <= 1 and 0 < pi_ref <= 1):
        raise ValueError("pi and pi_ref must be probabilities in (0, 1]")
    logp = torch.tensor(float(np.log(pi)), dtype=torch.float64, requires_grad=True)
    ref = torch.tensor(float(np.log(pi_ref)), dtype=torch.float64)
    k3 = k3_kl(logp, ref)
    (dk3,) = torch.autograd.grad(k3, logp)
    return {
        "u": pi_ref / pi,
        "k1": float(k1_kl(logp, ref).detach()),
        "k2": float(k2_kl(logp, ref).detach()),
        "k3": float(k3.detach()),
        "dk3_dlogp": float(dk3),
    }


def surrogate_curve(ratio, advantage: float, clip_eps: float) -> dict[str, np.ndarray]:
    """PPO's clipped surrogate and its slope d s / d rho over a grid of ratios (N,), for one A."""
    rho = torch.as_tensor(np.asarray(ratio, dtype=float)).requires_grad_(True)  # (N,)
    s = clipped_surrogate(rho, torch.tensor(float(advantage), dtype=torch.float64), clip_eps)
    (slope,) = torch.autograd.grad(s.sum(), rho)
    return {"ratio": rho.detach().numpy(), "surrogate": s.detach().numpy(), "slope": slope.numpy()}


def clip_example(p_old: float, p_new: float, advantage: float, clip_eps: float) -> dict[str, float]:
    """One token whose probability moved p_old -> p_new: its ratio, surrogate and whether the clip stops it.

    Chapter: 0.40 -> 0.50 gives ratio 1.25 > 1 + 0.2, so with A > 0 the token gets no more gradient.
    """
    if not (0 < p_old <= 1 and 0 < p_new <= 1):
        raise ValueError("p_old and p_new must be probabilities in (0, 1]")
    curve = surrogate_curve([p_new / p_old], advantage, clip_eps)
    return {
        "ratio": float(curve["ratio"][0]),
        "surrogate": float(curve["surrogate"][0]),
        "slope": float(curve["slope"][0]),
        "clipped": bool(curve["slope"][0] == 0.0 and advantage != 0.0),
    }


def kl_monte_carlo(pi, pi_ref, sample_sizes, *, repeats: int = 400, seed: int = 0) -> dict:
    """How k1, k2 and k3 estimate KL(pi || pi_ref) from n tokens sampled from pi (Schulman's comparison).

    pi and pi_ref are categorical distributions over the same V tokens (V,). For each n in
    `sample_sizes` (N,), draw n tokens from pi `repeats` times; each estimate is the mean of the
    per-token estimator over the n tokens (sim.grpo.k1_kl, k2_kl, k3_kl), computed from how often each
    token was drawn (a multinomial count, the same statistic as summing token by token). Returns
    {"exact": KL, "n": (N,), and per estimator {"mean", "std", "lo", "hi" (10/90% of the estimates),
    "frac_negative"} each (N,)}. What it shows: k1 is unbiased but noisy and often negative, k2 is never
    negative but biased, k3 is unbiased and never negative. Chapter's token: pi = (0.6, 0.4) against
    pi_ref = (0.5, 0.5), KL = 0.6 log 1.2 + 0.4 log 0.8 = 0.0201.
    """
    pi, ref = np.asarray(pi, dtype=float), np.asarray(pi_ref, dtype=float)
    if pi.shape != ref.shape or pi.ndim != 1 or np.any(pi <= 0) or np.any(ref <= 0):
        raise ValueError("pi and pi_ref must be positive probabilities over the same tokens")
    if abs(pi.sum() - 1) > 1e-9 or abs(ref.sum() - 1) > 1e-9:
        raise ValueError("pi and pi_ref must each sum to 1")
    ns = np.asarray(sample_sizes, dtype=int)
    if ns.ndim != 1 or ns.size == 0 or ns.min() < 1 or ns.max() > 100_000:
        raise ValueError("sample sizes must be integers in [1, 100000]")
    rng = np.random.default_rng(seed)
    logp, logr = torch.log(torch.as_tensor(pi)), torch.log(torch.as_tensor(ref))  # (V,)
    per_token = {name: f(logp, logr).numpy() for name, f in (("k1", k1_kl), ("k2", k2_kl), ("k3", k3_kl))}  # (V,)
    out = {"exact": float(np.sum(pi * np.log(pi / ref))), "n": ns}
    stats = {name: {k: np.empty(ns.size) for k in ("mean", "std", "lo", "hi", "frac_negative")} for name in per_token}
    for i, n in enumerate(ns):
        counts = rng.multinomial(n, pi, size=repeats)  # (R, V): how often each token was drawn in n samples
        for name, values in per_token.items():
            est = counts @ values / n  # (R,) the mean of the per-token estimator over the n tokens
            s = stats[name]
            s["mean"][i], s["std"][i] = est.mean(), est.std()
            s["lo"][i], s["hi"][i] = np.percentile(est, 10), np.percentile(est, 90)
            s["frac_negative"][i] = np.mean(est < 0)
    return out | stats
