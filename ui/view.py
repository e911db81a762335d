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
from sim.views.controls import check_values
from sim.views.doc import View, to_json
from ui.classroom_routes import class_data
from ui.labview import lab_switch
from ui.page import open_page

COMPONENT_NAME = "grpo_view"
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


def trainer_urls(view: View, server) -> dict:
    """Where a view with a trainer (TinyLM's) loads the trainer's script and asks the server for a run."""
    if not view.trainer:
        return {}
    from sim.player.bundle import trainer_bundle
    from ui.tinylm_api import PREFIX

    base = (st.get_option("server.baseUrlPath") or "").strip("/")
    return {"trainer_url": server.route_url(trainer_bundle()[0]) or "",
            "tinylm_api": f"/{base}{PREFIX}" if base else PREFIX}


def show_view(view: View, server, *, lab_extras: Callable | None = None, export: Callable | None = None,
              document: Callable | None = None, opened: bool = False) -> None:
    """A view's page: the component that draws it (assets/js/page.js), its setting read from the link by the page.
    The server hears of the setting only when it computes something for it, each reported by the page and checked
    against the page's own controls: `lab_extras(values, lab)`, the student's numbers ("Use my lab code");
    `document(values)`, the blocks of a document the server computes (Your run's findings on a visitor's file, the
    Lab's checks; the view's manifest says `server`); `export(kind, values)`, {"filename", "mime", "text", "show"}
    for an export the page asks for. `opened`: the page drew its title and sidebar itself (open_page)."""
    if not opened:
        open_page(server, view.title)
    key = f"view_{view.name}"
    lab = lab_switch(server) if lab_extras is not None else None
    data = {"mode": "view", "manifest": view.manifest(), **urls(server),
            "report": lab is not None or document is not None, "lab": None, "doc": None,
            "result": st.session_state.pop(_result_key(key), None),
            "data": view.data() if view.data is not None else None, **trainer_urls(view, server),
            "class_mode": class_data(server)}  # class mode (ui/classroom_routes.py, assets/js/class_mode.js)
    try:
        values = _values(view, key)
    except ValueError as e:  # a setting the page's controls do not offer (a rewritten message): said, not computed
        values, problem = None, [{"kind": "note", "tone": "error", "text": str(e)}]
    else:
        problem = None
    if lab is not None and values is not None:
        try:
            extras = lab_extras(values, lab)
            extras["slots"] = {k: to_json(blocks, host="app") for k, blocks in extras.get("slots", {}).items()}
        except ValueError as e:  # a setting the engine refuses: the page says so itself
            extras = {"slots": {"top": [{"kind": "note", "tone": "error", "text": str(e)}]}}
        data["lab"] = {"for": values, **extras}
    if document is not None and (values is not None or problem):
        data["doc"] = {"for": values, "blocks": problem or to_json(document(values), host="app")}
    _COMPONENT(key=key, data=data, on_values_change=_nothing,
               on_action_change=(lambda: _export(view, key, export)) if export is not None else _nothing)


def show_doc(server, key: str, blocks: Sequence) -> None:
    """A document sim computed (sim/views/doc.py's blocks), drawn by the lesson's renderer (at presenter sizes where
    the link says so: the page reads its flags itself)."""
    _COMPONENT(key=key, data={"mode": "doc", "blocks": to_json(blocks, host="app"), **urls(server)})


def _nothing() -> None:
    """A state the page reports: read from st.session_state on the next run, nothing to do at once."""


def _result_key(key: str) -> str:
    return f"_{key}_result"


def _values(view: View, key: str) -> dict | None:
    """The setting on the page: what its component last reported, checked against the page's controls (ValueError
    for a value they do not offer), or None before it has reported one (the page reads its link, by the one set of
    rules, assets/js/control_rules.js, and reports what it shows)."""
    state = st.session_state.get(key)
    reported = state.get("values") if isinstance(state, dict) else None
    if not isinstance(reported, dict):
        return None
    return check_values(view.controls, {c.key: reported[c.key] for c in view.controls if c.key in reported})


def _export(view: View, key: str, export: Callable) -> None:
    """The page asked for an export of a setting (a click): compute it for the next script run's data."""
    state = st.session_state.get(key)
    request = state.get("action") if isinstance(state, dict) else None
    if not isinstance(request, dict) or not isinstance(request.get("values"), dict):
        return
    values = {c.key: request["values"][c.key] for c in view.controls if c.key in request["values"]}
    try:
        values = check_values(view.controls, values)  # the page's own ranges, before any work (a rewritten request)
        out = export(str(request.get("kind")), values)
    except (ValueError, KeyError, TypeError) as e:  # a setting the engine refuses, an unknown kind
        out = {"filename": "error.txt", "mime": "text/plain", "text": f"This export cannot be made: {e}", "show": True}
    st.session_state[_result_key(key)] = {**out, "values": values, "fresh": True, "id": request.get("id")}
