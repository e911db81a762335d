// GRPO Playground player, part 2 of 2: plays a run in the page (the renderer's charts, assets/js/doc.js and
// live.js).
//
// Every series arrives once; each frame reveals them up to iteration t and redraws the charts with Plotly.react.
// Play, Pause, Step, Reset, speed and the timeline never talk to the server. load() again with new data (a setting
// changed) keeps the player's t, and keeps it playing.

import { ChartView, decode, el, fillIn, loadPlotly } from "./player_charts.js";

window.grpoPlayers = window.grpoPlayers || {}; // key -> counters, read by the browser tests
const SPEEDS = [1, 2, 5, 10, 16, 20, 30, 45, 60, 120]; // iterations per second
const DISPLAY_FPS = 60; // up to this speed every iteration is drawn
const MIN_CHART_PX = 300; // a chart is never narrower: fewer columns first (a phone: one chart per row)
const NARROW_GRID_PX = 500; // a grid this narrow is a phone's: its charts are at most PHONE_CHART_PX high
const PHONE_CHART_PX = 250;
// Plotly's toolbar is left out everywhere: it covered the colour bar's title and the labels at a chart's top edge.
// Drag still zooms and a double click zooms back out, as Plotly does without it.
const PLOT_CONFIG = { displaylogo: false, displayModeBar: false, responsive: false };
const SVG = "http://www.w3.org/2000/svg";
const DASHES = { dash: "7,4", dot: "2,3", dashdot: "7,3,2,3", longdash: "11,4", longdashdot: "11,3,2,3" };
let ids = 0; // ids that tie each chart to its title and caption (aria-labelledby, aria-describedby)

const ownsSpace = (target) => target.tagName === "BUTTON" || target.tagName === "SELECT";

// Class mode (assets/js/class_mode.js, the app's classes) follows the lecturer's players: it hears of each player's
// data (loaded), of each move a person makes (Play, Pause, Step, Back, Reset, the timeline, the speed: moved) and of
// its end (gone), and moves a student's player with follow(), which tells nobody.
let watcher = null;
export function watchPlayers(w) {
  watcher = w;
}

// ---- the player: bar, charts, clock ----
export class Player {
  constructor(parent) {
    this.parent = parent;
    this.t = 0; // iteration the player is at
    this.shown = -1; // iteration on screen (-1: nothing drawn yet)
    this.playing = false;
    this.busy = false; // a draw is in flight
    this.dirty = false; // new data: redraw even if t is unchanged
    this.raf = 0;
    this.acc = 0; // iterations owed by the clock
    this.lastNow = null;
    this.views = [];
    this.root = el("div", "gp-root");
    this.root.tabIndex = -1;
    this.buildBar();
    this.msg = el("div", "gp-msg");
    this.grid = el("div", "gp-charts");
    // the caption a host shows below the row (data.row_caption): the description of its charts without their own
    this.rowCaption = el("div", "gp-row-caption");
    this.rowCaption.id = `gp-row-caption-${++ids}`;
    this.rowCaption.hidden = true;
    this.root.append(this.bar, this.msg, this.grid, this.rowCaption);
    parent.appendChild(this.root);
    this.onKey = this.onKey.bind(this);
    this.root.addEventListener("keydown", this.onKey);
    // the grid's width changes with the window and with Streamlit's sidebar: resize the charts to it
    this.resizer = new ResizeObserver(() => {
      this.layoutColumns();
      // only a displayed plot (Plotly refuses the others); a hidden one is resized when its grid shows again
      for (const slot of this.slots || []) {
        if (slot.mounted && this.Plotly && slot.plot.offsetParent !== null) this.Plotly.Plots.resize(slot.plot);
      }
    });
    this.resizer.observe(this.grid);
    this.root.addEventListener("keyup", (e) => {
      if (e.key === " " && !ownsSpace(e.target)) e.preventDefault(); // no second toggle via click
    });
  }

