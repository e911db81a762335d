"""Lab: the chapter's three tasks (what each asks, its equations, every check with its numbers) and the commands
that check a student's file, as one document (`tasks`), drawn by both hosts: a lesson's lab page and the app's Lab
page, which also runs the checks on the server's lab file (GRPO_LAB_DIR; ui/labview.py draws that part)."""

from __future__ import annotations

from sim.views.doc import Code, Formula, Heading, Text, View

EQUATIONS = {  # (LaTeX, the same in plain text: what a page shows where KaTeX cannot draw); one line each, so a
    # phone's column or a presenter's screen (?classroom=1) holds it
    "group_advantages": [
        (r"\hat A^{(i)} = \frac{r^{(i)} - \operatorname{mean}(r)}{\operatorname{std}(r) + \varepsilon}",
         "A_i = (r_i − mean(r)) / (std(r) + ε)"),
        (r"\operatorname{std}(r) = \sqrt{\tfrac1G \textstyle\sum_j \big(r^{(j)} - \operatorname{mean}(r)\big)^2}",
         "std(r) = √((1/G) Σ_j (r_j − mean(r))²)"),
    ],
    "k3_kl": [
        (r"u = \frac{\pi_{ref}(y_t)}{\pi_\theta(y_t)},\qquad k_3 = u - \log u - 1 \;\ge 0",
         "u = π_ref(y_t) / π_θ(y_t),   k3 = u − log u − 1 ≥ 0"),
        (r"\frac{\partial k_3}{\partial \log \pi_\theta} = 1 - u", "∂k3 / ∂log π_θ = 1 − u"),
    ],
    "grpo_loss": [
        (r"\rho_t = \exp\big(\log\pi_\theta(y_t) - \log\pi_{old}(y_t)\big)",
         "ρ_t = exp(log π_θ(y_t) − log π_old(y_t))"),
        (r"\text{obj}_t = \min\big(\rho_t \hat A,\ \operatorname{clip}(\rho_t, 1-\epsilon, 1+\epsilon)\,\hat A\big)"
         r" - \beta\, k_3", "obj_t = min(ρ_t A, clip(ρ_t, 1 − ε, 1 + ε) A) − β k3"),
        (r"\mathcal{L} = -\frac{1}{B}\sum_{i=1}^{B} \frac{1}{|y^{(i)}|} \sum_{t=1}^{|y^{(i)}|} \text{obj}_{i,t}",
         "L = −(1/B) Σ_i (1/|y_i|) Σ_t obj_i,t"),
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



def tasks(values: dict | None = None, lab=None) -> list:
    """The lab as a document: how to run the checks, then each task's signature, what it asks, its equations and
    its checks in order, each with the chapter's numbers."""
    from sim.lab.checks import CASES, TASKS

    doc = [Heading("Run the checks on your file"),
           Text("Every check below runs on your own tasks.py, offline; a failure names the check and what is wrong."),
           Code(COMMANDS, "Copy the commands")]
    for task, info in TASKS.items():
        doc += [Heading(f"Task {info.number}: {info.title}"),
                Code(info.signature, f"Copy the signature of {info.func}"),
                Text.of(WHAT[task]),
                *(Formula(latex, text) for latex, text in EQUATIONS[task]),
                Text.of("**Checks**, in order (the first failure is reported):"),
                *(Text(f"{i}. {c.asserts}") for i, c in enumerate(CASES[task], 1))]
    return doc


VIEW = View(
    "lab", "Lab: GRPO's formulas, by you",
    intro=Text.of("The chapter's lab asks you to write GRPO's three formulas yourself, torch tensors in and out: the "
                  "group advantages (Task 2), the k3 KL estimator (Task 3) and the GRPO loss (Task 4). Each task is "
                  "checked against the chapter's worked numbers, then against the playground's own implementation "
                  "(`sim.grpo`) on random inputs; a failure says what is wrong in the chapter's terms."),
    show=tasks, lesson="recorded", server=True,
    what="The chapter's Tasks 2–4: what to implement, the equations, every check with its numbers, the commands that "
         "run the checks on your file; in the app, with GRPO_LAB_DIR, the checks run on the server's lab file.",
)  # fmt: skip
