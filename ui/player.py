"""A player that animates a run in the browser: Play, Pause, Step, Reset, speed, timeline.

A view's chart block (sim/views/doc.py) is drawn here: `player(...)` sends its charts (the one chart spec,
sim/player/spec.py, encoded by sim/player/encode.py) once; the browser reveals them up to the current iteration t,
frame by frame, redrawing with `Plotly.react` (`assets/js/player_charts.js`, `player.js`). While playing nothing
is sent to the server. The toy views that compute in the page (Training dynamics, Std scaling, pass@k's sharpening
toy) are drawn by ui/live.py instead; the lesson draws the same declarations with assets/doc.js.

    player(server, b.key, T=b.T, charts=list(b.charts), columns=b.columns, classroom=presenter())   # ui/view.py

Plotly.js is not sent with the page. app.py's server serves it (sim/player/plotly_js.py: a partial bundle) on its
own route (ui/server.py: gzipped once, cached by the browser for a year). A script started without that
server (the test apps) falls back to copying it into the app's `static/` folder, served by Streamlit's static
file serving (`ensure_plotly_js`; `scripts/bench_player.py` measures).

How `st.components.v2` behaves in Streamlit 1.67 (read in its source and checked in Chromium):
  - `data` travels as one JSON string per rerun; the browser parses it and calls the JS module's
    default export again only if the string changed. So a rerun with the same setting costs the
    browser nothing (it still costs the wire: send the same data, do not put timestamps in it).
  - With a stable `key` the element persists across reruns: the default export is called again on
    the same parent element, which is where the player keeps its state (t, playing, Plotly charts).
    Its cleanup runs only when the element unmounts (another page, or the key changes).
  - The JS (inline, about 20 kB) is evaluated once per content hash; it is resent with each rerun.
  - `setStateValue` sends a widget value and reruns the script: the player uses it only when the
    caller asks (`on_t_change`) and only once playing has stopped.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import streamlit as st

from sim.paths import ASSETS
from sim.player import *  # noqa: F403  (the chart declarations and encoding, re-exported for the pages and tests)
from sim.player import build_payload
from sim.player.bundle import module_script
from sim.player.plotly_js import PLOTLY_JS, PLOTLY_JS_NAME

PLAYER_JS = ("player_charts.js", "player.js")
COMPONENT_NAME = "grpo_player"
# one ES module: player.js and what it imports, joined (sim/player/bundle.py); its default export is the component
_JS = module_script(["player.js"], default="player.js")
_CSS = (ASSETS / "js" / "player.css").read_text(encoding="utf-8")
# isolate_styles=False: Plotly puts its own CSS in the document head, which a shadow root would not see.
_COMPONENT = st.components.v2.component(COMPONENT_NAME, css=_CSS, js=_JS, isolate_styles=False)


# ---- Plotly.js: served once from the app's static folder, never from the internet ----
def ensure_plotly_js(app_dir: Path) -> str:
    """Copy Plotly.js (sim/player/plotly_js.py) to app_dir/static/ (once); return its URL path.

    The file name carries the Plotly.js version, so a browser never keeps a stale copy. copy2 keeps
    the file's modification time, which lets the browser cache the file without asking again.
    The copy is not committed (static/ is in .gitignore).
    """
    name, src = PLOTLY_JS_NAME, PLOTLY_JS
    dest = app_dir / "static" / name
    if not dest.exists() or dest.stat().st_size != src.stat().st_size:
        dest.parent.mkdir(exist_ok=True)
        tmp = dest.with_suffix(f".tmp{id(dest)}")
        shutil.copy2(src, tmp)
        tmp.replace(dest)  # atomic: two servers starting together never serve half a file
    return f"app/static/{name}"


def plotly_url(server) -> str | None:
    """Where the browser loads Plotly.js: the server's route, else the static folder (None outside a page)."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    if (url := server.plotly_url()) is not None:
        return url
    base = (st.get_option("server.baseUrlPath") or "").strip("/")
    ctx = get_script_run_ctx()
    if ctx is None or not ctx.main_script_path:
        return None
    rel = ensure_plotly_js(Path(ctx.main_script_path).resolve().parent)
    return f"/{base}/{rel}" if base else f"/{rel}"


def player(server, key: str, *, on_t_change: Callable[[], None] | None = None, row_caption: str = "",
           **options) -> int | None:
    """Draw the player: a bar (Play/Pause, Step, Reset, speed, timeline) above the charts.

    options are build_payload's (sim/player/encode.py): T, charts, columns, speed, classroom, label, meta.
    key: stable per page; keeps the browser's player (its t, playing or not) across reruns, so a
        setting change mid-play keeps the iteration and keeps playing (t clamped to the new T).
    on_t_change: if given, the browser reports t when playing stops (Pause, Step, Reset, end of a
        scrub; never while playing) and this callback runs; the return value is that t (None before).
    meta (an option): keep it the same across reruns of the same setting: any change counts as new data.
    row_caption: the caption the page shows below the charts; it describes those without a caption of their own.
    """
    if server.plotly_url() is None and not st.get_option("server.enableStaticServing"):
        st.error(
            "The player needs Streamlit's static file serving for Plotly.js: set "
            "`enableStaticServing = true` under `[server]` in .streamlit/config.toml and restart."
        )
        return None
    try:
        url = plotly_url(server) or ""
    except OSError as e:  # e.g. the app folder is read-only: say so instead of a traceback
        st.error(f"The player could not put Plotly.js into the app's static/ folder: {e}")
        return None
    payload = build_payload(key, report=on_t_change is not None, plotly_url=url, **options)
    if row_caption:
        payload["row_caption"] = row_caption
    kwargs = {"on_t_change": on_t_change} if on_t_change is not None else {}
    result = _COMPONENT(key=key, data=payload, **kwargs)
    t = getattr(result, "t", None) if on_t_change is not None else None
    return None if t is None else int(t)