  buildBar() {
    this.bar = el("div", "gp-bar");
    this.bar.setAttribute("role", "toolbar");
    this.bar.setAttribute("aria-label", "player");
    const button = (text, title, fn, cls = "") => {
      const b = el("button", `gp-btn ${cls}`, text);
      b.type = "button";
      b.title = title;
      b.addEventListener("click", fn);
      return b;
    };
    this.playBtn = button("▶ Play", "Play / Pause (space)", () => (this.playing ? this.pause() : this.play()), "gp-primary");
    this.backBtn = button("◀ Back", "One iteration back (left arrow)", () => this.step(-1));
    this.stepBtn = button("Step ▶", "One iteration forward (right arrow)", () => this.step(1));
    this.resetBtn = button("⟲ Reset", "Back to iteration 0", () => this.reset());
    this.speedSel = el("select", "gp-speed");
    this.speedSel.setAttribute("aria-label", "speed in iterations per second");
    this.speedSel.addEventListener("change", () => {
      this.speed = Number(this.speedSel.value);
      this.moved();
    });
    const speedLabel = el("label", "gp-speed-label", "speed ");
    speedLabel.appendChild(this.speedSel);
    this.timeline = el("input", "gp-timeline");
    this.timeline.type = "range";
    this.timeline.min = "0";
    this.timeline.step = "1";
    this.timeline.setAttribute("aria-label", "iteration");
    this.timeline.addEventListener("input", () => this.seek(Number(this.timeline.value)));
    this.label = el("span", "gp-label");
    this.label.setAttribute("aria-atomic", "true"); // a live region while paused (updateBar): Step reads it out
    this.bar.append(this.playBtn, this.backBtn, this.stepBtn, this.resetBtn, speedLabel, this.timeline, this.label);
  }

  // -- data --
  async load(data) {
    const arrived = performance.now();
    this.data = data;
    let Plotly;
    try {
      Plotly = await loadPlotly(data.plotly_url);
    } catch (err) {
      this.msg.textContent = `${err.message}. ${data.plotly_help || "Check that the server has static file serving on."}`;
      return;
    }
    if (this.data !== data || this.destroyed) return; // newer data arrived meanwhile
    this.Plotly = Plotly;
    this.msg.textContent = "";
    this.stats = window.grpoPlayers[data.key] || this.newStats();
    window.grpoPlayers[data.key] = this.stats;
    this.stats.dataArrivedAt = arrived;
    this.stats.meta = data.meta;
    this.apply(data);
  }

  newStats() {
    // redrawn: charts drawn in full (mounted, or new data, a legend click, a new plot area)
    return { draws: 0, drawn: [], dataArrivedAt: 0, dataDrawnAt: 0, loads: 0, newPlots: 0, redrawn: 0 };
  }

  style(classroom) {
    const css = getComputedStyle(this.parent);
    const v = (name, dflt) => css.getPropertyValue(name).trim() || dflt;
    const big = classroom;
    return {
      text: v("--st-text-color", "#31333f"), background: v("--st-background-color", "#ffffff"),
      font: v("--st-font", "sans-serif"),
      tick: big ? 20 : 13, axisTitle: big ? 22 : 14, // presenter mode: nothing a hall reads under 20 px
    }; // prettier-ignore
  }

