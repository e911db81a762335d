"""The TinyLM page's runs: shared per setting, replayed when finished, paused only by a sole viewer, stopped
when nobody watches, bounded in number and size. A visitor (a session, its viewer id) has at most one run queued
or training: joining other settings leaves the run it watched (cancelled when nobody else watches it), and its new
run waits in line until that one has stopped. The rules are the registry's (sim/tinylm/job.py), so a page, a script
or a hostile websocket client meets the same ones."""

from __future__ import annotations

import dataclasses
import threading
import time

import pytest

from sim.tinylm import job as job_module
from sim.tinylm.grpo_train import GRPOConfig
from sim.tinylm.job import TinyLMRuns
from sim.tinylm.story import StoryConfig

LONG = StoryConfig(grpo=GRPOConfig(iterations=20_000, prompts_per_iter=2, group_size=2, eval_every=1000),
                   eval_samples=2)  # long enough that only Stop ends it, even on a quiet machine
SHORT = StoryConfig(grpo=GRPOConfig(iterations=3, prompts_per_iter=2, group_size=2), eval_samples=2)


def wait_for(pred, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.05)
    return False


def other_seed(cfg: StoryConfig, seed: int) -> StoryConfig:
    return dataclasses.replace(cfg, grpo=dataclasses.replace(cfg.grpo, seed=seed))


@pytest.mark.integration
def test_same_settings_share_one_run_and_other_settings_get_their_own():
    reg = TinyLMRuns()
    a = reg.join(LONG, "alice")
    assert reg.join(LONG, "bob") is a and a.snapshot("alice")["viewers"] == 2
    c = reg.join(other_seed(LONG, 1), "carol")  # the seed is part of the setting
    assert c is not a
    assert wait_for(lambda: a.snapshot("bob")["iteration"] >= 2)
    a.leave("alice")
    assert a.running  # bob still watches
    a.leave("bob")
    c.leave("carol")
    assert wait_for(lambda: not a.running and not c.running)
    assert a.state == "stopped"
    assert reg.join(LONG, "dave") is not a  # a stopped run is forgotten: Start runs it again
    reg.find(LONG).leave("dave")


@pytest.mark.integration
def test_a_finished_run_replays_at_once_with_its_whole_history():
    reg = TinyLMRuns()
    first = reg.join(SHORT, "alice")
    assert wait_for(lambda: first.state == "done")
    again = reg.join(SHORT, "bob")
    snap = again.snapshot("bob")
    assert again is first  # the finished run itself: nothing is trained again
    assert snap["state"] == "done" and len(snap["history"]) == 3 and snap["result"]["iterations"] == 3
    assert [i for i, _ in snap["pass_at_1"]] == [0, 3]
    assert 1000 < first.nbytes < 100_000  # its size for the registry's bound: history + result as JSON


def test_finished_runs_are_bounded_by_count_and_size(monkeypatch):
    def finish_at_once(job):  # no training: a run that is already done, of a known size
        job._set(state="done")
        job.nbytes = 1000
        return job

    monkeypatch.setattr(job_module.TrainingJob, "start", finish_at_once)
    reg = TinyLMRuns(max_finished=2)
    jobs = [reg.join(other_seed(SHORT, seed), "alice") for seed in range(3)]  # eviction happens on join
    assert reg.find(other_seed(SHORT, 0)) is None  # the least recently joined went first
    assert reg.find(other_seed(SHORT, 1)) is jobs[1] and reg.find(other_seed(SHORT, 2)) is jobs[2]
    reg.join(other_seed(SHORT, 1), "bob")  # joining again makes it the most recent
    reg.join(other_seed(SHORT, 3), "bob")
    assert reg.find(other_seed(SHORT, 2)) is None and reg.find(other_seed(SHORT, 1)) is jobs[1]
    small = TinyLMRuns(finished_bytes=2500)
    for seed in range(4):
        small.join(other_seed(SHORT, seed), "alice")
    assert len(small) == 2  # 2 x 1000 bytes fit under 2500, a third does not


