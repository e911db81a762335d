"""Sampled runs of the toy, S seeds at once, and the exact average run.

    run_toy       each iteration draws k_j ~ Binomial(G, p_j) correct answers per prompt (the same law as
                  G separate answers; sim.toy.binomial samples it at a cost independent of G), refills
                  all-equal groups under dynamic sampling, and applies update.count_update
    expected_run  the deterministic "average run": each step applies the expected update

run_toy has two loops: _run_general (count_update every iteration, any config) and lean.run_lean (mu = 1,
no dynamic sampling or batch std: the defaults), which keeps only the dynamics in the loop and computes
the metrics a few iterations at a time; a test proves the two give the same history.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
from scipy.special import gammaln

from sim.rng import toy_first_uniforms, toy_keys, toy_refill_uniforms
from sim.toy import update
from sim.toy.binomial import binomial_sampler
from sim.toy.history import History, ToyHistory, chunk_rows, diverged
from sim.toy.lean import run_lean
from sim.toy.model import ToyConfig, init_state, policy
from sim.toy.update import count_update

Table = tuple[np.ndarray, np.ndarray]
REFILL_BLOCKS = 16384  # refill draws computed at once, at most (all of a few rounds, for the slots left empty)


def run_toy(cfg: ToyConfig, on_step: Callable[[int, dict], None] | None = None, *,
            advantage_table: Table | None = None) -> ToyHistory:
    """S = cfg.n_seeds independent sampled runs at once (numpy, count-based).

    Same cfg -> same history; the first t iterations do not depend on cfg.iterations. Seed s of a run draws
    from sim/rng.py's portable generator with key seed + s, so it does not depend on n_seeds: "seed 7" of a
    band from seed 0 is the 1-seed run with seed 7, and assets/js/engine.js draws the same numbers.
    `on_step(t, metrics)` is called after iteration t (1..T) with the step's metrics, (S,) arrays.
    `advantage_table` = (A_correct, A_wrong) over k = 0..G replaces the advantages of cfg (for instance a
    student's group_advantages, tabulated; scale "group" or "none" only). A run whose logits overflow raises
    ValueError (never a NaN history).
    """
    if advantage_table is not None:
        advantage_table = _check_table(cfg, advantage_table)
    if on_step is None and cfg.mu == 1 and not cfg.dynamic_sampling and cfg.scale != "batch":
        h = run_lean(cfg, advantage_table)
        if h is not None:
            return h
    return _run_general(cfg, on_step, advantage_table)


def _check_table(cfg: ToyConfig, table: Table) -> Table:
    if cfg.scale == "batch":
        raise ValueError("a custom advantage table needs scale 'group' or 'none' (the batch std is not a table)")
    a_c, a_w = (np.asarray(x, dtype=float) for x in table)
    if a_c.shape != (cfg.group_size + 1,) or a_w.shape != (cfg.group_size + 1,):
        raise ValueError(f"the advantage table needs G + 1 = {cfg.group_size + 1} entries per column")
    if not (np.isfinite(a_c).all() and np.isfinite(a_w).all()):
        raise ValueError("the advantage table holds NaN or infinite values")
    return a_c, a_w


def _run_general(cfg: ToyConfig, on_step: Callable[[int, dict], None] | None = None,
                 table: Table | None = None) -> ToyHistory:
    """run_toy for any cfg: _draw_batch and count_update every iteration."""
    S, T = cfg.n_seeds, cfg.iterations
    d, w, u, z_ref = init_state(cfg, S)
    P = len(d)
    keys, C = toy_keys(cfg.seed, S), chunk_rows(S * P)
    h = History(cfg, S, d, w, u)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        ref = policy(z_ref)
        for t in range(T):
            if t % C == 0:  # the first draws' uniforms, a few iterations at a time: (n, S, P)
                first = toy_first_uniforms(cfg.seed, S, t, min(C, T - t), P)
            now = policy(w[:, None] + u - d)  # (S, P) each
            k0, prompt, k, weight, answers = _draw_batch(keys, t, first[t % C], now[0], cfg)
            w, u, m = count_update(w, u, prompt, k, weight, cfg, d, z_ref, now=now, ref=ref, table=table)
            if not np.isfinite(u.sum() + w.sum()):
                raise diverged(t + 1)
            m["n_groups"] = weight.sum(axis=1)
            h.record(t, w, u, k0, answers, m)
            if on_step is not None:
                on_step(t + 1, m)
        return h.finish()


def _draw_batch(keys: tuple, t: int, uniforms: np.ndarray, p: np.ndarray, cfg: ToyConfig):
    """Counts for iteration t: one group per prompt, then (dynamic sampling) refill rounds.

    p (S, P), uniforms (S, P) the first draw's (sim.rng.toy_first_uniforms), keys the seeds' keys.
    Returns first-draw counts k0 (S, P), and the batch: prompt, k, weight (S, P) with weight 1
    for a slot holding a group and 0 for a slot left empty, plus answers drawn (S,).
    Dynamic sampling: every round r = 1..max_redraws, each empty slot (a group whose G rewards were all equal)
    draws a prompt uniformly from the pool, floor(U P), and a fresh group for it (sim/rng.py's refill uniforms).
    """
    S, P = p.shape
    G = cfg.group_size
    draw = binomial_sampler(G)
    k0 = draw.invert(uniforms, p)  # (S, P) correct answers per group, ~ Binomial(G, p)
    answers = np.full(S, G * P)
    if not cfg.dynamic_sampling:
        return k0, None, k0, np.ones((S, P)), answers  # prompt None: slot j holds prompt j
    k, prompt = k0.copy(), np.tile(np.arange(P), (S, 1))
    full = (k > 0) & (k < G)
    r = 1
    while r <= cfg.max_redraws:
        seeds, slots = np.nonzero(~full)  # the empty slots, (n,) each
        if not seeds.size:
            break
        # rounds r..r+b-1 for these slots at once: a slot draws in each round until a group has signal, so its
        # draws do not depend on the other slots (the draws past its first informative round go unused)
        b = min(cfg.max_redraws + 1 - r, max(1, REFILL_BLOCKS // seeds.size))
        u_prompt, u_count = toy_refill_uniforms(keys, t, np.arange(r, r + b), seeds, slots)  # (b, n) each
        new_prompt = np.minimum((u_prompt * P).astype(np.intp), P - 1)  # floor(U P): uniform over the pool
        new_k = draw.invert(u_count, p[seeds, new_prompt])  # (b, n)
        signal = (new_k > 0) & (new_k < G)
        filled = signal.any(axis=0)  # (n,)
        last = np.where(filled, signal.argmax(axis=0), b - 1)  # (n,) the last round each slot draws in
        answers += G * np.bincount(seeds, weights=last + 1, minlength=S).astype(answers.dtype)
        i, f = last[filled], np.flatnonzero(filled)
        s_f, j_f = seeds[f], slots[f]
        prompt[s_f, j_f], k[s_f, j_f], full[s_f, j_f] = new_prompt[i, f], new_k[i, f], True
        r += b
    return k0, prompt, k, full.astype(float), answers


def expected_run(cfg: ToyConfig, *, advantage_table: Table | None = None) -> ToyHistory:
    """The "average run" (S = 1): each step applies the expected update, no sampling.

    The batch becomes every (prompt j, count k) pair, weighted by P(k_j = k) = Binomial(G, p_j), and
    count_update does the rest. What is exact:
      - mu = 1, scale "group"/"none": exactly E[update | state] for one step. The run is the
        deterministic path x_{t+1} = x_t + E[update | x_t], not E[x_t] of the sampled runs (the two
        differ by the curvature of the update, small when lr is small compared with the noise).
      - mu > 1: every inner step uses the expected gradient at the current parameters (pi_old fixed at
        the sampled state), i.e. mu steps of the mean gradient, not the mean of mu steps.
      - scale "batch": the batch std is taken at the expected counts (plug-in), an approximation.
      - dynamic sampling: exact for unlimited redraws (each empty slot ends up with prompt i with
        probability proportional to 1 - q_i, q_i = p_i^G + (1 - p_i)^G, and B = P G); the cap
        max_redraws only enters the expected answers spent and n_groups.
    Step metrics are expectations too (grad_norm is the norm of the expected gradient); counts holds G p_j.
    `advantage_table` as in run_toy.
    """
    table = None if advantage_table is None else _check_table(cfg, advantage_table)
    cfg = cfg if cfg.n_seeds == 1 else dataclasses.replace(cfg, n_seeds=1)
    if cfg.mu == 1 and not cfg.dynamic_sampling and cfg.scale != "batch":
        return _expected_folded(cfg, table)
    return _expected_slots(cfg, table)


def log_choose(G: int) -> np.ndarray:
    """(G+1,) log C(G, k) for k = 0..G."""
    k = np.arange(G + 1.0)
    return gammaln(G + 1) - gammaln(k + 1) - gammaln(G - k + 1)


def expected_pmf(lp_c: np.ndarray, lp_w: np.ndarray, log_c: np.ndarray) -> np.ndarray:
    """(P, G+1) P(k_j = k) = C(G, k) p_j^k (1 - p_j)^(G - k), from log p and log(1 - p) (P,) of policy() and
    log_c = log_choose(G): exp(log C(G, k) + k log p + (G - k) log(1 - p)). The logs keep a rare answer's
    chance where p itself rounds to 1 (z > 37), and with it that answer's KL gradient, which grows as 1 / pi:
    both expected-run forms use it, so they agree there too."""
    G = len(log_c) - 1
    k = np.arange(G + 1.0)
    return np.exp(log_c + k * lp_c[:, None] + (G - k) * lp_w[:, None])


def _expected_slots(cfg: ToyConfig, table: Table | None) -> ToyHistory:
    """expected_run for any cfg (S = 1): count_update over every (prompt, k) slot, weighted by P(k)."""
    T = cfg.iterations
    d, w, u, z_ref = init_state(cfg, 1)
    P, G = len(d), cfg.group_size
    h = History(cfg, 1, d, w, u)
    slot_prompt, slot_k = np.repeat(np.arange(P), G + 1), np.tile(np.arange(G + 1), P)  # (P*(G+1),)
    log_c = log_choose(G)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        for t in range(T):
            pol = policy(w[0] + u[0] - d)  # (P,) each
            p = pol[0]
            pmf = expected_pmf(pol[2], pol[3], log_c)  # (P, G+1)
            q = pmf[:, 0] + pmf[:, G]  # (P,) chance of a flat group
            prompt, k, weight = slot_prompt, slot_k, pmf.ravel()
            answers, n_groups = G * P, P
            if cfg.dynamic_sampling:
                informative = pmf.copy()
                informative[:, [0, G]] = 0.0
                total = informative.sum()  # sum_i (1 - q_i)
                refill = q.sum() * informative.ravel() / total if total > 0 else np.zeros(P * (G + 1))
                prompt, k = np.concatenate([prompt, prompt]), np.concatenate([k, k])
                weight = np.concatenate([informative.ravel(), refill])
                q_bar = q.mean()  # a refill draw (uniform prompt) is flat with probability q_bar
                answers = G * (P + q.sum() * sum(q_bar**r for r in range(cfg.max_redraws)))
                n_groups = P - q.sum() * q_bar**cfg.max_redraws
            w, u, m = count_update(w, u, prompt[None], k[None], weight[None], cfg, d, z_ref, table=table)
            if not np.isfinite(u.sum() + w.sum()):
                raise diverged(t + 1)
            m |= {"frac_all_correct": pmf[:, G].mean(), "frac_all_wrong": pmf[:, 0].mean(), "n_groups": n_groups}
            h.record(t, w, u, G * p, answers, m)
        return h.finish()


def _expected_folded(cfg: ToyConfig, table: Table | None) -> ToyHistory:
    """expected_run for mu = 1 without dynamic sampling or the batch std, with each prompt's G + 1 slots
    folded into one. With rho = 1 the step (update.logit_grad) and the first-step metrics are linear in a
    slot's counts n and surrogate gradients n s(k), so the expectation over k ~ Binomial(G, p_j) is one
    slot per prompt holding E[n] = sum_k P(k) n(k) and E[n s] = sum_k P(k) n(k) s(k): the same arithmetic as
    count_update over the P (G + 1) weighted slots, up to rounding (tests/test_toy.py checks both)."""
    T = cfg.iterations
    d, w, u, z_ref = init_state(cfg, 1)
    P, G = len(d), cfg.group_size
    a_c, a_w = update.advantage_table(cfg) if table is None else table
    (s_c, clip_c), (s_w, clip_w) = update.surrogate_grad(a_c, 1.0, cfg), update.surrogate_grad(a_w, 1.0, cfg)
    n_c = np.arange(G + 1.0)
    n_w = G - n_c
    # (G+1, 8) per k: n_c, n_w, n_c s_c, n_w s_w, sum |A|, the answers the clip touches (CISPO's cap < 1),
    # [k = 0] and [k = G] (so the product also holds P(k = 0) and P(k = G), exactly)
    clipped = np.zeros(G + 1) if clip_c is None else n_c * clip_c + n_w * clip_w
    per_k = np.stack([n_c, n_w, n_c * s_c, n_w * s_w, n_c * np.abs(a_c) + n_w * np.abs(a_w), clipped,
                      n_c == 0, n_c == G], axis=1)
    h = History(cfg, 1, d, w, u)
    log_c = log_choose(G)
    # per iteration: the expectations per prompt, du
    e, du = np.empty((T, P, 8)), np.empty((T, 1, P))
    inv_B = np.empty((T, 1))
    us, ws = h.u, h.w
    lr, lr_w, beta = cfg.lr, cfg.lr_shared, cfg.beta
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        ref = policy(z_ref)
        for t in range(T):  # a run that diverges carries NaN or inf on to the end: checked once, below
            pol = policy(ws[t][:, None] + us[t] - d)  # (1, P) each
            pmf = expected_pmf(pol[2][0], pol[3][0], log_c)  # (P, G+1) Binomial
            et = np.matmul(pmf, per_k, out=e[t]).T[:, None, :]  # (8, 1, P) expectations per prompt
            inv_B[t] = 1.0 / (G * pmf.sum())
            update.logit_grad(et[2], et[3], et[0], et[1], pol, ref, beta, -inv_B[t], out=du[t])
            np.subtract(us[t], lr * du[t], out=us[t + 1])
            np.subtract(ws[t], lr_w * update.step_w(du[t]), out=ws[t + 1])
        bad = np.flatnonzero(~np.isfinite(us[1:].sum(axis=(1, 2)) + ws[1:, 0]))
        if bad.size:
            raise diverged(int(bad[0]) + 1)
        pols = policy(ws[:T, :, None] + us[:T] - d)  # (T, 1, P) each: the states sampled from, as in the loop
        ec = np.moveaxis(e, 2, 0)[:, :, None, :]  # (8, T, 1, P)
        m = update.first_step_metrics(cfg, pols, ref, ec[0], ec[1], ec[2], ec[3], ec[4], inv_B)  # (T, 1) each
        dw = du.sum(axis=2)
        m |= {"grad_norm": np.sqrt((du * du).sum(axis=2) + dw * dw), update.CLIP: ec[5].sum(axis=-1) * inv_B,
              "frac_all_correct": ec[7].mean(axis=-1), "frac_all_wrong": ec[6].mean(axis=-1),
              "n_groups": np.full((T, 1), P)}
        h.metrics |= m
        h.counts[:] = G * pols[0]
        h.answers[:] = G * P
        return h.finish()


check_table = _check_table  # the app checks a student's advantage table before the browser trains with it
