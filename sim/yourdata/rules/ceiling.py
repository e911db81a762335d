"""At the ceiling: a run whose reward has almost nothing left to gain on its pool. There a flat reward is not a
stall (no_learning) and a falling entropy is sharpening, not collapse without gain (entropy_falling): both say so as
information instead of warning.

Two ways a log shows it; either suffices, and each must hold at the end as well as earlier, so a run that fell from
its ceiling (a collapse) is never excused:

- the reward near its maximum: every logged reward on [0, 1] and the means of the first and of the last q logged
  rewards (q = max(3, n // 8), the trend rules' means) at least SOLVED (0.9). The room left, 1 - r, is then at most
  0.1: twice the least change the trend rules count as one (reward_flat, 0.05).
- most groups surely all correct: rewards the log does not refute as 0/1, frac_reward_zero_std logged, and the least
  share of all-correct groups the reward allows, b_lo = r - (1 - z)(G - 1)/G (runstats.dead_group_bounds on the
  rolling means over W, as the dead-group rules read it), at least MOST_SOLVED (0.5) at the last step and at a
  quarter of the steps (base.lasting). At least half of every batch is then prompts the policy solves G times out of
  G: they give no gradient and can gain nothing, so the reward moves only on the rest. Since z <= 1, b_lo >= 0.5 >= z/2:
  the dead groups are surely mostly all correct, never mostly all wrong (a flat reward with mostly all-wrong groups
  is a stall and still warns).
"""

from __future__ import annotations

import numpy as np

from sim.yourdata.rules.base import Context, lasting, series
from sim.yourdata.runlog import RunLog
from sim.yourdata.runstats import dead_group_bounds, rolling_mean, segments

SOLVED = 0.9  # the reward's mean, on [0, 1], at the start and the end: at most 0.1 left to gain
MOST_SOLVED = 0.5  # the least all-correct share, lasting: most of every batch already solved

RULE = (f"at its ceiling (information, not a warning) where every reward is on [0, 1] and the means of its first and "
        f"last q values are at least {SOLVED:g}, or, for rewards not refuted as 0/1, the least all-correct share the "
        f"reward allows, r̄ − (1 − z)(G − 1)/G, is at least {MOST_SOLVED:g} (rolling means) at the last step and at a "
        "quarter of the steps")


def ceiling(log: RunLog, ctx: Context) -> dict:
    """{"at": bool, "by": "reward" | "groups" | None, "said": words for a title, and the numbers}: is the reward at
    its ceiling (the module's docstring)? Found once per diagnosis and kept in ctx."""
    if ctx.ceiling is None:
        ctx.ceiling = _find(log, ctx)
    return ctx.ceiling


def _find(log: RunLog, ctx: Context) -> dict:
    out: dict = {"at": False, "by": None, "said": ""}
    if not log.has("reward"):
        return out
    r = series(log, ("reward",))["reward"]
    q, _ = segments(r)
    start, end = float(np.mean(r[:q])), float(np.mean(r[-q:]))
    out |= {"reward_start": start, "reward_end": end, "q": q}
    if r.min() >= 0 and r.max() <= 1 and min(start, end) >= SOLVED:
        return out | {"at": True, "by": "reward", "said": f"the reward {start:.3g} → {end:.3g} of its 1 (at least "
                                                           f"{SOLVED:g} at the start and the end)"}
    s = series(log, ("reward", "frac_reward_zero_std"))
    z = s["frac_reward_zero_std"] if len(s) else None
    if z is None or ctx.binary["ok"] is False or (len(z) >= 3 and np.all((z == 0) | (z == 1))):
        return out  # no share of groups to read, or rewards that are not 0/1 (the bounds assume 0/1)
    W = ctx.window
    b = dead_group_bounds(rolling_mean(s["reward"], W), rolling_mean(z, W), ctx.group_size)
    solved = b["all_correct_lo"] >= MOST_SOLVED
    out |= {"all_correct_lo_end": float(b["all_correct_lo"][-1]), "all_wrong_hi_end": float(b["all_wrong_hi"][-1]),
            "solved_steps": int(solved.sum()), "unit": s.unit}
    if not lasting(solved, W):
        return out
    return out | {"at": True, "by": "groups",
                  "said": f"at least {b['all_correct_lo'][-1]:.0%} of groups all correct at the end and at least "
                          f"{MOST_SOLVED:.0%} at {s.of(solved)}; at most {b['all_wrong_hi'][-1]:.0%} all wrong"}
