"""One group's worked example: the numbers and every sentence pages/one_group.py shows, declared once here;
the lesson (sim/lesson) shows the same sentences as text and tables (`one_group_words`).

Every number comes from sim/exercises.py (group_summary, per_token_weights, length_effect, credit_table).
`one_group` returns them with the page's metrics and captions, each caption computed from the numbers it
describes; `one_group_words` renders the same for the lesson.
"""

from __future__ import annotations

from sim.exercises import CISPO_CAP, credit_table, group_responses, group_summary, length_effect, per_token_weights

# the chapter's groups: its worked example, one right of four, and a group with no spread
GROUPS = {"1,0,0,1": "1, 0, 0, 1 (the chapter's group)", "1,0,0,0": "1, 0, 0, 0 (one right)",
          "1,1,1,1": "1, 1, 1, 1 (all equal)", "0,0,0,0": "0, 0, 0, 0 (all wrong)"}
# the advantage chart's legend (pages/one_group.py draws right answers green, wrong red, TRL's bars hatched)
ADVANTAGE_LEGEND = "Green answers are right, red ones wrong; TRL's bars are hatched."


def parse_group(text: str) -> list[float]:
    return [float(x) for x in text.split(",")]


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
        "loss": [("loss at ratio 1", f"{chapter['loss']:.4f}"),
                 ("gradient norm ‖∂L/∂log π‖", f"{chapter['grad_norm']:.4f}")],
    }
    return {"chapter": chapter, "trl": trl, "responses": responses, "weights": weights, "effect": effect,
            "credit": credit, "metrics": metrics, "captions": captions, "advantage_words": said}


def one_group_words(rewards, scale: str = "group", loss_type: str = "grpo") -> dict:
    """{"above", "below", "tables": [{"title", "columns", "rows", "caption"}]} for one group (cells as text):
    the page's metrics and captions (`one_group`), its tables as text."""
    g = one_group(rewards, scale, loss_type)
    adv, trl_adv = g["chapter"]["advantages"], g["trl"]["advantages"]
    responses, captions = g["responses"], g["captions"]
    above = "; ".join(f"{label}: {value}" for label, value in g["metrics"]["group"] + g["metrics"]["loss"])
    above += ". " + g["advantage_words"]
    tables = [{
        "title": f"Each answer's advantage and per-token weight ({loss_type}, at ratio 1)",
        "columns": ["answer", "response", "reward", "advantage (population std)", "advantage (sample std, TRL)",
                    "length", "weight per token"],
        "rows": [[str(i + 1), " ".join(t), f"{r:g}", f"{a:+.4f}", f"{b:+.4f}", str(len(t)), f"{w[0]:+.4f}"]
                 for i, (t, r, a, b, w) in enumerate(zip(responses, rewards, adv, trl_adv, g["weights"], strict=True))],
        "caption": " ".join(captions[k] for k in ("loss", "cispo") if k in captions),
    }]
    if (effect := g["effect"]) is not None:
        short, long = (" ".join(responses[effect[k]]) for k in ("short", "long"))
        tables.append({
            "title": "Length bias: two wrong answers with the same advantage, per token, under each loss type",
            "columns": ["loss type", f"{short} (short, wrong)", f"{long} (long, wrong)"],
            "rows": [[r["loss_type"], f"{r['short']:+.4f}", f"{r['long']:+.4f}"] for r in effect["rows"]],
            "caption": captions["length_bias"],
        })
    tables.append({
        "title": "Credit: what each token collects across the group, among tokens chosen after the same text",
        "columns": ["position", "after", "token", "weight", "count"],
        "rows": [[str(r["position"]), r["context"], r["token"], f"{r['weight']:+.4f}", str(r["count"])]
                 for r in g["credit"]],
        "caption": captions["credit"],
    })
    return {"above": above, "below": "", "tables": tables}
