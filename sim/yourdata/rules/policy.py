"""The policy's side of a log: entropy, the loss's value, the KL leash and the clip (Chapter 15's readings)."""

from __future__ import annotations

import numpy as np

from sim.yourdata.rules.base import Context, DiagnoseConfig, Finding, lasting, missing, series
from sim.yourdata.rules.ceiling import RULE as CEILING_RULE
from sim.yourdata.rules.ceiling import ceiling
from sim.yourdata.runlog import SUMMARY, RunLog
from sim.yourdata.runstats import rolling_mean, segments, start_end

CLIP_METRICS = ("clip_ratio/region_mean", "clip_ratio/low_mean", "clip_ratio/high_mean", "cispo_clip_ratio")


def entropy_rule(log: RunLog, cfg: DiagnoseConfig, ctx: Context) -> Finding:
    """entropy_falling: entropy's rolling mean below (1 - entropy_drop) x its start. A warning when it is still
    below at the end and the reward ends no more than reward_flat above its start (collapse without gain); with a
    reward that rose, a dip that came back, or a reward at its ceiling (rules/ceiling.py: it cannot rise),
    information (sharpening: watch pass@k at large k)."""
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
            f"above its first than the run's noise allows (2 standard errors, at least {cfg.reward_flat:g}); "
            f"the reward {CEILING_RULE}")
    if not low.any():
        return Finding("entropy_falling", "ok", f"Entropy holds: {start:.3g} → {end:.3g} ({-drop:+.0%})", rule,
                       numbers=nums)
    gain, tol = _reward_gain(log, W, cfg)
    below = bool(end < (1 - th) * start)  # still below at the end: a dip that came back is no collapse
    # low for a quarter of the steps so far: a reward lags the entropy (a healthy run sharpens, then gains), so a
    # fall younger than that is too soon to call collapse (the TRL runs of docs/scaling.md, read while training)
    lasting = bool(low.sum() >= max(W, len(low) / 4))
    nums |= {"reward_gain": gain, "below_at_end": below, "lasting": lasting}
    flat = gain is not None and gain <= tol
    top = ceiling(log, ctx) if below and lasting and flat else {"at": False}
    nums["ceiling"] = top
    status = "warn" if below and lasting and flat and not top["at"] else "info"
    young = f" for {int(low.sum())} {s.unit}: too soon to tell from the reward"
    rose = "" if gain is None else (" while the reward did not rise" if status == "warn" else
                                    f" while the reward sat at its ceiling ({top['said']})" if top["at"] else
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
                   " Here the reward sits at its ceiling, where it cannot rise: the policy sharpens onto answers it "
                   "already finds, which is not a stall. Chapter 15: “RLVR mostly sharpens (it raises the "
                   "probability of good solutions the model can already find), and it can narrow coverage as "
                   "entropy falls.”" if top["at"] else
                   " Falling entropy with a rising reward is what a run that learns looks like (the chapter's lab: "
                   "“your entropy curve falls steadily”)." if gain is not None else
                   " This log has no reward to tell collapse from learning."),
        remedy="Evaluate pass@k at large k (k = 64) before and after on held-out prompts; if it falls, keep entropy "
               "up (a KL leash, clip-higher ε_high = 0.28, an entropy bonus, a higher temperature).", numbers=nums)


