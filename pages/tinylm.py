"""TinyLM: a real GRPO run on a small transformer that learns two-digit addition (sim.tinylm)."""

import streamlit as st

from sim.grpo import BASELINES, LOSS_TYPES, SCALES
from sim.tinylm.checkpoint import CheckpointError, load_checkpoint
from sim.tinylm.grpo_train import METRICS, GRPOConfig
from sim.tinylm.job import MAX_CONCURRENT, TrainingJob
from ui.charts import COLORS, figure, show
from ui.controls import Choice, Flag, Num, apply_classroom_style, classroom_link_builder, control, ensure_app_navigation

CHARTS = [("reward", "pass_at_1"), ("entropy",), ("kl",), ("frac_reward_zero_std",), ("completions/mean_length",),
          ("grad_norm",), ("clip_ratio/region_mean",), ("step_time",)]  # fmt: skip
D = GRPOConfig()
LRS = ("1e-4", "3e-4", "5e-4", "1e-3", "2e-3")  # peak learning rates (linear decay after a short warmup)
BETAS = ("0", "0.001", "0.01", "0.04", "0.1")
EVAL_SAMPLES = ("4", "8", "16", "32", "64")
# Every setting is a URL parameter (ui.controls), so a link reproduces the run, seed included.
ON_SPEC = Flag("tinylm_on", "Trainer on", False, help="Off by default so the app stays light.")
ITERS_SPEC = Num("tl_iters", "Iterations", 1, 600, D.iterations, 1)
P_SPEC = Num("tl_P", "Prompts per iteration P", 1, 64, D.prompts_per_iter, 1)
G_SPEC = Num("tl_G", "Group size G", 2, 32, D.group_size, 1)
LR_SPEC = Choice("tl_lr", "Peak learning rate", LRS, "1e-3")
BETA_SPEC = Choice("tl_beta", "KL coefficient β", BETAS, "0")
MU_SPEC = Num("tl_mu", "Inner steps μ", 1, 4, D.mu, 1)
SCALE_SPEC = Choice("tl_scale", "Std scaling", SCALES, D.scale)
BASELINE_SPEC = Choice("tl_baseline", "Baseline", BASELINES, D.baseline)
LOSS_SPEC = Choice("tl_loss", "Loss aggregation", LOSS_TYPES, D.loss_type)
SEED_SPEC = Num("tl_seed", "Seed", 0, 9999, D.seed, 1)
EVAL_SPEC = Choice("tl_eval", "Samples per held-out problem", EVAL_SAMPLES, "64")
SETTINGS = [ITERS_SPEC, P_SPEC, G_SPEC, LR_SPEC, BETA_SPEC, MU_SPEC, SCALE_SPEC, BASELINE_SPEC, LOSS_SPEC, SEED_SPEC,
            EVAL_SPEC]  # fmt: skip
SPECS = [ON_SPEC, *SETTINGS]


@st.cache_resource(show_spinner=False, max_entries=1)
def checkpoint_status() -> str | None:
    """None if the shipped SFT checkpoint loads, else the error message."""
    try:
        load_checkpoint()
    except CheckpointError as e:
        return str(e)
    return None


def start_job(cfg: GRPOConfig, eval_samples: int, from_scratch: bool) -> None:
    old = st.session_state.get("tinylm_job")
    if old is not None:
        old.stop()
    st.session_state.tinylm_job = TrainingJob(cfg, eval_samples=eval_samples, from_scratch=from_scratch).start()


def job_call(method: str) -> None:
    job = st.session_state.get("tinylm_job")
    if job is not None:
        getattr(job, method)()


ensure_app_navigation()
apply_classroom_style()
st.title("TinyLM: GRPO on a real model")
st.markdown(
    "A two-layer transformer learned two-digit addition by supervised fine-tuning on a noisy teacher (30 % "
    "of its answers off by 1 or 10) and stopped at about half right (pass@1 ≈ 0.5 at temperature 1); its "
    "most likely answer is usually right, a sample often is not. GRPO now samples a group of answers per "
    "prompt, scores them with the exact-match verifier and pushes up the answers that beat their group. "
    "Watch the reward rise and the entropy fall, then compare pass@k before and after on 300 held-out problems."
)
on = control(ON_SPEC)
classroom_link_builder(SPECS)
if not on:
    st.info("Switch the trainer on to set up a run.")
    st.stop()

with st.sidebar:
    st.subheader("GRPO settings")
    v = {spec.key: control(spec) for spec in SETTINGS}

