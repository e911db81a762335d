// GRPO Playground player (see ui/player.py): plays a precomputed run in the browser.
//
// The server sends every series once; each frame reveals them up to iteration t and redraws the
// charts with Plotly.react. Play, Pause, Step, Reset, speed and the timeline never talk to the
// server. Streamlit calls the default export again whenever new data arrives (a setting changed);
// the Player attached to that element keeps its t and keeps playing.
//
// Cheap frames: layouts carry `transition: {duration: 0}`, so Plotly.react redraws only the traces
// (its animation path) instead of re-laying out the whole chart; bars are one trace per category
// (a changing colour array would force a full redraw); a heatmap is drawn once, in full, and its
// future columns are hidden under a plain <div> that moves with t (it also blocks hover there), so a
// heatmap-only chart costs no Plotly call per frame.

const PLAYERS = new WeakMap(); // Streamlit's element -> Player
window.grpoPlayers = window.grpoPlayers || {}; // key -> counters, read by the browser tests
const SPEEDS = [1, 2, 5, 10, 16, 20, 30, 45, 60, 120]; // iterations per second
const DISPLAY_FPS = 60; // up to this speed every iteration is drawn

export default function (component) {
  const { data, parentElement, setStateValue } = component;
  let player = PLAYERS.get(parentElement);
  if (!player) {
    player = new Player(parentElement, setStateValue);
    PLAYERS.set(parentElement, player);
  }
  player.load(data);
  return () => {
    player.destroy();
    PLAYERS.delete(parentElement);
  };
}

// ---- Plotly.js: one <script> per page, from the app's own server ----
let plotlyLoading = null;
function loadPlotly(url) {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!plotlyLoading) {
    plotlyLoading = new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = url;
      s.onload = () => resolve(cacheArrayAttributes(window.Plotly));
      s.onerror = () => {
        plotlyLoading = null;
        s.remove();
        reject(new Error(`Plotly.js could not be loaded from ${url}`));
      };
      document.head.appendChild(s);
    });
  }
  return plotlyLoading;
}

// On every Plotly.react, Plotly (4.1.1) finds which attributes of each trace hold arrays by crawling
// the trace type's whole attribute schema: about 1 ms per trace here, a third of a frame. The answer
// depends only on the trace type and on which of the trace's input attributes are arrays, so cache it
// by exactly that. (Only this page's window.Plotly is patched; Streamlit's own charts bundle theirs.)
// The browser tests check the cached answer equals Plotly's own for every trace drawn.
function cacheArrayAttributes(Plotly) {
  const schema = Plotly && Plotly.PlotSchema;
  if (!schema || typeof schema.findArrayAttributes !== "function" || schema.findArrayAttributes.original) {
    return Plotly;
  }
  const original = schema.findArrayAttributes;
  const cache = new Map();
  const arrayPaths = (obj, prefix, out) => {
    for (const [k, v] of Object.entries(obj)) {
      if (Array.isArray(v) || ArrayBuffer.isView(v)) out.push(prefix + k);
      else if (v && typeof v === "object") arrayPaths(v, `${prefix + k}.`, out);
    }
    return out;
  };
  const cached = (trace) => {
    if (!trace || !trace._input || typeof trace.type !== "string") return original(trace);
    const key = `${trace.type}|${arrayPaths(trace._input, "", []).join(",")}`;
    let attrs = cache.get(key);
    if (attrs === undefined) {
      attrs = original(trace);
      if (cache.size < 200) cache.set(key, attrs);
    }
    return attrs.slice();
  };
  cached.original = original;
  schema.findArrayAttributes = cached;
  return Plotly;
}

function decode({ dtype, shape, b64 }) {
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return { v: dtype === "f4" ? new Float32Array(bytes.buffer) : bytes, shape };
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text; // plain text, never parsed as HTML
  return e;
}

const fillIn = (s, t, T) => s.replaceAll("{t}", String(t)).replaceAll("{T}", String(T));
const iota = (n, start = 0) => Float32Array.from({ length: n }, (_, i) => i + start);
// a fixed range, or autorange; never `range: null` (Plotly.react then fails on uirevision bookkeeping)
const range = (r) => (r ? { range: r, autorange: false } : { autorange: true });
const upto = (t, x0, n) => Math.max(0, Math.min(n, t - x0 + 1)); // points with iteration x0 + i <= t

