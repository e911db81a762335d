"""The server's computations: run in worker processes, cached per setting, the lecturer first.

    values = compute((jobs.toy_run, (cfg,)), (jobs.toy_expected, (expected_key(cfg),)))   # in a page

A class that asks for something new (every student their own seed) would otherwise queue numpy work in
the one Python process that also serves every websocket, and everyone, the projected screen included,
would wait behind it. So:
  * every job runs in one of `Work`'s worker processes (sim/procs.py, forked from a preloaded fork server):
    a 2-core machine computes two settings at once, and the server's threads only wait on pipes;
  * a finished result is cached for the whole server by (job, args), bounded by the bytes of its arrays;
    two sessions asking for the same setting share one computation;
  * a job waits in one queue, served by priority then age: the lecturer's session (it showed the server's
    presenter key, ui/presenter.py; `?classroom=1` alone only enlarges the page) ahead of the class;
  * only the newest request of a session counts: a student who moves a slider again while their setting
    waits starts a new script run, Streamlit stops the old one (its wait ends), and a queued job nobody
    waits for any more is dropped before it starts (one that started finishes into the cache);
  * a waiting session sees "Computing this setting…" (with how many are ahead of it in the queue) under its
    page's title,
    and the previous charts stay where they are until the new ones replace them.

Without workers (a bare Server: AppTest, a test app) the same jobs run in the caller's thread, through the
same cache and the same rebuild (sim/jobs.py).
"""

from __future__ import annotations

import bisect
import itertools
import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from sim import jobs
from ui.presenter import LECTURER, STUDENT  # queue priorities, lower first; who is the lecturer: ui/presenter.py

LOG = logging.getLogger("grpo_playground")
JOB_TIMEOUT_S = 120.0  # a job past this is killed (with its worker, which is replaced) and reported
CACHE_MB = 400  # the results kept, by the bytes of their arrays (least recently used out first)
WORKER_MEMORY_MB = 2048  # each worker's cap above what it holds at start
GATE_SIZE = 1  # student script runs at once (Gate): measured better for the lecturer than 2
FIRST_SAY_S = 0.2  # a job still running after this long gets its status line
POLL_S = 0.5  # how often a waiting run checks whether a newer run of its session replaced it


class JobError(ValueError):
    """A job that did not give a result: the engine refused the setting, or its worker failed. The pages
    already show a ValueError's text as "These settings cannot run"."""


@dataclass(eq=False)
class _Job:
    key: tuple
    fn: object
    args: tuple
    seq: int
    waiters: dict = field(default_factory=dict)  # waiter token -> priority
    started: bool = False
    done: threading.Event = field(default_factory=threading.Event)
    value: object = None
    error: str | None = None

    @property
    def rank(self) -> tuple:
        return (min(self.waiters.values(), default=STUDENT), self.seq)


