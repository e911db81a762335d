"""What the Your run and Your prompts pages say: each chart's reading after Chapter 15, worded for the kind of reward
the log holds, and captions with the numbers of the data on screen (sim/views/your_data.py draws them).

    reading("reward", kind)      # kind: "0/1" (the log is consistent with a verifier's 0/1 rewards), "not 0/1"
                                 # (summed functions, partial credit, a scale outside [0, 1]) or "unknown"
    run_captions(d)              # {chart key: "Reward 0.469 → 0.967 (means of the first and last 30 steps)."}
    cannot_show(d)               # what the page cannot draw for this log, and why

0/1 words ("the mean reward is the batch's accuracy", the floor r̄^G + (1 − r̄)^G, √(r̄(1 − r̄))) appear only where
the log is consistent with 0/1 rewards; where it cannot tell they are conditional ("if the rewards are 0/1").
"""

from __future__ import annotations

import numpy as np

from sim.yourdata.datafile import cell_text
from sim.yourdata.diagnose import Diagnosis, start_end, step_ranges


def kind_of(binary: dict) -> str:
    """The reward's kind from diagnose's 0/1 check (Diagnosis.summary["binary_rewards"]): "0/1", "not 0/1" or
    "unknown"."""
    return {True: "0/1", False: "not 0/1"}.get(binary.get("ok"), "unknown")


# key -> (title, y axis). The charts of a run, in the order the page draws them.
RUN_CHARTS = {
    "reward": ("Reward", "mean reward per answer"),
    "funcs": ("Reward functions (rewards/<f>/mean)", "mean reward per answer"),
    "reward_std": ("Reward spread (reward_std)", "std over the batch"),
    "zero_std": ("Groups that teach nothing (frac_reward_zero_std)", "share of groups"),
    "dead_split": ("Dead groups: all wrong or all correct?", "share of groups"),
    "entropy": ("Entropy", "nats per token"),
    "kl": ("KL to the reference (kl)", "k3 per token"),
    "clip": ("Clipped tokens (clip_ratio)", "share of tokens"),
    "length": ("Completion length", "tokens"),
    "grad_norm": ("Gradient norm (grad_norm)", "norm before clipping"),
    "loss": ("Loss", "loss"),
}
READINGS = {  # key -> the chapter's reading; a dict where the words depend on the reward's kind
    "reward": {
        "0/1": "With a 0/1 verifier the mean reward is the batch's accuracy (pass@1 on the prompts drawn). It should "
               "rise; on a fixed pool it saturates as prompts move to p ≈ 1.",
        "not 0/1": "The mean over the batch of the reward (TRL: the weighted sum of the reward functions). It should "
                   "rise; with several functions read each below: a rise in one can hide another standing still.",
        "unknown": "The mean reward over the batch; if the rewards are 0/1 (a verifier) it is the batch's accuracy "
                   "(pass@1 on the prompts drawn). It should rise.",
    },
    "funcs": "Each reward function's mean, unweighted. The total rises for the right reason only if the function "
             "that checks the task rises too; a format reward that saturates while accuracy stays flat is the "
             "policy satisfying what is easy (verifiable rewards are not unhackable: Chapter 15).",
    "reward_std": {
        "0/1": "TRL's reward_std is the std over the whole batch, not per group. For 0/1 rewards it is "
               "√(r̄(1 − r̄)) (dashed), as here.",
        "not 0/1": "TRL's reward_std is the std over the whole batch, not per group. These rewards are not 0/1, so "
                   "no √(r̄(1 − r̄)) line: that identity holds only for 0/1 rewards, and the zero-std rules that "
                   "rest on it are not judged.",
        "unknown": "TRL's reward_std is the std over the whole batch, not per group. For 0/1 rewards it would be "
                   "√(r̄(1 − r̄)) (dashed); well below it the rewards are not 0/1 (partial credit, several "
                   "functions).",
    },
    "zero_std": {
        "0/1": "A group whose G answers all get the same reward has zero advantages and gives no gradient. Dashed: "
               "the floor r̄^G + (1 − r̄)^G, the least it can be in expectation at this mean reward (Jensen on the "
               "chapter's p^G + (1 − p)^G); the gap above it is the spread of difficulty across prompts.",
        "not 0/1": "A group whose G answers all get the same reward has zero advantages and gives no gradient. "
                   "These rewards are not 0/1, so the chapter's p^G + (1 − p)^G and its floor do not apply: no "
                   "dashed line.",
        "unknown": "A group whose G answers all get the same reward has zero advantages and gives no gradient. "
                   "Dashed: the floor r̄^G + (1 − r̄)^G if the rewards are 0/1 (Jensen on the chapter's "
                   "p^G + (1 − p)^G).",
    },
    "dead_split": "TRL logs only their total. A mixed group scores between 1/G and (G − 1)/G with 0/1 rewards, so "
                  "the reward pins each share inside its band: red all wrong (too hard), green all correct (too "
                  "easy).",
    "entropy": "Falling entropy is sharpening: pass@1 rises while coverage, pass@k at large k, can narrow (the "
               "pass@k debate). The chapter: watch pass@k at large k and the policy's entropy, not just pass@1.",
    "kl": "Logged only when β ≠ 0. DeepSeekMath used β = 0.04, R1-Zero 0.001; TRL's default is 0.",
    "clip": "Tokens whose ratio ρ = π/π_old left [1 − ε, 1 + ε] with the advantage pushing further: their gradient "
            "is zero. With one gradient step per batch ρ ≡ 1 and the clip never acts.",
    "length": "R1-Zero's answers grew as its accuracy climbed (it learned to use test-time compute). Growth while "
              "the reward is flat is the length bias: dividing by |y| pushes a long wrong answer down less per "
              "token (Chapter 16). Answers at the cap (dotted) are cut before their final answer.",
    "grad_norm": "The signal the loss value hides: zero when every group is all-equal and β = 0. A step far above "
                 "the others is a spike (the findings name it).",
    "loss": "On-policy (ρ = 1) the loss's value is minus the mean advantage, zero per group by construction, while "
            "its gradient is not (One group: loss 0 beside a non-zero gradient). Read progress from the reward.",
}


