"""TinyLM: a real GRPO run on a small transformer that learns two-digit addition (sim.tinylm)."""

import uuid

import streamlit as st

from sim.tinylm.checkpoint import CheckpointError, load_checkpoint
from sim.tinylm.figures import load_seed_figures
from sim.tinylm.grpo_train import METRICS, GRPOConfig
from sim.tinylm.job import TrainingJob
from sim.tinylm.memory import MemoryCapError, check_run
from sim.tinylm.story import StoryConfig
from ui.charts import COLORS, figure, show
from ui.controls import Choice, Flag, Num, classroom_link_builder, control
from ui.page import open_page
from ui.tinylm_runs import left_text, poll_interval, queue_text, registry

CHARTS = [("reward", "pass_at_1"), ("entropy",), ("kl",), ("frac_reward_zero_std",), ("completions/mean_length",),
          ("grad_norm",), ("clip_ratio/region_mean",), ("step_time",)]  # fmt: skip
# Every setting is a URL parameter built from GRPOConfig's declarations, so a link reproduces the run, seed included.
ON_SPEC = Flag("tinylm_on", "Trainer on", False, help="Off by default so the app stays light.")
SETTINGS = [
    Num.of(GRPOConfig, "iterations", "tl_iters", "Iterations", lo=1, hi=600),
    Num.of(GRPOConfig, "prompts_per_iter", "tl_P", "Prompts per iteration P", hi=64),
    Num.of(GRPOConfig, "group_size", "tl_G", "Group size G", hi=32),
    Choice.of(GRPOConfig, "lr", "tl_lr", "Peak learning rate", options=(1e-4, 3e-4, 5e-4, 1e-3, 2e-3),
              help="AdamW, after a short warmup, decayed linearly to 0"),
    Choice.of(GRPOConfig, "beta", "tl_beta", "KL coefficient β", options=(0.0, 0.001, 0.01, 0.04, 0.1),
              labels={0.0: "TRL default", 0.001: "R1-Zero", 0.04: "DeepSeekMath"}),
    Num.of(GRPOConfig, "mu", "tl_mu", "Inner steps μ", hi=4),
    Choice.of(GRPOConfig, "scale", "tl_scale", "Std scaling"),
    Choice.of(GRPOConfig, "baseline", "tl_baseline", "Baseline"),
    Choice.of(GRPOConfig, "loss_type", "tl_loss", "Loss aggregation"),
    Num.of(GRPOConfig, "seed", "tl_seed", "Seed", hi=9999),
    Choice.of(StoryConfig, "eval_samples", "tl_eval", "Samples per held-out problem", options=(4, 8, 16, 32, 64)),
]
SPECS = [ON_SPEC, *SETTINGS]


@st.cache_resource(show_spinner=False, max_entries=1)
def checkpoint_status() -> str | None:
    """None if the shipped SFT checkpoint loads, else the error message."""
    try:
        load_checkpoint()
    except CheckpointError as e:
        return str(e)
    return None


def viewer_id() -> str:
    """This browser session's name in the job registry (its heartbeat key)."""
    return st.session_state.setdefault("tl_viewer", uuid.uuid4().hex)


def session_job() -> TrainingJob | None:
    return st.session_state.get("tinylm_job")


def start_job(cfg: StoryConfig) -> None:
    """Join the run for these settings (shared with every session that chose the same), leaving any other."""
    old = session_job()
    if old is not None and old.cfg != cfg:
        old.leave(viewer_id())
    st.session_state.tinylm_job = registry().join(cfg, viewer_id())
    st.session_state.tl_left = False


def leave_job() -> None:
    job = session_job()
    if job is not None:
        job.leave(viewer_id())
        st.session_state.tl_left = True


def pause_job(on: bool) -> None:
    job = session_job()
    if job is not None:
        job.pause(viewer_id()) if on else job.resume(viewer_id())


open_page(
    "TinyLM: GRPO on a real model",
    "A two-layer transformer learned two-digit addition by supervised fine-tuning on an imperfect teacher "
    "and stopped at about half right (pass@1 ≈ 0.5 at temperature 1). The teacher writes a near miss (off by 1 "
    "or 10) for 30 % of problems, and has a blind spot: when a carry ripples through the tens into the hundreds "
    "(45+57 = 102) it nearly always forgets the last carry and writes 02. So the model's most likely answer is "
    "usually right, a sample often is not, and a few problems it almost never gets right. GRPO samples a group "
    "of answers per prompt, scores them with the exact-match verifier and pushes up the answers that beat their "
    "group. Watch the reward rise and the entropy fall, then compare pass@k before and after on 300 held-out "
    "problems, and the problems that no sample solves.",
)
on = control(ON_SPEC)
if not on:
    classroom_link_builder(SPECS)
    st.info("Switch the trainer on to set up a run.")
    st.stop()
