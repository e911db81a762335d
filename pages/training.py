"""Training dynamics: GRPO on the chapter's 24-prompt toy, with Play / Pause / Step / Reset / New seed.

The whole run is computed once per settings (cached, bounded) and kept in this session; Play only
walks the displayed iteration t through it, inside a fragment, so only the charts redraw.
"""

import random
import time

import plotly.graph_objects as go
import streamlit as st

from sim.export import rows_csv, settings_json, trl_grpo_config, trl_snippet
from sim.toy import ToyConfig, expected_run, gave_signal, history_rows, run_toy, seed_band
from ui.charts import COLORS, add_pinned, figure, show
from ui.controls import Choice, Flag, Num, current_values
from ui.page import open_page

SPECS = [
    Num.of(ToyConfig, "group_size", "G", "Group size G", hi=64),
    Num.of(ToyConfig, "beta", "beta", "KL coefficient β", hi=0.2, step=0.01, help="DeepSeekMath 0.04, TRL default 0",
           fmt="%.2f"),
    Choice.of(ToyConfig, "scale", "scale", "Divide the advantages by"),
    Choice.of(ToyConfig, "baseline", "baseline", "Baseline"),
    Num.of(ToyConfig, "lr", "lr", "Learning rate", lo=0.05, hi=2.0, help="gradient step on the logits", fmt="%.2f"),
    Num.of(ToyConfig, "mu", "mu", "Updates per batch μ", hi=8, help="μ > 1 reuses the batch; then the clip matters"),
    Num.of(ToyConfig, "clip_eps", "eps", "Clip ε", lo=0.05, hi=0.5, fmt="%.2f"),
    Flag.of(ToyConfig, "dynamic_sampling", "dyn", "Dynamic sampling (DAPO)"),
    Num.of(ToyConfig, "seed", "seed", "Seed", hi=9999),
    Num.of(ToyConfig, "n_seeds", "seeds", "Seeds in the band", hi=64, default=16),
    Num.of(ToyConfig, "iterations", "T", "Iterations", lo=50, hi=500),
    Num("speed", "Speed (iterations per second)", 1, 60, 16, 1, help="Play's pace; slow ticks advance more per tick"),
]
TICK_S = 0.5  # a tick redraws 5 charts; slower ticks with more iterations each keep a busy server responsive


def toy_config(v: dict) -> ToyConfig:
    return ToyConfig(
        group_size=int(v["G"]),
        beta=float(v["beta"]),
        scale=v["scale"],
        baseline=v["baseline"],
        lr=float(v["lr"]),
        mu=int(v["mu"]),
        clip_eps=float(v["eps"]),
        dynamic_sampling=bool(v["dyn"]),
        iterations=int(v["T"]),
        seed=int(v["seed"]),
        n_seeds=int(v["seeds"]),
    )


@st.cache_data(max_entries=16, show_spinner=False)
def simulate(cfg: ToyConfig):
    """(sampled run with S seeds, exact expected run), cached by the frozen config."""
    return run_toy(cfg), expected_run(cfg)


def session_run(cfg: ToyConfig, slot: str):
    """The run for cfg, kept in this session so fragment ticks do not copy it out of the cache."""
    if st.session_state.get(f"{slot}_cfg") != cfg:
        st.session_state[f"{slot}_run"] = simulate(cfg)
        st.session_state[f"{slot}_cfg"] = cfg
    return st.session_state[f"{slot}_run"]


# ---- Play / Pause / Step / Reset / New seed: idempotent callbacks, run before the script ----
def set_playing(on: bool) -> None:
    st.session_state.playing = on
    st.session_state.last_tick = None


def step() -> None:
    st.session_state.playing = False
    st.session_state.t = st.session_state.get("t", 0) + 1


def reset() -> None:
    st.session_state.playing = False
    st.session_state.t = 0


def new_seed() -> None:
    reset()
    st.session_state.seed = random.randrange(10000)


def pin(values: dict) -> None:
    st.session_state.pinned = dict(values)


def unpin() -> None:
    st.session_state.pop("pinned", None)


st.session_state.setdefault("t", 0)
st.session_state.setdefault("playing", False)

values = open_page(
    "Training dynamics",
    "GRPO on a pool of 24 prompts, difficulty increasing left to right. Prompt $j$ is solved with probability "
    "$p_j = \\sigma(w + u_j - d_j)$: $d_j$ a fixed difficulty, $u_j$ the prompt's own parameter, $w$ a shared "
    "skill every prompt's gradient moves. Each iteration samples $G$ answers per prompt, computes group "
    "advantages and takes a policy-gradient step.",
    SPECS,
    fold_intro=True,
)

