"""What a toy run records, and the one place its arrays are allocated and finished.

Every loop (run_toy's, the expected run's, the autograd reference's) fills a `History` and calls `finish()`,
which computes the state metrics (unless the loop has them) and returns a `ToyHistory`.
Step metrics carry TRL's names where TRL has one (kl, loss, grad_norm, reward,
frac_reward_zero_std, clip_ratio/region_mean), so a reader finds them again in a TRL log.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.refusals import refused
from sim.toy.model import ToyConfig, bernoulli_entropy, bernoulli_kl, mean_p, no_signal, policy, sum_p

# Per iteration (T, S). Filled by the update: kl (mean k3 over the sampled answers), loss and grad_norm
# (first inner step), clip_ratio/region_mean (mean over the mu inner steps), mean_abs_adv (mean |A| over
# the batch trained on), n_groups (groups in that batch). Filled by finish() from the counts: reward (mean
# reward of the first draw), frac_all_correct, frac_all_wrong and their sum frac_reward_zero_std;
# expected_zero_frac = mean_j p_j^G + (1 - p_j)^G at the state sampled from.
UPDATE_METRICS = ("kl", "loss", "grad_norm", "clip_ratio/region_mean", "mean_abs_adv", "n_groups")
STEP_METRICS = (*UPDATE_METRICS, "reward", "frac_reward_zero_std", "frac_all_correct", "frac_all_wrong",
                "expected_zero_frac")
STATE_METRICS = ("accuracy", "kl_exact", "entropy", "no_signal")  # per state (T+1, S)

# An array of more than ~128 kB is fresh memory from the OS on every call, and touching a fresh page
# first is costly (~10 us per 4 kB page on the 2-core VM, more than the arithmetic on it). So work over
# (T, S, P) goes a few iterations at a time, through temporaries of at most CHUNK_CELLS values.
CHUNK_CELLS = 16384


@dataclass
class ToyHistory:
    """A finished run. Index t of a *state* array is the state after t iterations (t = 0 initial);
    index t of a *step* array (`counts`, `metrics[...]`) describes iteration t + 1, which samples from
    state t and produces state t + 1. Sampled runs have S = n_seeds; expected_run has S = 1 and stores
    expectations.
    """

    config: ToyConfig
    difficulties: np.ndarray  # (P,) d_j
    p: np.ndarray  # (T+1, S, P) probability that prompt j is solved
    u: np.ndarray  # (T+1, S, P) per-prompt parameters
    w: np.ndarray  # (T+1, S) shared skill
    accuracy: np.ndarray  # (T+1, S) mean_j p_j (expected accuracy over the pool)
    kl_exact: np.ndarray  # (T+1, S) exact KL(pi || pi_init) of the Bernoullis, mean over prompts (nats)
    entropy: np.ndarray  # (T+1, S) Bernoulli entropy of pi, mean over prompts (nats)
    answers: np.ndarray  # (T+1, S) cumulative answers sampled (incl. dynamic-sampling redraws); [0] = 0
    counts: np.ndarray  # (T, S, P) correct answers in prompt j's first group (G p_j in expected_run)
    metrics: dict[str, np.ndarray]  # STEP_METRICS, each (T, S)

    @property
    def iterations(self) -> int:
        return self.p.shape[0] - 1


class History:
    """The arrays of a run being filled: parameters w (T+1, S) and u (T+1, S, P), first-draw counts
    (T, S, P), answers drawn (T, S) and the update's metrics (T, S) each."""

    def __init__(self, cfg: ToyConfig, S: int, d: np.ndarray, w0: np.ndarray, u0: np.ndarray):
        T, P = cfg.iterations, len(d)
        self.cfg, self.d = cfg, d
        self.w, self.u = np.empty((T + 1, S)), np.empty((T + 1, S, P))
        self.w[0], self.u[0] = w0, u0
        self.counts, self.answers = np.empty((T, S, P)), np.empty((T, S))
        self.metrics = {name: np.zeros((T, S)) for name in UPDATE_METRICS}

    def record(self, t: int, w, u, counts, answers, metrics: dict) -> None:
        """Iteration t + 1 took state t to state t + 1 = (w, u) after drawing `counts`."""
        self.w[t + 1], self.u[t + 1], self.counts[t], self.answers[t] = w, u, counts, answers
        for name, value in metrics.items():
            self.metrics.setdefault(name, np.zeros(self.answers.shape))[t] = value

    def finish(self, p: np.ndarray | None = None, states: dict | None = None) -> ToyHistory:
        """The ToyHistory. Unless the caller has them (p = pi(correct) (T+1, S, P) and `states` from
        state_metrics), the policy and the state metrics are computed here, a few states at a time."""
        cfg, d, w, u, counts = self.cfg, self.d, self.w, self.u, self.counts
        T1, S, P = u.shape
        G = cfg.group_size
        if states is None:
            p, states = np.empty((T1, S, P)), {name: np.empty((T1, S)) for name in STATE_METRICS}
            rows = chunk_rows(S * P)
            for a in range(0, T1, rows):
                z = w[a : a + rows, :, None] + u[a : a + rows] - d  # (n, S, P)
                if not np.isfinite(z).all():
                    t = a + int(np.argmax(~np.isfinite(z).all(axis=(1, 2))))
                    raise diverged(t)
                now = policy(z)
                if a == 0:
                    ref = (now[2][0], now[3][0])  # the KL reference is the state at t = 0
                p[a : a + rows] = now[0]
                state_metrics(states, slice(a, a + rows), now, ref, G)
        m = self.metrics
        m["reward"] = mean_p(counts) / G
        if "frac_all_correct" not in m:  # sampled runs: from the counts (expected_run sets its own)
            m["frac_all_correct"], m["frac_all_wrong"] = flat_shares(counts, G)
        m["frac_reward_zero_std"] = m["frac_all_correct"] + m["frac_all_wrong"]
        m["expected_zero_frac"] = states["no_signal"][:-1]
        return ToyHistory(
            config=cfg, difficulties=d, p=p, u=u, w=w, accuracy=states["accuracy"], kl_exact=states["kl_exact"],
            entropy=states["entropy"], answers=np.concatenate([np.zeros((1, S)), np.cumsum(self.answers, axis=0)]),
            counts=counts, metrics={name: m[name] for name in STEP_METRICS},
        )


