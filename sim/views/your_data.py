"""Your run and Your prompts, declared (sim/views/doc.py; the app only: they read a visitor's file): their controls,
and the document the app's server computes for the setting the page reports (`run_page`, `prompts_page`), drawn by
the renderer like every page's (assets/js/page.js). Each chart's reading (after Chapter 15, worded for the reward's
kind) and a caption with the numbers of the data on screen, read off the chart it sits under, are
sim/yourdata/words.py's; the numbers come from sim/yourdata (diagnose.py, plan.py). Every text is plain (the renderer
shows it as text): a finding or a list of prompts quotes the file. Text from the file reaches a chart only through
`label` (cut, invisible characters escaped, HTML-escaped: Plotly reads <b> in a name). The toy on a visitor's pool
computes in the browser (assets/js/toy_views.js pool_charts)."""

from __future__ import annotations

import dataclasses

import numpy as np

from sim.player.spec import COLORS, Band, BarSeries, Chart, Line, rgba
from sim.toy import ToyConfig
from sim.validate import neutral
from sim.views.controls import Flag, Num, build_config
from sim.views.doc import Caption, Charts, Code, Finding, Fold, Heading, Live, Metrics, Note, Table, Text, View
from sim.yourdata.datafile import cell_text
from sim.yourdata.diagnose import DiagnoseConfig, Diagnosis, rolling_mean, step_ranges
from sim.yourdata.plan import SHOWN_PROMPTS, PlanConfig, rate_histogram
from sim.yourdata.rules.length import length_cap
from sim.yourdata.words import (
    CHART_NEEDS,
    DS_LINE,
    RUN_CHARTS,
    cannot_show,
    kind_of,
    label,
    numbers,
    plan_cannot_show,
    plan_captions,
    reading,
    run_captions,
    smooth_name,
)

__all__ = ["PROMPTS_VIEW", "RUN_VIEW", "label", "prompts_page", "run_charts", "run_page"]

# ---- Your run ----

RUN_CONTROLS = (
    Num.of(DiagnoseConfig, "group_size", hi=256, default=8),
    Num.of(DiagnoseConfig, "window", hi=200, step=1),
)
FUNC_COLORS = (COLORS["good"], COLORS["pin"], COLORS["bad"], COLORS["grey"])
MAX_RANGES = 30  # step ranges listed in a finding (the JSON has every step)


