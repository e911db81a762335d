"""pass@k, declared once (sim/views/doc.py): the unbiased estimator, the chapter's two problems, the toy's pass@k
before and after training and the sharpening toy. The toys compute in the browser (assets/js/toy_views.js is the twin
of sharpen_charts, sharpen_caption and toy_curves here); the JavaScript twin of the document: assets/js/views.js
`passk`."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from sim.passk import crossover_k, mean_pass_at_k_known_p, pass_at_k, pass_at_k_known_p
from sim.player.spec import COLORS, Chart, Line
from sim.settings import setting, validate
from sim.sharpen import CHAPTER_P_AFTER, CHAPTER_P_BEFORE, SharpenConfig, SharpenHistory, sharpening_summary
from sim.toy import ToyConfig, expected_run
from sim.views.controls import Num, build_config
from sim.views.doc import Ask, Caption, Charts, Formula, Heading, Link, Live, Metrics, Note, Question, Text, View


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
K_TICKS = tuple(2**i for i in range(7))  # 1, 2, 4, ..., 64
K_RANGE = (-0.05, 1.87)  # log10 k: a little either side of 1 and 64
BEFORE_AFTER = ("before RL", "after RL")
TOY_T = 200  # the toy's before/after: iteration 0 against this one
CONTROLS = (  # the page's controls: the estimator's, then the sharpening toy's
    Num.of(Samples, "n", hi=200),
    Num.of(Samples, "c", hi=200),
    Num.of(Samples, "k", hi=200),
    Num.of(SharpenConfig, "group_size", hi=64),
    Num.of(SharpenConfig, "iterations", lo=20, hi=500),
    Num.of(SharpenConfig, "seed", hi=9999),
)


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


def estimator(e: Samples) -> list:
    n, c, k = e.n, e.c, e.k
    doc = []
    if c > n:
        doc.append(Note(f"c = {c} is more than n = {n}; using c = {n}."))
        c = n
    if k > n:
        doc.append(Note(f"k = {k} is more than n = {n}; using k = {n}."))
        k = n
    ks = np.arange(1, n + 1)
    chart = Chart(f"Unbiased pass@k for n = {n}, c = {c}", [
        Line(pass_at_k(n, c, ks), "pass@k", x=ks.astype(float), reveal="full", color=COLORS["main"], width=3),
    ], x_title="k", y_title="pass@k", y_range=(0, 1.02), height=300, vlines=((k, ""),))
    return doc + [
        Formula(r"\text{pass@}k = 1 - \binom{n-c}{k} \Big/ \binom{n}{k}", "pass@k = 1 − C(n − c, k) / C(n, k)"),
        Metrics([(f"pass@{k} from n = {n}, c = {c}", f"{float(pass_at_k(n, c, k)):.4f}")]),
        Charts("estimator_chart", [chart]),
    ]


def problems() -> list:
    """The chapter's two problems (A 0.6 -> 0.98, B 0.05 -> 0.01): pass@1 rises, pass@64 falls."""
    s = sharpening_summary()
    (a0, b0), (a1, b1) = CHAPTER_P_BEFORE, CHAPTER_P_AFTER
    a_before, a_after, b_before, b_after = (float(pass_at_k_known_p(p, 64)) for p in (a0, a1, b0, b1))
    return [
        Heading("The chapter's two problems"),
        Caption("Chapter 15, “Does RL teach new reasoning?”: a toy example of how RL can sharpen and narrow coverage."),
        Text(f"Problem A: p = {a0} → {a1}; problem B (a rare strategy): p = {b0} → {b1}. Averaged over the two "
             f"problems, pass@1 rises {s['pass@1_before']:.3f} → {s['pass@1_after']:.3f}.",
             md=f"Problem A: $p = {a0} \\to {a1}$; problem B (a rare strategy): $p = {b0} \\to {b1}$. Averaged over "
                f"the two problems, pass@1 rises {s['pass@1_before']:.3f} → {s['pass@1_after']:.3f}."),
        Ask("two_problems", Question(f"Before RL the mean pass@64 is {s['pass@64_before']:.3f}. What is it after RL?",
                                     round(s["pass@64_after"], 3), tolerance=0.03, lo=0, hi=1,
                                     explain=f"The curves cross near k = {s['crossover_k']:.1f}."), then=[
            Charts("chapter_passk_chart", [curves_chart("pass@k of problems A and B, and their mean", CHAPTER_P_BEFORE,
                                                        CHAPTER_P_AFTER, per_problem=("A", "B"))]),
            Caption(f"Per problem: A is solved within 64 tries either way (pass@64 {a_before:.3f} → {a_after:.3f}), "
                    f"while B's pass@64 collapses from {b_before:.3f} to {b_after:.3f}; the mean falls "
                    f"{s['pass@64_before']:.3f} → {s['pass@64_after']:.3f}. RL helped at k = 1 (through A) and hurt at "
                    "k = 64 (all through B): it sharpened the common strategy, and the rare one that cracked B faded."),
        ]),
    ]  # fmt: skip


def show(values: dict, lab=None) -> list:
    sharpen = build_config(SharpenConfig, CONTROLS, values)
    return [
        *estimator(build_config(Samples, CONTROLS, values)),
        *problems(),
        Link("pages/your_run.py", "Watch entropy in your own run: upload its log (Your run)", ":material/monitoring:"),
        Link("pages/your_prompts.py", "Your base model's pass@k over your prompts (Your prompts)",
             ":material/dataset:"),
        Heading("The 24-prompt toy, before vs after training"),
        Live("passk_toy", {"view": "passk_toy", "config": {}, "columns": 1, "classroom_columns": 1}),
        Heading("The sharpening toy"),
        Live("sharpen", {"view": "sharpen", "config": dataclasses.asdict(sharpen), "columns": 2,
                         "classroom_columns": 2}),
    ]


VIEW = View(
    "passk", "pass@k",
    intro=Text("pass@k is the probability that at least one of k independent samples solves the problem. pass@1 is "
               "accuracy; pass@k at large k measures coverage. From n ≥ k samples with c correct:",
               md="pass@k is the probability that at least one of $k$ independent samples solves the problem. pass@1 "
                  "is accuracy; pass@k at large $k$ measures coverage. From $n \\ge k$ samples with $c$ correct:"),
    controls=CONTROLS, show=show,
    what="The unbiased estimator; the chapter's two problems (B: pass@64 0.962 → 0.474 while A barely moves); the "
         "24-prompt toy before and after on a log-k axis; the sharpening toy in the player.",
)  # fmt: skip
