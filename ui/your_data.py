"""The app's Your run and Your prompts pages: Streamlit keeps what needs the server, the upload (ui/upload.py: the
file stays in this session), the line that names the file, its notes and the downloads; the rest is the view's page
(assets/js/page.js), its settings the renderer's controls, and the document the server computes for the setting the
page reports (sim/views/your_data.py run_page, prompts_page), drawn by the renderer. The toy on a visitor's pool
computes in the browser, so no page computes a toy run on the server. The link holds the settings only."""

from __future__ import annotations

import streamlit as st

from sim.views.controls import build_config
from sim.views.your_data import PROMPTS_VIEW, RUN_VIEW, prompts_page, run_page
from sim.yourdata.diagnose import DiagnoseConfig, diagnose, json_text
from sim.yourdata.plan import PlanConfig, prompt_csv
from ui.page import open_page
from ui.upload import file_line, file_notes, user_file, weak_data
from ui.view import show_view

RUN_EXAMPLE = "data/examples/tinylm_trl_trainer_state.json"
PROMPTS_EXAMPLE = "data/examples/tinylm_prompts.csv"


def your_run(server) -> None:
    """A run's log, read with Chapter 15: the file -> sim/yourdata (runlog.py, diagnose.py)'s findings for the
    page's G and W -> the document; the diagnosis as JSON below it."""
    open_page(server, RUN_VIEW.title)
    log, name, mine = user_file(server, "run", "Your run's log", ("json", "csv", "jsonl", "txt", "log", "out"),
                             RUN_EXAMPLE,
                             "the example: a real TRL GRPOTrainer run of TinyLM, 600 steps (G = 8, β = 0, μ = 1)",
                             help="trainer_state.json (any TRL from 0.14), a saved log_history, metrics JSON Lines "
                                  "(verl's file logger or a flat one), a CSV of metrics (a W&B export or chart panel), "
                                  "the console output of a TRL or verl run, or a tinylm summary")
    file_line(name, f"File ({log.source})", mine)
    shown = {}

    def document(values: dict) -> list:
        shown["d"] = d = diagnose(log, build_config(DiagnoseConfig, RUN_VIEW.controls, values))
        return run_page(d, log.settings.get("group_size"))

    show_view(RUN_VIEW, server, document=document, opened=True)
    file_notes(log.notes)
    if "d" in shown and shown["d"].log.not_grpo is None:
        d = st.session_state["_run_diagnosis"] = shown["d"]  # the download holds it weakly (ui.upload.weak_data)
        st.download_button("The diagnosis (JSON)", weak_data(json_text, d), file_name="grpo_diagnosis.json",
                           mime="application/json", key="dl_diagnosis", on_click="ignore",
                           help="every number and finding on this page, as python -m sim diagnose FILE --json "
                                "prints it")


def your_prompts(server) -> None:
    """A pool's base-model pass rates read with "Groups that teach nothing" for the page's setting: the document
    (sim/views/your_data.py prompts_page); every prompt at the page's G as CSV below it."""
    open_page(server, PROMPTS_VIEW.title)
    pool, name, mine = user_file(server, "pool", "Your prompts' pass rates (CSV)", ("csv",), PROMPTS_EXAMPLE,
                              "the example: TinyLM's SFT model on 512 of its training prompts, 64 samples each",
                              help="columns correct,samples or pass_rate; optional prompt or id")
    file_line(name, "File", mine)
    shown = {}

    def document(values: dict) -> list:
        shown["G"] = build_config(PlanConfig, PROMPTS_VIEW.controls, values).group_size
        return prompts_page(pool, values)

    show_view(PROMPTS_VIEW, server, document=document, opened=True)
    file_notes(pool.notes)
    if "G" in shown:
        G = shown["G"]
        st.download_button(f"Every prompt at G = {G} (CSV)", weak_data(prompt_csv, pool, G),  # pool: the session's
                           file_name=f"prompts_G{G}.csv", mime="text/csv", key="dl_prompts", on_click="ignore",
                           help="one row per prompt: its line, counts, P(all wrong), P(all correct), P(signal); "
                                "formula-like prompt text is neutralised for spreadsheets")
