"""Std scaling (Exercise 15.4): mean |A| by number correct, with and without the std division, and in training."""

import numpy as np
import streamlit as st

from sim.exercises import mean_abs_advantage
from sim.toy import ToyConfig, run_toy, seed_band
from ui.charts import COLORS, figure, show
from ui.controls import Num
from ui.page import open_page

SPECS = [
    Num.of(ToyConfig, "group_size", "G", "Group size G", hi=64),
    Num.of(ToyConfig, "lr", "lr", "Learning rate (toy)", lo=0.05, hi=2.0, fmt="%.2f"),
    Num.of(ToyConfig, "seed", "seed", "Seed", hi=9999),
]


@st.cache_data(max_entries=16, show_spinner=False)
def both_runs(G: int, lr: float, seed: int):
    """Accuracy and zero-gradient share of the toy with std on and off (same seed, 16 seeds)."""
    out = {}
    for name, scale in (("with std", "group"), ("without std", "none")):
        h = run_toy(ToyConfig(group_size=G, lr=lr, scale=scale, seed=seed, n_seeds=16, iterations=200))
        out[name] = {"accuracy": h.accuracy, "p": h.p[:, :, [0, 11, 23]].mean(axis=1)}
    return out


v = open_page(
    "Std scaling (Exercise 15.4)",
    "Dividing by the group std makes every group with any signal equally loud: the squares of its advantages "
    "always sum to $G$. So a prompt solved 1 time in 8 is pushed almost as hard as one solved 4 times in 8.",
    SPECS,
)
G, lr, seed = v["G"], v["lr"], v["seed"]
st.latex(
    r"\overline{|\hat A|}(c) = \frac{1}{G}\sum_i \left|\frac{r_i - \operatorname{mean}(r)}"
    r"{\operatorname{std}(r) + \varepsilon}\right| \quad\text{vs}\quad \frac{1}{G}\sum_i |r_i - \operatorname{mean}(r)|"
)

cs = np.arange(G + 1)
with_std = mean_abs_advantage(cs, G, scale="group")
without = mean_abs_advantage(cs, G, scale="none")
fig = figure(f"Mean |A| of a group with c of {G} correct", "number correct c", "mean |A|", height=380)
fig.add_scatter(x=cs, y=with_std, name="with std (GRPO)", mode="lines+markers", line=dict(color=COLORS["main"]))
fig.add_scatter(x=cs, y=without, name="without std (Dr. GRPO)", mode="lines+markers", line=dict(color=COLORS["pin"]))
show(fig, "std_chart")
if G == 8:
    st.success(
        f"At G = 8: 1 correct gives {with_std[1]:.2f} with std vs {without[1]:.2f} without; "
        f"4 correct gives {with_std[4]:.2f} vs {without[4]:.2f} (the chapter's 0.66 vs 1.0 and 0.22 vs 0.5)."
    )
st.caption(
    "With the std the curve is nearly flat: rare successes count almost as much as coin flips. Without it "
    "a prompt's weight follows its reward variance, so too-easy and too-hard prompts count less "
    "(Liu et al., 2025)."
)

st.subheader("What it does to training")
runs = both_runs(G, lr, seed)
c1, c2 = st.columns(2)
with c1:
    fig = figure("Mean accuracy, std on vs off (16 seeds)", "iteration", "accuracy", y_range=[0, 1])
    for (name, r), color in zip(runs.items(), (COLORS["main"], COLORS["pin"]), strict=True):
        fig.add_scatter(y=seed_band(r["accuracy"])["mean"], name=name, line=dict(color=color, width=3))
    show(fig, "std_training_chart")
with c2:
    fig = figure("p_j of the easiest, middle and hardest prompt", "iteration", "p_j", y_range=[0, 1])
    for (name, r), color in zip(runs.items(), (COLORS["main"], COLORS["pin"]), strict=True):
        for i, label in enumerate(("easiest", "middle", "hardest")):
            fig.add_scatter(
                y=r["p"][:, i], name=f"{label}, {name}", line=dict(color=color, dash=("solid", "dash", "dot")[i])
            )
    show(fig, "std_prompts_chart")
st.caption(
    "Same toy, same seeds, only the std division changes. Without it, hard prompts (rare successes) get "
    "smaller pushes and wait longer."
)
