"""The processes that run a student's lab code, from the caller's side (no torch import here).

A *zygote* process (sim/lab/worker.py) imports torch once and then only forks: each *worker* it
forks runs the student's code, one request at a time. `Worker` sends a request and waits for the
reply with a time limit; past the limit it kills the worker (its whole process group) and answers
{"ok": False, "kind": "timeout"}; if the worker dies it answers "crashed"; the next request gets
a freshly forked worker in milliseconds (torch is already imported in the zygote), so a hanging
or crashing student function costs its time limit and nothing more. `shared_worker()` is the one
Worker of this process, used by every `sim.lab.runner.Lab`. This module imports no torch, so a
command line can start the zygote first and import torch itself while the zygote does the same.
"""

from __future__ import annotations

import atexit
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from sim.lab import wire

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_TIMEOUT = 5.0  # seconds for one call of a student's function (the first one also imports the file)
CHECK_TIMEOUT = 15.0  # seconds for all the checks of one task
STARTUP_TIMEOUT = 120.0  # seconds for the zygote to import torch (not charged to the student's code)
MAX_FILE_BYTES = 256 * 1024
ERROR_KINDS = ("raised", "timeout", "wrong shape", "wrong type", "import failed", "crashed", "missing")


@dataclass(frozen=True)
class StudentError:
    """Why a student's function gave no usable value; `message` is plain text, at most 400 characters."""

    kind: str  # one of ERROR_KINDS
    message: str
    func: str = ""

    def __str__(self) -> str:
        return self.message


class LabPathError(ValueError):
    """The lab path is unusable (missing, not a regular file, too large, not .py); str() says why."""


def resolve_lab_path(path: str | os.PathLike) -> Path:
    """The student's tasks.py: `path` itself, or `path/tasks.py` for a directory. Raises LabPathError."""
    p = Path(path).expanduser()
    if p.is_dir():
        p = p / "tasks.py"
    if not p.exists():
        raise LabPathError(f"no such file: {p}")
    if not p.is_file():
        raise LabPathError(f"not a regular file: {p}")
    if p.suffix != ".py":
        raise LabPathError(f"not a Python file (.py): {p}")
    size = p.stat().st_size
    if size > MAX_FILE_BYTES:
        raise LabPathError(f"{p} is {size} bytes; a lab file may have at most {MAX_FILE_BYTES}")
    return p.resolve()


# ---- the worker process --------------------------------------------------------------------------


