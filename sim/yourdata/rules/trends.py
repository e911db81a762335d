"""The reward over the whole run: a collapse (it reached a level and gave it back) and no learning (it never moved),
judged against the run's own noise so that a noisy log is neither called flat nor called collapsed by chance.

With n logged rewards and q = max(3, n // 8): start and end are the means of the first and last q values, best the
highest mean of q in a row; sigma is the noise of one value (runstats.step_noise), so a difference of two q-means
has the standard error sigma * sqrt(2 / q). A change counts when it passes max(3 standard errors, reward_flat).
"""

from __future__ import annotations

import numpy as np

from sim.yourdata.rules.base import Context, DiagnoseConfig, Finding, missing, series
from sim.yourdata.rules.ceiling import RULE as CEILING_RULE
from sim.yourdata.rules.ceiling import ceiling
from sim.yourdata.runlog import RunLog
from sim.yourdata.runstats import segments, step_noise


def change_tolerance(sigma: float, q: int, cfg: DiagnoseConfig, errors: float = 3.0) -> float:
    """How far two means of q logged rewards must differ to count as a change: `errors` standard errors of their
    difference (sigma sqrt(2 / q)), and at least reward_flat."""
    return float(max(errors * sigma * np.sqrt(2 / q), cfg.reward_flat))


def trend_rules(log: RunLog, cfg: DiagnoseConfig, ctx: Context) -> list[Finding]:
    """reward_collapse and no_learning."""
    if not log.has("reward"):
        return [missing("reward_collapse", "Reward collapse", ("reward",), log),
                missing("no_learning", "No learning", ("reward",), log)]
    s = series(log, ("reward",))
    r = s["reward"]
    n = len(r)
    if n < cfg.min_trend:
        why = f"{n} logged rewards; a trend needs {cfg.min_trend} (--min-trend): too short to judge."
        return [missing("reward_collapse", "Reward collapse", ("reward",), log, why),
                missing("no_learning", "No learning", ("reward",), log, why)]
    q, smooth = segments(r)  # smooth[i]: the mean of the q values up to i (from i = q - 1)
    start, end = float(np.mean(r[:q])), float(np.mean(r[-q:]))
    best_i = int(np.argmax(smooth[q - 1:])) + q - 1
    best = float(smooth[best_i])
    sigma = step_noise(r)
    tol = change_tolerance(sigma, q, cfg)
    nums = {"start": start, "end": end, "best": best, "best_step": int(s.steps[best_i]), "noise": sigma, "q": q,
            "tolerance": tol, "flat": cfg.reward_flat, "unit": s.unit, "values": n}
    how = (f"means of q = {q} logged rewards: the first, the last and the best in a row; a change counts past "
           f"{tol:.3g} = max(3 standard errors of the run's noise, {cfg.reward_flat:g})")
    return [_collapse(s, nums, how, best_i), _flat(nums, how, ceiling(log, ctx))]


def _collapse(s, nums: dict, how: str, best_i: int) -> Finding:
    start, end, best, tol = nums["start"], nums["end"], nums["best"], nums["tolerance"]
    gave = best - end
    span = best - min(start, end)
    rule = ("the reward rose above its start by more than the tolerance, or ends below its start by more; its end is "
            "below its best by more than the tolerance and by at least half of its range (best less the lower of "
            "start and end), and stays there to the end (information past 2 standard errors); " + how)
    maybe = max(2 * nums["noise"] * np.sqrt(2 / nums["q"]), nums["flat"])  # 2 standard errors: suggestive only
    rose, fell = best - start > tol, end < start - tol  # it reached a level it then lost, or ended below its start
    if not (gave > maybe and span > 0 and gave >= 0.5 * span and (rose or fell)):
        return Finding("reward_collapse", "ok", f"No collapse: the reward ends at {end:.3g}, its best {best:.3g}",
                       rule, numbers=nums)
    since = s.steps[best_i:]
    sure = gave > tol
    return Finding(
        "reward_collapse", "warn" if sure else "info",
        f"Reward collapse: {start:.3g} at the start, {best:.3g} at its best (to step {nums['best_step']}), "
        f"{end:.3g} at the end: it gave back {gave:.3g}" + ("" if sure else f", within 3 standard errors of this "
                                                            f"noisy run (±{nums['noise']:.2g} a step): maybe"),
        rule, tuple(int(x) for x in since),
        reading="The policy reached a level and lost it, and the last steps have not recovered: a policy that "
                "drifted into degenerate answers (entropy exploding, answers running to the cap or shrinking to "
                "nothing, every group all wrong), an update too large for the clip to contain, or a reward the "
                "policy learned to exploit and then broke. Chapter 15: the clip bounds the ratio, not the step.",
        remedy=f"Keep the checkpoint from near step {nums['best_step']}; look at completions after it; lower the "
               "learning rate, keep a KL leash (β > 0) or fewer updates per batch (μ).", numbers=nums)


def _flat(nums: dict, how: str, top: dict) -> Finding:
    start, end, best, tol = nums["start"], nums["end"], nums["best"], nums["tolerance"]
    near = max(2 * nums["noise"] * np.sqrt(2 / nums["q"]), nums["flat"])  # an end within 2 standard errors
    rule = (f"the reward's end within {near:.3g} = max(2 standard errors, {nums['flat']:g}) of its start, and its best "
            f"no further above it than the tolerance; {how}; {CEILING_RULE}")
    if abs(end - start) > near or best - start > tol:
        return Finding("no_learning", "ok", f"The reward moves: {start:.3g} → {end:.3g} over {nums['values']:,} "
                       f"{nums['unit']}", rule, numbers=nums)
    said = (f"The reward stays at {start:.3g} → {end:.3g} over {nums['values']:,} {nums['unit']} "
            f"(noise ±{nums['noise']:.2g} a step)")
    if top["at"]:
        return Finding(
            "no_learning", "info", f"{said}: at its ceiling, the pool is already solved ({top['said']})", rule,
            numbers=nums | {"ceiling": top},
            reading="Not a stall: the run sits at its ceiling. Most groups are all correct and teach nothing, and "
                    "the reward cannot rise on prompts already solved every time. Chapter 15: “Too-easy prompts "
                    "waste compute. As training succeeds, more prompts move toward p ≈ 1 and more groups come back "
                    "all-correct. You paid for G generations and got no gradient”; “Problems too easy are dead "
                    "weight forever.”",
            remedy="Nothing is broken. To learn more, harder prompts would: drop the prompts solved every time or "
                   "add harder ones (the Your prompts page shows a pool's dead share at each G); DAPO's dynamic "
                   "sampling refills each batch with groups that teach.")
    return Finding(
        "no_learning", "warn", said + ": no learning", rule,
        reading="Over a run long enough to see a trend the reward did not move beyond its own noise. GRPO learns "
                "only from groups whose answers differ; if few do (too hard, too easy, a verifier that never "
                "matches), or the step is too small, nothing moves.",
        remedy="Check the groups that teach nothing (frac_reward_zero_std) and a few completions against the "
               "verifier; a larger learning rate, a bigger G, or a pool of middle difficulty (the Your prompts "
               "page).", numbers=nums | {"ceiling": top})
