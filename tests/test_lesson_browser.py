"""A built lesson in headless Chromium, from file://, over http.server on loopback and inside another site's
iframe: only the lesson's own files are requested, and data is never run; every view computes any setting of its
controls in the page (assets/js/views.js, the toy engine), plays, keeps its presets and its setting in the hash
(written back, followed when it changes, its flags kept), asks before it answers, enlarges for a class, and refuses
what the engine refuses with the app's words; a damaged page or recorded view is a message that says to rebuild.

The page is the app's (assets/js/page.js, one renderer for both hosts): what both hosts do alike (a control move,
the address bar's round trip, hostile values, presets, Pin and New seed) is tests/test_view_pages_browser.py's, and
how a link is read and corrected, tests/test_link_rules_browser.py's.

Run: OMP_NUM_THREADS=1 python -m pytest tests/test_lesson_browser.py -m e2e
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.fixtures.serve import browser_marks, free_port, launch_chromium

pytestmark = browser_marks()
playwright_sync = pytest.importorskip("playwright.sync_api", reason="playwright (python) is not installed")
STATS = "window.grpoPlayers.training"
DRAWN = f"window.grpoPlayers && {STATS} && {STATS}.draws > 0"  # the page may not have its scripts yet
SHOWN = "window.grpoPage && window.grpoPage.shown"
ACC_TITLE = ".gp-chart:first-child .gp-title"
MANIFEST = 'id="lesson-manifest">'


@pytest.fixture
def lesson(small_lesson) -> Path:
    return small_lesson  # the live views and Wasted groups, shared with tests/test_lesson.py


@pytest.fixture
def everything(exercise_lesson) -> Path:
    return exercise_lesson  # every view, shared with tests/test_lesson.py


@pytest.fixture(scope="module")
def browser():
    with playwright_sync.sync_playwright() as pw:
        b = launch_chromium(pw)
        yield b
        b.close()


class Opened:
    """A page that records page errors and every request; a request outside `allowed` is aborted and kept."""

    def __init__(self, browser, url: str, allowed: str, viewport=(1280, 800)):
        self.context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
        self.page = p = self.context.new_page()
        p.set_default_timeout(30_000)
        self.errors, self.requests, self.outside = [], [], []

        def route(r):
            self.requests.append(r.request.url)
            if r.request.url.startswith(allowed):
                r.continue_()
            else:
                self.outside.append(r.request.url)
                r.abort()

        self.context.route("**/*", route)
        p.on("pageerror", lambda e: self.errors.append(str(e)))
        p.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        p.goto(url, wait_until="domcontentloaded")  # not "load": that waits for Plotly.js, which a test may not need

    @classmethod
    def drawn(cls, browser, lesson: Path, page: str) -> Opened:
        """`page` of the lesson (a name with its hash), opened from file:// and drawn; nothing outside it loaded."""
        base = lesson.resolve().as_uri()
        w = cls(browser, f"{base}/{page}", allowed=base + "/")
        w.page.wait_for_function(DRAWN)
        return w

    def close(self):
        self.context.close()
        assert not self.outside, f"requests outside the lesson: {self.outside}"


def set_range(page, key: str, value) -> None:
    """Move a lesson's slider to `value` as a user's drag does (input events)."""
    page.evaluate(f"""(() => {{ const r = document.getElementById('ls-{key}'); r.value = '{value}';
        r.dispatchEvent(new Event('input', {{bubbles: true}})); }})()""")


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


def damaged(lesson: Path, where: Path, new_text: str) -> Path:
    """A copy of the lesson whose Wasted groups page has a manifest (its inline JSON) holding `new_text`."""
    shutil.copytree(lesson, where)
    page = where / "wasted.html"
    text = page.read_text(encoding="utf-8")
    start = text.index(MANIFEST) + len(MANIFEST)
    end = text.index("</script>", start)
    page.write_text(text[:start] + new_text + text[end:], encoding="utf-8")
    return where


# ---- from file:// ----------------------------------------------------------------------------------------------


