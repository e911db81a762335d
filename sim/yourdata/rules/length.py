"""Completion lengths: drifting up at a flat reward (the length bias), and answers cut at the length cap."""

from __future__ import annotations

import numpy as np

from sim.yourdata.rules.base import Context, DiagnoseConfig, Finding, lasting, missing, series
from sim.yourdata.runlog import RunLog
from sim.yourdata.runstats import rolling_mean, start_end

LENGTH = "completions/mean_length"
CLIPPED = "completions/clipped_ratio"
PINNED_MIN = 16  # tokens: a mean pinned below this is as likely a short fixed answer (a toy task's) as a cap


def length_rule(log: RunLog, cfg: DiagnoseConfig, ctx: Context) -> Finding:
    """length_drift: completions/mean_length's rolling mean >= (1 + length_growth) x its start while the reward's
    rolling mean stays within reward_flat of its start (both read at the steps that log both)."""
    need = (LENGTH, "reward")
    s = series(log, need)
    if len(s) == 0:
        return missing("length_drift", "Completion length drifting up", need, log)
    W = ctx.window
    L, r = s[LENGTH], s["reward"]
    l0, l1 = start_end(L, W)
    r0, r1 = start_end(r, W)
    Ls, rs = rolling_mean(L, W), rolling_mean(r, W)
    ctx.derived["length_smooth"], ctx.derived["reward_smooth"] = s.expand(Ls), s.expand(rs)
    hold = (Ls >= (1 + cfg.length_growth) * l0) & (np.abs(rs - r0) <= cfg.reward_flat) & (l0 > 0)
    nums = {"length_start": l0, "length_end": l1, "growth": l1 / l0 - 1 if l0 > 0 else None, "reward_start": r0,
            "reward_end": r1, "unit": s.unit}
    rule = (f"rolling mean (W = {W}) of {log.key(LENGTH)} ≥ {1 + cfg.length_growth:.2f} × its start "
            f"({l0:.4g}) while reward's stays within ±{cfg.reward_flat:g} of its start ({r0:.3f}), at the last step "
            "and at a quarter of the steps")
    if not lasting(hold, W):
        grew = l1 > (1 + cfg.length_growth) * l0
        note = (" Lengths grew with the reward: R1-Zero's responses grew as it learned to use test-time compute."
                if grew else "")
        return Finding("length_drift", "ok", f"No length drift (growth at a flat reward): length {l0:.4g} → "
                       f"{l1:.4g}, reward {r0:.3f} → {r1:.3f}", rule, reading=note.strip(), numbers=nums)
    return Finding(
        "length_drift", "warn", f"Completions grow while the reward is flat: length {l0:.4g} → {l1:.4g}, reward "
        f"{r0:.3f} → {r1:.3f}, at {s.of(hold)}", rule, s.at(hold),
        reading="Chapter 15: dividing by |y| pushes a long wrong answer down less per token (−0.063 against "
                "−0.083 in the worked example); Liu et al. (2025) argue this lets wrong answers drift longer. "
                "Chapter 16 dissects the length bias.",
        remedy="A loss without per-response length normalisation (TRL's loss_type dr_grpo or dapo), and watch "
               "completions/clipped_ratio: answers cut at max_completion_length.", numbers=nums)


def length_cap(log: RunLog, cfg: DiagnoseConfig) -> tuple[float | None, str]:
    """(the length cap in tokens, where it came from): the setting, else the largest completions/max_length at a
    step that clipped answers (a clipped answer is exactly max_completion_length long), else None."""
    if cfg.max_completion_length is not None:
        return float(cfg.max_completion_length), "the setting"
    need = ("completions/max_length", CLIPPED)
    if log.has(need[0]) and log.has(CLIPPED):
        s = series(log, need)
        cut = s[CLIPPED] > 0
        if cut.any():
            return float(np.max(s[need[0]][cut])), "completions/max_length where answers were clipped"
    return None, ""


