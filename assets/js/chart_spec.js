// The one chart spec in JavaScript: sim/player/spec.py's Chart, Line, Band, Bars, BarSeries and Heatmap, and
// sim/player/encode.py's payload, for charts whose arrays are computed in the page (any x axis, as in Python). The payload is the one the
// player draws (assets/js/player.js); its arrays are typed arrays with a shape ({v, shape}) instead of base64, so a
// page hands the player what it computed without encoding it. Plain data, no DOM, no plotting library.
//
//   const charts = [Chart("Mean accuracy (G = 8)", [Line(mean, "mean of the seeds", {color: COLORS.main})],
//                         {y_title: "accuracy", y_range: [0, 1]})];
//   player.load(buildPayload("training", {T: 200, charts}));

import { format } from "./numfmt.js";

export const COLORS = { main: "#1f77b4", pin: "#ff7f0e", good: "#2ca02c", bad: "#d62728", grey: "#7f7f7f",
  expected: "#111111" }; // prettier-ignore
export const REVEALS = ["upto", "full"];

// "#1f77b4", 0.2 -> "rgba(31,119,180,0.2)" (alpha written as Python's str() writes it)
export function rgba(hex, alpha) {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
  return `rgba(${r},${g},${b},${alpha})`;
}

// An array with its shape: a typed or plain array (1-D), {v, shape}, or the engine's {data, shape}.
export function nd(a, shape) {
  if (a && a.v && a.shape) return a;
  if (a && a.data && a.shape) return { v: a.data, shape: a.shape };
  const v = ArrayBuffer.isView(a) ? a : Float64Array.from(a);
  return { v, shape: shape || a.shape || [v.length] };
}

// ---- the declarations (keyword options as in Python, the same defaults) ----
export const LINE_DEFAULTS = { mode: "lines", size: 8.0, symbol: null, symbols: null, marker_colors: null,
  outline: null, text: null, text_position: "top left", hover: true }; // prettier-ignore
export const MODES = ["lines", "markers", "lines+markers"];

export function Line(y, name, o = {}) {
  const line = { kind: "line", y: nd(y), name, reveal: o.reveal ?? "upto", x0: o.x0 ?? 0, color: o.color ?? null,
    width: o.width ?? 2.0, dash: o.dash ?? null, stackgroup: o.stackgroup ?? null, fill: o.fill ?? null,
    showlegend: o.showlegend ?? true, x: o.x === undefined || o.x === null ? null : nd(o.x) }; // prettier-ignore
  for (const [k, d] of Object.entries(LINE_DEFAULTS)) line[k] = o[k] ?? d;
  return line;
}

export function Band(lo, hi, name, o = {}) {
  return { kind: "band", lo: nd(lo), hi: nd(hi), name, x0: o.x0 ?? 0, color: o.color ?? "rgba(31,119,180,0.2)",
    x: o.x === undefined || o.x === null ? null : nd(o.x), showlegend: o.showlegend ?? false }; // prettier-ignore
}

// One bar per x, drawn whole: colors one or one per bar; o.hatch a Plotly pattern ("/"), o.width in x units
export function BarSeries(x, y, name, o = {}) {
  return { kind: "barseries", x: [...x], y: nd(y), name, colors: o.colors ?? "#1f77b4", opacity: o.opacity ?? 1.0,
    hatch: o.hatch ?? null, width: o.width ?? null }; // prettier-ignore
}

export function Bars(y, o = {}) {
  return { kind: "bars", y: nd(y), categories: o.categories ? nd(o.categories) : null, colors: o.colors ?? ["#1f77b4"],
    names: o.names ?? [""], x: o.x ?? null }; // prettier-ignore
}

export function Heatmap(z, o = {}) {
  return { kind: "heatmap", z: nd(z), x0: o.x0 ?? 0, zmin: o.zmin ?? 0.0, zmax: o.zmax ?? 1.0,
    colorscale: o.colorscale ?? "Viridis", colorbar_title: o.colorbar_title ?? "",
    x: o.x === undefined || o.x === null ? null : nd(o.x), y: o.y === undefined || o.y === null ? null : nd(o.y) }; // prettier-ignore
}

export function Chart(title, traces, o = {}) {
  return { title, traces, x_title: o.x_title ?? "iteration", y_title: o.y_title ?? "", y_range: o.y_range ?? null,
    x_range: o.x_range ?? null, height: o.height ?? 340, span: o.span ?? 1, caption: o.caption ?? null,
    legend: o.legend ?? true, x_log: o.x_log ?? false, x_ticks: o.x_ticks ?? null, vlines: o.vlines ?? [],
    y_log: o.y_log ?? false, y_ticks: o.y_ticks ?? null, tick_text: o.tick_text ?? [null, null], hlines: o.hlines ?? [],
    shade: o.shade ?? [], barmode: o.barmode ?? "overlay", reads: [], given: o.given ?? [] }; // prettier-ignore
}