def _points(x, y) -> tuple[np.ndarray, np.ndarray]:
    """The logged points of a metric (a step it was not logged at is left out: the line joins its neighbours)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    return x[ok], y[ok]


def _line(steps, y, name: str, color: str, width: float = 1.5, dash: str | None = None, **o) -> Line:
    x, y = _points(steps, y)
    return Line(y, name, x=x, reveal="full", color=color, width=width, dash=dash, **o)


def _band(steps, lo, hi, name: str, color: str) -> Band:
    x, lo, hi = np.asarray(steps, float), np.asarray(lo, float), np.asarray(hi, float)
    ok = np.isfinite(lo) & np.isfinite(hi)
    return Band(lo[ok], hi[ok], name, x=x[ok], color=rgba(color, 0.35), showlegend=True)


def run_charts(d: Diagnosis) -> list[Chart]:
    """Each metric's chart that this log has, in the page's order: a thin line for each logged step, a thick one
    for the rolling mean over W logged values the rules read; captioned with what it shows (its numbers read off
    it) and the chapter's reading for this reward's kind (clip_ratio only if the clip ever acted; the 0/1 lines and
    the dead-group split only where the rewards may be 0/1)."""
    log, m, steps, W, cfg = d.log, d.log.metrics, d.log.steps, d.window, d.config
    kind, smooth = kind_of(d.summary["binary_rewards"]), smooth_name(W)

    def rolled(name: str) -> tuple[np.ndarray, np.ndarray]:  # (steps that log it, its rolling mean there)
        at = log.logged([name])
        return steps[at], rolling_mean(m[name][at], W)

    def thin_thick(name: str, color: str, thin: str | None = None) -> list[Line]:
        return [_line(steps, m[name], thin or name, rgba(color, 0.45)), _line(*rolled(name), smooth, color, 3)]

    def reward():
        out = thin_thick("reward", COLORS["main"])
        if log.has("eval_reward"):
            out.append(_line(steps, m["eval_reward"], "eval_reward (evaluations)", COLORS["pin"], 2, "dot"))
        return out

    def funcs():
        out = []
        for i, f in enumerate(log.reward_funcs):
            name, color = f"rewards/{f}/mean", FUNC_COLORS[i % 4]
            if log.has(name):
                out += [_line(steps, m[name], label(f"{name} (each step)"), rgba(color, 0.4), showlegend=False),
                        _line(*rolled(name), label(name), color, 2.5)]
        return out

    def reward_std():
        out = [_line(steps, m["reward_std"], "reward_std", COLORS["main"])]
        if kind != "not 0/1":
            x, r = rolled("reward")
            r = np.clip(r, 0, 1)
            out.append(_line(x, np.sqrt(r * (1 - r)), "√(r̄(1 − r̄)) at the rolling mean reward: 0/1 rewards",
                             COLORS["expected"], 2, "dash"))
        return out

    def zero():
        out = [_line(steps, m["frac_reward_zero_std"], "frac_reward_zero_std", rgba(COLORS["bad"], 0.45)),
               _line(steps, d.derived["zero_std_smooth"], smooth, COLORS["bad"], 3)]
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
                _line(steps, d.derived["entropy_smooth"], smooth, COLORS["good"], 3)]

    def clip():
        return [_line(steps, m[name], name, color, 2) for name, color in (
            ("clip_ratio/region_mean", COLORS["main"]), ("clip_ratio/low_mean", COLORS["bad"]),
            ("clip_ratio/high_mean", COLORS["good"]), ("cispo_clip_ratio", COLORS["pin"])) if log.has(name)]

    def length():
        out = []
        if log.has("completions/min_length") and log.has("completions/max_length"):
            out.append(_band(steps, m["completions/min_length"], m["completions/max_length"], "min to max",
                             COLORS["grey"]))
        return out + thin_thick("completions/mean_length", COLORS["main"])

    draw = {"reward": reward, "funcs": funcs, "reward_std": reward_std, "zero_std": zero, "dead_split": split,
            "entropy": entropy, "kl": lambda: thin_thick("kl", COLORS["main"]), "clip": clip, "length": length,
            "grad_norm": lambda: thin_thick("grad_norm", COLORS["main"]),
            "loss": lambda: thin_thick("loss", COLORS["main"])}
    charts = {}
    for key, traces in draw.items():  # RUN_CHARTS' order
        needs = tuple(f"rewards/{f}/mean" for f in log.reward_funcs) if key == "funcs" else CHART_NEEDS[key]
        if _drawn(d, key, needs, kind):
            title, y_title = RUN_CHARTS[key]
            charts[key] = Chart(title, traces(), x_title="step", y_title=y_title, height=340,
                                hlines=_hlines(d, key, cfg))
    say = run_captions(d, charts)  # reads its numbers off the charts
    out = []
    for key, chart in charts.items():
        words = reading(key, kind)
        chart.given.extend(numbers(words))  # the chapter's constants (β = 0.04, Chapter 15)
        out.append(dataclasses.replace(chart, caption=" ".join(t for t in (say.get(key, ""), words) if t)))
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


def _ranges(steps) -> str:
    parts = step_ranges(steps).split(", ")
    if len(parts) <= MAX_RANGES:
        return ", ".join(parts)
    return ", ".join(parts[:MAX_RANGES]) + f", … ({len(parts):,} ranges)"


def finding(f) -> Finding:
    """A rule checked (sim/yourdata/rules Finding) as the page shows it: where it holds, the steps."""
    return Finding(f.status, f.title, f.rule, _ranges(f.steps) if f.holds and f.steps else "", f.reading, f.remedy)


def run_page(d: Diagnosis, said_group_size: int | None = None) -> list:
    """Your run's document for a diagnosis: the key numbers and a line per warning, then the charts (the first on
    the first screen, a phone's and a projector's), then each finding that holds in full, those that do not and
    those the log cannot judge folded, the reward functions' names and the command that says the same.
    `said_group_size`: the G the file's config says, where it differs from the page's."""
    top = [] if said_group_size is None or said_group_size == d.group_size else [Note(
        f"The file's config says G = {said_group_size}; the rules use the page's G = {d.group_size}. Set Group size G "
        f"to {said_group_size}.", "warning")]
    if d.log.not_grpo is not None:  # one line, nothing judged, nothing drawn
        return [*top, Note(d.findings[0].title, "info")]
    s, hold = d.summary, [f for f in d.findings if f.holds]
    warns = [f for f in hold if f.status == "warn"]
    pairs = [("Steps", f"{s['steps']:,}")]
    if "reward" in s:
        pairs.append(("Reward, first → last", f"{s['reward']['start']:.2f} → {s['reward']['end']:.2f}"))
    pairs += [("Warnings", str(len(warns))), ("G · window", f"{d.group_size} · {d.window}")]
    blocks = [*top, Metrics(pairs)]
    if warns:
        blocks.append(Note(f"{len(warns)} warning{'s' * (len(warns) > 1)}, each in full below the charts:\n"
                           + "\n".join(f"• {f.title}" for f in warns), "warning"))
    charts = run_charts(d)
    if charts:
        blocks.append(Charts("run_charts", charts, columns=2))
    else:
        blocks.append(Note("No chart to draw: this log has none of the metrics the charts read (reward, "
                           "rewards/<f>/mean, frac_reward_zero_std, entropy, kl, clip_ratio, completions/mean_length, "
                           "grad_norm, loss). The findings below say which rules it could judge.", "warning"))
    blocks.append(_curves_caption(d, charts))
    blocks += [Heading("Findings"), *(finding(f) for f in sorted(hold, key=lambda f: f.status != "warn"))]
    for status, key, what in (("ok", "run_ok", "Checked, does not hold"),
                              ("unknown", "run_unknown", "Not judged: the log lacks what the rule reads")):
        rest = [finding(f) for f in d.findings if f.status == status]
        if rest:
            blocks.append(Fold(key, f"{what} ({len(rest)})", rest))
    if d.log.reward_funcs:  # a file's text: cut and its invisible and control characters escaped (issue 43 row 5)
        blocks.append(Text(("Reward function: " if len(d.log.reward_funcs) == 1 else "Reward functions: ")
                           + ", ".join(cell_text(f) for f in d.log.reward_funcs)))
    return blocks + [Text("The same from a terminal (--json for every number, as the download below):"),
                     Code(f"python -m sim diagnose trainer_state.json --group-size {d.group_size}"
                          + (f" --window {d.config.window}" if d.config.window else ""), "Copy the command")]


def _curves_caption(d: Diagnosis, charts: list[Chart]) -> Caption:
    """Under the charts: what the thin and thick lines are, and what is not drawn and why."""
    say = run_captions(d, {})
    parts = [f"Thin lines: each logged step; thick: the rolling mean over W = {d.window} logged values, what the "
             "rules read."]
    if not d.log.has("kl"):
        parts.append("No kl chart: the log has no kl, which TRL logs only when β ≠ 0 (see the findings).")
    if "0 at every step" in say.get("clip", ""):
        parts.append(say["clip"])
    missing = cannot_show(d, [c for c in RUN_CHARTS if any(ch.title == RUN_CHARTS[c][0] for ch in charts)])
    if missing:
        parts.append(missing)
    text = " ".join(parts)
    return Caption(text, given=numbers(text))  # the window, the zeros of β and the clip: no chart's data


def upload_view(name: str, title: str, intro: Text, controls, what: str) -> View:
    """A page that reads a visitor's file: the app's only (a lesson has no server to read it with); the app's
    server computes its document for the setting the page reports."""
    return View(name, title, intro=intro, controls=controls, lesson="app", why_app_only="it reads a visitor's file",
                what=what, server=True, fold_intro=True)


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
FOLD_AT = 10  # a list of more prompts than this starts folded


def plan_charts(p: dict, cfg: PlanConfig, counts, edges) -> list[Chart]:
    """The Your prompts page's four charts for a plan (sim.yourdata.plan.plan) and the pool's histogram, each
    captioned with what it shows at the page's G, its numbers read off it."""
    G, gs = cfg.group_size, np.asarray(p["group_sizes"], dtype=float)
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
    charts = {
        "dead": Chart("Groups that teach nothing, by group size", [
            Line(np.asarray(p["all_wrong"]), "all wrong (too hard)", x=gs, reveal="full", stackgroup="dead",
                 color=COLORS["bad"]),
            Line(np.asarray(p["all_correct"]), "all correct (too easy)", x=gs, reveal="full", stackgroup="dead",
                 color=COLORS["good"]),
            Line(np.asarray(p["equal_difficulty"]), "prompts all of the mean difficulty", x=gs, reveal="full",
                 color=COLORS["expected"], dash="dash"),
        ], x_title="group size G", y_title="share of groups", y_range=(0, 1), height=380, vlines=((G, f"G = {G}"),),
            **g_axis),
        "batch": Chart(f"Answers per batch of {cfg.batch_prompts:,} prompts", [
            Line(np.asarray(b["answers"], dtype=float), "generated", x=gs, reveal="full", color=COLORS["main"],
                 width=3),
            Line(np.asarray(b["wasted_answers"], dtype=float), "in groups that teach nothing", x=gs, reveal="full",
                 color=COLORS["bad"]),
            *([Line(ds_y, DS_LINE, x=ds_x, reveal="full", color=COLORS["pin"], dash="dash")]
              if ds_x.size else []),  # none where every group is dead at every G
        ], x_title="group size G", y_title="answers (log scale)", height=380, vlines=((G, ""),), y_log=True,
            y_ticks=LOG_TICKS, tick_text=(None, tuple(f"{t:,}" for t in LOG_TICKS)), **g_axis),
        "rates": Chart("The pool's pass rates", [
            BarSeries((edges[:-1] + edges[1:]) / 2, np.asarray(counts, dtype=float), "prompts", colors=COLORS["main"],
                      width=np.diff(edges) * 0.95),
        ], x_title="base model's pass rate (c / n)", y_title="prompts", height=360, legend=False),
        "passk": Chart("Base model's pass@k over these prompts", passk, x_title="k (log scale)", y_title="pass@k",
                       y_range=(0, 1.02), height=360, x_log=True, x_ticks=tuple(float(k) for k in ks),
                       x_range=(-0.05, 3.07), vlines=((64, "k = 64"),)),
    }  # fmt: skip
    say = plan_captions(p, charts)  # reads its numbers off the charts
    say["rates"] += " Left edge: too hard (all-wrong groups); right edge: too easy (all-correct)."
    return [dataclasses.replace(c, caption=say[k]) for k, c in charts.items()]


