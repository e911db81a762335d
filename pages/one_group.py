"""One group: the chapter's worked example. Rewards -> group advantages -> per-token weights, per loss type."""

import numpy as np
import streamlit as st

from sim.exercises import CISPO_CAP
from sim.grpo import LOSS_TYPE_LABELS, LOSS_TYPES
from sim.toy import ToyConfig
from sim.views.one_group import one_group
from ui.charts import COLORS, figure, show
from ui.controls import Choice, Num
from ui.labview import lab_switch, mismatched, verdict
from ui.page import metric_row, open_page, table

CHAPTER_PICKS = (1, 4)  # rewards 1, 0, 0, 1: answers 1 and 4 are right


def token_batch(responses) -> dict:
    """The group's responses as a lab batch at ratio 1 and pi = pi_ref: logp, old_logp, ref_logp (B, T) all
    log 0.5, and the mask of real tokens."""
    T = max(len(t) for t in responses)
    mask = np.array([[1.0] * len(t) + [0.0] * (T - len(t)) for t in responses])  # (B, T)
    logp = np.full(mask.shape, np.log(0.5))
    return {"logp": logp, "old_logp": logp, "ref_logp": logp, "mask": mask}
SPECS = [
    Num.of(ToyConfig, "group_size", "G", "Group size G", hi=64, default=4, help="responses sampled for the prompt"),
    Choice.of(ToyConfig, "scale", "scale", "Divide the advantages by", options=("group", "none")),
    Choice("loss", "Loss type", LOSS_TYPES, "grpo", labels=LOSS_TYPE_LABELS,
           help="how the per-token losses are averaged and weighted (the chapter's formula is grpo; TRL's default "
                "is dapo); every loss TRL 1.16.0 ships"),
    Choice("mode", "Choose the correct answers", ("each", "count"), "each",
           labels={"each": "click each answer", "count": "the first c"}),
    Num("c", "Number correct c (count mode)", 0, 64, 2, 1, help="the first c answers are correct"),
]

v = open_page(
    "One group",
    "Take one prompt, $x$ = `37+48=`, sample $G$ answers and check each. GRPO compares every answer with "
    "its siblings: the group mean is a free Monte Carlo estimate of the value $V(x)$, so no critic is needed. "
    "It opens on the chapter's group: answers 85, 75, 815, 85 with rewards 1, 0, 0, 1.",
    SPECS,
)
G, scale, loss_type, mode, c = v["G"], v["scale"], v["loss"], v["mode"], v["c"]
if mode == "count":
    if c > G:
        st.info(f"c = {c} is more than G = {G}; using c = {G}.")
        c = G
    rewards = [1.0] * c + [0.0] * (G - c)
else:
    with st.sidebar:
        picked = st.pills("Correct answers", list(range(1, G + 1)), selection_mode="multi", key="pick",
                          default=[i for i in CHAPTER_PICKS if i <= G], bind="query-params")
    rewards = [1.0 if i in picked else 0.0 for i in range(1, G + 1)]
lab = lab_switch()

st.latex(
    r"\hat A^{(i)} = \frac{r^{(i)} - \operatorname{mean}(r)}{\operatorname{std}(r) + \varepsilon}"
    if scale == "group"
    else r"\hat A^{(i)} = r^{(i)} - \operatorname{mean}(r)"
)
g = one_group(rewards, scale=scale, loss_type=loss_type)  # the numbers and the words (sim/views/one_group.py)
chapter, trl, captions = g["chapter"], g["trl"], g["captions"]
metric_row(g["metrics"]["group"])

fig = figure("Advantage of each answer", "answer i", "advantage", height=360)
xs = list(range(1, G + 1))
colors = [COLORS["good"] if r > 0 else COLORS["bad"] for r in rewards]
fig.add_bar(x=xs, y=chapter["advantages"], name="population std (chapter)", marker_color=colors)
fig.add_bar(x=xs, y=trl["advantages"], name="sample std (TRL)", marker=dict(color=colors, opacity=0.45,
                                                                          pattern=dict(shape="/")))
