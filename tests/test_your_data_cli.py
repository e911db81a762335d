"""`python -m sim diagnose` and `python -m sim plan` as processes: every bad input exits 2 with one `error:` line,
good input prints a report or one JSON object, --out writes a CSV a spreadsheet cannot run."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
RUN = ROOT / "assets" / "data" / "examples" / "tinylm_trl_trainer_state.json"
POOL = ROOT / "assets" / "data" / "examples" / "tinylm_prompts.csv"


def sim(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sim", *map(str, args)], capture_output=True, text=True, env=ENV,
                          cwd=cwd or ROOT, timeout=120)


def refused(res: subprocess.CompletedProcess, words: str) -> None:
    err = res.stderr.strip()
    assert res.returncode == 2, (res.returncode, res.stderr[-500:])
    assert err.count("\n") == 0 and err.startswith("error: ") and words in err, err
    assert not res.stdout


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("hostile")
    files = {
        "big.csv": None, "binary.csv": b"step,reward\n1,0.5\x00\n", "gzip.json": b"\x1f\x8b\x08\x00",
        "bad.json": b'{"log_history": [{"step": 1, "reward": 0.5},]}',
        "deep.json": b"[" * 200_000 + b"]" * 200_000,
        "wide.csv": (",".join(f"c{i}" for i in range(10**6)) + "\n").encode(),
        "formula.csv": b"step,reward\n1,0.5\n2,=cmd|' /C calc'!A0\n",
        "text.json": b'{"log_history": [{"step": 1, "reward": 0.5},\n {"step": 2, "grad_norm": "high"}]}',
        "empty.csv": b"",
        "pool_c_over_n.csv": b"prompt,correct,samples\na,3,8\nb,9,8\n",
        "pool_negative.csv": b"correct,samples\n-1,8\n",
        "pool_formula.csv": b"correct,samples\n@SUM(1+1),8\n",
        "pool_inf.csv": b"pass_rate\ninf\n",
        "huge.json": b'{"log_history": [{"step": 1, "reward": 0.5},\n {"step": 2, "reward": 1e400}]}',
        "max.json": b'{"log_history": [{"step": 1, "loss": 1e308}]}',
        "share.json": b'{"log_history": [{"step": 1, "frac_reward_zero_std": 0.5},\n {"step": 2, '
                      b'"frac_reward_zero_std": 1.5}]}',
        "pool_cr.csv": b"correct,samples\n" + b"1,2\r" * 1_000_001,
    }  # fmt: skip
    for name, data in files.items():
        if data is not None:
            (d / name).write_bytes(data)
    with open(d / "big.csv", "wb") as f:
        f.truncate(20_000_016)  # under 20 MiB: over the one cap of 20,000,000 bytes (issue 37 row 15)
    (d / "sub").mkdir()
    return {name: d / name for name in [*files, "sub"]}


@pytest.mark.parametrize("command, name, words", [
    ("diagnose", "missing.json", "missing.json: no such file"),
    ("diagnose", "sub", "sub: is a directory"),
    ("diagnose", "big.csv", "big.csv: 20,000,016 bytes is over the cap of 20,000,000 bytes (20 MB)"),
    ("diagnose", "huge.json", "huge.json: line 2, field reward: 1e400 is too large for a number"),
    ("diagnose", "max.json", "field loss: 1e+308 is beyond ±1e+38"),
    ("diagnose", "share.json", "field frac_reward_zero_std: 1.5 is outside [0, 1]"),
    ("plan", "pool_cr.csv", "pool_cr.csv: 1,000,002 lines is over the cap of 1,000,000 rows"),
    ("diagnose", "binary.csv", "line 2 holds a NUL byte"),
    ("diagnose", "gzip.json", "gzip-compressed"),
    ("diagnose", "bad.json", "line 1, column 45: not valid JSON (Expecting value)"),
    ("diagnose", "deep.json", "nested more than 32 levels deep"),
    ("diagnose", "wide.csv", "line 1 is over 131,072 characters long"),
    ("diagnose", "formula.csv", "line 3, field reward: =cmd|' /C calc'!A0 is not a number"),
    ("diagnose", "text.json", "line 2, field grad_norm: high is not a number"),
    ("diagnose", "empty.csv", "is empty"),
    ("plan", "pool_c_over_n.csv", "line 3, field correct: 9 is more than samples = 8 (c > n)"),
    ("plan", "pool_negative.csv", "line 2, field correct: -1 is negative"),
    ("plan", "pool_formula.csv", "line 2, field correct: @SUM(1+1) is not a number"),
    ("plan", "pool_inf.csv", "line 2, field pass_rate: inf is not a finite number"),
    ("plan", "wide.csv", "line 1 is over 131,072 characters long"),
    ("plan", "big.csv", "is over the cap of 20,000,000 bytes"),
])  # fmt: skip
def test_every_bad_input_exits_2_with_one_line(hostile, command, name, words):
    path = hostile.get(name, hostile["sub"].parent / name)
    refused(sim(command, path), words)


def test_an_unreadable_file(hostile, tmp_path):
    locked = tmp_path / "locked.csv"
    locked.write_text("step,reward\n1,0.5\n")
    locked.chmod(0)
    if os.access(locked, os.R_OK):
        pytest.skip("running as root: a mode-0 file is still readable (tests/test_datafile.py fakes the refusal)")
    refused(sim("diagnose", locked), "locked.csv: cannot be read (Permission denied)")


@pytest.mark.parametrize("args, words", [
    (["diagnose", RUN, "-G", "1"], "group_size must be in [2, 1024]"),
    (["diagnose", RUN, "--window", "abc"], "invalid int value"),
    (["diagnose"], "the following arguments are required: FILE"),
    (["plan", POOL, "-G", "65"], "group_size must be in [2, 64]"),
    (["plan", POOL, "--out", "x.txt"], "--out must end in .csv"),
    (["plan", POOL, "--out", "/proc/x.csv"], "--out /proc/x.csv"),
])  # fmt: skip
def test_bad_flags(args, words):
    refused(sim(*args), words)


def test_diagnose_the_shipped_trl_run_as_text_and_json():
    text = sim("diagnose", RUN)
    assert text.returncode == 0 and "[info] Entropy falls 87%" in text.stdout and "[warn]" not in text.stdout
    out = sim("diagnose", RUN, "--json")
    d = json.loads(out.stdout)
    assert d["source"] == "trainer_state.json" and len(d["steps"]) == 600 and d["group_size"] == 8
    keys = {f["key"]: f for f in d["findings"]}
    assert keys["dead_all_correct"]["status"] == "info" and keys["kl_absent"]["status"] == "info"
    assert keys["entropy_falling"]["numbers"]["first_step"] == 110


def test_a_diverged_step_is_read_and_said_and_a_log_that_is_not_grpo_is_one_line(tmp_path):
    """Issue 42: transformers' "grad_norm": NaN refused the whole log; an SFT log was judged as a GRPO run."""
    nan = tmp_path / "trainer_state.json"
    nan.write_text('{"log_history": [' + ",".join(
        f'{{"step": {t}, "reward": 0.5, "grad_norm": {"NaN" if t == 20 else 0.3}}}' for t in range(1, 41)) + "]}")
    res = sim("diagnose", nan)
    assert res.returncode == 0 and "[info] grad_norm is NaN at step 20: that step diverged, and the run went on" \
        in res.stdout
    assert json.loads(sim("diagnose", nan, "--json").stdout)["gaps"] == {"grad_norm": {"nan": [20]}}
    sft = ROOT / "tests" / "fixtures" / "real_logs" / "sft_trainer_state.json"
    res = sim("diagnose", sft)
    assert res.returncode == 0 and res.stdout.count("\n") == 1 and "Not a GRPO run: a supervised" in res.stdout


