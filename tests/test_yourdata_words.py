"""sim/yourdata/words.py and sim/views/your_data.py's documents: 0/1 words only where the log is consistent with 0/1
rewards (issue 34 item 4), each branch of a caption tested by a named log, and both pages saying what they cannot
show (issue 37 row 4)."""

from __future__ import annotations

import numpy as np
import pytest

from sim.player import build_payload
from sim.views.doc import Caption, Charts, Note
from sim.views.your_data import plan_document, run_charts, run_document
from sim.yourdata.diagnose import DiagnoseConfig, diagnose
from sim.yourdata.plan import PlanConfig, load_pool, plan, rate_histogram
from sim.yourdata.runlog import RunLog, load_run_log
from sim.yourdata.words import READINGS, kind_of, reading
from tests.fixtures.runlogs import trl_bytes

T = 60


def log_of(**series) -> RunLog:
    m = {k.replace("__", "/"): np.broadcast_to(np.asarray(v, dtype=float), (T,)).copy() for k, v in series.items()}
    return RunLog("t", "t.csv", np.arange(1, T + 1), m, {}, (), "optimizer")


def binary_std(r):
    return np.sqrt(r * (1 - r) * 64 / 63)


r = np.linspace(0.3, 0.7, T)
LOGS = {  # a named log per kind of reward -> the kind diagnose sees
    "0/1 rewards (reward_std as a verifier gives)": (log_of(reward=r, reward_std=binary_std(r),
                                                            frac_reward_zero_std=0.1), "0/1"),
    "partial credit (the batch's std 0.2, one batch a step)": (log_of(
        reward=r, reward_std=0.2, rewards__acc__mean=r, rewards__acc__std=0.2, frac_reward_zero_std=0.1), "not 0/1"),
    "a std of 0.2 TRL 0.14-0.26 logged (the groups' mean std): cannot tell": (log_of(
        reward=r, reward_std=0.2, rewards__acc__mean=r, rewards__acc__std=binary_std(r), frac_reward_zero_std=0.1),
        "unknown"),
    "a std no 0/1 reward can reach (0.946 at 0.40)": (log_of(reward=0.4, reward_std=0.946, frac_reward_zero_std=0.1),
                                                      "not 0/1"),
    "three functions summed (reward up to 2.4)": (load_run_log(trl_bytes(), "trainer_state.json"), "not 0/1"),
    "no reward_std: cannot tell": (log_of(reward=r, frac_reward_zero_std=0.1), "unknown"),
}


@pytest.mark.parametrize("name", LOGS)
def test_the_reward_is_read_as_its_kind(name):
    log, kind = LOGS[name]
    d = diagnose(log, DiagnoseConfig(group_size=16 if kind == "not 0/1" and "three" in name else None))
    assert kind_of(d.summary["binary_rewards"]) == kind
    charts = {c.title: c for c in run_charts(d)}
    reward = charts["Reward"].caption
    said = {"0/1": "With a 0/1 verifier the mean reward is the batch's accuracy",
            "not 0/1": "TRL: the weighted sum of the reward functions",
            "unknown": "if the rewards are 0/1 (a verifier) it is the batch's accuracy"}
    assert said[kind] in reward and all(said[k] not in reward for k in said if k != kind)
    zero = charts.get("Groups that teach nothing (frac_reward_zero_std)")
    floor = [t for t in zero.traces if t.name.startswith("floor")] if zero else []
    assert bool(floor) == (kind != "not 0/1")  # the floor r^G + (1 - r)^G only where the rewards may be 0/1
    assert ("Dead groups: all wrong or all correct?" in charts) == (kind != "not 0/1")
    if "Reward spread (reward_std)" in charts:
        lines = [t.name for t in charts["Reward spread (reward_std)"].traces]
        assert any("√(r̄(1 − r̄))" in n for n in lines) == (kind != "not 0/1")
    if kind == "not 0/1":
        every = " ".join(c.caption for c in charts.values())
        assert "batch's accuracy" not in every and "as 0/1 rewards" not in every


def test_every_reading_has_its_three_kinds():
    for key, words in READINGS.items():
        if isinstance(words, dict):
            assert set(words) == {"0/1", "not 0/1", "unknown"}, key
            assert len({reading(key, k) for k in words}) == 3, key


def test_a_run_with_only_reward_functions_draws_them_and_says_what_it_cannot():
    """Issue 37 row 4: a log with only rewards/<f>/mean crashed the page ("the player needs at least one chart")."""
    d = diagnose(log_of(rewards__acc__mean=r))
    blocks = run_document(d)
    charts = next(b for b in blocks if isinstance(b, Charts)).charts
    assert [c.title for c in charts] == ["Reward functions (rewards/<f>/mean)"]
    build_payload("run_charts", T=1, charts=list(charts))
    said = " ".join(b.text for b in blocks if isinstance(b, Caption))
    assert "Not drawn, the log lacks what they read: Reward (needs reward)" in said
    nothing = run_document(diagnose(log_of(clip_ratio__low_min=0.0)))  # a log with no chart at all
    assert not any(isinstance(b, Charts) for b in nothing)
    assert any(isinstance(b, Note) and "No chart to draw" in b.text for b in nothing)


def test_a_pool_never_or_always_solved_says_so_and_draws():
    """Issue 37 row 4: every prompt at c = 0 or c = n crashed Your prompts ("expected a non-empty 1-D array": no
    dynamic-sampling line can be drawn when every group is dead)."""
    pool = load_pool(b"correct,samples\n" + b"0,8\n8,8\n" * 20, "extreme.csv")
    cfg = PlanConfig()
    p = plan(pool, cfg)
    blocks = plan_document(p, cfg, *rate_histogram(pool))
    assert isinstance(blocks[0], Note) and "never solved (20) or always solved (20)" in blocks[0].text
    charts = blocks[1].charts
    build_payload("plan_charts", T=1, charts=list(charts))
    answers = next(c for c in charts if c.title.startswith("Answers per batch"))
    assert [t.name for t in answers.traces] == ["generated", "in groups that teach nothing"]
    spread = load_pool(b"correct,samples\n1,8\n8,8\n", "mixed.csv")  # one prompt teaches: no note
    assert not isinstance(plan_document(plan(spread, cfg), cfg, *rate_histogram(spread))[0], Note)
