"""Memory estimates for TinyLM, checked before anything is allocated.

A run whose estimate exceeds the cap is refused with the numbers (MemoryCapError, a ValueError), so
`--prompts 4096 -G 1024` says "needs about 58 GB, the cap is 2 GB" instead of dying in the allocator.

The estimate counts the tensors that dominate, in bytes of the compute dtype (float64, 8 bytes):

  model: parameters N = C (2 V + block + 2) + L (12 C^2 + 13 C) (tested equal to the model's own count);
         the trainer holds the policy, pi_ref, gradient, flat gradient and AdamW's m and v: 6 N values.
  GRPO step, B = P * G rows of T = 4 response tokens (the largest of sampling and the loss with autograd):
         per row and token, each layer keeps ~ 20 C values for the backward (LayerNorms, q k v, attention
         output, the 4C-wide MLP twice, residuals), plus the logits' V-wide softmax twice.
  evaluation: sampling `eval_samples` answers for the 300 held-out problems in batches of <= 8192 rows.

Then x MARGIN. Measured growth of peak resident memory (ru_maxrss, float64, one thread) against the estimate:
GRPO P x G = 16 x 8: 12 MB (estimate 29 MB); 64 x 32: 214 MB (259); 256 x 32: 790 MB (1016); 512 x 64:
2473 MB (4050); evaluation 300 x 64 samples: 495 MB (629), the default run's peak. An order-of-magnitude
guard, not an allocator; tests/test_tinylm_inputs.py checks it stays above a measured peak.
"""

from __future__ import annotations

from sim.tinylm.model import ModelConfig
from sim.tinylm.tokens import MAX_NEW_TOKENS, PROMPT_LEN
from sim.validate import env_number

BYTES_PER_VALUE = 8  # float64, the dtype TinyLM computes in (model.DTYPE)
MiB = 2**20
# One cap for every TinyLM allocation (checkpoint, SFT, GRPO, evaluation); a server operator may change it.
MEMORY_CAP_BYTES = int(env_number("TINYLM_MEMORY_CAP_MB", 2048, 1, 2**20) * MiB)  # 1 MB to 1 TB
EVAL_BATCH_ROWS = 8192  # evaluate.sample_correct_counts samples this many rows at a time
HELDOUT_PROBLEMS = 300
MARGIN = 1.25  # measured peaks were 0.8-1.05x the unscaled sum (see below)


class MemoryCapError(ValueError):
    """A TinyLM model or run would need more memory than MEMORY_CAP_BYTES."""


def n_params(cfg: ModelConfig) -> int:
    """Number of parameters of TinyLM(cfg), from the config alone (nothing is built)."""
    C, L, V = cfg.d_model, cfg.n_layer, cfg.vocab_size
    per_layer = 2 * C + (3 * C * C + 3 * C) + (C * C + C) + 2 * C + (4 * C * C + 4 * C) + (4 * C * C + C)  # 12C²+13C
    return V * C + cfg.block_size * C + L * per_layer + 2 * C + C * V  # embeddings, blocks, ln_f, head


def model_bytes(cfg: ModelConfig) -> int:
    """Bytes of one copy of the parameters."""
    return n_params(cfg) * BYTES_PER_VALUE


def _rows_bytes(rows: int, cfg: ModelConfig, tokens: int, with_grad: bool) -> int:
    """Activations of `rows` sequences over `tokens` positions (prompt read once per row here: upper bound)."""
    per_token = cfg.n_layer * (20 * cfg.d_model if with_grad else 6 * cfg.d_model) + 2 * cfg.vocab_size
    return rows * tokens * per_token * BYTES_PER_VALUE


def run_bytes(prompts_per_iter: int, group_size: int, model: ModelConfig, eval_samples: int = 64) -> int:
    """Estimated peak bytes of one SFT-checkpoint -> GRPO -> pass@k run (see the module docstring)."""
    weights = 6 * model_bytes(model)
    rows = prompts_per_iter * group_size
    step = _rows_bytes(rows, model, MAX_NEW_TOKENS + 1, with_grad=True)
    eval_rows = min(HELDOUT_PROBLEMS * eval_samples, EVAL_BATCH_ROWS)
    evaluation = _rows_bytes(eval_rows, model, PROMPT_LEN + MAX_NEW_TOKENS, with_grad=False)
    evaluation += HELDOUT_PROBLEMS * eval_samples * (PROMPT_LEN + 2) * 8  # int64 prompt ids and answers, all rows
    return int(MARGIN * (weights + max(step, evaluation)))


def describe(n_bytes: int) -> str:
    """Human-readable size: '1.5 GB', '340 MB', '12 kB' (decimal units, two significant digits)."""
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n_bytes >= size:
            value = n_bytes / size
            return f"{value:.2g} {unit}" if value < 10 else f"{value:.0f} {unit}"
    return f"{n_bytes} B"


def check_run(prompts_per_iter: int, group_size: int, model: ModelConfig, eval_samples: int = 64) -> int:
    """The estimate of run_bytes, or MemoryCapError naming the numbers and the cap."""
    need = run_bytes(prompts_per_iter, group_size, model, eval_samples)
    if need > MEMORY_CAP_BYTES:
        raise MemoryCapError(
            f"this run needs about {describe(need)} of memory (P = {prompts_per_iter} prompts x G = {group_size} "
            f"responses, {eval_samples} evaluation samples, a {n_params(model):,}-parameter model), over the cap "
            f"of {describe(MEMORY_CAP_BYTES)}: use fewer prompts per iteration or a smaller group"
        )
    return need
