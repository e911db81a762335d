"""The per-token objectives of every loss TRL 1.16.0's GRPOTrainer ships, one small function each.

sim.grpo.policy_loss is the entry point: it computes the importance ratio (per token, or per response
for GSPO), calls one of these, adds beta * k3 and aggregates. Each function here returns the objective
to be MAXIMISED per token (policy_loss negates it), and its gradient with respect to log pi is the
"gradient weight" a token gets: what the KL-and-clipping page draws against the ratio.

    loss_type                     objective per token (A: the response's advantage, rho: its ratio)
    grpo, bnpo, dapo, dr_grpo     min(rho A, clip(rho, 1 - eps, 1 + eps_high) A)      (PPO, GRPO, DAPO)
    luspo                         the same, summed over each response's tokens        (LUSPO)
    (+ delta)                     rho -> min(rho, delta) in the unclipped term         (INTELLECT-2)
    cispo                         sg(min(rho, eps_max)) A log pi                        (MiniMax-M1)
    sapo                          (4 / tau) sigmoid(tau (rho - 1)) A                    (SAPO)
    vespo                         sg(phi(w)) A log pi, w the response's ratio           (VESPO)

Shapes: ratio (B, T) for importance_sampling_level="token", (B, 1) for "sequence"; advantages (B, 1);
logp (B, T). "sg" is stop-gradient (torch's detach).
"""

from __future__ import annotations

import math

import torch

from sim.settings import check_grpo


