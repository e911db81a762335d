"""sim/yourdata/callback.py: `python -m sim diagnose`'s rules while a TRL run trains. The unit tests feed a
transformers TrainerState step by step, as Trainer.log does, and check the callback against the public API it
wraps (load_run_log + diagnose on the same steps: the oracle); the real TRL run is in tests/test_tinylm_trl.py."""

from __future__ import annotations

import importlib
import json
import math
import sys

import numpy as np
import pytest

from sim.yourdata.diagnose import DiagnoseConfig, diagnose
from sim.yourdata.runlog import load_run_log

pytest.importorskip("transformers", reason="TRL not installed (pip install -r requirements-trl.txt)")
pytest.importorskip("trl", reason="TRL not installed (pip install -r requirements-trl.txt)")

from transformers import TrainerControl, TrainerState, TrainingArguments  # noqa: E402
from trl import GRPOConfig  # noqa: E402

from sim.yourdata import callback as cb_module  # noqa: E402
from sim.yourdata.callback import DiagnoseCallback, run_settings  # noqa: E402

CPU = {"use_cpu": True, "bf16": False, "report_to": "none",  # no GPU here: TRL's default bf16 would refuse to start
       "activation_checkpointing": False}  # TRL turns it on under its old name, which transformers 5 warns about


def grpo_args(tmp_path, **kw):
    return GRPOConfig(output_dir=str(tmp_path / "out"), **CPU, **kw)


def log_entries(T: int = 40, dead: tuple[int, ...] = (23, 31)) -> list[dict]:
    """T steps of a GRPO log under TRL's names: reward about 0.5, a quarter of the groups dead, every group dead
    (frac_reward_zero_std = 1, grad_norm 0) at the steps in `dead`."""
    rng = np.random.default_rng(0)
    out = []
    for t in range(1, T + 1):
        r = float(np.clip(0.5 + 0.02 * rng.standard_normal(), 0, 1))
        z = 1.0 if t in dead else 0.25
        out.append({"step": t, "reward": r, "reward_std": math.sqrt(r * (1 - r)), "frac_reward_zero_std": z,
                    "entropy": 0.5, "loss": 0.0, "grad_norm": 0.0 if t in dead else 1.0,
                    "clip_ratio/region_mean": 0.0, "completions/mean_length": 4.0, "learning_rate": 1e-3})  # fmt: skip
    return out


def feed(callback, args, entries, *, rank0=True):
    """What Trainer does: on_train_begin, then per optimizer step the log appended and on_log; on_train_end."""
    state, control = TrainerState(is_world_process_zero=rank0), TrainerControl()
    callback.on_train_begin(args, state, control)
    for entry in entries:
        state.global_step = entry["step"]
        state.log_history.append(entry)
        callback.on_log(args, state, control, logs=entry)
    callback.on_train_end(args, state, control)
    return state


def test_run_settings_from_trls_own_config(tmp_path):
    # mu = 2, one generation per steps_per_generation (= gradient_accumulation_steps, TRL's default) micro-batches:
    # a generation every 2 optimizer steps, 4 x 8 / 4 = 8 prompts in it
    args = grpo_args(tmp_path, num_generations=4, per_device_train_batch_size=4, gradient_accumulation_steps=8,
                     num_iterations=2, beta=0.04, loss_type="dapo", scale_rewards="batch", logging_steps=1)
    assert run_settings(args) == {
        "group_size": 4, "beta": 0.04, "mu": 2, "loss_type": "dapo", "scale": "batch", "prompts_per_generation": 8,
        "steps_per_generation": 8, "gradient_accumulation_steps": 8, "num_processes": 1, "logging_steps": 1,
        "optimizer_steps_per_generation": 2, "step": "optimizer"}  # fmt: skip
    # two generations per optimizer step: steps_per_generation 4 of 8 accumulation steps
    args = grpo_args(tmp_path, num_generations=4, per_device_train_batch_size=4, gradient_accumulation_steps=8,
                     steps_per_generation=4)  # fmt: skip
    assert run_settings(args)["optimizer_steps_per_generation"] == 0.5
    assert run_settings(TrainingArguments(output_dir=str(tmp_path), **CPU)) == {}  # not GRPO: nothing to say


