"""sim/runtime/procs.py: values back as numpy arrays, a message (never a traceback) for a raising, hanging, crashing or
memory-hungry call, nothing left running that the call started (a new session or a double fork included),
replies decoded without running code, cancellation, and a pool that does not make one caller wait on
another's hang. The functions run in the worker, so they live at module level here."""

import contextlib
import gc
import os
import sys
import threading
import time
import types

import numpy as np
import pytest

from sim.runtime.procs import MODES, Pool, Reply, Worker
from tests.fixtures.escape import alive, escape

pytestmark = pytest.mark.integration

MARK = "/tmp/grpo_procs_evil_ran"


def square(x):
    return np.asarray(x) ** 2, {"n": int(np.asarray(x).size), "name": "square"}


def boom():
    raise ValueError("no\nnewlines here")


def die():
    os._exit(3)


def hog(mb: int):
    return len(bytearray(mb * 1024 * 1024))


def spawn_and(hang: bool, pid_file: str):
    """A child in a new session and a double-forked grandchild (setsid); their pids; then return or hang."""
    pids = escape(60)
    with open(pid_file, "w") as f:
        f.write(" ".join(map(str, pids)))
    while hang:
        pass
    return pids


class Evil:
    def __reduce__(self):
        return (os.system, (f"touch {MARK}",))


def evil():
    return Evil()


def stream_forever(task):
    while True:  # messages faster than the caller's 0.1 s checks, and deaf to task.stop
        task.emit(1)


def until_stopped(task):
    task.emit("started")
    while not task.stop.wait(0.01):
        pass
    return "stopped cleanly"


@pytest.fixture(scope="module")
def worker():
    w = Worker(memory_mb=1024, name="the test")
    yield w
    w.close()


def test_values_come_back_as_arrays_and_errors_as_one_line(worker):
    got = worker.call(square, (np.arange(4.0),), timeout=60)
    assert got.ok and isinstance(got.value[0], np.ndarray)
    np.testing.assert_array_equal(got.value[0], [0.0, 1.0, 4.0, 9.0])
    assert got.value[1] == {"n": 4, "name": "square"}
    assert worker.call(boom, timeout=10) == Reply(False, kind="raised", message="ValueError: no newlines here")