def sequence_log_ratio(log_ratio: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """GSPO's one ratio per response (TRL: importance_sampling_level="sequence"), in log space, (B, 1):

        log s_i = (1 / |y_i|) sum_t log(pi(y_it) / pi_old(y_it))    so s_i is the geometric mean of the
                                                                     token ratios (Zheng et al. 2025, eq. 7)

    Every token of a response shares s_i, and d s_i / d log pi(y_it) = s_i / |y_i|. One token at ratio
    1.25 among four at ratio 1 gives s = 1.25 ** (1/4) = 1.057: inside a 0.2 clip, which is why GSPO
    clips with an epsilon around 3e-4 instead.
    """
    return ((log_ratio * mask).sum(dim=-1) / mask.sum(dim=-1).clamp(min=1.0)).unsqueeze(-1)


def clipped_surrogate(
    ratio: torch.Tensor,
    advantages: torch.Tensor,
    clip_eps: float = 0.2,
    clip_eps_high: float | None = None,
    delta: float | None = None,
) -> torch.Tensor:
    """PPO's clipped surrogate objective per token (to be maximised); TRL's loss_type "grpo", "bnpo",
    "dapo", "dr_grpo" and "luspo", which differ only in aggregation.

        s = min(min(rho, delta) * A, clip(rho, 1 - clip_eps, 1 + clip_eps_high) * A)

    `advantages` broadcasts against `ratio`: (B, 1) against (B, T) in policy_loss, or a scalar
    against a grid of ratios to plot the curve. For A > 0 the objective stops rising at
    rho = 1 + clip_eps_high (no gradient past it); for A < 0 it stops at rho = 1 - clip_eps.
    Chapter: a token whose probability rose from 0.40 to 0.50 has rho = 1.25 > 1.2, so with
    A > 0 and clip_eps = 0.2 it contributes no gradient.
    `clip_eps_high=None` uses clip_eps on both sides; DAPO's "clip-higher" sets it to 0.28.
    `delta` (INTELLECT-2's two-sided clipping, TRL's `delta`): for A < 0 the unclipped term rho * A
    falls without bound as rho grows, so a token the policy made much likelier gets an ever larger
    push down; capping rho at delta there stops it: gradient 0 past rho = delta.

    >>> clipped_surrogate(torch.tensor([0.5, 1.0, 1.25]), 1.0)
    tensor([0.5000, 1.0000, 1.2000])
    """
    check_grpo(clip_eps=clip_eps, clip_eps_high=clip_eps_high, delta=delta)
    eps_high = clip_eps if clip_eps_high is None else clip_eps_high
    clipped = torch.clamp(ratio, 1.0 - clip_eps, 1.0 + eps_high)
    unclipped = ratio if delta is None else torch.clamp(ratio, max=delta)
    return torch.minimum(unclipped * advantages, clipped * advantages)


def cispo_cap(clip_eps: float, clip_eps_high: float | None) -> float:
    """CISPO's cap eps_max on the weight, as TRL 1.16.0 reads it: clip_eps_high, else clip_eps.

    Note the trap: the cap is the ratio's bound itself, not 1 + eps. With clip_eps_high unset TRL caps
    every weight at clip_eps = 0.2, so even an on-policy token (rho = 1) gets weight 0.2: plain
    REINFORCE shrunk five times. ScaleRL recommends 5.0; MiniMax-M1's clip at 1 + eps_high is
    clip_eps_high = 1 + eps_high.
    """
    return clip_eps if clip_eps_high is None else clip_eps_high


def cispo_objective(logp: torch.Tensor, ratio: torch.Tensor, advantages: torch.Tensor, cap: float) -> torch.Tensor:
    """CISPO (MiniMax-M1, Chen et al. 2025, eq. 4; TRL loss_type="cispo"): clip the importance weight,
    not the update, so every token keeps its gradient.

        obj_t = sg(min(rho_t, eps_max)) * A * log pi(y_t),    d obj / d log pi = min(rho, eps_max) * A

    PPO zeroes the gradient of a token past its clip range; CISPO keeps pushing it, at a bounded weight.
    Chapter's token (0.40 -> 0.50, rho = 1.25, A > 0) with eps_max = 1.2: PPO's gradient is 0, CISPO's
    weight is 1.2 * A. MiniMax-M1's point: the rare "wait" / "however" tokens that start a reflection
    have large ratios after an update and are exactly the ones PPO's clip silences.
    """
    return torch.clamp(ratio, max=cap).detach() * advantages * logp


def sapo_objective(ratio: torch.Tensor, advantages: torch.Tensor, temperature_pos: float,
                   temperature_neg: float) -> torch.Tensor:
    """SAPO (Gao et al. 2025, Soft Adaptive Policy Optimization; TRL loss_type="sapo"): a smooth,
    temperature-controlled gate in place of the hard clip.

        obj_t = (4 / tau) * sigmoid(tau * (rho_t - 1)) * A,   tau = temperature_pos if A > 0 else temperature_neg
        d obj / d log pi = 4 sigmoid(x) (1 - sigmoid(x)) * rho * A,   x = tau (rho - 1)

    At rho = 1 the gate 4 sigma (1 - sigma) is exactly 1: the gradient is REINFORCE, like PPO's. Away
    from 1 it decays smoothly (faster for larger tau) instead of dropping to zero at 1 +- eps. The
    objective's value at rho = 1 is 2 A / tau, not A: SAPO's logged loss is not GRPO's.
    """
    tau = torch.where(advantages > 0, temperature_pos, temperature_neg)
    return torch.sigmoid(tau * (ratio - 1.0)) * 4.0 / tau * advantages


@torch.no_grad()
def vespo_weight(log_ratio: torch.Tensor, mask: torch.Tensor, advantages: torch.Tensor, *, k_pos: float,
                 lambda_pos: float, k_neg: float, lambda_neg: float) -> torch.Tensor:
    """VESPO's Gamma weight of a response's ratio (VESPO, 2026; TRL GRPOTrainer.get_gamma_weights), (B, 1):

        w = prod_t rho_t = exp(sum_t log rho_t)          (a product, not GSPO's geometric mean)
        phi(w) = e^lambda * w^k * e^(-lambda w)         (k, lambda by the sign of A: A >= 0 uses *_pos)

    phi(1) = 1, so an on-policy response gets the plain REINFORCE weight; phi peaks at w = k / lambda and
    falls to 0 for w -> 0 and w -> infinity, a soft trust region. As TRL does, each log rho_t is clamped
    to [-20, 20], log w to [log 1e-8, 20], lambda to >= 1e-4, and a non-finite phi becomes 0.
    """
    log_w = torch.clamp((torch.clamp(log_ratio, -20.0, 20.0) * mask).sum(dim=-1, keepdim=True), math.log(1e-8), 20.0)
    nonneg = advantages >= 0
    k = torch.where(nonneg, k_pos, k_neg)
    lam = torch.where(nonneg, lambda_pos, lambda_neg).clamp(min=1e-4)
    return torch.exp(lam + k * log_w - lam * torch.exp(log_w)).nan_to_num(nan=0.0, posinf=0.0, neginf=0.0)


def vespo_objective(logp: torch.Tensor, phi: torch.Tensor, advantages: torch.Tensor) -> torch.Tensor:
    """VESPO's per-token objective: obj_t = sg(phi(w)) * A * log pi(y_t) (phi from vespo_weight), so
    d obj / d log pi = phi(w) * A for every token of the response."""
    return phi * advantages * logp
