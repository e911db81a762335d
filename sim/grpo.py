"""The GRPO math of Chapter 15, one small torch function per formula.

Shapes use fixed letters: P prompts, G group size, B = P*G responses, T tokens.

    rewards (B,) --group_advantages--> advantages (B,)
    logp, old_logp, ref_logp (B, T) + advantages + mask --policy_loss--> loss, metrics

Where the chapter and Hugging Face TRL differ, the difference is a named parameter:

    convention           chapter (DeepSeekMath)        TRL GRPOTrainer default
    std of a group       population, ddof=0            sample, ddof=1
    loss aggregation     loss_type="grpo"              loss_type="dapo" (token mean over the batch)
    KL estimator         k3                            k3 * ratio (kl_times_ratio=True; TRL's
                                                       use_bias_correction_kl, default True)
    beta                 0.04 (DeepSeekMath)           0.0
"""

from __future__ import annotations

import torch

from sim.validate import check_choice

# The vocabulary of every config, page, CLI flag and export: these values, shown with these labels.
BASELINES = ("mean", "loo", "none")
SCALES = ("group", "batch", "none")
LOSS_TYPES = ("grpo", "bnpo", "dapo", "dr_grpo")
DDOFS = (0, 1)
BASELINE_LABELS = {"mean": "group mean (GRPO)", "loo": "leave-one-out (RLOO)", "none": "none (REINFORCE)"}
SCALE_LABELS = {"group": "group std (GRPO)", "batch": "batch std (TRL option)", "none": "none (Dr. GRPO)"}
LOSS_TYPE_LABELS = {"grpo": "grpo (per response)", "bnpo": "bnpo (token mean)", "dapo": "dapo (token mean, TRL)",
                    "dr_grpo": "dr_grpo (constant)"}
DDOF_LABELS = {0: "population (chapter)", 1: "sample (TRL)"}


def _check_clip(clip_eps: float, clip_eps_high: float | None) -> None:
    if not 0.0 <= clip_eps <= 1.0:
        raise ValueError(f"clip_eps must be in [0, 1], got {clip_eps}")
    if clip_eps_high is not None and clip_eps_high < 0.0:
        raise ValueError(f"clip_eps_high must be >= 0 (or None for clip_eps), got {clip_eps_high}")


def _check_shape(name: str, x: torch.Tensor, shape: torch.Size) -> None:
    if x.shape != shape:
        raise ValueError(f"{name} must have shape {tuple(shape)} like logp, got {tuple(x.shape)}")


def group_advantages(
    rewards: torch.Tensor,
    group_size: int,
    *,
    baseline: str = "mean",
    scale: str = "group",
    ddof: int = 0,
    eps: float = 1e-4,
) -> torch.Tensor:
    """Group-relative advantages, one per response.

        A_i = (r_i - b_i) / (s + eps)

    where, within the group of G responses to one prompt,
      baseline="mean":  b_i = mean(r)                         (GRPO)
      baseline="loo":   b_i = (sum(r) - r_i) / (G - 1)        (RLOO, leave-one-out)
      baseline="none":  b_i = 0                               (REINFORCE without baseline)
      scale="group":    s = std of the group's rewards        (GRPO)
      scale="batch":    s = std of all P*G rewards            (TRL scale_rewards="batch")
      scale="none":     s = 1 and no eps                      (Dr. GRPO)

    `ddof=0` is the population std the chapter uses; `ddof=1` is the sample std of TRL
    (`torch.std` default). They differ visibly for small groups: rewards 1, 0, 0, 1 give
    advantages +1, -1, -1, +1 in the chapter (std 0.5) but +-0.865875 in TRL (std 0.57735).

    A group whose rewards are all equal gets advantage exactly 0 under the "mean" and "loo"
    baselines: it teaches nothing. Under baseline="none" such a group keeps its raw reward (a
    plain REINFORCE push) and, having no spread, is not divided by its std, which would blow it
    up by 1/eps.

    >>> group_advantages(torch.tensor([1., 0., 0., 1.]), 4).round(decimals=3)
    tensor([ 1., -1., -1.,  1.])
    """
    check_choice("baseline", baseline, BASELINES)
    check_choice("scale", scale, SCALES)
    n = rewards.numel()
    if group_size < 1 or n % group_size != 0:
        raise ValueError(f"group_size must be >= 1 and divide the number of rewards ({n}), got {group_size}")
    if ddof not in (0, 1):
        raise ValueError(f"ddof must be 0 (population std) or 1 (sample std), got {ddof}")
    if eps < 0:
        raise ValueError(f"eps must be >= 0, got {eps}")
    G = group_size
    r = rewards.reshape(-1, G)  # (P, G)
    flat = zero_std(r)[:, None]  # (P, 1) no spread

    if baseline == "mean":
        adv = r - r.mean(dim=1, keepdim=True)
    elif baseline == "loo":
        if G < 2:
            raise ValueError("baseline='loo' needs group_size >= 2")
        adv = r - (r.sum(dim=1, keepdim=True) - r) / (G - 1)
    else:
        adv = r.clone()

    if scale == "group":
        std = r.std(dim=1, correction=ddof, keepdim=True) if G > ddof else torch.zeros_like(r[:, :1])
        if baseline == "none":
            std = torch.where(flat, torch.full_like(std, 1.0 - eps), std)  # leave flat groups unscaled
        adv = adv / (std + eps)
    elif scale == "batch":
        std = rewards.std(correction=ddof) if rewards.numel() > ddof else rewards.new_zeros(())
        adv = adv / (std + eps)

    if baseline != "none":
        adv = torch.where(flat, torch.zeros_like(adv), adv)
    return adv.reshape(-1)


