"""Lab: the chapter's three tasks, their checks, how to run them; with GRPO_LAB_DIR, the checks on that file.

The server reads GRPO_LAB_DIR (a directory holding tasks.py, or the file) from its environment:
    GRPO_LAB_DIR=my-lab streamlit run app.py
The student's code runs in a separate worker process with a time limit per task (GRPO_LAB_TIMEOUT
seconds, default 15); its messages are shown as plain text.
"""

import streamlit as st

from sim.lab.checks import CASES, TASKS
from sim.lab.runner import LAB_ENV, TIMEOUT_ENV, lab_from_env
from sim.validate import neutral
from ui.copy_text import copy_text
from ui.page import open_page
from ui.server import current

EQUATIONS = {
    "group_advantages": [
        r"\hat A^{(i)} = \frac{r^{(i)} - \operatorname{mean}(r)}{\operatorname{std}(r) + \varepsilon}"
        r"\qquad \operatorname{std}(r) = \sqrt{\tfrac1G \textstyle\sum_j \big(r^{(j)} - \operatorname{mean}(r)\big)^2}",
    ],
    "k3_kl": [r"u = \frac{\pi_{ref}(y_t)}{\pi_\theta(y_t)},\qquad k_3 = u - \log u - 1 \;\ge 0,\qquad"
              r" \frac{\partial k_3}{\partial \log \pi_\theta} = 1 - u"],
    "grpo_loss": [  # ρ and obj on lines of their own: together they ran past a presenter's screen (?classroom=1)
        r"\rho_t = \exp\big(\log\pi_\theta(y_t) - \log\pi_{old}(y_t)\big)",
        r"\text{obj}_t = \min\big(\rho_t \hat A,\ \operatorname{clip}(\rho_t, 1-\epsilon, 1+\epsilon)\,\hat A\big)"
        r" - \beta\, k_3",
        r"\mathcal{L} = -\frac{1}{B}\sum_{i=1}^{B} \frac{1}{|y^{(i)}|} \sum_{t=1}^{|y^{(i)}|} \text{obj}_{i,t}",
    ],
}
WHAT = {
    "group_advantages": "`rewards` has shape (P·G,): the G rewards of prompt 1, then prompt 2, … Reshape to (P, G), "
    "subtract each group's mean and divide by its **population** std plus `eps` (so an all-equal group gets 0, "
    "not 0/0). With `scale_std=False` skip the division (Dr. GRPO). Return shape (P·G,).",
    "k3_kl": "Schulman's k3 estimator of KL(π_θ ‖ π_ref), per token, from log-probabilities of any shape. Keep it "
    "differentiable with respect to `logp`.",
    "grpo_loss": "`logp`, `old_logp`, `ref_logp`, `mask`: (B, T); `adv`: (B,), shared by all tokens of a response; "
    "`mask` is 1 on real tokens, 0 on padding. Per token: ratio, clipped surrogate (with the **min**), minus β·k3 "
    "(call your `k3_kl`). Average over each response's real tokens, then over responses, and return the negative.",
}
COMMANDS = """python -m sim lab new my-lab             # stubs: tasks.py, test_tasks.py, README.md
python -m sim lab check my-lab/tasks.py  # one line per task: pass, or what is wrong
cd my-lab && python -m pytest -q         # the same checks as pytest tests
RL_SOLUTIONS=1 python -m pytest -q       # the reference solutions: all pass"""
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


open_page(
    "Lab: GRPO's formulas, by you",
    "The chapter's lab asks you to write GRPO's three formulas yourself, torch tensors in and out: the group "
    "advantages (Task 2), the k3 KL estimator (Task 3) and the GRPO loss (Task 4). Each task is checked against the "
    "chapter's worked numbers, then against the playground's own implementation (`sim.grpo`) on random inputs; "
    "a failure says what is wrong in the chapter's terms.",
)

lab, problem = lab_from_env(pool=current().lab_pool)
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

# The commands and signatures as plain text with a Copy button: st.code's syntax colours fall under WCAG AA's 4.5:1
# on its background (a comment's #808495, a flag's #00a4d4: 3.61 and 2.81 to 1), and its highlighter is 1.5 MB.
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