def test_from_file_any_setting_plays_and_a_copied_link_reproduces_it(browser, lesson):
    w = Opened.drawn(browser, lesson, "training.html")
    p = w.page
    assert "G = 8" in p.locator(ACC_TITLE).text_content()
    p.get_by_label("speed in iterations per second").select_option("60")
    p.get_by_role("button", name="Play").click()
    p.wait_for_function(f"{STATS}.drawn.length >= 40")
    set_range(p, "G", 13)  # a value no grid held: computed in the page
    p.wait_for_function(f"document.querySelector('{ACC_TITLE}').textContent.includes('G = 13')", timeout=10_000)
    t_switch = p.evaluate(f"{STATS}.drawn.at(-1)")
    p.wait_for_function(f"{STATS}.drawn.at(-1) >= {t_switch + 10}")  # still playing, from the same iteration
    drawn = p.evaluate(f"{STATS}.drawn")
    assert min(drawn[drawn.index(t_switch) :]) >= t_switch - 1, "the switch kept the iteration"
    set_range(p, "lr", 0.35)
    set_range(p, "seed", 4321)
    p.locator("#ls-scale-2").check()  # Dr. GRPO: no std
    p.wait_for_function("window.grpoPage.shown && window.grpoPage.shown.scale === 'none'")
    assert p.url.endswith("#G=13&scale=none&lr=0.35&seed=4321"), p.url  # the defaults left out, as the app does
    assert "(seed 4321)" in p.locator(".gp-title", has_text="p_j over time").text_content()
    assert p.evaluate("window.grpoLive.training.worker"), "the engine ran off the page's main thread"
    assert not w.errors, w.errors
    link = p.url
    captions = p.locator(".gp-caption").all_text_contents()
    w.close()
    w2 = Opened.drawn(browser, lesson, link.rsplit("/", 1)[1])  # the copied link, opened afresh
    assert w2.page.locator("#ls-G").input_value() == "13" and w2.page.locator("#ls-lr").input_value() == "0.35"
    w2.page.wait_for_function("window.grpoPage.changes > 0")
    assert w2.page.locator(".gp-caption").all_text_contents() == captions  # the same run, the same words
    assert not w2.errors
    w2.close()


def test_presets_and_a_run_over_the_memory_cap(browser, lesson):
    w = Opened.drawn(browser, lesson, "training.html")
    p = w.page
    p.get_by_role("button", name="No shared skill (lr_w = 0)").click()
    p.wait_for_function("window.grpoPage.shown.lr_w === 0")
    heat = p.locator(".gp-chart", has_text="hard prompts wait").locator(".gp-caption").text_content()
    assert "never passes p = 0.1" in heat and "lr_w = 0" in heat
    assert p.url.endswith("#lr_w=0")
    p.get_by_role("button", name="… with CISPO").click()  # every other control back to its default
    p.wait_for_function("window.grpoPage.shown.loss === 'cispo'")
    assert p.url.endswith("#lr=2&mu=8&eps_high=5&loss=cispo"), p.url
    # the clip's note, above the player: what CISPO did at this setting
    p.wait_for_function("[...document.querySelectorAll('.gp-live > .gp-text')].some((c) => !c.hidden && "
                        "c.textContent.includes('CISPO (ε_max = 5) capped the weight of'))")
    # a run over the engine's memory cap (no control of the page reaches it) is refused before anything is
    # allocated, with the engine's message in the app's words, and no charts (a run that diverges:
    # tests/test_view_pages_browser.py)
    err = p.locator(".gp-error")
    p.evaluate("window.grpoPage.doc.kept.get('live:training').live.show({view: 'training', config: {n_seeds: 1024, "
               "iterations: 5000}})")
    p.wait_for_function("document.querySelector('.gp-error').textContent.includes('memory')")
    said = err.text_content()
    assert said.startswith("These settings cannot run:") and p.locator(".gp-live-player").is_hidden()
    assert "this run needs about 2,950 MB of memory" in said and "the cap is 480 MB" in said, said
    p.evaluate("location.hash = ''")  # back to the defaults: charts again
    err.wait_for(state="hidden")
    assert p.locator(".gp-live-player").is_visible() and "G = 8" in p.locator(ACC_TITLE).text_content()
    assert not w.errors, w.errors
    w.close()


