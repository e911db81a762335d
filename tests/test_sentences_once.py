"""Every sentence a reader sees is written once: the server's Python (ui/, pages/, app.py) writes no words that the
page's JavaScript (assets/js/) also writes. The page draws every view, so a sentence in both would be two copies
that drift apart.

Compared: the string constants of the Python files (docstrings left out) and the string literals of the JavaScript
modules (comments and regular expressions left out; the generated ones left out: engine.js's DECLARATIONS block,
tinylm_data.js, tinylm_sft.js, tinylm_wasm.js), as runs of six words within one phrase (a placeholder or a
sentence's punctuation ends a phrase).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUN = 6  # words in a row that count as the same sentence
GENERATED = {"tinylm_data.js", "tinylm_sft.js", "tinylm_wasm.js"}  # generated: data, weights, a WebAssembly binary


def runs(text: str) -> set[str]:
    """The runs of RUN words (lower case) inside each phrase of `text`."""
    text = re.sub(r"\$\{[^}]*\}|\{[^}]*\}", "|", text)  # JS and Python placeholders end a phrase
    out = set()
    for phrase in re.split(r"[|.;:!?()\n]|\\n", text):
        words = [w.lower() for w in re.findall(r"[A-Za-z][A-Za-z']*", phrase)]
        out |= {" ".join(words[i:i + RUN]) for i in range(len(words) - RUN + 1)}
    return out


def python_strings(path: Path) -> list[str]:
    """The string constants of a Python file, docstrings left out (f-strings give their literal parts)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body:
            first = body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings]


REGEX_AFTER = set("(,=:[!&|?{};+-*%<>~^") | {"return", "typeof", "case", "of", "in"}


def js_strings(text: str) -> list[str]:
    """The string and template literals of a JavaScript module; comments and regular expressions skipped."""
    out, i, n = [], 0, len(text)
    last = ";"  # the last token before i: a "/" after an operator or keyword starts a regular expression
    while i < n:
        ch = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif ch in "\"'`":
            j = i + 1
            while j < n and text[j] != ch:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i + 1:j])
            i, last = j + 1, "string"
        elif ch == "/" and last in REGEX_AFTER:
            j, in_class = i + 1, False
            while j < n and text[j] != "\n" and (in_class or text[j] != "/"):
                in_class = (in_class or text[j] == "[") and text[j] != "]"
                j += 2 if text[j] == "\\" else 1
            i, last = j + 1, "regex"
        elif ch.isspace():
            i += 1
        else:
            word = re.match(r"[A-Za-z_$][\w$]*|\d[\w.]*", text[i:])
            last = word.group(0) if word else ch
            i += len(word.group(0)) if word else 1
    return out


def js_text(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    if path.name == "engine.js":  # its DECLARATIONS block is sim's, written by python -m sim.engine_js
        start = text.index("// ---- declarations")
        text = text[:start] + text[text.index("// ---- end of declarations"):]
    return text


def server_python() -> list[Path]:
    return sorted([*(ROOT / "ui").glob("*.py"), *(ROOT / "pages").glob("*.py"), ROOT / "app.py"])


def test_the_scanners_read_what_a_reader_sees():
    js = js_strings('const a = "one"; // "a comment"\n/* "another" */ const b = `two ${x} three`; c(\'f\\\'our\')'
                    ' + s.replace(/["\'/]/g, "five") / 2 / 3 + "six"')
    assert js == ["one", "two ${x} three", "f\\'our", "five", "six"]  # the regular expression skipped, / divides
    assert runs("A guess must be a number from ${lo} to ${hi}") == {"a guess must be a number",
                                                                   "guess must be a number from"}
    assert runs("one two three four five. six seven") == set()  # a full stop ends the phrase
    tree = 'def f():\n    """a docstring that has many many words in it"""\n    return f"kept words {x} here"\n'
    path = Path(__file__).with_name("_scratch_sentences.py")
    try:
        path.write_text(tree, encoding="utf-8")
        assert python_strings(path) == ["kept words ", " here"]
    finally:
        path.unlink(missing_ok=True)


def test_the_server_writes_no_sentence_the_page_writes():
    page: dict[str, set[str]] = {}
    for path in sorted((ROOT / "assets" / "js").glob("*.js")):
        if path.name not in GENERATED:
            for s in js_strings(js_text(path)):
                for r in runs(s):
                    page.setdefault(r, set()).add(path.name)
    assert len(page) > 500, len(page)  # the page's words were read (about 700 runs)
    twice = []
    for path in server_python():
        for s in python_strings(path):
            twice += [f"{path.relative_to(ROOT)} and {', '.join(sorted(page[r]))}: {r!r}" for r in runs(s) if r in page]
    assert not twice, "written in Python and in JavaScript:\n" + "\n".join(sorted(set(twice)))
