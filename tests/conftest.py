"""Session-wide test settings: no test may touch the network, torch stays on one thread, and a unit-tier test
starts no process and opens no server.

The tiers (docs/architecture.md, "Tests"): an unmarked test is the unit tier (plain `pytest`); a test that needs
more is marked `integration` (AppTest, worker processes, a CLI run as a process, node, TRL on one process) or
`e2e` (Chromium, HAProxy, a classroom load, TRL on two processes), and pyproject's addopts deselect both unless
`-m` says otherwise. `unit_tier_guard` below keeps the unit tier honest: it fails an unmarked test the moment it
starts a subprocess or a process, or listens on a socket, and tells its author to mark it. The one exception is node
running tests/js/harness.mjs (tests/fixtures/node.py): the browser's half of the views is proved in the fast tier.
"""

import contextlib
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import json  # noqa: E402
import multiprocessing.process  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

from tests.fixtures.serve import launch_chromium, start_server  # noqa: E402

# Property tests (Hypothesis). "fast", the default: derandomized (each test's examples follow from its own source,
# the same on every run and in CI, so a submission never fails on an example it did not bring) and no example
# database (nothing a run saves changes the next). "explore", by hand: new random examples, 20x as many, failures
# kept in .hypothesis/ and replayed first:
#     python -m pytest --hypothesis-profile=explore -k "fuzz or property or never" tests/
# What it finds becomes an @example(...) of its test, so the fast tier keeps it (docs/architecture.md, "Tests").
# A test sets its count with tests/fixtures/props.py examples(n): n in "fast", 20n in "explore".
_HYPOTHESIS = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture], print_blob=True)
settings.register_profile("fast", max_examples=100, derandomize=True, database=None, **_HYPOTHESIS)
settings.register_profile("explore", max_examples=2000, derandomize=False, **_HYPOTHESIS)
settings.load_profile("fast")  # --hypothesis-profile=explore (Hypothesis's own pytest option) loads the other


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


@pytest.fixture(scope="module")
def view_context(browser):
    """One browser context for a module's view pages (its cache spares each page Plotly.js), the clipboard
    granted on every origin (the app's, a lesson's file://); a test's page is its own."""
    c = browser.new_context(viewport={"width": 1400, "height": 1000})
    c.grant_permissions(["clipboard-read", "clipboard-write"])
    yield c
    c.close()


@pytest.fixture
def open_view(view_context, server, exercise_lesson):
    """open_view(host, view, query) -> a page of that view, drawn, in the app or the exercise lesson
    (tests/fixtures/viewpage.view_opener)."""
    from tests.fixtures.viewpage import view_opener

    with view_opener(view_context, server, exercise_lesson) as opener:
        yield opener


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


TIER_MARKS = ("integration", "e2e")
# (owner, attribute, what it does): every way this project starts a process or a server
GUARDED = [
    (subprocess.Popen, "_execute_child", "started a subprocess (subprocess.Popen)"),
    (os, "fork", "forked (os.fork)"),
    (os, "forkpty", "forked (os.forkpty)"),
    (os, "posix_spawn", "started a process (os.posix_spawn)"),
    (os, "posix_spawnp", "started a process (os.posix_spawnp)"),
    (os, "system", "started a shell (os.system)"),
    (multiprocessing.process.BaseProcess, "start", "started a process (multiprocessing)"),
    (socket.socket, "listen", "listened on a socket (a server)"),
]


class UnitTierViolation(Exception):
    """A unit-tier test did what only a marked tier may do (raised where it happened; the test fails even if the
    code under test catches it)."""


def violation_message(what: str) -> str:
    return (f"this test is in the unit tier (it has no tier mark) but it {what}: mark it "
            "@pytest.mark.integration (a process, a CLI run as a process, AppTest, node, TRL on one process) or "
            "@pytest.mark.e2e (Chromium, HAProxy, a class, TRL on two processes); docs/architecture.md, \"Tests\"")


@contextlib.contextmanager
def unit_tier_guard(seen: list[str]):
    """While active, every entry of GUARDED records its message in `seen` and raises UnitTierViolation."""

    from tests.fixtures import node

    def refuse(what: str, original=None):
        def refused(*args, **kwargs):
            if original is not None and node.running():  # the one process the unit tier runs: node, on the JS twins
                return original(*args, **kwargs)
            seen.append(violation_message(what))
            raise UnitTierViolation(seen[-1])

        return refused

    saved = [(owner, name, name in vars(owner), getattr(owner, name)) for owner, name, _ in GUARDED
             if hasattr(owner, name)]  # fmt: skip
    for owner, name, what in GUARDED:
        if hasattr(owner, name):
            setattr(owner, name, refuse(what, getattr(owner, name) if name == "_execute_child" else None))
    try:
        yield
    finally:
        for owner, name, own, original in saved:
            if own:
                setattr(owner, name, original)
            else:  # inherited (socket.socket.listen is _socket.socket's): drop the override
                delattr(owner, name)


def is_unit(item) -> bool:
    return not any(item.get_closest_marker(m) for m in TIER_MARKS)


@contextlib.contextmanager
def tier_check(item):
    """Around each phase (setup, call, teardown) of a unit-tier test: the guard, and a failure naming what it did."""
    if not is_unit(item):
        yield
        return
    seen: list[str] = []
    with unit_tier_guard(seen):
        try:
            yield
        except BaseException:
            if seen:  # the guard's exception, or what the code under test made of it
                raise pytest.fail.Exception(seen[0], pytrace=False) from None
            raise
        if seen:  # the code under test caught the guard's exception
            pytest.fail(seen[0], pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    with tier_check(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    with tier_check(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    with tier_check(item):
        return (yield)
