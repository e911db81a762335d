"""The command lines' refusals: each input as an adversarial pass typed it.

Every refusal is exit code 2 and exactly one line on stderr (`error: ...`), comes before any training, writes
nothing (or leaves the old files whole) and leaves no process behind: a checkpoint named .json (once overwritten by
its own sidecar), long names, timeouts outside a sane range, a symlink loop as --checkpoint, a save path that cannot
be written (refused before training, never half-written), a pickle with __reduce__ (one line, nothing run), a bad
memory cap or job count in the environment.
"""

from __future__ import annotations

import errno
import json
import os
import pickle
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch

from sim.lab.cli import main as lab_main
from sim.lab.limits import TIMEOUT_MAX, TIMEOUT_MIN, parse_timeout
from sim.runtime import files
from sim.tinylm import cli as tinylm_cli
from sim.tinylm.checkpoint import SavePathError, load_checkpoint, save_checkpoint, sidecar_path
from sim.tinylm.model import ModelConfig, build_model
from tests.fixtures.clis import commands, forbid_work, value_flags

ROOT = Path(__file__).resolve().parents[1]
SMALL = ModelConfig(d_model=32, n_head=2, n_layer=1)


def one_line_error(err: str) -> str:
    assert err.startswith("error: ") and err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


def tree(path: Path) -> dict[str, bytes | None]:
    """Every entry under `path` (links not followed) with a regular file's bytes: what 'nothing written' compares."""
    out = {}
    for p in sorted(path.rglob("*")):
        out[str(p.relative_to(path))] = p.read_bytes() if p.is_file() and not p.is_symlink() else None
    return out


def run_cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """`python -m sim ...` in its own session; afterwards no process of that session may be left."""
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "sim", *args], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    out, err = proc.communicate(timeout=120)
    with pytest.raises(ProcessLookupError):  # the session's process group is empty: nothing left running
        os.killpg(proc.pid, 0)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.fixture
def no_training(monkeypatch):
    """Fails the test if the tinylm CLI gets as far as training."""
    def refuse(*_, **__):
        raise AssertionError("training started before the input was refused")

    monkeypatch.setattr(tinylm_cli, "run_story", refuse)


# ---- every command: an emptied, empty or repeated value (sim/runtime/args.py) ---------------------------------


def _value_flags():
    for command, (parser, base, main) in commands().items():
        for a in value_flags(parser):
            two = [str(c) for c in a.choices][:2] if a.choices else ["1", "2"]  # two values the flag takes
            flag, named = a.option_strings[-1], "/".join(a.option_strings)  # argparse's name for the flag
            yield pytest.param(command, base, main, flag, named, two, id=f"{command} {flag}")


def test_the_table_covers_every_command():
    from sim.__main__ import COMMANDS

    assert set(commands()) == set(COMMANDS)


@pytest.mark.parametrize("command, base, main, flag, named, two", list(_value_flags()))
def test_an_emptied_empty_or_repeated_value_is_one_line(command, base, main, flag, named, two, tmp_path, monkeypatch,
                                                         capsys):
    """`--checkpoint=--` once ended in a TypeError traceback (argparse 3.11 hands [] for it; issue 41), `--out=`
    meant no --out at all, and a flag given twice kept the last in silence: each is refused in one line, exit 2,
    before any work, for every value flag of every command (the same value twice says one thing: not refused)."""
    forbid_work(monkeypatch)
    monkeypatch.chdir(tmp_path)
    base = [str(tmp_path / "out") if a == "OUT" else a for a in base]
    for argv, needle in (([f"{flag}=--"], f"argument {named}: expected one argument"),
                         ([f"{flag}="], f"argument {named}: expected a value, got an empty one"),
                         ([f"{flag}= "], f"argument {named}: expected a value, got an empty one"),
                         ([flag, two[0], flag, two[1]], f"argument {named}: given twice (")):
        assert main([*base, *argv]) == 2, argv
        out, err = capsys.readouterr()
        assert out == "" and needle in one_line_error(err), (argv, err)
    assert tree(tmp_path) == {}


