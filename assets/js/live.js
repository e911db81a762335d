// A view computed in the page, for either host: the lesson (assets/js/doc.js) and the app's component
// (assets/js/app_view.js) hand a LiveView a request, and it runs the engine (assets/js/engine.js, through
// assets/js/view_runs.js) off the page's main thread, turns the runs into charts and words (assets/js/toy_views.js) and
// plays them (assets/js/player.js). The host only says what to compute.
//
//   const view = new LiveView(parentElement, {key: "training"});
//   view.show({view: "training", config: {...}, pinned: null, table: null, big: false, columns: 2, classroom: false,
//              predict: false, plotly_url: "plotly-cartesian-4.1.1.min.js"});
//
// The engine runs in a Web Worker built from the bundle's own module code (sim/player/bundle.py: a Blob, which
// Chromium allows from file:// too), so a long run never freezes the tab; only the newest request counts: one
// that arrives while another computes waits for it (or, after LONG_MS, stops it). Without a Worker (or outside
// a bundle) the same code runs on the page after the next paint. A refused setting shows the app's words,
// "These settings cannot run:", and the engine's message (sim's wording), as text.

import { buildPayload, nd } from "./chart_spec.js";
import { Player } from "./player.js";
import { cannotRun, el, loadPlotly } from "./player_charts.js";
import { PredictBox } from "./predict.js";
import * as V from "./toy_views.js";
import { buffers, viewRuns } from "./view_runs.js";

const LONG_MS = 400; // a computation older than this is stopped when a newer request arrives
const SAY_MS = 150; // a computation still running after this says so
export const COMPUTING = "Computing this setting…"; // what a page says while a setting computes (here or on a server)

// ---- where the engine runs ----
function workerSource(bundle) {
  const names = bundle.deps["view_runs.js"];
  const factories = names.map((n) => `${JSON.stringify(n)}: ${bundle.f[n].toString()}`).join(",\n");
  return `"use strict";
const __f = {${factories}};
const __m = {};
for (const n of ${JSON.stringify(names)}) __m[n] = __f[n](__m);
const { viewRuns, buffers } = __m["view_runs.js"];
onmessage = (e) => {
  const { id, request } = e.data;
  let out;
  const t0 = performance.now();
  try {
    out = viewRuns(request);
  } catch (err) {
    postMessage({ id, error: String((err && err.message) || err) });
    return;
  }
  postMessage({ id, out, ms: performance.now() - t0 }, [...buffers(out)]);
};`;
}

// The engine's computations, newest first: run(request) resolves with viewRuns(request), or rejects with the
// engine's message; a superseded request resolves with null.
export class Runner {
  constructor() {
    // eslint-disable-next-line no-undef
    this.bundle = typeof __m !== "undefined" ? __m.__bundle : null;
    this.worker = null;
    this.seq = 0;
    this.current = null; // {id, resolve, reject, started}
    this.next = null; // {request, resolve, reject}
    this.usesWorker = false;
  }

  startWorker() {
    if (this.worker || !this.bundle || typeof Worker === "undefined") return this.worker;
    try {
      const url = URL.createObjectURL(new Blob([workerSource(this.bundle)], { type: "text/javascript" }));
      this.worker = new Worker(url);
      URL.revokeObjectURL(url);
      this.worker.onmessage = (e) => this.done(e.data);
      this.worker.onerror = (e) => {
        e.preventDefault();
        this.stopWorker();
        this.bundle = null; // this page cannot run it: compute on the page from now on
        const c = this.current;
        this.current = null;
        if (c) this.launch(c.request, c.resolve, c.reject);
      };
      this.usesWorker = true;
    } catch (e) {
      this.worker = null;
      this.bundle = null;
    }
    return this.worker;
  }

  stopWorker() {
    if (this.worker) this.worker.terminate();
    this.worker = null;
    this.usesWorker = false;
  }

