"""A GRPO run's per-step metrics, read from the files a practitioner has: TRL's names, one array per metric.

    log = load_run_log(data, "trainer_state.json")     # bytes of an upload or a file (datafile.py reads paths)
    log.steps           # (T,) optimizer steps, increasing
    log.metrics["reward"]   # (T,) floats; NaN where that step did not log it
    log.settings        # what the file says about the run (group_size, beta, mu, ...), often nothing

Three formats:
  * transformers' `trainer_state.json` (a checkpoint's, or `--keep-trainer-state`): its `log_history`, one
    entry per logged step; eval entries (`eval_*`) and the closing summary (`train_runtime`, ...) are not steps;
  * a CSV with a header of TRL's names, one row per step. A `train/` prefix is dropped (W&B's and TensorBoard's
    exports write `train/reward`); the step column is `step`, `train/global_step`, `global_step`, `Step` or
    `_step` (without one, rows are steps 1, 2, ...). An empty cell is a metric that step did not log;
  * this project's `python -m sim tinylm --trainer trl --json` summary: its `trl_log`, and from its `config`
    the group size, beta, mu and loss type the run used.

TRL 1.16.0's GRPOTrainer logs (trl/trainer/grpo_trainer.py, `_metrics[mode][...]`): reward, reward_std,
frac_reward_zero_std, rewards/<func>/mean and /std, entropy, kl (only when beta != 0), clip_ratio/low_mean,
high_mean, region_mean, low_min, high_max (loss types grpo, bnpo, dr_grpo, dapo, luspo), cispo_clip_ratio (cispo),
vespo/phi_seq_mean (vespo), completions/{mean,min,max}_length, completions/clipped_ratio,
completions/{mean,min,max}_terminated_length, num_tokens, policy_loss, entropy_coef, aux_loss, tools/*,
sampling/* (vLLM); transformers' Trainer adds loss, grad_norm, learning_rate, epoch, step_time. A column
this list does not name is ignored with a note; a value that is not a finite number is refused with its line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from sim.yourdata.datafile import (
    MAX_COLUMNS,
    DataError,
    Table,
    cell_text,
    check_number,
    decode,
    file_label,
    number_cells,
    read_csv,
    read_json,
    shown_names,
)

METRICS = (  # TRL 1.16.0 GRPOTrainer's names, then transformers' Trainer's
    "reward", "reward_std", "frac_reward_zero_std", "entropy", "kl",
    "clip_ratio/low_mean", "clip_ratio/high_mean", "clip_ratio/region_mean", "clip_ratio/low_min",
    "clip_ratio/high_max", "cispo_clip_ratio", "vespo/phi_seq_mean",
    "completions/mean_length", "completions/min_length", "completions/max_length", "completions/clipped_ratio",
    "completions/mean_terminated_length", "completions/min_terminated_length", "completions/max_terminated_length",
    "num_tokens", "policy_loss", "entropy_coef", "aux_loss", "tools/call_frequency", "tools/failure_frequency",
    "sampling/sampling_logp_difference/mean", "sampling/sampling_logp_difference/max",
    "sampling/importance_sampling_ratio/min", "sampling/importance_sampling_ratio/mean",
    "sampling/importance_sampling_ratio/max",
    "loss", "grad_norm", "learning_rate", "epoch", "step_time",
)  # fmt: skip
REWARD_FUNC = re.compile(r"rewards/(.+)/(mean|std)")  # rewards/<func>/mean: one per reward function
STEP_COLUMNS = ("step", "global_step", "Step", "_step")  # after the train/ prefix is dropped
CLOSING = {"train_runtime", "train_loss", "train_samples_per_second", "train_steps_per_second", "total_flos"}
BOOKKEEPING = {"epoch", "learning_rate", "step_time", "num_tokens"}  # logged at every step, yet not GRPO's
SETTINGS = ("group_size", "beta", "mu", "loss_type", "scale", "prompts_per_iter")  # what a summary's config says
MAX_STEP = 10**9


@dataclass(frozen=True)
class RunLog:
    """Per-step metrics of one run. Shapes: T logged steps."""

    source: str  # "trainer_state.json", "CSV" or "tinylm --trainer trl summary"
    name: str  # the file's label (escaped, cut): shown as plain text only
    steps: np.ndarray  # (T,) int64, strictly increasing
    metrics: dict[str, np.ndarray]  # name -> (T,) float64, NaN where the step did not log it
    settings: dict[str, object] = field(default_factory=dict)  # what the file says about the run
    notes: tuple[str, ...] = ()  # what was ignored or assumed, one line each

    def has(self, name: str) -> bool:
        return name in self.metrics and bool(np.isfinite(self.metrics[name]).any())

    @property
    def reward_funcs(self) -> list[str]:
        """The reward functions' names, from rewards/<func>/mean (user text: show as plain text only)."""
        return [m.group(1) for name in self.metrics if (m := REWARD_FUNC.fullmatch(name)) and m.group(2) == "mean"]


