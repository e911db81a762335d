"""sim/yourdata/rules: no warning on healthy runs (the shipped TinyLM run, sampled TRL runs with beta > 0, mu = 2, three
reward functions and evaluations, a verl run), the warning each sick run must raise, steps counted once in their own
unit, and the arithmetic of the new rules against loops and properties."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from sim.yourdata.diagnose import DiagnoseConfig, diagnose, text_report, to_json
from sim.yourdata.rules import spikes as spike_module
from sim.yourdata.rules.spikes import trailing_median_mad
from sim.yourdata.runlog import RunLog, load_run_log
from tests.fixtures.runlogs import Run, trl_bytes, trl_state, verl_lines

EXAMPLE = Path(__file__).resolve().parents[1] / "assets" / "data" / "examples" / "tinylm_trl_trainer_state.json"
RECORDED = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "trl_runs"  # real TRL runs: see its README
NEW_RULES = ("truncation", "reward_funcs_diverge", "spikes", "train_vs_eval")


def finding(d, key):
    return next(f for f in d.findings if f.key == key)


def warns(d) -> list[str]:
    return [f"{f.key}: {f.title}" for f in d.findings if f.status == "warn"]


def csv_export(state: dict) -> bytes:
    """trainer_state's log_history as W&B's run-history CSV: train/ and eval/ columns, one row per entry."""
    rows = [e for e in state["log_history"] if "train_runtime" not in e]
    names = sorted({k for e in rows for k in e if k != "step"})
    col = {n: ("eval/" + n.removeprefix("eval_")) if n.startswith("eval_") else "train/" + n for n in names}
    lines = ["train/global_step," + ",".join(col[n] for n in names)]
    lines += [f"{e['step']}," + ",".join("" if n not in e else repr(e[n]) for n in names) for e in rows]
    return ("\n".join(lines) + "\n").encode()


HEALTHY = {
    "the shipped TinyLM run": lambda: load_run_log(EXAMPLE.read_bytes(), EXAMPLE.name),
    "a real TRL run, mu 2 (trainer_state)": lambda: load_run_log(
        (RECORDED / "tinylm_mu2_trainer_state.json").read_bytes(), "trainer_state.json"),
    "a real TRL run, mu 2 (summary)": lambda: load_run_log((RECORDED / "tinylm_mu2_summary.json").read_bytes(),
                                                          "run.json"),
    "a real TRL run, beta 0.04 (trainer_state)": lambda: load_run_log(
        (RECORDED / "tinylm_beta_trainer_state.json").read_bytes(), "trainer_state.json"),
    "TRL, beta 0.04, mu 2, G 16": lambda: load_run_log(trl_bytes(), "trainer_state.json"),
    "TRL, another seed": lambda: load_run_log(trl_bytes(Run(seed=7)), "trainer_state.json"),
    "TRL, beta 0, mu 1, G 8": lambda: load_run_log(trl_bytes(Run(mu=1, beta=0.0, group_size=8, generations=400)),
                                                   "trainer_state.json"),
    "TRL as a W&B history CSV": lambda: load_run_log(csv_export(trl_state()), "wandb.csv"),
    "verl's file logger": lambda: load_run_log(verl_lines().encode(), "metrics.jsonl"),
}  # fmt: skip


@pytest.mark.parametrize("name", HEALTHY)
def test_a_healthy_run_gets_no_warning(name):
    """Issue 34: a false alarm is a defect. No rule warns on these runs, and the new rules are judged and hold
    nowhere wherever the log has what they read."""
    log = HEALTHY[name]()
    group = 16 if "G 16" in name or "another" in name or "CSV" in name else 8 if "real" in name else None
    d = diagnose(log, DiagnoseConfig(group_size=group))
    assert warns(d) == [], warns(d)
    for key in NEW_RULES:
        assert finding(d, key).status in ("ok", "unknown"), finding(d, key).title
    if name.startswith("TRL"):  # they have every metric the new rules read
        assert {finding(d, k).status for k in NEW_RULES} == {"ok"}


def test_a_checkpoints_run_settings_give_the_rules_g_and_mu():
    """sim/yourdata/callback.py keeps run_settings in every checkpoint's trainer_state.json; the reader takes G, beta
    and mu from there, so the recorded mu = 2 run reads the same as its summary without -G."""
    state = load_run_log((RECORDED / "tinylm_mu2_trainer_state.json").read_bytes(), "trainer_state.json")
    summary = load_run_log((RECORDED / "tinylm_mu2_summary.json").read_bytes(), "run.json")
    assert state.settings == summary.settings and state.settings["group_size"] == 8 and state.settings["mu"] == 2
    assert state.settings["optimizer_steps_per_generation"] == 2 and state.unit(["reward"]) == "generation steps"
    a, b = diagnose(state), diagnose(summary)
    assert (a.group_size, a.group_size_from) == (8, "the file")
    assert [(f.key, f.status, f.steps, f.title) for f in a.findings] == \
        [(f.key, f.status, f.steps, f.title) for f in b.findings]
    clip = finding(a, "clip_active")
    assert clip.status == "info" and set(clip.steps) <= set(range(2, 161, 2))  # the reused passes only


def test_what_each_rule_finds_on_the_shipped_run():
    """docs/your-data.md prints this list."""
    d = diagnose(load_run_log(EXAMPLE.read_bytes(), EXAMPLE.name))
    status = {f.key: f.status for f in d.findings}
    assert status == {"reward_collapse": "ok", "no_learning": "ok", "zero_std_floor": "info", "dead_all_wrong": "ok",
                      "dead_all_correct": "info", "dead_undecided": "info", "no_signal_steps": "info",
                      "zero_std_high": "info", "per_function_zero_std": "unknown", "entropy_falling": "info",
                      "entropy_low_start": "ok", "loss_zero": "info", "kl_absent": "info",
                      "kl_high_start": "unknown", "clip_active": "info", "length_drift": "ok", "truncation": "ok",
                      "reward_funcs_diverge": "unknown", "train_vs_eval": "unknown", "spikes": "ok"}
    assert "mostly all correct, a pool being learned" in finding(d, "zero_std_high").title
    assert "(all correct: reward 1)" in finding(d, "no_signal_steps").title  # step 537: every group solved
    assert "as the reward rose" in finding(d, "entropy_falling").title


SICK = {  # the pathology switched on -> the rule that must warn, and words its title must hold
    "truncation": ("truncation", "of a 1,024-token cap"),
    "hacking": ("reward_funcs_diverge", "while accuracy stays at"),
    "eval_falls": ("train_vs_eval", "The eval reward falls"),
    "entropy_collapse": ("entropy_falling", "while the reward did not rise"),
    "length_drift": ("length_drift", "Completions grow while the reward is flat"),
    "hard_accuracy": ("per_function_zero_std", "accuracy is 0/1"),
}


FLAT = {"entropy_collapse", "length_drift"}  # sick runs whose reward never moves, by design


@pytest.mark.parametrize("sick", SICK)
def test_each_sick_run_warns_its_rule(sick):
    key, words = SICK[sick]
    d = diagnose(load_run_log(trl_bytes(sick=sick), "trainer_state.json"), DiagnoseConfig(group_size=16))
    f = next(f for f in d.findings if f.key == key and f.status == "warn")
    assert words in f.title and f.steps and f.rule
    others = {w.split(":")[0] for w in warns(d)} - {key}
    expected = ({"no_learning"} if sick in FLAT else set()) | ({"reward_funcs_diverge"} if sick == "hard_accuracy"
                                                               else set())  # accuracy flat: diverge too
    assert others == expected, warns(d)
    if sick == "hacking":
        assert f.numbers["stuck"] == "accuracy" and f.numbers["up"] in ("format", "reasoning_steps")


def test_steps_are_counted_once_in_their_own_unit():
    """Issue 34 item 2: with mu = 2 TRL logs the rewards on every second optimizer step, and a rule counted 159 of
    150 steps. Each rule now reads the steps that log what it needs: the reward rules count generation steps, the
    optimizer's rules optimizer steps, and no count exceeds its total."""
    log = load_run_log(trl_bytes(), "trainer_state.json")
    assert len(log.steps) == 300 and log.unit(["reward"]) == "generation steps"
    assert log.unit(["grad_norm"]) == "optimizer steps" and log.logged(["reward"]).sum() == 150
    generation = set(log.steps[log.logged(["reward"])].tolist())
    assert generation == set(range(1, 301, 2))
    d = diagnose(log, DiagnoseConfig(group_size=16))
    assert d.window == 8  # a twentieth of the 150 generation steps
    for f in d.findings:
        unit = f.numbers.get("unit")
        if unit == "generation steps":
            assert set(f.steps) <= generation and len(f.steps) <= 150
        counted = re.search(rf"([\d,]+) of ([\d,]+) {unit}", f.title) if unit else None
        if counted:
            k, n = (int(x.replace(",", "")) for x in counted.groups())
            assert k <= n == (150 if unit == "generation steps" else 300), f.title
    assert "of 300 optimizer steps" in finding(d, "clip_active").title


