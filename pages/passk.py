"""pass@k: the unbiased estimator, the chapter's crossing curves, the toy before/after, the sharpening toy (the
toys computed in the browser: ui/live.py)."""

import dataclasses

import numpy as np
import streamlit as st

from sim.passk import mean_pass_at_k_known_p, pass_at_k, pass_at_k_known_p
from sim.sharpen import CHAPTER_P_AFTER, CHAPTER_P_BEFORE, SharpenConfig, sharpening_summary
from sim.views.passk import CONTROLS as SPECS
from sim.views.passk import KS
from ui.charts import COLORS, figure, passk_axis, show
from ui.controls import build_config
from ui.live import live_view
from ui.page import link, open_page, presenter
from ui.predict import predict


def curves_chart(title: str, before, after, key: str, names=("before RL", "after RL"), per_problem=None) -> dict:
    """Mean pass@k of the models before and after (known per-problem p), on a log-k axis with a marker at
    k = 64; `per_problem` names draw each problem's own curve too. Returns the curves."""
    fig = figure(title, "k (log scale)", "pass@k", y_range=[0, 1.02])
    curves = {"before": mean_pass_at_k_known_p(before, KS), "after": mean_pass_at_k_known_p(after, KS)}
    for i, label in enumerate(per_problem or ()):
        for p, color, when in ((before[i], COLORS["grey"], names[0]), (after[i], COLORS["main"], names[1])):
            fig.add_scatter(x=KS, y=pass_at_k_known_p(p, KS), name=f"problem {label}, {when}",
                            line=dict(color=color, width=2, dash=("dot", "dash")[i % 2]))
    mean = "mean, " if per_problem else ""
    fig.add_scatter(x=KS, y=curves["before"], name=mean + names[0], line=dict(color=COLORS["grey"], width=4))
    fig.add_scatter(x=KS, y=curves["after"], name=mean + names[1], line=dict(color=COLORS["main"], width=4))
    passk_axis(fig)
    show(fig, key)
    return curves


v = open_page(
    "pass@k",
    "pass@k is the probability that at least one of $k$ independent samples solves the problem. pass@1 is "
    "accuracy; pass@k at large $k$ measures coverage. From $n \\ge k$ samples with $c$ correct:",
    SPECS,
)
n, c, k = v["n"], v["c"], v["k"]
st.latex(r"\text{pass@}k = 1 - \binom{n-c}{k} \Big/ \binom{n}{k}")

if c > n:
    st.info(f"c = {c} is more than n = {n}; using c = {n}.")
    c = n
if k > n:
    st.info(f"k = {k} is more than n = {n}; using k = {n}.")
    k = n
st.metric(f"pass@{k} from n = {n}, c = {c}", f"{float(pass_at_k(n, c, k)):.4f}")
ks = np.arange(1, n + 1)
fig = figure(f"Unbiased pass@k for n = {n}, c = {c}", "k", "pass@k", y_range=[0, 1.02], height=300)
fig.add_scatter(x=ks, y=pass_at_k(n, c, ks), name="pass@k", line=dict(color=COLORS["main"], width=3))
fig.add_vline(x=k, line_dash="dot")
show(fig, "estimator_chart")

st.subheader("The chapter's two problems")
st.caption("Chapter 15, “Does RL teach new reasoning?”: a toy example of how RL can sharpen and narrow coverage.")
s = sharpening_summary()
st.markdown(
    f"Problem A: $p = {CHAPTER_P_BEFORE[0]} \\to {CHAPTER_P_AFTER[0]}$; problem B (a rare strategy): "
    f"$p = {CHAPTER_P_BEFORE[1]} \\to {CHAPTER_P_AFTER[1]}$. Averaged over the two problems, pass@1 rises "
    f"{s['pass@1_before']:.3f} → {s['pass@1_after']:.3f}."
)
if predict("two_problems", f"Before RL the mean pass@64 is {s['pass@64_before']:.3f}. What is it after RL?",
           answer=round(s["pass@64_after"], 3), tolerance=0.03, lo=0, hi=1,
           explain=f"The curves cross near k = {s['crossover_k']:.1f}."):
    curves_chart("pass@k of problems A and B, and their mean", CHAPTER_P_BEFORE, CHAPTER_P_AFTER,
                 "chapter_passk_chart", per_problem=("A", "B"))
    b_before, b_after = pass_at_k_known_p(CHAPTER_P_BEFORE[1], 64), pass_at_k_known_p(CHAPTER_P_AFTER[1], 64)
    a_before, a_after = pass_at_k_known_p(CHAPTER_P_BEFORE[0], 64), pass_at_k_known_p(CHAPTER_P_AFTER[0], 64)
    st.caption(
        f"Per problem: A is solved within 64 tries either way (pass@64 {a_before:.3f} → {a_after:.3f}), while B's "
        f"pass@64 collapses from {b_before:.3f} to {b_after:.3f}; the mean falls {s['pass@64_before']:.3f} → "
        f"{s['pass@64_after']:.3f}. RL helped at k = 1 (through A) and hurt at k = 64 (all through B): it sharpened "
        "the common strategy, and the rare one that cracked B faded."
    )

link("pages/your_run.py", "Watch entropy in your own run: upload its log (Your run)", ":material/monitoring:")
link("pages/your_prompts.py", "Your base model's pass@k over your prompts (Your prompts)", ":material/dataset:")

st.subheader("The 24-prompt toy, before vs after training")
live_view("passk_toy", {"view": "passk_toy", "config": {}, "columns": 1, "classroom": presenter()})

st.subheader("The sharpening toy")
cfg = build_config(SharpenConfig, SPECS, v)
live_view("sharpen", {"view": "sharpen", "config": dataclasses.asdict(cfg), "columns": 2, "classroom": presenter(),
                      "big": presenter()})
