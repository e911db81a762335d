"""A GRPO run's per-step metrics, read from the files a practitioner has: one array per metric, under TRL 1.16.0's
names whatever the file's framework or version.

    log = load_run_log(data, "trainer_state.json")     # bytes of an upload or a file (datafile.py reads paths)
    log = from_log_history(trainer.state.log_history, settings={"group_size": 8})   # a run while it trains
    log.steps           # (T,) the file's steps, increasing (TRL: optimizer steps; verl: its training steps)
    log.metrics["reward"]   # (T,) floats; NaN where that step has no value
    log.key("policy_loss")  # "actor/pg_loss": the name the file spells it with (messages and findings say that)
    log.gaps["grad_norm"]   # {"nan": steps, "null": steps}: where the file wrote NaN, an infinity or null
    log.not_grpo        # "an SFT run (...)" for a log that is not a GRPO run: nothing is judged on it

The files (sim/yourdata/formats.py) and the names (sim/yourdata/names.py: TRL 0.14 to 1.16, verl, OpenRLHF, one
table). What frameworks write is read: NaN, an infinity or null is that step's missing value, kept in `gaps` for a
finding that names the metric, its key as the file spells it and the steps. What no framework writes is refused with
its place and the file's own key: text where a number belongs, a number too large for a float (1e400) or beyond
MAX_ABS, a share outside [0, 1], a negative spread, entropy, norm or length. Caps, checked before any array is
built: MAX_NAMES distinct names in a file (a CSV's 1,000 columns), MAX_REWARD_FUNCS reward functions, and
MAX_CELLS steps x metrics (issue 43: a 1 MB log whose every step named its own reward function took 3.3 GB).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from sim.yourdata.datafile import DataError, cell_text, decode, shown_names
from sim.yourdata.formats import CLOSING, STEP_KEYS, SUMMARY, Parsed, entries_rows, file_label, line_of, parse
from sim.yourdata.names import EVAL, PREFERRED, SETTING_NAMES, TRL_116, canonical, not_grpo, rank

__all__ = ["SUMMARY", "RunLog", "check_value", "from_log_history", "load_run_log"]

REWARD_FUNC = re.compile(r"rewards/(.+)/(mean|std)")  # rewards/<func>/mean: one per reward function
GENERATION = re.compile(r"reward|reward_std|frac_reward_zero_std|rewards/.+|completions/.+|num_tokens|tools/.+|"
                        r"sampling/.+")  # logged when a batch is generated (TRL: _generate_and_score_completions)
FRACTIONS = {"frac_reward_zero_std", "clip_ratio/low_mean", "clip_ratio/high_mean", "clip_ratio/region_mean",
             "clip_ratio/low_min", "clip_ratio/high_max", "cispo_clip_ratio", "completions/clipped_ratio",
             "tools/call_frequency", "tools/failure_frequency", "eval_frac_reward_zero_std"}  # shares, in [0, 1]
NONNEGATIVE = re.compile(r"reward_std|rewards/.+/std|entropy|grad_norm|completions/.+_length|num_tokens|"
                         r"learning_rate|step_time|eval_entropy|eval_reward_std|eval_completions/mean_length")
MAX_ABS = 1e38  # no metric a trainer logs is larger (float32 ends at 3.4e38); keeps every sum and square finite
BOOKKEEPING = {"epoch", "learning_rate", "step_time", "num_tokens"}  # logged at every step, yet not GRPO's
MAX_NAMES = 1000  # distinct names in one file, as a CSV's columns (TRL 1.16 logs about 40, verl about 120)
MAX_REWARD_FUNCS = 64  # reward functions (TRL logs a mean and a std for each)
MAX_CELLS = 10_000_000  # steps x metrics read: 80 MB of arrays (a 20 MB file of dense rows holds about 2 million)
PLACEHOLDER = ("entropy",)  # logged as exactly 0 at every step by trainers that never compute it


@dataclass(frozen=True)
class RunLog:
    """Per-step metrics of one run. Shapes: T logged steps."""

    source: str  # "trainer_state.json", "CSV", "verl file logger", "console", ...
    name: str  # the file's label (escaped, cut): shown as plain text only
    steps: np.ndarray  # (T,) int64, strictly increasing
    metrics: dict[str, np.ndarray]  # name -> (T,) float64, NaN where the step has no value
    settings: dict = field(default_factory=dict)  # what the file says about the run
    notes: tuple[str, ...] = ()  # what was ignored or assumed, one line each
    step_kind: str = "step"  # "optimizer" (transformers' global_step), "verl" (one batch per step) or "step"
    spelled: dict = field(default_factory=dict)  # metric -> the file's key, where it is not TRL 1.16.0's name
    gaps: dict = field(default_factory=dict)  # metric -> {"nan" | "inf" | "null": [steps]}: values with no number
    not_grpo: str | None = None  # what the log is, when it is not a GRPO run

    def has(self, name: str) -> bool:
        return name in self.metrics and bool(np.isfinite(self.metrics[name]).any())

    def key(self, name: str) -> str:
        """The metric's name as the file spells it (cut and escaped: a file's text)."""
        return cell_text(self.spelled.get(name, name), 60)

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


def load_run_log(data: bytes, name: str) -> RunLog:
    """A run log from the bytes of a file named `name` (formats.parse says which formats); DataError (one line)
    for anything else."""
    return assemble(parse(decode(data, name), name))


def from_log_history(entries: list, name: str = "log_history", settings: dict | None = None) -> RunLog:
    """A run log from transformers' `trainer.state.log_history` as it stands (a TrainerCallback reading a run while
    it trains), with the checks of a trainer_state.json file; settings: what the caller knows about the run
    (group_size, beta, mu, ...), which the rules then use."""
    return assemble(entries_rows(entries, "log_history", file_label(name), "trainer_state.json",
                                 dict(settings or {}), None))


# ---- names ----------------------------------------------------------------------------------------------------

def _choose(p: Parsed) -> tuple[dict[str, str], list[str], set]:
    """({metric: the file's key read for it}, notes, every key the file has): one key per metric (TRL's own
    spelling first, then the table's order), the caps on names and reward functions checked on the keys alone."""
    keys: set = set(p.extra_keys)
    for row in p.rows:
        keys.update(row)
        if len(keys) > MAX_NAMES:
            funcs = sum(1 for k in keys if str(k).startswith("rewards/"))
            raise DataError(f"{p.label}: more than {MAX_NAMES:,} distinct metric names"
                            + (f", {funcs:,} of them reward functions' (at most {MAX_REWARD_FUNCS} functions are read)"
                               if funcs > 2 * MAX_REWARD_FUNCS else "")
                            + "; a training log has a few dozen (TRL about 40, verl about 120)")
    groups: dict[str, list[str]] = {}
    for k in keys:
        hit = canonical(str(k))
        if hit is not None:
            groups.setdefault(hit[0], []).append(k)
    funcs = {m for m in groups if REWARD_FUNC.fullmatch(m)}
    if len(funcs) > 2 * MAX_REWARD_FUNCS:
        n = len({REWARD_FUNC.fullmatch(m).group(1) for m in funcs})
        raise DataError(f"{p.label}: {n:,} reward functions, over the cap of {MAX_REWARD_FUNCS}; a GRPO run has a "
                        "handful")
    chosen = {m: min(ks, key=lambda k: (0 if m in PREFERRED and k == m else 1, rank(k), k)) for m, ks in groups.items()}
    notes = []
    extra = sorted(k for m, ks in groups.items() for k in ks if k != chosen[m])
    if extra:
        notes.append(f"read once under one name, also logged and not read: {shown_names(extra)}")
    ignored = sorted(k for k in keys if canonical(str(k)) is None and k not in SETTING_NAMES and k not in STEP_KEYS)
    if ignored:
        notes.append(f"{'verl metrics' if p.step_kind == 'verl' else 'columns'} that are not GRPO metrics the rules "
                     f"read, ignored: {shown_names(ignored)}")
    spelled = [f"{k} as {m}" for m, k in sorted(chosen.items()) if k != m]
    if spelled:
        notes.append(f"read under TRL 1.16.0's names: {shown_names(spelled, 6)} (docs/your-data.md lists them)")
    return chosen, notes, keys


# ---- values -------------------------------------------------------------------------------------------------------

def assemble(p: Parsed) -> RunLog:
    """Rows merged by step (several rows of one step, as W&B exports write them, are one step; one metric with two
    values at one step is refused, except in a console log where the later line wins), each value checked, sorted
    by step, as arrays."""
    chosen, notes, keys = _choose(p)
    notes = p.notes + notes
    settings = dict(p.settings)
    if all(s is None for s in p.steps):  # a console's printed logs: number those that log a metric, 1, 2, ...
        read = set(chosen.values())
        keep = [i for i, r in enumerate(p.rows) if not set(r) & CLOSING and any(
            k in read and canonical(str(k))[0] not in BOOKKEEPING for k in r)]
        p = Parsed(p.source, p.label, [p.rows[i] for i in keep], list(range(1, len(keep) + 1)),
                   [p.where[i] for i in keep], p.step_kind, p.settings, p.notes, p.strict)
    steps = p.steps
    merged: dict[int, dict] = {}
    gaps: dict[str, dict[str, set]] = {}
    read = {k: m for m, k in chosen.items()}  # the file's key -> the metric it is read as
    bounds = {m: _bounds(m) for m in chosen}  # the range a float passes in without a closer look
    for i, (row, step, at) in enumerate(zip(p.rows, steps, p.where, strict=True)):
        if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= 10**9:
            raise DataError(f"{at}, field step: {cell_text(step)} is not a step number (a whole number from 0 to "
                            "1,000,000,000)")
        into = merged.setdefault(step, {})
        for k, v in row.items():
            m = read.get(k)
            if m is None:
                if k in SETTING_NAMES and type(v) in (int, float) and np.isfinite(v):
                    settings.setdefault(SETTING_NAMES[k], float(v))
                continue
            if type(v) is float and bounds[m][0] <= v <= bounds[m][1]:
                pass  # the common case: no call, no message built
            elif v is None or (type(v) is float and not np.isfinite(v)):
                kind = "null" if v is None else "nan" if v != v else "inf"
                gaps.setdefault(m, {}).setdefault(kind, set()).add(step)
                continue
            else:
                try:
                    v = check_value(m, v, at, key=k)
                except DataError:  # said again with the value's line, found only now (a scan of the text)
                    check_value(m, v, _place(p, at, i, k), key=k)
                    raise
            if m in into and into[m] != v and p.strict:
                raise DataError(f"{at}: step {step} logs {cell_text(k)} twice with different values "
                                f"({into[m]:g} and {v:g})")
            into[m] = v
    kept = sorted(s for s, r in merged.items() if set(r) - BOOKKEEPING)
    if not kept:
        raise DataError(f"{p.label}: no step logs a metric these rules read (a reward, the loss, grad_norm, ...)")
    names = sorted({m for s in kept for m in merged[s]}, key=_order)
    if len(kept) * len(names) > MAX_CELLS:
        raise DataError(f"{p.label}: {len(kept):,} steps x {len(names):,} metrics is over the cap of {MAX_CELLS:,} "
                        "values")
    metrics = {m: np.array([merged[s].get(m, np.nan) for s in kept], dtype=float) for m in names}  # (T,) each
    if len(kept) < len(merged):
        notes.append(f"{len(merged) - len(kept):,} steps log no GRPO metric: left out")
    for m in PLACEHOLDER:
        x = metrics.get(m)
        if x is not None and np.isfinite(x).sum() >= 3 and not np.nanmax(np.abs(x)):
            del metrics[m]
            notes.append(f"{cell_text(chosen[m])} is 0 at every logged step: a placeholder the trainer does not "
                         "compute, not read")
    settings = {k: v for k, v in settings.items() if k != "beta" or np.isfinite(v)}
    spelled = {m: str(k) for m, k in chosen.items() if k != m and (m in metrics or m in gaps)}
    what = not_grpo(keys, set(metrics))
    return RunLog(p.source, p.label, np.array(kept, dtype=np.int64), metrics, settings, tuple(notes), p.step_kind,
                  spelled, {m: {k: sorted(v) for k, v in g.items()} for m, g in gaps.items()}, what)


def _place(p: Parsed, at: str, i: int, key: str) -> str:
    """Where row i's `key` is, for a refusal: its line in a JSON file when the text can say."""
    hit = re.search(r"\[(\d+)\]", at) if p.text is not None else None
    return at + (line_of(p.text, p.list_key, int(hit.group(1)), key) if hit else "")


def _bounds(name: str) -> tuple[float, float]:
    if name in FRACTIONS:
        return 0.0, 1.0
    return (0.0 if NONNEGATIVE.fullmatch(name) else -MAX_ABS), MAX_ABS


def check_value(name: str, value, where: str, key: str | None = None) -> float:
    """One logged value of metric `name` (written `key` in the file, which the message names) as a float, or
    DataError naming `where` and the field: a number (not a bool), of magnitude at most MAX_ABS, in [0, 1] for a
    share (FRACTIONS), not negative for a spread, an entropy, a norm, a length or a count (NONNEGATIVE)."""
    if type(value) is float:
        lo, hi = _bounds(name)
        if lo <= value <= hi:
            return value  # the common case: no message built
    at = f"{where}, field {cell_text(key or name)}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise DataError(f"{at}: {cell_text(value)} is not a number")
    x = float(value)
    if abs(x) <= MAX_ABS and (name not in FRACTIONS or 0 <= x <= 1) and not (x < 0 and NONNEGATIVE.fullmatch(name)):
        return x
    if not abs(x) <= MAX_ABS:
        raise DataError(f"{at}: {cell_text(value)} is beyond ±{MAX_ABS:g}: no metric a trainer logs is that large "
                        "(float32 ends at 3.4e38)")
    if name in FRACTIONS:
        raise DataError(f"{at}: {x:g} is outside [0, 1]; {cell_text(key or name)} is a share")
    raise DataError(f"{at}: {x:g} is negative; {cell_text(key or name)} is never below 0")


def _order(name: str) -> tuple:
    if name in TRL_116:
        return (TRL_116.index(name), "")
    return (len(TRL_116) + (name in EVAL), name)
