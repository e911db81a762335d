"""The chapter's "groups that teach nothing" read from a log: is the reward 0/1, the zero-std share against its
Jensen floor, all wrong or all correct, steps with no signal, and a 0/1 reward function among several.

With 0/1 rewards a prompt solved with probability p gives a group of G equal answers with probability
p^G + (1 - p)^G (Chapter 15), a convex function of p, so over prompts of mean rate r (the logged reward) the share
of dead groups is at least r^G + (1 - r)^G in expectation (Jensen). Each rule reads only the steps that log both
the reward and frac_reward_zero_std (TRL logs them once per generation batch)."""

from __future__ import annotations

import numpy as np

from sim.yourdata.datafile import cell_text
from sim.yourdata.rules.base import (
    Context,
    DiagnoseConfig,
    Finding,
    Series,
    lasting,
    median_of,
    missing,
    series,
    steps_word,
)
from sim.yourdata.rules.kind import binary_check, one_batch_per_value
from sim.yourdata.runlog import RunLog
from sim.yourdata.runstats import dead_group_bounds, jensen_floor, rolling_mean, start_end

MIN_DEAD = 0.05  # the split of dead groups is judged only where at least this share is dead


def zero_std_rules(log: RunLog, cfg: DiagnoseConfig, ctx: Context) -> list[Finding]:
    """zero_std_floor, zero_std_below, dead_all_wrong, dead_all_correct, dead_undecided, no_signal_steps."""
    need = ("reward", "frac_reward_zero_std")
    s = series(log, need)
    if len(s) == 0:
        out = [missing("zero_std_floor", "Groups that teach nothing against the reward", need, log)]
        if not log.has("frac_reward_zero_std") and log.has("reward_std"):
            # TRL before 0.18 logs no zero-std share, but a reward_std of exactly 0 (the batch's std, or the mean
            # of the groups' stds, or a mean of either over logging_steps) says every group was all-equal: z = 1
            std = series(log, ("reward", "reward_std"))
            out += _no_signal(log, std, ctx, std["reward_std"] <= 0,
                              f"{log.key('reward_std')} = 0, so frac_reward_zero_std = 1 (not logged here; a std of "
                              "0, of the batch or the groups' mean, leaves no group that varies)")
        return out
    G, W, d = ctx.group_size, ctx.window, ctx.derived
    r, z = s["reward"], s["frac_reward_zero_std"]
    floor = jensen_floor(r, G)
    excess_smooth = rolling_mean(z - floor, W)
    rs, zs = rolling_mean(r, W), rolling_mean(z, W)
    d |= {"floor": s.expand(floor), "excess": s.expand(z - floor), "excess_smooth": s.expand(excess_smooth),
          "floor_smooth": s.expand(rolling_mean(floor, W)), "zero_std_smooth": s.expand(zs)}
    bounds = dead_group_bounds(rs, zs, G)
    d |= {k: s.expand(v) for k, v in bounds.items()}
    out = _floor_rules(s, cfg, ctx, z, floor, excess_smooth)
    if ctx.binary["ok"] is not False:
        out += _dead_split(s, G, zs, bounds, cfg, W)
    out += _no_signal(log, s, ctx, s["frac_reward_zero_std"] >= 1 - 1e-9, "frac_reward_zero_std = 1")
    out.append(_high(log, s, cfg, ctx, zs, bounds))
    return out


