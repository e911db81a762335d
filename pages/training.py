"""Training dynamics: GRPO on the chapter's 24-prompt toy, played in the browser.

Widgets -> ToyConfig -> one cached run (S seeds) and its exact expected run, shared by every session ->
the charts, declared once and sent to the browser's player (ui/player.py). Play, Pause, Step, Reset,
the speed and the timeline run in the browser with no message to the server, so a class pressing Play
costs the server nothing; only a setting change reruns the script.
"""

import dataclasses
import functools

import numpy as np
import streamlit as st

from sim.export import settings_json, trl_grpo_config, trl_snippet
from sim.toy import ToyConfig, ToyHistory, clip_summary, first_above, gave_signal, seed_band
from ui.charts import COLORS, rgba
from ui.controls import apply_preset, build_config, current_values, drop_state, fixed_by_link, new_seed, set_state
from ui.labview import lab_switch, verdict
from ui.page import open_page, presenter
from ui.player import Band, Bars, Chart, Heatmap, Line, player
from ui.predict import predict, predict_mode
from ui.runs import student_toy_run, toy_history_csv, toy_runs
from ui.specs import TRAINING as SPECS

PRESETS = {  # name -> the settings it changes (the rest go back to their defaults)
    "Chapter defaults": {},
    "No shared skill (lr_w = 0)": {"lr_w": 0.0},
    "R1-Zero's KL (β = 0.001)": {"beta": 0.001},
    "Dr. GRPO (no std)": {"scale": "none"},
    "μ = 8, lr 2: the clip bites": {"mu": 8, "lr": 2.0},
    "… with clip-higher (DAPO)": {"mu": 8, "lr": 2.0, "eps_high": 0.28},
    "… with CISPO": {"mu": 8, "lr": 2.0, "loss": "cispo", "eps_high": 5},
}
NOT_DRAWN, NO_SIGNAL, SIGNAL = 0, 1, 2  # bar colours: before any group / all answers equal / mixed rewards
HARD = 0.1  # the hardest prompt "starts to learn" once its p passes this


def toy_config(v: dict) -> ToyConfig:
    return build_config(ToyConfig, SPECS, v)


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
        "zero": f"No gradient: {z[0]:.0%} of groups at first (mostly all wrong, red), {z[-1]:.0%} at the end (mostly "
                "all correct, green). Dashed: mean_j p_j^G + (1 − p_j)^G.",
        "bars": "Blue: the prompt's group in iteration t had mixed rewards and taught something; grey: all its "
                "answers got the same reward (no gradient).",
        "heat": waits + clip_note(cfg, run, ppo),
        "kl": f"KL to the reference rises to {run.kl_exact.mean(axis=1)[-1]:.2f} nats. {entropy} Dotted: expected.",
    }


def charts(cfg: ToyConfig, run: ToyHistory, exp: ToyHistory, pinned: tuple | None = None,
           mine: ToyHistory | None = None, big: bool = False, ppo: ToyHistory | None = None) -> list[Chart]:
    """The page's five charts. pinned = (label, run) overlays a pinned run; mine = the expected run with a
    student's advantages; ppo = this setting's run with PPO's symmetric clip, for the clip caption."""
    G, S = cfg.group_size, cfg.n_seeds
    h = 330 if big else 300
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


v = open_page(
    "Training dynamics",
    "GRPO on a pool of prompts whose difficulty increases left to right. Prompt $j$ is solved with probability "
    "$p_j = \\sigma(w + u_j - d_j)$: $d_j$ a fixed difficulty, $u_j$ the prompt's own parameter, $w$ a shared "
    "skill every prompt's gradient moves (a stand-in for a network's shared weights). Each iteration samples "
    "$G$ answers per prompt, computes group advantages and takes one policy-gradient step. Press Play: the "
    "charts replay the run in your browser.",
    SPECS,
    fold_intro=True,
)
with st.sidebar:
    st.caption("Presets")
    for name, changes in PRESETS.items():
        why = fixed_by_link(changes)
        st.button(name, key=f"preset_{name}", on_click=apply_preset, args=(SPECS, changes), width="stretch",
                  disabled=why is not None, help=why)
