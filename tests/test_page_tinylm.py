"""pages/tinylm.py under AppTest: off by default it shows both presets' recorded runs; a tiny training finishes and
shows its results on top; sessions with the same settings share a run; an oversized run is refused; URL settings."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.fixtures.apptest import charts, documents, walk

pytestmark = pytest.mark.integration

PAGE = str(Path(__file__).resolve().parents[1] / "pages" / "tinylm.py")
RECORDED = ["pass@k, mean of 5 seeds (band: their range)", "GRPO − SFT pass@k, per seed (zoomed)"] * 2 + [
    "Mean reward of the sampled answers", "Held-out pass@1 (exact, checked every 10 iterations)",
    "Groups with zero reward std (no gradient)", "Entropy and KL to the reference"]  # the records, then the replay


def _titles(at: AppTest) -> list[str]:
    """Every chart's title, in page order (the one chart spec, through the player component)."""
    return [c["title"] for drawn in charts(at).values() for c in drawn]


def test_page_off_by_default_shows_both_presets_recorded():
    # Never an empty page: before anyone trains, the two presets' 5-seed records (pass@k before/after, the
    # problems never solved, the per-seed table) and which side each shows, computed from the records.
    from sim.tinylm.figures import caption, load_preset_figures

    at = AppTest.from_file(PAGE, default_timeout=30).run()
    assert not at.exception
    assert at.toggle(key="tinylm_on").value is False
    assert _titles(at) == RECORDED  # no live chart
    (blocks,) = documents(at)  # the recorded part, drawn by the renderer a lesson draws it with
    tables = [b for b in walk(blocks) if b["kind"] == "table"]
    assert len(tables) == 3 and all(any("never solved" in c for c in t["columns"]) for t in tables[:2])
    assert tables[2]["columns"] == ["k", "SFT", "GRPO"]  # the default run, replayed in the player
    captions = [b["text"] for b in walk(blocks) if b["kind"] == "caption"]
    for name, fig in load_preset_figures().items():
        assert caption(fig["runs"], name) in captions
    heads = [b["text"] for b in walk(blocks) if b["kind"] == "heading" and b["level"] == 3]
    assert heads == ["default: coverage widens", "chapter-lab: coverage narrows"]
    labels = [item[0] for b in walk(blocks) if b["kind"] == "metrics" for item in b["items"]]
    assert labels == ["Never solved: SFT", "after GRPO"] * 2


def test_page_defines_no_function():
    # Callbacks, fragments and cached functions live in ui/tinylm.py: a function written in the page would keep
    # the page's namespace alive with every session's state.
    import ast

    tree = ast.parse(Path(PAGE).read_text())
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.Lambda, ast.AsyncFunctionDef))]


def test_tiny_training_finishes_and_shows_results():
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    at.toggle(key="tinylm_on").set_value(True).run()
    at.slider(key="tl_iters").set_value(4).run()
    at.slider(key="tl_P").set_value(4).run()
    at.slider(key="tl_G").set_value(4).run()
    at.radio(key="tl_eval").set_value("4").run()
    at.radio(key="tl_preset").set_value("chapter-lab").run()
    assert not at.exception
    at.button(key="tl_start").click().run()
    job = at.session_state["tinylm_job"]
    deadline = time.time() + 180  # a few seconds alone; minutes on a machine shared by many test runs
    while job.running and time.time() < deadline:
        time.sleep(0.3)
        at.run()
    at.run()
    assert not at.exception
    snap = job.snapshot()
    assert snap["state"] == "done", snap.get("error")
    assert len(snap["history"]) == 4
    g = job.cfg.grpo
    assert (g.iterations, g.prompts_per_iter, g.group_size, job.cfg.eval_samples) == (4, 4, 4, 4)
    assert g.blind_spot_prompts is False  # the chapter-lab preset's one switch
    drawn = charts(at)
    titles = _titles(at)
    assert "pass@k on 300 held-out problems" in titles and "reward" in titles and "kl" in titles
    assert any("Never solved by SFT" in m.label for m in at.metric)
    (passk,) = drawn["tl_passk"]
    assert passk["title"] == "pass@k on 300 held-out problems" and passk["x_log"] and passk["x_ticks"] == [1, 2, 4]
    markers = [t for t in passk["traces"] if t.get("mode") == "markers"]
    assert [m["x"] for m in markers] == [[4], [4]] and all(m["text"] for m in markers)  # SFT, GRPO at the largest k
    keys = list(drawn)
    assert keys.index("tl_live_charts") < keys.index("tl_passk") < keys.index("tl_rec_default")  # the live run on top


def _open(at: AppTest, iters: int) -> AppTest:
    at.query_params.update({"tinylm_on": "true", "tl_iters": str(iters), "tl_P": "2", "tl_G": "2", "tl_eval": "4"})
    return at.run()