def prompts_page(pool, values: dict) -> list:
    """Your prompts' document for a pool and the page's setting (by URL key): the key numbers, the charts (the
    first on the first screen), the table by G, the prompts that never teach, and the chapter's toy trained on this
    pool, computed in the browser."""
    from sim.yourdata.plan import plan

    cfg = build_config(PlanConfig, PROMPT_CONTROLS, values)
    p = plan(pool, cfg)
    G, gs, at = cfg.group_size, p["group_sizes"], p["at_group_size"]
    blocks = [Metrics([("Prompts", f"{p['summary']['prompts']:,}"),
                       ("Mean pass rate", f"{p['summary']['mean_rate']:.3f}"),
                       (f"Dead groups at G = {G}", f"{at['no_signal']:.1%}"),
                       ("Never solved (c = 0)", f"{p['never_teach']['all_wrong']['count']:,}")])]
    note = plan_cannot_show(p)
    if note:
        blocks.append(Note(note, "warning"))
    blocks += [Charts("plan_charts", plan_charts(p, cfg, *rate_histogram(pool)), columns=2), Caption(p["estimator"]),
               Heading("By group size")]
    ladder = sorted(set(p["ladder"]) | {G})
    ds = p["batch"]["ds_groups"]
    rows = [[g, f"{p['all_wrong'][i]:.3f}", f"{p['all_correct'][i]:.3f}", f"{p['no_signal'][i]:.3f}",
             f"{p['equal_difficulty'][i]:.3f}", f"{p['batch']['wasted_answers'][i]:,.0f}",
             "never fills" if ds[i] is None else f"{ds[i]:,.1f}"] for g in ladder for i in [gs.index(g)]]
    blocks += [Table("plan_ladder", ["G", "all wrong", "all correct", "teach nothing", "equal difficulty",
                                     "answers wasted / batch", "dynamic sampling: groups drawn"], rows),
               Caption(f"Per batch of {cfg.batch_prompts:,} prompts; dynamic sampling keeps drawing prompts until "
                       f"{cfg.batch_prompts:,} groups have mixed rewards. Every G from 2 to 64 is in the JSON "
                       "(python -m sim plan FILE --json).")]
    return blocks + _never_teach(p) + _pool_toy(pool, p, values)


