"""The views' documents, as both hosts draw them: built once by assets/js/views.js and toy_views.js, run here under
node (tests/fixtures/node.py) in the fast tier.

- Each number the chapter prints, asserted once, on the document a reader sees at the view's defaults.
- Each caption's branches and thresholds, both sides of each, by named settings: a table of setting -> expected
  sentence, so that moving a threshold or dropping a branch fails a test. The live parts' captions (Training
  dynamics, Std scaling, the toys) read runs: synthetic runs built here pin each branch exactly.
- The declarations (sim/views): every view the browser computes has its document; the lab's numbers land where the
  document puts them.
"""

from __future__ import annotations

import numpy as np
import pytest

from sim.views import catalog
from sim.views.controls import build_config
from tests.fixtures.node import call, doc, js, live, nd


def fields_of(name: str, values: dict | None = None) -> dict:
    """A view's fields (by config field names) at its defaults, some controls changed by URL key."""
    view = catalog.view(name)
    state = {**view.defaults(), **(values or {})}
    return {c.field: state[c.key] for c in view.controls}


def walk(blocks):
    for b in blocks:
        yield b
        if b["kind"] == "ask":
            yield from walk(b["then"])
        elif b["kind"] == "columns":
            for col in b["columns"]:
                yield from walk(col)


def texts(blocks, kind: str) -> list[str]:
    return [b["text"] for b in walk(blocks) if b["kind"] == kind]


def captions(blocks) -> list[str]:
    """Captions, notes and chart captions, in order."""
    out = []
    for b in walk(blocks):
        if b["kind"] in ("caption", "note"):
            out.append(b["text"])
        elif b["kind"] == "charts":
            out += [c["caption"] for c in b["charts"] if c["caption"]]
    return out


def questions(blocks) -> list[dict]:
    return [b["question"] for b in walk(blocks) if b["kind"] == "ask"]


def metrics(blocks) -> dict[str, str]:
    return {label: value for b in walk(blocks) if b["kind"] == "metrics" for label, value, *_ in b["items"]}


def table(blocks, key: str) -> dict:
    (t,) = [b for b in walk(blocks) if b["kind"] == "table" and b["key"] == key]
    return t


def one(items: list[str], part: str) -> str:
    found = [x for x in items if part in x]
    assert len(found) == 1, (part, items)
    return found[0]


# ---------------------------------------------------------------- the chapter's numbers, once each

def test_wasted_groups_holds_34_vs_96_percent_and_the_table():
    d = doc("wasted", fields_of("wasted"))
    q8, q64 = questions(d)
    assert (q8["answer"], q8["unit"], q64["answer"]) == (33.7, "%", 96.2)  # 1 - 0.95^8 - 0.05^8, 1 - 0.95^64
    assert "p = 0.05 yields signal 34% of the time with G = 8 but 96% with G = 64" in one(captions(d), "chapter's case")
    t = table(d, "no_signal_table")
    assert t["columns"] == ["p", "G = 4", "G = 8", "G = 16", "G = 64"]
    assert t["rows"][1] == ["0.05", "0.815", "0.663", "0.440", "0.038"]  # 0.95^G + 0.05^G


