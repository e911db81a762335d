"""sim/yourdata/names.py: one table of the metric names the reader knows (TRL 0.14 to 1.16, verl, OpenRLHF), each
read as one meaning; docs/your-data.md prints the same table; the 0/1 check reads reward_std with the semantics of
the TRL that wrote it (issue 42)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from sim.yourdata.diagnose import diagnose
from sim.yourdata.names import NAMES, TRL_116, canonical, not_grpo
from sim.yourdata.runlog import load_run_log

DOCS = Path(__file__).resolve().parents[1] / "docs" / "your-data.md"


@pytest.mark.parametrize("key, means", [
    ("completion_length", "completions/mean_length"), ("rewards/accuracy_reward", "rewards/accuracy_reward/mean"),
    ("rewards/accuracy_reward/mean", "rewards/accuracy_reward/mean"), ("clip_ratio", "clip_ratio/region_mean"),
    ("critic/score/mean", "reward"), ("actor/entropy_loss", "entropy"), ("actor/kl_loss", "kl"),
    ("val-core/openai/gsm8k/acc/mean@1", "eval_reward"), ("val-core/gsm8k/reward/mean@16", "eval_reward"),
    ("val/test_score/gsm8k", "eval_reward"), ("actor_grad_norm", "grad_norm"), ("mean_reward", "reward"),
    ("reward", "reward"), ("eval_rewards/acc/mean", "eval_rewards/acc/mean"), ("timing_s/gen", None),
    ("rewards/chosen/extra/mean", "rewards/chosen/extra/mean"), ("critic/score/max", None),
])  # fmt: skip
def test_each_name_reads_as_one_meaning(key, means):
    hit = canonical(key)
    assert (hit[0] if hit else None) == means


def test_the_docs_print_the_table_the_code_reads():
    text = DOCS.read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([^`]+)` \| `([^`]+)` \| ([^|]+) \|", text, flags=re.M)
    table = {(spelled, means): where.strip() for spelled, means, where in rows}
    for n in NAMES:
        assert table.get((n.spelled, n.means)) == n.where, n.spelled
    for name in TRL_116:
        assert f"`{name}`" in text, name


def test_trls_older_names_are_read_and_judged():
    """Issue 42: TRL before the completions/* metrics logged completion_length and rewards/<func>; the length rules
    then said "not judged"."""
    rows = [{"step": s, "completion_length": 100 + s, "reward": 0.5, "reward_std": 0.3, "rewards/acc": 0.5,
             "kl": 0.001, "loss": 0.0, "grad_norm": 0.2} for s in range(1, 61)]
    d = diagnose(load_run_log(json.dumps({"log_history": rows}).encode(), "trainer_state.json"))
    assert d.log.reward_funcs == ["acc"] and d.log.key("completions/mean_length") == "completion_length"
    assert next(f for f in d.findings if f.key == "length_drift").status != "unknown"
    assert d.summary["binary_rewards"]["reward_std"] == "groups' mean"


def test_an_older_reward_std_is_the_groups_mean_and_never_called_partial_credit():
    """Issue 42: 0/1 rewards at 0.125 with a reward_std of 0.2315 (two right answers in one group of 8: that group's
    std is sqrt(2 * 6 / (8 * 7)) = 0.4629, the other group's 0, their mean 0.2315) were called "partial credit"."""
    group = np.sqrt(2 * 6 / (8 * 7))
    assert (group + 0) / 2 == pytest.approx(0.2315, abs=1e-4)
    rows = [{"step": s, "completion_length": 50, "reward": 0.125, "reward_std": 0.2315, "rewards/acc": 0.125}
            for s in range(1, 41)]
    d = diagnose(load_run_log(json.dumps({"log_history": rows}).encode(), "trainer_state.json"))
    assert d.summary["binary_rewards"]["ok"] is None and "partial credit" not in d.summary["binary_rewards"]["why"]


def test_the_0_1_check_is_bounded_on_both_sides():
    """Issue 42: a function with std 0.946 at mean 0.40 (0/1 rewards give at most 0.49 x sqrt(G/(G-1))) was
    called 0/1."""
    rows = [{"step": s, "reward": 0.4, "reward_std": 0.946, "rewards/f/mean": 0.4, "rewards/f/std": 0.946,
             "frac_reward_zero_std": 0.2} for s in range(1, 41)]
    d = diagnose(load_run_log(json.dumps({"log_history": rows}).encode(), "trainer_state.json"))
    b = d.summary["binary_rewards"]
    assert b["ok"] is False and b["ratio"] == pytest.approx(0.946 / np.sqrt(0.24)) and "above" in b["why"]


def test_what_is_not_a_grpo_run():
    assert not_grpo({"loss", "grad_norm", "learning_rate"}, {"loss", "grad_norm", "learning_rate"}).startswith(
        "a supervised")
    assert not_grpo({"reward", "loss"}, {"reward", "loss"}) is None
    assert not_grpo({"rewards/chosen", "rewards/rejected", "loss"}, {"loss"}).startswith("a DPO-family")
