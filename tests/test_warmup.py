"""The server's warm-up and memory janitor (ui/server.py): defaults computed before the first visitor, cached
runs dropped once the class has left (and only once per quiet spell), nothing dropped while pages run."""

import threading
import time

from sim.toy import ToyConfig
from ui import runs, server

SMALL = ToyConfig(iterations=5, n_seeds=2)


def _janitor(monkeypatch, idle_for: float | None, wait_s: float = 0.4, idle_release_s: float = 1.0) -> list[float]:
    """Run a Server's janitor for `wait_s` s after its last page run was `idle_for` s ago (None: no page has run
    since the server started). Returns the times it re-warmed."""
    s = server.current()  # the test's Server.create(): ui.runs' calls use its cache
    warmed = []
    monkeypatch.setattr(s, "warm", lambda: warmed.append(time.monotonic()) or 0.0)
    monkeypatch.setattr(server, "IDLE_RELEASE_S", idle_release_s)
    if idle_for is None:
        s.last_use = time.monotonic() - 100  # the warm-up has just filled the caches long ago
    thread = threading.Thread(target=s.janitor, kwargs={"every_s": 0.05})
    thread.start()
    time.sleep(0.1)
    if idle_for is not None:
        s.last_use = time.monotonic() - idle_for  # a page last ran idle_for s ago
    time.sleep(wait_s)
    s.stop()
    thread.join(timeout=5)
    assert not thread.is_alive()
    return warmed


def test_janitor_releases_cached_runs_once_after_the_class_has_left(monkeypatch):
    server.Server.create()
    before = runs.toy_runs(SMALL)
    assert runs.toy_runs(SMALL)[0] is before[0]  # cached
    replaced = []

    class Worker:  # the test server computes in-thread: stand-ins for its worker processes
        def replace(self):
            replaced.append(time.monotonic())

        def close(self):
            pass

    work = server.current().work
    work.workers = [Worker(), Worker()]
    warmed = _janitor(monkeypatch, idle_for=10.0)
    work.workers = []  # in-thread again
    assert len(warmed) == 1  # released and re-warmed once, not on every tick of the quiet spell
    assert len(replaced) == 2 and max(replaced) <= warmed[0]  # each worker replaced once, before the re-warm
    after = runs.toy_runs(SMALL)
    assert after[0] is not before[0]  # recomputed: the cache was dropped ...
    assert after[0].accuracy.tolist() == before[0].accuracy.tolist()  # ... and the same seed gives the same run


def test_janitor_keeps_runs_while_pages_run(monkeypatch):
    server.Server.create()
    before = runs.toy_runs(SMALL)
    assert _janitor(monkeypatch, idle_for=0.0) == []
    assert runs.toy_runs(SMALL)[0] is before[0]


def test_janitor_leaves_a_fresh_server_alone(monkeypatch):
    """Started with the server: the warm-up has just filled the caches and no page has run yet."""
    server.Server.create()
    assert _janitor(monkeypatch, idle_for=None, wait_s=0.3, idle_release_s=0.0) == []


def test_touch_marks_a_page_run():
    s = server.Server()
    s.last_use = 0.0
    s.touch()
    assert time.monotonic() - s.last_use < 1.0


def test_history_csv_built_on_click_holds_only_the_config():
    """The Training page's download callable: the run's rows (iterations 0..T, means over seeds), from the
    config alone (a page lambda would keep the page's namespace alive after the session)."""
    import csv
    import functools
    import io

    make = functools.partial(runs.toy_history_csv, SMALL)
    assert make.args == (SMALL,) and not make.keywords
    rows = list(csv.DictReader(io.StringIO(make())))
    run = runs.toy_runs(SMALL)[0]
    assert len(rows) == SMALL.iterations + 1
    assert [round(float(r["accuracy"]), 9) for r in rows] == [round(float(a), 9) for a in run.accuracy.mean(axis=1)]