with st.sidebar:
    st.subheader("GRPO settings")
    v = {spec.key: control(spec) for spec in SETTINGS}
classroom_link_builder(SPECS)

grpo_cfg = GRPOConfig(
    iterations=v["tl_iters"], prompts_per_iter=v["tl_P"], group_size=v["tl_G"], lr=v["tl_lr"], beta=v["tl_beta"],
    mu=v["tl_mu"], scale=v["tl_scale"], baseline=v["tl_baseline"], loss_type=v["tl_loss"], seed=v["tl_seed"],
    threads=1,
)  # fmt: skip
from_scratch = st.session_state.get("tl_from_scratch", False)
cfg = StoryConfig(grpo=grpo_cfg, eval_samples=int(v["tl_eval"]), from_scratch=from_scratch)

problem = checkpoint_status()
if problem and not from_scratch:
    st.error("The shipped SFT checkpoint cannot be used:", icon=":material/error:")
    st.text(problem)
    st.button("Train SFT from scratch", key="tl_scratch", on_click=st.session_state.__setitem__,
              args=("tl_from_scratch", True))  # fmt: skip
    st.stop()
try:
    check_run(grpo_cfg.prompts_per_iter, grpo_cfg.group_size, cfg.sft.model, cfg.eval_samples)
    too_big = None
except MemoryCapError as e:
    too_big = str(e)

me = viewer_id()
job = session_job()
watching = job is not None and job.running and not st.session_state.get("tl_left", False)
shared = watching and job.snapshot()["viewers"] > 1
paused = watching and job.paused
c1, c2, c3, c4 = st.columns(4)
c1.button("Start", key="tl_start", type="primary", on_click=start_job, args=(cfg,), disabled=too_big is not None)
c2.button("Pause", key="tl_pause", disabled=paused or not (watching and job.can_pause(me)), on_click=pause_job,
          args=(True,))  # fmt: skip
c3.button("Resume", key="tl_resume", disabled=not paused, on_click=pause_job, args=(False,))
c4.button("Leave" if shared else "Stop", key="tl_stop", disabled=not watching, on_click=leave_job)
if too_big:
    st.error("These settings would not fit in the server's memory:", icon=":material/error:")
    st.text(too_big)
st.caption(
    f"Everyone who starts the same settings (seed included) watches the same run, and a finished run replays at "
    f"once: runs are deterministic, so it is the run you would have got. At most {registry().max_concurrent} different "
    f"runs train at once on this server; others wait their turn, first come first served. A shared run cannot be "
    f"paused, and Stop only leaves it: it ends when nobody watches."
)


def metric_figure(snap: dict, names: tuple[str, ...]):
    fig = figure(names[0], "iteration", names[0], height=260)
    hist = [m for m in snap["history"] if names[0] in m]  # "kl" is measured every few iterations when β = 0
    xs = [m["iteration"] for m in hist]
    fig.add_scatter(x=xs, y=[m[names[0]] for m in hist], name=names[0], line=dict(color=COLORS["main"]))
    if "pass_at_1" in names:
        pts = snap["pass_at_1"]
        fig.add_scatter(x=[i for i, _ in pts], y=[p for _, p in pts], name="held-out pass@1",
                        line=dict(color=COLORS["good"], width=3))  # fmt: skip
    return fig


def group_rows(snap: dict) -> list[dict]:
    rows = []
    for g in snap["groups"]:
        for resp, r, a in zip(g["responses"], g["rewards"], g["advantages"], strict=True):
            rows.append({"prompt": g["prompt"], "response": resp, "reward": r, "advantage": round(a, 3)})
    return rows


@st.cache_resource(show_spinner=False, max_entries=32)
def live_view(job_serial: int, iteration: int, n_pass: int, _snap: dict) -> tuple[list, list[dict]]:
    """The eight charts and the groups table of one run at one iteration, built once for all its viewers
    (a shared run has many; only an optimisation: a cleared cache just rebuilds)."""
    return [metric_figure(_snap, names) for names in CHARTS], group_rows(_snap)


def passk_chart(res: dict) -> None:
    """pass@k against log k, ticks at the powers of 2, the two curves' values marked at the largest k."""
    n = res["eval_samples"]
    ks = list(range(1, n + 1))
    fig = figure(f"pass@k on {res['heldout_problems']} held-out problems", "k (log scale)", "pass@k",
                 y_range=[0, 1.02])  # fmt: skip
    ticks = [k for k in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024) if k <= n]
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=[str(k) for k in ticks])
    before, after = res["pass_at_k_before"][-1], res["pass_at_k_after"][-1]
    for name, curve, color in (("SFT", res["pass_at_k_before"], COLORS["grey"]),
                               ("GRPO", res["pass_at_k_after"], COLORS["main"])):  # fmt: skip
        fig.add_scatter(x=ks, y=curve, name=name, mode="lines", line=dict(color=color, width=3))
        above = (curve[-1] >= before) if name == "GRPO" else (curve[-1] > after)  # the higher label goes on top
        fig.add_scatter(x=[n], y=[curve[-1]], name=f"{name} pass@{n}", mode="markers+text", showlegend=False,
                        marker=dict(color=color, size=12, symbol="diamond"), text=[f"{name} {curve[-1]:.3f}"],
                        textfont=dict(color=color), textposition="top left" if above else "bottom left",
                        cliponaxis=False)  # fmt: skip
    show(fig, key="tl_passk")


