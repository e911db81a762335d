"""scripts/serve.sh: two app servers behind HAProxy. A headless tab (scripts/st_client.py) opens Training
dynamics through the proxy and moves G over its websocket; after SIGTERM no server or haproxy of it is left."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from scripts.bench_classroom import data_pattern
from scripts.st_client import Tab

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[1]
SERVE = ROOT / "scripts" / "serve.sh"
ENV = dict(os.environ, PYTHON=sys.executable)


def serve(*args, **env) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SERVE), *args], capture_output=True, text=True, timeout=30,
                          env=dict(ENV, **env))


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


def test_missing_haproxy_is_a_clear_error():
    r = serve("--replicas", "1", "--port", "9000", HAPROXY="/nonexistent/haproxy")
    assert r.returncode == 1 and r.stderr.startswith("error: haproxy is not installed")
    assert "apt-get install haproxy" in r.stderr


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


async def move_g_through_the_proxy(base: str) -> None:
    tab = Tab(base, "training")
    opened = time.monotonic()
    await tab.open()
    try:
        assert await tab.wait_full_run(opened, 60), "the page never finished a run through HAProxy"
        since = time.monotonic()
        shown = tab.expect(data_pattern("G", 9), since)
        await tab.set_value("G", 9)
        await asyncio.wait_for(shown, 60)  # the new chart came back over the proxied websocket
        assert not tab.stats.errors, tab.stats.errors
    finally:
        await tab.close()


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
        asyncio.run(move_g_through_the_proxy(base))
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
