"""Will these prompts teach anything at this G? A pool's base-model pass rates, read with Chapter 15.

    pool = load_pool(data, "prompts.csv")        # one row per prompt: correct,samples (c of n) or pass_rate
    p = plan(pool, PlanConfig(group_size=8, batch_prompts=64))
    p["no_signal"]       # (63,) share of groups that teach nothing, G = 2..64; p["all_wrong"], p["all_correct"]

A group of G answers to a prompt teaches nothing when all G get the same reward: all wrong or all correct.
From c correct of n samples of the base model, the chance that G fresh answers are all correct is estimated
without bias, when n >= G, by the same counting as the pass@k estimator (sim/passk.py, Chen et al. 2021):

    P(all G correct) ~ C(c, G) / C(n, G)          P(all G wrong) ~ C(n - c, G) / C(n, G)

the probability that G of the n samples drawn without replacement are all correct (all wrong). Each is
unbiased: averaged over c ~ Binomial(n, p) it is exactly p^G ((1 - p)^G). When n < G no unbiased estimate
exists from n samples; the estimate is held at its value at G = n, C(n - c, n)/C(n, n) = [c = 0] (all wrong at
every larger G only if never solved), which is the same count with G capped at n, and `past_n` says for how many
prompts. Holding keeps every curve monotone in G (and pass@k in k): each prompt's estimate falls as G grows
(ratio (n - c - G)/(n - G) <= 1 from G to G + 1) and then stays. The plug-in (1 - c/n)^G past n would jump back up
from the 0 the count reaches at G = n - c + 1 (a pool with n of 8 and 16: 0.390 dead at G = 16, 0.455 at G = 17);
a per-prompt Beta posterior would be monotone too but puts a never-solved prompt's chance of a success at G = 64
near 50% (uniform prior, n = 64) on the prior's word alone. A `pass_rate` column is taken as the true p: p^G and
(1 - p)^G.

For the pool the shares are means over prompts (a batch draws prompts uniformly). With a batch of B prompts
and s the share of dead groups: B G s answers are wasted per batch, and DAPO's dynamic sampling, which drops
dead groups and draws more until B groups with signal are in, draws B / (1 - s) groups on average (a
geometric number of draws per kept group).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit, logit

from sim.exercises import p_no_signal
from sim.passk import p_none_correct, pass_at_k, pass_at_k_known_p
from sim.settings import grpo_setting, setting, validate
from sim.toy.model import MAX_PROMPTS as TOY_MAX_PROMPTS
from sim.yourdata.datafile import (
    DataError,
    Table,
    cell_text,
    count_cells,
    decode,
    number_cells,
    read_csv,
    shown_names,
)

MAX_SAMPLES = 10**9  # n per prompt (log-gamma keeps its relative error near 1e-9 up to here)
GROUP_SIZES = np.arange(2, 65)  # (63,) the G in reach
PASSK_KS = 2 ** np.arange(11)  # (11,) k = 1, 2, 4, ..., 1024
ID_COLUMNS = ("prompt", "prompt_id", "id", "problem", "question", "name")  # the first present names each prompt
TOY_D = 10.0  # the toy's difficulty |d_j| at most: a rate of 0 becomes p = sigmoid(-10) = 4.5e-5
LADDER = (2, 4, 8, 16, 32, 64)  # the rows a text report shows
SHOWN_PROMPTS = 200  # prompts listed by name on a page or in a text report (the JSON has them all)


@dataclass(frozen=True)
class Pool:
    """One row per prompt. Shapes: P prompts."""

    name: str  # the file's label (escaped, cut): plain text only
    rate: np.ndarray  # (P,) c/n, or the pass_rate column
    correct: np.ndarray | None  # (P,) int64 c, None for a pass_rate file
    samples: np.ndarray | None  # (P,) int64 n
    ids: tuple[str, ...] | None  # (P,) the id column's raw text (user text: plain text only), or None
    lines: np.ndarray  # (P,) int64, each prompt's line in the file (an array: a million Python ints cost 36 MB)
    notes: tuple[str, ...] = ()

    @property
    def counts(self) -> bool:
        return self.correct is not None


@dataclass(frozen=True)
class PlanConfig:
    """The plan's settings. An invalid value raises ValueError naming the field."""

    group_size: int = grpo_setting("group_size", hi=64,
                                   help="answers G per prompt (TRL's num_generations): the row the report picks")
    batch_prompts: int = setting(64, "prompts per batch (TRL: per_device_train_batch_size x gradient accumulation "
                                 "x processes / num_generations)", lo=1, hi=65536, integer=True, step=1, key="B",
                                 label="Prompts per batch B")

    def __post_init__(self) -> None:
        validate(self)


