"""The presenter key (ui/presenter.py): the lecturer's priority needs the key the server prints at start (or takes
from GRPO_PRESENTER_KEY); `?classroom=1` alone only enlarges the page. The key is compared in constant time and
never echoed: it leaves the address bar on the run that reads it and appears in no element or share link. A key set
in GRPO_PRESENTER_KEY that is easy to guess is refused with what a strong one is; a key that was set is not printed
again; wrong keys are slowed per client address (a few, then one a minute) while the right key from an address that
has not been guessing is compared at once."""

from __future__ import annotations

import hmac
import json
import secrets
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ui import presenter
from ui.presenter import LECTURER, STUDENT, WrongKeys, client_of
from ui.server import Server

ROOT = Path(__file__).resolve().parents[1]
KEY = "k3y-for-the-lecturer-0123456789"


def test_the_key_comes_from_the_environment_or_is_random():
    assert presenter.make_key({"GRPO_PRESENTER_KEY": KEY}) == KEY
    a, b = presenter.make_key({}), presenter.make_key({})
    assert a != b and presenter.KEY_FORM.fullmatch(a) and len(a) >= 20
    for bad in ("short", "x" * 129, "has space in it 123456", "\u202e" * 20):
        with pytest.raises(ValueError, match="GRPO_PRESENTER_KEY must be 16 to 128 characters") as e:
            presenter.make_key({"GRPO_PRESENTER_KEY": bad})
        assert "\n" not in str(e.value) and "\u202e" not in str(e.value)


def test_keys_are_compared_in_constant_time(monkeypatch):
    seen = []
    real = hmac.compare_digest
    monkeypatch.setattr(hmac, "compare_digest", lambda a, b: seen.append((a, b)) or real(a, b))
    assert presenter.matches(KEY, KEY) and not presenter.matches(KEY[:-1] + "X", KEY)
    assert not presenter.matches("", KEY) and not presenter.matches(KEY, None) and not presenter.matches(None, KEY)
    assert len(seen) == 2
    assert KEY in presenter.announce(KEY) and "?presenter=" in presenter.announce(KEY)


@pytest.fixture
def server():
    return Server(presenter_key=KEY)


def open_page(path: str, server: Server, **query) -> AppTest:
    """The page, with `server` handed to its session as app.py hands its own (ui/host.py)."""
    from ui.host import SERVER_KEY

    at = AppTest.from_file(str(ROOT / path), default_timeout=60)
    at.session_state[SERVER_KEY] = server
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


def everything(at: AppTest) -> str:
    """Every text the page sent: each element's proto (the renderer's data with it), the query string."""
    parts = [str(e.proto) for e in at.main] + [str(e.proto) for e in at.sidebar]
    return "\n".join(parts) + json.dumps(dict(at.query_params))


@pytest.mark.integration
def test_classroom_alone_gives_no_priority(server):
    at = open_page("tests/apps/priority_app.py", server, classroom="1")
    assert not at.exception and at.session_state["priority_seen"] == STUDENT


@pytest.mark.integration
def test_the_key_gives_priority_then_leaves_the_address_bar(server):
    at = open_page("tests/apps/priority_app.py", server, presenter=KEY, classroom="1")
    assert not at.exception and at.session_state["priority_seen"] == LECTURER
    assert "presenter" not in at.query_params and at.query_params.get("classroom") == "1"
    assert KEY not in everything(at)
    at.run()  # the session keeps it without the key in the URL
    assert at.session_state["priority_seen"] == LECTURER


@pytest.mark.integration
def test_a_wrong_key_is_said_and_dropped(server):
    at = open_page("tests/apps/priority_app.py", server, presenter=KEY[:-1] + "X")
    assert at.session_state["priority_seen"] == STUDENT and "presenter" not in at.query_params
    assert any("presenter key is not this server's" in w.value for w in at.warning)
    assert KEY[:-1] not in everything(at)


@pytest.mark.integration
@pytest.mark.parametrize("path", ["pages/training.py", "pages/tinylm.py", "pages/your_run.py"])
def test_a_real_page_never_sends_the_key_back(server, path):
    """A page's share links are its script's (assets/js/page.js: the test below reads one in a browser); what the
    server sends a page, its document included, never holds the key, and the key leaves the address bar."""
    from tests.fixtures.apptest import documents, report

    at = open_page(path, server, presenter=KEY, classroom="1", G="16")
    assert not at.exception and KEY not in everything(at) and "presenter" not in at.query_params
    if path.endswith("your_run.py"):  # a document the server computes, for the setting the page reports
        at = report(at, "your_run", G=16)
        assert documents(at) and KEY not in everything(at)


