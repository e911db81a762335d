// The tests' way into the browser's code under node (tests/fixtures/node.py): reads a JSON list of calls on stdin and
// prints their results as one JSON list. A call is
//   {op: "call", module: "toy_views", fn: "captions", args: [...]}   any export of assets/js/<module>.js
//   {op: "doc", view: "wasted", fields: {...}, ctx: {...}}           a view's document, its charts resolved
//   {op: "live", request: {...}}                                     a live part: the engine's runs, then what it shows
//   {op: "std_words", runs: {...}, lr}                               Std scaling's words for the engine's comparison
// An argument {nd: [...], shape: [...]} arrives as {v: Float64Array, shape} (a run's array); NaN and infinities
// travel as {float: "nan" | "inf" | "-inf"}. Typed arrays come back as lists, a Map as an object, a Set as a list,
// an error as {error: message}.
import { readFileSync } from "node:fs";
import { buildPayload } from "../../assets/js/chart_spec.js";
import { viewRuns } from "../../assets/js/view_runs.js";
import { SHOW } from "../../assets/js/views.js";

const FLOATS = { nan: NaN, inf: Infinity, "-inf": -Infinity };
globalThis.window ??= globalThis; // the player (imported with the renderer) keeps its counters on window
const modules = {};

function decode(x) {
  if (Array.isArray(x)) return x.map(decode);
  if (x && typeof x === "object") {
    if (x.nd) return { v: Float64Array.from(x.nd, (a) => (typeof a === "object" ? FLOATS[a.float] : a)), shape: x.shape };
    if (typeof x.float === "string" && Object.keys(x).length === 1) return FLOATS[x.float];
    return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, decode(v)]));
  }
  return x;
}

function encode(x) {
  if (x === undefined) return null;
  if (typeof x === "number" && !Number.isFinite(x)) return { float: Number.isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf" };
  if (typeof x === "bigint") return String(x);
  if (ArrayBuffer.isView(x)) return Array.from(x, encode);
  if (x instanceof Map) return Object.fromEntries([...x].map(([k, v]) => [k, encode(v)]));
  if (x instanceof Set) return [...x].map(encode);
  if (Array.isArray(x)) return x.map(encode);
  if (x && typeof x === "object") return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, encode(v)]));
  return x;
}

// the charts of a payload with each array reference replaced by its values (as the player receives them)
function resolved(payload) {
  const arrays = payload.arrays.map((a) => Array.from(a.v));
  const walk = (spec) => {
    const out = { ...spec };
    for (const k of ["y", "x", "lo", "hi", "z", "categories"]) if (typeof spec[k] === "number") out[k] = arrays[spec[k]];
    if (spec.kind === "barseries" && typeof spec.width === "number") out.width = arrays[spec.width];
    return out;
  };
  return payload.charts.map((c) => ({ ...c, traces: c.traces.map(walk) }));
}

function charts(key, list, T, columns) {
  return resolved(buildPayload(key, { T, charts: list, columns, bar: T > 1 }));
}

function resolvedDoc(blocks) {
  return blocks.map((b) => {
    if (b.kind === "charts") return { kind: "charts", key: b.key, charts: charts(b.key, b.charts, b.T, b.columns) };
    if (b.kind === "ask") return { ...b, then: resolvedDoc(b.then) };
    if (b.kind === "columns") return { ...b, columns: b.columns.map(resolvedDoc) };
    return b;
  });
}

async function run(c) {
  if (c.op === "doc") return resolvedDoc(SHOW[c.view](decode(c.fields), decode(c.ctx || {})));
  if (c.op === "live") {
    const { viewOf } = await import("../../assets/js/live.js");
    const request = decode(c.request);
    const shown = viewOf(request, viewRuns(request));
    return { ...shown, charts: charts("live", shown.charts, shown.T, 2) };
  }
  if (c.op === "std_words") { // Std scaling's words, read off the charts it draws for these runs
    const V = await import("../../assets/js/toy_views.js");
    const runs = decode(c.runs);
    return V.std_words(runs, c.lr, V.std_charts(runs));
  }
  if (c.op === "call") {
    modules[c.module] ??= await import(`../../assets/js/${c.module}.js`);
    const fn = modules[c.module][c.fn];
    if (typeof fn !== "function") return modules[c.module][c.fn]; // a constant
    return fn(...decode(c.args || []));
  }
  throw new Error(`unknown op ${c.op}`);
}

const calls = JSON.parse(readFileSync(0, "utf8"));
const out = [];
for (const c of calls) {
  try {
    out.push(encode(await run(c)));
  } catch (err) {
    out.push({ error: String((err && err.message) || err) });
  }
}
process.stdout.write(JSON.stringify(out));