class Work:
    """The queue, the workers and the cache. `workers=0`: compute in the caller's thread."""

    def __init__(self, workers: int = 2, *, cache_mb: float = CACHE_MB, timeout: float = JOB_TIMEOUT_S,
                 memory_mb: int = WORKER_MEMORY_MB):
        self.timeout, self.cache_bytes = timeout, int(cache_mb * 2**20)
        self._cache: OrderedDict[tuple, tuple[object, int]] = OrderedDict()  # key -> (value, bytes)
        self._jobs: dict[tuple, _Job] = {}  # queued or running
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._closed = False
        self.dropped = 0  # queued jobs dropped because nobody waited for them any more
        self.gate = Gate(GATE_SIZE)
        self.workers = []
        if workers:
            from sim.procs import Worker

            self.workers = [Worker(memory_mb=memory_mb, name="the page's computations") for _ in range(workers)]
            for worker in self.workers:
                threading.Thread(target=self._serve, args=(worker,), name="work", daemon=True).start()

    @property
    def inline(self) -> bool:
        return not self.workers

    def start(self) -> None:
        """Start the worker processes in the background (the first job otherwise waits for them)."""
        for worker in self.workers:
            worker.start()

    def ready(self) -> None:
        """Wait until every worker process has started (a trivial call on each, in parallel), so that a
        server that answers its health check is not still starting processes when the first visitor comes."""
        threads = [threading.Thread(target=w.call, args=(int,)) for w in self.workers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    # ---- the cache ----
    def cached(self, fn, args: tuple) -> tuple[bool, object]:
        """(True, result) if job fn(*args) is cached, else (False, None)."""
        key = (fn.__name__, args)
        with self._cond:
            hit = self._cache.get(key)
            if hit is None:
                return False, None
            self._cache.move_to_end(key)
            return True, hit[0]

    def put(self, fn, args: tuple, value) -> object:
        """Cache job fn(*args)'s plain value; returns the rebuilt result."""
        result = jobs.rebuild(fn, args, value)
        size = jobs.nbytes(value)
        with self._cond:
            self._cache[(fn.__name__, args)] = (result, size)
            total = sum(s for _, s in self._cache.values())
            while total > self.cache_bytes and len(self._cache) > 1:
                total -= self._cache.popitem(last=False)[1][1]
        return result

    def clear(self) -> None:
        """Drop every cached result (the memory janitor: the class has left)."""
        with self._cond:
            self._cache.clear()

    # ---- the queue ----
    def submit(self, fn, args: tuple, token: object, priority: int = STUDENT) -> _Job:
        """Wait for job fn(*args) as `token` (one wait of one script run): joins the job if it is queued or
        running, else queues it."""
        key = (fn.__name__, args)
        with self._cond:
            job = self._jobs.get(key)
            if job is None:
                job = self._jobs[key] = _Job(key, fn, args, next(self._seq))
            job.waiters[token] = priority
            self._cond.notify_all()
        return job

    def withdraw(self, job: _Job, token: object) -> None:
        """`token` no longer waits for `job` (its script run ended or was replaced by a newer one). A queued
        job nobody waits for is dropped; a running one finishes into the cache."""
        with self._cond:
            job.waiters.pop(token, None)
            if not job.waiters and not job.started and self._jobs.get(job.key) is job:
                del self._jobs[job.key]
                self.dropped += 1

    def ahead(self, job: _Job) -> int:
        """Jobs that run before `job`: the queued ones ranked ahead of it and the ones running."""
        with self._cond:
            if job.started or job.done.is_set():
                return 0
            rank = job.rank
            return sum(1 for j in self._jobs.values() if j is not job and (j.started or j.rank < rank))

    def run_here(self, fn, args: tuple):
        """Compute job fn(*args) in this thread and cache it (no workers, or the workers failed)."""
        try:
            value = fn(*args)
        except ValueError as e:
            raise JobError(str(e)) from None
        return self.put(fn, args, value)

    def _next(self) -> _Job | None:
        with self._cond:
            while True:
                if self._closed:
                    return None
                queued = [j for j in self._jobs.values() if not j.started]
                if queued:
                    job = min(queued, key=lambda j: j.rank)
                    job.started = True
                    return job
                self._cond.wait()

    def _serve(self, worker) -> None:
        """One worker's thread: take the best-ranked queued job, run it in the worker, publish the result."""
        while (job := self._next()) is not None:
            start = time.perf_counter()
            reply = worker.call(job.fn, job.args, timeout=self.timeout)
            if reply.ok:
                job.value = self.put(job.fn, job.args, reply.value)
            elif reply.kind == "raised" and reply.message.startswith("ValueError: "):
                job.error = reply.message.removeprefix("ValueError: ")  # the engine refused the setting
            else:
                job.error = f"the computation failed: {reply.message}"
                LOG.warning("job %s failed (%s): %s", job.key[0], reply.kind, reply.message)
            with self._cond:
                if self._jobs.get(job.key) is job:
                    del self._jobs[job.key]
            job.done.set()
            LOG.debug("job %s took %.0f ms", job.key[0], (time.perf_counter() - start) * 1000)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        for worker in self.workers:
            worker.close()


class Gate:
    """At most `size` script runs compute at once, the lecturer's first.

    Script runs share one interpreter lock, so 30 runs at once each take 30 times as long, the projected
    screen's too. A page's run enters after its title (ui.page.open_page) and leaves when it ends (app.py)
    or while it waits for a job (its worker computes meanwhile): students enter in order, up to `size` at
    once, and the lecturer does not queue (a presenter run always enters). A place that frees is handed to
    the first in line, so waiting runs sleep on their own event instead of polling a shared one."""

    def __init__(self, size: int = 2):
        self.size, self.inside = size, 0
        self._line: list[list] = []  # [priority, seq, event] of the runs waiting, best first
        self._seq = itertools.count()
        self._lock = threading.Lock()
        self._held = threading.local()  # does this thread's run hold a place

    def enter(self, priority: int = STUDENT, check=None, on_wait=None) -> None:
        """Wait for a place (no-op if this thread holds one). check(): called every 0.25 s while waiting (a
        newer run of the session raises there); on_wait(ahead): told about once a second how many are ahead."""
        if getattr(self._held, "on", False):
            return
        with self._lock:
            if priority == LECTURER or (not self._line and self.inside < self.size):
                self.inside += 1
                self._held.on = True
                return
            ticket = [priority, next(self._seq), threading.Event()]
            bisect.insort(self._line, ticket, key=lambda t: (t[0], t[1]))
        told = 0.0
        try:
            while not ticket[2].wait(POLL_S):
                if check is not None:
                    check()
                if on_wait is not None and time.monotonic() - told >= 1.0:
                    told = time.monotonic()
                    on_wait(self._ahead(ticket))
        except BaseException:
            with self._lock:
                if ticket in self._line:  # still waiting: leave the line
                    self._line.remove(ticket)
                    return_place = False
                else:  # handed a place as it stopped: pass it on
                    return_place = True
            if return_place:
                self._held.on = True
                self.leave()
            raise
        self._held.on = True

    def _ahead(self, ticket) -> int:
        with self._lock:
            return self.inside + next((i for i, t in enumerate(self._line) if t is ticket), 0)

    def leave(self) -> None:
        """Give this thread's place back (no-op if it holds none): to the first in line, if any."""
        if not getattr(self._held, "on", False):
            return
        self._held.on = False
        with self._lock:
            if self._line and self.inside <= self.size:
                self._line.pop(0)[2].set()  # the place passes on: `inside` is unchanged
            else:
                self.inside -= 1

    def holding(self) -> bool:
        """Does this thread's run hold a place?"""
        return getattr(self._held, "on", False)

    @property
    def waiting(self) -> int:
        with self._lock:
            return len(self._line)


class GatedPool:
    """A sim.procs Pool for the lab's calls from a page: while a call waits (a student's hanging function
    takes its whole time limit), the page's script run gives its place in the gate up, and takes it back
    after, so the class is not held behind one student's infinite loop."""

    def __init__(self, pool, gate: Gate):
        self.pool, self.gate = pool, gate

    def start(self) -> None:
        self.pool.start()

    def call(self, *args, **kwargs):
        held = self.gate.holding()
        self.gate.leave()
        try:
            return self.pool.call(*args, **kwargs)
        finally:
            if held:
                check, say, priority = _page_hooks()
                self.gate.enter(priority, check, lambda n: say(f"The server is busy: {n} pages ahead of this one."))
                say(None)


# ---- a page's side ----------------------------------------------------------------------------------

def compute(*calls: tuple) -> list:
    """The results of jobs (fn, args), ..., for the running page: from the cache, or queued on the server's
    workers while this script run waits. While it waits, the page's status line (ui.page.open_page) says
    how many jobs are ahead; a newer script run of the session (a slider moved again) ends the wait, and the
    jobs it no longer needs are dropped. Raises JobError (a ValueError) with the reason a job gave none."""
    from ui.server import current

    work = current().work
    results: list = [None] * len(calls)
    missing = []
    for i, (fn, args) in enumerate(calls):
        hit, value = work.cached(fn, args)
        if hit:
            results[i] = value
        else:
            missing.append(i)
    if not missing:
        return results
    if work.inline:
        for i in missing:
            results[i] = work.run_here(*calls[i])
        return results
    return _wait(work, calls, results, missing)


def admit() -> None:
    """This script run takes its place in the server's gate (Gate), saying so on the page's status line while
    it waits; app.py gives the place back when the run ends. No gate without workers (AppTest)."""
    from ui.server import current

    work = current().work
    if not work.inline:
        check, say, priority = _page_hooks()
        work.gate.enter(priority, check, lambda n: say(f"The server is busy: {n} pages ahead of this one."))
        say(None)


def leave() -> None:
    """The script run ended (app.py): its place in the gate goes to the next."""
    from ui.server import current

    current().work.gate.leave()


def _page_hooks():
    """(check, say, priority) for the running script: check() raises when a newer run of the session
    replaces this one; say(text) writes the status line (None: clears it once written)."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    from ui.page import status_line
    from ui.presenter import priority

    ctx, line, shown = get_script_run_ctx(), status_line(), [None]

    def check() -> None:
        if ctx is not None:
            ctx.yield_check()

    def say(text: str | None) -> None:
        if line is None or text == shown[0]:
            return
        line.info(text, icon=":material/hourglass_top:") if text else line.empty()
        shown[0] = text

    return check, say, priority()


def _wait(work: Work, calls, results: list, missing: list) -> list:
    check, say, priority = _page_hooks()
    token = object()
    pending = {i: work.submit(*calls[i], token, priority) for i in missing}
    work.gate.leave()  # the worker computes; other runs may use this place meanwhile
    try:
        told, first = 0.0, True
        for i, job in pending.items():
            while not job.done.wait(FIRST_SAY_S if first else POLL_S):  # a quick job shows no line at all
                first = False
                check()
                if time.monotonic() - told >= 1.0:
                    told = time.monotonic()
                    ahead = work.ahead(job)
                    say(f"Computing this setting: {ahead} ahead of it in the queue." if ahead else
                        "Computing this setting…")
            if job.error is not None:
                raise JobError(job.error)
            results[i] = job.value
    finally:
        for job in pending.values():
            work.withdraw(job, token)
    work.gate.enter(priority, check, lambda n: say(f"Computed; the server is busy: {n} pages ahead of this one."))
    say(None)
    return results
