"""`lesson build OUT --force` replaces only a lesson's own files: OUT's marker lists what the build wrote, and a
lesson that holds anything else (a syllabus, the students' work) is refused, with the names, before anything is
computed, and left as it was. The command line's other rules: tests/test_hardening3_lesson_cli.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.lesson import build as build_mod
from sim.lesson import cli

QUICK = ["--views", "wasted", "--quiet"]


def tree(path: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(path)): p.read_bytes() if p.is_file() else None for p in sorted(path.rglob("*"))}


@pytest.fixture
def lesson(tmp_path) -> Path:
    out = tmp_path / "L"
    assert cli.main(["build", str(out), *QUICK]) == 0
    return out


@pytest.fixture
def no_compute(monkeypatch):
    def refuse(*_, **__):
        raise AssertionError("a view was written before OUT was refused")

    monkeypatch.setattr(build_mod, "page", refuse)


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
    assert tree(lesson) == before and [p.name for p in lesson.parent.iterdir()] == ["L"]


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
    import io

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
