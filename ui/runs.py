"""The engine calls the pages share, cached once per setting for the whole server.

Every session of a class asks for the same few settings, so a run is computed once and handed to all of
them read-only (`st.cache_resource`: no copy per caller). They live here, not in the pages, so that the
server can compute the defaults before the first visitor arrives (ui/server.py) and the pages find them.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from sim.export import rows_csv
from sim.sharpen import SharpenConfig, SharpenHistory, train
from sim.toy import ToyConfig, ToyHistory, expected_run, history_rows, run_toy
from sim.views.passk import toy_p_before_after
from sim.views.std_scaling import std_comparison


def release() -> None:
    """Drop every cached run and the samplers' tables (the class has left); the server then recomputes the
    defaults. Sessions still holding a run keep it alive: only the cache's references go."""
    from sim.binomial import binomial_sampler

    for cached in (toy_runs, student_toy_run, std_runs, toy_before_after, sharpen_run):
        cached.clear()
    binomial_sampler.cache_clear()


@st.cache_resource(max_entries=64, show_spinner="Running the toy…")
def toy_runs(cfg: ToyConfig) -> tuple[ToyHistory, ToyHistory]:
    """(sampled run with S seeds, exact expected run) for the Training page."""
    return run_toy(cfg), expected_run(cfg)


def toy_history_csv(cfg: ToyConfig) -> str:
    """The Training page's run history as CSV (means over seeds), built when the download is clicked.

    Pass it as functools.partial(toy_history_csv, cfg): Streamlit keeps a deferred download's callable after
    its session has gone, and a lambda written in a page would keep that page's whole namespace (its runs and
    figures) alive with it; the partial keeps only the config."""
    return rows_csv(history_rows(toy_runs(cfg)[0], per_seed=False))


@st.cache_resource(max_entries=32, show_spinner=False)
def student_toy_run(cfg: ToyConfig, table: tuple) -> ToyHistory:
    """The expected run with a student's advantage table ((A_correct...), (A_wrong...)), k = 0..G."""
    return expected_run(cfg, advantage_table=(np.asarray(table[0]), np.asarray(table[1])))


@st.cache_resource(max_entries=16, show_spinner="Training the three toy runs…")
def std_runs(with_std: ToyConfig) -> dict:
    """Std scaling's comparison for the config with std (sim/views/std_scaling.py), shared by every session."""
    return std_comparison(with_std)


@st.cache_resource(max_entries=4, show_spinner=False)
def toy_before_after(T: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """p_j of the 24-prompt toy (chapter defaults) at iteration 0 and T, exact expected run."""
    return toy_p_before_after(T)


@st.cache_resource(max_entries=16, show_spinner=False)
def sharpen_run(cfg: SharpenConfig) -> SharpenHistory:
    return train(cfg)
