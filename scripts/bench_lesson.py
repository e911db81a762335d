"""What a lesson costs: build time, size on disk and gzipped, and in headless Chromium from file:// the views that
compute in the page: Training dynamics' first chart, a control change redrawn (the engine's part apart) at the
page's default and at 64 seeds x 500 iterations, Play's frame rate; Std scaling's and the sharpening toy's changes.
Prints one JSON object, then the figures beside their targets.

    OMP_NUM_THREADS=1 python scripts/bench_lesson.py                 # builds the default lesson in a temp folder
    OMP_NUM_THREADS=1 python scripts/bench_lesson.py --check         # the same, 2 tries: each target's verdict (CI)
    OMP_NUM_THREADS=1 python scripts/bench_lesson.py --lesson OUT    # measures a lesson built before
    OMP_NUM_THREADS=1 python scripts/bench_lesson.py --views training --tries 1   # only Training dynamics

Targets (issue 26, the default lesson): on disk <= 15 MB, gzipped <= 5 MB, built in <= 60 s; Training dynamics'
first chart drawn <= 1.0 s after opening it from file://; a control change -> every chart redrawn <= 100 ms at
the page's default (16 seeds x 200 iterations), of which the engine <= 25 ms; <= 400 ms at 64 seeds x 500
iterations; Play >= 30 frames/s. A change is timed in the page, from the control's input event to the player's
new data drawn (window.grpoPlayers); the engine's part is its time in the Web Worker (window.grpoLive). --check
exits 1 when a target is missed by more than 2x; --write-docs writes the figures into docs/benchmarks.md.
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

PLAYER = "window.grpoPlayers[{key!r}]"
LIVE = "window.grpoLive[{key!r}]"
# when each phase of the first view ended, in ms since the navigation started: the DOM parsed, Plotly.js run (the
# moment its bundle assigns window.Plotly: read, compiled and executed) and the first draw done
PHASES_INIT = """(() => {
  let P;
  Object.defineProperty(window, "Plotly", {configurable: true, get: () => P,
    set: (v) => { P = v; window.__plotlyRunAt = performance.now(); }});
})();"""
PHASES = """(() => ({
  dom_content_loaded: performance.getEntriesByType("navigation")[0].domContentLoadedEventEnd,
  plotly_run: window.__plotlyRunAt || 0, engine_done: window.grpoLive.training.shownAt,
  first_draw: window.grpoPlayers.training.dataDrawnAt,
}))()"""
# move a slider as a drag does (its input event), at a time taken in the page; returns that time
MOVE = """([key, value]) => { const r = document.getElementById('ls-' + key); r.value = String(value);
  const t = performance.now(); r.dispatchEvent(new Event('input', {bubbles: true})); return t; }"""


def build(out: Path, views: str | None) -> dict:
    from sim.lesson import cli

    cpu0, t0 = resource.getrusage(resource.RUSAGE_SELF).ru_utime, time.perf_counter()
    argv = ["build", str(out), "--quiet"] + (["--views", views] if views else [])
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
            "pages": len(list(out.glob("*.html")))}


def changes(page, key: str, moves: list[tuple[str, object]]) -> tuple[list[float], list[float]]:
    """Each move's time from its input event to every chart redrawn with the new data, and the engine's part (ms)."""
    player, live = PLAYER.format(key=key), LIVE.format(key=key)
    total, engine = [], []
    for control, value in moves:
        before = page.evaluate(f"{player}.dataDrawnAt")
        t0 = page.evaluate(MOVE, [control, value])
        page.wait_for_function(f"{player}.dataDrawnAt > {before}", timeout=60_000)
        total.append(page.evaluate(f"{player}.dataDrawnAt") - t0)
        engine.append(page.evaluate(f"{live}.engineMs.at(-1)"))
    return total, engine


def median(xs: list[float]) -> float:
    return round(statistics.median(xs), 1)


def browser(out: Path, tries: int, views: set[str]) -> dict:
    from playwright.sync_api import sync_playwright

    r: dict = {}
    firsts, phases, fps, default, default_engine, big, big_engine = [], [], [], [], [], [], []
    std, sharpen = [], []
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for _ in range(tries):
            if "training" in views:
                ctx = b.new_context(viewport={"width": 1280, "height": 800})
                p = ctx.new_page()
                p.add_init_script(PHASES_INIT)
                p.goto((out / "training.html").resolve().as_uri())
                p.wait_for_function("window.grpoPlayers && window.grpoPlayers.training && "
                                    "window.grpoPlayers.training.draws > 0", timeout=60_000)
                ph = p.evaluate(PHASES)
                phases.append(ph)
                firsts.append(ph["first_draw"])
                # control changes at the page's default (16 seeds x 200 iterations): G, then the seed
                t, e = changes(p, "training", [("G", g) for g in (9, 10, 11, 12, 13, 14, 8)] +
                               [("seed", s) for s in (1, 2, 3, 4, 5, 0)])
                default += t[1:]  # the first change also warms the JIT
                default_engine += e[1:]
                p.get_by_label("speed in iterations per second").select_option("60")  # the display's rate
                t0 = time.monotonic()
                n0 = p.evaluate("window.grpoPlayers.training.draws")
                p.get_by_role("button", name="Play").click()
                p.wait_for_function("window.grpoPlayers.training.drawn.at(-1) === 200", timeout=60_000)
                fps.append((p.evaluate("window.grpoPlayers.training.draws") - n0) / (time.monotonic() - t0))
                # 64 seeds x 500 iterations
                changes(p, "training", [("seeds", 64), ("T", 500)])
                t, e = changes(p, "training", [("seed", s) for s in (11, 12, 13, 14, 15)])
                big += t
                big_engine += e
                ctx.close()
            for name, key, moves, into in (("std_scaling", "std_scaling", [("G", g) for g in (9, 10, 11, 12, 8)], std),
                                           ("passk", "sharpen", [("sG", g) for g in (9, 10, 11, 12, 8)], sharpen)):
                # (the sharpening toy is a part of pass@k's page, its player keyed "sharpen")
                if name not in views:
                    continue
                ctx = b.new_context(viewport={"width": 1280, "height": 800})
                p = ctx.new_page()
                p.goto((out / f"{name}.html").resolve().as_uri())
                p.wait_for_function(f"window.grpoPlayers && window.grpoPlayers.{key} && "
                                    f"window.grpoPlayers.{key}.draws > 0", timeout=60_000)
                into += changes(p, key, moves)[0][1:]
                ctx.close()
        b.close()
    if firsts:
        r["first_chart_ms"], r["change_ms"], r["change_engine_ms"] = median(firsts), median(default), median(
            default_engine)
        r["change_64x500_ms"], r["change_64x500_engine_ms"] = median(big), median(big_engine)
        r["play_fps_at_60"] = round(statistics.median(fps), 1)
        r["first_view_phases_ms"] = {k: round(statistics.median(ph[k] for ph in phases)) for k in phases[0]}
    if std:
        r["std_change_ms"] = median(std)
    if sharpen:
        r["sharpen_change_ms"] = median(sharpen)
    return r | {"tries": tries}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lesson", help="measure this lesson instead of building one")
    ap.add_argument("--views", help="build only these views (as python -m sim lesson build --views)")
    ap.add_argument("--tries", type=int, default=None, help="fresh browser contexts (default 3; 2 with --check)")
    add_arguments(ap)
    args = ap.parse_args(argv)
    args.tries = args.tries or (2 if args.check else 3)
    result = {"loadavg": round(os.getloadavg()[0], 2)}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.lesson) if args.lesson else Path(tmp) / "lesson"
        if not args.lesson:
            result.update(build(out, args.views))
        result.update(sizes(out))
        views = {p.stem for p in out.glob("*.html")}
        result.update(browser(out, args.tries, views))
    result["loadavg_after"] = round(os.getloadavg()[0], 2)
    print(json.dumps(result))
    default = not (args.lesson or args.views)  # the size targets are the default lesson's
    t = (lambda x: x) if default else (lambda x: None)  # noqa: E731
    what = "the default lesson" if default else ("the lesson " + (args.lesson or args.views))
    report = Report("lesson", "The static lesson (python -m sim lesson build)")
    report.add(f"{what} on disk ({result['pages']} pages)", result["disk_mb"], "MB", target=t(15))
    report.add("the lesson gzipped (tar.gz of the folder)", result["tar_gz_mb"], "MB", target=t(5))
    if "build_s" in result:
        report.add("build, wall clock", result["build_s"], "s", target=t(60))
        report.add("build, CPU", result["build_cpu_s"], "s")
    if "first_chart_ms" in result:
        report.add("Training dynamics: first chart drawn from file:// (median)", result["first_chart_ms"], "ms",
                   target=1000)
        report.add("a control change -> every chart redrawn, 16 seeds x 200 iterations (median)", result["change_ms"],
                   "ms", target=100)
        report.add("... of which the engine (in its Web Worker)", result["change_engine_ms"], "ms", target=25)
        report.add("a control change -> every chart redrawn, 64 seeds x 500 iterations (median)",
                   result["change_64x500_ms"], "ms", target=400)
        report.add("... of which the engine", result["change_64x500_engine_ms"], "ms")
        report.add("Play at 60 iterations/s: frames drawn per second (median)", result["play_fps_at_60"], "fps",
                   target=30, higher_is_better=True)
    if "std_change_ms" in result:
        report.add("Std scaling: G changed -> both charts redrawn (three runs of 16 seeds, median)",
                   result["std_change_ms"], "ms")
    if "sharpen_change_ms" in result:
        report.add("the sharpening toy: G changed -> its charts redrawn (median)", result["sharpen_change_ms"], "ms")
    if "first_view_phases_ms" in result:
        ph = result["first_view_phases_ms"]
        report.note(f"Headless Chromium, {args.tries} fresh browser contexts at 1280x800. Training dynamics' first "
                    f"view (median ms from the navigation): DOM parsed {ph['dom_content_loaded']}, Plotly.js run "
                    f"{ph['plotly_run']}, the engine's run shown {ph['engine_done']}, the first draw done "
                    f"{ph['first_draw']}. A change: G moved 8 -> 14 -> 8, then the seed, one at a time.")
    return report.finish(args)


if __name__ == "__main__":
    sys.exit(main())