@pytest.mark.integration
def test_pause_is_for_a_sole_viewer_and_a_second_viewer_resumes_the_run():
    reg = TinyLMRuns()
    job = reg.join(other_seed(LONG, 5), "alice")
    assert wait_for(lambda: job.snapshot("alice")["iteration"] >= 2)
    assert job.pause("alice")
    time.sleep(0.3)
    held = job.snapshot("alice")["iteration"]
    time.sleep(0.4)
    assert job.snapshot("alice")["paused"] and job.snapshot("alice")["iteration"] == held  # no progress
    assert reg.join(other_seed(LONG, 5), "bob") is job
    assert not job.snapshot("bob")["paused"]  # a shared run never waits on one student
    assert not job.pause("bob") and not job.can_pause("alice")
    assert wait_for(lambda: job.snapshot("alice")["iteration"] > held)
    job.leave("alice")
    job.leave("bob")
    assert wait_for(lambda: not job.running) and job.state == "stopped"


@pytest.mark.integration
def test_a_run_nobody_polls_stops_and_frees_its_slot_for_the_next_in_line():
    reg = TinyLMRuns(heartbeat_s=1.0, max_concurrent=1)  # one slot: the line is visible
    first = reg.join(other_seed(LONG, 7), "alice")
    assert wait_for(lambda: first.snapshot("alice")["iteration"] >= 1)
    second = reg.join(other_seed(LONG, 8), "bob")
    assert wait_for(lambda: second.snapshot("bob")["queue_position"] == 1)  # waits behind the first
    # alice's tab closed (no more polls): the heartbeat ends her run
    assert wait_for(lambda: (second.snapshot("bob"), not first.running)[1], timeout=30)
    assert wait_for(lambda: second.snapshot("bob")["state"] == "grpo", timeout=30)
    second.leave("bob")
    assert wait_for(lambda: not second.running)


@pytest.mark.integration
def test_a_paused_run_gives_its_trainer_to_the_next_in_line():
    """Issue 43 row 2: two visitors pause runs of other settings on a 2-slot server; a third visitor's run trains
    at once (it waited "next in line" for as long as the paused tabs stayed open). Resume then waits for a slot,
    still paused, and goes on when one frees."""
    reg = TinyLMRuns(max_concurrent=2)
    a, b = reg.join(other_seed(LONG, 50), "alice"), reg.join(other_seed(LONG, 51), "bob")
    assert wait_for(lambda: min(j.snapshot(v)["iteration"] for j, v in ((a, "alice"), (b, "bob"))) >= 1)
    assert a.pause("alice") and b.pause("bob")
    c = reg.join(other_seed(LONG, 52), "carol")
    assert wait_for(lambda: c.snapshot("carol")["iteration"] >= 1, timeout=30)  # trains while both are paused
    assert c.snapshot("carol")["queue_position"] == 0
    held = a.snapshot("alice")["iteration"]
    time.sleep(0.5)
    assert a.snapshot("alice")["iteration"] == held and a.running  # paused: its process waits, its model kept
    a.resume("alice")  # one slot is free (carol's is the other)
    assert wait_for(lambda: a.snapshot("alice")["iteration"] > held, timeout=30)
    b.resume("bob")  # none is free: bob waits in line, still paused
    snap = b.snapshot("bob")
    assert snap["resuming"] and snap["paused"] and snap["queue_position"] == 1 and snap["pause_left_s"] is None
    c.leave("carol")
    assert wait_for(lambda: not b.snapshot("bob")["paused"], timeout=30)  # carol's slot went to bob
    held = b.snapshot("bob")["iteration"]
    assert wait_for(lambda: b.snapshot("bob")["iteration"] > held, timeout=30)
    a.leave("alice")
    b.leave("bob")
    assert wait_for(lambda: not a.running and not b.running and not c.running)


@pytest.mark.integration
def test_a_run_paused_past_the_limit_is_stopped():
    reg = TinyLMRuns(pause_limit_s=1.0)
    job = reg.join(other_seed(LONG, 55), "alice")
    assert wait_for(lambda: job.snapshot("alice")["iteration"] >= 1)
    assert job.pause("alice")
    assert wait_for(lambda: (job.snapshot("alice"), not job.running)[1], timeout=30)  # alice still watching
    snap = job.snapshot("alice")
    assert snap["state"] == "stopped" and snap["stopped_because"] == "pause limit"


