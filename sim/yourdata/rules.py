"""The rules diagnose.py checks on a run's log, each a Finding: a stated rule, its threshold, the steps where it
holds, the chapter's reading and what to do.

    findings, derived, binary = run_rules(log, cfg, group_size=8, window=30)   # sim/yourdata/diagnose.py calls it

The rules read a trailing rolling mean over W steps (`window`; default a twentieth of the steps, 1 to 50), so one
noisy step neither fires nor hides a rule. "Start" and "end" are the means of the first and last W logged values.

The rules (thresholds are DiagnoseConfig fields):
  zero_std_floor   With 0/1 rewards a prompt solved with probability p gives a group of G equal answers with
                   probability p^G + (1 - p)^G, a convex function of p, so over prompts of mean rate r
                   (the logged `reward`) E[frac_reward_zero_std] >= r^G + (1 - r)^G (Jensen). The gap above that
                   floor is the spread of difficulty across prompts. Holds where the gap exceeds zero_std_excess.
  zero_std_below   The gap below -zero_std_excess: impossible in expectation at this G with 0/1 rewards, so G is
                   larger than assumed or the rewards are not 0/1.
  dead_all_wrong / dead_all_correct
                   TRL logs only z = frac_reward_zero_std. With a (all wrong) + b (all correct) = z and a mixed
                   group's mean reward in [1/G, (G-1)/G], the logged reward r bounds them:
                       r - (1 - z)(G - 1)/G  <=  b  <=  r - (1 - z)/G        (and 0 <= b <= z, a = z - b).
                   "Mostly all wrong" where the bounds put a above z/2, "mostly all correct" where they put b
                   above z/2 (only where z >= 0.05). Between, this log cannot tell.
  no_signal_steps  z = 1: every group all-equal, no reward gradient at that step.
  entropy_falling  entropy's rolling mean below (1 - entropy_drop) x its start.
  loss_zero        |loss| <= loss_zero while grad_norm > grad_zero: expected on-policy (rho = 1), where the loss's
                   value is minus the mean advantage, zero per group, and its gradient is not.
  kl_absent        no `kl` logged: TRL logs it only when beta != 0, so beta = 0.
  clip_active      a clip_ratio (or cispo_clip_ratio) above 0: the ratio pi/pi_old left 1, which needs reused
                   batches (num_iterations mu > 1, steps_per_generation > gradient_accumulation_steps) or a
                   sampler apart from the trainer (vLLM). All zero: on-policy, the clip never acts.
  length_drift     completions/mean_length's rolling mean >= (1 + length_growth) x its start while reward's
                   rolling mean stays within reward_flat of its start.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from sim.settings import setting, validate
from sim.yourdata.runlog import RunLog
from sim.yourdata.runstats import dead_group_bounds, jensen_floor, rolling_mean, start_end

MIN_DEAD = 0.05  # the split of dead groups is judged only where at least this share is dead
BINARY_RATIO = 0.9  # reward_std / sqrt(r(1 - r)) at least this (median): consistent with 0/1 rewards


@dataclass(frozen=True)
class DiagnoseConfig:
    """The rules' settings. An invalid value raises ValueError naming the field."""

    group_size: int | None = setting(None, "answers G per prompt (TRL's num_generations); none: the file's, else 8",
                                     lo=2, hi=1024, integer=True, step=1, optional=True, key="G",
                                     label="Group size G (TRL's num_generations)")
    window: int = setting(0, "steps in the rolling mean the rules read (0: a twentieth of the steps, 1 to 50)",
                          lo=0, hi=100_000, integer=True, key="W", label="Rolling window W in steps (0: automatic)")
    zero_std_excess: float = setting(0.10, "zero_std_floor: frac_reward_zero_std above the Jensen floor by more "
                                     "than this", lo=0.0, hi=1.0, step=0.01)
    entropy_drop: float = setting(0.20, "entropy_falling: entropy below its start by more than this share",
                                  lo=0.0, hi=1.0, low_open=True, step=0.05)
    loss_zero: float = setting(0.01, "loss_zero: |loss| at most this counts as 0", lo=0.0, hi=1.0)
    grad_zero: float = setting(1e-6, "loss_zero, no_signal_steps: grad_norm above this counts as non-zero", lo=0.0,
                               hi=1.0)
    length_growth: float = setting(0.20, "length_drift: mean length above its start by more than this share",
                                   lo=0.0, hi=100.0, low_open=True, step=0.05)
    reward_flat: float = setting(0.05, "length_drift: reward within this of its start counts as flat", lo=0.0,
                                 hi=1.0, step=0.01)

    def __post_init__(self) -> None:
        validate(self)


