"""One group: the chapter's worked example, declared once (sim/views/doc.py): rewards -> group advantages ->
per-token weights, per loss type. The JavaScript twin: assets/js/views.js `one_group`.

Every number comes from sim/exercises.py (group_summary, per_token_weights, length_effect, credit_table).
`one_group` returns them with the page's metrics and captions, each caption computed from the numbers it
describes; `show` lays them out as the page's document.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.exercises import CISPO_CAP, credit_table, group_responses, group_summary, length_effect, per_token_weights
from sim.lab.runner import mismatched
from sim.player.spec import COLORS, BarSeries, Chart, Line
from sim.settings import GRPOSettings, setting, validate
from sim.toy import ToyConfig
from sim.views.controls import Choice, Num, Picks, build_config
from sim.views.doc import Caption, Charts, Formula, Heading, Metrics, Note, Table, Text, Verdict, View

# the advantage chart's legend (right answers green, wrong red, TRL's bars hatched)
ADVANTAGE_LEGEND = "Green answers are right, red ones wrong; TRL's bars are hatched."
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


def advantage_words(rewards, chapter: dict, trl: dict, scale: str) -> str:
    """What the advantages are: the right and the wrong answers' values, and TRL's sample-std convention."""
    adv = chapter["advantages"]
    if all(r == rewards[0] for r in rewards):
        return "Every answer got the same reward, so every advantage is 0: this group teaches nothing."
    said = f"Right answers get {max(adv):+.3f}, wrong ones {min(adv):+.3f}; the advantages sum to zero. "
    if scale == "group":
        return said + (f"TRL divides by the sample std (G - 1 in the denominator), which is larger, so its "
                       f"advantages are smaller: {max(trl['advantages']):+.3f} and {min(trl['advantages']):+.3f}.")
    return said + "Without the std division both conventions give the same advantages."


def length_words(responses, effect: dict) -> str:
    row = {r["loss_type"]: r for r in effect["rows"]}
    return (f"{' and '.join(effect['biased'])} average each answer over its own tokens, so the longer wrong answer "
            f"is pushed down less per token ({row['grpo']['long']:+.4f} vs {row['grpo']['short']:+.4f}; the "
            f"chapter's -0.063 vs -0.083). {', '.join(effect['unbiased'])} give every token of a wrong answer the "
            f"same push: one mean over all tokens of the group, a constant, or (luspo, {row['luspo']['short']:+.3f}) "
            "a sum per answer. That removes the per-token bias; at ratio 1 cispo and vespo weigh like dapo.")


def credit_words(credit: list[dict]) -> str:
    first = {r["token"]: r["weight"] for r in credit if r["position"] == 0}
    return ("Only tokens that follow the same text compete for the same probability, so only those are added up. "
            "The first token always follows '=', shared by every answer: there "
            + ", ".join(f"{tok} collects {w:+.3f}" for tok, w in first.items())
            + ". Later positions are grouped by the prefix they follow. Nobody told the algorithm which digit was "
            "the mistake: credit assignment emerges only statistically, across many groups.")


LOSS_WORDS = ("At ratio 1 the loss is the mean advantage, which is 0 by construction, so GRPO's logged loss reads 0. "
              "Its gradient is REINFORCE with the group baseline, -A_i/G per answer, which vanishes only when the "
              "group has no spread.")
CISPO_WORDS = (f"CISPO's cap here is ε_max = {CISPO_CAP:g} (ScaleRL's value, TRL's epsilon_high). Left unset, TRL "
               "caps the weight at epsilon = 0.2 itself, so every weight below would be 0.2 times as large.")


def one_group(rewards, scale: str = "group", loss_type: str = "grpo") -> dict:
    """One group of 0/1 rewards: the numbers (chapter: population std; trl: sample std; responses, weights per
    token, length effect or None, credit rows), "metrics" {"group", "loss"}: (label, value) pairs, and
    "captions" {"advantages", "loss", "cispo" (cispo only), "length_bias" (when there is one), "credit"}."""
    chapter = group_summary(rewards, scale=scale, ddof=0)
    trl = group_summary(rewards, scale=scale, ddof=1)
    responses = group_responses(rewards)
    weights = per_token_weights(responses, rewards, loss_type=loss_type, scale=scale,
                                clip_eps_high=CISPO_CAP if loss_type == "cispo" else None)
    effect = length_effect(responses, rewards, scale=scale)
    credit = credit_table(responses, weights)
    said = advantage_words(rewards, chapter, trl, scale)
    captions = {"advantages": said if said.startswith("Every") else f"{ADVANTAGE_LEGEND} {said}",
                "loss": LOSS_WORDS, "credit": credit_words(credit)}
    if loss_type == "cispo":
        captions["cispo"] = CISPO_WORDS
    if effect is not None:
        captions["length_bias"] = length_words(responses, effect)
    metrics = {
        "group": [("correct", f"{int(sum(rewards))} / {len(rewards)}"), ("mean(r)", f"{chapter['mean']:.3f}"),
                  ("std, population (chapter)", f"{chapter['std_population']:.3f}"),
                  ("std, sample (TRL)", f"{chapter['std_sample']:.3f}"),
                  ("sum of advantages", f"{round(float(chapter['advantages'].sum()), 6) + 0.0:+.3f}")],
        "loss": [("loss at ratio 1", f"{round(chapter['loss'], 4) + 0.0:.4f}"),  # 0.0000, never -0.0000
                 ("gradient norm ‖∂L/∂log π‖", f"{chapter['grad_norm']:.4f}")],
    }
    return {"chapter": chapter, "trl": trl, "responses": responses, "weights": weights, "effect": effect,
            "credit": credit, "metrics": metrics, "captions": captions, "advantage_words": said}


ADVANTAGE = {"group": (r"\hat A^{(i)} = \frac{r^{(i)} - \operatorname{mean}(r)}{\operatorname{std}(r) + \varepsilon}",
                       "A_i = (r_i − mean(r)) / (std(r) + ε)"),
             "none": (r"\hat A^{(i)} = r^{(i)} - \operatorname{mean}(r)", "A_i = r_i − mean(r)")}
LOSS = (r"\mathcal{L} = -\frac{1}{G}\sum_i \frac{1}{|y^{(i)}|}\sum_t \min\big(\rho_t \hat A^{(i)},"
        r"\ \operatorname{clip}(\rho_t, 1-\epsilon, 1+\epsilon)\,\hat A^{(i)}\big)",
        "L = −(1/G) Σ_i (1/|y_i|) Σ_t min(ρ_t A_i, clip(ρ_t, 1 − ε, 1 + ε) A_i)")
_GROUP_MEAN, _TOKEN_MEAN = r"\frac{\hat A^{(i)}}{G\,|y^{(i)}|}", r"\frac{\hat A^{(i)}}{\sum_j |y^{(j)}|}"
WEIGHT = {  # the weight of each token at ratio 1, per loss type: LaTeX and plain text
    "grpo": (_GROUP_MEAN, "A_i / (G |y_i|)"),
    "sapo": (_GROUP_MEAN + r"\quad(\text{the gate } 4\sigma(1-\sigma) = 1 \text{ at } \rho = 1)",
             "A_i / (G |y_i|)   (the gate 4σ(1 − σ) = 1 at ρ = 1)"),
    "bnpo": (_TOKEN_MEAN, "A_i / Σ_j |y_j|"), "dapo": (_TOKEN_MEAN, "A_i / Σ_j |y_j|"),
    "cispo": (r"\min(\rho, \varepsilon_{max})\," + _TOKEN_MEAN + rf"\quad(\varepsilon_{{max}} = {CISPO_CAP:g})",
              f"min(ρ, ε_max) · A_i / Σ_j |y_j|   (ε_max = {CISPO_CAP:g})"),
    "vespo": (r"\varphi(w)\," + _TOKEN_MEAN + r"\quad(\varphi(1) = 1)", "φ(w) · A_i / Σ_j |y_j|   (φ(1) = 1)"),
    "dr_grpo": (r"\frac{\hat A^{(i)}}{G\,L_{\max}}", "A_i / (G L_max)"),
    "luspo": (r"\frac{\hat A^{(i)}}{G}", "A_i / G"),
}


def r4(x) -> float:
    """A table's number: 4 decimals, never -0.0 (the JavaScript twin rounds the same: format(x, ".4f"))."""
    return round(float(x), 4) + 0.0


