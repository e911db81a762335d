"""The presenter key's rules (ui/presenter.py) beyond issue 28's (tests/test_hardening3_presenter.py): a key set in
GRPO_PRESENTER_KEY that is easy to guess is refused with what a strong one is; a key that was set is not printed
again; wrong keys are slowed per client address (a few, then one a minute) while the right key from an address that
has not been guessing is compared at once."""

from __future__ import annotations

import secrets
import time
from pathlib import Path

import pytest

from ui import presenter
from ui.presenter import LECTURER, STUDENT, WrongKeys, client_of

ROOT = Path(__file__).resolve().parents[1]
KEY = secrets.token_urlsafe(16)


@pytest.mark.parametrize("weak", ["aaaaaaaaaaaaaaaa", "abcdefghijklmnop", "0123456789abcdef", "passwordpassword",
                                  "Password12345678", "abababababababababab", "ZYXWVUTSRQPONMLKJ"])
def test_an_easy_key_is_refused_with_what_a_strong_one_is(weak):
    with pytest.raises(ValueError) as e:
        presenter.make_key({"GRPO_PRESENTER_KEY": weak})
    said = str(e.value)
    assert said.startswith("GRPO_PRESENTER_KEY is too easy to guess: ") and "\n" not in said
    assert "secrets.token_urlsafe(16)" in said and "leave it unset" in said and weak not in said


@pytest.mark.parametrize("strong", [KEY, "k3y-for-the-lecturer-0123456789", "correct-horse-battery-staple-9",
                                    "Xq7_rT2mK9vLp4Zw"])
def test_a_random_or_long_varied_key_is_taken(strong):
    assert presenter.make_key({"GRPO_PRESENTER_KEY": strong}) == strong


def test_random_keys_pass():
    """secrets.token_urlsafe(16), what the docs tell a lecturer to use and what serve.sh and the server make."""
    assert not [k for k in (secrets.token_urlsafe(16) for _ in range(20_000)) if presenter.weakness(k)]


def test_a_key_that_was_set_is_not_printed_again():
    env = {"GRPO_PRESENTER_KEY": KEY}
    line = presenter.announce(KEY, env)
    assert KEY not in line and "GRPO_PRESENTER_KEY" in line and line.startswith("GRPO Playground presenter key: ")
    made = secrets.token_urlsafe(16)
    assert made in presenter.announce(made, {})  # a key the server made is printed: nobody else has it


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def test_wrong_keys_are_slowed_per_client_and_refill():
    clock = Clock()
    wrong = WrongKeys(free=5, every_s=60, clock=clock)
    for _ in range(5):
        assert wrong.wait_s("203.0.113.7") == 0
        wrong.missed("203.0.113.7")
    assert wrong.wait_s("203.0.113.7") == pytest.approx(60)  # the sixth waits a minute
    assert wrong.wait_s("198.51.100.1") == 0  # another client: not slowed
    clock.t += 30
    assert wrong.wait_s("203.0.113.7") == pytest.approx(30)
    clock.t += 30
    assert wrong.wait_s("203.0.113.7") == 0  # one try back
    wrong.missed("203.0.113.7")
    assert wrong.wait_s("203.0.113.7") == pytest.approx(60)
    clock.t += 3600
    assert wrong.wait_s("203.0.113.7") == 0  # a full bucket again, never more than `free`
    for _ in range(5):
        wrong.missed("203.0.113.7")
    assert wrong.wait_s("203.0.113.7") == pytest.approx(60)


def test_the_table_of_clients_is_bounded():
    wrong = WrongKeys(free=1, every_s=60, clock=Clock(), max_clients=100)
    for i in range(1000):
        wrong.missed(f"10.0.{i // 256}.{i % 256}")
    assert len(wrong._left) == 100 and wrong.wait_s("10.0.3.231") > 0  # the most recent kept


