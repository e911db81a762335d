"""Benchmark TinyLM trained in the browser (assets/js/tinylm_run.js) beside torch (sim/tinylm), in one run.

    python scripts/bench_tinylm_browser.py               # Chromium with 2 Workers and with 1, torch, the kernels
    python scripts/bench_tinylm_browser.py --check       # one run of each: each target's verdict (CI)
    python scripts/bench_tinylm_browser.py --tiny        # a few iterations of each (the suite's check that it runs)

The default preset, seed 0, 300 iterations, then pass@k on 300 held-out problems x 64 samples, from the shipped SFT
checkpoint: in headless Chromium (Debian's, through Playwright) from file://, on the minimal page
`python -m sim.tinylm.browser --page` writes, with 2 Workers (both cores) and with 1; and in torch on one thread
(sim's story with rng="philox", the browser's random stream: the same seed samples the same completions, so both
reach 0.80 at about the same iteration and the times compare like for like). Figures: the wall time from Start
until the exact held-out pass@1 (checked every 10 iterations) first reaches 0.80, the whole GRPO run, pass@k's
evaluation of both models, the ratio to torch, the main thread's longest stall while the Workers train (the page
stays responsive), and what the trainer adds to a lesson.

The real page: the lesson's TinyLM page (`python -m sim lesson build DIR --views tinylm`, opened from file://),
Start pressed at its defaults; while it trains, its "Overlay the recorded TRL run" checkbox is switched on and off
(the one control that changes what the live charts draw), and each move is timed in the page from its change event
to the live charts' player finishing a draw that shows it (median and max over the moves).

The kernels: a matrix product of TinyLM's shapes (480 tokens x 64 -> 256 and the others) in WebAssembly SIMD (the
trainer's) and in the best plain-JavaScript loop tried (4 x 4 register blocks), in node and in Chromium:
why the trainer uses WebAssembly (docs/tinylm-browser.md).

Targets (issue 44): the default preset to held-out pass@1 >= 0.80 within 30 s in Chromium (60 s is the limit; --check
fails beyond 2x the target, so at 60 s); the lesson grows by at most 1.5 MB; while it trains on the lesson's page, a
control move redraws in <= 100 ms.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts.benchdoc import Report, add_arguments  # noqa: E402

TARGET_S = 30.0
GROWTH_LIMIT = 1_500_000  # bytes a lesson may grow by (issue 44)
REDRAW_MS = 100.0  # a control move redrawn while TinyLM trains on the page (issue 44)

# A matrix product Y = X W at TinyLM's shapes: WebAssembly SIMD (the trainer's kernel) against the best plain
# JavaScript loop tried, GFLOP/s, the best of 5 timings each (the same function in node and in the page).
KERNELS = """async (createKernels) => {
  function blocked(M, N, K, A, B, C) {  // 4 x 4 blocks of C in registers, double accumulation
    for (let m = 0; m + 4 <= M; m += 4) {
      const a0 = m * K, a1 = a0 + K, a2 = a1 + K, a3 = a2 + K;
      for (let n = 0; n + 4 <= N; n += 4) {
        let s00 = 0, s01 = 0, s02 = 0, s03 = 0, s10 = 0, s11 = 0, s12 = 0, s13 = 0;
        let s20 = 0, s21 = 0, s22 = 0, s23 = 0, s30 = 0, s31 = 0, s32 = 0, s33 = 0;
        for (let k = 0, b = n; k < K; k++, b += N) {
          const b0 = B[b], b1 = B[b + 1], b2 = B[b + 2], b3 = B[b + 3];
          const x0 = A[a0 + k], x1 = A[a1 + k], x2 = A[a2 + k], x3 = A[a3 + k];
          s00 += x0 * b0; s01 += x0 * b1; s02 += x0 * b2; s03 += x0 * b3;
          s10 += x1 * b0; s11 += x1 * b1; s12 += x1 * b2; s13 += x1 * b3;
          s20 += x2 * b0; s21 += x2 * b1; s22 += x2 * b2; s23 += x2 * b3;
          s30 += x3 * b0; s31 += x3 * b1; s32 += x3 * b2; s33 += x3 * b3;
        }
        let c = m * N + n;
        C[c] = s00; C[c + 1] = s01; C[c + 2] = s02; C[c + 3] = s03; c += N;
        C[c] = s10; C[c + 1] = s11; C[c + 2] = s12; C[c + 3] = s13; c += N;
        C[c] = s20; C[c + 1] = s21; C[c + 2] = s22; C[c + 3] = s23; c += N;
        C[c] = s30; C[c + 1] = s31; C[c + 2] = s32; C[c + 3] = s33;
      }
    }
  }
  const k = await createKernels(1 << 22), out = {};
  for (const [M, K, N] of [[480, 64, 192], [480, 64, 256], [480, 256, 64], [128, 64, 192]]) {
    const X = k.base, W = X + M * K, Y = W + K * N;
    for (let i = 0; i < M * K + K * N; i++) k.f32[X + i] = Math.sin(i);
    const A = k.f32.slice(X, X + M * K), B = k.f32.slice(W, W + K * N), C = new Float32Array(M * N);
    const flop = 2 * M * N * K;
    const time = (fn) => {
      for (let i = 0; i < 5; i++) fn();
      const reps = Math.max(3, Math.round(1e8 / flop)), ts = [];
      for (let r = 0; r < 5; r++) {
        const t0 = performance.now();
        for (let i = 0; i < reps; i++) fn();
        ts.push((performance.now() - t0) / reps);
      }
      return Math.min(...ts); // the best of 5: a kernel's speed when the machine lets it run
    };
    out[`${M}x${K}x${N}`] = { wasm: flop / time(() => k.matmul(M, N, K, X, W, 0, Y, 0)) / 1e6,
                              js: flop / time(() => blocked(M, N, K, A, B, C)) / 1e6 };
  }
  return out;
}"""


def kernels_node() -> dict:
    uri = (ROOT / "assets" / "js" / "tinylm_kernels.js").as_uri()
    code = (f"import {{ createKernels }} from {json.dumps(uri)};\n"
            f"console.log(JSON.stringify(await ({KERNELS})(createKernels)));")
    done = subprocess.run(["node", "--input-type=module", "-e", code], capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"node failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout)


# Start a run on the page and measure the main thread's longest stall (a 10 ms timer's lateness) while it trains.
START = """([settings, workers]) => {
  window.tinylmStall = 0;
  let last = performance.now();
  const tick = () => {
    const now = performance.now();
    window.tinylmStall = Math.max(window.tinylmStall, now - last - 10);
    last = now;
    const b = window.tinylmBench;
    if (!b || !b.done) setTimeout(tick, 10);
  };
  const ok = window.tinylmStart(settings, {workers});
  setTimeout(tick, 10);
  return ok;
}"""


class Chromium:
    """One headless Chromium on the page, for several runs."""

    def __init__(self, pw, page_file: Path):
        from tests.fixtures.serve import launch_chromium

        self.browser = launch_chromium(pw)
        self.page = self.browser.new_page()
        self.page.goto(page_file.as_uri())

    def kernels(self) -> dict:
        return self.page.evaluate(f"async () => await ({KERNELS})(window.grpoTinyLMKernels)")

    def run(self, settings: dict, workers: int, limit_s: float) -> dict:
        """One run to its end: the page's marks, the snapshot's figures, the main thread's longest stall."""
        page = self.page
        assert page.evaluate(START, [settings, workers])
        t0 = time.time()
        while not page.evaluate("window.tinylmBench.done") and time.time() - t0 < limit_s:
            time.sleep(0.25)
        bench = page.evaluate("window.tinylmBench")
        snap = page.evaluate("window.tinylmRun.snapshot()")
        if snap["state"] != "done":
            raise RuntimeError(f"the run in Chromium ended {snap['state']}: {snap['error']}")
        steps = [m["step_time"] for m in snap["history"]]
        return {"workers": snap["workers"], "simd": snap["simd"], "reached": bench["reached"],
                "reached_s": bench["reached"][1] / 1000 if bench["reached"] else None,
                "iterations": len(snap["history"]), "grpo_seconds": snap["result"]["grpo_seconds"],
                "eval_seconds": snap["result"]["eval_seconds"], "wall_seconds": snap["result"]["wall_seconds"],
                "median_step_ms": 1000 * statistics.median(steps), "pass_at_1": snap["pass_at_1"][-1],
                "pass_at_1_after": snap["result"]["pass_at_1_after"], "stall_ms": page.evaluate("window.tinylmStall")}

    def close(self) -> None:
        self.browser.close()


