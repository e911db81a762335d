"""The policy's side of a log: entropy, the loss's value, the KL leash and the clip (Chapter 15's readings)."""

from __future__ import annotations

import numpy as np

from sim.yourdata.rules.base import Context, DiagnoseConfig, Finding, missing, series
from sim.yourdata.runlog import SUMMARY, RunLog
from sim.yourdata.runstats import rolling_mean, start_end

CLIP_METRICS = ("clip_ratio/region_mean", "clip_ratio/low_mean", "clip_ratio/high_mean", "cispo_clip_ratio")


def entropy_rule(log: RunLog, cfg: DiagnoseConfig, ctx: Context) -> Finding:
    """entropy_falling: entropy's rolling mean below (1 - entropy_drop) x its start. A warning when it is still
    below at the end and the reward ends no more than reward_flat above its start (collapse without gain); with a
    reward that rose, or a dip that came back, information (sharpening: watch pass@k at large k)."""
    if not log.has("entropy"):
        return missing("entropy_falling", "Entropy falling", ("entropy",), log)
    s = series(log, ("entropy",))
    W, th = ctx.window, cfg.entropy_drop
    start, end = start_end(s["entropy"], W)
    smooth = rolling_mean(s["entropy"], W)
    ctx.derived["entropy_smooth"] = s.expand(smooth)
    low = smooth < (1 - th) * start
    drop = 1 - end / start if start > 0 else 0.0
    nums = {"start": start, "end": end, "drop": drop, "unit": s.unit,
            "first_step": int(s.steps[low][0]) if low.any() else None}
    rule = (f"rolling mean (W = {W}) of entropy below {1 - th:.0%} of its start ({start:.3g}); a warning when it is "
            f"still below at the end, has been for a quarter of the steps, and the reward's last quarter is no more "
            f"than {cfg.reward_flat:g} above its first")
    if not low.any():
        return Finding("entropy_falling", "ok", f"Entropy holds: {start:.3g} → {end:.3g} ({-drop:+.0%})", rule,
                       numbers=nums)
    gain = _reward_gain(log, W)
    below = bool(end < (1 - th) * start)  # still below at the end: a dip that came back is no collapse
    # low for a quarter of the steps so far: a reward lags the entropy (a healthy run sharpens, then gains), so a
    # fall younger than that is too soon to call collapse (the TRL runs of docs/scaling.md, read while training)
    lasting = bool(low.sum() >= max(W, len(low) / 4))
    nums |= {"reward_gain": gain, "below_at_end": below, "lasting": lasting}
    flat = gain is not None and gain <= cfg.reward_flat
    status = "warn" if below and lasting and flat else "info"
    young = f" for {int(low.sum())} {s.unit}: too soon to tell from the reward"
    rose = "" if gain is None else (" while the reward did not rise" if status == "warn" else
                                    " as the reward rose" if not flat else young if below else "")
    said = (f"Entropy falls {drop:.0%}: {start:.3g} → {end:.3g}, below {1 - th:.0%} of its start from step "
            f"{nums['first_step']}{rose}" if below else
            f"Entropy dipped below {1 - th:.0%} of its start ({start:.3g}) from step {nums['first_step']} and ends "
            f"at {end:.3g} ({-drop:+.0%}){rose}")
    return Finding(
        "entropy_falling", status, said, rule, s.at(low),
        reading="The policy grows more certain: it sharpens onto answers it already finds. That raises pass@1 and "
                "can narrow coverage (the pass@k debate: RL-trained models win at small k, base models often at "
                "large k). Chapter 15: watch pass@k at large k and the policy's entropy, not just pass@1."
                + (" Here the reward ends where it started: collapse without gain." if status == "warn" else
                   " Falling entropy with a rising reward is what a run that learns looks like (the chapter's lab: "
                   "“your entropy curve falls steadily”)." if gain is not None else
                   " This log has no reward to tell collapse from learning."),
        remedy="Evaluate pass@k at large k (k = 64) before and after on held-out prompts; if it falls, keep entropy "
               "up (a KL leash, clip-higher ε_high = 0.28, an entropy bonus, a higher temperature).", numbers=nums)


