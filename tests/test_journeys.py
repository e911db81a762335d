"""Two people's paths through the playground, in Chromium, asserting what each sees: text, sizes, axis ranges.

- The lecturer, at the projector (1920x1080, ?classroom=1, the presenter key): every page, read from the back of a
  hall (90% of the visible text or more at 20 px, charts aside; no chart wider than the screen); Training played to
  its end, every chart's x axis covering it; a TinyLM run to its end, every live chart covering its last iteration;
  a question revealed in one click.
- A student with the lesson on a phone (390x844, from file://): the contents page lists every exercise; every
  lesson page fits the screen, one chart per row and none under 300 px, the first chart on the first screen;
  each of the chapter's questions answered in question mode, the answer and its charts shown after one click.
"""

from __future__ import annotations

import time

import pytest

from sim.views.catalog import EXERCISES, PAGES, view
from tests.fixtures.serve import IDLE, browser_marks, launch_chromium, start_server
from tests.fixtures.viewpage import shown

pytestmark = browser_marks()
KEY = "journey-Lecturer-Key-7Qx2"
HALL = {"width": 1920, "height": 1080}
PHONE = {"width": 390, "height": 844}

# The share of visible characters at 20 px or more in the main area, charts aside (KaTeX's MathML copy aside)
TEXT_AT_20PX = """(root) => {
  const main = document.querySelector(root) || document.body;
  const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
  let big = 0, all = 0;
  while (walker.nextNode()) {
    const n = walker.currentNode, text = n.textContent.replace(/\\s+/g, '');
    const el = n.parentElement;
    if (!text || !el || el.closest('.gp-plot, svg, .katex-mathml, [hidden], script, style, noscript')) continue;
    if (!el.getClientRects().length) continue;
    const cs = getComputedStyle(el);
    if (cs.visibility === 'hidden') continue;
    all += text.length;
    if (parseFloat(cs.fontSize) >= 20) big += text.length;
  }
  return all ? big / all : 1;
}"""
CHARTS = """() => [...document.querySelectorAll('.gp-chart')].filter((c) => c.offsetParent !== null).map((c) => {
  const r = c.getBoundingClientRect(), plot = c.querySelector('.js-plotly-plot');
  const full = plot && plot._fullLayout, xs = plot ? plot.data.flatMap((t) => Array.from(t.x || [])) : [];
  return {title: c.querySelector('.gp-title').textContent, left: r.left, right: r.right, top: r.top, width: r.width,
          x_range: full && full.xaxis.type !== 'category' ? full.xaxis.range.map(Number) : null,
          x_max: xs.length ? Math.max(...xs.filter((x) => typeof x === 'number')) : null};
})"""


def app_idle(page) -> None:
    page.wait_for_selector(IDLE, timeout=90_000)
    page.wait_for_function("() => [...document.querySelectorAll('.gp-plot')].every("
                           "(p) => p.offsetParent === null || p.querySelector('.main-svg'))", timeout=90_000)


@pytest.fixture(scope="module")
def lecturer_server():
    served = start_server(env={"GRPO_PRESENTER_KEY": KEY})
    yield served.url
    served.stop()


def navigate(page, name: str) -> None:
    """Open page `name` from the app's navigation: unfold it (presenter mode starts it folded), click, fold it."""
    page.get_by_test_id("stExpandSidebarButton").click()
    page.locator(f"[data-testid=stSidebarNavLink][href$='/{name}']").click()
    page.wait_for_function(f"location.pathname.endsWith('/{name}')")
    page.get_by_test_id("stSidebarCollapseButton").locator("button").click()


