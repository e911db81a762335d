"""What belongs to the server, not to a session: one `Server`, created by app.py when `streamlit run app.py`
imports it, and handed down from there: app.py puts it in each session's state before it runs the page
(ui/host.py), a page passes it to what needs it (`show_view(VIEW, server)`), and no module looks it up.

    server = Server(gated=True, presenter_key=key)  # app.py, once per process
    app = st.App("app.py", lifespan=server.lifespan, routes=server.routes())

It owns:
- the routes (`routes()`, `route_url(name)`): Plotly.js (sim/player/plotly_js.py), KaTeX (sim/player/katex.py)
  and the bundle of the app's renderer (ui/view.py), each gzipped once and cacheable for a year (their names carry
  a version);
- the warm-up (`warm()`): before the first visitor, the modules the pages import (and Streamlit's own lazy ones);
- the gate (`gate`, ui/work.py): at most one student script run at a time, the lecturer's never waiting (app.py's
  server only: `gated`);
- the presenter key (`presenter_key`, printed at start) and the wrong keys per client address (`wrong_keys`): the
  session that shows the key gets the lecturer's priority (ui/presenter.py);
- the navigation fix (`use_app_navigation()`, checked against Streamlit STREAMLIT_CHECKED);
- the classes a lecturer opened (`classes`, ui/classroom.py) and their routes (ui/classroom_routes.py);
- a slot for the TinyLM registry (`tinylm_registry`), handed in by app.py, the lab's pool (`lab_pool`), the
  worker that reads a visitor's upload (`file_pool`) and the lesson zip's build (`lesson_zip`).

No page computes a view the browser can: the views' pages (ui/view.py) send their declaration once and the browser
reads the link, computes and draws, so a class moving its sliders costs the server nothing.

A script run without app.py's st.App (AppTest) gets a bare Server from ui/host.py: no route, no gate and nothing
warmed. A test app that a browser opens builds its own st.App with `routes()`, as app.py does.
"""

from __future__ import annotations

import ast
import asyncio
import importlib
import logging
import threading
import time
from contextlib import asynccontextmanager

LOG = logging.getLogger("grpo_playground")
STREAMLIT_CHECKED = "1.67.0"  # the Streamlit whose PagesManager use_app_navigation() was read against


def use_app_navigation() -> bool:
    """Tell Streamlit that this app navigates with st.navigation (app.py). True if a v1 run was under way.

    Streamlit 1.67.0 treats a `pages/` folder beside the main script as a v1 multipage app until some
    session runs `st.navigation` (`PagesManager.uses_pages_directory`, a class attribute set on the first
    PagesManager; `st.navigation` sets it False): on a fresh server a first visit straight to /training
    would run pages/training.py alone (no wide layout, lowercase names in the sidebar). The server sets it
    before its first visitor; a page that still finds it set reruns through app.py (ui.page.open_page).
    tests/test_server.py fails when Streamlit's version or this attribute changes: read the new
    PagesManager again then.
    """
    from streamlit.runtime.pages_manager import PagesManager

    was = PagesManager.uses_pages_directory  # None until the first session's PagesManager sets it
    PagesManager.uses_pages_directory = False
    return bool(was)


# What Streamlit 1.67 imports only on a first script run (measured: pandas and pyarrow for the widgets' options,
# the icon names for buttons): about 0.7 s of CPU the first visitor would otherwise wait for.
STREAMLIT_LAZY = ("pandas", "pyarrow", "streamlit.material_icon_names", "streamlit.runtime.scriptrunner.magic_funcs",
                  "streamlit.components.v2.manifest_scanner", "plotly.offline", "plotly.graph_objects")


