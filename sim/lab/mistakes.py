"""The common wrong answers to the lab's tasks, each as code, with what to tell the student.

When a student's output differs from the reference on a check, the checks run every mistake
of that task on the same inputs; the first one whose output equals the student's names the
error (`Mistake.message`). So a message never guesses: the student's code demonstrably does
what the named mistake does on that input. Each implementation has the lab's signature.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from sim.lab import solutions as ref


@dataclass(frozen=True)
class Mistake:
    name: str  # short id, used by tests
    message: str  # what is wrong, in the chapter's terms (plain text, one line)
    fn: Callable  # the wrong implementation, same signature as the task


# ---- Task 2: group advantages ------------------------------------------------------------------


def _adv(rewards, G, scale_std, eps, *, groups="rows", ddof=0, eps_mode="add", center=True, sign=1.0,
         scale_when="as_given"):
    if groups == "rows":
        r = rewards.view(-1, G)  # (P, G)
    elif groups == "columns":
        r = rewards.view(G, -1).T  # (P, G) built from strided values: the wrong prompts grouped
    else:  # "batch": one group of everything
        r = rewards.view(1, -1)
    mean = r.mean(dim=1, keepdim=True)
    adv = sign * (r - mean) if center else r.clone()
    divide = {"as_given": scale_std, "always": True, "inverted": not scale_std}[scale_when]
    if divide:
        std = r.std(dim=1, correction=ddof, keepdim=True)
        if eps_mode == "add":
            adv = adv / (std + eps)
        elif eps_mode == "none":
            adv = adv / std
        elif eps_mode == "fixed":
            adv = adv / (std + 1e-4)
        else:  # "sqrt": inside the root
            adv = adv / torch.sqrt(r.var(dim=1, correction=ddof, keepdim=True) + eps)
    if groups == "columns":
        return adv.T.reshape(-1)
    return adv.reshape(-1)


def _adv_batch_std(rewards, G, scale_std=True, eps=1e-4):
    r = rewards.view(-1, G)  # (P, G)
    adv = r - r.mean(dim=1, keepdim=True)
    if scale_std:
        adv = adv / (rewards.std(correction=0) + eps)
    return adv.reshape(-1)


def _adv_batch_mean(rewards, G, scale_std=True, eps=1e-4):
    r = rewards.view(-1, G)  # (P, G)
    adv = r - rewards.mean()
    if scale_std:
        adv = adv / (r.std(dim=1, correction=0, keepdim=True) + eps)
    return adv.reshape(-1)


def _m(name, message, **kw):
    return Mistake(name, message, lambda rewards, G, scale_std=True, eps=1e-4: _adv(rewards, G, scale_std, eps, **kw))


ADVANTAGE_MISTAKES = [
    _m("sample_std", "std is the sample std (unbiased=True, divides by G - 1); the chapter uses the population std "
       "(unbiased=False): for rewards 1, 0, 0, 1 std = 0.5 and A = +1, -1, -1, +1, not +-0.866", ddof=1),
    _m("no_eps", "an all-equal group gives NaN (0 / 0): add eps to the std, (r - mean) / (std + eps), so a group "
       "whose rewards are all equal gets A = 0", eps_mode="none"),
    _m("eps_fixed", "eps is not the one passed in: divide by std + eps with the eps argument", eps_mode="fixed"),
    _m("eps_in_sqrt", "eps is inside the square root: the chapter divides by std(r) + eps, not sqrt(var(r) + eps)",
       eps_mode="sqrt"),
    _m("batch_stats", "mean and std are taken over the whole batch, not per group: reshape rewards to (P, G) with "
       "rewards.view(-1, G) and reduce over dim=1, so each prompt's G answers are compared with each other",
       groups="batch"),
    Mistake("batch_std", "the std is taken over the whole batch (TRL's scale_rewards='batch'), not per group: "
            "reshape to (P, G) and take the std over dim=1", _adv_batch_std),
    Mistake("batch_mean", "the mean is taken over the whole batch, not per group: reshape to (P, G) and take the "
            "mean over dim=1", _adv_batch_mean),
    _m("wrong_axis", "groups are cut along the wrong axis: one prompt's G rewards are consecutive, so use "
       "rewards.view(-1, G) (shape (P, G)) and reduce over dim=1, not view(G, -1)", groups="columns"),
    _m("scale_std_ignored", "scale_std=False still divides by the std: with scale_std=False the advantage is just "
       "r - mean(r) (Dr. GRPO), no division", scale_when="always"),
    _m("scale_std_inverted", "scale_std is inverted: divide by std + eps when scale_std=True, not when False",
       scale_when="inverted"),
    _m("no_center", "the group mean is not subtracted: A_i = (r_i - mean(r)) / (std(r) + eps)", center=False),
    _m("sign", "the advantage has the wrong sign: A_i = r_i - mean(r), so a correct answer in a mixed group gets "
       "A > 0", sign=-1.0),
]


# ---- Task 3: k3 --------------------------------------------------------------------------------


K3_MISTAKES = [
    Mistake("k1", "that is k1 = log pi - log pi_ref, which can be negative; the chapter's k3 is u - log u - 1 with "
            "u = pi_ref / pi", lambda logp, ref_logp: logp - ref_logp),
    Mistake("log_u", "that is log u = log pi_ref - log pi (minus k1); the chapter's k3 is u - log u - 1 with "
            "u = pi_ref / pi", lambda logp, ref_logp: ref_logp - logp),
    Mistake("k2", "that is k2 = (log u)^2 / 2; the chapter's k3 is u - log u - 1 with u = pi_ref / pi",
            lambda logp, ref_logp: 0.5 * (logp - ref_logp) ** 2),
    Mistake("u_inverted", "u is upside down: the chapter's u = pi_ref / pi, so log u = ref_logp - logp (the sign of "
            "the log-ratio); pi / pi_ref gives 0.0177 instead of 0.0157 at pi = 0.6, pi_ref = 0.5",
            lambda logp, ref_logp: torch.exp(logp - ref_logp) - (logp - ref_logp) - 1.0),
    Mistake("plus_one", "k3 = u - log u - 1: the constant is -1 (so k3 = 0 when u = 1)",
            lambda logp, ref_logp: torch.exp(ref_logp - logp) - (ref_logp - logp) + 1.0),
    Mistake("log_u_sign", "k3 = u - log u - 1: log u is subtracted, not added",
            lambda logp, ref_logp: torch.exp(ref_logp - logp) + (ref_logp - logp) - 1.0),
    Mistake("negated", "k3 has the wrong sign: k3 = u - log u - 1 >= 0",
            lambda logp, ref_logp: -(torch.exp(ref_logp - logp) - (ref_logp - logp) - 1.0)),
    Mistake("probabilities", "logp and ref_logp are log-probabilities: u = pi_ref / pi = exp(ref_logp - logp), "
            "not ref_logp / logp", lambda logp, ref_logp: ref_logp / logp - torch.log(ref_logp / logp) - 1.0),
]


# ---- Task 4: the GRPO loss ---------------------------------------------------------------------


def _loss(logp, old_logp, ref_logp, adv, mask, clip_eps=0.2, beta=0.04, *, clip="min", ratio_sign=1.0,
          kl_sign=-1.0, agg="response", loss_sign=-1.0, adv_axis=0, fixed_eps=False):
    ratio = torch.exp(ratio_sign * (logp - old_logp))  # (B, T)
    A = adv[:, None] if adv_axis == 0 else adv[None, :]  # (B, 1) or, wrongly, (1, B)
    e = 0.2 if fixed_eps else clip_eps
    clipped = torch.clamp(ratio, 1 - e, 1 + e) * A
    if clip == "min":
        surrogate = torch.minimum(ratio * A, clipped)
    elif clip == "no_min":
        surrogate = clipped
    elif clip == "max":
        surrogate = torch.maximum(ratio * A, clipped)
    else:
        surrogate = ratio * A
    per_token = surrogate + kl_sign * beta * ref.k3_kl(logp, ref_logp)  # (B, T)
    if agg == "response":
        value = ((per_token * mask).sum(1) / mask.sum(1).clamp(min=1)).mean()
    elif agg == "token":
        value = (per_token * mask).sum() / mask.sum().clamp(min=1)
    elif agg == "no_mask":
        value = per_token.mean(1).mean()
    elif agg == "padded_length":
        value = ((per_token * mask).sum(1) / per_token.shape[1]).mean()
    elif agg == "response_sum":
        value = (per_token * mask).sum(1).mean()
    elif agg == "sum_over_responses":
        value = ((per_token * mask).sum(1) / mask.sum(1).clamp(min=1)).sum()
    return loss_sign * value


def _l(name, message, **kw):
    def fn(logp, old_logp, ref_logp, adv, mask, clip_eps=0.2, beta=0.04):
        return _loss(logp, old_logp, ref_logp, adv, mask, clip_eps, beta, **kw)

    return Mistake(name, message, fn)


LOSS_MISTAKES = [
    _l("loss_sign", "the loss has the wrong sign: return -(mean objective), so gradient descent maximises the "
       "clipped objective", loss_sign=1.0),
    _l("token_mean", "that is DAPO's/TRL's token mean over the whole batch (sum of all real tokens / their count); "
       "the chapter's Task 4 averages each response first (divide by mask.sum(1)), then averages over responses: "
       "a length-3 response's tokens weigh 1/3 each, a length-4 one's 1/4", agg="token"),
    _l("mask_ignored", "the mask is ignored: padding tokens (mask = 0) count in the loss; multiply by mask and "
       "divide each response by its real length mask.sum(1)", agg="no_mask"),
    _l("padded_length", "each response is divided by the padded length T, not by its real length |y_i| = "
       "mask.sum(1) (a constant normaliser is Dr. GRPO's choice, not the chapter's)", agg="padded_length"),
    _l("response_sum", "each response's tokens are summed, not averaged: divide by |y_i| = mask.sum(1)",
       agg="response_sum"),
    _l("sum_over_responses", "the responses are summed, not averaged: take .mean() over the B responses",
       agg="sum_over_responses"),
    _l("no_min", "the clip is applied without the min: s = min(rho*A, clip(rho, 1-eps, 1+eps)*A). With the clip "
       "alone a negative-advantage token at rho = 1.25 gets no gradient; the min keeps its unclipped rho*A",
       clip="no_min"),
    _l("no_clip", "the ratio is not clipped: at rho = 1.25 > 1 + eps = 1.2 with A > 0 (the chapter's 0.40 -> 0.50 "
       "token) the gradient must be zero; use min(rho*A, clip(rho, 1-eps, 1+eps)*A)", clip="none"),
    _l("max", "max instead of min: the clipped surrogate is the pessimistic min(rho*A, clip(rho, 1-eps, 1+eps)*A)",
       clip="max"),
    _l("ratio_inverted", "the ratio is upside down: rho = pi_theta / pi_old = exp(logp - old_logp)", ratio_sign=-1.0),
    _l("beta_sign", "the KL term has the wrong sign: obj = surrogate - beta*k3 and loss = -obj, so the loss "
       "carries +beta*k3 and pulls pi back toward pi_ref", kl_sign=1.0),
    _l("beta_missing", "the KL term is missing: obj = surrogate - beta * k3_kl(logp, ref_logp)", kl_sign=0.0),
    _l("clip_eps_fixed", "clip_eps is not the one passed in: clip to [1 - clip_eps, 1 + clip_eps]", fixed_eps=True),
    _l("adv_axis", "the advantage is broadcast along the wrong axis: every token of response i shares A_i, so use "
       "adv[:, None] (shape (B, 1))", adv_axis=1),
]

MISTAKES = {"group_advantages": ADVANTAGE_MISTAKES, "k3_kl": K3_MISTAKES, "grpo_loss": LOSS_MISTAKES}