def test_a_tinylm_summary_with_mu_2_agrees_with_its_trainer_state():
    """The summary keeps the steps that logged rewards (sim/tinylm's trl_log) and says mu: the reward rules find the
    same; the clip, acting only on the steps the summary drops, is not judged there instead of called inactive."""
    state = trl_state()
    rows = [e for e in state["log_history"] if "reward" in e]
    summary = {"trl_log": rows, "config": {"grpo": {"group_size": 16, "beta": 0.04, "mu": 2}}}
    a = diagnose(load_run_log(json.dumps(state).encode(), "trainer_state.json"), DiagnoseConfig(group_size=16))
    b = diagnose(load_run_log(json.dumps(summary).encode(), "run.json"))
    assert b.group_size == 16 and b.window == a.window
    for key in ("per_function_zero_std", "reward_funcs_diverge", "truncation", "length_drift"):
        fa, fb = finding(a, key), finding(b, key)
        assert (fa.status, fa.steps, fa.title) == (fb.status, fb.steps, fb.title), key
    clip = finding(b, "clip_active")
    assert clip.status == "unknown" and "trainer_state.json" in clip.reading


def test_trailing_median_and_mad_equal_a_loop_in_any_chunking(monkeypatch):
    rng = np.random.default_rng(0)
    x = rng.lognormal(size=500)
    for chunk in (65536, 7):
        monkeypatch.setattr(spike_module, "CHUNK", chunk)
        med, mad = trailing_median_mad(x, 20)
        assert np.isnan(med[:20]).all()
        for t in (20, 21, 137, 499):
            w = x[t - 20: t]
            assert med[t] == np.median(w) and mad[t] == np.median(np.abs(w - np.median(w)))


