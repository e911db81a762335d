"""What a lesson costs: build time, size on disk and gzipped, first view, Play and a G switch in headless
Chromium from file://. Prints one JSON object, then the figures beside their targets.

    OMP_NUM_THREADS=1 python scripts/bench_lesson.py                 # builds the default lesson in a temp folder
    OMP_NUM_THREADS=1 python scripts/bench_lesson.py --check         # the same, 2 tries: each target's verdict (CI)
    OMP_NUM_THREADS=1 python scripts/bench_lesson.py --lesson OUT    # measures a lesson built before
    OMP_NUM_THREADS=1 python scripts/bench_lesson.py --grid G=8,16 --grid beta=0 --grid scale=group --tries 1

Targets (for the default lesson): on disk <= 15 MB, gzipped <= 5 MB, built in <= 60 s, the first view drawn
from file:// within 2 s, Play at >= 24 frames/s, a G switch redrawn within 0.2 s. --check exits 1 when one is
missed by more than 2x; --write-docs writes the figures into docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import statistics
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts.benchdoc import Report, add_arguments  # noqa: E402
from tests.fixtures.serve import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

STATS = "window.grpoPlayers.training"
# when each phase of the first view ended, in ms since the navigation started: the DOM parsed, Plotly.js run (the
# moment its bundle assigns window.Plotly: read, compiled and executed) and the first draw done. (file:// gives
# no resource timings, so the moment Plotly.js starts is not known; the data file and the scripts before it are
# done by then, about 0.2 s in.)
PHASES_INIT = """(() => {
  let P;
  Object.defineProperty(window, "Plotly", {configurable: true, get: () => P,
    set: (v) => { P = v; window.__plotlyRunAt = performance.now(); }});
})();"""
PHASES = """(() => ({
  dom_content_loaded: performance.getEntriesByType("navigation")[0].domContentLoadedEventEnd,
  plotly_run: window.__plotlyRunAt || 0, first_draw: STATS.dataDrawnAt,
}))()"""


def build(out: Path, grid: list[str]) -> dict:
    from sim.lesson import cli

    cpu0, t0 = resource.getrusage(resource.RUSAGE_SELF).ru_utime, time.perf_counter()
    argv = ["build", str(out), "--quiet"] + [a for g in grid for a in ("--grid", g)]
    with contextlib.redirect_stdout(sys.stderr):  # stdout is the one JSON object
        code = cli.main(argv)
    if code != 0:
        raise SystemExit("the build failed")
    cpu = resource.getrusage(resource.RUSAGE_SELF).ru_utime - cpu0
    return {"build_s": round(time.perf_counter() - t0, 1), "build_cpu_s": round(cpu, 1)}


def sizes(out: Path) -> dict:
    disk = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(out, arcname="lesson")
    return {"disk_mb": round(disk / 1e6, 2), "tar_gz_mb": round(len(buf.getvalue()) / 1e6, 2),
            "settings": sum(f.read_text(encoding="utf-8").count('id="ls-data-') for f in out.glob("*.html"))}


def browser(out: Path, tries: int) -> dict:
    from playwright.sync_api import sync_playwright

    url = (out / "training.html").resolve().as_uri()
    firsts, fps, switches, phases = [], [], [], []
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for _ in range(tries):
            ctx = b.new_context(viewport={"width": 1280, "height": 800})
            p = ctx.new_page()
            p.add_init_script(PHASES_INIT)
            t0 = time.monotonic()
            p.goto(url)
            p.wait_for_function(f"{STATS} && {STATS}.draws > 0", timeout=60_000)
            firsts.append(time.monotonic() - t0)
            phases.append(p.evaluate(PHASES.replace("STATS", STATS)))
            p.get_by_label("speed in iterations per second").select_option("60")  # the display's rate: every frame
            t0 = time.monotonic()
            p.get_by_role("button", name="Play").click()
            p.wait_for_function(f"{STATS}.drawn.at(-1) === 200", timeout=60_000)
            drawn = p.evaluate(f"{STATS}.drawn")
            fps.append((len(drawn) - 1) / (time.monotonic() - t0))
            assert drawn[-200:] == list(range(1, 201)), "every iteration drawn"
            g = p.get_by_label("Group size G")
            for i in range(2):
                before = p.evaluate(f"{STATS}.dataDrawnAt")
                t0 = p.evaluate("performance.now()")
                (g.select_option(index=i % 2) if g.evaluate("e => e.tagName") == "SELECT" else g.fill(str(i % 2)))
                p.wait_for_function(f"{STATS}.dataDrawnAt > {before}", timeout=30_000)
                switches.append(p.evaluate(f"{STATS}.dataDrawnAt") - t0)
            ctx.close()
        b.close()
    return {"first_view_s": round(statistics.median(firsts), 2), "play_fps_at_60": round(statistics.median(fps), 1),
            "switch_ms": round(statistics.median(switches)), "tries": tries,
            "first_view_phases_ms": {k: round(statistics.median(ph[k] for ph in phases)) for k in phases[0]}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lesson", help="measure this lesson instead of building one")
    ap.add_argument("--grid", action="append", default=[], help="passed to the build")
    ap.add_argument("--tries", type=int, default=None, help="fresh browser contexts (default 3; 2 with --check)")
    add_arguments(ap)
    args = ap.parse_args(argv)
    args.tries = args.tries or (2 if args.check else 3)
    result = {"loadavg": round(os.getloadavg()[0], 2)}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.lesson) if args.lesson else Path(tmp) / "lesson"
        if not args.lesson:
            result.update(build(out, args.grid))
        result.update(sizes(out))
        result.update(browser(out, args.tries))
    result["loadavg_after"] = round(os.getloadavg()[0], 2)
    print(json.dumps(result))
    default = not (args.lesson or args.grid)  # the targets are the default lesson's
    t = (lambda x: x) if default else (lambda x: None)  # noqa: E731
    what = "the default lesson" if default else ("the lesson " + (args.lesson or " ".join(args.grid)))
    report = Report("lesson", "The static lesson (python -m sim lesson build)")
    report.add(f"{what} on disk ({result['data_files']} data files)", result["disk_mb"], "MB", target=t(15))
    report.add("the lesson gzipped (tar.gz of the folder)", result["tar_gz_mb"], "MB", target=t(5))
    if "build_s" in result:
        report.add("build, wall clock", result["build_s"], "s", target=t(60))
        report.add("build, CPU", result["build_cpu_s"], "s")
    report.add("first view drawn from file:// (median)", result["first_view_s"], "s", target=t(2))
    report.add("Play at 60 iterations/s: frames drawn per second (median)", result["play_fps_at_60"], "fps",
               target=t(24), higher_is_better=True)
    report.add("G switched: charts redrawn (median)", result["switch_ms"], "ms", target=t(200))
    phases = result["first_view_phases_ms"]
    report.note(f"Headless Chromium, {args.tries} fresh browser contexts at 1280x800, Training dynamics. Where the "
                f"first view's time goes (median ms from the navigation): DOM parsed {phases['dom_content_loaded']}, "
                f"Plotly.js run {phases['plotly_run']}, the player's first draw {phases['first_draw']}.")
    return report.finish(args)


if __name__ == "__main__":
    sys.exit(main())
