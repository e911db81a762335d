"""assets/js/engine.js, the browser's second path of sim/: its generated declarations are current, its own tests
pass under node, and for hundreds of random valid configs it gives sim's runs (same seed, same run, everywhere):
counts and answers equal, every real array within 1e-9 relative (normwise: see tests/fixtures/engine_jobs.py),
the same refusals (the same setting named) for invalid configs and the same iteration for diverging ones. Under
node (integration) and once in Chromium (e2e)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from sim import engine_js
from tests.fixtures import engine_jobs

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "browser-engine.md"


def test_the_declarations_block_is_current():
    """The block `python -m sim.engine_js` writes (ranges, choices, defaults, caps, metric names) is in the file."""
    source = engine_js.ENGINE.read_text(encoding="utf-8")
    assert engine_js.rewrite(source) == source, "assets/js/engine.js is out of date: run python -m sim.engine_js"
    seed = next(line for line in source.splitlines() if line.startswith('    {"name": "seed"'))
    assert '"hi": "9223372036854775807"' in seed and '"describe": "an integer in [0, 2**63-1]"' in seed  # a string
    assert '"MAX_MEMORY_MB": 480.0' in source and '"HISTORY_ARRAYS": 3' in source


def test_each_refusal_sentence_is_written_once_and_used_by_both_languages():
    """sim.refusals holds each refusal beyond a setting's range; sim raises it and engine.js throws it from its
    DECLARATIONS, so neither writes the sentence itself."""
    from sim.refusals import REFUSALS

    source = engine_js.ENGINE.read_text(encoding="utf-8")
    python = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "sim").rglob("*.py") if p.name != "refusals.py")
    for key, sentence in REFUSALS.items():
        assert f'refused("{key}"' in source and f'refused("{key}"' in python, key
        words = max(re.split(r"\{\w+\}", sentence), key=len)  # its longest run of words
        assert source.count(words) == 1 and words not in python, (key, words)  # once: in the generated block


def test_engine_js_is_one_plain_module_a_classic_script_can_wrap():
    """No import, no DOM, no module syntax but `export` before top-level declarations (file:// pages wrap it)."""
    source = engine_js.ENGINE.read_text(encoding="utf-8")
    assert not re.search(r"^\s*import\b|\bdocument\.|\bwindow\.|\bfetch\(", source, flags=re.M)
    classic = engine_js.classic_script(source)
    assert not re.search(r"^export ", classic, flags=re.M)
    assert "window.grpoEngine = {" in classic and "runToy" in classic and "stdComparison" in classic


def test_every_export_is_documented():
    names = [m.group(2) for m in engine_js.EXPORT.finditer(engine_js.ENGINE.read_text(encoding="utf-8"))]
    text = DOCS.read_text(encoding="utf-8")
    missing = [n for n in names if f"`{n}" not in text]
    assert not missing, f"docs/browser-engine.md does not describe {missing}"


@pytest.mark.integration
def test_engine_js_unit_tests_under_node():
    done = subprocess.run(["node", "--test", "tests/js/"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def _report(worst: dict, where: str) -> None:
    """The largest relative difference seen per array, printed (and written to $ENGINE_DIFFS_JSON if set)."""
    print(f"\nworst relative differences, engine.js ({where}) vs sim:")
    for name, d in sorted(worst.items()):
        print(f"  {name:45s} {d:.1e}")
    if os.environ.get("ENGINE_DIFFS_JSON"):
        Path(os.environ["ENGINE_DIFFS_JSON"]).write_text(json.dumps({"where": where, "worst": worst}, indent=1))


def test_same_seed_same_run_in_node_on_a_sample(tmp_path):
    """The fast tier's share of the comparison below: 40 toy configs (sampled and expected), 8 sharpening runs, a
    Std scaling comparison and every invalid config, in about 4 s."""
    jobs = engine_jobs.all_jobs(n_toy=40, n_sharpen=8, n_std=1, seed=36)
    py = [engine_jobs.python_result(j) for j in jobs]
    js = engine_jobs.run_node(jobs, tmp_path)
    problems, _ = engine_jobs.compare_all(jobs, js, py)
    assert not problems, "\n".join(problems[:20])


@pytest.mark.integration
def test_same_seed_same_run_in_node(tmp_path):
    jobs = engine_jobs.all_jobs()
    assert sum(j["kind"] == "toy" for j in jobs) >= 200
    py = [engine_jobs.python_result(j) for j in jobs]
    js = engine_jobs.run_node(jobs, tmp_path)
    problems, worst = engine_jobs.compare_all(jobs, js, py)
    _report(worst, "node")
    assert not problems, "\n".join(problems[:20])
    outcomes = [r.get("error", "") for r in py]
    assert sum("diverged" in e for e in outcomes) >= 1 and sum("must" in e for e in outcomes) >= 30  # both tested


@pytest.mark.e2e
def test_same_seed_same_run_in_chromium(tmp_path):
    """engine.js wrapped as a classic script, opened from file:// in Chromium: the same jobs give sim's results."""
    playwright_sync = pytest.importorskip("playwright.sync_api", reason="playwright (python) is not installed")
    from tests.fixtures.serve import launch_chromium

    jobs = engine_jobs.all_jobs()
    jobs_js = (ROOT / "tests" / "js" / "jobs.mjs").read_text(encoding="utf-8").replace("export function", "function")
    (tmp_path / "engine.js").write_text(engine_js.classic_script(), encoding="utf-8")
    (tmp_path / "jobs.js").write_text(jobs_js + "\nwindow.runJob = runJob;\n", encoding="utf-8")
    (tmp_path / "index.html").write_text('<!doctype html><meta charset="utf-8"><script src="engine.js"></script>'
                                         '<script src="jobs.js"></script><p id="ready">ready</p>', encoding="utf-8")
    with playwright_sync.sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            page = browser.new_page()
            page.goto((tmp_path / "index.html").as_uri())
            text = page.evaluate("""(jobsText) => {
                const FLOATS = { nan: NaN, inf: Infinity, "-inf": -Infinity };
                const jobs = JSON.parse(jobsText, (_, v) => (v && v.float in FLOATS ? FLOATS[v.float] : v));
                function pack(data, shape) {
                    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
                    let s = "";
                    for (let i = 0; i < bytes.length; i += 0x8000) {
                        s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
                    }
                    return { shape, b64: btoa(s) };
                }
                return JSON.stringify(jobs.map((job) => window.runJob(window.grpoEngine, job, pack)));
            }""", engine_jobs.js_jobs(jobs))
        finally:
            browser.close()
    js = engine_jobs.decode(json.loads(text))
    py = [engine_jobs.python_result(j) for j in jobs]
    problems, worst = engine_jobs.compare_all(jobs, js, py)
    _report(worst, "Chromium")
    assert not problems, "\n".join(problems[:20])
