"""The lesson's views: for each, its controls over a grid and, for each setting, what the page shows.

A view is the data of one page: its dimensions (a control each, worded as in the app), presets, and one
entry per setting, each computed by the same sim/views function the app's page calls:
`{"payload": build_payload(...), "above": text, "below": text, "predict": question or None}`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from sim.exercises import TABLE_PS, mean_abs_advantage, no_signal_table, p_no_signal
from sim.lesson.charts import wasted_rows
from sim.lesson.figures import rows_json
from sim.lesson.grid import settings_of
from sim.passk import pass_at_k
from sim.player import build_payload
from sim.settings import settings
from sim.sharpen import SharpenConfig, train
from sim.toy import ToyConfig, expected_run, run_toy
from sim.views import passk, std_scaling, training


@dataclass(frozen=True)
class Dim:
    """One control: a URL key, its label as the app words it, the grid's values and how each is shown."""

    key: str
    label: str
    values: tuple
    names: tuple[str, ...]  # what the control shows for each value
    control: str  # "range" (a slider over the values), "select" or "radio"

    def to_json(self) -> dict:
        return {"key": self.key, "label": self.label, "values": list(self.values), "names": list(self.names),
                "control": self.control}


@dataclass
class View:
    """A page of the lesson. `entries` yields (values by URL key, a function computing the entry)."""

    name: str  # file stem: training -> training.html (its settings' data inline: id="ls-data-training-...")
    title: str
    intro: str
    dims: list[Dim]
    entries: list[tuple[dict, Callable[[], dict]]]
    defaults: dict = field(default_factory=dict)  # the value each control starts at (the app's default)
    what: str = ""  # one line for the contents page
    presets: list[tuple[str, dict]] = field(default_factory=list)
    classroom: dict = field(default_factory=lambda: {"columns": 2})
    recorded: bool = False  # a replay of a recorded run rather than live controls



def _dim(key: str, label: str, values: tuple, namer=str) -> Dim:
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
    control = ("range" if len(values) > 5 else "select") if numeric else "radio"
    return Dim(key, label, tuple(values), tuple(namer(v) for v in values), control)


