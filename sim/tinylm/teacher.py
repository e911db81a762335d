"""The SFT teacher: demonstrations with two kinds of mistakes, as a student's worked answers might have.

1. Near misses, anywhere: with probability `label_noise` the written answer is a + b + d, d drawn
   uniformly from (-10, -1, +1, +10). The model learns this spread, so at pass@1 ~ 0.5 its most likely
   answer is usually right while a sample often is not: the state GRPO sharpens.
2. A blind spot: the ripple carry. When the ones column carries into a tens column whose digits sum to 9
   (45+57: 5+7 = 12, carry; 4+5+1 = 10, carry again), the teacher forgets the final carry and writes
   "02" instead of "102", with probability `ripple_slip` (no near miss on top). That is 4.4% of all
   problems (14 of the 300 held out). Since "02" is far from "102", the model learns the mistake itself,
   not a spread around the right answer: on these problems a sample is almost never right, and
   coverage (pass@k at large k) is no longer saturated, as in the chapter's lab.

Without the blind spot every held-out problem has p(answer) >= 0.2 at the SFT stopping point, and 64
samples solve all 300 (measured: pass@64 1.000); with a near miss of the right answer as the blind spot
(92 for 102) the model still samples 102 as a near miss of 92 (p ~ 0.04) and ~2 problems stay unsolved.
"""

from __future__ import annotations

import numpy as np
import torch

from sim.tinylm.data import answer_tokens
from sim.tinylm.tokens import EOS, PAD

NEAR_MISSES = np.array([-10, -1, 1, 10])


def ripple_carry(problems: np.ndarray) -> np.ndarray:
    """(P, 2) -> (P,) bool: the ones digits carry and the tens digits sum to 9, so the carry ripples into
    the hundreds (45+57 = 102). The answer is always 10d with d the ones digit of a + b."""
    a, b = np.asarray(problems).reshape(-1, 2).T
    return (a % 10 + b % 10 >= 10) & (a // 10 + b // 10 == 9)


def teacher_targets(
    problems: np.ndarray, label_noise: float, ripple_slip: float, rng: np.random.Generator
) -> torch.Tensor:
    """The teacher's written answers for (P, 2) problems, as (P, 4) response ids (see the module docstring)."""
    P = len(problems)
    wrong = rng.random(P) < label_noise  # (P,)
    delta = np.where(wrong, rng.choice(NEAR_MISSES, size=P), 0)  # (P,)
    slip = ripple_carry(problems) & (rng.random(P) < ripple_slip)  # (P,)
    # answer_tokens writes a + b; shifting b by delta writes a + b + delta (b may leave 10..99, harmless here)
    out = answer_tokens(np.stack([problems[:, 0], problems[:, 1] + delta], axis=1))  # (P, 4)
    ones = torch.from_numpy(problems[slip].sum(axis=1) % 10)  # (S,)
    forgot = torch.stack([torch.zeros_like(ones), ones, torch.full_like(ones, EOS), torch.full_like(ones, PAD)], 1)
    out[torch.from_numpy(slip)] = forgot  # "0d" <eos>: the hundreds' carry forgotten
    return out
