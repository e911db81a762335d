"""The browser code as one script: assets/*.js (plain ES modules) joined for a page that cannot import them.

A lesson opens from file://, where Chromium refuses to load a module file, and an app's component receives its
JavaScript as one inline string. So both get the same modules joined here, each module's text kept as it is
inside a function of its own (its names stay private) that returns its exports:

    bundle(["live.js"])            # live.js and every module it imports, in dependency order
    -> (function () { const __f = {"numfmt.js": function (__m) {...; return {format, plain};}, ...}; ... })();

Only what our own modules write is understood, and anything else is refused (ValueError): `import {a, b as c}
from "./x.js"`, `import * as x from "./x.js"`, `export function|const|let|class NAME`, `export {a, b as c}` and
`export default`. A module's factory is a named property of `__f`, so a Web Worker can be built from the
factories' own source (`__f[name].toString()`): `__deps[name]` lists what it needs, itself included. A module
finds both as `__m.__bundle` ({f, deps}; `typeof __m` is "undefined" when it runs unbundled).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from pathlib import Path

from sim.paths import JS

_IMPORT = re.compile(r'^import\s+(\{[^}]*\}|\*\s+as\s+\w+|\w+)\s+from\s+"\./([\w.-]+\.js)";?[ \t]*$', re.M)
_EXPORT_DECL = re.compile(r"^export\s+((?:async\s+)?function\*?|const|let|class)\s+(\w+)", re.M)
_EXPORT_LIST = re.compile(r"^export\s+\{([^}]*)\};?[ \t]*$", re.M)
_EXPORT_DEFAULT = re.compile(r"^export\s+default\s+", re.M)
_LEFT = re.compile(r"^(?:import|export)\b.*$", re.M)


def _names(items: str) -> list[tuple[str, str]]:
    """'a, b as c' -> [("a", "a"), ("b", "c")]"""
    out = []
    for item in items.split(","):
        parts = item.split()
        if not parts:
            continue
        if len(parts) == 1:
            out.append((parts[0], parts[0]))
        elif len(parts) == 3 and parts[1] == "as":
            out.append((parts[0], parts[2]))
        else:
            raise ValueError(f"cannot read {item.strip()!r}")
    return out


def _module(name: str, text: str) -> tuple[str, list[str]]:
    """(factory body, the modules it imports) for one module's source."""
    deps: list[str] = []

    def imported(m: re.Match) -> str:
        what, source = m.group(1), m.group(2)
        deps.append(source)
        ref = f"__m[{json.dumps(source)}]"
        if what.startswith("{"):
            pairs = ", ".join(a if a == b else f"{a}: {b}" for a, b in _names(what[1:-1]))
            return f"const {{ {pairs} }} = {ref};"
        if what.startswith("*"):
            return f"const {what.split()[-1]} = {ref};"
        return f"const {what} = {ref}.default;"

    exports: list[tuple[str, str]] = []  # (exported name, local name)
    text = _IMPORT.sub(imported, text)

    def declared(m: re.Match) -> str:
        exports.append((m.group(2), m.group(2)))
        return f"{m.group(1)} {m.group(2)}"

    text = _EXPORT_DECL.sub(declared, text)

    def listed(m: re.Match) -> str:
        exports.extend((b, a) for a, b in _names(m.group(1)))
        return ""

    text = _EXPORT_LIST.sub(listed, text)
    if len(_EXPORT_DEFAULT.findall(text)) > 1:
        raise ValueError(f"{name}: more than one export default")
    if _EXPORT_DEFAULT.search(text):
        text = _EXPORT_DEFAULT.sub("const __default = ", text)
        exports.append(("default", "__default"))
    left = _LEFT.findall(text)
    if left:
        raise ValueError(f"{name}: an import or export the bundler does not read: {left[0][:80]!r}")
    returned = ", ".join(f"{json.dumps(e)}: {local}" for e, local in exports)
    return f"{text}\nreturn {{ {returned} }};", deps


def modules(entries: list[str], folder: Path = JS) -> dict[str, tuple[str, list[str]]]:
    """Every module the entries need, deps first: {file: (factory body, direct imports)}."""
    out: dict[str, tuple[str, list[str]]] = {}
    visiting: set[str] = set()

    def visit(name: str) -> None:
        if name in out:
            return
        if name in visiting:
            raise ValueError(f"{name}: an import cycle")
        visiting.add(name)
        body, deps = _module(name, (folder / name).read_text(encoding="utf-8"))
        for d in deps:
            visit(d)
        out[name] = (body, deps)
        visiting.discard(name)

    for e in entries:
        visit(e)
    return out


def _closure(name: str, mods: dict) -> list[str]:
    """name and everything it imports, deps first (the order of `mods`)."""
    need = {name}
    for n in reversed(list(mods)):
        if n in need:
            need.update(mods[n][1])
    return [n for n in mods if n in need]


def bundle_body(entries: list[str], folder: Path = JS) -> str:
    """The joined modules as statements (no wrapper): defines __f (factories), __deps and __m (the modules)."""
    mods = modules(entries, folder)
    factories = ",\n".join(f"{json.dumps(n)}: function (__m) {{\n\"use strict\";\n{body}\n}}"
                           for n, (body, _) in mods.items())
    deps = json.dumps({n: _closure(n, mods) for n in mods})
    order = json.dumps(list(mods))
    return (f"const __f = {{\n{factories}\n}};\nconst __deps = {deps};\nconst __m = {{}};\n"
            "Object.defineProperty(__m, \"__bundle\", {value: {f: __f, deps: __deps}});\n"
            f"for (const __n of {order}) __m[__n] = __f[__n](__m);\n")


def classic_script(entries: list[str], tail: str = "", folder: Path = JS) -> str:
    """A <script> (not a module): the bundle in a function, then `tail` (which may use __m, __f, __deps)."""
    return f"(function () {{\n\"use strict\";\n{bundle_body(entries, folder)}{tail}\n}})();\n"


def module_script(entries: list[str], default: str, folder: Path = JS) -> str:
    """An ES module (a Streamlit component's js): the bundle, then `export default` of module `default`'s."""
    return f"{bundle_body(entries, folder)}export default __m[{json.dumps(default)}].default;\n"


@functools.cache
def trainer_bundle() -> tuple[str, bytes]:
    """TinyLM's trainer (assets/js/tinylm_run.js and what it imports, the SFT weights and the WebAssembly inside) as
    a script of its own, `window.grpoTinyLM`, and its hashed name: the app serves it from a route and a lesson writes
    it into its folder; TinyLM's page loads it (assets/js/tinylm_trainer_view.js), so no other page carries its
    0.55 MB of weights. Its Workers are built from its own code."""
    raw = classic_script(["tinylm_run.js"], 'window.grpoTinyLM = __m["tinylm_run.js"];').encode("utf-8")
    return f"grpo-tinylm-{hashlib.sha256(raw).hexdigest()[:12]}.js", raw


@functools.cache
def app_bundle() -> tuple[str, bytes]:
    """The app's renderer as one script (assets/js/app_view.js and what it imports), and the name the server serves
    it under: its hash is in the name, so a browser may keep it for a year (ui/server.py, ui/view.py)."""
    raw = classic_script(["app_view.js"], 'window.grpoApp = __m["app_view.js"];').encode("utf-8")
    return f"grpo-app-{hashlib.sha256(raw).hexdigest()[:12]}.js", raw
