"""KL and clipping: k1, k2, k3 against u = pi_ref / pi, PPO's clipped surrogate, the gradient weight a token gets
under the clip's successors, and k1, k2, k3 by sampling (Chapter 15, "Adding the KL leash" and "Adding PPO's
clip"), declared once (sim/views/doc.py). Every number comes from sim/kl_clip.py. The JavaScript twin:
assets/js/views.js `kl_clip`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.kl_clip import (
    RESPONSE_LENGTH,
    ClipView,
    chapter_token,
    clip_example,
    kl_check,
    kl_estimators,
    kl_monte_carlo,
    objectives,
    surrogate_curve,
    weight_curves,
)
from sim.player.spec import COLORS, Band, Chart, Line, rgba
from sim.settings import setting, validate
from sim.views.controls import Num, build_config
from sim.views.doc import Ask, Caption, Charts, Formula, Heading, Metrics, Note, Question, Table, Text, Verdict, View


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
U = np.linspace(0.05, 4.0, 400)  # the k chart's u
RHO = np.linspace(0.3, 1.8, 301)  # the surrogate's ratio
RHO_W = np.linspace(0.2, 2.5, 231)  # the weight panels' ratio
SIZES = np.unique(np.round(np.logspace(0, np.log10(1024), 21)).astype(int))  # the Monte Carlo's n: 1 .. 1024
N_TICKS = (1, 4, 16, 64, 256, 1024)
CLIP_BAND = "rgba(44,160,44,0.12)"
ESTIMATORS = (("k1", COLORS["grey"]), ("k2", COLORS["pin"]), ("k3", COLORS["main"]))
REPEATS = 400  # estimates per sample size


def titles(view: ClipView) -> dict[str, str]:
    """Each objective's panel title, with its setting."""
    eps = view.clip_eps
    eh = eps if view.clip_eps_high is None else view.clip_eps_high
    return {"PPO clip (grpo)": f"PPO clip, ε = {eps:.2f}", "clip-higher (DAPO)": f"clip-higher, ε high = {eh:.2f}",
            "two-sided (δ)": f"two-sided, δ = {view.delta:.1f}", "CISPO": f"CISPO, cap 1 + ε high = {1 + eh:.2f}",
            "SAPO": f"SAPO, τ = {view.sapo_temperature_pos:g} / {view.sapo_temperature_neg:g}",
            "GSPO (sequence ratio)": f"GSPO, ratio ρ^(1/{RESPONSE_LENGTH}), ε = {eps:.2f}"}


def leash(t: Tokens, lab) -> list:
    pi, pi_ref = t.pi, t.pi_ref
    k, chk = kl_estimators(U), kl_check(pi, pi_ref)
    lines = [Line(k[name], name, x=U, reveal="full", color=color, width=3 if name == "k3" else 2)
             for name, color in ESTIMATORS]
    lines.append(Line(np.array([chk["k3"]]), f"your token: u = {chk['u']:.3f}", x=np.array([chk["u"]]),
                      reveal="full", mode="markers", size=12, color="black"))
    mine = lab.k3_curve(U) if lab is not None else None
    if mine is not None and mine[0].student is not None and mine[0].student.shape == U.shape:
        lines.append(Line(np.asarray(mine[0].student, dtype=float), "your k3_kl", x=U, reveal="full", color="black",
                          dash="dot"))
    doc = [
        Heading("The KL leash, per token"),
        Caption("Chapter 15, “Adding the KL leash, in the loss”: the numeric check of k3."),
        Text("GRPO puts the KL penalty in the loss, estimated per sampled token from u = π_ref / π_θ:",
             md="GRPO puts the KL penalty in the loss, estimated per sampled token from "
                "$u = \\pi_{ref}/\\pi_\\theta$:"),
        Formula(r"k_1 = -\log u \qquad k_2 = \tfrac12 (\log u)^2 \qquad k_3 = u - \log u - 1 \;\ge 0",
                "k1 = −log u,   k2 = ½ (log u)²,   k3 = u − log u − 1 ≥ 0"),
        Charts("kl_chart", [Chart("KL estimators against u = π_ref / π", lines, x_title="u = π_ref / π",
                                  y_title="per-token estimate", y_range=(-1.5, 3), height=380)]),
    ]
    if mine is not None:
        doc += [Verdict(mine[0], "k3_kl over u = π_ref / π (black dots)", lab, "k3_kl"),
                Verdict(mine[1], "d k3 / d log π (by autograd through your k3_kl)")]
    doc += [
        Ask("k3", Question(f"The policy gives a token probability {pi:.2f}, the reference {pi_ref:.2f}. What is its "
                           "k3?", round(chk["k3"], 4), tolerance=0.002, lo=0,
                           explain="k3 = u − log u − 1 with u = π_ref / π."), then=[
            Metrics([("u = π_ref / π", f"{chk['u']:.3f}"), ("k3", f"{chk['k3']:.4f}"),
                     ("d k3 / d log π = 1 − u", f"{chk['dk3_dlogp']:.3f}"), ("k1", f"{chk['k1']:.4f}")])]),
        Caption("k3 is never negative, unbiased when the token is sampled from π, and zero exactly when π = π_ref. "
                "Chapter check: π = 0.6, π_ref = 0.5 gives u = 0.833, k3 = 0.0157 and slope 0.167: gradient descent "
                "on +β k3 nudges the token back down toward the reference. k1 can be negative for a single token; k2 "
                "is biased."),
    ]  # fmt: skip
    return doc


