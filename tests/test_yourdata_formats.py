"""sim/yourdata/formats.py and runlog.py's readers of other trainers' logs: verl's file logger, W&B's chart-panel CSV,
OpenRLHF's and verl's names in a CSV, each read under TRL's names; refusals name the line; the docs list the
mapping as the code has it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from sim.yourdata.datafile import DataError
from sim.yourdata.diagnose import diagnose
from sim.yourdata.formats import OPENRLHF, VERL
from sim.yourdata.runlog import load_run_log
from tests.fixtures.runlogs import verl_lines

DOCS = Path(__file__).resolve().parents[1] / "docs" / "your-data.md"


def refused(data: bytes, name: str, match: str) -> str:
    with pytest.raises(DataError) as e:
        load_run_log(data, name)
    assert "\n" not in str(e.value) and match in str(e.value), str(e.value)
    return str(e.value)


def test_verl_file_logger_lines_read_under_trls_names():
    text = (json.dumps({"step": 0, "data": {"val-core/openai/gsm8k/reward/mean@1": 0.3}}) + "\n"
            + json.dumps({"step": 1, "data": {"critic/score/mean": 0.25, "actor/entropy": 0.7, "actor/grad_norm": 0.2,
                                               "actor/pg_clipfrac": 0.01, "actor/kl_loss": 0.001,
                                               "response_length/mean": 310.5, "response_length/clip_ratio": 0.02,
                                               "timing_s/gen": 12.0, "training/global_step": 1}}) + "\n\n"
            + json.dumps({"step": 2, "data": {"critic/score/mean": 0.5, "actor/entropy": 0.6}}) + "\n")
    log = load_run_log(text.encode(), "metrics.jsonl")
    assert log.source == "verl file logger" and log.step_kind == "verl" and log.unit(["reward"]) == "steps"
    assert log.steps.tolist() == [0, 1, 2]  # step 0: the validation before training
    assert log.metrics["reward"][1:].tolist() == [0.25, 0.5] and log.metrics["eval_reward"][0] == 0.3
    assert log.metrics["clip_ratio/region_mean"][1] == 0.01 and log.metrics["kl"][1] == 0.001
    assert log.metrics["completions/clipped_ratio"][1] == 0.02
    assert any("timing_s/gen" in n for n in log.notes) and any("gsm8k" in n for n in log.notes)
    d = diagnose(log)
    zero = next(f for f in d.findings if f.key == "zero_std_floor")
    assert zero.status == "unknown" and "no frac_reward_zero_std" in zero.reading  # verl does not log it


@pytest.mark.parametrize("line, words", [
    ('{"step": 2, "metrics": {}}', "m.jsonl line 3: not a verl file-logger entry"),
    ('{"step": 2, "data": {"actor/entropy": NaN}}', "m.jsonl: line 3, field actor/entropy: NaN is not a finite"),
    ('{"step": 2, "data": {"critic/score/mean": 1e400}}', "line 3, field critic/score/mean: 1e400 is too large"),
    ('{"step": 2, "data": {"response_length/clip_ratio": 1.5}}', "m.jsonl line 3, field completions/clipped_ratio: "
                                                                 "1.5 is outside [0, 1]"),
    ('{"step": "two", "data": {}}', "m.jsonl line 3, field step: two is not a step number"),
    ('{"step": 2, "data": {"actor/entropy": 0.5}', "m.jsonl: line 3, column"),
])  # fmt: skip
def test_a_bad_verl_line_is_refused_with_its_line(line, words):
    head = '{"step": 0, "data": {"critic/score/mean": 0.1}}\n{"step": 1, "data": {"critic/score/mean": 0.2}}\n'
    refused((head + line + "\n").encode(), "m.jsonl", words)


def test_a_verl_run_of_10000_steps_reads_whole():
    log = load_run_log(verl_lines(steps=2000).encode(), "metrics.jsonl")  # the bench reads 10,000 (bench_your_data)
    assert len(log.steps) == 2001 and np.isfinite(log.metrics["reward"][1:]).all()
    assert log.metrics["eval_reward"][~np.isnan(log.metrics["eval_reward"])].size == 101


def test_a_wandb_chart_panel_export_is_one_run():
    """Issue 34 item 5: W&B's "Export panel" CSV (Step, "<run> - train/reward", __MIN, __MAX) was refused."""
    text = ('"Step","grpo-7 - train/reward","grpo-7 - train/reward__MIN","grpo-7 - train/reward__MAX"\n'
            '1,0.25,0.2,0.3\n2,0.5,0.4,0.6\n')
    log = load_run_log(text.encode(), "panel.csv")
    assert log.steps.tolist() == [1, 2] and log.metrics["reward"].tolist() == [0.25, 0.5]
    assert any("W&B panel export of the run grpo-7" in n for n in log.notes)
    assert any("2 __MIN/__MAX columns" in n for n in log.notes)
    two = text.replace('"grpo-7 - train/reward__MAX"', '"grpo-8 - train/reward"')
    refused(two.encode(), "panel.csv", "panel.csv: a W&B panel of 2 runs (grpo-7, grpo-8); export the panel with one")