@pytest.mark.parametrize("argv, needle", [
    (["tinylm", "--checkpoint=--", "--json"], "argument --checkpoint: expected one argument"),  # issue 41's traceback
    (["tinylm", "--preset=--", "--json"], "argument --preset: expected one argument"),  # TypeError: unhashable list
    (["lesson", "build", "x", "--views=--"], "argument --views: expected one argument"),  # AttributeError on a list
    (["tinylm", "-G", "4", "--group-size", "8"], "argument --group-size/-G: given twice (4, then 8)"),  # two names
    (["diagnose", ""], "argument FILE: expected a value, got an empty one"),
    (["lab", "check", "~nosuch"], "no such file: ~nosuch"),  # pathlib's expanduser raised RuntimeError for it
    (["lab", "check", " "], "argument path: expected a value, got an empty one"),
    (["tinylm", "--out", "-x.json"], "argument --out: expected one argument"),  # a value that looks like a flag
    (["tinylm", "--out=a.json", "--out=\x1b[31m.json"], "given twice (a.json, then \\u001b[31m.json)"),  # escaped
])
def test_siblings_found_by_hand(argv, needle, capsys, no_training, tmp_path, monkeypatch):
    from sim.__main__ import main

    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and needle in one_line_error(err)


def test_an_on_off_flag_or_the_same_value_given_twice_is_harmless(capsys):
    from sim.toy.cli import main

    assert main(["--iterations=2", "--n-seeds=1", "--json", "--json", "--seed", "3", "--seed=3"]) == 0
    assert json.loads(capsys.readouterr().out)["config"]["seed"] == 3


# ---- the lab CLI ----------------------------------------------------------------------------


