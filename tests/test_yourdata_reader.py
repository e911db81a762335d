"""sim/yourdata/reader.py: an upload read in a worker process (sim/runtime/procs.py) gives the object the reader gives
in process; a refusal, the time limit and the memory cap each come back as one line; the worker gives the memory of
a 20 MB file back when it is done. The wire format is checked without a process; the rest is integration."""

from __future__ import annotations

import numpy as np
import pytest

from sim.yourdata.datafile import DataError
from sim.yourdata.plan import load_pool
from sim.yourdata.reader import from_wire, read_upload, to_wire
from sim.yourdata.runlog import load_run_log
from tests.fixtures.runlogs import trl_bytes

POOL = b"prompt,correct,samples\n<b>a</b>,1,8\n=1+1,0,8\nc,8,8\n"


def same_log(a, b) -> None:
    assert (a.source, a.name, a.settings, a.notes, a.step_kind, a.spelled, a.gaps, a.not_grpo) == (
        b.source, b.name, b.settings, b.notes, b.step_kind, b.spelled, b.gaps, b.not_grpo)
    np.testing.assert_array_equal(a.steps, b.steps)
    assert a.metrics.keys() == b.metrics.keys()
    for k in a.metrics:
        np.testing.assert_array_equal(a.metrics[k], b.metrics[k])


def same_pool(a, b) -> None:
    assert (a.name, a.notes) == (b.name, b.notes) and list(a.ids) == list(b.ids)
    for k in ("rate", "correct", "samples", "lines"):
        np.testing.assert_array_equal(getattr(a, k), getattr(b, k))


def test_the_wire_format_round_trips_in_the_types_procs_decodes():
    import io
    import pickle

    from sim.runtime.procs import _Unpickler

    log = load_run_log(trl_bytes(), "trainer_state.json")
    verl = load_run_log(b'{"step": 1, "data": {"critic/score/mean": 0.5, "actor/pg_loss": null}}\n'
                        b'{"step": 2, "data": {"critic/score/mean": 0.6, "actor/pg_loss": NaN}}\n', "m.jsonl")
    assert verl.gaps and verl.spelled  # what the file has no number for, and its own names, travel too
    sft = load_run_log(b'{"log_history": [{"step": 1, "loss": 1.0}]}', "sft.json")
    pool = load_pool(POOL, "p.csv")
    for obj, same in ((log, same_log), (verl, same_log), (sft, same_log), (pool, same_pool)):
        wire = pickle.loads(pickle.dumps(to_wire(obj)))
        same(from_wire(wire), obj)
        _Unpickler(io.BytesIO(pickle.dumps(("msg", to_wire(obj))))).load()  # no class the server would refuse


@pytest.fixture(scope="module")
def pool():
    """One real file worker for the tests of this module."""
    from sim.yourdata.reader import file_pool

    p = file_pool()
    yield p
    p.close()


@pytest.mark.integration
def test_a_file_read_in_the_worker_equals_the_file_read_here(pool):
    data = trl_bytes()
    same_log(read_upload(pool, "run", data, "trainer_state.json"), load_run_log(data, "trainer_state.json"))
    same_pool(read_upload(pool, "pool", POOL, "p.csv"), load_pool(POOL, "p.csv"))
    with pytest.raises(DataError, match=r"^p.csv line 3, field correct: 9 is more than samples = 8 \(c > n\)$"):
        read_upload(pool, "pool", b"correct,samples\n1,8\n9,8\n", "p.csv")
    with pytest.raises(DataError, match="20,000,001 bytes is over the cap"):
        read_upload(pool, "pool", b"x" * 20_000_001, "big.csv")


@pytest.mark.integration
def test_the_time_limit_and_the_memory_cap_are_one_line_each():
    from sim.runtime.procs import Pool

    rows = b"correct,samples\n" + b"1,8\n" * 900_000
    slow = Pool(1, name="reading your file")
    try:
        with pytest.raises(DataError, match=r"^big.csv: took longer than 0.05 s to read; a file of up to 20 MB"):
            read_upload(slow, "pool", rows, "big.csv", timeout=0.05)
        assert read_upload(slow, "pool", POOL, "p.csv").rate.size == 3  # the next file: a fresh worker
    finally:
        slow.close()
    small = Pool(1, memory_mb=150, name="reading your file")  # room for the reader's imports, not the parse
    try:
        read_upload(small, "pool", POOL, "p.csv")  # the imports, done
        # at the cap CPython either raises MemoryError (the memory message) or, more often here, keeps retrying
        # its allocations for many seconds: then the time limit ends it. Either way one line, and the worker goes.
        with pytest.raises(DataError, match=r"^big.csv: (needed more memory to read than the reader's cap "
                                            r"\(1,536 MB for an upload\)|took longer than 3 s to read)"):
            read_upload(small, "pool", rows, "big.csv", timeout=3.0)
        assert read_upload(small, "pool", POOL, "p.csv").rate.size == 3
    finally:
        small.close()