def results(res: dict) -> None:
    passk_chart(res)
    cross = res["crossover_k"]
    st.markdown("The curves " + ("do not cross." if cross is None else f"cross at k ≈ {cross:.1f}."))
    a, b = st.columns(2)
    a.metric("Never solved by SFT", len(res["never_solved_before"]))
    a.text(", ".join(res["never_solved_before"]) or "none")
    b.metric("Never solved after GRPO", len(res["never_solved_after"]))
    b.text(", ".join(res["never_solved_after"]) or "none")


def seed_table() -> None:
    """The default run over several seeds, as measured by scripts/bench_tinylm.py (assets/tinylm_seeds.json)."""
    fig = load_seed_figures()
    if fig is None:
        return
    with st.expander(f"The default run over {len(fig['runs'])} seeds: what GRPO does at large k", expanded=False):
        st.table([{"GRPO seed": r["seed"],
                   "pass@1 SFT → GRPO": f"{r['pass_at_1_before']:.3f} → {r['pass_at_1_after']:.3f}",
                   "pass@64 SFT → GRPO": f"{r['pass_at_64_before']:.3f} → {r['pass_at_64_after']:.3f}",
                   "never solved SFT → GRPO": f"{r['never_solved_before']} → {r['never_solved_after']}",
                   "curves cross at k": "none" if r["crossover_k"] is None else f"{r['crossover_k']:.1f}"}
                  for r in fig["runs"]])  # fmt: skip
        st.caption(fig["summary"])
        st.markdown(fig["reading"])


_snap = job.snapshot() if watching else None
# Poll fast until the first iteration arrives (the first chart), then as often as the number of viewers allows.
POLL = poll_interval(_snap["viewers"]) if watching else None


@st.fragment(run_every=POLL)
def progress() -> None:
    job = session_job()
    if job is None:
        st.info("Press Start to run GRPO from the shipped SFT checkpoint.")
        return
    left = st.session_state.get("tl_left", False)
    snap = job.snapshot(None if left else me)
    state = snap["state"]
    if left and job.running:
        st.info(left_text(snap))
    elif snap["viewers"] > 1 and state not in ("done", "stopped", "error"):
        st.info(f"Shared with {snap['viewers']} viewers: everyone who started these settings watches this run.")
    if queue_text(snap):
        st.info(queue_text(snap))
    elif state == "error":
        st.error("The run stopped with an error:", icon=":material/error:")
        st.text(snap["error"])
        if snap["checkpoint_error"]:
            st.button("Train SFT from scratch", key="tl_scratch2", on_click=st.session_state.__setitem__,
                      args=("tl_from_scratch", True))  # fmt: skip
    label = {"queued": "waiting", "starting": "starting",
             "sft": "training SFT from scratch", "grpo": "GRPO", "eval": "evaluating pass@k", "done": "done",
             "stopped": "stopped"}.get(state, state)  # fmt: skip
    if snap["paused"] and state == "grpo":
        label = "paused"
    st.progress(min(snap["iteration"] / snap["iterations"], 1.0), text=f"{label}: {snap['iteration']} / "
                f"{snap['iterations']} iterations")  # fmt: skip
    if snap["history"]:
        cols = st.columns(4)
        for col, name in zip(cols, ("reward", "entropy", "kl", "frac_reward_zero_std"), strict=True):
            last = next((m[name] for m in reversed(snap["history"]) if name in m), float("nan"))
            col.metric(name, f"{last:.3f}")
        figs, rows = live_view(job.serial, snap["iteration"], len(snap["pass_at_1"]), snap)
        left_col, right_col = st.columns(2)
        for i, (names, fig) in enumerate(zip(CHARTS, figs, strict=True)):
            with left_col if i % 2 == 0 else right_col:
                show(fig, key=f"tl_chart_{names[0]}")
        st.subheader("Latest groups (as in TRL's completions log)")
        st.dataframe(rows, hide_index=True, height=300)
    if state == "done":
        results(snap["result"])
    if watching and not job.running:
        st.rerun()  # the job ended: redraw the buttons once
    if watching and not left and snap["history"] and poll_interval(snap["viewers"]) > 2 * POLL:
        st.rerun()  # charts are up and there are many viewers: poll less often (see poll_interval)


progress()
seed_table()
st.caption("Metrics use TRL's names: " + ", ".join(METRICS) + ".")
