"""A GRPO run's per-step metrics, read from the files a practitioner has: TRL's names, one array per metric.

    log = load_run_log(data, "trainer_state.json")     # bytes of an upload or a file (datafile.py reads paths)
    log = from_log_history(trainer.state.log_history, settings={"group_size": 8})   # a run while it trains
    log.steps           # (T,) the file's steps, increasing (TRL: optimizer steps; verl: its training steps)
    log.metrics["reward"]   # (T,) floats; NaN where that step did not log it
    log.settings        # what the file says about the run (group_size, beta, mu, ...), often nothing
    log.unit(["reward"])    # "generation steps": what one logged value of these metrics stands for

Formats:
  * transformers' `trainer_state.json` (a checkpoint's, or `--keep-trainer-state`): its `log_history`, one entry
    per logged optimizer step, and the evaluation entries (eval_reward, eval_rewards/<f>/mean, ...: the eval_
    metrics below); the closing summary (`train_runtime`, ...) is not a step;
  * a CSV with a header of TRL's names, one row per step. A `train/` prefix is dropped and `eval/x` read as
    `eval_x` (W&B's and TensorBoard's exports); the step column is `step`, `train/global_step`, `global_step`,
    `Step`, `_step` or `training/global_step`. An empty cell is a metric that step did not log. W&B's chart-panel
    export ("<run> - train/reward" and its __MIN/__MAX band) is read as one run (sim/yourdata/formats.py);
  * verl's file logger (one {"step": N, "data": {...}} per line) and verl's or OpenRLHF's names in a CSV, mapped
    onto TRL's (formats.py has the table);
  * this project's `python -m sim tinylm --trainer trl --json` summary: its `trl_log`, and from its `config`
    the group size, beta, mu and loss type the run used.

TRL 1.16.0's GRPOTrainer logs (trl/trainer/grpo_trainer.py, `_metrics[mode][...]`): reward, reward_std,
frac_reward_zero_std, rewards/<func>/mean and /std, entropy, kl (only when beta != 0), clip_ratio/low_mean,
high_mean, region_mean, low_min, high_max (loss types grpo, bnpo, dr_grpo, dapo, luspo), cispo_clip_ratio (cispo),
vespo/phi_seq_mean (vespo), completions/{mean,min,max}_length, completions/clipped_ratio,
completions/{mean,min,max}_terminated_length, num_tokens, policy_loss, entropy_coef, aux_loss, tools/*,
sampling/* (vLLM); transformers' Trainer adds loss, grad_norm, learning_rate, epoch, step_time. The reward
metrics are logged once per generation batch: with num_iterations mu > 1 (or steps_per_generation >
gradient_accumulation_steps) only on the optimizer steps that generated, and `unit` says so. A column this list
does not name is ignored with a note; a value that is not a finite number, a share outside [0, 1], a negative
spread, entropy, norm or length, or a magnitude over MAX_ABS is refused with its place.
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
from sim.yourdata.formats import VERL, VERL_STEP, is_verl_lines, panel_columns, rename, verl_rows

SUMMARY = "tinylm --trainer trl summary"  # the source name of `python -m sim tinylm --trainer trl --json` output

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
EVAL_METRICS = ("eval_reward", "eval_reward_std", "eval_frac_reward_zero_std", "eval_loss", "eval_entropy",
                "eval_completions/mean_length")  # TRL's eval_ entries (and eval_rewards/<func>/mean) that are read
EVAL_FUNC = re.compile(r"eval_rewards/(.+)/mean")
STEP_COLUMNS = ("step", "global_step", "Step", "_step", VERL_STEP)  # after the train/ prefix is dropped
GENERATION = re.compile(r"reward|reward_std|frac_reward_zero_std|rewards/.+|completions/.+|num_tokens|tools/.+|"
                        r"sampling/.+")  # logged when a batch is generated (TRL: _generate_and_score_completions)
FRACTIONS = {"frac_reward_zero_std", "clip_ratio/low_mean", "clip_ratio/high_mean", "clip_ratio/region_mean",
             "clip_ratio/low_min", "clip_ratio/high_max", "cispo_clip_ratio", "completions/clipped_ratio",
             "tools/call_frequency", "tools/failure_frequency", "eval_frac_reward_zero_std"}  # shares, in [0, 1]
NONNEGATIVE = re.compile(r"reward_std|rewards/.+/std|entropy|grad_norm|completions/.+_length|num_tokens|"
                         r"learning_rate|step_time|eval_entropy|eval_reward_std|eval_completions/mean_length")
MAX_ABS = 1e38  # no metric a trainer logs is larger (float32, which they compute in, ends at 3.4e38); a bound
#                that also keeps every sum, square and ratio the rules take finite
CLOSING = {"train_runtime", "train_loss", "train_samples_per_second", "train_steps_per_second", "total_flos"}
BOOKKEEPING = {"epoch", "learning_rate", "step_time", "num_tokens"}  # logged at every step, yet not GRPO's
SETTINGS = ("group_size", "beta", "mu", "loss_type", "scale", "prompts_per_iter",
            "optimizer_steps_per_generation")  # what a summary or DiagnoseCallback's run_settings says
MAX_STEP = 10**9


@dataclass(frozen=True)
class RunLog:
    """Per-step metrics of one run. Shapes: T logged steps."""

    source: str  # "trainer_state.json", "CSV", "verl file logger" or "tinylm --trainer trl summary"
    name: str  # the file's label (escaped, cut): shown as plain text only
    steps: np.ndarray  # (T,) int64, strictly increasing
    metrics: dict[str, np.ndarray]  # name -> (T,) float64, NaN where the step did not log it
    settings: dict[str, object] = field(default_factory=dict)  # what the file says about the run
    notes: tuple[str, ...] = ()  # what was ignored or assumed, one line each
    step_kind: str = "step"  # "optimizer" (transformers' global_step), "verl" (one batch per step) or "step"

    def has(self, name: str) -> bool:
        return name in self.metrics and bool(np.isfinite(self.metrics[name]).any())

    def logged(self, names) -> np.ndarray:
        """(T,) bool: the steps that log every metric in `names`."""
        mask = np.ones(self.steps.shape, dtype=bool)
        for n in names:
            mask &= np.isfinite(self.metrics[n]) if n in self.metrics else False
        return mask

    def unit(self, names=()) -> str:
        """What one logged value of these metrics stands for, in words: TRL logs the rewards once per generation
        batch and the loss, gradient and clip once per optimizer step; with mu > 1 they differ."""
        if self.step_kind == "verl":
            return "steps"  # verl: a step generates one batch and trains on it
        if self.step_kind != "optimizer":
            return "logged steps"
        gen = any(GENERATION.fullmatch(n) for n in names)
        per = self.settings.get("optimizer_steps_per_generation", self.settings.get("mu", 1))
        if gen and (per not in (None, 1) or self._fewer_generations()):
            return "generation steps"
        return "optimizer steps"

    def _fewer_generations(self) -> bool:
        """Does the reward appear at fewer steps than the optimizer's metrics (TRL with mu > 1)?"""
        opt = [n for n in ("loss", "grad_norm", "entropy") if self.has(n)]
        return bool(opt) and self.has("reward") and int(self.logged(["reward"]).sum()) < int(
            self.logged(opt[:1]).sum())

    @property
    def reward_funcs(self) -> list[str]:
        """The reward functions' names, from rewards/<func>/mean (user text: show as plain text only)."""
        return [m.group(1) for name in self.metrics if (m := REWARD_FUNC.fullmatch(name)) and m.group(2) == "mean"]