// ---- what a caption reads off its chart ----
// A number a caption says about its chart is read from the chart's own data, never from another array:
//   `Accuracy ${read(chart, "mean of the seeds", "first", ".2f")} → ...`
// read() returns the number as the caption prints it and records how it was read (the chart's `reads`), so the
// browser tests read it again off what the chart draws (tests/fixtures/invariants.js, captions). `at`: "first",
// "last", "max", "min", "argmax" (the x of the largest value), "above" (the first x where the value passes
// o.level; null if it never does), "x" (the value at x = o.x), "cell" (a heatmap's value at o.x, o.y); o.row: a
// heatmap's row over the iterations; o.stack: a stacked line's top (the stack up to it).
// A number a caption gives that is not read off the chart (a setting, a constant) is in the chart's `given`.
export const READ_FORMATS = /^\+?\.\d+[f%]$/;
export function readValue(chart, name, at, o = {}) {
  const i = chart.traces.findIndex((tr) => tr.name === name || (tr.kind === "heatmap" && name === "heatmap"));
  if (i < 0) throw new Error(`read: the chart "${chart.title}" has no trace "${name}"`);
  const tr = chart.traces[i];
  const nearest = (a, v) => a.reduce((b, w, k) => (Math.abs(w - v) < Math.abs(a[b] - v) ? k : b), 0);
  if (at === "cell") { // a heatmap over its own x and y: z (n_x, n_y), the cell nearest (o.x, o.y)
    const ny = tr.z.shape[1];
    return tr.z.v[nearest(tr.x.v, o.x) * ny + nearest(tr.y.v, o.y)];
  }
  let y;
  let x;
  if (tr.kind === "heatmap") { // (n, P): row o.row over iterations x0 + i
    const [n, P] = tr.z.shape;
    y = Float64Array.from({ length: n }, (_, t) => tr.z.v[t * P + o.row]);
    x = Float64Array.from({ length: n }, (_, t) => tr.x0 + t);
  } else {
    y = Float64Array.from(tr.y.v);
    if (o.stack) { // the stack's top at this trace: every line of its stackgroup up to it, added
      for (const other of chart.traces.slice(0, i)) {
        if (other.kind === "line" && other.stackgroup === tr.stackgroup) y.forEach((_, k) => (y[k] += other.y.v[k]));
      }
    }
    if (tr.kind === "barseries") x = Float64Array.from(tr.x, Number); // a bar's x: a number, or a label (NaN)
    else x = tr.x ? Float64Array.from(tr.x.v) : Float64Array.from(y, (_, k) => tr.x0 + k);
  }
  const idx = [...y.keys()].filter((k) => Number.isFinite(y[k]));
  if (!idx.length) return null;
  if (at === "first") return y[idx[0]];
  if (at === "last") return y[idx.at(-1)];
  if (at === "max" || at === "argmax" || at === "min") {
    let best = idx[0];
    for (const k of idx) if (at === "min" ? y[k] < y[best] : y[k] > y[best]) best = k;
    return at === "argmax" ? x[best] : y[best];
  }
  if (at === "above") {
    const k = idx.find((j) => y[j] > o.level);
    return k === undefined ? null : x[k];
  }
  if (at === "x") return y[nearest(x, o.x)]; // the value where x is o.x (the point nearest it)
  throw new Error(`read: unknown reading ${at}`);
}

export function read(chart, name, at, fmt, o = {}) {
  if (!READ_FORMATS.test(fmt)) throw new Error(`read: format ${fmt} (use .Nf or .N%, or +.Nf)`);
  const value = readValue(chart, name, at, o);
  const text = value === null ? null : format(value, fmt);
  chart.reads.push({ trace: name, at, fmt, text, ...o });
  return text;
}

// Is the chart drawn over a run's iterations (revealed up to t) rather than over its own x? (encode.timeline)
export function timeline(c) {
  return c.traces.some((tr) => tr.kind === "bars" || (["line", "band", "heatmap"].includes(tr.kind) && !tr.x));
}

// A bar's x as sent: numbers stay numbers, anything else is text (encode._label)
const label = (v) => (typeof v === "number" ? v : String(v));

