"""Run a student's lab file safely: in a separate process, with a time limit, results as plain data.

The app pages and `python -m sim lab check` use this module; nothing else runs a student's code.
Code is only ever loaded from a path on the server's own disk (chosen by whoever started it,
e.g. GRPO_LAB_DIR), never from the browser.

    lab = load_lab("my-lab")                 # a directory holding tasks.py, or the .py file itself
    lab.check_all()                          # [TaskResult x 3], cached until the file changes
    lab.call("k3_kl", logp, ref_logp)        # torch.Tensor, or a StudentError (never raises for the student)
    lab.advantages([1, 0, 0, 0])             # Comparison: student vs reference for one group
    lab.k3_curve(u)                          # (Comparison of k3, Comparison of d k3 / d log pi) over u = pi_ref/pi
    lab.loss_and_grad(logp, old, ref, adv, mask, clip_eps=0.2, beta=0.04)   # (loss, d loss / d logp)
    lab.advantage_table(G=8)                 # Comparison of the (G+1, 2) table the toy trains with

A `Comparison` holds `student` (numpy or None), `reference` (numpy), `error` (StudentError or
None) and `report` (the dict of `compare`: ok, message, shapes, NaN count, largest error,
mismatch mask); `comparison.ok` says whether they agree.

The student's code runs in the workers of `lab_pool()` (sim/lab/pool.py on sim/runtime/procs.py: forked from a
fork server that imported torch once, so a call costs well under a millisecond; two workers, shared by every
Lab of the process, so a hanging check never holds up another page). A request past its time limit kills
the worker and everything the student's code started, and answers a "timeout" StudentError; over the memory
cap, "memory"; one that kills the worker, "crashed"; a fresh worker is started at once. A timeout is
remembered until the file changes. The student's file is re-imported when its mtime or size changes.

The server's lab comes from the environment: `lab_from_env()` reads GRPO_LAB_DIR (and
GRPO_LAB_TIMEOUT, seconds per task's checks) and returns the process-wide Lab for that path
(`get_lab`), so every page and session shares one Lab and its cached check results.
"""

from __future__ import annotations

import functools
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from sim.lab import probes, solutions, worker
from sim.lab.checks import TASKS, TaskResult
from sim.lab.harness import cap
from sim.lab.limits import parse_timeout
from sim.lab.pool import (  # noqa: F401 - re-exported: the runner is the pages' one import
    CHECK_TIMEOUT,
    DEFAULT_TIMEOUT,
    ERROR_KINDS,
    MAX_FILE_BYTES,
    MEMORY_ENV,
    LabPathError,
    StudentError,
    lab_pool,
    resolve_lab_path,
)
from sim.runtime.procs import Pool

# ---- comparing with the reference -----------------------------------------------------------------


def compare(student, reference, *, atol: float = 1e-5, rtol: float = 1e-5) -> dict:
    """How a student's value differs from the reference, as a small plain dict a page can render.

    Keys: ok (bool), message (one plain-text line), shape / expected_shape (lists), n (values),
    n_nan (NaN where the reference has a number), n_mismatch, max_abs_err (float or None),
    worst_index (list or None), mismatch (nested lists of bool, the reference's shape; None if
    the shapes differ), atol, rtol. A value matches when |s - r| <= atol + rtol |r|.
    """
    ref = np.asarray(reference, dtype=np.float64)
    out = {"ok": False, "message": "", "shape": None, "expected_shape": list(ref.shape), "n": int(ref.size),
           "n_nan": 0, "n_mismatch": None, "max_abs_err": None, "worst_index": None, "mismatch": None,
           "atol": atol, "rtol": rtol}
    if student is None:
        out["message"] = "no value to compare"
        return out
    s = np.asarray(student, dtype=np.float64)
    out["shape"] = list(s.shape)
    if s.shape != ref.shape:
        out["message"] = f"shape {tuple(s.shape)}, but the reference has shape {tuple(ref.shape)}"
        return out
    bad = ~np.isclose(s, ref, atol=atol, rtol=rtol, equal_nan=True)  # (ref shape)
    nan = np.isnan(s) & ~np.isnan(ref)
    err = np.where(np.isnan(s) | np.isnan(ref), np.where(bad, np.inf, 0.0), np.abs(s - ref))
    out.update(n_nan=int(nan.sum()), n_mismatch=int(bad.sum()), mismatch=bad.tolist())
    if ref.size:
        worst = np.unravel_index(int(np.argmax(err)), ref.shape)
        out["max_abs_err"] = float(err[worst]) if np.isfinite(err[worst]) else None
        out["worst_index"] = [int(i) for i in worst]
    if not bad.any():
        out["ok"] = True
        out["message"] = f"matches the reference (largest difference {float(err.max(initial=0.0)):.2g})"
    elif nan.any():
        out["message"] = f"NaN at {int(nan.sum())} of {ref.size} values where the reference has a number"
    else:
        at = f" at index {tuple(out['worst_index'])}" if ref.ndim else ""
        out["message"] = (f"{int(bad.sum())} of {ref.size} values differ from the reference (largest difference "
                          f"{out['max_abs_err']:.3g}{at})")
    return out


