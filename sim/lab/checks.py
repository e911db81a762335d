"""The lab's checks: one implementation behind `lab/test_tasks.py` (pytest) and `python -m sim lab check`.

Each task has a list of `Case`s, run in order: the chapter's worked numbers first, then
properties against `sim.grpo` (through `sim.lab.solutions`) on random inputs. A case runs the
student's function and passes, or fails with one plain-text line that says in the chapter's
terms what is wrong (see `sim.lab.harness.expect` for how the common mistake is named).

`impl` is anything with the three functions as attributes: the student's imported tasks.py, or
`sim.lab.solutions`. Task 4 is checked with the reference `k3_kl` put in place of the student's
(restored afterwards), so a Task 3 mistake is reported once, under Task 3.

    check_all(module)           -> [TaskResult, TaskResult, TaskResult]
    check_task("k3_kl", module) -> TaskResult        # first failing case, or passed
    run_case(case, module)      -> str | None        # one case: the failure message, or None
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from functools import partial

import torch

from sim.lab import solutions
from sim.lab.harness import REFERENCE, TASKS, Case, Failure, cap, evaluate, expect, random_batch

F64 = torch.float64


def _t(values) -> torch.Tensor:
    return torch.tensor(values, dtype=F64)


def _reference(task, args, kwargs, grad_arg=None):
    out, grad = evaluate(REFERENCE[task], args, kwargs, grad_arg)
    return out.detach(), grad


# ---- Task 2: group advantages -------------------------------------------------------------------


def _adv_shape(n):
    return lambda got: (f"returned shape {got}, expected ({n},): one advantage per response, flat like rewards "
                        "(P*G,); end with .reshape(-1)")


def _adv(impl, rewards, G, expected, *, scale_std=True, eps=1e-4, atol=1e-3, what=""):
    r = _t(rewards)
    what = what or f"rewards {', '.join(f'{x:g}' for x in rewards)} (G = {G})"
    expect(impl, "group_advantages", (r, G), {"scale_std": scale_std, "eps": eps}, expected=_t(expected),
           shape_msg=_adv_shape(len(rewards)), atol=atol, rtol=0.0, what=what)


def _adv_all_equal(impl):
    for rewards in ([1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0]):
        _adv(impl, rewards, 4, [0.0] * 4, atol=1e-6)


def _adv_random(impl):
    g = torch.Generator().manual_seed(2)
    for i, G in enumerate((2, 3, 4, 5, 8, 16, 64)):
        P = int(torch.randint(1, 7, (1,), generator=g))
        if i % 2:  # real-valued rewards
            r = torch.rand(P * G, generator=g, dtype=F64) * 3 - 1
        else:  # 0/1 rewards at a random success rate; some groups come out all-equal
            r = (torch.rand(P * G, generator=g, dtype=F64) < torch.rand(1, generator=g, dtype=F64)).to(F64)
        for scale_std in (True, False):
            eps = 10.0 ** -int(torch.randint(1, 7, (1,), generator=g))
            kwargs = {"scale_std": scale_std, "eps": eps}
            ref, _ = _reference("group_advantages", (r, G), kwargs)
            what = f"random rewards, P = {P}, G = {G}, scale_std = {scale_std}, eps = {eps:g}"
            expect(impl, "group_advantages", (r, G), kwargs, expected=ref, shape_msg=_adv_shape(P * G),
                   atol=1e-5, rtol=1e-5, what=what + " (against sim.grpo.group_advantages, ddof=0)")


ADVANTAGE_CASES = [
    Case("group_advantages", "chapter_1001", "rewards 1, 0, 0, 1 (G = 4): mean 0.5, population std 0.5, so A = "
         "+1, -1, -1, +1", partial(_adv, rewards=[1, 0, 0, 1], G=4, expected=[1, -1, -1, 1])),
    Case("group_advantages", "chapter_1000", "rewards 1, 0, 0, 0: mean 0.25, std sqrt(0.25 x 0.75) = 0.433, so the "
         "rare success gets +1.732 and each failure -0.577",
         partial(_adv, rewards=[1, 0, 0, 0], G=4, expected=[1.732, -0.577, -0.577, -0.577])),
    Case("group_advantages", "all_equal", "all-equal groups 1, 1, 1, 1 and 0, 0, 0, 0 give A = 0 (eps keeps 0 / 0 "
         "away): such a group teaches nothing", _adv_all_equal),
    Case("group_advantages", "per_group", "two prompts in one batch, 1, 0, 0, 1 | 1, 0, 0, 0 (P = 2, G = 4): each "
         "group is normalised on its own, +1, -1, -1, +1 | +1.732, -0.577, -0.577, -0.577",
         partial(_adv, rewards=[1, 0, 0, 1, 1, 0, 0, 0], G=4,
                 expected=[1, -1, -1, 1, 1.732, -0.577, -0.577, -0.577])),
    Case("group_advantages", "no_std", "scale_std=False (Dr. GRPO): 1, 0, 0, 0 give r - mean(r) = +0.75, -0.25, "
         "-0.25, -0.25, no division",
         partial(_adv, rewards=[1, 0, 0, 0], G=4, expected=[0.75, -0.25, -0.25, -0.25], scale_std=False, atol=1e-6)),
    Case("group_advantages", "eps", "eps is the one passed in: eps = 0.5 with 1, 0, 0, 1 gives +-0.5 / (0.5 + 0.5) "
         "= +-0.5", partial(_adv, rewards=[1, 0, 0, 1], G=4, expected=[0.5, -0.5, -0.5, 0.5], eps=0.5, atol=1e-6)),
    Case("group_advantages", "random", "random rewards (0/1 and real-valued), G = 2 to 64, P = 1 to 6, scale_std on "
         "and off: equal to sim.grpo.group_advantages with the population std (ddof=0)", _adv_random),
]


# ---- Task 3: k3 ---------------------------------------------------------------------------------

LOG_PI, LOG_REF = math.log(0.6), math.log(0.5)  # the chapter's token: pi = 0.6, pi_ref = 0.5


def _k3_shape(shape):
    return lambda got: (f"returned shape {got} for logp of shape {shape}: k3 is per token, the same shape as logp "
                        "(do not sum or average)")


NO_GRAD_K3 = ("k3 has no gradient with respect to logp: keep it a torch expression of logp (no .item(), "
              ".detach(), numpy or math)")


def _k3(impl, logp, ref_logp, expected, *, grad_arg=None, expected_grad=None, atol=1e-6, what=""):
    expect(impl, "k3_kl", (logp, ref_logp), {}, expected=expected, shape_msg=_k3_shape(tuple(logp.shape)),
           grad_arg=grad_arg, expected_grad=expected_grad, atol=atol, rtol=1e-5, what=what, no_grad_msg=NO_GRAD_K3)


def _k3_value(impl):
    _k3(impl, _t([LOG_PI]), _t([LOG_REF]), _t([0.0157]), atol=1e-4, what="pi = 0.6, pi_ref = 0.5")  # 0.01565


def _k3_slope(impl):
    _k3(impl, _t([LOG_PI]), _t([LOG_REF]), _t([0.0157]), grad_arg=0, expected_grad=_t([0.167]), atol=5e-4,
        what="d k3 / d log pi at pi = 0.6, pi_ref = 0.5")


def _k3_zero(impl):
    logp = torch.log(torch.linspace(0.05, 0.95, 7, dtype=F64))
    _k3(impl, logp, logp.clone(), torch.zeros(7, dtype=F64), atol=1e-9, what="pi = pi_ref")


def _k3_shapes(impl):
    g = torch.Generator().manual_seed(3)
    for shape in ((), (5,), (2, 3, 4)):
        logp = -torch.rand(shape, generator=g, dtype=F64) * 3
        ref_logp = -torch.rand(shape, generator=g, dtype=F64) * 3
        expected, _ = _reference("k3_kl", (logp, ref_logp), {})
        _k3(impl, logp, ref_logp, expected, what=f"logp of shape {shape}")


def _k3_random(impl):
    g = torch.Generator().manual_seed(4)
    logp = torch.log(torch.rand(40, generator=g, dtype=F64) * 0.95 + 0.01)
    ref_logp = logp + 1.5 * torch.randn(40, generator=g, dtype=F64)  # |log u| up to about 4
    expected, grad = _reference("k3_kl", (logp, ref_logp), {}, 0)
    _k3(impl, logp, ref_logp, expected, grad_arg=0, expected_grad=grad,
        what="random log-probs (against sim.grpo.k3_kl)")


K3_CASES = [
    Case("k3_kl", "chapter_value", "pi = 0.6, pi_ref = 0.5: u = 0.5 / 0.6 = 0.833 and k3 = u - log u - 1 = 0.0157",
         _k3_value),
    Case("k3_kl", "chapter_slope", "its derivative with respect to log pi (by autograd) is 1 - u = 0.167", _k3_slope),
    Case("k3_kl", "zero", "k3 = 0 exactly when the two models agree (pi = pi_ref)", _k3_zero),
    Case("k3_kl", "shapes", "per token, any shape: a scalar, (5,) and (2, 3, 4) come back in the same shape",
         _k3_shapes),
    Case("k3_kl", "random", "random log-probs, |log u| up to about 4: value (hence >= 0) and d k3 / d log pi equal "
         "sim.grpo.k3_kl", _k3_random),
]


# ---- Task 4: the GRPO loss ----------------------------------------------------------------------

NO_GRAD_LOSS = ("the loss has no gradient with respect to logp: keep it a torch expression (no .item(), .detach() "
                "or numpy)")


def _loss_shape(got):
    return (f"returned shape {got}, expected a scalar (shape ()): average over each response's tokens, then over "
            "responses")


def _loss(impl, batch, kwargs, expected, expected_grad, *, atol=1e-6, what=""):
    expect(impl, "grpo_loss", batch, kwargs, expected=expected, shape_msg=_loss_shape, grad_arg=0,
           expected_grad=expected_grad, atol=atol, rtol=1e-5, what=what, no_grad_msg=NO_GRAD_LOSS)


def _chapter_group():
    """The chapter's group at rho = 1: A = +1, -1, -1, +1, lengths 3, 3, 4, 3, padded to T = 4."""
    g = torch.Generator().manual_seed(5)
    logp = torch.log(torch.rand(4, 4, generator=g, dtype=F64) * 0.9 + 0.05)  # (B, T)
    lengths = _t([3, 3, 4, 3])
    mask = (torch.arange(4)[None, :] < lengths[:, None]).to(F64)  # (B, T)
    adv = _t([1, -1, -1, 1])
    return (logp, logp.clone(), logp.clone(), adv, mask), lengths


