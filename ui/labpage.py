"""The Lab page: the lab configured for this server (GRPO_LAB_DIR, sim/lab/runner.py) and its checks on that file,
then the chapter's three tasks, the document a lesson's lab page shows too (sim/views/lab.py `tasks`). A student's
messages are shown as plain text, never as Markdown."""

from __future__ import annotations

import streamlit as st

from sim.lab.checks import TASKS
from sim.lab.runner import LAB_ENV, TIMEOUT_ENV, lab_from_env
from sim.validate import neutral
from sim.views.lab import VIEW, tasks
from ui.page import open_page
from ui.view import show_doc


def show_results(lab) -> None:
    st.subheader("Your lab file")
    st.code(str(lab.path), language=None)
    with st.spinner("Running the checks in a separate process…"):
        problem = lab.load()
        results = [] if problem else lab.check_all()
    if problem:
        st.error("Your file could not be loaded:", icon=":material/error:")
        st.code(neutral(problem.message, keep_newlines=True), language=None, wrap_lines=True)
        return
    n_pass = sum(r.passed for r in results)
    st.markdown(f"**{n_pass} of {len(results)} tasks pass.** The checks rerun when the file changes.")
    for r in results:
        info = TASKS[r.task]
        with st.container(border=True):
            mark = ":green[:material/check_circle: pass]" if r.passed else ":red[:material/cancel: fail]"
            st.markdown(f"**Task {info.number}: {info.title}** (`{info.func}`) {mark}")
            if r.passed:
                st.caption(f"all {r.n_cases} checks pass")
            else:
                st.text(neutral(r.message, keep_newlines=True))  # from the student's code: plain text only
                if r.case:
                    st.text(f"failing check: {neutral(r.case)}")
    st.button("Run the checks again", key="lab_rerun")


def lab_page(server) -> None:
    """The page: the lab configured for this server (GRPO_LAB_DIR) and its checks, then the tasks, the same document
    a lesson's lab page shows (sim/views/lab.py `tasks`)."""
    open_page(server, VIEW.title, VIEW.intro.md)
    lab, problem = lab_from_env(pool=server.lab_pool)
    if problem:
        st.error("The lab configured for this server cannot be used:", icon=":material/error:")
        st.code(neutral(problem, keep_newlines=True), language=None, wrap_lines=True)
    elif lab is not None:
        show_results(lab)
    else:
        st.info(
            f"To see your own checks here, start the server with `{LAB_ENV}` set to your lab directory, e.g. "
            f"`{LAB_ENV}=my-lab streamlit run app.py` (optionally `{TIMEOUT_ENV}=15`, seconds per task). Code is only "
            "ever loaded from the server's disk, never from the browser.",
            icon=":material/info:",
        )
    show_doc(server, "lab_tasks", tasks())
