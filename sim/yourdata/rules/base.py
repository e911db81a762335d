"""What every rule shares: the thresholds (DiagnoseConfig), a finding (Finding), the steps a rule reads (Series)
and the small helpers the rule modules use."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from sim.settings import grpo_setting, setting, validate
from sim.yourdata.runlog import RunLog


@dataclass(frozen=True)
class DiagnoseConfig:
    """The rules' settings. An invalid value raises ValueError naming the field."""

    group_size: int | None = grpo_setting("group_size", None, optional=True,
                                          help="answers G per prompt (TRL's num_generations); none: the file's, else 8")
    window: int = setting(0, "logged values in the rolling mean the rules read (0: a twentieth of the steps that "
                          "logged the reward, 1 to 50)", lo=0, hi=100_000, integer=True, key="W",
                          label="Rolling window W in steps (0: automatic)")
    zero_std_excess: float = setting(0.10, "zero_std_floor, per_function_zero_std: frac_reward_zero_std above "
                                     "the Jensen floor by more than this", lo=0.0, hi=1.0, step=0.01)
    dead_warn: float = setting(0.5, "dead_all_wrong: a warning where at least this share of groups is surely all "
                               "wrong", lo=0.0, hi=1.0, step=0.05)
    entropy_drop: float = setting(0.20, "entropy_falling: entropy below its start by more than this share",
                                  lo=0.0, hi=1.0, low_open=True, step=0.05)
    loss_zero: float = setting(0.01, "loss_zero: |loss| at most this counts as 0 (and the least a loss spike "
                               "rises above its median, over spike_factor)", lo=0.0, hi=1.0)
    grad_zero: float = setting(1e-6, "loss_zero, spikes: grad_norm above this counts as non-zero", lo=0.0,
                               hi=1.0)
    length_growth: float = setting(0.20, "length_drift: mean length above its start by more than this share",
                                   lo=0.0, hi=100.0, low_open=True, step=0.05)
    reward_flat: float = setting(0.05, "length_drift, entropy_falling, reward_funcs_diverge, train_vs_eval: a "
                                 "reward within this of its start counts as flat", lo=0.0, hi=1.0, step=0.01)
    truncation: float = setting(0.05, "truncation: completions/clipped_ratio above this share", lo=0.0, hi=1.0,
                                step=0.01)
    near_cap: float = setting(0.8, "truncation: mean length at least this share of the length cap", lo=0.0,
                              hi=1.0, low_open=True, step=0.05)
    max_completion_length: int | None = setting(None, "truncation: TRL's max_completion_length in tokens (none: "
                                                "completions/max_length where answers were clipped)", lo=1,
                                                hi=10**7, integer=True, optional=True)
    func_rise: float = setting(0.2, "reward_funcs_diverge: a reward function rising by more than this",
                               lo=0.0, hi=100.0, low_open=True, step=0.05)
    spike_factor: float = setting(10.0, "spikes: a value this many robust standard deviations above the median "
                                  "of the steps before it (and, for grad_norm and kl, this many times that "
                                  "median)", lo=1.0, hi=1000.0, step=1.0)
    eval_drop: float = setting(0.05, "train_vs_eval: the eval reward below its best by more than this",
                               lo=0.0, hi=100.0, low_open=True, step=0.01)
    truncation_warn: float = setting(0.2, "truncation: a warning when completions/clipped_ratio stays above this "
                                     "share (information from --truncation)", lo=0.0, hi=1.0, step=0.05)
    min_trend: int = setting(30, "no_learning, reward_collapse: logged reward values needed to judge a trend",
                             lo=3, hi=100_000, integer=True)
    kl_start: float = setting(0.1, "kl_high_start: kl per token at the start above this (the policy starts at the "
                              "reference, where kl is 0)", lo=0.0, hi=1000.0, low_open=True, step=0.05)
    zero_std_high: float = setting(0.5, "zero_std_high: a share of zero-std groups this high, lasting", lo=0.0,
                                   hi=1.0, low_open=True, step=0.05)
    clip_high: float = setting(0.2, "clip_high: a clipped share of tokens this high, lasting", lo=0.0, hi=1.0,
                               low_open=True, step=0.05)
    entropy_low: float = setting(0.1, "entropy_low_start: entropy per token below this from the start", lo=0.0,
                                 hi=100.0, low_open=True, step=0.01)

    def __post_init__(self) -> None:
        validate(self)