def known(name: str) -> bool:
    return name in METRICS or REWARD_FUNC.fullmatch(name) is not None


def load_run_log(data: bytes, name: str) -> RunLog:
    """A run log from the bytes of a file named `name`: JSON (trainer_state.json or a tinylm summary) when it
    starts with `{`, else CSV. DataError (one line) for anything else."""
    text = decode(data, name)
    if text.lstrip()[:1] in ("{", "["):
        return _from_json(read_json(text, name), text, name)
    return from_table(read_csv(text, name, max_columns=MAX_COLUMNS))


# ---- JSON -------------------------------------------------------------------------------------------------

def _from_json(obj, text: str, name: str) -> RunLog:
    label = file_label(name)
    if isinstance(obj, dict) and "log_history" in obj:
        entries, key, source, settings = obj["log_history"], "log_history", "trainer_state.json", {}
    elif isinstance(obj, dict) and "trl_log" in obj:
        entries, key, source = obj["trl_log"], "trl_log", "tinylm --trainer trl summary"
        settings = _summary_settings(obj, label)
    else:
        raise DataError(f"{label}: neither a trainer_state.json (no log_history) nor a `python -m sim tinylm "
                        "--trainer trl --json` summary (no trl_log)")
    if not isinstance(entries, list):
        raise DataError(f"{label}: {key} must be a list of entries, one per logged step")
    rows, steps, where, notes = [], [], [], []
    evals = closing = 0
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise DataError(f"{label}: {key}[{i}] is not an object")
        if any(k.startswith("eval_") for k in entry):
            evals += 1
            continue
        if set(entry) & CLOSING:
            closing += 1
            continue
        step = entry.get("step")
        at = f"{label}: {key}[{i}]"
        if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= MAX_STEP:
            raise DataError(f"{at}{_line(text, key, i, 'step')}, field step: {cell_text(step)} is not a step "
                            f"number (a whole number from 0 to {MAX_STEP:,})")
        row = {}
        for k, v in entry.items():
            if k == "step" or not known(k):
                continue
            if v is None:  # TRL logs null when a metric had no valid value at that step
                continue
            if isinstance(v, bool) or not isinstance(v, int | float):
                raise DataError(f"{at} (step {step}){_line(text, key, i, k)}, field {cell_text(k)}: "
                                f"{cell_text(v)} is not a number")
            row[k] = float(v)
        rows.append(row)
        steps.append(step)
        where.append(f"{label}: {key}[{i}]")
    if evals:
        notes.append(f"{evals:,} evaluation entries (eval_*) are not training steps: ignored")
    if closing:
        notes.append("the closing entry (train_runtime, train_loss) is not a step: ignored")
    unknown = sorted({k for e in entries if isinstance(e, dict) and not any(x.startswith("eval_") for x in e)
                      and not set(e) & CLOSING for k in e if k != "step" and not known(k)})
    if unknown:
        notes.append(f"columns that are not TRL's GRPO metrics, ignored: {shown_names(unknown)}")
    return _assemble(source, label, rows, steps, where, settings, notes)


def _summary_settings(obj: dict, label: str) -> dict:
    grpo = obj.get("config", {}).get("grpo") if isinstance(obj.get("config"), dict) else None
    if not isinstance(grpo, dict):
        return {}
    out = {}
    for k in SETTINGS:
        v = grpo.get(k)
        if isinstance(v, bool) or v is None:
            continue
        if k in ("loss_type", "scale"):
            if isinstance(v, str):
                out[k] = cell_text(v, 20)
        elif isinstance(v, int | float) and np.isfinite(v) and v >= 0:
            out[k] = int(v) if k in ("group_size", "mu", "prompts_per_iter") and float(v).is_integer() else float(v)
    if "group_size" in out and not 2 <= out["group_size"] <= 1024:
        raise DataError(f"{label}: config.grpo.group_size {out['group_size']} is not a group size (2 to 1024)")
    return out


