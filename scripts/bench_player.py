"""What the browser player (assets/js/player.js, drawn by the app's one renderer, ui/view.py) costs to load, play
and update: prints one JSON object, then the figures beside their targets.

    OMP_NUM_THREADS=1 python scripts/bench_player.py [--quick]
    OMP_NUM_THREADS=1 python scripts/bench_player.py --check     # the full payload, 4 control moves (CI)

- payload: bytes of the data one setting of a document the server computes sends (ui/view.py show_doc: TinyLM's
  runs, a visitor's log) at T = 500 iterations, 64 seeds (the Training page's five charts plus a pinned overlay
  line), as sent (float32, base64) and as the alternatives would be (JSON numbers rounded to 4 significant digits;
  full-precision JSON; a copy of the history per frame). A view the browser computes sends no data at all.
- plotly_js: how Plotly.js reaches the browser, on tests/apps/player_app.py: served by the server's own route
  (ui/server.py, gzipped once, cacheable for a year), bytes on the wire for the first page, whether a reload fetches
  it again, and the server's time to answer it.
- component: bytes of the renderer component's own JS and CSS, which Streamlit resends with every script run
  (inline, small), and of the bundle it loads once from the server's route.
- training: the app itself (`streamlit run app.py`) in headless Chromium, Training dynamics at its defaults
  (200 iterations, 16 seeds): Play at 60 iterations/s from 0 to 200, frames drawn per second of wall clock and
  the page's main-thread CPU per frame; then the G slider moved one step at a time by the keyboard (G = 9, 10, ...),
  the time from the key press to the new setting's charts drawn (median, the first move left out: it also warms
  caches), computed in the page (the websocket frames sent meanwhile are counted: 0 expected).

Targets: Play >= 24 frames/s, a slider move redrawn within 0.4 s, one setting's data at T = 500, 64 seeds
<= 1 MB. --check exits 1 when one is missed by more than 2x; --write-docs writes the figures into
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from scripts.benchdoc import Report, add_arguments  # noqa: E402
from sim.paths import JS  # noqa: E402
from sim.player.bundle import app_bundle  # noqa: E402
from sim.player.plotly_js import PLOTLY_JS  # noqa: E402
from tests.fixtures.serve import IDLE, launch_chromium, start_server  # noqa: E402
from tests.fixtures.viewpage import shown  # noqa: E402

# what the renderer component (ui/view.py) sends inline with every script run, and the bundle it loads once
COMPONENT_FILES = ("view_component.js", "player.css", "doc.css")


def payload_sizes(T: int = 500, seeds: int = 64) -> dict:
    from sim.player import build_payload, decode_array, payload_bytes
    from tests.test_player import toy_charts

    charts, _ = toy_charts(T, seeds)
    pay = build_payload("k", T=T, charts=charts)
    sent = payload_bytes(pay)
    arrays = [decode_array(a) for a in pay["arrays"]]
    as_json = dict(pay, arrays=[a.tolist() for a in arrays])
    rounded = dict(pay, arrays=[[float(f"{v:.4g}") for v in a.ravel()] for a in arrays])
    # history per frame: frame t carries every revealed series up to t (about T/2 points on average)
    per_frame = sum(a.size * 4 / 3 * 4 for a in arrays if a.ndim == 1) * (T + 1) / 2
    per_frame += sum(a[0].size * 4 / 3 * 4 for a in arrays if a.ndim == 2) * (T + 1)
    return {
        "T": T, "seeds": seeds, "sent_float32_base64": sent, "json_4_significant_digits": payload_bytes(rounded),
        "json_full_precision": payload_bytes(as_json), "history_per_frame_float32_estimate": int(per_frame),
        "arrays": len(arrays), "floats": int(sum(a.size for a in arrays if a.dtype == np.float32)),
    }  # fmt: skip


def plotly_js(fetches: int = 5) -> dict:
    from playwright.sync_api import sync_playwright

    server = start_server(script="tests/apps/player_app.py")
    out: dict = {}
    try:
        base = server.url
        with sync_playwright() as pw:
            b = launch_chromium(pw)
            page = b.new_context().new_page()
            page.set_default_timeout(90_000)  # a busy shared machine
            cdp = page.context.new_cdp_session(page)
            cdp.send("Network.enable")
            seen: dict[str, dict] = {}
            cdp.on("Network.responseReceived", lambda e: seen.setdefault(e["requestId"], {}).update(
                url=e["response"]["url"], status=e["response"]["status"],
                encoding=e["response"]["headers"].get("content-encoding")))
            cdp.on("Network.loadingFinished", lambda e: seen.setdefault(e["requestId"], {}).update(
                wire=e["encodedDataLength"]))  # fmt: skip
            cdp.on("Network.requestServedFromCache", lambda e: seen.setdefault(e["requestId"], {}).update(cached=True))
            for visit in ("first_page", "reload"):
                seen.clear()
                t0 = time.perf_counter()
                page.goto(base) if visit == "first_page" else page.reload()
                page.wait_for_function("window.grpoPlayers?.toy?.draws > 0")
                js = [v for v in seen.values() if "plotly-" in v.get("url", "")]
                for v in js:
                    v["from_cache"] = bool(v.pop("cached", False)) or v.get("wire") == 0
                out[visit] = {"charts_drawn_s": round(time.perf_counter() - t0, 2), "plotly_requests": js}
            b.close()
        url = next(v["url"] for v in out["first_page"]["plotly_requests"])
        times = []
        for _ in range(fetches):  # the server's cost of one uncached fetch, gzip accepted as a browser does
            req = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"})
            t0 = time.perf_counter()
            with urllib.request.urlopen(req) as r:
                body = r.read()
                enc = r.headers.get("Content-Encoding")
            times.append(time.perf_counter() - t0)
        out["fetch"] = {"ms_median": round(1000 * statistics.median(times)), "bytes": len(body),
                        "content_encoding": enc}
    finally:
        server.stop()
    return out


TRAINING = "window.grpoPlayers.training"


def training(moves: int = 6) -> dict:
    """Play's frame rate and the G slider's latency on the app's Training page (see the module docstring)."""
    from playwright.sync_api import sync_playwright

    server = start_server()
    try:
        with sync_playwright() as pw:
            b = launch_chromium(pw)
            page = b.new_context(viewport={"width": 1400, "height": 1000}).new_page()
            page.set_default_timeout(90_000)
            sent: list[float] = []
            page.on("websocket", lambda ws: ws.on("framesent", lambda _: sent.append(time.perf_counter())))
            page.goto(f"{server.url}/training")
            page.wait_for_selector(IDLE)
            shown(page, timeout=90_000)
            cdp = page.context.new_cdp_session(page)
            cdp.send("Performance.enable")
            thread_s = lambda: next(m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]  # noqa: E731
                                    if m["name"] == "ThreadTime")
            page.locator(".gp-speed").select_option("60")
            before, cpu0, t0 = page.evaluate(f"({TRAINING}).draws"), thread_s(), time.perf_counter()
            page.locator(".gp-primary").click()
            page.wait_for_function(f"{TRAINING}.drawn.at(-1) === 200 && "
                                   "document.querySelector('.gp-root').dataset.playing === '0'", polling=10)
            wall, cpu = time.perf_counter() - t0, thread_s() - cpu0
            frames = page.evaluate(f"({TRAINING}).draws") - before
            slider = page.locator("#ls-G")
            latencies = []
            moved = time.perf_counter()
            for g in range(9, 9 + moves):
                shown(page, timeout=90_000)
                slider.focus()
                t_press = page.evaluate("performance.now()")
                page.keyboard.press("ArrowRight")
                page.locator(".gp-title", has_text=f"Groups with zero gradient (G = {g})").wait_for()
                page.wait_for_function(f"{TRAINING}.dataDrawnAt > {t_press}", polling=10)
                latencies.append(page.evaluate(f"{TRAINING}.dataDrawnAt") - t_press)
            frames_sent = len([t for t in sent if t >= moved])
            b.close()
    finally:
        server.stop()
    rows = latencies[1:] if len(latencies) > 1 else latencies
    return {"play_frames": frames, "play_fps": round(frames / wall, 1),
            "play_main_thread_ms_per_frame": round(1000 * cpu / frames, 1),
            "slider_redraw_ms": [round(x) for x in latencies],
            "slider_redraw_ms_median": round(statistics.median(rows)), "slider_frames_sent": frames_sent}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a small payload (T = 50, 4 seeds), one fetch, two slider "
                   "moves: a smoke run")
    add_arguments(p)
    args = p.parse_args(argv)
    quick = args.quick
    load = os.getloadavg()[0]
    result = {
        "payload": payload_sizes(50, 4) if quick else payload_sizes(),
        "component_inline_bytes": {f: (JS / f).stat().st_size for f in COMPONENT_FILES},
        "bundle_bytes": len(app_bundle()[1]),
        "plotly_min_js_bytes": PLOTLY_JS.stat().st_size,
        "plotly_js": plotly_js(1 if quick or args.check else 5),
        "training": training(2 if quick else 5 if args.check else 8),
        "loadavg": [round(load, 2), round(os.getloadavg()[0], 2)],
    }
    print(json.dumps(result))
    tr, pay = result["training"], result["payload"]
    report = Report("player", "The browser player (Training dynamics in the app)")
    report.add("Play at 60 iterations/s, 200 iterations: frames drawn per second", tr["play_fps"], "fps", target=24,
               higher_is_better=True)
    report.add("Play: the page's main-thread CPU per frame", tr["play_main_thread_ms_per_frame"], "ms")
    report.add("G slider moved: the new setting's charts drawn (median)", tr["slider_redraw_ms_median"], "ms",
               target=400)
    report.add("G slider moved: websocket frames sent to the server", tr["slider_frames_sent"])
    report.add(f"one setting's data at T = {pay['T']}, {pay['seeds']} seeds", round(pay["sent_float32_base64"] / 1e3),
               "kB", target=1000 if pay["T"] == 500 else None)
    report.add("Plotly.js on the wire, first page", round(sum(r.get("wire", 0) for r in
               result["plotly_js"]["first_page"]["plotly_requests"]) / 1e3), "kB")
    report.note("`streamlit run app.py` and headless Chromium on this machine; the slider's median leaves out the "
                "first move (it also warms caches and the JIT). The data per setting is a document the server "
                "computes (show_doc); Training dynamics itself is computed in the page and sends none.")
    return report.finish(args)


if __name__ == "__main__":
    sys.exit(main())