def test_metrics_at_different_steps_and_extreme_values_give_findings_and_valid_json(tmp_path):
    """Issue 37 row 3: reward and frac_reward_zero_std logged at different steps crashed with a TypeError (exit 1);
    row 5: --json wrote Infinity. Now the rule says it cannot judge, and the JSON is always JSON."""
    apart = tmp_path / "apart.json"
    apart.write_text(json.dumps({"log_history": [{"step": 1, "frac_reward_zero_std": 0.5},
                                                 {"step": 2, "reward": 0.25}]}))
    alternating = tmp_path / "alternating.csv"
    alternating.write_text("step,reward,frac_reward_zero_std\n" + "".join(
        f"{t},{0.3 if t % 2 else ''},{'' if t % 2 else 0.4}\n" for t in range(1, 41)))
    for path in (apart, alternating):
        res = sim("diagnose", path, "--window", "1")
        assert res.returncode == 0 and "never logged at the same step" in res.stdout, res.stderr[-800:]
    edge = tmp_path / "edge.json"
    edge.write_text(json.dumps({"log_history": [{"step": t, "reward": 1e38 if t % 2 else -1e38, "loss": 1e-300,
                                                 "grad_norm": 1e38, "entropy": 1e-300} for t in range(1, 40)]}))
    res = sim("diagnose", edge, "--json")
    assert res.returncode == 0 and "Warning" not in res.stderr, res.stderr[-800:]
    json.loads(res.stdout, parse_constant=lambda c: pytest.fail(f"{c} in --json"))