def test_one_group_holds_the_worked_example():
    d = doc("one_group", fields_of("one_group"))  # rewards 1, 0, 0, 1; 85, 75, 815, 85
    m = metrics(d)
    assert (m["correct"], m["mean(r)"], m["std, population (chapter)"], m["std, sample (TRL)"]) == (
        "2 / 4", "0.500", "0.500", "0.577")
    assert (m["loss at ratio 1"], m["gradient norm ‖∂L/∂log π‖"]) == ("0.0000", "0.5000")  # loss 0, gradient not
    w = table(d, "weights_table")
    assert [r[1] for r in w["rows"]] == ["8 5 <eos>", "7 5 <eos>", "8 1 5 <eos>", "8 5 <eos>"]
    assert [r[3] for r in w["rows"]] == [1.0, -1.0, -1.0, 1.0]  # +1, -1, -1, +1 (no 0.9998: ε is tiny)
    assert [r[5] for r in w["rows"]] == [0.0833, -0.0833, -0.0625, 0.0833]  # A_i / (G |y_i|): 1/12, 1/16
    credit = table(d, "credit_table")
    first = {r[2]: r[3] for r in credit["rows"] if r[0] == 0}
    assert first == {"8": 0.1042, "7": -0.0833}  # +1/12 + 1/12 - 1/16 ~ +0.10; -1/12
    bias = {r[0]: (r[1], r[2]) for r in table(d, "length_bias_table")["rows"]}
    assert bias["grpo"] == (-0.0833, -0.0625) and bias["luspo"] == (-0.25, -0.25)  # luspo: A/G
    assert "(-0.0625 vs -0.0833; the chapter's -0.063 vs -0.083)" in one(captions(d), "pushed down less per token")
    g2 = table(doc("one_group", fields_of("one_group", {"G": 2, "pick": [1]})), "weights_table")["rows"]
    assert [r[5] for r in g2] == [0.1667, -0.1667]  # 1 / (2 x 3), not 0.1666


def test_kl_and_clipping_holds_the_k3_check_the_clip_and_the_successors():
    d = doc("kl_clip", fields_of("kl_clip"))
    k3, clip = questions(d)
    assert k3["answer"] == 0.0157  # u = 0.5 / 0.6 = 0.833: 0.833 - log 0.833 - 1
    m = metrics(d)
    assert (m["u = π_ref / π"], m["k3"], m["d k3 / d log π = 1 − u"]) == ("0.833", "0.0157", "0.167")
    assert clip["answer"] == "no gradient: clipped"  # 0.40 -> 0.50: ratio 1.25 > 1.2
    assert "ratio 1.250; with A > 0 and ε = 0.20 the token is clipped" in one(captions(d), "Token probability")
    weights = {r[0]: r[1] for r in table(d, "weights_at_token")["rows"]}
    assert weights["PPO clip, ε = 0.20"] == 0.0 and weights["CISPO, cap 1 + ε high = 1.28"] == 1.25
    assert weights[next(k for k in weights if k.startswith("SAPO"))] == 1.231
    assert weights[next(k for k in weights if k.startswith("GSPO"))] == 1.057


def test_passk_holds_the_estimator_and_the_two_problems():
    d = doc("passk", fields_of("passk"))
    (q,) = questions(d)  # mean of A (0.6 -> 0.98) and B (0.05 -> 0.01): (1 + 0.962) / 2 -> (1 + 0.474) / 2
    assert q["answer"] == 0.737 and "Before RL the mean pass@64 is 0.981" in q["question"]
    per = one(captions(d), "Per problem")
    assert "pass@64 1.000 → 1.000" in per and "collapses from 0.962 to 0.474" in per  # 1 - 0.95^64, 1 - 0.99^64
    assert metrics(d) == {"pass@8 from n = 64, c = 5": "0.4990"}  # 1 - C(59, 8) / C(64, 8)


def test_std_scaling_asks_exercise_15_4_with_the_chapters_numbers():
    d = doc("std_scaling", fields_of("std_scaling"))
    (q,) = questions(d)
    assert q["answer"] == 0.66 and "(A group with 4 correct has 1.00.)" in q["question"]
    assert "(the chapter's 0.66 vs 1.0 and 0.22 vs 0.5)" in one(captions(d), "At G = 8")
    assert "1 correct gives 0.66 with std vs 0.22 without; 4 correct gives 1.00 vs 0.50" in one(captions(d), "At G = 8")


