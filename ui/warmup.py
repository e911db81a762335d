"""Warm the server before it takes its first visitor: `streamlit run app.py` finds app.py's st.App and runs
this lifespan first, so the first page a lecturer opens after starting the server does not pay for
importing torch, building the sampler's tables or computing the default runs.
"""

from __future__ import annotations

import asyncio
import logging
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


@asynccontextmanager
async def lifespan(app):
    """st.App lifespan: warm up (in a thread, so the event loop stays free), then serve."""
    try:
        seconds = await asyncio.to_thread(warm)
        LOG.info("GRPO Playground warmed up in %.1f s", seconds)
    except Exception:  # a failed warm-up only makes the first visit slower; the pages report real errors
        LOG.exception("warm-up failed; serving anyway")
    yield