@dataclass(frozen=True)
class Comparison:
    """A student's value beside the reference's, with `compare`'s report (or the error that prevented it)."""

    reference: np.ndarray
    student: np.ndarray | None
    error: StudentError | None = None
    report: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.report.get("ok"))

    @property
    def message(self) -> str:
        return self.report.get("message", "") if self.error is None else self.error.message


def _failed(reference, error: StudentError) -> Comparison:
    return Comparison(np.asarray(reference), None, error, {"ok": False, "kind": error.kind, "message": error.message})


def _compared(reference, student, **tol) -> Comparison:
    return Comparison(np.asarray(reference), np.asarray(student), None, compare(student, reference, **tol))


# ---- a student's lab ------------------------------------------------------------------------------


def _plain(x):
    if isinstance(x, torch.Tensor):
        return x.detach().double().numpy()
    return np.asarray(x, dtype=np.float64) if isinstance(x, list | tuple) else x


class Lab:
    """One student's tasks.py, run in a worker process with a time limit. Thread-safe."""

    def __init__(self, path, *, pool: Pool | None = None, timeout: float = DEFAULT_TIMEOUT,
                 check_timeout: float = CHECK_TIMEOUT):
        self.path = resolve_lab_path(path)
        self.pool = pool if pool is not None else lab_pool()
        self.timeout = timeout
        self.check_timeout = check_timeout
        self._checked: tuple[tuple[int, int], list[TaskResult]] | None = None
        self._hung: dict[str, tuple] = {}  # function -> (file stamp, reply) of a call that timed out
        self._cache_lock = threading.Lock()
        self.pool.start()  # the workers start in the background while the caller goes on

    def stamp(self) -> tuple[int, int] | None:
        """(mtime_ns, size) of the file, or None if it is gone."""
        try:
            st = self.path.stat()
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size

    def _request(self, message: dict, timeout: float | None, func: str = "") -> dict:
        """One request to a worker. A function (or task) that timed out is not run again until the file
        changes: every page and session that asks anything of a hanging function pays its time limit once."""
        try:
            resolve_lab_path(self.path)  # it may have been removed or grown since
        except LabPathError as e:
            return {"ok": False, "kind": "import failed", "message": str(e)}
        stamp = self.stamp()
        hung = self._hung.get(func)
        if func and hung is not None and hung[0] == stamp:
            return hung[1]
        got = self.pool.call(worker.handle, ({**message, "path": str(self.path)},), timeout=timeout or self.timeout)
        reply = got.value if got.ok else {"ok": False, "kind": got.kind, "message": got.message}
        if func and reply.get("kind") == "timeout":
            message = reply.get("message", "") + " (not run again until the file changes)"
            self._hung[func] = (stamp, {**reply, "message": message})
        return reply

    def _error(self, reply: dict, func: str = "") -> StudentError:
        kind = reply.get("kind", "crashed")
        message = cap(reply.get("message", ""), 400)
        if kind == "import failed":
            message = f"{self.path.name} does not import: {message}"
        elif kind == "memory":
            message = cap(f"{self.path.name} {message}; the cap is {MEMORY_ENV}", 400)
        return StudentError(kind, message, func)

    def load(self, timeout: float | None = None) -> StudentError | None:
        """Import the file (if changed); None when it imports, else why not."""
        reply = self._request({"op": "load"}, timeout)
        return None if reply.get("ok") else self._error(reply)

    def call(self, func: str, *args, timeout: float | None = None, expect_shape: tuple | None = None, **kwargs):
        """The student's `func(*args, **kwargs)` as a float64 torch tensor, or a StudentError."""
        if func not in TASKS:
            raise ValueError(f"func must be one of {tuple(TASKS)}, got {func!r}")
        reply = self._request({"op": "call", "func": func, "args": [_plain(a) for a in args], "kwargs": kwargs},
                              timeout, func)
        if not reply.get("ok"):
            return self._error(reply, func)
        value = torch.from_numpy(np.asarray(reply["value"], dtype=np.float64))
        if expect_shape is not None and tuple(value.shape) != tuple(expect_shape):
            return StudentError("wrong shape", f"{func} returned shape {tuple(value.shape)}, expected "
                                f"{tuple(expect_shape)}", func)
        return value

    def check(self, task: str, timeout: float | None = None) -> TaskResult:
        """The task's checks (sim.lab.checks) on the student's code, in the worker."""
        reply = self._request({"op": "check", "task": task}, timeout or self.check_timeout, task)
        if not reply.get("ok"):
            err = self._error(reply, task)
            return TaskResult(task, False, 0, err.message, "", err.kind)
        return TaskResult(**{k: reply[k] for k in ("task", "passed", "n_cases", "message", "case", "kind")})

    def check_all(self, timeout: float | None = None) -> list[TaskResult]:
        """Every task's result, cached until the file's mtime or size changes."""
        stamp = self.stamp()
        with self._cache_lock:
            if stamp is not None and self._checked is not None and self._checked[0] == stamp:
                return list(self._checked[1])
            results = [self.check(task, timeout) for task in TASKS]
            if stamp is not None and not any(r.kind == "crashed" for r in results):  # a timeout is remembered
                self._checked = (stamp, results)
            return list(results)

    def _probe(self, name: str, kwargs: dict, func: str):
        reply = self._request({"op": "probe", "name": name, "kwargs": kwargs}, None, func)
        if not reply.get("ok"):
            return self._error(reply, func)
        return reply["value"]

    # -- what the pages draw --

    def advantages(self, rewards, scale_std: bool = True, eps: float = 1e-4) -> Comparison:
        """The student's advantages for ONE group of rewards (G = len(rewards)) beside the reference."""
        r = torch.as_tensor(np.asarray(rewards, dtype=np.float64)).reshape(-1)
        ref = solutions.group_advantages(r, r.numel(), scale_std=scale_std, eps=eps).numpy()
        got = self.call("group_advantages", r, r.numel(), scale_std=scale_std, eps=eps, expect_shape=tuple(r.shape))
        return _failed(ref, got) if isinstance(got, StudentError) else _compared(ref, got.numpy())

    def k3_curve(self, u) -> tuple[Comparison, Comparison]:
        """The student's k3 and d k3 / d log pi over u = pi_ref / pi, each beside the reference."""
        ref_k3, ref_slope = probes.k3_curve(solutions, u)
        got = self._probe("k3_curve", {"u": np.asarray(u, dtype=np.float64)}, "k3_kl")
        if isinstance(got, StudentError):
            return _failed(ref_k3, got), _failed(ref_slope, got)
        return _compared(ref_k3, got[0]), _compared(ref_slope, got[1])

    def loss_and_grad(self, logp, old_logp, ref_logp, adv, mask, clip_eps: float = 0.2,
                      beta: float = 0.04) -> tuple[Comparison, Comparison]:
        """The student's loss and d loss / d logp (B, T) on this batch, each beside the reference."""
        kwargs = dict(logp=logp, old_logp=old_logp, ref_logp=ref_logp, adv=adv, mask=mask)
        kwargs = {k: np.asarray(_plain(v), dtype=np.float64) for k, v in kwargs.items()}
        ref_loss, ref_grad = probes.loss_and_grad(solutions, **kwargs, clip_eps=clip_eps, beta=beta)
        got = self._probe("loss_and_grad", {**kwargs, "clip_eps": clip_eps, "beta": beta}, "grpo_loss")
        if isinstance(got, StudentError):
            return _failed(ref_loss, got), _failed(ref_grad, got)
        return _compared(ref_loss, got[0]), _compared(ref_grad, got[1])

    def advantage_table(self, G: int, scale_std: bool = True, eps: float = 1e-4) -> Comparison:
        """The (G+1, 2) table [A of a correct answer, A of a wrong answer] for k = 0..G correct.

        From ONE call of the student's group_advantages on the G+1 groups "k ones, then zeros"
        (sim.lab.probes.advantage_table); compared with the same table from the reference.
        A group where two answers of one kind got different advantages makes the comparison fail
        (report["inconsistent"] lists those k): the count-based toy cannot use such advantages.
        """
        ref, _ = probes.advantage_table(solutions, G, scale_std, eps)
        got = self._probe("advantage_table", {"G": int(G), "scale_std": bool(scale_std), "eps": float(eps)},
                          "group_advantages")
        if isinstance(got, StudentError):
            return _failed(ref, got)
        table, inconsistent = np.asarray(got[0]), [int(k) for k in got[1]]
        result = _compared(ref, table)
        result.report["inconsistent"] = inconsistent
        if inconsistent:
            result.report["ok"] = False
            ks = ", ".join(str(k) for k in inconsistent[:5])
            result.report["message"] = (f"answers of the same kind got different advantages in the group(s) with "
                                        f"k = {ks} correct; the toy needs one advantage per kind. "
                                        + result.report["message"])
        return result


