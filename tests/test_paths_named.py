"""Every file path the project names in its code, comments and docs exists.

A comment that sends a reader to `ui/live.py` after ui/live.py was deleted is a wrong map: fifteen such names
survived the renderer's reshaping until this test. A path is a word starting with one of the project's folders
and ending in a file type; paths with a placeholder (`sim/views/NAME.py`) and the paths a test creates on a copy
of the project are the only ones allowed to be missing."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PATH = re.compile(r"(?<![\w/.-])((?:sim|ui|assets|tests|scripts|docs|pages|\.ci)/[\w./-]*\w"
                  r"\.(?:py|js|mjs|css|md|json|sh|html|txt|toml|cfg))\b")
READ = (".py", ".js", ".mjs", ".md", ".sh", ".css", ".toml", ".cfg", ".txt")
PLACEHOLDER = re.compile(r"\bNAME\b|\bscratch\b|/x\.\w+$")  # sim/views/NAME.py; a test's scratch view or file x
FOLDERS = ("sim", "ui", "assets", "tests", "scripts", "docs", "pages", ".ci")
SKIP = {"real_logs", "vendor", "node_modules", "__pycache__", ".ipynb_checkpoints"}  # others' text, not our map
# paths these tests write and check, and this file's own examples
CREATES = {"tests/test_docker.py", "tests/test_adding_a_view.py", "tests/test_paths_named.py"}


def named_paths() -> dict[str, list[str]]:
    """Missing path -> the files that name it (the project's own text files; real logs and vendored code aside)."""
    files = [ROOT / "app.py", ROOT / "README.md", *(f for d in FOLDERS for f in sorted((ROOT / d).rglob("*")))]
    missing: dict[str, list[str]] = {}
    for file in files:
        name = file.relative_to(ROOT).as_posix()
        if (not file.is_file() or not name.endswith(READ) or name in CREATES
                or any(part in SKIP for part in file.relative_to(ROOT).parts)):
            continue
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for m in PATH.finditer(text):
            path = m.group(1)
            if not PLACEHOLDER.search(path) and not (ROOT / path).exists():
                missing.setdefault(path, []).append(name)
    return missing


def test_every_path_named_in_the_project_exists():
    missing = named_paths()
    assert not missing, "\n".join(f"{p} (named in {', '.join(sorted(set(f)))})" for p, f in sorted(missing.items()))


def test_the_path_pattern_finds_paths_in_comments_and_prose():
    found = [m.group(1) for m in PATH.finditer(
        "# see ui/live.py, (assets/js/page.js) and `docs/serving.md`; not xsim/a.py nor sim/views/ alone")]
    assert found == ["ui/live.py", "assets/js/page.js", "docs/serving.md"]
