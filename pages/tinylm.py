"""TinyLM: a real GRPO run on a small transformer that learns two-digit addition (sim.tinylm)."""

import streamlit as st

from sim.tinylm.grpo_train import METRICS, GRPOConfig
from sim.tinylm.memory import MemoryCapError, check_run
from sim.tinylm.presets import PRESET_NAMES, PRESETS, preset_changes
from sim.tinylm.story import StoryConfig
from ui.controls import Choice, Flag, Num, build_config, classroom_link_builder, control
from ui.page import open_page
from ui.tinylm import (
    checkpoint_status,
    leave_job,
    live_run,
    pause_job,
    recorded_runs,
    scratch_button,
    session_job,
    start_job,
    trl_overlay_switch,
    viewer_id,
)
from ui.tinylm_runs import poll_interval, registry

# Every setting is a URL parameter built from GRPOConfig's declarations, so a link reproduces the run, seed included.
ON_SPEC = Flag("tinylm_on", "Trainer on", False, help="Off by default so the app stays light.")
PRESET_SPEC = Choice("tl_preset", "Preset", PRESET_NAMES, "default",
                     labels={"default": "blind spot among GRPO's prompts", "chapter-lab": "blind spot left out"},
                     help="The two sides of the pass@k debate, one switch apart: " + "; ".join(
                         f"{n}: {p.title}" for n, p in PRESETS.items()))  # fmt: skip
SETTINGS = [
    PRESET_SPEC,
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
    Choice.of(GRPOConfig, "loss_type", "tl_loss", "Loss type"),
    Choice.of(GRPOConfig, "importance_sampling_level", "tl_is_level", "Importance ratio",
              labels={"sequence": "GSPO"}),
    Choice.of(GRPOConfig, "clip_eps", "tl_clip", "Clip ε", options=(3e-4, 0.1, 0.2, 0.28),
              labels={3e-4: "GSPO", 0.2: "TRL default"}, help="matters only when μ > 1 (off-policy ratios)"),
    Num.of(GRPOConfig, "seed", "tl_seed", "Seed", hi=9999),
    Choice.of(StoryConfig, "eval_samples", "tl_eval", "Samples per held-out problem", options=(4, 8, 16, 32, 64)),
]
SPECS = [ON_SPEC, *SETTINGS]


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
    controls=SPECS,
)
on = control(ON_SPEC)
if not on:
    classroom_link_builder(SPECS)
    st.info("Below: the two presets as recorded. Switch the trainer on to run GRPO yourself; your run appears "
            "here, above the records.")  # fmt: skip
    recorded_runs()
    st.stop()
with st.sidebar:
    st.subheader("GRPO settings")
    v = {spec.key: control(spec) for spec in SETTINGS}
classroom_link_builder(SPECS)

try:  # a combination sim.grpo.policy_loss refuses (TRL's rule) is said, not raised
    grpo_cfg = build_config(GRPOConfig, SETTINGS, v, threads=1, **preset_changes(v["tl_preset"]))
except ValueError as e:
    st.error("These settings cannot run:", icon=":material/error:")
    st.text(str(e))
    recorded_runs()
    st.stop()
from_scratch = st.session_state.get("tl_from_scratch", False)
cfg = build_config(StoryConfig, SETTINGS, v, grpo=grpo_cfg, from_scratch=from_scratch)

problem = checkpoint_status()
if problem and not from_scratch:
    st.error("The shipped SFT checkpoint cannot be used:", icon=":material/error:")
    st.text(problem)
    scratch_button("tl_scratch")
    recorded_runs()
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

# Poll fast until the first iteration arrives (the first chart), then as often as the number of viewers allows.
POLL = poll_interval(job.snapshot()["viewers"]) if watching else None
trl_overlay_switch()
live_run(me, watching, POLL)
recorded_runs()
st.caption("Metrics use TRL's names: " + ", ".join(METRICS) + ".")
