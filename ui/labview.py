""""Use my lab code": a page's switch that runs the student's lab functions beside the reference.

The lab is the file the server was started with (GRPO_LAB_DIR, see sim/lab/runner.py); nothing from the
browser chooses code. Without the setting the switch is not drawn and `lab_switch` returns None. A student
function that raises, hangs or returns the wrong shape gives a message on the page (plain text), never a
traceback, and the rest of the page draws as usual.
"""

from __future__ import annotations

import streamlit as st

from sim.lab.runner import LAB_ENV, Comparison, lab_from_env, mismatched  # noqa: F401  (re-exported)
from sim.validate import neutral

SWITCH_KEY = "use_lab"


def lab_switch(server):
    """The server's Lab if the student switched it on (sidebar toggle, off by default), else None."""
    lab, problem = lab_from_env(pool=server.lab_pool)
    if problem:
        with st.sidebar:
            st.error(f"{LAB_ENV} is set but cannot be used:", icon=":material/error:")
            st.text(neutral(problem, keep_newlines=True))
        return None
    if lab is None:
        return None
    on = st.sidebar.toggle("Use my lab code", key=SWITCH_KEY,
                           help=f"run the functions in {lab.path.name} (from {LAB_ENV}) beside the reference")
    if not on:
        return None
    st.sidebar.caption(f"Your lab: {lab.path}")
    return lab


def verdict(comparison: Comparison, what: str, *, lab=None, task: str | None = None) -> bool:
    """One line for a student's value: matches (green), differs or failed (the message as plain text). With
    `lab` and `task` ("group_advantages", "k3_kl", "grpo_loss"), a difference also shows what the lab's check
    says about that task, which names the common mistakes. Returns comparison.ok."""
    if comparison.ok:
        st.success(f"Your {what} matches the reference.", icon=":material/check_circle:")
    elif comparison.error is not None:
        st.error(f"Your {what} could not be compared ({comparison.error.kind}):", icon=":material/error:")
        st.text(neutral(comparison.message, keep_newlines=True))
    else:
        st.warning(f"Your {what} differs from the reference:", icon=":material/warning:")
        st.text(neutral(comparison.message, keep_newlines=True))
        if lab is not None and task is not None:
            result = lab.check(task)
            if not result.passed:
                st.caption("What the lab's check for this task says:")
                st.text(neutral(result.message, keep_newlines=True))
    return comparison.ok