def test_training_at_the_chapters_defaults():
    """Accuracy 0.24 -> 0.94, all-correct groups up to 76%, the hardest prompt waits until iteration 116 on the
    mean of 16 seeds (the question's answer) and until 115 in seed 0, the heatmap's run (its caption) (docs/toy.md:
    the chapter's 51% ... 80% is TinyLM's; these are the toy's)."""
    request = doc("training", fields_of("training"))[-1]["request"]
    out = live({**request, "big": False})
    say = {c["title"]: c["caption"] for c in out["charts"]}
    assert say["Mean accuracy over the 24 prompts (G = 8)"].startswith("Accuracy 0.24 → 0.94.")
    assert "76% at the end (mostly all correct, green)" in say["Groups with zero gradient (G = 8)"]
    heat = next(c for c in out["charts"] if c["title"] == "p_j over time (seed 0): hard prompts wait")
    z = np.asarray(heat["traces"][0]["z"]).reshape(-1, 24)  # (T+1, P) seed 0's p_j
    assert int(np.flatnonzero(z[:, -1] > 0.1)[0]) == 115
    assert heat["caption"].startswith("The hardest prompt (top row) stays dark, below p = 0.1, until iteration 115:")
    assert out["question"]["answer"] == 116 and out["metrics"][2][1] == "iteration 116"


# ---------------------------------------------------------------- the captions' branches, setting -> sentence

ONE_GROUP = [  # (controls changed, a sentence the document must say, one it must not)
    ({}, "TRL divides by the sample std (G - 1 in the denominator), which is larger", "Every answer got"),
    ({"scale": "none"}, "Without the std division both conventions give the same advantages.", "TRL divides"),
    ({"pick": [1, 2, 3, 4]}, "Every answer got the same reward, so every advantage is 0: this group teaches nothing.",
     "Right answers get"),
    ({"pick": []}, "Every answer got the same reward", "Right answers get"),
    ({"mode": "count", "c": 9}, "c = 9 is more than G = 4; using c = 4.", "Right answers get"),
    ({"mode": "count", "c": 4}, "Every answer got the same reward", "is more than G"),
    ({"loss": "cispo"}, "CISPO's cap here is ε_max = 5", "Every answer got"),
    ({"loss": "dapo"}, "under dapo it is", "CISPO's cap"),
]


@pytest.mark.parametrize("changed, says, never", ONE_GROUP)
def test_one_group_says_what_its_setting_shows(changed, says, never):
    d = doc("one_group", fields_of("one_group", changed))
    words = captions(d) + texts(d, "text")
    assert any(says in w for w in words), (says, words)
    assert not any(never in w for w in words)


def test_one_group_without_two_wrong_answers_of_different_lengths_has_no_length_table():
    d = doc("one_group", fields_of("one_group", {"G": 2, "pick": [1]}))  # one wrong answer
    assert not [b for b in walk(d) if b["kind"] == "table" and b["key"] == "length_bias_table"]
    assert doc("one_group", fields_of("one_group", {"G": 4, "pick": [1]}))  # 75 and 815: the table is there


KL_CLIP = [
    ({"p_new": 0.45}, "ratio 1.125; with A > 0 and ε = 0.20 the token is still pushed", "is clipped"),
    ({"p_new": 0.5}, "the token is clipped: no more gradient on the next inner step", "still pushed"),
    ({"p_new": 0.5, "eps": 0.3}, "ratio 1.250; with A > 0 and ε = 0.30 the token is still pushed", "is clipped"),
    ({}, "PPO's clip gives weight 0.000 (silenced: the clip is flat past 1 + ε)", None),
    ({"p_new": 0.45}, "PPO's clip gives weight 1.125;", "(silenced"),
    ({"pi": 1.0}, "With π or π_ref = 1 the other token has probability 0 and the KL is not finite", "Shaded"),
    ({"pi_ref": 1.0}, "the KL is not finite: lower it below 1.", "Shaded"),
    ({"pi": 0.99}, "Shaded: the middle 80% of the 400 estimates.", "not finite"),
]


@pytest.mark.parametrize("changed, says, never", KL_CLIP)
def test_kl_and_clipping_says_what_its_setting_shows(changed, says, never):
    d = doc("kl_clip", fields_of("kl_clip", changed))
    words = captions(d)
    assert any(says in w for w in words), (says, words)
    assert never is None or not any(never in w for w in words)


