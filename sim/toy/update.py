"""One GRPO update of the toy, from the number of correct answers per group (the fast path).

With 0/1 rewards a group's advantages depend only on k, its number of correct answers, so an update
needs the counts, not the G answers: `advantage_table` looks the advantages up (built by
sim.grpo.advantage_table, the one advantage formula) and `count_update` applies mu clipped policy-gradient
steps in closed form, S seeds at once. tests/test_toy.py proves it equal to sim/toy/reference.py, which
samples every answer and differentiates sim.grpo.policy_loss with autograd.
"""

from __future__ import annotations

import functools

import numpy as np

from sim import grpo
from sim.toy.model import ToyConfig, policy

CLIP = "clip_ratio/region_mean"  # TRL's name for the share of answers in the clipped region


def advantage_table(cfg: ToyConfig) -> tuple[np.ndarray, np.ndarray]:
    """(A_correct, A_wrong), each (G+1,), of a group with k = 0..G correct answers under cfg's baseline,
    std and eps. For scale="batch" the table is unscaled: count_update divides it by the batch std."""
    scale = "none" if cfg.scale == "batch" else cfg.scale
    return _table(cfg.group_size, cfg.baseline, scale, cfg.ddof, cfg.eps)


@functools.lru_cache(maxsize=64)
def _table(G: int, baseline: str, scale: str, ddof: int, eps: float) -> tuple[np.ndarray, np.ndarray]:
    t = grpo.advantage_table(G, baseline=baseline, scale=scale, ddof=ddof, eps=eps).numpy()  # (G+1, 2)
    a_c, a_w = np.ascontiguousarray(t[:, 0]), np.ascontiguousarray(t[:, 1])
    a_c.flags.writeable = a_w.flags.writeable = False  # shared by every caller
    return a_c, a_w


