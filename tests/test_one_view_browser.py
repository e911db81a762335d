"""One view, two hosts (issue 30): every view opened in the app and in a built lesson, each at its defaults, shows
the same words: title, intro, chart titles and captions, the page's captions and notes, every predict question and
every control label, read from what Chromium shows (whitespace normalised, nothing else). It also counts the
charts, tables and controls each host shows, and asks the lesson for every one the app has.

The app's Markdown is read as the reader sees it: KaTeX's hidden MathML copy of an equation is left out, the
rendered symbols kept; a part the app draws for what only its server does (TinyLM's trainer) sits in a
container keyed app_only_*, and is left out. A view only the app has (it reads a visitor's file or runs code on the
server) is skipped with the reason its declaration gives; TinyLM's lesson page replays recorded runs, and is compared
all the same (its controls run the app's trainer: a lesson has none).

The second test proves the comparison can fail: one chart caption changed in a copy of a lesson page is reported.

Run: heavy python -m pytest tests/test_one_view_browser.py -m e2e -s   (-s prints the counts per view)
"""

from __future__ import annotations

import re
import shutil

import pytest

from sim.views import catalog
from tests.fixtures.drawn import QUIET, settle
from tests.fixtures.serve import browser_marks

pytestmark = browser_marks()
pytest.importorskip("playwright.sync_api", reason="playwright (python) is not installed")

VIEWPORT = {"width": 1280, "height": 800}
IN_LESSON = [n for n in catalog.NAMES if catalog.view(n).lesson != "app"]
APP_ONLY = [n for n in catalog.NAMES if catalog.view(n).lesson == "app"]

# What a reader sees of an element: its text without KaTeX's MathML copy (read by screen readers, not shown), hidden
# parts left out, whitespace normalised.
READ = """
const seen = (e) => e.offsetParent !== null || e.getClientRects().length > 0;
const text = (e) => {
  const c = e.cloneNode(true);
  c.querySelectorAll('.katex-mathml, [hidden]').forEach((x) => x.remove());
  c.querySelectorAll('.katex').forEach((x) => x.replaceWith(`\u27e6${x.textContent}\u27e7`));  // math: marked
  return c.textContent.replace(/\\s+/g, ' ').trim();
};
const all = (root, sel) => root ? [...root.querySelectorAll(sel)] : [];
"""

# The app (Streamlit): the main area's words, the sidebar's controls (each a container st-key-KEY; the share
# expander's widgets, the presets and the lesson download are not the view's controls).
APP = "() => {" + READ + """
  const main = document.querySelector('[data-testid=stMain]');
  const side = document.querySelector('[data-testid=stSidebar]');
  const h1 = main.querySelector('h1');
  const fold = [...main.querySelectorAll('[data-testid=stExpander]')]
    .find((x) => text(x.querySelector('summary')) === 'What this page shows');
  let intro = fold ? fold.querySelector('[data-testid=stExpanderDetails] [data-testid=stMarkdown]') : null;
  if (!intro) {  // the first paragraph after the title
    const after = all(main, '[data-testid=stMarkdown]').filter((m) =>
      h1.compareDocumentPosition(m) & Node.DOCUMENT_POSITION_FOLLOWING);
    intro = after[0] || null;
  }
  const words = all(main, '[data-testid=stCaptionContainer], [data-testid=stAlert], .gp-caption, .gp-title,' +
    ' [data-testid=stMarkdown]').filter((e) => seen(e) && e !== intro && !(fold && fold.contains(e)) &&
    !e.closest('.gp-predict, [class*="st-key-app_only"]'));  // app_only: a part the app draws for its server
  const kind = (e) => e.matches('.gp-title') ? 'chart title' : e.matches('.gp-caption') ? 'chart caption' :
    e.matches('[data-testid=stAlert]') ? 'note' : e.matches('[data-testid=stMarkdown]') ? 'markdown' : 'caption';
  const controls = all(side, '[class*="st-key-"]').filter((e) => {
    const key = [...e.classList].find((c) => c.startsWith('st-key-')).slice(7);
    return !key.startsWith('_') && !key.startsWith('preset_') && key !== 'lesson_build' &&
      !e.closest('[data-testid=stExpander]') && e.querySelector('label, [data-testid=stWidgetLabel]');
  }).map((e) => text(e.querySelector('[data-testid=stWidgetLabel]') || e.querySelector('label')));
  const questions = all(main, '[data-testid=stMarkdown], .gp-predict > p:first-child').filter(seen).map(text)
    .filter((t) => t.startsWith('Predict first.'));
  return {title: text(h1), intro: intro ? text(intro) : '',
    words: words.filter((e) => kind(e) !== 'markdown').map((e) => [kind(e), text(e)]),
    questions, controls,
    counts: {charts: all(main, '.gp-chart').filter(seen).length,
      tables: all(main, '[data-testid=stDataFrame], [data-testid=stTable]').filter(seen).length,
      controls: controls.length}};
}"""