def _never_teach(p: dict) -> list:
    """The prompts no G teaches: never solved, always solved, their lines (the file's ids as plain text)."""
    nt, out = p["never_teach"], [Heading("Prompts that never teach")]
    for side, what in (("all_wrong", "never solved (c = 0): all wrong at every G, too hard until the model improves "
                                     "elsewhere"),
                       ("all_correct", "always solved (c = n): all correct at every G, already learned")):
        part = nt[side]
        out.append(Text(f"{part['count']:,} prompts ({part['share']:.1%}) {what}."))
        if part["count"]:
            shown = [f"line {line}" + (f": {neutral(pid)[:80]}" if part["ids"] is not None else "")
                     for line, pid in zip(part["lines"][:SHOWN_PROMPTS],
                                          (part["ids"] or part["lines"])[:SHOWN_PROMPTS], strict=True)]
            more = part["count"] - len(shown)
            lines = "\n".join(shown) + (f"\n… and {more:,} more (in the CSV at the end of the page)" if more > 0
                                        else "")
            out.append(Fold(f"never_{side}", f"Their lines ({part['count']:,})", [Code(lines, "Copy the lines")],
                            open=part["count"] <= FOLD_AT))
    if "rule_of_three" in nt:
        r3 = nt["rule_of_three"]
        out.append(Caption(f"c = 0 of n = {r3['median_samples']:g} samples (median) is weak evidence: the true rate "
                           f"may still be up to 3/n = {r3['rate_up_to']:.3g} (95%), where G = 64 would find a success "
                           f"{r3['signal_at_64_up_to']:.0%} of the time. Sample more before dropping them."))
    return out