def test_plan_the_example_pool_and_write_a_neutralised_csv(tmp_path):
    pool = tmp_path / "pool.csv"
    pool.write_text("prompt,correct,samples\n\"=cmd|' /C calc'!A0\",0,8\n+1+1,3,8\n37+48=,8,8\n")
    out = tmp_path / "prompts_G4.csv"
    res = sim("plan", pool, "-G", "4", "--json", "--out", out)
    assert res.returncode == 0, res.stderr
    p = json.loads(res.stdout)
    assert p["config"] == {"group_size": 4, "batch_prompts": 64} and p["summary"]["prompts"] == 3
    assert p["never_teach"]["all_wrong"]["ids"] == ["=cmd|' /C calc'!A0"]  # JSON keeps the text as it was
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert [r["prompt"] for r in rows] == ["'=cmd|' /C calc'!A0", "'+1+1", "37+48="]
    assert rows[0]["p_all_wrong_G4"] == "1.0" and rows[2]["p_all_correct_G4"] == "1.0"
    text = sim("plan", POOL)
    assert text.returncode == 0 and "512 prompts" in text.stdout and "<- G" in text.stdout


def test_a_closed_pipe_is_not_an_error():
    res = subprocess.run(f"{sys.executable} -m sim diagnose {RUN} --json | head -c 10", shell=True,
                         capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=120)
    assert res.returncode == 0 and "Traceback" not in res.stderr


def test_bench_your_data_tiny():
    res = subprocess.run([sys.executable, "scripts/bench_your_data.py", "--tiny", "--check"], capture_output=True,
                         text=True, env=ENV, cwd=ROOT, timeout=180)
    assert res.returncode == 0, res.stderr[-2000:]
    figures = json.loads(next(line for line in res.stdout.splitlines() if line.startswith('{"repeats"')))
    assert figures["repeats"] == 1 and set(figures) >= {"log_10k_json_parse", "pool_100k_parse", "refuse_deep_json"}


def test_record_example_pool_tiny(tmp_path):
    out = tmp_path / "pool.csv"
    res = subprocess.run([sys.executable, "scripts/record_example_pool.py", "--out", str(out), "--prompts", "8",
                          "--samples", "4"], capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=180)
    assert res.returncode == 0, res.stderr[-2000:]
    done = sim("plan", out, "--json")
    assert json.loads(done.stdout)["summary"]["prompts"] == 8 and json.loads(done.stdout)["summary"]["samples_max"] == 4
