"""The TinyLM page's background job: it trains, pauses, stops, and frees its slot when abandoned."""

import time

import pytest

from sim.tinylm import job as job_module
from sim.tinylm.grpo_train import GRPOConfig

TINY = GRPOConfig(iterations=400, prompts_per_iter=2, group_size=2, eval_every=1000)


def wait_for(pred, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def one_slot(monkeypatch):
    """One training at a time, so the tests can see the queue."""
    import threading

    monkeypatch.setattr(job_module, "_slots", threading.BoundedSemaphore(1))


def test_pause_holds_the_iteration_and_stop_ends_the_job(one_slot):
    job = job_module.TrainingJob(TINY, eval_samples=2).start()
    assert wait_for(lambda: job.snapshot()["iteration"] >= 2)
    job.pause()
    time.sleep(0.3)
    held = job.snapshot()["iteration"]
    time.sleep(0.5)
    snap = job.snapshot()
    assert snap["paused"] and snap["iteration"] == held  # no progress while paused
    job.resume()
    assert wait_for(lambda: job.snapshot()["iteration"] > held)
    job.stop()
    assert wait_for(lambda: not job.running)
    assert job.snapshot()["state"] == "stopped"


def test_an_abandoned_paused_job_frees_its_slot_for_the_next_in_line(one_slot):
    first = job_module.TrainingJob(TINY, eval_samples=2, heartbeat_s=1.0).start()
    assert wait_for(lambda: first.snapshot()["iteration"] >= 1)
    first.pause()
    second = job_module.TrainingJob(TINY, eval_samples=2).start()
    assert wait_for(lambda: second.snapshot()["queue_position"] == 1)  # waits behind the first
    # nobody polls `first` any more (its tab closed): the heartbeat ends it even though it is paused
    assert wait_for(lambda: not first.running, timeout=30)
    assert wait_for(lambda: second.snapshot()["state"] == "grpo", timeout=30)
    second.stop()
    assert wait_for(lambda: not second.running)
