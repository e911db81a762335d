"""pass@k: the sharpening toy's player charts and caption, and the toy's pass@k before and after training, for
the app's page and a lesson (assets/toy_views.js computes the same in the browser)."""

from __future__ import annotations

import numpy as np

from sim.passk import crossover_k, mean_pass_at_k_known_p, pass_at_k_known_p
from sim.player.spec import COLORS, Chart, Line
from sim.sharpen import SharpenConfig, SharpenHistory
from sim.toy import ToyConfig, expected_run
from sim.views.controls import Num

KS = np.arange(1, 65)  # k = 1..64, drawn on a log axis
K_TICKS = tuple(2**i for i in range(7))  # 1, 2, 4, ..., 64
K_RANGE = (-0.05, 1.87)  # log10 k: a little either side of 1 and 64
BEFORE_AFTER = ("before RL", "after RL")
TOY_T = 200  # the toy's before/after: iteration 0 against this one
CONTROLS = [  # the page's controls: the estimator's, then the sharpening toy's
    Num("n", "Samples per problem n", 1, 200, 64, 1),
    Num("c", "Correct samples c", 0, 200, 5, 1),
    Num("k", "k", 1, 200, 8, 1),
    Num.of(SharpenConfig, "group_size", "sG", "Sharpening toy: group size G", hi=64),
    Num.of(SharpenConfig, "iterations", "sT", "Sharpening toy: iterations", lo=20, hi=500),
    Num.of(SharpenConfig, "seed", "seed", "Seed", hi=9999),
]


def curves_chart(title: str, before, after, names=BEFORE_AFTER, per_problem=(), height: int = 380,
                 span: int = 1) -> Chart:
    """Mean pass@k over k = 1..64 (log axis, a marker at k = 64) of a model before and after, from each
    problem's known p (P,); `per_problem` names each problem's own curves too (dotted, dashed, ...)."""
    lines = []
    for i, label in enumerate(per_problem):
        for p, color, when in ((before[i], COLORS["grey"], names[0]), (after[i], COLORS["main"], names[1])):
            lines.append(Line(pass_at_k_known_p(p, KS), f"problem {label}, {when}", x=KS, reveal="full",
                              color=color, width=2, dash=("dot", "dash")[i % 2]))
    mean = "mean, " if per_problem else ""
    lines += [Line(mean_pass_at_k_known_p(before, KS), mean + names[0], x=KS, reveal="full", color=COLORS["grey"],
                   width=4),
              Line(mean_pass_at_k_known_p(after, KS), mean + names[1], x=KS, reveal="full", color=COLORS["main"],
                   width=4)]
    return Chart(title, lines, x_title="k (log scale)", y_title="pass@k", y_range=(0, 1.02), x_range=K_RANGE,
                 x_log=True, x_ticks=K_TICKS, vlines=((float(KS[-1]), f"k = {KS[-1]}"),), height=height, span=span)


def sharpen_charts(h: SharpenHistory) -> list[Chart]:
    """pass@1 and pass@k over training, the policy's entropy over strategies, and pass@k against k before and
    after (both problems and their mean)."""
    return [
        Chart("pass@1 rises while pass@64 falls", [
            Line(h.pass_at_1, "pass@1", color=COLORS["main"], width=3),
            Line(h.pass_at_k, f"pass@{h.config.k_eval}", color=COLORS["bad"], width=3),
        ], y_title="pass@k", y_range=(0, 1.02)),
        Chart("Policy entropy over strategies", [Line(h.entropy, "entropy", color=COLORS["good"], width=3)],
              y_title="entropy (nats)"),
        curves_chart("Sharpening toy: pass@k before and after", h.p[0], h.p[-1], per_problem=("A", "B"), span=2),
    ]  # fmt: skip


def sharpen_caption(h: SharpenHistory) -> str:
    """What the sharpening run did, with its numbers."""
    cross = h.crossover(KS)
    return (
        f"One set of strategy logits is shared by both problems. After {h.config.iterations} iterations p = "
        f"({h.p[-1, 0]:.2f}, {h.p[-1, 1]:.2f}) from ({h.p[0, 0]:.2f}, {h.p[0, 1]:.2f}); entropy "
        f"{h.entropy[0]:.2f} → {h.entropy[-1]:.2f} nats; pass@1 {h.pass_at_1[0]:.3f} → {h.pass_at_1[-1]:.3f}, "
        f"pass@64 {h.pass_at_k[0]:.3f} → {h.pass_at_k[-1]:.3f}"
        + (f"; the curves cross at k ≈ {cross:.1f}." if cross is not None else "; the curves do not cross in this run.")
        + " Watch pass@k at large k and the entropy, not just pass@1."
    )


def toy_p_before_after(T: int = TOY_T) -> tuple[np.ndarray, np.ndarray]:
    """p_j of the 24-prompt toy (chapter defaults) at iteration 0 and T, exact expected run: (P,), (P,)."""
    h = expected_run(ToyConfig(iterations=T))
    return h.p[0, 0], h.p[-1, 0]


def toy_curves(p0, pT, T: int = TOY_T) -> tuple[Chart, str]:
    """The toy's mean pass@k at iteration 0 and T (p_j from toy_p_before_after) and what it shows."""
    before, after = mean_pass_at_k_known_p(p0, KS), mean_pass_at_k_known_p(pT, KS)
    cross = crossover_k(KS, after, before)
    chart = curves_chart(f"Toy: mean pass@k at iteration 0 and {T}", p0, pT, names=("iteration 0", f"iteration {T}"))
    caption = (
        f"pass@1 {before[0]:.3f} → {after[0]:.3f}, pass@64 {before[-1]:.3f} → {after[-1]:.3f}: "
        + (f"the curves cross at k ≈ {cross:.1f}." if cross is not None else
           "no crossing. In this toy a shared skill lifts every prompt, so coverage grows too. Sharpening needs a "
           "policy that can lose a rare way of solving, as below.")
    )
    return chart, caption
