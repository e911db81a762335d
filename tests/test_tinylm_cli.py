"""`python -m sim tinylm`, interrupted or misconfigured: Ctrl-C or SIGTERM is one line ("interrupted: nothing
written"), exit 130 (143 for SIGTERM) and no temporary folder left; a process count the batch cannot split over is
refused before TRL is imported (exit 2, one line from rank 0, none from the others)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

import pytest

from sim.tinylm import cli, trl_bridge, trl_run

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def private_tmp(tmp_path, monkeypatch) -> Path:
    """A temporary folder of the test's own: what a run leaves in it is the run's."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    return tmp


def stopped_by(exc: type[BaseException]):
    def run(*_, **__):
        raise exc

    return run


# ---- an interrupt, in this process --------------------------------------------------------------------------------


@pytest.mark.parametrize("exc, code", [(KeyboardInterrupt, 130), (cli.Terminated, 143)])
def test_an_interrupted_sim_run_is_one_line(monkeypatch, capsys, exc, code):
    monkeypatch.setattr(cli, "run_story", stopped_by(exc))
    assert cli.main(["--iterations", "2"]) == code
    out, err = capsys.readouterr()
    assert out == "" and err == "interrupted: nothing written\n"


@pytest.mark.parametrize("exc, code", [(KeyboardInterrupt, 130), (cli.Terminated, 143)])
def test_an_interrupted_trl_run_removes_its_temporary_folder(monkeypatch, capsys, private_tmp, exc, code):
    seen = []

    def trainer(cfg, *, output_dir, **_):
        seen.append(Path(output_dir))
        (Path(output_dir) / "checkpoint-1").mkdir()  # what TRL writes there
        raise exc

    monkeypatch.setattr(trl_bridge, "load_trainer", lambda: trainer)
    quiet = types.SimpleNamespace(logging=types.SimpleNamespace(set_verbosity_error=lambda: None))
    monkeypatch.setitem(sys.modules, "transformers", types.ModuleType("transformers"))  # no 5 s import here
    monkeypatch.setitem(sys.modules, "transformers.utils", quiet)
    assert cli.main(["--trainer", "trl", "--iterations", "2"]) == code
    assert capsys.readouterr().err == "interrupted: nothing written\n"
    assert seen and seen[0].parent == private_tmp and list(private_tmp.iterdir()) == []


def test_an_sft_checkpoint_saved_before_the_interrupt_is_named(monkeypatch, capsys, tmp_path):
    saved = tmp_path / "sft.pt"

    def story(cfg, save_sft=None):
        Path(save_sft).write_bytes(b"a checkpoint")
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "run_story", story)
    monkeypatch.setattr(cli, "check_output", lambda *a: None)
    assert cli.main(["--save-sft", str(saved), "--iterations", "2"]) == 130
    assert capsys.readouterr().err == f"interrupted: only {saved} written\n"


# ---- the number of processes, before TRL ---------------------------------------------------------


@pytest.mark.parametrize("rank, said", [("0", True), ("1", False), ("2", False)])
def test_a_process_count_the_batch_cannot_split_is_refused_before_trl(monkeypatch, capsys, rank, said):
    monkeypatch.setattr(trl_bridge, "load_trainer", stopped_by(AssertionError("TRL was imported first")))
    monkeypatch.setattr(cli, "RANK_GRACE_S", 0.0)  # a rank > 0 waits for rank 0's line; none here
    monkeypatch.setattr(cli.signal, "signal", lambda *a: None)  # and keeps pytest's SIGTERM handler
    for k, v in {"WORLD_SIZE": "3", "RANK": rank, "LOCAL_RANK": rank, "LOCAL_WORLD_SIZE": "3"}.items():
        monkeypatch.setenv(k, v)  # what accelerate launch --num_processes 3 sets for each rank
    assert trl_run.main(["--prompts", "16"]) == 2
    out, err = capsys.readouterr()
    line = "error: --prompts (16) must be a multiple of the number of processes (3, WORLD_SIZE): e.g. --prompts 15\n"
    assert out == "" and err == (line if said else "")


@pytest.mark.parametrize("world", ["abc", "0", "1e9"])
def test_a_bad_world_size_is_one_line(monkeypatch, capsys, world):
    monkeypatch.setattr(trl_bridge, "load_trainer", stopped_by(AssertionError("TRL was imported first")))
    monkeypatch.setenv("WORLD_SIZE", world)
    assert cli.main(["--trainer", "trl"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: WORLD_SIZE=") and err.count("\n") == 1


# ---- as a user meets them: real signals, a real launcher ----------------------------------


def left(tmp: Path) -> list[str]:
    """What a run left in its TMPDIR, but torch's compile cache (torchinductor_USER: a cache every run keeps)."""
    return sorted(p.name for p in tmp.iterdir() if not p.name.startswith("torchinductor_"))


def start(args: list[str], tmp: Path, **env) -> subprocess.Popen:
    full = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT), TMPDIR=str(tmp), **env)
    return subprocess.Popen([sys.executable, "-m", *args], cwd=ROOT, env=full, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


@pytest.mark.integration
@pytest.mark.parametrize("sig, code, wait_s", [(signal.SIGINT, 130, 1.0), (signal.SIGINT, 130, 6.0),
                                               (signal.SIGTERM, 143, 6.0)])
def test_a_signal_during_a_sim_run(tmp_path, sig, code, wait_s):
    proc = start(["sim", "tinylm", "--iterations", "400"], tmp_path)
    time.sleep(wait_s)  # 1 s: still importing torch; 6 s: training
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == code and out == "" and err == "interrupted: nothing written\n", (proc.returncode, err)
    assert left(tmp_path) == []


@pytest.mark.integration
def test_sigterm_during_a_trl_run_leaves_no_temporary_folder(tmp_path):
    pytest.importorskip("trl")
    proc = start(["sim", "tinylm", "--trainer", "trl", "--iterations", "400"], tmp_path)
    deadline = time.monotonic() + 120
    while not list(tmp_path.glob("tinylm-trl-*")) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)  # TRL imported, its output folder made: the run is training
    assert list(tmp_path.glob("tinylm-trl-*")), proc.communicate(timeout=5)
    time.sleep(1.0)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and err == "interrupted: nothing written\n", (proc.returncode, err[-2000:])
    assert left(tmp_path) == []


@pytest.mark.e2e
def test_accelerate_launch_with_three_processes_says_it_once_before_trl(tmp_path):
    pytest.importorskip("accelerate")
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT), TMPDIR=str(tmp_path))
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "3",
           "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no", "-m", "sim.tinylm.trl_run",
           "--prompts", "16"]  # the command, as scripts/bench_trainers.py launches it (gloo on a CPU)
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    ours = [ln for ln in (done.stdout + done.stderr).splitlines() if ln.startswith("error: --prompts")]
    assert ours == ["error: --prompts (16) must be a multiple of the number of processes (3, WORLD_SIZE): "
                    "e.g. --prompts 15"], done.stderr[-3000:]
    assert "exitcode  : 2" in done.stderr or "exitcode: 2" in done.stderr.replace(" ", ""), done.stderr[-3000:]
    # torchrun's own report of the ranks' exit 2 follows ours (its ChildFailedError): the launcher's, not ours
    assert done.returncode != 0
