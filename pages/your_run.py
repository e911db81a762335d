"""Your run: a GRPO run's log (TRL's trainer_state.json, a CSV of TRL's metrics, a tinylm summary) read with
Chapter 15. The file -> sim/runlog.py -> sim/diagnose.py's findings -> the findings first, then each metric's
chart with the chapter's reading. The file stays in this session (ui/upload.py); the link holds G and W only."""

import functools

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from sim.diagnose import DiagnoseConfig, diagnose, json_text, rolling_mean, step_ranges
from sim.runlog import load_run_log
from sim.views.your_data import RUN_CHARTS, run_captions
from ui.charts import COLORS, figure, rgba, show
from ui.controls import Num, build_config
from ui.page import metric_row, open_page
from ui.upload import chart_text, file_line, md, show_text, user_file

EXAMPLE = "examples/tinylm_trl_trainer_state.json"
SPECS = [
    Num.of(DiagnoseConfig, "group_size", "G", "Group size G (TRL's num_generations)", hi=256, default=8),
    Num.of(DiagnoseConfig, "window", "W", "Rolling window W in steps (0: automatic)", hi=200, step=1),
]
MAX_RANGES = 30  # step ranges listed on the page (the JSON has every step)
ICON = {"warn": ":material/warning:", "info": ":material/info:", "ok": ":material/check_circle:",
        "unknown": ":material/help:"}

v = open_page(
    "Your run",
    "Upload the log of a GRPO run and read its curves with the chapter: what every metric TRL logs means, and "
    "findings, each a stated rule with its threshold and the steps where it holds. Reads transformers' "
    "`trainer_state.json` (in every checkpoint folder), a CSV of per-step metrics under TRL's names (a W&B or "
    "TensorBoard export; `train/` prefixes are fine), or `python -m sim tinylm --trainer trl --json`'s summary.",
    SPECS,
)
st.sidebar.caption("The link holds G and W, not your file: whoever opens it sees the example until they upload "
                   "their own.")
log, name, mine = user_file("run", "Your run's log", ("json", "csv"), load_run_log, EXAMPLE,
                            "the example: a real TRL GRPOTrainer run of TinyLM, 600 steps (G = 8, β = 0, μ = 1)",
                            help="trainer_state.json, a CSV with a header of TRL's metric names, or a tinylm summary")
file_line(name, f"File ({log.source})")
for note in log.notes:
    show_text(f"Note: {note}")

cfg = build_config(DiagnoseConfig, SPECS, v)
said = log.settings.get("group_size")
if said is not None and said != cfg.group_size:
    st.warning(f"The file's config says G = {said}; the rules use the slider's G = {cfg.group_size}. Set the "
               f"slider to {said}.", icon=":material/warning:")
d = diagnose(log, cfg)
s, m, steps = d.summary, log.metrics, log.steps
hold = [f for f in d.findings if f.holds]
pairs = [("Steps", f"{s['steps']:,}")]
if "reward" in s:
    pairs.append(("Reward, first → last", f"{s['reward']['start']:.2f} → {s['reward']['end']:.2f}"))
pairs += [("Warnings", str(sum(f.status == "warn" for f in hold))), ("G · window", f"{d.group_size} · {d.window}")]
metric_row(pairs)


def ranges(f) -> str:
    text = step_ranges(f.steps)
    parts = text.split(", ")
    return text if len(parts) <= MAX_RANGES else ", ".join(parts[:MAX_RANGES]) + f", … ({len(parts):,} ranges)"


def show_finding(f) -> None:
    with st.container(border=True):
        st.markdown(f"{ICON[f.status]} **{md(f.title)}**")
        lines = [f"**Rule.** {md(f.rule)}"]
        if f.holds and f.steps:
            lines.append(f"**Steps.** {md(ranges(f))}")
        if f.reading:
            lines.append(f"**Reading.** {md(f.reading)}")
        if f.remedy:
            lines.append(f"**What to do.** {md(f.remedy)}")
        st.markdown("  \n".join(lines))


st.subheader("Findings")
for f in sorted(hold, key=lambda f: f.status != "warn"):
    show_finding(f)
for status, label in (("ok", "Checked, does not hold"), ("unknown", "Not judged: the log lacks what the rule reads")):
    rest = [f for f in d.findings if f.status == status]
    if rest:
        with st.expander(f"{label} ({len(rest)})"):
            for f in rest:
                show_finding(f)

st.subheader("The curves")
st.caption(f"Thin lines: each logged step; thick: the rolling mean over W = {d.window} steps that the rules read.")
say = run_captions(d)


def line(fig: go.Figure, name: str, y, color: str, *, width: float = 1.5, dash: str | None = None,
         x=None) -> None:
    fig.add_scatter(x=steps if x is None else x, y=y, name=name, mode="lines", connectgaps=True,
                    line=dict(color=color, width=width, dash=dash))


def band(fig: go.Figure, name: str, lo, hi, color: str) -> None:
    fig.add_scatter(x=steps, y=hi, mode="lines", line=dict(width=0), showlegend=False, hoverinfo="skip")
    fig.add_scatter(x=steps, y=lo, mode="lines", line=dict(width=0), fill="tonexty", fillcolor=rgba(color, 0.35),
                    name=name)


def smooth(name: str):
    return rolling_mean(m[name], d.window)


