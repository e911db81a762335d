"""Std scaling (Exercise 15.4), declared once (sim/views/doc.py): how the std division reweights prompts (the mean
|A| of a group, and a prompt's weight against its solve rate), and what it does to training once the step size is
taken out of the comparison (three toy runs, computed in the browser: assets/js/toy_views.js's std_charts and
std_words are the twins of the ones here). The JavaScript twin of the document: assets/js/views.js `std_scaling`."""

from __future__ import annotations

import dataclasses

import numpy as np

from sim.exercises import expected_mean_abs_advantage, first_step_size, matched_lr, mean_abs_advantage
from sim.player.spec import COLORS, Chart, Line
from sim.toy import ToyConfig, first_above, run_toy
from sim.views.controls import Num, build_config
from sim.views.doc import Ask, Caption, Charts, Columns, Formula, Heading, Live, Note, Question, Text, View
from sim.views.training import HARD  # the hardest prompt "starts to learn" once its p passes this

STD_SEEDS = 16
CONTROLS = (  # the page's controls (the app's sidebar, a lesson's page)
    Num.of(ToyConfig, "group_size", hi=64),
    Num.of(ToyConfig, "lr", lo=0.05, hi=2.0, fmt="%.2f", help="the run with std; the runs without it derive theirs"),
    Num.of(ToyConfig, "seed", hi=9999),
)
PS = np.linspace(0.0, 1.0, 101)  # the weight chart's p (index 50 is p = 0.5, index 5 is p = 0.05)
RUN_COLORS = {"with std": COLORS["main"], "without std, same lr": COLORS["grey"],
              "without std, same first step": COLORS["pin"]}


def std_config(G: int, lr: float, seed: int) -> ToyConfig:
    """The run with std that the comparison starts from: the toy's defaults at G, lr, seed, STD_SEEDS seeds."""
    return ToyConfig(group_size=G, lr=lr, seed=seed, n_seeds=STD_SEEDS)


def std_comparison(with_std: ToyConfig, hard_level: float = HARD) -> dict:
    """Means over the config's seeds (STD_SEEDS on the page): `with_std`; without std at the same lr; without std
    at the lr that gives the same first step (matched_lr). Per run: lr, first step size, accuracy (T+1,), the
    hardest prompt's p (T+1,) and the iteration it passes hard_level (or None)."""
    same_step = dataclasses.replace(with_std, scale="none", lr=matched_lr(with_std, "none"))
    cfgs = {"with std": with_std, "without std, same lr": dataclasses.replace(with_std, scale="none"),
            "without std, same first step": same_step}
    out = {}
    for name, cfg in cfgs.items():
        h = run_toy(cfg)
        hard = h.p[:, :, -1].mean(axis=1)
        out[name] = {"lr": cfg.lr, "step": first_step_size(cfg), "accuracy": h.accuracy.mean(axis=1), "hard": hard,
                     "hard_starts": first_above(hard, hard_level)}
    return out


def std_charts(runs: dict) -> list[Chart]:
    """The two charts of the comparison: mean accuracy and the hardest prompt's p_j, one line per run."""
    def lines(what: str) -> list[Line]:
        return [Line(r[what], f"{name} (lr {r['lr']:.2f})", color=RUN_COLORS[name], width=3)
                for name, r in runs.items()]
    return [Chart(f"Mean accuracy ({STD_SEEDS} seeds)", lines("accuracy"), y_title="accuracy", y_range=(0, 1)),
            Chart("The hardest prompt's p_j", lines("hard"), y_title="p_j of the hardest prompt", y_range=(0, 1))]


def std_words(runs: dict, lr: float) -> tuple[str, str]:
    """(what the comparison compares, what it shows): the text above and below the charts."""
    base, same_lr, same_step = runs["with std"], runs["without std, same lr"], runs["without std, same first step"]
    intro = (
        f"At the same learning rate {lr:.2f}, the first step without the std is {same_lr['step'] / base['step']:.2f} "
        f"times the size of the step with it (lr × mean |A|: {same_lr['step']:.3f} vs {base['step']:.3f}), so that "
        f"comparison mixes step size with weighting. Without std at lr {same_step['lr']:.2f} the first step is as "
        "large as with std: what differs then is only how the prompts are weighted."
    )

    def when(r: dict) -> str:
        return "never within 200 iterations" if r["hard_starts"] is None else f"at iteration {r['hard_starts']}"

    gap = abs(base["accuracy"][-1] - same_step["accuracy"][-1])
    caption = (
        f"Same toy and seeds; means over {STD_SEEDS} seeds. With std: accuracy {base['accuracy'][-1]:.3f} after 200 "
        f"iterations, hardest prompt past p = {HARD} {when(base)}. Without std at the same lr (grey): "
        f"{same_lr['accuracy'][-1]:.3f}, {when(same_lr)}: smaller steps, not a different weighting. Without std at "
        f"the same first step (orange): {same_step['accuracy'][-1]:.3f}, {when(same_step)}. What remains between "
        "blue and orange is the reweighting's effect"
        + (": here it is small, because a shared skill lifts every prompt whichever way they are weighted."
           if gap < 0.02 else f": {gap:.3f} in final accuracy here.")
    )
    return intro, caption


