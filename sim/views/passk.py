"""pass@k: the unbiased estimator, the chapter's two problems, the toy's pass@k before and after training and the
sharpening toy. Declared here; its document is assets/js/views.js `passk` (the toys' parts: assets/js/toy_views.js),
its numbers sim/passk.py's and sim/sharpen.py's (their JavaScript twins: assets/js/engine.js, exercises.js)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.settings import setting, validate
from sim.sharpen import SharpenConfig
from sim.views.controls import Num
from sim.views.doc import Text, View


@dataclass(frozen=True)
class Samples:
    """The estimator's settings: n samples of a problem, c of them correct, and k."""

    n: int = setting(64, "samples drawn per problem", lo=1, hi=100_000, integer=True, step=1,
                     label="Samples per problem n")
    c: int = setting(5, "how many of the n samples are correct", lo=0, hi=100_000, integer=True, step=1,
                     label="Correct samples c")
    k: int = setting(8, "the k of pass@k", lo=1, hi=100_000, integer=True, step=1, label="k")

    def __post_init__(self):
        validate(self)


KS = np.arange(1, 65)  # k = 1..64, drawn on a log axis
CONTROLS = (  # the page's controls: the estimator's, then the sharpening toy's
    Num.of(Samples, "n", hi=200),
    Num.of(Samples, "c", hi=200),
    Num.of(Samples, "k", hi=200),
    Num.of(SharpenConfig, "group_size", hi=64),
    Num.of(SharpenConfig, "iterations", lo=20, hi=500),
    Num.of(SharpenConfig, "seed", hi=9999),
)


VIEW = View(
    "passk", "pass@k",
    intro=Text("pass@k is the probability that at least one of k independent samples solves the problem. pass@1 is "
               "accuracy; pass@k at large k measures coverage. From n ≥ k samples with c correct:",
               md="pass@k is the probability that at least one of $k$ independent samples solves the problem. pass@1 "
                  "is accuracy; pass@k at large $k$ measures coverage. From $n \\ge k$ samples with $c$ correct:"),
    controls=CONTROLS,
    what="The unbiased estimator; the chapter's two problems (B: pass@64 0.962 → 0.474 while A barely moves); the "
         "24-prompt toy before and after on a log-k axis; the sharpening toy in the player.",
)  # fmt: skip