# ---- reading ------------------------------------------------------------------------------------------------

def load_pool(data: bytes, name: str) -> Pool:
    """A pool from a CSV's bytes (sim.yourdata.datafile's caps and strict parsing). DataError (one line) otherwise."""
    return pool_from_table(read_csv(decode(data, name), name))


def pool_from_table(table: Table) -> Pool:
    """Columns correct and samples (c of n), or pass_rate; an id column (ID_COLUMNS) names the prompts; the rest
    are ignored with a note. Refused, naming the line and the field: text or NaN where a number belongs,
    a negative or fractional count, samples = 0, correct > samples, a pass_rate outside [0, 1]."""
    cols = set(table.header)
    notes = []
    if {"correct", "samples"} <= cols:
        used = ["correct", "samples"]
        if "pass_rate" in cols:
            notes.append("pass_rate ignored: the counts correct and samples are used")
    elif "pass_rate" in cols:
        used = ["pass_rate"]
        if cols & {"correct", "samples"}:
            notes.append(f"{'correct' if 'correct' in cols else 'samples'} ignored: it needs its partner column")
    else:
        raise DataError(f"{table.name}: line 1 needs the columns correct and samples, or pass_rate; it has "
                        f"{shown_names(list(table.header))}")
    if not table.rows:
        raise DataError(f"{table.name}: has a header but no prompts")
    id_col = next((c for c in ID_COLUMNS if c in cols), None)
    ignored = [h for h in table.header if h not in (*used, "pass_rate", "correct", "samples", id_col)]
    if ignored:
        notes.append(f"columns ignored: {shown_names(ignored)}")
    if used == ["pass_rate"]:
        rate = number_cells(table, "pass_rate")
        bad = np.flatnonzero((rate < 0) | (rate > 1))
        if bad.size:
            i = int(bad[0])
            cell = table.rows[i][table.header.index("pass_rate")]
            raise DataError(f"{table.where(i, 'pass_rate')}: {cell_text(cell)} is not a rate in [0, 1]")
        correct = samples = None
    else:
        correct = count_cells(table, "correct", hi=MAX_SAMPLES)
        samples = count_cells(table, "samples", hi=MAX_SAMPLES)
        if (bad := np.flatnonzero(samples == 0)).size:
            raise DataError(f"{table.where(int(bad[0]), 'samples')}: 0 samples; each prompt needs at least 1")
        if (bad := np.flatnonzero(correct > samples)).size:
            i = int(bad[0])
            raise DataError(f"{table.where(i, 'correct')}: {correct[i]:,} is more than samples = {samples[i]:,} "
                            "(c > n)")
        rate = correct / samples
    ids = tuple(table.column(id_col)) if id_col else None
    return Pool(table.name, rate, correct, samples, ids, np.asarray(table.lines, dtype=np.int64), tuple(notes))


# ---- the estimators -----------------------------------------------------------------------------------------

