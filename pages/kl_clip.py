"""KL and clipping: k1, k2, k3 against u = pi_ref / pi, and PPO's clipped surrogate against the ratio."""

import numpy as np
import streamlit as st

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
from ui.charts import COLORS, figure, rgba, show
from ui.controls import Num
from ui.labview import lab_switch, verdict
from ui.page import metric_row, open_page, table
from ui.predict import predict

SPECS = [
    Num("pi", "KL check: policy probability π", 0.05, 1.0, 0.6, 0.01, fmt="%.2f"),
    Num("pi_ref", "KL check: reference probability π_ref", 0.05, 1.0, 0.5, 0.01, fmt="%.2f"),
    Num.of(ClipView, "clip_eps", "eps", "Clip ε", lo=0.05, hi=0.5, step=0.01, fmt="%.2f"),
    Num.of(ClipView, "clip_eps_high", "eps_high", "Clip ε high (clip-higher; CISPO's cap is 1 + ε high)", lo=0.05,
           hi=1.0, step=0.01, fmt="%.2f"),
    Num.of(ClipView, "delta", "delta", "Two-sided clip δ (caps ρ for A < 0)", lo=1.1, hi=4.0, step=0.1, fmt="%.1f"),
    Num.of(ClipView, "sapo_temperature_pos", "tau_pos", "SAPO temperature τ, A > 0", lo=0.25, hi=20.0, step=0.25),
    Num.of(ClipView, "sapo_temperature_neg", "tau_neg", "SAPO temperature τ, A < 0", lo=0.25, hi=20.0, step=0.05),
    Num("p_old", "Token probability before (π_old)", 0.05, 1.0, 0.4, 0.01, fmt="%.2f"),
    Num("p_new", "Token probability after one inner step", 0.05, 1.0, 0.5, 0.01, fmt="%.2f"),
    Num("n", "Monte Carlo: tokens per estimate n", 1, 1024, 16, 1,
        help="how many sampled tokens each estimate averages"),
]

v = open_page("KL and clipping", None, SPECS)
pi, pi_ref, eps, p_old, p_new, n = v["pi"], v["pi_ref"], v["eps"], v["p_old"], v["p_new"], v["n"]
view = ClipView(clip_eps=eps, clip_eps_high=v["eps_high"], delta=v["delta"], sapo_temperature_pos=v["tau_pos"],
                sapo_temperature_neg=v["tau_neg"])
lab = lab_switch()

st.subheader("The KL leash, per token")
st.caption("Chapter 15, “Adding the KL leash, in the loss”: the numeric check of k3.")
st.markdown("GRPO puts the KL penalty in the loss, estimated per sampled token from $u = \\pi_{ref}/\\pi_\\theta$:")
st.latex(r"k_1 = -\log u \qquad k_2 = \tfrac12 (\log u)^2 \qquad k_3 = u - \log u - 1 \;\ge 0")
u = np.linspace(0.05, 4.0, 400)
k = kl_estimators(u)
chk = kl_check(pi, pi_ref)
fig = figure("KL estimators against u = π_ref / π", "u = π_ref / π", "per-token estimate", height=380)
for name, color in (("k1", COLORS["grey"]), ("k2", COLORS["pin"]), ("k3", COLORS["main"])):
    fig.add_scatter(x=u, y=k[name], name=name, line=dict(color=color, width=3 if name == "k3" else 2))
fig.add_scatter(
    x=[chk["u"]],
    y=[chk["k3"]],
    mode="markers",
    marker=dict(size=12, color="black"),
    name=f"your token: u = {chk['u']:.3f}",
)
fig.update_yaxes(range=[-1.5, 3])
mine = lab.k3_curve(u) if lab is not None else None
if mine is not None and mine[0].student is not None and mine[0].student.shape == u.shape:
    fig.add_scatter(x=u, y=mine[0].student, name="your k3_kl", mode="lines",
                    line=dict(color="black", width=2, dash="dot"))