  apply(data) {
    let arrays = null; // decoded for the charts drawn anew only
    const style = this.style(data.classroom);
    // a phone's charts are at most PHONE_CHART_PX high, so that the first one fits its first screen
    style.maxHeight = (this.grid.clientWidth || window.innerWidth) < NARROW_GRID_PX ? PHONE_CHART_PX : Infinity;
    const T = data.T;
    const shape = JSON.stringify(data.charts.map((c) => c.span)); // other changes are Plotly.react's job
    this.root.classList.toggle("gp-classroom", !!data.classroom);
    this.bar.hidden = data.bar === false; // charts that do not change with t need no Play
    if (shape !== this.shape) {
      this.buildCharts(data.charts.length);
      this.columns = null; // the new slots need their columns
    }
    this.shape = shape;
    // A chart whose spec and arrays are those it already draws keeps its view and is not drawn again: a control
    // that changes one chart of a page redraws that chart only (a Plotly.react of every chart cost ~10 ms each).
    const styleKey = JSON.stringify(style);
    this.views = data.charts.map((spec, i) => {
      const slot = this.slots[i];
      const key = chartKey(spec, data.arrays);
      const specKey = JSON.stringify([key.spec, T, styleKey]);
      const refs = key.refs;
      if (slot.view && slot.specKey === specKey && sameArrays(slot.refs, refs)) return slot.view;
      arrays = arrays || data.arrays.map(decode);
      const v = new ChartView(spec, arrays, T, style);
      Object.assign(slot, { specKey, refs, fresh: true, view: v });
      v.hidden = slot.hidden; // names switched off in the legend stay off for the new data
      this.drawLegend(slot, v);
      return v;
    });
    this.layoutColumns();
    this.rowCaption.textContent = data.row_caption || "";
    this.views.forEach((v, i) => {
      const slot = this.slots[i];
      slot.caption.textContent = v.spec.caption;
      slot.caption.hidden = !v.spec.caption;
      // how its caption's numbers were read off its data, and the ones it gives (chart_spec.js read): the browser
      // tests read them again off what the chart draws
      slot.box.dataset.reads = JSON.stringify(v.spec.reads || []);
      slot.box.dataset.given = JSON.stringify(v.spec.given || []);
      // described by its caption, the chart's text equivalent: its own, else the row's (none: no description)
      const described = v.spec.caption ? slot.caption.id : data.row_caption ? this.rowCaption.id : null;
      if (described) slot.box.setAttribute("aria-describedby", described);
      else slot.box.removeAttribute("aria-describedby");
    });
    this.T = T;
    this.t = Math.min(this.t, T);
    if (this.t >= T) this.playing = false;
    this.timeline.max = String(T);
    this.setSpeedOptions(this.speed ?? data.speed);
    this.stats.loads += 1;
    this.dirty = true;
    this.updateBar();
    this.schedule();
    if (watcher) watcher.loaded(this);
  }

  buildCharts(n) {
    for (const s of this.slots || []) this.Plotly.purge(s.plot);
    this.grid.replaceChildren();
    this.slots = Array.from({ length: n }, () => {
      const box = el("div", "gp-chart");
      const title = el("div", "gp-title");
      const legend = el("div", "gp-legend");
      legend.setAttribute("role", "group");
      const plot = el("div", "gp-plot");
      // each chart a figure named by its title, its caption the text equivalent of what it draws
      const n = ++ids;
      title.id = `gp-title-${n}`;
      box.setAttribute("role", "figure");
      box.setAttribute("aria-labelledby", title.id);
      const cover = el("div", "gp-cover");
      cover.hidden = true;
      const plotBox = el("div", "gp-plotbox");
      plotBox.append(plot, cover);
      const caption = el("div", "gp-caption");
      caption.id = `gp-caption-${n}`; // aria-describedby: set in apply() while the chart has a caption
      box.append(title, legend, plotBox, caption);
      this.grid.appendChild(box);
      return { box, title, legend, plot, cover, caption, mounted: false, hidden: new Set(), size: "" };
    });
  }

  // As many of the data's columns as fit charts of MIN_CHART_PX in the grid's width (one on a phone)
  layoutColumns() {
    if (!this.data || !this.views.length) return;
    const width = this.grid.clientWidth || this.parent.clientWidth || 0;
    const fit = width ? Math.max(1, Math.floor((width + 24) / (MIN_CHART_PX + 24))) : this.data.columns;
    const columns = Math.max(1, Math.min(this.data.columns, fit));
    if (columns === this.columns) return;
    this.columns = columns;
    this.grid.style.gridTemplateColumns = `repeat(${columns}, minmax(0, 1fr))`;
    this.views.forEach((v, i) => (this.slots[i].box.style.gridColumn = `span ${Math.min(v.spec.span, columns)}`));
  }