fig.update_layout(barmode="group")
mine = lab.advantages(rewards, scale_std=scale == "group") if lab is not None else None
if mine is not None and mine.student is not None and mine.student.shape == (G,):
    wrong = mismatched(mine)
    fig.add_scatter(x=xs, y=mine.student, mode="markers", name="your group_advantages",
                    marker=dict(size=16, color=["#000000" if not w else COLORS["bad"] for w in wrong] or "#000000",
                                symbol=["diamond" if not w else "x" for w in wrong] or "diamond",
                                line=dict(width=2, color="white")))
show(fig, "adv_chart")
if mine is not None:
    verdict(mine, "group_advantages on this group (black diamonds; a red cross where it differs)", lab=lab,
            task="group_advantages")
adv = chapter["advantages"]
st.caption(captions["advantages"])

st.subheader("Loss value vs gradient")
st.latex(
    r"\mathcal{L} = -\frac{1}{G}\sum_i \frac{1}{|y^{(i)}|}\sum_t \min\big(\rho_t \hat A^{(i)},"
    r"\ \operatorname{clip}(\rho_t, 1-\epsilon, 1+\epsilon)\,\hat A^{(i)}\big)"
)
metric_row(g["metrics"]["loss"])
st.caption(captions["loss"])

st.subheader("The group, token by token")
responses, weights = g["responses"], g["weights"]
st.markdown(f"Each token's log-probability gets a gradient weight; at ratio 1, under **{loss_type}** it is")
group_mean, token_mean = r"\frac{\hat A^{(i)}}{G\,|y^{(i)}|}", r"\frac{\hat A^{(i)}}{\sum_j |y^{(j)}|}"
st.latex({"grpo": group_mean,
          "sapo": group_mean + r"\quad(\text{the gate } 4\sigma(1-\sigma) = 1 \text{ at } \rho = 1)",
          "bnpo": token_mean, "dapo": token_mean,
          "cispo": r"\min(\rho, \varepsilon_{max})\," + token_mean + rf"\quad(\varepsilon_{{max}} = {CISPO_CAP:g})",
          "vespo": r"\varphi(w)\," + token_mean + r"\quad(\varphi(1) = 1)",
          "dr_grpo": r"\frac{\hat A^{(i)}}{G\,L_{\max}}", "luspo": r"\frac{\hat A^{(i)}}{G}"}[loss_type])
if loss_type == "cispo":
    st.caption(captions["cispo"])
rows = [{"answer": i + 1, "response": " ".join(t), "reward": r, "advantage": round(float(a), 4), "length": len(t),
         "weight per token": round(w[0], 4)}
        for i, (t, r, a, w) in enumerate(zip(responses, rewards, adv, weights, strict=True))]
if lab is not None:  # the student's grpo_loss on this group: its gradient is the weight of each token
    loss, grad = lab.loss_and_grad(**token_batch(responses), adv=adv, clip_eps=0.2, beta=0.04)
    if grad.student is not None and grad.student.shape == grad.reference.shape:
        for i, row in enumerate(rows):
            row["your weight (grpo_loss)"] = round(-float(grad.student[i, 0]), 4)
table(rows, key="weights_table")
if lab is not None:
    verdict(grad, "grpo_loss gradient on this group (ratio 1, π = π_ref)", lab=lab, task="grpo_loss")
    if loss_type != "grpo":
        st.caption("Your grpo_loss is the chapter's (Task 4: mean over each response, then over responses); "
                   f"compare it with loss type grpo, not {loss_type}.")

if (effect := g["effect"]) is not None:
    short, long = (" ".join(responses[effect[k]]) for k in ("short", "long"))
    rows = [{"loss type": r["loss_type"], f"{short} (short, wrong)": round(r["short"], 4),
             f"{long} (long, wrong)": round(r["long"], 4)} for r in effect["rows"]]
    st.markdown("**Length bias.** Two wrong answers with the same advantage, per token, under each loss type:")
    table(rows, key="length_bias_table")
    st.caption(captions["length_bias"])

credit = [dict(r, weight=round(r["weight"], 4)) for r in g["credit"]]
st.markdown("**Credit:** what each token collects across the group, among tokens chosen after the same text.")
table(credit, key="credit_table")
st.caption(captions["credit"])
