"""One group's worked example as text and tables: the numbers pages/one_group.py shows, for the lesson.

Every number comes from sim/exercises.py (group_summary, per_token_weights, length_effect, credit_table),
the same calls the app's page makes for the same group, scale and loss type.
"""

from __future__ import annotations

from sim.exercises import CISPO_CAP, credit_table, group_responses, group_summary, length_effect, per_token_weights

# the chapter's groups: its worked example, one right of four, and a group with no spread
GROUPS = {"1,0,0,1": "1, 0, 0, 1 (the chapter's group)", "1,0,0,0": "1, 0, 0, 0 (one right)",
          "1,1,1,1": "1, 1, 1, 1 (all equal)", "0,0,0,0": "0, 0, 0, 0 (all wrong)"}


def parse_group(text: str) -> list[float]:
    return [float(x) for x in text.split(",")]


def one_group_words(rewards, scale: str = "group", loss_type: str = "grpo") -> dict:
    """{"above", "below", "tables": [{"title", "columns", "rows", "caption"}]} for one group (cells as text)."""
    chapter = group_summary(rewards, scale=scale, ddof=0)
    trl = group_summary(rewards, scale=scale, ddof=1)
    adv = chapter["advantages"]
    G = len(rewards)
    above = (f"{int(sum(rewards))} of {G} correct. mean(r) = {chapter['mean']:.3f}, population std (chapter) "
             f"{chapter['std_population']:.3f}, sample std (TRL) {chapter['std_sample']:.3f}, sum of advantages "
             f"{round(float(adv.sum()), 6) + 0.0:+.3f}. Loss at ratio 1: {chapter['loss']:.4f}; gradient norm "
             f"‖∂L/∂log π‖: {chapter['grad_norm']:.4f}.")
    if all(r == rewards[0] for r in rewards):
        above += " Every answer got the same reward, so every advantage is 0: this group teaches nothing."
    else:
        above += (f" Right answers get {max(adv):+.3f}, wrong ones {min(adv):+.3f}; the advantages sum to zero.")
    responses = group_responses(rewards)
    weights = per_token_weights(responses, rewards, loss_type=loss_type, scale=scale,
                                clip_eps_high=CISPO_CAP if loss_type == "cispo" else None)
    tables = [{
        "title": f"Each answer's advantage and per-token weight ({loss_type}, at ratio 1)",
        "columns": ["answer", "response", "reward", "advantage (population std)", "advantage (sample std, TRL)",
                    "length", "weight per token"],
        "rows": [[str(i + 1), " ".join(t), f"{r:g}", f"{a:+.4f}", f"{b:+.4f}", str(len(t)), f"{w[0]:+.4f}"]
                 for i, (t, r, a, b, w) in enumerate(zip(responses, rewards, adv, trl["advantages"], weights,
                                                         strict=True))],
        "caption": "At ratio 1 the loss is the mean advantage, 0 by construction; its gradient is REINFORCE with "
                   "the group baseline, which vanishes only when the group has no spread.",
    }]
    effect = length_effect(responses, rewards, scale=scale)
    if effect is not None:
        short, long = (" ".join(responses[effect[k]]) for k in ("short", "long"))
        row = {r["loss_type"]: r for r in effect["rows"]}
        tables.append({
            "title": "Length bias: two wrong answers with the same advantage, per token, under each loss type",
            "columns": ["loss type", f"{short} (short, wrong)", f"{long} (long, wrong)"],
            "rows": [[r["loss_type"], f"{r['short']:+.4f}", f"{r['long']:+.4f}"] for r in effect["rows"]],
            "caption": f"{' and '.join(effect['biased'])} average each answer over its own tokens, so the longer "
                       f"wrong answer is pushed down less per token ({row['grpo']['long']:+.4f} vs "
                       f"{row['grpo']['short']:+.4f}; the chapter's -0.063 vs -0.083). "
                       f"{', '.join(effect['unbiased'])} give every token of a wrong answer the same push.",
        })
    credit = credit_table(responses, weights)
    first = {r["token"]: r["weight"] for r in credit if r["position"] == 0}
    tables.append({
        "title": "Credit: what each token collects across the group, among tokens chosen after the same text",
        "columns": ["position", "after", "token", "weight", "count"],
        "rows": [[str(r["position"]), r["context"], r["token"], f"{r['weight']:+.4f}", str(r["count"])]
                 for r in credit],
        "caption": "The first token always follows '=', shared by every answer: there "
                   + ", ".join(f"{tok} collects {w:+.3f}" for tok, w in first.items())
                   + ". Credit assignment emerges only statistically, across many groups.",
    })
    return {"above": above, "below": "", "tables": tables}