def test_two_sessions_with_the_same_settings_share_one_run():
    a = _open(AppTest.from_file(PAGE, default_timeout=30), 400)
    b = _open(AppTest.from_file(PAGE, default_timeout=30), 400)
    a.button(key="tl_start").click().run()
    b.button(key="tl_start").click().run()
    job = a.session_state["tinylm_job"]
    assert b.session_state["tinylm_job"] is job
    a.run()
    assert any("Shared with 2 viewers" in i.value for i in a.info)
    assert a.button(key="tl_pause").disabled and a.button(key="tl_stop").label == "Leave"
    a.button(key="tl_stop").click().run()  # a leaves; b still watches, so the run goes on
    assert job.running
    b.button(key="tl_stop").click().run()  # the last viewer leaves: the run stops
    deadline = time.time() + 30
    while job.running and time.time() < deadline:
        time.sleep(0.1)
    assert job.state == "stopped" and not b.exception


def test_a_run_over_the_memory_cap_is_refused_with_a_message(monkeypatch):
    from sim.tinylm import memory

    monkeypatch.setattr(memory, "MEMORY_CAP_BYTES", 20 * 10**6)  # the model loads, the run does not fit
    at = _open(AppTest.from_file(PAGE, default_timeout=30), 5)
    assert not at.exception
    assert at.button(key="tl_start").disabled
    assert at.error and any("over the cap of 20 MB" in t.value for t in at.text)  # the message as plain text


def test_the_recorded_runs_stay_under_the_trainer_and_the_settings_reach_the_config():
    at = _open(AppTest.from_file(PAGE, default_timeout=30), 5)
    tables = [b for blocks in documents(at) for b in walk(blocks) if b["kind"] == "table"]
    assert len(tables) == 3 and "pass@64" in tables[0]["columns"]
    at.radio(key="tl_loss").set_value("dapo").run()
    at.radio(key="tl_clip").set_value(0.28).run()
    at.button(key="tl_start").click().run()
    job = at.session_state["tinylm_job"]
    assert (job.cfg.grpo.loss_type, job.cfg.grpo.clip_eps, job.cfg.grpo.blind_spot_prompts) == ("dapo", 0.28, True)
    at.button(key="tl_stop").click().run()


def test_url_sets_up_the_run_and_bad_values_are_corrected_with_a_warning():
    at = AppTest.from_file(PAGE, default_timeout=30)
    at.query_params.update({"tinylm_on": "true", "tl_iters": "7", "tl_lr": "3e-4", "tl_G": "99", "tl_eval": "16"})
    at.run()
    assert not at.exception
    assert at.toggle(key="tinylm_on").value is True
    assert at.slider(key="tl_iters").value == 7 and at.radio(key="tl_lr").value == 3e-4  # written 0.0003 too
    assert at.radio(key="tl_eval").value == 16
    assert at.slider(key="tl_G").value == 32  # clamped to the top of 2..32, and said so
    assert any("tl_G=`99`" in w.value for w in at.warning)  # the raw value as a code span: plain text


def test_gspo_importance_level_is_offered_and_accepted():
    # GSPO's importance level is offered, and trains.
    at = AppTest.from_file(PAGE, default_timeout=30)
    at.query_params.update({"tinylm_on": "true", "tl_is_level": "sequence", "tl_clip": "0.0003"})
    at.run()
    assert not at.exception and at.radio(key="tl_is_level").value == "sequence"
    assert not at.error and not at.button(key="tl_start").disabled
    assert len([b for blocks in documents(at) for b in walk(blocks) if b["kind"] == "table"]) == 3  # records stay


def test_the_recorded_trl_run_overlays_reward_and_pass_at_1():
    # The page can overlay the recorded TRL run (assets/data/tinylm_trl_run.json) on the live charts.
    from sim.tinylm.trl_record import load_trl_run
    from sim.views.tinylm import metric_chart

    rec = load_trl_run()
    assert rec is not None and len(rec["reward"]) == len(rec["iterations"])
    snap = {"history": [{"iteration": 1, "reward": 0.5}, {"iteration": 2, "reward": 0.6}], "pass_at_1": [(0, 0.51)],
            "iterations": 40}  # a live run of 40 iterations, two done
    reward = metric_chart(snap, ("reward", "pass_at_1"), rec)
    names = [t.name for t in reward.traces]
    assert reward.x_range == (0, max(rec["iterations"]) + 0.5)  # the axis spans the longer, recorded run
    assert names == ["reward", "held-out pass@1", "reward, TRL (recorded)", "held-out pass@1, TRL (recorded)"]
    assert list(reward.traces[2].y) == rec["reward"] and reward.traces[3].y[-1] == rec["pass_at_1"][-1][1]
    assert [t.name for t in metric_chart(snap, ("reward", "pass_at_1")).traces] == names[:2]  # off: the live run only
    at = AppTest.from_file(PAGE, default_timeout=30)
    at.query_params.update({"tinylm_on": "true"})
    at.run()
    assert not at.exception and at.toggle(key="tl_trl_overlay").value is False