def test_a_client_is_its_address_or_its_ipv6_network():
    assert client_of("203.0.113.7") == "203.0.113.7" and client_of(None) == "local" and client_of("") == "local"
    assert client_of("2001:db8:1:2:aaaa::1") == client_of("2001:db8:1:2:ffff::9") == "2001:db8:1:2::/64"
    assert client_of("2001:db8:1:3::1") != client_of("2001:db8:1:2::1")
    assert client_of("::ffff:203.0.113.7") == "203.0.113.7"


# ---- in a page: AppTest --------------------------------------------------------------------------------------


def run(server, key: str, address: str | None, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from ui.host import SERVER_KEY

    monkeypatch.setattr(presenter, "client_of", lambda _: client_of(address))  # AppTest has no client address
    at = AppTest.from_file(str(ROOT / "tests" / "apps" / "priority_app.py"), default_timeout=60)
    at.session_state[SERVER_KEY] = server
    at.query_params["presenter"] = key
    return at.run()


@pytest.mark.integration
def test_a_guesser_is_slowed_and_the_lecturer_elsewhere_is_not(monkeypatch):
    from ui.server import Server

    server = Server(presenter_key=KEY)
    for i in range(presenter.WRONG_FREE):
        at = run(server, f"guess-{i}-{secrets.token_urlsafe(12)}", "203.0.113.7", monkeypatch)
        assert at.session_state["priority_seen"] == STUDENT
        assert any("not this server's" in w.value for w in at.warning)
    at = run(server, KEY, "203.0.113.7", monkeypatch)  # even the right key: not compared for a minute
    assert at.session_state["priority_seen"] == STUDENT and "presenter" not in at.query_params
    assert any("Too many wrong presenter keys from your address" in w.value for w in at.warning)
    at = run(server, KEY, "198.51.100.1", monkeypatch)  # the lecturer, from another address: at once
    assert at.session_state["priority_seen"] == LECTURER and not at.warning


@pytest.mark.e2e
def test_behind_haproxy_each_client_counts_as_its_own_address(tmp_path):
    """A real server behind deploy/haproxy.cfg: a tab from 127.0.0.3 that claims to be 198.51.100.99 is counted as
    127.0.0.3 (HAProxy replaces the header, uvicorn takes it from the proxy). Without the header every client
    behind the proxy was "local", one bucket for the whole class."""
    import asyncio
    import os
    import subprocess

    from scripts import st_client
    from tests.fixtures.serve import start_server
    from tests.test_serve import free_ports

    seen = tmp_path / "clients.txt"
    app = start_server(script="tests/apps/client_app.py", env={"CLIENT_LOG": str(seen)})
    cfg = tmp_path / "haproxy.cfg"
    cfg.write_text((ROOT / "deploy" / "haproxy.cfg").read_text()
                   + f"    server app1 {app.url.split('//')[1]} check cookie app1\n")
    port = free_ports(1)
    proxy = subprocess.Popen(["haproxy", "-db", "-f", str(cfg)], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, env=dict(os.environ, GRPO_BIND=f"127.0.0.1:{port}",
                                                                 GRPO_MAX_CONN="8"))
    real_connect = st_client.connect

    def from_3(*args, **kwargs):  # the tab's websocket: from 127.0.0.3, with a forged header
        return real_connect(*args, additional_headers={"X-Forwarded-For": "198.51.100.99"},
                            local_addr=("127.0.0.3", 0), **kwargs)

    async def visit():
        tab = st_client.Tab(f"http://127.0.0.1:{port}")
        await tab.open()
        for _ in range(100):
            if seen.exists() and seen.read_text():
                break
            await asyncio.sleep(0.1)
        await tab.close()

    try:
        st_client.connect = from_3
        for _ in range(50):
            if get_ok(f"http://127.0.0.1:{port}/_stcore/health"):
                break
            time.sleep(0.1)
        asyncio.run(visit())
    finally:
        st_client.connect = real_connect
        proxy.terminate()
        proxy.wait(timeout=10)
        app.stop()
    assert seen.read_text().split() == ["127.0.0.3"]


def get_ok(url: str) -> bool:
    import urllib.request

    try:
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(url, timeout=2) as r:
            return r.status == 200
    except OSError:
        return False
