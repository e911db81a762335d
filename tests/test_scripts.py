"""Every script in scripts/ runs in the suite, on a tiny budget, so that a documented figure's command cannot break
unnoticed (as `scripts/bench_toy.py` did when the toy was split). A new script without a run here fails
`test_every_script_is_run`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.serve import CHROMIUM, ROOT

SCRIPTS = ROOT / "scripts"
TIMEOUT_S = 180  # each takes well under 20 s on an idle 2-core machine; the bound is for a busy shared one


def run(script: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    return subprocess.run([sys.executable, str(SCRIPTS / script), *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=TIMEOUT_S)  # fmt: skip


def json_out(done: subprocess.CompletedProcess) -> dict:
    """The JSON object a benchmark prints (before its table of figures)."""
    assert done.returncode == 0, done.stderr[-3000:]
    return json.JSONDecoder().raw_decode(done.stdout[done.stdout.index("{"):])[0]


@pytest.mark.integration
def test_bench_tinylm_tiny():
    out = json_out(run("bench_tinylm.py", "--seeds", "1", "--iterations", "1", "--skip-sft", "--eval-samples", "2"))
    (row,) = out["runs"]
    assert 0 <= row["pass_at_1_after"] <= 1 and out["median_grpo_seconds"] > 0
    assert row["eval_seconds"] == out["median_eval_seconds"] > 0


@pytest.mark.e2e
def test_bench_tinylm_class_tiny():
    out = json_out(run("bench_tinylm_class.py", "--students", "1", "--iterations", "1", "--eval-samples", "4",
                       "--window", "0.1", "--timeout", "120"))
    assert out["errors"] == 0, out["error_examples"]
    assert out["first_iteration_after_start"]["n"] == 1 and out["finished_run_after_start"]["n"] == 1


@pytest.mark.e2e
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing")
def test_bench_player_quick():
    out = json_out(run("bench_player.py", "--quick"))
    assert out["payload"]["T"] == 50 and out["payload"]["sent_float32_base64"] < out["payload"]["json_full_precision"]
    first, again = out["plotly_js"]["first_page"]["plotly_requests"], out["plotly_js"]["reload"]["plotly_requests"]
    assert first and first[0]["status"] == 200 and not first[0]["from_cache"]
    assert again and all(r["from_cache"] for r in again)  # a reload does not fetch Plotly.js again
    assert out["training"]["slider_frames_sent"] == 0, "a control move sent the server a message"
    assert out["bundle_bytes"] > 0 and set(out["component_inline_bytes"]) == {"view_component.js", "player.css",
                                                                               "doc.css"}


@pytest.mark.integration
def test_bench_toy_tiny():
    done = run("bench_toy.py", "--tiny", "--check")
    assert done.returncode in (0, 1), done.stderr[-3000:]  # 1: a target missed by over 2x (not this test's job)
    assert "| run_toy, 300 iterations × 64 seeds, G = 8 (CPU, median) |" in done.stdout and "≤ 50 ms" in done.stdout
    assert "speed-up over the per-answer reference" in done.stdout and "the Training page's default" in done.stdout
    assert "check: " in done.stdout


@pytest.mark.e2e
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing")
def test_bench_engine_tiny():
    done = run("bench_engine.py", "--tiny", "--check")
    assert done.returncode in (0, 1), done.stderr[-3000:]  # 1: a target missed by over 2x (not this test's job)
    assert "node: runToy + expectedRun" in done.stdout and "Chromium: runToy + expectedRun" in done.stdout
    assert "≤ 25 ms" in done.stdout and "check: " in done.stdout


@pytest.mark.e2e
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing")
def test_bench_tinylm_browser_tiny():
    done = run("bench_tinylm_browser.py", "--tiny", "--check")
    assert done.returncode in (0, 1), done.stderr[-3000:]  # 1: a target missed by over 2x (not this test's job)
    out = json_out(done)
    assert out["runs"]["2"][0]["workers"] == 2 and out["runs"]["2"][0]["simd"] is True
    assert "Chromium, 2 Workers: GRPO, 4 iterations" in done.stdout and "torch, 1 thread: GRPO" in done.stdout
    assert "what the trainer adds to a lesson" in done.stdout and "check: " in done.stdout


@pytest.mark.integration
def test_bench_cold_start_refuses_a_bad_flag():
    """Its run is tests/test_browser.py::test_first_chart_on_a_cold_start (the same function)."""
    done = run("bench_cold_start.py", "--runs", "0")
    assert done.returncode == 2 and "error:" in done.stderr and done.stdout == ""


@pytest.mark.integration
def test_test_sh_parses():
    """scripts/test.sh is the suite itself (it cannot run inside it): its syntax is checked."""
    done = subprocess.run(["bash", "-n", str(SCRIPTS / "test.sh")], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr


@pytest.mark.integration
def test_bench_lab_tiny():
    out = json_out(run("bench_lab.py", "--repeats", "1", "--hang", "0.05"))
    assert out["n_checks"] == 18 and out["per_call_ms"] > 0 and out["checks_ms"] > 0


@pytest.mark.e2e
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing")
def test_bench_lesson_tiny():
    out = json_out(run("bench_lesson.py", "--views", "training,sharpen", "--tries", "1"))
    assert out["first_chart_ms"] > 0 and out["change_engine_ms"] > 0 and out["play_fps_at_60"] > 0
    assert out["sharpen_change_ms"] > 0 and out["tries"] == 1 and "std_change_ms" not in out


@pytest.mark.integration
def test_record_tinylm_run_tiny(tmp_path):
    from sim.tinylm.figures import load_run_record

    done = run("record_tinylm_run.py", "--iterations", "2", "--eval-samples", "2", "--out", str(tmp_path / "run.json"))
    assert done.returncode == 0, done.stderr[-3000:]
    record = load_run_record(tmp_path / "run.json")
    assert record is not None and record["iterations"] == [1, 2] and len(record["pass_at_k_after"]) == 2


@pytest.mark.e2e
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing")
def test_screenshot(tmp_path):
    out = tmp_path / "shot.png"
    done = run("screenshot.py", "--out", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    png = out.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and (int.from_bytes(png[16:20]), int.from_bytes(png[20:24])) == (1280, 800)


RUN_HERE = {"bench_tinylm.py", "bench_tinylm_class.py", "bench_player.py", "bench_toy.py", "bench_cold_start.py",
            "test.sh", "bench_lab.py", "bench_lesson.py", "record_tinylm_run.py", "bench_engine.py", "screenshot.py",
            "bench_tinylm_browser.py"}
RUN_ELSEWHERE = {  # script -> the test that runs it
    "bench_classroom.py": "tests/test_bench_classroom.py::test_a_short_class",
    "bench_class_mode.py": "tests/test_bench_class_mode.py::test_a_small_class",
    "bench_cold_start.py": "tests/test_browser.py::test_first_chart_on_a_cold_start",
    "st_client.py": "tests/test_bench_classroom.py (a module: the classroom bench's headless tab)",
    "benchdoc.py": "tests/test_benchdoc.py (a module: every benchmark's figures, --check and docs section)",
    "serve.sh": "tests/test_serve.py::test_two_replicas_behind_haproxy_then_sigterm_leaves_nothing",
    "bench_trainers.py": "tests/test_tinylm_trl.py::test_bench_tiny_two_processes_train_and_agree",
    "lock_requirements.py": "tests/test_docker.py::test_the_lock_script_writes_each_wheel_with_its_hash",
    "bench_your_data.py": "tests/test_your_data_cli.py::test_bench_your_data_tiny",
    "record_example_pool.py": "tests/test_your_data_cli.py::test_record_example_pool_tiny",
    "build_tinylm_wasm.py": "tests/test_tinylm_js.py::test_the_wasm_bytes_are_what_the_build_produces",
}


def test_every_script_is_run():
    scripts = {p.name for p in SCRIPTS.iterdir() if p.suffix in (".py", ".sh")}
    assert scripts <= RUN_HERE | set(RUN_ELSEWHERE), f"scripts with no run in the suite: {scripts - RUN_HERE}"
    for test in RUN_ELSEWHERE.values():
        path, _, name = test.partition("::")
        source = (ROOT / path.split()[0]).read_text(encoding="utf-8")
        assert not name or f"def {name}(" in source, test
