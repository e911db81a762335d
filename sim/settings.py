"""Settings declared once: a config field carries its range, step, choices and help.

    @dataclass(frozen=True)
    class ToyConfig:
        group_size: int = setting(8, "answers G sampled per prompt", lo=2, hi=1024, integer=True)
        scale: str = setting("group", "advantage divisor", choices=SCALES, labels=SCALE_LABELS)

        def __post_init__(self):
            validate(self)          # every field against its declaration

From the same declaration come the engine's validation (`validate`), the command line's flags
(`add_flags`, `from_args`) and a page's controls (sim/views/controls.py): a setting also declares its URL key and
its label, once (`key="G", label="Group size G"`; the key defaults to the field's name, and a config class may
put a prefix before its keys, `URL_PREFIX = "tl_"`). So a value the page accepts from a URL, a value the CLI
accepts and a value the engine accepts are one rule, and a link's `G=16` reaches `group_size` by the declaration,
never by a table a page keeps.
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
    key: str | None = None  # the URL key of a page's control for it (None: the field's name); see control()
    label: str | None = None  # how a page labels that control (None: the help)

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

    def option_label(self, value) -> str:
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


def control(cls_or_obj, name: str) -> Setting:
    """The declared setting of field `name` with its URL key and label resolved: the key as declared (or the
    field's name) after the class's URL_PREFIX, the label as declared (or the help). Every control of every page
    and lesson takes its key and label from here."""
    spec = settings(cls_or_obj)[name]
    prefix = getattr(cls_or_obj, "URL_PREFIX", "")
    return dataclasses.replace(spec, key=prefix + (spec.key or name), label=spec.label or spec.help)


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


# ---- the GRPO settings shared by every config --------------------------------------------------
#
# The toy (sim.toy.ToyConfig), the sharpening toy (sim.sharpen.SharpenConfig) and TinyLM
# (sim.tinylm.GRPOConfig) all train with sim.grpo, so the settings they share are declared here once,
# with one range each, and sim.grpo checks its arguments against the same declarations. A config adopts
# one with `grpo_setting`:
#
#     @dataclass(frozen=True)
#     class MyConfig:
#         beta: float = grpo_setting("beta")                        # range, default and help from here
#         loss_type: str = grpo_setting("loss_type", choices=("grpo", "dapo", "cispo"))  # what it supports
#
#         def __post_init__(self):
#             validate(self)
#
#     sim.grpo.policy_loss(..., **loss_kwargs(cfg))                 # every loss field the config has
#
# Names follow the chapter where it has one (clip_eps, clip_eps_high, mu) and TRL 1.16.0's GRPOConfig
# otherwise (loss_type, importance_sampling_level, delta, sapo_*, vespo_*); the defaults are TRL's except
# loss_type (the chapter's "grpo"; TRL's default is "dapo"). sim/export.py does the renaming to TRL.

BASELINES = ("mean", "loo", "none")
SCALES = ("group", "batch", "none")
LOSS_TYPES = ("grpo", "bnpo", "dapo", "dr_grpo", "cispo", "sapo", "luspo", "vespo")
IMPORTANCE_LEVELS = ("token", "sequence")
DDOFS = (0, 1)
BASELINE_LABELS = {"mean": "group mean (GRPO)", "loo": "leave-one-out (RLOO)", "none": "none (REINFORCE)"}
SCALE_LABELS = {"group": "group std (GRPO)", "batch": "batch std (TRL option)", "none": "none (Dr. GRPO)"}
LOSS_TYPE_LABELS = {"grpo": "grpo (per response)", "bnpo": "bnpo (token mean)", "dapo": "dapo (token mean, TRL)",
                    "dr_grpo": "dr_grpo (constant)", "cispo": "cispo (clipped weight, MiniMax-M1)",
                    "sapo": "sapo (soft gate)", "luspo": "luspo (GSPO x length)", "vespo": "vespo (Gamma weight)"}
IMPORTANCE_LEVEL_LABELS = {"token": "token (PPO, GRPO)", "sequence": "sequence (GSPO)"}
DDOF_LABELS = {0: "population (chapter)", 1: "sample (TRL)"}

_GRPO = {  # name: (default, Setting), each with its URL key and its control's label
    "group_size": (8, Setting("answers G sampled per prompt (TRL's num_generations)", lo=2, hi=1024, integer=True,
                              step=1, key="G", label="Group size G")),
    "baseline": ("mean", Setting("advantage baseline", kind="choice", choices=BASELINES, labels=BASELINE_LABELS,
                                 key="baseline", label="Baseline")),
    "scale": ("group", Setting("advantage divisor", kind="choice", choices=SCALES, labels=SCALE_LABELS,
                               key="scale", label="Divide the advantages by")),
    "ddof": (0, Setting("std convention", kind="choice", choices=DDOFS, labels=DDOF_LABELS, key="ddof",
                        label="Std convention")),
    "eps": (1e-4, Setting("added to the std before dividing (0 gives the chapter's exact +-1)", lo=0.0, hi=1.0,
                          key="std_eps", label="ε added to the std")),  # "eps" in a link is the clip's ε
    "beta": (0.0, Setting("weight of the k3 KL penalty to the reference (TRL's default 0; DeepSeekMath 0.04)",
                          lo=0.0, hi=100.0, key="beta", label="KL coefficient β")),
    "mu": (1, Setting("inner gradient steps per batch (GRPO's mu, TRL's num_iterations); > 1 makes the clip matter",
                      lo=1, hi=64, integer=True, step=1, key="mu", label="Updates per batch μ")),
    "clip_eps": (0.2, Setting("PPO clip range below 1, and above unless clip_eps_high is set (TRL's epsilon)",
                              lo=0.0, hi=1.0, low_open=True, step=0.05, key="eps", label="Clip ε")),
    "clip_eps_high": (None, Setting("clip range above 1 (none: clip_eps; DAPO's clip-higher 0.28); for cispo the cap "
                                    "on the weight itself (ScaleRL: 5) (TRL's epsilon_high)", lo=0.0, hi=10.0,
                                    low_open=True, step=0.01, optional=True, key="eps_high", label="Clip ε high")),
    "loss_type": ("grpo", Setting("loss: aggregation and objective (grpo is the chapter's; TRL's default is dapo)",
                                  kind="choice", choices=LOSS_TYPES, labels=LOSS_TYPE_LABELS, key="loss",
                                  label="Loss type")),
    "importance_sampling_level": ("token", Setting(
        "one ratio per token, or one per response, the geometric mean (GSPO)", kind="choice",
        choices=IMPORTANCE_LEVELS, labels=IMPORTANCE_LEVEL_LABELS, key="is_level", label="Importance ratio")),
    "delta": (None, Setting("two-sided clip: cap the unclipped ratio at delta, which bounds A < 0 tokens "
                            "(INTELLECT-2; none: off)", lo=1.0, hi=100.0, step=0.1, optional=True, key="delta",
                            label="Two-sided clip δ (caps ρ for A < 0)")),
    "sapo_temperature_pos": (1.0, Setting("SAPO gate temperature for A > 0", lo=0.0, hi=100.0, low_open=True,
                                          step=0.05, key="tau_pos", label="SAPO temperature τ, A > 0")),
    "sapo_temperature_neg": (1.05, Setting("SAPO gate temperature for A <= 0", lo=0.0, hi=100.0, low_open=True,
                                           step=0.05, key="tau_neg", label="SAPO temperature τ, A < 0")),
    "vespo_k_pos": (2.0, Setting("VESPO power k for A >= 0 (down-weights ratios below 1)", lo=0.0, hi=100.0)),
    "vespo_lambda_pos": (3.0, Setting("VESPO decay lambda for A >= 0 (down-weights ratios above 1)", lo=0.0,
                                      hi=100.0)),
    "vespo_k_neg": (3.0, Setting("VESPO power k for A < 0", lo=0.0, hi=100.0)),
    "vespo_lambda_neg": (2.0, Setting("VESPO decay lambda for A < 0", lo=0.0, hi=100.0)),
}
GRPO_SETTINGS: dict[str, Setting] = {name: spec for name, (_, spec) in _GRPO.items()}
GRPO_DEFAULTS: dict[str, object] = {name: d for name, (d, _) in _GRPO.items()}
# The keyword arguments of sim.grpo.policy_loss that a config may carry.
LOSS_FIELDS = ("loss_type", "beta", "clip_eps", "clip_eps_high", "importance_sampling_level", "delta",
               "sapo_temperature_pos", "sapo_temperature_neg", "vespo_k_pos", "vespo_lambda_pos", "vespo_k_neg",
               "vespo_lambda_neg")
_UNSET = object()


def grpo_setting(name: str, default=_UNSET, *, choices: tuple | None = None, key: str | None = None,
                 label: str | None = None, hi: float | None = None, help: str | None = None,
                 optional: bool = False) -> dataclasses.Field:
    """A config field for the shared GRPO setting `name`: its declared range, choices, help, URL key, label and
    default.

    `default` may differ from the shared one (it is checked against the shared range); `choices` may
    narrow a choice to what this config's engine supports (a subset, never a new value); `hi` may narrow a range
    to what this config's engine holds (the toy's G up to its cap; never wider); `optional` lets a config leave it
    unset (None: "the file's", for a reader of someone's run); `help` words it for this config; `label` words the
    control for a config whose engine reads the setting differently (the KL page's CISPO cap is 1 + ε high);
    `key` keeps a config's older URL key (TinyLM's clip ε was always tl_clip). A page narrows its slider further
    (sim.views.controls.Num.of)."""
    if name not in _GRPO:
        raise ValueError(f"{name!r} is not a shared GRPO setting; one of {tuple(_GRPO)}")
    d, spec = _GRPO[name]
    if hi is not None:
        if spec.hi is None or hi > spec.hi or hi < spec.lo:
            raise ValueError(f"{name}: hi = {hi} must narrow the shared range [{spec.lo}, {spec.hi}]")
        spec = dataclasses.replace(spec, hi=hi)
    if optional or help is not None:
        spec = dataclasses.replace(spec, optional=optional or spec.optional, help=help or spec.help)
    if choices is not None:
        extra = [c for c in choices if c not in spec.choices]
        if spec.kind != "choice" or extra or not choices:
            raise ValueError(f"{name}: choices must be a non-empty subset of {spec.choices}, got {choices}")
        spec = dataclasses.replace(spec, choices=tuple(choices))
    if label is not None or key is not None:
        spec = dataclasses.replace(spec, label=label or spec.label, key=key or spec.key)
    d = d if default is _UNSET else default
    spec.check(name, d)
    return dataclasses.field(default=d, metadata={"setting": spec})


@dataclasses.dataclass(frozen=True)
class GRPOSettings:
    """The GRPO settings a trainer on sim.grpo takes (TinyLM's GRPOConfig; the toy's ToyConfig repeats them
    today), as fields to inherit: `class GRPOConfig(GRPOSettings)`. They come first in the subclass's field
    order; a field the subclass declares again (say loss_type with narrower choices) replaces the inherited
    one in place. A subclass calls validate(self) in its __post_init__, which checks these too."""

    beta: float = grpo_setting("beta")
    mu: int = grpo_setting("mu")
    clip_eps: float = grpo_setting("clip_eps")
    clip_eps_high: float | None = grpo_setting("clip_eps_high")
    baseline: str = grpo_setting("baseline")
    scale: str = grpo_setting("scale")
    ddof: int = grpo_setting("ddof")
    eps: float = grpo_setting("eps")
    loss_type: str = grpo_setting("loss_type")


def check_grpo(**values) -> None:
    """Check sim.grpo's arguments against the shared declarations: ValueError names the first bad one."""
    for name, value in values.items():
        GRPO_SETTINGS[name].check(name, value)


def loss_kwargs(cfg) -> dict[str, object]:
    """The keyword arguments of sim.grpo.policy_loss carried by a config: every LOSS_FIELDS name it has."""
    return {name: getattr(cfg, name) for name in LOSS_FIELDS if hasattr(cfg, name)}
