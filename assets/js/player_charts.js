// GRPO Playground player, part 1 of 2 (player.js imports it; sim/player/bundle.py joins them for a page):
// loading Plotly.js, decoding the arrays, and ChartView, which turns one chart's spec (sim/player/spec.py, any x
// axis) into Plotly traces for iteration t. A chart over another axis than the iterations is the same at every t.
//
// Cheap frames: layouts carry `transition: {duration: 0}`, so Plotly.react redraws only the traces
// (its animation path) instead of re-laying out the whole chart; bars are one trace per category
// (a changing colour array would force a full redraw); a heatmap is drawn once, in full, and its
// future columns are hidden under a plain <div> that moves with t (it also blocks hover there), so a
// heatmap-only chart costs no Plotly call per frame.

// ---- Plotly.js: one <script> per page, from the app's own server ----
// A host may have started it before this code arrived (assets/js/view_component.js: <script data-grpo-plotly>): then
// its tag is awaited, not loaded twice.
let plotlyLoading = null;
export function loadPlotly(url) {
  if (window.Plotly) return Promise.resolve(cacheArrayAttributes(window.Plotly));
  if (!plotlyLoading) {
    plotlyLoading = new Promise((resolve, reject) => {
      const started = document.querySelector("script[data-grpo-plotly]:not([data-failed])");
      const s = started || document.createElement("script");
      s.addEventListener("load", () => resolve(cacheArrayAttributes(window.Plotly)));
      s.addEventListener("error", () => {
        plotlyLoading = null;
        s.remove();
        reject(new Error(`Plotly.js could not be loaded from ${url}`));
      });
      if (!started) {
        s.src = url;
        s.dataset.grpoPlotly = "1";
        document.head.appendChild(s);
      }
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

// An array of the payload: base64 from a server (sim/player/encode.py), or computed in the page ({v, shape}, a
// typed array: assets/js/chart_spec.js), used as it is.
export function decode(a) {
  if (a.v) return a;
  const { dtype, shape, b64 } = a;
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return { v: dtype === "f4" ? new Float32Array(bytes.buffer) : bytes, shape };
}

export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text; // plain text, never parsed as HTML
  return e;
}

/** What a page shows when sim refuses a setting: the one sentence, then the engine's own words as plain text. */
export function cannotRun(message) {
  return [el("strong", "", "These settings cannot run:"), el("pre", "gp-error-text", String(message))];
}

export const fillIn = (s, t, T) => s.replaceAll("{t}", String(t)).replaceAll("{T}", String(T));
const iota = (n, start = 0) => Float32Array.from({ length: n }, (_, i) => i + start);
// a fixed range, or autorange; never `range: null` (Plotly.react then fails on uirevision bookkeeping)
const range = (r) => (r ? { range: r, autorange: false } : { autorange: true });
const upto = (t, x0, n) => Math.max(0, Math.min(n, t - x0 + 1)); // points with iteration x0 + i <= t

// The range of a chart's data on one axis, a little padded, or null (none to read: categories, a heatmap, a log axis).
// An axis without a declared range gets this explicit range rather than Plotly's autorange: with uirevision kept,
// Plotly treats an autorange as the reader's and never widens it for new data (a live run's charts froze at their
// first draw's x range), while an explicit range follows the data and a reader's zoom still wins.
export function dataRange(parts, axis) {
  let lo = Infinity;
  let hi = -Infinity;
  const see = (a) => {
    if (!a) return;
    for (const v of a) if (Number.isFinite(v)) (lo = Math.min(lo, v)), (hi = Math.max(hi, v));
  };
  if (axis === "y" && parts.some((p) => p.stackgroup)) return null; // a stack's top is no one line's: Plotly's
  for (const p of parts) {
    if (p.kind === "line") see(axis === "x" ? p.xv : p.yv);
    else if (p.kind === "band") axis === "x" ? see(p.xv) : (see(p.lov), see(p.hiv));
    else if (axis === "y" && p.kind === "barseries") see(p.yv), see([0]);
    else if (axis === "y" && p.kind === "bars") see(p.yv), see([0]);
    else if (axis === "x" && (p.kind === "barseries" || p.kind === "bars")) return null;
    else if (p.kind === "heatmap") return null;
  }
  if (!(hi >= lo)) return null;
  const pad = hi > lo ? 0.04 * (hi - lo) : Math.max(Math.abs(hi) * 0.1, 0.5);
  return [lo - pad, hi + pad];
}

// ---- one chart: its Plotly traces and layout as functions of t ----
export class ChartView {
  constructor(spec, arrays, T, style) {
    this.spec = spec;
    this.T = T;
    this.parts = spec.traces.map((tr) => ({ ...tr, ...this.prepare(tr, arrays) }));
    this.heat = this.parts.find((p) => p.kind === "heatmap" && !p.axes); // a heatmap over iterations: covered after t
    this.layoutBase = this.makeLayout(style); // a frame of the same data: Plotly's animation path (traces only)
    const { transition, ...full } = this.layoutBase;
    this.layoutFull = full; // a first draw, new data or a new plot area: laid out in full
    this.maskColor = style.background;
    this.hidden = new Set(); // names switched off in the legend
  }

  prepare(tr, arrays) {
    if (tr.kind === "line") {
      const y = arrays[tr.y].v;
      return { yv: y, xv: tr.x === undefined ? iota(y.length, tr.x0) : arrays[tr.x].v };
    }
    if (tr.kind === "band") {
      const lo = arrays[tr.lo].v;
      return { lov: lo, hiv: arrays[tr.hi].v, xv: tr.x === undefined ? iota(lo.length, tr.x0) : arrays[tr.x].v,
        whole: tr.x !== undefined }; // prettier-ignore
    }
    if (tr.kind === "barseries") return { yv: arrays[tr.y].v, wv: tr.width === undefined ? null : arrays[tr.width].v };
    if (tr.kind === "heatmap" && tr.x !== undefined) {
      // z (n_x, n_y) row-major -> Plotly z: n_y rows of n_x columns, over x and y, drawn whole
      const { v, shape } = arrays[tr.z];
      const [nx, ny] = shape;
      const z = Array.from({ length: ny }, (_, j) => Float32Array.from({ length: nx }, (_, i) => v[i * ny + j]));
      return { z, xv: arrays[tr.x].v, yv: arrays[tr.y].v, axes: true };
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
    const hasBars = this.parts.some((p) => p.kind === "bars" || p.kind === "barseries");
    const heatmaps = this.parts.some((p) => p.kind === "heatmap");
    const labelled = this.parts.some((p) => p.kind === "line" && p.text);
    const overT = s.timeline !== false && !hasBars; // drawn over the run's iterations: 0..T
    const xr = s.x_range || (overT ? (this.heat ? [-0.5, this.T + 0.5] : [0, this.T]) : s.x_log ? null : dataRange(this.parts, "x"));
    const yr = s.y_range || (s.y_log ? null : dataRange(this.parts, "y"));
    const xaxis = { title: { text: s.x_title, font: axisTitle }, zeroline: false, ...range(xr) };
    const yaxis = { title: { text: s.y_title, font: axisTitle }, ...range(yr) };
    const [xText, yText] = s.tick_text || [null, null];
    if (s.x_log) xaxis.type = "log";
    if (s.x_ticks) Object.assign(xaxis, { tickvals: s.x_ticks, ticktext: xText || s.x_ticks.map(String) });
    if (s.y_log) yaxis.type = "log";
    if (s.y_ticks) Object.assign(yaxis, { tickvals: s.y_ticks, ticktext: yText || s.y_ticks.map(String) });
    // dotted markers at fixed x (k = 64) or y (the exact KL), with their label at the top; shaded x ranges
    const logX = (x) => (s.x_log ? Math.log10(x) : x);
    const logY = (y) => (s.y_log ? Math.log10(y) : y);
    const vlines = s.vlines || [];
    const hlines = s.hlines || [];
    const shade = s.shade || [];
    const marks = {
      shapes: [
        ...shade.map(([x0, x1, color]) => ({ type: "rect", xref: "x", yref: "paper", x0, x1, y0: 0, y1: 1,
          fillcolor: color, line: { width: 0 }, layer: "below" })),
        ...vlines.map(([x]) => ({ type: "line", xref: "x", yref: "paper", x0: x, x1: x, y0: 0, y1: 1,
          line: { dash: "dot", width: 1.5, color: "#7f7f7f" } })),
        ...hlines.map(([y, , dash]) => ({ type: "line", xref: "paper", yref: "y", x0: 0, x1: 1, y0: y, y1: y,
          line: { dash: dash || "dot", width: 1.5, color: "#7f7f7f" } })),
      ],
      annotations: [
        ...vlines.filter(([, text]) => text).map(([x, text]) => ({ x: logX(x), xref: "x", y: 1, yref: "paper",
          text, showarrow: false, xanchor: "right", yanchor: "top" })),
        ...hlines.filter(([, text]) => text).map(([y, text]) => ({ x: 1, xref: "paper", y: logY(y), yref: "y",
          text, showarrow: false, xanchor: "right", yanchor: "bottom" })),
      ],
    }; // prettier-ignore
    // The legend is the player's own HTML above the chart (legendItems), not Plotly's: Plotly's legend pushes the
    // plot's top margin as its entries change (a trace with no point yet has none), and a frame drawn by Plotly's
    // animation path kept the old geometry while the axes took the new one: lines drawn 26-35 px off their axis.
    // With no legend and no automargin, nothing moves the plot area between frames (a heatmap's colour bar pushes
    // the right margin once, at its first draw).
    return {
      height: Math.min(s.height, style.maxHeight ?? Infinity),
        // room for the tick labels at the ends of both axes ("1" at the top, "200" at the right), and above the plot
      // for the labels beside points near its top ("GRPO 0.998")
      margin: { l: style.tick * 4 + 14, r: Math.round(style.tick * 1.6), t: Math.round(style.tick * (labelled ? 2 : 0.8)),
        b: Math.round(style.tick * 3.6 + 18) }, // prettier-ignore
      font,
      paper_bgcolor: "rgba(0,0,0,0)",
      plot_bgcolor: style.background,
      showlegend: false,
      hovermode: hasBars || heatmaps ? "closest" : "x unified",
      xaxis,
      ...marks,
      yaxis,
      barmode: s.barmode || "overlay",
      uirevision: "keep", // zoom and legend clicks survive every frame and new data
      transition: { duration: 0 }, // data-only updates take Plotly's animation path (traces only)
    };
  }

  // The legend's entries: one per name a reader can switch off (lines and bands that show in the legend, a bar
  // series, each category of a bar chart), with what its swatch draws. A heatmap's colour bar is its legend.
  legendItems() {
    if (this.spec.legend === false || this.parts.some((p) => p.kind === "heatmap")) return [];
    const items = new Map();
    const add = (name, swatch) => name && !items.has(name) && items.set(name, { name, swatch });
    for (const p of this.parts) {
      if (p.kind === "line" && p.showlegend !== false) {
        add(p.name, { kind: p.stackgroup || p.fill ? "area" : "line", color: p.color, dash: p.dash, width: p.width,
          marker: (p.mode || "lines") !== "lines" ? p.symbol || "circle" : null }); // prettier-ignore
      } else if (p.kind === "band" && p.showlegend) add(p.name, { kind: "area", color: p.color, width: 0 });
      else if (p.kind === "barseries") {
        add(p.name, { kind: "bar", color: Array.isArray(p.colors) ? p.colors[0] : p.colors, hatch: p.hatch, opacity: p.opacity });
      } else if (p.kind === "bars") p.names.forEach((n, c) => add(n, { kind: "bar", color: p.colors[c] }));
    }
    return [...items.values()];
  }

  traces(t) {
    const out = [];
    for (const p of this.parts) {
      if (p.kind === "line") {
        const n = p.reveal === "full" ? p.yv.length : upto(t, p.x0, p.yv.length);
        const mode = p.mode || "lines";
        const tr = {
          type: "scatter", mode: p.text ? `${mode}+text` : mode, name: p.name, showlegend: p.showlegend,
          x: p.xv.subarray(0, n), y: p.yv.subarray(0, n),
          line: { color: p.color || undefined, width: p.width, dash: p.dash || "solid" },
          stackgroup: p.stackgroup || undefined, fill: p.fill || undefined,
        }; // prettier-ignore
        if (mode !== "lines") {
          tr.marker = { size: p.size ?? 8, color: p.marker_colors || p.color || undefined,
            symbol: p.symbols || p.symbol || undefined }; // prettier-ignore
          if (p.outline) tr.marker.line = { width: 2, color: p.outline };
        }
        if (p.text) Object.assign(tr, { text: p.text, textposition: p.text_position || "top left", cliponaxis: false,
          textfont: { color: p.color || undefined } }); // prettier-ignore
        if (p.hover === false) tr.hoverinfo = "skip";
        out.push(tr);
      } else if (p.kind === "barseries") {
        const marker = { color: p.colors, opacity: p.opacity };
        if (p.hatch) marker.pattern = { shape: p.hatch };
        const tr = { type: "bar", x: p.x, y: p.yv, name: p.name, marker };
        if (p.wv) tr.width = p.wv;
        out.push(tr);
      } else if (p.kind === "band") {
        // one closed polygon (hi forwards, lo backwards): one trace instead of two
        const n = p.whole ? p.lov.length : upto(t, p.x0, p.lov.length);
        const x = new Float32Array(2 * n);
        const y = new Float32Array(2 * n);
        for (let i = 0; i < n; i++) {
          x[i] = x[2 * n - 1 - i] = p.xv[i];
          y[i] = p.hiv[i];
          y[2 * n - 1 - i] = p.lov[i];
        }
        out.push({ type: "scatter", mode: "lines", x, y, fill: "toself", fillcolor: p.color, line: { width: 0 },
          name: p.name, hoverinfo: "skip", showlegend: !!p.showlegend }); // prettier-ignore
      } else if (p.kind === "bars") {
        const row = Math.min(t, p.yv.length / p.P - 1) * p.P;
        const y = p.yv.subarray(row, row + p.P);
        p.colors.forEach((color, c) => {
          // one trace per category: the others are gaps (NaN), so only y changes between frames
          const yc = p.cat ? y.map((v, j) => (p.cat[row + j] === c ? v : NaN)) : y;
          out.push({ type: "bar", x: p.x, y: yc, name: p.names[c] || "", marker: { color },
            showlegend: !!p.names[c], hovertemplate: `%{y:.3f}<extra>${p.names[c] || ""}</extra>` }); // prettier-ignore
        });
      } else if (p.axes) {
        out.push({ type: "heatmap", x: p.xv, y: p.yv, z: p.z, zmin: p.zmin, zmax: p.zmax, colorscale: p.colorscale,
          colorbar: { title: { text: p.colorbar_title } } }); // prettier-ignore
      } else {
        out.push({ type: "heatmap", x: p.xv, z: p.z, zmin: p.zmin, zmax: p.zmax, colorscale: p.colorscale,
          colorbar: { title: { text: p.colorbar_title } }, hovertemplate: "iteration %{x}<br>row %{y}<br>%{z:.3f}<extra></extra>" }); // prettier-ignore
      }
    }
    // a name switched off in the legend: its traces stay (Plotly.react keeps the same traces) but are not drawn
    if (this.hidden.size) for (const tr of out) if (this.hidden.has(tr.name)) tr.visible = false;
    return out;
  }

  // Only a heatmap or lines drawn whole: nothing for Plotly to redraw when t moves (a heatmap's cover does it).
  get staticFrames() {
    return this.parts.every((p) => p.kind === "heatmap" || p.kind === "barseries" || (p.kind === "band" && p.whole) ||
      (p.kind === "line" && p.reveal === "full")); // prettier-ignore
  }

  // Move the cover over the heatmap's columns after t. Pixels come from Plotly's own axis (l2p) and
  // plot area (_fullLayout._size), so the cover follows zoom, pan and resize.
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
