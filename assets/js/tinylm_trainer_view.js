// TinyLM's trainer on the page (doc.js's `trainer` block): Start, Pause, Resume and Stop, a line that says where the
// run is, and the run drawn live by the renderer (assets/js/tinylm_views.js live_blocks). The run trains in this
// browser (assets/js/tinylm_run.js, loaded from its own script the first time: the weights are 0.55 MB that no other
// page needs); in the app it may train on the server instead (ui/tinylm_api.py), where students who start the same
// settings share one run. Either way the page draws the same snapshots (sim/tinylm/job.py's keys).
//
//   const view = new TrainerView(parent, {trainer_url, api, classroom, app, plotly_url});
//   view.update(block);   // {settings, preset, presets, trl}: the settings Start will use, redrawn as they change

import { DocView } from "./doc.js";
import { cannotRun, el } from "./player_charts.js";
import { live_blocks, status_text } from "./tinylm_views.js";

const DRAW_MS = 250; // a live run is redrawn at most this often: the page stays free for the reader's clicks
const POLL_MS = 1000; // a server run's snapshot is asked for this often
const LIVE = ["queued", "starting", "sft", "grpo", "eval"];

let loading = null;
// The trainer's script (window.grpoTinyLM), loaded once: a classic script from the app's route or the lesson's folder
export function loadTrainer(url) {
  if (window.grpoTinyLM) return Promise.resolve(window.grpoTinyLM);
  if (!loading) {
    loading = new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = url;
      s.onload = () => (window.grpoTinyLM ? resolve(window.grpoTinyLM) : reject(new Error(`${url} did not load`)));
      s.onerror = () => {
        loading = null;
        s.remove();
        reject(new Error(`The trainer's code could not be loaded from ${url}`));
      };
      document.head.appendChild(s);
    });
  }
  return loading;
}

// A run on the app's server (ui/tinylm_api.py): the same controls as a run in the page, its snapshot polled
class ServerRun {
  constructor(api, settings, onMessage) {
    this.api = api;
    this.settings = settings;
    this.onMessage = onMessage;
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    this.viewer = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(""); // this page's name there
    this.snap = { state: "queued", iteration: 0, iterations: settings.iterations ?? 0, history: [], pass_at_1: [],
      groups: [], result: null, error: null, paused: false, viewers: 1, queue_position: 0, where: "server" }; // prettier-ignore
    this.timer = 0;
    this.ended = false;
  }

  async post(action, body = {}) {
    const r = await fetch(`${this.api}/${action}`, { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ viewer: this.viewer, ...body }) }); // prettier-ignore
    const out = await r.json().catch(() => ({ error: `the server answered ${r.status}` }));
    if (!r.ok || out.error) {
      throw Object.assign(new Error(out.error || `the server answered ${r.status}`), { settings: !!out.settings });
    }
    return out;
  }

  async start() {
    this.take(await this.post("start", { settings: this.settings }));
    this.poll();
    return this;
  }

  // the snapshot's new part: its history since what this page holds
  take(part) {
    const { history_from = 0, history = [], ...rest } = part;
    this.snap.history = [...this.snap.history.slice(0, history_from), ...history];
    Object.assign(this.snap, rest);
    this.onMessage({ type: "snapshot" }, this.snap);
  }

  poll() {
    clearTimeout(this.timer);
    if (this.ended || !LIVE.includes(this.snap.state)) return;
    this.timer = setTimeout(async () => {
      try {
        this.take(await this.post("snapshot", { since: this.snap.history.length }));
      } catch (err) {
        this.snap.state = "error";
        this.snap.error = err.message;
        this.onMessage({ type: "error" }, this.snap);
        return;
      }
      this.poll();
    }, POLL_MS);
  }

  pause() {
    this.post("pause", { on: true }).then((p) => this.take(p), () => {});
    return true;
  }

  resume() {
    this.post("pause", { on: false }).then((p) => this.take(p), () => {});
  }

  stop() {
    this.ended = true;
    clearTimeout(this.timer);
    this.post("leave").catch(() => {});
    this.snap.state = "stopped";
    this.onMessage({ type: "stopped" }, this.snap);
  }

  snapshot() {
    return this.snap;
  }
}

export class TrainerView {
  constructor(parent, o) {
    this.o = o;
    this.root = el("div", "tl-trainer");
    const bar = el("div", "gp-bar tl-bar");
    const button = (label, cls, fn) => {
      const b = el("button", `gp-btn ${cls}`, label);
      b.type = "button";
      b.addEventListener("click", fn);
      bar.append(b);
      return b;
    };
    this.startBtn = button("▶ Start", "gp-primary", () => this.start("page"));
    this.serverBtn = o.api ? button("Start on the server", "", () => this.start("server")) : null;
    this.pauseBtn = button("❚❚ Pause", "", () => this.run && this.run.pause() && this.draw(true));
    this.resumeBtn = button("Resume", "", () => this.run && (this.run.resume(), this.draw(true)));
    this.stopBtn = button("■ Stop", "", () => this.stop());
    this.status = el("p", "tl-status");
    this.status.setAttribute("role", "status");
    this.progress = el("progress", "tl-progress");
    this.progress.max = 1;
    this.progress.hidden = true;
    this.changed = el("p", "ls-caption tl-changed");
    this.changed.hidden = true;
    this.error = el("pre", "gp-error-text");
    this.error.hidden = true;
    const box = el("div");
    this.root.append(bar, this.status, this.progress, this.changed, this.error, box);
    parent.append(this.root);
    this.doc = new DocView(box, { classroom: o.classroom, app: o.app, plotly_url: o.plotly_url, plotly_help: o.plotly_help });
    this.run = null;
    this.snap = null;
    this.timer = 0;
    this.stats = (window.grpoTrainer = window.grpoTrainer || { draws: 0, states: [] }); // what the browser tests read
    if (o.trainer_url) setTimeout(() => loadTrainer(o.trainer_url).catch(() => {}), 0); // ready before Start
  }

