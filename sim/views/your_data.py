"""The words of the Your run and Your prompts pages: each chart's reading (after Chapter 15) and a caption that
says what the chart shows for the data on screen, with its numbers. The numbers come from sim/diagnose.py and
sim/plan.py; nothing here is user text (a page shows that as plain text itself)."""

from __future__ import annotations

import dataclasses

import numpy as np

from sim.diagnose import Diagnosis, start_end, step_ranges
from sim.player.spec import Chart
from sim.toy import ToyConfig, ToyHistory
from sim.views.training import training_charts

# key -> (title, y axis, the chapter's reading). The charts of a run, in the order the page draws them.
RUN_CHARTS = {
    "reward": ("Reward", "mean reward per answer",
               "With a 0/1 verifier the mean reward is the batch's accuracy (pass@1 on the prompts drawn). It should "
               "rise; on a fixed pool it saturates as prompts move to p ≈ 1."),
    "reward_std": ("Reward spread (reward_std)", "std over the batch",
                   "TRL's reward_std is the std over the whole batch, not per group. For 0/1 rewards it is "
                   "√(r̄(1 − r̄)) (dashed); well below it the rewards are not 0/1 (partial credit, several "
                   "functions), and the zero-std rules below do not apply."),
    "zero_std": ("Groups that teach nothing (frac_reward_zero_std)", "share of groups",
                 "A group whose G answers all get the same reward has zero advantages and gives no gradient. Dashed: "
                 "the floor r̄^G + (1 − r̄)^G, the least it can be in expectation at this mean reward (Jensen on "
                 "the chapter's p^G + (1 − p)^G); the gap above it is the spread of difficulty across prompts."),
    "dead_split": ("Dead groups: all wrong or all correct?", "share of groups",
                   "TRL logs only their total. A mixed group scores between 1/G and (G − 1)/G, so the reward pins "
                   "each share inside its band: red all wrong (too hard), green all correct (too easy)."),
    "entropy": ("Entropy", "nats per token",
                "Falling entropy is sharpening: pass@1 rises while coverage, pass@k at large k, can narrow (the "
                "pass@k debate). The chapter: watch pass@k at large k and the policy's entropy, not just pass@1."),
    "kl": ("KL to the reference (kl)", "k3 per token",
           "Logged only when β ≠ 0. DeepSeekMath used β = 0.04, R1-Zero 0.001; TRL's default is 0."),
    "clip": ("Clipped tokens (clip_ratio)", "share of tokens",
             "Tokens whose ratio ρ = π/π_old left [1 − ε, 1 + ε] with the advantage pushing further: their gradient "
             "is zero. With one gradient step per batch ρ ≡ 1 and the clip never acts."),
    "length": ("Completion length", "tokens",
               "R1-Zero's answers grew as its accuracy climbed (it learned to use test-time compute). Growth while "
               "the reward is flat is the length bias: dividing by |y| pushes a long wrong answer down less per "
               "token (Chapter 16)."),
    "grad_norm": ("Gradient norm (grad_norm)", "norm before clipping",
                  "The signal the loss value hides: zero when every group is all-equal and β = 0."),
    "loss": ("Loss", "loss",
             "On-policy (ρ = 1) the loss's value is minus the mean advantage, zero per group by construction, while "
             "its gradient is not (One group: loss 0 beside a non-zero gradient). Read progress from the reward."),
}


def run_captions(d: Diagnosis) -> dict[str, str]:
    """What each chart shows for this run, with its numbers (only the charts whose metrics the log has)."""
    m, W, G, out = d.log.metrics, d.window, d.group_size, {}
    se = {k: start_end(v, W) for k, v in m.items() if np.isfinite(v).any()}
    if "reward" in se:
        out["reward"] = f"Reward {se['reward'][0]:.3f} → {se['reward'][1]:.3f} (means of the first and last {W} steps)."
    if "reward_std" in se and "reward" in m:
        r, s = m["reward"], m["reward_std"]
        ok = np.isfinite(r) & np.isfinite(s) & (r > 0.02) & (r < 0.98)
        if ok.any():
            ratio = float(np.median(s[ok] / np.sqrt(r[ok] * (1 - r[ok]))))
            like = "as" if ratio >= 0.9 else "unlike"
            out["reward_std"] = f"reward_std is {ratio:.2f} × √(r̄(1 − r̄)) (median): {like} 0/1 rewards."
    if "floor" in d.derived:
        z, floor = m["frac_reward_zero_std"], d.derived["floor"]
        out["zero_std"] = (f"On average {np.nanmean(z):.0%} of groups taught nothing, against a floor of "
                           f"{np.nanmean(floor):.0%} at G = {G}; the gap is {np.nanmedian(z - floor):+.2f} (median).")
        f = next((f for f in d.findings if f.key == "dead_all_correct"), None)
        w = next((f for f in d.findings if f.key == "dead_all_wrong"), None)
        if f is not None and w is not None:
            sides = [f"mostly all wrong at steps {_short(w.steps)}" if w.steps else "never mostly all wrong",
                     f"mostly all correct at steps {_short(f.steps)}" if f.steps else "never mostly all correct"]
            out["dead_split"] = (f"For sure: {sides[0]}, {sides[1]}; where the bands overlap this log cannot tell "
                                 "(the bands are rolling means).")
    if "entropy" in se:
        e0, e1 = se["entropy"]
        change = f" ({e1 / e0 - 1:+.0%})" if e0 > 0 else ""
        out["entropy"] = f"Entropy {e0:.3g} → {e1:.3g}{change}."
    if "kl" in se:
        out["kl"] = f"KL {se['kl'][0]:.3g} → {se['kl'][1]:.3g}, at most {np.nanmax(m['kl']):.3g}."
    clip = next((k for k in ("clip_ratio/region_mean", "cispo_clip_ratio") if k in se), None)
    if clip is not None:
        mx = float(np.nanmax(m[clip]))
        out["clip"] = (f"{clip} is 0 at every step: the clip never acted (no chart)." if mx == 0 else
                       f"{clip} up to {mx:.2%}, mean {np.nanmean(m[clip]):.2%}.")
    if "completions/mean_length" in se:
        l0, l1 = se["completions/mean_length"]
        out["length"] = f"Mean length {l0:.4g} → {l1:.4g} tokens ({l1 / l0 - 1:+.0%})." if l0 > 0 else ""
        if "completions/clipped_ratio" in se and np.nanmax(m["completions/clipped_ratio"]) > 0:
            out["length"] += (f" Up to {np.nanmax(m['completions/clipped_ratio']):.1%} of answers were cut at "
                              "max_completion_length (completions/clipped_ratio).")
    if "grad_norm" in se:
        out["grad_norm"] = f"grad_norm {se['grad_norm'][0]:.3g} → {se['grad_norm'][1]:.3g}, median " \
                           f"{np.nanmedian(m['grad_norm']):.3g}."
    if "loss" in se:
        out["loss"] = f"Median |loss| {np.nanmedian(np.abs(m['loss'])):.3g}; loss {se['loss'][0]:.3g} → " \
                      f"{se['loss'][1]:.3g}."
    return out


