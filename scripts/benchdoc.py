"""What every benchmark in scripts/ shares: its figures beside their targets, the `--check` verdict, and its own
section of docs/benchmarks.md.

    report = Report("toy", "Toy engine")                       # owns <!-- bench:toy start --> ... end -->
    report.add("300 iterations x 64 seeds, G = 8 (CPU)", 49.5, "ms", target=50)              # lower is better
    report.add("Play, frames per second", 39, "fps", target=24, higher_is_better=True)
    report.add("payload at T = 500, 64 seeds", 110, "kB")                                    # no target
    return report.finish(args)          # prints the table; --write-docs rewrites the section; the exit code

A target is met when the figure is on its side of it. `--check` exits 1 when any figure misses its target by more
than 2x (twice the time, half the rate): a shared machine's speed varies 2-3.5x through a day, so only a miss
beyond that says something about the code. CI runs every `--check` and prints it without failing on it.

`--write-docs` replaces this benchmark's section of docs/benchmarks.md (and only it) with the table, the exact
command, the date and the machine's load; the rest of the file is left byte for byte. Nobody edits those sections
by hand.
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import re
import shlex
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "benchmarks.md"
MISS_FACTOR = 2.0  # --check fails beyond this factor


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The two flags every benchmark takes."""
    parser.add_argument("--check", action="store_true",
                        help="a short run: each figure beside its target; exit 1 if one misses it by more than 2x")
    parser.add_argument("--write-docs", action="store_true",
                        help="rewrite this benchmark's section of docs/benchmarks.md with the figures")


START_LOAD = os.getloadavg()  # when the benchmark started (it imports this module first)


def measure(fn, repeats: int) -> tuple[float, float, float]:
    """Median wall, median CPU and minimum CPU seconds of fn() over `repeats` calls (after a warm-up call)."""
    fn()
    walls, cpus = [], []
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), statistics.median(cpus), min(cpus)


def machine() -> str:
    """The machine's load as a benchmark figure needs it: the load averages when the benchmark started and now,
    and the core count."""
    start, end = (" / ".join(f"{x:.2f}" for x in load) for load in (START_LOAD, os.getloadavg()))
    return f"load average {start} at the start and {end} at the end (1 / 5 / 15 min) on {os.cpu_count()} cores"


def command() -> str:
    """The command that is running, as a reader would type it from the repository root."""
    script = Path(sys.argv[0]).resolve()
    try:
        script = script.relative_to(ROOT)
    except ValueError:
        pass
    env = " ".join(f"{k}={os.environ[k]}" for k in ("OMP_NUM_THREADS",) if k in os.environ)
    return " ".join(filter(None, [env, "python", shlex.join([str(script), *sys.argv[1:]])]))


@dataclass
class Figure:
    name: str
    value: float | None  # None: not measured in this run
    unit: str
    target: float | None = None
    higher_is_better: bool = False

    def miss(self) -> float | None:
        """How many times worse than the target (1 = on it, < 1 met); None without a target or a value."""
        if self.target is None or self.value is None:
            return None
        if self.higher_is_better:
            return self.target / self.value if self.value > 0 else float("inf")
        return self.value / self.target if self.target > 0 else float("inf")

    def verdict(self) -> str:
        m = self.miss()
        if m is None:
            return "" if self.target is None else "not measured"
        if m <= 1:
            return "met"
        if math.isinf(m):
            return "MISSED (never reached)"
        return f"MISSED by {m:.1f}x" if m > MISS_FACTOR else f"missed ({m:.2f}x)"

    def target_text(self) -> str:
        if self.target is None:
            return ""
        return f"{'≥' if self.higher_is_better else '≤'} {with_unit(self.target, self.unit)}"


def with_unit(x: float | None, unit: str) -> str:
    if x is None or math.isinf(x):
        return fmt(x)
    return f"{fmt(x)}{unit}" if unit in ("×", "%") else f"{fmt(x)} {unit}".rstrip()


