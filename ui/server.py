"""What belongs to the server, not to a session: one `Server`, created by app.py when `streamlit run app.py`
imports it, reached by the pages through `current()`.

    server = Server.create()                     # app.py, once per process
    app = st.App("app.py", lifespan=server.lifespan, routes=server.routes())
    current().touch()                            # a page, on every script run (ui.page.open_page)

It owns:
- the Plotly.js route (`routes()`, `plotly_path`): sim/player/plotly_js.py's file, gzipped once;
- the warm-up (`warm()`): before the first visitor, the runs the warmed pages show at their defaults, built
  from the pages' own control specs (ui/specs.py) with the pages' own call, so the cache keys are equal;
- the memory janitor (`janitor()`): once no page has run for IDLE_RELEASE_S, drop the cached runs and
  recompute the defaults, collect garbage and give the C heap's free pages back;
- the presenter key (`presenter_key`, printed at start): the session that shows it gets the lecturer's
  priority (ui/presenter.py);
- the pages' computations (`work`, ui/work.py): worker processes, one queue with the lecturer first, the
  shared cache of results; GRPO_WORKERS processes (`worker_count()`), none in a bare Server;
- the shared caches' bookkeeping (`last_use`, written by every page run through `touch()`);
- the navigation fix (`use_app_navigation()`, checked against Streamlit STREAMLIT_CHECKED);
- a slot for the TinyLM registry (`tinylm_registry`), handed in by app.py, and the lesson zip's build
  (`lesson_zip`).

A script run without app.py's st.App (AppTest, a test app) gets a bare Server from `current()`: no route
(the player falls back to static serving), nothing warmed, no janitor, and no workers: the pages'
computations run in the script's own thread.
"""

from __future__ import annotations

import ast
import asyncio
import gc
import importlib
import logging
import threading
import time
from contextlib import asynccontextmanager

LOG = logging.getLogger("grpo_playground")
IDLE_RELEASE_S = 45.0  # no page has run for this long: the class has left
JANITOR_EVERY_S = 15.0
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


def default_runs() -> list[tuple]:
    """The jobs (fn, args) a warmed page asks for at its defaults: Training dynamics, Std scaling, pass@k.
    Each config is built from the page's specs by the page's own call, and each job named as ui/runs.py
    names it, so the warm-up's cache keys are the pages' keys."""
    from sim import jobs
    from sim.sharpen import SharpenConfig
    from sim.toy import ToyConfig
    from sim.views.std_scaling import STD_SEEDS
    from ui import runs, specs
    from ui.controls import default_config

    return [
        *runs.toy_calls(default_config(ToyConfig, specs.TRAINING)),
        (jobs.std_runs, (default_config(ToyConfig, specs.STD_SCALING, n_seeds=STD_SEEDS),)),
        (jobs.before_after, (200,)),
        (jobs.sharpen_run, (default_config(SharpenConfig, specs.PASSK),)),
    ]


def worker_count(environ=None) -> int:
    """Worker processes for the pages' computations: GRPO_WORKERS (0 = compute in the server's threads),
    by default one per core up to 4 (a 2-core machine computes two settings at once)."""
    import os

    from sim.validate import env_number

    return env_number("GRPO_WORKERS", min(4, os.cpu_count() or 1), 0, 16, environ, integer=True)


