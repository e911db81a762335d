"""The arithmetic a run's log is read with (rules.py's rules, the Your run page's charts): rolling means over
steps, the Jensen floor of dead groups, the bounds the reward puts on all-wrong and all-correct groups."""

from __future__ import annotations

import numpy as np


def rolling_mean(x: np.ndarray, window: int) -> np.ndarray:
    """(T,) the mean of the last `window` entries of x up to each step, NaN entries skipped (NaN where the
    window holds none)."""
    ok = ~np.isnan(x)
    s = np.concatenate([[0.0], np.cumsum(np.where(ok, x, 0.0))])  # (T+1,)
    n = np.concatenate([[0], np.cumsum(ok)])
    lo = np.maximum(np.arange(1, x.size + 1) - window, 0)
    count = n[1:] - n[lo]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, (s[1:] - s[lo]) / np.maximum(count, 1), np.nan)


def start_end(x: np.ndarray, window: int) -> tuple[float, float]:
    """(mean of the first `window` logged values, mean of the last `window`)."""
    v = x[~np.isnan(x)]
    return float(v[:window].mean()), float(v[-window:].mean())


def step_noise(x: np.ndarray) -> float:
    """The noise of one logged value around the run's trend: 1.4826 x the median absolute deviation of the steps'
    differences, over sqrt(2) (a difference carries two values' noise). Robust to the trend itself and to a few
    jumps; 0 for fewer than 3 values."""
    v = np.asarray(x, dtype=float)
    d = np.diff(v[~np.isnan(v)])
    if d.size < 2:
        return 0.0
    return float(1.4826 * np.median(np.abs(d - np.median(d))) / np.sqrt(2))


def segments(x: np.ndarray) -> tuple[int, np.ndarray]:
    """(q, the rolling mean over q values) of a series' logged values, q = max(3, n // 8): the length the trend
    rules compare the start, the best and the end over."""
    v = np.asarray(x, dtype=float)
    v = v[~np.isnan(v)]
    q = max(3, v.size // 8)
    return q, rolling_mean(v, q)


def jensen_floor(reward, group_size: int) -> np.ndarray:
    """r^G + (1 - r)^G: the least E[frac_reward_zero_std] can be when prompts' solve rates average r (0/1
    rewards). It is sim.exercises.p_no_signal at the mean rate (imported here: sim.exercises brings torch and
    scipy, seconds a command line that refuses a file, or reads a log with no zero-std share, need not pay)."""
    from sim.exercises import p_no_signal

    return p_no_signal(np.clip(reward, 0.0, 1.0), group_size)


def dead_group_bounds(reward, zero_std, group_size: int) -> dict[str, np.ndarray]:
    """Bounds on the share of all-wrong (a) and all-correct (b) groups from the logged mean reward r and
    z = frac_reward_zero_std, for 0/1 rewards and groups of G:

        r = b + (mixed groups' mean rewards) / groups,   each mixed group in [1/G, (G - 1)/G]
        =>  max(0, r - (1 - z)(G - 1)/G)  <=  b  <=  min(z, r - (1 - z)/G),   a = z - b.

    The constraints are linear, so they hold for averages over steps too (a rolling mean of r and z).
    Example: r = 0.1, z = 0.6, G = 8: b <= 0.1 - 0.4/8 = 0.05, so a >= 0.55: mostly all wrong.
    """
    r, z, G = np.asarray(reward, dtype=float), np.asarray(zero_std, dtype=float), group_size
    b_lo = np.clip(r - (1 - z) * (G - 1) / G, 0.0, z)
    b_hi = np.clip(r - (1 - z) / G, b_lo, z)
    return {"all_wrong_lo": z - b_hi, "all_wrong_hi": z - b_lo, "all_correct_lo": b_lo, "all_correct_hi": b_hi}


def step_ranges(steps) -> str:
    """Steps as short ranges: 1–40, 52, 60–75 ('none' if empty)."""
    steps = sorted(int(s) for s in steps)
    if not steps:
        return "none"
    out, first, prev = [], steps[0], steps[0]
    for s in steps[1:] + [None]:
        if s is not None and s == prev + 1:
            prev = s
            continue
        out.append(f"{first}" if first == prev else f"{first}–{prev}")
        if s is not None:
            first = prev = s
    return ", ".join(out)
