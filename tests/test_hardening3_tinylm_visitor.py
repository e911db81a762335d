"""Issue 28, TinyLM per visitor: one open tab can no longer start run after run. A visitor (a session, its viewer
id) has at most one run queued or training: joining other settings leaves the run it watched (cancelled when
nobody else watches it), and its new run waits in line until that one has stopped. The rule is the registry's
(sim/tinylm/job.py), so a page, a script or a hostile websocket client meets the same one."""

from __future__ import annotations

import dataclasses

import pytest

from sim.tinylm import job as job_module
from sim.tinylm.grpo_train import GRPOConfig
from sim.tinylm.job import TinyLMRuns
from sim.tinylm.story import StoryConfig

MAX = StoryConfig(grpo=GRPOConfig(iterations=600, prompts_per_iter=64, group_size=32, mu=4), eval_samples=64)


def seed(n: int) -> StoryConfig:
    return dataclasses.replace(MAX, grpo=dataclasses.replace(MAX.grpo, seed=n))


@pytest.fixture
def no_training(monkeypatch):
    """Runs that 'train' until the test ends them (no process): start() only sets the state."""
    monkeypatch.setattr(job_module.TrainingJob, "start", lambda job: job._set(state="grpo") or job)

    def end(reg: TinyLMRuns, job) -> None:  # the worker is gone (cancelled or finished): what _run's finally does
        job._set(state="stopped")
        reg.ended(job)

    return end


def live(reg: TinyLMRuns) -> list:
    return [j for j in (*reg._line, *reg._training) if j.running]


def test_pressing_start_again_and_again_leaves_one_run(no_training):
    reg = TinyLMRuns(max_concurrent=4)
    jobs = [reg.join(seed(n), "tab") for n in range(10)]  # ten Starts from one tab, other seeds each time
    assert len({id(j) for j in jobs}) == 10
    assert jobs[0].state == "grpo" and all(not j.watched() for j in jobs[:-1])  # every earlier run is left
    assert jobs[1].state == "stopped"  # a queued one left is dropped at once
    # the first run is still stopping (its worker ends within seconds): the tab's newest run waits for it
    assert jobs[-1].state == "queued" and reg.runs_of("tab") == [jobs[-1], jobs[0]]
    assert [j for j in live(reg) if j.state == "grpo"] == [jobs[0]]
    no_training(reg, jobs[0])
    assert jobs[-1].state == "grpo" and reg.runs_of("tab") == [jobs[-1]]  # then, and only then, it trains


def test_other_visitors_are_not_held_by_one_tabs_stopping_run(no_training):
    reg = TinyLMRuns(max_concurrent=4)
    first = reg.join(seed(0), "tab")
    reg.join(seed(1), "tab")  # leaves `first`, which is stopping
    other = reg.join(seed(2), "classmate")
    assert other.state == "grpo" and first.state == "grpo"  # the classmate's run starts at once


def test_a_shared_run_left_by_its_starter_goes_on_and_holds_nobody(no_training):
    reg = TinyLMRuns(max_concurrent=4)
    shared = reg.join(seed(0), "tab")
    assert reg.join(seed(0), "classmate") is shared
    mine = reg.join(seed(1), "tab")
    assert shared.watched() and shared.running  # the classmate still watches it
    assert mine.state == "grpo"  # nothing of the tab's is stopping: its new run trains at once
    assert set(reg.runs_of("tab")) == {shared, mine}


def test_joining_the_same_settings_again_keeps_the_run(no_training):
    reg = TinyLMRuns(max_concurrent=4)
    a = reg.join(seed(0), "tab")
    assert reg.join(seed(0), "tab") is a and a.watched() and len(live(reg)) == 1


def test_the_registry_forgets_visitors_whose_runs_ended(no_training):
    reg = TinyLMRuns(max_concurrent=4)
    for n in range(50):
        j = reg.join(seed(n), f"visitor{n}")
        j.leave(f"visitor{n}")
        no_training(reg, j)
    reg.join(seed(99), "last")
    assert set(reg._watching) == {"last"}  # no session kept once its run has ended