def page_imports() -> list[str]:
    """Every module app.py and the pages import (read from their source, not run)."""
    from sim.paths import APP, PAGES

    found = []
    for path in [APP, *sorted(PAGES.glob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found += [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.append(node.module)
    return list(dict.fromkeys(found))


class Server:
    """The process's server state (app.py builds the one that serves; ui/host.py hands it to the pages)."""

    def __init__(self, *, tinylm_registry: object | None = None, gated: bool = False,
                 presenter_key: str | None = None) -> None:
        import secrets

        from ui.classroom import Classes
        from ui.presenter import WrongKeys
        from ui.work import GATE_SIZE, Gate

        # the lecturer's priority needs this key (ui/presenter.py); app.py hands in GRPO_PRESENTER_KEY's or a fresh one
        self.presenter_key = presenter_key if presenter_key is not None else secrets.token_urlsafe(16)
        self.wrong_keys = WrongKeys()  # wrong presenter keys per client address: guessing is slowed
        self.classes = Classes()  # class mode's classes, in memory (ui/classroom.py)
        self.class_api: str | None = None  # where routes() serves class mode (ui/classroom_routes.py), if it does
        self.gate = Gate(GATE_SIZE)  # script runs at once, the lecturer first (ui/work.py)
        self.gated = gated  # app.py's server gates its script runs; a bare one (AppTest) does not
        self.route_paths: dict[str, str] = {}  # file name -> the path routes() serves it on
        self._tinylm_registry = tinylm_registry  # see the tinylm_registry property
        self._lesson_zip = None  # see the lesson_zip property
        self._lab_pool = None  # see the lab_pool property
        self._file_pool = None  # see the file_pool property
        self.warm_seconds: float | None = None  # how long the warm-up took
        self._registry_lock = threading.Lock()

    @property
    def lab_pool(self):
        """What runs a student's lab code for the pages: the lab's pool (sim.lab.pool.lab_pool), its calls
        giving the page's place in the gate up while they wait (ui.work.GatedPool)."""
        with self._registry_lock:
            if self._lab_pool is None:
                from sim.lab.pool import lab_pool
                from ui.work import GatedPool

                self._lab_pool = GatedPool(lab_pool(), self.gate)
            return self._lab_pool

    @property
    def file_pool(self):
        """What reads a visitor's upload (Your run, Your prompts): sim.yourdata.reader's two workers (small files
        apart from large ones, one file per visitor in each line), started in the background the first time a page
        asks, their calls giving the page's place in the gate up while they wait (ui.work.GatedPool): a file that
        reads slowly holds no place, and its time limit ends it."""
        with self._registry_lock:
            if self._file_pool is None:
                from sim.yourdata.reader import file_pool
                from ui.work import GatedPool

                self._file_pool = GatedPool(file_pool(), self.gate)
                self._file_pool.start()
            return self._file_pool

    @property
    def lesson_zip(self):
        """The sidebar's "Download this lesson" build (ui/lesson_download.py), one per server."""
        with self._registry_lock:
            if self._lesson_zip is None:
                from ui.lesson_download import LessonZip

                self._lesson_zip = LessonZip()
            return self._lesson_zip

    @property
    def tinylm_registry(self):
        """The TinyLM registry: the runs students with the same settings share, their queue and their limit.
        app.py may hand one in (`Server(tinylm_registry=...)`); otherwise the first page that asks gets the one
        `_new_tinylm_registry()` builds (AppTest included)."""
        with self._registry_lock:
            if self._tinylm_registry is None:
                self._tinylm_registry = self._new_tinylm_registry()
            return self._tinylm_registry

    @staticmethod
    def _new_tinylm_registry():
        """The server's one sim.tinylm.job.TinyLMRuns (imported here: it needs torch only when a run starts)."""
        from sim.tinylm.job import TinyLMRuns

        return TinyLMRuns()

    # ---- serving ----
    def route_url(self, name: str) -> str | None:
        """Where the browser loads file `name` from this server (under server.baseUrlPath), or None without the
        route (then the page serves it statically)."""
        path = self.route_paths.get(name)
        if path is None:
            return None
        import streamlit as st

        base = (st.get_option("server.baseUrlPath") or "").strip("/")
        return f"/{base}{path}" if base else path

    def plotly_url(self) -> str | None:
        from sim.player.plotly_js import PLOTLY_JS_NAME

        return self.route_url(PLOTLY_JS_NAME)

    def routes(self) -> list:
        """The Starlette routes for app.py's st.App: Plotly.js (sim/player/plotly_js.py), KaTeX's script and its CSS
        (fonts inlined, sim/player/katex.py) and the bundle of the app's renderer (ui/view.py), each gzipped once in
        memory and cacheable for a year (the file names carry the version or the hash, so a cached copy is never
        stale). Nothing is written into the checkout and no CPU is spent per visitor on compression: a class of 60
        opening the page at once would otherwise cost the server 60 gzip runs of 1.5 MB."""
        from sim.player.bundle import app_bundle, trainer_bundle
        from sim.player.katex import KATEX_CSS_NAME, KATEX_JS, KATEX_JS_NAME, katex_css
        from sim.player.plotly_js import PLOTLY_JS, PLOTLY_JS_NAME
        from sim.views.catalog import NAMES
        from ui.index_page import index_routes
        from ui.tinylm_api import api_routes

        return [self._route(PLOTLY_JS_NAME, PLOTLY_JS.read_bytes()), self._route(*app_bundle()),
                self._route(KATEX_JS_NAME, KATEX_JS.read_bytes()),
                self._route(KATEX_CSS_NAME, katex_css().encode("utf-8"), "text/css"), self._route(*trainer_bundle()),
                self._lesson_route(), *api_routes(self), *index_routes(NAMES), *self._class_routes()]

    def _class_routes(self) -> list:
        """Class mode's routes (ui/classroom_routes.py), under server.baseUrlPath as index_routes are."""
        import streamlit as st

        from ui.classroom_routes import API, ClassRoutes

        prefix = (st.get_option("server.baseUrlPath") or "").strip("/")
        self.class_api = f"/{prefix}{API}" if prefix else API
        return ClassRoutes(self.classes, self.wrong_keys).routes(f"/{prefix}" if prefix else "")

    def _lesson_route(self):
        from ui.lesson_download import ZIP_NAME

        route = self.lesson_zip.route()
        self.route_paths[ZIP_NAME] = route.path
        return route

    def _route(self, name: str, raw: bytes, media_type: str = "text/javascript"):
        import gzip

        from starlette.responses import Response
        from starlette.routing import Route

        packed = gzip.compress(raw, compresslevel=9, mtime=0)
        headers = {"Cache-Control": "public, max-age=31536000, immutable", "Vary": "Accept-Encoding"}

        async def serve(request):
            if "gzip" in request.headers.get("accept-encoding", ""):
                return Response(packed, media_type=media_type, headers={**headers, "Content-Encoding": "gzip"})
            return Response(raw, media_type=media_type, headers=headers)

        self.route_paths[name] = f"/assets/{name}"
        return Route(self.route_paths[name], serve)

    def warm(self) -> float:
        """Import what the pages import (and what Streamlit imports on a first run) before the first visitor.
        Returns the seconds spent."""
        start = time.perf_counter()
        for module in (*page_imports(), *STREAMLIT_LAZY):
            importlib.import_module(module)
        self.warm_seconds = time.perf_counter() - start
        return self.warm_seconds

    @asynccontextmanager
    async def lifespan(self, app):
        """st.App lifespan: the navigation fix, the presenter key printed, the warm-up (in a thread, so the event
        loop stays free); then serve. Yields {"server": self} (st.App keeps it as app.state)."""
        use_app_navigation()
        import sys

        from ui.presenter import announce

        print(announce(self.presenter_key), file=sys.stderr, flush=True)
        try:
            LOG.info("GRPO Playground warmed up in %.1f s", await asyncio.to_thread(self.warm))
        except Exception:  # a failed warm-up only makes the first visit slower; the pages report real errors
            LOG.exception("warm-up failed; serving anyway")
        yield {"server": self}
