"""TinyLM's page as both hosts draw it (assets/js/tinylm_views.js, under node): the records sim reads
(sim/views/tinylm.py data) drawn as both sides of the debate and the replayed run; a live run's charts, words and
results from a trainer's snapshot; which side a run shows, the JavaScript twin of sim.tinylm.figures.side."""

from __future__ import annotations

import statistics

import pytest

from sim.tinylm.figures import side as sim_side
from sim.views import catalog
from sim.views.tinylm import data
from tests.fixtures.apptest import walk
from tests.fixtures.node import call, js


def fields(**changed) -> dict:
    view = catalog.view("tinylm")
    state = view.defaults()
    out = {c.field: state[c.key] for c in view.controls}
    return out | changed



def test_the_page_is_the_trainer_then_the_records():
    (blocks,) = js([{"op": "doc", "view": "tinylm", "fields": fields(), "ctx": {"data": data()}}])
    trainer = next(b for b in blocks if b["kind"] == "trainer")
    assert trainer["settings"] == {k: v for k, v in fields().items() if k != "trl"}  # the trainer's, not the page's
    assert trainer["preset"] == "default" and trainer["trl"] is None and set(trainer["presets"]) == {"default",
                                                                                                     "chapter-lab"}
    heads = [b["text"] for b in walk(blocks) if b["kind"] == "heading" and b["level"] == 3]
    assert heads == ["default: coverage widens", "chapter-lab: coverage narrows"]
    titles = [c["title"] for b in walk(blocks) if b["kind"] == "charts" for c in b["charts"]]
    assert titles == ["pass@k, median of 5 seeds (band: their range)", "GRPO − SFT pass@k, per seed (zoomed)"] * 2 + [
        "Mean reward of the sampled answers", "Held-out pass@1 (exact, checked every 10 iterations)",
        "Groups with zero reward std (no gradient)", "Entropy and KL to the reference"]
    on = js([{"op": "doc", "view": "tinylm", "fields": fields(trl=True), "ctx": {"data": data()}}])[0]
    assert next(b for b in on if b["kind"] == "trainer")["trl"]["iterations"][:3] == [1, 2, 3]  # the overlay's run


def test_each_presets_caption_says_its_side_with_the_medians_its_chart_draws():
    """pass@1 and pass@64 in the caption are read off the median curves drawn above it; they are the seeds'
    medians, and the never-solved counts too."""
    (blocks,) = js([{"op": "doc", "view": "tinylm", "fields": fields(), "ctx": {"data": data()}}])
    captions = [b["text"] for b in walk(blocks) if b["kind"] == "caption"]
    for name, fig in data()["figures"].items():
        rows = fig["runs"]
        med = {k: statistics.median(r[k] for r in rows) for k in ("pass_at_1_before", "pass_at_1_after",
                                                                      "pass_at_64_before", "pass_at_64_after")}
        said = next(c for c in captions if c.startswith("GRPO") and f"{med['pass_at_1_after']:.3f}" in c)
        assert (f"pass@1 {med['pass_at_1_before']:.3f} → {med['pass_at_1_after']:.3f}, pass@64 "
                f"{med['pass_at_64_before']:.3f} → {med['pass_at_64_after']:.3f}") in said
        assert said.startswith({"widened": "GRPO widened coverage", "narrowed": "GRPO narrowed coverage"}[fig["side"]])
        assert f"Why: {data()['presets'][name]['title']}" in said
    assert "the curves cross in 4 of 5 seeds" in " ".join(captions)


def test_the_replay_says_pass_at_1_once():
    (blocks,) = js([{"op": "doc", "view": "tinylm", "fields": fields(), "ctx": {"data": data()}}])
    run = data()["run"]
    table = next(b for b in blocks if b["kind"] == "table" and b["key"] == "tinylm_run_passk")
    first, last = f"{run['pass_at_1'][0][1]:.3f}", f"{run['pass_at_1'][-1][1]:.3f}"
    assert table["rows"][0] == ["1 (exact)", first, last]
    assert table["rows"][-1] == [64, f"{run['pass_at_k_before'][63]:.3f}", f"{run['pass_at_k_after'][63]:.3f}"]
    text = next(b["text"] for b in blocks if b["kind"] == "text" and "The shipped default run" in b["text"])
    assert f"pass@1 {first} at the start, {last} at iteration 300" in text


ROW = {"seed": 0, "pass_at_1_before": 0.5, "pass_at_1_after": 0.8, "pass_at_64_before": 0.98, "pass_at_64_after": 0.99,
       "never_solved_before": 5, "never_solved_after": 3, "crossover_k": None}
SIDES = [dict(ROW), ROW | {"pass_at_64_after": 0.97, "never_solved_after": 7}, ROW | {"never_solved_after": 6},
         ROW | {"pass_at_64_after": 0.98, "never_solved_after": 5}, ROW | {"pass_at_64_after": 0.97}]


def test_which_side_a_run_shows_is_sims_in_the_page():
    """The JavaScript twin of sim.tinylm.figures.side on the records and on one row of each branch."""
    cases = [fig["runs"] for fig in data()["figures"].values()] + [[r] for r in SIDES] + [SIDES[:3], SIDES[1:4]]
    got = js([{"op": "call", "module": "tinylm_views", "fn": "side", "args": [rows]} for rows in cases])
    assert got == [sim_side(rows) for rows in cases]
    assert {*got} == {"widened", "narrowed", "mixed"}