  run(request) {
    return new Promise((resolve, reject) => {
      if (!this.current) return this.launch(request, resolve, reject);
      if (this.next) this.next.resolve(null); // a newer one replaces it
      this.next = { request, resolve, reject };
      if (this.worker && performance.now() - this.current.started > LONG_MS) {
        // stop a long computation nobody wants any more: a fresh worker takes the newer request
        this.stopWorker();
        const old = this.current;
        this.current = null;
        old.resolve(null);
        this.pump();
      }
    });
  }

  launch(request, resolve, reject) {
    const id = ++this.seq;
    this.current = { id, request, resolve, reject, started: performance.now() };
    const worker = this.startWorker();
    if (worker) {
      worker.postMessage({ id, request });
      return;
    }
    // on the page: after the next paint, so the page can say it is computing first
    setTimeout(() => {
      if (!this.current || this.current.id !== id) return;
      try {
        const t0 = performance.now();
        const out = viewRuns(request);
        this.done({ id, out, ms: performance.now() - t0 });
      } catch (err) {
        this.done({ id, error: String((err && err.message) || err) });
      }
    }, 0);
  }

  done({ id, out, error, ms }) {
    const c = this.current;
    if (!c || c.id !== id) return;
    this.current = null;
    this.engineMs = ms;
    if (this.next) c.resolve(null); // superseded: its result is not shown
    else if (error !== undefined) c.reject(new Error(error));
    else c.resolve(out);
    this.pump();
  }

  pump() {
    if (this.current || !this.next) return;
    const { request, resolve, reject } = this.next;
    this.next = null;
    this.launch(request, resolve, reject);
  }
}

// What a view shows for its runs: {payload options, above, below, question}
export function viewOf(request, runs) {
  const { view, config } = request;
  if (view === "training") {
    const pinned = runs.pinned ? [request.pinned.label, runs.pinned] : null;
    const charts = V.training_charts(config, runs.run, runs.exp, { pinned, mine: runs.mine || null, big: !!request.big });
    return { T: config.iterations, charts, above: V.clip_note(config, runs.run, runs.ppo || null), below: "",
      question: V.hard_prompt_question(config, runs.run), metrics: V.training_metrics(config, runs.run) }; // prettier-ignore
  }
  if (view === "std") {
    const charts = V.std_charts(runs.runs);
    const [above, below] = V.std_words(runs.runs, config.lr, charts);
    return { T: runs.runs["with std"].accuracy.length - 1, charts, above, below, metrics: V.std_metrics(runs.runs) };
  }
  if (view === "sharpen") {
    const charts = V.sharpen_charts(config, runs.h);
    return { T: config.iterations, charts, above: "", below: V.sharpen_caption(config, runs.h, charts),
      metrics: V.sharpen_metrics(config, runs.h) }; // prettier-ignore
  }
  if (view === "your_prompts") {
    const charts = V.pool_charts(config, runs.run, runs.exp, request.reduction, request.pool_size, { big: !!request.big });
    return { T: config.iterations, charts, above: "", below: "", metrics: V.training_metrics(config, runs.run) };
  }
  // passk_toy: the expected run's p at iteration 0 and T (seed 0)
  const p = nd(runs.exp.p);
  const [T1, , P] = p.shape;
  const [p0, pT] = [p.v.slice(0, P), p.v.slice((T1 - 1) * P, T1 * P)];
  const [chart, below] = V.toy_curves(p0, pT, T1 - 1);
  return { T: T1 - 1, charts: [chart], above: "", below, bar: false, metrics: V.toy_metrics(p0, pT, T1 - 1) };
}

// One live view in a page: text above, a predict box, the player, text below.
export class LiveView {
  constructor(parent, { key = "live", onShown = null } = {}) {
    this.key = key;
    this.onShown = onShown;
    this.root = el("div", "gp-live");
    this.above = el("p", "gp-text");
    this.msg = el("div", "gp-status");
    this.msg.setAttribute("role", "status");
    this.error = el("div", "gp-error");
    this.error.setAttribute("role", "alert");
    this.error.hidden = true;
    this.predictBox = el("div");
    this.metricsBox = el("div", "ls-metrics gp-metrics"); // the run's key numbers, large (doc.css)
    this.playerBox = el("div", "gp-live-player");
    this.below = el("p", "gp-caption gp-below");
    this.root.append(this.above, this.msg, this.predictBox, this.error, this.metricsBox, this.playerBox, this.below);
    parent.appendChild(this.root);
    this.predict = new PredictBox(this.predictBox, () => this.reveal());
    this.runner = new Runner();
    this.player = null;
    this.stats = (window.grpoLive = window.grpoLive || {})[key] = { requests: 0, shown: 0, computeMs: [], engineMs: [], viewMs: [],
      errors: 0, lastError: null, worker: null, requestedAt: 0, shownAt: 0 }; // prettier-ignore
  }

