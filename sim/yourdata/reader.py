"""A visitor's upload read in a worker process, off the server's own process: a time limit, a memory cap, and the
memory handed back when it is done.

    pool = file_pool()                                        # one worker (sim.runtime.procs.Pool), the server's
    log = read_upload(pool, "run", data, "trainer_state.json")   # a RunLog, or DataError (one line)
    prompts = read_upload(pool, "pool", data, "prompts.csv")     # a plan.Pool

Why a process: parsing is Python (csv, json, regular expressions) and holds the interpreter lock, so in the server
it stalls every other visitor's page however the pages are gated; a file that parses slowly (issue 37: a quadratic
scan, 120 KB for over two minutes; a 20 MB CSV of 4.95 million rows, 35 s and 2.4 GB) must cost the class nothing.
The workers are sim.runtime.procs's (forks of the preloaded fork server): PARSE_TIMEOUT seconds per file, then it is
killed and replaced; PARSE_MEMORY_MB above what it holds at start, then "memory". The result goes back as a
message (task.emit) and is dropped before the call returns, then glibc's free pages are handed back (malloc_trim):
a worker that parsed 20 MB keeps only the call's arguments (the file's bytes, until its next call). Two workers
(FilePools): one for files up to SMALL_BYTES, one for the rest, each visitor with at most one file in each line.

The reply travels as plain containers and numpy arrays (to_wire), the only types procs' restricted unpickler
decodes; from_wire builds the RunLog or Pool again in the server.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sim.yourdata.datafile import DataError, cap_text, check_size, file_label
from sim.yourdata.plan import Pool as PromptPool
from sim.yourdata.plan import load_pool
from sim.yourdata.runlog import RunLog, load_run_log

PARSE_TIMEOUT = 20.0  # seconds to read one file (a 20 MB, 1,000,000-row CSV: about 5 s here)
PARSE_MEMORY_MB = 1536  # MB a parse may allocate beyond the worker's own (a 20 MB CSV peaks near 700)
SMALL_BYTES = 1_000_000  # a file this small goes to the small files' worker (it parses in well under a second)
SMALL_TIMEOUT = 2.0  # seconds the small files' worker gives one; a small file slower than that goes to the big one's
SMALL_MEMORY_MB = 512
READERS = {"run": load_run_log, "pool": load_pool}


def parse(kind: str, data: bytes, name: str, *, task) -> dict:
    """In the worker: the file read by READERS[kind], sent to the caller as to_wire's dict through task.emit, then
    dropped and the heap trimmed before the call returns, so the worker holds nothing of it afterwards (its reply,
    which procs keeps until the next call, is this small dict). A refusal: {"error": one line}."""
    import gc

    from sim.runtime.procs import malloc_trim

    try:
        check_size(len(data), file_label(name))
        wire = to_wire(READERS[kind](data, name))
        task.emit(wire)
        del wire
        return {"sent": True}
    except DataError as e:
        return {"error": str(e)}
    finally:
        gc.collect()
        malloc_trim()


class TextColumn(Sequence):
    """A column of texts (a pool's prompt ids) as one UTF-8 buffer and an offsets array: a million ids are two
    allocations in the server, handed back whole when the session drops them, where a tuple of a million str
    objects fills the small-object heap and leaves it fragmented. Shapes: offsets (N + 1,)."""

    def __init__(self, blob: bytes, offsets: np.ndarray):
        self.blob, self.offsets = blob, offsets

    @classmethod
    def of(cls, texts) -> TextColumn:
        encoded = [t.encode("utf-8") for t in texts]
        return cls(b"".join(encoded), np.concatenate([[0], np.cumsum([len(e) for e in encoded])]).astype(np.int64))

    def __len__(self) -> int:
        return int(self.offsets.size - 1)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        i %= len(self)
        return self.blob[int(self.offsets[i]): int(self.offsets[i + 1])].decode("utf-8")


def to_wire(obj: RunLog | PromptPool) -> dict:
    """A RunLog or a Pool as containers of numbers, strings and arrays."""
    if isinstance(obj, RunLog):
        return {"type": "run", "source": obj.source, "name": obj.name, "steps": obj.steps,
                "metrics": dict(obj.metrics), "settings": dict(obj.settings), "notes": list(obj.notes),
                "step_kind": obj.step_kind, "spelled": dict(obj.spelled), "gaps": obj.gaps,
                "not_grpo": obj.not_grpo}
    return {"type": "pool", "name": obj.name, "rate": obj.rate, "correct": obj.correct, "samples": obj.samples,
            "ids": None if obj.ids is None else _column(obj.ids), "lines": np.asarray(obj.lines, dtype=np.int64),
            "notes": list(obj.notes)}


def from_wire(d: dict) -> RunLog | PromptPool:
    """to_wire's dict back as the object."""
    if d["type"] == "run":
        return RunLog(d["source"], d["name"], d["steps"], d["metrics"], d["settings"], tuple(d["notes"]),
                      d["step_kind"], d["spelled"], d["gaps"], d["not_grpo"])
    ids = None if d["ids"] is None else TextColumn(d["ids"]["blob"], d["ids"]["offsets"])
    return PromptPool(d["name"], d["rate"], d["correct"], d["samples"], ids, d["lines"], tuple(d["notes"]))


def _column(texts) -> dict:
    c = texts if isinstance(texts, TextColumn) else TextColumn.of(texts)
    return {"blob": c.blob, "offsets": c.offsets}


class FilePools:
    """The server's two file workers (issue 43 row 3: three visitors' files that each took the 20 s limit made a
    fourth visitor's 21 KB file wait 34-39 s behind them, one worker, first come first served):

      * small files (up to SMALL_BYTES) have a worker of their own, so a small upload never waits behind a large
        one; a small file still reading after SMALL_TIMEOUT s moves to the large files' line (a slow small file
        cannot hold the small files' worker);
      * in each line a visitor has at most one file (a newer upload of theirs replaces the one still waiting:
        procs.Pool's `who`), so one visitor uploading again and again holds no one else back.

    Two parses run at once at most, and the small one for a second or two: the other core stays the class's."""

    def __init__(self):
        from sim.runtime.procs import Pool

        self.big = Pool(1, memory_mb=PARSE_MEMORY_MB, name="reading your file")
        self.small = Pool(1, memory_mb=SMALL_MEMORY_MB, name="reading your file")
        self.workers = self.big.workers + self.small.workers

    def start(self) -> None:
        self.big.start()
        self.small.start()

    def call(self, fn, args=(), kwargs=None, *, lane: str = "big", **options):
        return (self.small if lane == "small" else self.big).call(fn, args, kwargs, **options)

    def close(self) -> None:
        self.big.close()
        self.small.close()


def file_pool() -> FilePools:
    """The workers that read uploads (the server owns them: ui/server.py's file_pool)."""
    return FilePools()


def read_upload(pool, kind: str, data: bytes, name: str, *, timeout: float = PARSE_TIMEOUT, who=None):
    """The file read in `pool`'s worker (FilePools, a procs Pool, or ui.work.GatedPool around either): the object,
    or DataError with one line: the reader's refusal, the time limit, the memory cap, a worker that died, a newer
    upload of the same visitor (`who`) that replaced this one while it waited."""
    label = file_label(name)
    check_size(len(data), label)  # before sending 20 MB down a pipe
    sent: list[dict] = []
    lanes = isinstance(getattr(pool, "pool", pool), FilePools)
    small = lanes and len(data) <= SMALL_BYTES and timeout > SMALL_TIMEOUT

    def ask(lane: str, limit: float):
        options = {"lane": lane} if lanes else {}
        return pool.call(parse, (kind, data, name), timeout=limit, task=True, on_message=sent.append, who=who,
                         **options)

    reply = ask("small", SMALL_TIMEOUT) if small else ask("big", timeout)
    if small and reply.kind == "timeout":  # a small file that reads slowly: to the large files' line
        sent.clear()
        reply = ask("big", timeout - SMALL_TIMEOUT)
    if reply.kind == "cancelled":
        raise DataError(f"{label}: replaced by your newer upload before it was read")
    if reply.ok and "error" in reply.value:
        raise DataError(reply.value["error"])
    if reply.ok and len(sent) == 1:
        return from_wire(sent[0])
    if reply.kind == "timeout":
        raise DataError(f"{label}: took longer than {timeout:g} s to read; a file of up to {cap_text()} in one of "
                        "the formats above reads in a few seconds")
    if reply.kind == "memory":
        raise DataError(f"{label}: needed more memory to read than the reader's cap ({PARSE_MEMORY_MB:,} MB for an "
                        "upload); not a training log or a pool of prompts as this page reads them")
    raise DataError(f"{label}: could not be read ({reply.kind}: {reply.message[:120]})")
