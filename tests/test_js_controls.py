"""A lesson page reads its link by the app's rules: assets/js/control_rules.js (run in node) against
ui/controls.parse_url_value and the app's warning, on every control of every view a lesson computes in the page,
for raw values in range, out of range, off the slider's steps, not numbers, options written other ways."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from sim.views.catalog import views
from sim.views.controls import Choice, Flag, Num, Picks, to_json, url_text
from ui.controls import parse_url_value

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")]
RULES = Path(__file__).resolve().parents[1] / "assets" / "js" / "control_rules.js"
CONTROLS = [c for v in views() if v.lesson == "page" for c in v.controls if not isinstance(c, Picks)]


def js(calls: list) -> list:
    script = f"""
import * as rules from {json.dumps(RULES.as_uri())};
import {{ readFileSync }} from "node:fs";
const calls = JSON.parse(readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(calls.map(([name, ...args]) => rules[name](...args))));
"""
    done = subprocess.run(["node", "--input-type=module", "-e", script], input=json.dumps(calls), text=True,
                          capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def raw_values(spec, rng: random.Random) -> list[str]:
    if isinstance(spec, Flag):
        return ["true", "false", "TRUE", " false ", "1", "yes", "", "nope"]
    if isinstance(spec, Choice):
        out = [url_text(o) for o in spec.options] + [str(o) for o in spec.options] + ["", "x", "GROUP", "1e9"]
        out += [f"{o:.3e}" for o in spec.options if isinstance(o, int | float) and not isinstance(o, bool)]
        out += ["0.0400000000001", "0.04000000000000001", "1e-308", "5e-324", "0.28000000000000003"]
        return out
    assert isinstance(spec, Num)
    span = spec.hi - spec.lo
    xs = [spec.lo, spec.hi, spec.default, spec.lo - 1, spec.hi + 1, spec.lo + spec.step / 2, spec.lo + spec.step * 1.5]
    xs += [spec.lo + rng.random() * span for _ in range(12)]
    xs += [spec.lo + rng.randint(0, int(span / spec.step)) * spec.step for _ in range(12)]
    out = [repr(x) for x in xs] + [f"{x:.2f}" for x in xs[:6]] + ["abc", "", "1e400", "-1e400", "nan", " 8 ", "8."]
    out += [repr(spec.default + 1e-13), repr(0.1 + 0.2), "1e-308", repr(spec.lo + spec.step * 3)]  # a float's last bits
    return out


def test_the_link_is_read_by_the_apps_rules():
    rng = random.Random(3)
    calls, want = [], []
    for spec in CONTROLS:
        c = to_json(spec)
        for raw in raw_values(spec, rng):
            value, problem = parse_url_value(spec, raw)
            calls.append(["parseUrlValue", c, raw])
            want.append([value, problem])
            if problem:
                calls.append(["correction", c, raw, value, problem])
                want.append(f"URL parameter {spec.key}={raw[:39] + '…' if len(raw) > 40 else raw} {problem}; "
                            f"using {spec.key} = {url_text(value)}.")
    got = js(calls)
    bad = [(call[2], g, w) for call, g, w in zip(calls, got, want, strict=True) if g != w]
    assert not bad, bad[:8]


def test_a_slider_shows_its_value_as_the_apps_slider_does():
    specs = [s for s in CONTROLS if isinstance(s, Num)]
    got = js([["valueText", to_json(s), s.default] for s in specs])
    want = [(s.fmt % s.default) if s.fmt else url_text(s.default) for s in specs]
    assert got == want
