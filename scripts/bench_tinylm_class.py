"""A class presses Start on TinyLM: N headless students (websocket clients) against one `streamlit run` server.

    OMP_NUM_THREADS=1 python scripts/bench_tinylm_class.py [--students 60] [--window 10] [--iterations 300]
    OMP_NUM_THREADS=1 python scripts/bench_tinylm_class.py --check    # 20 students within 5 s (CI)

Starts `streamlit run app.py` on a free port. Each student opens /tinylm?tinylm_on=true (optionally with
`tl_iters`), waits for the page, and presses Start at a random moment within --window seconds; its tab then
answers the fragment's `auto_rerun` timer as the browser does (a fragment rerun every `interval` s, sent whether or
not the last one finished; a full-app `new_session` cancels the timers; the same interval again is ignored).
Measured per student from its click: the first "reward" chart (the live charts) and the pass@k chart (the
finished run). Prints one JSON line: medians and maxima, errors, server CPU; then the figures (no target: what a
class costs; --check is --students 20 --window 5; --write-docs writes them into docs/benchmarks.md). Exit 1 when
a student saw an error.

The client speaks Streamlit 1.67's protocol as far as this page needs: the first `rerun_script` carries
`page_name`, later ones `page_script_hash`; every rerun carries every widget's state (toggle `bool_value`,
slider `double_array_value`, radio/selectbox `string_value`, multiselect `string_array_value`); a click is the
button's `trigger_value`. Sent without `cached_message_hashes`, so the server sends every element in full.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import connect

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scripts.benchdoc import Report, add_arguments  # noqa: E402
from tests.fixtures.serve import start_server  # noqa: E402

WIDGETS = ("checkbox", "slider", "radio", "selectbox", "multiselect", "button")


def state_of(kind: str, w) -> WidgetState | None:
    """The state a mounted widget commits (its value if the server set one, else its default)."""
    s = WidgetState(id=w.id)
    use = getattr(w, "set_value", False)
    if kind == "checkbox":
        s.bool_value = w.value if use else w.default
    elif kind == "slider":
        s.double_array_value.data.extend(w.value if use else w.default)
    elif kind in ("radio", "selectbox"):
        if use:
            s.string_value = w.raw_value
        elif w.HasField("default"):
            s.string_value = w.options[w.default]
        else:
            return None
    elif kind == "multiselect":
        s.string_array_value.data.extend(w.raw_values if use else [w.options[i] for i in w.default])
    else:
        return None
    return s


class Student:
    def __init__(self, url: str, query: str):
        self.url, self.query = url, query
        self.states: dict[str, WidgetState] = {}
        self.buttons: dict[str, object] = {}  # key suffix -> Button proto
        self.page_hash = ""
        self.clicked_at: float | None = None
        self.ready_at: float | None = None
        self.first_chart: float | None = None
        self.finished: float | None = None
        self.errors: list[str] = []
        self.timers: dict[str, tuple[asyncio.Task, float]] = {}  # fragment id -> (timer, interval)
        self.ws = None

    def _rerun(self, *, fragment: str = "", trigger: str | None = None) -> bytes:
        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string = self.query
        if self.page_hash:
            cs.page_script_hash = self.page_hash
        else:
            cs.page_name = "tinylm"
        cs.widget_states.widgets.extend(self.states.values())
        if trigger is not None:
            cs.widget_states.widgets.append(WidgetState(id=trigger, trigger_value=True))
        if fragment:
            cs.fragment_id, cs.is_auto_rerun = fragment, True
        return msg.SerializeToString()

    async def run(self, click_delay: float, deadline: float) -> None:
        async with connect(f"ws://{self.url}/_stcore/stream", subprotocols=["streamlit"], proxy=None,
                           max_size=None, ping_interval=None) as ws:  # fmt: skip
            self.ws = ws
            await ws.send(self._rerun())
            reader = asyncio.create_task(self._read())
            t_open = time.perf_counter()
            while self._start_button() is None and time.perf_counter() - t_open < 60:
                await asyncio.sleep(0.05)  # the page is drawn (a first run may end early for a page switch)
            self.ready_at = time.perf_counter()
            await asyncio.sleep(click_delay)
            start = self._start_button()
            if start is None or start.disabled:
                self.errors.append("no Start button")
                return
            self.clicked_at = time.perf_counter()
            await ws.send(self._rerun(trigger=start.id))
            while self.finished is None and time.perf_counter() < deadline:
                await asyncio.sleep(0.2)
            for t, _ in self.timers.values():
                t.cancel()
            reader.cancel()

    def _start_button(self):
        return next((b for k, b in self.buttons.items() if k.endswith("tl_start")), None)

    async def _tick(self, fragment: str, interval: float) -> None:
        while True:  # a fixed grid, like the browser's setInterval: sent whether or not the last run finished
            await asyncio.sleep(interval)
            await self.ws.send(self._rerun(fragment=fragment))

    async def _read(self) -> None:
        async for raw in self.ws:
            msg = ForwardMsg()
            msg.ParseFromString(raw)
            kind = msg.WhichOneof("type")
            if kind == "new_session":
                self.page_hash = self.page_hash or msg.new_session.page_script_hash
                if not msg.metadata.run.fragment_ids:  # a full-app run: the browser drops every timer
                    for t, _ in self.timers.values():
                        t.cancel()
                    self.timers.clear()
            elif kind == "navigation":
                self.page_hash = msg.navigation.page_script_hash or self.page_hash
            elif kind == "auto_rerun":
                fid, interval = msg.auto_rerun.fragment_id, msg.auto_rerun.interval
                if fid not in self.timers or self.timers[fid][1] != interval:  # the same interval again: ignored
                    if fid in self.timers:
                        self.timers[fid][0].cancel()
                    self.timers[fid] = (asyncio.create_task(self._tick(fid, interval)), interval)
            elif kind == "stop_auto_rerun":
                for t, _ in self.timers.values():
                    t.cancel()
                self.timers.clear()
            elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                self._element(msg.delta.new_element)

    def _element(self, el) -> None:
        kind = el.WhichOneof("type")
        if kind in WIDGETS:
            w = getattr(el, kind)
            if kind == "button":
                self.buttons[w.id] = w
            elif (s := state_of(kind, w)) is not None:
                self.states.setdefault(w.id, s)
        elif kind == "exception":
            self.errors.append(f"exception: {el.exception.message[:200]}")
        elif kind == "alert" and el.alert.format == 1:  # ERROR
            self.errors.append(f"error: {el.alert.body[:200]}")
        elif kind == "bidi_component" and self.clicked_at is not None:  # the renderer (ui/view.py): its documents
            for payload in chart_payloads(el.bidi_component.json):
                titles = [c.get("title", "") for c in payload.get("charts", [])]
                now = time.perf_counter() - self.clicked_at
                if payload.get("key") == "tl_live_charts" and self.first_chart is None:
                    self.first_chart = now
                elif any(t.startswith("pass@k on") for t in titles) and self.finished is None:
                    self.finished = now


def chart_payloads(text: str) -> list[dict]:
    """Every chart payload (sim/player build_payload: key, charts, ...) in a component's JSON: ui/view.py show_doc
    sends a document, {"mode": "doc", "blocks": [{"kind": "charts", "payload": {...}}, ...]}."""
    try:
        found = [json.loads(text or "null")]
    except ValueError:
        return []
    out = []
    while found:
        x = found.pop()
        if isinstance(x, dict):
            if "charts" in x and "key" in x:
                out.append(x)
            else:
                found += list(x.values())
        elif isinstance(x, list):
            found += x
        elif isinstance(x, str) and x[:1] == "{":  # data sent as a JSON string inside the JSON
            try:
                found.append(json.loads(x))
            except ValueError:
                pass
    return out


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def class_run(url: str, n: int, window: float, query: str, timeout: float) -> list[Student]:
    students = [Student(url, query) for _ in range(n)]
    rng = random.Random(0)
    deadline = time.perf_counter() + timeout
    await asyncio.gather(*(s.run(rng.uniform(0, window), deadline) for s in students), return_exceptions=False)
    return students


def summary(values: list[float | None]) -> dict:
    got = [v for v in values if v is not None]
    if not got:
        return {"n": 0}
    return {"n": len(got), "median_s": round(statistics.median(got), 2), "max_s": round(max(got), 2),
            "min_s": round(min(got), 2)}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--students", type=int, default=None, help="students (default 60; 20 with --check)")
    p.add_argument("--window", type=float, default=None,
                   help="everyone presses Start within this many seconds (default 10; 5 with --check)")
    p.add_argument("--iterations", type=int, default=None, help="tl_iters (default: the page's 300)")
    p.add_argument("--eval-samples", type=int, default=None, help="tl_eval (default: the page's 64)")
    p.add_argument("--timeout", type=float, default=300.0)
    p.add_argument("--trace", action="store_true", help="print each student's timeline")
    add_arguments(p)
    a = p.parse_args(argv)
    a.students = a.students or (20 if a.check else 60)
    a.window = a.window if a.window is not None else (5.0 if a.check else 10.0)
    query = "tinylm_on=true" + (f"&tl_iters={a.iterations}" if a.iterations else "")
    query += f"&tl_eval={a.eval_samples}" if a.eval_samples else ""
    server = start_server()
    port = server.url.rsplit(":", 1)[1]
    try:
        t0, c0 = time.perf_counter(), cpu_seconds(server.pid)
        load0 = os.getloadavg()
        students = asyncio.run(class_run(f"127.0.0.1:{port}", a.students, a.window, query, a.timeout))
        wall, cpu = time.perf_counter() - t0, cpu_seconds(server.pid) - c0
    finally:
        server.stop()
    errors = [e for s in students for e in s.errors]
    first, finished = summary([s.first_chart for s in students]), summary([s.finished for s in students])
    print(json.dumps({
        "students": a.students, "window_s": a.window, "query": query,
        "first_chart_after_click": first, "finished_run_after_click": finished,
        "errors": len(errors), "error_examples": errors[:3],
        "server_cpu_percent": round(100 * cpu / wall, 1), "wall_s": round(wall, 1),
        "loadavg_start": load0, "loadavg_end": os.getloadavg(),
    }))  # fmt: skip
    if a.trace:  # per student, seconds since the start: page ready, click, first chart, finished
        t = min(s.ready_at for s in students if s.ready_at)
        for s in sorted(students, key=lambda s: s.clicked_at or 0):
            r = [s.ready_at, s.clicked_at]
            print(*(f"{x - t:6.1f}" if x else "   -  " for x in r),
                  *(f"{x:6.1f}" if x is not None else "   -  " for x in (s.first_chart, s.finished)))
    report = Report("tinylm-class", "A class presses Start on TinyLM")
    report.add("first live chart after the click (median)", first.get("median_s"), "s")
    report.add("first live chart after the click (max)", first.get("max_s"), "s")
    report.add("finished run with its pass@k chart after the click (median)", finished.get("median_s"), "s")
    report.add("errors", len(errors))
    report.add("server CPU (% of one core)", round(100 * cpu / wall, 1), "%")
    report.note(f"{a.students} headless students open /tinylm?{query} and press Start within {a.window:g} s of each "
                "other, against one `streamlit run app.py`; they share one run. No target: what a class costs.")
    checked = report.finish(a)
    return 1 if errors else checked


if __name__ == "__main__":
    sys.exit(main())