  // Compute and show a request (see the top of this file). Returns a promise that settles when it is on screen
  // (or superseded, or refused).
  async show(request) {
    const asked = performance.now();
    const s = this.stats;
    s.requests += 1;
    s.requestedAt = asked;
    this.request = request;
    const say = setTimeout(() => this.request === request && (this.msg.textContent = COMPUTING), SAY_MS);
    // Plotly.js loads (and runs, ~0.5 s of the main thread) while the engine computes in its Worker; the player
    // finds it loaded, or loading (a failure is the player's to say)
    if (request.plotly_url && !window.Plotly) loadPlotly(request.plotly_url).catch(() => {});
    let runs;
    try {
      runs = await this.runner.run(request);
    } catch (err) {
      clearTimeout(say);
      if (this.request !== request) return;
      return this.refuse(err);
    }
    clearTimeout(say);
    if (runs === null || this.request !== request) return; // a newer request replaced this one
    const computed = performance.now();
    s.computeMs.push(computed - asked);
    s.engineMs.push(this.runner.engineMs);
    s.worker = this.runner.usesWorker;
    this.msg.textContent = "";
    let shown;
    try {
      shown = viewOf(request, runs);
    } catch (err) {
      return this.refuse(err);
    }
    this.error.hidden = true;
    this.root.classList.toggle("gp-classroom", !!request.classroom);
    this.above.textContent = shown.above;
    this.above.hidden = !shown.above;
    this.below.textContent = shown.below;
    this.below.hidden = !shown.below;
    this.metricsBox.replaceChildren(...(shown.metrics || []).map(([label, value]) => {
      const m = el("div", "ls-metric");
      m.append(el("div", "ls-metric-label", label), el("div", "ls-metric-value", value));
      return m;
    }));
    this.payload = buildPayload(this.key, { T: shown.T, charts: shown.charts, columns: request.columns ?? 2,
      classroom: !!request.classroom, plotly_url: request.plotly_url || "", bar: shown.bar ?? true,
      meta: { requestedAt: asked } }); // prettier-ignore
    if (request.plotly_help) this.payload.plotly_help = request.plotly_help;
    s.viewMs.push(performance.now() - computed);
    this.predict.ask(request.predict ? shown.question ?? request.question ?? null : null);
    this.draw();
    s.shown += 1;
    s.shownAt = performance.now();
    if (this.onShown) this.onShown(request, shown);
  }

  refuse(err) {
    this.stats.errors += 1;
    this.stats.lastError = err.message;
    this.msg.textContent = "";
    this.error.replaceChildren(...cannotRun(err.message));
    this.error.hidden = false;
    this.playerBox.hidden = this.metricsBox.hidden = true;
    this.above.hidden = this.below.hidden = true;
    this.predict.ask(null);
  }

  // the charts and their words wait for the guess in predict mode
  draw() {
    const open = this.predict.open;
    this.playerBox.hidden = !open;
    this.metricsBox.hidden = !open || !this.metricsBox.childElementCount; // they would give the answer away
    this.below.hidden = !open || !this.payload || !this.below.textContent;
    this.above.hidden = !open || !this.above.textContent; // Training's clip note says when the hardest prompt learns
    if (!open || !this.payload) return;
    if (!this.player) this.player = new Player(this.playerBox);
    this.player.load(this.payload);
  }

  reveal() {
    this.draw();
  }

  destroy() {
    this.predict.ask(null);
    this.runner.stopWorker();
    if (this.player) this.player.destroy();
    this.root.remove();
  }
}
