"""Streamlit's page (its index.html) at the app's own addresses, told where its server is.

Opened at a page's address (/training), Streamlit 1.67's frontend does not know whether /training is its server's
base path or a page under it: it asks /training/_stcore/health and /training/_stcore/host-config first (two 404s in
every visitor's console), then /_stcore/health. Its embedding setting `window.__streamlit.BACKEND_BASE_URL` names the
base, and then it asks there only. The app serves index.html itself at "/" and at each page's address with that one
line added (the base is the server's `server.baseUrlPath`, so a proxy's prefix is kept); every other address is
Streamlit's own. Checked against the Streamlit in STREAMLIT_CHECKED; tests/test_server.py fails when its index.html or
that setting changes.
"""

from __future__ import annotations

import json
from pathlib import Path

STREAMLIT_CHECKED = "1.67.0"
HEAD = "<head>"


def streamlit_index() -> str:
    import streamlit

    return (Path(streamlit.__file__).parent / "static" / "index.html").read_text(encoding="utf-8")


def told_index(base_path: str) -> str:
    """Streamlit's index.html with `window.__streamlit` naming the server's base (`base_path`: "" or "/prefix")."""
    html = streamlit_index()
    if HEAD not in html:
        raise RuntimeError(f"Streamlit's index.html has no {HEAD}: read it again (checked with {STREAMLIT_CHECKED})")
    base = json.dumps(base_path.rstrip("/") + "/")
    line = f"<script>window.__streamlit = {{ BACKEND_BASE_URL: location.origin + {base} }};</script>"
    return html.replace(HEAD, HEAD + line, 1)


def index_routes(page_names) -> list:
    """Starlette routes serving the told index.html at "/" and at "/NAME" for each page (under server.baseUrlPath:
    st.App mounts user routes at the root, so the prefix is in the path)."""
    import streamlit as st
    from starlette.responses import HTMLResponse
    from starlette.routing import Route

    prefix = (st.get_option("server.baseUrlPath") or "").strip("/")
    base = f"/{prefix}" if prefix else ""
    html = told_index(base)

    async def serve(request):
        return HTMLResponse(html, headers={"Cache-Control": "no-cache"})

    return [Route(f"{base}/", serve), *(Route(f"{base}/{name}", serve) for name in page_names)]
