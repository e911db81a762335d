"""Your run and Your prompts, declared (sim/views/doc.py; the app only: they read a visitor's file): their controls,
charts and the documents below the findings (run_document, plan_document). Each chart's reading (after Chapter 15,
worded for the reward's kind) and a caption that says what it shows for the data on screen, with its numbers, are
sim/yourdata/words.py's; the numbers come from sim/yourdata (diagnose.py, plan.py). Text from the file reaches a
chart only through `label` (cut, invisible characters escaped, HTML-escaped: Plotly reads <b> in a name). The toy on
a visitor's pool computes in the browser (assets/js/toy_views.js pool_charts)."""

from __future__ import annotations

import html

import numpy as np

from sim.player.spec import COLORS, Band, BarSeries, Chart, Line, rgba
from sim.toy import ToyConfig
from sim.views.controls import Flag, Num
from sim.views.doc import Caption, Charts, Heading, Note, Text, View
from sim.yourdata.datafile import cell_text
from sim.yourdata.diagnose import DiagnoseConfig, Diagnosis, rolling_mean
from sim.yourdata.plan import PlanConfig
from sim.yourdata.rules.length import length_cap
from sim.yourdata.words import (
    CHART_NEEDS,
    RUN_CHARTS,
    cannot_show,
    kind_of,
    plan_cannot_show,
    plan_captions,
    reading,
    run_captions,
)


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
    reading for this reward's kind (clip_ratio only if the clip ever acted; the 0/1 lines and the dead-group split
    only where the rewards may be 0/1)."""
    log, m, steps, W, cfg = d.log, d.log.metrics, d.log.steps, d.window, d.config
    say, kind = run_captions(d), kind_of(d.summary["binary_rewards"])
    smooth = {k: rolling_mean(m[k][log.logged([k])], W) for k in ("reward",) if log.has(k)}
    at = {k: steps[log.logged([k])] for k in ("reward",) if log.has(k)}

    def reward():
        out = [_line(steps, m["reward"], "reward", rgba(COLORS["main"], 0.45)),
               _line(at["reward"], smooth["reward"], f"rolling mean (W = {W})", COLORS["main"], 3)]
        if log.has("eval_reward"):
            out.append(_line(steps, m["eval_reward"], "eval_reward (evaluations)", COLORS["pin"], 2, "dot"))
        return out

    def funcs():
        return [_line(steps, m[f"rewards/{f}/mean"], label(f"rewards/{f}/mean"), FUNC_COLORS[i % 4], 2)
                for i, f in enumerate(log.reward_funcs) if log.has(f"rewards/{f}/mean")]

    def reward_std():
        out = [_line(steps, m["reward_std"], "reward_std", COLORS["main"])]
        if kind != "not 0/1":
            r = np.clip(smooth["reward"], 0, 1)
            out.append(_line(at["reward"], np.sqrt(r * (1 - r)), "√(r̄(1 − r̄)) at the rolling mean reward: 0/1 "
                             "rewards", COLORS["expected"], 2, "dash"))
        return out

    def zero():
        out = [_line(steps, m["frac_reward_zero_std"], "frac_reward_zero_std", rgba(COLORS["bad"], 0.45)),
               _line(steps, d.derived["zero_std_smooth"], f"rolling mean (W = {W})", COLORS["bad"], 3)]
        if kind != "not 0/1":
            out.append(_line(steps, d.derived["floor_smooth"], f"floor r̄^G + (1 − r̄)^G, G = {d.group_size} "
                             "(rolling mean)", COLORS["expected"], 2, "dash"))
        return out

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

    def one(name):
        return lambda: [_line(steps, m[name], name, COLORS["main"], 2)]

    draw = {"reward": reward, "funcs": funcs, "reward_std": reward_std, "zero_std": zero, "dead_split": split,
            "entropy": entropy, "kl": one("kl"), "clip": clip, "length": length, "grad_norm": one("grad_norm"),
            "loss": one("loss")}
    out = []
    for key, traces in draw.items():  # RUN_CHARTS' order
        needs = tuple(f"rewards/{f}/mean" for f in log.reward_funcs) if key == "funcs" else CHART_NEEDS[key]
        if not _drawn(d, key, needs, kind):
            continue
        title, y_title = RUN_CHARTS[key]
        out.append(Chart(title, traces(), x_title="step", y_title=y_title, height=340, hlines=_hlines(d, key, cfg),
                         caption=" ".join(t for t in (say.get(key, ""), reading(key, kind)) if t)))
    return out


def _drawn(d: Diagnosis, key: str, needs: tuple, kind: str) -> bool:
    """Does the page draw chart `key` for this log?"""
    log = d.log
    if key == "clip":
        clipping = [c for c in ("clip_ratio/region_mean", "cispo_clip_ratio") if log.has(c)]
        return any(np.nanmax(log.metrics[c]) > 0 for c in clipping)
    if key == "funcs":
        return any(log.has(n) for n in needs)
    if key in ("zero_std", "dead_split") and "zero_std_smooth" not in d.derived:
        return False  # reward and frac_reward_zero_std never at the same step
    if key == "dead_split" and kind == "not 0/1":
        return False
    return all(log.has(n) for n in needs)


def _hlines(d: Diagnosis, key: str, cfg) -> tuple:
    if key == "entropy":
        e0 = next(f for f in d.findings if f.key == "entropy_falling").numbers["start"]
        return (((1 - cfg.entropy_drop) * e0, f"{1 - cfg.entropy_drop:.0%} of the start", "dot"),)
    if key == "length":
        cap, _ = length_cap(d.log, cfg)
        return ((cap, f"length cap {cap:,.0f}", "dot"),) if cap else ()
    return ()


def run_document(d: Diagnosis) -> list:
    """The curves below the findings: a heading, what the thin and thick lines are, what is not drawn and why,
    the charts (or, with none to draw, a note saying so)."""
    if d.log.not_grpo is not None:  # one line, nothing judged, nothing drawn
        return [Note(d.findings[0].title, "info")]
    charts = run_charts(d)
    say = run_captions(d)
    blocks = [Heading("The curves"),
              Caption(f"Thin lines: each logged step; thick: the rolling mean over W = {d.window} logged values that "
                      "the rules read.")]
    if not d.log.has("kl"):
        blocks.append(Caption("No kl chart: the log has no kl, which TRL logs only when β ≠ 0 (see the findings)."))
    if "clip" in say and "0 at every step" in say["clip"]:
        blocks.append(Caption(say["clip"]))
    missing = cannot_show(d, [c for c in RUN_CHARTS if any(ch.title == RUN_CHARTS[c][0] for ch in charts)])
    if missing:
        blocks.append(Caption(missing))
    if charts:
        blocks.append(Charts("run_charts", charts, columns=2))
    else:
        blocks.append(Note("No chart to draw: this log has none of the metrics the charts read (reward, "
                           "rewards/<f>/mean, frac_reward_zero_std, entropy, kl, clip_ratio, completions/mean_length, "
                           "grad_norm, loss). The findings above say which rules it could judge.", "warning"))
    return blocks


def upload_view(name: str, title: str, intro: Text, controls, what: str) -> View:
    """A page that reads a visitor's file: the app's only (a lesson has no server to read it with)."""
    return View(name, title, intro=intro, controls=controls, lesson="app", why_app_only="it reads a visitor's file",
                what=what)


RUN_VIEW = upload_view(
    "your_run", "Your run",
    Text.of("Upload the log of a GRPO run and read its curves with the chapter: what every metric TRL logs "
            "means, and findings, each a stated rule with its threshold and the steps where it holds. Reads "
            "transformers' `trainer_state.json` (in every checkpoint folder, TRL 0.14 to 1.16), a saved "
            "`log_history`, JSON Lines of metrics (verl's file logger or one `{\"step\": N, ...}` per line), a CSV of "
            "per-step metrics (a W&B or TensorBoard export, `train/` prefixes fine, or a W&B chart panel's CSV), "
            "the console output of a TRL or verl run, OpenRLHF's names, or `python -m sim tinylm --trainer trl "
            "--json`'s summary."),
    RUN_CONTROLS,
    "A real GRPO run's log (TRL's trainer_state.json, a metrics CSV, verl's JSON Lines): each metric with the "
    "chapter's reading, and findings with their rule, threshold and steps.",
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


def plan_document(p: dict, cfg: PlanConfig, counts, edges) -> list:
    """The charts of a plan, after a note when the pool leaves something out (every prompt never or always
    solved)."""
    note = plan_cannot_show(p)
    return ([Note(note, "warning")] if note else []) + [Charts("plan_charts", plan_charts(p, cfg, counts, edges),
                                                               columns=2)]


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
            *([Line(ds_y, "drawn by dynamic sampling to fill the batch", x=ds_x, reveal="full", color=COLORS["pin"],
                    dash="dash")] if ds_x.size else []),  # none where every group is dead at every G
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


PROMPTS_VIEW = upload_view(
    "your_prompts", "Your prompts",
    Text.of("Will your prompts teach anything at this G? Upload your base model's pass rates, one row per "
            "prompt: `correct,samples` (c of n sampled answers were right) or `pass_rate`; a `prompt` or `id` "
            "column names the prompts. A group of G answers teaches nothing when all G get the same reward, all "
            "wrong or all correct (the chapter's p^G + (1 − p)^G, estimated here from your counts)."),
    PROMPT_CONTROLS,
    "A real pool's pass rates (correct,samples or pass_rate per prompt): the groups that teach nothing for "
    "G = 2 … 64, the answers wasted, what dynamic sampling draws, pass@k, and the toy trained on this pool.",
)  # fmt: skip
