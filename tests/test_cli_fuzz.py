"""`python -m sim tinylm` and `python -m sim lab` under hypothesis-generated flags: any value for any flag gives a
result or one line `error: ...` and exit code 2, never a traceback. (The toy's command has its own fuzz test in
tests/test_toy_cli.py.) Accepted TinyLM settings stop after validation and the memory check: training itself is
tested elsewhere."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sim.settings import settings as declared
from sim.tinylm import cli as tinylm_cli
from sim.tinylm.grpo_train import GRPOConfig
from sim.tinylm.memory import check_run
from sim.tinylm.story import StoryConfig

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


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pairs=st.lists(st.tuples(st.sampled_from(TINYLM_FLAGS), VALUES), min_size=1, max_size=3))
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
