"""Sampled runs of the toy, S seeds at once, and the exact average run.

    run_toy       each iteration draws k_j ~ Binomial(G, p_j) correct answers per prompt (the same law as
                  G separate answers; sim.toy.binomial samples it at a cost independent of G), refills
                  all-equal groups under dynamic sampling, and applies update.apply_update
    expected_run  the deterministic "average run": each step applies the expected update

tests/test_toy.py replays run_toy's every iteration with sim/toy/reference.py (every answer sampled, sim.grpo
and autograd) and checks expected_run against an enumeration of the outcomes and the mean of sampled runs.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.special import gammaln

from sim.refusals import refused
from sim.rng import toy_first_uniforms, toy_keys, toy_refill_uniforms
from sim.toy import update
from sim.toy.binomial import BinomialSampler, binomial_sampler
from sim.toy.history import STATE_METRICS, History, ToyHistory, chunk_rows, diverged, state_metrics
from sim.toy.model import ToyConfig, init_state, policy
from sim.toy.update import Batch, Step, Table, Tables, count_update

REFILL_BLOCKS = 16384  # refill draws computed at once, at most (all of a few rounds, for the slots left empty)


def run_toy(cfg: ToyConfig, *, advantage_table: Table | None = None) -> ToyHistory:
    """S = cfg.n_seeds independent sampled runs at once (numpy, count-based).

    Same cfg -> same history; the first t iterations do not depend on cfg.iterations. Seed s of a run draws
    from sim/rng.py's portable generator with key seed + s, so it does not depend on n_seeds: "seed 7" of a
    band from seed 0 is the 1-seed run with seed 7, and assets/js/engine.js draws the same numbers.
    `advantage_table` = (A_correct, A_wrong) over k = 0..G replaces the advantages of cfg (for instance a
    student's group_advantages, tabulated; scale "group" or "none" only). A run whose logits overflow raises
    ValueError (never a NaN history).

    Why it is fast: each iteration computes the policy, draws the counts and steps (update.apply_update), into
    arrays allocated once; the metrics, which nothing in the loop reads, are computed a few iterations at a time
    (CHUNK_CELLS values: sim/toy/history.py), as are the first draws' uniforms.
    """
    tables = Tables(cfg, None if advantage_table is None else check_table(cfg, advantage_table))
    S, T, G = cfg.n_seeds, cfg.iterations, cfg.group_size
    d, w, u, _ = init_state(cfg, S)
    P = len(d)
    draw = binomial_sampler(G)
    keys = toy_keys(cfg.seed, S) if cfg.dynamic_sampling else None
    C = chunk_rows(S * P)  # iterations per chunk
    h = History(cfg, S, d, w, u)
    us, ws = h.u, h.w
    p, states = np.empty((T + 1, S, P)), {name: np.empty((T + 1, S)) for name in STATE_METRICS}
    # a chunk's policy (p_c is p), the first draws' counts, and what the metrics need of each update
    p_w, lp_c, lp_w, ns_c, ns_w, du = (np.empty((C, S, P)) for _ in range(6))
    k, dw = np.empty((C, S, P), dtype=np.intp), np.empty((C, S))
    z, tmp, tmp_w = np.empty((S, P)), np.empty((S, P)), np.empty(S)  # scratch
    batches = []  # a chunk's batches where they are not the first draws (dynamic sampling, the batch std)
    clips = np.empty((C, S)) if cfg.mu > 1 else None
    # With beta = 0, mu = 1 and cfg's own advantages (|A| <= G) a step moves a logit by at most (lr / P + lr_w) G
    # <= 2000 G, so 5000 iterations stay far inside float64's range: such a run cannot diverge, and skips the check
    bounded = cfg.beta == 0 and cfg.mu == 1 and advantage_table is None
    h.answers[:] = G * P  # dynamic sampling draws more: its refills say how many
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        for t0 in range(0, T + 1, C):  # states t0..t1-1 and the steps taken from them
            t1 = min(t0 + C, T + 1)
            n = min(t1, T) - t0  # steps in this chunk
            # (n, S, P) the first draws' uniforms of iterations t0..t0+n-1 (sim/rng.py: seed s has key seed + s)
            uniforms = toy_first_uniforms(cfg.seed, S, t0, n, P)
            offsets = draw.offsets(uniforms)
            batches.clear()
            for t in range(t0, t1):
                j = t - t0
                np.add(ws[t][:, None], us[t], out=z)
                z -= d  # (S, P) logits w + u - d
                now = policy(z, out=(p[t], p_w[j], lp_c[j], lp_w[j]))
                if t == 0:
                    ref = tuple(x.copy() for x in now)  # the initial policy is the KL reference
                if t == T:
                    break
                k[j] = draw.invert(uniforms[j], p[t], offsets[j])
                if cfg.dynamic_sampling:
                    prompt, k_b, weight, h.answers[t] = _refill(keys, t, k[j], p[t], cfg, draw)
                    batch = Batch.of(cfg, k_b, prompt, weight)
                else:
                    batch = Batch.of(cfg, k[j])
                if batch.prompt is not None or batch.den is not None:
                    batches.append(batch)
                step = update.apply_update(cfg, tables, batch, ws[t], us[t], d, now, ref, ws[t + 1], us[t + 1],
                                           (ns_c[j], ns_w[j], du[j], dw[j], tmp, tmp_w))
                if batch.prompt is not None:  # dL/du summed from the slots: a new array
                    du[j] = step.du
                if clips is not None:
                    clips[j] = step.clip
                if not bounded and not np.isfinite(ws[t + 1].sum() + us[t + 1].sum()):
                    raise diverged(t + 1)
            pol = (p[t0:t1], p_w[: t1 - t0], lp_c[: t1 - t0], lp_w[: t1 - t0])
            state_metrics(states, slice(t0, t1), pol, ref[2:], G)
            if n:
                h.counts[t0 : t0 + n] = k[:n]
                batch = _stacked(batches) if batches else Batch.of(cfg, k[:n])
                step = Step(ns_c[:n], ns_w[:n], du[:n], dw[:n], None if clips is None else clips[:n])
                m = update.update_metrics(cfg, tables, batch, tuple(x[:n] for x in pol), ref, step)
                for name, value in m.items():
                    h.metrics[name][t0 : t0 + n] = value
    return h.finish(p, states)


def _stacked(batches: list[Batch]) -> Batch:
    """A few iterations' batches as one, each field (n, S, ...)."""
    return Batch(*(None if x[0] is None else np.stack(x) for x in zip(*batches, strict=True)))


def check_table(cfg: ToyConfig, table: Table) -> Table:
    """A student's advantage table (A_correct, A_wrong), each over k = 0..G, as floats; ValueError if it cannot
    train cfg (the app checks it before the browser trains with it)."""
    if cfg.scale == "batch":
        raise refused("table_scale")
    a_c, a_w = (np.asarray(x, dtype=float) for x in table)
    if a_c.shape != (cfg.group_size + 1,) or a_w.shape != (cfg.group_size + 1,):
        raise refused("table_size", entries=cfg.group_size + 1)
    if not (np.isfinite(a_c).all() and np.isfinite(a_w).all()):
        raise refused("table_finite")
    return a_c, a_w


def _refill(keys: tuple, t: int, k0: np.ndarray, p: np.ndarray, cfg: ToyConfig, draw: BinomialSampler):
    """Dynamic sampling's batch for iteration t, from the first draw's counts k0 (S, P) at the policy p (S, P):
    every round r = 1..max_redraws, each empty slot (a group whose G rewards were all equal) draws a prompt
    uniformly from the pool, floor(U P), and a fresh group for it (sim/rng.py's refill uniforms, keys the seeds').
    Returns the batch's prompt, k and weight (S, P), weight 1 for a slot holding a group and 0 for a slot left
    empty, and the answers drawn (S,)."""
    S, P = p.shape
    G = cfg.group_size
    answers = np.full(S, G * P)
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
    return prompt, k, full.astype(float), answers


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
    table = None if advantage_table is None else check_table(cfg, advantage_table)
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
    log_c, tables = log_choose(G), Tables(cfg, table)
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
            w, u, m = count_update(w, u, prompt[None], k[None], weight[None], cfg, d, z_ref, tables=tables)
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
    tab = Tables(cfg, table)
    # (G+1, 8) per k: n_c, n_w, n_c s_c, n_w s_w, sum |A|, the answers the clip touches (CISPO's cap < 1),
    # [k = 0] and [k = G] (so the product also holds P(k = 0) and P(k = G), exactly)
    clipped = np.zeros(G + 1) if tab.clipped is None else tab.clipped
    per_k = np.stack([tab.n_c, tab.n_w, tab.ns_c, tab.ns_w, tab.n_abs, clipped, tab.n_c == 0, tab.n_c == G], axis=1)
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

