"""Spikes: one step far above the steps before it, in grad_norm, kl or the loss (an optimizer that blew up for a
step, a batch the KL leash snapped on)."""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from sim.yourdata.rules.base import Context, DiagnoseConfig, Finding, missing, series
from sim.yourdata.runlog import RunLog
from sim.yourdata.runstats import step_ranges

SPIKY = ("grad_norm", "kl", "loss")  # the metrics read; grad_norm and kl are never negative
MIN_HISTORY = 20  # values before a step that the median reads (at least; W when larger)
ROBUST_SD = 1.4826  # x MAD: the standard deviation, for a normal sample
CHUNK = 65536  # steps per block of the sliding windows (memory: CHUNK x window floats)


def trailing_median_mad(x: np.ndarray, w: int, same: np.ndarray | None = None,
                        least: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(median, MAD) of the w values before each step, (n,) each; NaN for the first w steps. MAD is the median
    of |value - median| over the same window. With `same` ((n,) a class per step), only the values of the step's
    own class among those w count, and a step with fewer than `least` of them gets NaN (not judged). In blocks of
    CHUNK steps, so memory stays CHUNK x w floats."""
    n = x.size
    med, mad = np.full(n, np.nan), np.full(n, np.nan)
    for lo in range(w, n, CHUNK):
        hi = min(n, lo + CHUNK)
        win = sliding_window_view(x[lo - w: hi - 1], w)  # (hi - lo, w): the w values before steps lo..hi-1
        if same is None:
            m = np.median(win, axis=1)
            med[lo:hi], mad[lo:hi] = m, np.median(np.abs(win - m[:, None]), axis=1)
            continue
        mine = sliding_window_view(same[lo - w: hi - 1], w) == same[lo:hi, None]  # (hi - lo, w) same class
        enough = mine.sum(axis=1) >= least
        win = np.where(mine, win, np.nan)[enough]
        if win.size:
            with np.errstate(all="ignore"):
                m = np.nanmedian(win, axis=1)
                med[lo:hi][enough], mad[lo:hi][enough] = m, np.nanmedian(np.abs(win - m[:, None]), axis=1)
    return med, mad


def spikes(x: np.ndarray, w: int, k: float, floor: float, ratio: bool,
           same: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(n,) bool where x rises more than k robust standard deviations (ROBUST_SD x MAD, at least `floor`) above
    the median of the w values before it, and, with `ratio`, is also at least k times that median (which must
    be above `floor`: a metric that sat at 0 has no scale to rise from); and the median. Compared without a
    division, so no magnitude overflows. With `same`, each step against the steps of its own class among the w before
    it (at least a quarter of them, and 5)."""
    med, mad = trailing_median_mad(x, w, same, least=max(5, w // 4))
    ok = ~np.isnan(med)
    sd = np.maximum(ROBUST_SD * np.nan_to_num(mad), floor)
    hold = np.zeros(x.size, dtype=bool)
    hold[ok] = x[ok] - med[ok] > k * sd[ok]
    if ratio:
        hold[ok] &= (med[ok] > floor) & (x[ok] >= k * med[ok])
    return hold, med


def signal_classes(log: RunLog, s) -> np.ndarray:
    """(n,) bool at the series' steps: did the batch behind this step have signal (some group's rewards differed)?
    From frac_reward_zero_std < 1, else reward_std > 0, at the latest step at or before it that logs one (with
    mu > 1 the optimizer steps after a generation train on its batch); True where the log cannot tell."""
    name = next((m for m in ("frac_reward_zero_std", "reward_std") if log.has(m)), None)
    if name is None:
        return np.ones(len(s), dtype=bool)
    x = log.metrics[name]
    ok = np.isfinite(x)
    idx = np.maximum.accumulate(np.where(ok, np.arange(x.size), -1))[s.rows]  # (n,) last step logging it
    live = (x < 1 - 1e-9) if name == "frac_reward_zero_std" else (x > 0)
    return np.where(idx >= 0, live[np.maximum(idx, 0)], True)


def spike_rule(log: RunLog, cfg: DiagnoseConfig, ctx: Context) -> Finding:
    """spikes: a step of grad_norm, kl or loss more than spike_factor robust standard deviations above the median
    of the max(W, 20) comparable values before it (a step whose batch had signal against steps with signal, a step
    with none against steps with none: a run where most groups are all-equal has most gradients near 0, and its
    steps with signal are not spikes); grad_norm and kl also at least spike_factor times that median; a loss spike
    rises at least spike_factor x loss_zero. A warning when the metric has not come back (the median of the values
    after its worst spike stays above the spike threshold's median x spike_factor / 2) or spikes recur (3 or more);
    one spike the run recovered from at once is information."""
    present = [m for m in SPIKY if log.has(m)]
    if not present:
        return missing("spikes", "Spikes", SPIKY, log)
    w, k = max(ctx.window, MIN_HISTORY), cfg.spike_factor
    found, nums, steps, lasting = [], {"window": w, "metrics": {}}, set(), False
    for m in present:
        s = series(log, (m,))
        if len(s) <= w:
            continue
        floor = cfg.loss_zero if m == "loss" else cfg.grad_zero
        live = signal_classes(log, s) if m != "kl" else None  # kl is the policy's, whatever the batch's signal
        hold, med = spikes(s[m], w, k, floor, ratio=m != "loss", same=live)
        if hold.any():
            i = int(np.argmax(np.where(hold, s[m] - np.nan_to_num(med), -np.inf)))
            at = s.at(hold)
            after = s[m][i + 1: i + 1 + w]
            stuck = bool(after.size >= 3 and np.median(after) > max(med[i] * k / 2, floor))
            lasting |= stuck or len(at) >= 3
            nums["metrics"][m] = {"steps": list(at), "worst_step": int(s.steps[i]), "worst": float(s[m][i]),
                                  "median_before": float(med[i]), "unit": s.unit, "recovered": not stuck}
            steps |= set(at)
            times = f" ({s[m][i] / med[i]:.0f}× its median {med[i]:.3g})" if m != "loss" else ""  # med > floor
            found.append(f"{log.key(m)} {s[m][i]:.3g} at step {s.steps[i]}{times}"
                         + (f" and {len(at) - 1} more" if len(at) > 1 else "")
                         + ("" if stuck else ", back at once" if len(at) == 1 else ""))
    rule = (f"a step's value more than {k:g} robust standard deviations (1.4826 × MAD) above the median of the {w} "
            f"comparable logged values before it (steps with signal against steps with signal); grad_norm and kl "
            f"also at least {k:g} × that median; a loss rises at least {k * cfg.loss_zero:g}; a warning when the "
            "metric stays up after it or spikes recur (3 or more)")
    if len(nums["metrics"]) == 0 and all(len(series(log, (m,))) <= w for m in present):
        return missing("spikes", "Spikes", tuple(present), log, f"Spikes need more than {w} logged values.")
    if not found:
        return Finding("spikes", "ok", f"No spikes in {', '.join(log.key(m) for m in present)}", rule, numbers=nums)
    return Finding(
        "spikes", "warn" if lasting else "info", "Spikes: " + "; ".join(found), rule, tuple(sorted(steps)),
        reading="One step far above the comparable steps before it: a batch whose gradient blew up (grad_norm), a "
                "policy that jumped away from the reference for a step (kl), or both; the loss follows. A step of "
                "the optimizer that large can undo many steps of learning, and Chapter 15's clip only bounds the "
                "ratio, not the gradient's size." + ("" if lasting else " This one came back at once: a single "
                                                     "batch, not a trend."),
        remedy=(f"Look at the batch at step {step_ranges(sorted(steps)[:5])}: unusual prompts or completions "
                "(very long, degenerate); lower the learning rate or max_grad_norm; with β > 0 a KL spike that "
                "does not settle is a policy leaving the reference.") if lasting else "", numbers=nums)
