"""Issue 28, the lesson's command line: rows 1 and 8 (OUT resolved and checked before anything is computed; the
old lesson replaced only once the new one is complete), 7 (a grid's size counted before any combination exists),
14 (seeds past 2^53, numbers not in decimal, progress lines in a log).

Every refusal is exit 2 and one line `error: ...` on stderr, and leaves every file as it was."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from sim.lesson import build as build_mod
from sim.lesson import cli, grid, views

QUICK = ["--views", "wasted", "--quiet"]  # a view that computes in a few milliseconds


def run(argv, capsys) -> tuple[int, str, str]:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code: int, err: str) -> str:
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, (code, err)
    return err


def tree(path: Path) -> dict[str, bytes | None]:
    """Every entry under `path` (links not followed) with each file's bytes."""
    return {str(p.relative_to(path)): p.read_bytes() if p.is_file() and not p.is_symlink() else None
            for p in sorted(path.rglob("*"))}


def siblings(path: Path) -> list[str]:
    """What lies beside `path` other than itself: a temporary folder left behind shows here."""
    return sorted(p.name for p in path.parent.iterdir() if p.name != path.name)


@pytest.fixture
def lesson(tmp_path) -> Path:
    out = tmp_path / "site" / "L"
    assert cli.main(["build", str(out), *QUICK]) == 0
    return out


@pytest.fixture
def no_compute(monkeypatch):
    """Fails the test if the build gets as far as computing a view."""
    def refuse(*_, **__):
        raise AssertionError("a view was computed before OUT was refused")

    monkeypatch.setattr(build_mod, "_write_view", refuse)


# ---- rows 1 and 8: OUT ----------------------------------------------------------------------------------


@pytest.mark.parametrize("where, out", [(".", "."), ("data", ".."), ("data", "../../L")])
def test_an_out_that_holds_the_current_folder_is_refused_and_the_lesson_kept(lesson, capsys, monkeypatch,
                                                                            no_compute, where, out):
    (lesson / "data").mkdir(exist_ok=True)
    before = tree(lesson)
    monkeypatch.chdir(lesson / where)
    err = one_line_error(*run(["build", out, "--force", *QUICK], capsys)[::2])
    assert "holds the current folder" in err
    assert tree(lesson) == before and siblings(lesson) == []


def test_a_symlink_out_is_refused_before_anything_is_computed(lesson, capsys, no_compute):
    link = lesson.parent / "link"
    link.symlink_to(lesson, target_is_directory=True)
    before = tree(lesson)
    err = one_line_error(*run(["build", str(link), "--force", *QUICK], capsys)[::2])
    assert "is a symbolic link" in err and str(lesson) in err
    assert tree(lesson) == before and link.is_symlink() and siblings(lesson) == ["link"]


def test_the_root_folder_is_refused(capsys, no_compute):
    assert "root of the file system" in one_line_error(*run(["build", "/", "--force", *QUICK], capsys)[::2])


def test_a_parent_that_is_a_link_is_followed(tmp_path, capsys):
    (tmp_path / "real").mkdir()
    (tmp_path / "via").symlink_to(tmp_path / "real", target_is_directory=True)
    code, out, _ = run(["build", str(tmp_path / "via" / "L"), *QUICK], capsys)
    assert code == 0 and (tmp_path / "real" / "L" / "wasted.html").is_file()


def test_a_failed_rebuild_leaves_the_old_lesson_whole(lesson, capsys, monkeypatch):
    before = tree(lesson)
    real = build_mod._write_view

    def half(tmp, view, plotly, say):
        real(tmp, view, plotly, say)
        raise KeyboardInterrupt  # Ctrl-C once the new lesson is partly written

    monkeypatch.setattr(build_mod, "_write_view", half)
    with pytest.raises(KeyboardInterrupt):
        cli.main(["build", str(lesson), "--force", *QUICK])
    assert tree(lesson) == before and siblings(lesson) == []