def clip(t: Tokens, view: ClipView, lab) -> list:
    eps, p_old, p_new = view.clip_eps, t.p_old, t.p_new
    ends = np.array([RHO[0], RHO[-1]])  # rho A is a straight line: its two ends draw it
    charts = []
    for A, title in ((1.0, "A > 0 (A = +1)"), (-1.0, "A < 0 (A = −1)")):
        curve = surrogate_curve(RHO, A, eps)
        charts.append(Chart(f"Clipped surrogate, {title}", [
            Line(ends * A, "unclipped ρA", x=ends, reveal="full", color=COLORS["grey"], dash="dash"),
            Line(curve["surrogate"], "clipped", x=RHO, reveal="full", color=COLORS["main"], width=3),
        ], x_title="ratio ρ", y_title="objective s", height=340, shade=((1 - eps, 1 + eps, CLIP_BAND),)))
    ex = clip_example(p_old, p_new, 1.0, eps)
    pushed, stopped = "still pushed", "no gradient: clipped"
    outcome = "is clipped: no more gradient on the next inner step" if ex["clipped"] else "is still pushed"
    doc = [
        Heading("PPO's clip"),
        Caption("Chapter 15, “Adding PPO's clip”: a token whose probability rose from 0.40 to 0.50."),
        Formula(r"\rho = \frac{\pi_\theta}{\pi_{old}},\qquad s = \min\big(\rho A,\ "
                r"\operatorname{clip}(\rho, 1-\epsilon, 1+\epsilon)\,A\big)",
                "ρ = π_θ / π_old,   s = min(ρA, clip(ρ, 1 − ε, 1 + ε) A)"),
        Charts("clip_charts", charts, columns=2),
        Caption("Where the curve is flat there is no gradient: a positive-advantage token past 1 + ε, or a negative "
                "one below 1 − ε, stops being pushed. At ρ = 1 the clip is inert and the gradient is plain "
                "REINFORCE."),
        Ask("clip", Question(f"After one inner step a token's probability went {p_old:.2f} → {p_new:.2f}; its "
                             f"advantage is positive and ε = {eps:.2f}. On the next inner step, is the token still "
                             "pushed up?", stopped if ex["clipped"] else pushed, kind="choice",
                             options=(pushed, stopped)), then=[
            Note(f"Token probability {p_old:.2f} → {p_new:.2f}: ratio {ex['ratio']:.3f}; with A > 0 and ε = {eps:.2f} "
                 f"the token {outcome}. (Chapter: 0.40 → 0.50 gives 1.25 > 1.2.)")]),
    ]  # fmt: skip
    if lab is not None:  # the student's grpo_loss (beta = 0) on this token, then on ratios across the clip range
        _, grad = lab.loss_and_grad(logp=np.log([[p_new]]), old_logp=np.log([[p_old]]), ref_logp=np.log([[p_new]]),
                                    adv=np.ones(1), mask=np.ones((1, 1)), clip_eps=eps, beta=0.0)
        ref = float(grad.reference.ravel()[0])
        doc.append(Verdict(grad, f"grpo_loss gradient on this token (reference {ref:+.3f})", lab, "grpo_loss"))
        ratios = np.array([[0.5, 0.9, 1.0, 1.1, 1.5]] * 2)  # (2, 5): one response with A = +1, one with A = -1
        _, grad = lab.loss_and_grad(logp=np.log(ratios), old_logp=np.zeros_like(ratios), ref_logp=np.log(ratios),
                                    adv=np.array([1.0, -1.0]), mask=np.ones_like(ratios), clip_eps=eps, beta=0.0)
        doc.append(Verdict(grad, "grpo_loss gradient at ratios 0.5 to 1.5, A = +1 and A = −1", lab, "grpo_loss"))
    return doc