cfg = GRPOConfig(
    iterations=v["tl_iters"], prompts_per_iter=v["tl_P"], group_size=v["tl_G"], lr=float(v["tl_lr"]),
    beta=float(v["tl_beta"]), mu=v["tl_mu"], scale=v["tl_scale"], baseline=v["tl_baseline"], loss_type=v["tl_loss"],
    seed=v["tl_seed"], threads=1,
)  # fmt: skip
eval_samples = int(v["tl_eval"])

problem = checkpoint_status()
from_scratch = st.session_state.get("tl_from_scratch", False)
if problem and not from_scratch:
    st.error(problem)
    st.button("Train SFT from scratch", key="tl_scratch", on_click=st.session_state.__setitem__,
              args=("tl_from_scratch", True))  # fmt: skip
    st.stop()

job: TrainingJob | None = st.session_state.get("tinylm_job")
running = job is not None and job.running
c1, c2, c3, c4 = st.columns(4)
c1.button("Start", key="tl_start", type="primary", on_click=start_job, args=(cfg, eval_samples, from_scratch))
c2.button("Pause", key="tl_pause", disabled=not running, on_click=job_call, args=("pause",))
c3.button("Resume", key="tl_resume", disabled=not running, on_click=job_call, args=("resume",))
c4.button("Stop", key="tl_stop", disabled=not running, on_click=job_call, args=("stop",))
st.caption(f"At most {MAX_CONCURRENT} trainings run at once on this server; others wait their turn.")


def metric_chart(snap: dict, names: tuple[str, ...]) -> None:
    fig = figure(names[0], "iteration", names[0], height=260)
    hist = [m for m in snap["history"] if names[0] in m]  # "kl" is measured every few iterations when β = 0
    xs = [m["iteration"] for m in hist]
    fig.add_scatter(x=xs, y=[m[names[0]] for m in hist], name=names[0], line=dict(color=COLORS["main"]))
    if "pass_at_1" in names:
        pts = snap["pass_at_1"]
        fig.add_scatter(x=[i for i, _ in pts], y=[p for _, p in pts], name="held-out pass@1",
                        line=dict(color=COLORS["good"], width=3))  # fmt: skip
    show(fig, key=f"tl_chart_{names[0]}")


def groups_table(snap: dict) -> None:
    rows = []
    for g in snap["groups"]:
        for resp, r, a in zip(g["responses"], g["rewards"], g["advantages"], strict=True):
            rows.append({"prompt": g["prompt"], "response": resp, "reward": r, "advantage": round(a, 3)})
    st.dataframe(rows, hide_index=True, height=300)


def results(res: dict) -> None:
    fig = figure("pass@k on 300 held-out problems", "k (log scale)", "pass@k", y_range=[0, 1.02])
    fig.add_scatter(x=res["ks"], y=res["pass_at_k_before"], name="SFT", line=dict(color=COLORS["grey"], width=3))
    fig.add_scatter(x=res["ks"], y=res["pass_at_k_after"], name="GRPO", line=dict(color=COLORS["main"], width=3))
    fig.update_xaxes(type="log")
    show(fig, key="tl_passk")
    cross = res["crossover_k"]
    st.markdown("The curves " + ("do not cross." if cross is None else f"cross at k ≈ {cross:.1f}."))
    a, b = st.columns(2)
    a.metric("Never solved by SFT", len(res["never_solved_before"]))
    a.write(", ".join(res["never_solved_before"]) or "none")
    b.metric("Never solved after GRPO", len(res["never_solved_after"]))
    b.write(", ".join(res["never_solved_after"]) or "none")


@st.fragment(run_every=0.5 if running else None)
def progress() -> None:
    job = st.session_state.get("tinylm_job")
    if job is None:
        st.info("Press Start to run GRPO from the shipped SFT checkpoint.")
        return
    snap = job.snapshot()
    state = snap["state"]
    if state == "queued":
        st.info(f"Waiting for a free trainer: place {snap['queue_position']} in line.")
    elif state == "error":
        st.error(snap["error"])
        if snap["checkpoint_error"]:
            st.button("Train SFT from scratch", key="tl_scratch2", on_click=st.session_state.__setitem__,
                      args=("tl_from_scratch", True))  # fmt: skip
    label = {"sft": "training SFT from scratch", "grpo": "GRPO", "eval": "evaluating pass@k", "done": "done",
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
        left, right = st.columns(2)
        for i, names in enumerate(CHARTS):
            with left if i % 2 == 0 else right:
                metric_chart(snap, names)
        st.subheader("Latest groups (as in TRL's completions log)")
        groups_table(snap)
    if state == "done":
        results(snap["result"])
    if running and not job.running:
        st.rerun()  # the job ended: redraw the buttons once


progress()
st.caption("Metrics use TRL's names: " + ", ".join(METRICS) + ".")