lab = lab_switch()

try:
    cfg = toy_config(v)
    run, exp = toy_runs(cfg)
except ValueError as e:  # a setting the engine refuses, or a run that diverges: say which, never a traceback
    st.error("These settings cannot run:", icon=":material/error:")
    st.text(str(e))
    st.stop()

pinned = None
if "pinned" in st.session_state:
    try:
        old = st.session_state.pinned
        changed = [f"{k}={val}" for k, val in old.items() if val != v[k]]
        pinned = ("pinned" + (f" ({', '.join(changed)})" if changed else ""), toy_runs(toy_config(old))[0])
    except ValueError:
        del st.session_state.pinned

mine = None
if lab is not None:
    if cfg.baseline != "mean" or cfg.scale == "batch" or cfg.ddof != 0:
        st.info("Your group_advantages is the chapter's (group mean, population std, optional std division): set "
                "the baseline to mean and the std to group or none to train the toy with it.")
    else:
        table = lab.advantage_table(cfg.group_size, scale_std=cfg.scale == "group", eps=cfg.eps)
        verdict(table, f"group_advantages, tabulated for G = {cfg.group_size}", lab=lab, task="group_advantages")
        if table.student is not None:  # right or wrong, train the toy with it: a mistake shows in the run
            try:
                mine = student_toy_run(dataclasses.replace(cfg, n_seeds=1),
                                   (tuple(table.student[:, 0]), tuple(table.student[:, 1])))
            except ValueError as e:
                st.error("The toy cannot train with your advantages:")
                st.text(str(e))

hard = run.p[:, :, -1].mean(axis=1)  # (T+1,) the hardest prompt's p, mean over seeds
starts = first_above(hard, HARD)
if predict_mode() and starts is not None and not predict(
    "hard_prompt", f"The hardest prompt starts at p = {hard[0]:.3f}, so its groups are all wrong. Around which "
    f"iteration will its p pass {HARD} (mean over the seeds)?", answer=starts, tolerance=max(10, starts // 5),
    fmt="{:.0f}", lo=0, hi=cfg.iterations,
    explain="It waits until the shared skill w, pushed by the other prompts, makes it sometimes "
    "solvable: RL can only reinforce answers the model sometimes produces."):
    st.stop()  # the charts wait for the guess

ppo_cfg = dataclasses.replace(cfg, loss_type="grpo", clip_eps_high=None)  # the clip caption's comparison
ppo = toy_runs(ppo_cfg)[0] if cfg.mu > 1 and ppo_cfg != cfg else None
player("training", T=cfg.iterations, charts=charts(cfg, run, exp, pinned, mine, big=presenter(), ppo=ppo),
       columns=3 if presenter() else 2, classroom=presenter())

row = st.container(horizontal=True)
if pinned is not None:
    row.button("Unpin", key="unpin", on_click=drop_state, args=("pinned",))
else:
    row.button("Pin this run", icon=":material/push_pin:", key="pin", help="keep this run and overlay it on the next",
               on_click=set_state, args=("pinned", current_values(SPECS)))
row.button("New seed", icon=":material/casino:", key="new_seed", on_click=new_seed,
           disabled=fixed_by_link(["seed"]) is not None, help=fixed_by_link(["seed"]))
row.download_button("Run history (CSV)", functools.partial(toy_history_csv, cfg),
                    file_name="grpo_toy_history.csv", mime="text/csv", key="dl_csv", on_click="ignore")
row.download_button("Settings (JSON)", settings_json(v, page="training"), file_name="grpo_settings.json",
                    mime="application/json", key="dl_json", on_click="ignore")
with st.expander("Equivalent TRL GRPOConfig"):
    st.code(trl_snippet(trl_grpo_config(cfg)), language="python")