def known(name: str) -> bool:
    return (name in METRICS or REWARD_FUNC.fullmatch(name) is not None or name in EVAL_METRICS
            or EVAL_FUNC.fullmatch(name) is not None)


def load_run_log(data: bytes, name: str) -> RunLog:
    """A run log from the bytes of a file named `name`: verl's JSON Lines, JSON (trainer_state.json or a tinylm
    summary) when it starts with `{`, else CSV. DataError (one line) for anything else."""
    text = decode(data, name)
    if is_verl_lines(text):
        rows, steps, where, notes = verl_rows(text, name)
        return _assemble("verl file logger", file_label(name), rows, steps, where, {}, notes, "verl")
    if text.lstrip()[:1] in ("{", "["):
        return _from_json(read_json(text, name), text, name)
    table, notes = panel_columns(read_csv(text, name, max_columns=MAX_COLUMNS))
    return from_table(table, notes)


# ---- JSON -------------------------------------------------------------------------------------------------

def _from_json(obj, text: str, name: str) -> RunLog:
    label = file_label(name)
    if isinstance(obj, dict) and "log_history" in obj:
        entries, key, source = obj["log_history"], "log_history", "trainer_state.json"
        settings = _state_settings(obj, label)
    elif isinstance(obj, dict) and "trl_log" in obj:
        entries, key, source = obj["trl_log"], "trl_log", SUMMARY
        settings = _summary_settings(obj, label)
    else:
        raise DataError(f"{label}: neither a trainer_state.json (no log_history) nor a `python -m sim tinylm "
                        "--trainer trl --json` summary (no trl_log)")
    return _from_entries(entries, key, label, source, settings, text)


