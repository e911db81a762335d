"""Adding a view touches four files (docs/architecture.md, "To add a view"): in a copy of the project, a scratch view
is added by exactly sim/views/scratch.py, assets/js/views.js, sim/views/catalog.py and pages/scratch.py, and then it
is drawn in both hosts (the app's page and a lesson's, its control moving its chart), linked from the front page,
covered by the tests generated from the catalog and by the class benchmark's list of views, with no other change."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.serve import browser_marks, launch_chromium, start_server

pytestmark = browser_marks()
ROOT = Path(__file__).resolve().parents[1]

DECLARATION = '''"""A scratch view, added by tests/test_adding_a_view.py: p^G for one p and G."""

from dataclasses import dataclass

from sim.settings import setting, validate
from sim.views.controls import Num
from sim.views.doc import Text, View


@dataclass(frozen=True)
class Scratch:
    group_size: int = setting(8, "answers per group", lo=2, hi=64, integer=True, key="sG", label="Group size G")

    def __post_init__(self):
        validate(self)


VIEW = View("scratch", "Scratch view", intro=Text("p^G for a prompt solved half the time."),
            controls=(Num.of(Scratch, "group_size"),), what="A view added in four files.")
'''
DOCUMENT = '''
// ---- Scratch (sim/views/scratch.py), added by tests/test_adding_a_view.py ----
function scratch({ group_size: G }) {
  const ps = linspace(0, 1, 11);
  const chart = Chart(`p^G for G = ${G}`, [Line(ps.map((p) => p ** G), "p^G", { x: ps, reveal: "full" })],
    { x_title: "p", y_title: "p^G", y_range: [0, 1] });
  chart.caption = `At p = 0.5 a group of ${G} is all right ${read(chart, "p^G", "x", ".4f", { x: 0.5 })} of the time.`;
  chart.given = [0.5, G];
  return [heading("Scratch"), charts("scratch_chart", [chart])];
}
'''
PAGE = '''from sim.views.scratch import VIEW
from ui.host import page_server
from ui.view import show_view

show_view(VIEW, page_server())
'''


def add_the_view(copy: Path) -> None:
    (copy / "sim" / "views" / "scratch.py").write_text(DECLARATION)
    (copy / "pages" / "scratch.py").write_text(PAGE)
    views = copy / "assets" / "js" / "views.js"
    text = views.read_text()
    text = re.sub(r"export const SHOW = \{ (.*) \};",
                  lambda m: f"{DOCUMENT}\nexport const SHOW = {{ {m.group(1)}, scratch }};", text)
    views.write_text(text)
    catalog = copy / "sim" / "views" / "catalog.py"
    catalog.write_text(catalog.read_text().replace('    Page("your_prompts", ":material/dataset:"),\n',
                                                   '    Page("your_prompts", ":material/dataset:"),\n'
                                                   '    Page("scratch", ":material/science:"),\n'))


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    """The project as committed (git ls-files, with this checkout's changes), the view added, in a git of its own."""
    out = tmp_path_factory.mktemp("scratch") / "project"
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    for f in files:
        if (ROOT / f).is_file():
            (out / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / f, out / f)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], cwd=out, check=True)
    subprocess.run([*git, "add", "-A"], cwd=out, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=out, check=True)
    add_the_view(out)
    return out


def run(copy: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(copy), "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, *args], cwd=copy, env=env, capture_output=True, text=True, timeout=timeout)


def test_four_files_make_a_view_that_every_list_and_test_picks_up(copy):
    changed = subprocess.run(["git", "status", "--porcelain"], cwd=copy, capture_output=True, text=True,
                             check=True).stdout.split("\n")
    assert sorted(line[3:] for line in changed if line) == ["assets/js/views.js", "pages/scratch.py",
                                                            "sim/views/catalog.py", "sim/views/scratch.py"]
    lists = run(copy, "-c", "from sim.views import catalog; from sim.views.home import document; "
                            "from sim.views.doc import to_json; import json, scripts.bench_classroom as b; "
                            "print(json.dumps([catalog.browser_views(), list(b.VIEWS), "
                            "[x['page'] for blk in to_json(document()) if blk['kind'] == 'links' "
                            "for x in blk['items']]]))")
    assert lists.returncode == 0, lists.stderr[-2000:]
    import json

    browser, bench, linked = json.loads(lists.stdout.splitlines()[-1])
    assert "scratch" in browser and "scratch" in bench and "scratch" in linked
    tested = run(copy, "-m", "pytest", "-p", "no:cacheprovider", "tests/test_views.py", "-k",
                 "every_view_the_browser_computes_has_its_document")
    assert tested.returncode == 0, tested.stdout[-2000:]
    collected = run(copy, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-m", "e2e",
                    "tests/test_view_pages_browser.py", "tests/test_invariants_browser.py")
    ids = [line for line in collected.stdout.splitlines() if "scratch" in line]
    assert any("test_view_pages_browser" in i for i in ids) and any("test_invariants_browser" in i for i in ids), \
        collected.stdout[-2000:]
    built = run(copy, "-m", "sim", "lesson", "build", str(copy / "lesson"), "--quiet")
    assert built.returncode == 0 and (copy / "lesson" / "scratch.html").is_file(), built.stderr[-2000:]


def test_the_new_view_is_drawn_in_both_hosts_and_its_control_moves_its_chart(copy):
    from playwright.sync_api import sync_playwright

    from tests.fixtures.viewpage import move, shown

    if not (copy / "lesson").is_dir():
        assert run(copy, "-m", "sim", "lesson", "build", str(copy / "lesson"), "--quiet").returncode == 0
    server = start_server(script=str(copy / "app.py"), env={"PYTHONPATH": str(copy)}, cwd=copy)
    try:
        with sync_playwright() as pw:
            browser = launch_chromium(pw)
            try:
                for url in (f"{server.url}/scratch?sG=4", (copy / "lesson" / "scratch.html").as_uri() + "#sG=4"):
                    page = browser.new_page(viewport={"width": 1366, "height": 900})
                    errors: list[str] = []
                    page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
                    page.goto(url)
                    shown(page)
                    assert page.locator(".gp-title").first.text_content() == "p^G for G = 4"
                    assert "is all right 0.0625 of the time" in page.locator(".gp-caption").first.text_content()
                    move(page, "sG", 1)
                    page.wait_for_function("document.querySelector('.gp-title').textContent === 'p^G for G = 5'")
                    assert not errors, errors
                    page.close()
            finally:
                browser.close()
    finally:
        server.stop()