  // A control of the page moved: redrawn at once with the run as last drawn, so that only what the control changed
  // (the TRL overlay's chart) is drawn anew; iterations that arrived since follow with the next live draw, at most
  // DRAW_MS later (its timer is left running). Drawing them here too made every live chart redraw on every click.
  update(block) {
    this.block = block;
    this.draw(true, this.drawn);
  }

  async start(where) {
    this.stop(true);
    const settings = { ...this.block.settings };
    this.runSettings = JSON.stringify(settings);
    this.stoppedIn = null;
    this.error.hidden = true;
    try {
      if (where === "server") {
        this.run = new ServerRun(this.o.api, settings, (msg, snap) => this.receive(snap));
        this.snap = this.run.snapshot();
        this.draw(true);
        await this.run.start();
      } else {
        const T = await loadTrainer(this.o.trainer_url);
        this.run = T.startTinyLM(settings, { onMessage: (msg, snap) => this.receive(snap) });
        this.snap = this.run.snapshot();
      }
    } catch (err) { // a setting sim refuses, no trainer, a server that says no: said, never thrown
      this.run = null;
      this.snap = null;
      if (err.settings) this.error.replaceChildren(...cannotRun(err.message));
      else this.error.textContent = `This run cannot start: ${err.message || err}`;
      this.error.hidden = false;
    }
    this.draw(true);
  }

  stop(quiet = false) {
    if (!this.run) return;
    const state = this.snap && this.snap.state;
    if (LIVE.includes(state)) {
      this.stoppedIn = state;
      this.run.stop();
    }
    if (quiet) this.run = null;
    else this.draw(true);
  }

  receive(snap) {
    this.snap = snap;
    this.draw(["done", "stopped", "error"].includes(snap.state)); // the end at once, the rest at most 4 times a second
  }

  draw(now = false, snap = this.snap) {
    if (!now) {
      if (!this.timer) this.timer = setTimeout(() => ((this.timer = 0), this.draw(true)), DRAW_MS);
      return;
    }
    if (snap === this.snap) {
      clearTimeout(this.timer);
      this.timer = 0;
    }
    // what this draw shows, kept as it is now (a run's snapshot grows in place as its messages arrive)
    this.drawn = snap && { ...snap, history: [...snap.history], pass_at_1: [...snap.pass_at_1], groups: [...snap.groups] };
    const live = !!snap && LIVE.includes(snap.state);
    const trains = live && ["grpo", "eval", "sft"].includes(snap.state);
    this.startBtn.disabled = live;
    if (this.serverBtn) this.serverBtn.disabled = live;
    this.pauseBtn.disabled = !trains || snap.paused || snap.can_pause === false;
    this.pauseBtn.title = snap && snap.can_pause === false ? "a run other students watch too never waits on one of them" : "";
    this.resumeBtn.disabled = !live || !snap.paused;
    this.stopBtn.disabled = !live;
    this.stopBtn.textContent = snap && snap.viewers > 1 ? "■ Leave" : "■ Stop";
    if (!snap) {
      this.status.textContent = "Press Start to train TinyLM with GRPO from the shipped SFT checkpoint.";
      this.progress.hidden = true;
      this.doc.show([]);
    } else {
      const shared = snap.viewers > 1 && live ? ` Shared with ${snap.viewers} viewers: everyone who started these ` +
        "settings on the server watches this run." : ""; // prettier-ignore
      this.status.textContent = status_text({ ...snap, stopped_in: this.stoppedIn }) + shared;
      this.error.textContent = snap.state === "error" ? snap.error || "" : this.error.textContent;
      this.error.hidden = !this.error.textContent;
      this.progress.hidden = !live;
      if (snap.state === "eval" && snap.eval) this.progress.value = snap.eval.done / snap.eval.total;
      else this.progress.value = snap.iterations ? snap.iteration / snap.iterations : 0;
      const { preset, presets, trl } = this.block;
      this.doc.show(live_blocks(snap, { preset, presets, trl }));
    }
    // the page's settings moved since Start: the run goes on with its own
    this.changed.hidden = !(snap && this.runSettings && this.runSettings !== JSON.stringify(this.block.settings));
    this.changed.textContent = "The settings on the page differ from this run's: press Start to train with them.";
    this.stats.draws += 1;
    if (snap && this.stats.states.at(-1) !== snap.state) this.stats.states.push(snap.state);
  }

  destroy() {
    this.stop(true);
    clearTimeout(this.timer);
    this.doc.destroy();
    this.root.remove();
  }
}
