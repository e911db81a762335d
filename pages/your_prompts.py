"""Your prompts: a pool's base-model pass rates (a CSV, correct,samples or pass_rate) read with Chapter 15's
"Groups that teach nothing": for G = 2..64 the share of dead groups, the answers wasted, dynamic sampling's
draws, the prompts that never teach, pass@k, and the chapter's toy trained on this pool in the player.
The file stays in this session (ui/upload.py); the link holds the settings only."""

import functools

import numpy as np
import streamlit as st

from sim.plan import SHOWN_PROMPTS, PlanConfig, load_pool, plan, prompt_csv, rate_histogram
from sim.toy import ToyConfig
from sim.validate import neutral
from sim.views.your_data import plan_captions, pool_charts
from ui.charts import COLORS, figure, rgba, show
from ui.controls import Flag, Num, build_config
from ui.page import metric_row, open_page, presenter, table
from ui.player import player
from ui.upload import file_line, md, private_toy_runs, show_text, user_file

EXAMPLE = "examples/tinylm_prompts.csv"
SEEDS = 8  # seeds of the toy's band
G_TICKS = [2, 4, 8, 16, 32, 64]
LOG_TICKS = [10, 30, 100, 300, 1000, 3000, 10000, 30000, 100000, 300000]
SPECS = [
    Num.of(PlanConfig, "group_size", "G", "Group size G"),
    Num.of(PlanConfig, "batch_prompts", "B", "Prompts per batch B", hi=1024),
    Num.of(ToyConfig, "lr", "lr", "Toy: learning rate", lo=0.05, hi=2.0, fmt="%.2f"),
    Num.of(ToyConfig, "iterations", "T", "Toy: iterations", lo=50, hi=500),
    Flag.of(ToyConfig, "dynamic_sampling", "dyn", "Toy: dynamic sampling (DAPO)"),
    Num.of(ToyConfig, "seed", "seed", "Toy: seed", hi=9999),
]

def g_axis(fig) -> None:
    """G on a log axis: the small groups, where the share changes fastest, get room."""
    fig.update_xaxes(type="log", tickvals=G_TICKS, ticktext=[str(g) for g in G_TICKS], range=[0.27, 1.84])


v = open_page(
    "Your prompts",
    "Will your prompts teach anything at this G? Upload your base model's pass rates, one row per prompt: "
    "`correct,samples` (c of n sampled answers were right) or `pass_rate`; a `prompt` or `id` column names the "
    "prompts. A group of G answers teaches nothing when all G get the same reward, all wrong or all correct "
    "(the chapter's p^G + (1 − p)^G, estimated here from your counts).",
    SPECS,
)
st.sidebar.caption("The link holds these settings, not your file: whoever opens it sees the example until they "
                   "upload their own.")
pool, name, mine = user_file("prompts", "Your prompts' pass rates (CSV)", ("csv",), load_pool, EXAMPLE,
                             "the example: TinyLM's SFT model on 512 of its training prompts, 64 samples each",
                             help="columns correct,samples or pass_rate; optional prompt or id")
file_line(name, "File")
for note in pool.notes:
    show_text(f"Note: {note}")

cfg = build_config(PlanConfig, SPECS, v)
p = plan(pool, cfg)
G, gs, say = cfg.group_size, p["group_sizes"], plan_captions(p)
i = gs.index(G)
at = p["at_group_size"]
metric_row([("Prompts", f"{p['summary']['prompts']:,}"), ("Mean pass rate", f"{p['summary']['mean_rate']:.3f}"),
            (f"Dead groups at G = {G}", f"{at['no_signal']:.1%}"),
            ("Never solved (c = 0)", f"{p['never_teach']['all_wrong']['count']:,}")])
st.caption(md(p["estimator"]))

left, right = st.columns(2)
with left:
    fig = figure("Groups that teach nothing, by group size", "group size G", "share of groups", height=380,
                 y_range=[0, 1])
    fig.add_scatter(x=gs, y=p["all_wrong"], name="all wrong (too hard)", stackgroup="dead",
                    line=dict(color=COLORS["bad"]), fillcolor=rgba(COLORS["bad"], 0.5))
    fig.add_scatter(x=gs, y=p["all_correct"], name="all correct (too easy)", stackgroup="dead",
                    line=dict(color=COLORS["good"]), fillcolor=rgba(COLORS["good"], 0.5))
    fig.add_scatter(x=gs, y=p["equal_difficulty"], name="prompts all of the mean difficulty",
                    line=dict(color=COLORS["expected"], dash="dash"))
    fig.add_vline(x=G, line_dash="dot", annotation_text=f"G = {G}", annotation_position="top right")
    g_axis(fig)
    show(fig, "plan_dead")
    st.caption(md(say["dead"]))
with right:
    b = p["batch"]
    fig = figure(f"Answers per batch of {cfg.batch_prompts:,} prompts", "group size G", "answers (log scale)",
                 height=380)
    fig.add_scatter(x=gs, y=b["answers"], name="generated", line=dict(color=COLORS["main"], width=3))
    fig.add_scatter(x=gs, y=b["wasted_answers"], name="in groups that teach nothing", line=dict(color=COLORS["bad"]))
    fig.add_scatter(x=gs, y=b["ds_answers"], name="drawn by dynamic sampling to fill the batch",
                    line=dict(color=COLORS["pin"], dash="dash"))
    fig.update_yaxes(type="log", tickvals=LOG_TICKS, ticktext=[f"{t:,}" for t in LOG_TICKS])
    fig.add_vline(x=G, line_dash="dot")
    g_axis(fig)
    show(fig, "plan_batch")
    st.caption(md(say["batch"]))

