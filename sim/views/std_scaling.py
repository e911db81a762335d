"""Std scaling (Exercise 15.4): the two training comparisons, their player charts and their words, for the
app's page and a lesson."""

from __future__ import annotations

import dataclasses

from sim.exercises import first_step_size, matched_lr
from sim.player.spec import COLORS, Chart, Line
from sim.toy import ToyConfig, first_above, run_toy
from sim.views.controls import Num

STD_SEEDS = 16
CONTROLS = [  # the page's controls (the app's sidebar, a lesson's page)
    Num.of(ToyConfig, "group_size", "G", "Group size G", hi=64),
    Num.of(ToyConfig, "lr", "lr", "Learning rate with std (toy)", lo=0.05, hi=2.0, fmt="%.2f"),
    Num.of(ToyConfig, "seed", "seed", "Seed", hi=9999),
]
HARD = 0.1  # "the hardest prompt has started to learn" once its p passes this
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