def _loss_weights(impl):
    batch, lengths = _chapter_group()
    adv, mask = batch[3], batch[4]
    weights = adv / (4 * lengths)  # +1/12, -1/12, -1/16, +1/12
    _loss(impl, batch, {"clip_eps": 0.2, "beta": 0.0}, _t(0.0), -weights[:, None] * mask,
          what="the chapter's group at rho = 1, beta = 0")


def _clip_batch():
    """The chapter's token 0.40 -> 0.50 (rho = 1.25) with A = +1 and A = -1, and its mirror 0.40 -> 0.30."""
    logp = torch.log(_t([[0.50], [0.50], [0.30], [0.30]]))  # (B, T) = (4, 1)
    old = torch.log(_t([[0.40], [0.40], [0.40], [0.40]]))
    return (logp, old, logp.clone(), _t([1, -1, -1, 1]), torch.ones(4, 1, dtype=F64))


def _loss_clip(impl):
    # objective per token: min(1.25, 1.2) = 1.2; min(-1.25, -1.2) = -1.25; min(-0.75, -0.8) = -0.8; min(0.75, 0.8)
    # = 0.75. loss = -(1.2 - 1.25 - 0.8 + 0.75) / 4 = 0.025; only the unclipped tokens get -rho*A/4.
    _loss(impl, _clip_batch(), {"clip_eps": 0.2, "beta": 0.0}, _t(0.025), _t([[0.0], [0.3125], [0.0], [-0.1875]]),
          what="rho = 1.25, 1.25, 0.75, 0.75 with A = +1, -1, -1, +1, clip_eps = 0.2")


