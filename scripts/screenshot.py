"""The README's picture: Training dynamics in the real app, played to its last iteration, as headless Chromium shows
it at 1280x800.

    OMP_NUM_THREADS=1 python scripts/screenshot.py                      # writes assets/img/screenshot-training.png
    OMP_NUM_THREADS=1 python scripts/screenshot.py --out /tmp/shot.png

Starts `streamlit run app.py` on a free loopback port (tests/fixtures/serve.py, as the docs start it), opens
/training at the page's defaults, waits for the page to draw its setting (the renderer's settings beside the
document, tests/fixtures/viewpage.py), plays the run to its end (60 iterations/s, every chart drawn), then writes
the visible page as a PNG. Exit 1 if the server or the page fails.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fixtures.serve import IDLE, launch_chromium, start_server  # noqa: E402
from tests.fixtures.viewpage import shown  # noqa: E402

OUT = ROOT / "assets" / "img" / "screenshot-training.png"
WIDTH, HEIGHT = 1280, 800


def screenshot(out: Path) -> None:
    from playwright.sync_api import sync_playwright

    server = start_server()
    try:
        with sync_playwright() as pw:
            browser = launch_chromium(pw)
            try:
                page = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT}).new_page()
                page.set_default_timeout(90_000)
                page.goto(f"{server.url}/training")
                page.wait_for_selector(IDLE)
                shown(page, timeout=90_000)
                page.locator(".gp-speed").select_option("60")
                page.locator(".gp-primary").click()
                playing = "document.querySelector('.gp-root').dataset.playing"
                page.wait_for_function(f"{playing} === '1'")
                page.wait_for_function(f"{playing} === '0'")  # the run's end: Play stops there
                page.mouse.move(0, HEIGHT - 1)  # no hover box on a chart
                page.wait_for_timeout(500)  # the last frame's transitions
                out.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(out))
            finally:
                browser.close()
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=OUT, help=f"the PNG to write (default {OUT.relative_to(ROOT)})")
    args = p.parse_args(argv)
    try:
        screenshot(args.out)
    except Exception as e:  # a server that does not start, a page that never draws: one line
        print(f"error: no screenshot: {type(e).__name__}: {str(e)[:300]}", file=sys.stderr)
        return 1
    print(f"wrote {args.out} ({WIDTH}x{HEIGHT})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