class Worker:
    """Runs requests in a worker forked from a zygote that has torch imported (sim/lab/worker.py)."""

    def __init__(self, *, startup_timeout: float = STARTUP_TIMEOUT):
        self.startup_timeout = startup_timeout
        self.starts = 0  # workers forked so far (1 + restarts)
        self._zygote: subprocess.Popen | None = None
        self._zsock: socket.socket | None = None  # to the zygote: fork requests, exit codes
        self._sock: socket.socket | None = None  # to the current worker: requests and replies
        self._pid: int | None = None
        self._buf = b""
        self._lock = threading.RLock()  # start() may run inside request()

    @property
    def pid(self) -> int | None:
        """The current worker's process id (None before the first request or after a kill)."""
        return self._pid

    def start(self) -> None:
        """Start the zygote if none runs; returns at once (it imports torch in the background)."""
        with self._lock:
            if self._zygote is None or self._zygote.poll() is not None:
                self._start_zygote()

    def _start_zygote(self) -> None:
        self._close_zygote()
        mine, theirs = socket.socketpair()
        code = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); from sim.lab.worker import zygote; "
                f"zygote({theirs.fileno()})")
        env = dict(os.environ, OMP_NUM_THREADS="1")
        self._zygote = subprocess.Popen([sys.executable, "-c", code], pass_fds=[theirs.fileno()], cwd=ROOT, env=env,
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, start_new_session=True)
        theirs.close()
        self._zsock = mine

    def close(self) -> None:
        """Kill the worker and stop the zygote."""
        with self._lock:
            self._kill()
            self._close_zygote()

    def request(self, message: dict, timeout: float) -> dict:
        """Send one request; the reply dict, or {"ok": False, "kind": "timeout" | "crashed", "message"}."""
        with self._lock:
            try:
                self._ensure_worker()
            except (OSError, RuntimeError) as e:
                self._kill()
                self._close_zygote()
                return {"ok": False, "kind": "crashed", "message": f"the lab worker did not start: {e}"}
            try:
                self._sock.sendall(wire.dumps(message))
            except OSError:
                return self._crashed()
            line = self._read_line(self._sock, time.monotonic() + timeout)
            if line is None:
                return self._crashed()
            if line is _TIMED_OUT:
                self._kill()
                return {"ok": False, "kind": "timeout",
                        "message": f"did not finish within {timeout:g} s (an infinite loop?)"}
            try:
                return wire.loads(line)
            except ValueError as e:
                self._kill()
                return {"ok": False, "kind": "crashed", "message": f"unreadable reply from the worker: {e}"}

    def _ensure_worker(self) -> None:
        if self._sock is not None:
            return
        self.start()
        mine, theirs = socket.socketpair()
        try:
            socket.send_fds(self._zsock, [b"fork"], [theirs.fileno()])
        finally:
            theirs.close()
        deadline = time.monotonic() + self.startup_timeout  # the zygote may still be importing torch
        reply = self._read_line(self._zsock, deadline, zygote=True)
        if reply is None or reply is _TIMED_OUT:
            mine.close()
            raise RuntimeError("no answer from the zygote process (python -m sim.lab.worker)")
        self._sock, self._pid, self._buf = mine, int(reply), b""
        self.starts += 1
        ready = self._read_line(self._sock, time.monotonic() + self.startup_timeout)
        if ready is None or ready is _TIMED_OUT:
            raise RuntimeError("the forked worker did not say ready")

    def _read_line(self, sock: socket.socket, deadline: float, zygote: bool = False):
        """One line (bytes) from sock, None at end of file, or _TIMED_OUT. Zygote replies are unbuffered."""
        buf = b"" if zygote else self._buf
        while b"\n" not in buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return _TIMED_OUT
            ready, _, _ = select.select([sock], [], [], left)
            if not ready:
                continue
            chunk = sock.recv(1 if zygote else 1 << 16)
            if not chunk:
                return None
            buf += chunk
        line, rest = buf.split(b"\n", 1)
        if not zygote:
            self._buf = rest
        return line

    def _exit_code(self, pid: int):
        try:
            self._zsock.sendall(f"status {pid}\n".encode())
            reply = self._read_line(self._zsock, time.monotonic() + 5.0, zygote=True)
            return int(reply) if isinstance(reply, bytes) and reply.lstrip(b"-").isdigit() else None
        except (OSError, ValueError):
            return None

    def _crashed(self) -> dict:
        pid = self._pid
        self._kill(signal_it=False)
        code = self._exit_code(pid) if pid is not None and self._zsock is not None else None
        how = f" (exit code {code})" if code is not None else ""
        return {"ok": False, "kind": "crashed",
                "message": f"the process running the lab code died{how}; it restarts on the next call"}

    def _kill(self, signal_it: bool = True) -> None:
        pid, sock, self._pid, self._sock, self._buf = self._pid, self._sock, None, None, b""
        if pid is not None and signal_it:
            try:
                os.killpg(pid, signal.SIGKILL)  # the worker and anything the student's code started
            except (ProcessLookupError, PermissionError):
                pass
        if sock is not None:
            sock.close()

    def _close_zygote(self) -> None:
        zsock, zygote, self._zsock, self._zygote = self._zsock, self._zygote, None, None
        if zsock is not None:
            zsock.close()  # the zygote exits at end of file
        if zygote is not None:
            try:
                zygote.wait(timeout=5)
            except subprocess.TimeoutExpired:
                zygote.kill()
                zygote.wait()


_TIMED_OUT = object()
_shared: Worker | None = None
_shared_lock = threading.Lock()


def shared_worker() -> Worker:
    """The process-wide worker (started on first use, killed at exit)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Worker()
            atexit.register(_shared.close)
        return _shared
