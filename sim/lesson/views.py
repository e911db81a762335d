"""The lesson's views: what each page shows, computed ahead of time or in the page.

A precomputed view is the data of one page: its dimensions (a control each, worded as in the app), presets,
and one entry per setting, each computed by the same sim/views function the app's page calls:
`{"payload": build_payload(...), "above": text, "below": text, "predict": question or None}`.

A live view (Training dynamics, Std scaling, the sharpening toy) holds no setting: its page carries the app's
controls for the view (sim/views' CONTROLS) and computes whatever setting they take in the browser, with the
engine (assets/engine.js) and the views' JavaScript twin (assets/toy_views.js). `View.live` is its manifest.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from sim.exercises import TABLE_PS, mean_abs_advantage, no_signal_table, p_no_signal
from sim.lesson.charts import wasted_rows
from sim.lesson.figures import rows_json
from sim.passk import pass_at_k
from sim.sharpen import SharpenConfig
from sim.views import passk, std_scaling, training
from sim.views.controls import to_json


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
    live: dict | None = None  # a live view's manifest (live_view): no dims, no entries
    fold_intro: bool = False  # the intro folded under "What this page shows" (as the app's page does)



def _dim(key: str, label: str, values: tuple, namer=str) -> Dim:
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
    control = ("range" if len(values) > 5 else "select") if numeric else "radio"
    return Dim(key, label, tuple(values), tuple(namer(v) for v in values), control)


def _num(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def live_view(name: str, title: str, intro: str, what: str, *, live: str, controls: list, fixed, presets=None,
              columns: int = 2, classroom_columns: int = 2, static_key: str | None = None,
              static: dict | None = None, fold_intro: bool = False) -> View:
    """A view computed in the page: `live` names what assets/view_runs.js computes, `controls` are the app's
    (sim/views/controls.py), `fixed` the config the controls set their fields on (a dataclass instance),
    `static[str(value of static_key)]` what the build computed for each value of one control (tables and a
    question)."""
    manifest = {
        "live": live, "controls": [to_json(c) for c in controls], "fixed": dataclasses.asdict(fixed),
        "presets": [{"name": n, "values": v} for n, v in (presets or {}).items()], "columns": columns,
        "classroom": {"columns": classroom_columns}, "static_key": static_key, "static": static or {},
    }  # fmt: skip
    return View(name, title, intro, [], [], what=what, live=manifest, fold_intro=fold_intro)


def training_view() -> View:
    return live_view(
        "training", "Training dynamics",
        "GRPO on a pool of prompts whose difficulty increases left to right. Prompt j is solved with probability "
        "p_j = σ(w + u_j − d_j): d_j a fixed difficulty, u_j the prompt's own parameter, w a shared skill every "
        "prompt's gradient moves (a stand-in for a network's shared weights). Each iteration samples G answers per "
        "prompt, computes group advantages and takes one policy-gradient step. Press Play: the charts replay the "
        "run in your browser.",
        "The 24-prompt toy in the player: accuracy over seeds, zero-gradient groups, each prompt's p_j, KL and "
        "entropy; every control of the app's page, computed in your browser, and the app's presets.",
        live="training", controls=training.CONTROLS, fixed=training.page_config({}), presets=training.PRESETS,
        classroom_columns=3, fold_intro=True,
    )  # fmt: skip


def std_static(G: int) -> dict:
    """Exercise 15.4 at group size G: the table of mean |A| with c of G correct, and the predict question."""
    cs = np.arange(G + 1)
    with_std, without = mean_abs_advantage(cs, G, scale="group"), mean_abs_advantage(cs, G, scale="none")
    question = {"question": f"A group of G = {G} has 1 correct answer. With the std division, what is its mean |A|? "
                            f"(A group with {G // 2} correct has {with_std[G // 2]:.2f}.)",
                "answer": round(float(with_std[1]), 2), "tolerance": 0.05, "fmt": "{:.2f}", "lo": 0,
                "explain": f"Without the std it would be {without[1]:.2f}."}
    table = {"title": f"Exercise 15.4: the mean |A| of a group with c of {G} correct",
             "columns": ["c", "with std (GRPO)", "without std"],
             "rows": [[str(c), f"{a:.3f}", f"{b:.3f}"] for c, a, b in zip(cs, with_std, without, strict=True)]}
    return {"question": question, "tables": [table]}


def std_view() -> View:
    g = next(c for c in std_scaling.CONTROLS if c.key == "G")
    return live_view(
        "std_scaling", "Std scaling (Exercise 15.4): what it does to training",
        "Dividing by the group std makes every group with any signal equally loud: the squares of its advantages "
        "always sum to G. That changes two things at once: how the prompts are weighted against each other, and "
        "how big the steps are. Two comparisons take them apart.",
        "Exercise 15.4's two comparisons in the player: the same learning rate (different step sizes) and the "
        "same first step (the reweighting alone), at any G, learning rate and seed.",
        live="std", controls=std_scaling.CONTROLS, fixed=std_scaling.std_config(g.default, 0.2, 0),
        static_key="G", static={str(G): std_static(G) for G in range(g.lo, g.hi + 1)},
    )  # fmt: skip


def sharpen_view() -> View:
    return live_view(
        "sharpen", "pass@k: the sharpening toy",
        "One set of strategy logits is shared by two problems: a common strategy solves problem A, a rare one "
        "cracks problem B. GRPO sharpens the common strategy: pass@1 rises while pass@64 falls.",
        "A strategy policy shared by two problems: pass@1 rises while pass@64 falls, and the entropy with it, at "
        "any group size, length and seed.",
        live="sharpen", controls=[c for c in passk.CONTROLS if c.config is SharpenConfig], fixed=SharpenConfig(),
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
    from sim.lesson.recorded import tinylm_run_view

    views = [training_view(), one_group_view(), kl_view(), std_view(), estimator_view(), problems_view(),
             sharpen_view(),
             wasted_view(), tinylm_run_view(), tinylm_view()]
    return [v for v in views if v is not None]