def nap(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


def test_replace_lets_the_call_in_flight_finish_then_starts_a_fresh_process(worker):
    """Worker.replace: the call in flight finishes, then a fresh process serves the next call."""
    old = worker.call(nap, (0.0,), timeout=60).value
    got = {}
    call = threading.Thread(target=lambda: got.update(reply=worker.call(nap, (0.5,), timeout=60)))
    call.start()
    time.sleep(0.1)
    worker.replace()  # waits for the call in flight
    call.join()
    assert got["reply"].ok and got["reply"].value == old, "the call finished in the old process"
    deadline = time.monotonic() + 5
    while alive(old) and time.monotonic() < deadline:  # killed at once; the fork server reaps it
        time.sleep(0.02)
    assert not alive(old)
    new = worker.call(nap, (0.0,), timeout=60).value
    assert new != old and alive(new)


def private_mb_around_a_full_collection() -> tuple[float, float, int]:
    """This process's private memory (MB) before and after a full collection, and the objects frozen."""
    def private():
        fields = dict(line.split(":", 1) for line in open("/proc/self/smaps_rollup").read().splitlines()[1:])
        return sum(int(fields[k].split()[0]) for k in ("Private_Clean", "Private_Dirty")) / 1024

    before = private()
    gc.collect()
    return before, private(), gc.get_freeze_count()


@pytest.mark.skipif(not os.path.exists("/proc/self/smaps_rollup"), reason="reads Linux's /proc")
def test_a_workers_collections_leave_the_fork_servers_pages_shared():
    """sim/runtime/fork_server.py: preloaded objects are frozen, so a worker's full collection writes to none of
    the pages it shares with the fork server (unfrozen, one collection made about 50 MB of them its own)."""
    w = Worker(name="the test")
    try:
        before, after, frozen = w.call(private_mb_around_a_full_collection, timeout=60).value
    finally:
        w.close()
    assert frozen > 100_000, "torch's and numpy's objects are frozen"
    assert after - before < 10 and after < 40, f"private memory {before:.1f} -> {after:.1f} MB after a collection"
    # unfrozen, here: a full collection already while the worker imported this module, 64 MB private


def test_a_worker_started_while_a_page_runs_does_not_run_the_page(tmp_path, monkeypatch):
    """Streamlit runs each page as `__main__`; multiprocessing would run that file again in a new worker
    (as __mp_main__) unless the fork server skips it (sim/runtime/fork_server.py)."""
    ran = tmp_path / "ran"
    page = tmp_path / "page.py"
    page.write_text(f"open({str(ran)!r}, 'w').close()\n")
    main = types.ModuleType("__main__")  # as Streamlit's script runner makes it: a __file__, no __spec__
    main.__file__ = str(page)
    monkeypatch.setitem(sys.modules, "__main__", main)
    w = Worker(name="the test")
    try:
        assert w.call(os.getpid, timeout=60).ok
    finally:
        w.close()
    assert not ran.exists(), "the worker ran the page script"


def test_a_crash_gives_the_exit_code_and_the_next_call_works(worker):
    got = worker.call(die, timeout=10)
    assert got.kind == "crashed" and got.exitcode == 3
    assert got.message == "the process running the test died (exit code 3); it restarts on the next call"
    assert worker.call(square, (2.0,), timeout=60).ok


def test_memory_cap_has_its_own_message_and_the_worker_is_replaced(worker):
    """An allocation far over the cap fails at once with "memory", not a timeout."""
    starts = worker.starts
    got = worker.call(hog, (20_000,), timeout=30)
    assert got.kind == "memory"  # not "timeout": it failed at the allocation
    assert got.message.startswith("went over its memory cap of 1024 MB (MemoryError")
    assert worker.call(hog, (50,), timeout=30).ok and worker.starts == starts + 1


@pytest.mark.parametrize("hang", [False, True])
def test_nothing_the_call_started_is_left_running(tmp_path, hang):
    """A child in a new session and a setsid double fork are gone when the call ends, whether
    it returned or hung past its limit."""
    w = Worker(name="the test")
    try:
        got = w.call(spawn_and, (hang, str(tmp_path / "pids")), timeout=3.0 if hang else 60)
        assert got.kind == ("timeout" if hang else "")
        pids = [int(p) for p in (tmp_path / "pids").read_text().split()]
        assert len(pids) == 2 and not any(alive(p) for p in pids)
    finally:
        w.close()


def test_a_reply_cannot_run_code_in_the_caller(worker):
    if os.path.exists(MARK):
        os.remove(MARK)
    got = worker.call(evil, timeout=30)
    assert got.kind == "crashed" and "refusing posix.system" in got.message
    assert not os.path.exists(MARK)


def test_cancel_sets_stop_and_messages_stream(worker):
    seen = []
    got = worker.call(until_stopped, task=True, on_message=seen.append, cancelled=lambda: bool(seen))
    assert got == Reply(True, "stopped cleanly") and seen == ["started"]


def test_a_hang_in_a_pool_does_not_hold_up_the_other_caller():
    import threading

    pool = Pool(2, name="the test")
    try:
        pool.start()
        assert pool.call(square, (1.0,), timeout=60).ok
        hung = threading.Thread(target=pool.call, args=(time.sleep, (30,)), kwargs={"timeout": 5.0})
        hung.start()
        time.sleep(0.3)
        assert pool.call(square, (3.0,), timeout=60).value[0] == 9.0
        assert hung.is_alive(), "the other caller's answer waited for the hung call's limit"
        hung.join()
    finally:
        pool.close()


def test_a_call_that_streams_fast_still_times_out_and_is_still_cancelled(worker):
    # A run that emits a message every few ms (a tiny TinyLM config) once starved the time limit and the cancel
    # check: the last viewer's Stop never stopped it. Both checks now run after every message too.
    # (a starved check never returns: the bounds below only tell "stopped" from "ran on", never how fast)
    t0 = time.monotonic()
    r = worker.call(stream_forever, task=True, on_message=lambda m: None, timeout=0.5)
    assert r.kind == "timeout" and time.monotonic() - t0 < 60
    stop_at = time.monotonic() + 0.3
    r = worker.call(stream_forever, task=True, on_message=lambda m: None, cancelled=lambda: time.monotonic() > stop_at,
                    grace=0.5)
    assert r.kind == "cancelled" and time.monotonic() - stop_at < 60
    assert worker.call(square, (3,)).value[0] == 9  # the worker was replaced and answers


# ---- a boxed worker (sandbox=MODES: the lab's) against the ways out of sim/runtime/sandbox.py's box --------------

def unreaped_and(hang: bool, pid_file: str):
    """tests/fixtures/escape.unreaped (subreaper off, three double-forked sleepers), then return or hang."""
    from tests.fixtures.escape import unreaped

    pids = unreaped(3, 60)
    with open(pid_file, "w") as f:
        f.write(" ".join(map(str, pids)))
    while hang:
        pass
    return pids


def clone_parent():
    """clone(CLONE_PARENT | SIGCHLD): a process whose parent is the worker's parent, outside its tree; its pid, or
    the errno that refused it."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    r, w = os.pipe()
    pid = libc.syscall(56, 0x8000 | 17, 0, 0, 0, 0)  # x86_64's clone
    if pid == 0:
        os.write(w, str(int(os.readlink("/proc/self"))).encode().ljust(16))
        time.sleep(60)
        os._exit(0)
    return ("refused", ctypes.get_errno()) if pid < 0 else int(os.read(r, 16))


def spin_then(value):
    from tests.fixtures.escape import spin

    spin()
    return value


def map_shared(mb: int):
    from tests.fixtures.escape import shared_memory

    return shared_memory(mb)


def boxed(mode: str) -> Worker:
    """A worker boxed in `mode` alone, started; the test is skipped where this system does not allow that box."""
    w = Worker(memory_mb=256, name="the test", sandbox=(mode,))
    assert w.call(square, (1.0,), timeout=120).ok
    if w.sandbox != mode:
        w.close()
        pytest.skip(f"this system does not allow a {mode} (the worker got: {w.sandbox})")
    return w


BOXES = ["pid namespace", "seccomp"]


@pytest.mark.parametrize("mode", BOXES)
@pytest.mark.parametrize("hang", [False, True])
def test_a_boxed_worker_kills_what_turned_its_subreaper_off(tmp_path, mode, hang):
    """Issue 43 row 8: the code turns the subreaper off and double-forks; the sleepers are gone when the call
    ends, whether it returned or hung past its limit (the caller's kill_tree then)."""
    w = boxed(mode)
    try:
        got = w.call(unreaped_and, (hang, str(tmp_path / "pids")), timeout=3.0 if hang else 60)
        assert got.kind == ("timeout" if hang else "") and got.ok != hang
        pids = [int(p) for p in (tmp_path / "pids").read_text().split()]
        assert len(pids) == 3 and not [p for p in pids if alive(p)]
    finally:
        w.close()


def test_a_plain_subreaper_loses_them(tmp_path):
    """What the box is for: a worker with the subreaper alone leaves the three sleepers running (killed here)."""
    w = Worker(memory_mb=256, name="the test", sandbox=("subreaper",))
    try:
        got = w.call(unreaped_and, (False, str(tmp_path / "pids")), timeout=60)
        assert w.sandbox == "subreaper" and got.ok and [p for p in got.value if alive(p)] == got.value
    finally:
        w.close()
        for p in (tmp_path / "pids").read_text().split() if (tmp_path / "pids").exists() else ():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(p), 9)


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the test calls x86_64's clone by number")
def test_a_boxed_worker_refuses_clone_parent():
    """The other way out of a subreaper's tree: a child of the worker's parent. The PID namespace's first process
    may not (EINVAL); the seccomp filter refuses it (EPERM)."""
    for mode, errno_ in (("pid namespace", 22), ("seccomp", 1)):
        w = Worker(memory_mb=256, name="the test", sandbox=(mode,))
        try:
            got = w.call(clone_parent, timeout=60)
            if w.sandbox == mode:
                assert got.value == ("refused", errno_), (mode, got)
        finally:
            w.close()


@pytest.mark.parametrize("mode", [*BOXES, "subreaper"])
def test_a_boxed_worker_whose_call_left_a_thread_is_replaced(mode):
    """Issue 43 row 6: a spinning thread left by a call. The answer comes back; the worker is replaced (the next
    call runs in a fresh one), so nothing spins on between calls. A call that leaves none keeps its worker."""
    w = boxed(mode) if mode != "subreaper" else Worker(memory_mb=256, name="the test", sandbox=(mode,))
    try:
        assert w.call(square, (2.0,), timeout=120).ok
        starts = w.starts
        assert w.call(square, (2.0,), timeout=60).ok and w.starts == starts and w.thread_replacements == 0
        assert w.call(spin_then, (7,), timeout=60).value == 7
        assert w.thread_replacements == 1
        assert w.call(square, (3.0,), timeout=60).value[0] == 9.0 and w.starts == starts + 1
    finally:
        w.close()


def test_a_plain_worker_keeps_its_threads(worker):
    """Workers that run the project's own code (TinyLM, uploads) are not boxed: no thread count is taken."""
    assert worker.call(spin_then, (1,), timeout=60).ok and worker.thread_replacements == 0
    worker.replace()  # the spinning thread goes with it


@pytest.mark.parametrize("mode", [*BOXES, "subreaper"])
def test_shared_memory_counts_against_a_boxed_workers_cap(mode):
    """Issue 43 row 7: 384 MB MAP_SHARED, filled, passed a 256 MB cap under RLIMIT_DATA alone; a boxed worker
    (RLIMIT_AS too) refuses it as over its memory cap, and 128 MB still passes."""
    w = boxed(mode) if mode != "subreaper" else Worker(memory_mb=256, name="the test", sandbox=(mode,))
    try:
        got = w.call(map_shared, (384,), timeout=60)
        assert got.kind == "memory" and got.message.startswith("went over its memory cap of 256 MB (OSError")
        assert w.call(map_shared, (128,), timeout=60).value == 128 * 1024 * 1024
    finally:
        w.close()


def test_an_unboxed_worker_counts_no_shared_memory():
    """What RLIMIT_AS is for: without a box, RLIMIT_DATA alone lets 384 MB MAP_SHARED through a 256 MB cap."""
    w = Worker(memory_mb=256, name="the test")
    try:
        assert w.call(map_shared, (384,), timeout=120).value == 384 * 1024 * 1024
    finally:
        w.close()


def test_this_system_gives_the_lab_a_box():
    """Which box this system allows, said in the test log; Linux on x86_64 or aarch64 always has one of the two."""
    w = Worker(memory_mb=256, name="the test", sandbox=MODES)
    try:
        assert w.call(square, (1.0,), timeout=120).ok
        print(f"\nthe lab's box here: {w.sandbox}")
        if os.uname().machine in ("x86_64", "aarch64"):
            assert w.sandbox in BOXES
    finally:
        w.close()


def autograd_forever():
    """A student's infinite loop that grows autograd's graph (about 350 MB a second here)."""
    import torch

    d = torch.ones(400, dtype=torch.float64, requires_grad=True)
    while True:
        d = d * 1.0


def test_a_loop_that_grows_meets_a_boxed_workers_cap_not_its_time_limit():
    """Under RLIMIT_DATA alone such a loop stalled just under the cap (glibc's fallbacks) until its time limit; a
    boxed worker's RLIMIT_AS refuses the allocation, so the answer says memory, and comes early."""
    w = Worker(memory_mb=256, name="the test", sandbox=MODES)
    try:
        t0 = time.monotonic()
        got = w.call(autograd_forever, timeout=60)
        assert got.kind == "memory" and "can't allocate memory" in got.message and time.monotonic() - t0 < 60
    finally:
        w.close()
