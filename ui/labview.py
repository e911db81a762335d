""""Use my lab code": a page's switch that runs the student's lab functions beside the reference; and the Lab page.

The lab is the file the server was started with (GRPO_LAB_DIR, see sim/lab/runner.py); nothing from the
browser chooses code. Without the setting the switch is not drawn and `lab_switch` returns None. A student
function that raises, hangs or returns the wrong shape gives a message on the page (plain text), never a
traceback, and the rest of the page draws as usual.
"""

from __future__ import annotations

import streamlit as st

from sim.lab.checks import CASES, TASKS
from sim.lab.runner import LAB_ENV, TIMEOUT_ENV, Comparison, lab_from_env, mismatched  # noqa: F401  (re-exported)
from sim.validate import neutral
from sim.views.lab import COMMANDS, EQUATIONS, VIEW, WHAT
from ui.copy_text import copy_text
from ui.page import open_page

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


# ---- the Lab page ----

_MD_SPECIAL = "\\`*_{}[]#|$~"


def md_escape(text: str) -> str:
    """Plain text for st.markdown: every Markdown/LaTeX special character escaped."""
    return "".join("\\" + c if c in _MD_SPECIAL else c for c in text)


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
                    st.caption(f"failing check: {md_escape(neutral(r.case))}")
    st.button("Run the checks again", key="lab_rerun")


def lab_page(server) -> None:
    """The page: the lab configured for this server (GRPO_LAB_DIR) and its checks, then each task."""
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

    # The commands and signatures as plain text with a Copy button: st.code's syntax colours fall under WCAG AA's
    # 4.5:1 on its background (a comment's #808495, a flag's #00a4d4: 3.61 and 2.81 to 1); its highlighter is 1.5 MB.
    st.subheader("Run it on your machine")
    copy_text(COMMANDS, key="lab_commands", label="Copy the commands")

    for task, info in TASKS.items():
        st.subheader(f"Task {info.number}: {info.title}")
        copy_text(info.signature, key=f"lab_signature_{task}", label=f"Copy the signature of {info.func}")
        st.markdown(WHAT[task])
        for eq in EQUATIONS[task]:
            st.latex(eq)
        st.markdown("**Checks**, in order (the first failure is reported):")
        st.markdown("\n".join(f"{i}. {md_escape(c.asserts)}" for i, c in enumerate(CASES[task], 1)))
