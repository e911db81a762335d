"""What a GRPO run's curves say, read with Chapter 15: findings, each a stated rule, its threshold and the steps
where it holds.

    log = load_run_log(data, "trainer_state.json")      # sim/yourdata/runlog.py
    d = diagnose(log, DiagnoseConfig(group_size=8))
    for f in d.findings: print(f.title, f.rule, step_ranges(f.steps))
    to_json(d)                                          # every number and finding, as `python -m sim diagnose --json`

The rules and their thresholds are sim/yourdata/rules/'s (its __init__'s docstring lists them); the arithmetic they
read with, rolling means, the Jensen floor and the bounds on dead groups, is sim/yourdata/runstats.py's.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from sim.yourdata.rules import DiagnoseConfig, Finding, run_rules, window_for
from sim.yourdata.runlog import RunLog
from sim.yourdata.runstats import dead_group_bounds, jensen_floor, rolling_mean, start_end, step_ranges

__all__ = ["DEFAULT_G", "DiagnoseConfig", "Diagnosis", "Finding", "dead_group_bounds", "diagnose", "jensen_floor",
           "json_text", "rolling_mean", "start_end", "step_ranges", "text_report", "to_json"]

DEFAULT_G = 8


@dataclass(frozen=True)
class Diagnosis:
    """diagnose()'s result: the settings it used, the series it read and derived, its findings."""

    config: DiagnoseConfig
    log: RunLog
    group_size: int
    group_size_from: str  # "the file", "the setting" or "the default"
    window: int
    derived: dict[str, np.ndarray]  # (T,) each: floor, excess, bounds, rolling means
    findings: list[Finding]
    summary: dict


def diagnose(log: RunLog, cfg: DiagnoseConfig | None = None) -> Diagnosis:
    """Every rule on `log` (cfg: DiagnoseConfig(), the defaults, if None). G: cfg.group_size if set, else the
    file's (a tinylm summary says it), else 8."""
    cfg = DiagnoseConfig() if cfg is None else cfg
    if cfg.group_size is not None:
        G, G_from = cfg.group_size, "the setting"
    elif "group_size" in log.settings:
        G, G_from = int(log.settings["group_size"]), "the file"
    else:
        G, G_from = DEFAULT_G, "the default"
    W = window_for(cfg, int(log.logged(["reward"]).sum()) if log.has("reward") else len(log.steps))
    if log.not_grpo is not None:  # said in one line; no rule speaks of a run that is not GRPO
        said = Finding("not_grpo", "info", f"Not a GRPO run: {log.not_grpo}. Nothing is judged.",
                       "the log has no reward, reward_std, frac_reward_zero_std or reward function (TRL, verl and "
                       "OpenRLHF names)", reading="These rules read a GRPO run's rewards and groups; this log is "
                       "another kind of training.")
        return Diagnosis(cfg, log, G, G_from, W, {}, [said], _summary(log, W, G, {"ok": None, "why": log.not_grpo}))
    findings, derived, binary = run_rules(log, cfg, G, W)
    return Diagnosis(cfg, log, G, G_from, W, derived, findings, _summary(log, W, G, binary))


def _summary(log: RunLog, W: int, G: int, binary: dict) -> dict:
    m = log.metrics
    out = {"steps": len(log.steps), "first_step": int(log.steps[0]), "last_step": int(log.steps[-1]),
           "step_kind": log.step_kind, "window": W, "group_size": G, "binary_rewards": binary,
           "reward_funcs": log.reward_funcs, "grpo": log.not_grpo is None}
    if log.has("reward"):
        out["reward_steps"] = {"count": int(log.logged(["reward"]).sum()), "unit": log.unit(["reward"])}
    for name in ("reward", "frac_reward_zero_std", "entropy", "completions/mean_length", "grad_norm", "loss", "kl",
                 "eval_reward"):
        if log.has(name):
            s, e = start_end(m[name], W)
            out[name] = {"start": s, "end": e, "min": float(np.nanmin(m[name])), "max": float(np.nanmax(m[name]))}
    return out


# ---- output -------------------------------------------------------------------------------------------------

def to_json(d: Diagnosis) -> dict:
    """Every number and finding: what `python -m sim diagnose --json` prints and the page shows. Valid JSON
    always: a number that is not finite becomes null (json_safe)."""
    thresholds = {f.name: getattr(d.config, f.name) for f in dataclasses.fields(d.config)
                  if f.name not in ("group_size", "window")}
    return json_safe({
        "file": d.log.name, "source": d.log.source, "notes": list(d.log.notes), "settings_in_file": d.log.settings,
        "grpo": d.log.not_grpo is None, "not_grpo": d.log.not_grpo, "keys_in_file": d.log.spelled,
        "gaps": d.log.gaps,
        "group_size": d.group_size, "group_size_from": d.group_size_from, "window": d.window,
        "thresholds": thresholds,
        "summary": d.summary,
        "findings": [{"key": f.key, "status": f.status, "holds": f.holds, "title": f.title, "rule": f.rule,
                      "steps": list(f.steps), "step_ranges": step_ranges(f.steps), "reading": f.reading,
                      "remedy": f.remedy, "numbers": f.numbers} for f in d.findings],
        "steps": [int(s) for s in d.log.steps],
        "metrics": dict(d.log.metrics),
        "derived": dict(d.derived),
    })


def json_safe(x):
    """x with every float that is not finite (nan, inf: no JSON value) replaced by None, numpy scalars and
    arrays as Python's floats and lists; containers walked."""
    if isinstance(x, dict):
        return {k: json_safe(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [json_safe(v) for v in x]
    if isinstance(x, np.ndarray):  # a metric over the steps: one pass in numpy, floats and None
        a = np.asarray(x, float)
        return np.where(np.isfinite(a), a, None).tolist()
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def json_text(d: Diagnosis) -> str:
    """to_json(d) as text (the page's download): the very text `python -m sim diagnose --json` prints, through
    sim/export.py's one JSON writer, so a control, C1 or bidi character from the file (a reward function named
    with U+202E) is written as its JSON escape, never raw."""
    from sim.export import json_text as text  # imported when asked: sim.export loads torch (through sim.grpo)

    return text(to_json(d), allow_nan=False)


def text_report(d: Diagnosis) -> str:
    """The findings as lines of text (the CLI without --json)."""
    s = d.summary
    if d.log.not_grpo is not None:
        return f"{d.log.name}: {d.findings[0].title}"
    lines = [f"{d.log.name}: {d.log.source}, {s['steps']:,} steps ({s['first_step']}–{s['last_step']}); G = "
             f"{d.group_size} (from {d.group_size_from}); rolling window W = {d.window}"]
    if "reward" in s:
        lines.append(f"reward {s['reward']['start']:.3f} → {s['reward']['end']:.3f}")
    lines += [f"note: {n}" for n in d.log.notes]
    order = {"warn": 0, "info": 1, "ok": 2, "unknown": 3}
    for f in sorted(d.findings, key=lambda f: order[f.status]):
        lines.append("")
        lines.append(f"[{f.status}] {f.title}")
        lines.append(f"  rule: {f.rule}")
        if f.holds:
            lines.append(f"  steps: {step_ranges(f.steps)}")
        for label, text in (("reading", f.reading), ("remedy", f.remedy)):
            if text:
                lines.append(f"  {label}: {text}")
    return "\n".join(lines)