PASSK = [
    ({"c": 70}, "c = 70 is more than n = 64; using c = 64.", "using k ="),
    ({"k": 70}, "k = 70 is more than n = 64; using k = 64.", "c = 70"),
    ({"n": 10, "c": 20, "k": 30}, "c = 20 is more than n = 10; using c = 10.", None),
]


@pytest.mark.parametrize("changed, says, never", PASSK)
def test_passk_corrects_what_cannot_be(changed, says, never):
    notes = captions(doc("passk", fields_of("passk", changed)))
    assert says in notes
    assert never is None or not any(never in n for n in notes)


def test_std_scaling_states_the_chapters_numbers_only_at_g_8():
    assert any("At G = 8" in c for c in captions(doc("std_scaling", fields_of("std_scaling", {"G": 8}))))
    assert not any("At G = " in c for c in captions(doc("std_scaling", fields_of("std_scaling", {"G": 9}))))


# ---- the live parts' captions, on synthetic runs: every branch and threshold exactly

CFG = {"n_seeds": 2, "n_prompts": 3, "group_size": 8, "seed": 0, "lr_w": 0.2, "mu": 1, "clip_eps": 0.2,
       "clip_eps_high": None, "loss_type": "grpo", "iterations": 4}


def run(*, acc=(0.2, 0.9), wrong=(0.5, 0.0), right=(0.0, 0.5), entropy=(0.3, 0.3, 0.3, 0.3, 0.3), hard=(0.0,) * 5,
        kl=0.1, clip=None):
    """A run of T = 4 iterations, 2 identical seeds, 3 prompts: its first and last accuracy and dead-group shares,
    its entropy and hardest prompt's p over t = 0..4."""
    T, S, P = 4, 2, 3
    seeds = lambda x: np.repeat(np.asarray(x, dtype=float)[:, None], S, axis=1)  # noqa: E731
    line = lambda a, b, n: np.linspace(a, b, n)  # noqa: E731
    p = np.full((T + 1, S, P), 0.5)
    p[:, :, -1] = seeds(hard)
    metrics = {"frac_all_wrong": seeds(line(*wrong, T)), "frac_all_correct": seeds(line(*right, T))}
    metrics["frac_reward_zero_std"] = metrics["frac_all_wrong"] + metrics["frac_all_correct"]
    metrics["clip_ratio/region_mean"] = seeds(clip if clip is not None else np.zeros(T))
    counts = np.full((T, S, P), 4.0)
    return {"accuracy": nd(seeds(line(*acc, T + 1))), "entropy": nd(seeds(entropy)), "p": nd(p),
            "kl_exact": nd(seeds(line(0, kl, T + 1))), "metrics": {k: nd(v) for k, v in metrics.items()},
            "counts": nd(counts)}


# the expected run a Training chart draws beside a run's (its lines are not read by any caption)
EXP = {"accuracy": nd(np.full((5, 1), 0.5)), "kl_exact": nd(np.zeros((5, 1))), "entropy": nd(np.zeros((5, 1))),
       "metrics": {"expected_zero_frac": nd(np.full((4, 1), 0.5))}}


def captions_of(cfg: dict, r: dict) -> dict[str, str]:
    """Training dynamics' five chart captions for a run, as its charts say them (read off their own data)."""
    charts = call("toy_views", "training_charts", cfg, r, EXP)
    return dict(zip(("acc", "zero", "bars", "heat", "kl"), (c["caption"] for c in charts), strict=True))