  setSpeedOptions(speed) {
    const speeds = [...new Set([...SPEEDS, speed])].sort((a, b) => a - b);
    this.speedSel.replaceChildren(...speeds.map((s) => el("option", "", `${s} it/s`)));
    [...this.speedSel.options].forEach((o, i) => (o.value = String(speeds[i])));
    this.speedSel.value = String(speed);
    this.speed = speed;
  }

  // -- controls (none of them talks to the server) --
  play() {
    if (this.t >= this.T) this.t = 0;
    this.playing = true;
    this.acc = 0;
    this.lastNow = null;
    this.updateBar();
    this.schedule();
    this.moved();
  }

  pause() {
    this.playing = false;
    this.t = Math.max(this.shown, 0); // stop on the frame on screen, not on one still being drawn
    this.updateBar();
    this.schedule();
    this.moved();
  }

  step(d) {
    const from = this.playing ? Math.max(this.shown, 0) : this.t; // paused: t may be ahead of the screen by a frame
    this.playing = false;
    this.t = Math.min(Math.max(from + d, 0), this.T);
    this.updateBar();
    this.schedule();
    this.moved();
  }

  reset() {
    this.playing = false;
    this.t = 0;
    this.updateBar();
    this.schedule();
    this.moved();
  }

  seek(t) {
    this.playing = false;
    this.t = Math.min(Math.max(t, 0), this.T);
    this.updateBar();
    this.schedule();
    this.moved();
  }

  moved() {
    if (watcher) watcher.moved(this);
  }

  // Class mode: the lecturer's iteration, playing or not, at the lecturer's speed (tells nobody: not a move)
  follow({ t, playing, speed }) {
    if (speed && speed !== this.speed) this.setSpeedOptions(speed);
    this.t = Math.min(Math.max(t, 0), this.T ?? t);
    this.playing = !!playing && this.t < (this.T ?? Infinity);
    this.acc = 0;
    this.lastNow = null;
    this.updateBar();
    this.schedule();
  }

  // Space plays or pauses, the arrows step, wherever focus is in the player, except on a control that owns the key:
  // a button's Space is its own click (Step, Back, Reset), the timeline's arrows move it, the speed list's its own.
  onKey(e) {
    const onTimeline = e.target === this.timeline;
    if (e.key === " " && !ownsSpace(e.target)) {
      e.preventDefault();
      this.playing ? this.pause() : this.play();
    } else if ((e.key === "ArrowRight" || e.key === "ArrowLeft") && !onTimeline && e.target.tagName !== "SELECT") {
      e.preventDefault();
      this.step(e.key === "ArrowRight" ? 1 : -1);
    }
  }

  updateBar() {
    this.playBtn.textContent = this.playing ? "❚❚ Pause" : "▶ Play";
    this.playBtn.setAttribute("aria-label", this.playing ? "Pause" : "Play");
    this.label.setAttribute("aria-live", this.playing ? "off" : "polite"); // not one announcement per frame
    this.root.dataset.playing = this.playing ? "1" : "0";
  }

  // -- the clock: one draw per animation frame at most, never two at once --
  schedule() {
    if (!this.raf && !this.destroyed) this.raf = requestAnimationFrame((now) => this.frame(now));
  }

  frame(now) {
    this.raf = 0;
    if (!this.Plotly || !this.views.length) return;
    if (this.busy) return this.schedule();
    if (this.playing) {
      const dt = this.lastNow === null ? 0 : now - this.lastNow;
      this.lastNow = now;
      this.acc += (dt * this.speed) / 1000;
      // At most ceil(speed / 60) iterations per frame: every iteration is drawn unless the speed
      // asked for is above the display's frame rate. A slow machine plays slower, skipping none.
      const steps = Math.min(Math.floor(this.acc), Math.max(1, Math.ceil(this.speed / DISPLAY_FPS)));
      if (steps > 0) {
        this.acc = Math.min(this.acc - steps, 1);
        this.t = Math.min(this.t + steps, this.T);
      }
      if (this.t >= this.T) {
        this.playing = false;
        this.updateBar();
      }
    }
    if (this.t !== this.shown || this.dirty) this.draw(this.t);
    if (this.playing) this.schedule();
  }