def zero_std(rewards):
    """(P, G) rewards -> (P,) True where every reward of the group is the same: a group that teaches
    nothing under a mean or leave-one-out baseline (TRL logs the share as frac_reward_zero_std).
    Works on torch tensors and numpy arrays alike."""
    if isinstance(rewards, torch.Tensor):
        return rewards.amax(dim=-1) == rewards.amin(dim=-1)
    return rewards.max(axis=-1) == rewards.min(axis=-1)


def advantage_table(group_size: int, *, baseline: str = "mean", scale: str = "group", ddof: int = 0,
                    eps: float = 1e-4) -> torch.Tensor:
    """(G+1, 2) float64: the advantage of a correct and of a wrong answer in a group of 0/1 rewards
    with k = 0..G correct, by group_advantages on the G+1 reward vectors "k ones, then zeros".

    With 0/1 rewards a group's advantages depend on k alone, so count-based code (the toy, the
    sharpening toy) looks them up here instead of writing the formula again. Where no answer of a kind
    exists (no correct one at k = 0, no wrong one at k = G) the entry is 0. scale="batch" couples the
    groups and is not a function of k: build the table with scale="none" and divide by the batch std + eps.

    >>> advantage_table(4)[2]    # rewards 1, 1, 0, 0: +1 / -1 (eps 1e-4 makes it 0.9998)
    tensor([ 0.9998, -0.9998], dtype=torch.float64)
    """
    check_choice("scale", scale, ("group", "none"))
    G = group_size
    k = torch.arange(G + 1)[:, None]  # (G+1, 1)
    rewards = (torch.arange(G)[None, :] < k).to(torch.float64)  # (G+1, G): k ones, then zeros
    adv = group_advantages(rewards.reshape(-1), G, baseline=baseline, scale=scale, ddof=ddof, eps=eps).view(G + 1, G)
    correct = torch.where(k[:, 0] > 0, adv[:, 0], 0.0)  # column 0 holds a correct answer when k > 0
    wrong = torch.where(k[:, 0] < G, adv[:, -1], 0.0)  # the last column a wrong one when k < G
    return torch.stack([correct, wrong], dim=1)


