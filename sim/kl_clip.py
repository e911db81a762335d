"""The KL leash and PPO's clip, one token at a time (Chapter 15, "Adding PPO's clip" and "Adding the KL leash"),
and what the clip's successors (clip-higher, two-sided, CISPO, SAPO, GSPO) do to the same token.

Views over sim.grpo's estimators, surrogate and policy_loss, prepared for plotting: every number comes from a
sim.grpo function (k1_kl, k2_kl, k3_kl, clipped_surrogate, policy_loss), differentiated by autograd where a
slope or a gradient weight is asked for. Plain floats and numpy arrays out. Shapes: N grid points.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from sim.grpo import clipped_surrogate, k1_kl, k2_kl, k3_kl, policy_loss
from sim.rng import KL, check_key, key_words, stream_uniforms
from sim.settings import grpo_setting, validate
from sim.toy.binomial import inverse_cdf

CHAPTER_P_OLD, CHAPTER_P_NEW = 0.40, 0.50  # "the probability of 5 in response 1 has risen from 0.40 to 0.50"
RESPONSE_LENGTH = 4  # tokens of the response whose first token's ratio moves (the others stay at ratio 1)


@dataclass(frozen=True)
class ClipView:
    """The settings of the objectives compared on the KL-and-clipping page (the shared declarations)."""

    clip_eps: float = grpo_setting("clip_eps")
    clip_eps_high: float | None = grpo_setting(  # DAPO's clip-higher
        "clip_eps_high", 0.28, label="Clip ε high (clip-higher; CISPO's cap is 1 + ε high)")
    delta: float | None = grpo_setting("delta", 2.0)
    sapo_temperature_pos: float = grpo_setting("sapo_temperature_pos")
    sapo_temperature_neg: float = grpo_setting("sapo_temperature_neg")

    def __post_init__(self):
        validate(self)


def objectives(view: ClipView) -> dict[str, dict]:
    """The objectives compared, each as sim.grpo.policy_loss keywords. CISPO's cap is MiniMax-M1's 1 + eps high
    (TRL: clip_eps_high = 1 + eps high); GSPO uses the same eps as PPO so that the two curves compare."""
    eps, eps_high = view.clip_eps, view.clip_eps if view.clip_eps_high is None else view.clip_eps_high
    return {
        "PPO clip (grpo)": dict(loss_type="grpo", clip_eps=eps),
        "clip-higher (DAPO)": dict(loss_type="grpo", clip_eps=eps, clip_eps_high=eps_high),
        "two-sided (δ)": dict(loss_type="grpo", clip_eps=eps, delta=view.delta),
        "CISPO": dict(loss_type="cispo", clip_eps_high=1.0 + eps_high),
        "SAPO": dict(loss_type="sapo", sapo_temperature_pos=view.sapo_temperature_pos,
                     sapo_temperature_neg=view.sapo_temperature_neg),
        "GSPO (sequence ratio)": dict(loss_type="grpo", clip_eps=eps, importance_sampling_level="sequence"),
    }


def gradient_weight(ratio, advantage: float, length: int = RESPONSE_LENGTH, **loss) -> np.ndarray:
    """The gradient weight a token gets as a function of its ratio (N,), by autograd on sim.grpo.policy_loss:

        weight(rho) = -|y| * d loss / d log pi(y_1)

    for one response of |y| = `length` tokens whose first token has ratio rho and the others ratio 1, with
    advantage A. At rho = 1 every objective here gives A (REINFORCE); PPO gives rho * A inside its clip
    range and 0 outside; GSPO gives the response's ratio s = rho ** (1 / |y|) times A (every token of the
    response gets the same). The N ratios are N independent responses in one batch (loss types that
    average over responses or over tokens of equal-length responses both divide by N |y|).
    """
    rho = torch.as_tensor(np.atleast_1d(np.asarray(ratio, dtype=float)))  # (N,)
    if torch.any(rho <= 0):
        raise ValueError("ratios must be > 0")
    N = rho.numel()
    logp = torch.zeros(N, length, dtype=torch.float64, requires_grad=True)  # (N, T) log pi = 0 ...
    old = torch.zeros(N, length, dtype=torch.float64)
    old[:, 0] = -torch.log(rho)  # ... and log pi_old = -log rho on the first token: its ratio is rho
    adv = torch.full((N,), float(advantage), dtype=torch.float64)
    loss, _ = policy_loss(logp, old, None, adv, torch.ones(N, length, dtype=torch.float64), **loss)
    (grad,) = torch.autograd.grad(loss, logp)
    return (-grad[:, 0] * N * length).numpy() + 0.0  # + 0.0: no -0.0 for a zero weight


def weight_curves(ratio, view: ClipView) -> dict[str, dict[str, np.ndarray]]:
    """For each objective, the gradient weight against the ratio (N,) for A = +1 ("pos") and A = -1 ("neg")."""
    return {name: {"pos": gradient_weight(ratio, 1.0, **kw), "neg": gradient_weight(ratio, -1.0, **kw)}
            for name, kw in objectives(view).items()}


def chapter_token(view: ClipView, p_old: float = CHAPTER_P_OLD, p_new: float = CHAPTER_P_NEW) -> dict:
    """The chapter's token (0.40 -> 0.50, ratio 1.25) under each objective: its ratio, GSPO's sequence ratio
    for a response of RESPONSE_LENGTH tokens, and the weight for A = +1 and A = -1 per objective.
    Chapter, eps = 0.2: PPO's weight for A > 0 is 0 (1.25 > 1.2); clip-higher (0.28) keeps 1.25, CISPO
    (cap 1.28) 1.25, SAPO (tau 1) 1.231, GSPO 1.25 ** (1/4) = 1.057 (inside the clip: still pushed)."""
    if not (0 < p_old <= 1 and 0 < p_new <= 1):
        raise ValueError("p_old and p_new must be probabilities in (0, 1]")
    rho = p_new / p_old
    curves = weight_curves([rho], view)
    return {"ratio": rho, "sequence_ratio": rho ** (1.0 / RESPONSE_LENGTH),
            "weights": {name: {k: float(v[0]) for k, v in c.items()} for name, c in curves.items()}}


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


def token_counts(n: int, pi: np.ndarray, repeats: int, seed: int = 0) -> np.ndarray:
    """(R, V) how often each of the V tokens is drawn among n tokens sampled from pi, R times: a multinomial, as a
    chain of conditional binomials (token v takes Binomial(n - tokens so far, pi_v / (1 - pi so far)) of the
    rest, the last token what is left), each by the inverse CDF of a uniform from the portable generator
    (sim/rng.py: key seed, c3 KL, c1 n, c2 v; uniform r for repeat r). So a seed gives the same counts in the
    browser (assets/js/exercises.js tokenCounts), and the estimates at one n do not depend on the other sizes."""
    k0, k1 = key_words([seed])
    V = pi.size
    counts = np.zeros((repeats, V), dtype=np.int64)
    left, mass = np.full(repeats, n, dtype=np.int64), 1.0
    for v in range(V - 1):
        U = stream_uniforms(k0[0], k1[0], n, v, KL, repeats)  # (R,)
        p = min(max(pi[v] / mass, 0.0), 1.0) if mass > 0 else 0.0
        for m in np.unique(left):  # the repeats with m tokens left share one CDF
            rows = left == m
            counts[rows, v] = inverse_cdf(U[rows], int(m), p)
        left -= counts[:, v]
        mass -= pi[v]
    counts[:, V - 1] = left
    return counts


def kl_monte_carlo(pi, pi_ref, sample_sizes, *, repeats: int = 400, seed: int = 0) -> dict:
    """How k1, k2 and k3 estimate KL(pi || pi_ref) from n tokens sampled from pi (Schulman's comparison).

    pi and pi_ref are categorical distributions over the same V tokens (V,). For each n in
    `sample_sizes` (N,), draw n tokens from pi `repeats` times (token_counts: the portable generator, so the
    browser's twin draws the same); each estimate is the mean of the per-token estimator over the n tokens
    (sim.grpo.k1_kl, k2_kl, k3_kl), computed from how often each token was drawn (the same statistic as
    summing token by token). Returns {"exact": KL, "n": (N,), and per estimator {"mean", "std", "lo", "hi"
    (10/90% of the estimates), "frac_negative"} each (N,)}. What it shows: k1 is unbiased but noisy and often
    negative, k2 is never negative but biased, k3 is unbiased and never negative. Chapter's token: pi = (0.6, 0.4)
    against pi_ref = (0.5, 0.5), KL = 0.6 log 1.2 + 0.4 log 0.8 = 0.0201.
    """
    pi, ref = np.asarray(pi, dtype=float), np.asarray(pi_ref, dtype=float)
    if pi.shape != ref.shape or pi.ndim != 1 or np.any(pi <= 0) or np.any(ref <= 0):
        raise ValueError("pi and pi_ref must be positive probabilities over the same tokens")
    if abs(pi.sum() - 1) > 1e-9 or abs(ref.sum() - 1) > 1e-9:
        raise ValueError("pi and pi_ref must each sum to 1")
    ns = np.asarray(sample_sizes, dtype=int)
    if ns.ndim != 1 or ns.size == 0 or ns.min() < 1 or ns.max() > 100_000:
        raise ValueError("sample sizes must be integers in [1, 100000]")
    check_key(seed)
    logp, logr = torch.log(torch.as_tensor(pi)), torch.log(torch.as_tensor(ref))  # (V,)
    per_token = {name: f(logp, logr).numpy() for name, f in (("k1", k1_kl), ("k2", k2_kl), ("k3", k3_kl))}  # (V,)
    out = {"exact": float(np.sum(pi * np.log(pi / ref))), "n": ns}
    stats = {name: {k: np.empty(ns.size) for k in ("mean", "std", "lo", "hi", "frac_negative")} for name in per_token}
    for i, n in enumerate(ns):
        counts = token_counts(int(n), pi, repeats, seed)  # (R, V): how often each token was drawn in n samples
        for name, values in per_token.items():
            est = (counts * values).sum(axis=1) / n  # (R,) the mean of the per-token estimator over the n tokens
            s = stats[name]
            s["mean"][i], s["std"][i] = est.mean(), est.std()
            s["lo"][i], s["hi"][i] = np.percentile(est, 10), np.percentile(est, 90)
            s["frac_negative"][i] = np.mean(est < 0)
    return out | stats
