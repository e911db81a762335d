"""The app's Lab page: the view's page (assets/js/page.js) with the document the server computes for it: the lab
configured for this server (GRPO_LAB_DIR, sim/lab/runner.py) and its checks on that file, then the chapter's three
tasks, the document a lesson's lab page shows too (sim/views/lab.py `tasks`). A student's messages are plain text,
never Markdown or HTML: the renderer shows every text as text."""

from __future__ import annotations

import streamlit as st

from sim.lab.checks import TASKS
from sim.lab.runner import LAB_ENV, TIMEOUT_ENV, lab_from_env
from sim.validate import neutral
from sim.views.doc import Code, Heading, Note, Text
from sim.views.lab import VIEW, tasks
from ui.view import show_view


def checks(server) -> list:
    """The lab file's checks, as blocks: what runs, each task's pass or its message (the student's, plain text)."""
    lab, problem = lab_from_env(pool=server.lab_pool)
    if problem:
        return [Note(f"The lab configured for this server cannot be used: {neutral(problem, keep_newlines=True)}",
                     "error")]
    if lab is None:
        return [Note(f"To see your own checks here, start the server with {LAB_ENV} set to your lab directory, e.g. "
                     f"{LAB_ENV}=my-lab streamlit run app.py (optionally {TIMEOUT_ENV}=15, seconds per task). Code is "
                     "only ever loaded from the server's disk, never from the browser.")]
    out = [Heading("Your lab file"), Code(str(lab.path), "Copy the path")]
    problem = lab.load()
    if problem:
        return out + [Note(f"Your file could not be loaded: {neutral(problem.message, keep_newlines=True)}", "error")]
    results = lab.check_all()
    out.append(Text.of(f"**{sum(r.passed for r in results)} of {len(results)} tasks pass.** The checks run again when "
                       "the file changes, or with the button below the page."))
    for r in results:
        info = TASKS[r.task]
        if r.passed:
            out.append(Note(f"Task {info.number}: {info.title} ({info.func}): pass, all {r.n_cases} checks.",
                            "success"))
        else:
            failing = f"\nfailing check: {neutral(r.case)}" if r.case else ""
            out.append(Note(f"Task {info.number}: {info.title} ({info.func}): fail.\n"
                            f"{neutral(r.message, keep_newlines=True)}{failing}", "error"))
    return out


def lab_page(server) -> None:
    """The page: the checks on the server's lab file, then the tasks; "Run the checks again" below."""
    show_view(VIEW, server, document=lambda values: [*checks(server), *tasks()])
    st.button("Run the checks again", key="lab_rerun")