def test_std_scaling_and_the_sharpening_toy_compute_in_the_page(browser, lesson):
    base = lesson.resolve().as_uri()
    w = Opened(browser, f"{base}/std_scaling.html#G=5&lr=0.45&seed=3", allowed=base + "/")
    p = w.page
    p.wait_for_function("window.grpoPlayers && window.grpoPlayers.std_scaling && "
                        "window.grpoPlayers.std_scaling.draws > 0")
    assert "At the same learning rate 0.45" in p.locator(".gp-live .gp-text").text_content()
    titles = p.locator(".gp-title").all_text_contents()
    assert titles[:2] == ["Mean |A| of a group with c of 5 correct", "How hard a prompt is pushed, by its solve rate p"]
    assert "Mean accuracy (16 seeds)" in titles  # the comparison, computed by the engine in the page
    assert "The chapter's answer: 0.8." in p.locator(".ls-answer").text_content()  # 1 of 5: 2 (1/5)(4/5) / 0.4
    w.close()
    w = Opened(browser, f"{base}/passk.html#sG=12&sT=150&seed=9", allowed=base + "/")
    p = w.page
    p.wait_for_function("window.grpoPlayers && window.grpoPlayers.sharpen && window.grpoPlayers.sharpen.draws > 0")
    sharpen = p.locator(".ls-live").last
    assert sharpen.locator(".gp-label").text_content() == "iteration 0 / 150"
    assert sharpen.locator(".gp-below").text_content().startswith("One set of strategy logits is shared by both "
                                                                  "problems. After 150 iterations")
    assert sharpen.locator(".gp-title").count() == 3 and not w.errors, w.errors
    w.close()


# ---- served, embedded: only the lesson's files, data never run ---------------------------------------------


def test_over_http_server_only_the_lessons_files(browser, lesson):
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "-d", str(lesson)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        root = f"http://127.0.0.1:{port}/"
        for _ in range(100):
            try:
                urllib.request.urlopen(root, timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        w = Opened(browser, root + "index.html", allowed=root)
        w.page.get_by_role("list").get_by_role("link", name="Training dynamics").first.click()
        w.page.wait_for_function(DRAWN)
        assert not w.errors, w.errors
        assert any(u.endswith(".min.js") for u in w.requests) and any(u.endswith("/training.html") for u in w.requests)
        assert not [u for u in w.requests if "/data/" in u]  # a page computes its view: no data files
        w.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_code_in_the_data_is_not_run_even_same_origin(browser, lesson, tmp_path):
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


def test_the_lesson_works_unchanged_in_a_sandboxed_iframe(browser, lesson, tmp_path):
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
        inner.wait_for_function("window.grpoPage.shown.G === 8")
        inner.wait_for_function("document.querySelector('.gp-chart:first-child .gp-title').textContent"
                                ".includes('G = 8')")
        assert inner.url.endswith("#classroom=1"), inner.url  # G = 8 is the default: left out, as the app does
        assert not w.errors, w.errors
        w.close()
    finally:
        site.stop()


# ---- damaged pages ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "damage", "said"), [
    ("lab", lambda t: re.sub(r'(<script type="application/json" id="ls-data">)\[', r'\1[{"kind": "script"},', t),
     "This lesson's data is damaged ("),  # a recorded document with a block of no known kind
    ("tinylm", lambda t: t.replace('<script type="application/json" id="ls-data">',
                                   '<script type="application/json" id="ls-data">{', 1),
     "This lesson's data is damaged (it is not JSON)"),  # the records a page trains beside, cut
])
def test_a_damaged_view_data_is_a_message(browser, everything, tmp_path, name, damage, said):
    broken = tmp_path / "broken"
    shutil.copytree(everything, broken)
    page = broken / f"{name}.html"
    text = page.read_text(encoding="utf-8")
    page.write_text(damage(text), encoding="utf-8")
    assert page.read_text(encoding="utf-8") != text
    base = broken.resolve().as_uri()
    w = Opened(browser, f"{base}/{name}.html", allowed=base + "/")
    err = w.page.locator("#ls-error")
    err.wait_for(state="visible")
    assert said in err.text_content() and "Rebuild the lesson" in err.text_content(), err.text_content()
    assert w.page.locator(".gp-root").count() == 0  # nothing of it drawn
    w.close()


