"""A class against one server: N headless students and a lecturer, on the views the browser computes.

    OMP_NUM_THREADS=1 python scripts/bench_classroom.py --start-server --students 200
    python scripts/bench_classroom.py --url http://127.0.0.1:8501 --server-pid 1234 --students 300 --settle 0
    OMP_NUM_THREADS=1 python scripts/bench_classroom.py --check      # 1,000 students, 30 s, no settle (CI)

What a class costs the server now: a view's page (One group, Training dynamics, Wasted groups, Std scaling, pass@k,
KL and clipping) is one component that reads its setting from the link and computes every setting in the browser
(ui/view.py), so moving a control sends the server nothing. What remains is opening pages: a websocket session and
its first script run. Each participant is a `scripts.st_client.Tab` (a websocket client that sends what Chromium
sends). Students join at seeded random moments in the first seconds on a random view, "try a setting" every
`--setting-every` s (which sends nothing: the bench counts the messages and says so), and open another view every
`--visit-every` s (a link a lecturer hands out, the next page of the lesson). The lecturer (who opens the first page
with `?classroom=1&presenter=KEY`: ui/presenter.py's priority) opens the next view every `--lecturer-every` s from
the app's navigation, a rerun of the session as a click in its sidebar is (`--lecturer-new-tabs`: each in a fresh
tab, a new session and connection). Latency: from opening a page to its first script run finished (the page's
component and its declaration delivered). A page that does not load within `--timeout` s is an error.

`--chromium-moves N` also opens Training dynamics in Chromium (on the same server, before the class) and moves G
N times with the keyboard, reading the server's CPU before and after and the websocket frames the page sent:
what one control move costs the server.

Prints one JSON line (and writes it to --json-out): the lecturer's and the students' page-load latency p50/p95/max,
errors, messages sent per setting tried, pages opened, server CPU (% of one core), RSS (idle, peak, after --settle
s), the load average and the bench's own CPU. Then the figures beside the targets: the lecturer's p95 under 1 s
and no error; with --settle 120 or more the server's RSS back within 50 MB of idle. Exit code 0 when there was no
error, 1 otherwise (or when the server cannot be reached), 2 for bad flags; --check also exits 1 when a target is
missed by more than 2x, and --write-docs writes the figures into docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import secrets
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from websockets.exceptions import WebSocketException

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts.benchdoc import Report, add_arguments  # noqa: E402
from scripts.st_client import Tab  # noqa: E402
from sim.views import catalog  # noqa: E402
from tests.fixtures.serve import start_server  # noqa: E402

VIEWS = tuple(catalog.browser_views())  # what the browser computes (sim/views/catalog.py)
DEFAULTS = {"students": 100, "duration": 60.0, "setting_every": 10.0, "visit_every": 60.0, "settle": 120.0,
            "chromium_moves": 0}
CHECK_DEFAULTS = {"students": 1000, "duration": 30.0, "setting_every": 10.0, "visit_every": 60.0, "settle": 0.0,
                  "chromium_moves": 20}


# ---- the server process (/proc) ----
def cpu_seconds(pid: int | tuple[int, ...]) -> float:
    """utime + stime of the process (all its threads); summed over a tuple of PIDs."""
    if isinstance(pid, tuple):
        return sum(cpu_seconds(p) for p in pid)
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int | tuple[int, ...]) -> float:
    """Resident memory of the process in MB; summed over a tuple of PIDs (several servers)."""
    if isinstance(pid, tuple):
        return sum(rss_mb(p) for p in pid)
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def load1() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


# ---- one participant ----
@dataclass
class Actor:
    name: str
    lecturer: bool
    join_at: float  # seconds after the class starts
    rng: random.Random
    base: str
    query: str
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    visits: int = 0
    settings_tried: int = 0
    sent_for_settings: int = 0  # messages a tried setting sent (the point: none)
    loaded: bool = False
    tab: Tab | None = None
    sent: int = 0  # messages of closed tabs

    async def visit(self, view: str, timeout: float, navigate: bool = False) -> bool:
        """Open `view`, its load time measured: in a fresh tab (the old one closed), as following a link does, or
        (`navigate`, once a page is open) from the app's navigation in the same session, as a click in the
        sidebar does."""
        t = time.monotonic()
        if navigate and self.tab is not None and self.tab.pages:
            await self.tab.navigate(view)
        else:
            if self.tab is not None:
                self.sent += self.tab.stats.sent
                await self.tab.close()
            self.tab = Tab(self.base, view, self.query)
            t = time.monotonic()
            try:
                await self.tab.open(timeout)
            except Exception as e:  # noqa: BLE001 - a refused or failed connection is a measured error
                self.errors.append(f"connect: {type(e).__name__}: {e}"[:200])
                return False
        if not await self.tab.wait_full_run(t, timeout):
            self.errors.append(f"timeout: /{view} did not load in {timeout:.0f} s")
            return False
        self.latencies.append(time.monotonic() - t)
        self.visits += 1
        self.errors += self.tab.stats.errors
        self.tab.stats.errors.clear()
        return True

    async def run(self, t0: float, t_end: float, opts: argparse.Namespace) -> None:
        await asyncio.sleep(max(0.0, t0 + self.join_at - time.monotonic()))
        views = list(VIEWS)
        i = self.rng.randrange(len(views))
        ok = await self.visit(views[i], opts.timeout)
        self.loaded = ok and time.monotonic() < t_end
        every = opts.lecturer_every if self.lecturer else opts.visit_every
        next_visit = time.monotonic() + (every if self.lecturer else self.rng.uniform(0.5, 1.5) * every)
        next_setting = time.monotonic() + self.rng.uniform(0.1, 1.0) * opts.setting_every
        while time.monotonic() < t_end:
            now = time.monotonic()
            if now >= next_visit:
                i = (i + 1) % len(views) if self.lecturer else self.rng.randrange(len(views))
                await self.visit(views[i], opts.timeout, navigate=self.lecturer and not opts.lecturer_new_tabs)
                next_visit = time.monotonic() + (every if self.lecturer else self.rng.uniform(0.9, 1.1) * every)
            elif now >= next_setting and not self.lecturer and self.tab is not None:
                before = self.tab.stats.sent  # a setting tried in the page: the browser computes, nothing is sent
                self.settings_tried += 1
                self.sent_for_settings += self.tab.stats.sent - before
                next_setting = now + self.rng.uniform(0.9, 1.1) * opts.setting_every
            await asyncio.sleep(min(0.5, max(0.01, min(next_visit, next_setting) - time.monotonic())))

    async def close(self) -> None:
        if self.tab is not None:
            self.sent += self.tab.stats.sent
            await self.tab.close()


def summary(values: list[float]) -> dict:
    out = {"n": len(values), "p50": None, "p95": None, "max": None}
    if values:
        p50, p95 = np.percentile(values, [50, 95])
        out |= {"p50": round(float(p50), 3), "p95": round(float(p95), 3), "max": round(max(values), 3)}
    return out


# ---- the class ----
async def run_class(opts: argparse.Namespace, url: str, pid) -> dict:
    rng = random.Random(opts.seed)
    join_window = min(10.0, opts.duration / 4)
    lecturer_query = f"classroom=1&presenter={opts.presenter_key}" if opts.presenter_key else "classroom=1"
    actors = [Actor("lecturer", True, 0.0, random.Random(rng.random()), url, lecturer_query)]
    actors += [Actor(f"student{i}", False, rng.uniform(0, join_window), random.Random(rng.random()), url, "")
               for i in range(opts.students)]
    rss, loads = [], [load1()]

    async def sample() -> None:
        while True:
            if pid:
                rss.append(rss_mb(pid))
            loads.append(load1())
            await asyncio.sleep(1.0)

    sampler = asyncio.create_task(sample())
    cpu0, bench0, t0 = cpu_seconds(pid) if pid else None, time.process_time(), time.monotonic()
    t_end = t0 + opts.duration
    await asyncio.gather(*(a.run(t0, t_end, opts) for a in actors))
    wall = time.monotonic() - t0
    cpu1 = cpu_seconds(pid) if pid else None
    await asyncio.gather(*(a.close() for a in actors))
    sampler.cancel()
    students = actors[1:]
    errors = [e for a in actors for e in a.errors]
    tried = sum(a.settings_tried for a in students)
    return {
        "lecturer_page_s": summary(actors[0].latencies),
        "student_page_s": summary([x for a in students for x in a.latencies]),
        "pages_opened": sum(a.visits for a in actors),
        "students_loaded": sum(a.loaded for a in students),
        "settings_tried": tried,
        "messages_per_setting_tried": round(sum(a.sent_for_settings for a in students) / tried, 3) if tried else None,
        "messages_sent": sum(a.sent for a in actors),
        "errors": len(errors),
        "error_samples": sorted(set(errors))[:5],
        "server_cpu_pct": round(100 * (cpu1 - cpu0) / wall, 1) if pid else None,
        "rss_peak_mb": round(max(rss), 1) if rss else None,
        "load_avg_during": {"start": loads[0], "max": max(loads), "end": load1()},
        "bench_cpu_pct": round(100 * (time.process_time() - bench0) / wall, 1),
        "wall_s": round(wall, 1),
    }


def chromium_moves(url: str, pid, n: int) -> dict:
    """Training dynamics in Chromium: G moved n times with the keyboard; the server's CPU over those moves and the
    websocket frames the page sent (each move waits until the page shows it)."""
    from playwright.sync_api import sync_playwright

    from tests.fixtures.serve import launch_chromium
    from tests.fixtures.viewpage import move, shown

    frames = []
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(120_000)
            page.on("websocket", lambda ws: ws.on("framesent", lambda f: frames.append(f)))
            page.goto(f"{url}/training?seeds=4")
            shown(page, timeout=120_000)
            time.sleep(1.0)
            idle0, t_idle = cpu_seconds(pid), time.monotonic()
            time.sleep(3.0)
            idle_rate = (cpu_seconds(pid) - idle0) / (time.monotonic() - t_idle)  # the server's own ticking
            sent0, cpu0, t0 = len(frames), cpu_seconds(pid), time.monotonic()
            for _ in range(n):
                move(page, "G", 1)
            wall = time.monotonic() - t0
            spent = cpu_seconds(pid) - cpu0
        finally:
            browser.close()
    return {"moves": n, "frames_sent": len(frames) - sent0, "server_cpu_ms_per_move": round(1000 * spent / n, 2),
            "server_idle_cpu_ms_per_move": round(1000 * idle_rate * wall / n, 2), "wall_s": round(wall, 1)}


async def warm_up(url: str, timeout: float) -> None:
    """One visit to each view (first imports, first runs), then leave: the server is then "idle"."""
    for view in VIEWS:
        tab = Tab(url, view)
        t = time.monotonic()
        await tab.open(timeout)
        ok = await tab.wait_full_run(t, timeout)
        await tab.close()
        if not ok or tab.stats.errors:
            raise RuntimeError(f"warm-up visit to /{view} failed: {tab.stats.errors or 'timeout'}")


class OneLineParser(argparse.ArgumentParser):
    def error(self, message: str):
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(2)


def positive(kind):
    def parse(text: str):
        try:
            x = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not x > 0 or x != x:
            raise argparse.ArgumentTypeError(f"{text!r} must be > 0")
        return x

    return parse


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = OneLineParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    where = p.add_mutually_exclusive_group()
    where.add_argument("--url", help="a running app, e.g. http://127.0.0.1:8501")
    where.add_argument("--start-server", action="store_true", help="start `streamlit run app.py` on a free port")
    p.add_argument("--server-pid", type=positive(int), nargs="+",
                   help="with --url: the server's PID (several: serve.sh's servers, summed), for CPU and RSS")
    p.add_argument("--students", type=int, help="number of students (default 100; --check 1000)")
    p.add_argument("--duration", type=positive(float), help="seconds of class (default 60)")
    p.add_argument("--setting-every", type=positive(float), help="s between a student's settings tried (default 10)")
    p.add_argument("--visit-every", type=positive(float), help="s between a student's pages (default 60)")
    p.add_argument("--lecturer-every", type=positive(float), default=2.0, help="s between the lecturer's pages")
    p.add_argument("--lecturer-new-tabs", action="store_true",
                   help="the lecturer opens each page in a fresh tab (a new session), not from the navigation")
    p.add_argument("--settle", type=float, help="s to wait after the class for the RSS (default 120)")
    p.add_argument("--timeout", type=positive(float), default=60.0, help="s before a page that has not loaded fails")
    p.add_argument("--chromium-moves", type=int, help="also move G this many times in Chromium (default 0; --check 20)")
    p.add_argument("--seed", type=int, default=0, help="seed of the joins, phases and pages (default 0)")
    p.add_argument("--json-out", type=Path, help="also write the JSON line to this file")
    p.add_argument("--presenter-key", default=os.environ.get("GRPO_PRESENTER_KEY", ""),
                   help="with --url: the server's presenter key, for the lecturer's priority (default "
                        "$GRPO_PRESENTER_KEY; without it the lecturer queues as a student)")
    add_arguments(p)
    opts = p.parse_args(argv)
    for name, value in (CHECK_DEFAULTS if opts.check else DEFAULTS).items():
        if getattr(opts, name) is None:
            setattr(opts, name, value)
    if not (opts.url or opts.start_server):
        if not opts.check:
            p.error("one of the arguments --url --start-server is required")
        opts.start_server = True
    if opts.students < 0:
        p.error(f"--students must be >= 0, got {opts.students}")
    if opts.chromium_moves < 0:
        p.error(f"--chromium-moves must be >= 0, got {opts.chromium_moves}")
    if not opts.settle >= 0:
        p.error(f"--settle must be >= 0, got {opts.settle}")
    if opts.url and not re.fullmatch(r"https?://[^/\s]+/?", opts.url):
        p.error(f"--url must look like http://HOST:PORT, got {opts.url!r}")
    for pid in opts.server_pid or ():
        if not Path(f"/proc/{pid}/stat").exists():
            p.error(f"--server-pid {pid}: no such process")
    if opts.chromium_moves and not (opts.start_server or opts.server_pid):
        p.error("--chromium-moves needs the server's PID: --start-server or --server-pid")
    if opts.json_out and not opts.json_out.parent.is_dir():
        p.error(f"--json-out: folder {opts.json_out.parent} does not exist")
    return opts


def tracebacks(log_text: str) -> list[str]:
    """The last line of each traceback in the server's log (its exception)."""
    out = []
    for block in log_text.split("Traceback (most recent call last):")[1:]:
        lines = [ln for ln in block.splitlines() if ln and not ln.startswith((" ", "\t"))]
        out.append(lines[0][:200] if lines else "?")
    return out


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    try:
        return measure(opts)
    except (OSError, RuntimeError, WebSocketException) as e:  # no server, a refused connection, a failed warm-up
        print(f"error: the class could not run against {opts.url or 'the server it started'}: {e}", file=sys.stderr)
        return 1


