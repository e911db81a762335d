// What each live view asks the engine for (assets/js/engine.js), from its request: the runs, nothing drawn. It runs
// where the engine runs: in a Web Worker when the page can start one (assets/js/live.js), else on the page.
//
//   training    run = runToy(config), exp = expectedRun(config); with mu > 1 the same setting with PPO's symmetric
//               clip (the clip caption's comparison); a pinned setting's run; the expected run with a student's
//               advantage table ("Use my lab code")
//   std         Std scaling's three runs (sim.exercises.std_comparison)
//   sharpen     the sharpening toy's run
//   passk_toy   the toy's expected run at the chapter's defaults, T = 200 (pass@k before and after)
//   your_prompts  the toy on a visitor's pool (explicit difficulties): its run and expected run
//
// A request is {view, config, pinned: {label, config} | null, table: [[A_correct...], [A_wrong...]] | null}, every
// config keyed by the engine's (sim's) field names. The engine validates each config and throws its message
// (a field out of range, a run over the memory cap, a run that diverges).

import { expectedRun, runSharpen, runToy, stdComparison } from "./engine.js";
import { TOY_T } from "./toy_views.js";

export const VIEWS = ["training", "std", "sharpen", "passk_toy", "your_prompts"];
const KEEP = 8; // expected runs kept

// The expected run draws nothing: its seed and band do not enter (sim's expected_key), so a student trying seeds
// computes it once. The last KEEP are kept, by their config without seed and n_seeds; a kept run is copied to the
// page, never handed over (see buffers()).
const expected = new Map();
function expectedRunOf(config) {
  const key = JSON.stringify({ ...config, seed: 0, n_seeds: 1 });
  let exp = expected.get(key);
  if (exp === undefined) {
    exp = expectedRun(config);
    if (expected.size >= KEEP) expected.delete(expected.keys().next().value);
  } else expected.delete(key);
  expected.set(key, exp); // the newest last
  return exp;
}

export function viewRuns(request) {
  const { view, config } = request;
  if (view === "training") {
    const out = { run: runToy(config), exp: expectedRunOf(config) };
    const ppoConfig = { ...config, loss_type: "grpo", clip_eps_high: null };
    const differs = (config.loss_type ?? "grpo") !== "grpo" || (config.clip_eps_high ?? null) !== null;
    if ((config.mu ?? 1) > 1 && differs) out.ppo = runToy(ppoConfig);
    if (request.pinned) out.pinned = runToy(request.pinned.config);
    if (request.table) {
      const [A_correct, A_wrong] = request.table;
      out.mine = expectedRun({ ...config, n_seeds: 1 }, { advantageTable: { A_correct, A_wrong } });
    }
    return out;
  }
  if (view === "std") return { runs: stdComparison(config) };
  if (view === "sharpen") return { h: runSharpen(config) };
  if (view === "passk_toy") return { exp: expectedRun({ iterations: TOY_T }) };
  if (view === "your_prompts") return { run: runToy(config), exp: expectedRunOf(config) };
  throw new Error(`not a live view: ${view}`);
}

// The typed arrays' buffers in a result (what a Worker hands over without copying), a kept expected run's left out
export function buffers(x, out = new Set(), kept = new Set(expected.values())) {
  if (ArrayBuffer.isView(x)) out.add(x.buffer);
  else if (x && typeof x === "object" && !kept.has(x)) for (const v of Object.values(x)) buffers(v, out, kept);
  return out;
}