  draw(t) {
    const newData = this.dirty;
    this.busy = true;
    this.dirty = false;
    this.shown = t;
    this.timeline.value = String(t);
    this.timeline.setAttribute("aria-valuetext", `iteration ${t} of ${this.T}`);
    this.label.textContent = fillIn(this.data.label, t, this.T);
    let done;
    try {
      done = this.drawCharts(t, newData);
    } catch (err) {
      done = [Promise.reject(err)];
    }
    Promise.all(done)
      .then(() => {
        const s = this.stats;
        s.draws += 1;
        if (s.drawn.length < 5000) s.drawn.push(t);
        if (newData) s.dataDrawnAt = performance.now();
      })
      .catch((err) => {
        this.msg.textContent = `Drawing failed: ${err?.message || err}`;
        console.error("player: drawing failed", err);
      })
      .finally(() => {
        this.busy = false;
        if (this.t !== this.shown || this.dirty) this.schedule(); // paused meanwhile on another frame
      });
  }

  // The legend above a chart: a button per name (a click switches its traces off and on, as Plotly's legend did),
  // each with a swatch drawn as the chart draws the trace
  drawLegend(slot, v) {
    const items = v.legendItems();
    slot.legend.hidden = !items.length;
    slot.legend.setAttribute("aria-label", "legend: click a name to hide or show it");
    slot.legend.replaceChildren(...items.map(({ name, swatch }) => {
      const b = el("button", "gp-legend-item");
      b.type = "button";
      b.setAttribute("aria-pressed", slot.hidden.has(name) ? "false" : "true");
      b.append(swatchSvg(swatch), el("span", "gp-legend-name", name));
      b.addEventListener("click", () => {
        if (slot.hidden.has(name)) slot.hidden.delete(name);
        else slot.hidden.add(name);
        b.setAttribute("aria-pressed", slot.hidden.has(name) ? "false" : "true");
        slot.fresh = true;
        this.dirty = true;
        this.schedule();
      });
      return b;
    })); // prettier-ignore
  }

  // Start redrawing the charts at t; returns their promises. A frame of the same data takes Plotly's animation
  // path (traces only); a chart's new data, a legend click or a plot area that moved (a resize) is drawn in full,
  // so that the traces are always laid out on the axes drawn beside them. A chart whose data did not change and
  // that is on screen at t already is left as it is.
  drawCharts(t, newData) {
    return this.views.map((v, i) => {
      const slot = this.slots[i];
      const fresh = newData && slot.fresh;
      const at = slot.t;
      slot.fresh = false;
      slot.t = t;
      slot.view = v;
      slot.title.textContent = fillIn(v.spec.title, t, this.T);
      slot.cover.hidden = !v.heat;
      if (!slot.mounted) {
        slot.mounted = true;
        this.stats.newPlots += 1;
        this.stats.redrawn += 1;
        return this.Plotly.newPlot(slot.plot, v.traces(t), v.layoutFull, PLOT_CONFIG).then(() => {
          // after zoom, pan, resize or new data, put the cover back where the axis now puts t
          slot.plot.on("plotly_afterplot", () => slot.view.cover(slot.plot, slot.cover, this.shown));
          slot.plot.on("plotly_relayout", () => slot.view.cover(slot.plot, slot.cover, this.shown));
          slot.size = plotArea(slot.plot);
          v.cover(slot.plot, slot.cover, t);
        });
      }
      const moved = plotArea(slot.plot) !== slot.size;
      let redraw = null;
      if (fresh || moved) {
        this.stats.redrawn += 1;
        redraw = this.Plotly.react(slot.plot, v.traces(t), v.layoutFull).then(() => (slot.size = plotArea(slot.plot)));
      } else if (!v.staticFrames && at !== t) redraw = this.Plotly.react(slot.plot, v.traces(t), v.layoutBase);
      v.cover(slot.plot, slot.cover, t);
      return redraw;
    });
  }