// ---- the payload: sim/player/encode.py's build_payload, arrays kept as they are ----
function traceSpec(tr, arrays, T) {
  const ref = (a, ndim, what) => {
    if (a.shape.length !== ndim || a.v.length === 0) throw new Error(`${what}: expected a non-empty ${ndim}-D array`);
    arrays.push(a);
    return arrays.length - 1;
  };
  if (tr.kind === "line") {
    if (!REVEALS.includes(tr.reveal)) throw new Error(`Line ${tr.name}: reveal must be one of ${REVEALS}`);
    const spec = { kind: "line", y: ref(tr.y, 1, `Line ${tr.name}`), x0: tr.x0, reveal: tr.reveal, name: tr.name,
      color: tr.color, width: tr.width, dash: tr.dash, stackgroup: tr.stackgroup, fill: tr.fill,
      showlegend: tr.showlegend }; // prettier-ignore
    if (tr.x) {
      if (tr.x.v.length !== tr.y.v.length) throw new Error(`Line ${tr.name}: x and y differ in length`);
      spec.x = ref(tr.x, 1, `Line ${tr.name} x`);
    }
    if (!MODES.includes(tr.mode)) throw new Error(`Line ${tr.name}: mode must be one of ${MODES}`);
    for (const [k, d] of Object.entries(LINE_DEFAULTS)) {
      const v = Array.isArray(tr[k]) ? [...tr[k]] : tr[k];
      if (JSON.stringify(v) !== JSON.stringify(d)) spec[k] = v;
    }
    return spec;
  }
  if (tr.kind === "band") {
    if (tr.lo.v.length !== tr.hi.v.length) throw new Error(`Band ${tr.name}: lo and hi differ`);
    const spec = { kind: "band", lo: ref(tr.lo, 1, `Band ${tr.name}`), hi: ref(tr.hi, 1, `Band ${tr.name}`), x0: tr.x0,
      name: tr.name, color: tr.color }; // prettier-ignore
    if (tr.x) spec.x = ref(tr.x, 1, `Band ${tr.name} x`);
    if (tr.showlegend) spec.showlegend = true;
    return spec;
  }
  if (tr.kind === "barseries") {
    const n = tr.y.v.length;
    const colors = typeof tr.colors === "string" ? Array(n).fill(tr.colors) : [...tr.colors];
    if (tr.x.length !== n || colors.length !== n) throw new Error(`BarSeries ${tr.name}: one x and colour per bar`);
    const spec = { kind: "barseries", x: tr.x.map(label), y: ref(tr.y, 1, `BarSeries ${tr.name}`), name: tr.name,
      colors, opacity: tr.opacity, hatch: tr.hatch }; // prettier-ignore
    if (tr.width !== null) spec.width = ref(nd(typeof tr.width === "number" ? Array(n).fill(tr.width) : tr.width), 1, "width");
    return spec;
  }
  if (tr.kind === "bars") {
    if (tr.colors.length !== tr.names.length) throw new Error("Bars: as many colors as names");
    if (tr.y.shape[0] < T + 1) throw new Error(`Bars y: needs a row for each iteration 0..${T}`);
    const spec = { kind: "bars", y: ref(tr.y, 2, "Bars y"), colors: [...tr.colors], names: [...tr.names] };
    if (tr.categories) spec.categories = ref(tr.categories, 2, "Bars categories");
    const P = tr.y.shape[1];
    spec.x = tr.x ? [...tr.x] : Array.from({ length: P }, (_, j) => j);
    return spec;
  }
  if (tr.kind === "heatmap") {
    const spec = { kind: "heatmap", z: ref(tr.z, 2, "Heatmap z"), x0: tr.x0, zmin: tr.zmin, zmax: tr.zmax,
      colorscale: tr.colorscale, colorbar_title: tr.colorbar_title }; // prettier-ignore
    if (tr.x) {
      spec.x = ref(tr.x, 1, "Heatmap x");
      spec.y = ref(tr.y, 1, "Heatmap y");
    }
    return spec;
  }
  throw new Error(`not a player trace: ${tr.kind}`);
}

export function buildPayload(key, o) {
  const T = o.T;
  const columns = o.columns ?? 2;
  if (!(T >= 1)) throw new Error(`T must be at least 1 iteration, got ${T}`);
  if (!o.charts || !o.charts.length) throw new Error("the player needs at least one chart");
  const arrays = [];
  const charts = o.charts.map((c) => {
    const spec = { title: c.title, x_title: c.x_title, y_title: c.y_title, y_range: c.y_range, x_range: c.x_range,
      height: c.height, span: Math.max(1, Math.min(c.span, columns)), caption: c.caption || "", legend: c.legend,
      traces: c.traces.map((tr) => traceSpec(tr, arrays, T)) }; // prettier-ignore
    if (c.reads && c.reads.length) spec.reads = c.reads;
    if (c.given && c.given.length) spec.given = c.given.map(String);
    if (c.x_log) spec.x_log = true;
    if (c.x_ticks) spec.x_ticks = [...c.x_ticks];
    if (c.vlines && c.vlines.length) spec.vlines = c.vlines;
    if (!timeline(c)) spec.timeline = false;
    if (c.y_log) spec.y_log = true;
    if (c.y_ticks) spec.y_ticks = [...c.y_ticks];
    if (c.tick_text && (c.tick_text[0] || c.tick_text[1])) spec.tick_text = c.tick_text.map((t) => (t ? t.map(String) : null));
    if (c.hlines && c.hlines.length) spec.hlines = c.hlines;
    if (c.shade && c.shade.length) spec.shade = c.shade;
    if (c.barmode && c.barmode !== "overlay") spec.barmode = c.barmode;
    return spec;
  });
  return { v: 1, key, T, columns, speed: o.speed ?? 16, classroom: !!o.classroom, label: o.label ?? "iteration {t} / {T}",
    plotly_url: o.plotly_url ?? "", meta: o.meta ?? {}, charts, arrays,
    bar: o.bar ?? true }; // prettier-ignore
}
