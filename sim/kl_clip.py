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
