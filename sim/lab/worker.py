"""The processes that run a student's lab code, driven by sim.lab.process.Worker.

`zygote(fd)` imports torch once, then waits on a unix socket for "fork" requests, each carrying
one end of a fresh socket pair (SCM_RIGHTS): it forks a *worker* on that socket and answers its
pid; "status PID" answers a finished worker's exit code. It exits when the socket closes.

A worker starts its own session (so the caller can kill it and anything it starts), points its
stdin, stdout and stderr at /dev/null (a student's print() can neither corrupt the replies nor
reach the caller's terminal), says {"ready": true}, then answers one JSON request per line
(sim.lab.wire) with one JSON line:

  {"op": "load" | "call" | "check" | "probe", "path": ".../tasks.py", ...}
  load:  import the file (re-imported whenever its mtime or size changes)
  call:  {"func", "args": [array | number], "kwargs"} -> {"value": array}
  check: {"task"} -> the fields of sim.lab.checks.TaskResult
  probe: {"name", "kwargs"} -> {"value": [arrays...]}      (sim.lab.probes)
Replies: {"ok": true, ...} or {"ok": false, "kind": ..., "message": ...}.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import socket
import sys
import threading
import time

import numpy as np

from sim.lab import wire

_modules: dict[str, tuple[tuple[int, int], object]] = {}  # path -> (stamp, module or exception)
_count = 0


def _stamp(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_mtime_ns, st.st_size


def _import_message(e: BaseException) -> str:
    from sim.lab.harness import cap

    if isinstance(e, SyntaxError):
        return cap(f"SyntaxError: {e.msg} (line {e.lineno})", 300)
    return cap(f"{type(e).__name__}: {e}", 300)


def _load(path: str):
    """The student's module (cached until the file changes); raises _ImportFailed."""
    global _count
    stamp = _stamp(path)
    cached = _modules.get(path)
    if cached is not None and cached[0] == stamp:
        if isinstance(cached[1], BaseException):
            raise _ImportFailed(_import_message(cached[1]))
        return cached[1]
    _count += 1
    name = f"_grpo_lab_student_{_count}"
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    except BaseException as e:  # noqa: B036 - a student's module may even call sys.exit()
        sys.modules.pop(name, None)
        _modules[path] = (stamp, e)
        raise _ImportFailed(_import_message(e)) from None
    _modules[path] = (stamp, module)
    return module


class _ImportFailed(Exception):
    pass


def _to_tensor(x):
    import torch

    if isinstance(x, np.ndarray):
        return torch.from_numpy(x.astype(np.float64) if x.dtype == bool else x)
    return x


def handle(request: dict) -> dict:
    import torch

    from sim.lab import checks, probes
    from sim.lab.harness import Failure, call_student

    op = request.get("op")
    if op == "ping":
        return {"ok": True}
    try:
        module = _load(request["path"])
    except _ImportFailed as e:
        return {"ok": False, "kind": "import failed", "message": str(e)}
    except OSError as e:
        return {"ok": False, "kind": "import failed", "message": f"cannot read the file: {e.strerror}"}
    try:
        if op == "load":
            return {"ok": True}
        if op == "check":
            result = checks.check_task(request["task"], module)
            return {"ok": True, **dataclasses.asdict(result)}
        if op == "call":
            args = [_to_tensor(a) for a in request.get("args", [])]
            out, _ = call_student(module, request["func"], args, request.get("kwargs", {}))
            value = out.double().numpy() if out.dtype != torch.bool else out.numpy()
            return {"ok": True, "value": value}
        if op == "probe":
            value = probes.PROBES[request["name"]](module, **request.get("kwargs", {}))
            return {"ok": True, "value": list(value)}
    except Failure as f:
        return {"ok": False, "kind": f.kind, "message": str(f)}
    return {"ok": False, "kind": "bad request", "message": f"unknown op {op!r}"}


def _watch_parent(parent: int) -> None:
    """Exit when the zygote goes away, even while a student's loop holds the main thread."""
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(0)


def serve(sock: socket.socket) -> None:
    """A worker: answer requests on sock until it closes."""
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    stream = sock.makefile("rwb")
    stream.write(wire.dumps({"ready": True, "pid": os.getpid()}))
    stream.flush()
    for line in stream:
        try:
            reply = handle(wire.loads(line))
        except Exception as e:  # a bug here must not kill the worker silently
            reply = {"ok": False, "kind": "internal", "message": f"{type(e).__name__}: {e}"}
        try:
            data = wire.dumps(reply)
        except (TypeError, ValueError) as e:
            data = wire.dumps({"ok": False, "kind": "wrong type", "message": f"result not understood: {e}"})
        stream.write(data)
        stream.flush()


def zygote(fd: int) -> None:
    """Import torch once, then fork a worker per request (see the module docstring)."""
    import torch

    torch.set_num_threads(1)
    import sim.lab.checks  # noqa: F401 - every import paid once, before any fork
    import sim.lab.probes  # noqa: F401

    control = socket.socket(fileno=fd)
    codes: dict[int, int] = {}

    def reap(block_on: int | None = None) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1 if block_on is None else block_on, 0 if block_on else os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            codes[pid] = os.waitstatus_to_exitcode(status)
            if block_on is not None:
                return

    while True:
        try:
            msg, fds, _, _ = socket.recv_fds(control, 256, 1)
        except OSError:
            return
        if not msg:
            return
        reap()
        if msg.startswith(b"fork") and fds:
            pid = os.fork()
            if pid == 0:  # the worker
                control.close()
                try:
                    serve(socket.socket(fileno=fds[0]))
                finally:
                    os._exit(0)
            os.close(fds[0])
            control.sendall(f"{pid}\n".encode())
        elif msg.startswith(b"status"):
            pid = int(msg.split()[1])
            if pid not in codes:
                reap(block_on=pid)
            control.sendall(f"{codes.pop(pid, 'unknown')}\n".encode())
        else:
            for extra in fds:
                os.close(extra)
