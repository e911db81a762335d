"""Chapter 15 lab: GRPO's three formulas, written by you.

Fill in the three TODOs (Task 2, Task 3, Task 4), then check them:

    python -m sim lab check lab/tasks.py     # one line per task: pass, or what is wrong
    python -m pytest -q lab                  # the same checks as pytest tests

Torch tensors in, torch tensors out. Shapes: P prompts, G answers per prompt (a group),
B = P*G responses, T tokens per response (padded; mask says which tokens are real).
"""

import torch


def group_advantages(rewards: torch.Tensor, G: int, scale_std: bool = True, eps: float = 1e-4) -> torch.Tensor:
    """Task 2: the group-relative advantage of every response.

    rewards has shape (P*G,): the G rewards of prompt 1, then the G rewards of prompt 2, ...
    Within each group of G responses to one prompt,

        A_i = (r_i - mean(r)) / (std(r) + eps)

    with the population std (divide by G, not G - 1). eps keeps a group whose rewards are all
    equal at A = 0 (it teaches nothing) instead of 0 / 0. With scale_std=False there is no
    division at all: A_i = r_i - mean(r) (Dr. GRPO). Return shape (P*G,).

    Chapter: rewards 1, 0, 0, 1 give +1, -1, -1, +1; rewards 1, 0, 0, 0 give +1.732 for the
    rare success and -0.577 for each failure; 1, 1, 1, 1 give 0, 0, 0, 0.
    """
    # TODO Task 2
    raise NotImplementedError("Task 2: reshape rewards to (P, G) with .view(-1, G), then mean and std over dim=1")


def k3_kl(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """Task 3: Schulman's k3 estimator of KL(pi_theta || pi_ref), per token.

    logp = log pi_theta and ref_logp = log pi_ref of the sampled tokens, any shape. With

        u = pi_ref / pi_theta,    k3 = u - log u - 1

    k3 is never negative, and zero exactly when the two models agree on the token. Return
    the same shape as logp, and keep it differentiable with respect to logp.

    Chapter: pi = 0.6, pi_ref = 0.5 give u = 0.833 and k3 = 0.0157; its derivative with
    respect to log pi_theta is 1 - u = 0.167.
    """
    # TODO Task 3
    raise NotImplementedError("Task 3: log u = ref_logp - logp; return u - log u - 1 with u = exp(log u)")


def grpo_loss(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    ref_logp: torch.Tensor,
    adv: torch.Tensor,
    mask: torch.Tensor,
    clip_eps: float = 0.2,
    beta: float = 0.04,
) -> torch.Tensor:
    """Task 4: the GRPO loss, a scalar to minimise.

    logp, old_logp, ref_logp, mask: (B, T); adv: (B,), one advantage per response, shared by
    all its tokens; mask is 1 on a response's real tokens and 0 on padding. Per token,

        rho = exp(logp - old_logp)                                   (pi_theta / pi_old)
        obj = min(rho * A, clip(rho, 1 - clip_eps, 1 + clip_eps) * A) - beta * k3_kl(logp, ref_logp)

    then average obj over each response's real tokens, then over responses, and return
    loss = -(that mean). Call your k3_kl from Task 3.

    Chapter: a token whose probability rose from 0.40 to 0.50 has rho = 1.25 > 1.2; with
    A > 0 and clip_eps = 0.2 it contributes no gradient. At rho = 1 and beta = 0, advantages
    +1, -1, -1, +1 and lengths 3, 3, 4, 3 give each token the weight A_i / (G * |y_i|):
    +1/12, -1/12, -1/16, +1/12.
    """
    # TODO Task 4
    raise NotImplementedError("Task 4: ratio, clipped surrogate with min, minus beta*k3; mask-mean per response")
