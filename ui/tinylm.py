"""The TinyLM page's parts: the recorded runs of both presets, the live run's fragment and its button callbacks.

Callbacks and the fragment live here, not in pages/tinylm.py: Streamlit keeps a session's widget callbacks
and fragments for as long as it keeps the session, and a function written in a page holds that page's whole
namespace alive with it (the pattern that leaked memory on Training dynamics; see ui/controls.py).
"""

from __future__ import annotations

import statistics
import uuid

import streamlit as st

from sim.tinylm.checkpoint import CheckpointError, load_checkpoint
from sim.tinylm.figures import caption, load_preset_figures, seed_row
from sim.tinylm.job import TrainingJob
from sim.tinylm.presets import preset_of
from ui.callbacks import set_state
from ui.charts import COLORS, figure, rgba, show
from ui.page import presenter, table
from ui.tinylm_runs import left_text, poll_interval, queue_text, registry

CHARTS = [("reward", "pass_at_1"), ("entropy",), ("kl",), ("frac_reward_zero_std",), ("completions/mean_length",),
          ("grad_norm",), ("clip_ratio/region_mean",), ("step_time",)]  # fmt: skip
K_TICKS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


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


def start_job(cfg) -> None:
    """Join the run for these settings (shared with every session that chose the same); the registry leaves the
    one this session watched before (one run per visitor: sim/tinylm/job.py)."""
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


def scratch_button(key: str) -> None:
    st.button("Train SFT from scratch", key=key, on_click=set_state, args=("tl_from_scratch", True))


# ---- charts ----


def passk_figure(n: int, curves: list[tuple[str, list[float], str]], *, title: str, bands=(), height: int = 380):
    """pass@k against log k (ticks at the powers of 2) with each curve's value marked at the largest k.
    `curves`: (name, pass@k for k = 1..n, colour); `bands`: (lower, upper, colour) shaded ranges."""
    ks = list(range(1, n + 1))
    fig = figure(title, "k (log scale)", "pass@k", y_range=[0, 1.02], height=height)
    ticks = [k for k in K_TICKS if k <= n]
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=[str(k) for k in ticks])
    for lo, hi, color in bands:
        fig.add_scatter(x=ks + ks[::-1], y=list(hi) + list(lo)[::-1], fill="toself", mode="lines", line=dict(width=0),
                        fillcolor=rgba(color, 0.2), showlegend=False, hoverinfo="skip")  # fmt: skip
    ends = [c[-1] for _, c, _ in curves]
    for i, (name, curve, color) in enumerate(curves):
        fig.add_scatter(x=ks, y=curve, name=name, mode="lines", line=dict(color=color, width=3))
        other = max(ends[:i] + ends[i + 1 :], default=0.0)
        above = curve[-1] > other or (curve[-1] == other and i == len(curves) - 1)  # the higher label goes on top
        fig.add_scatter(x=[n], y=[curve[-1]], name=f"{name} pass@{n}", mode="markers+text", showlegend=False,
                        marker=dict(color=color, size=12, symbol="diamond"), text=[f"{name} {curve[-1]:.3f}"],
                        textfont=dict(color=color), textposition="top left" if above else "bottom left",
                        cliponaxis=False)  # fmt: skip
    return fig


def gap_figure(rows: list[dict]):
    """GRPO's pass@k minus SFT's, one line per seed: above 0 GRPO solves more within k samples, below 0 fewer;
    where a line crosses 0 the two curves cross (the chapter's crossover k). Zoomed: at k = 1 the lines start
    far above the top (GRPO leads by ~0.3), the large-k end is what the debate is about."""
    n = len(rows[0]["pass_at_k_after"])
    ks = list(range(1, n + 1))
    fig = figure("GRPO − SFT pass@k, per seed (zoomed)", "k (log scale)", "difference", height=260,
                 y_range=[-0.06, 0.15])  # fmt: skip
    ticks = [k for k in K_TICKS if k <= n]
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=[str(k) for k in ticks])
    fig.add_hline(y=0, line_color=COLORS["grey"], line_dash="dot")
    for r in rows:
        gap = [a - b for a, b in zip(r["pass_at_k_after"], r["pass_at_k_before"], strict=True)]
        fig.add_scatter(x=ks, y=gap, mode="lines", name=f"seed {r['seed']}", line=dict(width=2), showlegend=False)
    return fig