@dataclass(frozen=True)
class Finding:
    """One rule, checked: `holds` at `steps`. status: warn (holds; act), info (holds; expected or a fact about
    the run), ok (checked, does not hold), unknown (the log lacks what the rule reads)."""

    key: str
    status: str
    title: str  # one line, with the numbers
    rule: str  # the rule and its threshold, in words
    steps: tuple[int, ...] = ()  # steps where it holds
    reading: str = ""  # what it means, after the chapter
    remedy: str = ""  # what to do about it
    numbers: dict = field(default_factory=dict)

    @property
    def holds(self) -> bool:
        return self.status in ("warn", "info")


def window_for(cfg: DiagnoseConfig, T: int) -> int:
    return cfg.window if cfg.window > 0 else int(min(max(round(T / 20), 1), 50))


def run_rules(log: RunLog, cfg: DiagnoseConfig, group_size: int, window: int
              ) -> tuple[list[Finding], dict[str, np.ndarray], dict]:
    """Every rule on `log` at group size G and rolling window W: (findings, the series they derived (T,) each:
    floor, excess, bounds, rolling means; the 0/1-reward check)."""
    G, W, m = group_size, window, log.metrics
    d: dict[str, np.ndarray] = {}
    findings: list[Finding] = []
    binary = _binary(log)
    if log.has("reward") and log.has("frac_reward_zero_std"):
        r, z = m["reward"], m["frac_reward_zero_std"]
        d["floor"] = jensen_floor(r, G)
        d["excess"] = z - d["floor"]
        d["excess_smooth"] = rolling_mean(d["excess"], W)
        d["floor_smooth"] = rolling_mean(d["floor"], W)
        rs, zs = rolling_mean(r, W), rolling_mean(z, W)
        d |= dead_group_bounds(rs, zs, G)
        d["zero_std_smooth"] = zs
        findings += _zero_std_rules(log, cfg, G, W, d, binary)
    else:
        findings.append(_missing("zero_std_floor", "Groups that teach nothing against the reward",
                                 ("reward", "frac_reward_zero_std"), log))
    findings.append(_entropy_rule(log, cfg, W, d))
    findings.append(_loss_rule(log, cfg))
    findings.append(_kl_rule(log))
    findings.append(_clip_rule(log))
    findings.append(_length_rule(log, cfg, W, d))
    return findings, d, binary