@pytest.mark.parametrize("argv, needle", [
    (["check", "a" * 300], "File name too long"),
    (["check", "a" * 5000 + "/tasks.py"], "(5009 characters): File name too long"),
    (["new", "b" * 300], "File name too long"),
    (["new", "b" * 5000], "File name too long"),
    (["check", "--timeout", "inf"], "--timeout=inf is not a number of seconds from 0.1 to 600"),
    (["check", "--timeout", "1e10"], "--timeout=1e10 is not"),
    (["check", "--timeout", "1e300"], "--timeout=1e300 is not"),
    (["check", "--timeout", "1e-300"], "--timeout=1e-300 is not"),  # was accepted once
    (["check", "--timeout", "nan"], "--timeout=nan is not"),
    (["check", "--timeout", "0.05"], "from 0.1 to 600"),
    (["check", "--timeout", "\u202e5"], "--timeout=\\u202e5 is not"),  # shown neutrally
])
def test_lab_cli_refuses_in_one_line(argv, needle, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert lab_main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and needle in one_line_error(err)
    assert tree(tmp_path) == {}  # `new` created nothing


def test_timeout_range_is_declared_once():
    assert parse_timeout(str(TIMEOUT_MIN)) == TIMEOUT_MIN and parse_timeout(f" {TIMEOUT_MAX:g} ") == TIMEOUT_MAX
    for bad in ("0", "-1", "600.001", "inf", "1e309", "", "x"):
        with pytest.raises(ValueError, match="is not a number of seconds"):
            parse_timeout(bad)
    from sim.lab.runner import lab_from_env  # the server reads GRPO_LAB_TIMEOUT through the same function

    lab, problem = lab_from_env({"GRPO_LAB_DIR": str(ROOT / "lab"), "GRPO_LAB_TIMEOUT": "1e300"})
    assert lab is None and problem == "GRPO_LAB_TIMEOUT=1e300 is not a number of seconds from 0.1 to 600"


@pytest.mark.integration
def test_lab_cli_long_name_in_a_process(tmp_path):
    res = run_cli(["lab", "new", "n" * 300], tmp_path)
    assert res.returncode == 2 and res.stdout == "" and "File name too long" in one_line_error(res.stderr)
    assert tree(tmp_path) == {}


def test_lab_new_writes_all_stubs_or_none(tmp_path, monkeypatch, capsys):
    real_open = open
    calls = []

    def fail_third(path, mode="r", *a, **k):
        if "x" in mode:
            calls.append(path)
            if len(calls) == 3:
                raise OSError(errno.ENOSPC, "No space left on device")
        return real_open(path, mode, *a, **k)

    monkeypatch.setattr("builtins.open", fail_third)
    assert lab_main(["new", str(tmp_path / "lab")]) == 2
    assert "No space left on device; nothing was written" in one_line_error(capsys.readouterr().err)
    assert tree(tmp_path) == {"lab": None}  # the directory, empty: no half-filled lab


# ---- a checkpoint named like its sidecar ------------------------------------------------------------


def test_save_sft_json_name_is_refused_before_training(tmp_path, capsys, no_training):
    code = tinylm_cli.main(["--save-sft", str(tmp_path / "out" / "model.json"), "--iterations", "0"])
    err = one_line_error(capsys.readouterr().err)
    assert code == 2 and "must end in .pt" in err and tree(tmp_path) == {}
    with pytest.raises(SavePathError, match="must end in .pt"):
        save_checkpoint(build_model(SMALL, 0), tmp_path / "model.json")
    assert tree(tmp_path) == {}


def test_checkpoint_and_sidecar_are_two_files_that_load(tmp_path):
    path = tmp_path / "out" / "model.pt"
    save_checkpoint(build_model(SMALL, 0), path, {"seed": 3})
    assert sidecar_path(path) == tmp_path / "out" / "model.json" and set(tree(tmp_path)) == {
        "out", "out/model.pt", "out/model.json"}
    model, meta = load_checkpoint(path)
    assert meta == {"seed": 3} and model.cfg == SMALL
    assert oct((tmp_path / "out" / "model.pt").stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_foreign_file_where_the_sidecar_goes_is_kept(tmp_path, capsys, no_training):
    notes = tmp_path / "m.json"
    notes.write_text('{"my": "notes"}')
    assert tinylm_cli.main(["--save-sft", str(tmp_path / "m.pt")]) == 2
    assert "is not a TinyLM sidecar; nothing was written" in one_line_error(capsys.readouterr().err)
    assert tree(tmp_path) == {"m.json": b'{"my": "notes"}'}


# ---- --checkpoint through a symlink loop ------------------------------------------------------------


def test_checkpoint_symlink_loop_is_one_line(tmp_path, capsys):
    (tmp_path / "a.pt").symlink_to(tmp_path / "b.pt")
    (tmp_path / "b.pt").symlink_to(tmp_path / "a.pt")
    assert tinylm_cli.main(["--checkpoint", str(tmp_path / "a.pt"), "--iterations", "1"]) == 2
    assert "Too many levels of symbolic links" in one_line_error(capsys.readouterr().err)


# ---- a save path that cannot take the files ---------------------------------------------------------


def _loop(tmp_path):
    (tmp_path / "m.pt").symlink_to(tmp_path / "n.pt")
    (tmp_path / "n.pt").symlink_to(tmp_path / "m.pt")


@pytest.mark.parametrize("make, needle", [
    (_loop, "Too many levels of symbolic links"),
    (lambda d: (d / "m.pt").symlink_to("/dev/full"), "/dev/full is not a regular file"),
    (lambda d: (d / "m.json").mkdir(), "m.json is a directory"),
    (lambda d: (d / "m.pt").mkdir(), "m.pt is a directory"),
    (lambda d: (d / "m.json").symlink_to("/dev/null"), "m.json is not a regular file"),
])
def test_unwritable_save_path_is_refused_before_training(tmp_path, capsys, no_training, make, needle):
    make(tmp_path)
    before = tree(tmp_path)
    assert tinylm_cli.main(["--save-sft", str(tmp_path / "m.pt")]) == 2
    assert needle in one_line_error(capsys.readouterr().err)
    assert tree(tmp_path) == before


@pytest.mark.parametrize("name", ["c" * 300 + ".pt", "c" * 252 + ".pt"])  # 252: the sidecar's name is 257 bytes
def test_too_long_save_name_is_refused_before_training(tmp_path, capsys, no_training, name):
    assert tinylm_cli.main(["--save-sft", str(tmp_path / "new" / name)]) == 2
    assert "is too long" in one_line_error(capsys.readouterr().err) and tree(tmp_path) == {}


@pytest.mark.parametrize("failing_write", [1, 2])  # the checkpoint's temporary file, then the sidecar's
def test_a_failed_save_leaves_the_old_files_whole(tmp_path, monkeypatch, failing_write):
    path = tmp_path / "m.pt"
    save_checkpoint(build_model(SMALL, 0), path, {"seed": 0})
    before = tree(tmp_path)
    calls = []

    def full_disk(fd):
        calls.append(fd)
        if len(calls) == failing_write:
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files.os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space left"):
        save_checkpoint(build_model(SMALL, 1), path, {"seed": 1})
    assert tree(tmp_path) == before  # the old pair, byte for byte; no temporary file left
    monkeypatch.undo()
    assert load_checkpoint(path)[1] == {"seed": 0}


# ---- a pickle that would run code ------------------------------------------------------------------


class _Evil:
    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.integration
def test_pickle_with_reduce_is_refused_in_one_line(tmp_path, capsys):
    marker = tmp_path / "PWNED"
    torch.save({"format": "tinylm", "x": _Evil(marker)}, tmp_path / "evil.pt")  # torch's protocol 2
    with open(tmp_path / "evil2.pt", "wb") as f:
        pickle.dump(_Evil(marker), f, protocol=4)  # the protocol torch warns about before refusing
    for name in ("evil.pt", "evil2.pt"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert tinylm_cli.main(["--checkpoint", str(tmp_path / name), "--iterations", "1"]) == 2
        assert "refused without running anything" in one_line_error(capsys.readouterr().err)
        assert caught == []  # nothing for the warnings module to print before the error
    res = run_cli(["tinylm", "--checkpoint", str(tmp_path / "evil2.pt")], tmp_path)  # stderr as a user sees it
    assert res.returncode == 2 and res.stdout == "" and "refused without running" in one_line_error(res.stderr)
    assert not marker.exists()


# ---- the grep pass: the toy's --out follows the same rules (sim/runtime/files.py) ---------------------------------


@pytest.mark.parametrize("make, needle", [
    (lambda d: ((d / "h.csv").symlink_to(d / "g.csv"), (d / "g.csv").symlink_to(d / "h.csv")),
     "Too many levels of symbolic links"),
    (lambda d: (d / "h.csv").symlink_to("/dev/full"), "/dev/full is not a regular file"),
    (lambda d: (d / "h.csv").mkdir(), "h.csv is a directory"),  # messages: "cannot write PATH: why"
])
def test_toy_out_is_refused_before_the_run(tmp_path, capsys, monkeypatch, make, needle):
    from sim.toy import cli as toy_cli

    make(tmp_path)
    before = tree(tmp_path)
    monkeypatch.setattr(toy_cli, "run_toy", lambda *_: pytest.fail("the run started before --out was refused"))
    assert toy_cli.main(["--out", str(tmp_path / "h.csv")]) == 2
    assert needle in one_line_error(capsys.readouterr().err) and tree(tmp_path) == before


def test_toy_out_failed_write_keeps_the_old_file(tmp_path, capsys, monkeypatch):
    from sim.toy import cli as toy_cli

    out = tmp_path / "h.csv"
    out.write_text("old,history\n")
    monkeypatch.setattr(files.os, "replace", lambda *_: (_ for _ in ()).throw(OSError(errno.ENOSPC, "No space")))
    assert toy_cli.main(["--out", str(out), "--iterations", "50", "--n-seeds", "1"]) == 2
    assert "No space" in one_line_error(capsys.readouterr().err)
    assert tree(tmp_path) == {"h.csv": b"old,history\n"}  # old file whole, no temporary file left


@pytest.mark.parametrize("raw", ["abc", "inf", "-5", "1e999", "\u202e9"])
def test_a_bad_memory_cap_in_the_environment_is_one_line(raw):
    from sim.validate import env_number

    with pytest.raises(ValueError, match=r"^TINYLM_MEMORY_CAP_MB=\S+ is not a number from 1 to 1048576$"):
        env_number("TINYLM_MEMORY_CAP_MB", 2048, 1, 2**20, {"TINYLM_MEMORY_CAP_MB": raw})
    assert env_number("X", 2048, 1, 2**20, {"X": " "}) == 2048 and env_number("X", 1, 1, 9, {"X": "4.5"}) == 4.5


@pytest.mark.parametrize("raw", ["x", "2.5", "0", "-1", "inf", "65"])
def test_a_bad_tinylm_max_jobs_is_one_line(raw):
    # the grep pass: TINYLM_MAX_JOBS was int(os.environ[...]): "x" a traceback at import, "0" a line that never moves
    from sim.validate import env_number

    with pytest.raises(ValueError, match=r"^TINYLM_MAX_JOBS=\S+ is not a whole number from 1 to 64$"):
        env_number("TINYLM_MAX_JOBS", 2, 1, 64, {"TINYLM_MAX_JOBS": raw}, integer=True)
    assert env_number("TINYLM_MAX_JOBS", 2, 1, 64, {"TINYLM_MAX_JOBS": "3"}, integer=True) == 3


@pytest.mark.integration
def test_a_bad_memory_cap_stops_the_cli_in_one_line(tmp_path):
    env = {**os.environ, "TINYLM_MEMORY_CAP_MB": "abc"}
    res = subprocess.run([sys.executable, "-m", "sim", "tinylm"], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 2 and "TINYLM_MEMORY_CAP_MB=abc is not a number" in one_line_error(res.stderr)


@pytest.mark.parametrize("flag", ["--checkpoint", "--save-sft", "--out", "--loss-type", "--seed"])
def test_a_flag_given_double_dash_as_its_value_is_one_line(flag, capsys, no_training):
    """argparse reads `--checkpoint=--` as the value [] (found by tests/test_cli_fuzz.py): one line, exit 2."""
    assert tinylm_cli.main([f"{flag}=--"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"error: argument {flag}: expected one argument") and err.count("\n") == 1
