"""The reward against itself: reward functions that part ways (one saturates while another stays flat), and the
training reward against the evaluation reward."""

from __future__ import annotations

import numpy as np

from sim.yourdata.datafile import cell_text
from sim.yourdata.rules.base import Context, DiagnoseConfig, Finding, missing, series
from sim.yourdata.runlog import RunLog
from sim.yourdata.runstats import rolling_mean, start_end

EVAL = "eval_reward"
MIN_EVALS = 3  # evaluations needed to speak of a trend


def diverge_rule(log: RunLog, cfg: DiagnoseConfig, ctx: Context) -> Finding:
    """reward_funcs_diverge: one reward function's rolling mean rises by more than func_rise while another's stays
    within reward_flat of its start, with room above it (its values in [0, 1], its start at most 1 - reward_flat).
    Names both, and the steps where both hold."""
    funcs = [f for f in log.reward_funcs if log.has(f"rewards/{f}/mean") and not _constant(log, f)]
    if len(funcs) < 2:
        return missing("reward_funcs_diverge", "Reward functions that part ways", ("rewards/<f>/mean",), log,
                       "This log has fewer than two reward functions that vary (rewards/<f>/mean).")
    W = ctx.window
    names = tuple(f"rewards/{f}/mean" for f in funcs)
    s = series(log, names)
    if len(s) == 0:
        return missing("reward_funcs_diverge", "Reward functions that part ways", names, log)
    se = {f: start_end(s[n], W) for f, n in zip(funcs, names, strict=True)}
    sm = {f: rolling_mean(s[n], W) for f, n in zip(funcs, names, strict=True)}
    rise = [f for f in funcs if se[f][1] - se[f][0] > cfg.func_rise]
    flat = [f for f in funcs if abs(se[f][1] - se[f][0]) <= cfg.reward_flat and _has_room(s[f"rewards/{f}/mean"],
                                                                                           se[f][0], cfg)]
    rule = (f"a reward function's rolling mean (W = {W}) rises more than {cfg.func_rise:g} above its start while "
            f"another's stays within ±{cfg.reward_flat:g} of its start, below {1 - cfg.reward_flat:g} on a [0, 1] "
            "scale; a warning once that has held for a quarter of the steps")
    nums = {"functions": {f: {"start": se[f][0], "end": se[f][1]} for f in funcs}, "rising": rise, "flat": flat,
            "unit": s.unit}
    if not (rise and flat):
        return Finding("reward_funcs_diverge", "ok", "The reward functions move together: "
                       + "; ".join(f"{cell_text(f)} {se[f][0]:.2f} → {se[f][1]:.2f}" for f in funcs), rule,
                       numbers=nums)
    up, stuck = max(rise, key=lambda f: se[f][1] - se[f][0]), flat[0]
    hold = (sm[up] - se[up][0] > cfg.func_rise) & (np.abs(sm[stuck] - se[stuck][0]) <= cfg.reward_flat)
    # held for a quarter of the steps so far: early in a healthy run the format is learned before the task
    lasting = bool(hold.sum() >= max(W, len(hold) / 4))
    nums |= {"up": up, "stuck": stuck, "lasting": lasting}
    a, b = cell_text(up), cell_text(stuck)  # a file's names, in our words: cut, invisible characters escaped
    total = f"; the total reward {_total(log, W)}" if log.has("reward") else ""
    young = "" if lasting else ": too soon to call (a format is often learned before the task)"
    return Finding(
        "reward_funcs_diverge", "warn" if lasting else "info", f"{a} rises {se[up][0]:.2f} → {se[up][1]:.2f} while "
        f"{b} stays at {se[stuck][0]:.2f} → {se[stuck][1]:.2f}{total}, at {s.of(hold)}{young}", rule, s.at(hold),
        reading=f"The reward rises on {a} while {b} does not move: the policy found what is easy to satisfy. "
                "If the flat one is the task's verifier (accuracy), the run is learning the format, not the task: "
                "Chapter 15, verifiable rewards are not unhackable, and verifier bugs get exploited.",
        remedy=f"Read completions where {a} is high and {b} is not; weigh {b} up (reward_weights), make {a} a "
               f"gate rather than a bonus, or stop once {a} saturates.", numbers=nums)


