"""The app's one renderer: a Streamlit component that draws a view, or a document, with the same JavaScript a lesson
draws it with (assets/js/page.js, doc.js, views.js).

    show_view(VIEW, server)                         # a view the browser computes: the whole page
    show_doc(server, "tl_recorded", blocks)         # a document sim computed (TinyLM's runs, a visitor's log)

For a view the browser computes (One group, Training dynamics, Wasted groups, Std scaling, pass@k, KL and clipping)
the component receives the view's declaration (its manifest: controls, presets, tools) and nothing computed: the
page reads its setting from the address bar by the same rules as a lesson, computes and draws it, and writes each
move back to the address bar. A control move costs the server nothing. The server hears of the setting only when
it has work to do for it: an export (a click: `action`) or, with "Use my lab code" on, the student's functions on
this setting (`values`, sim/views/<view>.py `lab_extras`).

The component's own code (assets/js/view_component.js) is small, since Streamlit resends it with every script
run; the bundle it loads (assets/js/app_view.js and what it imports), Plotly.js and KaTeX are served once by the
server's routes (ui/server.py), gzipped and cached for a year.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from sim.paths import JS
from sim.player.bundle import app_bundle
from sim.views.controls import Picks, defaults
from sim.views.doc import View, to_json
from ui.classroom_routes import class_data
from ui.controls import parse_url_value, picks_from_link, url_param
from ui.labview import lab_switch
from ui.page import open_page, presenter

COMPONENT_NAME = "grpo_view"
PICKS_MAX = 1024  # a Picks control's numbers in a link: 1 .. this (assets/js/page.js PICKS_MAX)
BUNDLE_NAME, _ = app_bundle()
_CSS = "\n".join((JS / name).read_text(encoding="utf-8") for name in ("player.css", "doc.css", "class_mode.css"))
# isolate_styles=False: Plotly and KaTeX put their CSS in the document's head, which a shadow root would not see
_COMPONENT = st.components.v2.component(COMPONENT_NAME, css=_CSS, js=(JS / "view_component.js").read_text(
    encoding="utf-8"), isolate_styles=False)


def urls(server) -> dict:
    """Where the browser loads the bundle, Plotly.js and KaTeX: the server's routes ("" without them: a script run
    not started through app.py's st.App, such as AppTest, draws nothing in a browser)."""
    from sim.player.katex import KATEX_CSS_NAME, KATEX_JS_NAME
    from sim.player.plotly_js import PLOTLY_JS_NAME

    return {"bundle_url": server.route_url(BUNDLE_NAME) or "", "plotly_url": server.route_url(PLOTLY_JS_NAME) or "",
            "katex_url": server.route_url(KATEX_JS_NAME) or "", "katex_css": server.route_url(KATEX_CSS_NAME) or ""}


def show_view(view: View, server, *, lab_extras: Callable | None = None, export: Callable | None = None) -> None:
    """The page of a view the browser computes: title (Streamlit's), then the component. `lab_extras(values, lab)`:
    the student's numbers for a setting ("Use my lab code"); `export(kind, values)`: {"filename", "mime", "text",
    "show"} for an export the page asks for."""
    open_page(server, view.title, page_reads_link=True)
    key = f"view_{view.name}"
    lab = lab_switch(server) if lab_extras is not None else None
    data = {"mode": "view", "manifest": view.manifest(), **urls(server), "classroom": presenter(),
            "lab_live": lab is not None, "lab": None, "result": st.session_state.pop(_result_key(key), None),
            "class_mode": class_data(server)}  # class mode (ui/classroom_routes.py, assets/js/class_mode.js)
    if lab is not None:
        values = _values(view, key)
        try:
            extras = lab_extras(values, lab)
            extras["slots"] = {k: to_json(blocks, host="app") for k, blocks in extras.get("slots", {}).items()}
        except ValueError as e:  # a setting the engine refuses: the page says so itself
            extras = {"slots": {"top": [{"kind": "note", "tone": "error", "text": str(e)}]}}
        data["lab"] = {"for": values, **extras}
    _COMPONENT(key=key, data=data, on_values_change=_nothing,
               on_action_change=(lambda: _export(view, key, export)) if export is not None else _nothing)


def show_doc(server, key: str, blocks: Sequence, *, classroom: bool | None = None) -> None:
    """A document sim computed (sim/views/doc.py's blocks), drawn by the lesson's renderer."""
    _COMPONENT(key=key, data={"mode": "doc", "blocks": to_json(blocks, host="app"), **urls(server),
                              "classroom": presenter() if classroom is None else classroom})


def _nothing() -> None:
    """A state the page reports: read from st.session_state on the next run, nothing to do at once."""


def _result_key(key: str) -> str:
    return f"_{key}_result"


def _values(view: View, key: str) -> dict:
    """The setting on the page: what its component last reported, else what the link says (by the same rules as
    the page reads it, ui/controls.py parse_url_value; a value it refuses is the default here, and the page says
    so)."""
    state = st.session_state.get(key)
    reported = state.get("values") if isinstance(state, dict) else None
    out = defaults(view.controls)
    for c in view.controls:
        if isinstance(reported, dict) and c.key in reported:
            out[c.key] = reported[c.key]
        elif isinstance(c, Picks):
            if raw := st.query_params.get_all(c.key):
                out[c.key] = picks_from_link(c.key, raw, PICKS_MAX)[0]
        elif (raw := url_param(c.key)) is not None:
            out[c.key] = parse_url_value(c, raw)[0]
    return out


def _export(view: View, key: str, export: Callable) -> None:
    """The page asked for an export of a setting (a click): compute it for the next script run's data."""
    state = st.session_state.get(key)
    request = state.get("action") if isinstance(state, dict) else None
    if not isinstance(request, dict) or not isinstance(request.get("values"), dict):
        return
    values = {**defaults(view.controls), **{c.key: request["values"][c.key] for c in view.controls
                                             if c.key in request["values"]}}
    try:
        out = export(str(request.get("kind")), values)
    except (ValueError, KeyError, TypeError) as e:  # a setting the engine refuses, an unknown kind
        out = {"filename": "error.txt", "mime": "text/plain", "text": f"This export cannot be made: {e}", "show": True}
    st.session_state[_result_key(key)] = {**out, "values": values, "fresh": True, "id": request.get("id")}
