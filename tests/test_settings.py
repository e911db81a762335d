"""Settings declared once (sim/settings.py): the engine, the command line and the page's URL controls
accept the same values because they read the same declaration (a link is read by the page's script,
assets/js/control_rules.js, run here under node). And the engine never imports the UI."""

import argparse
import dataclasses
import math
import random
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.settings import Setting, add_flags, from_args, setting
from sim.settings import settings as declared
from sim.sharpen import SharpenConfig
from sim.toy import ToyConfig
from sim.views.controls import Choice, Flag, Num, to_json
from tests.fixtures.node import js
from tests.fixtures.props import examples

CONFIGS = [ToyConfig, SharpenConfig]


def engine_accepts(cls, name, value) -> bool:
    try:
        cls(**{name: value})
    except ValueError:
        return False
    return True


class _Refuse(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _Refuse(message)


def cli_accepts(cls, name, text) -> bool:
    parser = _Parser()
    add_flags(parser, cls)
    flag = "--" + name.replace("_", "-")
    try:
        from_args(cls, parser.parse_args([f"{flag}={text}"]))
    except (_Refuse, ValueError):
        return False
    return True


EXACT = 2**53  # the largest whole number a page's script holds exactly (a JavaScript number)


def url_spec(cls, name):
    """The widest control a page can build for a field: its whole declared range (a whole number's up to EXACT: the
    seed's declared 2^63 - 1 is no slider's end)."""
    s = declared(cls)[name]
    if s.kind == "choice":
        return Choice.of(cls, name)
    if s.kind == "flag":
        return Flag.of(cls, name)
    lo = s.lo if not s.low_open else (s.lo + 1 if s.integer else math.nextafter(s.lo, math.inf))
    hi = min(s.hi, EXACT) if s.integer else s.hi
    return Num.of(cls, name, lo=lo, hi=hi, step=s.step or (1 if s.integer else 1e-6))


NUMBER_FIELDS = [(c, n) for c in CONFIGS for n, s in declared(c).items() if s.kind == "number" and not s.optional]
CHOICE_FIELDS = [(c, n) for c in CONFIGS for n, s in declared(c).items() if s.kind in ("choice", "flag")]


def url_reads(pairs: list[tuple]) -> list[tuple]:
    """(value, note or None) of each (spec, raw link text), read by the page's rules (control_rules.js), one node
    run for all."""
    got = js([{"op": "call", "module": "control_rules", "fn": "parseUrlValue", "args": [to_json(spec), raw]}
              for spec, raw in pairs])
    return [tuple(g) for g in got]


@pytest.mark.parametrize("cls,name", NUMBER_FIELDS, ids=lambda x: getattr(x, "__name__", x))
@settings(max_examples=examples(60))
@given(x=st.one_of(st.integers(-10**7, 10**7), st.floats(allow_nan=True, allow_infinity=True)))
def test_engine_and_cli_agree_on_numbers(cls, name, x):
    s = declared(cls)[name]
    engine = engine_accepts(cls, name, int(x) if s.integer and float(x).is_integer() else x)
    if s.integer and isinstance(x, float) and not x.is_integer():
        engine = False  # a fraction is not an integer (the engine refuses the float itself)
    if not (isinstance(x, float) and s.integer):  # "3.0" is not an int flag; 3.0 is not an int field
        assert cli_accepts(cls, name, str(x)) == engine, (name, x)


def test_the_url_gives_the_engine_only_what_it_accepts():
    """Whatever a link says for a number (in range or not, a fraction for an integer, NaN, infinities, 1e300), the
    page's reading of it is a value the engine accepts, and one read without a note is one the engine accepts as
    written. Every numeric field, its whole declared range, one node run."""
    rng = random.Random(15)
    pairs = []
    for cls, name in NUMBER_FIELDS:
        s = declared(cls)[name]
        lo, hi = s.lo, min(s.hi, EXACT) if s.integer else s.hi
        xs = [lo, hi, lo - 1, hi + 1, (lo + hi) / 2, lo + 0.5, -1e300, 1e300, math.nan, math.inf, -math.inf, 0, 3]
        xs += [rng.uniform(lo, hi) for _ in range(6)]
        xs += [rng.randint(int(lo), int(min(hi, lo + 10**6))) for _ in range(6)]
        pairs += [(cls, name, x) for x in xs]
    got = url_reads([(url_spec(cls, name), str(x)) for cls, name, x in pairs])
    quiet = 0
    for (cls, name, x), (value, note) in zip(pairs, got, strict=True):
        assert engine_accepts(cls, name, value), (cls.__name__, name, x, value)  # whatever the page shows, runs
        if note is None:
            quiet += 1
            typed = int(x) if declared(cls)[name].integer and float(x).is_integer() else x
            assert engine_accepts(cls, name, typed), (cls.__name__, name, x)  # taken as written: the engine's too
    assert quiet >= len(NUMBER_FIELDS)  # every field took some values as written


def test_engine_cli_and_url_agree_on_choices():
    pairs, want = [], []
    for cls, name in CHOICE_FIELDS:
        s = declared(cls)[name]
        values = list(s.choices) if s.kind == "choice" else [True, False]
        for v in values:
            assert engine_accepts(cls, name, v)
            pairs.append((url_spec(cls, name), str(v).lower() if s.kind == "flag" else str(v)))
            want.append((v, None))
        for bad in ("GRPO", "std", "2", "maybe", ""):
            if bad not in [str(v) for v in values]:
                pairs.append((url_spec(cls, name), bad))
                want.append("a note")
                if s.kind == "choice":
                    assert not cli_accepts(cls, name, bad)
    got = url_reads(pairs)
    assert len(got) == len(want) > 2 * len(CHOICE_FIELDS)
    for (spec, raw), (value, note), w in zip(pairs, got, want, strict=True):
        if w == "a note":
            assert note is not None, (spec.key, raw)
        else:
            assert value == w[0] and isinstance(value, bool) == isinstance(w[0], bool) and note is None, (spec.key, raw)


def test_a_page_control_may_narrow_a_range_but_not_widen_it():
    assert Num.of(ToyConfig, "group_size", hi=64).hi == 64
    with pytest.raises(ValueError, match="not inside group_size's declared range"):
        Num.of(ToyConfig, "group_size", lo=1)
    with pytest.raises(ValueError, match="not all among"):
        Choice.of(ToyConfig, "scale", options=("group", "std"))


# ---- a setting declares its URL key and label once: every page and lesson reads them from there


def test_group_size_is_declared_once_and_each_config_narrows_it():
    """The toy's, TinyLM's, plan's and diagnose's G are the shared GRPO setting: its label, its key (TinyLM's with
    the page's prefix), a range inside the shared one."""
    from sim.settings import _GRPO
    from sim.tinylm.grpo_train import GRPOConfig
    from sim.yourdata.plan import PlanConfig
    from sim.yourdata.rules.base import DiagnoseConfig

    shared = _GRPO["group_size"][1]
    for config in (ToyConfig, GRPOConfig, PlanConfig, DiagnoseConfig):
        g = declared(config)["group_size"]
        assert (g.label, g.key) == (shared.label, shared.key) == ("Group size G", "G"), config
        assert shared.lo <= g.lo and g.hi <= shared.hi, config
    assert declared(PlanConfig)["group_size"].hi == 64 and declared(DiagnoseConfig)["group_size"].optional


def test_a_control_takes_its_url_key_and_label_from_the_declaration():
    from sim.settings import control

    g = Num.of(ToyConfig, "group_size", hi=64)
    assert (g.key, g.label, g.config, g.field) == ("G", "Group size G", ToyConfig, "group_size")
    assert control(ToyConfig, "n_seeds").key == "seeds" and control(ToyConfig, "iterations").key == "T"
    assert control(ToyConfig, "max_redraws").key == "max_redraws"  # no key declared: the field's name
    assert control(ToyConfig, "max_redraws").label == declared(ToyConfig)["max_redraws"].help  # no label: the help
    from sim.tinylm.grpo_train import GRPOConfig

    assert control(GRPOConfig, "group_size").key == "tl_G"  # a config's URL_PREFIX goes before its keys
    assert control(GRPOConfig, "beta").key == "tl_beta" and control(GRPOConfig, "clip_eps").key == "tl_clip"


def test_every_view_offers_each_setting_under_its_declared_key_and_label():
    """No page renames a setting: a view's control has its declaration's key and label (a view may narrow the range,
    pick options, set another default or word the help), and no page offers two controls under one key."""
    from sim.settings import control
    from sim.views.catalog import views

    for view in views():
        for spec in view.controls:
            assert spec.config is not None, (view.name, spec.key)  # every control is a declared setting
            declared_spec = control(spec.config, spec.field)
            assert (spec.key, spec.label) == (declared_spec.key, declared_spec.label), (view.name, spec.field)
        keys = [s.key for s in view.controls]
        assert len(keys) == len(set(keys)), view.name


def test_todays_links_open_the_same_settings():
    """The URL keys older links used reach the same fields (the keys are the declarations' now). TinyLM's trainer
    switch (tinylm_on) is gone, since the page trains in the browser: an old link's tinylm_on is said and ignored."""
    from sim.views.catalog import view

    old = {
        "training": {"G": "group_size", "beta": "beta", "scale": "scale", "baseline": "baseline", "lr": "lr",
                     "lr_w": "lr_w", "mu": "mu", "eps": "clip_eps", "eps_high": "clip_eps_high", "loss": "loss_type",
                     "dyn": "dynamic_sampling", "d_min": "d_min", "d_max": "d_max", "seed": "seed", "seeds": "n_seeds",
                     "T": "iterations"},
        "one_group": {"G": "group_size", "scale": "scale", "loss": "loss_type", "mode": "mode", "c": "correct",
                      "pick": "pick"},
        "wasted": {"p": "p", "G": "group_size"},
        "std_scaling": {"G": "group_size", "lr": "lr", "seed": "seed"},
        "passk": {"n": "n", "c": "c", "k": "k", "sG": "group_size", "sT": "iterations", "seed": "seed"},
        "kl_clip": {"pi": "pi", "pi_ref": "pi_ref", "eps": "clip_eps", "eps_high": "clip_eps_high", "delta": "delta",
                    "tau_pos": "sapo_temperature_pos", "tau_neg": "sapo_temperature_neg", "p_old": "p_old",
                    "p_new": "p_new", "n": "n"},
        "tinylm": {"tl_trl": "trl", "tl_preset": "preset", "tl_iters": "iterations", "tl_P": "prompts_per_iter",
                   "tl_G": "group_size", "tl_lr": "lr", "tl_beta": "beta", "tl_mu": "mu", "tl_scale": "scale",
                   "tl_baseline": "baseline", "tl_loss": "loss_type", "tl_is_level": "importance_sampling_level",
                   "tl_clip": "clip_eps", "tl_seed": "seed", "tl_eval": "eval_samples"},
        "your_run": {"G": "group_size", "W": "window"},
        "your_prompts": {"G": "group_size", "B": "batch_prompts", "lr": "lr", "T": "iterations",
                         "dyn": "dynamic_sampling", "seed": "seed"},
    }
    for name, keys in old.items():
        assert {s.key: s.field for s in view(name).controls} == keys, name


def test_no_config_declares_one_url_key_twice():
    from sim.kl_clip import ClipView
    from sim.settings import control
    from sim.tinylm.grpo_train import GRPOConfig
    from sim.tinylm.story import StoryConfig
    from sim.yourdata.plan import PlanConfig
    from sim.yourdata.rules import DiagnoseConfig

    for cls in (ToyConfig, SharpenConfig, GRPOConfig, StoryConfig, ClipView, PlanConfig, DiagnoseConfig):
        keys = [control(cls, name).key for name in declared(cls)]
        assert len(keys) == len(set(keys)), cls.__name__


def test_help_and_flags_come_from_the_declaration():
    parser = argparse.ArgumentParser()
    add_flags(parser, ToyConfig)
    text = " ".join(parser.format_help().split())
    assert "answers G sampled per prompt (TRL's num_generations); an integer in [2, 1024]" in text
    assert "--lr-w" in text and "or none" in text and "--no-dynamic-sampling" in text
    assert {a.dest for a in parser._actions} >= {f.name for f in dataclasses.fields(ToyConfig)}


def test_setting_refuses_a_bad_declaration():
    with pytest.raises(ValueError, match="needs lo and hi"):
        setting(1, "x")
    with pytest.raises(ValueError, match="default must be in"):
        setting(5, "x", lo=0, hi=1)
    assert Setting("h", kind="choice", choices=(0, 1), labels={0: "zero"}).option_label(0) == "zero"


@pytest.mark.integration
def test_no_engine_module_imports_the_ui():
    """sim/ never imports streamlit or plotly: import every sim module in a fresh interpreter and look."""
    code = (
        "import importlib, pkgutil, sys, sim\n"
        "for m in pkgutil.walk_packages(sim.__path__, 'sim.'):\n"
        "    if m.name != 'sim.__main__': importlib.import_module(m.name)\n"
        "print(sorted({n.split('.')[0] for n in sys.modules} & {'streamlit', 'plotly', 'ui'}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


# ---- the GRPO settings shared by the toy, the sharpening toy and TinyLM: one declaration, one range each


def test_shared_grpo_settings_are_one_declaration_in_every_config():
    from sim.settings import GRPO_DEFAULTS, GRPO_SETTINGS
    from sim.tinylm.grpo_train import GRPOConfig

    seen = 0
    for cls in (ToyConfig, SharpenConfig, GRPOConfig):
        for name, spec in declared(cls).items():
            if name not in GRPO_SETTINGS:
                continue
            seen += 1
            shared = GRPO_SETTINGS[name]
            # the same help and kind; a choice may only be narrowed to what that engine supports, a range only to
            # what it holds (the toy's G); a config whose engine reads it differently words its label, or keeps an
            # older URL key: TinyLM's tl_clip, the sharpening toy's sG
            assert shared.hi is None or spec.hi <= shared.hi, (cls.__name__, name)
            same = dataclasses.replace(spec, choices=shared.choices, label=shared.label, key=shared.key, hi=shared.hi)
            assert same == shared, (cls.__name__, name)
            assert set(spec.choices) <= set(shared.choices)
            assert getattr(cls(), name) == GRPO_DEFAULTS[name], (cls.__name__, name)
    # toy 10: G, eps, clip eps, eps high, beta, mu, baseline, scale, ddof, loss type; sharpen 4 (G too); TinyLM 11
    # (+ G, IS level): "Group size G" is declared once, in sim/settings.py
    assert seen == 10 + 4 + 11


def test_the_drift_issue_15_named_is_gone():
    # eps was >= 1e-8 in the toy but could be 0 elsewhere; clip_eps excluded 0 in the toy only
    from sim.tinylm.grpo_train import GRPOConfig

    for cls in (ToyConfig, SharpenConfig, GRPOConfig):
        assert cls(eps=0.0).eps == 0.0  # 0 gives the chapter's exact +-1
        with pytest.raises(ValueError, match="eps"):
            cls(eps=-1e-9)
    for cls in (ToyConfig, GRPOConfig):
        with pytest.raises(ValueError, match="clip_eps"):
            cls(clip_eps=0.0)
        assert cls(mu=64).mu == 64


def test_grpo_setting_refuses_an_unknown_name_a_new_choice_and_a_bad_default():
    from sim.settings import grpo_setting

    with pytest.raises(ValueError, match="not a shared GRPO setting"):
        grpo_setting("lr")
    with pytest.raises(ValueError, match="subset"):
        grpo_setting("loss_type", choices=("grpo", "ppo"))
    with pytest.raises(ValueError, match="beta"):
        grpo_setting("beta", -1.0)


def test_a_config_adopts_every_loss_setting_and_hands_it_to_policy_loss():
    import torch

    from sim.grpo import policy_loss
    from sim.settings import LOSS_FIELDS, grpo_setting, loss_kwargs, validate

    @dataclasses.dataclass(frozen=True)
    class Every:
        loss_type: str = grpo_setting("loss_type", "sapo")
        beta: float = grpo_setting("beta")
        clip_eps: float = grpo_setting("clip_eps")
        clip_eps_high: float | None = grpo_setting("clip_eps_high")
        importance_sampling_level: str = grpo_setting("importance_sampling_level")
        delta: float | None = grpo_setting("delta")
        sapo_temperature_pos: float = grpo_setting("sapo_temperature_pos", 3.0)
        sapo_temperature_neg: float = grpo_setting("sapo_temperature_neg")
        vespo_k_pos: float = grpo_setting("vespo_k_pos")
        vespo_lambda_pos: float = grpo_setting("vespo_lambda_pos")
        vespo_k_neg: float = grpo_setting("vespo_k_neg")
        vespo_lambda_neg: float = grpo_setting("vespo_lambda_neg")

        def __post_init__(self):
            validate(self)

    cfg = Every()
    assert tuple(loss_kwargs(cfg)) == LOSS_FIELDS
    logp = torch.zeros(1, 1, dtype=torch.float64)
    loss, _ = policy_loss(logp, None, None, torch.ones(1, dtype=torch.float64), torch.ones(1, 1), **loss_kwargs(cfg))
    assert loss.item() == pytest.approx(-4 / 3 * 0.5)  # sapo at rho = 1: -(4 / tau) sigmoid(0) A, tau = 3
    parser = argparse.ArgumentParser()
    add_flags(parser, Every)  # the CLI flags follow the declarations
    args = parser.parse_args(["--loss-type", "vespo", "--importance-sampling-level", "sequence", "--delta", "none"])
    assert from_args(Every, args).loss_type == "vespo"
    assert not cli_accepts(Every, "sapo_temperature_neg", "0")
    assert not cli_accepts(Every, "delta", "0.5")


def test_the_shared_settings_are_inherited_and_a_narrowed_choice_stays_in_place():
    from sim.settings import GRPO_DEFAULTS, GRPOSettings, grpo_setting, setting, validate
    from sim.tinylm.grpo_train import GRPOConfig

    @dataclasses.dataclass(frozen=True)
    class Narrow(GRPOSettings):
        lr: float = setting(0.1, "step size", lo=0.0, hi=1.0)
        loss_type: str = grpo_setting("loss_type", choices=("grpo", "cispo"))

        def __post_init__(self):
            validate(self)

    shared = [f.name for f in dataclasses.fields(GRPOSettings)]
    assert [f.name for f in dataclasses.fields(Narrow)] == [*shared, "lr"]  # loss_type keeps its place
    assert declared(Narrow)["loss_type"].choices == ("grpo", "cispo")
    with pytest.raises(ValueError, match="loss_type"):
        Narrow(loss_type="dapo")
    with pytest.raises(ValueError, match="clip_eps"):
        Narrow(clip_eps=0.0)  # an inherited field is checked by the subclass's validate
    assert issubclass(GRPOConfig, GRPOSettings) and {n: getattr(GRPOConfig(), n) for n in shared} == {
        n: GRPO_DEFAULTS[n] for n in shared}