@dataclass(frozen=True)
class Finding:
    """One rule, checked: `holds` at `steps`. status: warn (holds; act), info (holds; expected or a fact about
    the run), ok (checked, does not hold), unknown (the log lacks what the rule reads)."""

    key: str
    status: str
    title: str  # one line, with the numbers
    rule: str  # the rule and its threshold, in words
    steps: tuple[int, ...] = ()  # steps where it holds (the file's step numbers)
    reading: str = ""  # what it means, after the chapter
    remedy: str = ""  # what to do about it
    numbers: dict = field(default_factory=dict)

    @property
    def holds(self) -> bool:
        return self.status in ("warn", "info")


@dataclass(frozen=True)
class Series:
    """The steps that log every metric a rule reads, and those metrics there (no NaN left). Shapes: n such
    steps of the log's T."""

    rows: np.ndarray  # (n,) indices into log.steps
    steps: np.ndarray  # (n,) the file's step numbers
    values: dict[str, np.ndarray]  # name -> (n,)
    unit: str  # what one of these steps is: "generation steps", "optimizer steps", "steps", "logged steps"
    T: int  # the log's steps

    def __len__(self) -> int:
        return int(self.rows.size)

    def __getitem__(self, name: str) -> np.ndarray:
        return self.values[name]

    def expand(self, x: np.ndarray) -> np.ndarray:
        """(T,) x at this series' steps, NaN at the others (a derived series for the charts and the JSON)."""
        out = np.full(self.T, np.nan)
        out[self.rows] = x
        return out

    def at(self, mask: np.ndarray) -> tuple[int, ...]:
        """The file's step numbers where mask (n,) holds."""
        return tuple(int(s) for s in self.steps[np.asarray(mask, dtype=bool)])

    def of(self, mask: np.ndarray) -> str:
        """'140 of 600 generation steps'."""
        return f"{int(np.sum(mask)):,} of {len(self):,} {self.unit}"


def series(log: RunLog, names) -> Series:
    """The steps of `log` that log every metric in `names` (a rule reads nothing else: a metric logged at other
    steps than its partner is never paired with a stale value)."""
    rows = np.flatnonzero(log.logged(names))
    values = {n: log.metrics[n][rows] if n in log.metrics else np.empty(0) for n in names}  # (n,) each
    return Series(rows, log.steps[rows], values, log.unit(names), len(log.steps))


@dataclass
class Context:
    """What every rule of one diagnosis shares: G, W, the 0/1 check, the derived series it fills for the charts
    ((T,) each), and whether the reward sits at its ceiling (rules/ceiling.py, read by two rules, found once)."""

    group_size: int
    window: int
    binary: dict
    derived: dict = field(default_factory=dict)
    ceiling: dict | None = None


def missing(key: str, title: str, needs: tuple[str, ...], log: RunLog, why: str = "") -> Finding:
    """The rule `key` not judged: the log lacks one of `needs` (or `why` says what else)."""
    absent = [n for n in needs if not log.has(n)]
    reading = why or (f"This log has no {' or '.join(absent)}." if absent else
                      f"{' and '.join(needs)} are never logged at the same step.")
    return Finding(key, "unknown", f"{title}: not judged", f"needs {', '.join(needs)}", reading=reading,
                   numbers={"missing": absent})


MIN_LASTING = 5  # steps a condition must hold at before it can be said to last (a quarter of 3 steps says nothing)


def lasting(hold: np.ndarray, window: int, share: float = 0.25) -> bool:
    """A condition that lasts: it holds at the last step judged and at no fewer than max(window, share x n,
    MIN_LASTING) of the n steps (every warning asks this of its condition, so that one step, a passing phase or a
    log of a few steps never warns)."""
    hold = np.asarray(hold, dtype=bool)
    return bool(hold.size and hold[-1] and hold.sum() >= max(window, share * hold.size, MIN_LASTING))


def steps_word(n: int, unit: str = "steps") -> str:
    one = unit[:-1] if unit.endswith("s") else unit
    return f"1 {one}" if n == 1 else f"{n:,} {unit}"


def median_of(x: np.ndarray, mask: np.ndarray) -> float | None:
    v = x[mask & ~np.isnan(x)]
    return float(np.median(v)) if v.size else None
