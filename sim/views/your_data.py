"""Your run and Your prompts, declared (sim/views/doc.py; the app only: they read a visitor's file): their controls,
words and charts. Each chart's reading (after Chapter 15) and a caption that says what it shows for the data on
screen, with its numbers. The numbers come from sim/yourdata (diagnose.py, plan.py); text from the file reaches a chart
only through `label` (cut, invisible characters escaped, HTML-escaped: Plotly reads <b> in a name). The toy on a
visitor's pool computes in the browser (assets/js/toy_views.js pool_charts is the twin of the one here)."""

from __future__ import annotations

import dataclasses
import html

import numpy as np

from sim.player.spec import COLORS, Band, BarSeries, Chart, Line, rgba
from sim.toy import ToyConfig, ToyHistory
from sim.views.controls import Flag, Num
from sim.views.doc import Text, View
from sim.views.training import training_charts
from sim.yourdata.datafile import cell_text
from sim.yourdata.diagnose import DiagnoseConfig, Diagnosis, rolling_mean, start_end, step_ranges
from sim.yourdata.plan import PlanConfig

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
                    + (f"Solid up to k = {last_exact:g} (every prompt has n ≥ k samples: unbiased); dotted beyond, "
                       "each prompt held at its pass@n (n samples say nothing past n)." if p["input"] != "pass_rate"
                       and last_exact is not None else
                       "From pass rates: 1 − (1 − p)^k."))
    nt = p["never_teach"]
    out["rates"] = (f"{p['summary']['prompts']:,} prompts, mean pass rate {p['summary']['mean_rate']:.3f}; "
                    f"{nt['all_wrong']['count']:,} never solved and {nt['all_correct']['count']:,} always solved.")
    return out


def pool_charts(cfg: ToyConfig, run: ToyHistory, exp: ToyHistory, reduction: str, pool_size: int,
                big: bool = False) -> list[Chart]:
    """Training dynamics' charts (sim/views/training.py) for the toy whose prompts are this pool, titled for it (the
    groups caption already says which side the dead groups are on, first and last)."""
    charts = training_charts(cfg, run, exp, big=big)
    what = f"your {pool_size:,} prompts" if cfg.n_prompts == pool_size else f"{cfg.n_prompts} quantiles of your " \
                                                                                f"{pool_size:,} prompts"
    out = []
    for i, c in enumerate(charts):
        if i == 0:
            c = dataclasses.replace(c, title=f"Mean accuracy over {what} (G = {cfg.group_size})")
        elif i == 2:
            c = dataclasses.replace(c, x_title="prompt j (easy → hard, by the base model's rate)",
                                    caption=c.caption + f" The toy's prompts: {reduction}.")
        out.append(c)
    return out


def label(text: str, limit: int = 40) -> str:
    """A label from a visitor's file for a chart: cut, invisible characters escaped, then HTML-escaped, so that
    `<b>x</b>` is drawn as those seven characters."""
    return html.escape(cell_text(text, limit), quote=False)


# ---- Your run ----

RUN_CONTROLS = (
    Num.of(DiagnoseConfig, "group_size", hi=256, default=8),
    Num.of(DiagnoseConfig, "window", hi=200, step=1),
)
FUNC_COLORS = (COLORS["good"], COLORS["pin"], COLORS["bad"], COLORS["grey"])


