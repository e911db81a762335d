"""The lean loop: run_toy for mu = 1 without dynamic sampling or the batch std, fast.

It is runs._run_general's arithmetic, bit for bit, on the same random stream, with little more than the
dynamics inside the loop. With rho = 1, slot j holding prompt j and advantages that depend on k alone,
the surrogate gradient n s(k) of a group is a table over k (update.surrogate_grad at rho = 1), so each
iteration computes the policy, draws the counts, looks the table up and steps by update.logit_grad, the
one step rule count_update also uses. The metrics are computed every few iterations for a whole chunk
at once. tests/test_toy.py proves the two loops give the same history.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from sim.rng import toy_first_uniforms
from sim.toy.binomial import binomial_sampler
from sim.toy.history import STATE_METRICS, History, ToyHistory, chunk_rows, state_metrics
from sim.toy.model import ToyConfig, dot, init_state, sum_p
from sim.toy.update import CLIP, advantage_table, logit_grad, step_w, surrogate_grad


def run_lean(cfg: ToyConfig, table: tuple | None = None) -> ToyHistory | None:
    """run_toy for mu = 1 without dynamic sampling or the batch std (see the module docstring).

    `table` = (A_correct, A_wrong) over k replaces advantage_table(cfg).
    Returns None where it would leave _run_general's arithmetic (a probability that underflows to 0,
    or a non-finite step, only possible with beta > 0): run_toy then takes the general loop.
    """
    S, T, G, beta = cfg.n_seeds, cfg.iterations, cfg.group_size, cfg.beta
    d, w, u, _ = init_state(cfg, S)
    P = len(d)
    draw = binomial_sampler(G)
    a_c, a_w = advantage_table(cfg) if table is None else table  # (G+1,) each
    n_c = np.arange(G + 1.0)  # (G+1,) correct answers in a group with k correct, and G - k wrong ones
    n_w = G - n_c
    (s_c, clip_c), (s_w, clip_w) = surrogate_grad(a_c, 1.0, cfg), surrogate_grad(a_w, 1.0, cfg)
    w_c, w_w = n_c * s_c, n_w * s_w  # (G+1,) n s(k), the surrogate's gradient summed over a group's answers
    # answers the clip touches at rho = 1 (only CISPO's cap eps_max < 1 does), per group with k correct
    clip_table = None if clip_c is None or not (clip_c.any() or clip_w.any()) else n_c * clip_c + n_w * clip_w
    neg_inv_B = -(1.0 / (G * float(P)))
    abs_table = n_c * np.abs(a_c) + n_w * np.abs(a_w)  # (G+1,) sum of |A| over a group with k correct
    C = chunk_rows(S * P)  # iterations per chunk
    h = History(cfg, S, d, w, u)
    us, ws, counts, steps = h.u, h.w, h.counts, h.metrics
    p, states = np.empty((T + 1, S, P)), {name: np.empty((T + 1, S)) for name in STATE_METRICS}
    # the chunk's policy (p_c is p), dL/dz, and k A_c(k), (G - k) A_w(k) per slot
    p_w, lp_c, lp_w, dz, nA_c, nA_w = (np.empty((C, S, P)) for _ in range(6))
    k, dw, z, tmp = np.empty((C, S, P), dtype=np.intp), np.empty((C, S)), np.empty((S, P)), np.empty((S, P))
    scratch = (np.empty((C, S, P)), np.empty((C, S, P)))  # the step metrics' temporaries
    lr, lr_w, tmp_w = cfg.lr, cfg.lr_shared, np.empty(S)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        for t0 in range(0, T + 1, C):  # states t0..t1-1 and the steps taken from them
            t1 = min(t0 + C, T + 1)
            n = min(t1, T) - t0  # steps in this chunk
            # (n, S, P) the first draws' uniforms of iterations t0..t0+n-1 (sim/rng.py: seed s has key seed + s)
            uniforms = toy_first_uniforms(cfg.seed, S, t0, n, P)
            offsets = draw.offsets(uniforms)
            for t in range(t0, t1):
                j = t - t0
                np.add(ws[t][:, None], us[t], out=z)
                z -= d  # (S, P) logits w + u - d
                expit(z, out=p[t])  # policy(z), less its guard for sigmoid(z) == 0 (checked below)
                np.log(p[t], out=lp_c[j])
                np.subtract(lp_c[j], z, out=lp_w[j])
                np.exp(lp_w[j], out=p_w[j])
                if t == 0:
                    ref = (p[0].copy(), p_w[0].copy(), lp_c[0].copy(), lp_w[0].copy())  # the initial policy
                if t == T:
                    break
                k[j] = draw.invert(uniforms[j], p[t], offsets[j])
                w_c.take(k[j], out=nA_c[j])
                w_w.take(k[j], out=nA_w[j])
                n_ck, n_wk = (n_c.take(k[j]), n_w.take(k[j])) if beta > 0 else (None, None)
                logit_grad(nA_c[j], nA_w[j], n_ck, n_wk, (p[t], p_w[j]), ref, beta, neg_inv_B, out=dz[j], tmp=tmp)
                step_w(dz[j], out=dw[j])  # (S,) dL/dw
                np.subtract(us[t], np.multiply(dz[j], lr, out=tmp), out=us[t + 1])
                np.subtract(ws[t], np.multiply(dw[j], lr_w, out=tmp_w), out=ws[t + 1])
                if beta > 0 and not np.isfinite(us[t + 1].sum() + ws[t + 1].sum()):
                    return None
            pol = (p[t0:t1], p_w[: t1 - t0], lp_c[: t1 - t0], lp_w[: t1 - t0])
            state_metrics(states, slice(t0, t1), pol, ref[2:], G)
            counts[t0 : t0 + n] = k[:n]
            _lean_step_metrics(steps, slice(t0, t0 + n), cfg, counts[t0 : t0 + n], tuple(x[:n] for x in pol), ref,
                               nA_c[:n], nA_w[:n], abs_table.take(k[:n]), dz[:n], dw[:n], tuple(x[:n] for x in scratch))
    if not (p.min() > 0 and np.isfinite(ws[T].sum() + us[T].sum())):
        return None
    steps["n_groups"][:] = P  # every prompt's group is in the batch
    if clip_table is not None:  # else clip_ratio/region_mean stays 0 at mu = 1
        steps[CLIP][:] = clip_table.take(counts.astype(np.intp)).sum(axis=2) * -neg_inv_B
    h.answers[:] = G * P
    return h.finish(p, states)


def _lean_step_metrics(out: dict, rows: slice, cfg: ToyConfig, n_c: np.ndarray, pol: tuple, ref: tuple,
                       nA_c: np.ndarray, nA_w: np.ndarray, absA: np.ndarray, dz: np.ndarray, dw: np.ndarray,
                       scratch: tuple) -> None:
    """count_update's metrics at its first (here only) step, for n iterations at once, into out[name][rows].

    n_c (n, S, P) counts k, pol = policy of the states sampled from, ref = policy of the reference (S, P),
    nA_c, nA_w = k s_c(k), (G - k) s_w(k) (n, S, P) with s = surrogate_grad at rho = 1,
    absA = k |A_c(k)| + (G - k) |A_w(k)| (n, S, P),
    dz = dL/du (n, S, P), dw = dL/dw (n, S); scratch two (n, S, P) arrays to overwrite.
    """
    G, P = cfg.group_size, n_c.shape[2]
    inv_B = 1.0 / (G * float(P))
    p_c, p_w, lp_c, lp_w = pol
    a, k3 = scratch
    kl = 0.0
    for n, p, lp, p_ref, lp_ref in ((n_c, p_c, lp_c, ref[0], ref[2]), (None, p_w, lp_w, ref[1], ref[3])):
        np.subtract(lp_ref, lp, out=a)
        np.divide(p_ref, p, out=k3)
        k3 -= a
        k3 -= 1.0  # k3 = u - log u - 1, u = pi_ref / pi
        kl = kl + dot(np.subtract(G, n_c, out=a) if n is None else n, k3)  # n_c correct answers, G - n_c wrong
    kl *= inv_B
    out["kl"][rows] = kl
    # the loss at rho = 1: PPO's surrogate is A, TRL's CISPO loss is sg(min(1, eps_max)) A log pi
    surrogate = dot(nA_c, lp_c) + dot(nA_w, lp_w) if cfg.loss_type == "cispo" else sum_p(nA_c) + sum_p(nA_w)
    out["loss"][rows] = -surrogate * inv_B + cfg.beta * kl
    out["mean_abs_adv"][rows] = sum_p(absA) * inv_B
    out["grad_norm"][rows] = np.sqrt(dot(dz, dz) + dw * dw)