def exercise(G: int) -> list:
    """Exercise 15.4 at group size G: the mean |A| of a group with c correct (asked first), and a prompt's weight
    against its solve rate, with and without the std division."""
    cs = np.arange(G + 1)
    with_std, without = mean_abs_advantage(cs, G, scale="group"), mean_abs_advantage(cs, G, scale="none")
    w_std = expected_mean_abs_advantage(PS, G, scale="group")
    w_none = expected_mean_abs_advantage(PS, G, scale="none")
    x = cs.astype(float)
    std_chart = Chart(f"Mean |A| of a group with c of {G} correct", [
        Line(with_std, "with std (GRPO)", x=x, reveal="full", mode="lines+markers", color=COLORS["main"]),
        Line(without, "without std (Dr. GRPO)", x=x, reveal="full", mode="lines+markers", color=COLORS["pin"]),
    ], x_title="number correct c", y_title="mean |A|", height=380)
    weight_chart = Chart("How hard a prompt is pushed, by its solve rate p", [
        Line(w_std / w_std[50], "with std", x=PS, reveal="full", color=COLORS["main"], width=3),
        Line(w_none / w_none[50], "without std", x=PS, reveal="full", color=COLORS["pin"], width=3),
    ], x_title="solve rate p of the prompt", y_title="weight relative to p = 0.5", height=380,
        caption=f"The reweighting itself: a prompt's expected mean |A| (G = {G}), scaled so that p = 0.5 counts 1. A "
                f"prompt solved 5% of the time counts {w_std[5] / w_std[50]:.2f} with the std and "
                f"{w_none[5] / w_none[50]:.2f} without: the std division gives hard (and easy) prompts a larger share "
                "of the update. Both fall to 0 at p = 0 and 1, where groups are all equal.")
    revealed = [Charts("std_chart", [std_chart])]
    if G == 8:
        revealed.append(Note(f"At G = 8: 1 correct gives {with_std[1]:.2f} with std vs {without[1]:.2f} without; 4 "
                             f"correct gives {with_std[4]:.2f} vs {without[4]:.2f} (the chapter's 0.66 vs 1.0 and "
                             "0.22 vs 0.5).", tone="success"))
    return [Columns([
        [Caption("Exercise 15.4: the mean |A| of a group, with and without the std division."),
         Ask("ex15_4", Question(f"A group of G = {G} has 1 correct answer. With the std division, what is its mean "
                                f"|A|? (A group with {G // 2} correct has {with_std[G // 2]:.2f}.)",
                                round(float(with_std[1]), 2), tolerance=0.05, lo=0,
                                explain=f"Without the std it would be {without[1]:.2f}."), then=revealed)],
        [Charts("weight_chart", [weight_chart])],
    ])]  # fmt: skip


def show(values: dict, lab=None) -> list:
    cfg = build_config(ToyConfig, CONTROLS, values, n_seeds=STD_SEEDS)  # the run with std; the browser runs all three
    return [
        Formula(r"\overline{|\hat A|}(c) = \frac{1}{G}\sum_i \left|\frac{r_i - \operatorname{mean}(r)}"
                r"{\operatorname{std}(r) + \varepsilon}\right| \quad\text{vs}\quad \frac{1}{G}\sum_i |r_i - "
                r"\operatorname{mean}(r)|", "mean |A|(c) = (1/G) Σ_i |r_i − mean(r)| / (std(r) + ε)   vs   "
                "(1/G) Σ_i |r_i − mean(r)|"),
        *exercise(cfg.group_size),
        Heading("What it does to training: two comparisons"),
        Live("std_scaling", {"view": "std", "config": dataclasses.asdict(cfg), "columns": 2, "classroom_columns": 2}),
    ]


VIEW = View(
    "std_scaling", "Std scaling (Exercise 15.4)",
    intro=Text("Dividing by the group std makes every group with any signal equally loud: the squares of its "
               "advantages always sum to G. So a prompt solved 1 time in 8 is pushed almost as hard as one solved 4 "
               "times in 8. That changes two things at once: how the prompts are weighted against each other, and how "
               "big the steps are.",
               md="Dividing by the group std makes every group with any signal equally loud: the squares of its "
                  "advantages always sum to $G$. So a prompt solved 1 time in 8 is pushed almost as hard as one "
                  "solved 4 times in 8. That changes two things at once: how the prompts are weighted against each "
                  "other, and how big the steps are."),
    controls=CONTROLS, show=show,
    what="Exercise 15.4: mean |A| by number correct with and without std (0.66 vs 1.0, 0.22 vs 0.5), a prompt's "
         "weight against its solve rate, and two comparisons in the player: the same learning rate and the same "
         "first step.",
)  # fmt: skip
