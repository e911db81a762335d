"""Std scaling (Exercise 15.4): how the std division reweights prompts (the mean |A| of a group, and a prompt's
weight against its solve rate), and what it does to training once the step size is taken out of the comparison.
Declared here; its document is assets/js/views.js `std_scaling`, its three toy runs the browser engine's
stdComparison, whose reference is sim.exercises.std_comparison (tests/test_engine_js.py)."""

from __future__ import annotations

from sim.toy import ToyConfig
from sim.views.controls import Num
from sim.views.doc import Text, View
from sim.views.training import HARD as HARD  # the hardest prompt "starts to learn" once its p passes this

STD_SEEDS = 16
CONTROLS = (  # the page's controls (the app's sidebar, a lesson's page)
    Num.of(ToyConfig, "group_size", hi=64),
    Num.of(ToyConfig, "lr", lo=0.05, hi=2.0, fmt="%.2f", help="the run with std; the runs without it derive theirs"),
    Num.of(ToyConfig, "seed", hi=9999),
)


def std_config(G: int, lr: float, seed: int) -> ToyConfig:
    """The run with std that the comparison starts from: the toy's defaults at G, lr, seed, STD_SEEDS seeds."""
    return ToyConfig(group_size=G, lr=lr, seed=seed, n_seeds=STD_SEEDS)


VIEW = View(
    "std_scaling", "Std scaling (Exercise 15.4)",
    intro=Text.of("Dividing by the group std makes every group with any signal equally loud: the squares of its "
                  "advantages always sum to $G$. So a prompt solved 1 time in 8 is pushed almost as hard as one "
                  "solved 4 times in 8. That changes two things at once: how the prompts are weighted against each "
                  "other, and how big the steps are."),
    controls=CONTROLS,
    what="Mean |A| by number correct with and without std (0.66 vs 1.0, 0.22 vs 0.5), a prompt's "
         "weight against its solve rate, and two comparisons in the player: the same learning rate and the same "
         "first step.",
)  # fmt: skip
