"""First chart on a cold start: a fresh server and a fresh Chromium, one link opened.

    OMP_NUM_THREADS=1 python scripts/bench_cold_start.py --runs 5

Each run starts `streamlit run app.py` as the README does (tests/fixtures/serve.py; ready once its health
endpoint answers, which is after the warm-up), launches a fresh headless Chromium (empty cache), opens
`/training?classroom=1` and waits until the browser's player has drawn its charts. Measured from the
browser's navigation start: the page's HTML, the script run's end (Streamlit's last "notRunning" mark), the
player's data reaching the browser, Plotly.js requested and received (from the server's own route), the first
draw; and whether st.code's 1.5 MB syntax highlighter was loaded (highlighter_kb).
Prints one JSON object: each run, the median of the first-chart times, the server's start (to healthy)
and the load average. Exit 1 if a run fails.
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

from tests.fixtures.serve import launch_chromium, start_server  # noqa: E402

PATH = "/training?classroom=1"
DRAWN = "window.grpoPlayers && window.grpoPlayers.training && window.grpoPlayers.training.draws > 0"
TIMING = """() => {
  const res = performance.getEntriesByType("resource");
  const plotly = res.find(r => r.name.includes("/plotly-"));
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
    p.add_argument("--runs", type=int, default=5, choices=range(1, 51), metavar="N", help="cold starts (default 5)")
    opts = p.parse_args(argv)
    load = os.getloadavg()[0]
    try:
        runs = [cold_start() for _ in range(opts.runs)]
    except Exception as e:  # a server that does not start, a page that never draws: one line, exit 1
        print(f"error: cold start failed: {type(e).__name__}: {str(e)[:300]}", file=sys.stderr)
        return 1
    print(json.dumps({
        "path": PATH, "runs": runs, "first_chart_s_median": statistics.median(r["first_chart_s"] for r in runs),
        "load_avg_before": round(load, 2), "load_avg_after": round(os.getloadavg()[0], 2),
    }))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
