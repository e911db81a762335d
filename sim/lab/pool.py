"""The lab's processes and the file they run, from the caller's side (no torch import here).

A student's code runs in workers of `lab_pool()` (sim.runtime.procs: forked from a fork server that imported torch
once; a time limit per call, a memory cap, everything the code started killed after each call, a hung or
crashed worker replaced). Two workers, so that one hanging check never makes another page wait. This module
imports no torch, so a command line can start the pool first and import torch itself meanwhile.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

from sim.runtime.files import user_path
from sim.runtime.procs import MODES, Pool

DEFAULT_TIMEOUT = 5.0  # seconds for one call of a student's function (the first one also imports the file)
CHECK_TIMEOUT = 15.0  # seconds for all the checks of one task
MAX_FILE_BYTES = 256 * 1024
MEMORY_ENV = "GRPO_LAB_MEMORY_MB"  # the memory cap of a lab worker, MB (default MEMORY_MB)
MEMORY_MB = 1024  # what a student's code may allocate, beyond the worker's own (torch: about 250 MB)
WORKERS = 2
ERROR_KINDS = ("raised", "timeout", "memory", "wrong shape", "wrong type", "import failed", "crashed", "missing")


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
    p = user_path(path)
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


def memory_mb(environ=None) -> int:
    """The cap from GRPO_LAB_MEMORY_MB if it is a whole number of MB from 512 to 65536, else MEMORY_MB."""
    raw = (os.environ if environ is None else environ).get(MEMORY_ENV, "").strip()
    return int(raw) if raw.isdigit() and 512 <= int(raw) <= 65536 else MEMORY_MB


@functools.cache
def lab_pool() -> Pool:
    """The process's lab workers (started on first use, killed at exit)."""
    return Pool(WORKERS, memory_mb=memory_mb(), name="the lab code", sandbox=MODES)  # boxed: sim/runtime/sandbox.py