@pytest.mark.parametrize("shape", ["linear", "quadratic", "exponential", "quartic"])
def test_a_smooth_rise_is_never_a_spike(shape):
    """A kl that grows smoothly from 0 (the policy leaving the reference) rises at most about 1.35 robust standard
    deviations above its trailing median: never 10."""
    t = np.arange(1, 401, dtype=float)
    kl = {"linear": 1e-4 * t, "quadratic": 1e-6 * t**2, "exponential": 1e-5 * np.exp(t / 40),
          "quartic": 1e-11 * t**4}[shape]
    log = RunLog("t", "t.csv", np.arange(1, 401), {"kl": kl, "grad_norm": 0.3 + 1e-3 * t}, {}, (), "optimizer")
    assert finding(diagnose(log), "spikes").status == "ok"


def test_a_spike_needs_history_and_a_scale():
    g = np.full(100, 0.3)
    g[10] = 30.0  # only 10 values before it: not judged there (20 needed)
    g[60] = 30.0  # 100 x the median of the 20 before it
    log = RunLog("t", "t.csv", np.arange(1, 101), {"grad_norm": g, "loss": np.zeros(100)}, {}, (), "optimizer")
    f = finding(diagnose(log), "spikes")
    assert f.status == "info" and f.steps == (61,) and "back at once" in f.title  # one spike, recovered at once
    loss = np.zeros(100)
    loss[50] = 0.05  # under spike_factor x loss_zero = 0.1 above a median of 0: not a spike
    loss[80] = 0.5
    log = RunLog("t", "t.csv", np.arange(1, 101), {"loss": loss}, {}, (), "optimizer")
    assert finding(diagnose(log), "spikes").steps == (81,)


def test_a_spike_warns_when_it_lasts_or_recurs():
    """Every warning needs its condition to last: a gradient that jumps and stays up, or spikes that recur."""
    steps = np.arange(1, 101)
    g = np.full(100, 0.3)
    g[60:] = 30.0  # jumps 100x at step 61 and stays there
    stuck = finding(diagnose(RunLog("t", "t.csv", steps, {"grad_norm": g}, {}, (), "optimizer")), "spikes")
    assert stuck.status == "warn" and stuck.steps[0] == 61 and not stuck.numbers["metrics"]["grad_norm"]["recovered"]
    g = np.full(100, 0.3)
    g[[40, 60, 80]] = 30.0
    recurring = finding(diagnose(RunLog("t", "t.csv", steps, {"grad_norm": g}, {}, (), "optimizer")), "spikes")
    assert recurring.status == "warn" and recurring.steps == (41, 61, 81)


