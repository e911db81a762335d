"""pages/tinylm.py under AppTest: off by default; a tiny training finishes and shows its results; sessions with the
same settings share a run; an oversized run is refused; URL settings."""

from __future__ import annotations

import json
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[1] / "pages" / "tinylm.py")


def test_page_off_by_default_runs():
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    assert not at.exception
    assert at.toggle(key="tinylm_on").value is False
    assert not at.get("plotly_chart")


def test_tiny_training_finishes_and_shows_results():
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    at.toggle(key="tinylm_on").set_value(True).run()
    at.slider(key="tl_iters").set_value(4).run()
    at.slider(key="tl_P").set_value(4).run()
    at.slider(key="tl_G").set_value(4).run()
    at.radio(key="tl_eval").set_value("4").run()
    assert not at.exception
    at.button(key="tl_start").click().run()
    job = at.session_state["tinylm_job"]
    deadline = time.time() + 60
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
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    titles = [s["layout"]["title"]["text"] for s in specs]
    assert "pass@k on 300 held-out problems" in titles and "reward" in titles and "kl" in titles
    assert any("Never solved by SFT" in m.label for m in at.metric)
    passk = specs[titles.index("pass@k on 300 held-out problems")]
    assert passk["layout"]["xaxis"]["type"] == "log" and passk["layout"]["xaxis"]["tickvals"] == [1, 2, 4]
    markers = [t for t in passk["data"] if t.get("mode") == "markers+text"]
    assert [m["x"] for m in markers] == [[4], [4]]  # SFT and GRPO marked at the largest k


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


def test_the_multi_seed_figures_are_on_the_page():
    at = _open(AppTest.from_file(PAGE, default_timeout=30), 5)
    assert any("The default run over" in e.label and "seeds" in e.label for e in at.expander)
    assert at.table and "never solved SFT → GRPO" in at.table[0].value.columns


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