def test_a_malformed_manifest_says_rebuild(browser, lesson, tmp_path):
    base = damaged(lesson, tmp_path / "l", "42").resolve().as_uri()
    w = Opened(browser, f"{base}/wasted.html#G=16", allowed=base + "/")
    err = w.page.locator("#ls-error")
    err.wait_for(state="visible")
    assert "This lesson's page is damaged (it is not a view's). Rebuild the lesson: python -m sim lesson build OUT" \
        " --force" in err.text_content()
    w.close()


# ---- the hash: written with its flags, followed ---------------------------------------------------------


def test_the_rewritten_hash_keeps_classroom_hide_and_predict(browser, lesson):
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


def test_the_page_follows_a_new_hash_and_a_new_flag_rebuilds_it(browser, lesson):
    w = Opened.drawn(browser, lesson, "training.html#G=16")
    p = w.page
    p.evaluate("location.hash = 'G=8&beta=0.04'")  # the address bar, a same-page link, an iframe's src
    p.wait_for_function("window.grpoPage.shown.G === 8 && window.grpoPage.shown.beta === 0.04")
    p.wait_for_function("document.querySelector('.gp-chart:first-child .gp-title').textContent.includes('G = 8')")
    assert p.locator("#ls-G").input_value() == "8" and p.locator("#ls-beta-3").is_checked()
    assert p.url.endswith("#beta=0.04")
    changes = p.evaluate("window.grpoPage.changes")
    p.evaluate("location.hash = 'G=8&beta=0.04&classroom=1'")  # a new flag rebuilds the page
    p.wait_for_function("document.body.classList.contains('ls-classroom')")
    p.wait_for_function(DRAWN)
    assert p.evaluate("window.grpoPage.changes") <= changes  # a fresh page, not the old one redrawn
    assert not w.errors, w.errors
    w.close()


def test_the_contents_page_carries_only_its_own_keys(browser, lesson):
    base = lesson.resolve().as_uri()
    w = Opened(browser, f"{base}/index.html?classroom=1&utm=%3Cx%3E&hide=G,%3Cimg%3E&predict=1&G=4",
               allowed=base + "/")
    w.page.wait_for_selector(".ls-links")
    href = w.page.get_by_role("list").first.get_by_role("link", name="Training dynamics").get_attribute("href")
    assert href.rsplit("/", 1)[-1] == "training.html?classroom=1&hide=G&predict=1", href
    w.close()


# ---- questions first, presenter mode ------------------------------------------------------------------


def test_classroom_predict_and_hide(browser, lesson):
    base = lesson.resolve().as_uri()
    w = Opened(browser, f"{base}/training.html?classroom=1&predict=1&hide=G", allowed=base + "/", viewport=(1920, 1080))
    p = w.page
    box = p.locator(".gp-predict")
    box.wait_for(state="visible")  # the question, from the run computed in the page
    assert "The hardest prompt starts at p = 0.001" in box.text_content()
    assert p.locator(".gp-live-player").is_hidden() and not p.locator("#ls-G").is_visible()
    assert p.get_by_role("button", name="Reveal").is_disabled()
    p.get_by_label("Your guess").fill("100")
    p.get_by_role("button", name="Reveal").click()
    p.wait_for_function(DRAWN)
    said = box.text_content()
    assert re.search(r"Your guess 100, this run's answer \d+: off by \d+ \(\d+% of the answer\), (within|not "
                     r"within) ±\d+: ", said), said
    assert "It waits until the shared skill w" in said
    assert p.evaluate("document.querySelector('.gp-root').classList.contains('gp-classroom')")
    columns = p.evaluate("getComputedStyle(document.querySelector('.gp-charts')).gridTemplateColumns")
    assert len(columns.split(" ")) == 3
    w.close()