@pytest.mark.e2e
def test_in_a_browser_the_key_leaves_the_address_bar_and_stays_out(tmp_path):
    """The projector's address bar: the key is gone after the first run and a moved slider does not bring it
    back; the server said at start that it has the key it was given, without printing it."""
    from urllib.parse import parse_qs, urlsplit

    from tests.fixtures.serve import CHROMIUM, IDLE, launch_chromium, start_server

    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing")
    playwright_sync = pytest.importorskip("playwright.sync_api")
    log = open(tmp_path / "server.log", "w+b")  # noqa: SIM115  (closed below)
    served = start_server(log=log, env={"GRPO_PRESENTER_KEY": KEY})
    try:
        with playwright_sync.sync_playwright() as pw:
            b = launch_chromium(pw)
            context = b.new_context(viewport={"width": 1400, "height": 1000})
            context.grant_permissions(["clipboard-read", "clipboard-write"])
            page = context.new_page()
            page.goto(f"{served.url}/one_group?presenter={KEY}&classroom=1&G=6")
            page.wait_for_selector(IDLE, timeout=60_000)
            page.wait_for_function("!location.search.includes('presenter')", timeout=30_000)
            page.wait_for_function("window.grpoPage && window.grpoPage.shown", timeout=60_000)
            slider = page.locator("#ls-G")
            slider.focus()
            slider.press("ArrowRight")
            page.wait_for_function("new URLSearchParams(location.search).get('G') === '7'", timeout=30_000)
            page.locator(".ls-share summary").click()
            page.get_by_role("button", name="Copy this link").click()
            page.locator(".ls-copied", has_text="Copied.").first.wait_for()
            shared = page.evaluate("navigator.clipboard.readText()")
            assert "G=7" in shared and "classroom=1" in shared and KEY not in shared and "presenter" not in shared
            query = parse_qs(urlsplit(page.url).query)
            assert "presenter" not in query and query.get("classroom") == ["1"], page.url
            assert KEY not in page.content()
            b.close()
    finally:
        served.stop()
    log.seek(0)
    said = log.read().decode(errors="replace")
    assert "presenter key: the one in GRPO_PRESENTER_KEY" in said and KEY not in said  # set, so not printed again
    log.close()


# ---- weak keys and guessing ------------------------------------------------------------------------------


@pytest.mark.parametrize("weak", ["aaaaaaaaaaaaaaaa", "abcdefghijklmnop", "0123456789abcdef", "passwordpassword",
                                  "Password12345678", "abababababababababab", "ZYXWVUTSRQPONMLKJ"])
def test_an_easy_key_is_refused_with_what_a_strong_one_is(weak):
    with pytest.raises(ValueError) as e:
        presenter.make_key({"GRPO_PRESENTER_KEY": weak})
    said = str(e.value)
    assert said.startswith("GRPO_PRESENTER_KEY is too easy to guess: ") and "\n" not in said
    assert "secrets.token_urlsafe(16)" in said and "leave it unset" in said and weak not in said


@pytest.mark.parametrize("strong", [secrets.token_urlsafe(16), KEY, "correct-horse-battery-staple-9",
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


def key_from(server, key: str, address: str | None, monkeypatch):
    from ui.host import SERVER_KEY

    monkeypatch.setattr(presenter, "client_of", lambda _: client_of(address))  # AppTest has no client address
    at = AppTest.from_file(str(ROOT / "tests" / "apps" / "priority_app.py"), default_timeout=60)
    at.session_state[SERVER_KEY] = server
    at.query_params["presenter"] = key
    return at.run()


@pytest.mark.integration
def test_a_guesser_is_slowed_and_the_lecturer_elsewhere_is_not(monkeypatch):
    server = Server(presenter_key=KEY)
    for i in range(presenter.WRONG_FREE):
        at = key_from(server, f"guess-{i}-{secrets.token_urlsafe(12)}", "203.0.113.7", monkeypatch)
        assert at.session_state["priority_seen"] == STUDENT
        assert any("not this server's" in w.value for w in at.warning)
    at = key_from(server, KEY, "203.0.113.7", monkeypatch)  # even the right key: not compared for a minute
    assert at.session_state["priority_seen"] == STUDENT and "presenter" not in at.query_params
    assert any("Too many wrong presenter keys from your address" in w.value for w in at.warning)
    at = key_from(server, KEY, "198.51.100.1", monkeypatch)  # the lecturer, from another address: at once
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
