"""The files a run's log comes in, each read into rows of its own keys (runlog.assemble maps the keys through
sim/yourdata/names.py and builds the arrays):

    parsed = parse(text, "trainer_state.json")   # Parsed: rows, steps, where each row came from, notes

  * transformers' `trainer_state.json` (a checkpoint's): its `log_history`, training and evaluation entries (the
    eval_ metrics); the closing summary (`train_runtime`, ...) is not a step. Its run settings, where
    DiagnoseCallback keeps them (stateful_callbacks), and this project's `python -m sim tinylm --trainer trl --json`
    summary (`trl_log`, `config.grpo`);
  * `trainer.state.log_history` saved as a JSON list, and flat JSON Lines, one `{"step": N, "reward": ...}` per line
    (a callback's or a hand-written trainer's metrics.jsonl);
  * verl's file logger (`{"step": N, "data": {...}}` per line), verl's and transformers' console output
    (sim/yourdata/console.py);
  * a CSV with a header of metric names (W&B's and TensorBoard's exports: `train/` dropped, `eval/x` read as
    `eval_x`), and W&B's chart-panel export (`<run> - train/reward` with its `__MIN`/`__MAX` band).
A value is kept as the file has it (a number, None, NaN, text from a console); runlog decides what it means.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import numpy as np

from sim.yourdata.console import console_rows
from sim.yourdata.datafile import (
    MAX_COLUMNS,
    NONFINITE,
    DataError,
    Table,
    cell_text,
    check_number,
    file_label,
    number_cells,
    read_csv,
    read_json,
    read_json_lines,
    shown_names,
)

SUMMARY = "tinylm --trainer trl summary"  # the source name of `python -m sim tinylm --trainer trl --json` output
STEP_KEYS = ("step", "global_step", "Step", "_step", "training/global_step", "train/global_step")
CLOSING = {"train_runtime", "train_loss", "train_samples_per_second", "train_steps_per_second", "total_flos"}
SETTINGS = ("group_size", "beta", "mu", "loss_type", "scale", "prompts_per_iter",
            "optimizer_steps_per_generation")  # what a summary or DiagnoseCallback's run_settings says
MAX_STEP = 10**9
_CONSOLE = re.compile(r"\{'|\bstep:\d")  # a printed dict, verl's step line (linear: no backtracking)
PANEL_RUN = " - "  # W&B panel export: "<run name> - <metric>"
PANEL_BANDS = ("__MIN", "__MAX")


@dataclass
class Parsed:
    """A file read into rows of its own keys. Shapes: R rows."""

    source: str  # "trainer_state.json", "log_history list", "JSON Lines", "verl file logger", "CSV", ...
    label: str  # the file's label (escaped, cut)
    rows: list[dict]  # (R,) the file's key -> its value as written (number, None, NaN, text)
    steps: list  # (R,) the row's step, None where the file numbers none (a console's printed dicts)
    where: list[str]  # (R,) where each row is, for messages
    step_kind: str = "step"  # "optimizer" (transformers' global_step), "verl" or "step"
    settings: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    strict: bool = True  # one metric with two values at one step is refused (a console: the later line wins)
    extra_keys: list[str] = field(default_factory=list)  # keys the file has beside its rows' (a CSV's other columns)
    text: str | None = None  # a JSON file's text, to name a refused value's line (line_of)
    list_key: str = "log_history"


def parse(text: str, name: str) -> Parsed:
    """`text` as the format it is in (see the module's docstring); DataError (one line) for anything else."""
    label = file_label(name)
    head = text.lstrip()[:2]
    # A printed Python dict: a console kept to its log lines (`grep "^{'loss'" nohup.out`); no JSON starts so
    printed = head == "{'"
    if head[:1] in ("{", "[") and not printed:
        lines = _json_lines(text, name)
        if lines is not None:
            return lines
        return _from_json(read_json(text, name, nonfinite=True), text, label)
    found = console_rows(text, name) if _CONSOLE.search(text) else None  # a CSV has neither shape: no scan
    if found is not None:
        rows, steps, where, source, notes = found
        return Parsed(source, label, rows, steps, where, "verl" if source.startswith("verl") else "step",
                      notes=notes, strict=False)
    if printed:  # no line of it is a log's dict: refused as the JSON it looks like, with its place
        return _from_json(read_json(text, name, nonfinite=True), text, label)
    return _from_table(*panel_columns(read_csv(text, name, max_columns=MAX_COLUMNS)))


# ---- JSON ---------------------------------------------------------------------------------------------------------

def _json_lines(text: str, name: str) -> Parsed | None:
    """JSON Lines when the first non-blank line is a whole JSON object and another line follows; None otherwise."""
    label = file_label(name)
    body = text.strip()
    first = body.split("\n", 1)[0].strip()
    if "\n" not in body or not (first.startswith("{") and first.endswith("}")):
        return None
    try:
        json.loads(first)
    except ValueError:
        return None
    entries = read_json_lines(text, name, nonfinite=True)
    if all(isinstance(e, dict) and set(e) >= {"step", "data"} and isinstance(e["data"], dict) for _, e in entries):
        return _verl(entries, label)
    rows, steps, where = [], [], []
    for line, entry in entries:
        if not isinstance(entry, dict):
            raise DataError(f"{label} line {line}: not a JSON object of one step's metrics")
        key = next((k for k in STEP_KEYS if k in entry), None)
        rows.append({k: v for k, v in entry.items() if k != key})
        steps.append(entry.get(key) if key else None)
        where.append(f"{label} line {line}")
    if any(s is None for s in steps) and not all(s is None for s in steps):
        bad = next(w for w, s in zip(where, steps, strict=True) if s is None)
        raise DataError(f"{bad}: has no step (step, global_step or _step) while other lines do")
    return Parsed("JSON Lines", label, rows, steps, where, "step", strict=True)


def _verl(entries, label: str) -> Parsed:
    rows, steps, where = [], [], []
    for line, entry in entries:
        rows.append(entry["data"])
        steps.append(entry["step"])
        where.append(f"{label} line {line}")
    return Parsed("verl file logger", label, rows, steps, where, "verl")


def _from_json(obj, text: str, label: str) -> Parsed:
    if isinstance(obj, list):
        return entries_rows(obj, "log_history", label, "log_history list", {}, text)
    if isinstance(obj, dict) and "log_history" in obj:
        return entries_rows(obj["log_history"], "log_history", label, "trainer_state.json",
                            _state_settings(obj, label), text)
    if isinstance(obj, dict) and "trl_log" in obj:
        return entries_rows(obj["trl_log"], "trl_log", label, SUMMARY, _summary_settings(obj, label), text)
    if isinstance(obj, dict) and any(k in obj for k in STEP_KEYS):  # one line of flat JSON Lines
        key = next(k for k in STEP_KEYS if k in obj)
        return Parsed("JSON Lines", label, [{k: v for k, v in obj.items() if k != key}], [obj[key]],
                      [f"{label} line 1"])
    raise DataError(f"{label}: neither a trainer_state.json (no log_history), a list of log entries, JSON Lines of "
                    "one step each, nor a `python -m sim tinylm --trainer trl --json` summary (no trl_log)")


def entries_rows(entries, key: str, label: str, source: str, settings: dict, text: str | None) -> Parsed:
    """transformers' log_history (or a summary's trl_log) as rows: an evaluation entry keeps its eval_ keys only;
    the closing summary is left out."""
    if not isinstance(entries, list):
        raise DataError(f"{label}: {key} must be a list of entries, one per logged step")
    rows, steps, where, evals, closing = [], [], [], 0, 0
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise DataError(f"{label}: {key}[{i}] is not an object")
        if set(entry) & CLOSING:
            closing += 1
            continue
        is_eval = any(str(k).startswith("eval_") for k in entry)
        evals += is_eval
        step = entry.get("step")
        if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= MAX_STEP:
            raise DataError(f"{label}: {key}[{i}]{line_of(text, key, i, 'step')}, field step: {cell_text(step)} is "
                            f"not a step number (a whole number from 0 to {MAX_STEP:,})")
        rows.append({k: v for k, v in entry.items() if k != "step" and (not is_eval or str(k).startswith("eval_"))})
        steps.append(step)
        where.append(f"{label}: {key}[{i}] (step {step})")
    notes = []
    if evals:
        notes.append(f"{evals:,} evaluation entries: their eval_reward (and eval_rewards/<f>/mean, eval_loss) read "
                     "beside the training steps")
    if closing:
        notes.append("the closing entry (train_runtime, train_loss) is not a step: ignored")
    return Parsed(source, label, rows, steps, where, "optimizer", settings, notes, text=text, list_key=key)


def line_of(text: str | None, key: str, index: int, field: str) -> str:
    """', line N' of entry `index`'s `field` in a JSON file's text (one scan, only on the error path): the
    field's occurrences after the list's key are counted; '' when the count does not add up or there is no text."""
    if text is None:
        return ""
    start = text.find(f'"{key}"')
    entries = json.loads(text, parse_constant=float)
    entries = entries.get(key, []) if isinstance(entries, dict) else entries
    target = sum(1 for e in entries[:index] if isinstance(e, dict) and field in e)
    for seen, m in enumerate(re.finditer(rf'"{re.escape(field)}"\s*:', text[max(start, 0):])):
        if seen == target:
            return f", line {text.count(chr(10), 0, max(start, 0) + m.start()) + 1}"
    return ""


def _summary_settings(obj: dict, label: str) -> dict:
    """A tinylm summary's settings: its run_settings (sim/yourdata/callback.py's dict), else config.grpo."""
    if isinstance(obj.get("run_settings"), dict):
        return settings_of(obj["run_settings"], "run_settings", label)
    grpo = obj.get("config", {}).get("grpo") if isinstance(obj.get("config"), dict) else None
    return settings_of(grpo, "config.grpo", label) if isinstance(grpo, dict) else {}


def _state_settings(obj: dict, label: str) -> dict:
    """A trainer_state.json's settings, where DiagnoseCallback keeps them in every checkpoint:
    stateful_callbacks["DiagnoseCallback"]["attributes"]["run_settings"]; {} without."""
    found = obj.get("stateful_callbacks")
    for key in ("DiagnoseCallback", "attributes", "run_settings"):
        found = found.get(key) if isinstance(found, dict) else None
    return settings_of(found, "run_settings", label) if isinstance(found, dict) else {}


def settings_of(d: dict, where: str, label: str) -> dict:
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


# ---- CSV ----------------------------------------------------------------------------------------------------------

def column_name(header: str) -> str:
    """A CSV column's key: train/ dropped, eval/x read as eval_x (W&B's and TensorBoard's exports)."""
    name = header.removeprefix("train/")
    return "eval_" + name.removeprefix("eval/") if name.startswith("eval/") else name


def _from_table(table: Table, notes: list[str]) -> Parsed:
    """A CSV's rows: the step column found (without one, rows are steps 1, 2, ...), every other column's cells as
    floats (empty: not logged at that row; "NaN": a non-finite value, remembered for its finding)."""
    names = [column_name(h) for h in table.header]
    if len(set(names)) != len(names):
        dup = next(n for i, n in enumerate(names) if n in names[:i])
        raise DataError(f"{table.name}: line 1 names {cell_text(dup)} twice (with and without train/)")
    if not table.rows:
        raise DataError(f"{table.name}: has a header but no rows")
    step_col = next((table.header[names.index(c)] for c in STEP_KEYS if c in names), None)
    from sim.yourdata.names import canonical

    used = [(h, n) for h, n in zip(table.header, names, strict=True) if h != step_col and canonical(n) is not None]
    if not used:
        raise DataError(f"{table.name}: no column has a metric name these rules read (TRL's reward, "
                        f"frac_reward_zero_std, entropy, ..., or verl's or OpenRLHF's); line 1 has "
                        f"{shown_names(list(table.header))}")
    if step_col is None:
        steps: list = list(range(1, len(table.rows) + 1))
        notes = [*notes, "no step column (step, train/global_step, Step or _step): rows are steps 1, 2, ..."]
    else:
        steps = _step_cells(table, step_col)
    columns, cells = {}, {}
    for h, n in used:
        columns[n], bad = metric_cells(table, h)
        for r in np.flatnonzero(bad):  # a "NaN" or "inf" cell: kept as that float, for its finding
            cells[(int(r), n)] = float(table.rows[r][table.header.index(h)].strip(" "))
    rows = [{k: cells.get((i, k), float(v[i])) for k, v in columns.items() if not np.isnan(v[i]) or (i, k) in cells}
            for i in range(len(table.rows))]
    extra = [h for h, n in zip(table.header, names, strict=True) if h != step_col and canonical(n) is None]
    where = [f"{table.name} line {line}" for line in table.lines]
    kind = ("verl" if any(n == "training/global_step" or n.startswith(("actor/", "critic/")) for n in names)
            else "optimizer" if step_col in ("train/global_step", "global_step") else "step")
    return Parsed("CSV", table.name, rows, steps, where, kind, notes=notes, extra_keys=extra)


def _step_cells(table: Table, col: str) -> list[int]:
    raw = number_cells(table, col, empty_ok=True)
    steps = []
    for i, x in enumerate(raw):
        if not (np.isfinite(x) and x == int(x) and 0 <= x <= MAX_STEP):
            where, cell = table.where(i, col), table.rows[i][table.header.index(col)]
            check_number(cell.strip(" "), where)
            raise DataError(f"{where}: {cell_text(cell)} is not a step number (a whole number from 0 to "
                            f"{MAX_STEP:,})")
        steps.append(int(x))
    return steps


def metric_cells(table: Table, col: str) -> tuple[np.ndarray, np.ndarray]:
    """(R,) the column as floats and (R,) where a cell held a non-finite number (NaN, inf, -Infinity: as pandas and
    W&B write a step that diverged). Both an empty cell and a non-finite one are NaN here; the mask tells them
    apart. Refused as number_cells refuses: text, numbers too large for a float."""
    try:  # the common case: every cell a number or empty, read in one pass
        return number_cells(table, col, empty_ok=True), np.zeros(len(table.rows), dtype=bool)
    except DataError:
        pass
    cells = [c.strip(" ") for c in table.column(col)]
    bad = np.array([bool(c) and NONFINITE.fullmatch(c) is not None for c in cells], dtype=bool)  # (R,)
    kept = Table(table.name, (col,), [["" if b else c] for c, b in zip(cells, bad, strict=True)], table.lines)
    return number_cells(kept, col, empty_ok=True), bad


def panel_columns(table: Table) -> tuple[Table, list[str]]:
    """A W&B chart-panel CSV ("Step", "<run> - train/reward", "<run> - train/reward__MIN", ...) as a plain
    table of one run: the run prefix dropped, the __MIN/__MAX band columns left out (notes say so). Refused: a
    panel of several runs (the message names them). Any other table is returned as it is."""
    runs, keep, bands = {}, [], 0
    for i, h in enumerate(table.header):
        if h.endswith(PANEL_BANDS) and PANEL_RUN in h:
            bands += 1
            continue
        if PANEL_RUN in h and h != "Step":
            run, metric = h.rsplit(PANEL_RUN, 1)
            runs.setdefault(run, []).append(metric)
            keep.append((i, metric))
        else:
            keep.append((i, h))
    if not runs:
        return table, []
    if len(runs) > 1:
        raise DataError(f"{table.name}: a W&B panel of {len(runs)} runs ({shown_names(sorted(runs), 4)}); export "
                        "the panel with one run shown")
    names = tuple(h for _, h in keep)
    rows = [[row[i] for i, _ in keep] for row in table.rows]
    notes = [f"a W&B panel export of the run {cell_text(next(iter(runs)), 40)}: its columns read without the run's "
             "name"]
    if bands:
        notes.append(f"{bands} __MIN/__MAX columns (W&B's band around a smoothed line) left out")
    return Table(table.name, names, rows, table.lines), notes