def _binary(log: RunLog) -> dict:
    """Are the rewards 0/1? For 0/1 rewards TRL's reward_std (the batch's sample std) is sqrt(r(1 - r) N/(N-1));
    rewards in [0, 1] that are not 0/1 have a smaller std. Returns {"ok": bool | None, "why": str, ...}."""
    m = log.metrics
    if not log.has("reward"):
        return {"ok": None, "why": "reward is not logged"}
    r = m["reward"][~np.isnan(m["reward"])]
    if r.min() < -1e-9 or r.max() > 1 + 1e-9:
        return {"ok": False, "why": f"the mean reward leaves [0, 1] (from {r.min():.3g} to {r.max():.3g}): not "
                                    "0/1 rewards (several reward functions add up, or a scaled reward)"}
    if len(log.reward_funcs) > 1:
        return {"ok": False, "why": f"{len(log.reward_funcs)} reward functions are summed: a sum of 0/1 rewards is "
                                    "not 0/1"}
    if not log.has("reward_std"):
        return {"ok": None, "why": "reward_std is not logged, so 0/1 rewards are assumed"}
    rr, s = m["reward"], m["reward_std"]
    pick = ~np.isnan(rr) & ~np.isnan(s) & (rr > 0.02) & (rr < 0.98)
    if not pick.any():
        return {"ok": None, "why": "the reward stays near 0 or 1, so 0/1 rewards cannot be checked: assumed"}
    ratio = float(np.median(s[pick] / np.sqrt(rr[pick] * (1 - rr[pick]))))
    if ratio >= BINARY_RATIO:
        return {"ok": True, "ratio": ratio,
                "why": f"reward_std is {ratio:.2f} x sqrt(r(1 - r)) (median): as 0/1 rewards give"}
    return {"ok": False, "ratio": ratio,
            "why": f"reward_std is only {ratio:.2f} x sqrt(r(1 - r)) (median; 0/1 rewards give about 1): partial "
                   "credit"}


def _missing(key: str, title: str, needs: tuple[str, ...], log: RunLog) -> Finding:
    absent = [n for n in needs if not log.has(n)]
    return Finding(key, "unknown", f"{title}: not judged", f"needs {', '.join(needs)}",
                   reading=f"This log has no {' or '.join(absent)}.", numbers={"missing": absent})


def _at(steps: np.ndarray, mask: np.ndarray) -> tuple[int, ...]:
    return tuple(int(s) for s in steps[np.nan_to_num(mask, nan=0).astype(bool)])


def _zero_std_rules(log: RunLog, cfg: DiagnoseConfig, G: int, W: int, d: dict, binary: dict) -> list[Finding]:
    m, steps, th = log.metrics, log.steps, cfg.zero_std_excess
    z = m["frac_reward_zero_std"]
    ok = ~np.isnan(d["excess"])
    rule = (f"rolling mean (W = {W}) of frac_reward_zero_std − (r̄^G + (1 − r̄)^G) above {th:g}, at G = {G}")
    nums = {"group_size": G, "median_excess": float(np.median(d["excess"][ok])),
            "max_excess": float(np.nanmax(d["excess_smooth"])), "mean_zero_std": float(np.nanmean(z)),
            "mean_floor": float(np.nanmean(d["floor"][ok])), "binary_rewards": binary["ok"]}
    zz = z[~np.isnan(z)]
    if zz.size >= 3 and np.all((zz == 0) | (zz == 1)):
        nums["zero_std_only_0_or_1"] = True  # one group per step, or scale_rewards="batch": said in the reading
    if binary["ok"] is False:
        return [Finding("zero_std_floor", "unknown", "Zero-std groups against the reward: not judged", rule,
                        reading=f"The floor holds for 0/1 rewards only; {binary['why']}.", numbers=nums)]
    above = d["excess_smooth"] > th
    below = d["excess_smooth"] < -th
    out = []
    if above.any():
        out.append(Finding(
            "zero_std_floor", "warn",
            f"Groups that teach nothing exceed the floor r̄^G + (1 − r̄)^G by more than {th:g} at "
            f"{int(above.sum()):,} of {int(ok.sum()):,} steps ({nums['mean_zero_std']:.0%} of groups dead on "
            f"average; median gap {nums['median_excess']:+.2f})", rule, _at(steps, above),
            reading="Dead groups beyond what the mean reward forces: the prompts' solve rates are spread out, "
                    "many near 0 (too hard) or near 1 (too easy) while the mean sits between. Chapter 15, "
                    "“Groups that teach nothing”: p^G + (1 − p)^G per prompt." + _zero_or_one(nums),
            remedy="Bigger G rescues the extremes (p = 0.05: signal 34% of the time at G = 8, 96% at G = 64); DAPO's "
                   "dynamic sampling drops all-equal groups and draws more; or change the data (see which side "
                   "below, and the Your prompts page for a pool's rates).", numbers=nums))
    else:
        out.append(Finding("zero_std_floor", "ok", f"Zero-std groups stay within {th:g} of the floor r̄^G + (1 − r̄)^G",
                           rule, reading="The dead groups are about what the mean reward forces: the prompts are of "
                                         "similar difficulty.", numbers=nums))
    if below.any():
        out.append(Finding(
            "zero_std_below", "warn", "frac_reward_zero_std below the floor r̄^G + (1 − r̄)^G",
            f"rolling mean (W = {W}) of frac_reward_zero_std − (r̄^G + (1 − r̄)^G) below −{th:g}",
            _at(steps, below),
            reading=f"Impossible in expectation at G = {G} with 0/1 rewards: the run's group size is larger than "
                    f"{G}, or its rewards are not 0/1.", remedy="Set G to the run's num_generations.", numbers=nums))
    out += _dead_split(log, G, d, rule)
    dead = z >= 1 - 1e-9
    if dead.any():
        gn = m.get("grad_norm")
        grads = "" if gn is None else f"; grad_norm there {np.nanmax(np.where(dead, gn, np.nan)):.3g} at most"
        out.append(Finding(
            "no_signal_steps", "warn", f"{_steps(int(dead.sum()))} where every group was all-equal{grads}",
            "frac_reward_zero_std = 1", _at(steps, dead),
            reading="Every advantage was zero: the reward gave no gradient at these steps (with β > 0 only the KL "
                    "term moved the model). Chapter 15: a group in which every response gets the same reward "
                    "teaches the model nothing.",
            remedy="Look at the reward there: all 0 is a pool too hard (or a broken verifier, a format the "
                   "verifier never matches); all 1 a pool already learned.", numbers={"steps": int(dead.sum())}))
    return out


