"""What the commands write: an output is never a file the same run reads, a file the playground ships, or another
output of the same run (refused in one line, exit 2, before anything runs and with every file as it was); a JSON
object that --out writes is not printed to stdout again (`diagnose`/`plan --json --out FILE.json`: one line); a
file replaced keeps its mode, and one with other hard links is written through all of them; no file holds a
control or bidi character from its input raw.

The files are compared as the files they are: the same name, `sub/../name`, a symbolic link and a hard link all
count (sim.runtime.files.check_apart)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from sim.paths import DATA
from sim.tinylm import cli as tinylm_cli
from sim.tinylm.checkpoint import ASSET
from sim.toy import cli as toy_cli
from sim.yourdata import cli as data_cli
from sim.yourdata.diagnose import diagnose, json_text
from sim.yourdata.runlog import load_run_log

RUN = DATA / "examples" / "tinylm_trl_trainer_state.json"
POOL = DATA / "examples" / "tinylm_prompts.csv"


def shipped_hashes() -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(DATA.rglob("*")) if p.is_file()}


@pytest.fixture(autouse=True)
def shipped_files_stay():
    before = shipped_hashes()
    yield
    assert shipped_hashes() == before, "a shipped file changed"


@pytest.fixture
def no_training(monkeypatch):
    def refuse(*_, **__):
        raise AssertionError("training started before the outputs were checked")

    monkeypatch.setattr(tinylm_cli, "run_story", refuse)


def refused(code: int, capsys, *words: str) -> str:
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.startswith("error: ") and err.count("\n") == 1, (code, out, err)
    assert "(nothing was run)" in err and all(w in err for w in words), err
    return err


def tree(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir()) if p.is_file()}


@pytest.fixture
def checkpoint(tmp_path) -> Path:
    """A copy of the shipped checkpoint and its sidecar: X.pt and X.json."""
    shutil.copyfile(ASSET, tmp_path / "X.pt")
    shutil.copyfile(ASSET.with_suffix(".json"), tmp_path / "X.json")
    return tmp_path / "X.pt"


# ---- tinylm ----------------------------------------------------------------------------------


@pytest.mark.parametrize("flags, words", [
    (["--out", str(ASSET)], ["--out", "--checkpoint"]),  # the default checkpoint, which the run reads
    (["--out", str(ASSET.with_suffix(".json"))], ["the sidecar of --checkpoint"]),
    (["--from-scratch", "--out", str(ASSET)], ["a file the playground ships"]),  # not read, but shipped
    (["--from-scratch", "--out", str(DATA / "tinylm_run.json")], ["a file the playground ships"]),
])  # fmt: skip
def test_tinylm_never_writes_over_the_shipped_checkpoint(flags, words, capsys, no_training):
    refused(tinylm_cli.main(["--iterations", "2", *flags]), capsys, *words)


@pytest.mark.parametrize("out", ["X.pt", "X.json", "sub/../X.pt", "link.pt", "hard.pt"])
def test_tinylm_never_writes_over_the_checkpoint_it_starts_from(out, checkpoint, capsys, no_training):
    folder = checkpoint.parent
    (folder / "sub").mkdir()
    (folder / "link.pt").symlink_to(checkpoint)
    os.link(checkpoint, folder / "hard.pt")
    before = tree(folder)
    refused(tinylm_cli.main(["--checkpoint", str(checkpoint), "--out", str(folder / out)]), capsys, "--checkpoint")
    assert tree(folder) == before


@pytest.mark.parametrize("flags", [
    ["--save-sft", "{d}/a.pt", "--out", "{d}/a.json"],  # the new checkpoint's sidecar
    ["--save-sft", "{d}/a.pt", "--out", "{d}/a.pt"],
    ["--save-sft", "{d}/a.pt", "--trainer", "trl", "--keep-trainer-state", "{d}/a.json"],
    ["--trainer", "trl", "--out", "{d}/run.json", "--keep-trainer-state", "{d}/run.json"],
    ["--trainer", "trl", "--keep-trainer-state", "{d}/state.json", "--diagnosis", "{d}/state.json"],
])  # fmt: skip
def test_tinylm_never_writes_one_output_over_another(flags, tmp_path, capsys, no_training, monkeypatch):
    import sim.tinylm.trl_bridge as bridge

    monkeypatch.setattr(bridge, "trl_story", lambda *a, **k: pytest.fail("TRL started"))
    refused(tinylm_cli.main([f.format(d=tmp_path) for f in flags]), capsys, "also", "one output would overwrite")
    assert list(tmp_path.iterdir()) == []


def test_the_shipped_checkpoint_can_still_be_rebuilt_as_its_message_says():
    """`python -m sim tinylm --save-sft assets/data/tinylm_sft.pt --iterations 0` (checkpoint.REGENERATE)."""
    tinylm_cli.check_apart_outputs(tinylm_cli.parse_args(["--save-sft", str(ASSET), "--iterations", "0"]))
    with pytest.raises(ValueError, match="--out .* is also the sidecar of --save-sft"):
        tinylm_cli.check_apart_outputs(tinylm_cli.parse_args(["--save-sft", str(ASSET), "--out",
                                                              str(ASSET.with_suffix(".json"))]))


# ---- plan, diagnose, toy ---------------------------------------------------------------------


@pytest.fixture
def pool(tmp_path) -> Path:
    p = tmp_path / "mine.csv"
    p.write_text('prompt,correct,samples,notes\n"=1+1",3,8,keep me\nb,8,8,and me\n')
    return p


@pytest.mark.parametrize("out", ["mine.csv", "sub/../mine.csv", "link.csv", "hard.csv"])
def test_plan_never_writes_over_the_pool_it_reads(out, pool, capsys):
    folder = pool.parent
    (folder / "sub").mkdir()
    (folder / "link.csv").symlink_to(pool)
    os.link(pool, folder / "hard.csv")
    before = tree(folder)
    refused(data_cli.plan_main([str(pool), "--out", str(folder / out)]), capsys, "FILE", "which this run reads")
    assert tree(folder) == before


def test_plan_and_toy_never_write_over_a_shipped_file(pool, capsys):
    refused(data_cli.plan_main([str(pool), "--out", str(POOL)]), capsys, "a file the playground ships")
    refused(data_cli.plan_main([str(POOL), "--out", str(POOL)]), capsys, "FILE")
    refused(toy_cli.main(["--iterations", "2", "--out", str(ASSET.with_suffix(".json"))]), capsys,
            "a file the playground ships")


def test_diagnose_never_writes_over_the_log_it_reads(tmp_path, capsys):
    log = tmp_path / "trainer_state.json"
    shutil.copyfile(RUN, log)
    refused(data_cli.diagnose_main([str(log), "--out", str(log)]), capsys, "FILE")
    assert log.read_bytes() == RUN.read_bytes()


# ---- --json --out FILE.json writes the object once -----------------------------------------


@pytest.mark.parametrize("main, file", [(data_cli.plan_main, POOL), (data_cli.diagnose_main, RUN)])
def test_json_out_writes_the_object_and_prints_one_line(main, file, tmp_path, capsys):
    assert main([str(file), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    out = tmp_path / "result.json"
    assert main([str(file), "--json", "--out", str(out)]) == 0
    assert capsys.readouterr().out == f"wrote {out}\n"
    assert json.loads(out.read_text()) == printed
    assert main([str(file), "--out", str(out)]) == 0  # without --json: the report here, the object there
    assert capsys.readouterr().out.count("\n") > 3 and json.loads(out.read_text()) == printed


def test_tinylm_json_out_writes_the_summary_and_prints_one_line(tmp_path, capsys, monkeypatch):
    summary = {"pass_at_1_before": 0.5, "pass_at_1_after": 0.75, "trainer": "sim"}  # what run_story returns, in part
    monkeypatch.setattr(tinylm_cli, "run_story", lambda *_, **__: dict(summary))
    out = tmp_path / "run.json"
    assert tinylm_cli.main(["--iterations", "2", "--json", "--out", str(out)]) == 0
    assert capsys.readouterr().out == f"wrote {out}\n" and json.loads(out.read_text()) == summary
    assert tinylm_cli.main(["--iterations", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == summary


def test_plan_json_with_a_csv_out_prints_the_object(pool, tmp_path, capsys):
    """Two things asked for, two places: the JSON on stdout, the rows in the CSV (unchanged)."""
    out = tmp_path / "rows.csv"
    assert data_cli.plan_main([str(pool), "--json", "--out", str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["summary"]["prompts"] == 2
    assert out.read_text().startswith("line,prompt,correct,samples")


def test_diagnose_out_must_be_json(tmp_path, capsys):
    assert data_cli.diagnose_main([str(RUN), "--out", str(tmp_path / "d.csv")]) == 2
    assert "--out must end in .json" in capsys.readouterr().err and list(tmp_path.iterdir()) == []


# ---- a replaced file keeps its mode; a hard-linked one is written in place (sim/runtime/files.py) -------------

def _summary(*_a, **_k):
    return {"pass_at_1_before": 0.5, "trainer": "sim", "note": "x"}


OUTPUTS = [  # (command, argv before --out, the output's name)
    ("toy", ["--iterations=2", "--n-seeds=1"], "h.csv"), ("toy", ["--iterations=2", "--n-seeds=1"], "h.json"),
    ("diagnose", [str(RUN)], "d.json"), ("plan", [str(POOL)], "p.csv"), ("plan", [str(POOL)], "p.json"),
    ("tinylm", ["--iterations=2", "--json"], "t.json"),
]
MAINS = {"toy": toy_cli.main, "diagnose": data_cli.diagnose_main, "plan": data_cli.plan_main, "tinylm": tinylm_cli.main}


@pytest.mark.parametrize("command, argv, name", OUTPUTS, ids=[f"{c} {n}" for c, _, n in OUTPUTS])
def test_a_replaced_output_keeps_its_mode(command, argv, name, tmp_path, capsys, monkeypatch):
    """Issue 43 row 9: `diagnose --out` or `toy --out` over an existing 600 file left it 644."""
    monkeypatch.setattr(tinylm_cli, "run_story", _summary)
    old = os.umask(0o022)
    try:
        for mode in (0o600, 0o640, 0o664):  # 664: a bit the umask would take
            out = tmp_path / f"{mode:o}-{name}"
            out.write_text("old")
            out.chmod(mode)
            assert MAINS[command]([*argv, "--out", str(out)]) == 0, capsys.readouterr().err
            assert out.stat().st_mode & 0o7777 == mode and out.read_text() != "old"
        new = tmp_path / f"new-{name}"
        assert MAINS[command]([*argv, "--out", str(new)]) == 0
        assert new.stat().st_mode & 0o7777 == 0o644  # a new file: what open() gives under the umask
    finally:
        os.umask(old)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("command, argv, name", OUTPUTS, ids=[f"{c} {n}" for c, _, n in OUTPUTS])
def test_a_hard_linked_output_is_written_through_every_name(command, argv, name, tmp_path, capsys, monkeypatch):
    """Issue 43 row 9: a hard link to the old file kept the old content. A linked file of one's own is written
    in place, as cp and vim write it: both names, one inode, the new content."""
    monkeypatch.setattr(tinylm_cli, "run_story", _summary)
    out, other = tmp_path / name, tmp_path / f"other-{name}"
    out.write_text("old")
    os.link(out, other)
    inode = out.stat().st_ino
    assert MAINS[command]([*argv, "--out", str(out)]) == 0, capsys.readouterr().err
    assert out.stat().st_ino == other.stat().st_ino == inode and out.stat().st_nlink == 2
    assert other.read_bytes() == out.read_bytes() != b"old"


def test_another_users_linked_file_is_replaced_and_a_full_disk_keeps_the_old_content(tmp_path, monkeypatch):
    """A linked file that is not the user's is replaced by a rename (writing into someone else's inode would hand
    them the output); the in-place write reserves its space first, so a full disk leaves the old content whole."""
    import errno

    from sim.runtime import files

    out, other = tmp_path / "a.csv", tmp_path / "b.csv"
    out.write_text("old")
    os.link(out, other)
    monkeypatch.setattr(files.os, "geteuid", lambda: os.getuid() + 1)  # as if the file were another user's
    files.write_atomically({out: b"new"})
    assert out.read_text() == "new" and other.read_text() == "old" and out.stat().st_nlink == 1
    monkeypatch.undo()
    other.unlink()
    os.link(out, other)

    def full(fd, offset, length):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files.os, "posix_fallocate", full)
    with pytest.raises(OSError, match="No space left"):
        files.write_atomically({out: b"much longer new content" * 1000})
    assert out.read_text() == other.read_text() == "new" and sorted(tmp_path.iterdir()) == [out, other]


# ---- control characters: escaped in every file written (and on stdout) ---------------------------------------

HOSTILE = "\x1b]0;pwned\x07\x1b[31mred\u202e\x9b2J\x7f"  # a title, a bell, a colour, bidi, C1 CSI, DEL
ESCAPED = "\\u001b]0;pwned\\u0007\\u001b[31mred\\u202e\\u009b2J\\u007f"  # as the terminal and the CSV show it


def raw_controls(data: bytes) -> list[str]:
    """The control, bidi and other invisible characters in a file's text, but its line breaks and tabs."""
    return sorted({repr(ch) for ch in data.decode() if not ch.isprintable() and ch not in "\n\t"})


