"""Training dynamics, declared once (sim/views/doc.py): GRPO on the chapter's 24-prompt toy, computed and played in
the browser, in the app and in a lesson alike.

`training_charts(cfg, run, exp)` is the one function that turns a run (`run_toy(cfg)`, `expected_run(cfg)`) into
what the player shows, with its captions; assets/js/toy_views.js is its JavaScript twin (tests/test_js_views.py), and
that twin is what the browser runs. The view's document is one Live block: the config, validated here.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from sim.player.spec import COLORS, Band, Bars, Chart, Heatmap, Line, rgba
from sim.toy import ToyConfig, ToyHistory, check_table, clip_summary, first_above, gave_signal, seed_band
from sim.views.controls import Choice, Flag, Num, build_config, defaults
from sim.views.doc import Live, Note, Text, Verdict, View

BETAS = (0.0, 0.001, 0.01, 0.04, 0.1)  # the page's choices of β
BETA_LABELS = {0.0: "TRL default", 0.001: "R1-Zero", 0.04: "DeepSeekMath"}
# The page's controls, in the sidebar's order; their URL keys are the presets' keys.
CONTROLS = (
    Num.of(ToyConfig, "group_size", hi=64),
    Choice.of(ToyConfig, "beta", options=BETAS, labels=BETA_LABELS),
    Choice.of(ToyConfig, "scale"),
    Choice.of(ToyConfig, "baseline"),
    Num.of(ToyConfig, "lr", lo=0.05, hi=2.0, fmt="%.2f"),
    Num.of(ToyConfig, "lr_w", hi=2.0, default=ToyConfig().lr, fmt="%.2f",
           help="the chapter's toy moves w and u_j at the same rate; 0 switches the shared skill off"),
    Num.of(ToyConfig, "mu", hi=8, help="μ > 1 reuses the batch; then the clip matters"),
    Num.of(ToyConfig, "clip_eps", lo=0.05, hi=0.5, fmt="%.2f"),
    Choice.of(ToyConfig, "clip_eps_high", options=(None, 0.28, 5),
              labels={None: "= ε", 0.28: "DAPO clip-higher", 5: "CISPO's ε_max (TRL)"}),
    Choice.of(ToyConfig, "loss_type", help="with μ > 1: PPO's clip silences an answer whose ratio left the range; "
              "CISPO caps its weight and keeps its gradient"),
    Flag.of(ToyConfig, "dynamic_sampling"),
    Num.of(ToyConfig, "d_min", lo=-10.0, hi=10.0, fmt="%.1f"),
    Num.of(ToyConfig, "d_max", lo=-10.0, hi=15.0, fmt="%.1f"),
    Num.of(ToyConfig, "seed", hi=9999),
    Num.of(ToyConfig, "n_seeds", hi=64, default=16),
    Num.of(ToyConfig, "iterations", lo=50, hi=500),
)
PRESETS = {  # name -> the settings it changes, by URL key (the rest go back to their defaults)
    "Chapter defaults": {},
    "No shared skill (lr_w = 0)": {"lr_w": 0.0},
    "R1-Zero's KL (β = 0.001)": {"beta": 0.001},
    "Dr. GRPO (no std)": {"scale": "none"},
    "μ = 8, lr 2: the clip bites": {"mu": 8, "lr": 2.0},
    "… with clip-higher (DAPO)": {"mu": 8, "lr": 2.0, "eps_high": 0.28},
    "… with CISPO": {"mu": 8, "lr": 2.0, "loss": "cispo", "eps_high": 5},
}


def page_config(values: dict) -> ToyConfig:
    """The config the page runs for these URL values (keys of CONTROLS), the others at the page's defaults."""
    keys = {c.key for c in CONTROLS}
    unknown = sorted(set(values) - keys)
    if unknown:
        raise ValueError(f"not a Training dynamics setting: {', '.join(unknown)} (one of {', '.join(keys)})")
    return build_config(ToyConfig, CONTROLS, {**defaults(CONTROLS), **values})


NOT_DRAWN, NO_SIGNAL, SIGNAL = 0, 1, 2  # bar colours: before any group / all answers equal / mixed rewards
HEIGHTS = (300, 330)  # chart height in px: normal, presenter
HARD = 0.1  # the hardest prompt "starts to learn" once its p passes this