def test_a_failed_swap_puts_the_old_lesson_back(lesson, monkeypatch):
    before = tree(lesson)
    rename = Path.rename

    def refuse_new(self, target):
        if ".building-" in self.name:
            raise OSError(28, "No space left on device")
        return rename(self, target)

    monkeypatch.setattr(Path, "rename", refuse_new)
    assert cli.main(["build", str(lesson), "--force", *QUICK]) == 2
    assert tree(lesson) == before and siblings(lesson) == []


def test_a_rebuild_replaces_the_lesson_and_leaves_nothing_beside_it(lesson):
    (lesson / "stale.txt").write_text("from an older build")
    assert cli.main(["build", str(lesson), "--force", *QUICK]) == 0
    assert not (lesson / "stale.txt").exists() and (lesson / "wasted.html").is_file()
    assert siblings(lesson) == []


# ---- row 7: the grid's size, before any combination exists ---------------------------------------------


def test_a_huge_grid_is_refused_by_its_count_before_any_combination_exists(capsys, monkeypatch, tmp_path):
    def refuse(*_):
        raise AssertionError("the combinations were built before the grid's size was checked")

    monkeypatch.setattr(grid, "settings_of", refuse)
    monkeypatch.setattr(views, "settings_of", refuse)
    argv = ["build", str(tmp_path / "X"), "--views", "training", "--grid", "seed=" + ",".join(map(str, range(100))),
            "--grid", "lr=" + ",".join(map(str, range(1, 101))), "--grid", "T=" + ",".join(map(str, range(1, 11)))]
    err = one_line_error(*run(argv, capsys)[::2])
    assert "the grid has 9000000 settings (6 G x 5 beta x 3 scale x 100 seed x 100 lr x 10 T)" in err, err
    assert "over the cap of 400" in err
    assert not (tmp_path / "X").exists()


# ---- row 14: numbers a lesson's page can hold, written in decimal ---------------------------------------


@pytest.mark.parametrize("item, message", [
    ("seed=9007199254740993", "at most 2^53 = 9007199254740992"),
    ("seed=1e20", "at most 2^53"),
    ("G=0x10", "written in decimal, got '0x10'"),
    ("G=1_6", "written in decimal, got '1_6'"),
    ("lr=inf", "written in decimal"),
    ("lr=nan", "written in decimal"),
])  # fmt: skip
def test_a_grid_value_the_page_cannot_hold_is_refused(item, message, capsys, tmp_path, no_compute):
    err = one_line_error(*run(["build", str(tmp_path / "X"), "--views", "training", "--grid", item], capsys)[::2])
    assert message in err, err


def test_seeds_up_to_2_53_are_read_exactly():
    assert grid.parse_grid(["seed=9007199254740992,3"])["seed"] == (3, 2**53)
    assert grid.parse_grid(["seed=1e3"])["seed"] == (1000,)


def test_progress_in_a_log_is_plain_lines(tmp_path, capsys):
    assert cli.main(["build", str(tmp_path / "L"), "--views", "wasted,passk_estimator"]) == 0
    err = capsys.readouterr().err
    assert "\r" not in err and "\033" not in err, repr(err)
    assert "wasted: 42/42 settings" in err and "passk_estimator: 65/65 settings" in err


def test_progress_on_a_terminal_rewrites_one_line():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    stream = Tty()
    say = cli.progress(stream)
    say("wasted", 1, 2)
    say("wasted", 2, 2)
    assert stream.getvalue().count("\r") == 2 and "\n" not in stream.getvalue()


def test_the_temp_folder_is_made_beside_out(tmp_path, monkeypatch):
    seen = []
    real = build_mod.swap_in
    monkeypatch.setattr(build_mod, "swap_in", lambda tmp, out: (seen.append(tmp), real(tmp, out)))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["build", "L", *QUICK]) == 0
    assert seen[0].parent == tmp_path and os.path.basename(seen[0]).startswith(".L.building-")