def rewards_of(G: int, group: Group) -> tuple[list[float], str | None]:
    """The group's 0/1 rewards (count mode: the first c; else the picked answers), and the note when c is more
    than G."""
    if group.mode == "count":
        c = group.correct
        note = f"c = {c} is more than G = {G}; using c = {G}." if c > G else None
        c = min(c, G)
        return [1.0] * c + [0.0] * (G - c), note
    return [1.0 if i in group.pick else 0.0 for i in range(1, G + 1)], None


def token_batch(responses) -> dict:
    """The group's responses as a lab batch at ratio 1 and pi = pi_ref: logp, old_logp, ref_logp (B, T) all
    log 0.5, and the mask of real tokens."""
    T = max(len(t) for t in responses)
    mask = np.array([[1.0] * len(t) + [0.0] * (T - len(t)) for t in responses])  # (B, T)
    logp = np.full(mask.shape, np.log(0.5))
    return {"logp": logp, "old_logp": logp, "ref_logp": logp, "mask": mask}


def show(values: dict, lab=None) -> list:
    """One group's document: the advantages (chart), the loss against its gradient, each token's weight under the
    loss type, the length bias and the credit. `lab` (the app's "Use my lab code"): the student's group_advantages
    and grpo_loss on this group beside the reference."""
    toy = build_config(ToyConfig, CONTROLS, values)
    loss_type = build_config(GRPOSettings, CONTROLS, values).loss_type
    rewards, note = rewards_of(toy.group_size, build_config(Group, CONTROLS, values))
    scale, G = toy.scale, toy.group_size
    g = one_group(rewards, scale=scale, loss_type=loss_type)
    chapter, trl, captions, responses = g["chapter"], g["trl"], g["captions"], g["responses"]
    adv = chapter["advantages"]
    xs = list(range(1, G + 1))
    colors = tuple(COLORS["good"] if r > 0 else COLORS["bad"] for r in rewards)
    bars = [BarSeries(xs, adv, "population std (chapter)", colors=colors),
            BarSeries(xs, trl["advantages"], "sample std (TRL)", colors=colors, opacity=0.45, hatch="/")]
    mine = lab.advantages(rewards, scale_std=scale == "group") if lab is not None else None
    if mine is not None and mine.student is not None and mine.student.shape == (G,):
        wrong = mismatched(mine) or [False] * G
        bars.append(Line(np.asarray(mine.student, dtype=float), "your group_advantages", x=np.array(xs, dtype=float),
                         reveal="full", mode="markers", size=16, symbols=tuple("x" if w else "diamond" for w in wrong),
                         marker_colors=tuple(COLORS["bad"] if w else "#000000" for w in wrong), outline="white"))
    doc = [Note(note)] if note else []
    doc += [
        Formula(*ADVANTAGE[scale]),
        Metrics(g["metrics"]["group"]),
        Charts("adv_chart", [Chart("Advantage of each answer", bars, x_title="answer i", y_title="advantage",
                                   height=360, barmode="group")]),
    ]
    if mine is not None:
        doc.append(Verdict(mine, "group_advantages on this group (black diamonds; a red cross where it differs)",
                           lab, "group_advantages"))
    doc += [Caption(captions["advantages"]),
            Heading("Loss value vs gradient"), Formula(*LOSS), Metrics(g["metrics"]["loss"]), Caption(captions["loss"]),
            Heading("The group, token by token"),
            Text(f"Each token's log-probability gets a gradient weight; at ratio 1, under {loss_type} it is",
                 md=f"Each token's log-probability gets a gradient weight; at ratio 1, under **{loss_type}** it is"),
            Formula(*WEIGHT[loss_type])]
    if loss_type == "cispo":
        doc.append(Caption(captions["cispo"]))
    columns = ["answer", "response", "reward", "advantage", "length", "weight per token"]
    rows = [[i + 1, " ".join(t), r, r4(a), len(t), r4(w[0])]
            for i, (t, r, a, w) in enumerate(zip(responses, rewards, adv, g["weights"], strict=True))]
    grad = None
    if lab is not None:  # the student's grpo_loss on this group: its gradient is the weight of each token
        _, grad = lab.loss_and_grad(**token_batch(responses), adv=adv, clip_eps=0.2, beta=0.04)
        if grad.student is not None and grad.student.shape == grad.reference.shape:
            columns.append("your weight (grpo_loss)")
            for i, row in enumerate(rows):
                row.append(r4(-float(grad.student[i, 0])))
    doc.append(Table("weights_table", columns, rows))
    if grad is not None:
        doc.append(Verdict(grad, "grpo_loss gradient on this group (ratio 1, π = π_ref)", lab, "grpo_loss"))
        if loss_type != "grpo":
            doc.append(Caption("Your grpo_loss is the chapter's (Task 4: mean over each response, then over "
                               f"responses); compare it with loss type grpo, not {loss_type}."))
    if (effect := g["effect"]) is not None:
        short, long = (" ".join(responses[effect[k]]) for k in ("short", "long"))
        doc += [Text("Length bias. Two wrong answers with the same advantage, per token, under each loss type:",
                     md="**Length bias.** Two wrong answers with the same advantage, per token, under each loss type:"),
                Table("length_bias_table", ["loss type", f"{short} (short, wrong)", f"{long} (long, wrong)"],
                      [[r["loss_type"], r4(r["short"]), r4(r["long"])] for r in effect["rows"]]),
                Caption(captions["length_bias"])]
    doc += [Text("Credit: what each token collects across the group, among tokens chosen after the same text.",
                 md="**Credit:** what each token collects across the group, among tokens chosen after the same text."),
            Table("credit_table", ["position", "context", "token", "weight", "count"],
                  [[r["position"], r["context"], r["token"], r4(r["weight"]), r["count"]] for r in g["credit"]]),
            Caption(captions["credit"])]
    return doc


VIEW = View(
    "one_group", "One group",
    intro=Text("Take one prompt, x = 37+48=, sample G answers and check each. GRPO compares every answer with its "
               "siblings: the group mean is a free Monte Carlo estimate of the value V(x), so no critic is needed. It "
               "opens on the chapter's group: answers 85, 75, 815, 85 with rewards 1, 0, 0, 1.",
               md="Take one prompt, $x$ = `37+48=`, sample $G$ answers and check each. GRPO compares every answer with "
                  "its siblings: the group mean is a free Monte Carlo estimate of the value $V(x)$, so no critic is "
                  "needed. It opens on the chapter's group: answers 85, 75, 815, 85 with rewards 1, 0, 0, 1."),
    controls=CONTROLS, show=show,
    what="The worked example: rewards coloured correct/wrong, mean, std, advantages (population vs TRL's sample std), "
         "per-token weights for every loss type, the length bias and the first-token credit.",
)  # fmt: skip
