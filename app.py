"""GRPO Playground: `streamlit run app.py`. Navigation and the home page; each page is a thin view over sim/."""

from pathlib import Path

import streamlit as st

from ui.page import apply_style

PAGES = [  # (file, title, icon, one line for the home page)
    ("pages/one_group.py", "One group", ":material/group:", "the worked example: rewards, advantages, token weights"),
    ("pages/training.py", "Training dynamics", ":material/play_circle:", "GRPO on 24 prompts, Play / Pause / Step"),
    ("pages/wasted.py", "Wasted groups", ":material/block:", "P(group teaches nothing) = p^G + (1 - p)^G"),
    ("pages/std_scaling.py", "Std scaling", ":material/straighten:", "Exercise 15.4: mean |A| with and without std"),
    ("pages/passk.py", "pass@k", ":material/target:", "the unbiased estimator and the sharpening debate"),
    ("pages/kl_clip.py", "KL and clipping", ":material/link:", "k1, k2, k3 and PPO's clipped surrogate"),
    ("pages/tinylm.py", "TinyLM", ":material/neurology:", "a tiny transformer learns addition with GRPO"),
    ("pages/lab.py", "Lab", ":material/science:", "the chapter's lab: write Tasks 2-4 yourself and check them"),
]

def home() -> None:
    apply_style()
    st.title("GRPO Playground")
    st.markdown(
        "**GRPO** (Group Relative Policy Optimization) trains a model with a *verifier* instead of a reward model. "
        "For each prompt it samples a **group** of $G$ answers, scores each 1 or 0, and pushes every answer up "
        "or down by how much better it did than its siblings: the group mean replaces PPO's critic."
    )
    st.latex(r"\hat A^{(i)} = \frac{r^{(i)} - \operatorname{mean}(r)}{\operatorname{std}(r) + \varepsilon}")
    st.subheader("One iteration")
    cols = st.columns(4)
    steps = [
        ("1. Sample", "$G$ answers per prompt from the current policy $\\pi_{old}$"),
        ("2. Verify", "a program scores each answer: $r = 1$ if correct, else $0$"),
        (
            "3. Group advantages",
            "$\\hat A_i = (r_i - \\text{mean}) / (\\text{std} + \\varepsilon)$, shared by all tokens",
        ),
        ("4. Update", "clipped ratio $\\times \\hat A$ minus $\\beta\\,k_3$, one gradient step ($\\mu$ times)"),
    ]
    for col, (head, text) in zip(cols, steps, strict=True):
        with col.container(border=True):
            st.markdown(f"**{head}**  \n{text}")
    st.subheader("Pages")
    for file, title, icon, line in PAGES:
        st.page_link(file, label=f"{title}: {line}", icon=icon)
    st.caption("Every control lives in the URL: copy the address bar to hand out the exact setup, seed included.")

def navigation() -> st.navigation:
    pages = [st.Page(home, title="Home", icon=":material/home:", default=True)]
    pages += [
        st.Page(file, title=title, icon=icon, url_path=Path(file).stem)
        for file, title, icon, _ in PAGES  # a missing file fails here, loudly, rather than hiding a page
    ]
    return st.navigation(pages)

# A local icon: a ":material/...:" page icon makes every browser fetch it from fonts.gstatic.com.
st.set_page_config(page_title="GRPO Playground", page_icon="assets/icon.png", layout="wide")
navigation().run()
