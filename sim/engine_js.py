"""assets/js/engine.js's declarations, written from sim/'s: `python -m sim.engine_js` rewrites them.

The browser engine (assets/js/engine.js, docs/browser-engine.md) validates a config exactly as sim/settings.py
does and refuses a run over sim/toy/model.MAX_MEMORY_MB with the same words, so it needs every field's range,
step, choices and default, the caps and the metric names. They are not typed twice: this module writes them,
as one JSON object, between two marker lines of engine.js, and tests/test_engine_js.py checks that running it
again would change nothing.

    python -m sim.engine_js            # rewrite the block in assets/js/engine.js
    python -m sim.engine_js --check    # exit 1 if the block is out of date

It also wraps engine.js as a classic script (`classic_script`), for a page opened from file://, where ES
modules cannot load (as sim/player/bundle.py does for the project's other modules).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys

from sim.paths import ASSETS

ENGINE = ASSETS / "js" / "engine.js"
BEGIN = "// ---- declarations: written by `python -m sim.engine_js` from sim/ (do not edit by hand) ----"
END = "// ---- end of declarations ----"
SAFE = 2**53 - 1  # larger integers travel as decimal strings (JS reads them as BigInt)


def _value(x):
    """A Python value as JSON: tuples as lists, integers beyond 2**53 - 1 as decimal strings."""
    if isinstance(x, bool) or x is None or isinstance(x, str):
        return x
    if isinstance(x, int):
        return x if abs(x) <= SAFE else str(x)
    if isinstance(x, float):
        return x
    if isinstance(x, (tuple, list)):
        return [_value(v) for v in x]
    if isinstance(x, dict):
        return {str(k): _value(v) for k, v in x.items()}
    raise TypeError(f"no JSON form for {x!r}")


def _field(f: dataclasses.Field) -> dict:
    """One config field: its default and, for a declared setting, what engine.js needs to check a value and to
    say what the setting accepts (`describe`, sim.settings.Setting.describe's words)."""
    out = {"name": f.name, "default": _value(f.default)}
    spec = f.metadata.get("setting")
    if spec is None:
        return out
    out |= {"kind": spec.kind, "help": spec.help, "optional": spec.optional, "describe": spec.describe()}
    if spec.kind in ("number", "numbers"):
        out |= {"lo": _value(spec.lo), "hi": _value(spec.hi), "integer": spec.integer, "low_open": spec.low_open,
                "step": _value(spec.step)}
    if spec.kind == "choice":
        out |= {"choices": _value(spec.choices),
                "labels": {str(c): spec.option_label(c) for c in spec.choices}}
    return out


def declarations() -> dict:
    """Everything engine.js takes from sim/, as plain data."""
    from sim.refusals import REFUSALS
    from sim.sharpen import SharpenConfig
    from sim.toy import STEP_METRICS
    from sim.toy import model as toy_model
    from sim.toy.history import STATE_METRICS, UPDATE_METRICS
    from sim.views import passk, std_scaling

    return {
        "ToyConfig": [_field(f) for f in dataclasses.fields(toy_model.ToyConfig)],
        "SharpenConfig": [_field(f) for f in dataclasses.fields(SharpenConfig)],
        "toy": {name: getattr(toy_model, name) for name in (
            "TOY_LOSS_TYPES", "MAX_PROMPTS", "MAX_GROUP_SIZE", "MAX_ITERATIONS", "MAX_SEEDS", "HISTORY_ARRAYS",
            "MAX_MEMORY_MB")} | {"STEP_METRICS": STEP_METRICS, "UPDATE_METRICS": UPDATE_METRICS,
                                 "STATE_METRICS": STATE_METRICS},
        "std_scaling": {"STD_SEEDS": std_scaling.STD_SEEDS, "HARD": std_scaling.HARD},
        "passk": {"KS": [int(k) for k in passk.KS]},
        "refusals": REFUSALS,
    }


def block() -> str:
    """The generated block: the marker lines around `export const DECLARATIONS = {...};`."""
    def dump(x) -> str:
        return json.dumps(x, ensure_ascii=False, separators=(", ", ": "))

    lines = []
    for key, value in _value(declarations()).items():  # one line per field or table
        inner = ([f"    {dump(v)}," for v in value] if isinstance(value, list)
                 else [f"    {dump(k)}: {dump(v)}," for k, v in value.items()])
        bracket = "[]" if isinstance(value, list) else "{}"
        lines += [f"  {dump(key)}: {bracket[0]}", *inner, f"  {bracket[1]},"]
    body = "\n".join(lines)
    return f"{BEGIN}\nexport const DECLARATIONS = {{\n{body}\n}};\n{END}"


def rewrite(source: str) -> str:
    """engine.js's text with its block replaced by block()."""
    pattern = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), flags=re.S)
    if len(pattern.findall(source)) != 1:
        raise RuntimeError(f"{ENGINE.name}: expected one declarations block between its marker lines")
    return pattern.sub(lambda _: block(), source)


EXPORT = re.compile(r"^export (function|const|let|class) (\w+)", flags=re.M)


def classic_script(source: str | None = None, name: str = "grpoEngine") -> str:
    """engine.js as a classic script for file:// pages: its only module syntax is `export` before top-level
    declarations, so dropping the word and collecting the names gives `window[name] = {runToy, ...}`."""
    source = ENGINE.read_text(encoding="utf-8") if source is None else source
    names = [m.group(2) for m in EXPORT.finditer(source)]
    body = EXPORT.sub(lambda m: f"{m.group(1)} {m.group(2)}", source)
    if re.search(r"^\s*(import|export)\b", body, flags=re.M):
        raise RuntimeError("engine.js: module syntax other than `export` before a top-level declaration")
    return f"(function () {{\n\"use strict\";\n{body}\nwindow.{name} = {{{', '.join(names)}}};\n}})();\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sim.engine_js", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the block in engine.js is out of date")
    args = parser.parse_args(argv)
    source = ENGINE.read_text(encoding="utf-8")
    new = rewrite(source)
    if args.check:
        if new != source:
            print(f"error: {ENGINE} is out of date: run python -m sim.engine_js", file=sys.stderr)
            return 1
        return 0
    if new != source:
        ENGINE.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