TRAINING = [  # (run's settings, config changed, caption, the sentence it says)
    ({}, {}, "zero", "No gradient: 50% of groups at first (mostly all wrong, red), 50% at the end (mostly all correct, "
     "green)."),
    ({"wrong": (0.0, 0.3), "right": (0.0, 0.3)}, {}, "zero",
     "No gradient: 0% of groups at first, 60% at the end (as many all wrong as all correct)."),
    ({"wrong": (0.31, 0.3), "right": (0.3, 0.31)}, {}, "zero",
     "61% of groups at first (mostly all wrong, red), 61% at the end (mostly all correct, green)."),
    ({"entropy": (0.3, 0.4, 0.5, 0.4, 0.2)}, {}, "kl",
     "Entropy first rises, 0.300 → 0.500 nats by iteration 2, as the many hard prompts move"),
    ({"entropy": (0.3, 0.3045, 0.302, 0.3, 0.2)}, {}, "kl", "Entropy goes 0.300 → 0.200 nats."),  # +0.0045: no rise
    ({"entropy": (0.3, 0.3056, 0.302, 0.3, 0.2)}, {}, "kl", "Entropy first rises, 0.300 → 0.306 nats by iteration 1"),
    ({"entropy": (0.3, 0.4, 0.5, 0.6, 0.7)}, {}, "kl", "Entropy goes 0.300 → 0.700 nats."),  # rises to the end
    ({"entropy": (0.5, 0.4, 0.3, 0.2, 0.1)}, {}, "kl", "Entropy goes 0.500 → 0.100 nats."),
    ({"hard": (0.0, 0.05, 0.1, 0.1001, 0.5)}, {}, "heat",
     "The hardest prompt (top row) stays dark, below p = 0.1, until iteration 3: its groups are all wrong"),
    ({"hard": (0.0, 0.05, 0.1, 0.1, 0.1)}, {}, "heat",
     "The hardest prompt (top row) never passes p = 0.1: its groups stay all wrong."),
    ({}, {"lr_w": 0.0}, "heat", "never passes p = 0.1: its groups stay all wrong, and with lr_w = 0 no shared skill "
     "lifts it."),
]


@pytest.mark.parametrize("settings, changed, which, says", TRAINING)
def test_training_captions_say_what_the_run_shows(settings, changed, which, says):
    got = captions_of({**CFG, **changed}, run(**settings))
    assert says in got[which], got[which]


def test_the_heatmaps_caption_reads_its_own_seed():
    """The heatmap draws seed 0; its caption says when seed 0's top row passes p = 0.1, not the seeds' mean
    (9de5a4a's caption said the mean's 116 under a heatmap whose row crossed at 115)."""
    r = run(hard=(0.0, 0.05, 0.1, 0.1001, 0.5))
    p = np.asarray(r["p"]["nd"]).reshape(r["p"]["shape"])
    p[2, 1:, -1] = 0.4  # the other seed passes at 2: the mean passes at 2, seed 0 at 3
    r["p"] = nd(p)
    assert "until iteration 3:" in captions_of(CFG, r)["heat"]
    assert call("toy_views", "training_metrics", CFG, r)[2] == ["hardest prompt passes p = 0.1 (mean of the seeds)",
                                                                 "iteration 2"]


CLIP = [  # (run's settings, config changed, the sentence its clip note says); the note is the text above the charts
    ({"clip": (0.1, 0.2, 0.0, 0.1)}, {"mu": 2}, "μ = 2 reuses each batch: PPO's clip (ε = 0.2) silenced 10.00% of "
     "answers per step (20.0% at most); the hardest prompt passes p = 0.1 never. Try clip-higher or CISPO"),
    ({"clip": (0.1,) * 4}, {"mu": 2, "loss_type": "cispo", "clip_eps_high": 5},
     "μ = 2 reuses each batch: CISPO (ε_max = 5) capped the weight of 10.00% of answers per step"),
    ({"clip": (0.1,) * 4}, {"mu": 3, "clip_eps_high": 0.28}, "μ = 3 reuses each batch: clip-higher (ε high = "
     "0.28) silenced 10.00%"),
    ({"clip": (0.1,) * 4}, {"mu": 3, "clip_eps_high": 0.2}, "μ = 3 reuses each batch: PPO's clip (ε = 0.2) silenced"),
    ({}, {"mu": 1, "loss_type": "cispo", "clip_eps_high": 5}, ""),  # one update per batch: no clip note
]