show(fig, "kl_chart")
if mine is not None:
    verdict(mine[0], "k3_kl over u = π_ref / π (black dots)", lab=lab, task="k3_kl")
    verdict(mine[1], "d k3 / d log π (by autograd through your k3_kl)")
if predict("k3", f"The policy gives a token probability {pi:.2f}, the reference {pi_ref:.2f}. What is its k3?",
           answer=round(chk["k3"], 4), tolerance=0.002, lo=0, explain="k3 = u − log u − 1 with u = π_ref / π."):
    metric_row([("u = π_ref / π", f"{chk['u']:.3f}"), ("k3", f"{chk['k3']:.4f}"),
                ("d k3 / d log π = 1 − u", f"{chk['dk3_dlogp']:.3f}"), ("k1", f"{chk['k1']:.4f}")])
st.caption(
    "k3 is never negative, unbiased when the token is sampled from π, and zero exactly when π = π_ref. Chapter check: "
    "π = 0.6, π_ref = 0.5 gives u = 0.833, k3 = 0.0157 and slope 0.167: gradient descent on +β k3 nudges the token "
    "back down toward the reference. k1 can be negative for a single token; k2 is biased."
)

st.subheader("PPO's clip")
st.caption("Chapter 15, “Adding PPO's clip”: a token whose probability rose from 0.40 to 0.50.")
st.latex(
    r"\rho = \frac{\pi_\theta}{\pi_{old}},\qquad s = \min\big(\rho A,\ \operatorname{clip}(\rho, 1-\epsilon,"
    r" 1+\epsilon)\,A\big)"
)
rho = np.linspace(0.3, 1.8, 301)
c1, c2 = st.columns(2)
for col, A, title in ((c1, 1.0, "A > 0 (A = +1)"), (c2, -1.0, "A < 0 (A = −1)")):
    curve = surrogate_curve(rho, A, eps)
    fig = figure(f"Clipped surrogate, {title}", "ratio ρ", "objective s", height=340)
    fig.add_scatter(x=rho, y=rho * A, name="unclipped ρA", line=dict(color=COLORS["grey"], dash="dash"))
    fig.add_scatter(x=rho, y=curve["surrogate"], name="clipped", line=dict(color=COLORS["main"], width=3))
    fig.add_vrect(x0=1 - eps, x1=1 + eps, fillcolor="rgba(44,160,44,0.12)", line_width=0)
    with col:
        show(fig, f"clip_chart_{'pos' if A > 0 else 'neg'}")
st.caption(
    "Where the curve is flat there is no gradient: a positive-advantage token past 1 + ε, or a negative one "
    "below 1 − ε, stops being pushed. At ρ = 1 the clip is inert and the gradient is plain REINFORCE."
)
ex = clip_example(p_old, p_new, 1.0, eps)
pushed, stopped = "still pushed", "no gradient: clipped"
if predict("clip", f"After one inner step a token's probability went {p_old:.2f} → {p_new:.2f}; its advantage is "
           f"positive and ε = {eps:.2f}. On the next inner step, is the token still pushed up?", kind="choice",
           options=[pushed, stopped], answer=stopped if ex["clipped"] else pushed):
    outcome = "is clipped: no more gradient on the next inner step" if ex["clipped"] else "is still pushed"
    st.info(
        f"Token probability {p_old:.2f} → {p_new:.2f}: ratio {ex['ratio']:.3f}; with A > 0 and ε = {eps:.2f} the "
        f"token {outcome}. (Chapter: 0.40 → 0.50 gives 1.25 > 1.2.)"
    )