def reading(key: str, kind: str) -> str:
    """The chapter's reading of chart `key` for a reward of this kind."""
    r = READINGS[key]
    return r[kind] if isinstance(r, dict) else r


def run_captions(d: Diagnosis) -> dict[str, str]:
    """What each chart shows for this run, with its numbers (only the charts whose metrics the log has)."""
    m, W, G, out = d.log.metrics, d.window, d.group_size, {}
    se = {k: start_end(v, W) for k, v in m.items() if np.isfinite(v).any()}
    kind = kind_of(d.summary["binary_rewards"])
    if "reward" in se:
        unit = d.log.unit(["reward"])
        r0, r1 = se["reward"]
        out["reward"] = f"Reward {r0:.3f} → {r1:.3f} (means of the first and last {W} {unit})."
        if "eval_reward" in se:
            out["reward"] += f" Evaluations: {se['eval_reward'][0]:.3f} → {se['eval_reward'][1]:.3f}."
    funcs = [f for f in d.log.reward_funcs if f"rewards/{f}/mean" in se]
    if funcs:
        out["funcs"] = "; ".join(f"{cell_text(f)} {se[f'rewards/{f}/mean'][0]:.2f} → {se[f'rewards/{f}/mean'][1]:.2f}"
                                 for f in funcs) + "."
    ratio = d.summary["binary_rewards"].get("ratio")
    if "reward_std" in se and ratio is not None:
        like = "as" if kind == "0/1" else "unlike"
        out["reward_std"] = f"reward_std is {ratio:.2f} × √(r̄(1 − r̄)) (median): {like} 0/1 rewards."
    elif "reward_std" in se and kind == "not 0/1":
        out["reward_std"] = f"Not 0/1: {d.summary['binary_rewards']['why']}."
    if "floor" in d.derived and kind != "not 0/1":
        z, floor = d.derived["zero_std_smooth"], d.derived["floor"]
        raw = m["frac_reward_zero_std"]
        ok = np.isfinite(floor) & np.isfinite(raw)
        out["zero_std"] = (f"On average {np.mean(raw[ok]):.0%} of groups taught nothing, against a floor of "
                           f"{np.mean(floor[ok]):.0%} at G = {G}; the gap is {np.median(raw[ok] - floor[ok]):+.2f} "
                           "(median).") if ok.any() and np.isfinite(z).any() else ""
        f = next((f for f in d.findings if f.key == "dead_all_correct"), None)
        w = next((f for f in d.findings if f.key == "dead_all_wrong"), None)
        if f is not None and w is not None:
            sides = [f"mostly all wrong at steps {_short(w.steps)}" if w.steps else "never mostly all wrong",
                     f"mostly all correct at steps {_short(f.steps)}" if f.steps else "never mostly all correct"]
            out["dead_split"] = (f"For sure: {sides[0]}, {sides[1]}; where the bands overlap this log cannot tell "
                                 "(the bands are rolling means).")
    elif "frac_reward_zero_std" in se:
        z0, z1 = se["frac_reward_zero_std"]
        out["zero_std"] = f"frac_reward_zero_std {z0:.2f} → {z1:.2f}."
    if "entropy" in se:
        e0, e1 = se["entropy"]
        out["entropy"] = f"Entropy {e0:.3g} → {e1:.3g}" + (f" ({e1 / e0 - 1:+.0%})." if e0 > 0 else ".")
    if "kl" in se:
        out["kl"] = f"KL {se['kl'][0]:.3g} → {se['kl'][1]:.3g}, at most {np.nanmax(m['kl']):.3g}."
    clip = next((k for k in ("clip_ratio/region_mean", "cispo_clip_ratio") if k in se), None)
    if clip is not None:
        mx = float(np.nanmax(m[clip]))
        out["clip"] = (f"{clip} is 0 at every step: the clip never acted (no chart)." if mx == 0 else
                       f"{clip} up to {mx:.2%}, mean {np.nanmean(m[clip]):.2%}.")
    if "completions/mean_length" in se:
        l0, l1 = se["completions/mean_length"]
        out["length"] = f"Mean length {l0:.4g} → {l1:.4g} tokens" + (f" ({l1 / l0 - 1:+.0%})." if l0 > 0 else ".")
        if "completions/clipped_ratio" in se and np.nanmax(m["completions/clipped_ratio"]) > 0:
            out["length"] += (f" Up to {np.nanmax(m['completions/clipped_ratio']):.1%} of answers were cut at "
                              "max_completion_length (completions/clipped_ratio).")
    if "grad_norm" in se:
        out["grad_norm"] = (f"grad_norm {se['grad_norm'][0]:.3g} → {se['grad_norm'][1]:.3g}, median "
                            f"{np.nanmedian(m['grad_norm']):.3g}.")
    if "loss" in se:
        out["loss"] = (f"Median |loss| {np.nanmedian(np.abs(m['loss'])):.3g}; loss {se['loss'][0]:.3g} → "
                       f"{se['loss'][1]:.3g}.")
    return out


