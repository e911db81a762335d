"""Wasted groups: P(group teaches nothing) = p^G + (1 - p)^G, as a heatmap over p x G, curves and the chapter's
table (Chapter 15, "Groups that teach nothing"). The JavaScript twin: assets/js/views.js `wasted`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.exercises import no_signal_table, p_no_signal
from sim.player.spec import COLORS, Chart, Heatmap, Line
from sim.settings import setting, validate
from sim.toy import ToyConfig
from sim.views.controls import Num, build_config
from sim.views.doc import (
    Ask,
    Caption,
    Charts,
    Columns,
    Formula,
    Heading,
    Link,
    Metrics,
    Note,
    Question,
    Table,
    Text,
    View,
)

PS = np.linspace(0.0, 1.0, 101)  # the curves' and the heatmap's p
GS = np.arange(2, 65)  # the heatmap's G
CURVES = ((4, COLORS["grey"]), (8, COLORS["bad"]), (16, COLORS["good"]), (64, "black"))


@dataclass(frozen=True)
class Prompt:
    """The page's own setting: the solve rate of the prompt it asks about."""

    p: float = setting(0.05, "the prompt's solve rate: the chance one answer is correct", lo=0.0, hi=1.0, step=0.01,
                       key="p", label="Solve rate p of the prompt")

    def __post_init__(self):
        validate(self)


CONTROLS = (Num.of(Prompt, "p", fmt="%.2f"), Num.of(ToyConfig, "group_size", hi=64))


def pct(x: float, digits: int = 1) -> str:
    return f"{x:.{digits}%}"


def show(values: dict, lab=None) -> list:
    p, G = build_config(Prompt, CONTROLS, values).p, build_config(ToyConfig, CONTROLS, values).group_size
    sig8, sig64 = 1 - float(p_no_signal(0.05, 8)), 1 - float(p_no_signal(0.05, 64))
    none = float(p_no_signal(p, G))
    heat = Chart("P(group teaches nothing) over p and G", [
        Heatmap(p_no_signal(PS[:, None], GS[None, :]), x=PS, y=GS, colorscale="Reds", colorbar_title="P"),
        Line(np.array([G], dtype=float), "your setting", x=np.array([p]), reveal="full", mode="markers", size=14,
             symbol="x", color=COLORS["main"]),
    ], x_title="p (solve rate)", y_title="group size G", height=420,
        caption=f"The × is your setting, p = {p:.2f} and G = {G}: {pct(none)} of its groups teach nothing. Dark at "
        "both edges: too-hard prompts (p ≈ 0) teach nothing, too-easy ones (p ≈ 1) waste compute.")
    curves = Chart("P(no signal) against p", [
        *(Line(p_no_signal(PS, g), f"G = {g}", x=PS, reveal="full", color=color) for g, color in CURVES),
        Line(p_no_signal(PS, G), f"G = {G} (yours)", x=PS, reveal="full", color=COLORS["main"], width=4),
    ], x_title="p (solve rate)", y_title="P(group teaches nothing)", y_range=(0, 1), height=420, vlines=((p, ""),),
        caption=f"At p = {p:.2f}, a group of {G} teaches nothing {pct(none)} of the time, a group of 64 "
        f"{pct(float(p_no_signal(p, 64)))}. Bigger groups rescue the extremes: the valley of useful prompts widens as "
        "G grows.")
    tab = no_signal_table()
    rows = [[f"{pp:.2f}", *(f"{x:.3f}" for x in row)] for pp, row in zip(tab["p"], tab["p_no_signal"], strict=True)]
    revealed = [
        Metrics([(f"P(no signal) at p = {p:.2f}, G = {G}", pct(none)), ("P(signal)", pct(1 - none)),
                 ("P(signal) at G = 64", pct(1 - float(p_no_signal(p, 64))))]),
        Note(f"The chapter's case: p = 0.05 yields signal {sig8:.0%} of the time with G = 8 but {sig64:.0%} with "
             "G = 64. DeepSeekMath used G = 64; DeepSeek-R1-Zero G = 16."),
        Columns([[Charts("wasted_heatmap", [heat])], [Charts("wasted_curves", [curves])]]),
        Heading("The chapter's table"),
        Table("no_signal_table", ["p", *(f"G = {g}" for g in tab["group_size"])], rows),
        Caption("Read it from both ends. RL can only reinforce what the model already sometimes does."),
        Link("pages/your_prompts.py", "This table for your own prompts: upload their pass rates (Your prompts)",
             ":material/dataset:"),
    ]
    return [
        Formula(r"P(\text{group teaches nothing}) = p^G + (1 - p)^G", "P(group teaches nothing) = p^G + (1 − p)^G"),
        Caption("Chapter 15, “Groups that teach nothing”: a prompt solved 5% of the time, with G = 8 and G = 64."),
        Ask("wasted_g8", Question(
            "A prompt is solved 5% of the time (p = 0.05). With G = 8, in what share of its groups does at least one "
            "answer differ from the rest (a group that teaches something)?", round(100 * sig8, 1), unit="%",
            tolerance=5, fmt="{:.1f}"), then=[
            Ask("wasted_g64", Question("And with G = 64?", round(100 * sig64, 1), unit="%", tolerance=5, fmt="{:.1f}",
                                       explain="DeepSeekMath used G = 64; DeepSeek-R1-Zero G = 16."), then=revealed),
        ]),
    ]  # fmt: skip


VIEW = View(
    "wasted", "Wasted groups",
    intro=Text("If a prompt is solved with probability p, all G answers get the same reward (all right or all wrong) "
               "with the probability below. Such a group has zero advantages and gives no gradient: you paid for G "
               "generations and learned nothing.",
               md="If a prompt is solved with probability $p$, all $G$ answers get the same reward (all right or all "
                  "wrong) with the probability below. Such a group has zero advantages and gives no gradient: you "
                  "paid for $G$ generations and learned nothing."),
    controls=CONTROLS, show=show,
    what="P(group teaches nothing) = p^G + (1 − p)^G as a heatmap over p and G, curves and the chapter's table; "
         "34% vs 96% at p = 0.05.",
)  # fmt: skip