def from_log_history(entries: list, name: str = "log_history", settings: dict | None = None) -> RunLog:
    """A run log from transformers' `trainer.state.log_history` as it stands (a TrainerCallback reading a run while
    it trains), with the checks of a trainer_state.json file; settings: what the caller knows about the run
    (group_size, beta, mu, ...), which the rules then use."""
    return _from_entries(entries, "log_history", file_label(name), "trainer_state.json", dict(settings or {}), None)


def _from_entries(entries, key: str, label: str, source: str, settings: dict, text: str | None) -> RunLog:
    if not isinstance(entries, list):
        raise DataError(f"{label}: {key} must be a list of entries, one per logged step")
    rows, steps, where, notes, unknown = [], [], [], [], set()
    evals = closing = 0
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise DataError(f"{label}: {key}[{i}] is not an object")
        if set(entry) & CLOSING:
            closing += 1
            continue
        is_eval = any(k.startswith("eval_") for k in entry)
        evals += is_eval
        step = entry.get("step")
        at = f"{label}: {key}[{i}]"
        if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= MAX_STEP:
            raise DataError(f"{at}{_line(text, key, i, 'step')}, field step: {cell_text(step)} is not a step "
                            f"number (a whole number from 0 to {MAX_STEP:,})")
        row = {}
        for k, v in entry.items():
            if k == "step" or (is_eval and not k.startswith("eval_")):
                continue
            if not known(k):
                if not is_eval:
                    unknown.add(k)
                continue
            if v is None:  # TRL logs null when a metric had no valid value at that step
                continue
            if isinstance(v, bool) or not isinstance(v, int | float):
                raise DataError(f"{at} (step {step}){_line(text, key, i, k)}, field {cell_text(k)}: "
                                f"{cell_text(v)} is not a number")
            row[k] = v
        rows.append(row)
        steps.append(step)
        where.append(f"{at} (step {step})")
    if evals:
        notes.append(f"{evals:,} evaluation entries: their eval_reward (and eval_rewards/<f>/mean, eval_loss) read "
                     "beside the training steps")
    if closing:
        notes.append("the closing entry (train_runtime, train_loss) is not a step: ignored")
    if unknown:
        notes.append(f"columns that are not TRL's GRPO metrics, ignored: {shown_names(sorted(unknown))}")
    return _assemble(source, label, rows, steps, where, settings, notes, "optimizer")


def _summary_settings(obj: dict, label: str) -> dict:
    """A tinylm summary's settings: its run_settings (sim/yourdata/callback.py's dict), else config.grpo."""
    if isinstance(obj.get("run_settings"), dict):
        return _settings(obj["run_settings"], "run_settings", label)
    grpo = obj.get("config", {}).get("grpo") if isinstance(obj.get("config"), dict) else None
    return _settings(grpo, "config.grpo", label) if isinstance(grpo, dict) else {}


def _state_settings(obj: dict, label: str) -> dict:
    """A trainer_state.json's settings, where DiagnoseCallback keeps them in every checkpoint:
    stateful_callbacks["DiagnoseCallback"]["attributes"]["run_settings"]; {} without."""
    found = obj.get("stateful_callbacks")
    for key in ("DiagnoseCallback", "attributes", "run_settings"):
        found = found.get(key) if isinstance(found, dict) else None
    return _settings(found, "run_settings", label) if isinstance(found, dict) else {}


def _settings(d: dict, where: str, label: str) -> dict:
    """The SETTINGS in `d` that are what they claim (numbers at least 0, short text), as plain values."""
    out = {}
    for k in SETTINGS:
        v = d.get(k)
        if isinstance(v, bool) or v is None:
            continue
        if k in ("loss_type", "scale"):
            if isinstance(v, str):
                out[k] = cell_text(v, 20)
        elif isinstance(v, int | float) and np.isfinite(v) and v >= 0:
            whole = k in ("group_size", "mu", "prompts_per_iter", "optimizer_steps_per_generation")
            out[k] = int(v) if whole and float(v).is_integer() else float(v)
    if "group_size" in out and not 2 <= out["group_size"] <= 1024:
        raise DataError(f"{label}: {where}.group_size {out['group_size']} is not a group size (2 to 1024)")
    return out


def _line(text: str | None, key: str, index: int, field: str) -> str:
    """', line N' of entry `index`'s `field` in the file's text, found by counting that field's occurrences
    after the list's key (one scan, only on the error path); '' when the count does not add up or there is no
    text (entries handed in as objects)."""
    if text is None:
        return ""
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