def test_each_rule_prints_one_line_the_check_it_first_fires(tmp_path):
    """Oracle: diagnose() on the steps logged so far at each check (every 5 steps, and the end)."""
    args, lines = grpo_args(tmp_path, num_generations=8, per_device_train_batch_size=8), []
    entries = log_entries()
    callback = DiagnoseCallback(tmp_path / "d.json", every=5, max_share=1.0, echo=lines.append)
    feed(callback, args, entries)
    want, seen = [], set()
    for check in range(5, 41, 5):
        state = {"log_history": entries[:check]}
        d = diagnose(load_run_log(json.dumps(state).encode(), "trainer_state.json"), DiagnoseConfig(group_size=8))
        for f in d.findings:
            if f.status == "warn" and f.key not in seen:
                seen.add(f.key)
                first = f.steps[0] if f.steps else check  # a rule of the whole run (no learning) holds now
                want.append((f.key, first, check, f"diagnose: step {check}: [warn] {f.title} "
                             f"(holds from step {first})"))  # fmt: skip
    assert "no_signal_steps" not in seen  # every group dead at step 23 alone: a fact (info), it did not last
    assert lines == [w[3] for w in want]
    assert callback.fired == {key: [first, check] for key, first, check, _ in want}


def test_the_file_is_a_trainer_state_the_reader_reads(tmp_path):
    path = tmp_path / "d.json"
    args = grpo_args(tmp_path, num_generations=8, per_device_train_batch_size=8, num_iterations=2)
    state = feed(DiagnoseCallback(path, every=5, echo=None), args, log_entries())
    obj = json.loads(path.read_text())
    assert obj["log_history"] == state.log_history and obj["global_step"] == 40
    assert obj["stateful_callbacks"]["DiagnoseCallback"]["attributes"]["run_settings"] == run_settings(args)
    assert state.stateful_callbacks["DiagnoseCallback"]["attributes"]["run_settings"]["mu"] == 2  # checkpoints too
    d = diagnose(load_run_log(path.read_bytes(), path.name), DiagnoseConfig(group_size=8))
    assert obj["diagnosis"]["at_step"] == 40 and obj["diagnosis"]["group_size"] == 8
    assert [(f["key"], f["status"], f["steps"]) for f in obj["diagnosis"]["findings"]] == \
        [(f.key, f.status, list(f.steps)) for f in d.findings]
    assert [p.name for p in tmp_path.iterdir()] == ["d.json"]  # written atomically: no temp file left


def test_a_nan_is_said_once_and_the_run_still_read(tmp_path):
    lines, entries = [], log_entries()
    entries[11]["grad_norm"] = float("nan")  # transformers logs a NaN gradient norm as NaN: JSON has no NaN
    entries[14]["grad_norm"] = float("inf")
    path = tmp_path / "d.json"
    callback = DiagnoseCallback(path, every=5, max_share=1.0, echo=lines.append)
    feed(callback, grpo_args(tmp_path, num_generations=8, per_device_train_batch_size=8), entries)
    said = [line for line in lines if "grad_norm is" in line]  # the first check after it, at step 15, says it
    assert said == ["diagnose: step 12: [warn] grad_norm is nan (written as null, which the rules skip)"]
    assert callback.fired["nonfinite:grad_norm"] == [12, 12]
    obj = json.loads(path.read_text(), parse_constant=lambda c: pytest.fail(f"{c} in the file"))
    assert obj["log_history"][11]["grad_norm"] is None and obj["log_history"][14]["grad_norm"] is None
    assert callback.errors == 0  # the rules kept reading
    nan = next(f for f in callback.diagnosis.findings if f.key == "nonfinite")  # read from the NaN itself, not null
    assert nan.status == "info" and nan.steps == (12, 15) and nan.title.startswith("grad_norm is NaN at 2 steps")