def test_openrlhf_and_verl_names_in_a_csv():
    openrlhf = ("train/global_step,train/reward,train/kl,train/policy_loss,train/ppo_clip_ratio,train/entropy_loss,"
                "train/response_length,train/actor_lr,train/return\n1,0.3,0.01,0.0,0.02,0.8,250,1e-6,0.3\n")
    log = load_run_log(openrlhf.encode(), "openrlhf.csv")
    assert log.metrics["entropy"][0] == 0.8 and log.metrics["clip_ratio/region_mean"][0] == 0.02
    assert log.metrics["completions/mean_length"][0] == 250 and log.metrics["learning_rate"][0] == 1e-6
    assert any("train/return" in n for n in log.notes)
    verl = "training/global_step,critic/score/mean,actor/entropy\n1,0.5,0.7\n2,0.6,0.65\n"
    log = load_run_log(verl.encode(), "verl.csv")
    assert log.step_kind == "verl" and log.metrics["reward"].tolist() == [0.5, 0.6]
    refused(b"step,reward,critic/score/mean\n1,0.5,0.5\n", "both.csv", "names reward twice")


def test_the_docs_list_every_mapping_the_reader_applies():
    """docs/your-data.md's table of other trainers' names is the code's (formats.VERL, formats.OPENRLHF)."""
    text = DOCS.read_text()
    table = dict(re.findall(r"^\| `([^`]+)` \| `([^`]+)` \|", text, flags=re.M))
    for name, trl in {**VERL, **OPENRLHF}.items():
        assert table.get(name) == trl, name
    assert "frac_reward_zero_std" in text.split("verl does not log")[1][:300]


def test_a_log_history_in_memory_reads_as_its_file():
    """runlog.from_log_history: what a TrainerCallback hands over while the run trains (trainer.state.log_history)
    reads as the trainer_state.json it becomes, with the settings the caller knows."""
    from sim.yourdata.runlog import from_log_history
    from tests.fixtures.runlogs import trl_state

    state = trl_state()
    live = from_log_history(state["log_history"], "live run", {"group_size": 16, "mu": 2})
    saved = load_run_log(json.dumps(state).encode(), "trainer_state.json")
    assert live.steps.tolist() == saved.steps.tolist() and live.metrics.keys() == saved.metrics.keys()
    assert all(np.array_equal(live.metrics[k], saved.metrics[k], equal_nan=True) for k in live.metrics)
    assert live.settings == {"group_size": 16, "mu": 2} and live.unit(["reward"]) == "generation steps"
    assert diagnose(live).group_size == 16
    with pytest.raises(DataError, match=r"^live run: log_history\[1\] \(step 2\), field reward: 1.5 is not"):
        from_log_history([{"step": 1, "reward": 0.5}, {"step": 2, "reward": "1.5"}], "live run")