def load_lab(path, **kwargs) -> Lab:
    """A Lab for `path` (a directory with tasks.py, or the file). Raises LabPathError with a plain message."""
    return Lab(path, **kwargs)


# ---- the server's lab ----------------------------------------------------------------------------

LAB_ENV = "GRPO_LAB_DIR"  # the lab the app runs: a directory holding tasks.py, or the .py file
TIMEOUT_ENV = "GRPO_LAB_TIMEOUT"  # seconds allowed for each task's checks (default CHECK_TIMEOUT)


def get_lab(path, *, check_timeout: float = CHECK_TIMEOUT, pool=None) -> Lab:
    """The one Lab for this path in this process (pages share it, and its cached check results)."""
    return _lab(resolve_lab_path(path), check_timeout, pool)


@functools.cache
def _lab(resolved: Path, check_timeout: float, pool) -> Lab:  # one per (file, limit, pool)
    return Lab(resolved, check_timeout=check_timeout, pool=pool)


def lab_from_env(environ=None, pool=None) -> tuple[Lab | None, str | None]:
    """(the server's Lab, None), (None, None) when GRPO_LAB_DIR is unset, or (None, why it is unusable).
    pool: what runs the student's code (default lab_pool(); the app's server passes its own wrapper).

    GRPO_LAB_DIR is read from the server's environment, set by whoever starts it; nothing a
    browser sends can choose the file. GRPO_LAB_TIMEOUT (seconds, > 0) bounds each task's checks.
    """
    environ = os.environ if environ is None else environ
    raw = environ.get(LAB_ENV, "").strip()
    if not raw:
        return None, None
    timeout = CHECK_TIMEOUT
    raw_timeout = environ.get(TIMEOUT_ENV, "").strip()
    if raw_timeout:
        try:
            timeout = parse_timeout(raw_timeout, TIMEOUT_ENV)  # the CLI's --timeout range (sim/lab/limits.py)
        except ValueError as e:
            return None, str(e)
    try:
        return get_lab(raw, check_timeout=timeout, pool=pool), None
    except (LabPathError, OSError) as e:  # OSError: e.g. a name too long for the file system
        return None, f"{LAB_ENV}: {e}"


def mismatched(comparison: Comparison) -> list[bool]:
    """Per value, whether the student's differs (flattened; all False when there is nothing to compare)."""
    flags = comparison.report.get("mismatch")
    if flags is None:
        return []
    out: list[bool] = []

    def walk(x):
        if isinstance(x, list):
            for y in x:
                walk(y)
        else:
            out.append(bool(x))

    walk(flags)
    return out