def k1_kl(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """Schulman's k1 estimator of KL(pi || pi_ref), per token: the plain log-ratio.

        u = pi_ref / pi,   k1 = -log u = log pi - log pi_ref

    Unbiased when the token is sampled from pi, but a single sample can be negative (whenever
    pi < pi_ref), so its variance is high. Chapter numbers: pi = 0.6, pi_ref = 0.5 gives
    k1 = log 1.2 = 0.182.
    """
    return logp - ref_logp


def k2_kl(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """Schulman's k2 estimator of KL(pi || pi_ref), per token: half the squared log-ratio.

        u = pi_ref / pi,   k2 = (log u)^2 / 2  >= 0

    Never negative and low-variance, but biased; near u = 1 it agrees with k1's mean and with
    k3 to second order in (u - 1). pi = 0.6, pi_ref = 0.5 gives k2 = 0.182^2 / 2 = 0.0166.
    """
    return 0.5 * (ref_logp - logp) ** 2


def k3_kl(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """Schulman's k3 estimator of KL(pi || pi_ref), per token.

        u = pi_ref / pi,   k3 = u - log u - 1  >= 0

    Unbiased when the token is sampled from pi; zero exactly when pi = pi_ref. Its derivative
    with respect to log pi is 1 - u. Chapter: pi = 0.6, pi_ref = 0.5 gives u = 0.833,
    k3 = 0.0157 and d k3 / d log pi = 0.167.
    """
    d = ref_logp - logp  # log u
    return torch.exp(d) - d - 1.0


def _masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return (x * mask).sum() / mask.sum().clamp(min=1.0)


def aggregate(
    per_token_loss: torch.Tensor,
    mask: torch.Tensor,
    loss_type: str = "grpo",
    *,
    max_completion_length: int | None = None,
) -> torch.Tensor:
    """Reduce a (B, T) per-token loss to a scalar, as `loss_type` says.

      "grpo":    mean over each response's real tokens, then over responses (the chapter's
                 formula, DeepSeekMath): (1/B) sum_i (1/|y_i|) sum_t l_it
      "bnpo", "dapo":  one mean over all real tokens of the batch: sum l_it / sum |y_i|
                 (TRL's default is "dapo". TRL divides "dapo" by the token count of the whole
                 generation batch over all processes and "bnpo" by the local one; with one
                 process, no gradient accumulation and steps_per_generation=1, as here, both
                 are this token mean. tests/test_trl_parity.py checks it.)
      "dr_grpo": sum l_it / (B * max_completion_length), a constant normaliser (Dr. GRPO)
    """
    check_choice("loss_type", loss_type, LOSS_TYPES)
    _check_shape("mask", mask, per_token_loss.shape)
    mask = mask.to(per_token_loss.dtype)
    if loss_type == "grpo":
        per_response = (per_token_loss * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)  # (B,)
        return per_response.mean()
    if loss_type in ("bnpo", "dapo"):
        return _masked_mean(per_token_loss, mask)
    L = per_token_loss.shape[1] if max_completion_length is None else max_completion_length
    if L < 1:
        raise ValueError(f"max_completion_length must be >= 1, got {L}")
    return (per_token_loss * mask).sum() / (per_token_loss.shape[0] * L)


def clipped_surrogate(
    ratio: torch.Tensor,
    advantages: torch.Tensor,
    clip_eps: float = 0.2,
    clip_eps_high: float | None = None,
) -> torch.Tensor:
    """PPO's clipped surrogate objective per token (to be maximised).

        s = min(rho * A, clip(rho, 1 - clip_eps, 1 + clip_eps_high) * A)

    `advantages` broadcasts against `ratio`: (B, 1) against (B, T) in policy_loss, or a scalar
    against a grid of ratios to plot the curve. For A > 0 the objective stops rising at
    rho = 1 + clip_eps_high (no gradient past it); for A < 0 it stops at rho = 1 - clip_eps.
    Chapter: a token whose probability rose from 0.40 to 0.50 has rho = 1.25 > 1.2, so with
    A > 0 and clip_eps = 0.2 it contributes no gradient.
    `clip_eps_high=None` uses clip_eps on both sides; DAPO's "clip-higher" sets it to 0.28.

    >>> clipped_surrogate(torch.tensor([0.5, 1.0, 1.25]), 1.0)
    tensor([0.5000, 1.0000, 1.2000])
    """
    _check_clip(clip_eps, clip_eps_high)
    eps_high = clip_eps if clip_eps_high is None else clip_eps_high
    clipped = torch.clamp(ratio, 1.0 - clip_eps, 1.0 + eps_high)
    return torch.minimum(ratio * advantages, clipped * advantages)


def policy_loss(
    logp: torch.Tensor,
    old_logp: torch.Tensor | None,
    ref_logp: torch.Tensor | None,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    loss_type: str = "grpo",
    beta: float = 0.0,
    clip_eps: float = 0.2,
    clip_eps_high: float | None = None,
    max_completion_length: int | None = None,
    kl_times_ratio: bool = False,
) -> tuple[torch.Tensor, dict[str, float]]:
    """GRPO's loss: PPO's clipped surrogate per token plus beta * k3, aggregated.

    Per token t of response i, with ratio rho = exp(logp - old_logp):

        obj_it = min(rho * A_i, clip(rho, 1 - clip_eps, 1 + clip_eps_high) * A_i) - beta * k3_it
        loss   = aggregate(-obj, mask, loss_type)

    `old_logp=None` means on-policy: rho = exp(logp - logp.detach()), which is 1 in value but
    keeps the gradient. At rho = 1 the clip is inert and the gradient is REINFORCE with the
    group baseline, which is why the loss reads 0 while its gradient does not.
    `clip_eps_high=None` uses clip_eps on both sides; DAPO's "clip-higher" sets it to 0.28.
    `kl_times_ratio=True` multiplies k3 by rho, as TRL does by default
    (`GRPOConfig.use_bias_correction_kl=True`): the importance-corrected, unbiased reverse-KL
    gradient. On-policy rho is 1 in value, so the loss is unchanged, but rho still carries a
    gradient, so the KL gradient changes (per token: (1 - u) + k3 instead of 1 - u).

    Shapes: logp, old_logp, ref_logp, mask (B, T); advantages (B,).
    Metrics (TRL's names, token means over the mask): "kl" (the k3, times rho if
    kl_times_ratio, as in the loss; reported whenever ref_logp is given, while TRL logs it only
    when beta != 0), "clip_ratio/low_mean" (rho < 1 - clip_eps with A < 0),
    "clip_ratio/high_mean" (rho > 1 + clip_eps_high with A > 0), "clip_ratio/region_mean".
    Equal to TRL 1.16.0's GRPOTrainer._compute_loss in loss, gradient and these metrics
    (tests/test_trl_parity.py), with the names mapped: clip_eps -> epsilon,
    clip_eps_high -> epsilon_high, kl_times_ratio -> use_bias_correction_kl.
    """
    if beta < 0:
        raise ValueError(f"beta must be >= 0, got {beta}")
    _check_clip(clip_eps, clip_eps_high)
    if beta > 0 and ref_logp is None:
        raise ValueError(f"ref_logp is required when beta > 0 (beta={beta})")
    for name, x in (("old_logp", old_logp), ("ref_logp", ref_logp), ("mask", mask)):
        if x is not None:
            _check_shape(name, x, logp.shape)
    if advantages.numel() != logp.shape[0]:
        raise ValueError(
            f"advantages must have one value per response ({logp.shape[0]}), got shape {tuple(advantages.shape)}"
        )
    eps_high = clip_eps if clip_eps_high is None else clip_eps_high
    mask = mask.to(logp.dtype)
    old = logp.detach() if old_logp is None else old_logp
    ratio = torch.exp(logp - old)  # (B, T)
    A = advantages.reshape(-1, 1)  # (B, 1): every token of a response shares its advantage
    per_token = -clipped_surrogate(ratio, A, clip_eps, clip_eps_high)  # (B, T)

    metrics: dict[str, float] = {}
    if ref_logp is not None:
        kl = k3_kl(logp, ref_logp)
        if kl_times_ratio:
            kl = kl * ratio
        if beta != 0.0:
            per_token = per_token + beta * kl
        metrics["kl"] = _masked_mean(kl.detach(), mask).item()

    loss = aggregate(per_token, mask, loss_type, max_completion_length=max_completion_length)

    with torch.no_grad():
        low = ((ratio < 1.0 - clip_eps) & (A < 0)).to(logp.dtype)
        high = ((ratio > 1.0 + eps_high) & (A > 0)).to(logp.dtype)
        metrics["clip_ratio/low_mean"] = _masked_mean(low, mask).item()
        metrics["clip_ratio/high_mean"] = _masked_mean(high, mask).item()
        metrics["clip_ratio/region_mean"] = _masked_mean(torch.clamp(low + high, max=1.0), mask).item()
    return loss, metrics


def grad_norm(loss: torch.Tensor, wrt: torch.Tensor | list[torch.Tensor]) -> float:
    """L2 norm of d loss / d wrt, without touching any .grad (so it can sit beside training)."""
    tensors = [wrt] if isinstance(wrt, torch.Tensor) else list(wrt)
    grads = torch.autograd.grad(loss, tensors, retain_graph=True, allow_unused=True)
    sq = sum(float((g.detach() ** 2).sum()) for g in grads if g is not None)
    return sq**0.5
