"""Is the logged reward 0/1 (a verifier's right or wrong)? Read from the spread TRL logs beside the mean, with that
spread's own semantics (sim/yourdata/names.py): TRL 0.14-0.26's reward_std is the mean of the groups' stds, 0.27's
and later the std over the batch, and rewards/<f>/std (TRL 0.17 and later) the batch's; a log that averages several
generation batches into one logged value (logging_steps > 1) averages their stds.

For 0/1 rewards of mean r the std over a batch of N is sqrt(r(1 - r) N / (N - 1)), so at least sqrt(r(1 - r)) and at
most sqrt(r(1 - r) G / (G - 1)) (N >= G); the mean of the groups' stds, and any average of stds over batches, is
no more than that (the square root is concave) and may be much less. So a ratio std / sqrt(r(1 - r)) above the
upper bound is never 0/1, and one below BINARY_RATIO is "not 0/1" only where the std is one batch's (one generation
batch per logged value); elsewhere a low ratio cannot tell.
"""

from __future__ import annotations

import numpy as np

from sim.yourdata.runlog import RunLog

BINARY_RATIO = 0.9  # std / sqrt(r(1 - r)) at least this (median) for one batch of 0/1 rewards
UPPER_SLACK = 1.05  # over sqrt(G / (G - 1)): rounding, and a batch a little under G's multiple
NEAR_EDGE = 0.02  # rewards this close to 0 or 1 say nothing about the spread
OLD_NAMES = ("completion_length",)  # a file with these names is TRL 0.14-0.16: reward_std is the groups' mean std


def reward_std_kind(log: RunLog) -> str:
    """"groups' mean" (TRL <= 0.26), "batch" (TRL >= 0.27) or "unknown": from the file's names (TRL 0.14-0.16's
    completion_length and rewards/<func>), else from reward_std against the one reward function's batch std."""
    if any(k in OLD_NAMES or (k.startswith("rewards/") and k.count("/") == 1) for k in log.spelled.values()):
        return "groups' mean"
    funcs = log.reward_funcs
    if len(funcs) == 1 and log.has(f"rewards/{funcs[0]}/std") and log.has("reward_std"):
        a, b = log.metrics["reward_std"], log.metrics[f"rewards/{funcs[0]}/std"]
        ok = np.isfinite(a) & np.isfinite(b) & (b > 1e-9)
        if ok.sum() >= 3:
            return "groups' mean" if float(np.median(a[ok] / b[ok])) < 0.97 else "batch"
    return "unknown"


def one_batch_per_value(log: RunLog, names) -> bool:
    """Is each logged value of `names` one generation batch's (logging_steps = 1)? From the steps' spacing: 1 for
    verl, and for TRL the optimizer steps per generation the file states (mu), else 1; a console's numbered logs
    cannot tell."""
    if log.step_kind not in ("verl", "optimizer") or len(log.steps) < 2:
        return False
    steps = log.steps[log.logged(names)]
    if steps.size < 2:
        return False
    per = 1 if log.step_kind == "verl" else log.settings.get("optimizer_steps_per_generation",
                                                             log.settings.get("mu", 1))
    return bool(np.median(np.diff(steps)) == per)


def binary_check(mean: np.ndarray, std: np.ndarray | None, funcs: int = 1, *, one_batch: bool = True,
                 semantics: str = "batch", group_size: int = 8) -> dict:
    """Are these rewards 0/1? {"ok": True | False | None, "why": str, "ratio": ...} (see the module's docstring):
    False for a mean outside [0, 1], several functions summed, a spread above 0/1's bound, or (one batch per value,
    the batch's std) a spread below BINARY_RATIO x sqrt(r(1 - r)); None where the log cannot tell."""
    r = mean[~np.isnan(mean)]
    if r.size == 0:
        return {"ok": None, "why": "the reward is not logged"}
    if r.min() < -1e-9 or r.max() > 1 + 1e-9:
        return {"ok": False, "why": f"the mean reward leaves [0, 1] (from {r.min():.3g} to {r.max():.3g}): not "
                                    "0/1 rewards (several reward functions add up, or a scaled reward)"}
    if funcs > 1:
        return {"ok": False, "why": f"{funcs} reward functions are summed: a sum of 0/1 rewards is not 0/1"}
    if std is None:
        return {"ok": None, "why": "reward_std is not logged, so 0/1 rewards are assumed"}
    pick = ~np.isnan(mean) & ~np.isnan(std) & (mean > NEAR_EDGE) & (mean < 1 - NEAR_EDGE)
    if not pick.any():
        return {"ok": None, "why": "the reward stays near 0 or 1, so 0/1 rewards cannot be checked: assumed"}
    ratio = float(np.median(std[pick] / np.sqrt(mean[pick] * (1 - mean[pick]))))
    upper = float(np.sqrt(group_size / max(group_size - 1, 1)) * UPPER_SLACK)
    nums = {"ratio": ratio, "upper": upper, "semantics": semantics, "one_batch": one_batch}
    if ratio > upper:
        return {"ok": False, **nums, "why": f"the std is {ratio:.2f} × √(r̄(1 − r̄)) (median), above the {upper:.2f} "
                                            "0/1 rewards can reach: not 0/1 rewards"}
    if ratio >= BINARY_RATIO:
        return {"ok": True, **nums, "why": f"the std is {ratio:.2f} × √(r̄(1 − r̄)) (median): as 0/1 rewards give"}
    if one_batch and semantics == "batch":
        return {"ok": False, **nums, "why": f"the std is only {ratio:.2f} × √(r̄(1 − r̄)) (median; one batch of 0/1 "
                                            "rewards gives at least 1): partial credit"}
    said = ("the mean of the groups' stds" if semantics == "groups' mean" else
            "an average of several batches' stds" if semantics == "batch" else "a std whose kind this log cannot say")
    return {"ok": None, **nums, "why": f"the std is {ratio:.2f} × √(r̄(1 − r̄)) (median), {said}, which 0/1 rewards "
                                       "can give: 0/1 rewards assumed, not shown"}


def reward_kind(log: RunLog, group_size: int = 8) -> dict:
    """binary_check of the logged reward (the sum of the reward functions), with reward_std's semantics."""
    if not log.has("reward"):
        return {"ok": None, "why": "reward is not logged"}
    std = log.metrics["reward_std"] if log.has("reward_std") else None
    semantics = reward_std_kind(log)
    out = binary_check(log.metrics["reward"], std, len(log.reward_funcs),
                       one_batch=one_batch_per_value(log, ["reward", "reward_std"]), semantics=semantics,
                       group_size=group_size)
    return out | {"reward_std": semantics}
