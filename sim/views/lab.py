"""Lab, declared (sim/views/doc.py; the app only: it runs a student's file on the server): the chapter's three tasks,
what each asks, its equations and the commands that check it. ui/labview.py draws the page and the verdicts."""

from __future__ import annotations

from sim.views.doc import Text, View

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

VIEW = View(
    "lab", "Lab: GRPO's formulas, by you",
    intro=Text("The chapter's lab asks you to write GRPO's three formulas yourself, torch tensors in and out: the "
               "group advantages (Task 2), the k3 KL estimator (Task 3) and the GRPO loss (Task 4). Each task is "
               "checked against the chapter's worked numbers, then against the playground's own implementation "
               "(sim.grpo) on random inputs; a failure says what is wrong in the chapter's terms.",
               md="The chapter's lab asks you to write GRPO's three formulas yourself, torch tensors in and out: the "
                  "group advantages (Task 2), the k3 KL estimator (Task 3) and the GRPO loss (Task 4). Each task is "
                  "checked against the chapter's worked numbers, then against the playground's own implementation "
                  "(`sim.grpo`) on random inputs; a failure says what is wrong in the chapter's terms."),
    lesson="app", why_app_only="it runs your code on the server (python -m sim lab check runs it on yours)",
    what="The chapter's Tasks 2–4: what to implement, the equations, every check with its numbers, the commands; with "
         "GRPO_LAB_DIR, the checks run on that file.",
)  # fmt: skip
