"""First chart on a cold start: a fresh server and a fresh Chromium, one link opened.

    OMP_NUM_THREADS=1 python scripts/bench_cold_start.py --runs 5
    OMP_NUM_THREADS=1 python scripts/bench_cold_start.py --check     # 3 cold starts, the target's verdict (CI)

Each run starts `streamlit run app.py` as the README does (tests/fixtures/serve.py; ready once its health
endpoint answers, which is after the warm-up), launches a fresh headless Chromium (empty cache), opens
`/training?classroom=1` and waits until the page has drawn its charts: the app's one renderer (ui/view.py) loads its
bundle, runs the engine in a Web Worker and plays the run (window.grpoPlayers.training). Measured from the browser's
navigation start: the page's HTML, the script run's end (Streamlit's last "notRunning" mark), the renderer's bundle,
KaTeX and Plotly.js received (each from the server's own route), the engine's run handed to the player, the first
draw; and whether st.code's 1.5 MB syntax highlighter was loaded (highlighter_kb).
Prints one JSON object: each run, the median of the first-chart times, the server's start (to healthy)
and the load average; then the figures beside the target (the first chart within 3 s). Exit 1 if a run fails,
or under --check if the target is missed by more than 2x; --write-docs writes the figures into
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts.benchdoc import Report, add_arguments  # noqa: E402
from tests.fixtures.serve import launch_chromium, start_server  # noqa: E402

PATH = "/training?classroom=1"
DRAWN = "window.grpoPlayers && window.grpoPlayers.training && window.grpoPlayers.training.draws > 0"
TIMING = """() => {
  const res = performance.getEntriesByType("resource");
  const plotly = res.find(r => r.name.includes("/plotly-"));
  const bundle = res.find(r => r.name.includes("/grpo-app-"));  // the renderer's bundle (ui/view.py)
  const katex = res.find(r => r.name.includes("/katex-") && r.name.endsWith(".js"));
  const code = res.find(r => r.name.includes("StreamlitSyntaxHighlighter"));
  const nav = performance.getEntriesByType("navigation")[0];
  const done = performance.getEntriesByName("notRunning", "mark");  // Streamlit marks its script-run states
  const stats = window.grpoPlayers.training;
  return {first_chart_s: performance.now() / 1000, html_s: nav ? nav.responseEnd / 1000 : null,
          script_done_s: done.length ? done[done.length - 1].startTime / 1000 : null,
          player_data_s: stats.dataArrivedAt / 1000,
          plotly_js_start_s: plotly ? plotly.startTime / 1000 : null,
          plotly_js_s: plotly ? plotly.responseEnd / 1000 : null,
          plotly_js_kb: plotly ? Math.round(plotly.transferSize / 1024) : null,
          bundle_js_s: bundle ? bundle.responseEnd / 1000 : null,
          bundle_js_kb: bundle ? Math.round(bundle.transferSize / 1024) : null,
          katex_js_s: katex ? katex.responseEnd / 1000 : null,
          highlighter_kb: code ? Math.round(code.transferSize / 1024) : 0};
}"""


def cold_start(timeout_s: float = 60.0) -> dict:
    """One cold start: seconds from the link to the first chart (and its parts), the server's start time."""
    from playwright.sync_api import sync_playwright

    t0 = time.perf_counter()
    server = start_server()
    started = time.perf_counter() - t0
    try:
        with sync_playwright() as pw:
            browser = launch_chromium(pw)
            try:
                page = browser.new_context(viewport={"width": 1920, "height": 1080}).new_page()
                t1 = time.perf_counter()
                page.goto(server.url + PATH)
                page.wait_for_function(DRAWN, timeout=timeout_s * 1000, polling=20)
                wall = time.perf_counter() - t1
                timing = page.evaluate(TIMING)
                nav = page.get_by_test_id("stSidebarNavLink").first.text_content() or ""
                timing["app_navigation"] = nav.endswith("Home")  # app.py's st.navigation, not pages/ alone
            finally:
                browser.close()
    finally:
        server.stop()
    return {"wall_s": round(wall, 2)} | {k: round(v, 2) if isinstance(v, float) else v for k, v in timing.items()} \
        | {"server_start_s": round(started, 1)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=None, choices=range(1, 51), metavar="N",
                   help="cold starts (default 5; 3 with --check)")
    add_arguments(p)
    opts = p.parse_args(argv)
    opts.runs = opts.runs or (3 if opts.check else 5)
    load = os.getloadavg()[0]
    try:
        runs = [cold_start() for _ in range(opts.runs)]
    except Exception as e:  # a server that does not start, a page that never draws: one line, exit 1
        print(f"error: cold start failed: {type(e).__name__}: {str(e)[:300]}", file=sys.stderr)
        return 1
    first = statistics.median(r["first_chart_s"] for r in runs)
    print(json.dumps({
        "path": PATH, "runs": runs, "first_chart_s_median": first,
        "load_avg_before": round(load, 2), "load_avg_after": round(os.getloadavg()[0], 2),
    }))  # fmt: skip
    report = Report("cold-start", "Cold start (the first chart of a fresh server in a fresh Chromium)")
    report.add(f"{PATH}: first chart drawn, from the navigation (median)", round(first, 2), "s", target=3)
    report.add("the page's script run finished, from the navigation (median)", med(runs, "script_done_s"), "s")
    report.add("the renderer's bundle received, from the navigation (median)", med(runs, "bundle_js_s"), "s")
    report.add("the engine's run handed to the player, from the navigation (median)", med(runs, "player_data_s"), "s")
    report.add("Plotly.js received, from the navigation (median)", med(runs, "plotly_js_s"), "s")
    report.add("the server's start, to a healthy /_stcore/health (median)", med(runs, "server_start_s"), "s")
    report.note(f"{opts.runs} cold starts: each a fresh `streamlit run app.py` (started as docs/serving.md starts "
                "it, ready after its warm-up) and a fresh headless Chromium at 1920x1080.")
    return report.finish(opts)


def med(runs: list[dict], key: str) -> float | None:
    values = [r[key] for r in runs if r.get(key) is not None]
    return round(statistics.median(values), 2) if values else None


if __name__ == "__main__":
    sys.exit(main())
