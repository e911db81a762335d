"""What the browser's TinyLM trainer takes from sim/, written as two JavaScript modules (never typed twice):

    assets/js/tinylm_sft.js    the shipped SFT checkpoint (assets/data/tinylm_sft.pt) in float32, as base64
    assets/js/tinylm_data.js   GRPOConfig's and StoryConfig's declarations (ranges, choices, defaults: sim's
                               messages), the presets, the metric names, the tokens and the 300 held-out problems

    python -m sim.tinylm.browser            # rewrite both from sim/ and the checkpoint
    python -m sim.tinylm.browser --check    # exit 1 if either is out of date
    python -m sim.tinylm.browser --page DIR # a minimal page that trains TinyLM, to open from file:// (DIR/index.html)

A page opened from file:// cannot fetch a file, so the weights travel inside a module: 102,528 float32 values,
547 kB of base64 (float64 would double it, and the browser computes in float32). They are torch's state_dict
in order, each tensor flat in torch's layout; tests/test_tinylm_js.py checks them equal to the checkpoint rounded
to float32, bit for bit. The held-out set is written out because sim draws it with numpy's generator
(sim/tinylm/data.py: split), which the browser does not have.
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

from sim.engine_js import _field, _value
from sim.paths import JS
from sim.player.bundle import classic_script
from sim.tinylm.checkpoint import ASSET, load_checkpoint
from sim.tinylm.data import EQUALS, PLUS, split
from sim.tinylm.grpo_train import METRICS, GRPOConfig
from sim.tinylm.presets import PRESETS
from sim.tinylm.story import KS, StoryConfig
from sim.tinylm.tokens import CHARS, EOS, MAX_NEW_TOKENS, PAD, PROMPT_LEN, VOCAB_SIZE

SFT_MODULE = JS / "tinylm_sft.js"
DATA_MODULE = JS / "tinylm_data.js"
HEAD = "// Written by `python -m sim.tinylm.browser` from sim/ ({what}); do not edit.\n"


def weights32(path: Path = ASSET) -> tuple[dict, list[tuple[str, list[int]]], np.ndarray]:
    """(model config, [(name, shape)] in state_dict order, every tensor flat in that order as float32)."""
    model, _ = load_checkpoint(path)
    state = model.state_dict()
    params = [(name, list(t.shape)) for name, t in state.items()]
    flat = np.concatenate([t.detach().double().numpy().ravel() for t in state.values()]).astype(np.float32)
    return model.cfg.to_dict(), params, flat


def sft_text(path: Path = ASSET) -> str:
    cfg, params, flat = weights32(path)
    meta = json.loads((path.with_suffix(".json")).read_text(encoding="utf-8")) if path.with_suffix(".json").exists() \
        else {}
    blob = {
        "model_config": cfg,
        "params": params,
        "pass_at_1_exact": meta.get("pass_at_1_exact"),
        "checkpoint_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "base64": base64.b64encode(flat.astype("<f4").tobytes()).decode(),
    }
    return HEAD.format(what=f"the float32 weights of {path.name}") + f"export const SFT = {json.dumps(blob)};\n"


def data() -> dict:
    """Everything else the browser's trainer takes from sim/, as plain data."""
    _, heldout = split()
    return {
        "GRPOConfig": [_field(f) for f in dataclasses.fields(GRPOConfig)],
        "StoryConfig": [_field(f) for f in dataclasses.fields(StoryConfig) if f.name == "eval_samples"],
        "presets": {name: p.changes for name, p in PRESETS.items()},
        "metrics": list(METRICS),
        "ks": list(KS),
        "tokens": {"chars": CHARS, "eos": EOS, "pad": PAD, "plus": PLUS, "equals": EQUALS, "vocab_size": VOCAB_SIZE,
                   "prompt_len": PROMPT_LEN, "max_new_tokens": MAX_NEW_TOKENS},
        "heldout": heldout.tolist(),
    }