def test_the_lecturers_path(lecturer_server):
    from playwright.sync_api import sync_playwright

    url = lecturer_server
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        page = browser.new_page(viewport=HALL)
        page.set_default_timeout(90_000)
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{url}/?presenter={KEY}&classroom=1")
        app_idle(page)
        page.wait_for_function("!location.search.includes('presenter')")
        assert KEY not in page.url

        # every page, reached as the lecturer reaches it (the navigation, which drops the query string: presenter
        # mode stays on), as the hall reads it
        for p in PAGES:
            navigate(page, p.name)
            page.wait_for_function("new URLSearchParams(location.search).get('classroom') === '1'",
                                   timeout=30_000)  # back in the address once the page's renderer mounts
            app_idle(page)
            if view(p.name).lesson == "page":
                shown(page, timeout=90_000)
            time.sleep(0.5)
            assert page.get_by_test_id("stException").count() == 0, p.name
            share = page.evaluate(TEXT_AT_20PX, "[data-testid=stMain]")
            assert share >= 0.9, f"/{p.name}: {share:.0%} of its text at 20 px or more"
            for c in page.evaluate(CHARTS):
                assert c["left"] >= 0 and c["right"] <= HALL["width"], f"/{p.name}: {c['title']} runs off the screen"
            assert page.evaluate("document.scrollingElement.scrollWidth <= innerWidth"), p.name

        # Training played to its end: every chart over the iterations covers them all
        page.goto(f"{url}/training?classroom=1")
        shown(page)
        page.locator(".gp-speed").select_option("120")
        page.get_by_role("button", name="Play").click()
        page.locator(".gp-label", has_text="iteration 200 / 200").wait_for()
        over_t = [c for c in page.evaluate(CHARTS) if c["x_range"] and (c["x_max"] or 0) >= 150]
        assert len(over_t) == 4, over_t  # accuracy, zero-gradient groups, p_j over time, KL and entropy
        for c in over_t:
            assert c["x_max"] == 200 and c["x_range"][1] >= 200 - 0.5, c

        # a question, revealed in one click
        page.goto(f"{url}/wasted?classroom=1&predict=1")
        shown(page)
        box = page.locator(".gp-predict").first
        box.locator("input").fill("34")
        box.get_by_role("button", name="Reveal").click()
        page.locator(".gp-close").first.wait_for(timeout=5_000)
        assert "off by 0.3 points, within ±5.0 points: close." in page.locator(".gp-close").first.inner_text()

        # a TinyLM run to its end: every live chart covers its last iteration
        page.goto(f"{url}/tinylm?classroom=1&tinylm_on=true&tl_iters=6&tl_P=4&tl_G=4&tl_eval=4")
        app_idle(page)
        page.get_by_role("button", name="▶ Start").click()  # in this tab (assets/js/tinylm_trainer_view.js)
        page.wait_for_function("document.querySelector('.tl-status').textContent.startsWith('Done:')",
                               timeout=240_000)
        app_idle(page)
        time.sleep(1.5)
        live = [c for c in page.evaluate(CHARTS) if c["x_range"] and c["x_max"] is not None
                and "pass@k" not in c["title"] and "seeds" not in c["title"] and "zoomed" not in c["title"]]
        assert live, "no live chart"
        assert len(live) >= 4
        for c in live:
            assert c["x_range"][1] >= max(6, c["x_max"]), c  # the axis covers the run's last iteration
        assert not errors, errors
        browser.close()