  destroy() {
    this.destroyed = true;
    if (watcher) watcher.gone(this);
    this.resizer.disconnect();
    cancelAnimationFrame(this.raf);
    if (this.Plotly) for (const s of this.slots || []) this.Plotly.purge(s.plot);
    this.root.remove();
  }
}

// Which fields of a trace name one of the payload's arrays, by its index (chart_spec.js traceSpec); a line's
// width is its width in pixels, a bar series' an array
const REFS = { line: ["y", "x"], band: ["lo", "hi", "x"], barseries: ["y", "width"], bars: ["y", "categories"],
  heatmap: ["z", "x", "y"] }; // prettier-ignore
const refKeys = (tr) => (REFS[tr.kind] || []).filter((k) => typeof tr[k] === "number");

// A chart's spec and the arrays it draws: the spec without the arrays' indices, which move when a chart before it
// in the payload gains or loses a line
function chartKey(spec, arrays) {
  const traces = spec.traces.map((tr) => ({ ...tr, ...Object.fromEntries(refKeys(tr).map((k) => [k, "#"])) }));
  return { spec: JSON.stringify({ ...spec, traces }), refs: spec.traces.flatMap((tr) => refKeys(tr).map((k) => arrays[tr[k]])) };
}

// Whether two lists of payload arrays hold the same values: base64 as sent by sim, else their bytes (NaN as NaN)
function sameArrays(a, b) {
  return !!a && a.length === b.length && a.every((x, i) => sameArray(x, b[i]));
}
function sameArray(a, b) {
  if (a === b) return true;
  if (!a || !b || String(a.shape) !== String(b.shape) || a.dtype !== b.dtype) return false;
  if (a.b64 !== undefined || b.b64 !== undefined) return a.b64 === b.b64;
  const [x, y] = [a.v, b.v];
  if (x.length !== y.length) return false;
  if (!ArrayBuffer.isView(x) || !ArrayBuffer.isView(y) || x.constructor !== y.constructor) {
    return Array.prototype.every.call(x, (e, i) => Object.is(e, y[i]));
  }
  const [p, q] = [new Uint8Array(x.buffer, x.byteOffset, x.byteLength), new Uint8Array(y.buffer, y.byteOffset, y.byteLength)];
  for (let i = 0; i < p.length; i++) if (p[i] !== q[i]) return false;
  return true;
}

// Where Plotly put the plot area (its margins and size): the geometry every trace and axis is drawn in
function plotArea(plot) {
  const s = plot._fullLayout && plot._fullLayout._size;
  return s ? `${s.l},${s.t},${s.w},${s.h}` : "";
}

// A legend entry's swatch: a short line (dashed as the trace, with its marker), a filled area or a bar
function swatchSvg({ kind, color, dash, width, marker, hatch, opacity }) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("class", "gp-swatch");
  svg.setAttribute("viewBox", "0 0 30 14");
  svg.setAttribute("aria-hidden", "true");
  const add = (tag, attrs) => {
    const n = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, String(v));
    svg.append(n);
    return n;
  };
  const c = color || "#1f77b4";
  if (kind === "line") {
    if (width > 0) add("line", { x1: 1, y1: 7, x2: 29, y2: 7, stroke: c, "stroke-width": Math.min(width, 4),
      "stroke-dasharray": DASHES[dash] || "none" }); // prettier-ignore
    if (marker) add("circle", { cx: 15, cy: 7, r: 4, fill: c });
  } else if (kind === "area") {
    add("rect", { x: 1, y: 2, width: 28, height: 10, fill: c, "fill-opacity": 0.6 });
  } else {
    add("rect", { x: 4, y: 1, width: 22, height: 12, fill: hatch ? "none" : c, stroke: c, "stroke-width": hatch ? 1.5 : 0,
      "fill-opacity": opacity ?? 1 }); // prettier-ignore
    if (hatch) for (const x of [4, 11, 18]) add("line", { x1: x, y1: 13, x2: x + 8, y2: 1, stroke: c, "stroke-width": 1.5 });
  }
  return svg;
}