# The lesson page's live charts' player (assets/js/doc.js keeps it under the trainer's DocView), its draws hooked once:
# each draw notes whether the TRL overlay is in the data it draws (its legend, drawn with that data, names it), and
# the draw's end (the player sets stats.dataDrawnAt once Plotly has drawn every chart) settles a waiting move. One
# draw runs at a time (player.js `busy`), so the draw that ends is the last one started.
HOOK = """() => {
  const trainer = window.grpoPage.doc.kept.get("trainer:tinylm").trainer;
  const player = trainer.doc.kept.get("charts:tl_live").player;
  if (player.benchHooked) return true;
  player.benchHooked = true;
  const shows = () => [...player.root.querySelectorAll(".gp-legend-name")]
    .some((e) => e.textContent === "reward, TRL (recorded)");
  const draw = player.draw.bind(player);
  player.draw = (t) => { player.benchDrawing = shows(); return draw(t); };
  const s = player.stats;
  let drawnAt = s.dataDrawnAt;
  Object.defineProperty(s, "dataDrawnAt", { configurable: true, enumerable: true, get: () => drawnAt, set: (x) => {
    drawnAt = x;
    const w = window.benchMove;
    if (w && player.benchDrawing === w.want) { window.benchMove = null; w.done(x - w.t0); }
  } });
  return true;
}"""
# One move: the checkbox set to `want` and its change event sent (as a click does), at a time taken in the page;
# resolves to the ms until a draw of the live charts that shows it has ended (null after 10 s)
MOVE = """(want) => new Promise((resolve) => {
  const box = document.getElementById("ls-tl_trl");
  const timer = setTimeout(() => { window.benchMove = null; resolve(null); }, 10000);
  box.checked = want;
  window.benchMove = { want, t0: performance.now(), done: (ms) => { clearTimeout(timer); resolve(ms); } };
  box.dispatchEvent(new Event("change", { bubbles: true }));
})"""
TRAINING = "window.grpoTrainer && ['grpo', 'eval'].includes(window.grpoTrainer.states.at(-1))"


