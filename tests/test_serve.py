"""scripts/serve.sh: app servers behind HAProxy.

Flags and ports are checked before anything starts (one error line and the usage, exit 2; a taken port named with
its cause). Two replicas serve a headless tab (scripts/st_client.py) that opens Training dynamics through the proxy;
one that dies is restarted while the class goes on; after SIGTERM no server or haproxy of it is left. The logs are
private and the presenter key is written once; readiness is asked where HAProxy listens. HAProxy limits each
client's connections, logs every request without its query string, and tells the servers each client's address,
which no client can forge."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from scripts.st_client import Tab

ROOT = Path(__file__).resolve().parents[1]
SERVE = ROOT / "scripts" / "serve.sh"
ENV = dict(os.environ, PYTHON=sys.executable)
USAGE = "usage: scripts/serve.sh --replicas N --port P"
NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def serve(*args, **env) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SERVE), *args], capture_output=True, text=True, timeout=60,
                          env=dict(ENV, **env))


def get(url: str) -> int | str:
    try:
        with NO_PROXY.open(url, timeout=5) as r:
            return r.status
    except OSError as e:
        return type(e).__name__


def wait_for(what, timeout: float, every: float = 0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (got := what()):
            return got
        time.sleep(every)
    return what()


def free_ports(n: int) -> int:
    """The first of n consecutive free loopback ports."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            first = s.getsockname()[1]
        if first + n > 65535:
            continue
        try:
            socks = [socket.create_server(("127.0.0.1", first + i)) for i in range(n)]
        except OSError:
            continue
        for s in socks:
            s.close()
        return first
    raise RuntimeError("no consecutive free ports")


def ours(marker: str) -> list[str]:
    """Command lines of live processes that mention `marker` (the app ports, the haproxy config)."""
    out = subprocess.run(["ps", "-ww", "-eo", "stat=,args="], capture_output=True, text=True).stdout.splitlines()
    return [line for line in out if marker in line and not line.lstrip().startswith("Z") and "ps -ww" not in line]


# ---- flags and ports, before anything starts -------------------------------------------------------------------


@pytest.mark.integration
@pytest.mark.parametrize("args, message", [
    ((), "--replicas is required"),
    (("--replicas", "2"), "--port is required"),
    (("--replicas", "0", "--port", "8501"), "--replicas must be a whole number from 1 to 64, got '0'"),
    (("--replicas", "2", "--port", "80x"), "--port must be a port number"),
    (("--replicas", "2", "--port", "9000", "--app-port", "8999"), "collides with the app servers' ports 8999..9000"),
    (("--replicas", "2", "--port", "9000", "--colour", "red"), "unknown argument: --colour"),
    (("--replicas", "2", "--port", "9000", "--bind", "a b"), "--bind must be an address"),
])
def test_bad_flags_are_one_error_line_and_exit_2(args, message):
    r = serve(*args)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.splitlines()[0] == f"error: {r.stderr.splitlines()[0][7:]}" and message in r.stderr.splitlines()[0]


@pytest.mark.integration
def test_missing_haproxy_is_a_clear_error():
    r = serve("--replicas", "1", "--port", "9000", HAPROXY="/nonexistent/haproxy")
    assert r.returncode == 1 and r.stderr.startswith("error: haproxy is not installed")
    assert "apt-get install haproxy" in r.stderr


@pytest.mark.integration
@pytest.mark.parametrize("args, message", [
    (("--replicas", "2", "--port", "08080"), "--port must be written without leading zeros, got '08080'"),
    (("--replicas", "2", "--port", "9000", "--app-port", "0100"), "--app-port must be written without leading zeros"),
    (("--replicas", "02", "--port", "9000"), "--replicas must be written without leading zeros, got '02'"),
    (("--replicas", "2", "--port", "99999999999999999999"), "--port must be a port number (1-65535)"),
    (("--replicas", "2", "--port", "9000", "--max-conn-per-client", "0"), "--max-conn-per-client must be a whole"),
    (("--replicas", "2", "--port", "9000", "--max-conn-per-client", "064"), "without leading zeros"),
])  # fmt: skip
def test_leading_zeros_and_bad_numbers_are_refused_with_the_usage_line(args, message):
    r = serve(*args)
    lines = r.stderr.splitlines()
    assert r.returncode == 2 and r.stdout == "" and len(lines) == 2, r.stderr
    assert lines[0].startswith("error: ") and message in lines[0] and lines[1].startswith(USAGE)
    assert "value too great" not in r.stderr


