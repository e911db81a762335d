"""Issue 28 rows 2, 12, 13 and HAProxy: scripts/serve.sh keeps the class on the live servers when one dies,
restarts the dead one (with a back-off) and logs it; ports are checked first and a taken one is named with its
cause; leading zeros are refused with the usage line; HAProxy limits each client's connections and logs every
request (its path, never its query string)."""

from __future__ import annotations

import os
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

from tests.test_serve import SERVE, free_ports, ours

ROOT = Path(__file__).resolve().parents[1]
ENV = dict(os.environ, PYTHON=sys.executable)
USAGE = "usage: scripts/serve.sh --replicas N --port P"
NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def serve(*args, **env) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SERVE), *args], capture_output=True, text=True, timeout=60,
                          env=dict(ENV, **env))


# ---- rows 13 and 12: flags and ports, before anything starts ------------------------------------------------


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


# ---- HAProxy: the per-client limit and request logging ------------------------------------------------------


class Ok(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


@pytest.fixture
def proxy(tmp_path):
    """deploy/haproxy.cfg as serve.sh runs it (at most 3 connections per client), in front of one tiny server."""
    app = ThreadingHTTPServer(("127.0.0.1", 0), Ok)
    threading.Thread(target=app.serve_forever, daemon=True).start()
    cfg = tmp_path / "haproxy.cfg"
    cfg.write_text((ROOT / "deploy" / "haproxy.cfg").read_text()
                   + f"    server app1 127.0.0.1:{app.server_address[1]} check cookie app1\n")
    port = free_ports(1)
    env = dict(os.environ, GRPO_BIND=f"127.0.0.1:{port}", GRPO_MAX_CONN="3")
    log = tmp_path / "haproxy.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(["haproxy", "-db", "-f", str(cfg)], env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            NO_PROXY.open(url + "/_stcore/health", timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    yield url, port, log
    proc.terminate()
    proc.wait(timeout=10)
    app.shutdown()


def get(url: str) -> int | str:
    try:
        with NO_PROXY.open(url, timeout=5) as r:
            return r.status
    except OSError as e:
        return type(e).__name__


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


# ---- row 2: one server dies, the class goes on ---------------------------------------------------------------


def wait_for(what, timeout: float, every: float = 0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (got := what()):
            return got
        time.sleep(every)
    return what()


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