def bar_categories(run: ToyHistory) -> np.ndarray:
    """(T+1, P) colour of bar j at iteration t: whether prompt j's group in iteration t had mixed rewards
    (seed 0); at t = 0 no group has been drawn yet."""
    signal = gave_signal(run.counts[:, 0], run.config.group_size)  # (T, P): iteration t+1's groups
    drawn = np.where(signal, SIGNAL, NO_SIGNAL)
    return np.vstack([np.full((1, drawn.shape[1]), NOT_DRAWN), drawn]).astype(np.uint8)  # (T+1, P)


def clip_note(cfg: ToyConfig, run: ToyHistory, ppo: ToyHistory | None) -> str:
    """With mu > 1: how much the clip acted and how soon the hardest prompt learned, against PPO's symmetric
    clip at the same setting (`ppo`; None when this run is that one)."""
    if cfg.mu == 1:
        return ""
    mine = clip_summary(run, HARD)
    what = "capped the weight of" if cfg.loss_type == "cispo" else "silenced"
    eps_high = cfg.clip_eps if cfg.clip_eps_high is None else cfg.clip_eps_high
    name = f"PPO's clip (ε = {cfg.clip_eps:g})"
    if cfg.loss_type == "cispo":
        name = f"CISPO (ε_max = {eps_high:g})"
    elif eps_high != cfg.clip_eps:
        name = f"clip-higher (ε high = {eps_high:g})"
    hard = "never" if mine["hard_at"] is None else f"at iteration {mine['hard_at']}"
    text = (f" μ = {cfg.mu} reuses each batch: {name} {what} {mine['clip']:.2%} of answers per step "
            f"({mine['peak']:.1%} at most); the hardest prompt passes p = {HARD} {hard}")
    if ppo is None:
        return text + ". Try clip-higher or CISPO, which keep the gradient of answers whose ratio rose."
    base = clip_summary(ppo, HARD)
    base_hard = "never" if base["hard_at"] is None else f"at iteration {base['hard_at']}"
    return (text + f"; with PPO's clip (ε = {cfg.clip_eps:g}) it silenced {base['clip']:.2%} "
            f"({base['peak']:.1%} at most) and the hardest prompt passed {base_hard}.")


def captions(cfg: ToyConfig, run: ToyHistory, ppo: ToyHistory | None = None) -> dict[str, str]:
    """What each chart shows for this run, in words, with its numbers."""
    acc, z, H = run.accuracy.mean(axis=1), run.metrics["frac_reward_zero_std"].mean(axis=1), run.entropy.mean(axis=1)
    wrong, right = run.metrics["frac_all_wrong"].mean(axis=1), run.metrics["frac_all_correct"].mean(axis=1)

    def side(t: int) -> str:  # which kind of dead group the chart's stack shows more of at iteration t
        if wrong[t] + right[t] == 0:
            return "none"
        return "mostly all wrong, red" if wrong[t] >= right[t] else "mostly all correct, green"

    starts, peak = first_above(run.p[:, :, -1].mean(axis=1), HARD), int(np.argmax(H))
    if peak > 0 and H[peak] > H[0] + 0.005 and H[-1] < H[peak]:
        entropy = (f"Entropy first rises, {H[0]:.3f} → {H[peak]:.3f} nats by iteration {peak}, as the many hard "
                   "prompts move from p ≈ 0 toward 1/2, where an answer is least certain; then it falls to "
                   f"{H[-1]:.3f} as prompts head for p = 1.")
    else:
        entropy = f"Entropy goes {H[0]:.3f} → {H[-1]:.3f} nats."
    if starts is not None:
        waits = (f"The hardest prompt (bottom row) stays dark, below p = {HARD}, until iteration {starts}: its "
                 "groups are all wrong until the shared skill makes it sometimes solvable.")
    else:
        waits = (f"The hardest prompt (bottom row) never passes p = {HARD}: its groups stay all wrong"
                 + (", and with lr_w = 0 no shared skill lifts it." if cfg.lr_w == 0 else "."))
    return {
        "acc": f"Accuracy {acc[0]:.2f} → {acc[-1]:.2f}. Band: the middle 80% of {cfg.n_seeds} seeds; thick blue: "
               "their mean; dashed black: the exact expected run, drawn in full from the start.",
        "zero": f"No gradient: {z[0]:.0%} of groups at first ({side(0)}), {z[-1]:.0%} at the end ({side(-1)}). "
                "Dashed: mean_j p_j^G + (1 − p_j)^G.",
        "bars": "Blue: the prompt's group in iteration t had mixed rewards and taught something; grey: all its "
                "answers got the same reward (no gradient).",
        "heat": waits + clip_note(cfg, run, ppo),
        "kl": f"KL to the reference rises to {run.kl_exact.mean(axis=1)[-1]:.2f} nats. {entropy} Dotted: expected.",
    }


