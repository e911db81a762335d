"""Every command under hypothesis-generated flags: any value for any flag, given once or twice, gives a result or one
line `error: ...` and exit code 2, never a traceback. (The toy's command has its own fuzz test in
tests/test_toy_cli.py.) Accepted TinyLM settings stop after validation and the memory check, a lesson or the lab's
checks before any work: those are tested elsewhere.

Examples are derandomized in the fast tier (tests/conftest.py's "fast" profile); what an exploration by hand
(`--hypothesis-profile=explore`) found is kept as an @example below."""

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sim.settings import settings as declared
from sim.tinylm import cli as tinylm_cli
from sim.tinylm.grpo_train import GRPOConfig
from sim.tinylm.memory import check_run
from sim.tinylm.story import StoryConfig
from tests.fixtures.clis import commands, forbid_work, value_flags
from tests.fixtures.props import examples

VALUES = st.one_of(
    st.text(max_size=12), st.integers(-10, 10**7).map(str), st.floats(allow_nan=True).map(repr),
    st.sampled_from(["nan", "inf", "-1", "0", "1", "2.5", "1e308", "none", "linear", "dapo", "loo", "", "--",
                     "/nonexistent/x.pt", "."]),
)
TINYLM_FLAGS = (["--" + n.replace("_", "-") for n in declared(GRPOConfig) if n not in ("prompts_per_iter",)]
                + ["--prompts", "-G", "--eval-samples", "--checkpoint", "--save-sft", "--sft-seed"])


def _validated_only(cfg: StoryConfig, **_):
    """Stands in for run_story: the same up-front checks (memory), then a small result."""
    check_run(cfg.grpo.prompts_per_iter, cfg.grpo.group_size, cfg.sft.model, cfg.eval_samples)
    return {"config": cfg.to_dict()}


@settings(max_examples=examples(150))
@given(pairs=st.lists(st.tuples(st.sampled_from(TINYLM_FLAGS), VALUES), min_size=1, max_size=3))
@example(pairs=[("--checkpoint", "--")])  # found by a fresh run (issue 41): argparse handed [] for the path
@example(pairs=[("--preset", "--")])  # its sibling: an unhashable list for the preset's name
@example(pairs=[("--out", ""), ("--save-sft", " ")])  # empty names: once "no --out" without a word
@example(pairs=[("--seed", "1"), ("--seed", "2")])  # a flag twice: once the last kept in silence
def test_tinylm_flags_never_give_a_traceback(pairs, capsys, monkeypatch):
    monkeypatch.setattr(tinylm_cli, "run_story", _validated_only)
    argv = [f"{flag}={value}" if flag.startswith("--") else f"{flag}{value}" for flag, value in pairs]
    code = tinylm_cli.main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert code in (0, 2), (argv, err)
    if code == 2:
        assert out == "" and err.startswith("error: ") and len(err.strip().splitlines()) == 1, err
    else:
        assert err == "" and "config" in json.loads(out)


@pytest.mark.parametrize("argv", [["check", "/nonexistent/tasks.py"], ["check", "--timeout", "x"], ["new"],
                                  ["frobnicate"], ["check", "--no-such-flag"]])
def test_lab_bad_input_is_one_line_and_exit_2(argv, capsys):
    from sim.lab.cli import main as lab_main

    code = lab_main(argv)
    out, err = capsys.readouterr()
    assert code == 2 and err.startswith("error: ") and len(err.strip().splitlines()) == 1, (code, err)


COMMANDS = commands()
FLAGS = {name: [a.option_strings[-1] for a in value_flags(parser)] for name, (parser, _, _) in COMMANDS.items()
         if name != "toy"}  # the toy's accepted flags run it: tests/test_toy_cli.py fuzzes them with small runs
CASES = st.sampled_from(sorted(FLAGS)).flatmap(lambda name: st.tuples(st.just(name), st.lists(
    st.tuples(st.sampled_from(FLAGS[name]), VALUES, st.booleans()), min_size=1, max_size=3)))  # flag, value, joined


@settings(max_examples=examples(300))
@given(case=CASES)
@example(case=("lesson", [("--views", "--", True)]))  # once AttributeError: 'list' object has no attribute 'split'
@example(case=("tinylm", [("--checkpoint", "~", False)]))  # explore: pathlib's "Could not determine home directory"
def test_every_commands_flags_never_give_a_traceback(case, capsys, monkeypatch, tmp_path_factory):
    """Any value for any value flag of every command (diagnose and plan read the shipped examples; a lesson build,
    the lab's checks and TinyLM's training are stood in for), as --flag=value or --flag value, once or twice."""
    command, picks = case
    parser, base, main = COMMANDS[command]
    forbid_work(monkeypatch, run_story=_validated_only, cmd_check=lambda path, timeout: 0,
                build=lambda *a, **k: {"pages": 0, "recorded": 0, "app_only": 0, "data_bytes": 0, "seconds": 0})
    folder = tmp_path_factory.mktemp("fuzz")
    monkeypatch.chdir(folder)  # a relative --out lands in a scratch folder
    argv = [str(folder / "out") if a == "OUT" else a for a in base]
    for flag, value, joined in picks:
        argv += [f"{flag}={value}"] if joined else [flag, value]
    code = main(argv + (["--json"] if command == "tinylm" else []))
    out, err = capsys.readouterr()
    assert code in (0, 2), (argv, err)
    if code == 2:
        assert out == "" and err.startswith("error: ") and len(err.strip().splitlines()) == 1, (argv, err)
    else:
        assert "Traceback" not in err, (argv, err)
