"""The GRPO math of Chapter 15, one small torch function per formula.

Shapes use fixed letters: P prompts, G group size, B = P*G responses, T tokens.

    rewards (B,) --group_advantages--> advantages (B,)
    logp, old_logp, ref_logp (B, T) + advantages + mask --policy_loss--> loss, metrics

policy_loss is the one entry point for every loss TRL 1.16.0 ships (loss_type grpo, bnpo, dapo, dr_grpo,
cispo, sapo, luspo, vespo; importance_sampling_level token or sequence, GSPO); the per-token objectives
are in sim/losses.py. The settings' ranges are declared once, in sim/settings.py.

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

from sim import losses
from sim.losses import clipped_surrogate  # noqa: F401  (with the other objectives in sim.losses)
from sim.refusals import refused
from sim.settings import (  # noqa: F401  (the vocabulary, re-exported: sim.grpo is where configs look for it)
    BASELINE_LABELS,
    BASELINES,
    DDOF_LABELS,
    DDOFS,
    IMPORTANCE_LEVEL_LABELS,
    IMPORTANCE_LEVELS,
    LOSS_TYPE_LABELS,
    LOSS_TYPES,
    SCALE_LABELS,
    SCALES,
    check_grpo,
)

# How each loss type reduces its (B, T) per-token losses (TRL 1.16.0's _compute_loss, one process).
AGGREGATION = {"grpo": "grpo", "sapo": "grpo", "bnpo": "bnpo", "dapo": "dapo", "cispo": "dapo", "vespo": "dapo",
               "dr_grpo": "dr_grpo", "luspo": "luspo"}
CLIPPED = ("grpo", "bnpo", "dapo", "dr_grpo", "luspo")  # PPO's clipped surrogate, aggregated differently


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
    check_grpo(baseline=baseline, scale=scale, ddof=ddof, eps=eps)
    n = rewards.numel()
    if group_size < 1 or n % group_size != 0:
        raise ValueError(f"group_size must be >= 1 and divide the number of rewards ({n}), got {group_size}")
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
        adv = adv / torch.where(std + eps > 0, std + eps, 1.0)  # eps = 0 and one reward everywhere: no division

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
    if scale not in ("group", "none"):
        raise refused("table_by_count", scale=repr(scale))
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

    Written as expm1(d) - d with d = log u, the same number without the rounding of exp(d) - d - 1, which reads
    -1.1e-16 at d = -1.04e-16 (TRL and the chapter's lab write the naive form; the two agree to 1e-16).
    """
    d = ref_logp - logp  # log u
    return torch.expm1(d) - d


def _masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return (x * mask).sum() / mask.sum().clamp(min=1.0)