def training_charts(cfg: ToyConfig, run: ToyHistory, exp: ToyHistory, pinned: tuple | None = None,
                    mine: ToyHistory | None = None, big: bool = False, ppo: ToyHistory | None = None) -> list[Chart]:
    """Training dynamics' five charts, with their captions, for run = run_toy(cfg), exp = expected_run(cfg).
    pinned = (label, run) overlays a pinned run; mine = the expected run with a student's advantages;
    big = presenter heights; ppo = this setting's run with PPO's symmetric clip, for the clip caption (mu > 1)."""
    G, S = cfg.group_size, cfg.n_seeds
    h = HEIGHTS[1] if big else HEIGHTS[0]
    say = captions(cfg, run, ppo)
    band = seed_band(run.accuracy)  # (T+1,) each
    m, em = run.metrics, exp.metrics
    acc = [Band(band["lo"], band["hi"], f"middle 80% of {S} seeds", color=rgba(COLORS["main"], 0.28)),
           Line(band["mean"], "mean of the seeds", color=COLORS["main"], width=4),
           Line(exp.accuracy[:, 0], "expected (exact)", reveal="full", color=COLORS["expected"], width=2,
                dash="dash")]
    zero = [Line(m["frac_all_wrong"].mean(axis=1), "all wrong", x0=1, stackgroup="z", color=COLORS["bad"]),
            Line(m["frac_all_correct"].mean(axis=1), "all correct", x0=1, stackgroup="z", color=COLORS["good"]),
            Line(em["expected_zero_frac"][:, 0], "expected", x0=1, reveal="full", color=COLORS["expected"],
                 dash="dash")]
    kl = [Line(run.kl_exact.mean(axis=1), "KL(π ‖ π_ref)", color=COLORS["main"], width=3),
          Line(run.entropy.mean(axis=1), "entropy", color=COLORS["good"], width=3),
          Line(exp.kl_exact[:, 0], "KL, expected", reveal="full", color=COLORS["main"], dash="dot", width=1.5),
          Line(exp.entropy[:, 0], "entropy, expected", reveal="full", color=COLORS["good"], dash="dot", width=1.5)]
    if pinned is not None:
        label, p = pinned
        acc.append(Line(p.accuracy.mean(axis=1), label, color=COLORS["pin"], width=3))
        zero.append(Line(p.metrics["frac_reward_zero_std"].mean(axis=1), label, x0=1, color=COLORS["pin"], width=3))
        kl += [Line(p.kl_exact.mean(axis=1), f"KL, {label}", color=COLORS["pin"]),
               Line(p.entropy.mean(axis=1), f"entropy, {label}", color=COLORS["pin"], dash="dot")]
    if mine is not None:
        acc.append(Line(mine.accuracy[:, 0], "expected, your group_advantages", reveal="full", color="#9467bd",
                        width=3, dash="dashdot"))
    return [
        Chart(f"Mean accuracy over the {cfg.n_prompts} prompts (G = {G})", acc, y_title="accuracy  mean_j p_j",
              y_range=(0, 1), height=h, caption=say["acc"]),
        Chart(f"Groups with zero gradient (G = {G})", zero, y_title="fraction of groups", y_range=(0, 1), height=h,
              caption=say["zero"]),
        Chart("Each prompt's p_j after {t} iterations (seed " + str(cfg.seed) + ")", [
            Bars(run.p[:, 0], categories=bar_categories(run), colors=("#9ecae1", COLORS["grey"], COLORS["main"]),
                 names=("no group drawn yet", "all answers equal: no signal", "mixed rewards: taught something")),
        ], x_title="prompt j (easy → hard)", y_title="p_j", y_range=(0, 1), height=h, caption=say["bars"]),
        Chart(f"p_j over time (seed {cfg.seed}): hard prompts wait", [Heatmap(run.p[:, 0], colorbar_title="p_j")],
              y_title="prompt j (easy → hard)", height=h, caption=say["heat"]),
        Chart("KL to the reference and entropy", kl, y_title="nats (mean over prompts)", height=h,
              caption=say["kl"]),
    ]