// ---- one chart: its Plotly traces and layout as functions of t ----
class ChartView {
  constructor(spec, arrays, T, style) {
    this.spec = spec;
    this.T = T;
    this.parts = spec.traces.map((tr) => ({ ...tr, ...this.prepare(tr, arrays) }));
    this.heat = this.parts.find((p) => p.kind === "heatmap");
    this.layoutBase = this.makeLayout(style);
    this.maskColor = style.background;
  }

  prepare(tr, arrays) {
    if (tr.kind === "line") {
      const y = arrays[tr.y].v;
      return { yv: y, xv: iota(y.length, tr.x0) };
    }
    if (tr.kind === "band") {
      const lo = arrays[tr.lo].v;
      return { lov: lo, hiv: arrays[tr.hi].v, xv: iota(lo.length, tr.x0) };
    }
    if (tr.kind === "bars") {
      const P = arrays[tr.y].shape[1];
      return { P, yv: arrays[tr.y].v, cat: tr.categories === undefined ? null : arrays[tr.categories].v };
    }
    // heatmap: (n, P) row-major -> Plotly z: P rows of n columns, drawn once in full
    const { v, shape } = arrays[tr.z];
    const [n, P] = shape;
    const z = Array.from({ length: P }, (_, j) => Float32Array.from({ length: n }, (_, i) => v[i * P + j]));
    return { z, xv: iota(n, tr.x0) };
  }

  makeLayout(style) {
    const s = this.spec;
    const font = { size: style.tick, color: style.text, family: style.font };
    const axisTitle = { size: style.axisTitle };
    const hasBars = this.parts.some((p) => p.kind === "bars");
    const xr = s.x_range || (hasBars ? null : this.heat ? [-0.5, this.T + 0.5] : [0, this.T]);
    return {
      height: s.height,
      margin: { l: style.tick * 4 + 14, r: 16, t: 8, b: style.tick * 3 + 16 },
      font,
      paper_bgcolor: "rgba(0,0,0,0)",
      plot_bgcolor: style.background,
      showlegend: s.legend && !this.heat,
      legend: { orientation: "h", x: 0, y: 1.02, yanchor: "bottom", font: { size: style.legend } },
      hovermode: hasBars || this.heat ? "closest" : "x unified",
      xaxis: { title: { text: s.x_title, font: axisTitle }, zeroline: false, ...range(xr) },
      yaxis: { title: { text: s.y_title, font: axisTitle }, ...range(s.y_range) },
      barmode: "overlay",
      uirevision: "keep", // zoom and legend clicks survive every frame and new data
      transition: { duration: 0 }, // data-only updates take Plotly's animation path (traces only)
    };
  }

  traces(t) {
    const out = [];
    for (const p of this.parts) {
      if (p.kind === "line") {
        const n = p.reveal === "full" ? p.yv.length : upto(t, p.x0, p.yv.length);
        out.push({
          type: "scatter", mode: "lines", name: p.name, showlegend: p.showlegend,
          x: p.xv.subarray(0, n), y: p.yv.subarray(0, n),
          line: { color: p.color || undefined, width: p.width, dash: p.dash || "solid" },
          stackgroup: p.stackgroup || undefined, fill: p.fill || undefined,
        }); // prettier-ignore
      } else if (p.kind === "band") {
        // one closed polygon (hi forwards, lo backwards): one trace instead of two
        const n = upto(t, p.x0, p.lov.length);
        const x = new Float32Array(2 * n);
        const y = new Float32Array(2 * n);
        for (let i = 0; i < n; i++) {
          x[i] = x[2 * n - 1 - i] = p.xv[i];
          y[i] = p.hiv[i];
          y[2 * n - 1 - i] = p.lov[i];
        }
        out.push({ type: "scatter", mode: "lines", x, y, fill: "toself", fillcolor: p.color, line: { width: 0 },
          name: p.name, hoverinfo: "skip" }); // prettier-ignore
      } else if (p.kind === "bars") {
        const row = Math.min(t, p.yv.length / p.P - 1) * p.P;
        const y = p.yv.subarray(row, row + p.P);
        p.colors.forEach((color, c) => {
          // one trace per category: the others are gaps (NaN), so only y changes between frames
          const yc = p.cat ? y.map((v, j) => (p.cat[row + j] === c ? v : NaN)) : y;
          out.push({ type: "bar", x: p.x, y: yc, name: p.names[c] || "", marker: { color },
            showlegend: !!p.names[c], hovertemplate: `%{y:.3f}<extra>${p.names[c] || ""}</extra>` }); // prettier-ignore
        });
      } else {
        out.push({ type: "heatmap", x: p.xv, z: p.z, zmin: p.zmin, zmax: p.zmax, colorscale: p.colorscale,
          colorbar: { title: { text: p.colorbar_title } }, hovertemplate: "iteration %{x}<br>row %{y}<br>%{z:.3f}<extra></extra>" }); // prettier-ignore
      }
    }
    return out;
  }