def test_the_exercise_views_ask_before_they_show_the_answer_and_draw_their_charts(browser, everything):
    base = everything.resolve().as_uri()
    w = Opened(browser, f"{base}/kl_clip.html?predict=1&classroom=1", allowed=base + "/", viewport=(1920, 1080))
    p = w.page
    p.wait_for_function("window.grpoPage && window.grpoPage.shown")
    boxes = p.locator(".ls-question .gp-predict")
    assert boxes.count() == 2  # the k3 check and the chapter's clip example, as the app asks them
    assert not p.locator(".ls-metric-label", has_text="u = π_ref / π").is_visible()  # the k3 numbers wait
    boxes.first.get_by_label("Your guess").fill("0.016")
    boxes.first.get_by_role("button", name="Reveal").click()
    assert "the chapter's answer 0.0157: off by 0.0003" in boxes.first.text_content()
    assert p.locator(".ls-metric-label", has_text="u = π_ref / π").is_visible()
    second = boxes.nth(1)
    assert "0.40 → 0.50" in second.text_content() and second.get_by_role("button", name="Reveal").is_disabled()
    assert not p.locator(".ls-box", has_text="ratio 1.250").is_visible()  # the clip's answer waits for its guess
    second.get_by_label("no gradient: clipped").check()
    second.get_by_role("button", name="Reveal").click()
    assert "Right: no gradient: clipped." in second.text_content()
    assert "ratio 1.250; with A > 0 and ε = 0.20 the token is clipped" in p.locator(".ls-box").first.text_content()
    p.wait_for_function("document.querySelectorAll('.js-plotly-plot').length >= 10")  # k, 2 surrogates, 6, MC
    titles = p.locator(".gp-title").all_text_contents()
    assert "Estimates of KL against the number of sampled tokens" in titles and "SAPO, τ = 1 / 1.05" in titles
    size = "(q) => getComputedStyle(document.querySelector(q)).fontSize"
    assert p.evaluate(f"['.ls-table td', '.ls-doc .ls-text'].map({size})") == ["20px", "22px"]  # the app's sizes
    assert not w.errors, w.errors
    w.close()
    # the contents page in presenter mode passes ?classroom=1 on to every view; the app-only views have no link
    w = Opened(browser, f"{base}/index.html?classroom=1", allowed=base + "/")
    w.page.wait_for_selector(".ls-links")
    contents = w.page.get_by_role("list").first  # the pages (the workbook's list links the same pages again)
    href = contents.get_by_role("link", name="One group").get_attribute("href")
    assert w.page.evaluate("document.body.classList.contains('ls-classroom')")
    assert href.rsplit("/", 1)[-1] == "one_group.html?classroom=1"
    assert contents.get_by_role("link", name="Your run").count() == 0
    w.close()
    w = Opened(browser, f"{base}/one_group.html?classroom=1#mode=count&c=1", allowed=base + "/")
    p = w.page
    p.wait_for_function("window.grpoDoc && window.grpoDoc.charts > 0 && document.querySelector('.js-plotly-plot')")
    # the chapter's 1.732 / -0.577
    assert "Right answers get +1.732" in " ".join(p.locator(".ls-doc .ls-caption").all_text_contents())
    p.wait_for_function("document.querySelector('.js-plotly-plot').data")
    bars = p.evaluate("Array.from(document.querySelector('.js-plotly-plot').data[0].y)")
    assert [round(b, 3) for b in bars] == [1.732, -0.577, -0.577, -0.577]
    assert p.evaluate(f"['.xtick text'].map({size})") == ["20px"]  # the app's presenter chart sizes
    # the picked answers: back to "each" and pick 2 and 3 by their buttons; the link keeps them, once each
    p.locator("#ls-mode-0").check()
    p.get_by_role("button", name="1", exact=True).click()  # unpick 1 (the chapter's group is 1 and 4)
    p.get_by_role("button", name="3", exact=True).click()
    p.wait_for_function("JSON.stringify(window.grpoPage.shown.pick) === '[3,4]'")
    assert p.url.endswith("#c=1&pick=3&pick=4"), p.url
    assert not w.errors, w.errors
    w.close()