# A lesson's page (sim/lesson): the same reading of its own elements.
LESSON = "() => {" + READ + """
  const doc = document.getElementById('ls-doc');
  const intro = document.querySelector('.ls-intro');
  const words = all(doc, '.ls-caption, .ls-box, .gp-caption, .gp-title').filter((e) => seen(e) &&
    !e.closest('.gp-predict'));
  const kind = (e) => e.matches('.gp-title') ? 'chart title' : e.matches('.gp-caption') ? 'chart caption' :
    e.matches('.ls-box') ? 'note' : 'caption';
  const controls = all(document.getElementById('ls-controls'), '.ls-control').filter((e) => !e.hidden)
    .map((e) => text(e.querySelector('legend') || e.querySelector('label')));
  const questions = all(doc, '.gp-predict > p:first-child').filter(seen).map(text)
    .filter((t) => t.startsWith('Predict first.'));
  return {title: text(document.querySelector('h1')), intro: intro ? text(intro) : '',
    words: words.map((e) => [kind(e), text(e)]), questions, controls,
    counts: {charts: all(doc, '.gp-chart').filter(seen).length, tables: all(doc, '.ls-table').filter(seen).length,
      controls: controls.length}};
}"""


@pytest.fixture(scope="module")
def lesson_dir(tmp_path_factory):
    """A lesson of every view (the default build), written once for the module."""
    from tests.fixtures import lesson

    return lesson.build(tmp_path_factory.mktemp("oneview") / "lesson", ["--quiet"])


# Answer the first question on screen that waits for a guess, in the shared JavaScript's box (assets/js/predict.js: a
# lesson's questions, and the app's views computed in the page): the chapter's answer where the view declares it,
# else the first number the box accepts, or the first option. False when no question waits.
ANSWER_BOX = "(answers) => {" + READ + """
  for (const box of document.querySelectorAll('.gp-predict')) {
    const reveal = [...box.querySelectorAll('button')].find((b) => b.textContent === 'Reveal');
    if (!seen(box) || !reveal) continue;
    const q = text(box.querySelector('p')).replace(/^Predict first\\. /, '');
    const input = box.querySelector('input.gp-guess');
    if (input) {
      for (const v of [answers[q], 0, 1, 10, 50, 100, 0.5, 1000]) {
        if (v === undefined || v === null) continue;
        input.value = String(v);
        input.dispatchEvent(new Event('input'));
        if (!reveal.disabled) break;
      }
    } else {
      const radios = [...box.querySelectorAll('input[type=radio]')];
      const r = radios.find((x) => text(box.querySelector(`label[for="${x.id}"]`)) === answers[q]) || radios[0];
      r.checked = true;
      r.dispatchEvent(new Event('change'));
    }
    reveal.click();
    return true;
  }
  return false;
}"""


def asks(blocks) -> list:
    """The view's questions (sim/views/doc.py Ask), the ones revealed by another's answer included."""
    from sim.views.doc import Ask, Columns

    out = []
    for b in blocks:
        if isinstance(b, Ask):
            out += [b, *asks(b.then)]
        elif isinstance(b, Columns):
            out += [x for col in b.columns for x in asks(col)]
    return out