def _loss_clip_eps(impl):
    # clip_eps = 0.3: every ratio is inside [0.7, 1.3], so loss = -mean(rho*A) = 0 and d/d logp = -rho*A/4
    _loss(impl, _clip_batch(), {"clip_eps": 0.3, "beta": 0.0}, _t(0.0), _t([[-0.3125], [0.3125], [0.1875], [-0.1875]]),
          what="the same ratios with clip_eps = 0.3")


def _loss_beta(impl):
    logp, ref = _t([[LOG_PI]]), _t([[LOG_REF]])
    u = 0.5 / 0.6
    batch = (logp, logp.clone(), ref, _t([0.0]), torch.ones(1, 1, dtype=F64))
    _loss(impl, batch, {"clip_eps": 0.2, "beta": 0.04}, _t(0.04 * (u - math.log(u) - 1)), _t([[0.04 * (1 - u)]]),
          atol=1e-7, what="beta = 0.04, A = 0, pi = 0.6, pi_ref = 0.5")


def _loss_padding(impl):
    g = torch.Generator().manual_seed(6)
    logp, old, ref, adv, _ = random_batch(g, 3, 5)
    mask = _t([[1, 1, 1, 1, 1], [1, 1, 0, 0, 0], [1, 1, 1, 0, 0]])
    pad = mask == 0
    logp, old, ref = logp.masked_fill(pad, -0.01), old.masked_fill(pad, -4.0), ref.masked_fill(pad, -6.0)
    kwargs = {"clip_eps": 0.2, "beta": 0.1}
    expected, grad = _reference("grpo_loss", (logp, old, ref, adv, mask), kwargs, 0)
    _loss(impl, (logp, old, ref, adv, mask), kwargs, expected, grad,
          what="lengths 5, 2, 3 padded to T = 5 with wild values on the padding (against sim.grpo.policy_loss)")


