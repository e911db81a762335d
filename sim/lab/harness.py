"""The machinery under the lab's checks: call the student's function safely, compare, name the mistake.

`sim.lab.checks` holds the cases (the chapter's numbers and the properties); this module holds
what they share: `Failure` (a check failed, with a plain-text message), `expect` (run the
student's function, compare value and gradient with the expected ones, and on a difference name
the common mistake from `sim.lab.mistakes` that reproduces the student's output, checked once
more on a second random input so that look-alike mistakes are told apart), `random_batch`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from sim.lab import solutions
from sim.lab.mistakes import MISTAKES
from sim.runtime.procs import is_out_of_memory

MAX_ELEMENTS = 4_000_000  # the most values a student's function may return

MAX_MESSAGE = 400  # characters of one failure message


@dataclass(frozen=True)
class TaskInfo:
    number: int  # the chapter's task number
    func: str  # function name in tasks.py
    title: str
    signature: str


TASKS = {
    "group_advantages": TaskInfo(2, "group_advantages", "Group advantages",
                                 "group_advantages(rewards, G, scale_std=True, eps=1e-4)"),
    "k3_kl": TaskInfo(3, "k3_kl", "The k3 estimator", "k3_kl(logp, ref_logp)"),
    "grpo_loss": TaskInfo(4, "grpo_loss", "The GRPO loss",
                          "grpo_loss(logp, old_logp, ref_logp, adv, mask, clip_eps=0.2, beta=0.04)"),
}
REFERENCE = {name: getattr(solutions, name) for name in TASKS}


class Failure(Exception):
    """A check failed; str(self) is the plain-text message for the student.

    kind: "mismatch" (a wrong value), "raised" (the student's code raised), "wrong type",
    "wrong shape", "missing" (no such function in the file).
    """

    def __init__(self, message: str, kind: str = "mismatch"):
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Case:
    task: str  # key of TASKS
    name: str  # short id (pytest id)
    asserts: str  # what the case asserts, with the chapter's numbers (shown on the Lab page)
    run: Callable  # run(impl) -> None, raises Failure


# ---- calling the student's code -----------------------------------------------------------------


def cap(text: str, n: int = MAX_MESSAGE) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 3] + "..."


def _fmt(x: torch.Tensor, n: int = 6) -> str:
    flat = x.detach().reshape(-1).double().tolist()
    body = ", ".join(f"{v:+.4g}" if math.isfinite(v) else str(v) for v in flat[:n])
    more = f", ... ({len(flat)} values)" if len(flat) > n else ""
    return f"[{body}{more}]" if x.dim() else body


class _InPlace(Exception):
    pass


def evaluate(fn, args, kwargs, grad_arg):
    """fn(*args, **kwargs) on fresh copies of the inputs -> (output, d output.sum() / d args[grad_arg] or None).

    Raises _InPlace if fn changed one of its input tensors.
    """
    copies = [a.detach().clone() if isinstance(a, torch.Tensor) else a for a in args]
    if grad_arg is not None:
        copies[grad_arg].requires_grad_(True)
    out = fn(*copies, **kwargs)
    for a, c in zip(args, copies, strict=True):
        if isinstance(a, torch.Tensor) and not torch.equal(a, c.detach()):
            raise _InPlace
    grad = None
    if grad_arg is not None and isinstance(out, torch.Tensor) and out.requires_grad:
        (grad,) = torch.autograd.grad(out.sum(), copies[grad_arg], allow_unused=True)
    return out, grad


def call_student(impl, task, args, kwargs, grad_arg=None):
    """Run the student's function; any way it goes wrong becomes a Failure with a plain message."""
    fn = getattr(impl, task, None)
    if not callable(fn):
        raise Failure(f"tasks.py has no function {TASKS[task].signature}", "missing")
    try:
        out, grad = evaluate(fn, args, kwargs, grad_arg)
    except _InPlace:
        raise Failure("changed one of its input tensors in place: compute the result into a new tensor",
                      "raised") from None
    except NotImplementedError as e:
        raise Failure(f"not implemented yet ({cap(e, 160) or 'NotImplementedError'})", "raised") from None
    except TypeError as e:
        hint = f"keep the signature {TASKS[task].signature}"
        raise Failure(f"raised TypeError: {cap(e, 200)} ({hint})", "raised") from None
    except (Exception, SystemExit) as e:  # the student's code: report it, never let it escape
        if is_out_of_memory(e):  # the worker's memory cap: sim.runtime.procs reports it and replaces the worker
            raise MemoryError(cap(e, 200)) from None
        raise Failure(f"raised {type(e).__name__}: {cap(e, 240)}", "raised") from None
    if not isinstance(out, torch.Tensor):
        raise Failure(f"returned {type(out).__name__}, not a torch tensor", "wrong type")
    if out.is_complex() or out.numel() > MAX_ELEMENTS:
        raise Failure(f"returned a {out.dtype} tensor of shape {tuple(out.shape)}; expected real numbers, one per "
                      "input value", "wrong type")
    return out.detach(), grad


def _same(a, b, atol=1e-6, rtol=1e-5) -> bool:
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        return a is None and b is None
    a, b = a.detach().double(), b.detach().double()
    return a.shape == b.shape and bool(torch.allclose(a, b, atol=atol, rtol=rtol, equal_nan=True))


# ---- naming the mistake ------------------------------------------------------------------------

_PROBE_SEED = 12345


def _probe_inputs(task):
    """A second, random input that tells look-alike mistakes apart."""
    g = torch.Generator().manual_seed(_PROBE_SEED)
    if task == "group_advantages":
        r = torch.rand(3 * 5, generator=g, dtype=torch.float64)
        r[5:10] = 0.5  # one all-equal group
        return (r, 5), {"scale_std": True, "eps": 1e-3}, None
    if task == "k3_kl":
        return (torch.randn(7, generator=g, dtype=torch.float64) - 1,
                torch.randn(7, generator=g, dtype=torch.float64) - 1), {}, 0
    return random_batch(g, 5, 6), {"clip_eps": 0.15, "beta": 0.1}, 0


def _diagnose(impl, task, args, kwargs, grad_arg, got, got_grad, expected, expected_grad) -> str | None:
    """The message of the mistake that reproduces the student's output on this input, or None.

    Mistakes that agree with the expected output here cannot be the cause and are skipped. If
    several reproduce it, a second random input (`_probe_inputs`) picks the one that also agrees
    with the student's code there.
    """
    def outputs(fn, a, kw, ga):
        try:
            out, grad = evaluate(fn, a, kw, ga)
            return out, grad, None
        except Exception as e:
            return None, None, type(e)

    def same(value, grad, v2, g2):
        return _same(value, v2) and (grad_arg is None or _same(grad, g2))

    matching = []
    for m in MISTAKES[task]:
        out, grad, err = outputs(m.fn, args, kwargs, grad_arg)
        if err is None and same(out, grad, got, got_grad) and not same(out, grad, expected, expected_grad):
            matching.append(m)
    if len(matching) <= 1:
        return matching[0].message if matching else None
    p_args, p_kwargs, p_grad = _probe_inputs(task)
    s_out, s_grad, s_err = outputs(getattr(impl, task), p_args, p_kwargs, p_grad)
    for m in matching:
        m_out, m_grad, m_err = outputs(m.fn, p_args, p_kwargs, p_grad)
        if (m_err is not None and s_err is not None) or (
            m_err is None and s_err is None and _same(m_out, s_out) and (p_grad is None or _same(m_grad, s_grad))
        ):
            return m.message
    return matching[0].message


def expect(impl, task, args, kwargs=None, *, expected, shape_msg, grad_arg=None, expected_grad=None,
            atol=1e-5, rtol=1e-5, what="", no_grad_msg=""):
    """Run the student's `task` on args and compare with expected (value and optionally gradient)."""
    kwargs = kwargs or {}
    got, grad = call_student(impl, task, args, kwargs, grad_arg)
    if got.shape != expected.shape:
        raise Failure(shape_msg(tuple(got.shape)), "wrong shape")
    got_d = got.double()
    value_ok = bool(torch.allclose(got_d, expected.double(), atol=atol, rtol=rtol))
    if grad_arg is not None and value_ok and grad is None:
        raise Failure(no_grad_msg)
    grad_ok = grad_arg is None or (grad is not None and bool(
        torch.allclose(grad.double(), expected_grad.double(), atol=atol, rtol=rtol)))
    if value_ok and grad_ok:
        return
    named = _diagnose(impl, task, args, kwargs, grad_arg, got, grad, expected, expected_grad)
    if named:
        raise Failure(named)
    if torch.isnan(got_d).any():
        raise Failure(f"{what}: returned NaN ({_fmt(got)})")
    if not value_ok:
        err = (got_d - expected.double()).abs().max().item()
        raise Failure(f"{what}: expected {_fmt(expected)}, got {_fmt(got)} (largest difference {err:.3g})")
    if grad is None:
        raise Failure(no_grad_msg)
    raise Failure(f"{what}: value right but d/d logp wrong: expected {_fmt(expected_grad)}, got {_fmt(grad)}")


def random_batch(g: torch.Generator, B: int, T: int, spread: float = 0.5):
    """(logp, old_logp, ref_logp, adv, mask), float64, with ratios well away from 1 and ragged masks.

    logp is the log of a probability in [0.05, 0.95]; old_logp and ref_logp differ from it by
    N(0, spread^2) and N(0, 0.25), so ratios spread over about e^(+-spread); each response has
    1..T real tokens.
    """
    logp = torch.log(torch.rand(B, T, generator=g, dtype=torch.float64) * 0.9 + 0.05)  # (B, T)
    old = logp + spread * torch.randn(B, T, generator=g, dtype=torch.float64)
    ref = logp + 0.5 * torch.randn(B, T, generator=g, dtype=torch.float64)
    adv = torch.randn(B, generator=g, dtype=torch.float64)
    lengths = torch.randint(1, T + 1, (B,), generator=g)
    mask = (torch.arange(T)[None, :] < lengths[:, None]).to(torch.float64)  # (B, T)
    return logp, old, ref, adv, mask
