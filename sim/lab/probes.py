"""What the app pages ask of a student's lab functions, computed the same way for the reference.

Each probe takes the function(s) to run (the student's, through `sim.lab.harness.call_student`,
or the reference from `sim.lab.solutions`) and returns plain numpy arrays. The runner runs a
probe on the student's code in its worker process and on the reference in the caller, so the
two sides of every comparison come from one implementation.

    advantage_table(impl, G, scale_std, eps)   -> (table (G+1, 2), rows where answers of one kind differ)
    k3_curve(impl, u)                          -> (k3 (N,), d k3 / d log pi (N,))
    loss_and_grad(impl, logp, ..., clip_eps, beta) -> (loss (), d loss / d logp (B, T))
"""

from __future__ import annotations

import numpy as np
import torch

from sim.lab.harness import Failure, call_student

F64 = torch.float64


def _tensor(x) -> torch.Tensor:
    return torch.as_tensor(np.asarray(x, dtype=np.float64))


def count_rewards(G: int) -> torch.Tensor:
    """The (G+1)*G rewards of G+1 groups: group k has k ones (correct answers) then G-k zeros."""
    k = torch.arange(G + 1)[:, None]  # (G+1, 1)
    return (torch.arange(G)[None, :] < k).to(F64).reshape(-1)  # ((G+1)*G,)


def advantage_table(impl, G: int, scale_std: bool = True, eps: float = 1e-4, tol: float = 1e-6):
    """[A of a correct answer, A of a wrong answer] in a group of G with k = 0..G correct: (G+1, 2).

    One call of impl.group_advantages on `count_rewards(G)`. Where a group has no answer of a
    kind (k = 0: no correct one; k = G: no wrong one) the entry is 0. The toy engine trains
    from such a table, so it needs one advantage per answer kind: `inconsistent` lists the k
    whose answers of one kind got different advantages (the table then holds the first one).
    """
    rewards = count_rewards(G)
    adv, _ = call_student(impl, "group_advantages", (rewards, G), {"scale_std": scale_std, "eps": eps})
    if adv.shape != rewards.shape:
        raise Failure(f"group_advantages returned shape {tuple(adv.shape)} for {rewards.numel()} rewards; expected "
                      f"({rewards.numel()},)", "wrong shape")
    a = adv.double().reshape(G + 1, G).numpy()  # (G+1, G): row k = the group with k correct
    k = np.arange(G + 1)  # (G+1,)
    is_correct = np.arange(G)[None, :] < k[:, None]  # (G+1, G): the first k answers are the correct ones
    first_correct = a[:, 0]  # meaningful where k >= 1
    first_wrong = a[k, np.minimum(k, G - 1)]  # answer k is the first wrong one, where k < G
    first = np.where(is_correct, first_correct[:, None], first_wrong[:, None])  # (G+1, G)
    differs = ~np.isclose(a, first, rtol=tol, atol=tol, equal_nan=True)
    inconsistent = np.nonzero(differs.any(axis=1))[0].tolist()
    table = np.stack([np.where(k > 0, first_correct, 0.0), np.where(k < G, first_wrong, 0.0)], axis=1)  # (G+1, 2)
    return table, inconsistent


def k3_curve(impl, u):
    """k3 and d k3 / d log pi at each u = pi_ref / pi (log pi = 0, log pi_ref = log u)."""
    u = _tensor(u).reshape(-1)  # (N,)
    logp, ref_logp = torch.zeros_like(u), torch.log(u)
    k3, grad = call_student(impl, "k3_kl", (logp, ref_logp), {}, grad_arg=0)
    if k3.shape != u.shape:
        raise Failure(f"k3_kl returned shape {tuple(k3.shape)} for {u.numel()} tokens; expected ({u.numel()},)",
                      "wrong shape")
    grad = np.full(u.shape, np.nan) if grad is None else grad.double().numpy()
    return k3.double().numpy(), grad


def loss_and_grad(impl, logp, old_logp, ref_logp, adv, mask, clip_eps: float = 0.2, beta: float = 0.04):
    """The GRPO loss (a 0-d array) and d loss / d logp (B, T); NaN gradient if the loss has none."""
    args = tuple(_tensor(x) for x in (logp, old_logp, ref_logp, adv, mask))
    loss, grad = call_student(impl, "grpo_loss", args, {"clip_eps": clip_eps, "beta": beta}, grad_arg=0)
    if loss.dim() != 0:
        raise Failure(f"grpo_loss returned shape {tuple(loss.shape)}; expected a scalar", "wrong shape")
    grad = np.full(args[0].shape, np.nan) if grad is None else grad.double().numpy()
    return loss.double().numpy(), grad


PROBES = {"advantage_table": advantage_table, "k3_curve": k3_curve, "loss_and_grad": loss_and_grad}