@pytest.mark.integration
def test_sixty_sessions_joining_at_once_share_one_run():
    reg = TinyLMRuns()
    got, barrier = [], threading.Barrier(60)

    def student(i):
        barrier.wait()
        got.append(reg.join(other_seed(LONG, 11), f"s{i}"))

    threads = [threading.Thread(target=student, args=(i,)) for i in range(60)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 60 and len({id(j) for j in got}) == 1 and len(reg) == 1
    job = got[0]
    assert job.snapshot("s0")["viewers"] == 60
    for i in range(60):
        job.leave(f"s{i}")
    assert wait_for(lambda: not job.running)


# ---- the line -------------------------------------------------------------


@pytest.mark.integration
def test_the_line_is_first_come_first_served():
    """Row 11: four settings started on one slot, then the running one stopped: place 1 gets the slot."""
    runs = TinyLMRuns(max_concurrent=1)
    a = runs.join(other_seed(LONG, 20), "alice")
    b, c, d = (runs.join(other_seed(LONG, 21 + i), name) for i, name in enumerate(("bob", "carol", "dave")))
    assert [j.snapshot()["queue_position"] for j in (a, b, c, d)] == [0, 1, 2, 3]
    assert a.state != "queued" and {b.state, c.state, d.state} == {"queued"}
    a.leave("alice")
    assert wait_for(lambda: b.state not in ("queued",), timeout=30)
    assert b.snapshot("bob")["queue_position"] == 0 and c.state == d.state == "queued"
    assert [c.snapshot("carol")["queue_position"], d.snapshot("dave")["queue_position"]] == [1, 2]
    for job, name in ((d, "dave"), (c, "carol"), (b, "bob")):
        job.leave(name)
    assert c.state == d.state == "stopped"  # a waiting run nobody watches leaves the line at once
    assert wait_for(lambda: not b.running) and b._worker.starts == 1 and c._worker.starts == d._worker.starts == 0


@pytest.mark.integration
def test_a_queued_run_nobody_watches_is_not_started():
    """Row 13: every tab of a waiting run closed (no Stop, only no more polls): when the slot frees, the run
    behind it starts instead, and the abandoned one never starts a worker."""
    runs = TinyLMRuns(max_concurrent=1, heartbeat_s=1.0)
    a = runs.join(other_seed(LONG, 30), "alice")
    gone = runs.join(other_seed(LONG, 31), "bob")  # bob's tab closes: he never polls again
    c = runs.join(other_seed(LONG, 32), "carol")
    deadline = time.monotonic() + 1.5
    while time.monotonic() < deadline:  # alice and carol keep watching past bob's heartbeat
        a.snapshot("alice"), c.snapshot("carol")
        time.sleep(0.1)
    a.leave("alice")
    assert wait_for(lambda: (c.snapshot("carol"), c.state not in ("queued",))[1], timeout=30)
    assert gone.state == "stopped" and gone._worker.starts == 0
    c.leave("carol")
    assert wait_for(lambda: not c.running and not a.running)


@pytest.mark.integration
def test_snapshots_say_the_place_in_line_and_who_watches():
    """What the page's line is written from (assets/js/tinylm_views.js status_text, tested under node): no place
    0 in line on an idle server's first Start, places 1 and 2 behind it; the viewers left after a Stop."""
    runs = TinyLMRuns(max_concurrent=1)
    first = runs.join(other_seed(LONG, 40), "alice")
    snap = first.snapshot("alice")
    assert snap["state"] == "starting" and snap["queue_position"] == 0
    second = runs.join(other_seed(LONG, 41), "bob")
    third = runs.join(other_seed(LONG, 42), "carol")
    assert [j.snapshot(v)["queue_position"] for j, v in ((second, "bob"), (third, "carol"))] == [1, 2]
    assert runs.join(other_seed(LONG, 40), "dave") is first and runs.watched_by("dave") is first
    assert runs.waiting() == 2
    first.leave("alice")
    assert first.snapshot()["viewers"] == 1
    first.leave("dave")
    assert first.snapshot()["viewers"] == 0
    for job, name in ((third, "carol"), (second, "bob")):
        job.leave(name)
    assert wait_for(lambda: not first.running and not second.running)
    assert all(j.snapshot()["queue_position"] == 0 for j in (first, second, third))


# ---- one run per visitor -------------------------------------------------------------------------------------

MAX = StoryConfig(grpo=GRPOConfig(iterations=600, prompts_per_iter=64, group_size=32, mu=4), eval_samples=64)


def at_seed(n: int) -> StoryConfig:
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
    jobs = [reg.join(at_seed(n), "tab") for n in range(10)]  # ten Starts from one tab, other seeds each time
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
    first = reg.join(at_seed(0), "tab")
    reg.join(at_seed(1), "tab")  # leaves `first`, which is stopping
    other = reg.join(at_seed(2), "classmate")
    assert other.state == "grpo" and first.state == "grpo"  # the classmate's run starts at once


def test_a_shared_run_left_by_its_starter_goes_on_and_holds_nobody(no_training):
    reg = TinyLMRuns(max_concurrent=4)
    shared = reg.join(at_seed(0), "tab")
    assert reg.join(at_seed(0), "classmate") is shared
    mine = reg.join(at_seed(1), "tab")
    assert shared.watched() and shared.running  # the classmate still watches it
    assert mine.state == "grpo"  # nothing of the tab's is stopping: its new run trains at once
    assert set(reg.runs_of("tab")) == {shared, mine}


def test_joining_the_same_settings_again_keeps_the_run(no_training):
    reg = TinyLMRuns(max_concurrent=4)
    a = reg.join(at_seed(0), "tab")
    assert reg.join(at_seed(0), "tab") is a and a.watched() and len(live(reg)) == 1


def test_the_registry_forgets_visitors_whose_runs_ended(no_training):
    reg = TinyLMRuns(max_concurrent=4)
    for n in range(50):
        j = reg.join(at_seed(n), f"visitor{n}")
        j.leave(f"visitor{n}")
        no_training(reg, j)
    reg.join(at_seed(99), "last")
    assert set(reg._watching) == {"last"}  # no session kept once its run has ended



# ---- Pause: the slot given up, a time limit, a bound on paused runs (no process: the registry's rules) ----------

def test_pause_gives_the_slot_to_the_next_run_and_resume_waits_for_one(no_training):
    reg = TinyLMRuns(max_concurrent=1)
    a = reg.join(at_seed(0), "alice")
    b = reg.join(at_seed(1), "bob")
    assert a.state == "grpo" and b.state == "queued" and b.snapshot("bob")["queue_position"] == 1
    assert a.pause("alice")
    assert b.state == "grpo" and reg._training == {b}  # bob trains at once
    snap = a.snapshot("alice")
    assert snap["paused"] and not snap["resuming"] and 0 < snap["pause_left_s"] <= reg.pause_limit_s
    a.resume("alice")
    snap = a.snapshot("alice")
    assert snap["paused"] and snap["resuming"] and snap["queue_position"] == 1  # in line, still paused
    assert not a.pause("bob") and a.pause("alice")  # Pause again leaves the line
    assert a.snapshot("alice")["queue_position"] == 0 and not a.snapshot("alice")["resuming"]
    a.resume("alice")
    b.leave("bob")
    no_training(reg, b)
    assert not a.paused and reg._training == {a} and a.snapshot("alice")["queue_position"] == 0


def test_pause_is_only_for_the_grpo_stage(no_training):
    """SFT and the evaluation do not stop between iterations: paused there, a run would train on in a slot it gave
    away."""
    reg = TinyLMRuns(max_concurrent=1)
    a = reg.join(at_seed(0), "alice")
    for state, ok in (("sft", False), ("eval", False), ("starting", False), ("grpo", True)):
        a._set(state=state)
        assert a.can_pause("alice") == ok, state


def test_a_pause_past_its_limit_stops_the_run(no_training):
    reg = TinyLMRuns(pause_limit_s=0.2)
    a = reg.join(at_seed(0), "alice")
    assert a.pause("alice") and not a._abandoned()
    time.sleep(0.3)
    assert a._abandoned()  # what the worker's call checks every 0.1 s: the run is cancelled
    assert a.snapshot("alice")["stopped_because"] == "pause limit"
    b = reg.join(at_seed(1), "bob")
    assert b.pause("bob")
    b.resume("bob")  # resumed (a free slot): the limit no longer counts
    time.sleep(0.3)
    assert not b._abandoned() and b.snapshot("bob")["stopped_because"] is None


def test_past_max_paused_the_run_paused_longest_is_stopped(no_training):
    reg = TinyLMRuns(max_concurrent=4, max_paused=2)
    jobs = [reg.join(at_seed(n), f"v{n}") for n in range(3)]
    for n, job in enumerate(jobs):
        assert job.pause(f"v{n}")
        time.sleep(0.01)
    assert [j._stop.is_set() for j in jobs] == [True, False, False]
    assert jobs[0].snapshot("v0")["stopped_because"] == "paused runs"