def truncation_rule(log: RunLog, cfg: DiagnoseConfig, ctx: Context) -> Finding:
    """truncation: completions/clipped_ratio's rolling mean above `truncation`, or the mean length's rolling mean
    climbing into the cap: at least near_cap x the cap and (1 + length_growth) x its start (answers that were
    always about that long, as TinyLM's 3-4 tokens of a 4-token cap, are not climbing)."""
    if not log.has(CLIPPED) and not log.has(LENGTH):
        return missing("truncation", "Answers cut at the length cap", (CLIPPED,), log)
    W = ctx.window
    cap, cap_from = length_cap(log, cfg)
    names = tuple(n for n in (CLIPPED, LENGTH) if log.has(n))
    s = series(log, names)
    if len(s) == 0:
        return missing("truncation", "Answers cut at the length cap", names, log)
    clipped = rolling_mean(s[CLIPPED], W) if CLIPPED in names else np.zeros(len(s))
    length = rolling_mean(s[LENGTH], W) if LENGTH in names else None
    near = np.zeros(len(s), dtype=bool)
    if length is not None and cap is None and CLIPPED not in names:
        # No cap known and no clipped share (TRL before 0.17): a batch's mean length sits at one value step after
        # step only if every answer has that length, the cap, or a policy that emits one fixed answer (a warning
        # either way). The largest logged mean, a whole number of tokens, lasting: the cap, and every answer at it.
        top = float(np.max(s[LENGTH]))
        at = s[LENGTH] == top
        if top >= PINNED_MIN and top == round(top) and lasting(at, W):
            cap, cap_from, near = top, f"{log.key(LENGTH)} exactly that at {s.of(at)}: every answer that long", at
    if length is not None and cap and not near.any():
        near = (length >= cfg.near_cap * cap) & (length >= (1 + cfg.length_growth) * start_end(s[LENGTH], W)[0])
    hold = (clipped > cfg.truncation) | near
    severe = (clipped > cfg.truncation_warn) | near
    nums = {"cap": cap, "cap_from": cap_from, "max_clipped": float(np.max(clipped)), "unit": s.unit,
            "near_cap_steps": int(near.sum()), "end_clipped": float(clipped[-1])}
    if length is not None:
        nums["length_start"], nums["length_end"] = start_end(s[LENGTH], W)
    capped = f" of a {cap:,.0f}-token cap ({cap_from})" if cap else ""
    rule = (f"rolling mean (W = {W}) of {log.key(CLIPPED)} above {cfg.truncation:g}, or of "
            f"{log.key(LENGTH)} at least {cfg.near_cap:g} × the length cap"
            + (f" ({cap:,.0f})" if cap else " (unknown here)") + f" after growing {cfg.length_growth:.0%} from its "
            f"start; a warning when the clipped share stays above {cfg.truncation_warn:g} (or the length at the cap) "
            "at the last step and at a quarter of the steps")
    if CLIPPED not in names:
        rule += (f"; with no clipped share logged and no cap known, the largest logged {log.key(LENGTH)}, a whole "
                 f"number of at least {PINNED_MIN} tokens, exactly at the last step and at a quarter of the steps: "
                 "the cap, every answer at it (a warning)")
    lengths = (f"; mean length {nums['length_start']:.4g} → {nums['length_end']:.4g}{capped}" if length is not None
               else "")
    shared = CLIPPED in names  # TRL before 0.17 logs no clipped share: say none, never "0%"
    if not hold.any():
        share = f"clipped share up to {nums['max_clipped']:.1%}, rolling" if shared else "no clipped share logged"
        return Finding("truncation", "ok", f"Few answers cut at the length cap ({share}){lengths}", rule,
                       numbers=nums)
    warn = lasting(severe, W)
    tail = "" if warn or not shared else f"; {nums['end_clipped']:.0%} at the end (rolling): it did not last"
    head = (f"Answers cut at the length cap: up to {nums['max_clipped']:.0%} of completions clipped (rolling)"
            if shared else "Answers at the length cap")
    return Finding(
        "truncation", "warn" if warn else "info", f"{head}{lengths}, at {s.of(hold)}{tail}", rule, s.at(hold),
        reading="A completion cut at max_completion_length has no final answer, so a verifier scores it 0 whatever "
                "its reasoning: the reward then measures the cap as much as the skill, and the length pressure of "
                "the loss (Chapter 15: dividing by |y| pushes a long wrong answer down less per token; Chapter 16's "
                "length bias) piles answers against it.",
        remedy="Raise max_completion_length, mask truncated completions out of the loss (TRL: "
               "mask_truncated_completions=True; DAPO's overlong filtering), or shape overlong answers (DAPO's soft "
               "overlong punishment, a length penalty).", numbers=nums)
