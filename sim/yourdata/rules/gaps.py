"""What a log has no number for, and reward functions that never move: the values transformers writes as NaN for a
step that diverged, verl's null for a metric a step did not log, and a function whose mean is the same at every
step (it adds nothing to the advantage)."""

from __future__ import annotations

import numpy as np

from sim.yourdata.rules.base import Context, DiagnoseConfig, Finding, series
from sim.yourdata.runlog import RunLog
from sim.yourdata.runstats import step_ranges

DIVERGES = ("loss", "grad_norm", "kl", "entropy", "policy_loss")  # a NaN or infinity here means the update diverged
MIN_CONSTANT = 10  # generation steps a function must be logged at before "never varies" is said
TAIL = 3  # logged steps in a row, to the log's last, that say a run "did not recover" (one last NaN cannot say)


def gap_rules(log: RunLog, cfg: DiagnoseConfig, ctx: Context) -> list[Finding]:
    """nonfinite (NaN or an infinity: a warning for a metric of the update when it lasts to the end of the log or
    at a quarter of its steps, else information: the run recovered) and null_values (information)."""
    out = []
    for m, kinds in log.gaps.items():
        key = log.key(m)
        bad = sorted(set(kinds.get("nan", [])) | set(kinds.get("inf", [])))
        if bad:
            word = "NaN" if kinds.get("nan") else "infinite"
            every = sorted(set(log.steps.tolist()) | set(bad))
            tail = next((i for i, step in enumerate(reversed(every)) if step not in set(bad)), len(every))
            persists = tail >= TAIL or len(bad) >= max(TAIL, 0.25 * len(every))  # the last steps, or many
            diverged = m in DIVERGES
            status = "warn" if diverged and persists else "info"
            where = f"step {bad[0]}" if len(bad) == 1 else f"{len(bad):,} steps ({_short(bad)})"
            title = f"{key} is {word} at {where}" + (
                (": the run diverged and did not recover" if persists else ": that step diverged, and the run went "
                 "on") if diverged else ": no value there")
            out.append(Finding(
                "nonfinite", status, title, f"{key} written as NaN or an infinity (read as a missing value); a "
                f"warning for a metric of the update (loss, grad_norm, kl, entropy) when it holds at the log's last "
                f"{TAIL} steps or more, or at a quarter of its steps", tuple(bad),
                reading=("transformers writes NaN when a step's loss or gradient overflowed. In bf16 the weights "
                         "take the NaN and every later step is lost; with fp16's loss scaling the step is skipped "
                         "and training goes on." if diverged else
                         "TRL writes NaN for a reward function that scored none of a step's answers (it returned "
                         "None for all of them)."),
                remedy=("Resume from the last checkpoint before it with a lower learning rate or max_grad_norm; look "
                        "at the batch at that step (a very long or degenerate completion)." if status == "warn"
                        else ""), numbers={"metric": m, "key": key, "steps": bad, "persists": persists}))
        nulls = sorted(kinds.get("null", []))
        if nulls:
            out.append(Finding(
                "null_values", "info", f"{key} is null at {len(nulls):,} step{'s' if len(nulls) > 1 else ''} "
                f"({_short(nulls)}): not logged there", f"{key} written as null (read as a missing value)",
                tuple(nulls), reading="A metric the step did not compute (verl's file logger and TRL write null "
                "for it); the rules read the steps that have it.", numbers={"metric": m, "key": key}))
    return out


def constant_rule(log: RunLog, cfg: DiagnoseConfig, ctx: Context) -> Finding | None:
    """funcs_constant (information): a reward function whose mean is one value at every one of at least
    MIN_CONSTANT generation steps, while there are several functions: it never varies, so it adds nothing to any
    advantage. None when there is nothing to say."""
    funcs = [f for f in log.reward_funcs if log.has(f"rewards/{f}/mean")]
    if len(funcs) < 2:
        return None
    still, values, unit = [], {}, ""
    for f in funcs:
        s = series(log, (f"rewards/{f}/mean",))
        x = s[f"rewards/{f}/mean"]
        if len(x) >= MIN_CONSTANT and np.all(x == x[0]):
            still.append(f)
            values[f], unit = float(x[0]), s.unit
    if not still:
        return None
    names = [log.key(f"rewards/{f}/mean").removesuffix("/mean").removeprefix("rewards/") for f in still]
    zero = all(values[f] == 0 for f in still)
    said = ", ".join(f"{n} ({values[f]:g})" for n, f in zip(names, still, strict=True))
    return Finding(
        "funcs_constant", "info", f"{len(still)} of {len(funcs)} reward functions never vary: {said} at every "
        f"{unit[:-1] if unit.endswith('s') else unit}" + (": they never fire" if zero else ""),
        f"rewards/<f>/mean the same at every one of at least {MIN_CONSTANT} logged steps, among several functions",
        reading="A function that gives every answer the same score adds the same to each answer of a group, so it "
                "cancels in the advantage: it teaches nothing. If it should reward something (a format), its check "
                "never matches (a regex too strict, a tag the model never writes).",
        remedy="Score a few completions by hand with it; fix or drop it.", numbers={"functions": still,
                                                                                   "values": values})


def _short(steps, most: int = 4) -> str:
    parts = step_ranges(steps).split(", ")
    return ", ".join(parts[:most]) + (", …" if len(parts) > most else "")