def _points(x, y) -> tuple[np.ndarray, np.ndarray]:
    """The logged points of a metric (a step it was not logged at is left out: the line joins its neighbours)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    return x[ok], y[ok]


def _line(steps, y, name: str, color: str, width: float = 1.5, dash: str | None = None) -> Line:
    x, y = _points(steps, y)
    return Line(y, name, x=x, reveal="full", color=color, width=width, dash=dash)


def _band(steps, lo, hi, name: str, color: str) -> Band:
    x, lo, hi = np.asarray(steps, float), np.asarray(lo, float), np.asarray(hi, float)
    ok = np.isfinite(lo) & np.isfinite(hi)
    return Band(lo[ok], hi[ok], name, x=x[ok], color=rgba(color, 0.35), showlegend=True)


def run_charts(d: Diagnosis) -> list[Chart]:
    """Each metric's chart that this log has, in the page's order, captioned with what it shows and the chapter's
    reading (clip_ratio only if the clip ever acted)."""
    log, m, steps, W, cfg = d.log, d.log.metrics, d.log.steps, d.window, d.config
    say = run_captions(d)
    smooth = {k: rolling_mean(m[k], W) for k in ("reward",) if log.has(k)}

    def reward():
        out = [_line(steps, m["reward"], "reward", rgba(COLORS["main"], 0.45)),
               _line(steps, smooth["reward"], f"rolling mean (W = {W})", COLORS["main"], 3)]
        if len(log.reward_funcs) > 1:
            out += [_line(steps, m[f"rewards/{f}/mean"], label(f"rewards/{f}/mean"), FUNC_COLORS[i % 4], dash="dot")
                    for i, f in enumerate(log.reward_funcs)]
        return out

    def reward_std():
        r = np.clip(smooth["reward"], 0, 1)
        return [_line(steps, m["reward_std"], "reward_std", COLORS["main"]),
                _line(steps, np.sqrt(r * (1 - r)), "√(r̄(1 − r̄)) at the rolling mean reward: 0/1 rewards",
                      COLORS["expected"], 2, "dash")]

    def zero():
        return [_line(steps, m["frac_reward_zero_std"], "frac_reward_zero_std", rgba(COLORS["bad"], 0.45)),
                _line(steps, d.derived["zero_std_smooth"], f"rolling mean (W = {W})", COLORS["bad"], 3),
                _line(steps, d.derived["floor_smooth"], f"floor r̄^G + (1 − r̄)^G, G = {d.group_size} (rolling mean)",
                      COLORS["expected"], 2, "dash")]

    def split():
        return [_line(steps, d.derived["zero_std_smooth"], "all that teach nothing (rolling mean)", COLORS["expected"]),
                _band(steps, d.derived["all_wrong_lo"], d.derived["all_wrong_hi"], "all wrong (too hard)",
                      COLORS["bad"]),
                _band(steps, d.derived["all_correct_lo"], d.derived["all_correct_hi"], "all correct (too easy)",
                      COLORS["good"])]

    def entropy():
        return [_line(steps, m["entropy"], "entropy", rgba(COLORS["good"], 0.45)),
                _line(steps, d.derived["entropy_smooth"], f"rolling mean (W = {W})", COLORS["good"], 3)]

    def clip():
        return [_line(steps, m[name], name, color, 2) for name, color in (
            ("clip_ratio/region_mean", COLORS["main"]), ("clip_ratio/low_mean", COLORS["bad"]),
            ("clip_ratio/high_mean", COLORS["good"]), ("cispo_clip_ratio", COLORS["pin"])) if log.has(name)]

    def length():
        out = []
        if log.has("completions/min_length") and log.has("completions/max_length"):
            out.append(_band(steps, m["completions/min_length"], m["completions/max_length"], "min to max",
                             COLORS["grey"]))
        return out + [_line(steps, m["completions/mean_length"], "completions/mean_length", COLORS["main"], 2)]

    zero_needs = ("frac_reward_zero_std", "reward")
    charts = [("reward", ("reward",), reward), ("reward_std", ("reward_std", "reward"), reward_std),
              ("zero_std", zero_needs, zero), ("dead_split", zero_needs, split), ("entropy", ("entropy",), entropy),
              ("kl", ("kl",), lambda: [_line(steps, m["kl"], "kl", COLORS["main"], 2)]),
              ("clip", ("clip_ratio/region_mean",), clip), ("length", ("completions/mean_length",), length),
              ("grad_norm", ("grad_norm",), lambda: [_line(steps, m["grad_norm"], "grad_norm", COLORS["main"], 2)]),
              ("loss", ("loss",), lambda: [_line(steps, m["loss"], "loss", COLORS["main"], 2)])]
    clipping = [c for c in ("clip_ratio/region_mean", "cispo_clip_ratio") if log.has(c)]
    clipped = any(np.nanmax(m[c]) > 0 for c in clipping)
    out = []
    for key, needs, traces in charts:
        if (key == "clip" and not clipped) or (key != "clip" and not all(log.has(n) for n in needs)):
            continue
        title, y_title, reading = RUN_CHARTS[key]
        hlines = ()
        if key == "entropy":
            e0 = next(f for f in d.findings if f.key == "entropy_falling").numbers["start"]
            hlines = (((1 - cfg.entropy_drop) * e0, f"{1 - cfg.entropy_drop:.0%} of the start", "dot"),)
        out.append(Chart(title, traces(), x_title="step", y_title=y_title, height=340, hlines=hlines,
                         caption=" ".join(t for t in (say.get(key, ""), reading) if t)))
    return out


RUN_VIEW = View(
    "your_run", "Your run",
    intro=Text("Upload the log of a GRPO run and read its curves with the chapter: what every metric TRL logs means, "
               "and findings, each a stated rule with its threshold and the steps where it holds. Reads transformers' "
               "trainer_state.json (in every checkpoint folder), a CSV of per-step metrics under TRL's names (a W&B or "
               "TensorBoard export; train/ prefixes are fine), or python -m sim tinylm --trainer trl --json's summary.",
               md="Upload the log of a GRPO run and read its curves with the chapter: what every metric TRL logs "
                  "means, and findings, each a stated rule with its threshold and the steps where it holds. Reads "
                  "transformers' `trainer_state.json` (in every checkpoint folder), a CSV of per-step metrics under "
                  "TRL's names (a W&B or TensorBoard export; `train/` prefixes are fine), or "
                  "`python -m sim tinylm --trainer trl --json`'s summary."),
    controls=RUN_CONTROLS, lesson="app", why_app_only="it reads a visitor's file",
    what="A real GRPO run's log (TRL's trainer_state.json, a metrics CSV): each metric with the chapter's reading, "
         "and findings with their rule, threshold and steps.",
)  # fmt: skip


# ---- Your prompts ----

PROMPT_CONTROLS = (
    Num.of(PlanConfig, "group_size"),
    Num.of(PlanConfig, "batch_prompts", hi=1024),
    Num.of(ToyConfig, "lr", lo=0.05, hi=2.0, fmt="%.2f"),
    Num.of(ToyConfig, "iterations", lo=50, hi=500),
    Flag.of(ToyConfig, "dynamic_sampling"),
    Num.of(ToyConfig, "seed", hi=9999),
)
POOL_SEEDS = 8  # seeds of the pool toy's band
G_TICKS = (2, 4, 8, 16, 32, 64)
G_RANGE = (0.27, 1.84)  # log10 G: a little either side of 2 and 64
LOG_TICKS = (10, 30, 100, 300, 1000, 3000, 10000, 30000, 100000, 300000)


def plan_charts(p: dict, cfg: PlanConfig, counts, edges) -> list[Chart]:
    """The Your prompts page's four charts for a plan (sim.yourdata.plan.plan) and the pool's histogram."""
    G, gs, say = cfg.group_size, np.asarray(p["group_sizes"], dtype=float), plan_captions(p)
    g_axis = {"x_log": True, "x_ticks": G_TICKS, "x_range": G_RANGE}
    b = p["batch"]
    ks, mean, exact = np.array(p["passk"]["k"], dtype=float), np.array(p["passk"]["mean"]), np.array(
        p["passk"]["unbiased"])
    solid = exact == 1.0
    passk = [Line(mean[solid], "unbiased (n ≥ k)", x=ks[solid], reveal="full", color=COLORS["main"], width=3)
             ] if solid.any() else []
    passk.append(Line(mean, "held at pass@n where n < k" if solid.any() else "from the pass rates", x=ks,
                      reveal="full", color=COLORS["main"], width=2, dash="dot"))
    ds_x, ds_y = _points(gs, [np.nan if v is None else v for v in b["ds_answers"]])
    return [
        Chart("Groups that teach nothing, by group size", [
            Line(np.asarray(p["all_wrong"]), "all wrong (too hard)", x=gs, reveal="full", stackgroup="dead",
                 color=COLORS["bad"]),
            Line(np.asarray(p["all_correct"]), "all correct (too easy)", x=gs, reveal="full", stackgroup="dead",
                 color=COLORS["good"]),
            Line(np.asarray(p["equal_difficulty"]), "prompts all of the mean difficulty", x=gs, reveal="full",
                 color=COLORS["expected"], dash="dash"),
        ], x_title="group size G", y_title="share of groups", y_range=(0, 1), height=380, vlines=((G, f"G = {G}"),),
            caption=say["dead"], **g_axis),
        Chart(f"Answers per batch of {cfg.batch_prompts:,} prompts", [
            Line(np.asarray(b["answers"], dtype=float), "generated", x=gs, reveal="full", color=COLORS["main"],
                 width=3),
            Line(np.asarray(b["wasted_answers"], dtype=float), "in groups that teach nothing", x=gs, reveal="full",
                 color=COLORS["bad"]),
            Line(ds_y, "drawn by dynamic sampling to fill the batch", x=ds_x, reveal="full", color=COLORS["pin"],
                 dash="dash"),
        ], x_title="group size G", y_title="answers (log scale)", height=380, vlines=((G, ""),), y_log=True,
            y_ticks=LOG_TICKS, tick_text=(None, tuple(f"{t:,}" for t in LOG_TICKS)), caption=say["batch"], **g_axis),
        Chart("The pool's pass rates", [
            BarSeries((edges[:-1] + edges[1:]) / 2, np.asarray(counts, dtype=float), "prompts", colors=COLORS["main"],
                      width=np.diff(edges) * 0.95),
        ], x_title="base model's pass rate (c / n)", y_title="prompts", height=360, legend=False,
            caption=say["rates"] + " Left edge: too hard (all-wrong groups); right edge: too easy (all-correct)."),
        Chart("Base model's pass@k over these prompts", passk, x_title="k (log scale)", y_title="pass@k",
              y_range=(0, 1.02), height=360, x_log=True, x_ticks=tuple(float(k) for k in ks), x_range=(-0.05, 3.07),
              vlines=((64, "k = 64"),), caption=say["passk"]),
    ]  # fmt: skip


PROMPTS_VIEW = View(
    "your_prompts", "Your prompts",
    intro=Text("Will your prompts teach anything at this G? Upload your base model's pass rates, one row per prompt: "
               "correct,samples (c of n sampled answers were right) or pass_rate; a prompt or id column names the "
               "prompts. A group of G answers teaches nothing when all G get the same reward, all wrong or all "
               "correct (the chapter's p^G + (1 − p)^G, estimated here from your counts).",
               md="Will your prompts teach anything at this G? Upload your base model's pass rates, one row per "
                  "prompt: `correct,samples` (c of n sampled answers were right) or `pass_rate`; a `prompt` or `id` "
                  "column names the prompts. A group of G answers teaches nothing when all G get the same reward, all "
                  "wrong or all correct (the chapter's p^G + (1 − p)^G, estimated here from your counts)."),
    controls=PROMPT_CONTROLS, lesson="app", why_app_only="it reads a visitor's file",
    what="A real pool's pass rates (correct,samples or pass_rate per prompt): the groups that teach nothing for "
         "G = 2 … 64, the answers wasted, what dynamic sampling draws, pass@k, and the toy trained on this pool.",
)  # fmt: skip
