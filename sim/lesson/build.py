"""Write a lesson folder: its one script and styles, Plotly.js, one page per view, the contents page.

Each view is sim/views's declaration (sim/views/doc.py): a view computed in the page gets its manifest (title, intro,
controls, presets) and the page's script computes its document for any setting (assets/js/views.js, proved equal to
sim/views's `show`); a recorded view (TinyLM) also gets the document sim computes now, inline JSON that the page
parses and never runs; an app-only view (it needs a visitor's file or the server) is listed on the contents page
with why, and has no page.

OUT is resolved and checked before anything is written (check_out). Everything is written to a temporary folder
beside OUT and swapped in only once complete (swap_in), so an interrupted or failed build leaves the old lesson
whole; OUT is replaced only with force, and only if it is a lesson (it holds MARKER) that holds nothing but the files
this command wrote (MARKER lists them): a file or folder someone added to it (notes, students' work) is named and the
build refused, so --force never deletes what it did not write.
"""

from __future__ import annotations

import shutil
import stat
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from sim.lesson.html import contents_page, inline_json, view_page
from sim.paths import JS
from sim.player.bundle import classic_script, trainer_bundle
from sim.player.katex import KATEX_CSS_NAME, KATEX_JS, KATEX_JS_NAME, katex_css
from sim.player.plotly_js import PLOTLY_JS, PLOTLY_JS_NAME
from sim.runtime.files import OutputPathError, check_folder, shown_path
from sim.validate import neutral
from sim.views.doc import View, chart_payload, to_json

MARKER = ".grpo-lesson"  # marks a folder this command wrote (the only kind --force replaces) and lists its files
MARKER_HEAD = "written by python -m sim lesson build"
# what a lesson whose MARKER lists no files (built before it did) may hold: its pages, scripts, styles, Plotly.js,
# KaTeX and the Training grid's data/ folder (data/*.js), as earlier versions wrote them
OLD_FILES = ("index.html", "lesson.js", "player.js", "live.js", "lesson.css", "player.css", "doc.css")
# the names of views that are now part of one, still accepted by --views
ALIASES = {"passk_estimator": "passk", "passk_problems": "passk", "sharpen": "passk", "tinylm_run": "tinylm"}
TAGS = {"page": "computed in your browser", "recorded": "recorded runs"}
STYLES = ("player.css", "doc.css", "lesson.css")  # the shared renderer's styles, then the lesson's own
TRAINER_JS = "tinylm-trainer.js"  # TinyLM's trainer (sim/player/bundle.py trainer_bundle), loaded by its page only


class LessonError(ValueError):
    """A problem the user can fix (OUT exists, is not writable, ...): one line."""


def lesson_script() -> str:
    """The lesson's one script (assets/js/lesson_page.js and everything it imports: the engine, the views, the chart
    code, the player) as a classic script (sim/player/bundle.py), which runs the page: a module file cannot load
    from file://."""
    return classic_script(["lesson_page.js"], '__m["lesson_page.js"].main();')


def check_out(out: Path, force: bool) -> Path:
    """OUT resolved and checked before anything is computed: the real folder the lesson will be. Refused: a
    symbolic link (its target would be replaced behind the link's back), a folder that holds the current
    folder (`build . --force`: the shell would sit in a deleted folder) or that would hold the temporary
    folder (the file system's root), a file, a non-empty folder without --force, any folder this command
    did not write (no MARKER), and a lesson that holds anything this command did not write (named)."""
    shown = shown_path(out)
    try:
        real = check_folder(out, "the lesson")  # a symbolic link, the root; a parent that is a link is followed
    except OutputPathError as e:
        raise LessonError(str(e)) from None
    if real == Path.cwd().resolve() or real in Path.cwd().resolve().parents:
        raise LessonError(f"{shown} is or holds the current folder ({shown_path(Path.cwd())}): build it from "
                          "outside, e.g. cd .. first")
    if real.exists():
        if not real.is_dir():
            raise LessonError(f"{shown} exists and is not a folder")
        if any(real.iterdir()):
            if not force:
                raise LessonError(f"{shown} already exists; add --force to replace it")
            if not (real / MARKER).is_file():
                raise LessonError(f"{shown} is not a lesson this command wrote (no {MARKER} in it): not replacing it")
            listed = _listed(real)
            foreign = sorted(p.name + "/" * p.is_dir() for p in real.iterdir() if not _own(p, listed))
            if foreign:
                more = f" and {len(foreign) - 5} more" if len(foreign) > 5 else ""
                raise LessonError(f"{shown} holds files this command did not write ({neutral(', '.join(foreign[:5]))}"
                                  f"{more}): not replacing it; move them out, or build into another folder")
    return real