@st.cache_resource(show_spinner=False, max_entries=1)
def trl_record() -> tuple[dict | None, str | None]:
    """The recorded TRL run (sim/tinylm/trl_record.py) and None, or None and why it cannot be read."""
    from sim.tinylm.trl_record import TrlRecordError, load_trl_run

    try:
        return load_trl_run(), None
    except TrlRecordError as e:
        return None, str(e)


def metric_figure(snap: dict, names: tuple[str, ...], trl: dict | None = None):
    """One live metric against iteration; with `trl` (the recorded TRL run), its reward and pass@1 overlaid."""
    fig = figure(names[0], "iteration", names[0], height=260)
    hist = [m for m in snap["history"] if names[0] in m]  # "kl" is measured every few iterations when β = 0
    xs = [m["iteration"] for m in hist]
    fig.add_scatter(x=xs, y=[m[names[0]] for m in hist], name=names[0], line=dict(color=COLORS["main"]))
    if "pass_at_1" in names:
        pts = snap["pass_at_1"]
        fig.add_scatter(x=[i for i, _ in pts], y=[p for _, p in pts], name="held-out pass@1",
                        line=dict(color=COLORS["good"], width=3))  # fmt: skip
    if trl is not None and names[0] == "reward":
        fig.add_scatter(x=trl["iterations"], y=trl["reward"], name="reward, TRL (recorded)",
                        line=dict(color=COLORS["pin"], dash="dot"))  # fmt: skip
    if trl is not None and "pass_at_1" in names:
        fig.add_scatter(x=[i for i, _ in trl["pass_at_1"]], y=[p for _, p in trl["pass_at_1"]],
                        name="held-out pass@1, TRL (recorded)", line=dict(color=COLORS["pin"], width=3, dash="dash"))
    return fig


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
    return [metric_figure(_snap, names, rec) for names in CHARTS], group_rows(_snap)


# ---- a finished live run ----


def results(res: dict, grpo_cfg) -> None:
    """pass@k before and after, the problems never solved, and the side this run shows (computed)."""
    n = res["eval_samples"]
    fig = passk_figure(n, [("SFT", res["pass_at_k_before"], COLORS["grey"]),
                           ("GRPO", res["pass_at_k_after"], COLORS["main"])],
                       title=f"pass@k on {res['heldout_problems']} held-out problems")  # fmt: skip
    show(fig, key="tl_passk")
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


def _progress(me: str, watching: bool, poll: float | None) -> None:
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
        figs, rows = live_view(job.serial, snap["iteration"], len(snap["pass_at_1"]), snap,
                               st.session_state.get("tl_trl_overlay", False))
        left_col, right_col = st.columns(2)
        for i, (names, fig) in enumerate(zip(CHARTS, figs, strict=True)):
            with left_col if i % 2 == 0 else right_col:
                show(fig, key=f"tl_chart_{names[0]}")
        st.subheader("Latest groups (as in TRL's completions log)")
        st.dataframe(rows, hide_index=True, height=300)
    if state == "done":
        results(snap["result"], job.cfg.grpo)
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


def live_run(me: str, watching: bool, poll: float | None) -> None:
    """The session's run, redrawn every `poll` seconds while it is watched (a fragment: only this part reruns)."""
    st.fragment(_progress, run_every=poll)(me, watching, poll)


# ---- the recorded runs of both presets ----


