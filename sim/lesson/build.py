"""Write a lesson folder: assets once, one page per view (each setting's data inline JSON in it), the contents page.

OUT is resolved and checked before anything is computed (check_out). Everything is written to a temporary
folder beside OUT and swapped in only once complete (swap_in), so an interrupted or failed build leaves the
old lesson whole; OUT is replaced only with force, and only if it is a lesson (it holds MARKER).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from sim.files import shown_path
from sim.lesson.html import index_page, inline_json, live_page, view_page
from sim.lesson.views import View
from sim.paths import ASSETS
from sim.player.bundle import classic_script
from sim.player.plotly_js import PLOTLY_JS, PLOTLY_JS_NAME

MARKER = ".grpo-lesson"  # marks a folder this command wrote (the only kind --force replaces)


class LessonError(ValueError):
    """A problem the user can fix (OUT exists, is not writable, ...): one line."""


def player_script() -> str:
    """The app's player (player.js and what it imports) as a classic script (sim/player/bundle.py): a module
    file cannot load from file://. Its default export becomes window.grpoMountPlayer."""
    return classic_script(["player.js"], 'window.grpoMountPlayer = __m["player.js"].default;')


def lesson_script() -> str:
    """lesson_rules.js (an ES module: node's tests import it) with its `export`s dropped, then lesson.js, in one
    classic script: a module cannot load from file://. The rules stay private to the script's function."""
    rules = (ASSETS / "lesson_rules.js").read_text(encoding="utf-8")
    if re.search(r"^\s*import\b", rules, flags=re.M) or re.search(r"^export (?!(const|function) )", rules, flags=re.M):
        raise RuntimeError("assets/lesson_rules.js: only `export const` and `export function`, and no import")
    rules = re.sub(r"^export (const|function) ", r"\1 ", rules, flags=re.M)
    lesson = (ASSETS / "lesson.js").read_text(encoding="utf-8")
    return f"(function () {{\n{rules}\n{lesson}\n}})();\n"


def _slug(values: dict) -> str:
    def text(v) -> str:
        return str(v).lower() if isinstance(v, bool) else f"{v:g}" if isinstance(v, float) else str(v)

    return re.sub(r"[^A-Za-z0-9.=_-]", "", "_".join(f"{k}{text(v)}" for k, v in values.items())) or "default"


def _predict_json(q: dict | list | None) -> list[dict] | None:
    """An entry's predict questions for the page, asked in order (one or a list): a number (its answer and
    tolerance, their texts formatted here: no formatting in JS) or a choice (options, one of them the answer)."""
    if q is None:
        return None
    if isinstance(q, list):
        return [_question_json(x) for x in q]
    return [_question_json(q)]


def _question_json(q: dict) -> dict:
    if q.get("kind") == "choice":
        if q["answer"] not in q["options"]:
            raise ValueError(f"a choice needs options that include the answer {q['answer']!r}")
        return {"kind": "choice", "question": q["question"], "options": list(q["options"]), "answer": q["answer"],
                "explain": q.get("explain", "")}
    fmt = q.get("fmt", "{:.4g}")
    digits = re.search(r"\.(\d+)f", fmt)
    return {"kind": "number", "question": q["question"], "answer": float(q["answer"]),
            "tolerance": float(q["tolerance"]),
            "answer_text": fmt.format(q["answer"]), "tolerance_text": fmt.format(q["tolerance"]),
            "digits": int(digits.group(1)) if digits else 3, "explain": q.get("explain", "")}


def check_out(out: Path, force: bool) -> Path:
    """OUT resolved and checked before anything is computed: the real folder the lesson will be. Refused: a
    symbolic link (its target would be replaced behind the link's back), a folder that holds the current
    folder (`build . --force`: the shell would sit in a deleted folder) or that would hold the temporary
    folder (the file system's root), a file, a non-empty folder without --force, and any folder this command
    did not write (no MARKER)."""
    shown = shown_path(out)
    if os.path.islink(out):
        target = shown_path(os.path.realpath(out))
        raise LessonError(f"{shown} is a symbolic link: give the folder it points to ({target})")
    real = Path(os.path.realpath(out))  # a parent that is a link is followed
    if real == real.parent:
        raise LessonError(f"{shown} is the root of the file system: name a folder for the lesson")
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
    return real


def prepare(out: Path, force: bool) -> tuple[Path, Path]:
    """Check OUT (check_out) before anything is computed; return (its real path, the temporary folder beside
    it that the build writes into)."""
    real = check_out(out, force)
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{real.name[:60]}.building-", dir=real.parent))
        tmp.chmod(0o755)  # mkdtemp makes it private; a lesson is for sharing
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


def live_script() -> str:
    """The live views' script (assets/lesson_live.js and everything it imports: the engine, the views, the player)
    as one classic script (sim/player/bundle.py), which runs the page's view."""
    return classic_script(["lesson_live.js"], '__m["lesson_live.js"].main();')


