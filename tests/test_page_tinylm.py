"""pages/tinylm.py under AppTest: off by default; a tiny training finishes and shows its results."""

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
    at.select_slider(key="tl_eval").set_value(4).run()
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
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    titles = [s["layout"]["title"]["text"] for s in specs]
    assert "pass@k on 300 held-out problems" in titles and "reward" in titles
    assert any("Never solved by SFT" in m.label for m in at.metric)