if lab is not None:  # the student's grpo_loss (beta = 0) on this token, then on ratios across the clip range
    _, grad = lab.loss_and_grad(logp=np.log([[p_new]]), old_logp=np.log([[p_old]]), ref_logp=np.log([[p_new]]),
                                adv=np.ones(1), mask=np.ones((1, 1)), clip_eps=eps, beta=0.0)
    verdict(grad, f"grpo_loss gradient on this token (reference {float(grad.reference.ravel()[0]):+.3f})",
            lab=lab, task="grpo_loss")
    ratios = np.array([[0.5, 0.9, 1.0, 1.1, 1.5]] * 2)  # (2, 5): one response with A = +1, one with A = -1
    _, grad = lab.loss_and_grad(logp=np.log(ratios), old_logp=np.zeros_like(ratios), ref_logp=np.log(ratios),
                                adv=np.array([1.0, -1.0]), mask=np.ones_like(ratios), clip_eps=eps, beta=0.0)
    verdict(grad, "grpo_loss gradient at ratios 0.5 to 1.5, A = +1 and A = −1", lab=lab, task="grpo_loss")

st.subheader("The clip and what came after it: the gradient weight a token gets")
st.markdown(
    "Each panel is one objective from TRL 1.16.0 (`loss_type`, `importance_sampling_level`): the weight "
    "$-|y|\\,\\partial \\mathcal{L} / \\partial \\log \\pi$ on one token of a "
    f"{RESPONSE_LENGTH}-token response as its ratio ρ moves, the other tokens at ratio 1. "
    ":green[**green: A = +1**], :red[**red: A = −1**], grey dashes: the unclipped ρA. The dotted line is "
    f"your token ({p_old:.2f} → {p_new:.2f}). Every curve is autograd on `sim.grpo.policy_loss`."
)
rho_grid = np.linspace(0.2, 2.5, 231)
curves = weight_curves(rho_grid, view)
token = chapter_token(view, p_old, p_new)
eh = eps if view.clip_eps_high is None else view.clip_eps_high
titles = {"PPO clip (grpo)": f"PPO clip, ε = {eps:.2f}", "clip-higher (DAPO)": f"clip-higher, ε high = {eh:.2f}",
          "two-sided (δ)": f"two-sided, δ = {view.delta:.1f}", "CISPO": f"CISPO, cap 1 + ε high = {1 + eh:.2f}",
          "SAPO": f"SAPO, τ = {view.sapo_temperature_pos:g} / {view.sapo_temperature_neg:g}",
          "GSPO (sequence ratio)": f"GSPO, ratio ρ^(1/{RESPONSE_LENGTH}), ε = {eps:.2f}"}
cols = st.columns(3)
for i, name in enumerate(objectives(view)):
    fig = figure(titles[name], "ratio ρ of the token", "gradient weight", height=320)
    for sign, color in ((1.0, COLORS["good"]), (-1.0, COLORS["bad"])):
        fig.add_scatter(x=rho_grid, y=sign * rho_grid, mode="lines", line=dict(color=COLORS["grey"], dash="dash"),
                        name="unclipped ρA", hoverinfo="skip")
        key = "pos" if sign > 0 else "neg"
        fig.add_scatter(x=rho_grid, y=curves[name][key], mode="lines", line=dict(color=color, width=3),
                        name=f"A = {sign:+.0f}")
        fig.add_scatter(x=[token["ratio"]], y=[token["weights"][name][key]], mode="markers",
                        marker=dict(size=11, color=color, line=dict(width=2, color="black")),
                        name=f"your token, A = {sign:+.0f}")
    fig.add_vline(x=token["ratio"], line_dash="dot")
    fig.update_layout(showlegend=False)
    fig.update_yaxes(range=[-2.7, 2.7])
    with cols[i % 3]:
        show(fig, f"weight_chart_{i}")
w = token["weights"]
rows = [{"objective": titles[name], "weight, A = +1": round(w[name]["pos"], 3),
         "weight, A = −1": round(w[name]["neg"], 3)} for name in w]
table(rows, key="weights_at_token")
ppo, hi, cispo, sapo, gspo = (w[k]["pos"] for k in ("PPO clip (grpo)", "clip-higher (DAPO)", "CISPO", "SAPO",
                                                    "GSPO (sequence ratio)"))
