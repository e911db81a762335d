"""Class mode with a class of N on one server: the lecturer leads, asks, reveals; every student follows and guesses.

    OMP_NUM_THREADS=1 python scripts/bench_class_mode.py --check            # 1,000 students (the issue's class)
    OMP_NUM_THREADS=1 python scripts/bench_class_mode.py --students 200 --no-pages
    python scripts/bench_class_mode.py --url http://127.0.0.1:8501 --server-pid 1234 --presenter-key KEY

What the browser's class mode (assets/js/class_mode.js) sends and receives, emulated: each student is a headless tab
of the app (scripts/st_client.py: the page opened over its websocket, as Chromium opens it) that joins the class and
keeps its event stream open (ui/classroom_routes.py), read here on a raw connection so that each message's arrival
is timed; the lecturer is a tab that showed the presenter key, whose component hands it the lecturer token, with
its board stream open. Students open the class link at seeded random moments over --join-window s. Then:

1. the lecturer moves G --follows times, one move every --follow-every s: the time from the lecturer's post to each
   student's stream bringing the new setting is a follow's latency;
2. the lecturer asks a question; each student sends one guess (a distinct number) at a random moment over
   --guess-window s: the time from a guess's post to the first board message that counts it is the histogram's
   latency; then the lecturer reveals, and the Reveal's latency is timed as a follow's;
3. (unless --no-page-follow) the lecturer opens another page from the app's navigation: each student's page asks
   for that view's declaration and draws it in place, as the page's class mode does; the time from the lecturer's
   post to the declaration in the student's hands is timed.

A student's page applies a follow in the browser, with no server work: what is timed is the server's part, up to
the student's machine. Errors: a refused request, a lost stream, a follow or a Reveal a student never received, a
guess never counted, a page not shown within --timeout s, a traceback in the server's log. Prints one JSON line
(also to --json-out), then the figures beside the targets (each latency's p95 under 2 s, no error); exit 0 with no
error, 1 otherwise, 2 for bad flags; --check exits 1 when a target is missed by more than 2x; --write-docs writes
the figures into docs/benchmarks.md.
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
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts.bench_classroom import (  # noqa: E402  (the class's figures as bench_classroom.py takes them)
    OneLineParser,
    cpu_seconds,
    load1,
    positive,
    rss_mb,
    summary,
    tracebacks,
    warm_up,
)
from scripts.benchdoc import Report, add_arguments  # noqa: E402
from scripts.st_client import Tab  # noqa: E402
from tests.fixtures.serve import start_server  # noqa: E402

API = "/_class"
# What the pages' class mode (assets/js/class_mode.js) sends, by kind: the method, the path under API and the keys of
# its JSON body. The bench sends exactly these (sent() checks); tests/test_class_mode_browser.py records a class in
# Chromium and finds the same.
SENDS = {
    "open": ("POST", "/open", set()), "mine": ("GET", "/mine", None), "board": ("GET", "/{code}/board", None),
    "lead": ("POST", "/{code}/lead", {"lead"}), "ask": ("POST", "/{code}/ask", {"question"}),
    "reveal": ("POST", "/{code}/reveal", {"poll"}), "again": ("POST", "/{code}/again", {"poll"}),
    "close": ("POST", "/{code}/close", set()),
    "join": ("POST", "/{code}/join", {"id"}), "events": ("GET", "/{code}/events?id={id}", None),
    "guess": ("POST", "/{code}/guess", {"id", "poll", "round", "guess"}), "view": ("GET", "/views/{view}", None),
}
LEAD_KEYS = {"view", "predict", "query", "players"}
VIEW, NEXT_VIEW = "wasted", "training"
QUESTION = {"text": "A prompt is solved 5% of the time (p = 0.05). With G = 8, in what share of its groups does at "
                    "least one answer differ from the rest?", "kind": "number", "lo": 0, "hi": 100, "unit": "%"}
DEFAULTS = {"students": 200, "follows": 10}
CHECK_DEFAULTS = {"students": 1000, "follows": 10}


def path(kind: str, **where) -> str:
    return API + SENDS[kind][1].format(**where)


# ---- HTTP on raw connections: the arrival of each event is what is timed ----
class Http:
    """One keep-alive connection for a participant's posts (as a browser's fetch reuses one)."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader = self.writer = None

    async def post(self, path: str, body: dict | None, token: str = "", method: str = "POST") -> tuple[int, dict]:
        data = b"" if body is None else json.dumps(body).encode()
        head = (f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n" +
                (f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n" if body is not None else "") +
                (f"X-Class-Token: {token}\r\n" if token else "") + "\r\n")
        for attempt in (0, 1):  # a keep-alive connection the server closed: once more on a new one
            try:
                if self.writer is None:
                    self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
                self.writer.write(head.encode() + data)
                status, headers = await read_head(self.reader)
                body_bytes = await self.reader.readexactly(int(headers.get("content-length", "0")))
                return status, json.loads(body_bytes or b"{}")
            except (OSError, asyncio.IncompleteReadError, ValueError):
                await self.close()
                if attempt:
                    raise
        raise AssertionError("unreachable")

    async def send(self, kind: str, body: dict | None = None, token: str = "", **where) -> tuple[int, dict]:
        """One of SENDS, as the page sends it."""
        method, _, keys = SENDS[kind]
        if (None if body is None else set(body)) != keys:
            raise AssertionError(f"{kind}: the pages send {keys}, not {body}")
        return await self.post(path(kind, **where), body, token, method)

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.reader = self.writer = None


async def read_head(reader) -> tuple[int, dict]:
    status_line = await reader.readline()
    if not status_line:
        raise OSError("connection closed")
    status = int(status_line.split()[1])
    headers = {}
    while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
        k, _, v = line.decode("latin-1").partition(":")
        headers[k.strip().lower()] = v.strip()
    return status, headers


async def stream(host: str, port: int, path: str, on_message, token: str = "") -> None:
    """Read the Server-Sent Events of `path` (chunked, as uvicorn sends them); on_message(arrival, message) for
    each. Returns when the server ends the stream; raises on a refusal."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write((f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: text/event-stream\r\n" +
                      (f"X-Class-Token: {token}\r\n" if token else "") + "\r\n").encode())
        status, headers = await read_head(reader)
        if status != 200:
            raise OSError(f"{path.split('?')[0]} answered {status}")
        buf = b""
        while True:
            size = int((await reader.readline()).strip() or b"0", 16)
            if size == 0:
                return
            buf += await reader.readexactly(size)
            await reader.readexactly(2)
            now = time.monotonic()
            *events, buf = buf.split(b"\n\n")
            for event in events:
                if event.startswith(b"data: "):
                    on_message(now, json.loads(event[6:]))
    finally:
        writer.close()


# ---- the participants ----
@dataclass
class Student:
    i: int
    join_at: float
    guess_at: float
    guess: float
    sid: str = ""
    tab: Tab | None = None
    seen: list[tuple[float, dict]] = field(default_factory=list)  # (arrival, message)
    guess_sent: float | None = None
    page_followed: float | None = None  # when the next page was shown
    errors: list[str] = field(default_factory=list)
    task: asyncio.Task | None = None


@dataclass
class Lecturer:
    token: str = ""
    code: str = ""
    boards: list[tuple[float, dict]] = field(default_factory=list)
    sent: dict[str, float] = field(default_factory=dict)  # what it did -> when
    errors: list[str] = field(default_factory=list)


def first_seen(s: Student, after: float, test) -> float | None:
    return next((t for t, m in s.seen if t >= after and test(m)), None)


async def run_class(opts, url: str, pid) -> dict:
    parts = urlsplit(url)
    host, port = parts.hostname, parts.port
    rng = random.Random(opts.seed)
    n = opts.students
    students = [Student(i, rng.uniform(0, opts.join_window), rng.uniform(0, opts.guess_window),
                        float(f"{(i + 0.5) * 100 / max(n, 1):.6g}")) for i in range(n)]  # distinct guesses
    lecturer = Lecturer()
    http = Http(host, port)

    # the lecturer's page: the presenter key gives its session the lecturer's token (ui/classroom_routes.py)
    tab = Tab(url, VIEW, f"classroom=1&presenter={opts.presenter_key}&predict=1")
    t = time.monotonic()
    await tab.open(opts.timeout)
    if not await tab.wait_full_run(t, opts.timeout):
        raise RuntimeError("the lecturer's page did not load")
    lecturer.token = (json.loads(tab.component_json or "{}").get("class_mode") or {}).get("lecturer") or ""
    if not lecturer.token:
        raise RuntimeError("the lecturer's page has no class token: is --presenter-key the server's key?")
    status, out = await http.send("open", {}, lecturer.token)
    if status != 200:
        raise RuntimeError(f"opening a class: {status} {out}")
    lecturer.code = code = out["code"]
    lead = {"view": VIEW, "predict": True, "query": "", "players": {}}
    assert set(lead) == LEAD_KEYS

    async def lead_to(query: str, view: str = VIEW) -> float:
        lead.update(query=query, view=view)
        t = time.monotonic()
        status, out = await http.send("lead", {"lead": lead}, lecturer.token, code=code)
        if status != 200:
            lecturer.errors.append(f"lead: {status} {out}")
        return t

    await lead_to("")
    on_board = lambda t, m: lecturer.boards.append((t, m))  # noqa: E731
    board = asyncio.create_task(stream(host, port, path("board", code=code), on_board, lecturer.token))
    cpu0, bench0, t0 = cpu_seconds(pid) if pid else None, time.process_time(), time.monotonic()
    rss = []

    async def join(s: Student) -> None:
        """As a page's class mode does: join (again, with its id, on a page the class followed), then the stream."""
        conn = Http(host, port)
        try:
            status, out = await conn.send("join", {"id": s.sid or None}, code=code)
            await conn.close()
            if status != 200:
                s.errors.append(f"join: {status} {out}")
                return
            s.sid = out["id"]
            await stream(host, port, path("events", code=code, id=s.sid), lambda t, m: s.seen.append((t, m)))
        except (OSError, asyncio.IncompleteReadError, ValueError) as e:
            s.errors.append(f"{type(e).__name__}: {e}"[:200])
        finally:
            await conn.close()

    async def student(s: Student) -> None:
        await asyncio.sleep(max(0.0, t0 + s.join_at - time.monotonic()))
        if opts.pages:
            s.tab = Tab(url, VIEW, f"class={code}&predict=1")
            t = time.monotonic()
            try:
                await s.tab.open(opts.timeout)
                if not await s.tab.wait_full_run(t, opts.timeout):
                    s.errors.append("timeout: the class link's page did not load")
            except (OSError, RuntimeError) as e:
                s.errors.append(f"page: {type(e).__name__}: {e}"[:200])
        await join(s)

    for s in students:
        s.task = asyncio.create_task(student(s))

    # everyone in: the board counts N joined (or the join window and --timeout have passed)
    deadline = t0 + opts.join_window + opts.timeout
    while time.monotonic() < deadline and not (lecturer.boards and lecturer.boards[-1][1]["joined"] >= n):
        rss.append(rss_mb(pid) if pid else 0.0)
        await asyncio.sleep(0.5)
    joined = lecturer.boards[-1][1]["joined"] if lecturer.boards else 0
    await asyncio.sleep(1.0)

    # 1. follows: G moved, one move every --follow-every s
    follows = []
    for k in range(opts.follows):
        query = f"G={9 + k}"
        follows.append((query, await lead_to(query)))
        rss.append(rss_mb(pid) if pid else 0.0)
        await asyncio.sleep(opts.follow_every)

    # 2. a question: asked, guessed by each student once, counted on the board, revealed
    status, out = await http.send("ask", {"question": QUESTION}, lecturer.token, code=code)
    lecturer.sent["ask"] = time.monotonic()
    poll = out["poll"]["id"] if status == 200 else None
    if poll is None:
        lecturer.errors.append(f"ask: {status} {out}")
    await asyncio.sleep(1.0)

    async def guess(s: Student, conn: Http) -> None:
        await asyncio.sleep(s.guess_at)
        if not s.sid:
            return
        s.guess_sent = time.monotonic()
        try:
            status, out = await conn.send("guess", {"id": s.sid, "poll": poll, "round": 1, "guess": s.guess}, code=code)
        except (OSError, asyncio.IncompleteReadError, ValueError) as e:
            status, out = 0, {"error": f"{type(e).__name__}: {e}"}
        if status != 200:
            s.errors.append(f"guess: {status} {out}"[:200])

    conns = [Http(host, port) for _ in students]
    if poll is not None:
        await asyncio.gather(*(guess(s, c) for s, c in zip(students, conns, strict=True)))
    for c in conns:
        await c.close()
    counted_by = time.monotonic() + 10.0
    while time.monotonic() < counted_by and not (lecturer.boards and
                                                  sum(lecturer.boards[-1][1]["polls"][0]["counts"]) >= joined):
        await asyncio.sleep(0.2)
    await asyncio.sleep(0.5)
    status, out = await http.send("reveal", {"poll": poll}, lecturer.token, code=code)
    lecturer.sent["reveal"] = time.monotonic()
    await asyncio.sleep(3.0)
    wall = time.monotonic() - t0
    cpu1 = cpu_seconds(pid) if pid else None

    # 3. the lecturer opens another page: each student's page follows it (a new page load, as class_mode.js does)
    page_follow = []
    if opts.page_follow:
        await tab.navigate(NEXT_VIEW)
        sent = await lead_to("", NEXT_VIEW)

        async def follow_page(s: Student) -> None:
            while first_seen(s, sent, lambda m: (m.get("lead") or {}).get("view") == NEXT_VIEW) is None:
                if time.monotonic() > sent + opts.timeout:
                    s.errors.append("the lecturer's page change never reached this student")
                    return
                await asyncio.sleep(0.05)
            # the page's class mode asks for the view's declaration and draws it in place: no script run
            conn = Http(host, port)
            try:
                status, out = await conn.send("view", view=NEXT_VIEW)
                if status == 200 and out.get("view") == NEXT_VIEW:
                    s.page_followed = time.monotonic()
                else:
                    s.errors.append(f"page follow: {status} {str(out)[:100]}")
            except (OSError, asyncio.IncompleteReadError, ValueError) as e:
                s.errors.append(f"page follow: {type(e).__name__}: {e}"[:200])
            finally:
                await conn.close()

        await asyncio.gather(*(follow_page(s) for s in students if s.sid))
        page_follow = [s.page_followed - sent for s in students if s.page_followed is not None]
    rss.append(rss_mb(pid) if pid else 0.0)

    # the end: the lecturer closes the class; every stream ends
    await http.send("close", {}, lecturer.token, code=code)
    await asyncio.wait([s.task for s in students], timeout=10)
    board.cancel()
    for s in students:
        if s.tab is not None:
            await s.tab.close()
    await tab.close()
    await http.close()
    return measured(opts, students, lecturer, follows, joined, page_follow) | {
        "server_cpu_pct": round(100 * (cpu1 - cpu0) / wall, 1) if pid else None,
        "rss_peak_mb": round(max(rss), 1) if pid and rss else None,
        "bench_cpu_pct": round(100 * (time.process_time() - bench0) / wall, 1), "wall_s": round(wall, 1)}


def measured(opts, students, lecturer, follows, joined, page_follow) -> dict:
    """The latencies from what each participant saw, and every error."""
    errors = list(lecturer.errors)
    follow_s, reveal_s, ask_s = [], [], []
    active = [s for s in students if s.sid]
    for s in active:
        for query, sent in follows:
            got = first_seen(s, sent, lambda m, q=query: (m.get("lead") or {}).get("query") == q)
            if got is None:
                errors.append(f"student {s.i} never received the follow {query}")
            else:
                follow_s.append(got - sent)
        for name, out, test in (("ask", ask_s, lambda m: bool(m.get("polls"))),
                                ("reveal", reveal_s, lambda m: any(p["revealed"] for p in m.get("polls", [])))):
            sent = lecturer.sent.get(name)
            got = first_seen(s, sent, test) if sent is not None else None
            if got is None:
                errors.append(f"student {s.i} never received the {name}")
            else:
                out.append(got - sent)
    # a guess is counted once a board message holds its value (each student's guess is a distinct number)
    counted_s, boards = [], [(t, {x for r in (m["polls"][0]["guesses"] or []) for x in r})
                             for t, m in lecturer.boards if m["polls"]]  # fmt: skip
    for s in active:
        if s.guess_sent is None:
            continue
        got = next((t for t, values in boards if t >= s.guess_sent and s.guess in values), None)
        if got is None:
            errors.append(f"student {s.i}'s guess never appeared on the board")
        else:
            counted_s.append(got - s.guess_sent)
    errors += [e for s in students for e in s.errors]
    follow_bytes = [len(json.dumps(m)) for s in active[:1] for _, m in s.seen[-3:]]
    return {
        "joined_on_board": joined, "students_in": len(active), "guesses_counted": len(counted_s),
        "guess_counted_s": summary(counted_s), "follow_s": summary(follow_s), "ask_s": summary(ask_s),
        "reveal_s": summary(reveal_s), "page_follow_s": summary(page_follow),
        "students_message_bytes": max(follow_bytes) if follow_bytes else None,
        "board_messages": len(lecturer.boards), "errors": len(errors), "error_samples": sorted(set(errors))[:5],
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = OneLineParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    where = p.add_mutually_exclusive_group()
    where.add_argument("--url", help="a running app, e.g. http://127.0.0.1:8501 (with --presenter-key)")
    where.add_argument("--start-server", action="store_true", help="start `streamlit run app.py` on a free port")
    p.add_argument("--server-pid", type=positive(int), help="with --url: the server's PID, for its CPU and RSS")
    p.add_argument("--presenter-key", default=os.environ.get("GRPO_PRESENTER_KEY", ""),
                   help="with --url: the server's presenter key (default $GRPO_PRESENTER_KEY)")
    p.add_argument("--students", type=int, help="the class's size (default 200; --check 1000)")
    p.add_argument("--follows", type=int, help="the lecturer's moves of G (default 10)")
    p.add_argument("--follow-every", type=positive(float), default=1.0, help="s between the lecturer's moves")
    p.add_argument("--join-window", type=positive(float), default=10.0, help="s over which the students join")
    p.add_argument("--guess-window", type=positive(float), default=5.0, help="s over which the students guess")
    p.add_argument("--no-pages", dest="pages", action="store_false",
                   help="students only join and stream, with no page of the app open (the class traffic alone)")
    p.add_argument("--no-page-follow", dest="page_follow", action="store_false",
                   help="leave out the lecturer's page change")
    p.add_argument("--timeout", type=positive(float), default=120.0, help="s before a page or a stream fails")
    p.add_argument("--seed", type=int, default=0, help="seed of the joins and the guesses' moments (default 0)")
    p.add_argument("--json-out", type=Path, help="also write the JSON line to this file")
    add_arguments(p)
    opts = p.parse_args(argv)
    for name, value in (CHECK_DEFAULTS if opts.check else DEFAULTS).items():
        if getattr(opts, name) is None:
            setattr(opts, name, value)
    if not (opts.url or opts.start_server):
        if not opts.check:
            p.error("one of the arguments --url --start-server is required")
        opts.start_server = True
    if opts.students < 1:
        p.error(f"--students must be >= 1, got {opts.students}")
    if not 1 <= opts.follows <= 50:
        p.error(f"--follows must be 1 to 50, got {opts.follows}")
    if opts.url and not re.fullmatch(r"http://[^/\s:]+:\d+/?", opts.url):
        p.error(f"--url must look like http://HOST:PORT, got {opts.url!r}")
    if opts.url and not opts.presenter_key:
        p.error("--url needs the server's --presenter-key (or GRPO_PRESENTER_KEY): the lecturer shows it")
    if opts.server_pid and not Path(f"/proc/{opts.server_pid}/stat").exists():
        p.error(f"--server-pid {opts.server_pid}: no such process")
    if opts.json_out and not opts.json_out.parent.is_dir():
        p.error(f"--json-out: folder {opts.json_out.parent} does not exist")
    return opts


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    try:
        return measure(opts)
    except (OSError, RuntimeError) as e:
        print(f"error: the class could not run against {opts.url or 'the server it started'}: {e}", file=sys.stderr)
        return 1


def measure(opts: argparse.Namespace) -> int:
    try:  # the class's thousands of connections cost the bench less on uvloop (the server runs it too)
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    log = tempfile.TemporaryFile()
    proc, url, pid = None, (opts.url or "").rstrip("/"), opts.server_pid
    if opts.start_server:
        opts.presenter_key = secrets.token_urlsafe(16)
        proc = start_server(log=log, env={"GRPO_PRESENTER_KEY": opts.presenter_key})
        url, pid = proc.url, proc.pid
    result = {"students": opts.students, "pages": opts.pages, "follows": opts.follows, "seed": opts.seed}
    try:
        asyncio.run(warm_up(url, opts.timeout))
        time.sleep(2.0)
        result["rss_idle_mb"] = round(rss_mb(pid), 1) if pid else None
        result |= asyncio.run(run_class(opts, url, pid))
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
    return 0 if result.get("errors", 1) == 0 and not result.get("server_log_tracebacks") and checked == 0 else 1


def report(opts: argparse.Namespace, result: dict) -> Report:
    r = Report("class_mode", "Class mode: a class following the lecturer, guessing, revealed")
    r.add("lecturer: a guess counted on the histogram (p95)", result["guess_counted_s"]["p95"], "s", target=2)
    r.add("students: the lecturer's setting followed (p95)", result["follow_s"]["p95"], "s", target=2)
    r.add("students: a question asked, reached (p95)", result["ask_s"]["p95"], "s", target=2)
    r.add("students: the lecturer's Reveal, reached (p95)", result["reveal_s"]["p95"], "s", target=2)
    if opts.page_follow:
        r.add("students: the lecturer's next page, its declaration in hand (p95)", result["page_follow_s"]["p95"], "s",
              target=2)
    r.add("errors (refused, lost, never received or counted; server tracebacks)",
          result["errors"] + result.get("server_log_tracebacks", 0))
    r.add("joined, on the projector", result["joined_on_board"])
    r.add("guesses counted", result["guesses_counted"])
    r.add("a students' message (the lead and the questions)", result["students_message_bytes"], "bytes")
    r.add("server CPU over the class (% of one core)", result.get("server_cpu_pct"), "%")
    r.add("server RSS idle", result.get("rss_idle_mb"), "MB")
    r.add("server RSS peak", result.get("rss_peak_mb"), "MB")
    r.add("the bench's own CPU (% of one core, same machine)", result.get("bench_cpu_pct"), "%")
    where = "a server it started (as docs/serving.md starts it)" if opts.start_server else opts.url
    pages = ("each with the class link's page of the app open (a headless tab, scripts/st_client.py)" if opts.pages
             else "with no page of the app open (the class's own traffic only)")
    r.note(f"{opts.students} students against {where}, {pages}, joining over {opts.join_window:g} s, each with its "
           f"event stream open; the lecturer moves G {opts.follows} times ({opts.follow_every:g} s apart), asks a "
           f"question that every student answers over {opts.guess_window:g} s, reveals it"
           f"{', then opens another page, which every student follows' if opts.page_follow else ''}. "
           "A follow is timed from the lecturer's post to the student's stream bringing it (the page then applies "
           "it in the browser, with no server work); a guess from its post to the first board message counting it.")
    return r


if __name__ == "__main__":
    raise SystemExit(main())
