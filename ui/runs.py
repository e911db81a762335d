"""The engine calls the pages share, computed once per setting for the whole server (ui/work.py).

Every session of a class asks for the same few settings, so a run is computed once, in a worker process,
and handed to all of them read-only. They live here, not in the pages, so that the server can compute the
defaults before the first visitor arrives (ui/server.py) and the pages find them.
"""

from __future__ import annotations

import numpy as np

from sim import jobs
from sim.export import rows_csv
from sim.sharpen import SharpenConfig, SharpenHistory
from sim.toy import ToyConfig, ToyHistory, history_rows
from ui.work import JobError, compute


def toy_runs(cfg: ToyConfig) -> tuple[ToyHistory, ToyHistory]:
    """(sampled run with S seeds, exact expected run) for the Training page. The expected run draws
    nothing, so every seed of a setting shares it."""
    return tuple(compute(*toy_calls(cfg)))


def toy_run(cfg: ToyConfig) -> ToyHistory:
    """The sampled run alone (a pinned run, the clip caption's comparison)."""
    return compute((jobs.toy_run, (cfg,)))[0]


def toy_calls(cfg: ToyConfig) -> list[tuple]:
    """The jobs behind toy_runs(cfg)."""
    return [(jobs.toy_run, (cfg,)), (jobs.toy_expected, (jobs.expected_key(cfg),))]


def toy_history_csv(cfg: ToyConfig) -> str:
    """The Training page's run history as CSV (means over seeds), built when the download is clicked.

    Pass it as functools.partial(toy_history_csv, cfg): Streamlit keeps a deferred download's callable after
    its session has gone, and a lambda written in a page would keep that page's whole namespace (its runs and
    figures) alive with it; the partial keeps only the config. (Run outside a script run, in Streamlit's
    download handler: the run is cached, or computed here.)"""
    from ui.server import current

    hit, run = current().work.cached(jobs.toy_run, (cfg,))
    return rows_csv(history_rows(run if hit else current().work.run_here(jobs.toy_run, (cfg,)), per_seed=False))


def student_toy_run(cfg: ToyConfig, table: tuple) -> ToyHistory:
    """The expected run with a student's advantage table ((A_correct...), (A_wrong...)), k = 0..G."""
    return compute((jobs.toy_expected, (jobs.expected_key(cfg), table)))[0]


def std_runs(with_std: ToyConfig) -> dict:
    """Std scaling's comparison for the config with std (sim/views/std_scaling.py), shared by every session."""
    return compute((jobs.std_runs, (with_std,)))[0]


def toy_before_after(T: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """p_j of the 24-prompt toy (chapter defaults) at iteration 0 and T, exact expected run."""
    return compute((jobs.before_after, (T,)))[0]


def private_toy_runs(cfg: ToyConfig) -> tuple[ToyHistory, ToyHistory]:
    """toy_runs(cfg) for a config built from a visitor's own data (the Your prompts page: difficulties from
    their file). Computed in this session's script run by the same jobs, kept in this session's state only
    (the last one), never in the server's shared cache: another session cannot hit it or learn it exists."""
    import streamlit as st

    held = st.session_state.get("_private_toy_runs")
    if held is not None and held[0] == cfg:
        return held[1]
    try:
        runs = tuple(jobs.rebuild(fn, args, fn(*args)) for fn, args in toy_calls(cfg))
    except ValueError as e:
        raise JobError(str(e)) from None
    st.session_state["_private_toy_runs"] = (cfg, runs)
    return runs


def sharpen_run(cfg: SharpenConfig) -> SharpenHistory:
    return compute((jobs.sharpen_run, (cfg,)))[0]
