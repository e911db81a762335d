"""One group: the chapter's worked example (rewards -> group advantages -> per-token weights, per loss type),
declared here; its document is assets/js/views.js `one_group`, its numbers sim/exercises.py's (group_summary,
per_token_weights, length_effect, credit_table; their JavaScript twins: assets/js/exercises.js).

`lab_extras` is what the app adds with "Use my lab code": the student's group_advantages and grpo_loss on this group
beside the reference's, computed by the server in the lab's sandbox.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.lab.runner import mismatched
from sim.settings import GRPOSettings, setting, validate
from sim.toy import ToyConfig
from sim.views.controls import Choice, Num, Picks, build_config
from sim.views.doc import Text, Verdict, View

CHAPTER_PICKS = (1, 4)  # rewards 1, 0, 0, 1: answers 1 and 4 are right


@dataclass(frozen=True)
class Group:
    """The page's own settings: how the group's correct answers are chosen."""

    mode: str = setting("each", "choose the correct answers one by one, or take the first c", choices=("each", "count"),
                        labels={"each": "click each answer", "count": "the first c"}, key="mode",
                        label="Choose the correct answers")
    correct: int = setting(2, "the first c answers are correct", lo=0, hi=1024, integer=True, step=1, key="c",
                           label="Number correct c (count mode)")
    pick: tuple[int, ...] = setting(CHAPTER_PICKS, "the correct answers, by number", kind="numbers", lo=1, hi=1024,
                                    integer=True, key="pick", label="Correct answers")

    def __post_init__(self):
        validate(self)


CONTROLS = (
    Num.of(ToyConfig, "group_size", hi=64, default=4, help="responses sampled for the prompt"),
    Choice.of(ToyConfig, "scale", options=("group", "none")),
    Choice.of(GRPOSettings, "loss_type", help="how the per-token losses are averaged and weighted (the chapter's "
              "formula is grpo; TRL's default is dapo); every loss TRL 1.16.0 ships"),
    Choice.of(Group, "mode"),
    Num.of(Group, "correct", hi=64),
    Picks.of(Group, "pick", count="G", when=("mode", "each")),
)


def rewards_of(G: int, group: Group) -> list[float]:
    """The group's 0/1 rewards: count mode, the first c (at most G); else the picked answers."""
    if group.mode == "count":
        c = min(group.correct, G)
        return [1.0] * c + [0.0] * (G - c)
    return [1.0 if i in group.pick else 0.0 for i in range(1, G + 1)]


def token_batch(lengths) -> dict:
    """Responses of these lengths as a lab batch at ratio 1 and pi = pi_ref: logp, old_logp, ref_logp (B, T) all
    log 0.5, and the mask of real tokens."""
    T = max(lengths)
    mask = np.array([[1.0] * n + [0.0] * (T - n) for n in lengths])  # (B, T)
    logp = np.full(mask.shape, np.log(0.5))
    return {"logp": logp, "old_logp": logp, "ref_logp": logp, "mask": mask}


def lab_extras(values: dict, lab) -> dict:
    """"Use my lab code" on this group: the student's group_advantages over the bars (`advantages`: student,
    wrong), the weight their grpo_loss gives each answer's first token (`weights`), and the verdicts, by the place
    the document shows them (`slots`)."""
    from sim.exercises import group_responses, group_summary

    toy, loss_type = build_config(ToyConfig, CONTROLS, values), build_config(GRPOSettings, CONTROLS, values).loss_type
    rewards = rewards_of(toy.group_size, build_config(Group, CONTROLS, values))
    G, scale = toy.group_size, toy.scale
    out = {"advantages": None, "weights": None, "slots": {"after_chart": [], "after_table": []}}
    mine = lab.advantages(rewards, scale_std=scale == "group")
    if mine.student is not None and mine.student.shape == (G,):
        out["advantages"] = {"student": [float(a) for a in mine.student],
                             "wrong": [bool(w) for w in (mismatched(mine) or [False] * G)]}
    out["slots"]["after_chart"].append(Verdict(
        mine, "group_advantages on this group (black diamonds; a red cross where it differs)", lab, "group_advantages"))
    adv = group_summary(rewards, scale=scale, ddof=0)["advantages"]
    _, grad = lab.loss_and_grad(**token_batch([len(r) for r in group_responses(rewards)]), adv=adv, clip_eps=0.2,
                                beta=0.04)
    if grad.student is not None and grad.student.shape == grad.reference.shape:
        out["weights"] = [-float(grad.student[i, 0]) for i in range(G)]
    out["slots"]["after_table"].append(Verdict(grad, "grpo_loss gradient on this group (ratio 1, π = π_ref)", lab,
                                               "grpo_loss"))
    if loss_type != "grpo":
        out["slots"]["after_table"].append(Text(
            "Your grpo_loss is the chapter's (Task 4: mean over each response, then over responses); compare it with "
            f"loss type grpo, not {loss_type}."))
    return out


VIEW = View(
    "one_group", "One group",
    intro=Text.of("Take one prompt, $x$ = `37+48=`, sample $G$ answers and check each. GRPO compares every answer with "
                  "its siblings: the group mean is a free Monte Carlo estimate of the value $V(x)$, so no critic is "
                  "needed. It opens on the chapter's group: answers 85, 75, 815, 85 with rewards 1, 0, 0, 1."),
    controls=CONTROLS,
    what="The worked example: rewards coloured correct/wrong, mean, std, advantages (population vs TRL's sample std), "
         "per-token weights for every loss type, the length bias and the first-token credit.",
)  # fmt: skip