@pytest.mark.parametrize("name", ["p.csv", "p.json"])
def test_plan_out_holds_no_raw_control_character(name, tmp_path, capsys):
    """Issue 43 row 10: `plan --out` with a prompt id holding ESC ] 0 ; ... BEL ESC [ 31 m: raw escape bytes in the
    CSV (`cat` ran them), while stdout escaped them."""
    pool = tmp_path / f"{HOSTILE}.csv"  # the JSON names its file; the CSV holds the prompts
    pool.write_text(f"prompt,correct,samples\n{HOSTILE},3,8\nplain,4,8\n", encoding="utf-8")
    out = tmp_path / name
    assert data_cli.plan_main([str(pool), "--out", str(out), "--json"]) == 0
    printed = capsys.readouterr().out
    assert raw_controls(out.read_bytes()) == [] and raw_controls(printed.encode()) == []
    if name.endswith(".json"):  # the page's own escape of the name (sim.validate.neutral), kept as text
        assert json.loads(out.read_text())["file"] == ESCAPED + ".csv"
    else:
        assert ESCAPED in out.read_text()


def test_diagnose_out_holds_no_raw_control_character(tmp_path, capsys):
    """A reward function named with ESC, BEL and U+202E (issue 43 row 5's name) in `diagnose --out` and --json."""
    state = json.loads(RUN.read_text())
    for row in state["log_history"]:
        for key in [k for k in row if k.startswith("rewards/exact_match/")]:
            row[key.replace("exact_match", HOSTILE)] = row.pop(key)
    log = tmp_path / "trainer_state.json"
    log.write_text(json.dumps(state))
    out = tmp_path / "d.json"
    assert data_cli.diagnose_main([str(log), "--out", str(out)]) == 0
    assert raw_controls(out.read_bytes()) == []
    assert json.dumps(HOSTILE)[1:-1] in json.dumps(json.loads(out.read_text()))  # JSON's escapes: the name reads back
    capsys.readouterr()  # the report that run printed
    assert data_cli.diagnose_main([str(log), "--json"]) == 0
    printed = capsys.readouterr().out
    assert raw_controls(printed.encode()) == [] and ESCAPED in printed  # the metric keys, escaped on stdout
    d = diagnose(load_run_log(log.read_bytes(), str(log)))
    assert json_text(d) == printed.rstrip("\n")  # the page's download is this very text
