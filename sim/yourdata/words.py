"""What the Your run and Your prompts pages say: each chart's reading after Chapter 15, worded for the kind of reward
the log holds, and captions with the numbers of the data on screen (sim/views/your_data.py draws them).

    reading("reward", kind)      # kind: "0/1" (the log is consistent with a verifier's 0/1 rewards), "not 0/1"
                                 # (summed functions, partial credit, a scale outside [0, 1]) or "unknown"
    run_captions(d, charts)      # {chart key: "Reward 0.469 → 0.967 (means of the first and last 30 steps)."},
                                 # each number read off its chart (sim/player/spec.py read) or in its `given`
    cannot_show(d)               # what the page cannot draw for this log, and why

0/1 words ("the mean reward is the batch's accuracy", the floor r̄^G + (1 − r̄)^G, √(r̄(1 − r̄))) appear only where
the log is consistent with 0/1 rewards; where it cannot tell they are conditional ("if the rewards are 0/1").
"""

from __future__ import annotations

import html
import re

import numpy as np

from sim.player.spec import Chart, read, read_value
from sim.yourdata.datafile import cell_text
from sim.yourdata.diagnose import Diagnosis, step_ranges

DS_LINE = "drawn by dynamic sampling to fill the batch"  # the answers chart's line that its caption reads


def label(text: str, limit: int = 40) -> str:
    """A label from a visitor's file for a chart: cut, invisible characters escaped, then HTML-escaped, so that
    `<b>x</b>` is drawn as those seven characters."""
    return html.escape(cell_text(text, limit), quote=False)


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


def smooth_name(window: int) -> str:
    """The thick line of a run's chart: the rolling mean over W logged values, what the rules read."""
    return f"rolling mean (W = {window})"


NUMBER = re.compile(r"(?<![\w@.^/])\d+(?:[.,]\d+)*%?")  # a number in a caption, as the browser tests find it


def numbers(text: str) -> list[str]:
    """The numbers a text gives (a reading's constants, a finding's steps): a chart's `given` where its caption
    quotes them (tests/fixtures/invariants.js finds them by the same pattern)."""
    return NUMBER.findall(re.sub(r"\d+(\.\d+)?e[-+]?\d+", " ", text, flags=re.I))


def sig(value: float, digits: int = 3) -> str:
    """The format that writes `value` with about `digits` significant digits as read() takes it (".Nf"): 0.0514
    -> ".4f", 2.75 -> ".2f", 1234 -> ".0f"."""
    if value == 0 or not np.isfinite(value):
        return ".0f"
    return f".{min(10, max(0, digits - 1 - int(np.floor(np.log10(abs(value))))))}f"


def _said(chart: Chart, name: str, at: str, fmt: str | None = None, **where) -> str | None:
    """A number off the chart (sim/player/spec.py read), in `fmt` or to 3 significant digits."""
    if fmt is None:
        value = read_value(chart, name, at, **where)
        if value is None:
            return None
        fmt = sig(value)
    return read(chart, name, at, fmt, **where)


def _ends(chart: Chart, name: str, window: int, fmt: str | None = None) -> tuple[str, str]:
    """The means of the first and last `window` logged values (runstats.start_end's numbers), read off the chart's
    rolling mean `name`: its value at the window-th logged step, and its last."""
    line = next(t for t in chart.traces if t.name == name)
    x = float(line.x[min(window, len(line.x)) - 1])
    return _said(chart, name, "x", fmt, x=x), _said(chart, name, "last", fmt)


def _change(a: str, b: str) -> str:
    """" (+12%)" from a to b, as two read numbers say it ("" from 0)."""
    return f" ({float(b) / float(a) - 1:+.0%})" if float(a) > 0 else ""