def _loss_random(impl):
    g = torch.Generator().manual_seed(7)
    shapes = ((1, 1), (2, 7), (4, 4), (8, 3), (5, 9), (6, 6))
    for i, (B, T) in enumerate(shapes):
        batch = random_batch(g, B, T)
        clip_eps = round(0.1 + 0.2 * float(torch.rand(1, generator=g)), 3)
        beta = round(0.01 + 0.5 * float(torch.rand(1, generator=g)), 3)
        kwargs = {} if i == len(shapes) - 1 else {"clip_eps": clip_eps, "beta": beta}
        expected, grad = _reference("grpo_loss", batch, kwargs, 0)
        setting = f"clip_eps = {clip_eps}, beta = {beta}" if kwargs else "the defaults clip_eps = 0.2, beta = 0.04"
        _loss(impl, batch, kwargs, expected, grad,
              what=f"random batch B = {B}, T = {T}, {setting} (against sim.grpo.policy_loss, loss_type='grpo')")


LOSS_CASES = [
    Case("grpo_loss", "chapter_weights", "rho = 1, beta = 0, the chapter's group A = +1, -1, -1, +1 with lengths 3, "
         "3, 4, 3: loss 0 and each token's d loss / d log pi = -A_i / (G |y_i|) = -1/12, +1/12, +1/16, -1/12 (mean "
         "over each response's real tokens, then over responses); 0 on padding", _loss_weights),
    Case("grpo_loss", "chapter_clip", "the chapter's clip example: pi_old = 0.40 -> pi = 0.50 gives rho = 1.25 > 1.2; "
         "with A > 0 the token contributes no gradient, with A < 0 it still does (the min keeps rho A); mirrored at "
         "rho = 0.75 < 0.8", _loss_clip),
    Case("grpo_loss", "clip_eps", "clip_eps is the one passed in: with clip_eps = 0.3 the same four tokens are all "
         "inside the clip range and all get a gradient", _loss_clip_eps),
    Case("grpo_loss", "beta_k3", "beta = 0.04 at A = 0, pi = 0.6, pi_ref = 0.5: loss = +beta k3 = 0.04 x 0.0157 = "
         "0.000626, d loss / d log pi = beta (1 - u) = +0.0067 (descent pulls pi back toward pi_ref)", _loss_beta),
    Case("grpo_loss", "padding", "padding (mask = 0) changes nothing, even with wild values there: no loss, no "
         "gradient", _loss_padding),
    Case("grpo_loss", "random", "random batches, B = 1 to 8, T = 1 to 9 (B = T included), ratios well away from 1, "
         "beta > 0, ragged masks: loss and d loss / d log pi equal sim.grpo.policy_loss(loss_type='grpo')",
         _loss_random),
]

CASES = {"group_advantages": ADVANTAGE_CASES, "k3_kl": K3_CASES, "grpo_loss": LOSS_CASES}


# ---- running ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TaskResult:
    task: str  # key of TASKS
    passed: bool
    n_cases: int  # cases run (all of them when passed)
    message: str = ""  # the first failure, plain text
    case: str = ""  # what the failing case asserts
    kind: str = ""  # how it failed: Failure.kind, or the runner's "timeout", "crashed", "import failed"

    def line(self) -> str:
        """One line for the terminal: 'Task 2  group_advantages  pass (7 checks)' or '... FAIL: message'."""
        info = TASKS[self.task]
        head = f"Task {info.number}  {info.func:<16}  "
        if self.passed:
            return head + f"pass ({self.n_cases} checks)"
        return head + f"FAIL: {self.message}"


@contextlib.contextmanager
def _reference_k3(impl):
    """Task 4 runs with the reference k3_kl in place of the student's (when impl lets us set it)."""
    old = getattr(impl, "k3_kl", None)
    try:
        impl.k3_kl = solutions.k3_kl
    except (AttributeError, TypeError):
        yield
        return
    try:
        yield
    finally:
        impl.k3_kl = old


def _run(case: Case, impl) -> Failure | None:
    ctx = _reference_k3(impl) if case.task == "grpo_loss" else contextlib.nullcontext()
    try:
        with ctx:
            case.run(impl)
    except Failure as f:
        return f
    return None


def run_case(case: Case, impl) -> str | None:
    """One case: None if it passes, else the failure message (plain text, capped)."""
    failure = _run(case, impl)
    return None if failure is None else cap(str(failure))


def check_task(task: str, impl) -> TaskResult:
    """Run the task's cases in order; stop at the first failure."""
    cases = CASES[task]
    for i, case in enumerate(cases):
        failure = _run(case, impl)
        if failure is not None:
            return TaskResult(task, False, i + 1, cap(str(failure)), case.asserts, failure.kind)
    return TaskResult(task, True, len(cases))


def check_all(impl) -> list[TaskResult]:
    return [check_task(task, impl) for task in TASKS]