@pytest.mark.parametrize("settings, changed, says", CLIP)
def test_the_clip_note_says_what_the_clip_did(settings, changed, says):
    got = call("toy_views", "clip_note", {**CFG, **changed}, run(**settings), None)
    assert got.startswith(says) if says else got == ""


def test_the_clip_note_compares_with_ppo_when_it_ran():
    got = call("toy_views", "clip_note", {**CFG, "mu": 2, "loss_type": "cispo", "clip_eps_high": 5},
               run(clip=(0.1,) * 4, hard=(0.0, 0.0, 0.2, 0.3, 0.4)), run(clip=(0.3, 0.4, 0.2, 0.1)))
    assert got.endswith("; with PPO's clip (ε = 0.2) it silenced 25.00% (40.0% at most) and the hardest prompt "
                        "passed never.")
    assert "the hardest prompt passes p = 0.1 at iteration 2" in got


def test_the_question_is_asked_only_where_the_hardest_prompt_learns():
    assert call("toy_views", "hard_prompt_question", CFG, run(hard=(0.0,) * 5)) is None
    q = call("toy_views", "hard_prompt_question", CFG, run(hard=(0.001, 0.05, 0.2, 0.3, 0.4)))
    assert (q["answer"], q["tolerance"], q["hi"]) == (2, 10, 4)
    assert q["question"].startswith("The hardest prompt starts at p = 0.001")


def std_runs(final: tuple[float, float, float], starts=(3, None, 2), T: int = 200) -> dict:
    """The engine's comparison of three runs over T iterations: each one's final accuracy and the iteration where its
    hardest prompt passes p = 0.1 (None: never)."""
    names = ("with std", "without std, same lr", "without std, same first step")

    def hard(at):
        h = np.full(T + 1, 0.05)
        if at is not None:
            h[at:] = 0.5
        return h.tolist()

    return {n: {"lr": lr, "step": step, "accuracy": np.linspace(0.2, acc, T + 1).tolist(), "hard": hard(s)}
            for n, lr, step, acc, s in zip(names, (0.2, 0.2, 0.61), (0.12, 0.04, 0.12), final, starts, strict=True)}


def std_caption(runs: dict) -> tuple[str, str]:
    """Std scaling's intro and caption, read off its charts (toy_views.std_charts)."""
    return js([{"op": "std_words", "runs": runs, "lr": 0.2}])[0]


STD = [
    ((0.9, 0.7, 0.89), "What remains between blue and orange is the reweighting's effect: here it is small, because a "
     "shared skill lifts every prompt"),  # a gap of 0.01
    ((0.9, 0.7, 0.8799), ": 0.020 in final accuracy here."),  # 0.0201: past the 0.02 threshold
    ((0.9, 0.7, 0.8801), "here it is small"),  # 0.0199
    ((0.9, 0.7, 0.7), ": 0.200 in final accuracy here."),
]


@pytest.mark.parametrize("final, says", STD)
def test_std_scaling_words_say_whether_the_reweighting_mattered(final, says):
    intro, caption = std_caption(std_runs(final))
    assert says in caption
    assert "the first step without the std is 0.33 times the size of the step with it" in intro
    assert "hardest prompt past p = 0.1 at iteration 3" in caption and ", never within 200 iterations" in caption


def test_the_toys_pass_at_k_captions_say_whether_the_curves_cross():
    grow = call("toy_views", "toy_curves", [0.2, 0.5], [0.6, 0.9], 200)[1]
    assert "no crossing. In this toy a shared skill lifts every prompt" in grow
    cross = call("toy_views", "toy_curves", [0.6, 0.05], [0.98, 0.01], 200)[1]
    assert "the curves cross at k ≈" in cross and "no crossing" not in cross


# ---------------------------------------------------------------- the declarations and the app's additions

