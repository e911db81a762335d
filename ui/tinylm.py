"""The app's TinyLM page (sim/views/tinylm.py declares it): the trainer's controls, the live run's fragment and its
button callbacks, then the recorded part both hosts show (the declaration's `recorded`).

Callbacks and the fragment live here, not in pages/tinylm.py: Streamlit keeps a session's widget callbacks
and fragments for as long as it keeps the session, and a function written in a page holds that page's whole
namespace alive with it (the pattern that leaked memory on Training dynamics; see ui/controls.py).
"""

from __future__ import annotations

import uuid

import streamlit as st

from sim.player.spec import COLORS
from sim.tinylm.checkpoint import CheckpointError, load_checkpoint
from sim.tinylm.figures import caption, seed_row
from sim.tinylm.grpo_train import METRICS, GRPOConfig
from sim.tinylm.job import TrainingJob
from sim.tinylm.memory import MemoryCapError, check_run
from sim.tinylm.presets import preset_changes, preset_of
from sim.tinylm.story import StoryConfig
from sim.views.controls import build_config
from sim.views.doc import Charts
from sim.views.tinylm import CHARTS, ON, SETTINGS, VIEW, metric_chart, passk_chart, recorded
from ui.callbacks import set_state
from ui.controls import classroom_link_builder, control
from ui.page import open_page
from ui.text import md
from ui.tinylm_runs import left_text, poll_interval, queue_text
from ui.view import show_doc

# ---- the session's run and the buttons' callbacks ----


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


def start_job(cfg, server) -> None:
    """Join the run for these settings (shared with every session that chose the same); the registry leaves the
    one this session watched before (one run per visitor: sim/tinylm/job.py)."""
    st.session_state.tinylm_job = server.tinylm_registry.join(cfg, viewer_id())
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


def scratch_button(key: str) -> None:
    st.button("Train SFT from scratch", key=key, on_click=set_state, args=("tl_from_scratch", True))


# ---- charts ----


@st.cache_resource(show_spinner=False, max_entries=1)
def trl_record() -> tuple[dict | None, str | None]:
    """The recorded TRL run (sim/tinylm/trl_record.py) and None, or None and why it cannot be read."""
    from sim.tinylm.trl_record import TrlRecordError, load_trl_run

    try:
        return load_trl_run(), None
    except TrlRecordError as e:
        return None, str(e)


def group_rows(snap: dict) -> list[dict]:
    rows = []
    for g in snap["groups"]:
        for resp, r, a in zip(g["responses"], g["rewards"], g["advantages"], strict=True):
            rows.append({"prompt": g["prompt"], "response": resp, "reward": r, "advantage": round(a, 3)})
    return rows


@st.cache_resource(show_spinner=False, max_entries=32)
def live_view(job_serial: int, iteration: int, n_pass: int, _snap: dict, trl: bool = False) -> tuple[list, list[dict]]:
    """The eight charts and the groups table of one run at one iteration, built once for all its viewers
    (a shared run has many; only an optimisation: a cleared cache just rebuilds). trl: overlay the recorded
    TRL run's reward and pass@1."""
    rec = trl_record()[0] if trl else None
    return [metric_chart(_snap, names, rec) for names in CHARTS], group_rows(_snap)


# ---- a finished live run ----


def results(res: dict, grpo_cfg, server) -> None:
    """pass@k before and after, the problems never solved, and the side this run shows (computed)."""
    n = res["eval_samples"]
    chart = passk_chart(n, [("SFT", res["pass_at_k_before"], COLORS["grey"]),
                            ("GRPO", res["pass_at_k_after"], COLORS["main"])],
                        title=f"pass@k on {res['heldout_problems']} held-out problems")  # fmt: skip
    show_doc(server, "tl_passk", [Charts("tl_passk", [chart])])
    cross = res["crossover_k"]
    st.markdown("The curves " + ("do not cross." if cross is None else f"cross at k ≈ {cross:.1f}."))
    a, b = st.columns(2)
    a.metric("Never solved by SFT", len(res["never_solved_before"]))
    a.text(", ".join(res["never_solved_before"]) or "none")
    b.metric("Never solved after GRPO", len(res["never_solved_after"]))
    b.text(", ".join(res["never_solved_after"]) or "none")
    if n == 64:  # the side needs pass@64, as in the records
        st.caption("This run: " + caption([seed_row(res)], preset_of(grpo_cfg)))


# ---- the live run, polled ----