class Server:
    """The process's server state. Build it with `Server.create()` (which makes it `current()`)."""

    def __init__(self, *, tinylm_registry: object | None = None, workers: int = 0,
                 presenter_key: str | None = None) -> None:
        import secrets

        from ui.work import Work

        # the lecturer's priority needs this key (ui/presenter.py); app.py hands in GRPO_PRESENTER_KEY's or a fresh one
        self.presenter_key = presenter_key if presenter_key is not None else secrets.token_urlsafe(16)
        self.work = Work(workers)  # the pages' computations: queue, worker processes, cache (ui/work.py)
        self.plotly_path: str | None = None  # set by routes(): the app's own server serves Plotly.js there
        self.last_use = time.monotonic()  # when a page last ran (touch()); the janitor reads it
        self._tinylm_registry = tinylm_registry  # see the tinylm_registry property
        self._lesson_zip = None  # see the lesson_zip property
        self._lab_pool = None  # see the lab_pool property
        self.warm_seconds: float | None = None  # how long the last warm-up took
        self._stop = threading.Event()
        self._registry_lock = threading.Lock()

    @classmethod
    def create(cls, **kwargs) -> Server:
        """A new Server, made the process's current one (app.py calls this once)."""
        global _current
        server = cls(**kwargs)
        with _lock:
            _current = server
        return server

    @property
    def lab_pool(self):
        """What runs a student's lab code for the pages: the lab's pool (sim.lab.pool.lab_pool), its calls
        giving the page's place in the gate up while they wait (ui.work.GatedPool)."""
        with self._registry_lock:
            if self._lab_pool is None:
                from sim.lab.pool import lab_pool
                from ui.work import GatedPool

                self._lab_pool = GatedPool(lab_pool(), self.work.gate)
            return self._lab_pool

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
        app.py may hand one in (`Server.create(tinylm_registry=...)`); otherwise the first page that asks
        gets the one `_new_tinylm_registry()` builds (AppTest included). Pages: `current().tinylm_registry`."""
        with self._registry_lock:
            if self._tinylm_registry is None:
                self._tinylm_registry = self._new_tinylm_registry()
            return self._tinylm_registry

    @staticmethod
    def _new_tinylm_registry():
        """The server's one sim.tinylm.job.TinyLMRuns (imported here: it needs torch only when a run starts)."""
        from sim.tinylm.job import TinyLMRuns

        return TinyLMRuns()

    # ---- what a page run does ----
    def touch(self) -> None:
        """A page is running (ui.page.open_page calls this on every script run)."""
        self.last_use = time.monotonic()

    def plotly_url(self) -> str | None:
        """Where the browser loads Plotly.js from this server (under server.baseUrlPath), or None without the
        route (then the player serves it statically)."""
        if self.plotly_path is None:
            return None
        import streamlit as st

        base = (st.get_option("server.baseUrlPath") or "").strip("/")
        return f"/{base}{self.plotly_path}" if base else self.plotly_path

    # ---- serving ----
    def routes(self) -> list:
        """The Starlette routes for app.py's st.App: Plotly.js (sim/player/plotly_js.py), gzipped once in
        memory and cacheable for a year (the file name carries the version). Compared with static serving
        it writes nothing into the checkout and spends no CPU per visitor on compression: a class of 60
        opening the page at once would otherwise cost the server 60 gzip runs of 1.5 MB."""
        import gzip

        from starlette.responses import Response
        from starlette.routing import Route

        from sim.player.plotly_js import PLOTLY_JS, PLOTLY_JS_NAME

        raw = PLOTLY_JS.read_bytes()
        packed = gzip.compress(raw, compresslevel=9, mtime=0)
        headers = {"Cache-Control": "public, max-age=31536000, immutable", "Vary": "Accept-Encoding"}

        async def serve(request):
            if "gzip" in request.headers.get("accept-encoding", ""):
                return Response(packed, media_type="text/javascript", headers={**headers, "Content-Encoding": "gzip"})
            return Response(raw, media_type="text/javascript", headers=headers)

        self.plotly_path = f"/assets/{PLOTLY_JS_NAME}"
        return [Route(self.plotly_path, serve)]

    def warm(self) -> float:
        """Import what the pages import (and what Streamlit imports on a first run), compute what the warmed
        pages show at their defaults (here, while the workers start), then wait for the workers. Returns the
        seconds spent."""
        start = time.perf_counter()
        self.work.start()
        for module in (*page_imports(), *STREAMLIT_LAZY):
            importlib.import_module(module)
        for fn, args in default_runs():
            if not self.work.cached(fn, args)[0]:
                self.work.run_here(fn, args)
        self.work.ready()
        self.warm_seconds = time.perf_counter() - start
        return self.warm_seconds

    def janitor(self, every_s: float = JANITOR_EVERY_S) -> None:
        """The memory janitor, until stop(). Every `every_s` seconds, once no page has run for
        IDLE_RELEASE_S: drop the cached runs a class asked for, replace the worker processes and recompute
        the defaults (once per quiet spell), then collect garbage and hand the C heap's free pages back to the
        system (glibc keeps freed memory in its arenas, so without it the server's resident memory would stay
        near its peak long after the students have gone). While pages run it does nothing: a full collection
        would hold the GIL in the middle of a class."""
        from sim.binomial import binomial_sampler
        from sim.procs import malloc_trim

        released_at = self.last_use
        while not self._stop.wait(every_s):
            if time.monotonic() - self.last_use <= IDLE_RELEASE_S:
                continue
            if released_at != self.last_use:
                released_at = self.last_use
                self.work.clear()  # sessions still holding a run keep it alive: only the cache's references go
                for worker in self.work.workers:  # fresh processes: a worker's heap stays near its peak otherwise
                    worker.replace()
                binomial_sampler.cache_clear()
                self.warm()
            gc.collect()  # each quiet tick: sessions Streamlit drops later (after its disconnect TTL) free more
            malloc_trim()

    def stop(self) -> None:
        self._stop.set()
        self.work.close()

    @asynccontextmanager
    async def lifespan(self, app):
        """st.App lifespan: the navigation fix, the warm-up (in a thread, so the event loop stays free), the
        janitor; then serve. Yields {"server": self} (st.App keeps it as app.state)."""
        use_app_navigation()
        import sys

        from ui.presenter import announce

        print(announce(self.presenter_key), file=sys.stderr, flush=True)
        try:
            LOG.info("GRPO Playground warmed up in %.1f s", await asyncio.to_thread(self.warm))
        except Exception:  # a failed warm-up only makes the first visit slower; the pages report real errors
            LOG.exception("warm-up failed; serving anyway")
        threading.Thread(target=self.janitor, name="memory-janitor", daemon=True).start()
        try:
            yield {"server": self}
        finally:
            self.stop()


_lock = threading.Lock()
_current: Server | None = None  # the one mutable module global of ui/, sim/ and pages/: the process's server


def current() -> Server:
    """The process's Server: app.py's, or a bare one for a script run without it (AppTest, a test app)."""
    global _current
    with _lock:
        if _current is None:
            _current = Server()
        return _current
