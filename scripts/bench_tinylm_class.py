"""A class trains TinyLM on the server: N students press "Start on the server" with the same settings, against one
`streamlit run app.py`, and poll their run as the page does.

    OMP_NUM_THREADS=1 python scripts/bench_tinylm_class.py [--students 60] [--window 10] [--iterations 300]
    OMP_NUM_THREADS=1 python scripts/bench_tinylm_class.py --check    # 20 students within 5 s, 60 iterations (CI)

A page trains in its own browser by default (assets/js/tinylm_run.js): that costs the server nothing but the trainer's
script, once per browser (cached a year). This measures the other way, the server's runs (ui/tinylm_api.py): each
student (a thread) sends POST /api/tinylm/start at a random moment within --window seconds, then asks for its
snapshot every second with the history it holds (`since`), as assets/js/tinylm_trainer_view.js does. They share one
run (the same settings). Measured per student from its Start: the first iteration it sees, and the finished run with
its pass@k. Prints one JSON line, then the figures (no target: what a class costs; --write-docs writes them into
docs/benchmarks.md). Exit 1 when a student got an error.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scripts.benchdoc import Report, add_arguments  # noqa: E402
from tests.fixtures.serve import NO_PROXY, start_server  # noqa: E402

POLL_S = 1.0  # as the page polls a server run (assets/js/tinylm_trainer_view.js POLL_MS)


def settings(iterations: int | None, eval_samples: int | None) -> dict:
    """The page's settings at its defaults (by field name, as the page sends them), some changed."""
    from sim.views import catalog

    view = catalog.view("tinylm")
    state = view.defaults()
    out = {c.field: state[c.key] for c in view.controls if c.field != "trl"}
    return out | ({"iterations": iterations} if iterations else {}) | ({"eval_samples": eval_samples} if eval_samples
                                                                       else {})  # fmt: skip


class Student(threading.Thread):
    def __init__(self, url: str, body: dict, delay: float, deadline: float):
        super().__init__(daemon=True)
        self.url, self.body, self.delay, self.deadline = url, body, delay, deadline
        self.viewer = os.urandom(16).hex()
        self.first = self.finished = None
        self.errors: list[str] = []
        self.bytes = 0

    def post(self, action: str, body: dict) -> dict:
        req = urllib.request.Request(f"{self.url}/api/tinylm/{action}", json.dumps({"viewer": self.viewer, **body})
                                     .encode(), {"Content-Type": "application/json"})  # fmt: skip
        with NO_PROXY.open(req, timeout=30) as r:
            raw = r.read()
        self.bytes += len(raw)
        return json.loads(raw)

    def run(self) -> None:
        time.sleep(self.delay)
        t0, held = time.perf_counter(), 0
        try:
            snap = self.post("start", {"settings": self.body})
            while time.perf_counter() < self.deadline:
                held += len(snap.get("history", []))
                now = time.perf_counter() - t0
                if held and self.first is None:
                    self.first = now
                if snap["state"] == "done":
                    self.finished = now
                    return
                if snap["state"] in ("stopped", "error"):
                    self.errors.append(f"{snap['state']}: {snap.get('error')}")
                    return
                time.sleep(POLL_S)
                snap = self.post("snapshot", {"since": held})
            self.errors.append("timed out")
        except Exception as e:  # an HTTP error, a refused connection: counted, and said
            self.errors.append(f"{type(e).__name__}: {str(e)[:200]}")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def summary(values: list[float | None]) -> dict:
    got = [v for v in values if v is not None]
    if not got:
        return {"n": 0}
    return {"n": len(got), "median_s": round(statistics.median(got), 2), "max_s": round(max(got), 2)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--students", type=int, default=None, help="students (default 60; 20 with --check)")
    p.add_argument("--window", type=float, default=None,
                   help="everyone presses Start within this many seconds (default 10; 5 with --check)")
    p.add_argument("--iterations", type=int, default=None, help="iterations (default: the page's 300; 60 with --check)")
    p.add_argument("--eval-samples", type=int, default=None, help="samples per held-out problem (default the page's)")
    p.add_argument("--timeout", type=float, default=600.0)
    add_arguments(p)
    a = p.parse_args(argv)
    a.students = a.students or (20 if a.check else 60)
    a.window = a.window if a.window is not None else (5.0 if a.check else 10.0)
    a.iterations = a.iterations or (60 if a.check else None)
    body = settings(a.iterations, a.eval_samples)
    server = start_server()
    try:
        t0, c0 = time.perf_counter(), cpu_seconds(server.pid)
        rng = random.Random(0)
        deadline = t0 + a.timeout
        students = [Student(server.url, body, rng.uniform(0, a.window), deadline) for _ in range(a.students)]
        for s in students:
            s.start()
        for s in students:
            s.join(a.timeout + 60)
        wall, cpu = time.perf_counter() - t0, cpu_seconds(server.pid) - c0
    finally:
        server.stop()
    errors = [e for s in students for e in s.errors]
    first, finished = summary([s.first for s in students]), summary([s.finished for s in students])
    print(json.dumps({
        "students": a.students, "window_s": a.window, "iterations": body["iterations"],
        "first_iteration_after_start": first, "finished_run_after_start": finished,
        "errors": len(errors), "error_examples": errors[:3], "kB_per_student": round(
            statistics.median(s.bytes for s in students) / 1000, 1),
        "server_cpu_percent": round(100 * cpu / wall, 1), "wall_s": round(wall, 1),
    }))  # fmt: skip
    report = Report("tinylm-class", "A class trains TinyLM on the server")
    report.add("first iteration seen after Start (median)", first.get("median_s"), "s")
    report.add("first iteration seen after Start (max)", first.get("max_s"), "s")
    report.add("finished run with its pass@k after Start (median)", finished.get("median_s"), "s")
    report.add("errors", len(errors))
    report.add("server process CPU (% of one core; the run's own process not counted)", round(100 * cpu / wall, 1),
               "%")
    report.note(f"{a.students} students press Start on the server within {a.window:g} s of each other with the same "
                f"settings ({body['iterations']} iterations), against one `streamlit run app.py`, and poll their run "
                "every second through its routes (ui/tinylm_api.py); they share one run. A page trains in its own "
                "browser by default, which costs the server nothing. No target: what a class costs.")
    checked = report.finish(a)
    return 1 if errors else checked


if __name__ == "__main__":
    sys.exit(main())