def page_moves(pw, moves: int, limit_s: float = 120.0) -> dict:
    """The lesson's TinyLM page from file://, Start at its defaults, then `moves` control moves while it trains (see
    the module docstring): each move's ms, and the run's state before and after them."""
    from sim.lesson import cli
    from tests.fixtures.serve import launch_chromium

    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "lesson"
        with contextlib.redirect_stdout(sys.stderr):  # stdout is the one JSON object
            if cli.main(["build", str(out), "--quiet", "--views", "tinylm"]) != 0:
                raise RuntimeError("the lesson's build failed")
        browser = launch_chromium(pw)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.set_default_timeout(1000 * limit_s)
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto((out / "tinylm.html").as_uri())
            page.wait_for_function("window.grpoPage && window.grpoPage.shown")
            page.get_by_role("button", name="▶ Start").click()
            # training, with the live charts drawn (a snapshot with history)
            page.wait_for_function(f"{TRAINING} && window.grpoPlayers.tl_live && window.grpoPlayers.tl_live.draws > 0")
            page.evaluate(HOOK)
            before = page.evaluate("window.grpoTrainer.states.at(-1)")
            ms = []
            for i in range(moves):
                time.sleep(rng.uniform(0.1, 0.4))  # apart, and at no fixed phase of the live redraw (DRAW_MS)
                ms.append(page.evaluate(MOVE, i % 2 == 0))
            after = page.evaluate("window.grpoTrainer.states.at(-1)")
            page.get_by_role("button", name="■ Stop").click()
        finally:
            browser.close()
    if errors:
        raise RuntimeError(f"the lesson's TinyLM page failed: {errors[:3]}")
    if None in ms:
        raise RuntimeError(f"a control move was not redrawn within 10 s: {ms}")
    return {"moves_ms": [round(x, 1) for x in ms], "state_before": before, "state_after": after}


