"""What the browser player (ui/player.py) costs to load and to update: prints one JSON object.

    OMP_NUM_THREADS=1 python scripts/bench_player.py [--quick]

- payload: bytes of the data one setting sends at T = 500 iterations, 64 seeds (the Training page's
  five charts plus a pinned overlay line), as sent (float32, base64) and as the alternatives would be
  (JSON numbers rounded to 4 significant digits; full-precision JSON; a copy of the history per frame).
- plotly_js: how Plotly.js reaches the browser. Served from the app's static/ folder by Streamlit
  (`server.enableStaticServing`): bytes on the wire for the first page, whether a reload fetches it
  again, and the server's time to answer it. Sending it inside the component instead (its `js`) would
  put its size into every rerun's message; a v2 `asset_dir` needs the app installed as a package.
- component: bytes of the player's own JS and CSS, which travel with each rerun (inline, small).
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

from sim.player.plotly_js import PLOTLY_JS  # noqa: E402
from tests.fixtures.serve import launch_chromium, start_server  # noqa: E402
from ui.player import PLAYER_JS  # noqa: E402


def payload_sizes(T: int = 500, seeds: int = 64) -> dict:
    from tests.test_player import toy_charts
    from ui.player import build_payload, decode_array, payload_bytes

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


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a small payload (T = 50, 4 seeds) and one fetch: a smoke run")
    quick = p.parse_args(argv).quick
    assets = ROOT / "assets"
    load = os.getloadavg()[0]
    result = {
        "payload": payload_sizes(50, 4) if quick else payload_sizes(),
        "component_inline_bytes": {
            f: (assets / f).stat().st_size for f in (*PLAYER_JS, "player.css")
        },
        "plotly_min_js_bytes": PLOTLY_JS.stat().st_size,
        "plotly_js": plotly_js(1 if quick else 5),
        "loadavg": [round(load, 2), round(os.getloadavg()[0], 2)],
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