def _high(log: RunLog, s: Series, cfg: DiagnoseConfig, ctx: Context, zs: np.ndarray, bounds: dict) -> Finding:
    """zero_std_high: the rolling share of zero-std groups at least zero_std_high at the last step and at a quarter
    of the steps, whatever the rewards' kind. Information where the log shows those groups mostly all correct (0/1
    rewards, the bounds), a warning otherwise: that share of every batch's generations teaches nothing."""
    W, th, z = ctx.window, cfg.zero_std_high, s["frac_reward_zero_std"]
    z0, z1 = start_end(z, max(W, len(z) // 8))
    high = zs >= th
    key = log.key("frac_reward_zero_std")
    nums = {"start": z0, "end": z1, "unit": s.unit, "high_steps": int(high.sum())}
    rule = (f"rolling mean (W = {W}) of {key} at least {th:g} at the last step and at a quarter of the steps; "
            "information where the dead groups are surely mostly all correct")
    if len(z) >= 3 and np.all((z == 0) | (z == 1)):
        return Finding("zero_std_high", "unknown", "Share of groups that teach nothing: not judged", rule,
                       reading="frac_reward_zero_std is 0 or 1 at every step: one group per step, or "
                               "scale_rewards=\"batch\" (then it is no share of groups).", numbers=nums)
    if not lasting(high, W):
        return Finding("zero_std_high", "ok", f"Groups that teach nothing stay under {th:.0%} (rolling): {key} "
                       f"{z0:.2f} → {z1:.2f}", rule, numbers=nums)
    solved = bool(ctx.binary["ok"] is not False and bounds["all_correct_lo"][-1] > zs[-1] / 2)
    said = (f"{z1:.0%} of groups teach nothing at the end ({key} {z0:.2f} → {z1:.2f}), at least {th:.0%} at "
            f"{s.of(high)}")
    if solved:
        return Finding("zero_std_high", "info", said + ": mostly all correct, a pool being learned", rule,
                       s.at(high), reading="The dead groups are surely mostly all correct: prompts the policy now "
                       "solves every time. Learned, but that share of each batch's generations buys nothing.",
                       remedy="Drop solved prompts or add harder ones; DAPO's dynamic sampling refills the batch.",
                       numbers=nums)
    return Finding(
        "zero_std_high", "warn", said, rule, s.at(high),
        reading="A group whose G answers all score the same has zero advantages: no gradient (Chapter 15, “Groups "
                "that teach nothing”). With this share most of every batch's generations teach nothing"
                + ("; whether they are all wrong or all correct the log cannot say for these rewards." if
                   ctx.binary["ok"] is False else "."),
        remedy="DAPO's dynamic sampling (drop all-equal groups, draw more), a bigger G, or prompts of middle "
               "difficulty (the Your prompts page shows a pool's share at each G).", numbers=nums)


def _floor_rules(s: Series, cfg: DiagnoseConfig, ctx: Context, z, floor, excess_smooth) -> list[Finding]:
    G, W, th = ctx.group_size, ctx.window, cfg.zero_std_excess
    rule = f"rolling mean (W = {W}) of frac_reward_zero_std − (r̄^G + (1 − r̄)^G) above {th:g}, at G = {G}"
    nums = {"group_size": G, "unit": s.unit, "median_excess": float(np.median(z - floor)),
            "max_excess": float(np.max(excess_smooth)), "mean_zero_std": float(np.mean(z)),
            "mean_floor": float(np.mean(floor)), "binary_rewards": ctx.binary["ok"]}
    if z.size >= 3 and np.all((z == 0) | (z == 1)):
        nums["zero_std_only_0_or_1"] = True  # one group per step, or scale_rewards="batch": said in the reading
    if ctx.binary["ok"] is False:
        return [Finding("zero_std_floor", "unknown", "Zero-std groups against the reward: not judged", rule,
                        reading=f"The floor holds for 0/1 rewards only; {ctx.binary['why']}.", numbers=nums)]
    above, below = excess_smooth > th, excess_smooth < -th
    if above.any():
        out = [Finding(
            "zero_std_floor", "info",
            f"Groups that teach nothing exceed the floor r̄^G + (1 − r̄)^G by more than {th:g} at {s.of(above)} "
            f"({nums['mean_zero_std']:.0%} of groups dead on average; median gap {nums['median_excess']:+.2f})",
            rule, s.at(above),
            reading="Dead groups beyond what the mean reward forces: the prompts' solve rates are spread out, "
                    "some near 0 (too hard) or near 1 (too easy) while the mean sits between. Every real pool is "
                    "spread; the gap says how much compute that spread costs. Chapter 15, “Groups that teach "
                    "nothing”: p^G + (1 − p)^G per prompt." + _zero_or_one(nums),
            remedy="Bigger G rescues the extremes (p = 0.05: signal 34% of the time at G = 8, 96% at G = 64); DAPO's "
                   "dynamic sampling drops all-equal groups and draws more; or change the data (see which side "
                   "below, and the Your prompts page for a pool's rates).", numbers=nums)]
    else:
        out = [Finding("zero_std_floor", "ok", f"Zero-std groups stay within {th:g} of the floor r̄^G + (1 − r̄)^G",
                       rule, reading="The dead groups are about what the mean reward forces: the prompts are of "
                                     "similar difficulty.", numbers=nums)]
    if below.any():
        out.append(Finding(
            "zero_std_below", "warn", f"frac_reward_zero_std below the floor r̄^G + (1 − r̄)^G at {s.of(below)}",
            f"rolling mean (W = {W}) of frac_reward_zero_std − (r̄^G + (1 − r̄)^G) below −{th:g}", s.at(below),
            reading=f"Impossible in expectation at G = {G} with 0/1 rewards: the run's group size is larger than "
                    f"{G}, or its rewards are not 0/1.", remedy="Set G to the run's num_generations.", numbers=nums))
    return out


def _zero_or_one(nums: dict) -> str:
    if not nums.get("zero_std_only_0_or_1"):
        return ""
    return (" frac_reward_zero_std is 0 or 1 at every step: one group per step, or scale_rewards=\"batch\", where "
            "TRL 1.16.0 derives it from the whole batch's std (then it is no share of groups and this rule does not "
            "apply).")


def _dead_split(s: Series, G: int, zs: np.ndarray, b: dict, cfg: DiagnoseConfig, W: int) -> list[Finding]:
    judged = zs >= MIN_DEAD
    wrong = judged & (b["all_wrong_lo"] > zs / 2)
    right = judged & (b["all_correct_lo"] > zs / 2)
    open_ = judged & ~wrong & ~right
    nums = {"unit": s.unit, "judged_steps": int(judged.sum()), "all_wrong_steps": int(wrong.sum()),
            "all_correct_steps": int(right.sum()), "undecided_steps": int(open_.sum()),
            **{f"{k}_median": median_of(b[k], judged) for k in b}, "max_sure_all_wrong": float(
                np.max(np.where(wrong, b["all_wrong_lo"], 0.0)))}
    how = (f"with a + b = z and each mixed group scoring between 1/G and (G − 1)/G, the reward r̄ bounds them: "
           f"r̄ − (1 − z)(G − 1)/G ≤ b ≤ r̄ − (1 − z)/G (G = {G}; rolling means; judged where z ≥ {MIN_DEAD:g})")
    tell = ("TRL logs only their total (frac_reward_zero_std). To count them exactly, log completions "
            "(log_completions=True): a completion with advantage 0 and reward 1 sits in an all-correct group.")
    severe = lasting(wrong & (b["all_wrong_lo"] >= cfg.dead_warn), W)
    out = [
        Finding("dead_all_wrong", "warn" if severe else "info" if wrong.any() else "ok",
                f"Dead groups mostly all wrong (too hard) at {s.of(wrong)}"
                + (f"; at least {nums['max_sure_all_wrong']:.0%} of all groups all wrong" if wrong.any() else ""),
                f"all-wrong share a above z/2 for sure (a warning where a ≥ {cfg.dead_warn:g} of all groups at the "
                "last step and at a quarter of the steps): "
                + how, s.at(wrong),
                reading="Too-hard prompts teach nothing: RL can only reinforce what the model already sometimes "
                        "does (Chapter 15). " + tell,
                remedy="Easier prompts or a curriculum, a stronger (SFT) start, or a bigger G, which finds the rare "
                       "success (p = 0.05: signal 34% of the time at G = 8, 96% at G = 64).", numbers=nums),
        Finding("dead_all_correct", "info" if right.any() else "ok",
                f"Dead groups mostly all correct (too easy) at {s.of(right)}",
                "all-correct share b above z/2 for sure: " + how, s.at(right),
                reading="Too-easy prompts waste compute: you paid for G generations and got no gradient. As training "
                        "succeeds more prompts move to p ≈ 1 (Chapter 15): the sign of a run that learned its pool. "
                        + tell,
                remedy="DAPO's dynamic sampling filters all-equal groups and samples more prompts to fill the batch; "
                       "drop solved prompts or add harder ones.", numbers=nums),
    ]
    if open_.any():
        u = {k: median_of(b[k], open_) for k in b}
        out.append(Finding("dead_undecided", "info",
                           f"At {steps_word(int(open_.sum()), s.unit)} the log cannot tell all-wrong from all-correct "
                           f"(there, all wrong between {u['all_wrong_lo']:.0%} and {u['all_wrong_hi']:.0%} of groups, "
                           f"all correct between {u['all_correct_lo']:.0%} and {u['all_correct_hi']:.0%}: medians of "
                           "the bounds)", how, s.at(open_), reading=tell, numbers=nums | {"undecided": u}))
    return out


def _no_signal(log: RunLog, s: Series, ctx: Context, dead: np.ndarray, when: str) -> list[Finding]:
    """no_signal_steps at the steps `dead` of s (every group all-equal), `when` saying how the log shows it."""
    r = s["reward"]
    if not dead.any():
        return []
    gn = log.metrics["grad_norm"][s.rows] if log.has("grad_norm") else None
    grads = "" if gn is None or np.isnan(gn[dead]).all() else f"; grad_norm there {np.nanmax(gn[dead]):.3g} at most"
    solved = ctx.binary["ok"] is not False and bool(np.all(r[dead] >= 1 - 1e-9))
    stuck = lasting(dead & (r < 1 - 1e-9), ctx.window)  # still there at the end, and for a quarter of the run
    nums = {"steps": int(dead.sum()), "unit": s.unit, "all_correct": solved, "lasting": stuck}
    return [Finding(
        "no_signal_steps", "warn" if stuck and not solved else "info",
        f"{steps_word(int(dead.sum()), s.unit)} where every group was all-equal"
        + (" (all correct: reward 1)" if solved else "") + grads,
        f"{when} (a warning when it holds at the last step and at a quarter of the steps and the reward is not 1 "
        "there: every group all correct)", s.at(dead),
        reading="Every advantage was zero: the reward gave no gradient at these steps (with β > 0 only the KL term "
                "moved the model). Chapter 15: a group in which every response gets the same reward teaches the "
                "model nothing." + (" Every group was solved: the batch was already learned." if solved else ""),
        remedy="" if solved else "Look at the reward there: all 0 is a pool too hard (or a broken verifier, a format "
                                 "the verifier never matches); all 1 a pool already learned.", numbers=nums)]


def per_function_rules(log: RunLog, cfg: DiagnoseConfig, ctx: Context) -> list[Finding]:
    """per_function_zero_std: with several reward functions the logged zero-std share z is the sum's. For a 0/1
    function f of mean r_f, at least r_f^G + (1 - r_f)^G of groups are all-equal on f (Jensen); groups all-equal on
    f whose sum still varies get their whole gradient from the other functions. Their share is at least
    floor_f - z; it holds where that exceeds zero_std_excess: a warning where r_f < 0.5 (f mostly failed: the
    others drive), information where f is mostly solved."""
    funcs = log.reward_funcs
    if len(funcs) < 2:
        return [missing("per_function_zero_std", "A 0/1 reward function among several", ("rewards/<f>/mean",),
                        log, "This log has fewer than two reward functions (rewards/<f>/mean).")]
    G, W, th = ctx.group_size, ctx.window, cfg.zero_std_excess
    out = []
    for f in funcs:
        mean, std, shown = f"rewards/{f}/mean", f"rewards/{f}/std", cell_text(f)  # shown: cut, escaped
        if not log.has(std):
            continue
        s = series(log, (mean, std, "frac_reward_zero_std"))
        if len(s) == 0 or binary_check(s[mean], s[std], one_batch=one_batch_per_value(log, (mean, std)),
                                       group_size=G)["ok"] is not True:
            continue
        gap = rolling_mean(jensen_floor(s[mean], G) - s["frac_reward_zero_std"], W)
        rs = rolling_mean(s[mean], W)
        hold = gap > th
        ctx.derived[f"only_others_{f}"] = s.expand(gap)
        hard = hold & (rs < 0.5)  # dead on f mostly all wrong: f gives no signal and the others drive
        nums = {"function": f, "unit": s.unit, "max_gap": float(np.max(gap)), "median_gap": float(np.median(gap)),
                "hard_steps": int(hard.sum())}
        rule = (f"rolling mean (W = {W}) of r_f^G + (1 − r_f)^G − frac_reward_zero_std above {th:g} (G = {G}), "
                "for a function f whose rewards/f/std is √(r_f(1 − r_f)) as 0/1 rewards give; a warning where f's "
                "mean is below 0.5 there (its dead groups mostly all wrong) at the last step and at a quarter of the "
                "steps")
        if not hold.any():
            out.append(Finding("per_function_zero_std", "ok",
                               f"{shown} is 0/1: its dead groups are dead for the sum too", rule, numbers=nums))
            continue
        side = ("mostly unsolved on it: the other functions drive these groups, not the task" if hard.any() else
                "mostly solved on it (learned): the other functions carry the signal, as they should")
        out.append(Finding(
            "per_function_zero_std", "warn" if lasting(hard, W) else "info",
            f"{shown} is 0/1: at least {nums['max_gap']:.0%} of groups got no signal from it, only from the other "
            f"functions, at {s.of(hold)}; {side}", rule, s.at(hold),
            reading=f"A group whose answers all score the same on {shown} (probability at least r_f^G + (1 − r_f)^G, "
                    "the chapter's p^G + (1 − p)^G at the mean) can still vary on the other functions; its advantages "
                    f"then teach only them, nothing about {shown}.",
            remedy=(f"If {shown} is the reward that matters (accuracy), easier prompts or a bigger G so that {shown} "
                    "varies within groups, weigh it up, or filter groups on its own spread (dynamic sampling on it).")
            if hard.any() else "", numbers=nums))
    return out
