"""Ctrl-C and SIGTERM on every command line: one line, `interrupted: nothing written` (or the outputs complete
before the interrupt), exit 130 or 143, no traceback and nothing half-written (sim/runtime/interrupt.py). `tinylm`'s
own cases are in tests/test_tinylm_cli.py.

In this process, a stage of each command raises KeyboardInterrupt, or sends this process a real SIGTERM; as a
process, `python -m sim toy` gets real signals past its imports."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import sim.yourdata.diagnose as diagnose_mod
import sim.yourdata.plan as plan_mod
from sim.lab import cli as lab_cli
from sim.lesson import build as build_mod
from sim.lesson import cli as lesson_cli
from sim.paths import DATA
from sim.runtime.interrupt import Terminated
from sim.toy import cli as toy_cli
from sim.yourdata import cli as data_cli

ROOT = Path(__file__).resolve().parents[1]
RUN = DATA / "examples" / "tinylm_trl_trainer_state.json"
POOL = DATA / "examples" / "tinylm_prompts.csv"
QUICK_LESSON = ["--views", "wasted", "--quiet"]


class DefaultSigterm(Exception):
    """What SIGTERM does here when no command has taken it (its default would end pytest)."""


@pytest.fixture(autouse=True)
def sigterm_caught():
    def caught(signum, frame):
        raise DefaultSigterm("SIGTERM reached the handler the command found: the command did not take it")

    previous = signal.signal(signal.SIGTERM, caught)
    yield
    signal.signal(signal.SIGTERM, previous)


def stop(how: str):
    """A stage that is interrupted: Ctrl-C (KeyboardInterrupt) or a real SIGTERM sent to this process."""
    def stage(*_, **__):
        if how == "int":
            raise KeyboardInterrupt
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises here, at once
        raise AssertionError("SIGTERM did not interrupt")

    return stage


CODES = {"int": 130, "term": 143}


def call(main, argv: list[str]) -> int:
    """main(argv); an interrupt that escapes it (a traceback, for the user) fails the test instead of pytest."""
    try:
        return main(argv)
    except KeyboardInterrupt as e:
        pytest.fail(f"{type(e).__name__} escaped the command: the user sees a traceback")


def said(code: int, how: str, capsys, line: str = "interrupted: nothing written") -> None:
    out, err = capsys.readouterr()
    assert code == CODES[how] and out == "" and err == line + "\n", (code, out, err)


@pytest.mark.parametrize("how", ["int", "term"])
def test_toy(how, monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(toy_cli, "run_toy", stop(how))
    said(call(toy_cli.main, ["--iterations", "2", "--out", str(tmp_path / "h.csv")]), how, capsys)
    assert list(tmp_path.iterdir()) == []


def test_toy_names_an_output_complete_before_the_interrupt(monkeypatch, capsys, tmp_path):
    out = tmp_path / "h.csv"

    def write_then_stop(rows, cfg, path):
        Path(path).write_text("iteration\n")
        raise KeyboardInterrupt

    monkeypatch.setattr(toy_cli, "write_history", write_then_stop)
    said(call(toy_cli.main, ["--iterations", "2", "--out", str(out)]), "int", capsys,
         f"interrupted: only {out} written")


@pytest.mark.parametrize("how", ["int", "term"])
def test_plan(how, monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(plan_mod, "plan", stop(how))
    said(call(data_cli.plan_main, [str(POOL), "--out", str(tmp_path / "rows.csv")]), how, capsys)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("how", ["int", "term"])
def test_diagnose(how, monkeypatch, capsys):
    monkeypatch.setattr(diagnose_mod, "diagnose", stop(how))
    said(call(data_cli.diagnose_main, [str(RUN)]), how, capsys)


@pytest.mark.parametrize("how", ["int", "term"])
def test_lesson_build_keeps_the_old_lesson_whole(how, monkeypatch, capsys, tmp_path):
    out = tmp_path / "L"
    assert lesson_cli.main(["build", str(out), *QUICK_LESSON]) == 0
    capsys.readouterr()
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    monkeypatch.setattr(build_mod, "page", stop(how))
    said(call(lesson_cli.main, ["build", str(out), "--force", *QUICK_LESSON]), how, capsys)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["L"]  # no temporary folder beside it


@pytest.mark.parametrize("how", ["int", "term"])
def test_lab_new_writes_all_four_stubs_or_none(how, monkeypatch, capsys, tmp_path):
    real_open, calls = open, []

    def open_then_stop(path, mode="r", *a, **k):
        if "x" in mode:
            calls.append(path)
            if len(calls) == 3:
                stop(how)()
        return real_open(path, mode, *a, **k)

    monkeypatch.setattr("builtins.open", open_then_stop)
    said(call(lab_cli.main, ["new", str(tmp_path / "lab")]), how, capsys)
    assert list((tmp_path / "lab").iterdir()) == []


def test_terminated_is_a_keyboard_interrupt():
    """So every `except KeyboardInterrupt`, `with` and `finally` treats SIGTERM as it treats Ctrl-C."""
    assert issubclass(Terminated, KeyboardInterrupt)


# ---- as a process: real signals once the toy runs --------------------------------------------------------


@pytest.mark.integration
@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_to_a_running_toy(tmp_path, sig, code):
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    out = tmp_path / "h.csv"
    proc = subprocess.Popen([sys.executable, "-m", "sim", "toy", "--iterations", "5000", "--n-seeds", "128",
                             "--group-size", "1024", "--out", str(out)], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # about 15 s of work
    time.sleep(6)  # past the imports (about 2 s): in the run
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == code and stdout == "" and stderr == "interrupted: nothing written\n", stderr[-2000:]
    assert list(tmp_path.iterdir()) == []


def processes_naming(marker: str) -> list[str]:
    table = subprocess.run(["ps", "-ww", "-eo", "stat=,args="], capture_output=True, text=True).stdout
    return [line for line in table.splitlines() if marker in line and not line.lstrip().startswith("Z")
            and "ps -ww" not in line]


@pytest.mark.integration
@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_to_lab_check_leaves_no_worker(tmp_path, sig, code):
    """The interrupted command ends by os._exit (sim/__main__.exit_process), which runs no atexit: the lab's
    workers (a fork server, a worker running the student's code) were left running after SIGTERM."""
    tasks = (ROOT / "lab" / "tasks.py").read_text()
    first = tasks.index(":\n", tasks.index("\ndef ")) + 2
    (tmp_path / "tasks.py").write_text("import time\n" + tasks[:first] + "    time.sleep(60)\n" + tasks[first:])
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "sim", "lab", "check", "tasks.py", "--timeout", "120"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(8)  # the pool started, torch imported, the first check asleep in a worker
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == code and stderr == "interrupted: nothing written\n", stderr[-2000:]
    deadline = time.monotonic() + 10
    while processes_naming(str(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert processes_naming(str(tmp_path)) == []
