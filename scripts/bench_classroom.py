"""A class against one server: N headless students and a lecturer on the Training dynamics page.

    OMP_NUM_THREADS=1 python scripts/bench_classroom.py --start-server --students 20
    python scripts/bench_classroom.py --url http://127.0.0.1:8501 --server-pid 1234 --students 10 --settle 0
    OMP_NUM_THREADS=1 python scripts/bench_classroom.py --start-server --students 200 --move seed --setting-every 10
    python scripts/bench_classroom.py --url http://127.0.0.1:8501 --server-pid 11 12 --students 300 --move seed
                                                             # through scripts/serve.sh: every server's PID
    OMP_NUM_THREADS=1 python scripts/bench_classroom.py --check     # the class target, 30 s, no settle (CI)

Each participant is a `scripts.st_client.Tab`: a websocket client that sends what Chromium sends (see
that module). Students join at seeded random moments in the first seconds, press Play, and every
`--setting-every` s (each with its own random phase, +-10%) move the `--move` slider (G by default; seed,
lr, d_max, ...: any slider of the page) to a new random value on its grid, never one of their last three; the
lecturer (who opens the page with `?classroom=1&presenter=KEY`: the server's presenter key, ui/presenter.py; the
bench sets it on a server it starts, --presenter-key or $GRPO_PRESENTER_KEY otherwise) does the same every
`--lecturer-every` s, walking G
through 4..32. "Press Play" clicks the page's Streamlit button labelled Play when it is not already
playing (Reset first if the run reached its end), at the start and again 1-3 s after the animation
stops; a page without such a button plays in the browser, so pressing Play sends nothing. A
participant's next change waits until its previous one has shown.

"New data arrived" = the first chart element (`plotly_chart`, a custom component, ...; see
`st_client.CHART_KINDS`) whose bytes contain the new value as `G = 9` (chart title) or `"G": 9` (JSON)
(`--move seed`: `(seed 123)`, the charts' titles), in a script run that started after the change was sent;
for a setting the charts do not print (lr, d_max, ...) any chart of such a run counts. The time from sending
to that message is the latency. A change that shows no such chart within `--timeout` s is an error: if the
page stops carrying G in its chart data, the bench fails loudly rather than timing the wrong message.

Prints one JSON line (and writes it to --json-out): server CPU (% of one core, /proc/PID/stat over the class),
finished fragment runs (= frames while playing) and full runs per second, latency p50/p95/max for the lecturer
and the students, errors, server RSS (at start, idle after one warm-up visit, peak, after --settle s) and its
worker processes' PSS (idle, after --settle s), load average, and the bench's own CPU (it shares the machine).
Rates and CPU cover the --duration s of class, `students_loaded` how many students' pages finished loading before it
ended (a page still loading then is not an error, so read the two together); a change still waiting at the end is
waited for (up to --timeout, the class still connected and playing) so that every change ends with a latency or a
timeout. Exit code 0 when there was no error, 1 otherwise (or when the server cannot be reached), 2 for bad flags.

Then the figures beside the targets: the lecturer's p95 under 1 s and the students' under 5 s, and with
--settle 120 or more the server's RSS back within 50 MB of idle. --check runs the class target on a server it
starts (200 students each trying their own seed every 10 s, the lecturer moving G every 2 s, 30 s, no settle:
flags given with it still count) and also exits 1 when a target is missed by more than 2x; --write-docs writes
the figures into docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
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
from tests.fixtures.serve import start_server  # noqa: E402

KEY = "G"  # the setting the lecturer (and by default every student) changes: it is printed on the charts
DEFAULTS = {"move": KEY, "students": 10, "duration": 60.0, "setting_every": 20.0, "settle": 120.0}
CHECK_DEFAULTS = {"move": "seed", "students": 200, "duration": 30.0, "setting_every": 10.0, "settle": 0.0}
LECTURER_G = range(4, 33)


def data_pattern(key: str, value) -> re.Pattern:
    """`G = 9` or `"G": 9` (also 9.0), not `G = 90` and not `xG = 9`."""
    v = re.escape(str(int(value)) if float(value).is_integer() else str(value))
    return re.compile(rb'(?<![\w])"?' + key.encode() + rb'"?\s*[=:]\s*' + v.encode() + rb"(?:\.0+)?(?![\d.])")


# ---- the server process ----
def cpu_seconds(pid: int | tuple[int, ...]) -> float:
    """utime + stime of the process (all its threads), from /proc/PID/stat; summed over a tuple of PIDs."""
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


def descendants(pid: int | tuple[int, ...]) -> list[int]:
    """Every process below the server(s): the workers of ui/work.py and TinyLM, and their fork server."""
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                parent = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue  # gone meanwhile
            children.setdefault(parent, []).append(int(d.name))
    out, todo = [], list(pid) if isinstance(pid, tuple) else [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def tree_cpu_seconds(pid: int | tuple[int, ...]) -> float:
    """CPU seconds of every process below the server(s) (their workers): the numpy work a server hands out."""
    total = 0.0
    for child in descendants(pid):
        try:
            total += cpu_seconds(child)
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
    return total


def workers_pss_mb(pid: int | tuple[int, ...]) -> float:
    """Proportional memory (PSS, /proc/PID/smaps_rollup) of the processes below the server(s), summed. PSS, not
    RSS: the workers are forked from one preloaded fork server and share its pages, which RSS would count once
    per worker."""
    total = 0.0
    for child in descendants(pid):
        try:
            for line in Path(f"/proc/{child}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1]) / 1024
                    break
        except OSError:
            continue  # a worker replaced meanwhile
    return total


def move_pattern(key: str, value) -> re.Pattern:
    """What marks the new data of `key` = value: a page computed in the browser sends its config (`"group_size": 9`,
    `"seed": 123`); one computed on the server printed G as `G = 9` and the seed as `(seed 123)` in its charts'
    titles. Other settings are not printed, so any chart (of a run started after the change) counts."""
    if key == "G":
        return re.compile(data_pattern(key, value).pattern + rb"|" + data_pattern("group_size", value).pattern)
    if key == "seed":
        return re.compile(rb"\(seed " + str(int(value)).encode() + rb"\)|" + data_pattern("seed", value).pattern)
    return re.compile(rb"")


def load1() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


# ---- one participant ----
@dataclass
class Actor:
    name: str
    lecturer: bool
    key: str  # the slider this participant moves
    period: float
    join_at: float  # seconds after the class starts
    rng: random.Random
    tab: Tab
    latencies: list[float] = field(default_factory=list)
    sent_at: list[float] = field(default_factory=list)  # when each measured change was sent (monotonic)
    timeouts: int = 0
    errors: list[str] = field(default_factory=list)
    play_clicks: int = 0
    present_s: float = 0.0
    loaded: bool = False  # the page finished its first run (before the class ended)
    _recent: list[int] = field(default_factory=list)

    def next_value(self, lo: float, hi: float, step: float, current: float) -> float:
        if self.lecturer:  # walk 4, 5, ..., 32, 4, ...: a value comes back only after 29 changes
            ring = [g for g in LECTURER_G if lo <= g <= hi]
            return ring[(ring.index(current) + 1) % len(ring)] if current in ring else ring[0]
        n = int(round((hi - lo) / step)) + 1  # grid points lo, lo + step, ..., hi
        index = {int(round((v - lo) / step)) for v in (current, *self._recent)}
        choices = [i for i in range(n) if i not in index] if n <= 64 else None
        i = self.rng.choice(choices) if choices else self.rng.randrange(n)
        while choices is None and i in index:  # a big grid (the seed): draw again on a repeat
            i = self.rng.randrange(n)
        value = round(lo + i * step, 10)
        value = int(value) if float(value).is_integer() and float(step).is_integer() else value
        self._recent = [value, *self._recent][:3]
        return value

    async def ensure_playing(self, timeout: float) -> None:
        """Press Play as a user would: only if the page has a Streamlit Play button and is not playing."""
        tab = self.tab
        play = tab.button("Play")
        if play is None or tab.playing:
            return  # None: the player runs in the browser, pressing Play sends nothing
        if play.disabled:  # the run reached its last iteration: Reset, wait for the page, then Play
            sent = await tab.click("Reset")
            if sent is None or not await tab.wait_full_run(sent, timeout):
                return
            await asyncio.sleep(self.rng.uniform(0.3, 1.0))
        if await tab.click("Play") is not None:
            self.play_clicks += 1

    async def run(self, t0: float, t_end: float, timeout: float) -> None:
        await asyncio.sleep(max(0.0, t0 + self.join_at - time.monotonic()))
        opened = time.monotonic()
        try:
            await self.tab.open(timeout)
        except Exception as e:  # noqa: BLE001 - a refused or failed connection is a measured error
            self.errors.append(f"connect: {type(e).__name__}: {e}"[:200])
            return
        try:
            await self._session(opened, t_end, timeout)
        finally:
            self.present_s = max(0.0, min(time.monotonic(), t_end) - opened)

    async def _session(self, opened: float, t_end: float, timeout: float) -> None:
        tab = self.tab
        if not await tab.wait_full_run(opened, min(timeout, max(0.1, t_end - time.monotonic()))):
            if time.monotonic() < t_end:
                self.errors.append("timeout: the page did not finish loading")
            return
        self.loaded = True
        slider = tab.widget(self.key)
        if slider is None or slider.kind != "slider":
            self.errors.append(f"no {self.key} slider on the page")
            return
        lo, hi, step = slider.proto.min, slider.proto.max, slider.proto.step or 1.0
        current = slider.proto.value[0] if slider.proto.set_value else slider.proto.default[0]
        await asyncio.sleep(self.rng.uniform(0.5, 2.0))  # finding the Play button
        await self.ensure_playing(timeout)
        next_change = time.monotonic() + (self.period if self.lecturer else self.rng.uniform(0.1, 1.0) * self.period)
        while next_change < t_end:
            await self.watch_until(next_change, timeout)
            current = self.next_value(lo, hi, step, current)
            since = time.monotonic()
            shown = tab.expect(move_pattern(self.key, current), since)
            sent = await tab.set_value(self.key, current)
            try:  # past the end of the class too: a change made is waited for (the others keep playing)
                arrived = await asyncio.wait_for(shown, timeout)
            except TimeoutError:
                self.timeouts += 1
                self.errors.append(f"timeout: {self.key} = {current} showed no new chart in {timeout:.0f} s")
                next_change = time.monotonic()
                continue
            self.latencies.append(arrived - sent)
            self.sent_at.append(sent)
            jitter = 1.0 if self.lecturer else self.rng.uniform(0.9, 1.1)
            next_change = max(sent + jitter * self.period, arrived)
        await self.watch_until(t_end, timeout)

    async def watch_until(self, when: float, timeout: float) -> None:
        """Watch the page; when the animation has stopped (the run reached its end), play it again."""
        while (now := time.monotonic()) < when:
            await asyncio.sleep(min(0.5, when - now))
            play = self.tab.button("Play")
            if play is not None and not self.tab.playing and self.tab.idle and time.monotonic() < when:
                await asyncio.sleep(min(self.rng.uniform(1.0, 3.0), max(0.0, when - time.monotonic())))
                await self.ensure_playing(timeout)


def summary(values: list[float], timeouts: int) -> dict:
    """Latency percentiles over the changes that showed; `timeouts` did not within --timeout."""
    out = {"n": len(values), "timeouts": timeouts, "p50": None, "p95": None, "max": None}
    if values:
        p50, p95 = np.percentile(values, [50, 95])
        out |= {"p50": round(float(p50), 3), "p95": round(float(p95), 3), "max": round(max(values), 3)}
    return out


# ---- the class ----
async def run_class(opts: argparse.Namespace, url: str, pid: int | None) -> dict:
    rng = random.Random(opts.seed)
    join_window = min(10.0, opts.duration / 4)
    # the projected screen: presenter sizes, and the lecturer's priority if the bench knows the server's key
    query = f"classroom=1&presenter={opts.presenter_key}" if opts.presenter_key else "classroom=1"
    lecturer_tab = Tab(url, opts.page, query)
    actors = [Actor("lecturer", True, KEY, opts.lecturer_every, 0.0, random.Random(rng.random()), lecturer_tab)]
    for i in range(opts.students):
        join_at, seeded = rng.uniform(0, join_window), random.Random(rng.random())
        actors.append(Actor(f"student{i}", False, opts.move, opts.setting_every, join_at, seeded, Tab(url, opts.page)))

    rss_samples, load_samples = [], [load1()]

    async def sample() -> None:
        while True:
            if pid:
                rss_samples.append(rss_mb(pid))
            load_samples.append(load1())
            await asyncio.sleep(1.0)

    end = {}

    async def snapshot() -> None:  # rates and CPU cover the class itself, not the wait for late answers
        await asyncio.sleep(max(0.0, t_end - time.monotonic()))
        end.update(wall=time.monotonic() - t0, cpu=cpu_seconds(pid) if pid else None, bench=time.process_time(),
                   workers=tree_cpu_seconds(pid) if pid else None)
        end["tabs"] = [copy.copy(a.tab.stats) for a in actors]

    sampler = asyncio.create_task(sample())
    cpu0, bench0, t0 = cpu_seconds(pid) if pid else None, time.process_time(), time.monotonic()
    workers0 = tree_cpu_seconds(pid) if pid else None
    t_end = t0 + opts.duration
    await asyncio.gather(snapshot(), *(a.run(t0, t_end, opts.timeout) for a in actors))
    drain = time.monotonic() - t_end
    await asyncio.gather(*(a.tab.close() for a in actors))
    sampler.cancel()

    wall, tabs, students = end["wall"], end["tabs"], actors[1:]
    frames = sum(t.fragment_runs for t in tabs[1:])
    present = sum(a.present_s for a in students)
    errors = [e for a in actors for e in a.errors + a.tab.stats.errors]
    moved = sum(1 for a in students for at in a.sent_at if at <= t_end) + sum(a.timeouts for a in students)
    cpu = {}
    if pid:  # the server's own CPU and its workers' (a page's numpy ran there), per student move of the class
        cpu = {"server_cpu_s": round(end["cpu"] - cpu0, 2), "workers_cpu_s": round(end["workers"] - workers0, 2)}
        spent = cpu["server_cpu_s"] + cpu["workers_cpu_s"]
        cpu["cpu_s_per_student_move"] = round(spent / moved, 4) if moved else None
    return {
        **cpu, "student_moves_in_class": moved,
        "server_cpu_pct": round(100 * (end["cpu"] - cpu0) / wall, 1) if pid else None,
        "fragment_runs_per_s": round(sum(t.fragment_runs for t in tabs) / wall, 2),
        "frames_per_student_per_s": round(frames / present, 3) if present else None,
        "full_runs_per_s": round(sum(t.full_runs for t in tabs) / wall, 2),
        "interrupted_runs_per_s": round(sum(t.interrupted_runs for t in tabs) / wall, 2),
        "lecturer_latency_s": summary(actors[0].latencies, actors[0].timeouts),
        "lecturer_changes": [[round(at - t0, 1), round(x, 3)] for at, x in zip(actors[0].sent_at, actors[0].latencies,
                                                                               strict=True)],
        "student_latency_s": summary([x for a in students for x in a.latencies], sum(a.timeouts for a in students)),
        "students_loaded": sum(a.loaded for a in students),  # the others' page had not loaded when the class ended
        "errors": len(errors),
        "error_samples": sorted(set(errors))[:5],
        "play_clicks": sum(a.play_clicks for a in actors),
        "messages_sent": sum(t.sent for t in tabs),
        "waits_shown": sum(t.waits_shown for t in tabs),  # status lines: a setting waiting, and how many ahead
        "mb_received": round(sum(t.bytes_received for t in tabs) / 2**20, 1),
        "rss_peak_mb": round(max(rss_samples), 1) if rss_samples else None,
        "load_avg_during": {"start": load_samples[0], "max": max(load_samples), "end": load1()},
        "bench_cpu_pct": round(100 * (end["bench"] - bench0) / wall, 1),
        "drain_s": round(drain, 1),
    }


async def warm_up(url: str, page: str, timeout: float) -> None:
    """One visit to the page (first imports, first run), then leave: the server is then "idle"."""
    tab = Tab(url, page)
    t = time.monotonic()
    await tab.open(timeout)
    ok = await tab.wait_full_run(t, timeout)
    await tab.close()
    if not ok or tab.stats.errors:
        raise RuntimeError(f"warm-up visit to /{page} failed: {tab.stats.errors or 'timeout'}")


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
    p.add_argument("--move", help="the slider (URL key) each student moves: G (default), seed, lr, ...")
    p.add_argument("--students", type=int, help="number of students (default 10)")
    p.add_argument("--duration", type=positive(float), help="seconds of class (default 60)")
    p.add_argument("--setting-every", type=positive(float), help="s between a student's changes (default 20)")
    p.add_argument("--lecturer-every", type=positive(float), default=2.0, help="s between the lecturer's changes")
    p.add_argument("--settle", type=float, help="s to wait after the class for the RSS (default 120)")
    p.add_argument("--timeout", type=positive(float), default=60.0, help="s before a change without new data fails")
    p.add_argument("--page", default="training", help="URL path of the page (default training)")
    p.add_argument("--seed", type=int, default=0, help="seed of the joins, phases and values (default 0)")
    p.add_argument("--json-out", type=Path, help="also write the JSON line to this file")
    p.add_argument("--presenter-key", default=os.environ.get("GRPO_PRESENTER_KEY", ""),
                   help="with --url: the server's presenter key, for the lecturer's priority (default "
                        "$GRPO_PRESENTER_KEY; without it the lecturer queues as a student)")
    add_arguments(p)
    opts = p.parse_args(argv)
    defaults = CHECK_DEFAULTS if opts.check else DEFAULTS
    for name, value in defaults.items():
        if getattr(opts, name) is None:
            setattr(opts, name, value)
    if not (opts.url or opts.start_server):
        if not opts.check:
            p.error("one of the arguments --url --start-server is required")
        opts.start_server = True
    if opts.students < 0:
        p.error(f"--students must be >= 0, got {opts.students}")
    if not opts.settle >= 0:
        p.error(f"--settle must be >= 0, got {opts.settle}")
    if opts.url and not re.fullmatch(r"https?://[^/\s]+/?", opts.url):
        p.error(f"--url must look like http://HOST:PORT, got {opts.url!r}")
    for pid in opts.server_pid or ():
        if not Path(f"/proc/{pid}/stat").exists():
            p.error(f"--server-pid {pid}: no such process")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", opts.move):
        p.error(f"--move must be a slider's URL key such as G, seed or lr, got {opts.move!r}")
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
        result = {"students": opts.students, "move": opts.move, "duration_s": opts.duration,
                  "setting_every_s": opts.setting_every, "lecturer_has_priority": bool(opts.presenter_key)}
        result |= {"lecturer_every_s": opts.lecturer_every, "page": opts.page, "seed": opts.seed, "url": url}
        result["rss_start_mb"] = round(rss_mb(pid), 1) if pid else None
        asyncio.run(warm_up(url, opts.page, opts.timeout))
        time.sleep(2.0)
        result["rss_idle_mb"] = round(rss_mb(pid), 1) if pid else None
        result["workers_pss_idle_mb"] = round(workers_pss_mb(pid), 1) if pid else None
        result |= asyncio.run(run_class(opts, url, pid))
        curve, t_left, cpu_left = [], time.monotonic(), cpu_seconds(pid) if pid else None  # the server left alone
        while (rest := opts.settle - (time.monotonic() - t_left)) > 0:
            time.sleep(min(30.0, rest))
            curve.append(round(rss_mb(pid), 1) if pid else None)
        result |= {"settle_s": opts.settle, "rss_after_settle_mb": round(rss_mb(pid), 1) if pid else None}
        result["workers_pss_after_settle_mb"] = round(workers_pss_mb(pid), 1) if pid else None
        result["rss_settle_every_30s_mb"] = curve
        if pid and opts.settle > 0:
            result["server_cpu_pct_settle"] = round(100 * (cpu_seconds(pid) - cpu_left) / opts.settle, 1)
        if pid:  # the peak of the whole visit, the settle included
            result["rss_peak_mb"] = max(result["rss_peak_mb"], result["rss_after_settle_mb"], *curve)
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
    lecturer, students = result["lecturer_latency_s"], result["student_latency_s"]
    r = Report("classroom", "A class on the Training dynamics page")
    r.add("lecturer: G moved, the new chart shown (p95)", lecturer["p95"], "s", target=1)
    r.add("lecturer (p50)", lecturer["p50"], "s")
    r.add(f"students: {opts.move} moved, the new chart shown (p95)", students["p95"], "s", target=5)
    r.add("students (p50)", students["p50"], "s")
    r.add("errors (changes never shown, failed pages, server tracebacks)", result["errors"] +
          result.get("server_log_tracebacks", 0))
    r.add("students whose page loaded", result["students_loaded"])
    r.add("server CPU (% of one core)", result.get("server_cpu_pct"), "%")
    r.add(f"server CPU per student move (its workers' included; {result.get('student_moves_in_class')} moves)",
          result.get("cpu_s_per_student_move"), "s")
    r.add("server RSS idle", result.get("rss_idle_mb"), "MB")
    r.add("server RSS peak", result.get("rss_peak_mb"), "MB")
    settled = opts.settle >= 120 and result["rss_after_settle_mb"] is not None and result["rss_idle_mb"] is not None
    r.add(f"server RSS {opts.settle:.0f} s after the class, over idle",
          round(result["rss_after_settle_mb"] - result["rss_idle_mb"], 1) if settled else None, "MB",
          target=50 if opts.settle >= 120 else None)
    where = "a server it started (as docs/serving.md starts it)" if opts.start_server else opts.url
    r.note(f"{opts.students} students and a lecturer, headless tabs (scripts/st_client.py) against {where}: each "
           f"student moves {opts.move} every {opts.setting_every:g} s, the lecturer G every {opts.lecturer_every:g} "
           f"s, for {opts.duration:g} s; the RSS after the class is measured only with --settle 120 or more.")
    return r


if __name__ == "__main__":
    raise SystemExit(main())
