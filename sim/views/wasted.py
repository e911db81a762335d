"""Wasted groups: P(group teaches nothing) = p^G + (1 - p)^G, as a heatmap over p x G, curves and the chapter's
table (Chapter 15, "Groups that teach nothing"). Declared here; its document is assets/js/views.js `wasted`, its
numbers sim/exercises.py's p_no_signal and no_signal_table (their JavaScript twins: assets/js/exercises.js)."""

from __future__ import annotations

from dataclasses import dataclass

from sim.settings import setting, validate
from sim.toy import ToyConfig
from sim.views.controls import Num
from sim.views.doc import Text, View


@dataclass(frozen=True)
class Prompt:
    """The page's own setting: the solve rate of the prompt it asks about."""

    p: float = setting(0.05, "the prompt's solve rate: the chance one answer is correct", lo=0.0, hi=1.0, step=0.01,
                       key="p", label="Solve rate p of the prompt")

    def __post_init__(self):
        validate(self)


CONTROLS = (Num.of(Prompt, "p", fmt="%.2f"), Num.of(ToyConfig, "group_size", hi=64))


VIEW = View(
    "wasted", "Wasted groups",
    intro=Text.of("If a prompt is solved with probability $p$, all $G$ answers get the same reward (all right or all "
                  "wrong) with the probability below. Such a group has zero advantages and gives no gradient: you "
                  "paid for $G$ generations and learned nothing."),
    controls=CONTROLS,
    what="P(group teaches nothing) = p^G + (1 − p)^G as a heatmap over p and G, curves and the chapter's table; "
         "34% vs 96% at p = 0.05.",
)  # fmt: skip