def distinct_counts(pool: Pool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The pool's distinct (n, c) pairs: n (U,), c (U,), inverse (P,) with pair inverse[j] = prompt j's, and
    how many prompts have each (U,). Most pools have one n, so U <= n + 1 however many prompts there are."""
    key = pool.samples * (MAX_SAMPLES + 1) + pool.correct  # (P,) int64: n, c <= 10^9 keep it below 2^63
    keys, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)  # (U,)
    return keys // (MAX_SAMPLES + 1), keys % (MAX_SAMPLES + 1), inverse.reshape(-1), counts


def p_all_same(pool: Pool, group_size: int, distinct=None) -> dict[str, np.ndarray]:
    """Per prompt, (P,) each: "all_wrong" and "all_correct", the estimated chance that a group of G answers is
    all wrong / all correct, C(n - c, G')/C(n, G') and C(c, G')/C(n, G') with G' = min(G, n) (held at n past it:
    see the module's docstring), and "unbiased" (bool): n >= G. A pass_rate file: (1 - p)^G and p^G, exact for a
    true p. Each distinct (n, c) is computed once (`distinct`: distinct_counts(pool), when the caller has it)."""
    G = int(group_size)
    if not pool.counts:
        p = pool.rate
        return {"all_wrong": (1 - p) ** G, "all_correct": p**G, "unbiased": np.zeros(p.shape, dtype=bool)}
    n, c, inverse, _ = distinct_counts(pool) if distinct is None else distinct
    g = np.minimum(G, n)  # (U,) G capped at n
    wrong = p_none_correct(n, c, g)  # C(n - c, G') / C(n, G')
    right = p_none_correct(n, n - c, g)  # C(c, G') / C(n, G')
    return {"all_wrong": wrong[inverse], "all_correct": right[inverse], "unbiased": (n >= G)[inverse]}


def no_signal_curves(pool: Pool, group_sizes=GROUP_SIZES) -> dict[str, np.ndarray]:
    """(K,) each over the group sizes: the pool's mean all-wrong and all-correct shares, their sum, the share
    of prompts past their n (estimate held at n; all of a pass_rate file's: none), and r^G + (1 - r)^G at the
    pool's mean rate r (what prompts all of equal difficulty would give: the least any pool of that mean can
    waste, by Jensen)."""
    out = {k: [] for k in ("all_wrong", "all_correct", "past_n")}
    distinct = distinct_counts(pool) if pool.counts else None
    for G in group_sizes:
        e = p_all_same(pool, int(G), distinct)
        out["all_wrong"].append(e["all_wrong"].mean())
        out["all_correct"].append(e["all_correct"].mean())
        out["past_n"].append(1 - e["unbiased"].mean() if pool.counts else 0.0)
    res = {k: np.array(v) for k, v in out.items()}
    res["no_signal"] = res["all_wrong"] + res["all_correct"]
    res["equal_difficulty"] = p_no_signal(pool.rate.mean(), np.asarray(group_sizes))
    res["group_sizes"] = np.asarray(group_sizes)
    return res


def batch_costs(no_signal: np.ndarray, group_sizes: np.ndarray, batch_prompts: int) -> dict[str, np.ndarray]:
    """Per G, (K,) each, for batches of B prompts with dead share s: answers generated B G, wasted B G s,
    groups with signal B (1 - s); under dynamic sampling, groups drawn to fill B with signal, B / (1 - s), and
    answers drawn, G B / (1 - s) (inf where s = 1: the batch never fills)."""
    s, G, B = np.asarray(no_signal, dtype=float), np.asarray(group_sizes, dtype=float), float(batch_prompts)
    with np.errstate(divide="ignore"):
        drawn = np.where(s < 1, B / np.maximum(1 - s, 1e-300), np.inf)
    return {"answers": B * G, "wasted_answers": B * G * s, "signal_groups": B * (1 - s), "ds_groups": drawn,
            "ds_answers": G * drawn}


def mean_pass_at_k(pool: Pool, ks=PASSK_KS) -> dict[str, np.ndarray]:
    """(K,) the base model's pass@k averaged over the prompts: the unbiased estimator (sim/passk.py) where
    n >= k, held at k = n past it (pass@n = [c > 0]: monotone in k, as p_all_same); 1 - (1 - p)^k for a pass_rate
    file; "unbiased" is the share of prompts with n >= k at each k."""
    ks = np.asarray(ks)
    mean, share = [], []
    if not pool.counts:
        return {"k": ks, "mean": pass_at_k_known_p(pool.rate[:, None], ks[None, :]).mean(axis=0),
                "unbiased": np.zeros(ks.shape)}
    n, c, _, counts = distinct_counts(pool)  # (U,) each
    for k in ks:
        exact = n >= k
        v = pass_at_k(n, c, np.minimum(int(k), n))  # (U,) k capped at n
        mean.append(float((v * counts).sum() / counts.sum()))
        share.append(float(counts[exact].sum() / counts.sum()))
    return {"k": ks, "mean": np.array(mean), "unbiased": np.array(share)}


def never_teach(pool: Pool) -> dict:
    """The prompts that teach nothing at any G: c = 0 (all wrong, estimated at every G; a pass_rate of 0) and
    c = n (all correct; a pass_rate of 1). For c = 0 of n the true rate can still be up to about 3/n (the rule of
    three, a 95% bound), where G = 64 gives a group with signal 1 - (1 - 3/n)^64 of the time."""
    wrong = np.flatnonzero(pool.rate == 0)
    right = np.flatnonzero(pool.rate == 1)
    out = {"all_wrong": _prompts(pool, wrong), "all_correct": _prompts(pool, right)}
    if pool.counts and wrong.size:
        n = float(np.median(pool.samples[wrong]))
        bound = min(3 / n, 1.0)
        out["rule_of_three"] = {"median_samples": n, "rate_up_to": bound,
                                "signal_at_64_up_to": float(1 - (1 - bound) ** 64)}
    return out


def _prompts(pool: Pool, idx: np.ndarray) -> dict:
    return {"count": int(idx.size), "share": float(idx.size / pool.rate.size), "rows": [int(i) for i in idx],
            "lines": [int(pool.lines[i]) for i in idx], "ids": None if pool.ids is None else [pool.ids[i] for i in idx]}


def prompt_rows(pool: Pool, group_size: int) -> list[dict]:
    """One row per prompt at G (a CSV export: sim.export.rows_csv neutralises the prompt text): its line, its id,
    its counts or rate, the chance a group of G is all wrong, all correct, or teaches, and the estimate used."""
    e = p_all_same(pool, group_size)
    rows = []
    for i in range(pool.rate.size):
        row = {"line": int(pool.lines[i])}
        if pool.ids is not None:
            row["prompt"] = pool.ids[i]
        if pool.counts:
            row |= {"correct": int(pool.correct[i]), "samples": int(pool.samples[i])}
        row |= {"pass_rate": float(pool.rate[i]), f"p_all_wrong_G{group_size}": float(e["all_wrong"][i]),
                f"p_all_correct_G{group_size}": float(e["all_correct"][i]),
                f"p_signal_G{group_size}": float(1 - e["all_wrong"][i] - e["all_correct"][i]),
                "estimate": "unbiased" if e["unbiased"][i] else f"held at n = {pool.samples[i]}" if pool.counts
                else "pass_rate"}
        rows.append(row)
    return rows


def prompt_csv(pool: Pool, group_size: int) -> str:
    """prompt_rows as CSV text (the page's download; prompt text neutralised by sim.export.rows_csv)."""
    from sim.export import rows_csv

    return rows_csv(prompt_rows(pool, group_size))


def rate_histogram(pool: Pool, bins: int = 20) -> tuple[np.ndarray, np.ndarray]:
    """(counts (bins,), edges (bins + 1,)) of the pass rates over [0, 1]; a rate of exactly 0 or 1 falls in the
    first or last bin."""
    return np.histogram(pool.rate, bins=bins, range=(0.0, 1.0))


# ---- the toy --------------------------------------------------------------------------------------------

def toy_difficulties(pool: Pool, max_prompts: int = TOY_MAX_PROMPTS) -> tuple[np.ndarray, str]:
    """(P',) the toy's difficulties d_j for this pool, easy to hard, and how they were made.

    The toy solves prompt j with p_j = sigmoid(w + u_j - d_j), w = u_j = 0 at the start, so d_j = -logit(rate_j)
    starts it at the pool's own rates (clamped to |d| <= TOY_D: a rate of 0 or 1 needs a finite d). A pool larger
    than max_prompts (the toy's cap) becomes its quantiles: the rates at levels (i + 1/2)/max_prompts, i < max_prompts,
    each an actual rate of the pool (inverted CDF), so every toy prompt stands for an equal share of the pool and
    the spread of difficulty is kept."""
    rates = np.sort(pool.rate)[::-1]  # (P,) easy (high rate) first
    how = f"one toy prompt per prompt ({rates.size:,})"
    if rates.size > max_prompts:
        levels = (np.arange(max_prompts) + 0.5) / max_prompts
        rates = np.sort(np.quantile(pool.rate, levels, method="inverted_cdf"))[::-1]
        how = (f"{max_prompts} toy prompts at the quantiles of the {pool.rate.size:,} rates (each stands for "
               f"1/{max_prompts} of the pool; the toy holds at most {max_prompts} prompts)")
    p = np.clip(rates, expit(-TOY_D), expit(TOY_D))
    return -logit(p), how


def toy_summary(toy) -> dict:
    """The toy's exact expected run on this pool (sim.toy.expected_run of a ToyConfig whose difficulties are
    toy_difficulties'): accuracy first and last, the first iteration at 90% of the last accuracy, the groups with
    no gradient first and last split into all wrong and all correct, when the hardest prompt passes p = 0.1."""
    from sim.toy import expected_run, first_above

    h = expected_run(toy)
    acc = h.accuracy[:, 0]  # (T+1,)
    m = {k: h.metrics[k][:, 0] for k in ("frac_all_wrong", "frac_all_correct")}  # (T,) each
    near = first_above(acc, 0.9 * acc[-1])
    hard = first_above(h.p[:, 0, -1], 0.1)
    return {"iterations": toy.iterations, "group_size": toy.group_size, "lr": toy.lr,
            "dynamic_sampling": toy.dynamic_sampling, "accuracy_first": float(acc[0]), "accuracy_last": float(acc[-1]),
            "iteration_at_90pct_of_last": near, "hardest_passes_0.1_at": hard,
            "all_wrong_first": float(m["frac_all_wrong"][0]), "all_correct_first": float(m["frac_all_correct"][0]),
            "all_wrong_last": float(m["frac_all_wrong"][-1]), "all_correct_last": float(m["frac_all_correct"][-1])}


# ---- the plan ---------------------------------------------------------------------------------------------

def plan(pool: Pool, cfg: PlanConfig = PlanConfig(), toy=None) -> dict:
    """Every number the page shows and `python -m sim plan --json` prints. `toy`: a ToyConfig on
    toy_difficulties(pool) whose exact expected run is summarised under "toy" (the page plays sampled runs of
    it instead)."""
    curves = no_signal_curves(pool)
    costs = batch_costs(curves["no_signal"], curves["group_sizes"], cfg.batch_prompts)
    G = cfg.group_size
    i = int(np.flatnonzero(curves["group_sizes"] == G)[0])
    d, how = toy_difficulties(pool)
    summary = {"prompts": int(pool.rate.size), "mean_rate": float(pool.rate.mean()),
               "median_rate": float(np.median(pool.rate))}
    if pool.counts:
        summary |= {"samples_min": int(pool.samples.min()), "samples_median": float(np.median(pool.samples)),
                    "samples_max": int(pool.samples.max())}
    row = {k: float(v[i]) for k, v in {**curves, **costs}.items() if k != "group_sizes"}
    return {
        "file": pool.name, "input": "correct,samples" if pool.counts else "pass_rate", "notes": list(pool.notes),
        "config": {"group_size": G, "batch_prompts": cfg.batch_prompts},
        "estimator": estimator_note(pool, G),
        "summary": summary,
        "at_group_size": {"group_size": G, **row},
        "group_sizes": curves["group_sizes"].tolist(),
        **{k: _floats(curves[k]) for k in ("all_wrong", "all_correct", "no_signal", "equal_difficulty", "past_n")},
        "batch": {k: _floats(np.broadcast_to(v, curves["no_signal"].shape)) for k, v in costs.items()},
        "ladder": list(LADDER),
        "passk": {k: _floats(v) for k, v in mean_pass_at_k(pool).items()},
        "never_teach": never_teach(pool),
        "toy": {"difficulties": _floats(d), "reduction": how, "start_rates": _floats(expit(-d)),
                **({} if toy is None else {"expected_run": toy_summary(toy)})},
    }


def estimator_note(pool: Pool, group_size: int) -> str:
    """Which estimate the numbers use, in one sentence."""
    if not pool.counts:
        return ("pass_rate is taken as each prompt's true p: P(all G wrong) = (1 − p)^G, P(all G correct) = p^G.")
    few = int((pool.samples < group_size).sum())
    text = ("From c correct of n samples: P(all G correct) = C(c, G)/C(n, G) and P(all G wrong) = C(n − c, G)/C(n, G), "
            "unbiased, the pass@k estimator's counting")
    if few:
        text += (f"; {few:,} prompts have n < G = {group_size} samples, and for them the estimate is held at its "
                 "value at G = n (all wrong only if never solved, all correct only if always solved): no unbiased "
                 "estimate exists from n < G samples, and holding keeps the curves monotone in G")
    return text + "."


def _floats(a) -> list:
    return [None if not np.isfinite(x) else float(x) for x in np.asarray(a, dtype=float)]


def text_report(p: dict) -> str:
    """The plan as lines of text (the CLI without --json)."""
    s, G = p["summary"], p["config"]["group_size"]
    lines = [f"{p['file']}: {s['prompts']:,} prompts ({p['input']}), mean pass rate {s['mean_rate']:.3f}"]
    lines += [f"note: {n}" for n in p["notes"]]
    lines.append(f"estimate: {p['estimator']}")
    lines.append(f"batch: {p['config']['batch_prompts']:,} prompts")
    lines.append(f"{'G':>4} {'all wrong':>10} {'all right':>10} {'no signal':>10} {'equal p':>8} "
                 f"{'wasted/batch':>13} {'DS groups':>10}")
    gs = p["group_sizes"]
    for g in sorted(set(p["ladder"]) | {G}):
        i = gs.index(g)
        draws = p["batch"]["ds_groups"][i]
        lines.append(f"{g:>4} {p['all_wrong'][i]:>10.3f} {p['all_correct'][i]:>10.3f} {p['no_signal'][i]:>10.3f} "
                     f"{p['equal_difficulty'][i]:>8.3f} {p['batch']['wasted_answers'][i]:>13,.0f} "
                     f"{'never' if draws is None else f'{draws:,.1f}':>10}" + ("   <- G" if g == G else ""))
    nt = p["never_teach"]
    lines.append(f"never teach at any G: {nt['all_wrong']['count']:,} never solved (c = 0), "
                 f"{nt['all_correct']['count']:,} always solved (c = n)")
    if "rule_of_three" in nt:
        r3 = nt["rule_of_three"]
        lines.append(f"  c = 0 of n = {r3['median_samples']:g} (median): the true rate may still be up to "
                     f"{r3['rate_up_to']:.3g} (3/n), where G = 64 would give signal up to "
                     f"{r3['signal_at_64_up_to']:.0%}")
    pool_counts = p["input"] == "correct,samples"
    pk = dict(zip(p["passk"]["k"], zip(p["passk"]["mean"], p["passk"]["unbiased"], strict=True), strict=True))
    shown = [f"pass@{k:g} {pk[k][0]:.3f}" + ("" if pk[k][1] == 1 or not pool_counts else " (held at n)")
             for k in (1, 8, 64, 1024)]
    lines.append("base model pass@k: " + ", ".join(shown) + ("" if pool_counts else " (from the pass rates)"))
    lines.append(f"toy: {p['toy']['reduction']}")
    if "expected_run" in p["toy"]:
        t = p["toy"]["expected_run"]
        lines.append(f"toy at G = {t['group_size']}, lr {t['lr']:g}, {t['iterations']} iterations (exact expected "
                     f"run): accuracy {t['accuracy_first']:.3f} -> {t['accuracy_last']:.3f}; no-gradient groups "
                     f"{t['all_wrong_first']:.0%} all wrong + {t['all_correct_first']:.0%} all correct at first, "
                     f"{t['all_wrong_last']:.0%} + {t['all_correct_last']:.0%} at the end; the hardest prompt "
                     + ("never passes p = 0.1" if t["hardest_passes_0.1_at"] is None else
                        f"passes p = 0.1 at iteration {t['hardest_passes_0.1_at']}"))
    return "\n".join(lines)
