""""Use my lab code": a page's switch that runs the student's lab functions beside the reference (the verdicts are
document blocks: sim/views/doc.py verdict_json; the Lab page itself: ui/labpage.py).

The lab is the file the server was started with (GRPO_LAB_DIR, see sim/lab/runner.py); nothing from the
browser chooses code. Without the setting the switch is not drawn and `lab_switch` returns None. A student
function that raises, hangs or returns the wrong shape gives a message on the page (plain text), never a
traceback, and the rest of the page draws as usual.
"""

from __future__ import annotations

import streamlit as st

from sim.lab.runner import LAB_ENV, TIMEOUT_ENV, Comparison, lab_from_env, mismatched  # noqa: F401  (re-exported)
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