def _line(text: str, key: str, index: int, field: str) -> str:
    """', line N' of entry `index`'s `field` in the file's text, found by counting that field's occurrences
    after the list's key (one scan, only on the error path); '' when the count does not add up."""
    start = text.find(f'"{key}"')
    seen = -1
    for m in re.finditer(rf'"{re.escape(field)}"\s*:', text[start:] if start >= 0 else ""):
        seen += 1
        if seen == _occurrence(text, key, index, field):
            return f", line {text.count(chr(10), 0, start + m.start()) + 1}"
    return ""


def _occurrence(text: str, key: str, index: int, field: str) -> int:
    import json

    entries = json.loads(text).get(key, [])  # the file parsed before; only reached on the error path
    return sum(1 for e in entries[:index] if isinstance(e, dict) and field in e)


# ---- CSV --------------------------------------------------------------------------------------------------

def from_table(table: Table) -> RunLog:
    """A run log from a CSV table: the `train/` prefix dropped, the step column found, unknown columns noted."""
    names = [h.removeprefix("train/") for h in table.header]
    if len(set(names)) != len(names):
        dup = next(n for i, n in enumerate(names) if n in names[:i])
        raise DataError(f"{table.name}: line 1 names {cell_text(dup)} twice (with and without train/)")
    step_col = next((table.header[names.index(c)] for c in STEP_COLUMNS if c in names), None)
    used = [h for h, n in zip(table.header, names, strict=True) if known(n)]
    ignored = [h for h, n in zip(table.header, names, strict=True) if not known(n) and h != step_col]
    if not used:
        raise DataError(f"{table.name}: no column has a TRL GRPO metric name (reward, frac_reward_zero_std, "
                        f"entropy, ...); line 1 has {shown_names(list(table.header))}")
    if not table.rows:
        raise DataError(f"{table.name}: has a header but no rows")
    notes = []
    if ignored:
        notes.append(f"columns that are not TRL's GRPO metrics, ignored: {shown_names(ignored)}")
    if step_col is None:
        steps = list(range(1, len(table.rows) + 1))
        notes.append("no step column (step, train/global_step, Step or _step): rows are steps 1, 2, ...")
    else:
        raw = number_cells(table, step_col, empty_ok=True)
        steps = []
        for i, x in enumerate(raw):
            if not (np.isfinite(x) and x == int(x) and 0 <= x <= MAX_STEP):
                where = table.where(i, step_col)
                check_number(table.rows[i][table.header.index(step_col)].strip(" "), where)
                raise DataError(f"{where}: {cell_text(table.rows[i][table.header.index(step_col)])} is not a step "
                                f"number (a whole number from 0 to {MAX_STEP:,})")
            steps.append(int(x))
    columns = {h.removeprefix("train/"): number_cells(table, h, empty_ok=True) for h in used}  # (R,) each
    rows = [{k: float(v[i]) for k, v in columns.items() if not np.isnan(v[i])} for i in range(len(table.rows))]
    where = [f"{table.name} line {line}" for line in table.lines]
    return _assemble("CSV", table.name, rows, steps, where, {}, notes)


# ---- both -------------------------------------------------------------------------------------------------

def _assemble(source: str, label: str, rows: list[dict], steps: list[int], where: list[str], settings: dict,
              notes: list[str]) -> RunLog:
    """Rows merged by step (a step logged in several rows, as W&B exports write it, is one step; the same
    metric with two values at one step is refused), sorted by step, as arrays."""
    merged: dict[int, dict] = {}
    for row, step, at in zip(rows, steps, where, strict=True):
        into = merged.setdefault(step, {})
        for k, v in row.items():
            if k in into and into[k] != v:
                raise DataError(f"{at}: step {step} logs {cell_text(k)} twice with different values "
                                f"({into[k]:g} and {v:g})")
            into[k] = v
    kept = sorted(s for s, r in merged.items() if set(r) - BOOKKEEPING)
    if not kept:
        raise DataError(f"{label}: no step logs a TRL GRPO metric")
    names = sorted({k for s in kept for k in merged[s]}, key=_order)
    metrics = {k: np.array([merged[s].get(k, np.nan) for s in kept], dtype=float) for k in names}  # (T,) each
    if len(kept) < len(merged):
        notes.append(f"{len(merged) - len(kept):,} steps log no GRPO metric: left out")
    return RunLog(source, label, np.array(kept, dtype=np.int64), metrics, settings, tuple(notes))


def _order(name: str) -> tuple:
    return (METRICS.index(name), "") if name in METRICS else (len(METRICS), name)
