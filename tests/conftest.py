"""Session-wide test settings: no test may touch the network, and torch stays on one thread."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import json  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from tests.fixtures.serve import launch_chromium, start_server  # noqa: E402


@pytest.fixture
def full_error_details():
    """Show a page's real exception in a failing AppTest (the app itself shows only its type)."""
    from streamlit import config as st_config

    old = st_config.get_option("client.showErrorDetails")
    st_config.set_option("client.showErrorDetails", "full")
    yield
    st_config.set_option("client.showErrorDetails", old)


@pytest.fixture(scope="module")
def server(request):
    """`streamlit run` of the module's SERVER_SCRIPT (default app.py) on a free port, for the whole module: its URL."""
    served = start_server(script=getattr(request.module, "SERVER_SCRIPT", "app.py"))
    yield served.url
    served.stop()


@pytest.fixture(scope="module")
def browser(server):
    """One headless Chromium for the module (after its server, so the server is up before the browser)."""
    playwright_sync = pytest.importorskip("playwright.sync_api", reason="playwright (python) is not installed")
    with playwright_sync.sync_playwright() as pw:
        b = launch_chromium(pw)
        yield b
        b.close()


@pytest.fixture(scope="session")
def small_lesson(tmp_path_factory) -> Path:
    """A small Training lesson (tests/fixtures/lesson.SMALL), built once for the lesson tests."""
    from tests.fixtures import lesson

    return lesson.build(tmp_path_factory.mktemp("lesson") / "out", lesson.SMALL)


@pytest.fixture(scope="session")
def exercise_lesson(tmp_path_factory) -> Path:
    """A lesson of the exercise views (tests/fixtures/lesson.EXERCISES), built once for the lesson tests."""
    from tests.fixtures import lesson

    return lesson.build(tmp_path_factory.mktemp("exercises") / "out", ["--views", lesson.EXERCISES, "--quiet"])


@pytest.fixture(scope="module", autouse=True)
def write_metrics(request):
    """A module with METRICS (a dict its tests fill) and METRICS_PATH gets them written as JSON at its end."""
    yield
    metrics, path = getattr(request.module, "METRICS", None), getattr(request.module, "METRICS_PATH", None)
    if metrics and path is not None:
        Path(path).write_text(json.dumps(metrics, indent=2))
        print(f"\nmetrics -> {path}: {json.dumps(metrics)}")
