"""Benchmark of assets/js/engine.js, the browser engine: its time in node and in Chromium for one new setting.

    python scripts/bench_engine.py            # 15 runs per case, node and Chromium
    python scripts/bench_engine.py --check    # each figure beside its target; exit 1 beyond 2x
    python scripts/bench_engine.py --tiny     # one short run of each (the suite's check that it runs)

A new setting on Training dynamics costs the page runToy (the seeds' band) and expectedRun (the dashed line):
both are timed, at the page's default (ToyConfig(n_seeds=16, lr_w=0.2): 16 seeds x 200 iterations, G = 8) and
at 64 seeds x 500 iterations. Each case is run twice first (the JIT's warm-up), then timed `--repeats` times;
medians (and the minimum) are printed, with the load average before and after. Chromium is /usr/bin/chromium
through Playwright, the engine loaded from file:// as the lesson will load it (sim.engine_js.classic_script).
Targets (issue 26, in Chromium): the engine <= 25 ms at the page default and <= 400 ms at 64 x 500 (the whole
redraw, engine and charts, <= 100 ms is the page's to meet).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts.benchdoc import Report, add_arguments  # noqa: E402
from sim.engine_js import ENGINE, classic_script  # noqa: E402

CASES = {"page default (16 seeds x 200)": {"n_seeds": 16, "lr_w": 0.2},
         "64 seeds x 500": {"n_seeds": 64, "iterations": 500, "lr_w": 0.2}}
TINY = {"page default (16 seeds x 200)": {"n_seeds": 2, "iterations": 20}}
TARGETS_MS = {"page default (16 seeds x 200)": 25.0, "64 seeds x 500": 400.0}  # runToy + expectedRun, Chromium

# (engine, cases, repeats) -> {case: {run: [ms], exp: [ms], both: [ms]}}, in node and in the page alike
MEASURE = """(engine, cases, repeats) => {
  const out = {};
  for (const [name, cfg] of Object.entries(cases)) {
    for (let i = 0; i < 2; i++) { engine.runToy(cfg); engine.expectedRun(cfg); }
    const run = [], exp = [], both = [];
    for (let i = 0; i < repeats; i++) {
      const t0 = performance.now();
      engine.runToy(cfg);
      const t1 = performance.now();
      engine.expectedRun(cfg);
      const t2 = performance.now();
      run.push(t1 - t0); exp.push(t2 - t1); both.push(t2 - t0);
    }
    out[name] = { run, exp, both };
  }
  return out;
}"""


def in_node(cases: dict, repeats: int) -> dict:
    code = (f"import * as engine from {json.dumps(ENGINE.as_uri())};\n"
            f"const measure = {MEASURE};\n"
            f"console.log(JSON.stringify(measure(engine, {json.dumps(cases)}, {repeats})));")
    done = subprocess.run(["node", "--input-type=module", "-e", code], capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"node failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout)


def in_chromium(cases: dict, repeats: int) -> dict:
    from playwright.sync_api import sync_playwright

    from tests.fixtures.serve import launch_chromium

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        (Path(tmp) / "engine.js").write_text(classic_script(), encoding="utf-8")
        page_file = Path(tmp) / "index.html"
        page_file.write_text('<!doctype html><meta charset="utf-8"><script src="engine.js"></script>', encoding="utf-8")
        browser = launch_chromium(pw)
        try:
            page = browser.new_page()
            page.goto(page_file.as_uri())
            return page.evaluate(f"([cases, repeats]) => ({MEASURE})(window.grpoEngine, cases, repeats)",
                                 [cases, repeats])
        finally:
            browser.close()


def medians(times: dict) -> dict:
    """{case: {"run", "exp", "both": median ms}} from the timed runs of each case."""
    return {name: {k: statistics.median(v) for k, v in t.items()} for name, t in times.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15, help="timed runs per case (after two warm-up runs)")
    parser.add_argument("--tiny", action="store_true", help="one small case, 2 runs (checks that the script runs)")
    parser.add_argument("--no-browser", action="store_true", help="node only")
    add_arguments(parser)
    args = parser.parse_args(argv)
    if args.repeats < 1:
        print("error: --repeats must be at least 1", file=sys.stderr)
        return 2
    cases, repeats = (TINY, 2) if args.tiny else (CASES, args.repeats)
    report = Report("engine", "The browser's toy engine (assets/js/engine.js)")
    hosts = {"node": in_node(cases, repeats)}
    if not args.no_browser:
        hosts["Chromium"] = in_chromium(cases, repeats)
    for host, times in hosts.items():
        for name, med in medians(times).items():
            target = TARGETS_MS.get(name) if host == "Chromium" else None
            report.add(f"{host}: runToy + expectedRun, {name} (median)", round(med["both"], 1), "ms", target=target)
            report.add(f"{host}: of which runToy, {name}", round(med["run"], 1), "ms")
    report.note(f"One new setting each time: runToy and expectedRun of the case's config, median of {repeats} timed "
                "runs after two warm-up runs; the targets are Chromium's.")
    return report.finish(args)


if __name__ == "__main__":
    sys.exit(main())
