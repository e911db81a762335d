// TinyLM trained in the reader's tab: the page's one entry point (docs/tinylm-browser.md, "The page's API").
//
//   const run = startTinyLM({preset: "default", seed: 0, group_size: 8, ...}, {onMessage: (msg, snap) => draw(snap)});
//   run.pause(); run.resume(); run.stop();  run.snapshot();
//
// Settings are GRPOConfig's fields (sim/tinylm/grpo_train.py: lr, beta, mu, loss_type, seed, ...), StoryConfig's
// eval_samples and `preset`; a bad one is refused before anything starts. The run goes through the states
// of sim/tinylm/job.py's runs, "starting" -> "grpo" -> "eval" -> "done" (or "stopped", "error"), and snapshot()
// returns what job.py's TrainingJob.snapshot returns (history: one metrics object per iteration under TRL's names;
// pass_at_1: [iteration, held-out pass@1] pairs; groups: the latest groups; result: run_story's result), so the
// page draws the same charts from either. Messages, each also applied to the snapshot before onMessage sees it:
//
//   {type: "ready", workers, simd}                    the trainer's Workers are up (1 or 2; WebAssembly SIMD or not)
//   {type: "stage", stage}                            "grpo" (with pass_at_1: the SFT model's), then "eval"
//   {type: "step", metrics, pass_at_1, groups}        after every GRPO iteration
//   {type: "eval", done, total}                       pass@k's progress, in held-out problems (2 x 300: both models)
//   {type: "done", result}                            run_story's result
//   {type: "stopped"} | {type: "error", message}
//
// Where it runs: a coordinator Worker that computes one shard of each batch and hands the other to a second Worker
// (both cores), both built from the page's bundle (sim/player/bundle.py: Blob Workers, allowed from file:// too). With
// one core, or where Workers cannot start, one Worker computes both shards; with no Worker at all (node, a page
// without the bundle), the same code runs on the page. The shards are fixed, so the run is the same in every case.

import { HELDOUT, METRICS, tinylmConfig } from "./tinylm_grpo.js";
import { LocalShard, RemoteShard, Trainer, serveShard } from "./tinylm_trainer.js";

export { METRICS, tinylmConfig };

const ENTRY = "tinylm_run.js";
const STORY_KEYS = ["pass_at_1_before", "pass_at_1_after", "pass_at_k_before", "pass_at_k_after", "never_solved_before",
  "never_solved_after", "crossover_k"]; // the evaluation's part of run_story's result

// A macrotask, so that a Worker reads its messages (pause, resume) between two iterations.
function yieldTask() {
  if (typeof MessageChannel === "undefined") return new Promise((r) => setTimeout(r, 0));
  return new Promise((resolve) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => {
      ch.port1.close();
      resolve();
    };
    ch.port2.postMessage(0);
  });
}

function bundleOf() {
  // eslint-disable-next-line no-undef
  return typeof __m !== "undefined" && __m.__bundle ? __m.__bundle : null;
}

// A Worker's source built from the bundle's own module code: this module and what it imports, then workerMain.
export function workerSource(bundle) {
  const names = bundle.deps[ENTRY];
  const factories = names.map((n) => `${JSON.stringify(n)}: ${bundle.f[n].toString()}`).join(",\n");
  return `"use strict";
const __f = {${factories}};
const __m = {};
for (const n of ${JSON.stringify(names)}) __m[n] = __f[n](__m);
__m[${JSON.stringify(ENTRY)}].workerMain(self);`;
}

function blobWorker(source) {
  const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
  try {
    return new Worker(url);
  } finally {
    URL.revokeObjectURL(url);
  }
}

// A Worker's life: the first message says whether it coordinates a run or serves a shard.
export function workerMain(scope) {
  scope.onmessage = (e) => {
    const msg = e.data;
    if (msg.op === "shard") {
      serveShard(scope);
      return;
    }
    if (msg.op !== "start") return;
    const control = new Control();
    scope.onmessage = (ev) => control.receive(ev.data);
    coordinate(msg, (m) => scope.postMessage(m), control);
  };
}

// pause / resume as the coordinator sees them.
class Control {
  constructor() {
    this.paused = false;
    this.wake = null;
  }

  receive(msg) {
    if (msg.op === "pause") this.paused = true;
    if (msg.op === "resume") {
      this.paused = false;
      if (this.wake) this.wake();
    }
  }

  async gate() {
    await yieldTask();
    while (this.paused) await new Promise((r) => (this.wake = r));
  }
}