def run_captions(d: Diagnosis, charts: dict[str, Chart]) -> dict[str, str]:
    """What each chart shows for this run (`charts`: sim/views/your_data.py run_charts', by key, before their
    captions), with its numbers: each read off the chart it sits under (its thick line, the rolling mean over W
    logged values, is the mean the rules read) or, where the chart does not draw it (an average over the run, a
    median, a count), added to the chart's `given`. A key with no chart may still have words (the clip that never
    acted)."""
    m, W, G, out = d.log.metrics, d.window, d.group_size, {}
    kind = kind_of(d.summary["binary_rewards"])
    smooth = smooth_name(W)

    def given(key: str, *values) -> None:
        charts[key].given.extend(str(v) for v in values)

    if "reward" in charts:
        c = charts["reward"]
        r0, r1 = _ends(c, smooth, W, ".3f")
        out["reward"] = f"Reward {r0} → {r1} (means of the first and last {W} {d.log.unit(['reward'])})."
        if any(t.name == "eval_reward (evaluations)" for t in c.traces):
            e0, e1 = (_said(c, "eval_reward (evaluations)", at, ".3f") for at in ("first", "last"))
            out["reward"] += f" Evaluations: {e0} at the first, {e1} at the last."
        given("reward", W)
    if "funcs" in charts:
        c = charts["funcs"]
        parts = []
        for f in d.log.reward_funcs:
            name = label(f"rewards/{f}/mean")
            if any(t.name == name for t in c.traces):
                a, b = _ends(c, name, W, ".2f")
                parts.append(f"{cell_text(f)} {a} → {b}")
        out["funcs"] = "; ".join(parts) + f" (means of the first and last {W} logged values)."
        given("funcs", W)
    ratio = d.summary["binary_rewards"].get("ratio")
    if "reward_std" in charts and ratio is not None:
        like = "as" if kind == "0/1" else "unlike"
        out["reward_std"] = f"reward_std is {ratio:.2f} × √(r̄(1 − r̄)) (median): {like} 0/1 rewards."
        given("reward_std", f"{ratio:.2f}", 1, 0)
    elif "reward_std" in charts and kind == "not 0/1":
        out["reward_std"] = f"Not 0/1: {d.summary['binary_rewards']['why']}."
        given("reward_std", *numbers(out["reward_std"]))
    if "zero_std" in charts and kind != "not 0/1":
        floor, raw = d.derived["floor"], m["frac_reward_zero_std"]
        ok = np.isfinite(floor) & np.isfinite(raw)
        if ok.any():  # averages and a median over the run: not drawn, given
            avg, low = f"{np.mean(raw[ok]):.0%}", f"{np.mean(floor[ok]):.0%}"
            gap = f"{np.median(raw[ok] - floor[ok]):+.2f}"
            out["zero_std"] = (f"On average {avg} of groups taught nothing, against a floor of {low} at G = {G}; the "
                               f"gap is {gap} (median).")
            given("zero_std", avg, low, G, gap)
    elif "zero_std" in charts:
        z0, z1 = _ends(charts["zero_std"], smooth, W, ".2f")
        out["zero_std"] = f"frac_reward_zero_std {z0} → {z1} (means of the first and last {W} logged values)."
        given("zero_std", W)
    if "dead_split" in charts:
        f = next((f for f in d.findings if f.key == "dead_all_correct"), None)
        w = next((f for f in d.findings if f.key == "dead_all_wrong"), None)
        if f is not None and w is not None:
            sides = [f"mostly all wrong at steps {_short(w.steps)}" if w.steps else "never mostly all wrong",
                     f"mostly all correct at steps {_short(f.steps)}" if f.steps else "never mostly all correct"]
            out["dead_split"] = (f"For sure: {sides[0]}, {sides[1]}; where the bands overlap this log cannot tell "
                                 "(the bands are rolling means).")
            given("dead_split", *numbers(out["dead_split"]))  # the findings' steps: where, not what, it draws
    if "entropy" in charts:
        e0, e1 = _ends(charts["entropy"], smooth, W)
        change = _change(e0, e1)
        out["entropy"] = f"Entropy {e0} → {e1}{change} (means of the first and last {W} logged values)."
        given("entropy", W, *numbers(change))
    if "kl" in charts:
        c = charts["kl"]
        k0, k1 = _ends(c, smooth, W)
        out["kl"] = f"KL {k0} → {k1} (rolling mean), at most {_said(c, 'kl', 'max')}."
    clip = next((k for k in ("clip_ratio/region_mean", "cispo_clip_ratio") if d.log.has(k)), None)
    if clip is not None and "clip" in charts:
        mean = f"{np.nanmean(m[clip]):.2%}"
        out["clip"] = f"{clip} up to {_said(charts['clip'], clip, 'max', '.2%')}, mean {mean}."
        given("clip", mean)
    elif clip is not None and np.nanmax(m[clip]) == 0:
        out["clip"] = f"{clip} is 0 at every step: the clip never acted (no chart)."
    if "length" in charts:
        l0, l1 = _ends(charts["length"], smooth, W)
        change = _change(l0, l1)
        out["length"] = f"Mean length {l0} → {l1} tokens{change} (means of the first and last {W} logged values)."
        given("length", W, *numbers(change))
        if d.log.has("completions/clipped_ratio") and np.nanmax(m["completions/clipped_ratio"]) > 0:
            cut = f"{np.nanmax(m['completions/clipped_ratio']):.1%}"
            out["length"] += f" Up to {cut} of answers were cut at max_completion_length (completions/clipped_ratio)."
            given("length", cut)
    if "grad_norm" in charts:
        g0, g1 = _ends(charts["grad_norm"], smooth, W)
        med = f"{np.nanmedian(m['grad_norm']):.3g}"
        out["grad_norm"] = f"grad_norm {g0} → {g1} (rolling mean), median {med}."
        given("grad_norm", med)
    if "loss" in charts:
        med = f"{np.nanmedian(np.abs(m['loss'])):.3g}"
        line = next(t for t in charts["loss"].traces if t.name == smooth)
        if np.nanmax(np.abs(line.y)) < 1e-4:  # 0 but for rounding (on-policy): six zeros say nothing
            out["loss"] = f"Median |loss| {med}: its rolling mean stays within 0.0001 of 0."
            given("loss", med, "0.0001", 0)
        else:
            l0, l1 = _ends(charts["loss"], smooth, W)
            out["loss"] = f"Median |loss| {med}; loss {l0} → {l1} (rolling mean)."
            given("loss", med)
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


