"""Settings declared once: a config field carries its range, step, choices and help.

    @dataclass(frozen=True)
    class ToyConfig:
        group_size: int = setting(8, "answers G sampled per prompt", lo=2, hi=1024, integer=True)
        scale: str = setting("group", "advantage divisor", choices=SCALES, labels=SCALE_LABELS)

        def __post_init__(self):
            validate(self)          # every field against its declaration

From the same declaration come the engine's validation (`validate`), the command line's flags
(`add_flags`, `from_args`) and, in ui/controls.py, the page's URL-bound widgets. So a value the page
accepts from a URL, a value the CLI accepts and a value the engine accepts are one rule.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass

from sim.validate import check_choice, check_number

KINDS = ("number", "choice", "flag", "numbers")


@dataclass(frozen=True)
class Setting:
    """What one config field accepts. `kind` is inferred from the default where possible."""

    help: str  # one line: what it is (the range is added by describe())
    kind: str = "number"  # "number", "choice", "flag" or "numbers" (a tuple of numbers)
    lo: float | None = None  # allowed range [lo, hi] ((lo, hi] if low_open) for numbers
    hi: float | None = None
    integer: bool = False  # whole numbers only
    low_open: bool = False
    step: float | None = None  # the natural grid for a control (not enforced by the engine)
    choices: tuple = ()  # allowed values of a choice
    labels: Mapping | None = None  # display label per choice value (the value stays the engine's)
    optional: bool = False  # None is allowed (its meaning is in the help)

    def check(self, name: str, value) -> None:
        """Raise ValueError naming the field and its allowed values if `value` is not accepted."""
        if value is None:
            if not self.optional:
                raise ValueError(f"{name} must be set ({self.describe()}), got None")
            return
        if self.kind == "flag":
            if not isinstance(value, bool) and type(value).__name__ != "bool_":
                raise ValueError(f"{name} must be True or False, got {value!r}")
        elif self.kind == "choice":
            check_choice(name, value, self.choices)
        elif self.kind == "numbers":
            for x in tuple(value):
                check_number(name, x, self.lo, self.hi, integer=self.integer, low_open=self.low_open)
        else:
            check_number(name, value, self.lo, self.hi, integer=self.integer, low_open=self.low_open)

    def describe(self) -> str:
        """The allowed values in words, e.g. 'an integer in [2, 1024]' or 'one of group, batch, none'."""
        if self.kind == "flag":
            return "true or false"
        if self.kind == "choice":
            return "one of " + ", ".join(str(c) for c in self.choices)
        what = "an integer" if self.integer else "a number"
        lo = f"({_num(self.lo)}" if self.low_open else f"[{_num(self.lo)}"
        text = f"{what} in {lo}, {_num(self.hi)}]"
        return ("numbers, each " + text.split(" ", 1)[1]) if self.kind == "numbers" else text

    def label(self, value) -> str:
        """How a page shows a choice value."""
        return str(self.labels.get(value, value)) if self.labels else str(value)


def _num(x) -> str:
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    if isinstance(x, int) and x >= 2**31:
        return f"2**{int(math.log2(x + 1))}-1" if (x + 1) & x == 0 else f"{x:,}"
    return f"{x:g}" if isinstance(x, float) else str(x)


def setting(default, help: str, **kw) -> dataclasses.Field:
    """A dataclass field whose metadata holds its Setting. The kind follows the default: a bool is a
    flag, `choices=` makes a choice, a tuple `kind="numbers"`; anything else is a number."""
    if "kind" not in kw:
        if isinstance(default, bool):
            kw["kind"] = "flag"
        elif "choices" in kw:
            kw["kind"] = "choice"
    spec = Setting(help=help, **kw)
    if spec.kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {spec.kind!r}")
    if spec.kind in ("number", "numbers") and (spec.lo is None or spec.hi is None):
        raise ValueError(f"a number setting needs lo and hi ({help!r})")
    if spec.kind == "choice" and not spec.choices:
        raise ValueError(f"a choice setting needs choices ({help!r})")
    spec.check("default", default)
    return dataclasses.field(default=default, metadata={"setting": spec})


def settings(cls_or_obj) -> dict[str, Setting]:
    """The declared settings of a config class (or instance), in field order."""
    return {f.name: f.metadata["setting"] for f in dataclasses.fields(cls_or_obj) if "setting" in f.metadata}


def validate(obj) -> None:
    """Check every declared field of a config instance; ValueError names the first bad one."""
    for name, spec in settings(obj).items():
        spec.check(name, getattr(obj, name))


def default(cls, name: str):
    """The declared default of one field."""
    return next(f.default for f in dataclasses.fields(cls) if f.name == name)


# ---- command line ------------------------------------------------------------------------------


def _numbers(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None


def _optional(kind):
    def parse(text: str):
        return None if text.strip().lower() == "none" else kind(text)

    parse.__name__ = kind.__name__  # argparse names the type in its error message
    return parse


def add_flags(parser: argparse.ArgumentParser, cls, *, skip=(), flags: Mapping[str, str | tuple] | None = None) -> None:
    """One flag per declared field of `cls` (`--group-size` for group_size unless `flags` renames it, to a
    name or a tuple of names), with the default and the allowed values in the help. The values are checked
    when the config is built (from_args)."""
    for name, spec in settings(cls).items():
        if name in skip:
            continue
        names = (flags or {}).get(name, "--" + name.replace("_", "-"))
        flag = names if isinstance(names, str) else names[0]
        aliases = () if isinstance(names, str) else tuple(names[1:])
        d = default(cls, name)
        text = f"{spec.help}; {spec.describe()}" + (" or none" if spec.optional else "")
        if spec.kind == "flag":
            parser.add_argument(flag, *aliases, dest=name, action=argparse.BooleanOptionalAction, default=d,
                                help=spec.help)
        elif spec.kind == "choice":
            kind = type(spec.choices[0])
            parser.add_argument(flag, *aliases, dest=name, type=kind, choices=spec.choices, default=d, help=spec.help)
        elif spec.kind == "numbers":
            parser.add_argument(flag, *aliases, dest=name, type=_numbers, default=d,
                                help=text + f" (write {flag}=-1,0,2 when the first is negative)")
        else:
            kind = int if spec.integer else float
            parser.add_argument(flag, *aliases, dest=name, type=_optional(kind) if spec.optional else kind, default=d,
                                help=text)


def from_args(cls, args: argparse.Namespace, **overrides):
    """Build `cls` from parsed flags (every declared field found in `args`), then apply overrides."""
    values = {name: getattr(args, name) for name in settings(cls) if hasattr(args, name)}
    return cls(**(values | overrides))