def _zero_or_one(nums: dict) -> str:
    if not nums.get("zero_std_only_0_or_1"):
        return ""
    return (" frac_reward_zero_std is 0 or 1 at every step: one group per step, or scale_rewards=\"batch\", where "
            "TRL 1.16.0 derives it from the whole batch's std (then it is no share of groups and this rule does not "
            "apply).")


def _dead_split(log: RunLog, G: int, d: dict, rule_floor: str) -> list[Finding]:
    steps, z = log.steps, d["zero_std_smooth"]
    judged = z >= MIN_DEAD
    wrong = judged & (d["all_wrong_lo"] > z / 2)
    right = judged & (d["all_correct_lo"] > z / 2)
    open_ = judged & ~wrong & ~right
    nums = {"judged_steps": int(judged.sum()), "all_wrong_steps": int(wrong.sum()),
            "all_correct_steps": int(right.sum()), "undecided_steps": int(open_.sum()),
            "all_wrong_lo_median": _med(d["all_wrong_lo"], judged),
            "all_wrong_hi_median": _med(d["all_wrong_hi"], judged),
            "all_correct_lo_median": _med(d["all_correct_lo"], judged),
            "all_correct_hi_median": _med(d["all_correct_hi"], judged)}
    how = (f"with a + b = z and each mixed group scoring between 1/G and (G − 1)/G, the reward r̄ bounds them: "
           f"r̄ − (1 − z)(G − 1)/G ≤ b ≤ r̄ − (1 − z)/G (G = {G}; rolling means; judged where z ≥ {MIN_DEAD:g})")
    tell = ("TRL logs only their total (frac_reward_zero_std). To count them exactly, log completions "
            "(log_completions=True): a completion with advantage 0 and reward 1 sits in an all-correct group.")
    out = [
        Finding("dead_all_wrong", "warn" if wrong.any() else "ok",
                f"Dead groups mostly all wrong (too hard) at {int(wrong.sum()):,} of {int(judged.sum()):,} steps",
                "all-wrong share a above z/2 for sure: " + how, _at(steps, wrong),
                reading="Too-hard prompts teach nothing: RL can only reinforce what the model already sometimes "
                        "does (Chapter 15). " + tell,
                remedy="Easier prompts or a curriculum, a stronger (SFT) start, or a bigger G, which finds the rare "
                       "success (p = 0.05: signal 34% of the time at G = 8, 96% at G = 64).", numbers=nums),
        Finding("dead_all_correct", "warn" if right.any() else "ok",
                f"Dead groups mostly all correct (too easy) at {int(right.sum()):,} of {int(judged.sum()):,} steps",
                "all-correct share b above z/2 for sure: " + how, _at(steps, right),
                reading="Too-easy prompts waste compute: you paid for G generations and got no gradient. As training "
                        "succeeds more prompts move to p ≈ 1 (Chapter 15). " + tell,
                remedy="DAPO's dynamic sampling filters all-equal groups and samples more prompts to fill the batch; "
                       "drop solved prompts or add harder ones.", numbers=nums),
    ]
    if open_.any():
        b = {k: _med(d[k], open_) for k in ("all_wrong_lo", "all_wrong_hi", "all_correct_lo", "all_correct_hi")}
        out.append(Finding("dead_undecided", "info",
                           f"At {_steps(int(open_.sum()))} the log cannot tell all-wrong from all-correct (there, "
                           f"all wrong between {b['all_wrong_lo']:.0%} and {b['all_wrong_hi']:.0%} of groups, all "
                           f"correct between {b['all_correct_lo']:.0%} and {b['all_correct_hi']:.0%}: medians of "
                           "the bounds)", how, _at(steps, open_), reading=tell, numbers=nums | {"undecided": b}))
    return out