def plan_captions(p: dict, charts: dict[str, Chart]) -> dict[str, str]:
    """What each chart of the Your prompts page shows for this pool (`charts`: sim/views/your_data.py plan_charts',
    by key: dead, batch, rates, passk, before their captions), each number read off the chart at the page's G or
    added to its `given` (a count of the file, a G found by a search, a setting)."""
    G, gs, B = p["config"]["group_size"], p["group_sizes"], p["config"]["batch_prompts"]
    i = gs.index(G)
    best = next((g for g, s in zip(gs, p["no_signal"], strict=True) if s <= 0.1), None)
    dead, batch, rates, passk = (charts[k] for k in ("dead", "batch", "rates", "passk"))

    def at(chart, name, fmt=".1%", **where):
        return read(chart, name, "x", fmt, x=float(G), **where)

    out = {"dead": (f"At G = {G}: {at(dead, 'all correct (too easy)', stack=True)} of groups teach nothing "
                    f"({at(dead, 'all wrong (too hard)')} all wrong, {at(dead, 'all correct (too easy)')} all "
                    f"correct); prompts all of the pool's mean difficulty would waste "
                    f"{at(dead, 'prompts all of the mean difficulty')} (dashed). "
                    + (f"From G = {best} on, at most 10% are dead." if best is not None else
                       "No G up to 64 brings it under 10%: the dead share is set by the prompts, not by G."))}
    dead.given.extend([str(G), "10%", "64", *([str(best)] if best is not None else [])])  # the search's G, its bar
    groups = p["batch"]["ds_groups"][i]
    answers, wasted = (f"{float(at(batch, name, '.0f')):,.0f}"
                       for name in ("generated", "in groups that teach nothing"))
    out["batch"] = (f"A batch of {B:,} prompts at G = {G} generates {answers} answers, of which {wasted} teach "
                    "nothing; dynamic sampling would draw "
                    + ("groups forever (every group is dead)." if groups is None else
                       f"{groups:,.1f} groups ({float(at(batch, DS_LINE, '.0f')):,.0f} answers) to fill it with "
                       "groups that teach."))
    batch.given.extend([f"{B:,}", str(G)] + ([] if groups is None else [f"{groups:,.1f}"]))  # groups: not drawn
    ks, exact = p["passk"]["k"], p["passk"]["unbiased"]
    solid = {k for k, e in zip(ks, exact, strict=True) if e == 1.0}
    last_exact = max(solid, default=None)
    dotted = "held at pass@n where n < k" if solid else "from the pass rates"

    def pass_at(k: int) -> str:
        return read(passk, "unbiased (n ≥ k)" if k in solid else dotted, "x", ".3f", x=float(k))

    out["passk"] = (f"The base model's pass@1 is {pass_at(1)} and pass@64 {pass_at(64)} over these prompts: RL can "
                    "only reinforce what the model sometimes does, so pass@k at large k bounds what GRPO can reach on "
                    "this pool. "
                    + (f"Solid up to k = {last_exact:g} (every prompt has n ≥ k samples: unbiased); dotted beyond, "
                       "each prompt held at its pass@n (n samples say nothing past n)." if p["input"] != "pass_rate"
                       else "From pass rates: 1 − (1 − p)^k."))
    passk.given.extend([f"{last_exact:g}"] if last_exact is not None and p["input"] != "pass_rate" else ["1"])
    nt, summary = p["never_teach"], p["summary"]
    counts = [f"{summary['prompts']:,}", f"{summary['mean_rate']:.3f}", f"{nt['all_wrong']['count']:,}",
              f"{nt['all_correct']['count']:,}"]  # the file's counts: the histogram's bins hold other counts
    out["rates"] = (f"{counts[0]} prompts, mean pass rate {counts[1]}; {counts[2]} never solved and {counts[3]} always "
                    "solved.")
    rates.given.extend(counts)
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
