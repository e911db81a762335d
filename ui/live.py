"""A view computed in the browser: the page sends a validated config, the browser runs the toy engine, draws and
plays (Training dynamics, Std scaling, pass@k's toys).

    config = build_config(ToyConfig, CONTROLS, values)          # validated here, by sim/settings.py
    live_view(server, "training", {"view": "training", "config": dataclasses.asdict(config), ...})

The browser receives the config and nothing computed: `assets/js/live_app.js` (the app's bundle: the engine
`assets/js/engine.js`, the views' JavaScript `assets/js/toy_views.js`, the player) runs the runs in a Web Worker,
writes the captions and draws the charts. A new setting costs the server a script run and no numpy, and
sim/views stays the reference the JavaScript is proved equal to (tests/test_js_views.py).

The component's own code is a small loader (`assets/js/live_component.js`, resent with every rerun as any
st.components.v2 code is); the bundle itself is one file the browser loads once and keeps: app.py's server
serves it on its own route (`bundle_path`, gzipped, cached for a year: its name carries its hash), and a script
started without that server (a test app) gets it from Streamlit's static folder, as the player does Plotly.js.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import streamlit as st

from sim.paths import ASSETS
from sim.player.bundle import classic_script
from ui.player import plotly_url

COMPONENT_NAME = "grpo_live"
BUNDLE = classic_script(["live_app.js"], 'window.grpoLiveApp = __m["live_app.js"];').encode("utf-8")
BUNDLE_NAME = f"grpo-live-{hashlib.sha256(BUNDLE).hexdigest()[:12]}.js"
_CSS = (ASSETS / "js" / "player.css").read_text(encoding="utf-8")
_COMPONENT = st.components.v2.component(COMPONENT_NAME, css=_CSS, js=(ASSETS / "js" / "live_component.js").read_text(
    encoding="utf-8"), isolate_styles=False)


def ensure_bundle(app_dir: Path) -> str:
    """Write the bundle into app_dir/static/ (once; the name carries its hash); return its URL path."""
    dest = app_dir / "static" / BUNDLE_NAME
    if not dest.exists():
        dest.parent.mkdir(exist_ok=True)
        tmp = dest.with_suffix(f".tmp{id(dest)}")
        tmp.write_bytes(BUNDLE)
        tmp.replace(dest)  # atomic: two servers starting together never serve half a file
        for old in dest.parent.glob("grpo-live-*.js"):  # an older bundle of this checkout
            if old != dest:
                old.unlink(missing_ok=True)
    return f"app/static/{BUNDLE_NAME}"


def bundle_url(server) -> str | None:
    """Where the browser loads the bundle: the server's route, else the static folder (None outside a page)."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    if (url := server.route_url(BUNDLE_NAME)) is not None:
        return url
    base = (st.get_option("server.baseUrlPath") or "").strip("/")
    ctx = get_script_run_ctx()
    if ctx is None or not ctx.main_script_path:
        return None
    rel = ensure_bundle(Path(ctx.main_script_path).resolve().parent)
    return f"/{base}/{rel}" if base else f"/{rel}"


def live_view(server, key: str, request: dict) -> None:
    """Draw a view the browser computes. request: {"view": "training" | "std" | "sharpen" | "passk_toy",
    "config": the config's fields (validated), "pinned": {"label", "config"} or None, "table": a student's
    advantage table [[A_correct...], [A_wrong...]] or None, "big", "columns", "classroom", "predict"}. key: stable
    per page (the browser keeps its view, its player's iteration and a revealed answer across settings)."""
    if server.route_url(BUNDLE_NAME) is None and not st.get_option("server.enableStaticServing"):
        st.error("This page computes in the browser and needs Streamlit's static file serving for its code: set "
                 "`enableStaticServing = true` under `[server]` in .streamlit/config.toml and restart.")
        return
    try:
        urls = {"bundle_url": bundle_url(server) or "", "plotly_url": plotly_url(server) or ""}
    except OSError as e:  # e.g. the app folder is read-only: say so instead of a traceback
        st.error(f"The page's code could not be put into the app's static/ folder: {e}")
        return
    _COMPONENT(key=key, data={"key": key, "bundle_url": urls["bundle_url"],
                              "request": {**request, "plotly_url": urls["plotly_url"]}})
