"""The rules diagnose.py checks on a run's log, each a Finding: a stated rule, its threshold, the steps where it
holds, the chapter's reading and what to do. One module per concern:

    findings, derived, binary = run_rules(log, cfg, group_size=8, window=30)   # sim/yourdata/diagnose.py calls it

Steps. Each rule reads only the steps that log every metric it needs (base.series), and counts them in their
own unit: TRL logs the rewards once per generation batch ("generation steps") and the loss, gradient, entropy and
clip once per optimizer step ("optimizer steps"); with num_iterations mu = 1 they coincide, with mu = 2 the rewards
are on every second one. A finding names the file's step numbers and says "at 140 of 150 generation steps".
The rules read a trailing rolling mean over W logged values (`window`; default a twentieth of the steps that log
the reward, 1 to 50), so one noisy step neither fires nor hides a rule; "start" and "end" are the means of the
first and last W values. Status: warn (act), info (holds, and expected or a fact about the run), ok, unknown.

The rules (thresholds are DiagnoseConfig fields, in brackets their defaults):
  zero_std.py
  zero_std_floor   info: frac_reward_zero_std's rolling mean above the Jensen floor r̄^G + (1 - r̄)^G by more
                   than zero_std_excess [0.10]: the spread of difficulty across prompts (0/1 rewards only).
  zero_std_below   warn: below the floor by more than zero_std_excess: G larger than assumed, or not 0/1.
  dead_all_wrong / dead_all_correct
                   With a (all wrong) + b (all correct) = z and each mixed group's mean reward in [1/G, (G-1)/G],
                   r - (1 - z)(G - 1)/G <= b <= r - (1 - z)/G. "Mostly all wrong" where the bounds put a above z/2
                   (warn where a >= dead_warn [0.5] of all groups, else info); "mostly all correct" where they put b
                   above z/2 (info: a pool being learned), judged where z >= 0.05.
  no_signal_steps  z = 1: no reward gradient at that step. warn, or info where the reward is 1 (all correct).
  per_function_zero_std
                   info: for a 0/1 reward function f among several, r_f^G + (1 - r_f)^G - z above zero_std_excess:
                   that share of groups at least learns only from the other functions.
  policy.py
  entropy_falling  entropy's rolling mean below (1 - entropy_drop [0.20]) x its start: warn when it is still below at
                   the end and the reward ends no more than reward_flat [0.05] above its start (collapse without
                   gain), info when the reward rose (sharpening), the dip came back, or the reward is at its ceiling.
  loss_zero        info: |loss| <= loss_zero [0.01] while grad_norm > grad_zero [1e-6]: on-policy, as expected.
  kl_absent        info: no kl, so beta = 0 (warn if the file's config says beta > 0).
  clip_active      info: a clip_ratio above 0: reused batches or a separate sampler.
  length.py
  length_drift     warn: mean length's rolling mean >= (1 + length_growth [0.20]) x its start at a flat reward.
  truncation       warn: completions/clipped_ratio's rolling mean above truncation [0.05], or the mean length at
                   least near_cap [0.8] x the cap (max_completion_length, or the clipped answers' length).
  rewards.py
  reward_funcs_diverge
                   warn: one reward function rises more than func_rise [0.2] while another, on [0, 1] with room
                   above it, stays within reward_flat of its start: both named.
  train_vs_eval    warn: eval_reward falls more than eval_drop [0.05] below its best, and ends there, while the
                   training reward rose more than reward_flat since that evaluation.
  trends.py
  reward_collapse  warn: the reward rose above its start (or ends below it) by more than 3 standard errors of its
                   noise, and its end is below its best by more than that and by half its range.
  no_learning      warn: over min_trend [30] logged rewards, no change beyond the run's noise; info at the ceiling.
  ceiling.py       (no finding of its own) the reward at its ceiling, for no_learning and entropy_falling: on [0, 1]
                   at 0.9 or more at the start and the end, or most groups surely all correct (the least all-correct
                   share r - (1 - z)(G - 1)/G at least 0.5, lasting).
  spikes.py
  spikes           warn: grad_norm, kl or loss more than spike_factor [10] robust standard deviations above the
                   median of the max(W, 20) values before it (grad_norm and kl also spike_factor x that median).
"""

from __future__ import annotations

import numpy as np

from sim.yourdata.rules.base import Context, DiagnoseConfig, Finding, Series, series
from sim.yourdata.rules.gaps import constant_rule, gap_rules
from sim.yourdata.rules.kind import reward_kind
from sim.yourdata.rules.length import length_rule, truncation_rule
from sim.yourdata.rules.policy import clip_rule, entropy_rule, entropy_start_rule, kl_rule, kl_start_rule, loss_rule
from sim.yourdata.rules.rewards import diverge_rule, eval_rule
from sim.yourdata.rules.spikes import spike_rule
from sim.yourdata.rules.trends import trend_rules
from sim.yourdata.rules.zero_std import per_function_rules, zero_std_rules
from sim.yourdata.runlog import RunLog

__all__ = ["DiagnoseConfig", "Finding", "Series", "run_rules", "series", "window_for"]


def window_for(cfg: DiagnoseConfig, T: int) -> int:
    """W: the setting, or a twentieth of T (the steps that log the reward), from 1 to 50."""
    return cfg.window if cfg.window > 0 else int(min(max(round(T / 20), 1), 50))


def run_rules(log: RunLog, cfg: DiagnoseConfig, group_size: int, window: int
              ) -> tuple[list[Finding], dict[str, np.ndarray], dict]:
    """Every rule on `log` at group size G and rolling window W: (findings, the series they derived, (T,) each:
    floor, excess, bounds, rolling means; the 0/1-reward check)."""
    ctx = Context(group_size, window, reward_kind(log, group_size))
    findings = gap_rules(log, cfg, ctx)
    findings += trend_rules(log, cfg, ctx)
    findings += zero_std_rules(log, cfg, ctx)
    findings += per_function_rules(log, cfg, ctx)
    for rule in (entropy_rule, entropy_start_rule, loss_rule, kl_rule, kl_start_rule, clip_rule, length_rule,
                 truncation_rule, diverge_rule, eval_rule, spike_rule, constant_rule):
        found = rule(log, cfg, ctx)
        if found is not None:
            findings.append(found)
    return findings, ctx.derived, ctx.binary
