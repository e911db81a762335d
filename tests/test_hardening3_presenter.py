"""Issue 28 row 9: the lecturer's priority needs the presenter key the server prints at start (or takes from
GRPO_PRESENTER_KEY); `?classroom=1` alone only enlarges the page. The key is compared in constant time and never
echoed: it leaves the address bar on the run that reads it and appears in no element or share link."""

from __future__ import annotations

import hmac
import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.fixtures.apptest import copy_texts
from ui import presenter
from ui.presenter import LECTURER, STUDENT
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


def run(path: str, server: Server, **query) -> AppTest:
    """The page, with `server` handed to its session as app.py hands its own (ui/host.py)."""
    from ui.host import SERVER_KEY

    at = AppTest.from_file(str(ROOT / path), default_timeout=60)
    at.session_state[SERVER_KEY] = server
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


def everything(at: AppTest) -> str:
    """Every text the page sent: each element's proto, the copy boxes, the query string."""
    parts = [str(e.proto) for e in at.main] + [str(e.proto) for e in at.sidebar] + copy_texts(at)
    return "\n".join(parts) + json.dumps(dict(at.query_params))


@pytest.mark.integration
def test_classroom_alone_gives_no_priority(server):
    at = run("tests/apps/priority_app.py", server, classroom="1")
    assert not at.exception and at.session_state["priority_seen"] == STUDENT


@pytest.mark.integration
def test_the_key_gives_priority_then_leaves_the_address_bar(server):
    at = run("tests/apps/priority_app.py", server, presenter=KEY, classroom="1")
    assert not at.exception and at.session_state["priority_seen"] == LECTURER
    assert "presenter" not in at.query_params and at.query_params.get("classroom") == "1"
    assert KEY not in everything(at)
    at.run()  # the session keeps it without the key in the URL
    assert at.session_state["priority_seen"] == LECTURER


@pytest.mark.integration
def test_a_wrong_key_is_said_and_dropped(server):
    at = run("tests/apps/priority_app.py", server, presenter=KEY[:-1] + "X")
    assert at.session_state["priority_seen"] == STUDENT and "presenter" not in at.query_params
    assert any("presenter key is not this server's" in w.value for w in at.warning)
    assert KEY[:-1] not in everything(at)


@pytest.mark.integration
def test_a_real_page_never_echoes_the_key_into_its_share_links(server):
    at = run("pages/tinylm.py", server, presenter=KEY, classroom="1", tinylm_on="true")  # its links: the server's
    assert not at.exception
    links = copy_texts(at)
    assert links and all(KEY not in t and "presenter" not in t for t in links)
    assert any("classroom=1" in t for t in links)
    assert KEY not in everything(at)
    at = run("pages/training.py", server, presenter=KEY, classroom="1", G="16")  # a view's: the page's own (JS)
    assert not at.exception and KEY not in everything(at)


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
            page = b.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{served.url}/one_group?presenter={KEY}&classroom=1&G=6")
            page.wait_for_selector(IDLE, timeout=60_000)
            page.wait_for_function("!location.search.includes('presenter')", timeout=30_000)
            page.wait_for_function("window.grpoPage && window.grpoPage.shown", timeout=60_000)
            slider = page.locator("#ls-G")
            slider.focus()
            slider.press("ArrowRight")
            page.wait_for_function("new URLSearchParams(location.search).get('G') === '7'", timeout=30_000)
            page.locator(".ls-share summary").click()
            page.get_by_role("button", name="Copy this link").click()  # no clipboard here: the link is shown
            shared = page.locator(".ls-copied").first.inner_text()
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
