"""python -m sim lesson build: one page per view from the view's declaration (sim/views/doc.py): its title, intro,
controls and presets, which the page computes any setting of (the views' JavaScript twins: tests/test_js_twins.py
proves them equal to sim/views; tests/test_lesson_browser.py opens the pages); TinyLM's page holds the document
sim computes from its records; the app-only views are listed as such; the command line refuses bad input in one
line (exit 2) before writing anything."""

from __future__ import annotations

import json
import re
from html import escape
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sim.lesson import cli
from sim.views.catalog import view, views
from sim.views.doc import to_json
from tests.fixtures.lesson import SMALL

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def lesson(small_lesson) -> Path:
    return small_lesson


@pytest.fixture
def everything(exercise_lesson) -> Path:
    return exercise_lesson


def script_json(page: Path, element_id: str):
    found = re.search(rf'<script type="application/json" id="{element_id}">(.*?)</script>',
                      page.read_text(encoding="utf-8"), flags=re.S)
    return None if found is None else json.loads(found.group(1))


def test_every_page_carries_its_views_declaration(everything):
    """A view's page holds its declaration and nothing computed: the same title, intro, controls (keys, labels,
    ranges, steps, defaults, options) and presets as the app's page; the page computes any setting."""
    for v in views():
        page = everything / f"{v.name}.html"
        if v.lesson == "app":
            assert not page.exists(), v.name
            continue
        m = script_json(page, "lesson-manifest")
        want = {**v.manifest(), "kind": v.lesson, "plotly": m["plotly"]}
        want["tools"] = [t for t in v.tools if t != "exports"]  # an export needs the app's server
        if v.lesson == "recorded":
            want |= {"controls": [], "presets": []}  # the lab's: its checks need the app's server
        if v.trainer:
            want["trainer_script"] = "tinylm-trainer.js"  # TinyLM's trainer, beside its page
        assert m == want, v.name
        data = script_json(page, "ls-data")
        assert (data is None) == (v.lesson == "page" and v.data is None), v.name
        if v.data is not None:
            assert data == json.loads(json.dumps(v.data())), v.name  # what sim read for the page, as plain JSON
        html = page.read_text(encoding="utf-8")
        assert f"<h1>{escape(v.title)}</h1>" in html and '<script src="lesson.js"></script>' in html
        assert '<script src="katex-0.19.1.min.js"></script>' in html and 'href="katex-0.19.1.css"' in html
    assert (everything / "lesson.js").is_file() and not (everything / "live.js").exists()
    assert "lesson_page.js" in (everything / "lesson.js").read_text(encoding="utf-8")


def contents_links(lesson: Path) -> list[dict]:
    """The contents page's links (its document is the app's front page, sim/views/home.py), in order."""
    blocks = script_json(lesson / "index.html", "ls-data")
    return [item for b in blocks if b["kind"] == "links" for item in b["items"]]


def test_the_contents_page_lists_every_view_and_says_which_need_the_app(everything):
    """The app's front page, with this lesson's line: every view, how the lesson has it (computed in your browser,
    recorded, or the app's only and why), and links only to the pages it has (the renderer names the others)."""
    from sim.views.home import document

    assert script_json(everything / "index.html", "lesson-manifest") == {
        "kind": "contents", "title": "GRPO Playground: a lesson",
        "pages": [v.name for v in views() if v.lesson != "app"]}
    listed = {link["page"]: link for link in contents_links(everything) if not link["before"]}
    for v in views():
        assert listed[v.name]["label"] == v.title and listed[v.name]["what"].startswith(v.what), v.name
        note = f"in the app only: {v.why_app_only}" if v.lesson == "app" else {"page": "computed in your browser",
                                                                                "recorded": "recorded runs"}[v.lesson]
        assert listed[v.name]["what"].endswith(f"({note})"), v.name
    home = to_json(document())
    assert [b["kind"] for b in script_json(everything / "index.html", "ls-data")][:6] == [b["kind"] for b in home][:6]


def test_the_contents_page_is_the_chapters_workbook(everything):
    """Every exercise and lab task of the chapter, with the page that works it and, where the page asks it
    first, its question-mode link; the lab's tasks on their own page."""
    from sim.views.catalog import EXERCISES

    rows = [link for link in contents_links(everything) if link["before"]]
    assert len(rows) == len(EXERCISES)
    for e, row in zip(EXERCISES, rows, strict=True):
        assert row["before"] == f"{e.item}: {e.task}:" and row["page"] == e.page and row["label"] == view(e.page).title
        assert (row["also"] == [["as a question", {"predict": "1"}]]) == e.question, e.item
    lab = (everything / "lab.html").read_text(encoding="utf-8")
    assert "Task 3: The k3 estimator" in lab and "u = 0.5 / 0.6 = 0.833" in lab and "k3 = u - log u - 1 = 0.0157" in lab
    assert "python -m sim lab check my-lab/tasks.py" in lab