def test_steps_with_signal_are_no_spikes_in_a_run_of_dead_groups():
    """Issue 42: where 75-100% of groups are all-equal at every step, grad_norm is about 0 wherever every group is
    dead and 0.03-0.15 where one group had signal; the median of the steps before was made of zero-gradient steps,
    so each step with signal was called a spike (ten of them). Each step is judged against comparable steps."""
    rng = np.random.default_rng(4)
    T = 300
    z = np.where(rng.random(T) < 0.12, 0.75, 1.0)  # one group of four had signal at 12% of the steps
    g = np.where(z < 1, rng.uniform(0.03, 0.15, T), rng.uniform(0, 1e-4, T))
    loss = np.where(z < 1, rng.choice([-0.85, 0.85], T), 0.0)  # a loss that swings +-0.85 wherever there is signal
    log = RunLog("t", "t.csv", np.arange(1, T + 1), {"reward": np.where(z < 1, 0.0625, 0.0), "frac_reward_zero_std": z,
                 "grad_norm": g, "loss": loss}, {}, (), "optimizer")
    assert finding(diagnose(log), "spikes").status == "ok"
    g[250] = 5.0  # a real spike among the steps with signal is still one
    assert 251 in finding(diagnose(log), "spikes").steps
    short = RunLog("t", "t.csv", np.arange(1, 11), {"grad_norm": np.ones(10)}, {}, (), "optimizer")
    assert finding(diagnose(short), "spikes").status == "unknown"


def test_truncation_reads_the_cap_from_the_setting_or_the_clipped_answers():
    T = 100
    clipped = np.zeros(T)
    clipped[::10] = 0.01  # a few cut answers: the cap is their length, 512
    length = np.linspace(200, 480, T)  # climbs 140% into 0.8 x 512 = 410 from step 76
    log = RunLog("t", "t.csv", np.arange(1, T + 1), {"completions/clipped_ratio": clipped,
                 "completions/mean_length": length, "completions/max_length": np.full(T, 512.0)}, {}, (), "optimizer")
    d = diagnose(log, DiagnoseConfig(window=1))
    f = finding(d, "truncation")
    assert f.status == "warn" and f.numbers["cap"] == 512 and f.steps[0] == 76
    assert "of a 512-token cap" in f.title
    tall = diagnose(log, DiagnoseConfig(window=1, max_completion_length=4096))  # the real cap: far away
    assert finding(tall, "truncation").status == "ok"


def test_a_mean_length_pinned_at_its_largest_value_is_the_cap():
    """TRL before 0.17 logs no clipped share and no max length: a mean length exactly 256 at step after step is every
    answer at 256 tokens, the cap (heldout3/trl_console_csd_adq_seed42.log: 49 of 50 steps). A mean that varies, or
    one pinned at a few tokens (a toy's fixed answer), or pinned only early, says nothing; and no share is invented."""
    T = 50
    length = np.full(T, 256.0)
    length[36] = 225.1
    log = RunLog("t", "t.csv", np.arange(1, T + 1), {"completions/mean_length": length, "reward": np.zeros(T)}, {},
                 (), "optimizer")
    f = finding(diagnose(log), "truncation")
    assert f.status == "warn" and f.numbers["cap"] == 256 and f.title.startswith("Answers at the length cap")
    assert "clipped" not in f.title and "exactly that at 49 of 50" in f.title and "exactly at the last step" in f.rule
    varied = np.random.default_rng(0).uniform(150, 256, T)
    log.metrics["completions/mean_length"] = varied
    ok = finding(diagnose(log), "truncation")
    assert ok.status == "ok" and "no clipped share logged" in ok.title and "0.0%" not in ok.title
    log.metrics["completions/mean_length"] = np.full(T, 5.0)  # every answer "#### 7": five tokens, no cap
    assert finding(diagnose(log), "truncation").status == "ok"
    early = np.concatenate([np.full(20, 256.0), np.linspace(200, 120, T - 20)])  # at the cap early, then not
    log.metrics["completions/mean_length"] = early
    assert finding(diagnose(log), "truncation").status != "warn"
    assert finding(diagnose(log, DiagnoseConfig(max_completion_length=1024)), "truncation").status == "ok"


