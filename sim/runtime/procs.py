"""Work in another process: a preloaded worker, a time limit, a memory cap, nothing left running.

The project's one place that starts processes (the lab's checks, TinyLM's runs, the lesson's build, uploads):

    worker = Worker(memory_mb=1024, name="the lab code")
    reply = worker.call(sim.lab.worker.handle, (request,), timeout=5.0)   # Reply(ok, value, kind, message)
    pool = Pool(2, memory_mb=1024)                                        # the same, on the first idle worker

`fn` is a module-level function (pickled by name); the worker runs `fn(*args, **kwargs)` one call at a time.
With `task=True` it also gets `task=` (a Task: `emit(message)` streams to the caller's `on_message`,
`task.stop` is set when the caller's `cancelled()` turns true, `task.flag(name)` follows `worker.signal`).

Choices, and why:
  * The standard library's multiprocessing "forkserver": the fork server imports PRELOAD once, and each worker
    is its fork (no server threads; never the server's __main__, sim/runtime/fork_server.py), ready in 20-50 ms;
    calls and replies travel through multiprocessing's pipes, pickled: no wire format of ours.
  * pebble and loky were read and not taken: neither caps memory, kills what a worker started in a new session,
    streams messages from a running call or decodes replies without unpickling arbitrary classes.
  * Replies are decoded by a restricted unpickler (containers, numbers, strings, numpy arrays): a student's
    code can make its worker send anything, and the server must never run code from it.
  * Nothing left running, a memory cap, and for code from outside (`sandbox=MODES`, the lab's) a box it cannot
    leave by turning the subreaper off, no thread left spinning and shared mappings counted: the pieces and
    why, sim/runtime/sandbox.py. Over the cap: kind "memory", not a crash. A hung, crashed or over-cap worker,
    and a boxed one that a call left with a thread, is replaced at once, in the background. (`malloc_trim`:
    the server's.)
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import errno
import io
import multiprocessing
import os
import pickle
import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from sim.runtime import sandbox
from sim.runtime.sandbox import MODES, kill_tree  # noqa: F401 (MODES: what a caller passes as sandbox=)

PRELOAD = ("numpy", "torch", "sim.lab.worker", "sim.tinylm.story", "sim.runtime.fork_server")  # fork server
STARTUP_TIMEOUT = 120.0  # seconds for a worker to start (the fork server imports torch first); not the caller's
_CTX = multiprocessing.get_context("forkserver")
_CTX.set_forkserver_preload(list(PRELOAD))  # one fork server per process: the list covers every user
_LIVE: weakref.WeakSet = weakref.WeakSet()  # workers to kill at exit (bookkeeping, not state anyone reads)
_SAFE = {("numpy", "ndarray"), ("numpy", "dtype")} | {(f"numpy{m}.multiarray", n) for m in ("._core", ".core")
                                                      for n in ("_reconstruct", "scalar")}  # fmt: skip


@dataclass(frozen=True)
class Reply:
    """What a call gave: ok and value, or kind (raised/memory/timeout/crashed/cancelled), message, exitcode."""
    ok: bool
    value: object = None
    kind: str = ""
    message: str = ""
    exitcode: int | None = None


def is_out_of_memory(e: BaseException) -> bool:
    """A MemoryError, torch's CPU allocator refusing (a RuntimeError), or the system refusing a mapping (mmap's
    OSError ENOMEM, once RLIMIT_AS counts it)."""
    return (isinstance(e, MemoryError) or (isinstance(e, RuntimeError) and "can't allocate memory" in str(e))
            or (isinstance(e, OSError) and e.errno == errno.ENOMEM))


class _Unpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) in _SAFE:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"refusing {module}.{name}")


def _message(data: bytes) -> tuple:
    """A worker's message: ("ok", value), ("err", kind, message), ("msg", message) or ("ready", pid)."""
    msg = _Unpickler(io.BytesIO(data)).load()
    sizes = {"ok": 2, "err": 3, "msg": 2, "ready": 2}
    if not (isinstance(msg, tuple) and msg and msg[0] in sizes and len(msg) == sizes[msg[0]]):
        raise ValueError("not a message")
    if msg[0] == "err" and not all(isinstance(x, str) for x in msg[1:]):
        raise ValueError("not an error message")
    return msg