def marker_text(folder: Path) -> str:
    """MARKER's text for the lesson being written in `folder`: the head line, then the name of every entry in it."""
    names = sorted({p.name for p in folder.iterdir()} | {MARKER})
    return "\n".join([MARKER_HEAD, "its files (--force replaces a lesson that holds nothing else):", *names]) + "\n"


def _listed(real: Path) -> set[str] | None:
    """The names lesson `real`'s MARKER lists; None for a MARKER that lists none (a lesson built before it did)."""
    try:
        lines = (real / MARKER).read_text(encoding="utf-8", errors="replace").splitlines()[:10_000]
    except OSError as e:
        raise LessonError(f"cannot read {shown_path(real / MARKER)}: {e.strerror or e}") from None
    return set(lines[2:]) if len(lines) > 2 else None


def _own(p: Path, listed: set[str] | None) -> bool:
    """Did this command write `p`, an entry of a lesson folder? The MARKER's list, else the names lessons had."""
    if listed is not None:
        return p.name in listed
    if p.is_symlink():
        return False
    if p.is_dir():
        return p.name == "data" and all(f.is_file() and f.suffix == ".js" for f in p.iterdir())
    views = {f"{n}.html" for n in (*_view_names(), *ALIASES)}
    vendored = p.name.startswith(("plotly", "katex")) and p.suffix in (".js", ".css")
    return p.name in (MARKER, *OLD_FILES, *views) or vendored


def _view_names() -> tuple[str, ...]:
    from sim.views.catalog import NAMES

    return NAMES


def prepare(out: Path, force: bool) -> tuple[Path, Path]:
    """Check OUT (check_out) before anything is computed; return (its real path, the temporary folder beside
    it that the build writes into)."""
    real = check_out(out, force)
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{real.name[:60]}.building-", dir=real.parent))
        # mkdtemp makes it private: a new lesson is for sharing (755); one that replaces a folder keeps its mode
        tmp.chmod(stat.S_IMODE(real.stat().st_mode) & 0o1777 if real.is_dir() else 0o755)
        return real, tmp
    except OSError as e:
        raise LessonError(f"cannot write {shown_path(out)}: {e.strerror or e}") from None


def swap_in(tmp: Path, real: Path) -> None:
    """Put the complete lesson `tmp` at `real`: the old lesson (if any) renamed aside, the new one renamed in,
    then the old one removed. Each rename is atomic, so an interruption leaves the old lesson or the new one
    whole (the old one at worst under its aside name, beside it), never a mix and never neither."""
    old = None
    if real.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{real.name[:60]}.old-", dir=real.parent))
        real.rename(old / real.name)
    try:
        tmp.rename(real)
    except BaseException:
        if old is not None:
            (old / real.name).rename(real)
            old.rmdir()
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def page(view: View, plotly: str) -> tuple[str, int]:
    """A view's page and the bytes of its data (a recorded view's document, or what sim read for a view's document
    computed in the page: TinyLM's records). A view with a trainer loads the trainer's script from the folder."""
    manifest = {**view.manifest(), "kind": view.lesson, "plotly": plotly}
    manifest["tools"] = [t for t in view.tools if t != "exports"]  # an export is computed by the app's server
    if view.trainer:
        manifest["trainer_script"] = TRAINER_JS
    if view.lesson == "recorded":  # its controls need the app's server: the page has the records only
        manifest |= {"controls": [], "presets": []}
        data = to_json(view.document(), charts=chart_payload)
        return view_page(manifest, data), len(inline_json(data))
    if view.data is not None:
        data = view.data()
        return view_page(manifest, data), len(inline_json(data))
    return view_page(manifest), 0