try:
    cfg = toy_config(values)
    run, exp = session_run(cfg, "current")
except ValueError as e:  # a setting the engine refuses: say which, never a traceback
    st.error(f"These settings cannot run: {e}")
    st.stop()

T = cfg.iterations
st.session_state.t = min(max(int(st.session_state.t), 0), T)

row = st.container(horizontal=True)  # the media-player bar
row.button(
    "Play",
    icon=":material/play_arrow:",
    key="play",
    on_click=set_playing,
    args=(True,),
    disabled=st.session_state.t >= T,
)
row.button("Pause", icon=":material/pause:", key="pause", on_click=set_playing, args=(False,))
row.button("Step", icon=":material/skip_next:", key="step", on_click=step, disabled=st.session_state.t >= T)
row.button("Reset", icon=":material/replay:", key="reset", on_click=reset, help="back to iteration 0, same seed")
row.button("New seed", icon=":material/casino:", key="new_seed", on_click=new_seed)
if "pinned" in st.session_state:
    row.button("Unpin", key="unpin", on_click=unpin)
else:
    row.button(
        "Pin this run",
        icon=":material/push_pin:",
        key="pin",
        on_click=pin,
        args=(current_values(SPECS),),
        help="keep this run and overlay it on the next settings",
    )

pinned = None
if "pinned" in st.session_state:
    try:
        pinned_cfg = toy_config(st.session_state.pinned)
        pinned = session_run(pinned_cfg, "pinned")[0]
    except ValueError:
        unpin()


def pinned_label() -> str:
    changed = [f"{k}={v}" for k, v in st.session_state.pinned.items() if v != values[k] and k != "speed"]
    return "pinned" + (f" ({', '.join(changed)})" if changed else "")


def accuracy_chart(t: int) -> go.Figure:
    fig = figure(
        f"Mean accuracy over the 24 prompts (G = {cfg.group_size})", "iteration", "accuracy  mean_j p_j", y_range=[0, 1]
    )
    band = seed_band(run.accuracy[: t + 1])
    xs = list(range(t + 1))
    fig.add_scatter(x=xs, y=band["hi"], mode="lines", line=dict(width=0), showlegend=False, hoverinfo="skip")
    fig.add_scatter(
        x=xs,
        y=band["lo"],
        mode="lines",
        line=dict(width=0),
        fill="tonexty",
        fillcolor="rgba(31,119,180,0.2)",
        name=f"10–90% of {cfg.n_seeds} seeds",
    )
    fig.add_scatter(x=xs, y=band["mean"], mode="lines", line=dict(color=COLORS["main"], width=3), name="mean of seeds")
    fig.add_scatter(
        x=list(range(T + 1)),
        y=exp.accuracy[:, 0],
        mode="lines",
        name="expected (exact)",
        line=dict(color="black", dash="dash", width=2),
    )
    if pinned is not None:
        add_pinned(fig, xs, seed_band(pinned.accuracy[: t + 1])["mean"], pinned_label())
    fig.update_xaxes(range=[0, T])
    return fig


def zero_chart(t: int) -> go.Figure:
    fig = figure(f"Groups with zero gradient (G = {cfg.group_size})", "iteration", "fraction of groups", y_range=[0, 1])
    xs = list(range(1, t + 1))
    fig.add_scatter(
        x=xs, y=run.metrics["frac_all_wrong"][:t].mean(axis=1), stackgroup="z", name="all wrong",
        line=dict(color=COLORS["bad"])
    )
    fig.add_scatter(
        x=xs,
        y=run.metrics["frac_all_correct"][:t].mean(axis=1),
        stackgroup="z",
        name="all correct",
        line=dict(color=COLORS["good"]),
    )
    fig.add_scatter(
        x=list(range(1, T + 1)),
        y=exp.metrics["expected_zero_frac"][:, 0],
        mode="lines",
        name="expected",
        line=dict(color="black", dash="dash", width=2),
    )
    if pinned is not None:
        add_pinned(fig, xs, pinned.metrics["frac_reward_zero_std"][:t].mean(axis=1), pinned_label())
    fig.update_xaxes(range=[0, T])
    return fig