def count_update(
    w: np.ndarray,
    u: np.ndarray,
    prompt: np.ndarray | None,
    k: np.ndarray,
    weight: np.ndarray,
    cfg: ToyConfig,
    d: np.ndarray,
    z_ref: np.ndarray,
    *,
    now: tuple | None = None,
    ref: tuple | None = None,
    table: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """mu GRPO steps on (w, u) from counts alone: the fast path, S seeds at once.

    The batch has N slots per seed; slot n holds a group of G answers to prompt `prompt[s, n]`, of
    which k[s, n] are correct, and counts `weight[s, n]` times (1/0 for sampled groups, a
    probability for expected_run). With z = w + u_prompt - d_prompt, rho = pi / pi_old, u = pi_ref / pi
    and B = G * sum(weight) answers, the loss of sim.grpo.policy_loss (T = 1) is

        L = -(1/B) sum_slots weight * [k (s_c - beta k3_c) + (G - k)(s_w - beta k3_w)]

    s the clipped surrogate, and since d log sigmoid(z)/dz = sigmoid(-z), d log sigmoid(-z)/dz = -sigmoid(z),

        dL/dz = -(weight/B) [k g_c sigmoid(-z) - (G - k) g_w sigmoid(z)],
        g = rho A [not clipped] - beta (1 - u)        (d objective / d log pi of one answer)

    dL/du_j sums dL/dz over the slots of prompt j; dL/dw sums over all slots. Then
    u -= lr dL/du, w -= lr_w dL/dw, repeated mu times with pi_old fixed at the sampling state.

    Shapes: w (S,), u (S, P), prompt k weight (S, N), d (P,), z_ref (S, P). prompt=None means slot n
    holds prompt n (N = P); then two optional caches: `now` = policy(z) now, `ref` = policy(z_ref).
    `table` = (A_correct, A_wrong) over k = 0..G replaces advantage_table(cfg) (a student's advantages).
    Returns new w (S,), new u (S, P) and metrics (TRL's names), each (S,): loss, grad_norm and kl (k3,
    first inner step), mean_abs_adv, clip_ratio/region_mean (mean over inner steps).
    """
    S, P = u.shape
    G = cfg.group_size
    k = k.astype(float)
    n_c, n_w = weight * k, weight * (G - k)  # (S, N) weighted answer counts
    B = G * weight.sum(axis=1)  # (S,) answers in the batch
    inv_B = np.divide(1.0, B, out=np.zeros_like(B), where=B > 0)[:, None]  # (S, 1); empty batch: no update
    table_c, table_w = advantage_table(cfg) if table is None else table  # (G+1,) each, over k = 0..G
    k_int = k.astype(np.int64)
    a_c, a_w = table_c[k_int], table_w[k_int]  # (S, N) each
    if cfg.scale == "batch":  # the batch std couples the groups: divide the unscaled table by it
        m = n_c.sum(axis=1, keepdims=True) * inv_B  # (S, 1) mean reward of the batch
        batch_std = np.sqrt(B[:, None] * m * (1.0 - m) / np.maximum(B[:, None] - cfg.ddof, 1.0))
        den = np.where(batch_std + cfg.eps > 0, batch_std + cfg.eps, 1.0)  # eps = 0, one reward: as group_advantages
        a_c, a_w = a_c / den, a_w / den
    identity = prompt is None  # slot j holds prompt j

    def gather(x: np.ndarray) -> np.ndarray:  # (S, P) -> (S, N): the value at each slot's prompt
        return x if identity else np.take_along_axis(x, prompt, axis=1)

    d_n = d if identity else d[prompt]  # (S, N)
    ref_slots = ref if (identity and ref is not None) else policy(gather(z_ref))  # pi_ref per slot
    flat_index = None if identity else (np.arange(S)[:, None] * P + prompt).ravel()

    w, u = w.copy(), u.copy()
    metrics: dict[str, np.ndarray] = {CLIP: np.zeros(S)}
    neg_inv_B = -inv_B
    for step in range(cfg.mu):
        fresh = step > 0 or not identity or now is None
        pol = policy(w[:, None] + gather(u) - d_n) if fresh else now
        if step == 0:  # pi_old is the sampling state: rho = 1 exactly
            old_c, old_w = pol[2], pol[3]
            rho_c = rho_w = 1.0
        else:
            rho_c, rho_w = np.exp(pol[2] - old_c), np.exp(pol[3] - old_w)
        s_c, clip_c = surrogate_grad(a_c, rho_c, cfg)
        s_w, clip_w = surrogate_grad(a_w, rho_w, cfg)
        if clip_c is not None:
            metrics[CLIP] += (n_c * clip_c + n_w * clip_w).sum(axis=1) * inv_B[:, 0] / cfg.mu
        ns_c, ns_w = n_c * s_c, n_w * s_w
        dz = logit_grad(ns_c, ns_w, n_c, n_w, pol, ref_slots, cfg.beta, neg_inv_B)  # (S, N) dL/dz
        du = dz if identity else np.bincount(flat_index, dz.ravel(), minlength=S * P).reshape(S, P)
        dw = step_w(du)  # (S,)
        if step == 0:
            n_abs = n_c * np.abs(a_c) + n_w * np.abs(a_w)
            metrics |= first_step_metrics(cfg, pol, ref_slots, n_c, n_w, ns_c, ns_w, n_abs, inv_B[:, 0])
            metrics["grad_norm"] = np.sqrt((du * du).sum(axis=1) + dw * dw)
        u -= cfg.lr * du
        w -= cfg.lr_shared * dw
    return w, u, metrics


def first_step_metrics(cfg: ToyConfig, pol, ref, n_c, n_w, ns_c, ns_w, n_abs, inv_B) -> dict:
    """kl (k3 over the sampled answers), loss and mean_abs_adv of the first inner step (rho = 1), (S,) each,
    from the slots' answer counts n, surrogate gradients ns = n s (surrogate_grad at rho = 1) and n_abs =
    n_c |A_c| + n_w |A_w|, summed over the last axis. Also what expected_run folds a prompt's slots into."""
    p_c, p_w, lp_c, lp_w = pol
    k3_c = ref[0] / p_c - (ref[2] - lp_c) - 1.0  # k3 = u - log u - 1, u = pi_ref / pi
    k3_w = ref[1] / p_w - (ref[3] - lp_w) - 1.0
    # an answer with probability 0 was never sampled: weight 0, even where its k3 is infinite
    kl = (np.where(n_c > 0, n_c * k3_c, 0.0) + np.where(n_w > 0, n_w * k3_w, 0.0)).sum(axis=-1) * inv_B
    if cfg.loss_type == "cispo":  # TRL's CISPO loss: -sg(min(rho, eps_max)) A log pi
        surrogate = np.where(n_c > 0, ns_c * lp_c, 0.0) + np.where(n_w > 0, ns_w * lp_w, 0.0)
    else:  # PPO's clipped surrogate at rho = 1: A (= s)
        surrogate = ns_c + ns_w
    return {"kl": kl, "loss": -surrogate.sum(axis=-1) * inv_B + cfg.beta * kl,
            "mean_abs_adv": n_abs.sum(axis=-1) * inv_B}


def surrogate_grad(a: np.ndarray, rho, cfg: ToyConfig) -> tuple[np.ndarray, np.ndarray | None]:
    """d objective / d log pi of one answer with advantage `a` at ratio rho = pi / pi_old, before the KL
    term, and which answers the clip touches (None where none can: rho = 1 exactly, PPO's clip).

      loss_type "grpo" (PPO's clip, sim.grpo.clipped_surrogate): obj = min(rho A, clip(rho, 1 - eps,
          1 + eps_high) A), so the gradient is rho A inside the clip range and 0 where the clip bites
          (rho > 1 + eps_high with A > 0, rho < 1 - eps with A < 0): that answer's gradient is silenced.
      loss_type "cispo" (MiniMax-M1, TRL's loss_type="cispo"): obj = sg(min(rho, eps_max)) A log pi, the
          importance weight capped and detached, so the gradient is min(rho, eps_max) A: every answer keeps
          a gradient. eps_max is clip_eps_high as TRL reads epsilon_high for CISPO (recommended 5.0), not
          1 + eps_high; the share counted is TRL's cispo_clip_ratio, rho > eps_max with A > 0.
    """
    eps_high = cfg.clip_eps if cfg.clip_eps_high is None else cfg.clip_eps_high
    if cfg.loss_type == "cispo":
        return np.minimum(rho, eps_high) * a, (rho > eps_high) & (a > 0)
    if np.isscalar(rho) and rho == 1.0:  # on-policy: strictly inside the clip range (both eps > 0)
        return a, None
    clipped = ((rho > 1.0 + eps_high) & (a > 0)) | ((rho < 1.0 - cfg.clip_eps) & (a < 0))
    return np.where(clipped, 0.0, rho * a), clipped


def step_w(du: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """dL/dw: w enters every prompt's logit, so its gradient sums dL/du over the prompts (the last axis)."""
    return np.add.reduce(du, axis=-1, out=out)


def logit_grad(ns_c, ns_w, n_c, n_w, pol: tuple, ref: tuple, beta: float, neg_inv_B, out=None, tmp=None):
    """The toy's step rule: dL/dz of GRPO's loss (sim.grpo.policy_loss with one token per answer) at one
    slot, from n_c correct and n_w wrong answers whose surrogate gradients (surrogate_grad) sum to
    ns_c = n_c s_c and ns_w = n_w s_w:

        dL/dz = -(1/B) [(ns_c - beta n_c (1 - u_c)) sigmoid(-z) - (ns_w - beta n_w (1 - u_w)) sigmoid(z)]

    u = pi_ref / pi (d k3 / d log pi = 1 - u), d log sigmoid(z)/dz = sigmoid(-z) = pi(wrong),
    d log sigmoid(-z)/dz = -sigmoid(z) = -pi(correct). pol = policy(z) and ref = policy(z_ref) per slot;
    neg_inv_B = -1/B (broadcasting). With `out` and `tmp` (arrays of the slots' shape) it allocates nothing
    at beta = 0; n_c, n_w are unused there (pass None). count_update and the lean loop both step by it.
    """
    p_c, p_w = pol[0], pol[1]
    if beta > 0:
        ns_c = ns_c - beta * (n_c * (1.0 - ref[0] / p_c))
        ns_w = ns_w - beta * (n_w * (1.0 - ref[1] / p_w))
    out = np.multiply(ns_c, p_w, out=out)
    out -= np.multiply(ns_w, p_c, out=tmp)
    out *= neg_inv_B
    return out
