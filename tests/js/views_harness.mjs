// tests/test_js_views.py's other half: runs assets/js/pyformat.js and assets/js/toy_views.js on what Python wrote into
// a folder (cases.json, and each array as raw little-endian float64 in its own file), and prints what they give
// as one JSON object: {format: [text...], views: [{charts, question, words, caption}...]}. Charts are the
// player's payload charts with each array reference replaced by the array's values (as float32, what the
// player's Python payload carries).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { buildPayload } from "../../assets/js/chart_spec.js";
import { format, repr } from "../../assets/js/pyformat.js";
import * as views from "../../assets/js/toy_views.js";
import { SHOW } from "../../assets/js/views.js";

const dir = process.argv[2];
const cases = JSON.parse(readFileSync(join(dir, "cases.json"), "utf8"));

const number = (x) => (typeof x === "string" ? { nan: NaN, inf: Infinity, "-inf": -Infinity, "-0": -0 }[x] : x);

function load(a) {
  if (a === null || a === undefined) return a;
  if (a.file) {
    const buf = readFileSync(join(dir, a.file));
    const v = new Float64Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
    return { v, shape: a.shape };
  }
  if (Array.isArray(a)) return a.map(load);
  if (typeof a === "object") return Object.fromEntries(Object.entries(a).map(([k, x]) => [k, load(x)]));
  return a;
}

// A document (assets/js/views.js) with each Charts block's charts as the player's resolved payload (as Python's)
function resolvedDoc(blocks) {
  return blocks.map((b) => {
    if (b.kind === "charts") {
      const payload = buildPayload(b.key, { T: b.T, charts: b.charts, columns: b.columns, bar: b.T > 1 });
      return { kind: "charts", key: b.key, charts: resolved(payload) };
    }
    if (b.kind === "ask") return { ...b, then: resolvedDoc(b.then) };
    if (b.kind === "columns") return { ...b, columns: b.columns.map(resolvedDoc) };
    return b;
  });
}

function resolved(payload) {
  const arrays = payload.arrays.map((a) => Array.from(a.v, (x) => (a.v instanceof Uint8Array ? x : Math.fround(x))));
  const walk = (spec) => {
    const out = { ...spec };
    for (const k of ["y", "x", "lo", "hi", "z", "categories"]) if (typeof spec[k] === "number") out[k] = arrays[spec[k]];
    if (spec.kind === "barseries" && typeof spec.width === "number") out.width = arrays[spec.width];
    return out;
  };
  return payload.charts.map((c) => ({ ...c, traces: c.traces.map(walk) }));
}

const out = { format: [], views: [] };
for (const [x, spec, kind] of cases.format || []) {
  out.format.push(kind === "repr" ? repr(number(x)) : format(number(x), spec));
}
for (const c of cases.views || []) {
  const r = {};
  if (c.kind === "training") {
    const [run, exp, ppo, pinned, mine] = [c.run, c.exp, c.ppo, c.pinned, c.mine].map(load);
    const charts = views.training_charts(c.cfg, run, exp, {
      ppo, mine, big: c.big, pinned: pinned ? [c.pinned_label, pinned] : null,
    }); // prettier-ignore
    r.charts = resolved(buildPayload("training", { T: c.cfg.iterations, charts }));
    r.question = views.hard_prompt_question(c.cfg, run);
  } else if (c.kind === "std") {
    const runs = load(c.runs);
    for (const run of Object.values(runs)) for (const k of ["accuracy", "hard"]) run[k] = run[k].v;
    r.charts = resolved(buildPayload("std_scaling", { T: runs["with std"].accuracy.length - 1, charts: views.std_charts(runs) }));
    r.words = views.std_words(runs, c.lr);
  } else if (c.kind === "sharpen") {
    const h = load(c.h);
    for (const k of ["pass_at_1", "pass_at_k", "entropy"]) h[k] = h[k].v;
    r.charts = resolved(buildPayload("sharpen", { T: c.cfg.iterations, charts: views.sharpen_charts(c.cfg, h) }));
    r.caption = views.sharpen_caption(c.cfg, h);
  } else if (c.kind === "doc") {
    r.doc = resolvedDoc(SHOW[c.view](c.fields));
  } else if (c.kind === "pool") {
    const [run, exp] = [c.run, c.exp].map(load);
    const charts = views.pool_charts(c.cfg, run, exp, c.reduction, c.pool_size, { big: c.big });
    r.charts = resolved(buildPayload("your_prompts", { T: c.cfg.iterations, charts }));
  } else if (c.kind === "toy_curves") {
    const [chart, caption] = views.toy_curves(load(c.p0).v, load(c.pT).v);
    r.charts = resolved(buildPayload("passk_toy", { T: 200, charts: [chart] }));
    r.caption = caption;
  }
  out.views.push(r);
}
process.stdout.write(JSON.stringify(out));
