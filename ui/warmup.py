"""Warm the server before it takes its first visitor: `streamlit run app.py` finds app.py's st.App and runs
this lifespan first, so the first page a lecturer opens after starting the server does not pay for
importing torch, building the sampler's tables or computing the default runs.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from contextlib import asynccontextmanager

LOG = logging.getLogger("grpo_playground")


def warm() -> float:
    """Import what the pages import and compute what they show at their defaults. Returns the seconds spent."""
    start = time.perf_counter()
    import plotly.graph_objects  # noqa: F401  (the static pages' charts)

    from sim.toy import ToyConfig
    from ui import runs

    runs.toy_runs(ToyConfig(n_seeds=16))  # Training dynamics at its defaults
    runs.std_runs(8, ToyConfig().lr, 0, 0.1)  # Std scaling
    runs.toy_before_after()  # pass@k
    runs.sharpen_run(8, 100, 0)
    _use_app_navigation()
    return time.perf_counter() - start


def _use_app_navigation() -> None:
    """Tell Streamlit this app navigates with st.navigation (app.py) before any session asks: otherwise a
    first visit straight to /training runs the page alone once and then reruns (ui/page.py)."""
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:
        return
    PagesManager.uses_pages_directory = False


IDLE_RELEASE_S = 45.0  # no page has run for this long: the class has left


def give_memory_back(stop: threading.Event, every_s: float = 15.0) -> None:
    """The memory janitor. Every `every_s` seconds, once no page has run for IDLE_RELEASE_S: drop the cached
    runs a class asked for and recompute the defaults (once per quiet spell), then collect garbage and hand
    the C heap's free pages back to the system (glibc keeps freed memory in its arenas, so without it the
    server's resident memory would stay near its peak long after the students have gone). While pages run
    it does nothing: a full collection would hold the GIL in the middle of a class.
    """
    import ctypes
    import gc

    from ui import runs

    try:
        trim = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc: nothing to trim
        trim = None
    released_at = runs.last_use
    while not stop.wait(every_s):
        if time.monotonic() - runs.last_use <= IDLE_RELEASE_S:
            continue
        if released_at != runs.last_use:
            released_at = runs.last_use
            runs.release()
            warm()
        gc.collect()  # each quiet tick: sessions Streamlit drops later (after its disconnect TTL) free more
        if trim is not None:
            trim(0)


@asynccontextmanager
async def lifespan(app):
    """st.App lifespan: warm up (in a thread, so the event loop stays free), start the memory janitor, serve."""
    try:
        seconds = await asyncio.to_thread(warm)
        LOG.info("GRPO Playground warmed up in %.1f s", seconds)
    except Exception:  # a failed warm-up only makes the first visit slower; the pages report real errors
        LOG.exception("warm-up failed; serving anyway")
    stop = threading.Event()
    threading.Thread(target=give_memory_back, args=(stop,), name="memory-janitor", daemon=True).start()
    yield
    stop.set()