def _constant(log: RunLog, f: str) -> bool:
    """A function whose mean is one value at every logged step (funcs_constant says so): never stuck, never moving."""
    x = log.metrics[f"rewards/{f}/mean"]
    x = x[np.isfinite(x)]
    return bool(x.size >= 2 and np.all(x == x[0]))


def _has_room(x: np.ndarray, start: float, cfg: DiagnoseConfig) -> bool:
    """A flat function can only be 'stuck' below its ceiling: values in [0, 1] and a start below 1 - reward_flat."""
    return bool(x.min() >= 0 and x.max() <= 1 and start <= 1 - cfg.reward_flat)


def _total(log: RunLog, W: int) -> str:
    r0, r1 = start_end(series(log, ("reward",))["reward"], W)
    return f"{r0:.2f} → {r1:.2f}"


def eval_rule(log: RunLog, cfg: DiagnoseConfig, ctx: Context) -> Finding:
    """train_vs_eval: the eval reward (a trailing mean over up to 3 evaluations) falls more than eval_drop below
    its best so far, and ends there, while the training reward's rolling mean at the end is more than reward_flat
    above its value at the best evaluation. Names the evaluation steps below the best."""
    if not (log.has(EVAL) and log.has("reward")):
        return missing("train_vs_eval", "Train reward against eval reward", (EVAL, "reward"), log)
    e, tr = series(log, (EVAL,)), series(log, ("reward",))
    if len(e) < MIN_EVALS:
        return missing("train_vs_eval", "Train reward against eval reward", (EVAL,), log,
                       f"This log has {len(e)} evaluations; a trend needs {MIN_EVALS}.")
    k = min(3, len(e) // MIN_EVALS)
    es = rolling_mean(e[EVAL], k)  # (n,) smoothed over k evaluations
    best = np.maximum.accumulate(es)
    at_best = int(np.argmax(es))
    rs = rolling_mean(tr["reward"], ctx.window)
    train_at = rs[np.clip(np.searchsorted(tr.steps, e.steps, side="right") - 1, 0, None)]  # (n,) train at each eval
    below = (es < best - cfg.eval_drop) & (np.arange(len(e)) > at_best)
    rising = train_at[-1] - train_at[at_best] > cfg.reward_flat
    ends_low = es[-1] < best[-1] - cfg.eval_drop
    ctx.derived["eval_smooth"] = e.expand(es)
    nums = {"evals": len(e), "smoothed_over": k, "best": float(es[at_best]), "best_step": int(e.steps[at_best]),
            "end": float(es[-1]), "train_at_best": float(train_at[at_best]), "train_end": float(train_at[-1])}
    rule = (f"eval_reward (a trailing mean of {k} evaluations) ends more than {cfg.eval_drop:g} below its best while "
            f"the training reward's rolling mean rose more than {cfg.reward_flat:g} since that evaluation")
    if not (below.any() and rising and ends_low):
        return Finding("train_vs_eval", "ok", f"The eval reward keeps up: best {nums['best']:.3f} at step "
                       f"{nums['best_step']}, last {nums['end']:.3f} ({len(e)} evaluations)", rule, numbers=nums)
    return Finding(
        "train_vs_eval", "warn", f"The eval reward falls {nums['best']:.3f} → {nums['end']:.3f} after step "
        f"{nums['best_step']} while the training reward rises {nums['train_at_best']:.3f} → {nums['train_end']:.3f}",
        rule, e.at(below),
        reading="The policy gets better at the training prompts and worse at held-out ones: it fits the training "
                "pool (memorised answers, a hack of the training verifier, a drift the KL leash would have held) "
                "rather than the skill.",
        remedy="Keep the checkpoint at the best evaluation; add or vary training prompts, keep a KL leash (β > 0), "
               "and check the eval prompts' format matches the training ones.", numbers=nums)