def test_a_reward_std_of_zero_is_a_step_with_no_signal_where_no_share_is_logged():
    """A std of 0 (the batch's, or the mean of the groups' stds) leaves no group that varies: frac_reward_zero_std
    = 1, though TRL before 0.18 does not log it. Lasting at a reward of 0: a warning; a few steps: information; a
    std above 0 says nothing about the share, so nothing is said of those steps."""
    T = 50
    log = RunLog("t", "t.csv", np.arange(1, T + 1), {"reward": np.zeros(T), "reward_std": np.zeros(T)}, {}, (),
                 "optimizer")
    f = finding(diagnose(log), "no_signal_steps")
    assert f.status == "warn" and f.numbers["steps"] == T and "reward_std = 0" in f.rule
    std = np.full(T, 0.3)
    std[[10, 20, 30]] = 0.0
    log.metrics["reward_std"], log.metrics["reward"] = std, np.full(T, 0.4)
    f = finding(diagnose(log), "no_signal_steps")
    assert f.status == "info" and list(f.steps) == [11, 21, 31]
    log.metrics["reward_std"] = np.full(T, 0.3)
    assert all(x.key != "no_signal_steps" for x in diagnose(log).findings)


def test_a_function_flat_at_its_ceiling_is_not_stuck():
    T = 100
    rising = np.linspace(0.2, 0.8, T)
    log = RunLog("t", "t.csv", np.arange(1, T + 1), {"rewards/accuracy/mean": rising,
                 "rewards/format/mean": np.ones(T)}, {}, (), "optimizer")
    assert finding(diagnose(log), "reward_funcs_diverge").status != "warn"  # format at 1 from the start: learned
    log.metrics["rewards/format/mean"] = 0.5 + 0.01 * (-1.0) ** np.arange(T)  # flat about 0.5, with some noise
    f = finding(diagnose(log), "reward_funcs_diverge")
    # W = 100/20 = 5: accuracy's start is 0.2 + 2 x 0.6/99 = 0.2121, its rolling mean at t is 0.2 + (t - 3) 0.6/99,
    # more than 0.2 above the start from t = 39: steps 39..100, 62 of them
    assert f.status == "warn" and "accuracy rises 0.21 → 0.79 while format stays at 0.50 → 0.50" in f.title
    assert f.steps == tuple(range(39, 101)) and "at 62 of 100 optimizer steps" in f.title


def test_train_against_eval_needs_three_evaluations():
    steps = np.arange(1, 101)
    ev = np.full(100, np.nan)
    ev[[49, 99]] = [0.6, 0.2]
    log = RunLog("t", "t.csv", steps, {"reward": np.linspace(0.2, 0.8, 100), "eval_reward": ev}, {}, (), "optimizer")
    assert finding(diagnose(log), "train_vs_eval").status == "unknown"


def test_extreme_but_allowed_values_raise_no_numpy_warning_and_give_valid_json():
    """Issue 37 row 5: finite 1e308 values overflowed into numpy warnings and Infinity in --json. Values are now
    capped at 1e38 (runlog.MAX_ABS); every rule runs on values up to the cap and down to 1e-300 without a warning,
    and the JSON has no NaN or Infinity."""
    rng = np.random.default_rng(2)
    names = ["reward", "reward_std", "entropy", "kl", "grad_norm", "loss", "completions/mean_length",
             "completions/max_length", "rewards/a/mean", "rewards/a/std", "rewards/b/mean", "eval_reward"]
    for _ in range(30):
        T = int(rng.integers(1, 80))
        m = {n: rng.choice([1e38, -1e38, 1e-300, 0.0, 3.0, 1e20], size=T) for n in names}
        for n in ("reward_std", "entropy", "grad_norm", "completions/mean_length", "completions/max_length",
                  "rewards/a/std"):
            m[n] = np.abs(m[n])
        m["frac_reward_zero_std"] = rng.choice([0.0, 1.0, 1e-300], size=T)
        m["completions/clipped_ratio"] = rng.choice([0.0, 1.0], size=T)
        m["clip_ratio/region_mean"] = rng.choice([0.0, 1.0], size=T)
        log = RunLog("t", "t.csv", np.arange(1, T + 1), m, {"beta": 0.04}, (), "optimizer")
        with warnings.catch_warnings(), np.errstate(over="raise", divide="raise", invalid="raise"):
            warnings.simplefilter("error")
            d = diagnose(log, DiagnoseConfig(window=int(rng.integers(0, 5))))
            text_report(d)
            json.dumps(to_json(d), allow_nan=False)