def aggregate(
    per_token_loss: torch.Tensor,
    mask: torch.Tensor,
    loss_type: str = "grpo",
    *,
    max_completion_length: int | None = None,
) -> torch.Tensor:
    """Reduce a (B, T) per-token loss to a scalar, as `loss_type` says (AGGREGATION maps every loss
    type to one of these, as TRL 1.16.0 does):

      "grpo", "sapo":  mean over each response's real tokens, then over responses (the chapter's
                 formula, DeepSeekMath): (1/B) sum_i (1/|y_i|) sum_t l_it
      "bnpo", "dapo", "cispo", "vespo":  one mean over all real tokens of the batch: sum l_it / sum |y_i|
                 (TRL divides "dapo", "cispo", "vespo" by the token count of the whole generation batch
                 over all processes and "bnpo" by the local one; with one process, no gradient
                 accumulation and steps_per_generation=1, as here, both are this token mean.
                 tests/test_trl_parity.py checks it.)
      "dr_grpo": sum l_it / (B * max_completion_length), a constant normaliser (Dr. GRPO)
      "luspo":   (1/B) sum_i sum_t l_it, each response's sum: GSPO's per-response loss times |y_i| (LUSPO)
    """
    check_grpo(loss_type=loss_type)
    _check_shape("mask", mask, per_token_loss.shape)
    mask = mask.to(per_token_loss.dtype)
    how = AGGREGATION[loss_type]
    if how == "grpo":
        per_response = (per_token_loss * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)  # (B,)
        return per_response.mean()
    if how in ("bnpo", "dapo"):
        return _masked_mean(per_token_loss, mask)
    if how == "luspo":
        return (per_token_loss * mask).sum(dim=1).mean()
    L = per_token_loss.shape[1] if max_completion_length is None else max_completion_length
    if L < 1:
        raise ValueError(f"max_completion_length must be >= 1, got {L}")
    return (per_token_loss * mask).sum() / (per_token_loss.shape[0] * L)


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
    importance_sampling_level: str = "token",
    delta: float | None = None,
    sapo_temperature_pos: float = 1.0,
    sapo_temperature_neg: float = 1.05,
    vespo_k_pos: float = 2.0,
    vespo_lambda_pos: float = 3.0,
    vespo_k_neg: float = 3.0,
    vespo_lambda_neg: float = 2.0,
) -> tuple[torch.Tensor, dict[str, float]]:
    """GRPO's loss and its successors: a per-token objective plus beta * k3, aggregated.

    Per token t of response i, with the importance ratio rho = exp(logp - old_logp) (per token), or
    for importance_sampling_level="sequence" GSPO's one ratio per response (sim.losses.sequence_log_ratio):

        obj_it = objective(rho, A_i) - beta * k3_it        (sim.losses, by loss_type)
        loss   = aggregate(-obj, mask, loss_type)

    The chapter's GRPO is loss_type="grpo" at the token level: obj = min(rho A, clip(rho, 1 - clip_eps,
    1 + clip_eps_high) A). "bnpo", "dapo", "dr_grpo" and "luspo" (LUSPO, meant for the sequence level)
    aggregate the same clipped surrogate differently; `delta` caps rho in its unclipped term (two-sided
    clipping). "cispo" clips the weight instead (cap: sim.losses.cispo_cap); "sapo" gates it softly
    (temperatures sapo_temperature_pos / _neg); "vespo" weights each response by a Gamma function of its
    ratio (vespo_k_pos, vespo_lambda_pos, vespo_k_neg, vespo_lambda_neg). Defaults are TRL's, except
    loss_type (the chapter's "grpo"; TRL's default is "dapo").

    `old_logp=None` means on-policy: rho = exp(logp - logp.detach()), which is 1 in value but
    keeps the gradient. At rho = 1 the clip is inert and the gradient is REINFORCE with the
    group baseline, which is why the loss reads 0 while its gradient does not.
    `kl_times_ratio=True` multiplies k3 by rho (the sequence ratio at the sequence level), as TRL does by
    default (`use_bias_correction_kl=True`): the importance-corrected, unbiased reverse-KL gradient.
    On-policy rho is 1 in value, so the loss is unchanged, but rho still carries a gradient, so the KL
    gradient changes (per token: (1 - u) + k3 instead of 1 - u).

    Shapes: logp, old_logp, ref_logp, mask (B, T); advantages (B,).
    Metrics (TRL's names, means over the mask's tokens, or over responses for one ratio per response):
    "kl" (the k3, times rho if kl_times_ratio, as in the loss; reported whenever ref_logp is given, while
    TRL logs it only when beta != 0); for the clipped losses "clip_ratio/low_mean" (rho < 1 - clip_eps
    with A < 0), "clip_ratio/high_mean" (rho > 1 + clip_eps_high with A > 0), "clip_ratio/region_mean";
    for cispo "cispo_clip_ratio" (rho > cap with A > 0); for vespo "vespo/phi_seq_mean". sapo has none.
    Equal to TRL 1.16.0's GRPOTrainer._compute_loss in loss, gradient and these metrics for every loss
    type and both levels (tests/test_trl_parity.py), with the names mapped: clip_eps -> epsilon,
    clip_eps_high -> epsilon_high, kl_times_ratio -> use_bias_correction_kl; the rest are TRL's names.
    TRL accepts every combination, warning about some: trl_advice() returns those warnings.
    """
    check_grpo(loss_type=loss_type, beta=beta, clip_eps=clip_eps, clip_eps_high=clip_eps_high, delta=delta,
               importance_sampling_level=importance_sampling_level, sapo_temperature_pos=sapo_temperature_pos,
               sapo_temperature_neg=sapo_temperature_neg, vespo_k_pos=vespo_k_pos, vespo_lambda_pos=vespo_lambda_pos,
               vespo_k_neg=vespo_k_neg, vespo_lambda_neg=vespo_lambda_neg)
    if beta > 0 and ref_logp is None:
        raise ValueError(f"ref_logp is required when beta > 0 (beta={beta})")
    for name, x in (("old_logp", old_logp), ("ref_logp", ref_logp), ("mask", mask)):
        if x is not None:
            _check_shape(name, x, logp.shape)
    if advantages.numel() != logp.shape[0]:
        raise ValueError(
            f"advantages must have one value per response ({logp.shape[0]}), got shape {tuple(advantages.shape)}"
        )
    mask = mask.to(logp.dtype)
    old = logp.detach() if old_logp is None else old_logp
    log_ratio = logp - old  # (B, T)
    per_sequence = importance_sampling_level == "sequence"
    ratio = torch.exp(losses.sequence_log_ratio(log_ratio, mask) if per_sequence else log_ratio)  # (B, 1) or (B, T)
    A = advantages.reshape(-1, 1)  # (B, 1): every token of a response shares its advantage

    metrics: dict[str, float] = {}

    def share(flags: torch.Tensor) -> float:  # a fraction over tokens, or over responses for (B, 1)
        flags = flags.to(logp.dtype)
        return flags.mean().item() if flags.shape[1] == 1 else _masked_mean(flags, mask).item()

    if loss_type in CLIPPED:
        obj = clipped_surrogate(ratio, A, clip_eps, clip_eps_high, delta)
        eps_high = clip_eps if clip_eps_high is None else clip_eps_high
        r = ratio.detach() if delta is None else torch.clamp(ratio.detach(), max=delta)  # TRL tests the capped rho
        low, high = (r < 1.0 - clip_eps) & (A < 0), (r > 1.0 + eps_high) & (A > 0)
        metrics |= {"clip_ratio/low_mean": share(low), "clip_ratio/high_mean": share(high),
                    "clip_ratio/region_mean": share(low | high)}
    elif loss_type == "cispo":
        cap = losses.cispo_cap(clip_eps, clip_eps_high)
        obj = losses.cispo_objective(logp, ratio, A, cap)
        metrics["cispo_clip_ratio"] = share((ratio.detach() > cap) & (A > 0))
    elif loss_type == "sapo":
        obj = losses.sapo_objective(ratio, A, sapo_temperature_pos, sapo_temperature_neg)
    else:  # vespo: its own ratio per response (a product over tokens), whatever the level
        phi = losses.vespo_weight(log_ratio, mask, A, k_pos=vespo_k_pos, lambda_pos=vespo_lambda_pos,
                                  k_neg=vespo_k_neg, lambda_neg=vespo_lambda_neg)  # (B, 1)
        obj = losses.vespo_objective(logp, phi, A)
        metrics["vespo/phi_seq_mean"] = phi.mean().item()
    per_token = (-obj).expand_as(logp)  # (B, T)

    if ref_logp is not None:
        kl = k3_kl(logp, ref_logp)
        if kl_times_ratio:
            kl = kl * ratio
        if beta != 0.0:
            per_token = per_token + beta * kl
        metrics["kl"] = _masked_mean(kl.detach(), mask).item()

    loss = aggregate(per_token, mask, loss_type, max_completion_length=max_completion_length)
    return loss, metrics