def _steps(n: int) -> str:
    return "1 step" if n == 1 else f"{n:,} steps"


def _med(x: np.ndarray, mask: np.ndarray) -> float | None:
    v = x[mask & ~np.isnan(x)]
    return float(np.median(v)) if v.size else None


def _entropy_rule(log: RunLog, cfg: DiagnoseConfig, W: int, d: dict) -> Finding:
    if not log.has("entropy"):
        return _missing("entropy_falling", "Entropy falling", ("entropy",), log)
    e = log.metrics["entropy"]
    start, end = start_end(e, W)
    d["entropy_smooth"] = smooth = rolling_mean(e, W)
    th = cfg.entropy_drop
    low = smooth < (1 - th) * start
    drop = 1 - end / start if start > 0 else 0.0
    nums = {"start": start, "end": end, "drop": drop, "first_step": int(log.steps[low][0]) if low.any() else None}
    rule = f"rolling mean (W = {W}) of entropy below {1 - th:.0%} of its start ({start:.3g})"
    if not low.any():
        return Finding("entropy_falling", "ok", f"Entropy holds: {start:.3g} → {end:.3g} ({-drop:+.0%})", rule,
                       numbers=nums)
    return Finding(
        "entropy_falling", "warn", f"Entropy falls {drop:.0%}: {start:.3g} → {end:.3g}, below {1 - th:.0%} of its "
        f"start from step {nums['first_step']}", rule, _at(log.steps, low),
        reading="The policy grows more certain: it sharpens onto answers it already finds. That raises pass@1 and "
                "can narrow coverage (the pass@k debate: RL-trained models win at small k, base models often at "
                "large k). Chapter 15: watch pass@k at large k and the policy's entropy, not just pass@1.",
        remedy="Evaluate pass@k at large k (k = 64) before and after on held-out prompts; if it falls, keep entropy "
               "up (a KL leash, clip-higher ε_high = 0.28, an entropy bonus, a higher temperature).", numbers=nums)