def test_a_students_path_on_a_phone(exercise_lesson):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        ctx = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
        page = ctx.new_page()
        page.set_default_timeout(90_000)
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))

        # the contents page: the chapter's workbook
        page.goto((exercise_lesson / "index.html").as_uri())
        page.wait_for_selector(".ls-links")
        rows = page.locator(".ls-links").nth(1).locator("li")  # the pages, then the workbook
        assert rows.count() == len(EXERCISES)
        assert page.get_by_role("link", name="Start with One group").is_visible()
        assert page.evaluate("document.scrollingElement.scrollWidth <= innerWidth")

        # every page of the lesson fits the phone, one chart per row, the first chart on the first screen
        for p in PAGES:
            v = view(p.name)
            if v.lesson == "app":
                continue
            page.goto((exercise_lesson / f"{p.name}.html").as_uri())
            shown(page)
            time.sleep(0.5)
            charts = page.evaluate(CHARTS)
            assert charts or p.name == "lab", p.name  # the lab's page is its tasks: text, formulas, commands
            assert page.evaluate("document.scrollingElement.scrollWidth <= innerWidth"), f"{p.name} scrolls sideways"
            for c in charts:
                assert c["width"] >= 300 and c["right"] <= PHONE["width"] + 1, (p.name, c)
            tops = sorted({round(c["top"]) for c in charts})
            assert len(tops) == len(charts), f"{p.name}: two charts share a row on a phone"
            if v.lesson == "page" and charts:
                assert page.locator("details.ls-settings").get_attribute("open") is None, "settings start folded"
                if v.trainer:  # a view that trains: its Start on the first screen (its charts are what Start draws)
                    box = page.get_by_role("button", name="▶ Start").bounding_box()
                    assert box and box["y"] + box["height"] <= PHONE["height"], f"{p.name}: Start at {box}"
                else:
                    first = charts[0]["top"]
                    assert first < PHONE["height"], f"{p.name}: the first chart starts at {first:.0f} px"
            assert page.locator(".modebar-container .modebar").count() == 0, "Plotly's toolbar over the legends"

        # each question of the chapter, answered in question mode: the answer and its charts after one click
        for e in [e for e in EXERCISES if e.question]:
            page.goto((exercise_lesson / f"{e.page}.html").as_uri() + "?predict=1")
            page.wait_for_function("window.grpoPage && window.grpoPage.state")
            for _ in range(4):  # a page may ask several in turn (Wasted groups: G = 8, then G = 64)
                open_box = page.locator(".gp-predict:visible").filter(has=page.get_by_role("button", name="Reveal"))
                if open_box.count() == 0:
                    break
                box = open_box.first
                if box.locator("input[type=radio]").count():
                    box.locator("input[type=radio]").first.check()
                else:
                    box.locator("input").fill("1")
                said = page.locator(".gp-close, .gp-far").count()
                box.get_by_role("button", name="Reveal").click()  # one click: the verdict, then its charts
                page.wait_for_function(f"document.querySelectorAll('.gp-close, .gp-far').length > {said}",
                                       timeout=30_000)
            shown(page)
            assert page.locator(".gp-plot:visible").count() >= 1, f"{e.page}: no chart after the answers"
        assert not errors, errors
        ctx.close()
        browser.close()


# What a newcomer sees on the home page: each list item whole (nothing cut by its box), in screen order
ITEMS = """() => [...document.querySelectorAll('.ls-links li')].filter((e) => e.offsetParent !== null).map((e) => {
  const r = e.getBoundingClientRect();
  const cut = [e, ...e.querySelectorAll('*')].some((x) => x.scrollWidth > x.clientWidth + 1
    && getComputedStyle(x).overflowX !== 'visible');
  return {text: e.textContent, top: r.top, right: r.right, cut};
})"""


def test_a_newcomers_first_minute_at_1366(server):
    """A newcomer opens the app at 1366x768: "Start here" and its link on the first screen, the first screen's terms
    explained where they appear (PPO's critic, the advantage's ε), every entry of the lists whole and none repeating
    its own title; "Download this lesson" downloads the lesson's zip on the first click."""
    import io
    import zipfile

    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        ctx = browser.new_context(viewport={"width": 1366, "height": 768}, accept_downloads=True)
        page = ctx.new_page()
        page.set_default_timeout(90_000)
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: m.type == "error" and errors.append(m.text))
        page.goto(server)
        app_idle(page)
        page.wait_for_selector(".ls-links")
        assert page.get_by_role("heading", name="Start here").bounding_box()["y"] < 768
        start = page.get_by_role("link", name="Start with One group").bounding_box()
        assert start and start["y"] + start["height"] <= 768, start
        text = page.locator(".ls-doc").first.text_content()
        assert "PPO's critic, the second network that would otherwise learn" in text
        assert "ε is a tiny number that keeps such a group at 0" in text
        items = page.evaluate(ITEMS)
        assert len(items) >= len(PAGES) + len(EXERCISES) - 2  # the pages and the workbook (the app lists them all)
        for item in items:
            assert not item["cut"] and item["right"] <= 1366, item
            words = item["text"].split(":")
            assert len({w.strip() for w in words if w.strip()}) == len([w for w in words if w.strip()]), item
        # the lesson's zip, on the first click
        link = page.get_by_role("link", name="Download this lesson")
        with page.expect_download(timeout=60_000) as got:
            link.click()
        data = open(got.value.path(), "rb").read()
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            names = z.namelist()
        assert got.value.suggested_filename == "grpo-lesson.zip"
        assert any(n.endswith("index.html") for n in names) and any(n.endswith("tinylm-trainer.js") for n in names)
        assert not errors, errors
        ctx.close()
        browser.close()