@pytest.mark.integration
def test_port_defaults_to_grpo_port_under_the_same_rules():
    r = serve("--replicas", "2", GRPO_PORT="08080")  # the Docker image's variable (its health check asks it)
    assert r.returncode == 2 and "--port must be written without leading zeros, got '08080'" in r.stderr


@pytest.mark.integration
def test_a_taken_port_is_named_with_its_cause_before_anything_starts(tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as taken:
        p = taken.getsockname()[1]
        r = serve("--replicas", "1", "--port", str(p), "--bind", "127.0.0.1", GRPO_SERVE_LOGS=str(tmp_path))
        assert r.returncode == 1 and r.stderr == (f"error: port {p} on 127.0.0.1 (HAProxy, --port) cannot be used: "
                                                  "Address already in use (another program listens there)\n")
        free = free_ports(1)
        r = serve("--replicas", "2", "--port", str(free), "--bind", "127.0.0.1", "--app-port", str(p - 1),
                  GRPO_SERVE_LOGS=str(tmp_path))
        assert r.returncode == 1 and f"error: port {p} on 127.0.0.1 (app server 2, --app-port {p - 1} + 1) cannot " \
                                     "be used: Address already in use" in r.stderr, r.stderr
    assert not list(tmp_path.iterdir())  # nothing started, nothing logged
    assert not ours(f"--server.port {p - 1}")


# ---- replicas: a view through the proxy, a server that dies, SIGTERM -------------------------------------------


async def open_a_view_through_the_proxy(base: str) -> None:
    """A view's page through HAProxy: its script run finishes and its renderer's declaration comes back over the
    proxied websocket (the setting is then the browser's: nothing more goes to the server)."""
    tab = Tab(base, "training")
    opened = time.monotonic()
    declared = tab.expect(re.compile(rb'"view":\s*"training"'), opened)
    await tab.open()
    try:
        assert await tab.wait_full_run(opened, 60), "the page never finished a run through HAProxy"
        await asyncio.wait_for(declared, 60)
        assert not tab.stats.errors, tab.stats.errors
    finally:
        await tab.close()


@pytest.mark.e2e
def test_two_replicas_behind_haproxy_then_sigterm_leaves_nothing(tmp_path):
    port, app_port = free_ports(1), free_ports(2)
    proc = subprocess.Popen(
        ["bash", str(SERVE), "--replicas", "2", "--port", str(port), "--bind", "127.0.0.1",
         "--app-port", str(app_port)],
        stderr=subprocess.PIPE, text=True, env=dict(ENV, GRPO_SERVE_LOGS=str(tmp_path)))
    try:
        deadline = time.monotonic() + 90
        lines = []
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            lines.append(line)
            if "ready at" in line or not line:
                break
        assert "ready at" in lines[-1], "".join(lines)
        base = f"http://127.0.0.1:{port}"
        with urllib.request.urlopen(base + "/training", timeout=30) as r:
            assert re.match(r"GRPO_SERVER=app[12];", r.headers["Set-Cookie"])  # the sticky cookie
        asyncio.run(open_a_view_through_the_proxy(base))
        assert len(ours(f"--server.port {app_port}")) == 1 and len(ours(str(tmp_path / "haproxy.cfg"))) == 1
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=40)
    deadline = time.monotonic() + 40
    markers = (f"--server.port {app_port}", f"--server.port {app_port + 1}", str(tmp_path / "haproxy.cfg"))
    while any(ours(m) for m in markers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(ours(m) for m in markers), [ours(m) for m in markers]
    assert proc.returncode == 0


@pytest.mark.e2e
def test_a_dead_server_is_restarted_and_the_class_keeps_running(tmp_path):
    port, app_port = free_ports(1), free_ports(2)
    proc = subprocess.Popen(["bash", str(SERVE), "--replicas", "2", "--port", str(port), "--bind", "127.0.0.1",
                             "--app-port", str(app_port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, env=dict(ENV, GRPO_SERVE_LOGS=str(tmp_path)))
    serve_log = tmp_path / "serve.log"
    base = f"http://127.0.0.1:{port}"
    try:
        assert wait_for(lambda: serve_log.exists() and "ready at" in serve_log.read_text(), 120), \
            serve_log.read_text() if serve_log.exists() else "no serve.log"
        key = serve_log.read_text().split("presenter key: ")[1].split()[0]  # serve.sh's, written there once
        assert len(key) >= 16 and serve_log.read_text().count(key) == 1
        assert not any(key in (tmp_path / f"app{i}.log").read_text() for i in (1, 2))  # handed over, not printed
        table = subprocess.run(["ps", "-ww", "-eo", "pid=,args="], capture_output=True, text=True).stdout
        (victim,) = [int(line.split()[0]) for line in table.splitlines()
                     if f"--server.port {app_port} " in line + " " and "streamlit" in line]
        os.killpg(victim, signal.SIGKILL)  # the crash: app server 1 and its workers, at once
        killed = time.monotonic()
        statuses = []
        while time.monotonic() - killed < 8:  # the class meanwhile: the proxy answers from the live server
            statuses.append(get(base + "/_stcore/health"))
            time.sleep(0.25)
        assert statuses.count(200) >= len(statuses) - 2, statuses  # at most a blip while HAProxy notices
        said = wait_for(lambda: "restarted app server 1" in serve_log.read_text() and serve_log.read_text(), 30)
        assert said and f"app server 1 (127.0.0.1:{app_port}) (pid {victim}) exited with status 137" in said, said
        assert "restarting it in 1 s" in said
        assert proc.poll() is None  # serve.sh, HAProxy and server 2 still run
        assert wait_for(lambda: get(f"http://127.0.0.1:{app_port}/_stcore/health") == 200, 90)  # server 1 is back
        assert len(ours(f"--server.port {app_port + 1}")) == 1 and len(ours(str(tmp_path / "haproxy.cfg"))) == 1
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=40)
    markers = (f"--server.port {app_port}", f"--server.port {app_port + 1}", str(tmp_path / "haproxy.cfg"))
    assert wait_for(lambda: not any(ours(m) for m in markers), 40), [ours(m) for m in markers]
    assert proc.returncode == 0


# ---- the logs, the bound address, the key, the health check's URL ----------------------------------------------


# serve.sh with a stand-in interpreter: `PY -m streamlit run app.py ... --server.port Q` prints what the real server
# prints at start (ui.presenter.announce) and answers /_stcore/health on Q; any other use is the real Python. HAProxy
# is real. A start takes about two seconds instead of a minute.

STAND_IN = '''#!{python}
import os, sys
args = sys.argv[1:]
if args[:2] != ["-m", "streamlit"]:
    os.execv(sys.executable, [sys.executable, *args])
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
sys.path.insert(0, os.getcwd())
from ui.presenter import announce
print(announce(os.environ["GRPO_PRESENTER_KEY"]), file=sys.stderr, flush=True)
class Health(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.send_header("Content-Length", "2"); self.end_headers(); self.wfile.write(b"ok")
    def log_message(self, *a):
        pass
port, address = int(args[args.index("--server.port") + 1]), args[args.index("--server.address") + 1]
ThreadingHTTPServer((address, port), Health).serve_forever()
'''


class Served:
    def __init__(self, proc: subprocess.Popen, port: int, logs: Path):
        self.proc, self.port, self.logs = proc, port, logs

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        _, err = self.proc.communicate(timeout=40)
        return err


@pytest.fixture
def stand_in(tmp_path) -> Path:
    py = tmp_path / "python"
    py.write_text(STAND_IN.format(python=sys.executable))
    py.chmod(0o755)
    return py


def start_serve(stand_in: Path, logs: Path, *args: str, replicas: int = 1, **env) -> Served:
    port, app_port = free_ports(1), free_ports(replicas)
    proc = subprocess.Popen(["bash", str(SERVE), "--replicas", str(replicas), "--port", str(port), "--app-port",
                             str(app_port), "--python", str(stand_in), *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env=dict(ENV, GRPO_SERVE_LOGS=str(logs), **env))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if (logs / "serve.log").exists() and "ready at" in (logs / "serve.log").read_text():
            break
        time.sleep(0.1)
    return Served(proc, port, logs)


def mode(p: Path) -> int:
    return p.stat().st_mode & 0o777


@pytest.mark.e2e
def test_the_log_folder_and_files_are_private_and_the_key_is_in_serve_log_once(stand_in, tmp_path):
    served = start_serve(stand_in, tmp_path / "logs", "--bind", "127.0.0.1", replicas=2)
    try:
        assert served.proc.poll() is None, served.stop()
        logs = served.logs
        assert mode(logs) == 0o700
        files = sorted(p.name for p in logs.iterdir())
        assert files == ["app1.log", "app2.log", "haproxy.cfg", "haproxy.log", "serve.log"], files
        assert {f: mode(logs / f) for f in files} == dict.fromkeys(files, 0o600)
        key = (logs / "serve.log").read_text().split("presenter key: ")[1].split()[0]  # serve.sh made it
        assert len(key) >= 22 and (logs / "serve.log").read_text().count(key) == 1
        assert [f for f in files if f != "serve.log" and key in (logs / f).read_text()] == []
        assert "the one in GRPO_PRESENTER_KEY (not printed" in (logs / "app1.log").read_text()
    finally:
        err = served.stop()
    assert err.count(key) == 1  # the terminal: once


@pytest.mark.e2e
def test_a_key_that_was_set_is_written_nowhere(stand_in, tmp_path):
    key = secrets.token_urlsafe(16)
    served = start_serve(stand_in, tmp_path / "logs", "--bind", "127.0.0.1", GRPO_PRESENTER_KEY=key)
    try:
        assert served.proc.poll() is None, served.stop()
        assert "presenter key: the one in GRPO_PRESENTER_KEY" in (served.logs / "serve.log").read_text()
        assert [p.name for p in served.logs.iterdir() if key in p.read_text()] == []
    finally:
        err = served.stop()
    assert key not in err


@pytest.mark.e2e
def test_a_log_folder_that_exists_keeps_its_mode_and_its_files_are_private(stand_in, tmp_path):
    logs = tmp_path / "shared"
    logs.mkdir(mode=0o755)
    logs.chmod(0o755)
    (logs / "serve.log").write_text("an older run\n")
    (logs / "serve.log").chmod(0o644)
    served = start_serve(stand_in, logs, "--bind", "127.0.0.1")
    try:
        assert served.proc.poll() is None, served.stop()
        assert mode(logs) == 0o755 and all(mode(p) == 0o600 for p in logs.iterdir())
        assert (logs / "serve.log").read_text().startswith("an older run\n")  # appended, as before
    finally:
        served.stop()


@pytest.mark.e2e
@pytest.mark.parametrize("bind, host", [("127.0.0.2", "127.0.0.2"), ("::1", "[::1]")])
def test_readiness_is_asked_where_haproxy_listens(stand_in, tmp_path, bind, host):
    """--bind a real address of the machine (127.0.0.2 is one: all of 127.0.0.0/8 is this machine's), or ::1:
    the check asked 127.0.0.1, which nothing answered, and serve.sh gave up after 5 s."""
    url_file = tmp_path / "health-url"
    served = start_serve(stand_in, tmp_path / "logs", "--bind", bind, GRPO_HEALTH_URL_FILE=str(url_file))
    try:
        assert served.proc.poll() is None, served.stop()
        url = f"http://{host}:{served.port}/_stcore/health"
        assert f"ready at http://{host}:{served.port}" in (served.logs / "serve.log").read_text()
        assert url_file.read_text() == url + "\n"
        assert get(url) == 200
        check = subprocess.run(["sh", str(ROOT / "deploy" / "healthcheck.sh")], capture_output=True, timeout=10,
                               env=dict(ENV, GRPO_PORT="1", GRPO_HEALTH_URL_FILE=str(url_file)))
        assert check.returncode == 0, check  # Docker's health check asks what serve.sh serves, not $GRPO_PORT
    finally:
        served.stop()
    assert served.proc.returncode == 0 and not url_file.exists()  # stopped: no stale URL for the health check


@pytest.mark.e2e
@pytest.mark.parametrize("key, words", [("aaaaaaaaaaaaaaaa", "too easy to guess"),
                                        ("0123456789abcdefgh", "too easy to guess"),
                                        ("short", "must be 16 to 128 characters")])
def test_a_weak_presenter_key_is_refused_before_anything_starts(stand_in, tmp_path, key, words):
    served = start_serve(stand_in, tmp_path / "logs", GRPO_PRESENTER_KEY=key)
    err = served.stop()  # at once if it refused; else it started, and this stops it
    lines = err.splitlines()
    assert served.proc.returncode == 2 and len(lines) == 2 and lines[0].startswith("error: GRPO_PRESENTER_KEY "), err
    assert words in lines[0] and "secrets.token_urlsafe(16)" in lines[0] and lines[1].startswith("usage:")
    assert key not in err and not (tmp_path / "logs").exists()


# ---- HAProxy: the per-client limit, request logging, the client's address --------------------------------------


class Ok(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def haproxy_before(tmp_path: Path, handler: type[BaseHTTPRequestHandler], max_conn: int, log=subprocess.DEVNULL):
    """deploy/haproxy.cfg as serve.sh runs it (at most `max_conn` connections per client), in front of one tiny
    server answering with `handler`; yields HAProxy's port once it answers."""
    app = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=app.serve_forever, daemon=True).start()
    cfg = tmp_path / "haproxy.cfg"
    cfg.write_text((ROOT / "deploy" / "haproxy.cfg").read_text()
                   + f"    server app1 127.0.0.1:{app.server_address[1]} check cookie app1\n")
    port = free_ports(1)
    proc = subprocess.Popen(["haproxy", "-db", "-f", str(cfg)], stdout=log, stderr=subprocess.STDOUT,
                            env=dict(os.environ, GRPO_BIND=f"127.0.0.1:{port}", GRPO_MAX_CONN=str(max_conn)))
    try:
        wait_for(lambda: socket_open(port), 20, every=0.1)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        app.shutdown()


def socket_open(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


@pytest.fixture
def proxy(tmp_path):
    log = tmp_path / "haproxy.log"
    with open(log, "wb") as out, haproxy_before(tmp_path, Ok, max_conn=3, log=out) as port:
        url = f"http://127.0.0.1:{port}"
        wait_for(lambda: get(url + "/_stcore/health") == 200, 20, every=0.1)
        yield url, port, log


@pytest.mark.e2e
def test_haproxy_limits_the_connections_of_one_client(proxy):
    url, port, _ = proxy
    held = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]  # three open tabs' websockets
    try:
        time.sleep(0.3)
        assert get(url + "/training") != 200  # a fourth is closed before any HTTP
        held.pop().close()
        time.sleep(0.3)
        assert get(url + "/training") == 200
    finally:
        for s in held:
            s.close()


@pytest.mark.e2e
def test_haproxy_logs_every_request_without_its_query(proxy):
    url, _, log = proxy
    assert get(url + "/training?presenter=SECRET-KEY-0123456789&G=16") == 200
    deadline = time.monotonic() + 5
    while '"/training"' not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.1)
    text = log.read_text()
    assert '"GET" "/training"' in text and " 200 " in text, text
    assert "SECRET" not in text and "G=16" not in text


@pytest.mark.e2e
def test_haproxy_tells_the_servers_each_client_s_address_and_no_client_can_forge_it(tmp_path):
    """What uvicorn reads as the client's address behind the proxy (ui/presenter.py slows guessers by it)."""
    seen = []

    class Record(Ok):
        def do_GET(self):  # noqa: N802
            if self.path == "/training":  # not HAProxy's own health checks
                seen.append(self.headers.get_all("X-Forwarded-For"))
            super().do_GET()

    with haproxy_before(tmp_path, Record, max_conn=8) as port:
        deadline = time.monotonic() + 20
        while not seen and time.monotonic() < deadline:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2, source_address=("127.0.0.3", 0))
            try:  # a client at 127.0.0.3 that claims to be 198.51.100.99
                conn.request("GET", "/training", headers={"X-Forwarded-For": "198.51.100.99"})
                conn.getresponse().read()
            except OSError:
                time.sleep(0.1)
            finally:
                conn.close()
    assert seen and seen[-1] == ["127.0.0.3"], seen
