"""sim/yourdata/formats.py, console.py and runlog.py's readers of the files a run's log comes in: verl's file logger
and console, transformers' console, W&B's chart-panel CSV, flat JSON Lines, log_history as a JSON list, OpenRLHF's
and verl's names in a CSV, each read under TRL's names; refusals name the line and the file's own key; the caps on
names, reward functions and values (issue 43 row 1)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sim.yourdata.datafile import DataError
from sim.yourdata.diagnose import diagnose
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
    ('[1, 2]', "m.jsonl line 3: not a JSON object of one step's metrics"),
    ('{"step": 2, "data": {"critic/score/mean": 1e400}}', "line 3, field critic/score/mean: 1e400 is too large"),
    ('{"step": 2, "data": {"response_length/clip_ratio": 1.5}}', "m.jsonl line 3, field response_length/clip_ratio: "
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
    both = load_run_log(b"step,reward,critic/score/mean\n1,0.5,0.4\n", "both.csv")  # one meaning, two names:
    assert both.metrics["reward"].tolist() == [0.5] and any("critic/score/mean" in n for n in both.notes)  # TRL's


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


# ---- what else people publish ------------------------------------------------------------------------------------

def test_flat_json_lines_and_a_log_history_list_are_read():
    """Issue 42: one {"step": N, "reward": ...} per line was refused as "line 2, column 1: not valid JSON (Extra
    data)": it is valid JSON Lines. trainer.state.log_history dumped as a JSON list reads as its trainer_state."""
    lines = "\n".join(json.dumps({"step": s, "reward": 0.1 * s, "loss": 0.0, "mine": "x"}) for s in (1, 2, 3)) + "\n"
    log = load_run_log(lines.encode(), "metrics.jsonl")
    assert log.source == "JSON Lines" and log.steps.tolist() == [1, 2, 3]
    assert log.metrics["reward"].tolist() == pytest.approx([0.1, 0.2, 0.3]) and any("mine" in n for n in log.notes)
    history = [{"step": 1, "reward": 0.5, "loss": 0.0}, {"step": 1, "eval_reward": 0.4, "eval_loss": 0.1},
               {"step": 2, "train_runtime": 1.0, "train_loss": 0.0}]
    log = load_run_log(json.dumps(history).encode(), "step_logs.json")
    assert log.source == "log_history list" and log.metrics["eval_reward"].tolist() == [0.4]
    with pytest.raises(DataError, match="m.jsonl line 2: has no step"):
        load_run_log(b'{"step": 1, "reward": 0.5}\n{"reward": 0.6}\n', "m.jsonl")


def test_transformers_console_output_is_read_between_progress_bars():
    """A nohup.out of a TRL run: tqdm bars, warnings, one printed dict per logged step (recent transformers print
    the values as strings), the closing summary; rows numbered 1, 2, ... (a console prints no step)."""
    text = ("Loading checkpoint shards: 100%|##########| 2/2\n"
            "  2%|▏         | 10/405 [03:44<2:26:29, 22.25s/it]\r{'loss': 0.0, 'grad_norm': nan, 'reward': 0.25, "
            "'rewards/acc/mean': 0.25, 'completions/mean_length': 120.5, 'epoch': 0.02}\n"
            "UserWarning: {'not': 'a log'} something\n"
            "{'loss': '0.03119', 'grad_norm': '0.224', 'reward': '0.5', 'rewards/acc/mean': '0.5', 'epoch': '0.04'}\n"
            "{'train_runtime': 814.3, 'train_loss': -0.003, 'epoch': 1.0}\n")
    log = load_run_log(text.encode(), "nohup.out")
    assert log.source == "console" and log.steps.tolist() == [1, 2] and log.unit(["reward"]) == "logged steps"
    assert log.metrics["reward"].tolist() == [0.25, 0.5] and log.metrics["grad_norm"][1] == pytest.approx(0.224)
    assert log.gaps == {"grad_norm": {"nan": [1]}} and log.reward_funcs == ["acc"]


def test_a_console_kept_to_its_printed_dicts_is_a_console_not_json():
    """`grep "^{'loss'" nohup.out > steps.log` (heldout3/trl_console_csd_adq_seed42.log is such a cut): the file
    starts with `{'`, which no JSON does, so it is read as a console, not refused as bad JSON. A `{'` file with no
    log line in it is still refused in one line, as the JSON it looks like."""
    text = ("{'loss': '0', 'grad_norm': '0', 'completion_length': '256', 'reward': '0', 'reward_std': '0'}\n"
            "{'loss': '0', 'grad_norm': '0', 'completion_length': '225.1', 'reward': '0.125', 'reward_std': '0.2'}\n"
            "{'train_runtime': '1.482e+04', 'train_loss': '0', 'epoch': '0.02676'}\n")
    log = load_run_log(text.encode(), "steps.log")
    assert log.source == "console" and log.steps.tolist() == [1, 2]
    assert log.metrics["reward"].tolist() == [0.0, 0.125]
    assert log.metrics["completions/mean_length"].tolist() == [256.0, 225.1]
    assert "not valid JSON" in refused(b"{'a' 1}\n", "x.log", "line 1")


