"""TinyLM trained in headless Chromium from file:// (assets/js/tinylm_run.js on the minimal page
`python -m sim.tinylm.browser --page` writes): in two Workers and in one it is node's run, bit for bit (the batch's
shards are fixed); Pause holds it between iterations, Resume goes on, Stop ends it; a bad setting is refused in
the declarations' words before anything starts; nothing outside the page's folder is requested.

Run: OMP_NUM_THREADS=1 python -m pytest tests/test_tinylm_browser.py -m e2e
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from sim.tinylm.browser import write_page
from tests.fixtures.serve import browser_marks, launch_chromium
from tests.test_tinylm_js import probe

pytestmark = browser_marks()
playwright_sync = pytest.importorskip("playwright.sync_api", reason="playwright (python) is not installed")
SETTINGS = {"iterations": 6, "eval_every": 3, "eval_samples": 2, "seed": 2, "loss_type": "dapo", "mu": 2}


@pytest.fixture(scope="module")
def page_file(tmp_path_factory) -> Path:
    return write_page(tmp_path_factory.mktemp("tinylm_page"))


@pytest.fixture(scope="module")
def browser():
    with playwright_sync.sync_playwright() as pw:
        b = launch_chromium(pw)
        yield b
        b.close()


@pytest.fixture
def page(browser, page_file):
    context = browser.new_context()
    p = context.new_page()
    p.errors, p.requests = [], []
    p.on("pageerror", lambda e: p.errors.append(str(e)))
    p.on("request", lambda r: p.requests.append(r.url))
    p.goto(page_file.as_uri())
    yield p
    context.close()


def wait_for(page, expr: str, timeout_s: float = 120.0):
    t0 = time.time()
    while time.time() - t0 < timeout_s:
        value = page.evaluate(expr)
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {expr}")


def test_two_workers_and_one_train_nodes_run_bit_for_bit(page, page_file):
    node = probe({"op": "eval", "settings": SETTINGS})
    for workers in (2, 1):
        assert page.evaluate("([s, w]) => window.tinylmStart(s, {workers: w})", [SETTINGS, workers])
        wait_for(page, "window.tinylmBench.done")
        snap = page.evaluate("window.tinylmRun.snapshot()")
        assert snap["state"] == "done" and snap["error"] is None, snap["error"]
        assert (snap["where"], snap["workers"], snap["simd"]) == ("worker", workers, True)
        assert snap["pass_at_1"] == node["pass_at_1"]
        for k in ("pass_at_k_before", "pass_at_k_after", "never_solved_before", "never_solved_after", "crossover_k"):
            assert snap["result"][k] == node["result"][k], k
        assert len(snap["history"]) == 6 and snap["eval"] == {"done": 600, "total": 600}
    assert "done: iteration 6 / 6" in page.inner_text("#status")
    assert "never solved before" in page.inner_text("#result")
    assert not page.errors
    folder = page_file.parent.as_uri()
    assert all(u.startswith((folder, "blob:")) for u in page.requests), page.requests


def test_pause_holds_the_run_resume_goes_on_stop_ends_it(page):
    assert page.evaluate("window.tinylmStart({iterations: 300, seed: 1}, {workers: 2})")
    wait_for(page, "window.tinylmRun.snapshot().iteration >= 2")
    assert page.evaluate("window.tinylmRun.pause()")
    time.sleep(0.5)  # the iteration under way finishes
    held = page.evaluate("window.tinylmRun.snapshot()")
    time.sleep(1.0)
    again = page.evaluate("window.tinylmRun.snapshot()")
    assert held["paused"] and again["iteration"] == held["iteration"] < 300
    page.evaluate("window.tinylmRun.resume()")
    wait_for(page, f"window.tinylmRun.snapshot().iteration >= {held['iteration'] + 3}")
    page.evaluate("window.tinylmRun.stop()")
    stopped = page.evaluate("window.tinylmRun.snapshot()")
    time.sleep(0.5)
    after = page.evaluate("window.tinylmRun.snapshot()")
    assert stopped["state"] == after["state"] == "stopped" and after["iteration"] == stopped["iteration"] < 300
    assert after["result"] is None and after["error"] is None and not page.errors


def test_a_bad_setting_is_refused_in_the_declarations_words_before_anything_starts(page):
    assert page.evaluate("window.tinylmStart({group_size: 1})") is False
    assert page.inner_text("#status") == "These settings cannot run: group_size must be an integer in [2, 1024], got 1"
    assert page.evaluate("window.tinylmRun") is None