def _short(steps, most: int = 6) -> str:
    parts = step_ranges(steps).split(", ")
    return ", ".join(parts[:most]) + (f", … ({len(parts)} ranges)" if len(parts) > most else "")


def plan_captions(p: dict) -> dict[str, str]:
    """What each chart of the Your prompts page shows for this pool, with its numbers."""
    G, gs = p["config"]["group_size"], p["group_sizes"]
    i = gs.index(G)
    at = p["at_group_size"]
    best = next((g for g, s in zip(gs, p["no_signal"], strict=True) if s <= 0.1), None)
    out = {
        "dead": (f"At G = {G}: {at['no_signal']:.1%} of groups teach nothing ({at['all_wrong']:.1%} all wrong, "
                 f"{at['all_correct']:.1%} all correct); prompts all of the pool's mean difficulty would waste "
                 f"{p['equal_difficulty'][i]:.1%} (dashed). "
                 + (f"From G = {best} on, at most 10% are dead." if best is not None else
                    "No G up to 64 brings it under 10%: the dead share is set by the prompts, not by G.")),
        "batch": (f"A batch of {p['config']['batch_prompts']:,} prompts at G = {G} generates "
                  f"{p['batch']['answers'][i]:,.0f} answers, of which {p['batch']['wasted_answers'][i]:,.0f} teach "
                  "nothing; dynamic sampling would draw "
                  + ("groups forever (every group is dead)." if p["batch"]["ds_groups"][i] is None else
                     f"{p['batch']['ds_groups'][i]:,.1f} groups ({p['batch']['ds_answers'][i]:,.0f} answers) to fill "
                     "it with groups that teach.")),
    }
    ks, mean, exact = p["passk"]["k"], p["passk"]["mean"], p["passk"]["unbiased"]
    last_exact = max((k for k, e in zip(ks, exact, strict=True) if e == 1.0), default=None)
    out["passk"] = (f"The base model's pass@1 is {mean[0]:.3f} and pass@64 {mean[ks.index(64)]:.3f} over these "
                    "prompts: RL can only reinforce what the model sometimes does, so pass@k at large k bounds what "
                    "GRPO can reach on this pool. "
                    + (f"Solid up to k = {last_exact:g} (every prompt has n ≥ k samples: unbiased); dotted beyond "
                       "(the plug-in 1 − (1 − c/n)^k)." if p["input"] != "pass_rate" and last_exact is not None else
                       "From pass rates: 1 − (1 − p)^k."))
    nt = p["never_teach"]
    out["rates"] = (f"{p['summary']['prompts']:,} prompts, mean pass rate {p['summary']['mean_rate']:.3f}; "
                    f"{nt['all_wrong']['count']:,} never solved and {nt['all_correct']['count']:,} always solved.")
    return out


def pool_charts(cfg: ToyConfig, run: ToyHistory, exp: ToyHistory, reduction: str, pool_size: int,
                big: bool = False) -> list[Chart]:
    """Training dynamics' charts (sim/views/training.py) for the toy whose prompts are this pool, with titles and
    the groups caption about this pool (which side its dead groups are on, first and last)."""
    charts = training_charts(cfg, run, exp, big=big)
    m = run.metrics
    wrong, right = m["frac_all_wrong"].mean(axis=1), m["frac_all_correct"].mean(axis=1)  # (T,)
    side = lambda t: "mostly all wrong, red" if wrong[t] >= right[t] else "mostly all correct, green"  # noqa: E731
    zero = (f"No gradient: {wrong[0] + right[0]:.0%} of groups at first ({side(0)}), {wrong[-1] + right[-1]:.0%} at "
            f"the end ({side(-1)}). Dashed: mean_j p_j^G + (1 − p_j)^G.")
    what = f"your {pool_size:,} prompts" if cfg.n_prompts == pool_size else f"{cfg.n_prompts} quantiles of your " \
                                                                                f"{pool_size:,} prompts"
    out = []
    for i, c in enumerate(charts):
        if i == 0:
            c = dataclasses.replace(c, title=f"Mean accuracy over {what} (G = {cfg.group_size})")
        elif i == 1:
            c = dataclasses.replace(c, caption=zero)
        elif i == 2:
            c = dataclasses.replace(c, x_title="prompt j (easy → hard, by the base model's rate)",
                                    caption=c.caption + f" The toy's prompts: {reduction}.")
        out.append(c)
    return out