def test_verls_console_is_read_through_ray_prefixes_and_colours():
    text = ("INFO start\n\x1b[36m(TaskRunner pid=348037)\x1b[0m step:1 - actor/entropy:0.25 - actor/kl_loss:"
            "np.float64(0.001) - actor/kl_coef:0.001 - critic/score/mean:0.8 - val-core/gsm8k/acc/mean@1:0.7 - "
            "timing_s/gen:20.5\n"
            "\x1b[36m(TaskRunner pid=348037)\x1b[0m step:2 - actor/entropy:0.24 - actor/kl_loss:0.002 - "
            "critic/score/mean:0.85\n")
    log = load_run_log(text.encode(), "train.log")
    assert log.source == "verl console" and log.step_kind == "verl" and log.steps.tolist() == [1, 2]
    assert log.metrics["entropy"].tolist() == [0.25, 0.24] and log.metrics["kl"].tolist() == [0.001, 0.002]
    assert log.settings["beta"] == 0.001 and log.metrics["eval_reward"][0] == 0.7
    assert log.key("kl") == "actor/kl_loss" and log.key("eval_reward") == "val-core/gsm8k/acc/mean@1"


def test_verls_older_and_newer_names():
    """Issue 42: val-core/<source>/acc/mean@1 was not read as the eval reward; actor/entropy_loss (verl 0.4) was not
    entropy. Where a file has both entropy names, actor/entropy is read and the other noted."""
    rows = [{"step": s, "data": {"critic/score/mean": 0.5, "actor/entropy_loss": 0.7, "actor/entropy": 0.6,
                                 "val-core/a/acc/mean@1": 0.3, "val-core/b/acc/mean@1": 0.4}} for s in (1, 2)]
    log = load_run_log("\n".join(map(json.dumps, rows)).encode(), "m.jsonl")
    assert log.metrics["entropy"].tolist() == [0.6, 0.6] and log.metrics["eval_reward"].tolist() == [0.3, 0.3]
    assert any("actor/entropy_loss" in n and "val-core/b/acc/mean@1" in n for n in log.notes)


def test_a_nan_cell_in_a_csv_is_a_missing_value():
    log = load_run_log(b"train/global_step,train/reward,train/grad_norm\n1,0.5,0.3\n2,0.5,NaN\n3,0.6,inf\n", "w.csv")
    assert log.gaps == {"grad_norm": {"nan": [2], "inf": [3]}} and log.metrics["reward"].tolist() == [0.5, 0.5, 0.6]


def test_the_caps_on_names_and_reward_functions_come_before_any_array():
    """Issue 43 row 1: a JSON log where each step logs its own reward function (rewards/f<i>/mean at step i) built
    K metrics x K steps: 1.05 MB took 21 s and 3.3 GB. Now refused on its names, before an array is built."""
    from sim.yourdata import runlog

    history = [{"step": i, "reward": 0.5, f"rewards/f{i}/mean": 0.5} for i in range(1, 200)]
    with pytest.raises(DataError, match=r"s.json: 199 reward functions, over the cap of 64"):
        load_run_log(json.dumps({"log_history": history}).encode(), "s.json")
    wide = [{"step": 1, **{f"m{i}": 0.0 for i in range(1200)}, "reward": 0.5}]
    with pytest.raises(DataError, match=r"more than 1,000 distinct metric names"):
        load_run_log(json.dumps({"log_history": wide}).encode(), "w.json")
    ok = [{"step": i, "reward": 0.5, **{f"rewards/f{j}/mean": 0.5 for j in range(64)}} for i in range(1, 4)]
    assert len(load_run_log(json.dumps({"log_history": ok}).encode(), "ok.json").reward_funcs) == 64
    cells = [{"step": i, "reward": 0.5, "loss": 0.0} for i in range(1, 40)]
    assert runlog.MAX_CELLS > 39 * 2
    import unittest.mock

    with unittest.mock.patch.object(runlog, "MAX_CELLS", 50), pytest.raises(DataError, match="over the cap of 50"):
        load_run_log(json.dumps({"log_history": cells}).encode(), "c.json")


@pytest.mark.parametrize("keys, what", [
    ({"loss": 1.2, "grad_norm": 2.0, "learning_rate": 1e-5}, "a supervised or other Trainer run"),
    ({"loss": 0.6, "rewards/chosen": 0.1, "rewards/rejected": -0.1, "rewards/margins": 0.2,
      "rewards/accuracies": 0.6, "logps/chosen": -50.0}, "a DPO-family preference run"),
    ({"loss": 0.9, "log_odds_ratio": -0.5, "log_odds_chosen": 0.4, "nll_loss": 0.8, "rewards/chosen": -0.1,
      "rewards/rejected": -0.2}, "a DPO-family preference run"),
    ({"loss": 0.9, "log_odds_ratio": -0.5, "nll_loss": 0.8}, "an ORPO run"),
])  # fmt: skip
def test_a_log_that_is_not_grpo_is_said_in_one_line(keys, what):
    """Issue 42: an SFT and an ORPO trainer_state.json were read and told "No kl logged: beta = 0, no KL leash".
    TRL's own names (dpo_trainer.py, orpo_trainer.py) say what the run is; nothing is judged."""
    data = json.dumps({"log_history": [{"step": s, **keys} for s in range(1, 11)]}).encode()
    d = diagnose(load_run_log(data, "trainer_state.json"))
    assert [f.key for f in d.findings] == ["not_grpo"] and what in d.findings[0].title
    from sim.yourdata.diagnose import text_report

    assert text_report(d).count("\n") == 0 and "Nothing is judged" in text_report(d)