def _reward_gain(log: RunLog, W: int) -> float | None:
    """The reward's end less its start: means of its last and first quarter of logged values (W at least; a
    mean of a few steps' rewards moves by more than reward_flat with the sampling alone); None without a reward."""
    if not log.has("reward"):
        return None
    r = series(log, ("reward",))["reward"]
    r0, r1 = start_end(r, max(W, len(r) // 4))
    return r1 - r0


def loss_rule(log: RunLog, cfg: DiagnoseConfig, ctx: Context) -> Finding:
    """loss_zero: |loss| <= loss_zero while grad_norm > grad_zero (information: expected on-policy)."""
    need = ("loss", "grad_norm")
    s = series(log, need)
    if len(s) == 0:
        return missing("loss_zero", "Loss near 0 with a gradient", need, log)
    loss, gn = s["loss"], s["grad_norm"]
    hold = (np.abs(loss) <= cfg.loss_zero) & (gn > cfg.grad_zero)
    share = float(hold.mean())
    nums = {"steps": int(hold.sum()), "share": share, "unit": s.unit, "median_abs_loss": float(np.median(np.abs(loss))),
            "median_grad_norm": float(np.median(gn))}
    rule = f"|loss| ≤ {cfg.loss_zero:g} while grad_norm > {cfg.grad_zero:g}"
    if not hold.any():
        return Finding("loss_zero", "ok", f"The loss is not near 0 (median |loss| {nums['median_abs_loss']:.3g})",
                       rule, numbers=nums)
    return Finding(
        "loss_zero", "info", f"Loss near 0 at {share:.0%} of {s.unit} while the gradient is not (median grad_norm "
        f"{nums['median_grad_norm']:.3g}): expected", rule, s.at(hold),
        reading="On-policy (one gradient step per batch, ρ = 1) the policy loss's value is minus the mean "
                "advantage, and group advantages sum to zero, so the value is about 0 while its gradient is not "
                "(the One group page: loss 0 beside a non-zero gradient). TRL's loss_type dapo weighs answers by "
                "length, so its value drifts a little off 0.",
        remedy="Nothing to fix: read progress from reward and grad_norm, never from the loss value.", numbers=nums)


def kl_rule(log: RunLog, cfg: DiagnoseConfig, ctx: Context) -> Finding:
    """kl_absent: no kl logged means beta = 0 (information; a warning when the file's config says beta > 0)."""
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
    kl = series(log, ("kl",))["kl"]
    start, end = start_end(kl, 1)
    return Finding("kl_absent", "ok", f"kl logged: β > 0; KL to the reference {start:.3g} → {end:.3g} "
                   f"(max {np.max(kl):.3g})", "the kl metric is absent", reading="TRL logs kl (the k3 estimate per "
                   "token, mean over tokens) only when beta ≠ 0: this run keeps a KL leash to the reference.",
                   numbers={"start": start, "end": end, "max": float(np.max(kl)), "beta_from_file": beta})


def clip_rule(log: RunLog, cfg: DiagnoseConfig, ctx: Context) -> Finding:
    """clip_active: a clip_ratio above 0 (information: batches reused or a separate sampler)."""
    present = [c for c in CLIP_METRICS if log.has(c)]
    mu = log.settings.get("mu")
    if not present:
        return missing("clip_active", "Clipping", ("clip_ratio/region_mean",), log)
    name = present[0]
    s = series(log, (name,))
    c = s[name]
    on = c > 0
    nums = {"metric": name, "max": float(np.max(c)), "mean": float(np.mean(c)), "steps": int(on.sum()),
            "unit": s.unit, "mu_from_file": mu}
    rule = f"{name} > 0"
    if not on.any() and log.source == SUMMARY and mu not in (None, 1) and log.logged(["reward"]).all():
        return missing("clip_active", "Clipping", (name,), log,
                       f"This summary keeps only the steps that generated a batch (older summaries did), where ρ = 1; "
                       f"with μ = {mu} the clip "
                       "acts on the steps after them, which it leaves out. Read the run's trainer_state.json.")
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
        "clip_active", "info", f"The clip acts at {s.of(on)} ({name} up to {nums['max']:.2%})", rule, s.at(on),
        reading=f"The ratio ρ = π/π_old left 1: {why}. Chapter 15: once a positive-advantage token's ratio passes "
                "1 + ε its gradient is zero.",
        remedy=("A share over a few percent silences many tokens: a smaller learning rate or fewer reuses, or "
                "clip-higher (DAPO's ε_high = 0.28) to keep pushing the answers whose ratio rose.")
        if nums["max"] > 0.05 else "", numbers=nums)
