"""`python -m sim lesson build OUT`: the lesson's command line.

OUT is resolved and checked before anything is computed (a link, the root, a folder holding the current one); the
old lesson is replaced only once the new one is complete, and `--force` replaces only a lesson's own files: OUT's
marker lists what the build wrote, and a lesson that holds anything else (a syllabus, the students' work) is
refused, with the names, and left as it was. The Training grid's flags are gone (every view computes every setting
in the page). Progress is one rewritten line on a terminal and plain lines in a log.

Every refusal is exit 2 and one line `error: ...` on stderr, and leaves every file as it was."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from sim.lesson import build as build_mod
from sim.lesson import cli

QUICK = ["--views", "wasted", "--quiet"]  # a view whose page writes in a few milliseconds


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
    """Fails the test if the build gets as far as writing a view's page."""
    def refuse(*_, **__):
        raise AssertionError("a view was written before OUT was refused")

    monkeypatch.setattr(build_mod, "page", refuse)


# ---- OUT: where the lesson goes ------------------------------------------------------------------------


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
    real = build_mod.page

    def half(view, plotly):
        real(view, plotly)
        raise KeyboardInterrupt  # Ctrl-C once the new lesson is partly written

    monkeypatch.setattr(build_mod, "page", half)
    assert cli.main(["build", str(lesson), "--force", *QUICK]) == 130  # one line, no traceback
    assert capsys.readouterr().err == "interrupted: nothing written\n"
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
    assert cli.main(["build", str(lesson), "--force", "--views", "wasted,one_group", "--quiet"]) == 0
    assert (lesson / "one_group.html").is_file()  # a page of the older build that the next one does not write
    assert cli.main(["build", str(lesson), "--force", *QUICK]) == 0
    assert not (lesson / "one_group.html").exists() and (lesson / "wasted.html").is_file()
    assert siblings(lesson) == []


# ---- the grid is gone (the live views compute every setting in the page) -------------------------------


@pytest.mark.parametrize("flags", [["--grid", "seed=" + ",".join(map(str, range(100)))], ["--grid", "G=0x10"],
                                   ["--grid=seed=9007199254740993"], ["--max-settings", "5"], ["--max-mb", "5"]])
def test_the_grid_flags_are_refused_before_anything(flags, capsys, tmp_path, no_compute):
    err = one_line_error(*run(["build", str(tmp_path / "X"), "--views", "training", *flags], capsys)[::2])
    assert "is gone: every view computes every setting in the page" in err
    assert not (tmp_path / "X").exists()


def test_progress_in_a_log_is_plain_lines(tmp_path, capsys):
    assert cli.main(["build", str(tmp_path / "L"), "--views", "wasted,passk_estimator"]) == 0
    err = capsys.readouterr().err
    assert "\r" not in err and "\033" not in err, repr(err)
    assert "passk: 2/2 views" in err  # passk_estimator is a part of pass@k now


def test_the_temp_folder_is_made_beside_out(tmp_path, monkeypatch):
    seen = []
    real = build_mod.swap_in
    monkeypatch.setattr(build_mod, "swap_in", lambda tmp, out: (seen.append(tmp), real(tmp, out)))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["build", "L", *QUICK]) == 0
    assert seen[0].parent == tmp_path and os.path.basename(seen[0]).startswith(".L.building-")


# ---- --force replaces only the lesson's own files ----------------------------------------------------


def test_what_the_user_added_to_a_lesson_is_named_and_kept(lesson, capsys, no_compute):
    (lesson / "syllabus.md").write_text("week 3: GRPO")
    (lesson / "student_work").mkdir()
    (lesson / "student_work" / "ana.ipynb").write_text("{}")
    before = tree(lesson)
    capsys.readouterr()
    assert cli.main(["build", str(lesson), "--force", *QUICK]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == (f"error: {lesson} holds files this command did not write (student_work/, "
                                 "syllabus.md): not replacing it; move them out, or build into another folder\n")
    assert tree(lesson) == before and siblings(lesson) == []


def test_many_foreign_files_are_counted(lesson, capsys, no_compute):
    for i in range(8):
        (lesson / f"note{i}.txt").write_text("mine")
    capsys.readouterr()
    assert cli.main(["build", str(lesson), "--force", *QUICK]) == 2
    assert "(note0.txt, note1.txt, note2.txt, note3.txt, note4.txt and 3 more)" in capsys.readouterr().err


def test_the_marker_lists_the_lesson_s_files(lesson):
    lines = (lesson / build_mod.MARKER).read_text().splitlines()
    assert lines[0] == build_mod.MARKER_HEAD
    assert sorted(lines[2:]) == sorted(p.name for p in lesson.iterdir())


def test_a_lesson_whose_marker_lists_nothing_is_judged_by_the_names_lessons_had(tmp_path, capsys):
    """A lesson built before the marker listed its files: what earlier builds wrote is replaced, anything else
    refused."""
    old = tmp_path / "old"
    old.mkdir()
    (old / build_mod.MARKER).write_text("written by python -m sim lesson build\n")
    for name in ("index.html", "training.html", "sharpen.html", "player.js", "live.js", "lesson.css", "doc.css",
                 "plotly-2.35.2.min.js", "katex-0.16.22.min.js", "katex-0.16.22.css"):
        (old / name).write_text("old")
    (old / "data").mkdir()
    (old / "data" / "s0.js").write_text("old")
    (old / "mine.html").write_text("my page")
    assert cli.main(["build", str(old), "--force", *QUICK]) == 2
    assert "did not write (mine.html)" in capsys.readouterr().err
    (old / "mine.html").unlink()
    assert cli.main(["build", str(old), "--force", *QUICK]) == 0
    assert (old / "wasted.html").is_file() and not (old / "sharpen.html").exists() and not (old / "data").exists()


def test_the_progress_line_on_a_terminal_ends_with_its_last_view():
    """On a terminal the progress is one line rewritten in place: the last view ends it, so the summary (or an
    error) starts a line of its own; in a log, plain lines."""
    from sim.lesson.cli import progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    term = Terminal()
    say = progress(term)
    say("one_group", 1, 2)
    assert not term.getvalue().endswith("\n") and say.open
    say("training", 2, 2)
    assert term.getvalue().endswith("\x1b[K\n") and not say.open
    log = io.StringIO()
    say = progress(log)
    say("one_group", 1, 2)
    say("training", 2, 2)
    assert log.getvalue().splitlines()[-1].startswith("training: 2/2 views") and "\r" not in log.getvalue()


def test_a_rebuild_keeps_the_folders_mode_and_a_new_lesson_is_for_sharing(lesson, tmp_path):
    """--force over a lesson made private (700) keeps it private (it became 755: issue 43 row 9's sibling); a new
    lesson is 755, for sharing."""
    lesson.chmod(0o700)
    assert cli.main(["build", str(lesson), "--force", *QUICK]) == 0
    assert lesson.stat().st_mode & 0o7777 == 0o700
    assert cli.main(["build", str(tmp_path / "fresh"), *QUICK]) == 0
    assert (tmp_path / "fresh").stat().st_mode & 0o7777 == 0o755