def diverged(t: int) -> ValueError:
    return refused("diverged", t=t)


def flat_shares(counts: np.ndarray, G: int) -> tuple[np.ndarray, np.ndarray]:
    """The shares of all-correct (k = G) and all-wrong (k = 0) groups among the P prompts, (T, S) each, from
    counts (T, S, P), a few iterations at a time (sums of 0/1 floats: exact)."""
    T, S, P = counts.shape
    shares = np.empty((2, T, S))
    rows = chunk_rows(S * P)
    flat = np.empty((min(rows, T), S, P))
    for a in range(0, T, rows):
        c, f = counts[a : a + rows], flat[: min(rows, T - a)]
        for share, level in zip(shares, (G, 0), strict=True):
            sum_p(np.equal(c, level, out=f), out=share[a : a + rows])
    shares /= P
    return shares[0], shares[1]


def chunk_rows(cells: int) -> int:
    """Rows of `cells` values (an (S, P) state: S * P) per chunk, at least one."""
    return max(1, CHUNK_CELLS // cells)


def state_metrics(out: dict, rows: slice, pol: tuple, ref: tuple, G: int) -> None:
    """Means over prompts of p, KL(pi || pi_ref), H(pi) and p^G + (1 - p)^G for the states pol =
    policy(z) (n, S, P), written to out[name][rows]; ref = (lp_c, lp_w) (S, P) of the KL reference."""
    p_c, p_w, lp_c, lp_w = pol
    out["accuracy"][rows] = mean_p(p_c)
    out["kl_exact"][rows] = bernoulli_kl(p_c, p_w, lp_c, lp_w, *ref)
    out["entropy"][rows] = bernoulli_entropy(p_c, p_w, lp_c, lp_w)
    out["no_signal"][rows] = mean_p(no_signal(p_c, p_w, G))


def seed_band(x, lo: float = 10.0, hi: float = 90.0) -> dict[str, np.ndarray]:
    """Mean and the lo..hi percentile band over seeds of x (T, S): what a band chart draws."""
    x = np.asarray(x, dtype=float)  # (T, S)
    return {"mean": x.mean(axis=1), "lo": np.percentile(x, lo, axis=1), "hi": np.percentile(x, hi, axis=1)}


def history_rows(h: ToyHistory, per_seed: bool = True) -> list[dict]:
    """One dict per iteration t = 0..T, for CSV/JSON.

    Row t holds the state after t iterations (means over seeds: accuracy, w, kl_exact, entropy, answers,
    and p_0..p_{P-1}), the step metrics of iteration t (means over seeds, TRL's names; None at t = 0,
    which has no step), accuracy_std over seeds, and with per_seed each seed's accuracy as accuracy_seed{s}.
    """
    rows = []
    S = h.accuracy.shape[1]
    for t in range(h.iterations + 1):
        row: dict = {"iteration": t}
        for name in ("accuracy", "w", "kl_exact", "entropy", "answers"):
            row[name] = float(getattr(h, name)[t].mean())
        row["accuracy_std"] = float(h.accuracy[t].std())
        for name in STEP_METRICS:
            row[name] = None if t == 0 else float(h.metrics[name][t - 1].mean())
        for j, pj in enumerate(h.p[t].mean(axis=0)):
            row[f"p_{j}"] = float(pj)
        if per_seed and S > 1:
            for s in range(S):
                row[f"accuracy_seed{s}"] = float(h.accuracy[t, s])
        rows.append(row)
    return rows


def first_above(series, level: float) -> int | None:
    """The first index t with series[t] > level, or None if it never gets there (series (T,))."""
    above = np.flatnonzero(np.asarray(series) > level)
    return int(above[0]) if above.size else None


def clip_summary(h: ToyHistory, level: float) -> dict:
    """What the clip did in a run (the caption of mu > 1): `clip` the mean of clip_ratio/region_mean over
    iterations and seeds, `peak` its largest seed mean in one iteration, and `hard_at` the first iteration
    where the hardest prompt's p (mean over seeds) passes `level` (None if never)."""
    clip = h.metrics["clip_ratio/region_mean"].mean(axis=1)  # (T,)
    return {"clip": float(clip.mean()), "peak": float(clip.max()),
            "hard_at": first_above(h.p[:, :, -1].mean(axis=1), level)}
