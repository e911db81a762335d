"""The exercise views' charts for a lesson: Wasted groups' curves, KL and clipping's panels and One group's
advantage bars, with the app's titles and captions (pages/wasted.py, pages/kl_clip.py, pages/one_group.py).

Every series is computed here by the sim/ functions those pages call (p_no_signal, kl_estimators, kl_check,
surrogate_curve, weight_curves, chapter_token, group_summary), on coarser grids than the app's (a lesson
stores them once per setting); sim/lesson/figures.py declares the chart kinds.
"""

from __future__ import annotations

import functools

import numpy as np

from sim.exercises import group_summary, p_no_signal
from sim.kl_clip import (
    RESPONSE_LENGTH,
    ClipView,
    chapter_token,
    kl_check,
    kl_estimators,
    objectives,
    surrogate_curve,
    weight_curves,
)
from sim.lesson.figures import Bars, Curve, Figure, Row
from sim.player.spec import COLORS

CLIP_BAND = "rgba(44,160,44,0.12)"
WASTED_PS = np.linspace(0, 1, 101)
KL_US = np.round(np.geomspace(0.05, 4.0, 100), 4)  # denser where k1, k2, k3 bend (small u)
SURROGATE_RHOS = np.round(np.arange(0.3, 1.8 + 1e-9, 0.025), 4)  # the clip's kinks 1 ± 0.1 / 0.2 / 0.3 are on it
WEIGHT_RHOS = np.round(np.arange(0.2, 2.5 + 1e-9, 0.025), 4)


def wasted_rows(p: float, G: int) -> list[Row]:
    """pages/wasted.py's "P(no signal) against p" for G = 4, 8, 16, 64 and yours."""
    ps = WASTED_PS
    traces = [Curve(ps, p_no_signal(ps, g), f"G = {g}", color=color)
              for g, color in ((4, COLORS["grey"]), (8, COLORS["bad"]), (16, COLORS["good"]), (64, "black"))]
    traces.append(Curve(ps, p_no_signal(ps, G), f"G = {G} (yours)", color=COLORS["main"], width=4))
    fig = Figure("P(no signal) against p", traces, "p (solve rate)", "P(group teaches nothing)", height=420,
                 y_range=(0, 1), vlines=(p,))
    return [Row("", [fig], caption="Bigger groups rescue the extremes: the valley of useful prompts widens as G "
                                   "grows.")]


def kl_rows(pi: float, pi_ref: float, eps: float) -> list[Row]:
    """pages/kl_clip.py's charts: k1/k2/k3 against u with your token, the clipped surrogate for A > 0 and
    A < 0, and the gradient weight against the ratio for each objective (the others at their defaults)."""
    chk = kl_check(pi, pi_ref)
    kl = Figure("KL estimators against u = π_ref / π",
                [*_kl_curves(), Curve([chk["u"]], [chk["k3"]], f"your token: u = {chk['u']:.3f}", color="black",
                                      markers=True, size=12)],
                "u = π_ref / π", "per-token estimate", y_range=(-1.5, 3))
    return [
        Row("The KL leash, per token", [kl], caption=(
            "k3 is never negative, unbiased when the token is sampled from π, and zero exactly when π = π_ref. "
            "Chapter check: π = 0.6, π_ref = 0.5 gives u = 0.833, k3 = 0.0157 and slope 0.167: gradient descent on "
            "+β k3 nudges the token back down toward the reference. k1 can be negative for a single token; k2 is "
            "biased.")),
        *_clip_rows(eps),
    ]  # fmt: skip


@functools.cache
def _kl_curves() -> tuple[Curve, ...]:
    """k1, k2, k3 against u: the same for every setting of the view (computed once per build)."""
    k = kl_estimators(KL_US)
    return tuple(Curve(KL_US, k[name], name, color=color, width=3 if name == "k3" else 2)
                 for name, color in (("k1", COLORS["grey"]), ("k2", COLORS["pin"]), ("k3", COLORS["main"])))


