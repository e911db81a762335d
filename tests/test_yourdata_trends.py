"""sim/yourdata/rules: the pathologies issue 42 found plain in real logs' raw numbers and no rule named (a reward that
collapses, a reward that never moves, kl high from the first step, most groups dead whatever the reward kind, a clip
share of 47%, entropy low from the start), what a log has no number for (NaN, null), reward functions that never
vary, and every warning's persistence (a blip is not a warning)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sim.yourdata.diagnose import DiagnoseConfig, diagnose, text_report, to_json
from sim.yourdata.runlog import RunLog, load_run_log


def log_of(T: int = 200, kind: str = "optimizer", settings=None, **series) -> RunLog:
    metrics = {k.replace("__", "/"): np.broadcast_to(np.asarray(v, dtype=float), (T,)).copy()
               for k, v in series.items()}
    return RunLog("t", "t.json", np.arange(1, T + 1), metrics, settings or {}, (), kind)


def finding(d, key):
    return next(f for f in d.findings if f.key == key)


def noisy(mean, sd, T=200, seed=0):
    return np.asarray(mean, dtype=float) + np.random.default_rng(seed).normal(0, sd, T)


# ---- the reward over the run ----------------------------------------------------------------------------------

def test_a_reward_that_peaks_and_gives_back_is_a_collapse():
    """Issue 42: the reward rises 0.40 -> 0.85 and collapses to 0.02-0.22, the clipped share climbing to 98%."""
    T = 200
    t = np.arange(T)
    r = np.clip(np.where(t < 120, 0.40 + 0.45 * t / 120, 0.02 + 0.2 * np.random.default_rng(1).random(T)), 0, 1)
    clipped = np.where(t < 120, 0.02, 0.98)
    d = diagnose(log_of(reward=r, completions__clipped_ratio=clipped, completions__mean_length=np.where(
        t < 120, 300, 1020), completions__max_length=1024))
    f = finding(d, "reward_collapse")
    assert f.status == "warn" and "Reward collapse" in f.title and f.steps[0] <= 121 and f.steps[-1] == T
    assert f.numbers["best"] > 0.8 and f.numbers["end"] < 0.25
    assert finding(d, "no_learning").status == "ok" and finding(d, "truncation").status == "warn"


def test_a_reward_flat_for_400_steps_is_no_learning():
    """Issue 42: the reward stays at -0.25 +- 0.05 for 400 steps."""
    d = diagnose(log_of(T=400, reward=noisy(-0.25, 0.05, 400)))
    f = finding(d, "no_learning")
    assert f.status == "warn" and "no learning" in f.title and "over 400 optimizer steps" in f.title
    assert finding(d, "reward_collapse").status == "ok"


@pytest.mark.parametrize("T, status", [(29, "unknown"), (30, "warn")])
def test_a_trend_needs_a_run_long_enough_to_judge(T, status):
    assert finding(diagnose(log_of(T=T, reward=noisy(0.3, 0.05, T))), "no_learning").status == status


def test_noise_is_not_a_trend_and_a_solved_pool_is_not_a_stall():
    for seed in range(20):  # a flat noisy reward: never a collapse, whatever the draw
        d = diagnose(log_of(reward=np.clip(noisy(0.5, 0.15, seed=seed), 0, 1)))
        assert finding(d, "reward_collapse").status == "ok", seed
    rising = diagnose(log_of(reward=np.clip(noisy(np.linspace(0.2, 0.6, 200), 0.1), 0, 1)))
    assert finding(rising, "no_learning").status == "ok" and finding(rising, "reward_collapse").status == "ok"
    solved = finding(diagnose(log_of(reward=np.clip(noisy(0.95, 0.02), 0, 1))), "no_learning")
    assert solved.status == "info" and "already solved" in solved.title


def b_lo(r, z, G=8):
    """The least all-correct share the reward allows (sim/yourdata/rules/ceiling.py's condition), written out."""
    return r - (1 - z) * (G - 1) / G


@pytest.mark.parametrize("r, z, at", [(0.69, 0.8, True), (0.66, 0.8, False),  # b_lo 0.515 / 0.485 about 0.5
                                      (0.88, 0.86, True), (0.88, 0.3, False),  # held-out: 82% dead; the same r, live
                                      (0.30, 0.8, False)])  # dead groups mostly all wrong: a stall, whatever z
def test_a_flat_reward_at_its_ceiling_is_not_a_stall(r, z, at):
    """heldout/trl_console_rho0.70_seed42 read "no learning" at 0.88 -> 0.945 with 75-93% of groups all-equal: most
    groups all correct, nothing left to learn on them. The ceiling: the least all-correct share r - (1 - z)(G - 1)/G
    at least 0.5, lasting; entropy's fall there is sharpening, not collapse without gain."""
    assert (b_lo(r, z) >= 0.5) == at
    entropy = np.linspace(0.16, 0.06, 200)
    d = diagnose(log_of(reward=noisy(r, 0.01), frac_reward_zero_std=z, entropy=entropy))
    flat, ent = finding(d, "no_learning"), finding(d, "entropy_falling")
    assert (flat.status, ent.status) == (("info", "info") if at else ("warn", "warn")), (flat.title, ent.title)
    assert flat.numbers["ceiling"]["at"] == at
    if at:
        assert "at its ceiling, the pool is already solved (at least" in flat.title and "Too-easy" in flat.reading
        assert "while the reward sat at its ceiling" in ent.title and "harder prompts" in flat.remedy


def test_a_ceiling_must_last_to_the_end():
    """A run that fell from its ceiling is not excused: solved for the first half (b_lo 0.78), then the dead groups
    turn all wrong (reward 0.3, z 0.8) to the end, entropy falling and the reward lower than it started."""
    half = np.arange(200) < 100
    d = diagnose(log_of(reward=noisy(np.where(half, 0.9, 0.3), 0.01), frac_reward_zero_std=np.where(half, 0.86, 0.8),
                        entropy=np.linspace(0.16, 0.06, 200)))
    assert finding(d, "entropy_falling").status == "warn"
    top = finding(d, "entropy_falling").numbers["ceiling"]
    assert top["at"] is False and top["solved_steps"] >= 100
    mean_only = diagnose(log_of(reward=np.clip(noisy(0.95, 0.02), 0, 1), entropy=np.linspace(0.16, 0.06, 200)))
    assert finding(mean_only, "entropy_falling").status == "info"  # no zero-std share: the reward's 0.9 alone
    assert finding(mean_only, "no_learning").numbers["ceiling"]["by"] == "reward"
    summed = diagnose(log_of(reward=noisy(1.6, 0.01), frac_reward_zero_std=0.9))  # not 0/1: no bound, no ceiling
    assert finding(summed, "no_learning").status == "warn"


# ---- kl, clip, entropy, dead groups ----------------------------------------------------------------------------

def test_kl_high_from_the_first_step():
    """Issue 42: kl about 1.0 per token from step 1 (the reference is not the starting policy) was shown as [ok]."""
    d = diagnose(log_of(kl=noisy(1.0, 0.05), reward=noisy(0.4, 0.05)))
    f = finding(d, "kl_high_start")
    assert f.status == "warn" and "from the start" in f.title and "reference" in f.reading
    grows = diagnose(log_of(kl=np.linspace(0, 0.5, 200), reward=noisy(0.4, 0.05)))  # leaves the reference: fine
    assert finding(grows, "kl_high_start").status == "ok"


def test_a_kl_of_0_at_every_step_is_no_leash():
    """Issue 42: verl's actor/kl_loss = 0 at every step was still "β > 0, this run keeps a KL leash"."""
    text = "\n".join(json.dumps({"step": s, "data": {"critic/score/mean": 0.5, "actor/kl_loss": 0.0}})
                     for s in range(1, 41))
    f = finding(diagnose(load_run_log(text.encode(), "metrics.jsonl")), "kl_absent")
    assert f.status == "info" and f.title.startswith("actor/kl_loss is 0 at every step: no KL leash")


def test_a_clip_share_of_47_percent_warns():
    """Issue 42: verl's actor/pg_clipfrac at 47% was reported as information."""
    text = "\n".join(json.dumps({"step": s, "data": {"critic/score/mean": 0.5, "actor/pg_clipfrac": 0.47}})
                     for s in range(1, 101))
    f = finding(diagnose(load_run_log(text.encode(), "metrics.jsonl")), "clip_high")
    assert f.status == "warn" and f.title.startswith("actor/pg_clipfrac stays above 20%")
    low = finding(diagnose(log_of(clip_ratio__region_mean=0.004, reward=0.5)), "clip_active")
    assert low.status == "info"


def test_entropy_low_from_the_start():
    """Issue 42: entropy already at 0.08 at step 1."""
    d = diagnose(log_of(entropy=noisy(0.08, 0.005), reward=noisy(0.4, 0.05)))
    assert finding(d, "entropy_low_start").status == "warn"
    assert finding(diagnose(log_of(entropy=np.linspace(0.6, 0.08, 200), reward=0.4)),
                   "entropy_low_start").status == "ok"  # fell there: the entropy rule's, not this one's


def test_dead_groups_high_or_rising_whatever_the_reward_kind():
    """Issue 42: the zero-std share rises 0.1 -> 0.68 with rewards that are not 0/1; the floor rule only judges 0/1
    rewards, so nothing was said."""
    d = diagnose(log_of(reward=noisy(np.linspace(-6, 0, 200), 1.0), frac_reward_zero_std=np.linspace(0.1, 0.68, 200)))
    assert d.summary["binary_rewards"]["ok"] is False
    f = finding(d, "zero_std_high")
    assert f.status == "warn" and "65% of groups teach nothing at the end (frac_reward_zero_std 0.13 → 0.65)" in f.title
    learned = diagnose(log_of(reward=np.linspace(0.5, 0.95, 200), reward_std=np.sqrt(np.linspace(0.5, 0.95, 200) * (
        1 - np.linspace(0.5, 0.95, 200))), frac_reward_zero_std=np.linspace(0.1, 0.68, 200)))
    assert finding(learned, "zero_std_high").status == "info"  # 0/1 rewards near 0.95: surely mostly all correct


# ---- persistence -----------------------------------------------------------------------------------------------

def test_a_blip_in_length_is_no_drift():
    """Issue 42: length drift warned at 3 of 160 steps while its own title read 62.56 -> 64 (+2%)."""
    L = np.full(160, 62.5)
    L[100:103] = 90.0
    d = diagnose(log_of(T=160, reward=0.5, completions__mean_length=L), DiagnoseConfig(window=1))
    assert finding(d, "length_drift").status == "ok"
    grows = np.linspace(60, 100, 160)  # a drift that lasts to the end
    assert finding(diagnose(log_of(T=160, reward=0.5, completions__mean_length=grows)), "length_drift").status == "warn"


def test_truncation_warns_when_it_lasts():
    early = np.where(np.arange(200) < 30, 0.9, 0.02)  # answers cut at the start, fixed early
    d = diagnose(log_of(reward=0.5, completions__clipped_ratio=early))
    assert finding(d, "truncation").status == "info" and "it did not last" in finding(d, "truncation").title
    assert finding(diagnose(log_of(reward=0.5, completions__clipped_ratio=0.3)), "truncation").status == "warn"


# ---- what the file has no number for ---------------------------------------------------------------------------

def state(rows) -> bytes:
    return json.dumps({"log_history": [{"step": i + 1, **r} for i, r in enumerate(rows)]}).encode()


def test_a_nan_is_a_missing_value_and_a_finding_naming_the_step():
    """Issue 42: transformers writes "grad_norm": NaN for a step that diverged, and the whole log was refused."""
    rows = [{"reward": 0.5, "grad_norm": 0.3, "loss": 0.0} for _ in range(300)]
    rows[199]["grad_norm"] = float("nan")
    log = load_run_log(state(rows), "trainer_state.json")
    assert np.isnan(log.metrics["grad_norm"][199]) and log.gaps == {"grad_norm": {"nan": [200]}}
    f = finding(diagnose(log), "nonfinite")
    assert f.status == "info" and f.title == "grad_norm is NaN at step 200: that step diverged, and the run went on"
    for r in rows[199:]:  # bf16: the weights took the NaN, every later step is NaN
        r["grad_norm"] = r["loss"] = float("nan")
    d = diagnose(load_run_log(state(rows), "trainer_state.json"))
    f = next(f for f in d.findings if f.key == "nonfinite" and "grad_norm" in f.title)
    assert f.status == "warn" and "101 steps (200–300): the run diverged and did not recover" in f.title
    json.dumps(to_json(d), allow_nan=False)  # --json stays JSON


def test_a_null_names_the_key_as_the_file_spells_it():
    """Issue 42: verl writes null for a metric missing at a step; the log was refused as "field policy_loss: None is
    not a number", which also named the mapped field instead of the file's key actor/pg_loss."""
    lines = [json.dumps({"step": s, "data": {"critic/score/mean": 0.5, "actor/pg_loss": None if s in (3, 4) else 0.1}})
             for s in range(1, 11)]
    log = load_run_log("\n".join(lines).encode(), "metrics.jsonl")
    f = finding(diagnose(log), "null_values")
    assert f.status == "info" and f.title == "actor/pg_loss is null at 2 steps (3–4): not logged there"
    bad = "\n".join(lines[:2] + ['{"step": 3, "data": {"actor/pg_loss": "high"}}'])
    with pytest.raises(ValueError, match=r"metrics.jsonl line 3, field actor/pg_loss: high is not a number"):
        load_run_log(bad.encode(), "metrics.jsonl")


def test_reward_functions_that_never_vary():
    T = 60
    d = diagnose(log_of(T=T, reward=np.linspace(0.2, 1.2, T), rewards__correct__mean=np.linspace(0.2, 1.2, T),
                        rewards__strict_format__mean=0.0, rewards__soft_format__mean=0.0))
    f = finding(d, "funcs_constant")
    assert f.status == "info" and "2 of 3 reward functions never vary" in f.title and "never fire" in f.title
    assert finding(d, "reward_funcs_diverge").status == "unknown"  # no function "stays flat" that never moves
    assert "funcs_constant" not in {x.key for x in diagnose(log_of(T=5, reward=0.5, rewards__a__mean=0.0,
                                                                       rewards__b__mean=1.0)).findings}


def test_a_file_name_with_control_characters_never_reaches_a_finding_raw():
    name = "gnp\u202e.exe\x1b[31m\x07"
    d = diagnose(log_of(T=60, reward=np.linspace(0.2, 1.0, 60), **{f"rewards__{name}__mean": 0.0,
                                                                     "rewards__b__mean": np.linspace(0.2, 1.0, 60)}))
    text = text_report(d) + json.dumps([f.title + f.reading for f in d.findings], ensure_ascii=False)
    assert "\u202e" not in text and "\x1b" not in text and "\x07" not in text and "\\u202e" in text