def torch_run(settings: dict) -> dict:
    """sim's story with the browser's random stream, one thread: times as the page measures them."""
    import torch

    from sim.tinylm.grpo_train import GRPOConfig
    from sim.tinylm.story import StoryConfig, run_story

    torch.set_num_threads(1)
    grpo = GRPOConfig(**{k: v for k, v in settings.items() if k != "eval_samples"}, rng="philox")
    marks = {"reached": None, "reached_s": None}
    t0 = time.perf_counter()

    def on_step(trainer, m):
        if marks["reached"] is None and m.get("pass_at_1", 0.0) >= 0.8:
            marks["reached"] = [m["iteration"], time.perf_counter() - t0]
            marks["reached_s"] = marks["reached"][1]

    story = StoryConfig(grpo=grpo, eval_samples=settings.get("eval_samples", 64))
    res = run_story(story, on_step=on_step)
    return {**marks, "grpo_seconds": res["grpo_seconds"], "eval_seconds": res["eval_seconds"],
            "wall_seconds": time.perf_counter() - t0, "pass_at_1": res["exact_pass_at_1"],
            "pass_at_1_after": res["pass_at_1_after"]}


def lesson_growth() -> tuple[int, dict]:
    """Bytes the trainer's modules add to the lesson's bundle (those lesson_page.js does not already bring), and each
    module's size."""
    from sim.player.bundle import modules

    lesson = set(modules(["lesson_page.js"]))
    new = {n: len(body.encode()) for n, (body, _) in modules(["tinylm_run.js"]).items() if n not in lesson}
    return sum(new.values()), new