def measure(opts: argparse.Namespace) -> int:
    log = tempfile.TemporaryFile()
    proc, url, pid = None, opts.url, tuple(opts.server_pid or ()) or None
    if opts.start_server:
        opts.presenter_key = secrets.token_urlsafe(16)
        proc = start_server(log=log, env={"GRPO_PRESENTER_KEY": opts.presenter_key})
        url, pid = proc.url, proc.pid
    result = {}
    try:
        result = {"students": opts.students, "duration_s": opts.duration, "setting_every_s": opts.setting_every,
                  "visit_every_s": opts.visit_every, "lecturer_every_s": opts.lecturer_every,
                  "lecturer_navigates": not opts.lecturer_new_tabs,
                  "lecturer_has_priority": bool(opts.presenter_key), "seed": opts.seed, "url": url}
        result["rss_start_mb"] = round(rss_mb(pid), 1) if pid else None
        asyncio.run(warm_up(url, opts.timeout))
        time.sleep(2.0)
        result["rss_idle_mb"] = round(rss_mb(pid), 1) if pid else None
        if opts.chromium_moves:
            result["chromium"] = chromium_moves(url, pid, opts.chromium_moves)
        result |= asyncio.run(run_class(opts, url, pid))
        t_left = time.monotonic()
        while (rest := opts.settle - (time.monotonic() - t_left)) > 0:
            time.sleep(min(30.0, rest))
        result |= {"settle_s": opts.settle, "rss_after_settle_mb": round(rss_mb(pid), 1) if pid else None}
        result["load_avg_after"] = load1()
    finally:
        if proc is not None:
            proc.stop()
            log.seek(0)
            found = tracebacks(log.read().decode(errors="replace"))
            result |= {"server_log_tracebacks": len(found), "server_log_samples": sorted(set(found))[:3]}
    line = json.dumps(result)
    print(line)
    if opts.json_out:
        opts.json_out.write_text(line + "\n")
    checked = report(opts, result).finish(opts)
    return 0 if result["errors"] == 0 and checked == 0 else 1