def chart(key: str, draw) -> None:
    title, y_title, reading = RUN_CHARTS[key]
    fig = figure(title, "step", y_title, height=340)
    draw(fig)
    show(fig, f"run_{key}")
    st.caption(md(" ".join(t for t in (say.get(key, ""), reading) if t)))


def draw_reward(fig):
    line(fig, "reward", m["reward"], rgba(COLORS["main"], 0.45))
    line(fig, f"rolling mean (W = {d.window})", smooth("reward"), COLORS["main"], width=3)
    for i, func in enumerate(log.reward_funcs):
        if len(log.reward_funcs) > 1:
            line(fig, chart_text(f"rewards/{func}/mean"), m[f"rewards/{func}/mean"],
                 (COLORS["good"], COLORS["pin"], COLORS["bad"], COLORS["grey"])[i % 4], dash="dot")


def draw_reward_std(fig):
    line(fig, "reward_std", m["reward_std"], COLORS["main"])
    r = np.clip(smooth("reward"), 0, 1)
    line(fig, "√(r̄(1 − r̄)) at the rolling mean reward: 0/1 rewards", np.sqrt(r * (1 - r)), COLORS["expected"],
         width=2, dash="dash")


def draw_zero(fig):
    line(fig, "frac_reward_zero_std", m["frac_reward_zero_std"], rgba(COLORS["bad"], 0.45))
    line(fig, f"rolling mean (W = {d.window})", d.derived["zero_std_smooth"], COLORS["bad"], width=3)
    line(fig, f"floor r̄^G + (1 − r̄)^G, G = {d.group_size} (rolling mean)", d.derived["floor_smooth"],
         COLORS["expected"], width=2, dash="dash")


def draw_split(fig):
    line(fig, "all that teach nothing (rolling mean)", d.derived["zero_std_smooth"], COLORS["expected"], width=1.5)
    band(fig, "all wrong (too hard)", d.derived["all_wrong_lo"], d.derived["all_wrong_hi"], COLORS["bad"])
    band(fig, "all correct (too easy)", d.derived["all_correct_lo"], d.derived["all_correct_hi"], COLORS["good"])


def draw_entropy(fig):
    line(fig, "entropy", m["entropy"], rgba(COLORS["good"], 0.45))
    line(fig, f"rolling mean (W = {d.window})", d.derived["entropy_smooth"], COLORS["good"], width=3)
    e0 = next(f for f in d.findings if f.key == "entropy_falling").numbers["start"]
    fig.add_hline(y=(1 - cfg.entropy_drop) * e0, line_dash="dot", line_color=COLORS["grey"],
                  annotation_text=f"{1 - cfg.entropy_drop:.0%} of the start", annotation_position="top right")


def draw_kl(fig):
    line(fig, "kl", m["kl"], COLORS["main"], width=2)


def draw_clip(fig):
    for name, color in (("clip_ratio/region_mean", COLORS["main"]), ("clip_ratio/low_mean", COLORS["bad"]),
                        ("clip_ratio/high_mean", COLORS["good"]), ("cispo_clip_ratio", COLORS["pin"])):
        if log.has(name):
            line(fig, name, m[name], color, width=2)


def draw_length(fig):
    if log.has("completions/min_length") and log.has("completions/max_length"):
        band(fig, "min to max", m["completions/min_length"], m["completions/max_length"], COLORS["grey"])
    line(fig, "completions/mean_length", m["completions/mean_length"], COLORS["main"], width=2)


ZERO = ("frac_reward_zero_std", "reward")
CHARTS = [("reward", ("reward",), draw_reward), ("reward_std", ("reward_std", "reward"), draw_reward_std),
          ("zero_std", ZERO, draw_zero), ("dead_split", ZERO, draw_split),
          ("entropy", ("entropy",), draw_entropy), ("kl", ("kl",), draw_kl),
          ("clip", ("clip_ratio/region_mean",), draw_clip), ("length", ("completions/mean_length",), draw_length),
          ("grad_norm", ("grad_norm",), lambda fig: line(fig, "grad_norm", m["grad_norm"], COLORS["main"], width=2)),
          ("loss", ("loss",), lambda fig: line(fig, "loss", m["loss"], COLORS["main"], width=2))]
clipping = [c for c in ("clip_ratio/region_mean", "cispo_clip_ratio") if log.has(c)]
clipped = any(np.nanmax(m[c]) > 0 for c in clipping)
drawn = [(k, f) for k, needs, f in CHARTS if k != "clip" and all(log.has(n) for n in needs) or k == "clip" and clipped]
if not log.has("kl"):
    st.caption(md("No kl chart: the log has no kl, which TRL logs only when β ≠ 0 (see the findings)."))
if clipping and not clipped:
    st.caption(md(say["clip"]))
for i in range(0, len(drawn), 2):
    cols = st.columns(2)
    for col, (key, draw) in zip(cols, drawn[i: i + 2], strict=False):
        with col:
            chart(key, draw)

if len(log.reward_funcs) == 1:
    show_text(f"Reward function: {log.reward_funcs[0]}")
elif log.reward_funcs:
    show_text("Reward functions: " + ", ".join(log.reward_funcs))
st.download_button("The diagnosis (JSON)", functools.partial(json_text, d), file_name="grpo_diagnosis.json",
                   mime="application/json", key="dl_diagnosis", on_click="ignore",
                   help="every number and finding on this page, as `python -m sim diagnose FILE --json` prints it")
st.caption(md("The same from a terminal: python -m sim diagnose trainer_state.json (add --json for every number)."))
