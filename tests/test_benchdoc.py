"""scripts/benchdoc.py: each benchmark rewrites only its own section of docs/benchmarks.md, and `--check` fails only
a target missed by more than 2x."""

from __future__ import annotations

import argparse
import datetime
import re

import pytest

from scripts.benchdoc import DOC, Report, add_arguments, rewrite_section

DOC_TEXT = """# Benchmarks

Intro, kept.

<!-- bench:toy start -->
old toy
<!-- bench:toy end -->

Between, kept.

<!-- bench:lesson start -->
old lesson
<!-- bench:lesson end -->
"""


def test_rewrite_replaces_only_its_section_byte_for_byte():
    new = rewrite_section(DOC_TEXT, "toy", "new toy\n| a | b |\n")
    assert new == DOC_TEXT.replace("old toy", "new toy\n| a | b |")
    assert rewrite_section(new, "toy", "old toy") == DOC_TEXT  # and back
    assert rewrite_section(DOC_TEXT, "lesson", "L") == DOC_TEXT.replace("old lesson", "L")


def test_a_new_section_is_appended_and_an_empty_file_gets_one():
    new = rewrite_section(DOC_TEXT, "player", "P")
    assert new.startswith(DOC_TEXT.rstrip()) and new.endswith("<!-- bench:player start -->\nP\n"
                                                               "<!-- bench:player end -->\n")
    assert rewrite_section("", "toy", "T") == "<!-- bench:toy start -->\nT\n<!-- bench:toy end -->\n"


@pytest.mark.parametrize("broken", [
    DOC_TEXT + "<!-- bench:toy start -->\n",  # twice
    DOC_TEXT.replace("<!-- bench:toy end -->", ""),  # no end
    "<!-- bench:toy end -->\n<!-- bench:toy start -->\n",  # reversed
])
def test_a_badly_marked_section_is_refused(broken):
    with pytest.raises(ValueError, match="'toy' must be marked once"):
        rewrite_section(broken, "toy", "x")


def test_a_section_name_that_is_not_a_plain_word_is_refused():
    with pytest.raises(ValueError):
        Report("toy -->", "x")


def args(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add_arguments(p)
    return p.parse_args(list(argv))


def test_check_fails_only_beyond_twice_the_target(tmp_path, capsys):
    r = Report("demo", "Demo")
    r.add("lower, met", 40, "ms", target=50)
    r.add("lower, missed 1.9x", 95, "ms", target=50)
    r.add("higher, missed 1.5x", 16, "fps", target=24, higher_is_better=True)
    r.add("no target", 3.14159, "kB")
    assert [f.verdict() for f in r.figures] == ["met", "missed (1.90x)", "missed (1.50x)", ""]
    assert r.finish(args("--check")) == 0
    r.add("higher, missed 2.4x", 10, "fps", target=24, higher_is_better=True)
    assert r.figures[-1].verdict() == "MISSED by 2.4x"
    assert r.finish(args("--check")) == 1 and r.finish(args()) == 0  # without --check: figures only
    out = capsys.readouterr().out
    assert "| higher, missed 2.4x | 10 fps | ≥ 24 fps | MISSED by 2.4x |" in out
    assert "check: 1 figure(s) missed by more than 2x" in out
    r.add("not measured", None, "s", target=3)
    assert r.figures[-1].verdict() == "not measured" and r.figures[-1].miss() is None
    never = r.add("never reached", float("inf"), "s", target=30)
    assert never.verdict() == "MISSED (never reached)" and "| never reached | never | ≤ 30 s |" in r.table()


def test_write_docs_writes_the_table_command_date_and_load(tmp_path, monkeypatch):
    doc = tmp_path / "benchmarks.md"
    doc.write_text(DOC_TEXT)
    monkeypatch.setattr("sys.argv", ["scripts/bench_toy.py", "--check", "--write-docs"])
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    r = Report("toy", "Toy engine")
    r.add("a run", 12.5, "ms", target=50)
    r.note("CPU time, median of 9.")
    assert r.finish(args("--write-docs"), doc=doc) == 0
    text = doc.read_text()
    section = text[text.index("<!-- bench:toy start -->"):text.index("<!-- bench:toy end -->")]
    assert "## Toy engine" in section and "| a run | 12.5 ms | ≤ 50 ms | met |" in section
    assert "CPU time, median of 9." in section
    assert "OMP_NUM_THREADS=1 python scripts/bench_toy.py --check --write-docs" in section
    load = r"[\d.]+ / [\d.]+ / [\d.]+"
    assert re.search(rf"Measured \d{{4}}-\d\d-\d\d \d\d:\d\d UTC, load average {load} at the start and {load} at the "
                     r"end \(1 / 5 / 15 min\) on \d+ cores", section)
    assert text.replace(section, "<!-- bench:toy start -->\n") == DOC_TEXT.replace("old toy\n", "")  # the rest kept


def test_the_section_is_dated_as_given():
    r = Report("toy", "Toy")
    when = datetime.datetime(2026, 1, 2, 3, 4, tzinfo=datetime.UTC)
    assert "Measured 2026-01-02 03:04 UTC" in r.section(when)


def test_every_benchmark_owns_one_section_of_the_docs():
    """Each scripts/bench_*.py names its section once, and docs/benchmarks.md has one place for each."""
    from pathlib import Path

    text = DOC.read_text()
    for script in sorted(Path(DOC.parents[1], "scripts").glob("bench_*.py")):
        names = re.findall(r'Report\("([a-z0-9_-]+)"', script.read_text())
        assert len(names) == 1, f"{script.name}: one Report(...) per benchmark, found {names}"
        assert text.count(f"<!-- bench:{names[0]} start -->") == 1, f"{script.name}: no section {names[0]!r}"
