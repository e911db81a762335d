"""One group: the chapter's worked example. Rewards -> group advantages -> per-token weights."""

import streamlit as st

from sim.exercises import WORKED_EXAMPLE_REWARDS, WORKED_EXAMPLE_TOKENS, credit_table, group_summary, per_token_weights
from sim.toy import ToyConfig
from ui.charts import COLORS, figure, show
from ui.controls import Choice, Num
from ui.page import open_page, table

SPECS = [
    Num.of(ToyConfig, "group_size", "G", "Group size G", hi=64, default=4, help="responses sampled for the prompt"),
    Choice.of(ToyConfig, "scale", "scale", "Divide the advantages by", options=("group", "none")),
    Choice("mode", "Choose correct answers by", ("count", "each"), "count"),
    Num("c", "Number correct c (count mode)", 0, 64, 2, 1, help="the first c answers are correct"),
]

v = open_page(
    "One group",
    "Take one prompt, $x$ = `37+48=`, sample $G$ answers and check each. GRPO compares every answer with "
    "its siblings: the group mean is a free Monte Carlo estimate of the value $V(x)$, so no critic is needed.",
    SPECS,
)
G, scale, mode, c = v["G"], v["scale"], v["mode"], v["c"]
if mode == "count":
    if c > G:
        st.info(f"c = {c} is more than G = {G}; using c = {G}.")
        c = G
    rewards = [1.0] * c + [0.0] * (G - c)
else:
    with st.sidebar:
        picked = st.pills(
            "Correct answers", list(range(1, G + 1)), selection_mode="multi", key="pick", bind="query-params"
        )
    rewards = [1.0 if i in picked else 0.0 for i in range(1, G + 1)]

st.latex(
    r"\hat A^{(i)} = \frac{r^{(i)} - \operatorname{mean}(r)}{\operatorname{std}(r) + \varepsilon}"
    if scale == "group"
    else r"\hat A^{(i)} = r^{(i)} - \operatorname{mean}(r)"
)

chapter = group_summary(rewards, scale=scale, ddof=0)
trl = group_summary(rewards, scale=scale, ddof=1)
m = st.columns(5)
m[0].metric("correct", f"{int(sum(rewards))} / {G}")
m[1].metric("mean(r)", f"{chapter['mean']:.3f}")
m[2].metric("std, population (chapter)", f"{chapter['std_population']:.3f}")
m[3].metric("std, sample (TRL)", f"{chapter['std_sample']:.3f}")
m[4].metric("sum of advantages", f"{round(float(chapter['advantages'].sum()), 6) + 0.0:+.3f}")

fig = figure("Advantage of each answer", "answer i", "advantage", height=360)
xs = list(range(1, G + 1))
fig.add_bar(x=xs, y=chapter["advantages"], name="population std (chapter)", marker_color=COLORS["main"])
fig.add_bar(x=xs, y=trl["advantages"], name="sample std (TRL)", marker_color=COLORS["pin"])
fig.update_layout(barmode="group")
show(fig, "adv_chart")
st.caption(
    "Correct answers are pushed up, wrong ones down; the advantages sum to zero. A rare success gets a big push, "
    "the many failures a small one. If every answer gets the same reward, every advantage is 0: the group teaches "
    "nothing. TRL's sample std (divide by G - 1) is larger, so its advantages are a little smaller for small G."
)

st.subheader("Loss value vs gradient")
st.latex(
    r"\mathcal{L} = -\frac{1}{G}\sum_i \frac{1}{|y^{(i)}|}\sum_t \min\big(\rho_t \hat A^{(i)},"
    r"\ \operatorname{clip}(\rho_t, 1-\epsilon, 1+\epsilon)\,\hat A^{(i)}\big)"
)
lc = st.columns(2)
lc[0].metric("loss at ratio 1", f"{chapter['loss']:.4f}")
lc[1].metric("gradient norm ‖∂L/∂log π‖", f"{chapter['grad_norm']:.4f}")
st.caption(
    "At ratio 1 the loss is the mean advantage, which is 0 by construction, so GRPO's logged loss reads 0. Its "
    "gradient is REINFORCE with the group baseline, -A_i/G per answer, which vanishes only when the group has "
    "no spread."
)

st.subheader("The worked example, token by token")
st.markdown(
    "Rewards $1, 0, 0, 1$; responses `8 5 <eos>`, `7 5 <eos>`, `8 1 5 <eos>`, `8 5 <eos>`; each token's "
    "log-probability gets the weight"
)
st.latex(r"\frac{\hat A^{(i)}}{G\,|y^{(i)}|}")
weights = per_token_weights(WORKED_EXAMPLE_TOKENS, WORKED_EXAMPLE_REWARDS)
rows = [
    {"response": " ".join(t), "reward": r, "length": len(t), "weight per token": round(w[0], 4)}
    for t, r, w in zip(WORKED_EXAMPLE_TOKENS, WORKED_EXAMPLE_REWARDS, weights, strict=True)
]
table(rows, key="weights_table")
credit = [dict(r, weight=round(r["weight"], 4)) for r in credit_table(WORKED_EXAMPLE_TOKENS, weights)]
st.markdown("**First-token credit:** what each token at each position collects across the group.")
table(credit, key="credit_table")
st.caption(
    "At position 0 the token 8 collects +1/12 + 1/12 - 1/16 ≈ +0.10 though the wrong 815 also started with it; 7 "
    "collects -0.083. Credit assignment emerges only statistically. The long wrong answer is pushed down less per "
    "token (-0.063 vs -0.083) only because it is longer: the length bias Dr. GRPO removes."
)