def column_name(header: str) -> str:
    """A CSV column's metric name: train/ dropped, eval/x read as eval_x, verl's and OpenRLHF's names as TRL's."""
    name = header.removeprefix("train/")
    if name.startswith("eval/"):
        name = "eval_" + name.removeprefix("eval/")
    return rename(name)


def from_table(table: Table, notes: list[str] | None = None) -> RunLog:
    """A run log from a CSV table: the names read as TRL's (column_name), the step column found, unknown columns
    noted."""
    names = [column_name(h) for h in table.header]
    if len(set(names)) != len(names):
        dup = next(n for i, n in enumerate(names) if n in names[:i])
        raise DataError(f"{table.name}: line 1 names {cell_text(dup)} twice (with and without train/, or under "
                        "two frameworks' names)")
    step_col = next((table.header[names.index(c)] for c in STEP_COLUMNS if c in names), None)
    used = [(h, n) for h, n in zip(table.header, names, strict=True) if known(n)]
    ignored = [h for h, n in zip(table.header, names, strict=True) if not known(n) and h != step_col]
    if not used:
        raise DataError(f"{table.name}: no column has a TRL GRPO metric name (reward, frac_reward_zero_std, "
                        f"entropy, ...) or a verl or OpenRLHF one; line 1 has {shown_names(list(table.header))}")
    if not table.rows:
        raise DataError(f"{table.name}: has a header but no rows")
    notes = list(notes or [])
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
    columns = {n: number_cells(table, h, empty_ok=True) for h, n in used}  # (R,) each
    rows = [{k: float(v[i]) for k, v in columns.items() if not np.isnan(v[i])} for i in range(len(table.rows))]
    where = [f"{table.name} line {line}" for line in table.lines]
    verl = any(h.removeprefix("train/") in VERL or h == VERL_STEP for h in table.header)
    kind = "verl" if verl else "optimizer" if step_col in ("train/global_step", "global_step") else "step"
    return _assemble("CSV", table.name, rows, steps, where, {}, notes, kind)


# ---- both -------------------------------------------------------------------------------------------------

def _assemble(source: str, label: str, rows: list[dict], steps: list, where: list[str], settings: dict,
              notes: list[str], step_kind: str) -> RunLog:
    """Rows merged by step (a step logged in several rows, as W&B exports write it, is one step; the same
    metric with two values at one step is refused), each value checked (check_value), sorted by step, as
    arrays."""
    merged: dict[int, dict] = {}
    bounds: dict[str, tuple[float, float]] = {}  # name -> the range its float may take without a closer look
    for row, step, at in zip(rows, steps, where, strict=True):
        if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= MAX_STEP:
            raise DataError(f"{at}, field step: {cell_text(step)} is not a step number (a whole number from 0 to "
                            f"{MAX_STEP:,})")
        into = merged.setdefault(step, {})
        for k, v in row.items():
            lo, hi = bounds.get(k) or bounds.setdefault(k, _bounds(k))
            if not (type(v) is float and lo <= v <= hi):  # the common case skips a call per value
                v = check_value(k, v, at)
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
    return RunLog(source, label, np.array(kept, dtype=np.int64), metrics, settings, tuple(notes), step_kind)


def _bounds(name: str) -> tuple[float, float]:
    """The range check_value lets a float of metric `name` through in."""
    if name in FRACTIONS:
        return 0.0, 1.0
    return (0.0 if NONNEGATIVE.fullmatch(name) else -MAX_ABS), MAX_ABS


def check_value(name: str, value, where: str) -> float:
    """One logged value as a float, or DataError naming `where` and the field: a number (not a bool), of
    magnitude at most MAX_ABS, in [0, 1] for a share (FRACTIONS), not negative for a spread, an entropy, a norm,
    a length or a count (NONNEGATIVE)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise DataError(f"{where}, field {cell_text(name)}: {cell_text(value)} is not a number")
    x = float(value)
    share_ok = name not in FRACTIONS or 0 <= x <= 1
    if abs(x) <= MAX_ABS and share_ok and not (x < 0 and NONNEGATIVE.fullmatch(name)):
        return x  # the common case: no message built
    at = f"{where}, field {cell_text(name)}"
    if not abs(x) <= MAX_ABS:  # NaN too, from a reader that let one through
        raise DataError(f"{at}: {cell_text(value)} is beyond ±{MAX_ABS:g}: no metric a trainer logs is that large "
                        "(float32 ends at 3.4e38)")
    if name in FRACTIONS:
        raise DataError(f"{at}: {x:g} is outside [0, 1]; {cell_text(name)} is a share")
    raise DataError(f"{at}: {x:g} is negative; {cell_text(name)} is never below 0")


def _order(name: str) -> tuple:
    return (METRICS.index(name), "") if name in METRICS else (len(METRICS), name)