def fmt(x: float | None) -> str:
    if x is None:
        return "-"
    if math.isinf(x):
        return "never"
    if isinstance(x, int) or float(x).is_integer():
        return f"{int(x):,}"
    return f"{x:.3g}" if abs(x) < 100 else f"{x:,.0f}"


class Report:
    """One benchmark's figures, in the order they were added."""

    def __init__(self, name: str, title: str):
        if not re.fullmatch(r"[a-z0-9_-]+", name):
            raise ValueError(f"a section name is [a-z0-9_-]+, not {name!r}")
        self.name, self.title = name, title
        self.figures: list[Figure] = []
        self.notes: list[str] = []

    def add(self, name: str, value: float | None, unit: str = "", *, target: float | None = None,
            higher_is_better: bool = False) -> Figure:
        fig = Figure(name, value, unit, target, higher_is_better)
        self.figures.append(fig)
        return fig

    def note(self, text: str) -> None:
        """A line printed and written under the table (what was measured, how)."""
        self.notes.append(text)

    def table(self) -> str:
        rows = ["| figure | measured | target | |", "|---|---|---|---|"]
        for f in self.figures:
            rows.append(f"| {f.name} | {with_unit(f.value, f.unit)} | {f.target_text()} | {f.verdict()} |")
        return "\n".join(rows)

    def failed(self) -> list[Figure]:
        """The figures that miss their target by more than MISS_FACTOR."""
        return [f for f in self.figures if (f.miss() or 0) > MISS_FACTOR]

    def section(self, when: datetime.datetime | None = None) -> str:
        when = when or datetime.datetime.now(datetime.UTC)
        lines = [f"## {self.title}", "", self.table(), ""]
        lines += [*self.notes, ""] if self.notes else []
        lines += [f"Measured {when:%Y-%m-%d %H:%M} UTC, {machine()}, with:", "", "```bash", command(), "```"]
        return "\n".join(lines)

    def finish(self, args: argparse.Namespace, *, doc: Path = DOC) -> int:
        """Print the table (and the verdict with --check); with --write-docs rewrite the section. The exit code:
        1 under --check when a target is missed by more than 2x, else 0."""
        print(f"\n{self.title} ({machine()})\n{self.table()}")
        for line in self.notes:
            print(line)
        if getattr(args, "write_docs", False):
            write_section(self.name, self.section(), doc)
            print(f"wrote its section of {doc}")
        if getattr(args, "check", False):
            bad = self.failed()
            print(f"check: {len(bad)} figure(s) missed by more than {MISS_FACTOR:g}x" if bad else
                  f"check: no target missed by more than {MISS_FACTOR:g}x")
            return 1 if bad else 0
        return 0


def markers(name: str) -> tuple[str, str]:
    return f"<!-- bench:{name} start -->", f"<!-- bench:{name} end -->"


def rewrite_section(text: str, name: str, body: str) -> str:
    """`text` with the section `name` (between its start and end markers) replaced by `body`; appended at the end
    when the file has no such section. Everything outside the markers is kept byte for byte. Raises ValueError
    for a section marked twice, or a start without its end."""
    start, end = markers(name)
    block = f"{start}\n{body.strip()}\n{end}"
    n_start, n_end = text.count(start), text.count(end)
    if n_start == 0 and n_end == 0:
        return f"{text.rstrip()}\n\n{block}\n" if text.strip() else f"{block}\n"
    if n_start != 1 or n_end != 1 or text.index(start) > text.index(end):
        raise ValueError(f"docs/benchmarks.md: the section {name!r} must be marked once, {start} before {end}")
    i, j = text.index(start), text.index(end) + len(end)
    return text[:i] + block + text[j:]


def write_section(name: str, body: str, doc: Path = DOC) -> None:
    doc.parent.mkdir(parents=True, exist_ok=True)
    old = doc.read_text(encoding="utf-8") if doc.exists() else ""
    new = rewrite_section(old, name, body)
    tmp = doc.with_suffix(".md.tmp")
    tmp.write_text(new, encoding="utf-8")
    tmp.replace(doc)