def median_of(runs: list[dict], key: str):
    values = [r[key] for r in runs]
    return None if any(v is None for v in values) else statistics.median(values)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tiny", action="store_true", help="a few iterations of each (checks that the script runs)")
    p.add_argument("--workers", default="2,1", help="the Chromium runs' Worker counts (default 2,1)")
    p.add_argument("--repeats", type=int, default=3, help="runs of each, interleaved (default 3; 1 with --check)")
    p.add_argument("--moves", type=int, default=None,
                   help="control moves on the lesson's page while it trains (default 12; --check 6, --tiny 2)")
    add_arguments(p)
    a = p.parse_args(argv)
    if a.repeats < 1:
        p.error("--repeats must be at least 1")
    moves = a.moves if a.moves is not None else 2 if a.tiny else 6 if a.check else 12
    if moves < 1:
        p.error("--moves must be at least 1")
    settings = {"seed": 0}
    if a.tiny:
        settings |= {"iterations": 4, "eval_samples": 2, "eval_every": 2}
    workers = [int(w) for w in a.workers.split(",")]
    repeats = 1 if a.check or a.tiny else a.repeats
    if a.check or a.tiny:
        workers = workers[:1]
    from playwright.sync_api import sync_playwright

    from sim.tinylm.browser import write_page

    out: dict = {"loadavg_start": os.getloadavg(), "settings": settings, "repeats": repeats}
    runs: dict = {w: [] for w in workers} | {"torch": []}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        chrome = Chromium(pw, write_page(Path(tmp)))
        try:
            out["kernels_chromium"] = None if a.tiny else chrome.kernels()
            for _ in range(repeats):  # interleaved, so that a busy minute costs each the same
                for w in workers:
                    runs[w].append(chrome.run(settings, w, limit_s=300))
                runs["torch"].append(torch_run(settings))
        finally:
            chrome.close()
        out["lesson_page"] = page_moves(pw, moves)
    out["kernels_node"] = None if a.tiny else kernels_node()
    growth, sizes = lesson_growth()
    out["lesson_growth_bytes"], out["module_bytes"] = growth, sizes
    out["runs"] = {str(k): v for k, v in runs.items()}
    out["loadavg_end"] = os.getloadavg()
    print(json.dumps(out, indent=1))

    report = Report("tinylm-browser", "TinyLM trained in the browser (assets/js/tinylm_run.js) beside torch")
    torch_reach = median_of(runs["torch"], "reached_s")
    reached_at = lambda rs: rs[0]["reached"][0] if rs[0]["reached"] else "-"  # noqa: E731 (the same in every run)
    for w in workers:
        rs = runs[w]
        label = f"{rs[0]['workers']} Worker{'s' if rs[0]['workers'] > 1 else ''}"
        reach = median_of(rs, "reached_s")
        report.add(f"Chromium, {label}: held-out pass@1 >= 0.80 first reached (iteration {reached_at(rs)})",
                   None if reach is None else round(reach, 1), "s", target=None if a.tiny else TARGET_S)
        report.add(f"Chromium, {label}: GRPO, {rs[0]['iterations']} iterations",
                   round(median_of(rs, "grpo_seconds"), 1), "s")
        report.add(f"Chromium, {label}: one iteration", round(median_of(rs, "median_step_ms"), 1), "ms")
        report.add(f"Chromium, {label}: pass@k evaluation of both models", round(median_of(rs, "eval_seconds"), 1), "s")
        if reach is not None and torch_reach:
            report.add(f"Chromium, {label}: time to 0.80, ratio to torch", round(reach / torch_reach, 2), "×")
        report.add(f"Chromium, {label}: the page's longest stall while it trains (the most of the runs)",
                   round(max(r["stall_ms"] for r in rs)), "ms")
    rs = runs["torch"]
    report.add(f"torch, 1 thread: held-out pass@1 >= 0.80 first reached (iteration {reached_at(rs)})",
               None if torch_reach is None else round(torch_reach, 1), "s")
    report.add("torch, 1 thread: GRPO", round(median_of(rs, "grpo_seconds"), 1), "s")
    report.add("torch, 1 thread: pass@k evaluation of both models", round(median_of(rs, "eval_seconds"), 1), "s")
    for host, k in (("node", out["kernels_node"]), ("Chromium", out["kernels_chromium"])):
        if k:
            shape = "480x64x256"
            report.add(f"{host}: matrix product {shape}, WebAssembly SIMD", round(k[shape]["wasm"], 1), "GFLOP/s")
            report.add(f"{host}: matrix product {shape}, plain JavaScript", round(k[shape]["js"], 1), "GFLOP/s")
    report.add("what the trainer adds to a lesson (weights, kernels, code)", round(growth / 1e6, 2), "MB",
               target=GROWTH_LIMIT / 1e6)
    lp = out["lesson_page"]
    report.add(f"the lesson's TinyLM page, training: a control move -> the live charts redrawn (median of "
               f"{len(lp['moves_ms'])})", round(statistics.median(lp["moves_ms"])), "ms",
               target=None if a.tiny else REDRAW_MS)  # --tiny: a check that it runs, as its 0.80 has none
    report.add("... the slowest move", round(max(lp["moves_ms"])), "ms")
    report.note(f"Wall clock from Start, median of {repeats} runs of each (interleaved): the default preset (seed 0, "
                "300 iterations, 300 x 64 pass@k samples) from the shipped checkpoint; held-out pass@1 is exact and "
                "checked every 10 iterations. torch runs sim's story on one thread with rng=\"philox\", the "
                "browser's random stream, so both sample the same completions until a float32 rounding flips a "
                "token. The stall is the main thread's longest delay of a 10 ms timer during a run. The matrix "
                "product: 480 tokens x 64 -> 256, the trainer's WebAssembly kernel against the best plain-JavaScript "
                "loop tried (4 x 4 register blocks), the best of 5 timings.")
    trained = " (the run still training after the last move)" if lp["state_after"] in ("grpo", "eval") else (
        f" (the run was {lp['state_after']} by the last move: not all of them were made while it trained)")
    report.note("A control move on the lesson's TinyLM page (python -m sim lesson build, from file://, Start at its "
                "defaults, 2 Workers): the TRL overlay checkbox switched on and off, each move timed in the page from "
                "its change event to the end of the live charts' draw that shows it; 0.1-0.4 s apart" + trained + ".")
    return report.finish(a)


if __name__ == "__main__":
    sys.exit(main())
