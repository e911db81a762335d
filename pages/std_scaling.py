"""Std scaling (Exercise 15.4): how the std division reweights prompts, and what it does to training once the
step size is taken out of the comparison (the three training runs computed in the browser: ui/live.py)."""

import dataclasses

import numpy as np
import streamlit as st

from sim.exercises import expected_mean_abs_advantage, mean_abs_advantage
from sim.toy import ToyConfig
from sim.views.std_scaling import CONTROLS as SPECS
from sim.views.std_scaling import STD_SEEDS
from ui.charts import COLORS, figure, show
from ui.controls import build_config
from ui.live import live_view
from ui.page import open_page, presenter
from ui.predict import predict

v = open_page(
    "Std scaling (Exercise 15.4)",
    "Dividing by the group std makes every group with any signal equally loud: the squares of its advantages "
    "always sum to $G$. So a prompt solved 1 time in 8 is pushed almost as hard as one solved 4 times in 8. "
    "That changes two things at once: how the prompts are weighted against each other, and how big the steps are.",
    SPECS,
)
G, lr = v["G"], v["lr"]
st.latex(
    r"\overline{|\hat A|}(c) = \frac{1}{G}\sum_i \left|\frac{r_i - \operatorname{mean}(r)}"
    r"{\operatorname{std}(r) + \varepsilon}\right| \quad\text{vs}\quad \frac{1}{G}\sum_i |r_i - \operatorname{mean}(r)|"
)

c1, c2 = st.columns(2)
with c1:
    cs = np.arange(G + 1)
    with_std, without = mean_abs_advantage(cs, G, scale="group"), mean_abs_advantage(cs, G, scale="none")
    st.caption("Exercise 15.4: the mean |A| of a group, with and without the std division.")
    if predict("ex15_4", f"A group of G = {G} has 1 correct answer. With the std division, what is its mean |A|? "
               f"(A group with {G // 2} correct has {with_std[G // 2]:.2f}.)", answer=round(float(with_std[1]), 2),
               tolerance=0.05, lo=0, explain=f"Without the std it would be {without[1]:.2f}."):
        fig = figure(f"Mean |A| of a group with c of {G} correct", "number correct c", "mean |A|", height=380)
        fig.add_scatter(x=cs, y=with_std, name="with std (GRPO)", mode="lines+markers",
                        line=dict(color=COLORS["main"]))
        fig.add_scatter(x=cs, y=without, name="without std (Dr. GRPO)", mode="lines+markers",
                        line=dict(color=COLORS["pin"]))
        show(fig, "std_chart")
        if G == 8:
            st.success(
                f"At G = 8: 1 correct gives {with_std[1]:.2f} with std vs {without[1]:.2f} without; 4 correct gives "
                f"{with_std[4]:.2f} vs {without[4]:.2f} (the chapter's 0.66 vs 1.0 and 0.22 vs 0.5)."
            )
with c2:
    ps = np.linspace(0.0, 1.0, 101)
    w_std = expected_mean_abs_advantage(ps, G, scale="group")
    w_none = expected_mean_abs_advantage(ps, G, scale="none")
    fig = figure("How hard a prompt is pushed, by its solve rate p", "solve rate p of the prompt",
                 "weight relative to p = 0.5", height=380)
    fig.add_scatter(x=ps, y=w_std / w_std[50], name="with std", line=dict(color=COLORS["main"], width=3))
    fig.add_scatter(x=ps, y=w_none / w_none[50], name="without std", line=dict(color=COLORS["pin"], width=3))
    show(fig, "weight_chart")
    i05 = 5  # p = 0.05
    st.caption(
        f"The reweighting itself: a prompt's expected mean |A| (G = {G}), scaled so that p = 0.5 counts 1. A prompt "
        f"solved 5% of the time counts {w_std[i05] / w_std[50]:.2f} with the std and {w_none[i05] / w_none[50]:.2f} "
        "without: the std division gives hard (and easy) prompts a larger share of the update. Both fall to 0 at "
        "p = 0 and 1, where groups are all equal."
    )

st.subheader("What it does to training: two comparisons")
cfg = build_config(ToyConfig, SPECS, v, n_seeds=STD_SEEDS)  # the run with std; the browser runs all three
live_view("std_scaling", {"view": "std", "config": dataclasses.asdict(cfg), "columns": 2, "classroom": presenter(),
                          "big": presenter()})
