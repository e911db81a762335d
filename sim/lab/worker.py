"""What runs inside the lab's worker process (sim.runtime.procs): import the student's file, call, check, probe.

`handle(request)` answers one request with a plain dict (numpy arrays, numbers, strings):

  {"op": "load" | "call" | "check" | "probe", "path": ".../tasks.py", ...}
  load:  import the file (re-imported whenever its mtime or size changes)
  call:  {"func", "args": [array | number], "kwargs"} -> {"value": array}
  check: {"task"} -> the fields of sim.lab.checks.TaskResult
  probe: {"name", "kwargs"} -> {"value": [arrays...]}      (sim.lab.probes)
Replies: {"ok": true, ...} or {"ok": false, "kind": ..., "message": ...}. A MemoryError (the worker's memory
cap, sim.runtime.procs) is not caught here: sim.runtime.procs turns it into kind "memory" and replaces the worker.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import sys

import numpy as np
import torch

from sim.lab import checks, probes
from sim.lab.harness import Failure, call_student, cap
from sim.runtime.procs import is_out_of_memory

_modules: dict[str, tuple[tuple[int, int], object]] = {}  # this worker's imports: path -> (stamp, module or error)


def _stamp(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_mtime_ns, st.st_size


def _import_message(e: BaseException) -> str:
    if isinstance(e, SyntaxError):
        return cap(f"SyntaxError: {e.msg} (line {e.lineno})", 300)
    return cap(f"{type(e).__name__}: {e}", 300)


class _ImportFailed(Exception):
    pass


def _load(path: str):
    """The student's module (cached until the file changes); raises _ImportFailed (or MemoryError)."""
    stamp = _stamp(path)
    cached = _modules.get(path)
    if cached is None or cached[0] != stamp:
        name = f"_grpo_lab_student_{len(sys.modules)}_{stamp[0]}"
        try:
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
        except BaseException as e:  # noqa: B036 - a student's module may even call sys.exit()
            sys.modules.pop(name, None)
            module = MemoryError(str(e)) if is_out_of_memory(e) else e
        cached = _modules[path] = (stamp, module)
    if isinstance(cached[1], MemoryError):
        raise MemoryError(f"at import: {cached[1]}")
    if isinstance(cached[1], BaseException):
        raise _ImportFailed(_import_message(cached[1]))
    return cached[1]


def _to_tensor(x):
    if isinstance(x, np.ndarray):
        return torch.from_numpy(x.astype(np.float64) if x.dtype == bool else x)
    return x


def handle(request: dict) -> dict:
    op = request.get("op")
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
            return {"ok": True, **dataclasses.asdict(checks.check_task(request["task"], module))}
        if op == "call":
            args = [_to_tensor(a) for a in request.get("args", [])]
            out, _ = call_student(module, request["func"], args, request.get("kwargs", {}))
            return {"ok": True, "value": out.double().numpy() if out.dtype != torch.bool else out.numpy()}
        if op == "probe":
            return {"ok": True, "value": list(probes.PROBES[request["name"]](module, **request.get("kwargs", {})))}
    except Failure as f:
        return {"ok": False, "kind": f.kind, "message": str(f)}
    return {"ok": False, "kind": "bad request", "message": f"unknown op {op!r}"}
