"""TinyLM's portable random stream (GRPOConfig.rng = "philox"): the draws the browser's trainer makes too.

torch's multinomial draws from torch's generator, which no browser has. With rng="philox" every draw of a run
comes instead from sim/rng.py's Philox4x32-10 at a counter named by what it draws (sim/rng.py lists the layout):
the GRPO prompts of iteration t, token s of batch row r in iteration t, token s of sample j of held-out problem q.
assets/js/tinylm_grpo.js computes the same uniforms and applies the same inverse CDF, so with the same seed the
browser samples the same prompts and completions (tests/test_tinylm_js.py checks the first iteration's), however
its batch is split between Workers: a uniform depends only on its counter.

A run in float32 (the browser's) and one in float64 (sim's) then agree until the first token whose uniform falls
within float32 rounding of a probability boundary (about 1e-7 a draw), after which they are two draws of the same
experiment; so the proof is the first iteration, and over a whole run the figures are compared with the spread of
sim's recorded seeds.
"""

from __future__ import annotations

import numpy as np
import torch

from sim.rng import TINYLM_EVAL, TINYLM_PROMPTS, TINYLM_TOKENS, key_words, stream_uniforms
from sim.tinylm.tokens import MAX_NEW_TOKENS

RNGS = ("torch", "philox")


def _key(seed: int) -> tuple[int, int]:
    k0, k1 = key_words([seed])
    return int(k0[0]), int(k1[0])


def prompt_indices(seed: int, iteration: int, n: int, count: int) -> np.ndarray:
    """(count,) indices into the N = n training problems for GRPO iteration `iteration` (0-based)."""
    k0, k1 = _key(seed)
    u = stream_uniforms(k0, k1, iteration, 0, TINYLM_PROMPTS, count)  # (count,)
    return np.minimum(np.floor(u * n).astype(np.int64), n - 1)


def token_uniforms(seed: int, iteration: int, rows: int) -> torch.Tensor:
    """(rows, MAX_NEW_TOKENS) float64: the uniforms of the batch rows' tokens in GRPO iteration `iteration`."""
    k0, k1 = _key(seed)
    r = np.arange(rows, dtype=np.uint64)
    return torch.from_numpy(stream_uniforms(k0, k1, iteration, r, TINYLM_TOKENS, MAX_NEW_TOKENS))


def eval_uniforms(seed: int, problems: int, n: int) -> torch.Tensor:
    """(problems * n, MAX_NEW_TOKENS) float64, problem-major: sample j of held-out problem q at row q n + j."""
    k0, k1 = _key(seed)
    q = np.repeat(np.arange(problems, dtype=np.uint64), n)
    j = np.tile(np.arange(n, dtype=np.uint64), problems)
    return torch.from_numpy(stream_uniforms(k0, k1, q, j, TINYLM_EVAL, MAX_NEW_TOKENS))


def inverse_cdf(probs: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """(B, V) probabilities, (B,) uniforms -> (B, 1) tokens: the number of cumulative probabilities at or below
    u * (their total), at most V - 1 (scaling by the total keeps a sum that rounds below 1 from running off the
    end; a token of probability 0 is never picked)."""
    cdf = probs.cumsum(dim=-1)  # (B, V)
    k = (cdf <= (u.to(cdf.dtype) * cdf[:, -1])[:, None]).sum(dim=-1)
    return k.clamp(max=probs.shape[-1] - 1)[:, None]