def test_only_the_main_process_reads_prints_and_writes(tmp_path):
    lines, path = [], tmp_path / "d.json"
    callback = DiagnoseCallback(path, every=1, max_share=1.0, echo=lines.append)
    feed(callback, grpo_args(tmp_path, num_generations=8, per_device_train_batch_size=8), log_entries(), rank0=False)
    assert lines == [] and not path.exists() and callback.diagnosis is None


def test_checks_take_at_most_max_share_of_the_time(tmp_path, monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(cb_module.time, "perf_counter", lambda: clock[0])
    real_diagnose = cb_module.diagnose

    def slow_diagnose(*a, **kw):  # every check costs 1 s of the fake clock
        clock[0] += 1.0
        return real_diagnose(*a, **kw)

    monkeypatch.setattr(cb_module, "diagnose", slow_diagnose)
    callback = DiagnoseCallback(None, every=1, max_share=0.05, echo=None)
    args, state, control = grpo_args(tmp_path, num_generations=8, per_device_train_batch_size=8), TrainerState(), \
        TrainerControl()  # fmt: skip
    callback.on_train_begin(args, state, control)
    checked = []
    for entry in log_entries(10):
        state.global_step = entry["step"]
        state.log_history.append(entry)
        clock[0] += 5.0  # a 5 s training step
        before = callback._checked_step
        callback.on_log(args, state, control, logs=entry)
        if callback._checked_step != before:
            checked.append(entry["step"])
    # 1 s per check at most 5% of the time: 19 s of training between checks, four steps of 5 s
    assert checked == [1, 5, 9]


def test_bad_settings_fail_before_training(tmp_path):
    with pytest.raises(ValueError, match="every must be"):
        DiagnoseCallback(every=0)
    with pytest.raises(ValueError, match="entropy_drop"):
        DiagnoseCallback(thresholds={"entropy_drop": 2.0})
    with pytest.raises(ValueError, match="is a directory"):
        DiagnoseCallback(tmp_path)


def test_restored_from_a_checkpoints_state(tmp_path):
    """Trainer(restore_callback_states_from_checkpoint=True) rebuilds a callback as cls(**args) + attributes."""
    callback = DiagnoseCallback(tmp_path / "d.json", every=3, thresholds={"entropy_drop": 0.3}, echo=None)
    feed(callback, grpo_args(tmp_path, num_generations=8, per_device_train_batch_size=8), log_entries())
    again = DiagnoseCallback.from_state(json.loads(json.dumps(callback.state())))
    assert again.state() == callback.state() and again.config.entropy_drop == 0.3 and again.fired == callback.fired


def test_without_transformers_the_import_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)
    monkeypatch.delitem(sys.modules, "sim.yourdata.callback")
    with pytest.raises(ImportError, match=r"pip install -r requirements-trl.txt"):
        importlib.import_module("sim.yourdata.callback")


@pytest.mark.integration  # 8 logs of 300 steps, read every 10: 7 s
def test_live_checks_stay_quiet_on_a_healthy_run_and_name_each_sick_one(tmp_path):
    """The same synthetic TRL logs as the rules' tests (tests/fixtures/runlogs.py), fed step by step: early in a
    healthy run the format is learned before the task and entropy falls before the reward rises, which a check
    at step 30 once called hacking and collapse; no warning there now, and each sick log's own rule warns."""
    from tests.fixtures.runlogs import SICK, trl_state

    expected = {"truncation": "Answers cut at the length cap", "hacking": "reasoning_steps rises",
                "spikes": None, "eval_falls": "The eval reward falls",
                "entropy_collapse": "Entropy falls", "length_drift": "Completions grow while the reward is flat",
                "hard_accuracy": "accuracy is 0/1"}
    args = grpo_args(tmp_path, num_generations=16, per_device_train_batch_size=16)
    for sick in (None, *SICK):
        said = []
        entries = [e for e in trl_state(sick=sick)["log_history"] if "train_runtime" not in e]
        feed(DiagnoseCallback(None, every=10, max_share=1.0, echo=said.append), args, entries)
        if sick is None or expected[sick] is None:  # two spikes the run came back from at once: information
            assert said == [], (sick, said)
        else:
            assert any(expected[sick] in line for line in said), (sick, said)