def _short(steps, most: int = 6) -> str:
    parts = step_ranges(steps).split(", ")
    return ", ".join(parts[:most]) + (f", … ({len(parts)} ranges)" if len(parts) > most else "")


CHART_NEEDS = {"reward": ("reward",), "funcs": ("rewards/<f>/mean",), "reward_std": ("reward_std", "reward"),
               "zero_std": ("frac_reward_zero_std", "reward"), "dead_split": ("frac_reward_zero_std", "reward"),
               "entropy": ("entropy",), "kl": ("kl",), "clip": ("clip_ratio/region_mean",),
               "length": ("completions/mean_length",), "grad_norm": ("grad_norm",), "loss": ("loss",)}


def cannot_show(d: Diagnosis, drawn: list[str]) -> str:
    """One sentence: the charts this page cannot draw for this log (not in `drawn`) and the metrics they need;
    "" when every chart is drawn. The clip chart, drawn only when the clip acts, and dead_split, drawn only for
    0/1 rewards, are said elsewhere."""
    absent = [k for k in RUN_CHARTS if k not in drawn and k not in ("clip", "dead_split", "kl")]
    if not absent:
        return ""
    parts = [f"{RUN_CHARTS[k][0]} (needs {', '.join(CHART_NEEDS[k])})" for k in absent]
    return "Not drawn, the log lacks what they read: " + "; ".join(parts) + "."


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
                    + (f"Solid up to k = {last_exact:g} (every prompt has n ≥ k samples: unbiased); dotted beyond, "
                       "each prompt held at its pass@n (n samples say nothing past n)." if p["input"] != "pass_rate"
                       else "From pass rates: 1 − (1 − p)^k."))
    nt = p["never_teach"]
    out["rates"] = (f"{p['summary']['prompts']:,} prompts, mean pass rate {p['summary']['mean_rate']:.3f}; "
                    f"{nt['all_wrong']['count']:,} never solved and {nt['all_correct']['count']:,} always solved.")
    return out


def plan_cannot_show(p: dict) -> str:
    """One sentence when the pool leaves something out: every prompt never or always solved (no group ever
    teaches, dynamic sampling never fills a batch, the toy has nothing to learn from); "" otherwise."""
    nt, P = p["never_teach"], p["summary"]["prompts"]
    if nt["all_wrong"]["count"] + nt["all_correct"]["count"] < P:
        return ""
    return (f"Every one of the {P:,} prompts was never solved ({nt['all_wrong']['count']:,}) or always solved "
            f"({nt['all_correct']['count']:,}): every group is all wrong or all correct at every G, so no group "
            "teaches, dynamic sampling never fills a batch (no line on the answers chart), and the toy below cannot "
            "move (every advantage is zero). Sample more answers per prompt, or add prompts of middle difficulty.")
