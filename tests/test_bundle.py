"""sim/player/bundle.py: our ES modules joined into one script (a lesson from file://, an app component) keep their
names private, import what they import, and refuse what the joiner does not read."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from sim.player import bundle

MODULES = {
    "a.js": 'export const A = 2;\nexport function twice(x) {\n  return A * x;\n}\nconst hidden = 1;\n',
    "b.js": 'import { twice } from "./a.js";\nimport * as a from "./a.js";\nexport default function (x) {\n'
            '  return twice(x) + a.A;\n}\nexport class B {}\nconst hidden = 2;\nexport { hidden as shown };\n',
}


@pytest.fixture
def folder(tmp_path):
    for name, text in MODULES.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def test_modules_come_deps_first_with_their_exports(folder):
    mods = bundle.modules(["b.js"], folder)
    assert list(mods) == ["a.js", "b.js"] and mods["b.js"][1] == ["a.js", "a.js"]
    a, b = mods["a.js"][0], mods["b.js"][0]
    assert 'return { "A": A, "twice": twice };' in a and "export" not in a
    assert 'const { twice } = __m["a.js"];' in b and 'const a = __m["a.js"];' in b
    assert 'return { "B": B, "shown": hidden, "default": __default };' in b


@pytest.mark.parametrize("text, problem", [
    ('import x from "https://cdn/x.js";\n', "does not read"),
    ('export * from "./a.js";\n', "does not read"),
    ("export default 1;\nexport default 2;\n", "more than one export default"),
])  # fmt: skip
def test_what_the_joiner_does_not_read_is_refused(folder, text, problem):
    (folder / "c.js").write_text(text)
    with pytest.raises(ValueError, match=problem):
        bundle.modules(["c.js"], folder)


def test_an_import_cycle_is_refused(folder):
    (folder / "c.js").write_text('import { d } from "./d.js";\nexport const c = 1;\n')
    (folder / "d.js").write_text('import { c } from "./c.js";\nexport const d = 1;\n')
    with pytest.raises(ValueError, match="an import cycle"):
        bundle.modules(["c.js"], folder)


def test_the_projects_bundles_hold_every_module_they_import():
    names = list(bundle.modules(["lesson_page.js"]))  # the lesson's one script
    assert names.index("engine.js") < names.index("view_runs.js") < names.index("live.js") < names.index("doc.js")
    assert names.index("exercises.js") < names.index("views.js") and names[-1] == "lesson_page.js"
    assert {"numfmt.js", "chart_spec.js", "toy_views.js", "player.js", "player_charts.js", "numpy.js",
            "lesson_rules.js", "control_rules.js", "predict.js"} <= set(names)


@pytest.mark.integration
@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_a_joined_script_computes_what_its_modules_do(folder):
    script = bundle.classic_script(["b.js"], 'globalThis.out = [__m["b.js"].default(5), __m["b.js"].shown, '
                                             'typeof hidden, Object.keys(__m.__bundle.deps)];', folder)
    module = bundle.module_script(["b.js"], "b.js", folder)
    (folder / "joined.mjs").write_text(module)
    check = f"""{script}
const m = await import({json.dumps((folder / "joined.mjs").as_uri())});
const direct = await import({json.dumps((folder / "b.js").as_uri())});
process.stdout.write(JSON.stringify([globalThis.out, m.default(5), direct.default(5)]));"""
    done = subprocess.run(["node", "--input-type=module", "-e", check], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [[12, 2, "undefined", ["a.js", "b.js"]], 12, 12]
