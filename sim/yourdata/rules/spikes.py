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


def trailing_median_mad(x: np.ndarray, w: int) -> tuple[np.ndarray, np.ndarray]:
    """(median, MAD) of the w values before each step, (n,) each; NaN for the first w steps. MAD is the median
    of |value - median| over the same window. In blocks of CHUNK steps, so memory stays CHUNK x w floats."""
    n = x.size
    med, mad = np.full(n, np.nan), np.full(n, np.nan)
    for lo in range(w, n, CHUNK):
        hi = min(n, lo + CHUNK)
        win = sliding_window_view(x[lo - w: hi - 1], w)  # (hi - lo, w): the w values before steps lo..hi-1
        m = np.median(win, axis=1)
        med[lo:hi], mad[lo:hi] = m, np.median(np.abs(win - m[:, None]), axis=1)
    return med, mad


def spikes(x: np.ndarray, w: int, k: float, floor: float, ratio: bool) -> tuple[np.ndarray, np.ndarray]:
    """(n,) bool where x rises more than k robust standard deviations (ROBUST_SD x MAD, at least `floor`) above
    the median of the w values before it, and, with `ratio`, is also at least k times that median (which must
    be above `floor`: a metric that sat at 0 has no scale to rise from); and the median. Compared without a
    division, so no magnitude overflows."""
    med, mad = trailing_median_mad(x, w)
    ok = ~np.isnan(med)
    sd = np.maximum(ROBUST_SD * np.nan_to_num(mad), floor)
    hold = np.zeros(x.size, dtype=bool)
    hold[ok] = x[ok] - med[ok] > k * sd[ok]
    if ratio:
        hold[ok] &= (med[ok] > floor) & (x[ok] >= k * med[ok])
    return hold, med


def spike_rule(log: RunLog, cfg: DiagnoseConfig, ctx: Context) -> Finding:
    """spikes: a step of grad_norm, kl or loss more than spike_factor robust standard deviations above the median
    of the max(W, 20) values before it; grad_norm and kl also at least spike_factor times that median; a loss
    spike rises at least spike_factor x loss_zero."""
    present = [m for m in SPIKY if log.has(m)]
    if not present:
        return missing("spikes", "Spikes", SPIKY, log)
    w, k = max(ctx.window, MIN_HISTORY), cfg.spike_factor
    found, nums, steps = [], {"window": w, "metrics": {}}, set()
    for m in present:
        s = series(log, (m,))
        if len(s) <= w:
            continue
        floor = cfg.loss_zero if m == "loss" else cfg.grad_zero
        hold, med = spikes(s[m], w, k, floor, ratio=m != "loss")
        if hold.any():
            i = int(np.argmax(np.where(hold, s[m] - med, -np.inf)))
            at = s.at(hold)
            nums["metrics"][m] = {"steps": list(at), "worst_step": int(s.steps[i]), "worst": float(s[m][i]),
                                  "median_before": float(med[i]), "unit": s.unit}
            steps |= set(at)
            times = f" ({s[m][i] / med[i]:.0f}× its median {med[i]:.3g})" if m != "loss" else ""  # med > floor
            found.append(f"{m} {s[m][i]:.3g} at step {s.steps[i]}{times}"
                         + (f" and {len(at) - 1} more" if len(at) > 1 else ""))
    rule = (f"a step's value more than {k:g} robust standard deviations (1.4826 × MAD) above the median of the {w} "
            f"logged values before it; grad_norm and kl also at least {k:g} × that median; a loss rises at least "
            f"{k * cfg.loss_zero:g}")
    if len(nums["metrics"]) == 0 and all(len(series(log, (m,))) <= w for m in present):
        return missing("spikes", "Spikes", tuple(present), log, f"Spikes need more than {w} logged values.")
    if not found:
        return Finding("spikes", "ok", f"No spikes in {', '.join(present)}", rule, numbers=nums)
    return Finding(
        "spikes", "warn", "Spikes: " + "; ".join(found), rule, tuple(sorted(steps)),
        reading="One step far above the steps before it: a batch whose gradient blew up (grad_norm), a policy that "
                "jumped away from the reference for a step (kl), or both; the loss follows. A step of the optimizer "
                "that large can undo many steps of learning, and Chapter 15's clip only bounds the ratio, not the "
                "gradient's size.",
        remedy=f"Look at the batch at step {step_ranges(sorted(steps)[:5])}: unusual prompts or completions "
               "(very long, degenerate); lower the learning rate or max_grad_norm; with β > 0 a KL spike that "
               "does not settle is a policy leaving the reference.", numbers=nums)