# ---- the worker's side ----------------------------------------------------------------------------

class Task:
    """What a call made with task=True gets, in the worker: emit() to the caller, stop, flags."""

    def __init__(self, send, flags: dict[str, threading.Event]):
        self._send, self._flags = send, flags
        self.stop = self.flag("stop")  # set when the caller cancels

    def emit(self, message) -> None:
        self._send(("msg", message))

    def flag(self, name: str) -> threading.Event:
        return self._flags.setdefault(name, threading.Event())


def malloc_trim() -> None:
    """Hand the C heap's free pages back to the system (glibc keeps freed memory in its arenas); elsewhere a no-op."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def _watch_parent(parent: int, mode: str) -> None:
    while os.getppid() == parent:  # the fork server exits when the server does
        time.sleep(0.5)
    sandbox.reap(mode)
    os._exit(0)


def _serve(conn, control, memory_mb: int | None, quiet: bool, modes: Sequence[str]) -> None:
    """A worker's life: answer ("call", serial, fn, args, kwargs, task) from conn until it closes; flags for
    the calls, ("flag", serial, name, on), arrive on control, read by a thread (calls need no thread hop)."""
    mode = sandbox.enter(bool(modes), closing=(conn, control), modes=modes)
    for fd in (0, 1, 2) if quiet else ():  # a print() in the worked-on code reaches no terminal
        os.dup2(os.open(os.devnull, os.O_RDWR), fd)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
    if mode != "pid namespace":  # (PID 1 of a namespace has no parent to watch: its own parent kills it)
        threading.Thread(target=_watch_parent, args=(os.getppid(), mode), daemon=True).start()
    lock, flags = threading.Lock(), {}  # serial -> that call's flags (a flag may arrive before its call)

    def send(message) -> None:
        with lock:
            conn.send(message)

    def read_flags() -> None:
        with contextlib.suppress(EOFError, OSError):
            while True:
                _, serial, name, on = control.recv()
                event = flags.setdefault(serial, {}).setdefault(name, threading.Event())
                event.set() if on else event.clear()

    threading.Thread(target=read_flags, daemon=True).start()
    if memory_mb:  # on top of what the worker holds already (the preloaded modules: about 250 MB with torch)
        sandbox.limit_memory(memory_mb, address_space=bool(modes))
    send(("ready", {"pid": sandbox.host_pid(), "sandbox": mode}))
    while True:
        try:
            _, serial, fn, args, kwargs, with_task = conn.recv()
        except (EOFError, OSError):
            return
        try:
            task = {"task": Task(send, flags.setdefault(serial, {}))} if with_task else {}
            reply = ("ok", fn(*args, **kwargs, **task))
        except BaseException as e:  # noqa: B036 - the code may raise anything, even SystemExit
            kind = "memory" if is_out_of_memory(e) else "raised"
            reply = ("err", kind, f"{type(e).__name__}: {' '.join(str(e).split())[:300]}")
        sandbox.reap(mode)
        flags.pop(serial, None)
        try:
            send(reply)
        except Exception as e:  # e.g. a value that does not pickle
            send(("err", "raised", f"the result could not be sent back: {type(e).__name__}: {e}"[:300]))
        args = kwargs = reply = task = None  # the call's data (an upload: up to 20 MB) not held until the next


# ---- the caller's side ----------------------------------------------------------------------------

@atexit.register
def close_all() -> None:
    """Kill every live worker (and what its code started): at exit, and from sim.__main__.exit_process, whose
    os._exit after an interrupt runs no atexit."""
    for worker in list(_LIVE):
        worker.close()


class Worker:
    """One worker process, replaced when it hangs, crashes or goes over its memory cap. Thread-safe: one call
    at a time (Pool, for callers that must not wait on each other)."""

    def __init__(self, *, memory_mb: int | None = None, quiet: bool = True, name: str = "the work",
                 startup_timeout: float = STARTUP_TIMEOUT, sandbox: Sequence[str] = ()):
        self.memory_mb, self.quiet, self.name, self.startup_timeout = memory_mb, quiet, name, startup_timeout
        self.modes = tuple(sandbox)  # the boxes to try, in order (sim/runtime/sandbox.py MODES); () for none
        self.sandbox = ""  # the box the running worker got ("pid namespace", "seccomp" or "subreaper")
        self.starts = 0  # workers started so far
        self.thread_replacements = 0  # boxed workers replaced because a call left a thread running
        self._runner, self._threads = None, 0  # the process that runs the calls (by the caller's pid), its threads
        self._lock = threading.RLock()  # one call at a time
        self._send_lock = threading.Lock()
        self._proc = self._conn = self._control = None
        self._serial, self._closed = 0, False
        _LIVE.add(self)

    @property
    def pid(self) -> int | None:
        return getattr(self._proc, "pid", None)

    def start(self) -> None:
        """Start the worker in the background, if none runs (the first call waits for it)."""
        threading.Thread(target=self._ensure, daemon=True).start()

    def _ensure(self) -> None:
        with self._lock, contextlib.suppress(OSError, RuntimeError, EOFError):  # the next call says why
            self._spawn()

    def _spawn(self) -> None:
        if self._closed:
            raise RuntimeError("closed")
        if self._proc is not None:
            return
        (mine, theirs), (control_r, control_w) = _CTX.Pipe(), _CTX.Pipe(duplex=False)
        proc = _CTX.Process(target=_serve, args=(theirs, control_r, self.memory_mb, self.quiet, self.modes),
                            daemon=True)
        proc.start()
        theirs.close()
        control_r.close()
        self._proc, self._conn, self._control = proc, mine, control_w
        self.starts += 1
        if not mine.poll(self.startup_timeout):
            raise RuntimeError(f"no word from the worker process in {self.startup_timeout:g} s")
        ready = _message(mine.recv_bytes())
        if ready[0] != "ready" or not isinstance(ready[1], dict):
            raise RuntimeError("the worker process did not say ready")
        self._runner, self.sandbox = ready[1].get("pid"), ready[1].get("sandbox", "")
        self._threads = sandbox.threads(self._runner) if isinstance(self._runner, int) else 0

    def signal(self, name: str, on: bool = True) -> None:
        """Set (or clear) flag `name` of the running call (task.flag(name) in the worker); no-op when idle."""
        control, serial = self._control, self._serial
        if control is not None:
            with self._send_lock, contextlib.suppress(OSError):
                control.send(("flag", serial, name, on))

    def call(self, fn, args=(), kwargs=None, *, timeout: float | None = None, task: bool = False,
             on_message=None, cancelled=None, grace: float = 2.0) -> Reply:
        """fn(*args, **kwargs) in the worker. timeout: seconds (None: none); on expiry the worker and everything
        it started are killed. task=True: fn gets task=; its emit()s reach on_message(message) here. cancelled:
        a function checked every 0.1 s; once true, task.stop is set, and the worker is killed `grace` s later."""
        with self._lock:
            try:
                self._spawn()
            except (OSError, RuntimeError, EOFError) as e:
                self._kill()
                return Reply(False, kind="crashed",
                             message=f"the process for {self.name} did not start ({type(e).__name__}: {e})")
            self._serial += 1
            try:
                self._conn.send(("call", self._serial, fn, tuple(args), dict(kwargs or {}), task))
            except OSError:
                return self._crashed()
            except Exception as e:  # arguments that do not pickle: the caller's mistake, the worker is fine
                return Reply(False, kind="raised", message=f"the call could not be sent: {type(e).__name__}: {e}")
            return self._wait(timeout, on_message, cancelled, grace)

    def _wait(self, timeout, on_message, cancelled, grace) -> Reply:
        deadline = None if timeout is None else time.monotonic() + timeout
        stop_at = None
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            step = left if cancelled is None else min(0.1, 0.1 if left is None else left)
            try:
                ready = self._conn.poll(step)
                msg = _message(self._conn.recv_bytes()) if ready else None
            except (EOFError, OSError):
                return self._crashed()
            except (pickle.UnpicklingError, ValueError, TypeError, AttributeError, IndexError) as e:
                self.replace()
                return Reply(False, kind="crashed", message=f"unreadable reply from the worker: {e}")
            if msg is not None and msg[0] in ("ok", "err"):
                self._retire_if_threaded()
            if msg is not None:
                if msg[0] == "ok":
                    return Reply(True, msg[1])
                if msg[0] == "err" and msg[1] == "memory":  # near its cap, a worker may be unwell: replace it
                    self.replace()
                    return Reply(False, kind="memory", message=f"went over its memory cap of {self.memory_mb} MB "
                                 f"({msg[2]})")  # fmt: skip
                if msg[0] == "err":
                    return Reply(False, kind=msg[1], message=msg[2])
                if msg[0] == "msg" and on_message is not None:
                    on_message(msg[1])  # then the checks below: a call that streams fast still times out or stops
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                self.replace()
                return Reply(False, kind="timeout", message=f"did not finish within {timeout:g} s (an infinite loop?)")
            if cancelled is not None and stop_at is None and cancelled():
                stop_at = now
                self.signal("stop")
            if stop_at is not None and now - stop_at > grace:
                self.replace()
                return Reply(False, kind="cancelled", message="cancelled")

    def _retire_if_threaded(self) -> None:
        """A boxed worker whose call left a thread running (its code's, spinning or not) is replaced: the thread
        would run on between calls, and one more after each file change."""
        if self.modes and self._runner and sandbox.threads(self._runner) > self._threads:
            self.thread_replacements += 1
            self.replace()

    def _crashed(self) -> Reply:
        if self._proc is not None:
            self._proc.join(timeout=1.0)
        code = getattr(self._proc, "exitcode", None)
        self.replace()
        return Reply(False, kind="crashed", exitcode=code, message=f"the process running {self.name} died"
                     f"{'' if code is None else f' (exit code {code})'}; it restarts on the next call")

    def replace(self) -> None:
        """Kill the worker (and all it started), after the call in flight; start the next one in the background."""
        with self._lock:  # reentrant: a call that fails replaces its worker while it holds the lock
            self._kill()
            if not self._closed:
                self.start()

    def _kill(self) -> None:
        proc, conns = self._proc, (self._conn, self._control)
        self._proc = self._conn = self._control = None
        if proc is not None and proc.exitcode is None:
            kill_tree(proc.pid)  # the fork server reaps it: no need to wait (about 30 ms)
        for conn in conns:
            if conn is not None:
                conn.close()

    def close(self) -> None:
        """Kill the worker and everything it started, now, even mid-call (that call answers "crashed"); for
        good: later calls answer "crashed" too."""
        self._closed = True
        proc = self._proc
        if proc is not None and proc.exitcode is None:
            kill_tree(proc.pid)


class Pool:
    """`size` Workers; each call takes the longest-idle one, or waits (first come, first served) for one. A call
    made `who=` someone (a visitor's session) replaces that someone's call still waiting in the line: each caller
    has at most one call in line, so no one fills the line ahead of the others."""

    def __init__(self, size: int, **worker_kwargs):
        self.workers = [Worker(**worker_kwargs) for _ in range(size)]
        self._idle = deque(self.workers)
        self._cond = threading.Condition()
        self._line: deque[list] = deque()  # [who, replaced] of the callers waiting for a worker, oldest first

    @property
    def starts(self) -> int:
        return sum(w.starts for w in self.workers)

    def start(self) -> None:
        for w in self.workers:
            w.start()

    def call(self, fn, args=(), kwargs=None, *, who=None, **options) -> Reply:
        """Worker.call on the first worker free; see there. who: the caller (None: anonymous); a newer call of the
        same caller replaces this one while it waits: it then answers kind "cancelled" without running."""
        me = [who, False]
        with self._cond:
            for ticket in self._line if who is not None else ():
                if ticket[0] == who:
                    ticket[1] = True  # replaced: it leaves the line when it wakes
            self._line.append(me)
            self._cond.notify_all()
            self._cond.wait_for(lambda: me[1] or (self._idle and self._line[0] is me))
            self._line.remove(me)
            if me[1]:
                self._cond.notify_all()
                return Reply(False, kind="cancelled", message="replaced by a newer call of the same caller")
            worker = self._idle.popleft()
            self._cond.notify_all()
        try:
            return worker.call(fn, args, kwargs, **options)
        finally:
            with self._cond:
                self._idle.append(worker)
                self._cond.notify_all()

    def close(self) -> None:
        for w in self.workers:
            w.close()