def answer_app_question(page, ask) -> bool:
    """Answer an app question of Streamlit's widgets (ui/predict.py) if it waits for a guess; True if it did."""
    reveal = page.locator(f".st-key-predict-{ask.key}-reveal button").first
    if not reveal.count() or not reveal.is_visible():
        return False
    q = ask.question
    if q.kind == "choice":
        page.locator(f".st-key-predict-{ask.key}-input label").filter(has_text=str(q.answer)).first.click()
    else:
        box = page.locator(f".st-key-predict-{ask.key}-input input")
        box.fill(str(q.answer))
        box.press("Enter")
    page.locator(f".st-key-predict-{ask.key}-reveal button:not([disabled])").first.wait_for()
    reveal.click()
    return True


def read(browser, url: str, script: str, view=None) -> dict:
    """What the page at `url` shows once drawn (`script`: APP or LESSON). With `view`: in predict mode, every
    question is answered in turn until none waits (a question can follow another's answer); "questions" are then
    every question the page asked, in the order asked."""
    ctx = browser.new_context(viewport=VIEWPORT)
    ctx.add_init_script(QUIET)
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    try:
        page.goto(url)
        settle(page)
        assert page.locator("[data-testid=stException], #ls-error:not([hidden])").count() == 0, url
        reading = page.evaluate(script)
        if view is None:
            return reading
        questions = list(reading["questions"])
        declared = asks(view.document())
        answers = {a.question.question: a.question.answer for a in declared}
        for _ in range(20):
            answered = any(answer_app_question(page, a) for a in declared) if script is APP else False
            answered = answered or page.evaluate(ANSWER_BOX, answers)
            if not answered:
                break
            settle(page)
            questions += [q for q in page.evaluate(script)["questions"] if q not in questions]
        return {**reading, "questions": questions}
    finally:
        ctx.close()


def app_reading(browser, server, name: str, view=None) -> dict:
    return read(browser, f"{server}/{name}{'' if view is None else '?predict=1'}", APP, view)


def lesson_reading(browser, page_file, view=None) -> dict:
    return read(browser, page_file.as_uri() + ("" if view is None else "?predict=1"), LESSON, view)


MATH = re.compile(r"[\s\u200b_^{}\u27e6\u27e7]")


def same(app_text, lesson_text) -> bool:
    """The same words: equal once whitespace is normalised (both readings do that); where the app typesets math
    (KaTeX, marked by the reading) and a lesson writes its plain text (p_j = σ(w + u_j − d_j)), equal once the
    spaces, zero-width spaces and the plain text's sub- and superscript marks (_ ^ { }) are dropped."""
    if app_text == lesson_text:
        return True
    a, b = str(app_text), str(lesson_text)
    return "\u27e6" in a and MATH.sub("", a) == MATH.sub("", b)


def differences(app: dict, lesson: dict) -> list[str]:
    """Where the two hosts' words differ, each a line a reader can act on ([] when none); lists compare item by
    item, in order."""
    out = []
    for part in ("title", "intro"):
        if not same(app[part], lesson[part]):
            out.append(f"{part}: app {app[part]!r} != lesson {lesson[part]!r}")
    for part in ("words", "questions", "controls"):
        a, b = list(app[part]), list(lesson[part])
        for i, (x, y) in enumerate(zip(a, b, strict=False)):  # the extra items: below
            xs, ys = (x, y) if part != "words" else (x[1], y[1])
            if (part == "words" and x[0] != y[0]) or not same(xs, ys):
                out.append(f"{part} {i + 1}: app {x!r} != lesson {y!r}")
        if len(a) != len(b):
            longer, host = (a, "app") if len(a) > len(b) else (b, "lesson")
            out.append(f"{part}: app {len(a)}, lesson {len(b)}; only in the {host}: {longer[min(len(a), len(b)):]}")
    return out