st.caption(
    f"Your token, ratio {token['ratio']:.3f}, A > 0: PPO's clip gives weight {ppo:.3f}"
    + (" (silenced: the clip is flat past 1 + ε)" if ppo == 0 else "")
    + f"; clip-higher {hi:.3f}; CISPO keeps it at {cispo:.3f}, a clipped weight but never a zero gradient (the "
    f"“wait” tokens PPO's clip silences); SAPO's soft gate gives {sapo:.3f}; GSPO's one ratio for the whole "
    f"response is {token['sequence_ratio']:.3f} ({RESPONSE_LENGTH} tokens), so it gives {gspo:.3f}, and real "
    "GSPO runs clip with ε around 3e-4. For A < 0 the two-sided δ stops the ever larger push down past "
    f"ρ = {view.delta:.1f}, where PPO's weight grows without bound."
)

st.subheader("Why k3: bias, noise and sign, by sampling")
st.markdown(
    f"Sample tokens from the policy, which gives the token {pi:.2f} and everything else {1 - pi:.2f}, and estimate "
    f"KL(π ‖ π_ref) against the reference's {pi_ref:.2f} / {1 - pi_ref:.2f} by averaging each estimator over "
    f"the sampled tokens. 400 repeats for every sample size."
)
sizes = np.unique(np.round(np.logspace(0, np.log10(1024), 21)).astype(int))
if pi == 1.0 or pi_ref == 1.0:
    st.info("With π or π_ref = 1 the other token has probability 0 and the KL is not finite: lower it below 1.")
else:
    mc = kl_monte_carlo([pi, 1 - pi], [pi_ref, 1 - pi_ref], sizes)
    fig = figure("Estimates of KL against the number of sampled tokens", "tokens per estimate n (log scale)",
                 "estimate (nats)", height=400)
    for name, color in (("k1", COLORS["grey"]), ("k2", COLORS["pin"]), ("k3", COLORS["main"])):
        r = mc[name]
        fig.add_scatter(x=sizes, y=r["hi"], mode="lines", line=dict(width=0), showlegend=False, hoverinfo="skip")
        fig.add_scatter(x=sizes, y=r["lo"], mode="lines", line=dict(width=0), fill="tonexty",
                        fillcolor=rgba(color, 0.15), showlegend=False, hoverinfo="skip")
        fig.add_scatter(x=sizes, y=r["mean"], mode="lines+markers", name=f"{name}: mean of 400 estimates",
                        line=dict(color=color, width=3 if name == "k3" else 2))
    fig.add_hline(y=mc["exact"], line_dash="dash", line_color=COLORS["expected"],
                  annotation_text=f"exact KL = {mc['exact']:.4f}")
    fig.add_vline(x=n, line_dash="dot")
    fig.update_xaxes(type="log", tickvals=[1, 4, 16, 64, 256, 1024])  # no small minor labels on the log axis
    show(fig, "kl_mc_chart")
    one = kl_monte_carlo([pi, 1 - pi], [pi_ref, 1 - pi_ref], [n])
    cols = st.columns(3)
    for col, name in zip(cols, ("k1", "k2", "k3"), strict=True):
        r = one[name]
        col.metric(f"{name} with n = {n}", f"{r['mean'][0]:.4f} ± {r['std'][0]:.4f}",
                   f"negative in {r['frac_negative'][0]:.0%} of estimates", delta_color="off", delta_arrow="off")
    st.caption(
        f"Shaded: the middle 80% of the 400 estimates. The exact KL here is {mc['exact']:.4f}. k1 (grey) is right on "
        f"average but noisy, and with one token it is negative {mc['k1']['frac_negative'][0]:.0%} of the time. "
        f"k2 (orange) is never negative but biased: its mean stays at {mc['k2']['mean'][-1]:.4f} however many "
        f"tokens (the bias grows as π and π_ref move apart). k3 (blue) is "
        f"unbiased and never negative, with a spread of {mc['k3']['std'][0]:.4f} from one token against k1's "
        f"{mc['k1']['std'][0]:.4f}: that is why GRPO uses it."
    )