def _progress(me: str, watching: bool, poll: float | None, server) -> None:
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
            scratch_button("tl_scratch2")
    label = {"queued": "waiting", "starting": "starting", "sft": "training SFT from scratch", "grpo": "GRPO",
             "eval": "evaluating pass@k", "done": "done",
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
        charts, rows = live_view(job.serial, snap["iteration"], len(snap["pass_at_1"]), snap,
                                 st.session_state.get("tl_trl_overlay", False))
        show_doc(server, "tl_live_charts", [Charts("tl_live_charts", charts, columns=2)])
        st.subheader("Latest groups (as in TRL's completions log)")
        st.dataframe(rows, hide_index=True, height=300)
    if state == "done":
        results(snap["result"], job.cfg.grpo, server)
    if watching and not job.running:
        st.rerun()  # the job ended: redraw the buttons once
    if watching and not left and snap["history"] and poll_interval(snap["viewers"]) > 2 * poll:
        st.rerun()  # charts are up and there are many viewers: poll less often (see poll_interval)


def trl_overlay_switch() -> None:
    """A switch that overlays the recorded TRL run (scripts/bench_trainers.py's, TRL's GRPOTrainer on the same
    task and SFT start) on the live charts; says so, as plain text, when the record cannot be read."""
    rec, problem = trl_record()
    if problem:
        st.text(f"The recorded TRL run cannot be shown: {problem}")
    elif rec is not None:
        st.toggle("Overlay the recorded TRL run (reward, held-out pass@1)", key="tl_trl_overlay",
                  help=f"TRL's own GRPOTrainer on the same task from the same SFT checkpoint, "
                       f"{len(rec['iterations'])} iterations on {rec['num_processes']} process(es): final pass@1 "
                       f"{rec['pass_at_1_after']:.3f}, pass@64 {rec['pass_at_64_after']:.3f}")


def live_run(me: str, watching: bool, poll: float | None, server) -> None:
    """The session's run, redrawn every `poll` seconds while it is watched (a fragment: only this part reruns)."""
    st.fragment(_progress, run_every=poll)(me, watching, poll, server)


# ---- the page ----

def recorded_runs(server) -> None:
    """Both presets as recorded, and the default run replayed (sim/views/tinylm.py: the part a lesson shows too)."""
    show_doc(server, "tl_recorded", recorded())


def tinylm_page(server) -> None:
    """The page: the trainer's switch; off, the records; on, the settings, Start / Pause / Resume / Stop, the live
    run and its results, then the records."""
    open_page(server, VIEW.title, md(VIEW.intro.text), controls=list(VIEW.controls))
    on = control(ON)
    if not on:
        classroom_link_builder(list(VIEW.controls))
        with st.container(key="app_only_trainer"):  # a lesson has no trainer (the drift test skips this part)
            st.info("Below: the two presets as recorded. Switch the trainer on to run GRPO yourself; your run "
                    "appears here, above the records.")  # fmt: skip
        recorded_runs(server)
        st.stop()
    with st.sidebar:
        st.subheader("GRPO settings")
        v = {spec.key: control(spec) for spec in SETTINGS}
    classroom_link_builder(list(VIEW.controls))
    try:  # a combination sim.grpo.policy_loss refuses (TRL's rule) is said, not raised
        grpo_cfg = build_config(GRPOConfig, SETTINGS, v, threads=1, **preset_changes(v["tl_preset"]))
    except ValueError as e:
        st.error("These settings cannot run:", icon=":material/error:")
        st.text(str(e))
        recorded_runs(server)
        st.stop()
    from_scratch = st.session_state.get("tl_from_scratch", False)
    cfg = build_config(StoryConfig, SETTINGS, v, grpo=grpo_cfg, from_scratch=from_scratch)
    problem = checkpoint_status()
    if problem and not from_scratch:
        st.error("The shipped SFT checkpoint cannot be used:", icon=":material/error:")
        st.text(problem)
        scratch_button("tl_scratch")
        recorded_runs(server)
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
    c1.button("Start", key="tl_start", type="primary", on_click=start_job, args=(cfg, server),
              disabled=too_big is not None)
    c2.button("Pause", key="tl_pause", disabled=paused or not (watching and job.can_pause(me)), on_click=pause_job,
              args=(True,))  # fmt: skip
    c3.button("Resume", key="tl_resume", disabled=not paused, on_click=pause_job, args=(False,))
    c4.button("Leave" if shared else "Stop", key="tl_stop", disabled=not watching, on_click=leave_job)
    if too_big:
        st.error("These settings would not fit in the server's memory:", icon=":material/error:")
        st.text(too_big)
    st.caption(
        f"Everyone who starts the same settings (seed included) watches the same run, and a finished run replays at "
        f"once: runs are deterministic, so it is the run you would have got. At most "
        f"{server.tinylm_registry.max_concurrent} different runs train at once on this server; others wait their "
        f"turn, first come first served. A shared run cannot be paused, and Stop only leaves it: it ends when nobody "
        f"watches."
    )
    # Poll fast until the first iteration arrives (the first chart), then as often as the number of viewers allows.
    poll = poll_interval(job.snapshot()["viewers"]) if watching else None
    trl_overlay_switch()
    live_run(me, watching, poll, server)
    recorded_runs(server)
    st.caption("Metrics use TRL's names: " + ", ".join(METRICS) + ".")