def test_a_reader_trains_tinylm_in_the_page_past_0_80_and_pauses_resumes_and_stops_it(browser, everything):
    """The lesson from file://: Start with the defaults trains TinyLM in this tab (its Workers, the lesson's own
    tinylm-trainer.js) until the exact held-out pass@1 the status line prints passes 0.80; a sole reader's Pause
    holds it and Resume goes on; Stop during the pass@k evaluation says the run has no pass@k results, and never
    beside an evaluation still counting."""
    base = everything.resolve().as_uri()
    w = Opened(browser, f"{base}/tinylm.html", allowed=base + "/", viewport=(1366, 768))
    p = w.page
    p.wait_for_selector(".tl-trainer")
    status = p.locator(".tl-status")
    button = lambda name: p.locator(".tl-bar button", has_text=name)  # noqa: E731
    assert status.text_content().startswith("Press Start to train TinyLM")
    button("Start").click()
    p.wait_for_function("/^GRPO: ([2-9]|\\d\\d+) \\/ 300/.test(document.querySelector('.tl-status').textContent)",
                        timeout=120_000)
    assert button("Pause").is_enabled() and button("Resume").is_disabled()  # a sole reader may pause
    button("Pause").click()
    p.wait_for_function("document.querySelector('.tl-status').textContent.includes('(paused)')")
    time.sleep(0.5)  # the iteration under way when Pause was pressed ends; then none starts
    held = status.text_content()
    time.sleep(1.5)
    assert status.text_content() == held and button("Resume").is_enabled(), held
    button("Resume").click()
    p.wait_for_function("document.querySelector('.tl-status').textContent.startsWith('Done:')", timeout=300_000)
    said = re.search(r"held-out pass@1 (\d\.\d{3}) → (\d\.\d{3}) \(exact\)", status.text_content())
    assert said, status.text_content()
    before, after = float(said[1]), float(said[2])
    assert before < 0.6 and after >= 0.80, (before, after)  # the chapter's about 0.5 → 0.85
    assert "never solved" in p.locator(".tl-trainer").text_content()
    # again, stopped while it evaluates pass@k
    button("Start").click()
    p.wait_for_function("document.querySelector('.tl-status').textContent.startsWith('Evaluating pass@k')",
                        timeout=300_000, polling=50)
    button("Stop").click()
    p.wait_for_function("document.querySelector('.tl-status').textContent.startsWith('You stopped')")
    assert "during its pass@k evaluation" in status.text_content() and "no pass@k results" in status.text_content()
    assert p.locator(".tl-progress").is_hidden() and "Evaluating" not in p.locator(".tl-trainer").text_content()
    assert not w.errors, w.errors
    w.close()


def test_a_control_move_while_tinylm_trains_redraws_only_the_chart_it_changes(browser, everything):
    """The TRL overlay switched on and off while the reader's run is under way (paused, so that no iteration arrives
    meanwhile) draws anew only the live chart it changes (reward with pass@1): the recorded runs' charts and the
    other live charts stay as drawn (player.js compares each chart's spec and arrays), and the changed chart's
    Plotly data holds the TRL lines exactly while the box is ticked."""
    base = everything.resolve().as_uri()
    w = Opened(browser, f"{base}/tinylm.html", allowed=base + "/", viewport=(1366, 768))
    p = w.page
    p.wait_for_selector(".tl-trainer")
    p.locator(".tl-bar button", has_text="Start").click()
    p.wait_for_function("/^GRPO: ([2-9]|\\d\\d+) \\/ 300/.test(document.querySelector('.tl-status').textContent) "
                        "&& window.grpoPlayers.tl_live && window.grpoPlayers.tl_live.draws > 0", timeout=120_000)
    p.locator(".tl-bar button", has_text="Pause").click()
    p.wait_for_function("document.querySelector('.tl-status').textContent.includes('(paused)')")
    time.sleep(1.0)  # the iteration under way when Pause was pressed ends and is drawn (DRAW_MS later)
    redrawn = "Object.fromEntries(Object.entries(window.grpoPlayers).map(([k, s]) => [k, s.redrawn]))"
    trl = ("[...document.querySelectorAll('[data-key=tl_live] .gp-plot')].map((g) => g.data.map((t) => t.name)"
           ".filter((n) => n.includes('TRL')).length)")
    before = p.evaluate(redrawn)
    assert len(before) >= 3 and "tl_live" in before, before  # the live charts and the recorded runs'
    assert p.evaluate(trl) == [0] * 8
    for on, lines in ((True, 2), (False, 0)):
        draws = p.evaluate("window.grpoPlayers.tl_live.draws")
        p.locator("#ls-tl_trl").set_checked(on)
        p.wait_for_function(f"window.grpoPlayers.tl_live.draws > {draws}")
        want = ",".join(map(str, [lines] + [0] * 7))
        p.wait_for_function(f"{trl}.join(',') === '{want}'")
        after = p.evaluate(redrawn)
        assert after == {**before, "tl_live": before["tl_live"] + 1}, (before, after)
        before = after
    assert not w.errors, w.errors
    w.close()
