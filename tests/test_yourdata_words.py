"""sim/yourdata/words.py and sim/views/your_data.py's documents: 0/1 words only where the log is consistent with 0/1
rewards (issue 34 item 4), each branch of a caption tested by a named log, both pages saying what they cannot
show (issue 37 row 4), every number of a chart's caption read off that chart or given (the browser's invariant,
tests/fixtures/invariants.js captions, on the same charts here), and the order of the documents: the first chart
before the findings in full."""

from __future__ import annotations

import re

import numpy as np
import pytest

from sim.paths import ASSETS
from sim.player import build_payload
from sim.player.spec import read_value
from sim.views.doc import Caption, Charts, Finding, Fold, Heading, Live, Metrics, Note
from sim.views.your_data import PROMPTS_VIEW, plan_charts, prompts_page, run_charts, run_page
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
    blocks = run_page(d)
    charts = next(b for b in blocks if isinstance(b, Charts)).charts
    assert [c.title for c in charts] == ["Reward functions (rewards/<f>/mean)"]
    build_payload("run_charts", T=1, charts=list(charts))
    said = " ".join(b.text for b in blocks if isinstance(b, Caption))
    assert "Not drawn, the log lacks what they read: Reward (needs reward)" in said
    nothing = run_page(diagnose(log_of(clip_ratio__low_min=0.0)))  # a log with no chart at all
    assert not any(isinstance(b, Charts) for b in nothing)
    assert any(isinstance(b, Note) and "No chart to draw" in b.text for b in nothing)


def test_a_pool_never_or_always_solved_says_so_and_draws():
    """Issue 37 row 4: every prompt at c = 0 or c = n crashed Your prompts ("expected a non-empty 1-D array": no
    dynamic-sampling line can be drawn when every group is dead)."""
    pool = load_pool(b"correct,samples\n" + b"0,8\n8,8\n" * 20, "extreme.csv")
    blocks = prompts_page(pool, PROMPTS_VIEW.defaults())
    assert isinstance(blocks[1], Note) and "never solved (20) or always solved (20)" in blocks[1].text
    charts = blocks[2].charts
    build_payload("plan_charts", T=1, charts=list(charts))
    answers = next(c for c in charts if c.title.startswith("Answers per batch"))
    assert [t.name for t in answers.traces] == ["generated", "in groups that teach nothing"]
    spread = load_pool(b"correct,samples\n1,8\n8,8\n", "mixed.csv")  # one prompt teaches: no note
    assert not any(isinstance(b, Note) for b in prompts_page(spread, PROMPTS_VIEW.defaults())[:3])


# ---- a caption's numbers are its chart's (tests/fixtures/invariants.js captions, here on the chart specs) ----
TOKEN = re.compile(r"(?<![\w@.^/])\d+(?:[.,]\d+)*%?")  # invariants.js TOKEN


def norm(t: str) -> str:
    return str(t).lstrip("+-−").replace(",", "")


def unsupported(chart) -> list[str]:
    """The numbers of a chart's caption that are neither read off it, nor given, nor in its title, axis titles,
    legend or marker labels (what the browser's check accepts)."""
    known = {norm(r["text"]) for r in chart.reads if r["text"] is not None} | {norm(g) for g in chart.given}
    words = " ".join([chart.title, chart.x_title, chart.y_title, *(getattr(t, "name", "") for t in chart.traces),
                      *(v[1] for v in chart.vlines), *(h[1] for h in chart.hlines)])
    known |= {norm(t) for t in TOKEN.findall(words)}
    caption = re.sub(r"\d+(\.\d+)?e[-+]?\d+", " ", chart.caption or "", flags=re.I)
    return [t for t in TOKEN.findall(caption) if norm(t) not in known]


def example_log():
    path = ASSETS / "data" / "examples" / "tinylm_trl_trainer_state.json"
    return load_run_log(path.read_bytes(), path.name)


RUNS = {"the example": lambda: diagnose(example_log()), "the example, G = 4 and W = 10":
        lambda: diagnose(example_log(), DiagnoseConfig(group_size=4, window=10)),
        **{name: (lambda log=log: diagnose(log)) for name, (log, _) in LOGS.items()},
        "kl, clip and a growing length": lambda: diagnose(log_of(
            reward=r, kl=np.linspace(0.001, 0.03, T), clip_ratio__region_mean=np.linspace(0, 0.02, T),
            completions__mean_length=np.linspace(100, 180, T), grad_norm=np.linspace(2, 1, T),
            loss=np.linspace(0.1, -0.05, T), entropy=np.linspace(1.2, 0.6, T), eval_reward=r))}


