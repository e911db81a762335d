"""pass@k: the unbiased estimator, the chapter's crossing curves, the toy before/after, the sharpening toy."""

import numpy as np
import streamlit as st

from sim.passk import mean_pass_at_k_known_p, pass_at_k
from sim.sharpen import CHAPTER_P_AFTER, CHAPTER_P_BEFORE, SharpenConfig, sharpening_summary, train
from sim.toy import ToyConfig, expected_run
from ui.charts import COLORS, figure, show
from ui.controls import Num
from ui.page import open_page

SPECS = [
    Num("n", "Samples per problem n", 1, 200, 64, 1),
    Num("c", "Correct samples c", 0, 200, 5, 1),
    Num("k", "k", 1, 200, 8, 1),
    Num.of(SharpenConfig, "group_size", "sG", "Sharpening toy: group size G", hi=64),
    Num.of(SharpenConfig, "iterations", "sT", "Sharpening toy: iterations", lo=20, hi=500),
    Num.of(SharpenConfig, "seed", "seed", "Seed", hi=9999),
]
KS = np.unique(np.round(np.logspace(0, np.log10(256), 40)).astype(int))


@st.cache_data(max_entries=16, show_spinner=False)
def toy_before_after(T: int = 200):
    """p_j of the 24-prompt toy (chapter defaults here) at iteration 0 and T, exact expected run."""
    h = expected_run(ToyConfig(iterations=T))
    return h.p[0, 0], h.p[-1, 0]


@st.cache_data(max_entries=16, show_spinner=False)
def sharpen(G: int, T: int, seed: int):
    return train(SharpenConfig(group_size=G, iterations=T, seed=seed))


def curves_chart(title: str, before, after, key: str, names=("before RL", "after RL")) -> None:
    fig = figure(title, "k (log scale)", "pass@k", y_range=[0, 1.02])
    fig.add_scatter(x=KS, y=mean_pass_at_k_known_p(before, KS), name=names[0], line=dict(color=COLORS["grey"], width=3))
    fig.add_scatter(x=KS, y=mean_pass_at_k_known_p(after, KS), name=names[1], line=dict(color=COLORS["main"], width=3))
    fig.update_xaxes(type="log")
    show(fig, key)


v = open_page(
    "pass@k",
    "pass@k is the probability that at least one of $k$ independent samples solves the problem. pass@1 is "
    "accuracy; pass@k at large $k$ measures coverage. From $n \\ge k$ samples with $c$ correct:",
    SPECS,
)
n, c, k, sG, sT, seed = v["n"], v["c"], v["k"], v["sG"], v["sT"], v["seed"]
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
s = sharpening_summary()
st.markdown(
    f"Problem A: $p = {CHAPTER_P_BEFORE[0]} \\to {CHAPTER_P_AFTER[0]}$; problem B (a rare strategy): "
    f"$p = {CHAPTER_P_BEFORE[1]} \\to {CHAPTER_P_AFTER[1]}$. pass@1 rises {s['pass@1_before']:.3f} → "
    f"{s['pass@1_after']:.3f}; pass@64 falls {s['pass@64_before']:.3f} → {s['pass@64_after']:.3f}; the curves "
    f"cross near k = {s['crossover_k']:.1f}."
)
curves_chart("Mean pass@k over the two problems", CHAPTER_P_BEFORE, CHAPTER_P_AFTER, "chapter_passk_chart")
st.caption("RL helped at k = 1 and hurt at k = 64: it sharpened the common strategy and the rare one faded.")

st.subheader("The 24-prompt toy, before vs after training")
p0, pT = toy_before_after()
curves_chart("Toy: mean pass@k at iteration 0 and 200", p0, pT, "toy_passk_chart", ("iteration 0", "iteration 200"))
st.caption(
    "In this toy a shared skill lifts every prompt, so coverage grows too: no crossing. Sharpening needs "
    "a policy that can lose a rare way of solving, as below."
)

st.subheader("The sharpening toy")
h = sharpen(sG, sT, seed)
c1, c2 = st.columns(2)
with c1:
    fig = figure("pass@1 rises while pass@64 falls", "iteration", "pass@k", y_range=[0, 1.02])
    fig.add_scatter(y=h.pass_at_1, name="pass@1", line=dict(color=COLORS["main"], width=3))
    fig.add_scatter(y=h.pass_at_k, name=f"pass@{h.config.k_eval}", line=dict(color=COLORS["bad"], width=3))
    show(fig, "sharpen_chart")
with c2:
    fig = figure("Policy entropy over strategies", "iteration", "entropy (nats)")
    fig.add_scatter(y=h.entropy, name="entropy", line=dict(color=COLORS["good"], width=3))
    show(fig, "sharpen_entropy_chart")
curves_chart("Sharpening toy: pass@k before and after", h.p[0], h.p[-1], "sharpen_passk_chart")
st.caption(
    "One set of strategy logits is shared by both problems. The common strategy wins, entropy collapses, and "
    "the rare strategy that solved B fades: watch pass@k at large k and the entropy, not just pass@1."
)
