"""Problems, the held-out split and the verifier.

Every problem is a pair (a, b) of two-digit numbers, 10 <= a, b <= 99: 90 * 90 = 8100 problems.
A fixed set of 300 is held out (chosen by HELDOUT_SEED, the same for every run) and never used
as a training prompt; SFT and GRPO draw their prompts from the other 7800.

The verifier is the chapter's one line, reward = 1.0 if response == answer else 0.0, where the
response is the text before the first <eos>. `verify` is that line on strings; `rewards` is the
same check on a batch of token ids (tested equal to `verify`).
"""

from __future__ import annotations

import numpy as np
import torch

from sim.tinylm.tokens import EOS, MAX_NEW_TOKENS, NAMES, PAD, encode

PLUS, EQUALS = encode("+=")

LOW, HIGH = 10, 99  # operands are two-digit numbers
HELDOUT_SIZE = 300
HELDOUT_SEED = 15  # fixed: the held-out set is part of the task, not of a run


def all_problems() -> np.ndarray:
    """Every (a, b) with two-digit a and b, in order. Shape (8100, 2)."""
    a, b = np.meshgrid(np.arange(LOW, HIGH + 1), np.arange(LOW, HIGH + 1), indexing="ij")
    return np.stack([a.ravel(), b.ravel()], axis=1)


def split(heldout_size: int = HELDOUT_SIZE) -> tuple[np.ndarray, np.ndarray]:
    """(train, heldout): disjoint, together all problems. The held-out set never depends on a run's seed."""
    problems = all_problems()
    if not 1 <= heldout_size < len(problems):
        raise ValueError(f"heldout_size must be in [1, {len(problems) - 1}], got {heldout_size}")
    order = np.random.default_rng(HELDOUT_SEED).permutation(len(problems))
    heldout = problems[np.sort(order[:heldout_size])]
    train = problems[np.sort(order[heldout_size:])]
    return train, heldout


def prompt_text(a: int, b: int) -> str:
    return f"{a}+{b}="


def answer_text(a: int, b: int) -> str:
    return str(a + b)


def prompt_tokens(problems: np.ndarray) -> torch.Tensor:
    """(P, 2) problems -> (P, 6) prompt token ids: a//10, a%10, '+', b//10, b%10, '='."""
    a, b = np.asarray(problems, dtype=np.int64).reshape(-1, 2).T  # (P,), (P,)
    plus, eq = np.full_like(a, PLUS), np.full_like(a, EQUALS)
    return torch.from_numpy(np.stack([a // 10, a % 10, plus, b // 10, b % 10, eq], axis=1))


def answer_tokens(problems: np.ndarray) -> torch.Tensor:
    """(P, 2) problems -> (P, 4) target response ids: answer digits, <eos>, then <pad>.

    The same ids as encode(answer_text(a, b)) + [EOS], padded (tested), without a Python loop.
    Sums from 0 to 999 are supported (a near-miss demonstration can leave 10..99).
    """
    s = np.asarray(problems, dtype=np.int64).reshape(-1, 2).sum(axis=1)  # (P,)
    if len(s) and (s.min() < 0 or s.max() > 999):
        raise ValueError(f"answers must be in [0, 999], got {s.min()}..{s.max()}")
    digits = np.stack([s // 100, s // 10 % 10, s % 10], axis=1)  # (P, 3) hundreds, tens, ones
    n = 1 + (s >= 10) + (s >= 100)  # (P,) number of digits
    out = np.full((len(s), MAX_NEW_TOKENS), PAD, dtype=np.int64)
    col = np.arange(MAX_NEW_TOKENS)  # (4,)
    src = np.clip(col[None, :] + 3 - n[:, None], 0, 2)  # (P, 4) which digit lands in each column
    write = col[None, :] < n[:, None]
    out[write] = np.take_along_axis(digits, src, axis=1)[write]
    out[np.arange(len(s)), n] = EOS
    return torch.from_numpy(out)


def response_text(ids: list[int]) -> str:
    """The text a response says: its characters before the first <eos> (<pad> shown as '_', never correct)."""
    out = []
    for i in ids:
        if int(i) == EOS:
            break
        out.append("_" if int(i) == PAD else NAMES[int(i)])
    return "".join(out)


def verify(response: str, answer: str) -> float:
    """The chapter's verifier: exact match."""
    return 1.0 if response == answer else 0.0


def completion_mask(responses: torch.Tensor) -> torch.Tensor:
    """(B, T) sampled ids -> (B, T) float mask: 1 up to and including the first <eos>, 0 after it.

    A response without <eos> (truncated at T tokens) keeps all T tokens.
    """
    is_eos = (responses == EOS).long()
    before = torch.cumsum(is_eos, dim=1) - is_eos  # (B, T) number of <eos> strictly before t
    return (before == 0).float()


def rewards(responses: torch.Tensor, problems: np.ndarray) -> torch.Tensor:
    """Batched verifier: (B, T) sampled ids, (B, 2) problems -> (B,) rewards in {0., 1.}.

    Correct iff the tokens up to and including the first <eos> equal the answer's digits + <eos>;
    the same decision as verify(response_text(ids), answer_text(a, b)).
    """
    target = answer_tokens(problems)  # (B, 4)
    T = responses.shape[1]
    if T < target.shape[1]:
        target = target[:, :T]
    keep = target != PAD  # (B, T) digits and <eos> of the answer
    same = (responses[:, : target.shape[1]] == target) | ~keep
    ok = same.all(dim=1) & keep.any(dim=1) & (target == EOS).any(dim=1)
    return ok.float()
