"""One GRPO update of the toy, from the number of correct answers per group.

With 0/1 rewards a group's advantages depend only on k, its number of correct answers, so an update needs the
counts, not the G answers. `Tables` holds, per k, what the first inner step needs (the advantages, from
sim.grpo.advantage_table, the one advantage formula, and their surrogate gradients); `apply_update` takes mu
clipped policy-gradient steps in closed form, S seeds at once; `update_metrics` computes what the update logs
(TRL's names), for one batch or a few iterations' batches at once. run_toy (sim/toy/runs.py) calls apply_update
every iteration and update_metrics a few iterations at a time; `count_update` is the two on one batch
(expected_run's slots form). tests/test_toy.py proves them equal to sim/toy/reference.py, which samples every
answer and differentiates sim.grpo.policy_loss with autograd.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from sim import grpo
from sim.toy.model import ToyConfig, dot, policy, sum_p

CLIP = "clip_ratio/region_mean"  # TRL's name for the share of answers in the clipped region
Table = tuple[np.ndarray, np.ndarray]


def advantage_table(cfg: ToyConfig) -> Table:
    """(A_correct, A_wrong), each (G+1,), of a group with k = 0..G correct answers under cfg's baseline,
    std and eps. For scale="batch" the table is unscaled: the update divides it by the batch std."""
    scale = "none" if cfg.scale == "batch" else cfg.scale
    return _table(cfg.group_size, cfg.baseline, scale, cfg.ddof, cfg.eps)


@functools.lru_cache(maxsize=64)
def _table(G: int, baseline: str, scale: str, ddof: int, eps: float) -> Table:
    t = grpo.advantage_table(G, baseline=baseline, scale=scale, ddof=ddof, eps=eps).numpy()  # (G+1, 2)
    a_c, a_w = np.ascontiguousarray(t[:, 0]), np.ascontiguousarray(t[:, 1])
    a_c.flags.writeable = a_w.flags.writeable = False  # shared by every caller
    return a_c, a_w


class Tables:
    """Per k = 0..G correct answers in a group, what an update looks up: the advantages a_c, a_w (cfg's, or
    `table` = (A_correct, A_wrong), a student's); the answers n_c = k and n_w = G - k; at the first inner step
    (rho = 1, so a function of k alone) the surrogate gradients summed over the group's answers, ns = n s
    (surrogate_grad), the sum of |A| over them, and the answers the clip touches (only CISPO's cap eps_max < 1
    touches any at rho = 1; else None). Under scale "batch" all are unscaled: a batch divides them by its std."""

    def __init__(self, cfg: ToyConfig, table: Table | None = None):
        self.a_c, self.a_w = advantage_table(cfg) if table is None else table
        G = cfg.group_size
        self.n_c = np.arange(G + 1.0)
        self.n_w = G - self.n_c
        (s_c, clip_c), (s_w, clip_w) = surrogate_grad(self.a_c, 1.0, cfg), surrogate_grad(self.a_w, 1.0, cfg)
        self.ns_c, self.ns_w = self.n_c * s_c, self.n_w * s_w
        self.n_abs = self.n_c * np.abs(self.a_c) + self.n_w * np.abs(self.a_w)
        touched = clip_c is not None and bool(clip_c.any() or clip_w.any())
        self.clipped = self.n_c * clip_c + self.n_w * clip_w if touched else None


class Batch(NamedTuple):
    """N slots per seed, each a group of G answers: k[s, n] of them correct (integers), to prompt prompt[s, n]
    (None: slot n holds prompt n, N = P), counted weight[s, n] times (None: once; 0 for a slot left empty, a
    probability in expected_run). den (S, 1) the batch std its advantages are divided by (scale "batch", else
    None); inv_B = 1 / B, B = G sum(weight) answers (0 for an empty batch: no update), a number or (S, 1).
    Axes before S (a few iterations' batches at once) are allowed everywhere but in apply_update."""

    k: np.ndarray
    prompt: np.ndarray | None = None
    weight: np.ndarray | None = None
    den: np.ndarray | None = None
    inv_B: float | np.ndarray = 0.0

    @staticmethod
    def of(cfg: ToyConfig, k: np.ndarray, prompt: np.ndarray | None = None, weight: np.ndarray | None = None):
        """The batch of counts k (S, N), with its 1 / B and, under scale "batch", its std: sqrt(B m (1 - m) /
        (B - ddof)) over its B rewards of mean m. Where std + eps is 0 (eps = 0, one reward value) the advantages
        stay undivided, as sim.grpo.group_advantages leaves them."""
        G, N = cfg.group_size, k.shape[-1]
        if weight is None and cfg.scale != "batch":
            return Batch(k, prompt, None, None, 1.0 / (G * float(N)))
        B = np.full((*k.shape[:-1], 1), float(G * N)) if weight is None else G * weight.sum(axis=-1, keepdims=True)
        inv_B = np.divide(1.0, B, out=np.zeros_like(B), where=B > 0)
        den = None
        if cfg.scale == "batch":
            m = (k if weight is None else weight * k).sum(axis=-1, keepdims=True) * inv_B  # mean reward
            std = np.sqrt(B * m * (1.0 - m) / np.maximum(B - cfg.ddof, 1.0))
            den = np.where(std + cfg.eps > 0, std + cfg.eps, 1.0)
        return Batch(k, prompt, weight, den, inv_B)

    def looked_up(self, table: np.ndarray, *, weighted: bool = True, scaled: bool = True) -> np.ndarray:
        """A per-k table of Tables at each slot's k, times the slot's weight (unless not `weighted`: a value per
        answer) and over the batch std (unless not `scaled`: a count of answers)."""
        return self.weighted(table.take(self.k), weighted=weighted, scaled=scaled)

    def weighted(self, x: np.ndarray, *, weighted: bool = True, scaled: bool = True) -> np.ndarray:
        """x (..., N), a table's values at the slots' k, times their weights and over the batch std, in place."""
        if weighted and self.weight is not None:
            x *= self.weight
        if scaled and self.den is not None:
            x /= self.den
        return x

    def answers(self, G: int) -> tuple[np.ndarray, np.ndarray]:
        """The (weighted) numbers of correct and wrong answers per slot, k and G - k."""
        n_c = self.k.astype(float)
        n_w = G - n_c
        if self.weight is not None:
            n_c *= self.weight
            n_w *= self.weight
        return n_c, n_w

    def at_slots(self, x):
        """A value per prompt (..., P), or a tuple of them (a policy), at each slot's prompt: (..., N)."""
        if self.prompt is None:
            return x
        if isinstance(x, tuple):
            return tuple(self.at_slots(v) for v in x)
        return np.take_along_axis(np.broadcast_to(x, (*self.prompt.shape[:-1], x.shape[-1])), self.prompt, axis=-1)

    def per_prompt(self, dz: np.ndarray, P: int) -> np.ndarray:
        """dL/dz per slot (S, N) summed into dL/du per prompt (S, P)."""
        if self.prompt is None:
            return dz
        S = dz.shape[0]
        flat = (np.arange(S)[:, None] * P + self.prompt).ravel()
        return np.bincount(flat, dz.ravel(), minlength=S * P).reshape(S, P)

    def rows(self, x: np.ndarray) -> np.ndarray:
        """x (..., N) summed over the slots, times 1 / B: a mean over the batch's answers, (...)."""
        return x.sum(axis=-1) * (self.inv_B if np.isscalar(self.inv_B) else self.inv_B[..., 0])


class Step(NamedTuple):
    """What update_metrics needs of an update: the first inner step's ns_c, ns_w (S, N) (Tables.ns per slot),
    dL/du (S, P) and dL/dw (S,), and the share of answers clipped, the mean over the inner steps (S,) (None for
    mu = 1: update_metrics looks it up)."""

    ns_c: np.ndarray
    ns_w: np.ndarray
    du: np.ndarray
    dw: np.ndarray
    clip: np.ndarray | None


def apply_update(cfg: ToyConfig, tables: Tables, batch: Batch, w: np.ndarray, u: np.ndarray, d: np.ndarray,
                 now: tuple, ref: tuple, w_out: np.ndarray, u_out: np.ndarray, work: tuple | None = None) -> Step:
    """mu GRPO steps on (w, u) from the batch's counts alone, S seeds at once, into w_out (S,) and u_out (S, P).

    Slot n holds a group of G answers to prompt j, k of them correct, counted `weight` times. With z = w + u_j -
    d_j, rho = pi / pi_old, u = pi_ref / pi and B = G sum(weight) answers, the loss of sim.grpo.policy_loss
    (T = 1) is

        L = -(1/B) sum_slots weight * [k (s_c - beta k3_c) + (G - k)(s_w - beta k3_w)]

    s the clipped surrogate (surrogate_grad), so its gradient in z is logit_grad's. dL/du_j sums dL/dz over the
    slots of prompt j, dL/dw over all; then u -= lr dL/du, w -= lr_w dL/dw, mu times with pi_old fixed at the
    sampling state. now = policy(z) at (w, u), ref = policy(z_ref), per prompt (S, P). `work` = (ns_c, ns_w,
    du) (S, P), dw (S,), (S, P) and (S,) scratch: the first step's arrays are written there (a batch with
    prompt None only), so that an iteration of run_toy allocates nothing at mu = 1, beta = 0.
    """
    G, P, beta, mu = cfg.group_size, u.shape[-1], cfg.beta, cfg.mu
    identity = batch.prompt is None
    ns_c, ns_w, du, dw, tmp, tmp_w = (None,) * 6 if work is None else work
    ns_c = tables.ns_c.take(batch.k, out=ns_c)  # at rho = 1, n s(k): a table over k
    ns_w = tables.ns_w.take(batch.k, out=ns_w)
    if batch.weight is not None or batch.den is not None:
        ns_c, ns_w = batch.weighted(ns_c), batch.weighted(ns_w)
    now_s, ref_s = (now, ref) if identity else (batch.at_slots(now), batch.at_slots(ref))
    n_c, n_w = batch.answers(G) if beta > 0 or mu > 1 else (None, None)
    neg_inv_B = -batch.inv_B
    dz = logit_grad(ns_c, ns_w, n_c, n_w, now_s, ref_s, beta, neg_inv_B, out=du if identity else None, tmp=tmp)
    du = dz if identity else batch.per_prompt(dz, P)
    dw = step_w(du, out=dw)
    np.subtract(u, np.multiply(du, cfg.lr, out=tmp), out=u_out)
    np.subtract(w, np.multiply(dw, cfg.lr_shared, out=tmp_w), out=w_out)
    if mu == 1:
        return Step(ns_c, ns_w, du, dw, None)
    clip = np.zeros(u.shape[0]) if tables.clipped is None else batch.rows(batch.looked_up(tables.clipped, scaled=False))
    a_c = batch.looked_up(tables.a_c, weighted=False)  # each answer's advantage
    a_w = batch.looked_up(tables.a_w, weighted=False)
    old_c, old_w = now_s[2], now_s[3]
    d_s = d if identity else d[batch.prompt]
    for _ in range(1, cfg.mu):
        pol = policy(w_out[:, None] + batch.at_slots(u_out) - d_s)
        s_c, clip_c = surrogate_grad(a_c, np.exp(pol[2] - old_c), cfg)
        s_w, clip_w = surrogate_grad(a_w, np.exp(pol[3] - old_w), cfg)
        clip += batch.rows(n_c * clip_c + n_w * clip_w)
        du_k = batch.per_prompt(logit_grad(n_c * s_c, n_w * s_w, n_c, n_w, pol, ref_s, cfg.beta, neg_inv_B), P)
        u_out -= cfg.lr * du_k
        w_out -= cfg.lr_shared * step_w(du_k)
    return Step(ns_c, ns_w, du, dw, clip / cfg.mu)


def update_metrics(cfg: ToyConfig, tables: Tables, batch: Batch, now: tuple, ref: tuple, step: Step) -> dict:
    """What an update logs, TRL's names, (...) each: kl (k3 over the sampled answers), loss and grad_norm of the
    first inner step, mean_abs_adv, clip_ratio/region_mean (the mean over the inner steps) and n_groups. Any axes
    before the seeds' (a few iterations at once: run_toy); now (..., S, P) and ref (S, P) as in apply_update."""
    n_c, n_w = batch.answers(cfg.group_size)
    n_abs = batch.looked_up(tables.n_abs)
    inv_B = batch.inv_B if np.isscalar(batch.inv_B) else batch.inv_B[..., 0]
    m = first_step_metrics(cfg, batch.at_slots(now), batch.at_slots(ref), n_c, n_w, step.ns_c, step.ns_w, n_abs,
                           inv_B)
    m["grad_norm"] = np.sqrt(dot(step.du, step.du) + step.dw * step.dw)
    if step.clip is not None:
        m[CLIP] = step.clip
    else:  # mu = 1: the answers the clip touches at rho = 1, a table over k
        clipped = tables.clipped
        m[CLIP] = np.zeros(n_c.shape[:-1]) if clipped is None else batch.rows(batch.looked_up(clipped, scaled=False))
    m["n_groups"] = np.full(n_c.shape[:-1], n_c.shape[-1]) if batch.weight is None else batch.weight.sum(axis=-1)
    return m


def count_update(w: np.ndarray, u: np.ndarray, prompt: np.ndarray | None, k: np.ndarray, weight: np.ndarray | None,
                 cfg: ToyConfig, d: np.ndarray, z_ref: np.ndarray, *, table: Table | None = None,
                 tables: Tables | None = None) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """apply_update and update_metrics on one batch: new w (S,), new u (S, P) and the metrics, (S,) each.

    Shapes: w (S,), u (S, P), prompt k weight (S, N) (prompt None: slot n holds prompt n; weight None: 1 each),
    d (P,), z_ref (S, P). `table` = (A_correct, A_wrong) over k = 0..G replaces advantage_table(cfg) (a
    student's advantages); `tables` = Tables(cfg, table) if the caller has them.
    """
    tables = Tables(cfg, table) if tables is None else tables
    batch = Batch.of(cfg, np.asarray(k).astype(np.intp), prompt, weight)
    now, ref = policy(w[:, None] + u - d), policy(z_ref)
    w_out, u_out = np.empty_like(w, dtype=float), np.empty_like(u, dtype=float)
    step = apply_update(cfg, tables, batch, w, u, d, now, ref, w_out, u_out)
    return w_out, u_out, update_metrics(cfg, tables, batch, now, ref, step)


def first_step_metrics(cfg: ToyConfig, pol, ref, n_c, n_w, ns_c, ns_w, n_abs, inv_B) -> dict:
    """kl (k3 over the sampled answers), loss and mean_abs_adv of the first inner step (rho = 1), from the slots'
    answer counts n, surrogate gradients ns = n s (surrogate_grad at rho = 1) and n_abs = n_c |A_c| + n_w |A_w|,
    summed over the last axis. Also what expected_run folds a prompt's slots into."""
    kl = 0.0
    for n, p, lp, p_ref, lp_ref in ((n_c, pol[0], pol[2], ref[0], ref[2]), (n_w, pol[1], pol[3], ref[1], ref[3])):
        k3 = p_ref / p
        k3 -= lp_ref - lp
        k3 -= 1.0  # k3 = u - log u - 1, u = pi_ref / pi
        side = dot(n, k3)
        if not np.isfinite(side).all():  # an answer with pi ~ 0 was never sampled: weight 0, even where k3 = inf
            side = dot(n, np.where(n > 0, k3, 0.0))
        kl = kl + side
    kl *= inv_B
    # the loss at rho = 1: TRL's CISPO loss is -sg(min(rho, eps_max)) A log pi, PPO's clipped surrogate is A (= s)
    surrogate = dot(ns_c, pol[2]) + dot(ns_w, pol[3]) if cfg.loss_type == "cispo" else sum_p(ns_c) + sum_p(ns_w)
    return {"kl": kl, "loss": -surrogate * inv_B + cfg.beta * kl, "mean_abs_adv": sum_p(n_abs) * inv_B}


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
    at beta = 0; n_c, n_w are unused there (pass None). apply_update and expected_run's folded form step by it.
    """
    p_c, p_w = pol[0], pol[1]
    if beta > 0:
        ns_c = ns_c - beta * (n_c * (1.0 - ref[0] / p_c))
        ns_w = ns_w - beta * (n_w * (1.0 - ref[1] / p_w))
    out = np.multiply(ns_c, p_w, out=out)
    out -= np.multiply(ns_w, p_c, out=tmp)
    out *= neg_inv_B
    return out