LESSON_LINE = ("A static edition of the GRPO Playground app: the same views, controls, charts and words, drawn by the "
               "same code. Each view computes in your browser (the same numbers as the app's for the same setting); "
               "TinyLM trains in your tab beside its recorded runs. This folder holds everything it needs and works "
               "offline. Class mode (the class following the lecturer, a poll on every question) needs the app's "
               "server.")


def contents(views: list[View], summary: str) -> str:
    """The contents page: the app's front page (sim/views/home.py) with this lesson's line and how it has each view
    (computed in your browser, recorded, or the app's only, and why); links only to the pages it has."""
    from sim.views.home import document

    notes = {v.name: f"in the app only: {v.why_app_only}" if v.lesson == "app" else TAGS[v.lesson] for v in views}
    blocks = document(lesson=f"{LESSON_LINE} {summary}".strip(), notes=notes, names=[v.name for v in views])
    return contents_page(to_json(blocks), [v.name for v in views if v.lesson != "app"])


def build(out: Path, views: list[View], *, force: bool = False, summary: str = "",
          say: Callable[[str, int, int], None] = lambda view, done, total: None) -> dict:
    """Build the lesson into OUT; say(view, done, of total) after each view. `views` may include app-only views:
    the contents page lists them, without a page. Returns {"pages", "recorded", "app_only", "data_bytes",
    "seconds"}."""
    start = time.perf_counter()
    real, tmp = prepare(out, force)
    try:
        shutil.copyfile(PLOTLY_JS, tmp / PLOTLY_JS_NAME)
        shutil.copyfile(KATEX_JS, tmp / KATEX_JS_NAME)
        (tmp / KATEX_CSS_NAME).write_text(katex_css(), encoding="utf-8")
        (tmp / "lesson.js").write_text(lesson_script(), encoding="utf-8")
        for name in STYLES:
            shutil.copyfile(JS / name, tmp / name)
        if any(v.trainer and v.lesson != "app" for v in views):
            (tmp / TRAINER_JS).write_bytes(trainer_bundle()[1])
        data = 0
        for i, v in enumerate(views):
            if v.lesson != "app":
                html, size = page(v, PLOTLY_JS_NAME)
                (tmp / f"{v.name}.html").write_text(html, encoding="utf-8")
                data += size
            say(v.name, i + 1, len(views))
        (tmp / "index.html").write_text(contents(views, summary), encoding="utf-8")
        (tmp / MARKER).write_text(marker_text(tmp), encoding="utf-8")
        swap_in(tmp, real)  # checked by prepare(): absent, empty, or a lesson and force
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return {"pages": sum(v.lesson != "app" for v in views), "recorded": sum(v.lesson == "recorded" for v in views),
            "app_only": sum(v.lesson == "app" for v in views), "data_bytes": data,
            "seconds": time.perf_counter() - start}


def views_for(names: str) -> list[View]:
    """The Views named in `names` (comma-separated, in that order, each once; the old names of views that are now
    a part of one select it); ValueError for an unknown name."""
    from sim.views.catalog import NAMES, view

    wanted = [ALIASES.get(v.strip(), v.strip()) for v in names.split(",") if v.strip()]
    unknown = [n for n in wanted if n not in NAMES]
    if unknown or not wanted:
        raise ValueError(f"--views: unknown view {(unknown or [''])[0][:40]!r}; choose from {', '.join(NAMES)}")
    return [view(n) for n in dict.fromkeys(wanted)]


def lesson_zip(view_names: str | None = None, task=None) -> bytes:
    """The default lesson (every view) as the bytes of grpo-lesson.zip, built in a temporary folder; view_names:
    only these views (comma-separated, as the CLI's --views). With a sim.runtime.procs Task, task.emit((views done, of
    all)) after each view."""
    import io
    import zipfile

    from sim.views.catalog import views as all_views

    views = all_views() if view_names is None else views_for(view_names)

    def say(view: str, done: int, total: int) -> None:
        if task is not None:
            task.emit((done, total))

    buf = io.BytesIO()
    with tempfile.TemporaryDirectory(prefix="grpo-lesson-") as tmp:
        out = Path(tmp) / "grpo-lesson"
        build(out, views, say=say)
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as z:
            for f in sorted(out.rglob("*")):
                if f.is_file():
                    z.write(f, f"grpo-lesson/{f.relative_to(out)}")
    return buf.getvalue()