@pytest.mark.parametrize("name", RUNS)
def test_every_number_of_a_run_charts_caption_is_read_off_it_or_given(name):
    charts = run_charts(RUNS[name]())
    reads = 0
    for c in charts:
        assert not unsupported(c), (c.title, unsupported(c), c.caption)
        for rd in c.reads:  # each read again off the chart's data, as the browser reads it off what it draws
            where = {k: v for k, v in rd.items() if k not in ("trace", "at", "fmt", "text")}
            assert format(read_value(c, rd["trace"], rd["at"], **where), rd["fmt"]) == rd["text"], (c.title, rd)
            assert rd["text"] in c.caption, (c.title, rd)
            reads += 1
    assert reads >= 2 * sum(c.title in ("Reward", "Entropy") for c in charts)  # the trends are reads, not givens


def test_the_reward_caption_reads_the_rolling_means_and_the_evaluations():
    """The caption's "first and last W" means are the thick line's value at the W-th logged step and its last
    (runstats.start_end, the same numbers); the evaluations, the first and last the chart draws."""
    from sim.yourdata.runstats import start_end

    d = RUNS["kl, clip and a growing length"]()
    reward = next(c for c in run_charts(d) if c.title == "Reward")
    r0, r1 = start_end(d.log.metrics["reward"], d.window)
    assert f"Reward {r0:.3f} → {r1:.3f}" in reward.caption
    assert f"Evaluations: {r[0]:.3f} at the first, {r[-1]:.3f} at the last." in reward.caption
    kl = next(c for c in run_charts(d) if c.title.startswith("KL"))
    assert "at most 0.03" in kl.caption and any(rd["at"] == "max" for rd in kl.reads)


POOLS = {"the example": ("tinylm_prompts.csv", {}), "the example at G = 32, B = 256": ("tinylm_prompts.csv",
                                                                                      {"G": 32, "B": 256}),
         "pass rates": (b"pass_rate\n" + b"".join(f"{i / 40:.3f}\n".encode() for i in range(41)), {"G": 4}),
         "never or always solved": (b"correct,samples\n" + b"0,8\n8,8\n" * 20, {})}


@pytest.mark.parametrize("name", POOLS)
def test_every_number_of_a_plan_charts_caption_is_read_off_it_or_given(name):
    data, values = POOLS[name]
    if isinstance(data, str):
        data = (ASSETS / "data" / "examples" / data).read_bytes()
    pool = load_pool(data, "pool.csv")
    cfg = PlanConfig(**{PROMPTS_VIEW_FIELDS[k]: v for k, v in values.items()})
    charts = plan_charts(plan(pool, cfg), cfg, *rate_histogram(pool))
    for c in charts:
        assert not unsupported(c), (c.title, unsupported(c), c.caption)
    dead = charts[0]
    assert [rd["at"] for rd in dead.reads] == ["x"] * 4 and all(rd["x"] == cfg.group_size for rd in dead.reads)


PROMPTS_VIEW_FIELDS = {"G": "group_size", "B": "batch_prompts"}


def test_the_run_page_puts_its_charts_before_the_findings_in_full():
    """Issue 40 item 5: Your run's first chart was 3,300 px down at 1920x1080. The document: the warnings in one
    line each (a note) and the key numbers, then the charts, then every finding in full, the rest folded."""
    d = diagnose(log_of(reward=np.r_[np.linspace(0.3, 0.8, T - 20), np.full(20, 0.1)], frac_reward_zero_std=0.1))
    blocks = run_page(d, said_group_size=16)
    kinds = [type(b).__name__ for b in blocks]
    assert kinds[:4] == ["Note", "Metrics", "Note", "Charts"], kinds  # G from the file, numbers, warnings, charts
    assert "The file's config says G = 16" in blocks[0].text
    warns = [f for f in d.findings if f.status == "warn"]
    assert warns and all(f"• {f.title}" in blocks[2].text for f in warns)
    first = kinds.index("Finding")
    assert kinds.index("Charts") < kinds.index("Heading") < first
    held = [b for b in blocks if isinstance(b, Finding)]
    assert [b.status for b in held][:len(warns)] == ["warn"] * len(warns)  # warnings first
    folds = {b.summary.split(" (")[0]: b for b in blocks if isinstance(b, Fold)}
    assert all(f.status == "ok" for f in folds["Checked, does not hold"].blocks)
    assert sum(len(f.blocks) for f in folds.values()) + len(held) == len(d.findings)  # each finding once


def test_the_prompts_page_puts_its_charts_first_and_the_toy_last():
    pool = load_pool((ASSETS / "data" / "examples" / "tinylm_prompts.csv").read_bytes(), "p.csv")
    blocks = prompts_page(pool, {**PROMPTS_VIEW.defaults(), "G": 16, "seed": 7})
    assert isinstance(blocks[0], Metrics) and isinstance(blocks[1], Charts)
    assert ("Dead groups at G = 16", blocks[0].items[2][1]) == blocks[0].items[2]
    heads = [b.text for b in blocks if isinstance(b, Heading)]
    assert heads == ["By group size", "Prompts that never teach", "How this pool would train"]
    (live,) = [b for b in blocks if isinstance(b, Live)]
    assert live.request["config"]["group_size"] == 16 and live.request["config"]["seed"] == 7
    assert isinstance(blocks[2], Caption) and "unbiased" in blocks[2].text  # the estimator, under the charts
