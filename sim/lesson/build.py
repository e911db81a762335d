"""Write a lesson folder: assets once, one data file per setting, one page per view, the contents page.

Everything is written to a temporary folder next to OUT and moved into place at the end, so an interrupted
build leaves no half lesson; OUT is replaced only with force, and only if it is a lesson (it holds MARKER).
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from sim.lesson.html import index_page, view_page
from sim.lesson.views import View
from sim.paths import ASSETS
from sim.player.plotly_js import PLOTLY_JS, PLOTLY_JS_NAME

MARKER = ".grpo-lesson"  # marks a folder this command wrote (the only kind --force replaces)
MOUNT = "export default function (component) {"


class LessonError(ValueError):
    """A problem the user can fix (OUT exists, is not writable, ...): one line."""


def player_script() -> str:
    """The app's player (player_charts.js + player.js, one ES module) as a classic script: a module file
    cannot load from file://. Its default export becomes window.grpoMountPlayer."""
    charts = (ASSETS / "player_charts.js").read_text(encoding="utf-8")
    player = (ASSETS / "player.js").read_text(encoding="utf-8")
    if player.count(MOUNT) != 1:
        raise RuntimeError(f"assets/player.js: expected one {MOUNT!r}")
    player = player.replace(MOUNT, "window.grpoMountPlayer = function (component) {")
    return f"(function () {{\n{charts}\n{player}\n}})();\n"


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


def prepare(out: Path, force: bool) -> Path:
    """Check OUT before anything is computed; return the temporary folder the build writes into."""
    if out.exists():
        if not out.is_dir():
            raise LessonError(f"{out} exists and is not a folder")
        if any(out.iterdir()):
            if not force:
                raise LessonError(f"{out} already exists; add --force to replace it")
            if not (out / MARKER).exists():
                raise LessonError(f"{out} is not a lesson this command wrote (no {MARKER} in it): not replacing it")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-", dir=out.parent))
        tmp.chmod(0o755)  # mkdtemp makes it private; a lesson is for sharing
        return tmp
    except OSError as e:
        raise LessonError(f"cannot write {out}: {e.strerror or e}") from None


def _write_view(tmp: Path, view: View, plotly: str, say: Callable[[str, int, int], None]) -> int:
    """Compute and write every setting of one view, then its page; returns the data's bytes."""
    settings, ids, total = [], set(), 0
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
        text = f"grpoLesson.put({json.dumps(sid)},{json.dumps(entry, ensure_ascii=True, separators=(',', ':'))});\n"
        (tmp / "data" / f"{sid}.js").write_text(text, encoding="ascii")
        total += len(text)
        settings.append({"id": sid, "file": f"{sid}.js", "values": values})
        say(view.name, i + 1, n)
    keys = {d.key for d in view.dims}
    manifest = {
        "view": view.name, "dims": [d.to_json() for d in view.dims], "defaults": view.defaults,
        "presets": [{"name": name, "values": values} for name, values in view.presets], "settings": settings,
        "extras": sorted({k for s in settings for k in s["values"] if k not in keys}), "plotly": plotly,
        "classroom": view.classroom,
    }  # fmt: skip
    (tmp / f"{view.name}.html").write_text(view_page(view.title, view.intro, manifest), encoding="utf-8")
    return total


def build(out: Path, views: list[View], *, force: bool = False, summary: str = "",
          say: Callable[[str, int, int], None] = lambda view, done, total: None) -> dict:
    """Build the lesson into OUT; say(view, settings done, of total) after each setting.
    Returns {"settings", "data_bytes", "seconds"}."""
    start = time.perf_counter()
    src, plotly = PLOTLY_JS, PLOTLY_JS_NAME
    tmp = prepare(out, force)
    try:
        (tmp / "data").mkdir()
        shutil.copyfile(src, tmp / plotly)
        (tmp / "player.js").write_text(player_script(), encoding="utf-8")
        for name in ("player.css", "lesson.js", "lesson.css"):
            shutil.copyfile(ASSETS / name, tmp / name)
        data = sum(_write_view(tmp, v, plotly, say) for v in views)
        listing = [{"file": f"{v.name}.html", "title": v.title, "what": v.what,
                    "tag": "recorded run" if v.recorded else "live controls"} for v in views]
        (tmp / "index.html").write_text(index_page(listing, summary), encoding="utf-8")
        (tmp / MARKER).write_text("written by python -m sim lesson build\n", encoding="utf-8")
        if out.exists():
            shutil.rmtree(out)  # checked by prepare(): empty, or a lesson and force
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return {"settings": sum(len(v.entries) for v in views), "data_bytes": data,
            "seconds": time.perf_counter() - start}
