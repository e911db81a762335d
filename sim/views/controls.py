"""A view's controls, declared as data: which setting each one sets, and how the view narrows it.

    Num.of(ToyConfig, "group_size", hi=64)                  # a slider for a declared field, its range narrowed
    Choice.of(ToyConfig, "beta", options=(0.0, 0.001, 0.04))  # a radio over a few of a field's values
    build_config(ToyConfig, CONTROLS, values)                # the config those values set

A control's URL key and label are the setting's own (sim/settings.py: `setting(8, ..., key="G", label="Group size
G")`), so "G" and "Group size G" are written once, where `group_size` is declared, and every page and lesson that
offers the setting reads them from there. A view may narrow the range (never widen it), pick a few options, set
another default or explain the control in its own words (`help`); it never renames the key. Both hosts write them
into the page (`to_json`), whose script draws them and reads the link (assets/js/page.js, control_rules.js); the
app's server checks a setting a page reports against them (`check_values`). No UI framework here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sim.settings import control as declared
from sim.settings import default as field_default
from sim.validate import neutral


@dataclass(frozen=True)
class Num:
    """A number on a slider: lo <= value <= hi, on the grid lo + k * step."""

    key: str
    label: str
    lo: float
    hi: float
    default: float
    step: float
    help: str | None = None
    fmt: str | None = None  # printf format for the slider, e.g. "%.3f"
    config: type | None = None  # the config class and field this control sets
    field: str | None = None

    def __post_init__(self):
        if not (self.lo <= self.default <= self.hi) or self.step <= 0:
            raise ValueError(f"{self.key}: default {self.default} must lie in [{self.lo}, {self.hi}], step > 0")

    @classmethod
    def of(cls, config, field: str, *, lo=None, hi=None, step=None, default=None, help: str | None = None,
           fmt: str | None = None) -> Num:
        """A slider for a declared config field: its key, label, range (narrowed by lo/hi, never widened),
        default, step and help come from the declaration unless given here."""
        s = declared(config, field)
        lo = s.lo if lo is None else lo
        hi = s.hi if hi is None else hi
        if lo < s.lo or hi > s.hi or (s.low_open and lo == s.lo):
            raise ValueError(f"{s.key}: [{lo}, {hi}] is not inside {field}'s declared range ({s.describe()})")
        d = field_default(config, field) if default is None else default
        step = s.step if step is None else step
        if step is None:  # an integer setting steps by 1 unless it says otherwise; a real one must say
            if not s.integer:
                raise ValueError(f"{s.key}: {field} declares no step; give step= to its setting or to this slider")
            step = 1
        spec = cls(s.key, s.label, lo, hi, d, step, s.help if help is None else help, fmt,
                   config, field)
        if s.integer != spec.integer:
            raise ValueError(f"{s.key}: {field} is {'an integer' if s.integer else 'a real number'}; match lo/hi/step")
        return spec

    @property
    def integer(self) -> bool:
        return all(isinstance(v, int) for v in (self.lo, self.hi, self.default, self.step))

    def describe(self) -> str:
        return f"a number from {self.lo} to {self.hi}"

    def snap(self, x: float) -> float:
        """The nearest grid value lo + k * step (rounded to the step's decimals, so 0.1 + 0.2 is 0.3)."""
        k = round((x - self.lo) / self.step)
        decimals = max(0, -math.floor(math.log10(self.step))) + 6
        return min(max(round(self.lo + k * self.step, decimals), self.lo), self.hi)


@dataclass(frozen=True)
class Choice:
    """One of a few named options (a horizontal radio). The options are the values (what the URL and the
    engine see); `labels` are shown beside them."""

    key: str
    label: str
    options: tuple
    default: object
    help: str | None = None
    labels: Mapping | None = None
    config: type | None = None  # as Num's
    field: str | None = None

    def __post_init__(self):
        if self.default not in self.options:
            raise ValueError(f"{self.key}: default {self.default!r} is not one of {self.options}")

    @classmethod
    def of(cls, config, field: str, *, options=None, labels: Mapping | None = None, default=None,
           help: str | None = None) -> Choice:
        """A radio for a declared field: a choice field (options narrowed by `options`, never widened), or a
        few values of a number field (each must be one the field accepts, e.g. beta in 0, 0.001, 0.04)."""
        s = declared(config, field)
        options = tuple(s.choices if options is None else options)
        if s.kind == "choice" and not set(options) <= set(s.choices):
            raise ValueError(f"{s.key}: {options} are not all among {field}'s choices {s.choices}")
        for o in options:
            s.check(field, o)
        d = field_default(config, field) if default is None else default
        return cls(s.key, s.label, options, d, s.help if help is None else help,
                   s.labels if labels is None else labels, config, field)

    def describe(self) -> str:
        return "one of " + ", ".join(str(o) for o in self.options)


@dataclass(frozen=True)
class Flag:
    """On/off (a toggle); in the URL as true/false."""

    key: str
    label: str
    default: bool
    help: str | None = None
    config: type | None = None  # as Num's
    field: str | None = None

    @classmethod
    def of(cls, config, field: str, *, help: str | None = None) -> Flag:
        s = declared(config, field)
        return cls(s.key, s.label, field_default(config, field), s.help if help is None else help, config, field)

    def describe(self) -> str:
        return "true or false"


@dataclass(frozen=True)
class Picks:
    """Some of the numbers 1..n (toggle buttons), n the value of another control (`count`); shown only while
    control `when[0]` has the value `when[1]`. In the URL once per number (`pick=1&pick=4`), as Streamlit's
    multi-select writes it."""

    key: str
    label: str
    default: tuple[int, ...]
    count: str  # the key of the control whose value is n
    when: tuple[str, object] | None = None
    help: str | None = None
    config: type | None = None  # as Num's
    field: str | None = None

    @classmethod
    def of(cls, config, field: str, *, count: str, when: tuple[str, object] | None = None,
           help: str | None = None) -> Picks:
        s = declared(config, field)
        return cls(s.key, s.label, tuple(field_default(config, field)), count, when,
                   s.help if help is None else help, config, field)

    def describe(self) -> str:
        return "whole numbers from 1"

    def shown(self, values: Mapping[str, object]) -> tuple[int, ...]:
        """The picks that exist for the values on screen: those in 1..n, in order, each once."""
        n = int(values[self.count])
        return tuple(sorted({int(v) for v in values[self.key] if 1 <= int(v) <= n}))


Spec = Num | Choice | Flag | Picks
PICKS_MAX = 1024  # a Picks control's numbers: 1 .. this, in a link and in a page's report (assets/js/page.js PICKS_MAX)


def check_values(specs: Sequence[Spec], values: Mapping[str, object]) -> dict[str, object]:
    """`values` (by URL key) checked against the page's own controls, before any work is done with them: the
    setting a page reports to the server (an export, "Use my lab code") is data from a browser, which anyone can
    rewrite (G = 1024 and 160 seeds on a page whose slider stops at 64 and 64). Every key must be a control's, a
    number within its slider's range and on its steps, an option one of its options (True is no number here, 1
    no flag), picks whole numbers from 1 to PICKS_MAX. Returns the page's defaults with `values` over them;
    ValueError, one line naming the control, for the first value that is not one the page could have set.

    >>> check_values([Num("G", "Group size G", 2, 64, 8, 1)], {"G": 1024})
    Traceback (most recent call last):
    ...
    ValueError: Group size G (G) = 1024 is not a value of this page's control (a number from 2 to 64)
    """
    by_key = {s.key: s for s in specs}
    unknown = sorted(str(k) for k in values if k not in by_key)
    if unknown:
        shown = ", ".join(neutral(k[:40]) for k in unknown[:5])
        raise ValueError(f"not a setting of this page: {shown} (its settings: {', '.join(by_key)})")
    for key, value in values.items():
        spec = by_key[key]
        if not _allowed(spec, value):
            text = neutral(repr(value)[:60])
            raise ValueError(f"{spec.label} ({key}) = {text} is not a value of this page's control "
                             f"({spec.describe()})")
    return {**defaults(specs), **values}


def _allowed(spec: Spec, value: object) -> bool:
    """Could the page's control `spec` hold `value`?"""
    if isinstance(spec, Flag):
        return isinstance(value, bool)
    if isinstance(spec, Choice):  # 1 == True and 0 == 0.0 in Python: a bool matches only a bool option
        return any(value == o and isinstance(value, bool) == isinstance(o, bool) and
                   isinstance(value, str) == isinstance(o, str) for o in spec.options)
    if isinstance(spec, Picks):
        return (isinstance(value, (list, tuple)) and len(value) <= PICKS_MAX and
                all(isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= PICKS_MAX for v in value))
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return False
    if not spec.lo <= value <= spec.hi or (spec.integer and value != int(value)):
        return False
    return abs(spec.snap(value) - value) <= 1e-9 * max(1.0, abs(value))  # on the slider's steps


def build_config(config: type, specs: Sequence[Spec], values: Mapping[str, object], **fixed):
    """`config(...)` from the page's controls: every spec declared on `config` (`Num.of(config, field, ...)`
    and the like) sets its field to `values[spec.key]`; `fixed` sets what the page does not offer. The app and a
    lesson build their configs with this one rule (the lesson's twin: assets/js/control_rules.js configOf)."""
    fields = {s.field: _value(s, values[s.key]) for s in specs if s.config is config}
    return config(**fields, **fixed)


def defaults(specs: Sequence[Spec]) -> dict[str, object]:
    """{key: default}: what a page's controls show when its URL carries nothing."""
    return {s.key: s.default for s in specs}


def default_config(config: type, specs: Sequence[Spec], **fixed):
    """The config a page builds at its defaults."""
    return build_config(config, specs, defaults(specs), **fixed)


def _value(spec: Spec, value: object) -> object:
    """A widget's value as the field's type (a float slider may hand back 8.0 for an integer field's 8)."""
    if isinstance(spec, Flag):
        return bool(value)
    if isinstance(spec, Num):
        return int(round(value)) if spec.integer else float(value)
    if isinstance(spec, Picks):
        return tuple(int(v) for v in value)
    return value


def to_json(spec: Spec) -> dict:
    """What a page in the browser needs of a control (a lesson's manifest): kind, key, the config field it sets,
    label, help, default, and its range (lo, hi, step, integer, the slider's printf format) or options (each with
    its label). The page writes every number itself (assets/js/control_rules.js urlText)."""
    common = {"key": spec.key, "field": spec.field, "label": spec.label, "help": spec.help or "",
              "default": spec.default}
    if isinstance(spec, Num):
        return {"kind": "num", **common, "lo": spec.lo, "hi": spec.hi, "step": spec.step, "integer": spec.integer,
                "fmt": spec.fmt}
    if isinstance(spec, Choice):
        labels = spec.labels or {}
        return {"kind": "choice", **common, "options": list(spec.options),
                "labels": [str(labels.get(o, "")) for o in spec.options]}
    if isinstance(spec, Picks):
        return {"kind": "picks", **common, "default": list(spec.default), "count": spec.count,
                "when": None if spec.when is None else list(spec.when)}
    return {"kind": "flag", **common}