def _loss_rule(log: RunLog, cfg: DiagnoseConfig) -> Finding:
    if not (log.has("loss") and log.has("grad_norm")):
        return _missing("loss_zero", "Loss near 0 with a gradient", ("loss", "grad_norm"), log)
    loss, gn = log.metrics["loss"], log.metrics["grad_norm"]
    hold = (np.abs(loss) <= cfg.loss_zero) & (gn > cfg.grad_zero)
    both = ~np.isnan(loss) & ~np.isnan(gn)
    share = float(hold.sum() / max(both.sum(), 1))
    nums = {"steps": int(hold.sum()), "share": share, "median_abs_loss": float(np.nanmedian(np.abs(loss))),
            "median_grad_norm": float(np.nanmedian(gn))}
    rule = f"|loss| ≤ {cfg.loss_zero:g} while grad_norm > {cfg.grad_zero:g}"
    if not hold.any():
        return Finding("loss_zero", "ok", f"The loss is not near 0 (median |loss| {nums['median_abs_loss']:.3g})",
                       rule, numbers=nums)
    return Finding(
        "loss_zero", "info", f"Loss near 0 at {share:.0%} of steps while the gradient is not (median grad_norm "
        f"{nums['median_grad_norm']:.3g}): expected", rule, _at(log.steps, hold),
        reading="On-policy (one gradient step per batch, ρ = 1) the policy loss's value is minus the mean "
                "advantage, and group advantages sum to zero, so the value is about 0 while its gradient is not "
                "(the One group page: loss 0 beside a non-zero gradient). TRL's loss_type dapo weighs answers by "
                "length, so its value drifts a little off 0.",
        remedy="Nothing to fix: read progress from reward and grad_norm, never from the loss value.", numbers=nums)


def _kl_rule(log: RunLog) -> Finding:
    beta = log.settings.get("beta")
    if not log.has("kl"):
        said = "" if beta is None else f" (the file's config says β = {beta:g})"
        status = "warn" if beta not in (None, 0, 0.0) else "info"
        return Finding(
            "kl_absent", status, "No kl logged: β = 0, no KL leash" + said, "the kl metric is absent",
            reading="TRL's GRPOTrainer logs kl only when beta ≠ 0, and β = 0 is its default: the loss holds no "
                    "pull toward the reference model, and only the policy is loaded. Many 2025 recipes drop the KL "
                    "term; with a verifiable reward the leash matters less (Chapter 15).",
            remedy="Nothing to fix; with β = 0 watch entropy and pass@k at large k for over-sharpening."
                   + (" (A CSV export may leave metrics out: this holds if kl would have been exported.)"
                      if log.source == "CSV" else ""),
            numbers={"beta_from_file": beta})
    kl = log.metrics["kl"]
    start, end = start_end(kl, 1)
    return Finding("kl_absent", "ok", f"kl logged: β > 0; KL to the reference {start:.3g} → {end:.3g} "
                   f"(max {np.nanmax(kl):.3g})", "the kl metric is absent", reading="TRL logs kl (the k3 estimate per "
                   "token, mean over tokens) only when beta ≠ 0: this run keeps a KL leash to the reference.",
                   numbers={"start": start, "end": end, "max": float(np.nanmax(kl)), "beta_from_file": beta})


CLIP_METRICS = ("clip_ratio/region_mean", "clip_ratio/low_mean", "clip_ratio/high_mean", "cispo_clip_ratio")