def weights(t: Tokens, view: ClipView) -> list:
    p_old, p_new = t.p_old, t.p_new
    curves, token, names = weight_curves(RHO_W, view), chapter_token(view, p_old, p_new), titles(view)
    ends = np.array([RHO_W[0], RHO_W[-1]])
    panels = []
    for name in objectives(view):
        lines = []
        for sign, color in ((1.0, COLORS["good"]), (-1.0, COLORS["bad"])):
            key = "pos" if sign > 0 else "neg"
            lines += [Line(sign * ends, "unclipped ρA", x=ends, reveal="full", color=COLORS["grey"], dash="dash",
                           hover=False),
                      Line(curves[name][key], f"A = {sign:+.0f}", x=RHO_W, reveal="full", color=color, width=3),
                      Line(np.array([token["weights"][name][key]]), f"your token, A = {sign:+.0f}",
                           x=np.array([token["ratio"]]), reveal="full", mode="markers", size=11, color=color,
                           outline="black")]
        panels.append(Chart(names[name], lines, x_title="ratio ρ of the token", y_title="gradient weight", height=320,
                            y_range=(-2.7, 2.7), legend=False, vlines=((token["ratio"], ""),)))
    w = token["weights"]
    ppo, hi, cispo, sapo, gspo = (w[k]["pos"] for k in ("PPO clip (grpo)", "clip-higher (DAPO)", "CISPO", "SAPO",
                                                        "GSPO (sequence ratio)"))
    return [
        Heading("The clip and what came after it: the gradient weight a token gets"),
        Text("Each panel is one objective from TRL 1.16.0 (loss_type, importance_sampling_level): the weight "
             f"−|y| ∂L / ∂log π on one token of a {RESPONSE_LENGTH}-token response as its ratio ρ moves, the other "
             "tokens at ratio 1. Green: A = +1, red: A = −1, grey dashes: the unclipped ρA. The dotted line is your "
             f"token ({p_old:.2f} → {p_new:.2f}). Every curve is autograd on sim.grpo.policy_loss.",
             md="Each panel is one objective from TRL 1.16.0 (`loss_type`, `importance_sampling_level`): the weight "
                "$-|y|\\,\\partial \\mathcal{L} / \\partial \\log \\pi$ on one token of a "
                f"{RESPONSE_LENGTH}-token response as its ratio ρ moves, the other tokens at ratio 1. "
                ":green[**green: A = +1**], :red[**red: A = −1**], grey dashes: the unclipped ρA. The dotted line is "
                f"your token ({p_old:.2f} → {p_new:.2f}). Every curve is autograd on `sim.grpo.policy_loss`."),
        Charts("weight_charts", panels, columns=3),
        Table("weights_at_token", ["objective", "weight, A = +1", "weight, A = −1"],
              [[names[name], round(w[name]["pos"], 3) + 0.0, round(w[name]["neg"], 3) + 0.0] for name in w]),
        Caption(f"Your token, ratio {token['ratio']:.3f}, A > 0: PPO's clip gives weight {ppo:.3f}"
                + (" (silenced: the clip is flat past 1 + ε)" if ppo == 0 else "")
                + f"; clip-higher {hi:.3f}; CISPO keeps it at {cispo:.3f}, a clipped weight but never a zero gradient "
                f"(the “wait” tokens PPO's clip silences); SAPO's soft gate gives {sapo:.3f}; GSPO's one ratio for the "
                f"whole response is {token['sequence_ratio']:.3f} ({RESPONSE_LENGTH} tokens), so it gives {gspo:.3f}, "
                "and real GSPO runs clip with ε around 3e-4. For A < 0 the two-sided δ stops the ever larger push down "
                f"past ρ = {view.delta:.1f}, where PPO's weight grows without bound."),
    ]  # fmt: skip


