"""Issue 28, a built lesson in headless Chromium: rows 3 (data is never run, embedded same-origin or not; the
lesson works unchanged in <iframe sandbox="allow-scripts">), 4 (the rewritten link keeps classroom, hide and
predict), 5 (the page follows a new hash), 6 (bidi, NUL and U+2028 shown as escapes), 14 (last value wins with a
note; decimal numbers only; the contents page carries only its own keys; a malformed entry says "rebuild").

Data rows damage a page's inline JSON (Wasted groups' manifest: the view's declaration its page computes from; a
recorded view's document is read by the same rules, tests/test_hardening3_lesson_js.py); link rows use the Training
dynamics page (it computes every setting in the page, assets/js/lesson_page.js)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.fixtures.serve import CHROMIUM, CHROMIUM_ARGS, free_port
from tests.test_lesson_browser import DRAWN, Opened, set_range

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing")]
playwright_sync = pytest.importorskip("playwright.sync_api", reason="playwright (python) is not installed")
MANIFEST = 'id="lesson-manifest">'
SHOWN = "window.grpoLesson && window.grpoLesson.shown"


@pytest.fixture(scope="module")
def browser():
    with playwright_sync.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def lesson(small_lesson) -> Path:
    return small_lesson  # the live views and Wasted groups (tests/fixtures/lesson.SMALL)


def damaged(lesson: Path, where: Path, new_text: str) -> Path:
    """A copy of the lesson whose Wasted groups page has a manifest (its inline JSON) holding `new_text`."""
    shutil.copytree(lesson, where)
    page = where / "wasted.html"
    text = page.read_text(encoding="utf-8")
    start = text.index(MANIFEST) + len(MANIFEST)
    end = text.index("</script>", start)
    page.write_text(text[:start] + new_text + text[end:], encoding="utf-8")
    return where


class Site:
    """python -m http.server on loopback over `root`: a host page and a lesson below it, one origin."""

    def __init__(self, root: Path):
        self.port = free_port()
        self.proc = subprocess.Popen([sys.executable, "-m", "http.server", str(self.port), "--bind", "127.0.0.1",
                                      "-d", str(root)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.url = f"http://127.0.0.1:{self.port}/"
        for _ in range(100):
            try:
                urllib.request.build_opener(urllib.request.ProxyHandler({})).open(self.url, timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


def host(root: Path, iframe: str) -> None:
    """The host page the README's snippet describes: the site's own page, a cookie, the lesson in an iframe."""
    (root / "host.html").write_text(f"""<!doctype html><html><head><title>Host</title></head><body>