// The whole story, posting its messages: {settings, workers (1 or 2), simd, source (for a second Worker)}.
export async function coordinate({ settings, workers = 1, simd = true, source = null }, post, control) {
  try {
    const t0 = performance.now();
    const shards = [new LocalShard(), new LocalShard()];
    let helper = null;
    if (workers >= 2 && source && typeof Worker !== "undefined") {
      try {
        helper = blobWorker(source);
        helper.postMessage({ op: "shard" });
        shards[1] = new RemoteShard(helper);
      } catch (e) {
        helper = null; // no nested Worker here: this one computes both shards
      }
    }
    let trainer;
    try {
      trainer = await Trainer.create(settings, shards, { simd });
    } catch (e) {
      if (!helper) throw e;
      helper.terminate(); // the second Worker failed to start: one Worker computes both shards
      helper = null;
      trainer = await Trainer.create(settings, [new LocalShard(), new LocalShard()], { simd });
    }
    const cfg = trainer.cfg;
    post({ type: "ready", workers: helper ? 2 : 1, simd: trainer.simd });
    post({ type: "stage", stage: "grpo", pass_at_1: trainer.passAt1 });
    const t1 = performance.now();
    while (trainer.iteration < cfg.iterations) {
      await control.gate();
      const metrics = await trainer.step();
      post({ type: "step", metrics, pass_at_1: trainer.passAt1, groups: trainer.latestGroups });
    }
    await control.gate();
    post({ type: "stage", stage: "eval" });
    const t2 = performance.now();
    const ev = await trainer.evaluate({ gate: () => control.gate(), onProgress: (done, total) => post({ type: "eval",
      done, total }) }); // prettier-ignore
    const t3 = performance.now();
    if (helper) helper.terminate();
    const result = {};
    for (const k of STORY_KEYS) if (k in ev) result[k] = ev[k];
    const grpo = { ...cfg };
    delete grpo.eval_samples;
    delete grpo.preset;
    Object.assign(result, { exact_pass_at_1: trainer.passAt1, sft: null, grpo_seconds: (t2 - t1) / 1000,
      eval_seconds: (t3 - t2) / 1000, wall_seconds: (t3 - t0) / 1000, iterations: trainer.iteration,
      eval_samples: cfg.eval_samples, heldout_problems: HELDOUT.length,
      config: { grpo, eval_samples: cfg.eval_samples, from_scratch: false, checkpoint: "assets/data/tinylm_sft.pt" } }); // prettier-ignore
    post({ type: "done", result });
  } catch (err) {
    post({ type: "error", message: `TinyLM run failed: ${String((err && err.message) || err)}` });
  }
}

// One run in this tab. See the top of this file.
export class TinyLMRun {
  constructor(settings, { onMessage = null, workers = null, simd = true } = {}) {
    this.config = tinylmConfig(settings); // throws, naming a bad setting
    this.settings = settings;
    this.onMessage = onMessage;
    const cores = typeof navigator !== "undefined" && navigator.hardwareConcurrency ? navigator.hardwareConcurrency : 1;
    this.workers = workers ?? (cores >= 2 ? 2 : 1);
    this.simd = simd;
    this.worker = null;
    this.control = null; // the coordinator's controls when it runs on the page
    this.snap = { state: "starting", iteration: 0, iterations: this.config.iterations, history: [], pass_at_1: [],
      groups: [], result: null, error: null, checkpoint_error: false, paused: false, viewers: 1, queue_position: 0,
      eval: null, where: null, workers: null, simd: null }; // prettier-ignore
  }

  start() {
    const bundle = bundleOf();
    const msg = { op: "start", settings: this.settings, workers: this.workers, simd: this.simd };
    if (bundle && typeof Worker !== "undefined") {
      try {
        const source = workerSource(bundle);
        this.worker = blobWorker(source);
        this.worker.onmessage = (e) => this.receive(e.data);
        this.worker.onerror = (e) => {
          if (e.preventDefault) e.preventDefault();
          this.receive({ type: "error", message: `TinyLM run failed: ${e.message || "its Worker stopped"}` });
        };
        this.worker.postMessage({ ...msg, source });
        this.snap.where = "worker";
        return this;
      } catch (e) {
        this.worker = null; // no Worker: on the page
      }
    }
    this.snap.where = "page";
    this.control = new Control();
    coordinate(msg, (m) => this.receive(m), this.control);
    return this;
  }

  receive(msg) {
    const s = this.snap;
    if (["done", "stopped", "error"].includes(s.state)) return; // a late message of a run that ended
    if (msg.type === "ready") Object.assign(s, { workers: msg.workers, simd: msg.simd });
    else if (msg.type === "stage") {
      s.state = msg.stage;
      if (msg.pass_at_1) s.pass_at_1 = msg.pass_at_1;
      if (msg.stage === "eval") s.eval = { done: 0, total: 600 };
    } else if (msg.type === "step") {
      s.iteration = msg.metrics.iteration;
      s.history.push(msg.metrics);
      s.pass_at_1 = msg.pass_at_1;
      s.groups = msg.groups;
    } else if (msg.type === "eval") s.eval = { done: msg.done, total: msg.total };
    else if (msg.type === "done") {
      Object.assign(s, { state: "done", result: msg.result, pass_at_1: msg.result.exact_pass_at_1, paused: false });
      this.release();
    } else if (msg.type === "stopped") {
      Object.assign(s, { state: "stopped", paused: false });
    } else if (msg.type === "error") {
      Object.assign(s, { state: "error", error: msg.message, paused: false });
      this.release();
    }
    if (this.onMessage) this.onMessage(msg, s);
  }

  send(op) {
    if (this.worker) this.worker.postMessage({ op });
    else if (this.control) this.control.receive({ op });
  }

  pause() {
    if (!["starting", "grpo", "eval"].includes(this.snap.state)) return false;
    this.snap.paused = true;
    this.send("pause");
    return true;
  }

  resume() {
    this.snap.paused = false;
    this.send("resume");
  }

  // Ends the run now: its Workers are terminated (a run on the page stops at its next iteration).
  stop() {
    if (["done", "stopped", "error"].includes(this.snap.state)) return;
    if (this.control) {
      this.control.receive({ op: "resume" });
      this.control.gate = () => new Promise(() => {}); // never passes again: the run on the page ends there
    }
    this.release();
    this.receive({ type: "stopped" });
  }

  release() {
    if (this.worker) this.worker.terminate();
    this.worker = null;
  }

  // A copy of the run's progress, job.py's snapshot's keys (plus eval, where, workers, simd).
  snapshot() {
    const s = this.snap;
    return { ...s, history: [...s.history], pass_at_1: [...s.pass_at_1], groups: [...s.groups] };
  }
}

export function startTinyLM(settings, options = {}) {
  return new TinyLMRun(settings, options).start();
}