def test_tinylms_page_trains_in_the_page_from_the_records_and_the_trainer_beside_it(everything):
    """TinyLM's lesson page is computed in the page like the others: its trainer is the lesson's tinylm-trainer.js
    (sim/player/bundle.py trainer_bundle, only this page loads it), its records the data sim read, inline JSON the
    page parses and never runs (drawn by assets/js/tinylm_views.js: tests/test_views_tinylm.py). The lesson grows by
    at most 1.5 MB for it."""
    from sim.player.bundle import trainer_bundle
    from sim.tinylm import figures

    assert (everything / "tinylm-trainer.js").read_bytes() == trainer_bundle()[1]
    pages = [p.read_text(encoding="utf-8") for p in everything.glob("*.html")]
    assert sum("tinylm-trainer.js" in p for p in pages) == 1  # no other page carries the weights
    grown = (everything / "tinylm-trainer.js").stat().st_size + len(script_json(everything / "tinylm.html", "ls-data")
                                                                     .__repr__())
    assert grown < 1_500_000, grown
    record = figures.load_run_record()
    assert record is not None and len(record["iterations"]) == 300  # StoryConfig() defaults
    damaged = everything.parent / "run.json"
    for text in ("{", "[]", json.dumps({**record, "iterations": record["iterations"][1:]}),
                 json.dumps({**record, "metrics": {**record["metrics"], "reward": ["x"] * 300}})):
        damaged.write_text(text)
        assert figures.load_run_record(damaged) is None


def run(argv, capsys) -> tuple[int, str, str]:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv, message", [
    (["build"], "the following arguments are required: OUT"),
    (["build", "X", "--bogus"], "unrecognized arguments: --bogus"),
    (["build", "X", "--grid", "G=8,16"], "--grid is gone: every view computes every setting in the page"),
    (["build", "X", "--grid=G=8"], "--grid is gone"),
    (["build", "X", "--max-mb", "5"], "--max-mb is gone"),
    (["build", "X", "--max-settings", "5"], "--max-settings is gone"),
    (["build", "X", "--views", "nope"], "unknown view 'nope'"),
    ([], "choose a command"),
])  # fmt: skip
def test_bad_flags_are_one_line_and_exit_2_before_any_work(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(argv, capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("error: "), err
    assert message in err, err
    assert not (tmp_path / "X").exists()


def test_the_old_view_names_select_the_view_they_are_part_of(tmp_path, capsys):
    assert cli.main(["build", str(tmp_path / "L"), "--views", "sharpen,passk_problems,tinylm_run", "--quiet"]) == 0
    assert sorted(p.name for p in (tmp_path / "L").glob("*.html")) == ["index.html", "passk.html", "tinylm.html"]


def test_out_is_never_overwritten_without_force_and_never_a_foreign_folder(lesson, tmp_path, capsys):
    code, _, err = run(["build", str(lesson), *SMALL], capsys)
    assert code == 2 and "already exists; add --force" in err
    mine = tmp_path / "notes"
    mine.mkdir()
    (mine / "thesis.txt").write_text("keep me")
    code, _, err = run(["build", str(mine), *SMALL, "--force"], capsys)
    assert code == 2 and "not a lesson this command wrote" in err and (mine / "thesis.txt").exists()
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, _, err = run(["build", str(blocker / "out"), *SMALL], capsys)
    assert code == 2 and err.startswith(f"error: cannot write {blocker / 'out'}") and err.count("\n") == 1


def test_help_documents_every_flag(capsys):
    code, out, _ = run(["build", "--help"], capsys)
    assert code == 0
    for flag in ("--views", "--force", "--quiet", "OUT"):
        assert flag in out
    assert "--grid" not in out and "computes any setting in the browser" in " ".join(out.split())


@pytest.mark.integration
def test_the_sidebar_offers_the_lesson_as_one_link_built_once():
    """The sidebar's link is the server's route; the first request builds the lesson in a worker process of its own
    (the server's sessions never wait behind it) and gets the zip when the build ends; a second gets the same bytes
    at once."""
    import asyncio
    import io
    import zipfile

    from ui.host import SERVER_KEY
    from ui.lesson_download import ZIP_NAME, LessonZip
    from ui.server import Server

    server = Server()
    server._lesson_zip = job = LessonZip("wasted,your_run")  # a small lesson, the same path as the default one
    route = server._lesson_route()
    at = AppTest.from_file(str(ROOT / "pages" / "std_scaling.py"), default_timeout=60)
    at.session_state[SERVER_KEY] = server  # what app.py hands each session (ui/host.py)
    at.run()
    (link,) = [h for h in at.sidebar.get("html") if "grpo-download" in h.proto.body]
    assert f'href="/assets/{ZIP_NAME}" download="{ZIP_NAME}"' in link.proto.body and not job.started
    first = asyncio.run(route.endpoint(None))
    assert job.error is None and job.done == job.total > 1 and first.status_code == 200
    assert first.headers["content-disposition"] == f'attachment; filename="{ZIP_NAME}"'
    assert asyncio.run(route.endpoint(None)).body == first.body == job.data
    names = zipfile.ZipFile(io.BytesIO(job.data)).namelist()
    assert {"grpo-lesson/index.html", "grpo-lesson/wasted.html", "grpo-lesson/lesson.js"} <= set(names)
    assert "grpo-lesson/your_run.html" not in names  # the app's only: listed on the contents page
    assert any(n.startswith("grpo-lesson/plotly-") for n in names)


def test_a_lesson_that_cannot_be_built_is_said_not_served(monkeypatch):
    import asyncio

    from ui.lesson_download import LessonZip

    job = LessonZip()
    job.started = True
    job.error = "out of memory"
    job.finished.set()
    reply = asyncio.run(job.route().endpoint(None))
    assert reply.status_code == 503 and reply.body.decode() == "The lesson could not be built: out of memory"