def recorded_runs() -> None:
    """Both presets as recorded over 5 seeds (assets/, via sim.tinylm.figures): for each, the mean pass@k
    curves before and after with their range over seeds, the problems never solved, the side it shows and
    why; then the per-seed tables. Shown before anyone trains."""
    figs, charts = _recorded(presenter())
    if not figs:
        st.warning("The recorded runs (assets/tinylm_*.json) are missing; train a run to see pass@k.")
        return
    n_seeds = max(len(f["runs"]) for f in figs.values())
    st.subheader(f"Both sides of the debate, recorded: two presets, {n_seeds} GRPO seeds each")
    st.markdown("Same SFT checkpoint, same settings, one switch: whether GRPO's training prompts include the "
                "teacher's blind-spot problems (ripple carries such as 45+57, which SFT gets right about 2 % of "
                "the time).")  # fmt: skip
    cols = st.columns(len(figs))
    for col, (name, fig) in zip(cols, figs.items(), strict=True):
        with col:
            _recorded_preset(name, fig, charts[name])
    cols = st.columns(len(figs))
    for col, (name, fig) in zip(cols, figs.items(), strict=True):
        with col:
            st.markdown(f"**{name}**, per seed")
            table([_table_row(r) for r in fig["runs"]], key=f"tl_seeds_{name}")
            st.caption(fig["summary"])


@st.cache_resource(show_spinner=False, max_entries=2)
def _recorded(presenter_mode: bool) -> tuple[dict, dict]:
    """The records (figures.load_preset_figures) and their charts, built once per server and text size."""
    figs = load_preset_figures()
    return figs, {name: _recorded_charts(fig) for name, fig in figs.items()}


def _recorded_charts(fig: dict) -> list:
    curves = fig["curves"]
    if curves is None:  # an older record, without the curves
        return []
    before, after = curves["pass_at_k_before"], curves["pass_at_k_after"]
    return [passk_figure(len(before["mean"]), [("SFT", before["mean"], COLORS["grey"]),
                                               ("GRPO", after["mean"], COLORS["main"])],
                         bands=[(before["min"], before["max"], COLORS["grey"]),
                                (after["min"], after["max"], COLORS["main"])],
                         title=f"pass@k, mean of {len(fig['runs'])} seeds (band: their range)", height=340),
            gap_figure(fig["runs"])]  # fmt: skip


def _recorded_preset(name: str, fig: dict, charts: list) -> None:
    head = {"widened": "coverage widens", "narrowed": "coverage narrows"}.get(fig["side"], "seeds disagree")
    st.markdown(f"#### `{name}`: {head}")
    rows = fig["runs"]
    for key, chart in zip(("passk", "gap"), charts, strict=False):
        show(chart, key=f"tl_rec_{key}_{name}")
    before_n = statistics.median(r["never_solved_before"] for r in rows)
    after_n = statistics.median(r["never_solved_after"] for r in rows)
    a, b = st.columns(2)
    a.metric("Never solved: SFT", f"{before_n:g}", help=f"median of {len(rows)} seeds, of 300 held-out problems")
    b.metric("after GRPO", f"{after_n:g}", delta=f"{after_n - before_n:+g}", delta_color="inverse",
             help=f"median of {len(rows)} seeds")  # fmt: skip
    seed0 = rows[0]
    if "never_solved_problems_after" in seed0:
        st.text(f"Never solved, seed {seed0['seed']}: SFT " + (", ".join(seed0["never_solved_problems_before"])
                or "none") + "; GRPO " + (", ".join(seed0["never_solved_problems_after"]) or "none"))  # fmt: skip
    st.caption(caption(rows, name))


def _table_row(r: dict) -> dict:
    return {"seed": r["seed"],
            "pass@1": f"{r['pass_at_1_before']:.3f} → {r['pass_at_1_after']:.3f}",
            "pass@64": f"{r['pass_at_64_before']:.3f} → {r['pass_at_64_after']:.3f}",
            "never solved": f"{r['never_solved_before']} → {r['never_solved_after']}",
            "cross at k": "none" if r["crossover_k"] is None else f"{r['crossover_k']:.1f}"}  # fmt: skip