def _reward_gain(log: RunLog, W: int, cfg: DiagnoseConfig) -> tuple[float | None, float]:
    """(the reward's end less its start, the change that counts): means of its last and first quarter of logged
    values (W at least), and trends.change_tolerance over that many values (the run's own noise: a gain within it
    is no gain); (None, reward_flat) without a reward."""
    if not log.has("reward"):
        return None, cfg.reward_flat
    from sim.yourdata.rules.trends import change_tolerance
    from sim.yourdata.runstats import step_noise

    r = series(log, ("reward",))["reward"]
    q = max(W, len(r) // 4)
    r0, r1 = start_end(r, q)
    return r1 - r0, change_tolerance(step_noise(r), max(q, 1), cfg, errors=2.0)


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
    key = log.key("kl")
    nums = {"start": start, "end": end, "max": float(np.max(kl)), "beta_from_file": beta}
    if not np.any(kl) or beta == 0:
        said = f"{key} is 0 at every step" if not np.any(kl) else f"the file's config says β = {beta:g}"
        return Finding("kl_absent", "info", f"{said}: no KL leash in effect", f"{key} logged as 0 at every step, or "
                       "β = 0", reading="A KL term that is 0 at every step pulls nothing toward the reference: "
                       "verl logs actor/kl_loss 0 when kl_loss_coef is 0; with β = 0 TRL does not log kl at all.",
                       remedy="Nothing to fix if meant; with no leash watch entropy and pass@k at large k.",
                       numbers=nums)
    return Finding("kl_absent", "ok", f"{key} logged: a KL leash; KL to the reference {start:.3g} → {end:.3g} "
                   f"(max {np.max(kl):.3g})", "the kl metric is absent, or 0 at every step", reading="TRL logs kl "
                   "(the k3 estimate per token, mean over tokens) only when beta ≠ 0, verl its actor/kl_loss with "
                   "use_kl_loss: this run keeps a KL leash to the reference.", numbers=nums)


def kl_start_rule(log: RunLog, cfg: DiagnoseConfig, ctx: Context) -> Finding:
    """kl_high_start: the mean of kl's first q logged values (q = max(3, n // 8)) above kl_start, and its rolling
    mean still above it at a quarter of the steps: the policy did not start at the reference."""
    if not log.has("kl"):
        return missing("kl_high_start", "KL high from the start", ("kl",), log)
    s = series(log, ("kl",))
    kl = s["kl"]
    q = segments(kl)[0]
    first = float(np.mean(kl[:q]))
    high = rolling_mean(kl, ctx.window) > cfg.kl_start
    key = log.key("kl")
    nums = {"start": first, "q": q, "unit": s.unit, "share_high": float(high.mean())}
    rule = (f"the mean of {key}'s first {q} logged values above {cfg.kl_start:g} per token, and its rolling mean "
            f"(W = {ctx.window}) above it at a quarter of the steps")
    if len(kl) < 3 or not (first > cfg.kl_start and high.sum() >= max(ctx.window, 0.25 * len(kl))):
        return Finding("kl_high_start", "ok", f"{key} starts near 0 ({first:.3g} over the first {q} values)", rule,
                       numbers=nums)
    return Finding(
        "kl_high_start", "warn", f"{key} is {first:.3g} per token from the start (first {q} values) and stays high "
        f"at {s.of(high)}", rule, s.at(high),
        reading="At step 1 the policy is the reference, so the KL to it is 0 and grows from there. A KL this "
                "high from the start means the reference is not the starting policy: another checkpoint, an "
                "adapter applied to one and not the other, a different chat template or dtype, or logits from "
                "another engine. The leash then pulls toward a model you did not start from.",
        remedy="Load the reference from the same checkpoint (and adapter) as the policy; check that step 1's kl "
               "is about 0.", numbers=nums)


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
    rule = f"{log.key(name)} > 0"
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
    high = rolling_mean(c, ctx.window) > cfg.clip_high
    key = log.key(name)
    if lasting(high, ctx.window):
        nums["high_steps"] = int(high.sum())
        return Finding(
            "clip_high", "warn", f"{key} stays above {cfg.clip_high:.0%}: up to {nums['max']:.0%} of tokens clipped, "
            f"{nums['mean']:.0%} on average, high at {s.of(high)}", f"rolling mean (W = {ctx.window}) of {key} above "
            f"{cfg.clip_high:g} at the last step and at a quarter of the steps", s.at(high),
            reading=f"The ratio ρ = π/π_old left [1 − ε, 1 + ε] for that share of tokens: {why}. A clipped token's "
                    "gradient is zero (Chapter 15), so most of each batch teaches nothing, and a share this high "
                    "says each update moves the policy far from the one that sampled.",
            remedy="Fewer updates per batch (μ, ppo_epochs, mini-batches), a smaller learning rate, or an engine "
                   "whose sampling matches the trainer's (vLLM's logprobs against the trainer's).", numbers=nums)
    return Finding(
        "clip_active", "info", f"The clip acts at {s.of(on)} ({key} up to {nums['max']:.2%})", rule, s.at(on),
        reading=f"The ratio ρ = π/π_old left 1: {why}. Chapter 15: once a positive-advantage token's ratio passes "
                "1 + ε its gradient is zero.",
        remedy=("A share over a few percent silences many tokens: a smaller learning rate or fewer reuses, or "
                "clip-higher (DAPO's ε_high = 0.28) to keep pushing the answers whose ratio rose.")
        if nums["max"] > 0.05 else "", numbers=nums)


def entropy_start_rule(log: RunLog, cfg: DiagnoseConfig, ctx: Context) -> Finding:
    """entropy_low_start: the mean of entropy's first q logged values below entropy_low, and its rolling mean still
    below at a quarter of the steps: the policy had little left to explore from the start."""
    if not log.has("entropy"):
        return missing("entropy_low_start", "Entropy low from the start", ("entropy",), log)
    s = series(log, ("entropy",))
    e = s["entropy"]
    q = segments(e)[0]
    first = float(np.mean(e[:q]))
    low = rolling_mean(e, ctx.window) < cfg.entropy_low
    key = log.key("entropy")
    nums = {"start": first, "q": q, "unit": s.unit}
    rule = (f"the mean of {key}'s first {q} logged values below {cfg.entropy_low:g} nats per token, and its rolling "
            f"mean (W = {ctx.window}) below it at a quarter of the steps")
    if len(e) < 3 or not (first < cfg.entropy_low and low.sum() >= max(ctx.window, 0.25 * len(e))):
        return Finding("entropy_low_start", "ok", f"{key} starts at {first:.3g} nats per token", rule, numbers=nums)
    return Finding(
        "entropy_low_start", "warn", f"{key} is {first:.3g} nats per token from the start and stays low at "
        f"{s.of(low)}", rule, s.at(low),
        reading="A policy this certain samples nearly the same answer G times, so its groups are all-equal and teach "
                "nothing, and RL can only reinforce what the model already sometimes does (Chapter 15): little to "
                "explore from the first step.",
        remedy="Sample at a higher temperature (1.0), start from a less sharpened checkpoint, or raise G.",
        numbers=nums)