def hard_prompt_question(run: ToyHistory) -> dict | None:
    """The page's predict-first question (ui/predict.py's keywords): when does the hardest prompt pass HARD?
    None if it never does in this run."""
    hard = run.p[:, :, -1].mean(axis=1)  # (T+1,) the hardest prompt's p, mean over seeds
    starts = first_above(hard, HARD)
    if starts is None:
        return None
    return {"question": f"The hardest prompt starts at p = {hard[0]:.3f}, so its groups are all wrong. Around which "
                        f"iteration will its p pass {HARD} (mean over the seeds)?",
            "answer": starts, "tolerance": max(10, starts // 5), "fmt": "{:.0f}", "lo": 0, "hi": run.config.iterations,
            "explain": "It waits until the shared skill w, pushed by the other prompts, makes it sometimes "
                       "solvable: RL can only reinforce answers the model sometimes produces."}


def lab_table(cfg: ToyConfig, lab) -> tuple[list, list | None]:
    """The app's "Use my lab code": the student's group_advantages tabulated for this G in the lab's sandbox, its
    verdict, and the table the browser trains the toy with (right or wrong: a mistake shows in the run), or None."""
    if cfg.baseline != "mean" or cfg.scale == "batch" or cfg.ddof != 0:
        return [Note("Your group_advantages is the chapter's (group mean, population std, optional std division): set "
                     "the baseline to mean and the std to group or none to train the toy with it.")], None
    tab = lab.advantage_table(cfg.group_size, scale_std=cfg.scale == "group", eps=cfg.eps)
    doc = [Verdict(tab, f"group_advantages, tabulated for G = {cfg.group_size}", lab, "group_advantages")]
    if tab.student is None:
        return doc, None
    try:
        a_c, a_w = check_table(cfg, (tab.student[:, 0], tab.student[:, 1]))
    except ValueError as e:
        return doc + [Note("The toy cannot train with your advantages:", tone="error"), Text(str(e))], None
    return doc, [a_c.tolist(), a_w.tolist()]


def show(values: dict, lab=None, pinned: dict | None = None) -> list:
    """The document: the view the browser computes for this config (five charts, their captions, the predict
    question). `pinned`: the app's pinned run {"label", "values"}; `lab`: the app's "Use my lab code"."""
    cfg = build_config(ToyConfig, CONTROLS, values)  # every field checked by its declaration, the memory cap too
    doc, table = lab_table(cfg, lab) if lab is not None else ([], None)
    pin = None
    if pinned is not None:
        pin = {"label": pinned["label"], "config": dataclasses.asdict(build_config(ToyConfig, CONTROLS,
                                                                                  pinned["values"]))}
    return doc + [Live("training", {"view": "training", "config": dataclasses.asdict(cfg), "pinned": pin,
                                    "table": table, "columns": 2, "classroom_columns": 3})]


VIEW = View(
    "training", "Training dynamics",
    intro=Text("GRPO on a pool of prompts whose difficulty increases left to right. Prompt j is solved with "
               "probability p_j = σ(w + u_j − d_j): d_j a fixed difficulty, u_j the prompt's own parameter, w a shared "
               "skill every prompt's gradient moves (a stand-in for a network's shared weights). Each iteration "
               "samples G answers per prompt, computes group advantages and takes one policy-gradient step. Press "
               "Play: the charts replay the run in your browser.",
               md="GRPO on a pool of prompts whose difficulty increases left to right. Prompt $j$ is solved with "
                  "probability $p_j = \\sigma(w + u_j - d_j)$: $d_j$ a fixed difficulty, $u_j$ the prompt's own "
                  "parameter, $w$ a shared skill every prompt's gradient moves (a stand-in for a network's shared "
                  "weights). Each iteration samples $G$ answers per prompt, computes group advantages and takes one "
                  "policy-gradient step. Press Play: the charts replay the run in your browser."),
    controls=CONTROLS, show=show, presets=PRESETS, fold_intro=True,
    what="The 24-prompt toy in the player (Play / Pause / Step / Reset): accuracy over seeds, zero-gradient groups, "
         "each prompt's p_j, KL and entropy; presets; in the app also Pin, New seed and the exports.",
)  # fmt: skip