<script>document.cookie = "session=SECRET; path=/";</script>
{iframe}
</body></html>""", encoding="utf-8")


# ---- row 3: data is never run ----------------------------------------------------------------------------


def test_row_3_code_in_the_data_is_not_run_even_same_origin(browser, lesson, tmp_path):
    root = tmp_path / "site"
    root.mkdir()
    code = 'parent.document.title = "PWNED " + parent.document.cookie; window.pwned = 1;'
    damaged(lesson, root / "lesson", code)
    (root / "lesson" / "data").mkdir()  # an old-style data file planted beside it is never requested either
    (root / "lesson" / "data" / "wasted-p0.05_G16.js").write_text(f"grpoLesson.put('x', 1); {code}")
    host(root, '<iframe id="lesson" src="lesson/wasted.html#G=16" width="1200" height="900"></iframe>')
    site = Site(root)
    try:
        w = Opened(browser, site.url + "host.html", allowed=site.url)
        frame = w.page.frame_locator("#lesson")
        err = frame.locator("#ls-error")
        err.wait_for(state="visible")
        said = err.text_content()
        assert "This lesson's page is damaged (its manifest is not JSON). Rebuild the lesson" in said
        assert w.page.title() == "Host" and not w.page.evaluate("window.frames[0].pwned")
        assert not [u for u in w.requests if "/data/" in u]
        inner = w.page.frames[1]
        inner.goto(site.url + "lesson/training.html#G=16")  # an intact page draws
        inner.wait_for_function(DRAWN)
        assert not inner.evaluate("window.pwned")
        w.close()
    finally:
        site.stop()


def test_row_3_the_lesson_works_unchanged_in_a_sandboxed_iframe(browser, lesson, tmp_path):
    root = tmp_path / "site"
    root.mkdir()
    shutil.copytree(lesson, root / "lesson")
    host(root, '<iframe id="lesson" sandbox="allow-scripts" src="lesson/training.html#G=16&classroom=1" '
               'width="1400" height="900"></iframe>')
    site = Site(root)
    try:
        w = Opened(browser, site.url + "host.html", allowed=site.url)
        inner = w.page.wait_for_selector("#lesson").content_frame()
        inner.wait_for_function(DRAWN)
        assert "G = 16" in inner.locator(".gp-chart:first-child .gp-title").text_content()
        assert inner.evaluate("document.body.classList.contains('ls-classroom')")
        # the frame is an opaque origin: nothing of the host's is within its reach
        assert inner.evaluate("(() => { try { return parent.document.cookie } catch (e) { return 'blocked' } })()"
                              ) == "blocked"
        assert inner.evaluate("self.origin") == "null"
        set_range(inner, "G", 8)  # the live view computes in the opaque frame too
        inner.wait_for_function("window.grpoLesson.shown.G === 8")
        inner.wait_for_function("document.querySelector('.gp-chart:first-child .gp-title').textContent"
                                ".includes('G = 8')")
        assert inner.url.endswith("#classroom=1"), inner.url  # G = 8 is the default: left out, as the app does
        assert not w.errors, w.errors
        w.close()
    finally:
        site.stop()


def test_row_14_a_malformed_entry_says_rebuild(browser, lesson, tmp_path):
    base = damaged(lesson, tmp_path / "l", "42").resolve().as_uri()
    w = Opened(browser, f"{base}/wasted.html#G=16", allowed=base + "/")
    err = w.page.locator("#ls-error")
    err.wait_for(state="visible")
    assert "This lesson's page is damaged (it is not a view's). Rebuild the lesson: python -m sim lesson build OUT" \
        " --force" in err.text_content()
    w.close()


# ---- rows 4 and 5: the link ----------------------------------------------------------------------------------


def test_row_4_the_rewritten_link_keeps_classroom_hide_and_predict(browser, lesson):
    base = lesson.resolve().as_uri()
    w = Opened(browser, f"{base}/training.html#classroom=1&hide=beta&predict=1&G=16", allowed=base + "/")
    p = w.page
    p.locator(".gp-predict").wait_for(state="visible")
    assert p.url.endswith("#G=16&beta=0&classroom=1&hide=beta&predict=1"), p.url  # a hidden control keeps its value
    p.reload(wait_until="domcontentloaded")  # reloading keeps all three
    p.locator(".gp-predict").wait_for(state="visible")
    assert p.evaluate("document.body.classList.contains('ls-classroom')")
    assert not p.locator("#ls-beta-0").is_visible() and p.locator("#ls-G").is_visible()
    w.close()


def test_row_5_the_page_follows_a_new_hash(browser, lesson):
    base = lesson.resolve().as_uri()
    w = Opened(browser, f"{base}/training.html#G=16", allowed=base + "/")
    p = w.page
    p.wait_for_function(DRAWN)
    p.evaluate("location.hash = 'G=8&beta=0.04'")  # the address bar, a same-page link, an iframe's src
    p.wait_for_function("window.grpoLesson.shown.G === 8 && window.grpoLesson.shown.beta === 0.04")
    p.wait_for_function("document.querySelector('.gp-chart:first-child .gp-title').textContent.includes('G = 8')")
    assert p.locator("#ls-G").input_value() == "8" and p.locator("#ls-beta-3").is_checked()
    assert p.url.endswith("#beta=0.04")
    changes = p.evaluate("window.grpoLesson.changes")
    p.evaluate("location.hash = 'G=8&beta=0.04&classroom=1'")  # a new flag rebuilds the page
    p.wait_for_function("document.body.classList.contains('ls-classroom')")
    p.wait_for_function(DRAWN)
    assert p.evaluate("window.grpoLesson.changes") <= changes  # a fresh page, not the old one redrawn
    assert not w.errors, w.errors
    w.close()


# ---- rows 6 and 14: what the link says, shown as text ------------------------------------------------------


def test_row_6_bidi_nul_and_line_separator_are_shown_escaped(browser, lesson):
    base = lesson.resolve().as_uri()
    w = Opened(browser, f"{base}/training.html#G=%E2%80%AE61%20lessons%20approved&beta=a%00b%E2%80%A8c",
               allowed=base + "/")
    p = w.page
    p.wait_for_function(SHOWN)
    note = p.locator("#ls-note").text_content()
    assert "URL parameter G=\\u202e61 lessons approved is not a number from 2 to 64; using G = 8." in note, note
    assert "URL parameter beta=a\\u0000b\\u2028c is not one of 0.0, 0.001, 0.01, 0.04, 0.1" in note, note
    assert not any(ch in note for ch in "\u202e\x00\u2028")
    w.close()


def test_row_14_last_value_wins_with_a_note_and_numbers_are_decimal(browser, lesson):
    base = lesson.resolve().as_uri()
    w = Opened(browser, f"{base}/training.html?G=8&G=16", allowed=base + "/")
    p = w.page
    p.wait_for_function(SHOWN)
    assert p.evaluate("window.grpoLesson.shown.G") == 16
    assert "G is given 2 times (8, 16); using the last one." in p.locator("#ls-note").text_content()
    w.close()
    w = Opened(browser, f"{base}/training.html#G=0x10", allowed=base + "/")
    p = w.page
    p.wait_for_function(SHOWN)
    assert p.evaluate("window.grpoLesson.shown.G") == 8  # the default, not 16
    assert "URL parameter G=0x10 is not a number from 2 to 64; using G = 8." in p.locator("#ls-note").text_content()
    w.close()


def test_row_14_the_contents_page_carries_only_its_own_keys(browser, lesson):
    base = lesson.resolve().as_uri()
    w = Opened(browser, f"{base}/index.html?classroom=1&utm=%3Cx%3E&hide=G,%3Cimg%3E&predict=1&G=4",
               allowed=base + "/")
    href = w.page.get_by_role("link", name="Training dynamics").get_attribute("href")
    assert href.endswith("/training.html?classroom=1&hide=G&predict=1"), href
    w.close()
