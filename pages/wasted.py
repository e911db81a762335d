"""Wasted groups: P(group teaches nothing) = p^G + (1 - p)^G, as a heatmap, curves and the chapter's table."""

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from sim.exercises import no_signal_table, p_no_signal
from sim.toy import ToyConfig
from ui.charts import COLORS, figure, show
from ui.controls import Num
from ui.page import link, open_page, table
from ui.predict import predict

SPECS = [
    Num("p", "Solve rate p of the prompt", 0.0, 1.0, 0.05, 0.01, fmt="%.2f"),
    Num.of(ToyConfig, "group_size", "G", "Group size G", hi=64),
]

v = open_page(
    "Wasted groups",
    "If a prompt is solved with probability $p$, all $G$ answers get the same reward (all right or all wrong) "
    "with the probability below. Such a group has zero advantages and gives no gradient: you paid for $G$ "
    "generations and learned nothing.",
    SPECS,
)
p, G = v["p"], v["G"]
st.latex(r"P(\text{group teaches nothing}) = p^G + (1 - p)^G")

st.caption("Chapter 15, “Groups that teach nothing”: a prompt solved 5% of the time, with G = 8 and G = 64.")
sig8, sig64 = 1 - float(p_no_signal(0.05, 8)), 1 - float(p_no_signal(0.05, 64))
revealed = predict("wasted_g8", "A prompt is solved 5% of the time (p = 0.05). With G = 8, in what share of its groups "
                   "does at least one answer differ from the rest (a group that teaches something)?",
                   answer=round(100 * sig8, 1), unit="%", tolerance=5, fmt="{:.1f}")
revealed = predict("wasted_g64", "And with G = 64?", answer=round(100 * sig64, 1), unit="%", tolerance=5,
                   fmt="{:.1f}", explain="DeepSeekMath used G = 64; DeepSeek-R1-Zero G = 16.") and revealed
if not revealed:
    st.stop()  # the charts and the numbers wait for the guesses
none = float(p_no_signal(p, G))
m = st.columns(3)
m[0].metric(f"P(no signal) at p = {p:.2f}, G = {G}", f"{none:.1%}")
m[1].metric("P(signal)", f"{1 - none:.1%}")
m[2].metric("P(signal) at G = 64", f"{1 - float(p_no_signal(p, 64)):.1%}")
st.info(
    f"The chapter's case: p = 0.05 yields signal {sig8:.0%} of the time with G = 8 but {sig64:.0%} with G = 64. "
    "DeepSeekMath used G = 64; DeepSeek-R1-Zero G = 16."
)

ps = np.linspace(0, 1, 101)
Gs = np.arange(2, 65)
c1, c2 = st.columns(2)
with c1:
    fig = figure("P(group teaches nothing) over p and G", "p (solve rate)", "group size G", height=420)
    fig.add_trace(
        go.Heatmap(
            x=ps,
            y=Gs,
            z=p_no_signal(ps[None, :], Gs[:, None]),
            zmin=0,
            zmax=1,
            colorscale="Reds",
            colorbar=dict(title="P"),
        )
    )
    fig.add_scatter(
        x=[p], y=[G], mode="markers", marker=dict(size=14, color=COLORS["main"], symbol="x"), name="your setting"
    )
    fig.update_layout(hovermode="closest")
    show(fig, "wasted_heatmap")
    st.caption("Dark at both edges: too-hard prompts (p ≈ 0) teach nothing, too-easy ones (p ≈ 1) waste compute.")
with c2:
    fig = figure("P(no signal) against p", "p (solve rate)", "P(group teaches nothing)", height=420, y_range=[0, 1])
    for g, color in [(4, COLORS["grey"]), (8, COLORS["bad"]), (16, COLORS["good"]), (64, "black")]:
        fig.add_scatter(x=ps, y=p_no_signal(ps, g), name=f"G = {g}", line=dict(color=color))
    fig.add_scatter(x=ps, y=p_no_signal(ps, G), name=f"G = {G} (yours)", line=dict(color=COLORS["main"], width=4))
    fig.add_vline(x=p, line_dash="dot")
    show(fig, "wasted_curves")
    st.caption("Bigger groups rescue the extremes: the valley of useful prompts widens as G grows.")

st.subheader("The chapter's table")
tab = no_signal_table()
table(
    [
        {"p": f"{pp:.2f}", **{f"G = {g}": f"{x:.3f}" for g, x in zip(tab["group_size"], row, strict=True)}}
        for pp, row in zip(tab["p"], tab["p_no_signal"], strict=True)
    ],
    key="no_signal_table",
)
st.caption("Read it from both ends. RL can only reinforce what the model already sometimes does.")
link("pages/your_prompts.py", "This table for your own prompts: upload their pass rates (Your prompts)",
     ":material/dataset:")
