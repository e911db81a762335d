"""The server's computations (ui/work.py): worker processes give the same results as the server's own thread,
the lecturer's job runs first, a job nobody waits for any more is dropped, a failing job says why, the cache
is bounded by bytes, and the gate lets the lecturer past a full house."""

import math
import threading
import time

import numpy as np
import pytest

from sim import jobs
from sim.sharpen import SharpenConfig
from sim.toy import ToyConfig
from ui.work import LECTURER, STUDENT, Gate, JobError, Work

SMALL = ToyConfig(iterations=6, n_seeds=3, group_size=4)


@pytest.fixture(scope="module")
def work():
    w = Work(1, timeout=1.5)  # one worker: the order of the queue is the order of the results
    w.start()
    yield w
    w.close()


def wait(work, fn, args, priority=STUDENT):
    """What ui.work.compute does for a page, without Streamlit: submit, wait, withdraw."""
    token = object()
    job = work.submit(fn, args, token, priority)
    job.done.wait(30)
    work.withdraw(job, token)
    assert job.done.is_set()
    if job.error is not None:
        raise JobError(job.error)
    return job.value


@pytest.mark.integration
def test_a_worker_computes_what_the_server_would(work):
    """Every job the pages use, through the worker (pickled there and back, rebuilt) and in this thread."""
    here = Work(0)
    for fn, args in [(jobs.toy_run, (SMALL,)), (jobs.toy_expected, (jobs.expected_key(SMALL),)),
                     (jobs.toy_expected, (jobs.expected_key(SMALL), ((1.0,) * 5, (-1.0,) * 5))),
                     (jobs.sharpen_run, (SharpenConfig(iterations=5),)), (jobs.before_after, (5,))]:
        remote, local = wait(work, fn, args), here.run_here(fn, args)
        assert type(remote) is type(local)
        if isinstance(local, tuple):
            assert all(np.array_equal(a, b) for a, b in zip(remote, local, strict=True))
            continue
        assert remote.config == local.config == args[0]
        for name in jobs._fields(local):  # every array and metric, bit for bit
            a, b = getattr(remote, name), getattr(local, name)
            pairs = [(a[k], b[k]) for k in b] if isinstance(b, dict) else [(a, b)]
            assert all(np.array_equal(x, y) for x, y in pairs), (fn.__name__, name)
    assert work.cached(jobs.toy_run, (SMALL,))[0]  # and cached for the next session
    run = wait(work, jobs.std_runs, (ToyConfig(iterations=5, n_seeds=2),))
    assert set(run) == {"with std", "without std, same lr", "without std, same first step"}


def test_the_expected_run_is_shared_by_every_seed():
    assert jobs.expected_key(SMALL) == jobs.expected_key(ToyConfig(iterations=6, n_seeds=3, group_size=4, seed=77))
    here = Work(0)
    a = here.run_here(jobs.toy_expected, (jobs.expected_key(SMALL),))
    b = jobs.rebuild(jobs.toy_expected, (SMALL,), jobs.toy_expected(SMALL))  # the seed drew nothing
    assert np.array_equal(a.p, b.p)


@pytest.mark.integration
def test_the_lecturer_goes_first_and_an_abandoned_job_is_dropped(work):
    busy = threading.Thread(target=wait, args=(work, time.sleep, (0.6,)))
    busy.start()
    time.sleep(0.2)  # the worker is busy: the next jobs queue
    student, gone = object(), object()
    late = work.submit(math.factorial, (20,), student, STUDENT)
    abandoned = work.submit(math.factorial, (21,), gone, STUDENT)
    lecturer = work.submit(math.factorial, (22,), object(), LECTURER)
    assert work.ahead(late) == 2 and work.ahead(lecturer) == 1  # the running job, and the lecturer
    dropped = work.dropped
    work.withdraw(abandoned, gone)  # that student moved the slider again
    assert work.dropped == dropped + 1
    order = []
    watchers = [threading.Thread(target=lambda j=j, n=n: j.done.wait(10) and order.append(n))
                for j, n in ((late, "student"), (lecturer, "lecturer"))]
    for t in [*watchers, busy]:
        t.start() if t is not busy else None
    for t in [*watchers, busy]:
        t.join(10)
    assert order == ["lecturer", "student"]  # the student asked first; the lecturer's ran first
    assert late.value == math.factorial(20)
    assert not abandoned.done.is_set() and not work.cached(math.factorial, (21,))[0]  # never computed


@pytest.mark.integration
def test_two_sessions_share_one_computation(work):
    a, b = object(), object()
    first = work.submit(math.factorial, (30,), a)
    assert work.submit(math.factorial, (30,), b) is first
    assert first.done.wait(10)


@pytest.mark.integration
def test_a_refused_setting_and_a_hung_job_say_why(work):
    with pytest.raises(JobError, match="^math domain error$"):  # the engine's ValueError, word for word
        wait(work, math.sqrt, (-1.0,))
    with pytest.raises(JobError, match="did not finish within 1.5 s"):
        wait(work, time.sleep, (30,))  # killed with its worker ...
    assert wait(work, math.factorial, (5,)) == 120  # ... which is replaced


def test_the_cache_keeps_the_newest_results_within_its_bytes():
    w = Work(0, cache_mb=1)
    for i in range(5):
        w.put(np.zeros, (i,), np.zeros(40_000))  # 320 kB each
    assert [w.cached(np.zeros, (i,))[0] for i in range(5)] == [False, False, True, True, True]
    w.clear()
    assert not w.cached(np.zeros, (4,))[0]


def test_the_gate_queues_students_and_lets_the_lecturer_past():
    gate, order = Gate(1), []

    def run(name, priority, hold):
        gate.enter(priority)
        order.append(name)
        time.sleep(hold)
        gate.leave()

    first = threading.Thread(target=run, args=("first", STUDENT, 0.4))
    first.start()
    time.sleep(0.1)
    second = threading.Thread(target=run, args=("second", STUDENT, 0.0))
    second.start()
    time.sleep(0.1)
    assert gate.waiting == 1
    lecturer = threading.Thread(target=run, args=("lecturer", LECTURER, 0.0))
    lecturer.start()
    for t in (first, second, lecturer):
        t.join(5)
    assert order == ["first", "lecturer", "second"] and gate.inside == 0


def test_a_run_replaced_while_it_waits_leaves_the_line():
    gate = Gate(1)
    gate.enter()  # this thread holds the only place

    def replaced():
        raise RuntimeError("a newer run of this session")

    errors = []

    def other():
        try:
            gate.enter(STUDENT, check=replaced)
        except RuntimeError as e:
            errors.append(str(e))

    t = threading.Thread(target=other)
    t.start()
    t.join(5)
    assert errors and gate.waiting == 0
    gate.leave()
    assert gate.inside == 0


def test_a_lab_call_gives_the_gate_up_while_it_waits():
    """A student's hanging lab function takes its whole time limit: meanwhile the page's place goes to the
    next run (ui.work.GatedPool), and the page takes it back after."""
    from ui.work import GatedPool

    gate, entered = Gate(1), threading.Event()

    class SlowPool:
        def start(self):
            pass

        def call(self, *args, **kwargs):
            assert entered.wait(5), "another run got the place while this call waited"
            return "reply"

    def other():
        gate.enter()
        entered.set()
        gate.leave()

    gate.enter()  # this page's run holds the only place
    t = threading.Thread(target=other)
    t.start()
    assert GatedPool(SlowPool(), gate).call("handle") == "reply"
    assert gate.holding() and gate.inside == 1  # taken back
    t.join(5)
    gate.leave()
    assert gate.inside == 0
