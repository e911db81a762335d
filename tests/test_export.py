"""sim/export.py: settings JSON, history CSV, and the TRL GRPOConfig snippet (checked against TRL itself)."""

import ast
import csv
import io

import pytest

from sim.export import (
    history_csv,
    load_settings_json,
    settings_json,
    trl_grpo_config,
    trl_snippet,
)


def test_chapter_settings_map_to_trl_fields():
    # DeepSeekMath: G = 64, beta = 0.04, std scaling on, one update per batch, clip 0.2.
    ex = trl_grpo_config(group_size=64, beta=0.04, scale_std=True, mu=1, clip_eps=0.2, seed=3)
    assert ex.args == {
        "num_generations": 64,
        "beta": 0.04,
        "scale_rewards": "group",
        "loss_type": "grpo",
        "epsilon": 0.2,
        "num_iterations": 1,
        "seed": 3,
    }


def test_dr_grpo_turns_off_std_and_notes_untranslatable_settings():
    ex = trl_grpo_config(
        group_size=8, beta=0.0, scale_std=False, baseline="rloo", dynamic_sampling=True, learning_rate=0.5
    )
    assert ex.args["scale_rewards"] == "none"
    text = " ".join(ex.notes)
    assert "RLOO" in text and "dynamic sampling" in text and "learning_rate" in text
    assert "learning_rate" not in ex.args  # the toy's step size is not an AdamW learning rate
    # beta = 0: no note about the reference model
    assert "reference model" not in text
    assert "reference model" in " ".join(trl_grpo_config(group_size=8, beta=0.04, scale_std=True).notes)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(group_size=1, beta=0.0, scale_std=True), "group_size"),
        (dict(group_size=8, beta=-0.1, scale_std=True), "beta"),
        (dict(group_size=8, beta=0.0, scale_std=True, mu=0), "mu"),
        (dict(group_size=8, beta=0.0, scale_std=True, clip_eps=2.0), "clip_eps"),
        (dict(group_size=8, beta=0.0, scale_std=True, baseline="ppo"), "baseline"),
        (dict(group_size=8, beta=0.0, scale_std=True, loss_type="sum"), "loss_type"),
    ],
)
def test_bad_settings_name_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        trl_grpo_config(**kwargs)


def _snippet_kwargs(src: str) -> dict:
    call = next(n for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Call))
    return {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}


def test_snippet_is_python_that_trl_accepts(tmp_path):
    ex = trl_grpo_config(group_size=16, beta=0.001, scale_std=False, mu=2, clip_eps=0.28, seed=7)
    src = trl_snippet(ex)
    kwargs = _snippet_kwargs(src)
    assert {k: v for k, v in kwargs.items() if k != "output_dir"} == ex.args
    from trl import GRPOConfig  # the oracle: TRL's own config class accepts and keeps every value

    cfg = GRPOConfig(
        **{**kwargs, "output_dir": str(tmp_path)},
        report_to=[],
        per_device_train_batch_size=16,
        use_cpu=True,
        bf16=False,
    )
    assert cfg.num_generations == 16 and cfg.beta == 0.001 and cfg.scale_rewards == "none"
    assert cfg.loss_type == "grpo" and cfg.epsilon == 0.28 and cfg.num_iterations == 2 and cfg.seed == 7


def test_snippet_carries_notes_as_comments():
    src = trl_snippet(trl_grpo_config(group_size=8, beta=0.0, scale_std=True, baseline="none"))
    assert "# Note: baseline none" in src
    ast.parse(src)


def test_settings_json_round_trip():
    s = {"G": 8, "beta": 0.04, "std": True, "baseline": "grpo", "seed": 0}
    text = settings_json(s, page="training")
    assert load_settings_json(text) == s
    assert text == settings_json(dict(reversed(list(s.items()))), page="training")  # stable key order
    with pytest.raises(ValueError, match="must be a grpo-playground"):
        load_settings_json('{"G": 8}')
    with pytest.raises(ValueError, match="JSON"):
        load_settings_json("not json")
    with pytest.raises(ValueError, match="setting 'x'"):
        settings_json({"x": [1, 2]}, page="p")


def test_history_csv_columns_and_rows():
    text = history_csv({"iteration": [0, 1, 2], "accuracy": [0.5, 0.625, 0.7]})
    rows = list(csv.reader(io.StringIO(text)))
    assert rows == [["iteration", "accuracy"], ["0", "0.5"], ["1", "0.625"], ["2", "0.7"]]
    with pytest.raises(ValueError, match="equal lengths"):
        history_csv({"a": [1, 2], "b": [1]})
