"""sim/yourdata (runlog.py, diagnose.py): TRL's formats read, and every rule on synthetic logs whose answers are
worked by hand; the bounds on dead groups against enumerating every batch; a real GRPOTrainer run (integration)."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from sim.exercises import p_no_signal
from sim.yourdata.diagnose import (
    DiagnoseConfig,
    dead_group_bounds,
    diagnose,
    jensen_floor,
    json_text,
    rolling_mean,
    step_ranges,
    text_report,
    to_json,
)
from sim.yourdata.runlog import RunLog, load_run_log

T = 100


def make_log(settings=None, kind="step", **series) -> RunLog:
    """A log of T steps (1..T) from arrays or constants, under TRL's names (keys with / written with __); kind
    "optimizer": one generation batch per logged step, as a trainer_state.json with logging_steps 1 says."""
    metrics = {k.replace("__", "/"): np.broadcast_to(np.asarray(v, dtype=float), (T,)).copy()
               for k, v in series.items()}
    return RunLog("test", "t.csv", np.arange(1, T + 1), metrics, settings or {}, step_kind=kind)


def binary_std(r):
    return np.sqrt(np.asarray(r) * (1 - np.asarray(r)) * 64 / 63)  # 0/1 rewards over 64 answers: sample std


def finding(d, key):
    return next(f for f in d.findings if f.key == key)


def expected_z(rates, G):
    """frac_reward_zero_std in expectation for a batch drawing these prompts equally: mean_j p^G + (1-p)^G."""
    return float(np.mean(p_no_signal(np.asarray(rates), G)))


# ---- reading TRL's formats -----------------------------------------------------------------------------------

def test_csv_with_wandb_names_merges_rows_and_notes_the_rest():
    text = ("train/global_step,train/reward,train/frac_reward_zero_std,eval/reward,_runtime,train/loss\n"
            "1,0.5,0.1,,3.2,\n1,,,0.4,3.3,0.0\n2,0.6,0.2,,4.0,0.0\n")
    log = load_run_log(text.encode(), "wandb.csv")
    assert log.steps.tolist() == [1, 2] and log.metrics["reward"].tolist() == [0.5, 0.6]
    assert log.metrics["loss"].tolist() == [0.0, 0.0]  # step 1's two rows merged
    assert log.metrics["eval_reward"][0] == 0.4 and np.isnan(log.metrics["eval_reward"][1])  # eval/x read as eval_x
    assert log.notes == ("columns that are not GRPO metrics the rules read, ignored: _runtime",)
    assert log.step_kind == "optimizer" and log.unit(["reward"]) == "optimizer steps"
    with pytest.raises(ValueError, match="wandb.csv line 3: step 1 logs reward twice with different values"):
        load_run_log(text.replace("1,,,0.4", "1,0.7,,0.4").encode(), "wandb.csv")


def test_csv_without_a_step_column_and_a_bad_step():
    log = load_run_log(b"reward,entropy\n0.5,1\n0.6,0.9\n", "x.csv")
    assert log.steps.tolist() == [1, 2] and "no step column" in log.notes[0]
    with pytest.raises(ValueError, match="x.csv line 3, field step: 2.5 is not a step number"):
        load_run_log(b"step,reward\n1,0.5\n2.5,0.6\n", "x.csv")
    with pytest.raises(ValueError, match="no column has a metric name these rules read"):
        load_run_log(b"Wall time,Step,Value\n1,1,0.5\n", "tb.csv")  # a TensorBoard scalar export: one metric


def test_trainer_state_skips_eval_entries_and_the_closing_summary():
    state = {"log_history": [
        {"step": 1, "reward": 0.5, "loss": 0.0, "rewards/<b>acc</b>/mean": 0.5, "my_metric": 3},
        {"step": 1, "eval_reward": 0.4},
        {"step": 2, "reward": 0.75, "loss": None},
        {"step": 2, "train_runtime": 1.0, "train_loss": 0.0},
    ]}  # fmt: skip
    log = load_run_log(json.dumps(state).encode(), "trainer_state.json")
    assert log.source == "trainer_state.json" and log.steps.tolist() == [1, 2]
    assert np.isnan(log.metrics["loss"][1]) and log.reward_funcs == ["<b>acc</b>"]
    assert log.metrics["eval_reward"].tolist()[0] == 0.4  # the evaluation at step 1 sits beside its training step
    assert any("1 evaluation entries" in n for n in log.notes) and any("my_metric" in n for n in log.notes)


def test_a_tinylm_summary_says_its_group_size_beta_and_mu():
    summary = {"trl_log": [{"step": 1, "reward": 0.5, "frac_reward_zero_std": 0.0}],
               "config": {"grpo": {"group_size": 16, "beta": 0.04, "mu": 2, "loss_type": "grpo"}}}
    log = load_run_log(json.dumps(summary).encode(), "run.json")
    assert log.settings == {"group_size": 16, "beta": 0.04, "mu": 2, "loss_type": "grpo"}
    d = diagnose(log)
    assert (d.group_size, d.group_size_from) == (16, "the file")
    assert (diagnose(log, DiagnoseConfig(group_size=4)).group_size_from) == "the setting"
    assert finding(d, "kl_absent").status == "warn"  # the config says beta = 0.04 yet no kl was logged


# ---- the arithmetic -----------------------------------------------------------------------------------------

def test_rolling_mean_equals_a_loop_and_skips_missing_steps():
    rng = np.random.default_rng(0)
    x = rng.normal(size=200)
    x[rng.random(200) < 0.3] = np.nan
    for W in (1, 5, 50):
        loop = [np.nanmean(x[max(0, t - W + 1): t + 1]) if np.isfinite(x[max(0, t - W + 1): t + 1]).any()
                else np.nan for t in range(200)]
        np.testing.assert_allclose(rolling_mean(x, W), loop, equal_nan=True)


def test_jensen_floor_is_below_every_pool_of_that_mean():
    rng = np.random.default_rng(1)
    for G in (2, 8, 64):
        for _ in range(50):
            rates = rng.random(rng.integers(1, 30))
            assert expected_z(rates, G) >= float(jensen_floor(rates.mean(), G)) - 1e-12
    assert float(jensen_floor(0.5, 8)) == pytest.approx(2 / 256)


@pytest.mark.parametrize("G, P", [(2, 3), (3, 3), (4, 2)])
def test_dead_group_bounds_contain_every_batch_and_are_reached(G, P):
    """Oracle: every batch of P groups of G 0/1 answers (k correct per group). The bounds computed from its
    (reward, zero-std share) alone contain its true all-correct share b and all-wrong share a = z - b."""
    seen = {}
    for ks in itertools.product(range(G + 1), repeat=P):
        r = sum(ks) / (P * G)
        z = sum(k in (0, G) for k in ks) / P
        b = sum(k == G for k in ks) / P
        seen.setdefault((round(r, 9), round(z, 9)), []).append(b)
    for (r, z), bs in seen.items():
        bounds = dead_group_bounds(r, z, G)
        lo, hi = float(bounds["all_correct_lo"]), float(bounds["all_correct_hi"])
        assert lo - 1e-9 <= min(bs) and max(bs) <= hi + 1e-9  # sound
        assert float(bounds["all_wrong_lo"]) == pytest.approx(z - hi)
        assert float(bounds["all_wrong_hi"]) == pytest.approx(z - lo)
    # worked: r = 0.1, z = 0.6, G = 8 -> b <= 0.1 - 0.4/8 = 0.05, a >= 0.55
    w = dead_group_bounds(0.1, 0.6, 8)
    assert float(w["all_correct_hi"]) == pytest.approx(0.05) and float(w["all_wrong_lo"]) == pytest.approx(0.55)


def test_step_ranges():
    assert step_ranges([1, 2, 3, 7, 9, 10]) == "1–3, 7, 9–10" and step_ranges([]) == "none"


# ---- the rules on synthetic logs ----------------------------------------------------------------------------

def test_a_pool_mostly_too_hard():
    # 80% of prompts never solved, 20% at p = 0.5: r = 0.1, z = 0.8 + 0.2 * 2 * 0.5^8 = 0.8016 (G = 8).
    # floor 0.9^8 + 0.1^8 = 0.4305: excess 0.371 > 0.1. Bounds: b <= 0.1 - 0.1984/8 = 0.0752, so a >= 0.726 > z/2.
    r, z = 0.1, expected_z([0] * 8 + [0.5] * 2, 8)
    assert z == pytest.approx(0.8015625)
    d = diagnose(make_log(reward=r, reward_std=binary_std(r), frac_reward_zero_std=z))
    f = finding(d, "zero_std_floor")
    assert f.status == "info" and f.steps == tuple(range(1, T + 1))  # a spread pool: a fact, not an alarm
    assert "at 100 of 100 logged steps" in f.title
    assert f.numbers["median_excess"] == pytest.approx(z - (0.9**8 + 0.1**8))
    assert finding(d, "dead_all_wrong").status == "warn" and finding(d, "dead_all_correct").status == "ok"
    assert finding(d, "dead_all_wrong").numbers["all_wrong_lo_median"] == pytest.approx(z - (0.1 - (1 - z) / 8))
    # a >= 0.726 of all groups, over dead_warn = 0.5: a warning; with a bar of 0.8 it is information only
    assert finding(diagnose(d.log, DiagnoseConfig(dead_warn=0.8)), "dead_all_wrong").status == "info"


def test_a_pool_mostly_too_easy():
    # mirrored: r = 0.9, z = 0.8016; b >= 0.9 - 0.1984 * 7/8 = 0.726 > z/2
    r, z = 0.9, expected_z([1] * 8 + [0.5] * 2, 8)
    d = diagnose(make_log(reward=r, reward_std=binary_std(r), frac_reward_zero_std=z))
    assert finding(d, "dead_all_correct").status == "info" and finding(d, "dead_all_wrong").status == "ok"
    assert finding(d, "dead_all_correct").numbers["all_correct_lo_median"] == pytest.approx(0.9 - (1 - z) * 7 / 8)


def test_equal_prompts_sit_on_the_floor_and_g_too_small_goes_below_it():
    # every prompt at p = 0.5: z = 2 * 0.5^8 = 0.0078 = the floor at G = 8
    r, z = 0.5, 2 * 0.5**8
    d = diagnose(make_log(reward=r, reward_std=binary_std(r), frac_reward_zero_std=z))
    assert finding(d, "zero_std_floor").status == "ok"
    assert "zero_std_below" not in {f.key for f in d.findings}
    low = diagnose(make_log(reward=r, reward_std=binary_std(r), frac_reward_zero_std=z), DiagnoseConfig(group_size=2))
    assert finding(low, "zero_std_below").status == "warn"  # at G = 2 the floor is 0.5: the run's G is larger


def test_not_judged_without_0_1_rewards_or_with_batch_scaled_zero_std():
    # std 0.2 < 0.5, one batch per logged step, reward_std the batch's (it equals the one function's std, TRL >= 0.27):
    # partial credit
    partial = diagnose(make_log(kind="optimizer", reward=0.5, reward_std=0.2, rewards__acc__mean=0.5,
                                rewards__acc__std=0.2, frac_reward_zero_std=0.3))
    assert finding(partial, "zero_std_floor").status == "unknown" and "partial credit" in finding(
        partial, "zero_std_floor").reading
    # the same numbers where each logged value may average several batches (a console, steps 5 apart): cannot tell
    averaged = diagnose(make_log(reward=0.5, reward_std=0.2, frac_reward_zero_std=0.3))
    assert averaged.summary["binary_rewards"]["ok"] is None and finding(averaged, "zero_std_floor").status != "unknown"
    summed = diagnose(make_log(reward=1.4, frac_reward_zero_std=0.3))
    assert "leaves [0, 1]" in finding(summed, "zero_std_floor").reading
    batch = diagnose(make_log(reward=0.5, reward_std=binary_std(0.5), frac_reward_zero_std=np.arange(T) % 2))
    assert finding(batch, "zero_std_floor").numbers["zero_std_only_0_or_1"]
    assert "scale_rewards" in finding(batch, "zero_std_floor").reading


def test_steps_with_no_signal():
    z = np.zeros(T)
    z[[9, 10]] = 1.0
    gn = np.ones(T)
    gn[[9, 10]] = 0.0
    d = diagnose(make_log(reward=np.where(z == 1, 0.0, 0.5), frac_reward_zero_std=z, grad_norm=gn, loss=0.0))
    f = finding(d, "no_signal_steps")
    assert f.steps == (10, 11) and "grad_norm there 0" in f.title
    assert finding(d, "loss_zero").steps == tuple(s for s in range(1, T + 1) if s not in (10, 11))


def test_entropy_falling_by_how_much_and_from_when():
    # e_t = 1 - 0.005 (t - 1), W = 5: start = mean(e_1..e_5) = 0.99; the rolling mean at t is e_{t-2}
    # = 1 - 0.005 (t - 3), below 0.8 * 0.99 = 0.792 from t = 45; end = e_98 = 0.515: a fall of 48%.
    e = 1 - 0.005 * np.arange(T)
    d = diagnose(make_log(entropy=e), DiagnoseConfig(window=5))
    f = finding(d, "entropy_falling")
    assert f.status == "info" and f.numbers["first_step"] == 45 and f.steps == tuple(range(45, T + 1))
    assert f.numbers["drop"] == pytest.approx(1 - 0.515 / 0.99) and "no reward" in f.reading
    assert finding(diagnose(make_log(entropy=0.5)), "entropy_falling").status == "ok"
    # with a flat reward it is collapse without gain: a warning at every step it holds
    flat = finding(diagnose(make_log(entropy=e, reward=0.5), DiagnoseConfig(window=5)), "entropy_falling")
    assert flat.status == "warn" and flat.numbers["reward_gain"] == 0 and "collapse" in flat.reading
    assert flat.steps == tuple(range(45, T + 1))
    # a reward 0.3 -> 0.8 linearly, judged on quarters (25 values): its last average 0.8 - 12 x 0.5/99, its first
    # 0.3 + 12 x 0.5/99, a gain of 0.38: sharpening, information
    rising = finding(diagnose(make_log(entropy=e, reward=np.linspace(0.3, 0.8, T)), DiagnoseConfig(window=5)),
                     "entropy_falling")
    assert rising.status == "info" and rising.numbers["reward_gain"] == pytest.approx(0.5 - 24 * 0.5 / 99)
    assert "as the reward rose" in rising.title
    # a reward that dips before it rises (0.5, then 0.45 for 40 steps, then up to 0.7) still rose over the run
    dip = np.concatenate([np.full(10, 0.5), np.full(40, 0.45), np.linspace(0.45, 0.7, 50)])
    assert finding(diagnose(make_log(entropy=e, reward=dip), DiagnoseConfig(window=5)), "entropy_falling").status == \
        "info"
    # entropy that dips to 0.6 for 30 steps and comes back to 0.95 with the reward flat: no collapse at the end
    back = np.concatenate([np.ones(30), np.full(30, 0.6), np.full(T - 60, 0.95)])
    f = finding(diagnose(make_log(entropy=back, reward=0.5), DiagnoseConfig(window=5)), "entropy_falling")
    assert f.status == "info" and not f.numbers["below_at_end"] and f.title.startswith("Entropy dipped below 80%")
    assert f.title.endswith("ends at 0.95 (-5%)") and f.steps[0] == 33
    # a fall too young to judge: low for 10 of 100 steps at the end, the reward flat: information, not yet collapse
    late = np.concatenate([np.ones(90), np.full(10, 0.5)])
    f = finding(diagnose(make_log(entropy=late, reward=0.5), DiagnoseConfig(window=5)), "entropy_falling")
    assert f.status == "info" and not f.numbers["lasting"] and "too soon to tell from the reward" in f.title


def test_loss_near_zero_with_a_gradient():
    loss = np.where(np.arange(T) < 10, 0.0, 0.5)
    d = diagnose(make_log(loss=loss, grad_norm=2.0))
    f = finding(d, "loss_zero")
    assert f.status == "info" and f.steps == tuple(range(1, 11)) and f.numbers["share"] == pytest.approx(0.1)
    assert finding(diagnose(make_log(loss=0.3, grad_norm=2.0)), "loss_zero").status == "ok"


def test_kl_absent_means_beta_zero_and_clip_only_with_reuse():
    d = diagnose(make_log(reward=0.5, clip_ratio__region_mean=0.0))
    assert finding(d, "kl_absent").status == "info" and "β = 0" in finding(d, "kl_absent").title
    assert "never acts" in finding(d, "clip_active").title
    clip = np.zeros(T)
    clip[[2, 3]] = 0.08
    d = diagnose(make_log(reward=0.5, kl=np.linspace(0, 0.1, T), clip_ratio__region_mean=clip), )
    assert finding(d, "kl_absent").status == "ok"
    f = finding(d, "clip_active")
    assert f.steps == (3, 4) and "num_iterations" in f.reading and "clip-higher" in f.remedy
    said_mu1 = diagnose(make_log(reward=0.5, clip_ratio__region_mean=clip, settings={"mu": 1}))
    assert "the file's config says μ = 1" in finding(said_mu1, "clip_active").reading


def test_length_drift_at_a_flat_reward_but_not_with_a_rising_one():
    # length 100 -> 199 linearly (L_t = 99 + t), W = 5: start 102, rolling mean at t is L_{t-2} = 97 + t,
    # >= 1.2 * 102 = 122.4 from t = 26. Reward flat at 0.5.
    L = 99.0 + np.arange(1, T + 1)
    d = diagnose(make_log(completions__mean_length=L, reward=0.5), DiagnoseConfig(window=5))
    f = finding(d, "length_drift")
    assert f.status == "warn" and f.steps[0] == 26 and f.steps[-1] == T
    rising = diagnose(make_log(completions__mean_length=L, reward=np.linspace(0.2, 0.9, T)), DiagnoseConfig(window=5))
    f = finding(rising, "length_drift")
    assert f.status == "ok" and "R1-Zero" in f.reading


def test_missing_metrics_are_not_judged_and_json_carries_everything():
    d = diagnose(make_log(reward=0.5))
    assert finding(d, "entropy_falling").status == "unknown"
    out = to_json(d)
    json.dumps(out, allow_nan=False)  # no NaN in the JSON
    assert out["steps"] == list(range(1, T + 1)) and out["metrics"]["reward"][0] == 0.5
    assert {f["key"] for f in out["findings"]} >= {"zero_std_floor", "entropy_falling", "loss_zero", "kl_absent",
                                                   "clip_active", "length_drift"}
    assert "[unknown]" in text_report(d)


def test_the_json_download_escapes_control_c1_and_bidi_characters_in_metric_keys():
    """The page's download (json_text) wrote a reward function named with U+202E, U+009B (a terminal's CSI) and DEL
    raw (json.dumps(ensure_ascii=False) escapes U+0000-001F only); it is sim.export.json_text's text now, the one
    `diagnose --json` prints, and reads back to the very object."""
    name = "acc\u202eevil\u009b2J\x7f"
    d = diagnose(make_log(reward=np.linspace(0.2, 0.8, T), **{f"rewards__{name}__mean": np.linspace(0.2, 0.8, T)}))
    text = json_text(d)
    assert not any(c in text for c in "\u202e\u009b\x7f")
    assert '"rewards/acc\\u202eevil\\u009b2J\\u007f/mean"' in text  # the metric key, escaped
    assert json.loads(text) == json.loads(json.dumps(to_json(d)))
    assert f"rewards/{name}/mean" in json.loads(text)["metrics"]


# ---- real GRPOTrainer runs -----------------------------------------------------------------------------------

def test_the_shipped_600_step_trl_run_reads_as_docs_your_data_says():
    """assets/data/examples/tinylm_trl_trainer_state.json: a real TRL run of TinyLM (G = 8, beta = 0, mu = 1)."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "assets" / "data" / "examples" / "tinylm_trl_trainer_state.json"
    d = diagnose(load_run_log(path.read_bytes(), path.name))
    assert (d.group_size, d.group_size_from, d.window, len(d.log.steps)) == (8, "the default", 30, 600)
    assert d.summary["reward"]["start"] == pytest.approx(0.469, abs=5e-4)
    assert d.summary["reward"]["end"] == pytest.approx(0.967, abs=5e-4)
    assert len(finding(d, "zero_std_floor").steps) == 140
    assert finding(d, "dead_all_correct").steps[:2] == (238, 240) and len(finding(d, "dead_all_correct").steps) == 362
    assert finding(d, "dead_all_wrong").status == "ok" and finding(d, "no_signal_steps").steps == (537,)
    e = finding(d, "entropy_falling")
    assert e.numbers["first_step"] == 110 and round(e.numbers["drop"], 2) == 0.87
    assert finding(d, "kl_absent").status == "info" and finding(d, "clip_active").numbers["max"] == 0.0
    assert finding(d, "length_drift").status == "ok" and d.summary["binary_rewards"]["ok"] is True