@functools.cache
def _clip_rows(eps: float) -> tuple[Row, Row]:
    """The clip's two sections for one ε (the view's settings share them: computed once per ε)."""
    rho = SURROGATE_RHOS
    ends = np.array([rho[0], rho[-1]])  # ρA is a straight line: its two ends draw it
    surrogates = []
    for A, title in ((1.0, "A > 0 (A = +1)"), (-1.0, "A < 0 (A = −1)")):
        curve = surrogate_curve(rho, A, eps)
        surrogates.append(Figure(f"Clipped surrogate, {title}", [
            Curve(ends, ends * A, "unclipped ρA", color=COLORS["grey"], dash="dash"),
            Curve(rho, curve["surrogate"], "clipped", color=COLORS["main"], width=3),
        ], "ratio ρ", "objective s", height=340, bands=((1 - eps, 1 + eps, CLIP_BAND),)))
    view = ClipView(clip_eps=eps)
    rho = WEIGHT_RHOS
    curves, token = weight_curves(rho, view), chapter_token(view)
    eh = eps if view.clip_eps_high is None else view.clip_eps_high
    titles = {"PPO clip (grpo)": f"PPO clip, ε = {eps:.2f}", "clip-higher (DAPO)": f"clip-higher, ε high = {eh:.2f}",
              "two-sided (δ)": f"two-sided, δ = {view.delta:.1f}", "CISPO": f"CISPO, cap 1 + ε high = {1 + eh:.2f}",
              "SAPO": f"SAPO, τ = {view.sapo_temperature_pos:g} / {view.sapo_temperature_neg:g}",
              "GSPO (sequence ratio)": f"GSPO, ratio ρ^(1/{RESPONSE_LENGTH}), ε = {eps:.2f}"}
    ends = np.array([rho[0], rho[-1]])  # ρA is a straight line: its two ends draw it
    panels = []
    for name in objectives(view):
        traces = []
        for sign, color in ((1.0, COLORS["good"]), (-1.0, COLORS["bad"])):
            key = "pos" if sign > 0 else "neg"
            traces += [Curve(ends, sign * ends, "unclipped ρA", color=COLORS["grey"], dash="dash", hover=False),
                       Curve(rho, curves[name][key], f"A = {sign:+.0f}", color=color, width=3),
                       Curve([token["ratio"]], [token["weights"][name][key]], f"your token, A = {sign:+.0f}",
                             color=color, markers=True, size=11, outline="black")]
        panels.append(Figure(titles[name], traces, "ratio ρ of the token", "gradient weight", height=320,
                             y_range=(-2.7, 2.7), legend=False, vlines=(token["ratio"],)))
    w = token["weights"]
    ppo, hi, cispo, sapo, gspo = (w[k]["pos"] for k in ("PPO clip (grpo)", "clip-higher (DAPO)", "CISPO", "SAPO",
                                                        "GSPO (sequence ratio)"))
    return (
        Row("PPO's clip", surrogates, columns=2,
            text="Chapter 15, “Adding PPO's clip”: a token whose probability rose from 0.40 to 0.50. ρ = π / π_old, "
                 "s = min(ρA, clip(ρ, 1 − ε, 1 + ε) A).",
            caption="Where the curve is flat there is no gradient: a positive-advantage token past 1 + ε, or a "
                    "negative one below 1 − ε, stops being pushed. At ρ = 1 the clip is inert and the gradient is "
                    "plain REINFORCE."),
        Row("The clip and what came after it: the gradient weight a token gets", panels, columns=3,
            text=("Each panel is one objective from TRL 1.16.0 (loss_type, importance_sampling_level): the weight "
                  f"−|y| ∂L / ∂log π on one token of a {RESPONSE_LENGTH}-token response as its ratio ρ moves, the "
                  "other tokens at ratio 1. Green: A = +1, red: A = −1, grey dashes: the unclipped ρA. The dotted "
                  "line is the chapter's token (0.40 → 0.50). Every curve is autograd on sim.grpo.policy_loss."),
            caption=(f"The chapter's token, ratio {token['ratio']:.3f}, A > 0: PPO's clip gives weight {ppo:.3f}"
                     + (" (silenced: the clip is flat past 1 + ε)" if ppo == 0 else "")
                     + f"; clip-higher {hi:.3f}; CISPO keeps it at {cispo:.3f}, a clipped weight but never a zero "
                     f"gradient (the “wait” tokens PPO's clip silences); SAPO's soft gate gives {sapo:.3f}; GSPO's "
                     f"one ratio for the whole response is {token['sequence_ratio']:.3f} ({RESPONSE_LENGTH} tokens), "
                     f"so it gives {gspo:.3f}, and real GSPO runs clip with ε around 3e-4. For A < 0 the two-sided δ "
                     f"stops the ever larger push down past ρ = {view.delta:.1f}, where PPO's weight grows without "
                     "bound.")),
    )  # fmt: skip


def one_group_rows(rewards: list[float], scale: str) -> list[Row]:
    """pages/one_group.py's "Advantage of each answer": both std conventions, green for right, red for wrong."""
    chapter = group_summary(rewards, scale=scale, ddof=0)
    trl = group_summary(rewards, scale=scale, ddof=1)
    xs = list(range(1, len(rewards) + 1))
    colors = [COLORS["good"] if r > 0 else COLORS["bad"] for r in rewards]
    fig = Figure("Advantage of each answer", [
        Bars(xs, chapter["advantages"], "population std (chapter)", colors),
        Bars(xs, trl["advantages"], "sample std (TRL)", colors, opacity=0.45, hatch="/"),
    ], "answer i", "advantage", height=360, barmode="group")
    said = "Green answers are right, red ones wrong; the advantages sum to zero."
    if scale == "group" and len(set(rewards)) > 1:
        said += (" TRL divides by the sample std (G - 1 in the denominator), which is larger, so its bars (hatched) "
                 f"are smaller: {max(trl['advantages']):+.3f} and {min(trl['advantages']):+.3f}.")
    return [Row("", [fig], caption=said)]