def prompts_chart(t: int) -> go.Figure:
    fig = figure(
        f"Each prompt's p_j at iteration {t} (seed {cfg.seed})", "prompt j (easy → hard)", "p_j", y_range=[0, 1]
    )
    if t < T:
        signal = gave_signal(run.counts[t, 0], cfg.group_size)
        colors = [COLORS["main"] if s else COLORS["grey"] for s in signal]
        names = ["signal" if s else "no signal" for s in signal]
    else:
        colors, names = [COLORS["main"]] * cfg.n_prompts, [""] * cfg.n_prompts
    fig.add_bar(x=list(range(cfg.n_prompts)), y=run.p[t, 0], marker_color=colors, hovertext=names, name="p_j")
    fig.update_layout(showlegend=False, hovermode="closest")
    return fig


def heatmap_chart(t: int) -> go.Figure:
    fig = figure(f"p_j over time (seed {cfg.seed}): hard prompts wait", "iteration", "prompt j (easy → hard)")
    fig.add_trace(
        go.Heatmap(
            z=run.p[: t + 1, 0].T,
            x=list(range(t + 1)),
            zmin=0,
            zmax=1,
            colorscale="Viridis",
            colorbar=dict(title="p_j"),
        )
    )
    fig.update_xaxes(range=[-0.5, T + 0.5])
    fig.update_layout(hovermode="closest")
    return fig


def kl_entropy_chart(t: int) -> go.Figure:
    fig = figure("KL to the reference and entropy", "iteration", "nats (mean over prompts)")
    xs = list(range(t + 1))
    fig.add_scatter(x=xs, y=run.kl_exact[: t + 1].mean(axis=1), name="KL(π ‖ π_ref)", line=dict(color=COLORS["main"]))
    fig.add_scatter(x=xs, y=run.entropy[: t + 1].mean(axis=1), name="entropy", line=dict(color=COLORS["good"]))
    if pinned is not None:
        add_pinned(fig, xs, pinned.kl_exact[: t + 1].mean(axis=1), f"KL, {pinned_label()}")
        add_pinned(fig, xs, pinned.entropy[: t + 1].mean(axis=1), f"entropy, {pinned_label()}", dash="dot")
    fig.update_xaxes(range=[0, T])
    return fig


@st.fragment(run_every=TICK_S if st.session_state.playing else None)
def charts() -> None:
    if st.session_state.playing:
        # Advance by wall-clock time, not by tick: when a busy server or browser delivers fewer ticks,
        # each one moves further, so the pace stays near `speed` iterations per second.
        now, last = time.monotonic(), st.session_state.get("last_tick")
        elapsed = TICK_S if last is None else min(now - last, 4 * TICK_S)
        st.session_state.last_tick = now
        st.session_state.t = min(st.session_state.t + max(1, round(values["speed"] * elapsed)), T)
    t = st.session_state.t
    st.progress(t / T, text=f"iteration {t} / {T}")
    c1, c2 = st.columns(2)
    with c1:
        show(accuracy_chart(t), "acc_chart")
        st.caption("Accuracy rises. The band is the spread over seeds; the dashed line is the exact expected run.")
    with c2:
        show(zero_chart(t), "zero_chart")
        st.caption(
            "Share of groups whose answers all got the same reward: no gradient. Early on, hard prompts are "
            "all wrong; as training succeeds, easy ones come back all correct. Dashed: mean_j p_j^G + (1-p_j)^G."
        )
    c3, c4 = st.columns(2)
    with c3:
        show(prompts_chart(t), "prompts_chart")
        st.caption("Blue: the prompt's group had mixed rewards this iteration and taught something; grey: all equal.")
    with c4:
        show(heatmap_chart(t), "heatmap_chart")
        st.caption("Each row is a prompt. Hard prompts stay dark until the shared skill makes them sometimes solvable.")
    show(kl_entropy_chart(t), "kl_chart")
    st.caption(
        "The policy drifts from the reference (KL up) and becomes more deterministic (entropy down); "
        "β > 0 holds it back."
    )
    if st.session_state.playing and t >= T:
        st.session_state.playing = False
        st.rerun()  # full rerun: stop the timer and re-enable the buttons


charts()

st.subheader("Export")
e1, e2 = st.columns(2)
e1.download_button(
    "Run history (CSV)",
    lambda h=run: rows_csv(history_rows(h, per_seed=False)),  # built only when clicked
    file_name="grpo_toy_history.csv",
    mime="text/csv",
    key="dl_csv",
    on_click="ignore",
)
e2.download_button(
    "Settings (JSON)",
    settings_json(values, page="training"),
    file_name="grpo_settings.json",
    mime="application/json",
    key="dl_json",
)
trl = trl_grpo_config(cfg)
with st.expander("Equivalent TRL GRPOConfig"):
    st.code(trl_snippet(trl), language="python")
