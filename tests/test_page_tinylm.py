"""pages/tinylm.py under AppTest: off by default; a tiny training finishes and shows its results; URL settings."""

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
    assert (job.cfg.iterations, job.cfg.prompts_per_iter, job.cfg.group_size, job.eval_samples) == (4, 4, 4, 4)
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    titles = [s["layout"]["title"]["text"] for s in specs]
    assert "pass@k on 300 held-out problems" in titles and "reward" in titles and "kl" in titles
    assert any("Never solved by SFT" in m.label for m in at.metric)


def test_url_sets_up_the_run_and_bad_values_are_corrected_with_a_warning():
    at = AppTest.from_file(PAGE, default_timeout=30)
    at.query_params.update({"tinylm_on": "true", "tl_iters": "7", "tl_lr": "3e-4", "tl_G": "99", "tl_eval": "16"})
    at.run()
    assert not at.exception
    assert at.toggle(key="tinylm_on").value is True
    assert at.slider(key="tl_iters").value == 7 and at.radio(key="tl_lr").value == "3e-4"
    assert at.radio(key="tl_eval").value == "16"
    assert at.slider(key="tl_G").value == 32  # clamped to the top of 2..32, and said so
    assert any("tl_G=`99`" in w.value for w in at.warning)  # the raw value as a code span: plain text