  // Only a heatmap: nothing for Plotly to redraw when t moves (the cover does it).
  get staticFrames() {
    return this.parts.every((p) => p.kind === "heatmap");
  }

  // Move the cover over the heatmap's columns after t (pixels from Plotly's x axis; follows zoom).
  cover(plot, coverEl, t) {
    const full = plot._fullLayout;
    if (!this.heat || !full) return;
    const xa = full.xaxis;
    const size = full._size;
    const left = Math.min(Math.max(xa.l2p(t + 0.5), 0), size.w);
    coverEl.style.left = `${size.l + left}px`;
    coverEl.style.top = `${size.t}px`;
    coverEl.style.width = `${size.w - left}px`;
    coverEl.style.height = `${size.h}px`;
    coverEl.style.background = this.maskColor;
  }
}

// ---- the player: bar, charts, clock ----
class Player {
  constructor(parent, setStateValue) {
    this.parent = parent;
    this.setStateValue = setStateValue;
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
    this.root.append(this.bar, this.msg, this.grid);
    parent.appendChild(this.root);
    this.onKey = this.onKey.bind(this);
    this.root.addEventListener("keydown", this.onKey);
    // the grid's width changes with the window and with Streamlit's sidebar: resize the charts to it
    this.resizer = new ResizeObserver(() => {
      for (const slot of this.slots || []) if (slot.mounted && this.Plotly) this.Plotly.Plots.resize(slot.plot);
    });
    this.resizer.observe(this.grid);
    this.root.addEventListener("keyup", (e) => {
      if (e.key === " " && e.target.tagName !== "SELECT") e.preventDefault(); // no second toggle via click
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
    this.speedSel.addEventListener("change", () => (this.speed = Number(this.speedSel.value)));
    const speedLabel = el("label", "gp-speed-label", "speed ");
    speedLabel.appendChild(this.speedSel);
    this.timeline = el("input", "gp-timeline");
    this.timeline.type = "range";
    this.timeline.min = "0";
    this.timeline.step = "1";
    this.timeline.setAttribute("aria-label", "iteration");
    this.timeline.addEventListener("input", () => this.seek(Number(this.timeline.value)));
    this.timeline.addEventListener("change", () => this.report());
    this.label = el("span", "gp-label");
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
      this.msg.textContent = `${err.message}. Check that the server has static file serving on.`;
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
    return { draws: 0, drawn: [], drawMs: 0, dataArrivedAt: 0, dataDrawnAt: 0, loads: 0, newPlots: 0 };
  }

  style(classroom) {
    const css = getComputedStyle(this.parent);
    const v = (name, dflt) => css.getPropertyValue(name).trim() || dflt;
    const big = classroom;
    return {
      text: v("--st-text-color", "#31333f"), background: v("--st-background-color", "#ffffff"),
      font: v("--st-font", "sans-serif"),
      tick: big ? 18 : 13, legend: big ? 18 : 13, axisTitle: big ? 20 : 14,
    }; // prettier-ignore
  }

  apply(data) {
    const arrays = data.arrays.map(decode);
    const style = this.style(data.classroom);
    const T = data.T;
    const shape = JSON.stringify(data.charts.map((c) => c.span)); // other changes are Plotly.react's job
    this.root.classList.toggle("gp-classroom", !!data.classroom);
    this.grid.style.gridTemplateColumns = `repeat(${data.columns}, minmax(0, 1fr))`;
    if (shape !== this.shape) this.buildCharts(data.charts.length);
    this.shape = shape;
    this.views = data.charts.map((spec, i) => new ChartView(spec, arrays, T, style));
    this.views.forEach((v, i) => {
      const slot = this.slots[i];
      slot.box.style.gridColumn = `span ${v.spec.span}`;
      slot.caption.textContent = v.spec.caption;
      slot.caption.hidden = !v.spec.caption;
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
  }

  buildCharts(n) {
    for (const s of this.slots || []) this.Plotly.purge(s.plot);
    this.grid.replaceChildren();
    this.slots = Array.from({ length: n }, () => {
      const box = el("div", "gp-chart");
      const title = el("div", "gp-title");
      const plot = el("div", "gp-plot");
      const cover = el("div", "gp-cover");
      cover.hidden = true;
      const plotBox = el("div", "gp-plotbox");
      plotBox.append(plot, cover);
      const caption = el("div", "gp-caption");
      box.append(title, plotBox, caption);
      this.grid.appendChild(box);
      return { box, title, plot, cover, caption, mounted: false };
    });
  }

  setSpeedOptions(speed) {
    const speeds = [...new Set([...SPEEDS, speed])].sort((a, b) => a - b);
    this.speedSel.replaceChildren(...speeds.map((s) => el("option", "", `${s} it/s`)));
    [...this.speedSel.options].forEach((o, i) => (o.value = String(speeds[i])));
    this.speedSel.value = String(speed);
    this.speed = speed;
  }

  // -- controls (none of them talks to the server; report() does, and only when stopped) --
  play() {
    if (this.t >= this.T) this.t = 0;
    this.playing = true;
    this.acc = 0;
    this.lastNow = null;
    this.updateBar();
    this.schedule();
  }

  pause() {
    this.playing = false;
    this.t = Math.max(this.shown, 0); // stop on the frame on screen, not on one still being drawn
    this.updateBar();
    this.schedule();
    this.report();
  }

  step(d) {
    const from = this.playing ? Math.max(this.shown, 0) : this.t; // paused: t may be ahead of the screen by a frame
    this.playing = false;
    this.t = Math.min(Math.max(from + d, 0), this.T);
    this.updateBar();
    this.schedule();
    this.report();
  }

  reset() {
    this.playing = false;
    this.t = 0;
    this.updateBar();
    this.schedule();
    this.report();
  }

  seek(t) {
    this.playing = false;
    this.t = Math.min(Math.max(t, 0), this.T);
    this.updateBar();
    this.schedule();
  }

  report() {
    if (!this.data || !this.data.report) return;
    clearTimeout(this.reportTimer);
    this.reportTimer = setTimeout(() => {
      if (!this.playing && this.t !== this.reported) {
        this.reported = this.t;
        this.setStateValue("t", this.t);
      }
    }, 300);
  }

  onKey(e) {
    const onTimeline = e.target === this.timeline;
    if (e.key === " " && e.target.tagName !== "SELECT") {
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
    const started = performance.now();
    const newData = this.dirty;
    this.busy = true;
    this.dirty = false;
    this.shown = t;
    this.timeline.value = String(t);
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
        s.drawMs += performance.now() - started;
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

  // Start redrawing every chart at t; returns their promises.
  drawCharts(t, newData) {
    return this.views.map((v, i) => {
      const slot = this.slots[i];
      slot.view = v;
      slot.title.textContent = fillIn(v.spec.title, t, this.T);
      slot.cover.hidden = !v.heat;
      if (!slot.mounted) {
        slot.mounted = true;
        this.stats.newPlots += 1;
        const config = { displaylogo: false };
        return this.Plotly.newPlot(slot.plot, v.traces(t), v.layoutBase, config).then(() => {
          // after zoom, pan, resize or new data, put the cover back where the axis now puts t
          slot.plot.on("plotly_afterplot", () => slot.view.cover(slot.plot, slot.cover, this.shown));
          slot.plot.on("plotly_relayout", () => slot.view.cover(slot.plot, slot.cover, this.shown));
          v.cover(slot.plot, slot.cover, t);
        });
      }
      const redraw = newData || !v.staticFrames ? this.Plotly.react(slot.plot, v.traces(t), v.layoutBase) : null;
      v.cover(slot.plot, slot.cover, t);
      return redraw;
    });
  }

  destroy() {
    this.destroyed = true;
    this.resizer.disconnect();
    cancelAnimationFrame(this.raf);
    clearTimeout(this.reportTimer);
    if (this.Plotly) for (const s of this.slots || []) this.Plotly.purge(s.plot);
    this.root.remove();
  }
}