def _clip_rule(log: RunLog) -> Finding:
    present = [c for c in CLIP_METRICS if log.has(c)]
    mu = log.settings.get("mu")
    if not present:
        return _missing("clip_active", "Clipping", ("clip_ratio/region_mean",), log)
    name = present[0]
    c = log.metrics[name]
    on = c > 0
    nums = {"metric": name, "max": float(np.nanmax(c)), "mean": float(np.nanmean(c)), "steps": int(on.sum()),
            "mu_from_file": mu}
    rule = f"{name} > 0"
    if not on.any():
        said = "" if mu is None else f" (the file's config: μ = {mu})"
        return Finding(
            "clip_active", "info", f"{name} is 0 at every step: on-policy, the clip never acts" + said, rule,
            reading="With a single gradient step per batch ρ ≡ 1 and the clip never activates (Chapter 15): TRL's "
                    "default num_iterations = 1. GRPO's policy term is then exactly REINFORCE with a group baseline."
                    + (" With μ > 1 it means no token's ratio left [1 − ε, 1 + ε]." if mu not in (None, 1) else ""),
            numbers=nums)
    why = ("the batches are reused (num_iterations μ > 1, or steps_per_generation > gradient_accumulation_steps), "
           "or the samples come from another engine than the trainer (vLLM)")
    if mu == 1:
        why = ("the file's config says μ = 1, so it is steps_per_generation > gradient_accumulation_steps or a "
               "separate sampler (vLLM)")
    return Finding(
        "clip_active", "info", f"The clip acts at {int(on.sum()):,} steps ({name} up to {nums['max']:.2%})", rule,
        _at(log.steps, on),
        reading=f"The ratio ρ = π/π_old left 1: {why}. Chapter 15: once a positive-advantage token's ratio passes "
                "1 + ε its gradient is zero.",
        remedy=("A share over a few percent silences many tokens: a smaller learning rate or fewer reuses, or "
                "clip-higher (DAPO's ε_high = 0.28) to keep pushing the answers whose ratio rose.")
        if nums["max"] > 0.05 else "", numbers=nums)


def _length_rule(log: RunLog, cfg: DiagnoseConfig, W: int, d: dict) -> Finding:
    name = "completions/mean_length"
    if not (log.has(name) and log.has("reward")):
        return _missing("length_drift", "Completion length drifting up", (name, "reward"), log)
    L, r = log.metrics[name], log.metrics["reward"]
    l0, l1 = start_end(L, W)
    r0, r1 = start_end(r, W)
    d["length_smooth"], d["reward_smooth"] = Ls, rs = rolling_mean(L, W), rolling_mean(r, W)
    hold = (Ls >= (1 + cfg.length_growth) * l0) & (np.abs(rs - r0) <= cfg.reward_flat) & (l0 > 0)
    nums = {"length_start": l0, "length_end": l1, "growth": l1 / l0 - 1 if l0 > 0 else None, "reward_start": r0,
            "reward_end": r1}
    rule = (f"rolling mean (W = {W}) of completions/mean_length ≥ {1 + cfg.length_growth:.2f} × its start "
            f"({l0:.4g}) while reward's stays within ±{cfg.reward_flat:g} of its start ({r0:.3f})")
    if not hold.any():
        grew = l1 > (1 + cfg.length_growth) * l0
        note = (" Lengths grew with the reward: R1-Zero's responses grew as it learned to use test-time compute."
                if grew else "")
        return Finding("length_drift", "ok", f"No length drift at a flat reward: length {l0:.4g} → {l1:.4g}, reward "
                       f"{r0:.3f} → {r1:.3f}", rule, reading=note.strip(), numbers=nums)
    return Finding(
        "length_drift", "warn", f"Completions grow while the reward is flat: length {l0:.4g} → {l1:.4g}, reward "
        f"{r0:.3f} → {r1:.3f}", rule, _at(log.steps, hold),
        reading="Chapter 15: dividing by |y| pushes a long wrong answer down less per token (−0.063 against "
                "−0.083 in the worked example); Liu et al. (2025) argue this lets wrong answers drift longer. "
                "Chapter 16 dissects the length bias.",
        remedy="A loss without per-response length normalisation (TRL's loss_type dr_grpo or dapo), and watch "
               "completions/clipped_ratio: answers cut at max_completion_length.", numbers=nums)