def data_text() -> str:
    body = ",\n".join(f"  {json.dumps(k)}: {json.dumps(_value(v), ensure_ascii=False)}" for k, v in data().items())
    return HEAD.format(what="sim/tinylm's declarations") + f"export const TINYLM = {{\n{body}\n}};\n"


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>TinyLM, trained in this tab</title>
<style>body{font:15px system-ui,sans-serif;margin:2em;max-width:60em}pre{background:#f4f4f4;padding:.6em}
button{font-size:1em;margin-right:.4em}</style></head>
<body><h1>TinyLM, trained in this tab</h1>
<p>GRPO on a two-layer transformer learning two-digit addition, from the shipped SFT checkpoint: the default preset
(docs/tinylm-browser.md). Settings as JSON (GRPOConfig's fields, eval_samples, preset):</p>
<p><input id="settings" size="60" value="{}"> <button id="start">Start</button><button id="pause">Pause</button>
<button id="resume">Resume</button><button id="stop">Stop</button></p>
<p id="status" role="status">Not started.</p><pre id="metrics"></pre><pre id="result"></pre>
<script src="tinylm.js"></script>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
let run = null;
window.tinylmBench = {t0: null, steps: [], reached: null, done: null, messages: 0};
function show(msg, snap) {
  const b = window.tinylmBench, now = performance.now() - b.t0;
  b.messages += 1;
  if (msg.type === "step") {
    b.steps.push([msg.metrics.iteration, now, msg.metrics.pass_at_1 ?? null]);
    if (b.reached === null && (msg.metrics.pass_at_1 ?? 0) >= 0.8) b.reached = [msg.metrics.iteration, now];
  }
  if (msg.type === "done" || msg.type === "error" || msg.type === "stopped") b.done = [msg.type, now];
  const last = snap.pass_at_1.length ? snap.pass_at_1[snap.pass_at_1.length - 1] : null;
  $("status").textContent = `${snap.paused ? "paused" : snap.state}: iteration ${snap.iteration} / ${snap.iterations}`
    + (last ? `, held-out pass@1 ${last[1].toFixed(3)} at iteration ${last[0]}` : "")
    + (snap.eval ? `, pass@k ${snap.eval.done} / ${snap.eval.total} problems` : "")
    + (snap.workers ? ` (${snap.workers} Worker${snap.workers > 1 ? "s" : ""}, SIMD ${snap.simd})` : "");
  if (msg.type === "step") $("metrics").textContent = JSON.stringify(msg.metrics, null, 1);
  if (snap.error) $("result").textContent = snap.error;
  if (snap.result) {
    const r = snap.result, n = r.eval_samples;
    const never = (list) => list.join(", ") || "none";
    $("result").textContent = `pass@1 ${r.pass_at_1_before.toFixed(3)} -> ${r.pass_at_1_after.toFixed(3)}, pass@${n} `
      + `${r.pass_at_k_before[n - 1].toFixed(3)} -> ${r.pass_at_k_after[n - 1].toFixed(3)}\\nnever solved before: `
      + `${never(r.never_solved_before)}\\nnever solved after: ${never(r.never_solved_after)}`;
  }
}
function start(settings, options = {}) {
  if (run) run.stop();
  window.tinylmBench = {t0: performance.now(), steps: [], reached: null, done: null, messages: 0};
  try {
    run = window.grpoTinyLM.startTinyLM(settings, {...options, onMessage: show});
  } catch (e) {
    $("status").textContent = "These settings cannot run: " + e.message;
    run = null;
  }
  window.tinylmRun = run;
  return run !== null;
}
window.tinylmStart = start;
$("start").onclick = () => {
  let settings;
  try { settings = JSON.parse($("settings").value || "{}"); } catch (e) { $("status").textContent = e.message; return; }
  start(settings);
};
$("pause").onclick = () => run && run.pause();
$("resume").onclick = () => run && run.resume();
$("stop").onclick = () => run && run.stop();
</script></body></html>
"""


def write_page(folder: Path) -> Path:
    """A minimal page that trains TinyLM in the tab (the benchmark's, and a way to try it by hand): folder/index.html
    and folder/tinylm.js, the bundle of assets/js/tinylm_run.js as a classic script (window.grpoTinyLM; the kernels'
    createKernels as window.grpoTinyLMKernels, for scripts/bench_tinylm_browser.py)."""
    folder.mkdir(parents=True, exist_ok=True)
    tail = ('window.grpoTinyLM = __m["tinylm_run.js"];\n'
            'window.grpoTinyLMKernels = __m["tinylm_kernels.js"].createKernels;')
    (folder / "tinylm.js").write_text(classic_script(["tinylm_run.js"], tail), encoding="utf-8")
    (folder / "index.html").write_text(PAGE, encoding="utf-8")
    return folder / "index.html"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m sim.tinylm.browser", description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="exit 1 if a module is out of date")
    p.add_argument("--page", metavar="DIR", help="write a minimal page that trains TinyLM into DIR instead")
    a = p.parse_args(argv)
    if a.page:
        print(f"wrote {write_page(Path(a.page))}: open it in a browser (file:// works)")
        return 0
    stale = []
    for module, text in ((SFT_MODULE, sft_text()), (DATA_MODULE, data_text())):
        if module.exists() and module.read_text(encoding="utf-8") == text:
            continue
        if a.check:
            stale.append(module.name)
        else:
            module.write_text(text, encoding="utf-8")
            print(f"wrote {module.name} ({len(text.encode()):,} bytes)")
    if stale:
        print(f"error: {', '.join(stale)} out of date: run python -m sim.tinylm.browser", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
