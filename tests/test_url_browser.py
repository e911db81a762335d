"""Links are data (issue 9), in a real browser, on the pages whose settings are Streamlit's widgets: TinyLM, Your run
and Your prompts (the six views the browser draws read their links with the renderer's rules, in both hosts:
tests/test_view_pages_browser.py and tests/test_link_rules_browser.py).

1. Hostile values (Markdown images and links, HTML, javascript: URLs, Streamlit colour and icon directives,
   formulas, 10,000 characters) render as plain text: no request leaves the server, no link or image is
   drawn from them, and each warning still names its parameter.
2. After a bad value is corrected, the address bar holds exactly what the widgets show: the page's URL,
   opened in a fresh browser, gives the same widgets and no warning.

The settings of each page are discovered from the page itself (keyed widgets in the sidebar), so a new
setting is covered without touching this file. Run: python -m pytest tests/test_url_browser.py -m e2e
"""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from tests.fixtures.serve import IDLE, browser_marks

pytestmark = browser_marks()

PAGES = {  # path -> parameters that must stay as given (they switch the page's settings on)
    "tinylm": {"tinylm_on": "true"}, "your_run": {}, "your_prompts": {},
}
HOSTILE = [
    "![x](http://127.0.0.1:9/pixel.png)",
    "[click me](https://evil.example/)",
    "<img src=http://127.0.0.1:9/h.png onerror=alert(1)>",
    "javascript:alert(1)",
    ":red[ALERT] :material/warning: :smile:",
    "$x^2$ **bold** `code`",
    "A" * 10_000,
]

SNAPSHOT = """() => {
  const out = {};
  for (const el of document.querySelectorAll('[data-testid=stSidebar] [class*="st-key-"]')) {
    const key = [...el.classList].find(c => c.startsWith('st-key-')).slice(7);
    if (key.startsWith('_')) continue;
    const range = el.querySelector('input[type=range]');
    const group = el.querySelector('[role=radiogroup]');
    const toggle = el.querySelector('input[role=switch]');
    if (range) out[key] = ['slider', range.value, range.min, range.max, range.step];
    else if (group) out[key] = ['radio', group.querySelector('[data-selected=true]')?.textContent ?? null];
    else if (toggle) out[key] = ['toggle', toggle.checked];
  }
  return out;
}"""


@pytest.fixture(scope="module")
def shared(browser):
    """One browser context for the loads that need no fresh one: its cache spares each page Plotly.js."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    yield ctx
    ctx.close()


def load(browser, url: str, shared=None) -> tuple:
    """Open `url` in a new page (of the shared context, else of a fresh context) and wait until its settings
    are drawn; return (page, what to close afterwards, every request the page made)."""
    ctx = shared if shared is not None else browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(url)
    page.wait_for_function(f"() => Object.keys(({SNAPSHOT})()).length > 0")
    page.wait_for_selector(IDLE)
    stable_settings(page)
    return page, (page if shared is not None else ctx), requests


def stable_settings(page, settle_ms: int = 300, tries: int = 25) -> dict:
    """The sidebar's settings once two reads settle_ms apart agree: on a busy machine the idle marker can show
    between the page's first script run and its correcting rerun, with the sidebar half drawn."""
    prev = page.evaluate(SNAPSHOT)
    for _ in range(tries):
        page.wait_for_timeout(settle_ms)
        page.wait_for_selector(IDLE)
        cur = page.evaluate(SNAPSHOT)
        if cur == prev:
            return cur
        prev = cur
    return prev


_SETTINGS: dict[str, dict] = {}


def settings_of(browser, server: str, path: str, shared) -> dict:
    """{key: widget} of the page's URL-bound settings, read from the page at its defaults (once)."""
    if path not in _SETTINGS:
        page, ctx, _ = load(browser, f"{server}/{path}?{urlencode(PAGES[path])}", shared)
        _SETTINGS[path] = {k: v for k, v in page.evaluate(SNAPSHOT).items() if k not in PAGES[path]}
        ctx.close()
    return _SETTINGS[path]


def bad_value(i: int, widget: list) -> str:
    """Out of range, off the slider's grid, or not an option at all."""
    if widget[0] == "slider":
        lo, hi, step = float(widget[2]), float(widget[3]), float(widget[4])
        return repr(hi * 10 + 3) if i % 2 == 0 or step >= hi - lo else repr(lo + step * 1.37)
    return "maybe" if widget[0] == "toggle" else "NOT-AN-OPTION"


@pytest.mark.parametrize("path", list(PAGES))
def test_hostile_values_render_as_plain_text(path, browser, server, shared):
    keys = list(settings_of(browser, server, path, shared))
    assert keys, f"/{path} has no URL-bound settings?"
    offset = list(PAGES).index(path)  # rotate so that every payload meets every kind of page
    query = {**PAGES[path], **{k: HOSTILE[(i + offset) % len(HOSTILE)] for i, k in enumerate(keys)}}
    page, ctx, requests = load(browser, f"{server}/{path}?{urlencode(query)}", shared)
    try:
        local = (server, "data:", f"blob:{server}")  # blob: the renderer's Web Worker and downloads, made in the page
        foreign = [u for u in requests if not u.startswith(local)]
        assert foreign == [], f"/{path} made requests outside the server: {foreign[:3]}"
        alerts = page.get_by_test_id("stAlert")
        texts = [alerts.nth(i).inner_text() for i in range(alerts.count())]
        for k in keys:
            assert any(f"URL parameter {k}=" in t for t in texts), f"no warning names {k} on /{path}: {texts[:2]}"
        for i in range(alerts.count()):
            html = alerts.nth(i).inner_html()
            assert "<a " not in html and "<img" not in html and "katex" not in html and "<strong" not in html, html
            assert len(alerts.nth(i).inner_text()) < 400  # a 10,000-character value is cut
        assert page.get_by_test_id("stException").count() == 0
    finally:
        ctx.close()


@pytest.mark.parametrize("path", list(PAGES))
def test_the_address_bar_reproduces_the_page(path, browser, server, shared):
    widgets = settings_of(browser, server, path, shared)
    query = {**PAGES[path], **{k: bad_value(i, w) for i, (k, w) in enumerate(widgets.items())}}
    page, ctx, _ = load(browser, f"{server}/{path}?{urlencode(query)}", shared)
    shown, url = page.evaluate(SNAPSHOT), page.url
    assert page.get_by_test_id("stAlert").count() >= len(widgets)  # every bad value was reported
    ctx.close()
    fresh, ctx, _ = load(browser, url)
    try:
        assert fresh.evaluate(SNAPSHOT) == shown, f"/{path}: {url} does not reproduce the page"
        assert fresh.get_by_test_id("stAlert").filter(has_text="URL parameter").count() == 0
    finally:
        ctx.close()