left, right = st.columns(2)
with left:
    counts, edges = rate_histogram(pool)
    fig = figure("The pool's pass rates", "base model's pass rate (c / n)", "prompts", height=360)
    fig.add_bar(x=(edges[:-1] + edges[1:]) / 2, y=counts, width=np.diff(edges) * 0.95, name="prompts",
                marker_color=COLORS["main"])
    fig.update_layout(hovermode="closest", showlegend=False)
    show(fig, "plan_rates")
    st.caption(md(say["rates"] + " Left edge: too hard (all-wrong groups); right edge: too easy (all-correct)."))
with right:
    ks, mean, exact = np.array(p["passk"]["k"]), np.array(p["passk"]["mean"]), np.array(p["passk"]["unbiased"])
    fig = figure("Base model's pass@k over these prompts", "k (log scale)", "pass@k", height=360, y_range=[0, 1.02])
    solid = exact == 1.0
    if solid.any():
        fig.add_scatter(x=ks[solid], y=mean[solid], name="unbiased (n ≥ k)", line=dict(color=COLORS["main"], width=3))
    fig.add_scatter(x=ks, y=mean, name="with the plug-in where n < k" if solid.any() else "from the pass rates",
                    line=dict(color=COLORS["main"], width=2, dash="dot"))
    fig.update_xaxes(type="log", tickvals=ks.tolist(), ticktext=[str(k) for k in ks], range=[-0.05, 3.07])
    fig.add_vline(x=64, line_dash="dot", line_color=COLORS["grey"], annotation_text="k = 64",
                  annotation_position="top left")
    show(fig, "plan_passk")
    st.caption(md(say["passk"]))

st.subheader("By group size")
ladder = sorted(set(p["ladder"]) | {G})
table([{"G": g, "all wrong": f"{p['all_wrong'][gs.index(g)]:.3f}",
        "all correct": f"{p['all_correct'][gs.index(g)]:.3f}",
        "teach nothing": f"{p['no_signal'][gs.index(g)]:.3f}",
        "equal difficulty": f"{p['equal_difficulty'][gs.index(g)]:.3f}",
        "answers wasted / batch": f"{p['batch']['wasted_answers'][gs.index(g)]:,.0f}",
        "dynamic sampling: groups drawn": ("never fills" if (x := p["batch"]["ds_groups"][gs.index(g)]) is None
                                           else f"{x:,.1f}")} for g in ladder], key="plan_ladder")
st.caption(md(f"Per batch of {cfg.batch_prompts:,} prompts; dynamic sampling keeps drawing prompts until "
              f"{cfg.batch_prompts:,} groups have mixed rewards. Every G from 2 to 64 is in the JSON "
              "(python -m sim plan FILE --json)."))

st.subheader("Prompts that never teach")
nt = p["never_teach"]
for side, what in (("all_wrong", "never solved (c = 0): all wrong at every G, too hard until the model "
                                 "improves elsewhere"),
                   ("all_correct", "always solved (c = n): all correct at every G, already learned")):
    part = nt[side]
    st.markdown(md(f"{part['count']:,} prompts ({part['share']:.1%}) {what}."))
    if part["count"]:
        shown = [f"line {line}" + (f": {neutral(pid)[:80]}" if part["ids"] is not None else "")
                 for line, pid in zip(part["lines"][:SHOWN_PROMPTS], (part["ids"] or part["lines"])[:SHOWN_PROMPTS],
                                      strict=True)]
        more = part["count"] - len(shown)
        show_text("\n".join(shown) + (f"\n… and {more:,} more (in the CSV below)" if more > 0 else ""))
if "rule_of_three" in nt:
    r3 = nt["rule_of_three"]
    st.caption(md(f"c = 0 of n = {r3['median_samples']:g} samples (median) is weak evidence: the true rate may still "
                  f"be up to 3/n = {r3['rate_up_to']:.3g} (95%), where G = 64 would find a success "
                  f"{r3['signal_at_64_up_to']:.0%} of the time. Sample more before dropping them."))
st.download_button(f"Every prompt at G = {G} (CSV)", functools.partial(prompt_csv, pool, G),
                   file_name=f"prompts_G{G}.csv", mime="text/csv", key="dl_prompts", on_click="ignore",
                   help="one row per prompt: its line, counts, P(all wrong), P(all correct), P(signal); formula-like "
                        "prompt text is neutralised for spreadsheets")

st.subheader("How this pool would train")
d = np.array(p["toy"]["difficulties"])
st.markdown(md(f"The chapter's toy (Training dynamics) with your prompts in place of its 24: prompt j starts at your "
               f"base model's rate, p_j = σ(w + u_j − d_j) with d_j = −logit(rate_j) and w = u_j = 0; "
               f"{p['toy']['reduction']}. A rate of 0 or 1 starts at d = ±10 (p = 4.5e-5 or 0.99995)."))
try:
    toy = build_config(ToyConfig, SPECS, v, group_size=G, n_prompts=len(d), difficulties=tuple(map(float, d)),
                       n_seeds=SEEDS)
    run, exp = private_toy_runs(toy)
except ValueError as e:
    st.error("The toy cannot run this pool:", icon=":material/error:")
    show_text(str(e))
    st.stop()
player("your_prompts", T=toy.iterations, charts=pool_charts(toy, run, exp, p["toy"]["reduction"], len(pool.rate),
                                                            big=presenter()),
       columns=3 if presenter() else 2, classroom=presenter())
st.caption(md("A caricature: the toy samples every prompt at every iteration, and one shared skill w stands for what "
              "a network's weights share across prompts. It shows the shape (which prompts wait, how the dead "
              "groups move from all wrong to all correct), not your run's speed."))