@pytest.mark.integration
def test_diagnose_a_real_trl_trainer_state(tmp_path):
    pytest.importorskip("trl")
    from sim.tinylm.grpo_train import GRPOConfig
    from sim.tinylm.story import StoryConfig
    from sim.tinylm.trl_run import trl_story

    path = tmp_path / "trainer_state.json"
    cfg = StoryConfig(grpo=GRPOConfig(iterations=4, prompts_per_iter=2, group_size=4, eval_every=2), eval_samples=2)
    res = trl_story(cfg, keep_trainer_state=path)
    state = json.loads(path.read_text())
    assert state["global_step"] == 4 and state["log_history"][-1]["train_runtime"] > 0
    log = load_run_log(path.read_bytes(), path.name)
    assert log.source == "trainer_state.json" and log.steps.tolist() == [1, 2, 3, 4]
    assert log.metrics["reward"].tolist() == [row["reward"] for row in res["trl_log"]]
    assert set(log.metrics) >= {"reward", "reward_std", "frac_reward_zero_std", "entropy", "loss", "grad_norm",
                                "clip_ratio/region_mean", "completions/mean_length", "rewards/exact_match/mean"}
    d = diagnose(log, DiagnoseConfig(group_size=4))
    # TRL's defaults through the bridge: beta = 0 (no kl), mu = 1 (the clip never acts), loss_type grpo on-policy
    assert finding(d, "kl_absent").status == "info" and "kl" not in log.metrics
    assert finding(d, "clip_active").numbers["max"] == 0.0
    assert finding(d, "loss_zero").holds and np.all(np.abs(log.metrics["loss"]) <= 1e-6)
    assert d.summary["binary_rewards"]["ok"] in (True, None)
    summary = load_run_log(json.dumps(res).encode(), "run.json")  # the same run through its --json summary
    np.testing.assert_array_equal(summary.metrics["reward"], log.metrics["reward"])
    assert summary.settings["group_size"] == 4
