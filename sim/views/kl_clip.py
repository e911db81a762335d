"""KL and clipping: k1, k2, k3 against u = pi_ref / pi, PPO's clipped surrogate, the gradient weight a token gets
under the clip's successors, and k1, k2, k3 by sampling (Chapter 15, "Adding the KL leash" and "Adding PPO's
clip"), declared here; its document is assets/js/views.js `kl_clip`, its numbers sim/kl_clip.py's (their
JavaScript twins: assets/js/exercises.js).

`lab_extras` is what the app adds with "Use my lab code": the student's k3_kl over the chart's u and their
grpo_loss's gradient on the clip's token, computed by the server in the lab's sandbox.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.kl_clip import ClipView
from sim.settings import setting, validate
from sim.views.controls import Num, build_config
from sim.views.doc import Text, Verdict, View

U = np.linspace(0.05, 4.0, 400)  # the k chart's u (assets/js/views.js draws the same)


@dataclass(frozen=True)
class Tokens:
    """The page's own settings: the token of the KL check, the token of the clip example, the sample size."""

    pi: float = setting(0.6, "the policy's probability of the token", lo=0.0, hi=1.0, low_open=True, step=0.01,
                        label="KL check: policy probability π")
    pi_ref: float = setting(0.5, "the reference's probability of the token", lo=0.0, hi=1.0, low_open=True,
                            step=0.01, label="KL check: reference probability π_ref")
    p_old: float = setting(0.4, "the token's probability when the batch was sampled", lo=0.0, hi=1.0, low_open=True,
                           step=0.01, label="Token probability before (π_old)")
    p_new: float = setting(0.5, "the token's probability after one inner step", lo=0.0, hi=1.0, low_open=True,
                           step=0.01, label="Token probability after one inner step")
    n: int = setting(16, "how many sampled tokens each estimate averages", lo=1, hi=100_000, integer=True, step=1,
                     label="Monte Carlo: tokens per estimate n")

    def __post_init__(self):
        validate(self)


CONTROLS = (
    Num.of(Tokens, "pi", lo=0.05, fmt="%.2f"),
    Num.of(Tokens, "pi_ref", lo=0.05, fmt="%.2f"),
    Num.of(ClipView, "clip_eps", lo=0.05, hi=0.5, step=0.01, fmt="%.2f"),
    Num.of(ClipView, "clip_eps_high", lo=0.05, hi=1.0, step=0.01, fmt="%.2f"),
    Num.of(ClipView, "delta", lo=1.1, hi=4.0, step=0.1, fmt="%.1f"),
    Num.of(ClipView, "sapo_temperature_pos", lo=0.25, hi=20.0, step=0.25),
    Num.of(ClipView, "sapo_temperature_neg", lo=0.25, hi=20.0, step=0.05),
    Num.of(Tokens, "p_old", lo=0.05, fmt="%.2f"),
    Num.of(Tokens, "p_new", lo=0.05, fmt="%.2f"),
    Num.of(Tokens, "n", hi=1024),
)


def lab_extras(values: dict, lab) -> dict:
    """"Use my lab code" here: the student's k3_kl over the chart's u (`k3`, drawn dotted), and the verdicts, by
    the place the document shows them (`slots`): k3_kl and its slope under the chart; grpo_loss's gradient on the
    clip's token, and across the clip's range for A = +1 and A = -1, under the clip question."""
    t, eps = build_config(Tokens, CONTROLS, values), build_config(ClipView, CONTROLS, values).clip_eps
    out = {"k3": None, "slots": {"after_kl_chart": [], "after_clip": []}}
    curve, slope = lab.k3_curve(U)
    if curve.student is not None and curve.student.shape == U.shape:
        out["k3"] = [float(x) for x in curve.student]
    out["slots"]["after_kl_chart"] += [Verdict(curve, "k3_kl over u = π_ref / π (black dots)", lab, "k3_kl"),
                                       Verdict(slope, "d k3 / d log π (by autograd through your k3_kl)")]
    _, grad = lab.loss_and_grad(logp=np.log([[t.p_new]]), old_logp=np.log([[t.p_old]]), ref_logp=np.log([[t.p_new]]),
                                adv=np.ones(1), mask=np.ones((1, 1)), clip_eps=eps, beta=0.0)
    ref = float(grad.reference.ravel()[0])
    out["slots"]["after_clip"].append(Verdict(grad, f"grpo_loss gradient on this token (reference {ref:+.3f})", lab,
                                              "grpo_loss"))
    ratios = np.array([[0.5, 0.9, 1.0, 1.1, 1.5]] * 2)  # (2, 5): one response with A = +1, one with A = -1
    _, grad = lab.loss_and_grad(logp=np.log(ratios), old_logp=np.zeros_like(ratios), ref_logp=np.log(ratios),
                                adv=np.array([1.0, -1.0]), mask=np.ones_like(ratios), clip_eps=eps, beta=0.0)
    out["slots"]["after_clip"].append(Verdict(grad, "grpo_loss gradient at ratios 0.5 to 1.5, A = +1 and A = −1", lab,
                                              "grpo_loss"))
    return out


VIEW = View(
    "kl_clip", "KL and clipping",
    intro=Text("GRPO keeps the policy near a reference with β·k3, k3 = u − log u − 1 with u = π_ref / π per token, "
               "and near the sampling policy with PPO's clip on the ratio ρ = π / π_old; clip-higher, two-sided δ, "
               "CISPO, SAPO and GSPO change what the clip does to a token's gradient."),
    controls=CONTROLS,
    what="k1, k2, k3 against π_ref/π and the 0.6 vs 0.5 check; PPO's clipped surrogate and the 0.40 → 0.50 example; "
         "the gradient weight under PPO's clip, clip-higher, δ, CISPO, SAPO and GSPO; k1, k2, k3 by sampling.",
)  # fmt: skip