def _write_view(tmp: Path, view: View, plotly: str, say: Callable[[str, int, int], None]) -> int:
    """Compute every setting of one view and write its page, each setting's data an inline JSON block (parsed by
    the page, never run); returns the data's bytes. A live view's page carries its manifest only."""
    if view.live is not None:
        manifest = {**view.live, "view": view.name, "plotly": plotly}
        page = live_page(view.title, view.intro, manifest, fold_intro=view.fold_intro)
        (tmp / f"{view.name}.html").write_text(page, encoding="utf-8")
        say(view.name, 1, 1)
        return 0
    settings, ids, blocks = [], set(), {}
    n = len(view.entries)
    for i, (values, compute) in enumerate(view.entries):
        entry = compute()
        entry["predict"] = _predict_json(entry.get("predict"))
        if entry.get("payload") and entry.get("figures"):
            raise ValueError(f"{view.name}: an entry has the player or static charts, not both (one Plotly.js load)")
        sid = f"{view.name}-{_slug(values)}"
        while sid in ids:
            sid += "x"
        ids.add(sid)
        blocks[sid] = inline_json(entry)
        settings.append({"id": sid, "values": values})
        say(view.name, i + 1, n)
    keys = {d.key for d in view.dims}
    manifest = {
        "view": view.name, "dims": [d.to_json() for d in view.dims], "defaults": view.defaults,
        "presets": [{"name": name, "values": values} for name, values in view.presets], "settings": settings,
        "extras": sorted({k for s in settings for k in s["values"] if k not in keys}), "plotly": plotly,
        "classroom": view.classroom,
    }  # fmt: skip
    (tmp / f"{view.name}.html").write_text(view_page(view.title, view.intro, manifest, blocks), encoding="utf-8")
    return sum(len(b) for b in blocks.values())


def build(out: Path, views: list[View], *, force: bool = False, summary: str = "",
          say: Callable[[str, int, int], None] = lambda view, done, total: None) -> dict:
    """Build the lesson into OUT; say(view, settings done, of total) after each setting.
    Returns {"settings", "data_bytes", "seconds"}."""
    start = time.perf_counter()
    src, plotly = PLOTLY_JS, PLOTLY_JS_NAME
    real, tmp = prepare(out, force)
    try:
        shutil.copyfile(src, tmp / plotly)
        (tmp / "player.js").write_text(player_script(), encoding="utf-8")
        (tmp / "lesson.js").write_text(lesson_script(), encoding="utf-8")
        if any(v.live is not None for v in views):
            (tmp / "live.js").write_text(live_script(), encoding="utf-8")
        for name in ("player.css", "lesson.css"):
            shutil.copyfile(ASSETS / name, tmp / name)
        data = sum(_write_view(tmp, v, plotly, say) for v in views)
        listing = [{"file": f"{v.name}.html", "title": v.title, "what": v.what,
                    "tag": "recorded run" if v.recorded else "computed in your browser" if v.live is not None
                    else "live controls"} for v in views]
        (tmp / "index.html").write_text(index_page(listing, summary), encoding="utf-8")
        (tmp / MARKER).write_text("written by python -m sim lesson build\n", encoding="utf-8")
        swap_in(tmp, real)  # checked by prepare(): absent, empty, or a lesson and force
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return {"settings": sum(len(v.entries) for v in views), "live": sum(v.live is not None for v in views),
            "data_bytes": data,
            "seconds": time.perf_counter() - start}


def lesson_zip(view_names: str | None = None, task=None) -> bytes:
    """The default lesson (sim/lesson) as the bytes of grpo-lesson.zip, built in a temporary folder;
    view_names: only these views (comma-separated, as the CLI's --views). With a sim.procs Task,
    task.emit((settings done, of all)) after each setting."""
    import io
    import tempfile
    import zipfile
    from pathlib import Path

    from sim.lesson.cli import build_parser, views_for
    from sim.lesson.views import default_views

    views = default_views() if view_names is None else views_for(build_parser().parse_args(
        ["build", "unused", "--views", view_names]))
    sizes = [len(v.entries) for v in views]
    before = {v.name: sum(sizes[:i]) for i, v in enumerate(views)}

    def say(view: str, done: int, total: int) -> None:
        if task is not None:
            task.emit((before.get(view, 0) + done, sum(sizes)))

    buf = io.BytesIO()
    with tempfile.TemporaryDirectory(prefix="grpo-lesson-") as tmp:
        out = Path(tmp) / "grpo-lesson"
        build(out, views, say=say)
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as z:
            for f in sorted(out.rglob("*")):
                if f.is_file():
                    z.write(f, f"grpo-lesson/{f.relative_to(out)}")
    return buf.getvalue()