def test_every_view_the_browser_computes_has_its_document():
    """Every view of the catalog a page computes (sim/views/catalog.py: no list here) has its document in
    assets/js/views.js SHOW, at its defaults, with the data sim reads for it (TinyLM's records)."""
    page = [v for v in catalog.views() if v.lesson == "page"]
    assert page
    out = js([{"op": "doc", "view": v.name, "fields": fields_of(v.name),
               "ctx": {"data": v.data() if v.data is not None else None}} for v in page])
    for v, blocks in zip(page, out, strict=True):
        assert isinstance(blocks, list) and blocks, (v.name, blocks)
        fields = {c.field for c in v.controls}
        assert all(c.field for c in v.controls), v.name
        assert len(fields) == len(v.controls), v.name  # one control per field


def test_a_controls_range_is_inside_its_configs():
    """Whatever a page's controls may hold, its config accepts: each slider at both ends builds its config."""
    for v in catalog.views():
        for c in v.controls:
            for x in (getattr(c, "lo", None), getattr(c, "hi", None)):
                if x is not None:
                    build_config(c.config, v.controls, {**v.defaults(), c.key: x})


def test_the_lab_numbers_land_where_the_document_says():
    verdict = {"kind": "verdict", "tone": "success", "title": "Your group_advantages matches the reference.",
               "message": ""}
    lab = {"advantages": {"student": [1, -1, -1, 1], "wrong": [False, False, True, False]}, "weights": [0.1] * 4,
           "slots": {"after_chart": [verdict], "after_table": []}}
    d = doc("one_group", fields_of("one_group"), {"app": True, "lab": lab})
    kinds = [b["kind"] for b in d]
    assert kinds[kinds.index("charts") + 1] == "verdict"
    (chart,) = [b for b in d if b["kind"] == "charts"][0]["charts"]
    mine = chart["traces"][-1]
    assert mine["name"] == "your group_advantages" and mine["symbols"] == ["diamond", "diamond", "x", "diamond"]
    assert table(d, "weights_table")["columns"][-1] == "your weight (grpo_loss)"
    live_block = doc("training", fields_of("training"), {"lab": {"table": [[1.0] * 9, [-1.0] * 9], "slots": {}}})[-1]
    assert live_block["request"]["table"] == [[1.0] * 9, [-1.0] * 9]
    pinned = doc("training", fields_of("training"), {"pinned": {"label": "pinned (G=16)", "config": {}}})[-1]
    assert pinned["request"]["pinned"]["label"] == "pinned (G=16)"


def test_the_pin_label_names_what_differs():
    controls = [{"key": "G"}, {"key": "lr"}, {"key": "pick"}]
    assert call("page", "pinLabel", controls, {"G": 16, "lr": 0.2, "pick": [1]}, {"G": 8, "lr": 0.2, "pick": [1]}) \
        == "pinned (G=16)"
    assert call("page", "pinLabel", controls, {"G": 8, "lr": 0.5, "pick": [1, 4]},
                {"G": 8, "lr": 0.2, "pick": [1]}) == "pinned (lr=0.5, pick=1,4)"
    assert call("page", "pinLabel", controls, {"G": 8}, {"G": 8}) == "pinned"


@pytest.mark.parametrize("G", [8, 16, 9])
def test_wasted_groups_legend_names_each_g_once(G):
    """Your G's curve is "G = G (yours)"; the fixed curve of the same G is not drawn again under it."""
    d = doc("wasted", fields_of("wasted", {"G": G}))
    (curves,) = [c for b in walk(d) if b["kind"] == "charts" for c in b["charts"] if c["title"].startswith("P(no")]
    names = [t["name"] for t in curves["traces"]]
    assert len(names) == len(set(names)) and f"G = {G} (yours)" in names and f"G = {G}" not in names


def test_a_text_written_once_in_markdown_has_its_plain_words():
    from sim.views.doc import Text

    t = Text.of("Take $x$ = `37+48=`, the **population** std, $p^G + (1 − p)^G$")
    assert t.text == "Take x = 37+48=, the population std, p^G + (1 − p)^G" and t.md.startswith("Take $x$")
    intros = [v.intro for v in catalog.views() if v.intro is not None and v.intro.md]
    assert intros and all(t.text and "`" not in t.text and "**" not in t.text for t in intros)