def report(opts: argparse.Namespace, result: dict) -> Report:
    lecturer, students, moves = result["lecturer_page_s"], result["student_page_s"], result.get("chromium") or {}
    r = Report("classroom", "A class on the views the browser computes")
    r.add("lecturer: the next page shown (p95)", lecturer["p95"], "s", target=1)
    r.add("lecturer (p50)", lecturer["p50"], "s")
    r.add("students: a page shown (p95)", students["p95"], "s", target=5)
    r.add("errors (pages not shown, failed pages, server tracebacks)", result["errors"] +
          result.get("server_log_tracebacks", 0))
    r.add("students whose page loaded", result["students_loaded"])
    r.add("messages a tried setting sends the server", result["messages_per_setting_tried"])
    r.add("server CPU per control move in Chromium (G, the page's own redraw)", moves.get("server_cpu_ms_per_move"),
          "ms", target=3)
    r.add("  of which the server's idle ticking over the same time", moves.get("server_idle_cpu_ms_per_move"), "ms")
    r.add("websocket frames the page sent for those moves", moves.get("frames_sent"))
    r.add("server CPU (% of one core)", result.get("server_cpu_pct"), "%")
    r.add("server RSS idle", result.get("rss_idle_mb"), "MB")
    r.add("server RSS peak", result.get("rss_peak_mb"), "MB")
    settled = opts.settle >= 120 and result.get("rss_after_settle_mb") is not None and result["rss_idle_mb"]
    r.add(f"server RSS {opts.settle:.0f} s after the class, over idle",
          round(result["rss_after_settle_mb"] - result["rss_idle_mb"], 1) if settled else None, "MB",
          target=50 if opts.settle >= 120 else None)
    where = "a server it started (as docs/serving.md starts it)" if opts.start_server else opts.url
    r.note(f"{opts.students} students and a lecturer, headless tabs (scripts/st_client.py) against {where} for "
           f"{opts.duration:g} s: each student opens a view, tries a setting every {opts.setting_every:g} s (computed "
           f"in the page: nothing sent) and opens another view every {opts.visit_every:g} s; the lecturer opens the "
           f"next view every {opts.lecturer_every:g} s "
           f"{'in a fresh tab' if opts.lecturer_new_tabs else 'from the navigation (the same session)'}; the "
           f"students join in the first {min(10.0, opts.duration / 4):g} s. The control move's CPU: Chromium moving G "
           f"{moves.get('moves', 0)} times on the same server before the class.")
    return r


if __name__ == "__main__":
    raise SystemExit(main())