def trl_advice(loss_type: str, importance_sampling_level: str = "token", *, clip_eps_high: float | None = None,
               delta: float | None = None) -> list[str]:
    """What TRL 1.16.0 warns about a combination it accepts (GRPOTrainer.__init__ logs these; nothing is
    refused), plus the settings that silently do nothing. Pages and exports show these lines."""
    out = []
    if loss_type == "luspo" and importance_sampling_level != "sequence":
        out.append("luspo is meant for importance_sampling_level='sequence' (the LUSPO paper's setup).")
    if loss_type == "vespo" and importance_sampling_level != "token":
        out.append("vespo computes its own ratio per response: TRL asks for importance_sampling_level='token'.")
    if importance_sampling_level == "sequence" and loss_type in ("bnpo", "dr_grpo", "dapo", "cispo"):
        out.append(f"{loss_type} at the sequence level sums per-token terms, so each response counts by its length; "
                   "GSPO's setup is loss_type='grpo'.")
    if loss_type == "cispo" and clip_eps_high is None:
        out.append("cispo caps the weight at clip_eps_high itself, not 1 + it; unset, the cap is clip_eps (0.2 by "
                   "default), so every token's weight is at most 0.2. ScaleRL recommends clip_eps_high = 5.")
    if delta is not None and loss_type not in CLIPPED:
        out.append(f"delta only applies to the clipped losses {CLIPPED}; {loss_type} ignores it.")
    return out


def grad_norm(loss: torch.Tensor, wrt: torch.Tensor | list[torch.Tensor]) -> float:
    """L2 norm of d loss / d wrt, without touching any .grad (so it can sit beside training)."""
    tensors = [wrt] if isinstance(wrt, torch.Tensor) else list(wrt)
    grads = torch.autograd.grad(loss, tensors, retain_graph=True, allow_unused=True)
    sq = sum(float((g.detach() ** 2).sum()) for g in grads if g is not None)
    return sq**0.5