@pytest.mark.integration
def test_the_worker_gives_a_20_mb_files_memory_back(pool):
    """Issue 37 row 2: the server went from 433 to 1,552 MB after two uploads and stayed there. The parse runs in
    the worker, and the worker drops the result and trims its heap before the call returns."""
    rng = np.random.default_rng(0)
    c = rng.integers(0, 65, size=900_000)
    data = ("prompt,correct,samples\n" + "".join(f"prompt-{i:07d},{k},64\n" for i, k in enumerate(c))).encode()
    assert len(data) > 15_000_000
    read_upload(pool.big, "pool", b"correct,samples\n1,2\n", "tiny.csv")  # the large files' worker, warmed up
    worker = pool.big.workers[0]
    before = rss_mb(worker.pid)
    got = read_upload(pool, "pool", data, "pool.csv")
    assert got.rate.size == 900_000 and got.ids[-1] == "prompt-0899999"
    after = rss_mb(worker.pid)
    assert after - before < 60, (before, after)  # the file's bytes (until the next call), not the parse's ~400 MB


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


def test_a_text_column_is_the_texts_it_was_made_of():
    from sim.yourdata.reader import TextColumn

    texts = ["", "a", "<b>é</b>", "=1+1", "\u202e", "x" * 300]
    c = TextColumn.of(texts)
    assert len(c) == 6 and list(c) == texts and c[-1] == "x" * 300 and c[1:3] == texts[1:3]
    with pytest.raises(IndexError):
        c[6]


def test_a_download_holds_the_visitors_file_weakly():
    """ui.upload.weak_data: Streamlit keeps a deferred download's callable after a session it drops without a
    shutdown (its TTL); the callable must not keep the parsed file alive. While the session holds it, it serves."""
    import gc

    from ui.upload import weak_data

    pool = load_pool(POOL, "p.csv")
    data = weak_data(lambda p, G: f"{p.rate.size} prompts at G = {G}", pool, 8)
    assert data() == "3 prompts at G = 8"
    del pool
    gc.collect()
    assert data() == ""


# ---- fairness between visitors (issue 43 row 3) -----------------------------------------------------------------

class _Held:
    """A stand-in for a procs Worker: each call waits until released, and says whose it was."""

    def __init__(self):
        import threading

        self.release, self.ran = threading.Event(), []

    def call(self, fn, args=(), kwargs=None, **options):
        from sim.runtime.procs import Reply

        self.ran.append(args[0])
        self.release.wait(10)
        return Reply(True, args[0])


def test_a_visitor_has_one_call_in_line_and_a_newer_one_replaces_it():
    """procs.Pool's `who`: three visitors wait behind a running call; visitor b calls again while b's first call still
    waits: that one answers "cancelled" without running, and the line keeps its order (a, then c, then b's newer)."""
    import threading
    import time

    from sim.runtime.procs import Pool

    pool = Pool(1, name="the test")  # no process: the worker is a stand-in
    held = _Held()
    pool.workers[:] = [held]
    pool._idle.clear()
    pool._idle.append(held)
    got: dict[str, object] = {}

    def call(tag, who):
        got[tag] = pool.call(None, (tag,), who=who)

    threads = []
    for tag, who in (("first", "x"), ("a", "a"), ("b1", "b"), ("c", "c")):
        threads.append(threading.Thread(target=call, args=(tag, who)))
        threads[-1].start()
        deadline = time.monotonic() + 5
        while len(pool._line) + len(held.ran) < len(threads) and time.monotonic() < deadline:
            time.sleep(0.005)  # each in line (or running) before the next: the order is known
    threads.append(threading.Thread(target=call, args=("b2", "b")))
    threads[-1].start()
    deadline = time.monotonic() + 5
    while "b1" not in got and time.monotonic() < deadline:
        time.sleep(0.005)
    assert got["b1"].kind == "cancelled" and "b1" not in held.ran
    held.release.set()
    for t in threads:
        t.join(10)
    assert held.ran == ["first", "a", "c", "b2"] and all(got[k].ok for k in ("first", "a", "c", "b2"))


@pytest.mark.integration
def test_a_small_file_is_not_read_behind_large_ones(pool):
    """Issue 43 row 3: three visitors' large files each took the parse limit, and a fourth visitor's 21 KB file
    waited behind them. Small files have a worker of their own: the small one is read while the large ones wait."""
    import threading

    rows = b"correct,samples\n" + b"1,8\n" * 900_000  # a large pool: seconds to read
    done: list[str] = []

    def big(i):
        read_upload(pool, "pool", rows, f"big{i}.csv", who=f"visitor{i}")
        done.append(f"big{i}")

    threads = [threading.Thread(target=big, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    got = read_upload(pool, "pool", POOL, "small.csv", who="visitor3")
    done.append("small")
    for t in threads:
        t.join(120)
    assert got.rate.size == 3 and done[0] == "small" and sorted(done[1:]) == ["big0", "big1", "big2"]


@pytest.mark.integration
def test_a_small_file_that_reads_slowly_moves_to_the_large_files_worker(pool, monkeypatch):
    from sim.yourdata import reader

    monkeypatch.setattr(reader, "SMALL_TIMEOUT", 0.001)  # any small file is "slow" now: its worker's limit ends it
    assert read_upload(pool, "pool", POOL, "p.csv").rate.size == 3  # read in the end, by the large files' worker
