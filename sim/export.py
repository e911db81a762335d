"""Export a simulator setup: settings as JSON, the run history as CSV, and the equivalent
Hugging Face TRL `GRPOConfig` arguments (TRL 1.16.0) as a Python snippet.

The toy's knobs map onto TRL like this (chapter name -> GRPOConfig field):

    G (group size)          -> num_generations
    beta (KL coefficient)   -> beta                  (chapter/DeepSeekMath 0.04, TRL default 0.0)
    std scaling on / off    -> scale_rewards="group" / "none"   (off is Dr. GRPO)
    mu (updates per batch)  -> num_iterations
    epsilon (clip)          -> epsilon
    aggregation             -> loss_type             ("grpo" is the chapter's; TRL's default is "dapo")
    seed                    -> seed

Some toy settings have no TRL counterpart; `trl_grpo_config` returns a note for each instead of
inventing an argument.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sim.validate import check_number

BASELINES = ("grpo", "rloo", "none")
LOSS_TYPES = ("grpo", "bnpo", "dapo", "dr_grpo")
SCHEMA = "grpo-playground/settings/v1"


@dataclass(frozen=True)
class TrlExport:
    """GRPOConfig keyword arguments plus notes on what does not translate."""

    args: dict[str, object]
    notes: list[str] = field(default_factory=list)


def trl_grpo_config(
    *,
    group_size: int,
    beta: float,
    scale_std: bool,
    baseline: str = "grpo",
    mu: int = 1,
    clip_eps: float = 0.2,
    loss_type: str = "grpo",
    learning_rate: float | None = None,
    dynamic_sampling: bool = False,
    seed: int | None = None,
) -> TrlExport:
    """The TRL `GRPOConfig(...)` arguments closest to these toy settings, with notes.

    >>> trl_grpo_config(group_size=8, beta=0.04, scale_std=True).args["scale_rewards"]
    'group'
    """
    check_number("group_size", group_size, 2, 4096)
    check_number("beta", beta, 0.0, 10.0)
    check_number("mu", mu, 1, 100)
    check_number("clip_eps", clip_eps, 0.0, 1.0)
    if baseline not in BASELINES:
        raise ValueError(f"baseline must be one of {BASELINES}, got {baseline!r}")
    if loss_type not in LOSS_TYPES:
        raise ValueError(f"loss_type must be one of {LOSS_TYPES}, got {loss_type!r}")

    args: dict[str, object] = {
        "num_generations": int(group_size),
        "beta": float(beta),
        "scale_rewards": "group" if scale_std else "none",
        "loss_type": loss_type,
        "epsilon": float(clip_eps),
        "num_iterations": int(mu),
    }
    notes: list[str] = []
    if seed is not None:
        args["seed"] = int(seed)
    if learning_rate is not None:
        notes.append(
            f"learning_rate: the toy's {learning_rate:g} is a plain gradient step on logits; an LLM with AdamW "
            "needs something like 1e-6, so it is not copied (TRL's default is 1e-6)."
        )
    if baseline == "rloo":
        notes.append(
            "baseline RLOO (leave-one-out mean): GRPOTrainer always uses the group mean; TRL has a separate "
            "RLOOTrainer for this."
        )
    elif baseline == "none":
        notes.append("baseline none (plain REINFORCE): GRPOTrainer has no option to drop the group-mean baseline.")
    if dynamic_sampling:
        notes.append(
            "dynamic sampling (DAPO: drop all-correct / all-wrong groups, resample to fill the batch): no GRPOConfig "
            "argument; GRPOTrainer logs the share of such groups as frac_reward_zero_std."
        )
    if beta > 0:
        notes.append(
            "beta > 0: TRL loads a reference model and uses k3 times the ratio (use_bias_correction_kl=True) by "
            "default; the chapter's plain k3 is use_bias_correction_kl=False."
        )
    return TrlExport(args, notes)


def trl_snippet(export: TrlExport) -> str:
    """Python source that builds the config; notes become comments above it."""
    lines = ["from trl import GRPOConfig", ""]
    lines += [f"# Note: {n}" for n in export.notes]
    lines.append("config = GRPOConfig(")
    lines.append('    output_dir="grpo-out",')
    lines += [f"    {k}={v!r}," for k, v in export.args.items()]
    lines.append(")")
    return "\n".join(lines) + "\n"


def settings_json(settings: Mapping[str, object], *, page: str) -> str:
    """The settings of one page as stable, human-readable JSON (keys sorted)."""
    for k, v in settings.items():
        if not isinstance(v, (bool, int, float, str)) and v is not None:
            raise ValueError(f"setting {k!r} must be a bool, number or string, got {type(v).__name__}")
    return json.dumps({"schema": SCHEMA, "page": page, "settings": dict(settings)}, indent=2, sort_keys=True)


def load_settings_json(text: str) -> dict[str, object]:
    """Inverse of `settings_json`: the settings dict. ValueError if `text` is not such a file."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"settings file is not JSON: {e}") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or not isinstance(doc.get("settings"), dict):
        raise ValueError(f"settings file must be a {SCHEMA} document")
    return doc["settings"]


def history_csv(columns: Mapping[str, Sequence]) -> str:
    """CSV text with one column per entry of `columns` (all the same length), header first."""
    names = list(columns)
    if not names:
        raise ValueError("columns must not be empty")
    lengths = {name: len(columns[name]) for name in names}
    if len(set(lengths.values())) != 1:
        raise ValueError(f"columns must have equal lengths, got {lengths}")
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(names)
    for row in zip(*(columns[n] for n in names), strict=True):
        w.writerow([f"{x:.6g}" if isinstance(x, float) else x for x in row])
    return buf.getvalue()
