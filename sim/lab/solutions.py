"""Reference solutions of the chapter's lab, in the lab's signatures, built on sim.grpo.

The lab (lab/tasks.py) fixes the chapter's signatures; sim.grpo names every convention. This
module maps one onto the other, so the lab's checks compare a student's code with the same
formulas the rest of the playground uses (and that tests/test_trl_parity.py ties to TRL):

    lab (chapter)                                   sim.grpo
    group_advantages(rewards, G, scale_std, eps)    group_advantages(rewards, G, baseline="mean",
                                                      scale="group" if scale_std else "none",
                                                      ddof=0 (population std), eps=eps)
    k3_kl(logp, ref_logp)                           k3_kl(logp, ref_logp)  (u = pi_ref / pi)
    grpo_loss(logp, old_logp, ref_logp, adv, mask,  policy_loss(..., loss_type="grpo", beta=beta,
              clip_eps, beta)                         clip_eps=clip_eps)[0]

Signs: both return the *loss* (the negative of the clipped objective minus beta * k3), so
gradient descent on it is GRPO's update. scale_std=False is Dr. GRPO's r - mean(r): no
division and no eps, as in the chapter's reference code.

`RL_SOLUTIONS=1 python -m pytest -q lab` runs the lab's tests against these functions.
"""

from __future__ import annotations

import torch

from sim import grpo


def group_advantages(rewards: torch.Tensor, G: int, scale_std: bool = True, eps: float = 1e-4) -> torch.Tensor:
    """(P*G,) rewards -> (P*G,) advantages: (r - group mean) / (population std + eps)."""
    scale = "group" if scale_std else "none"
    return grpo.group_advantages(rewards, G, baseline="mean", scale=scale, ddof=0, eps=eps)


def k3_kl(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """Per-token k3 = u - log u - 1 with u = pi_ref / pi, any shape."""
    return grpo.k3_kl(logp, ref_logp)


def grpo_loss(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    ref_logp: torch.Tensor,
    adv: torch.Tensor,
    mask: torch.Tensor,
    clip_eps: float = 0.2,
    beta: float = 0.04,
) -> torch.Tensor:
    """Scalar GRPO loss: clipped surrogate minus beta * k3, mean per response then over responses."""
    loss, _ = grpo.policy_loss(logp, old_logp, ref_logp, adv, mask, loss_type="grpo", beta=beta, clip_eps=clip_eps)
    return loss