def _pool_toy(pool, p: dict, values: dict) -> list:
    """The chapter's toy with this pool's prompts (computed in the browser: the difficulties travel in the
    request, this page's only), or the toy's refusal in one line."""
    d = np.array(p["toy"]["difficulties"])
    out = [Heading("How this pool would train"),
           Text(f"The chapter's toy (Training dynamics) with your prompts in place of its 24: prompt j starts at your "
                f"base model's rate, p_j = σ(w + u_j − d_j) with d_j = −logit(rate_j) and w = u_j = 0; "
                f"{p['toy']['reduction']}. A rate of 0 or 1 starts at d = ±10 (p = 4.5e-5 or 0.99995).")]
    try:
        toy = build_config(ToyConfig, PROMPT_CONTROLS, values, group_size=p["config"]["group_size"],
                           n_prompts=len(d), difficulties=tuple(map(float, d)), n_seeds=POOL_SEEDS)
    except ValueError as e:
        return out + [Note(f"The toy cannot run this pool: {e}", "error")]
    return out + [Live("your_prompts", {"view": "your_prompts", "config": dataclasses.asdict(toy), "columns": 2,
                                        "classroom_columns": 3, "reduction": p["toy"]["reduction"],
                                        "pool_size": len(pool.rate)}),
                  Caption("A caricature: the toy samples every prompt at every iteration, and one shared skill w "
                          "stands for what a network's weights share across prompts. It shows the shape (which "
                          "prompts wait, how the dead groups move from all wrong to all correct), not your run's "
                          "speed.")]


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