def snapshot(state="grpo", n=3, **more) -> dict:
    hist = [{"iteration": i + 1, "reward": 0.5 + 0.01 * i, "entropy": 0.4, "frac_reward_zero_std": 0.2,
             "completions/mean_length": 3.0, "grad_norm": 0.1, "step_time": 0.03, "loss": 0.0, "reward_std": 0.4,
             **({"kl": 0.01 * i} if i % 2 == 0 else {})} for i in range(n)]
    return {"state": state, "iteration": n, "iterations": 300, "history": hist, "pass_at_1": [[0, 0.512]],
            "groups": [{"prompt": "45+57=", "responses": ["102", "02"], "rewards": [1, 0],
                        "advantages": [0.7071, -0.7071]}],
            "result": None, "error": None, "paused": False, "viewers": 1, "queue_position": 0} | more


def test_a_live_run_draws_its_metrics_charts_and_latest_groups():
    blocks = call("tinylm_views", "live_blocks", snapshot(), {})
    (m,) = [b for b in blocks if b["kind"] == "metrics"]
    assert m["items"] == [["reward", "0.520"], ["entropy", "0.400"], ["kl", "0.020"], ["frac_reward_zero_std", "0.200"]]
    (c,) = [b for b in blocks if b["kind"] == "charts"]
    assert [ch["title"] for ch in c["charts"]] == ["reward", "entropy", "kl", "frac_reward_zero_std",
                                                   "completions/mean_length", "grad_norm", "clip_ratio/region_mean",
                                                   "step_time"]  # fmt: skip
    assert c["charts"][0]["x_range"] == [0, 300.5]  # the whole run from the first draw: it fills in, never rescales
    (t,) = [b for b in blocks if b["kind"] == "table"]
    assert t["rows"] == [["45+57=", "102", 1, "0.707"], ["45+57=", "02", 0, "-0.707"]]
    assert call("tinylm_views", "live_blocks", snapshot(n=0, groups=[]), {}) == []  # nothing yet to draw


STATUS = [  # (snapshot's state and more, what the trainer's line says)
    ({"state": "starting"}, "Starting the trainer…"),
    ({"state": "queued", "queue_position": 1}, "Waiting for a free trainer on the server: next in line."),
    ({"state": "queued", "queue_position": 3},
     "Waiting for a free trainer on the server: place 3 in line (2 runs ahead)."),
    ({"state": "grpo", "iteration": 37}, "GRPO: 37 / 300 iterations."),
    ({"state": "grpo", "iteration": 37, "paused": True}, "GRPO: 37 / 300 iterations (paused)."),
    ({"state": "eval", "eval": {"done": 120, "total": 600}}, "Evaluating pass@k on the held-out problems: 120 / 600."),
    ({"state": "done", "pass_at_1": [[0, 0.512], [300, 0.867]]},
     "Done: 300 GRPO iterations; held-out pass@1 0.512 → 0.867 (exact), then pass@k before and after (below)."),
    ({"state": "stopped", "iteration": 37}, "You stopped this run at iteration 37 of 300."),
    ({"state": "stopped", "iteration": 300, "stopped_in": "eval"}, "You stopped this run during its pass@k evaluation, "
     "after its 300 GRPO iterations: it has no pass@k results."),
    # a run on the server: its pause gives its trainer up for a while (sim/tinylm/job.py)
    ({"state": "grpo", "iteration": 37, "paused": True, "pause_left_s": 90.4}, "GRPO: 37 / 300 iterations (paused: its "
     "trainer on the server is free for the next run meanwhile; resume within 1 minute 30 s, or the run stops)."),
    ({"state": "grpo", "paused": True, "resuming": True, "queue_position": 2},
     "Waiting for a free trainer on the server to resume: place 2 in line (1 run ahead)."),
    ({"state": "stopped", "stopped_because": "pause limit", "pause_limit_s": 600},
     "This run was stopped after 10 minutes paused. Press Start to run it again."),
    ({"state": "stopped", "stopped_because": "paused runs", "max_paused": 4},
     "This run was stopped: it had been paused the longest, and the server keeps at most 4 paused runs. Press Start "
     "to run it again."),
]


@pytest.mark.parametrize("more, says", STATUS)
def test_the_trainers_line_says_where_the_run_is(more, says):
    assert call("tinylm_views", "status_text", snapshot(**more)) == says


def result(**more) -> dict:
    before = [min(1.0, 0.5 + 0.05 * k) for k in range(64)]
    after = [min(1.0, 0.8 + 0.01 * k) for k in range(64)]
    return {"eval_samples": 64, "heldout_problems": 300, "pass_at_k_before": before, "pass_at_k_after": after,
            "pass_at_1_before": before[0], "pass_at_1_after": after[0], "crossover_k": None,
            "never_solved_before": ["45+57=", "55+47="], "never_solved_after": [],
            "config": {"grpo": {"seed": 3}}} | more


def test_a_finished_run_says_what_it_shows_read_off_its_chart():
    presets = data()["presets"]
    blocks = call("tinylm_views", "results_blocks", result(), "default", presets)
    words = [b["text"] for b in blocks if b["kind"] in ("text", "caption")]
    assert "The curves do not cross." in words
    assert words[-1].startswith("This run: GRPO widened coverage (more problems solved within 64 samples than SFT") \
        and "pass@1 0.500 → 0.800, pass@64 1.000 → 1.000, never solved 2 → 0" in words[-1] \
        and f"Why: {presets['default']['title']}" in words[-1]
    other = call("tinylm_views", "results_blocks", result(), "chapter-lab", presets)[-1]["text"]
    assert "Unlike the recorded chapter-lab runs (narrowed coverage): its settings or seed differ." in other
    short = result(eval_samples=8, pass_at_k_before=[0.5] * 8, pass_at_k_after=[0.8] * 8, crossover_k=3.5)
    few = call("tinylm_views", "results_blocks", short, "default", presets)
    assert not [b for b in few if b["kind"] == "caption"]  # no pass@64: no side said
    assert "The curves cross at k ≈ 3.5." in [b["text"] for b in few if b["kind"] == "text"]