def _num(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def training_dims(grid: dict[str, tuple]) -> list[Dim]:
    dims = []
    for key, values in grid.items():
        fld, label = training.CONTROLS[key]
        spec = settings(ToyConfig)[fld]
        if key == "beta":
            namer = lambda b: f"{b:g}" + (f" ({training.BETA_LABELS[b]})" if b in training.BETA_LABELS else "")  # noqa: E731
        elif spec.kind in ("choice", "flag"):
            namer = spec.label
        else:
            namer = _num
        dims.append(_dim(key, label, values, namer))
    return dims


def training_entry(values: dict) -> dict:
    """What the Training dynamics page shows for these URL values (its default presenter-off layout)."""
    cfg = training.page_config(values)
    run, exp = run_toy(cfg), expected_run(cfg)
    payload = build_payload("training", T=cfg.iterations, charts=training.training_charts(cfg, run, exp), columns=2)
    return {"payload": payload, "above": "", "below": "", "predict": training.hard_prompt_question(run)}


def training_view(grid: dict[str, tuple]) -> View:
    combos = settings_of(grid)
    defaults = {k: _nearest(grid[k], _default(k)) for k in grid}
    presets = []
    for name, changes in training.PRESETS.items():
        values = {**defaults, **changes}
        presets.append((name, values))
        if values not in combos:
            combos.append(values)  # a preset off the grid (lr_w = 0) is computed too
    return View(
        "training", "Training dynamics",
        "GRPO on a pool of prompts whose difficulty increases left to right. Prompt j is solved with probability "
        "p_j = σ(w + u_j − d_j): d_j a fixed difficulty, u_j the prompt's own parameter, w a shared skill every "
        "prompt's gradient moves (a stand-in for a network's shared weights). Each iteration samples G answers per "
        "prompt, computes group advantages and takes one policy-gradient step. Press Play: the charts replay the "
        "run in your browser.",
        training_dims(grid), [(v, (lambda v=v: training_entry(v))) for v in combos], defaults=defaults,
        what="The 24-prompt toy in the player: accuracy over seeds, zero-gradient groups, each prompt's p_j, "
             "KL and entropy; live over G, β and the std scaling, plus the app's presets.",
        presets=presets, classroom={"columns": 3, "height": training.HEIGHTS[1]},
    )  # fmt: skip


def _default(key: str):
    fld = training.CONTROLS[key][0]
    return getattr(training.page_config({}), fld)


def _nearest(values: tuple, x):
    """x if the grid has it, else the nearest grid value (the first one for a choice)."""
    if x in values:
        return x
    if all(isinstance(v, (int, float)) for v in values) and isinstance(x, (int, float)):
        return min(values, key=lambda v: abs(v - x))
    return values[0]


def std_entry(G: int) -> dict:
    lr, seed = ToyConfig().lr, 0
    runs = std_scaling.std_comparison(std_scaling.std_config(G, lr, seed))
    intro, caption = std_scaling.std_words(runs, lr)
    payload = build_payload("std_scaling", T=len(runs["with std"]["accuracy"]) - 1, columns=2,
                            charts=std_scaling.std_charts(runs))
    cs = np.arange(G + 1)
    with_std, without = mean_abs_advantage(cs, G, scale="group"), mean_abs_advantage(cs, G, scale="none")
    question = {"question": f"A group of G = {G} has 1 correct answer. With the std division, what is its mean |A|? "
                            f"(A group with {G // 2} correct has {with_std[G // 2]:.2f}.)",
                "answer": round(float(with_std[1]), 2), "tolerance": 0.05, "fmt": "{:.2f}",
                "explain": f"Without the std it would be {without[1]:.2f}."}
    table = {"title": f"Exercise 15.4: the mean |A| of a group with c of {G} correct",
             "columns": ["c", "with std (GRPO)", "without std"],
             "rows": [[str(c), f"{a:.3f}", f"{b:.3f}"] for c, a, b in zip(cs, with_std, without, strict=True)]}
    return {"payload": payload, "above": intro, "below": caption, "predict": question, "tables": [table]}


def std_view(Gs: tuple = (2, 4, 8, 16, 32, 64)) -> View:
    return View(
        "std_scaling", "Std scaling (Exercise 15.4): what it does to training",
        "Dividing by the group std makes every group with any signal equally loud: the squares of its advantages "
        "always sum to G. That changes two things at once: how the prompts are weighted against each other, and "
        "how big the steps are. Two comparisons take them apart.",
        [_dim("G", "Group size G", Gs, _num)], [({"G": G}, (lambda G=G: std_entry(G))) for G in Gs],
        defaults={"G": _nearest(Gs, ToyConfig().group_size)},
        what="Exercise 15.4's two comparisons in the player: the same learning rate (different step sizes) and "
             "the same first step (the reweighting alone).",
    )  # fmt: skip


def sharpen_entry(G: int) -> dict:
    h = train(SharpenConfig(group_size=G))
    payload = build_payload("sharpen", T=h.config.iterations, columns=2, charts=passk.sharpen_charts(h))
    return {"payload": payload, "above": "", "below": passk.sharpen_caption(h), "predict": None}


def sharpen_view(Gs: tuple = (4, 8, 16, 32, 64)) -> View:
    return View(
        "sharpen", "pass@k: the sharpening toy",
        "One set of strategy logits is shared by two problems: a common strategy solves problem A, a rare one "
        "cracks problem B. GRPO sharpens the common strategy: pass@1 rises while pass@64 falls.",
        [_dim("sG", "Sharpening toy: group size G", Gs, _num)],
        [({"sG": G}, (lambda G=G: sharpen_entry(G))) for G in Gs],
        defaults={"sG": _nearest(Gs, SharpenConfig().group_size)},
        what="A strategy policy shared by two problems: pass@1 rises while pass@64 falls, and the entropy with it.",
    )  # fmt: skip


def wasted_entry(p: float, G: int) -> dict:
    none = float(p_no_signal(p, G))
    tab = no_signal_table()
    rows = [[f"{pp:.2f}", *(f"{x:.3f}" for x in row)] for pp, row in zip(tab["p"], tab["p_no_signal"], strict=True)]
    above = (f"P(no signal) at p = {p:.2f}, G = {G}: {none:.1%}. P(signal): {1 - none:.1%}. P(signal) at G = 64: "
             f"{1 - float(p_no_signal(p, 64)):.1%}. The chapter's case: p = 0.05 yields signal "
             f"{1 - float(p_no_signal(0.05, 8)):.0%} of the time with G = 8 but {1 - float(p_no_signal(0.05, 64)):.0%} "
             "with G = 64. DeepSeekMath used G = 64; DeepSeek-R1-Zero G = 16.")
    table = {"title": "The chapter's table: P(group teaches nothing) = p^G + (1 − p)^G",
             "columns": ["p", *(f"G = {g}" for g in tab["group_size"])], "rows": rows,
             "caption": "Read it from both ends. RL can only reinforce what the model already sometimes does."}
    sig8 = 1 - float(p_no_signal(0.05, 8))
    question = {"question": "A prompt is solved 5% of the time (p = 0.05). With G = 8, in what share of its groups "
                            "does at least one answer differ from the rest (a group that teaches something)? (%)",
                "answer": round(100 * sig8, 1), "tolerance": 5, "fmt": "{:.1f}",
                "explain": f"With G = 64: {100 * (1 - float(p_no_signal(0.05, 64))):.1f}%. DeepSeekMath used G = 64; "
                           "DeepSeek-R1-Zero G = 16."}
    return {"payload": None, "above": above, "below": "", "predict": question, "tables": [table],
            "figures": rows_json(wasted_rows(p, G))}


def wasted_view(ps: tuple = TABLE_PS, Gs: tuple = (2, 4, 8, 16, 32, 64)) -> View:
    combos = [{"p": p, "G": G} for p in ps for G in Gs]
    return View(
        "wasted", "Wasted groups",
        "If a prompt is solved with probability p, all G answers get the same reward (all right or all wrong) with "
        "probability p^G + (1 − p)^G. Such a group has zero advantages and gives no gradient: you paid for G "
        "generations and learned nothing.",
        [_dim("p", "Solve rate p of the prompt", ps, lambda x: f"{x:.2f}"), _dim("G", "Group size G", Gs, _num)],
        [(v, (lambda v=v: wasted_entry(v["p"], v["G"]))) for v in combos],
        defaults={"p": 0.05, "G": 8},
        what="P(group teaches nothing) = p^G + (1 − p)^G against p for several G, at the chapter's solve rates and "
             "group sizes, and its table.",
    )  # fmt: skip


def estimator_entry(n: int, c: int) -> dict:
    ks = np.arange(1, n + 1)
    values = pass_at_k(n, c, ks)
    rows = [[str(k), f"{float(v):.4f}"] for k, v in zip(ks, values, strict=True)]
    return {"payload": None, "above": f"From n = {n} samples with c = {c} correct: pass@1 = {float(values[0]):.4f}, "
            f"pass@8 = {float(values[7]):.4f}, pass@{n} = {float(values[-1]):.4f}.", "below": "", "predict": None,
            "tables": [{"title": f"Unbiased pass@k = 1 − C(n − c, k) / C(n, k) for n = {n}, c = {c}",
                        "columns": ["k", "pass@k"], "rows": rows}]}


def estimator_view(n: int = 64) -> View:
    cs = tuple(range(n + 1))
    return View(
        "passk_estimator", "pass@k: the unbiased estimator",
        "pass@k is the probability that at least one of k independent samples solves the problem. pass@1 is "
        f"accuracy; pass@k at large k measures coverage. From n = {n} samples with c correct, for every k.",
        [_dim("c", "Correct samples c", cs, str)], [({"c": c}, (lambda c=c: estimator_entry(n, c))) for c in cs],
        defaults={"c": 5}, what=f"The estimator from n = {n} samples, for every number correct c and every k.",
    )  # fmt: skip


def tinylm_entry(figures: dict) -> dict:
    rows = [[str(r["seed"]), f"{r['pass_at_1_before']:.3f}", f"{r['pass_at_1_after']:.3f}",
             f"{r['pass_at_64_before']:.3f}", f"{r['pass_at_64_after']:.3f}", str(r["never_solved_before"]),
             str(r["never_solved_after"]), "none" if r["crossover_k"] is None else f"{r['crossover_k']:.1f}"]
            for r in figures["runs"]]
    table = {"title": "The default TinyLM run over GRPO seeds (recorded)", "rows": rows,
             "columns": ["seed", "pass@1 SFT", "pass@1 GRPO", "pass@64 SFT", "pass@64 GRPO", "never solved SFT",
                         "never solved GRPO", "curves cross at k"],
             "caption": f"Recorded with: {figures['command']}" if figures["command"] else ""}
    return {"payload": None, "above": f"{figures['summary']} {figures['reading']}", "below": "", "predict": None,
            "tables": [table]}


def tinylm_view() -> View | None:
    """TinyLM's recorded multi-seed figures (assets/tinylm_seeds.json, read by sim/tinylm/figures.py), or None
    when the file is missing or not in its shape."""
    from sim.tinylm.figures import load_seed_figures

    figures = load_seed_figures()
    if figures is None:
        return None
    return View(
        "tinylm", "TinyLM: GRPO on a small transformer (recorded)",
        "A small transformer learns two-digit addition by SFT, then GRPO trains it against an exact-match verifier. "
        "Training it needs the app (python -m sim tinylm, or the app's TinyLM page); here are the recorded figures.",
        [], [({}, lambda: tinylm_entry(figures))], recorded=True,
        what="The default TinyLM run over 5 GRPO seeds: pass@1 and pass@64 before and after, the problems never "
             "solved (recorded).",
    )  # fmt: skip


def default_views() -> list[View]:
    """The default lesson: what `python -m sim lesson build OUT` builds without flags."""
    from sim.lesson.exercise_views import kl_view, one_group_view, problems_view
    from sim.lesson.grid import DEFAULT_GRID
    from sim.lesson.recorded import tinylm_run_view

    views = [training_view(DEFAULT_GRID), one_group_view(), kl_view(), std_view(), estimator_view(), problems_view(),
             sharpen_view(),
             wasted_view(), tinylm_run_view(), tinylm_view()]
    return [v for v in views if v is not None]
