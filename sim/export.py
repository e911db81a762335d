"""Export a simulator setup: its settings as JSON, a run's history as CSV or JSON, and the equivalent
Hugging Face TRL `GRPOConfig` (TRL 1.16.0) as a Python snippet.

`trl_grpo_config(cfg)` takes any of the engine's configs (sim.toy.ToyConfig, sim.tinylm's GRPOConfig) and
does TRL's renaming itself:

    engine field          GRPOConfig field        note
    group_size            num_generations
    prompts per iteration gradient_accumulation_steps, with per_device_train_batch_size = G: one optimizer
                          step per generation batch of P groups (TRL requires generation_batch_size to be
                          divisible by num_generations; this keeps it so for every G)
    beta                  beta                    (chapter/DeepSeekMath 0.04, TRL default 0.0); with beta > 0
                          use_bias_correction_kl=False gives the chapter's plain k3 (TRL's default is k3 * ratio)
    scale                 scale_rewards           group / batch / none (none is Dr. GRPO)
    ddof                  -                       TRL always divides by the sample std (ddof = 1)
    mu                    num_iterations
    clip_eps(_high)       epsilon(_high)
    loss_type             loss_type               ("grpo" is the chapter's; TRL's default is "dapo")
    importance_sampling_level, delta, sapo_temperature_pos/neg, vespo_k_pos, vespo_lambda_pos, vespo_k_neg,
    vespo_lambda_neg      the same names          (written only where they differ from TRL's defaults)
    seed                  seed

Settings with no TRL counterpart get a note (a comment in the snippet) instead of an invented argument.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sim.grpo import trl_advice
from sim.runtime.files import write_atomically
from sim.settings import GRPO_DEFAULTS
from sim.validate import neutral

SCHEMA = "grpo-playground/settings/v1"
# Loss settings under TRL's own names (sim/settings.py declares them with TRL's defaults): exported where a
# config has one and its value is not the default.
TRL_LOSS_FIELDS = ("importance_sampling_level", "delta", "sapo_temperature_pos", "sapo_temperature_neg", "vespo_k_pos",
                   "vespo_lambda_pos", "vespo_k_neg", "vespo_lambda_neg")


@dataclass(frozen=True)
class TrlExport:
    """GRPOConfig keyword arguments plus notes on what does not translate."""

    args: dict[str, object]
    notes: list[str] = field(default_factory=list)


def trl_grpo_config(cfg) -> TrlExport:
    """The TRL `GRPOConfig(...)` arguments closest to an engine config, with notes.

    `cfg` needs group_size, beta, scale, baseline, ddof, mu, clip_eps, clip_eps_high and seed (validated
    by its own class); loss_type (default "grpo"), the loss settings of TRL_LOSS_FIELDS, prompts per
    iteration (`prompts_per_iter`, else `n_prompts`), `lr` and `dynamic_sampling` are used where present.

    >>> from sim.toy import ToyConfig
    >>> trl_grpo_config(ToyConfig(group_size=16)).args["gradient_accumulation_steps"]   # 24 prompts
    24
    """
    P = getattr(cfg, "prompts_per_iter", None) or getattr(cfg, "n_prompts", 1)
    args: dict[str, object] = {
        "num_generations": int(cfg.group_size),
        "per_device_train_batch_size": int(cfg.group_size),
        "gradient_accumulation_steps": int(P),
        "beta": float(cfg.beta),
        "scale_rewards": cfg.scale,
        "loss_type": getattr(cfg, "loss_type", "grpo"),
        "num_iterations": int(cfg.mu),
        "epsilon": float(cfg.clip_eps),
        "seed": int(cfg.seed),
    }
    notes = [
        f"batch: {P} prompts x {cfg.group_size} completions per optimizer step (one group per micro-batch, "
        f"{P} accumulation steps). On N GPUs divide gradient_accumulation_steps by N."
    ]
    if cfg.clip_eps_high is not None:
        args["epsilon_high"] = float(cfg.clip_eps_high)
    for name in TRL_LOSS_FIELDS:
        value = getattr(cfg, name, GRPO_DEFAULTS[name])
        if value != GRPO_DEFAULTS[name]:
            args[name] = value if isinstance(value, str) else float(value)
    notes += trl_advice(  # what TRL would warn about, and settings that do nothing there
        args["loss_type"], args.get("importance_sampling_level", "token"), clip_eps_high=cfg.clip_eps_high,
        delta=args.get("delta"))
    if cfg.beta > 0:
        args["use_bias_correction_kl"] = False
        notes.append("beta > 0: TRL loads a reference model. use_bias_correction_kl=False is the chapter's plain k3; "
                     "TRL's default (True) multiplies k3 by the ratio.")
    if cfg.scale != "none" and cfg.ddof == 0:
        notes.append("std: TRL divides by the sample std (ddof = 1, torch.std's default) where the chapter uses the "
                     "population std (ddof = 0); no GRPOConfig field changes it. For G = 4 and rewards 1, 0, 0, 1 the "
                     "advantages are +-0.866 in TRL instead of +-1.")
    if cfg.baseline == "loo":
        notes.append("baseline RLOO (leave-one-out mean): GRPOTrainer always uses the group mean; TRL has a separate "
                     "RLOOTrainer for this.")
    elif cfg.baseline == "none":
        notes.append("baseline none (plain REINFORCE): GRPOTrainer has no option to drop the group-mean baseline.")
    if getattr(cfg, "dynamic_sampling", False):
        notes.append("dynamic sampling (DAPO: drop all-correct / all-wrong groups, resample to fill the batch): no "
                     "GRPOConfig argument; GRPOTrainer logs the share of such groups as frac_reward_zero_std.")
    lr = getattr(cfg, "lr", None)
    if lr is not None and not hasattr(cfg, "prompts_per_iter"):
        notes.append(f"learning_rate: the toy's {lr:g} is a plain gradient step on logits; an LLM with AdamW needs "
                     "something like 1e-6 (TRL's default), so it is not copied.")
    elif lr is not None:
        args["learning_rate"] = float(lr)
    if args["loss_type"] == "dr_grpo":
        notes.append("dr_grpo divides by max_completion_length: set it to your real completion budget.")
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


FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n")  # a spreadsheet reads a cell starting so as a formula


def csv_cell(value: object) -> object:
    """A value for a CSV cell that a spreadsheet opens as data and a terminal shows as text. Text starting with
    = + - @, a tab or a line break (after any spaces) gets a leading single quote (OWASP, "CSV Injection"), so
    `=cmd|' /C calc'!A0` is written '=cmd|' /C calc'!A0 and shown, not run; every control, bidi or other
    invisible character but a tab and a line break is written as an escape (sim.validate.neutral: ESC as
    \\u001b), so `cat` of the file runs no terminal sequence (issue 43: a prompt id holding ESC ] 0 ; ... BEL
    reached the file raw). Numbers and None (an empty cell) pass as they are. The csv module then quotes the
    cell if it holds a comma, a quote or a line break.

    >>> csv_cell("=1+1"), csv_cell("  @SUM(A1)"), csv_cell(-0.5), csv_cell("37+48="), csv_cell("\\x1b[31mred")
    ("'=1+1", "'  @SUM(A1)", -0.5, '37+48=', '\\\\u001b[31mred')
    """
    if not isinstance(value, str):
        return value
    value = neutral(value, keep="\t\n")
    return "'" + value if value.lstrip(" ").startswith(FORMULA_START) else value


def json_text(obj, **kwargs) -> str:
    """`obj` as JSON for a file or a terminal: json.dumps(ensure_ascii=False, **kwargs), so text stays readable
    (an accent, a CJK prompt), with every character that is not printable written as its JSON escape (json.dumps
    itself escapes only U+0000-001F: DEL, the C1 controls such as U+009B, a terminal's CSI, and the bidi
    overrides reached a file raw). Outside strings JSON is ASCII, so the escapes land in strings only, and
    json.loads gives back the very same object.

    >>> json_text({"f": "a\\u202eb\\x9b"})
    '{"f": "a\\\\u202eb\\\\u009b"}'
    """
    text = json.dumps(obj, ensure_ascii=False, **kwargs)
    return "".join(ch if ch.isprintable() or ch == "\n" else _json_escape(ch) for ch in text)


def _json_escape(ch: str) -> str:
    code = ord(ch)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000  # a UTF-16 surrogate pair, as JSON writes a character beyond the BMP
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def rows_csv(rows: Sequence[Mapping[str, object]]) -> str:
    """CSV text of rows (sim.toy.history_rows, sim/yourdata/plan.py's prompts): the first row's keys are the header,
    numbers in full precision, None as an empty cell, text through csv_cell (no cell a spreadsheet would run).
    The one CSV writer of the project."""
    if not rows:
        raise ValueError("rows must not be empty")
    names = list(rows[0])
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([csv_cell(n) for n in names])
    for row in rows:
        w.writerow(["" if (x := row.get(n)) is None else csv_cell(x) for n in names])
    return buf.getvalue()


def toy_history_csv(cfg) -> str:
    """The 24-prompt toy's run history for config `cfg` as CSV (sim.toy.history_rows, every seed's accuracy
    included): the rows and the writer `python -m sim toy --out FILE.csv` uses, so the app's download of a setting
    is that command's file, byte for byte (tests/test_export.py)."""
    from sim.toy import history_rows, run_toy

    return rows_csv(history_rows(run_toy(cfg)))


def write_history(rows: Sequence[Mapping[str, object]], config, path: Path) -> None:
    """Write history rows to `path`: CSV (rows_csv) or, for a .json path, {"config": ..., "rows": ...}."""
    if path.suffix == ".json":
        text = json.dumps({"config": dataclasses.asdict(config), "rows": list(rows)})
    else:
        text = rows_csv(rows)
    write_atomically({path: text.encode()})  # whole or not at all: a full disk leaves the old file
