"""The engine's refusals beyond a setting's range, each sentence written once.

sim raises them (`refused(key, ...)`), and assets/js/engine.js throws the same sentence: `python -m sim.engine_js`
ships REFUSALS in its DECLARATIONS block, and the engine fills the same {placeholders}. A value goes into a
sentence already written as text (each language writes its numbers its own way: `shape_text` here, `shapeText`
there). A setting's own range is refused in its declaration's words instead (sim.settings.Setting).
"""

from __future__ import annotations

REFUSALS = {
    "difficulties_count": "difficulties must have n_prompts = {n_prompts} values, got {got}",
    "memory": "this run needs about {mb} MB of memory ({arrays} arrays of (iterations + 1) x seeds x prompts = "
              "{rows} x {seeds} x {prompts} numbers); the cap is {cap} MB: use fewer iterations, seeds or prompts",
    "diverged": "the run diverged at iteration {t} (logits not finite): lower lr, lr_w or beta",
    "table_by_count": "scale must be group or none for a table by count (batch couples groups), got {scale}",
    "table_scale": "a custom advantage table needs scale group or none (the batch std is not a table)",
    "table_size": "the advantage table needs G + 1 = {entries} entries per column",
    "table_finite": "the advantage table holds NaN or infinite values",
    "success_shape": "success must be a (problems, strategies) table with >= 2 strategies, got {shape}",
    "success_range": "success must hold probabilities in [0, 1]",
    "init_count": "init_probs must have one entry per strategy ({strategies}), got {shape}",
    "init_sum": "init_probs must be positive and sum to 1 (a softmax never reaches 0)",
    "philox_key": "a Philox key is a 64-bit integer in [0, 2**64-1], got {key}",
}


def refused(which: str, /, **values) -> ValueError:
    """The ValueError for REFUSALS[which], its placeholders filled with `values` (each already text or a number)."""
    return ValueError(REFUSALS[which].format(**values))


def shape_text(shape: tuple[int, ...]) -> str:
    """An array's shape for a refusal: "3 numbers", "2 x 3", "one number"."""
    if len(shape) == 0:
        return "one number"
    return f"{shape[0]} numbers" if len(shape) == 1 else " x ".join(str(n) for n in shape)