@pytest.mark.parametrize("name", catalog.NAMES)
def test_a_view_shows_the_same_words_in_the_app_and_in_a_lesson(browser, server, lesson_dir, name):
    view = catalog.view(name)
    if view.lesson == "app":
        pytest.skip(f"{view.title} is the app's only: {view.why_app_only}")
    page_file = lesson_dir / f"{name}.html"
    app, lesson = app_reading(browser, server, name), lesson_reading(browser, page_file)
    print(f"\n{name}: app {app['counts']}, lesson {lesson['counts']}")
    assert app["title"] == view.title and app["intro"], f"the app's page was not read: {app}"
    assert not differences(app, lesson), "\n".join(differences(app, lesson))
    # issue 30 item 2: the lesson shows every chart, table and control the app shows
    assert lesson["counts"] == app["counts"], f"app {app['counts']}, lesson {lesson['counts']}"
    if view.lesson == "page":  # a recorded view's controls run the app's trainer (TinyLM): the lesson replays
        assert app["counts"]["controls"] == len(view.controls)
    # every question, asked first in predict mode (?predict=1), each answered in turn
    app_q, lesson_q = app_reading(browser, server, name, view), lesson_reading(browser, page_file, view)
    assert app_q["questions"] == lesson_q["questions"], f"app {app_q['questions']}, lesson {lesson_q['questions']}"
    assert len(app_q["questions"]) >= len(asks(view.document())), app_q["questions"]
    print(f"{name}: questions asked: {len(app_q['questions'])}")


def test_a_changed_caption_is_reported(browser, server, lesson_dir, tmp_path):
    """The comparison can fail: Wasted groups' lesson page with one chart caption changed (its recorded words are
    computed in the page, so the change goes into the page's script: a copy of the lesson, its views.js text
    edited) is reported, and names the caption."""
    copy = tmp_path / "lesson"
    shutil.copytree(lesson_dir, copy)
    script = copy / "lesson.js"
    text = script.read_text(encoding="utf-8")
    old = "Bigger groups rescue the extremes"
    assert text.count(old) == 1, "the caption to change is not in the lesson's script"
    script.write_text(text.replace(old, "Bigger groups rescue the middle"), encoding="utf-8")
    app, lesson = app_reading(browser, server, "wasted"), lesson_reading(browser, copy / "wasted.html")
    found = differences(app, lesson)
    assert len(found) == 1 and found[0].startswith("words "), found
    assert "rescue the extremes" in found[0] and "rescue the middle" in found[0], found


def test_app_only_views_are_not_in_a_lesson(lesson_dir):
    """The views skipped above are the ones a lesson lists as the app's only (no page of their own)."""
    assert set(APP_ONLY) == {"lab", "your_run", "your_prompts"}
    for name in APP_ONLY:
        assert not (lesson_dir / f"{name}.html").exists()
    for name in IN_LESSON:
        assert (lesson_dir / f"{name}.html").exists()


def test_differences_reads_each_part():
    """The comparison itself, on made-up readings: equal readings agree; a changed word, a reordering, a missing
    control and a changed intro are each reported; typeset math equals its plain text, not other words."""
    base = {"title": "T", "intro": "I", "words": [["caption", "a"], ["note", "b"]], "questions": ["Predict first. q"],
            "controls": ["Group size G", "Seed"]}
    assert differences(base, dict(base)) == []
    assert differences(base, {**base, "words": [["caption", "A"], ["note", "b"]]}) == [
        "words 1: app ['caption', 'a'] != lesson ['caption', 'A']"]
    assert len(differences(base, {**base, "words": [["note", "b"], ["caption", "a"]]})) == 2
    assert differences(base, {**base, "controls": ["Group size G"]}) == [
        "controls: app 2, lesson 1; only in the app: ['Seed']"]
    assert differences(base, {**base, "intro": "J"}) == ["intro: app 'I' != lesson 'J'"]
    typeset = {**base, "intro": "solved with probability \u27e6pj\u200b=σ(w+uj\u200b−dj\u200b)\u27e7: d"}
    assert differences(typeset, {**base, "intro": "solved with probability p_j = σ(w + u_j − d_j): d"}) == []
    assert differences(typeset, {**base, "intro": "solved with probability p_j = σ(w − u_j − d_j): d"}) != []
