"""Small views over sim.grpo that the pages need, so that no page computes anything itself.

Every number here comes from a sim.grpo function (group_advantages, policy_loss, grad_norm,
k1_kl, k2_kl, k3_kl, clipped_surrogate); this module only prepares inputs and collects outputs.
Plain floats and numpy arrays out, ready to draw. Shapes: G group size, N grid points.
"""

from __future__ import annotations

import numpy as np

# torch and sim.grpo are imported inside the functions that need them: the Training page uses only
# the numpy helpers at the bottom, and importing torch slows every script run that first touches it.


def _rewards(rewards):
    import torch

    r = torch.as_tensor([float(x) for x in rewards], dtype=torch.float64)  # (G,)
    if r.numel() < 2:
        raise ValueError(f"rewards: a group needs at least 2 responses, got {r.numel()}")
    return r


def group_summary(rewards, *, scale_std: bool = True, ddof: int = 0, eps: float = 1e-4) -> dict:
    """One group of G rewards: mean, population and sample std, advantages, loss and gradient norm.

    Advantages are sim.grpo.group_advantages (scale "group" or "none", ddof as given). The loss is
    sim.grpo.policy_loss on-policy (ratio 1, one token per response, beta = 0) with respect to the
    G log-probabilities; it reads 0 because the advantages sum to 0, while its gradient,
    -A_i / G per response, does not vanish unless every A_i does.
    """
    import torch

    from sim.grpo import grad_norm, group_advantages, policy_loss

    r = _rewards(rewards)
    G = r.numel()
    adv = group_advantages(r, G, scale="group" if scale_std else "none", ddof=ddof, eps=eps)  # (G,)
    logp = torch.full((G, 1), float(np.log(0.5)), dtype=torch.float64, requires_grad=True)  # (G, T=1)
    loss, _ = policy_loss(logp, None, None, adv, torch.ones(G, 1, dtype=torch.float64))
    return {
        "mean": float(r.mean()),
        "std_population": float(r.std(correction=0)),
        "std_sample": float(r.std(correction=1)),
        "advantages": adv.numpy(),
        "loss": float(loss.detach()),
        "grad_norm": grad_norm(loss, logp),
    }


def kl_estimators(u) -> dict[str, np.ndarray]:
    """k1, k2, k3 per token as functions of u = pi_ref / pi (N,), via sim.grpo's estimators.

    Taking log pi = 0 and log pi_ref = log u gives exactly their ratio u.
    """
    import torch

    from sim.grpo import k1_kl, k2_kl, k3_kl

    u = torch.as_tensor(np.asarray(u, dtype=float))  # (N,)
    if torch.any(u <= 0):
        raise ValueError("u = pi_ref / pi must be > 0")
    logp, ref = torch.zeros_like(u), torch.log(u)
    return {"k1": k1_kl(logp, ref).numpy(), "k2": k2_kl(logp, ref).numpy(), "k3": k3_kl(logp, ref).numpy()}


def kl_check(pi: float, pi_ref: float) -> dict[str, float]:
    """The chapter's numeric check at one token: u, k1, k2, k3 and d k3 / d log pi (by autograd)."""
    if not (0 < pi <= 1 and 0 < pi_ref <= 1):
        raise ValueError("pi and pi_ref must be probabilities in (0, 1]")
    import torch

    from sim.grpo import k1_kl, k2_kl, k3_kl

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
    import torch

    from sim.grpo import clipped_surrogate

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


def seed_band(x, lo: float = 10.0, hi: float = 90.0) -> dict[str, np.ndarray]:
    """Mean and the lo..hi percentile band over seeds of x (T, S): what the band chart draws."""
    x = np.asarray(x, dtype=float)  # (T, S)
    return {"mean": x.mean(axis=1), "lo": np.percentile(x, lo, axis=1), "hi": np.percentile(x, hi, axis=1)}


def gave_signal(counts, group_size: int) -> np.ndarray:
    """Which groups had a non-zero advantage: 0 < k < G correct (an all-equal group teaches nothing)."""
    k = np.asarray(counts)
    return (k > 0) & (k < group_size)


def rows_to_columns(rows: list[dict]) -> dict[str, list]:
    """[{name: value}, ...] -> {name: [values]} (keys of the first row), for sim.export.history_csv."""
    if not rows:
        raise ValueError("rows must not be empty")
    return {k: [r.get(k) for r in rows] for k in rows[0]}