def sampling(t: Tokens) -> list:
    pi, pi_ref, n = t.pi, t.pi_ref, t.n
    doc = [
        Heading("Why k3: bias, noise and sign, by sampling"),
        Text(f"Sample tokens from the policy, which gives the token {pi:.2f} and everything else {1 - pi:.2f}, and "
             f"estimate KL(π ‖ π_ref) against the reference's {pi_ref:.2f} / {1 - pi_ref:.2f} by averaging each "
             f"estimator over the sampled tokens. {REPEATS} repeats for every sample size."),
    ]
    if pi == 1.0 or pi_ref == 1.0:
        return doc + [Note("With π or π_ref = 1 the other token has probability 0 and the KL is not finite: lower it "
                           "below 1.")]
    mc = kl_monte_carlo([pi, 1 - pi], [pi_ref, 1 - pi_ref], SIZES, repeats=REPEATS)
    x = SIZES.astype(float)
    traces = []
    for name, color in ESTIMATORS:
        r = mc[name]
        traces += [Band(r["lo"], r["hi"], f"{name}: middle 80%", x=x, color=rgba(color, 0.15)),
                   Line(r["mean"], f"{name}: mean of {REPEATS} estimates", x=x, reveal="full", mode="lines+markers",
                        color=color, width=3 if name == "k3" else 2)]
    chart = Chart("Estimates of KL against the number of sampled tokens", traces,
                  x_title="tokens per estimate n (log scale)", y_title="estimate (nats)", height=400, x_log=True,
                  x_ticks=N_TICKS, vlines=((n, ""),), hlines=((mc["exact"], f"exact KL = {mc['exact']:.4f}", "dash"),))
    one = kl_monte_carlo([pi, 1 - pi], [pi_ref, 1 - pi_ref], [n], repeats=REPEATS)
    items = [(f"{name} with n = {n}", f"{one[name]['mean'][0]:.4f} ± {one[name]['std'][0]:.4f}",
              f"negative in {one[name]['frac_negative'][0]:.0%} of estimates") for name, _ in ESTIMATORS]
    return doc + [
        Charts("kl_mc_chart", [chart]),
        Metrics(items),
        Caption(f"Shaded: the middle 80% of the {REPEATS} estimates. The exact KL here is {mc['exact']:.4f}. k1 (grey) "
                f"is right on average but noisy, and with one token it is negative "
                f"{mc['k1']['frac_negative'][0]:.0%} of the time. k2 (orange) is never negative but biased: its mean "
                f"stays at {mc['k2']['mean'][-1]:.4f} however many tokens (the bias grows as π and π_ref move apart). "
                f"k3 (blue) is unbiased and never negative, with a spread of {mc['k3']['std'][0]:.4f} from one token "
                f"against k1's {mc['k1']['std'][0]:.4f}: that is why GRPO uses it."),
    ]  # fmt: skip


def show(values: dict, lab=None) -> list:
    """The page's document; `lab` (the app's "Use my lab code"): the student's k3_kl and grpo_loss beside the
    reference's."""
    t, view = build_config(Tokens, CONTROLS, values), build_config(ClipView, CONTROLS, values)
    return leash(t, lab) + clip(t, view, lab) + weights(t, view) + sampling(t)


VIEW = View(
    "kl_clip", "KL and clipping",
    intro=Text("GRPO keeps the policy near a reference with β·k3, k3 = u − log u − 1 with u = π_ref / π per token, "
               "and near the sampling policy with PPO's clip on the ratio ρ = π / π_old; clip-higher, two-sided δ, "
               "CISPO, SAPO and GSPO change what the clip does to a token's gradient."),
    controls=CONTROLS, show=show,
    what="k1, k2, k3 against π_ref/π and the 0.6 vs 0.5 check; PPO's clipped surrogate and the 0.40 → 0.50 example; "
         "the gradient weight under PPO's clip, clip-higher, δ, CISPO, SAPO and GSPO; k1, k2, k3 by sampling.",
)  # fmt: skip
