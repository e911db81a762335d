// A page's controls read from its link, the one parser of both hosts (the server reads no link), with no DOM: a
// value out of range is clamped, one off the slider's steps snapped, one that is not a number or not an option
// falls back to the default, each with one note. A control is sim/views/controls.py's to_json: {kind: "num" |
// "choice" | "flag", key, label, default, lo, hi, step, integer, fmt, options, labels}. tests/test_link_rules.py
// runs it on a table of links and their expected readings.

import { format } from "./numfmt.js";
import { decimal, shown } from "./lesson_rules.js";

// How a value is written in a link and in a note: true/false, 8 (a whole float too), 0.05, None for None: String()
// of it, the shortest digits that read back
export function urlText(value) {
  if (value === null) return "None";
  return String(value);
}

// round(x) of Python: half to even
function roundHalfEven(x) {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

// Num.snap: the nearest grid value lo + k * step, rounded to the step's decimals (0.1 + 0.2 is 0.3)
export function snap(c, x) {
  const k = roundHalfEven((x - c.lo) / c.step);
  const decimals = Math.max(0, -Math.floor(Math.log10(c.step))) + 6;
  const v = Number(format(c.lo + k * c.step, `.${decimals}f`));
  return Math.min(Math.max(v, c.lo), c.hi);
}

export function describe(c) {
  if (c.kind === "flag") return "true or false";
  if (c.kind === "choice") return "one of " + c.options.map(urlText).join(", ");
  return `a number from ${urlText(c.lo)} to ${urlText(c.hi)}`;
}

const typed = (c, x) => (c.integer ? Math.round(x) : x);

// math.ulp: the gap from |x| to the next double up (the one below the largest finite double)
function ulp(x) {
  x = Math.abs(x);
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  view.setBigUint64(0, view.getBigUint64(0) + 1n);
  const up = view.getFloat64(0);
  if (Number.isFinite(up)) return up - x;
  view.setFloat64(0, x);
  view.setBigUint64(0, view.getBigUint64(0) - 1n);
  return x - view.getFloat64(0);
}

// x is `value` written another way, equal but for a float's last bits (0.1 + 0.2 for
// 0.3); never a value a user would tell apart (1e-308 is not 0, 0.0400000000001 is not 0.04)
function sameFloat(x, value) {
  return x === value || (value !== 0 && Math.abs(x - value) <= 4 * ulp(value));
}

// [value to use, problem or null] for the raw text of control c's link value
export function parseUrlValue(c, raw) {
  if (c.kind === "flag") {
    const low = raw.trim().toLowerCase();
    if (low === "true" || low === "false") return [low === "true", null];
    return [c.default, `is not ${describe(c)}`];
  }
  if (c.kind === "choice") {
    const x = decimal(raw);
    for (const o of c.options) {
      if (raw === urlText(o)) return [o, null];
      if (typeof o === "number" && Number.isFinite(x) && sameFloat(x, o)) return [o, null];
    }
    return [c.default, `is not ${describe(c)}`];
  }
  const x = decimal(raw);
  if (!Number.isFinite(x)) return [c.default, `is not ${describe(c)}`];
  if (x < c.lo || x > c.hi) {
    return [typed(c, Math.min(Math.max(x, c.lo), c.hi)), `is outside the allowed range ${urlText(c.lo)} to ${urlText(c.hi)}`];
  }
  const snapped = snap(c, x);
  // off the grid: a value that rounds to another one is said, even 1e-308 -> 0; a whole number's grid is exact
  if (!sameFloat(x, snapped) || (c.integer && x !== snapped)) return [typed(c, snapped), `is not on the slider's steps of ${urlText(c.step)}`];
  return [typed(c, snapped), null];
}

// The note the app shows for a corrected link value (its warning, as plain text)
export function correction(c, raw, value, problem) {
  return `URL parameter ${c.key}=${shown(raw)} ${problem}; using ${c.key} = ${urlText(value)}.`;
}

// The state a link gives every control: {state: {key: value}, notes: [text]}, the values in `link` (a Map of
// key -> last raw value) read by parseUrlValue; a key the link lacks takes the control's default.
export function stateFromLink(controls, link) {
  const state = {};
  const notes = [];
  for (const c of controls) {
    const raw = link.get(c.key);
    if (raw === undefined) {
      state[c.key] = c.default;
      continue;
    }
    const [value, problem] = parseUrlValue(c, raw);
    state[c.key] = value;
    if (problem) notes.push(correction(c, raw, value, problem));
  }
  return { state, notes };
}

// The config a state sets: each control's value under its field's name (build_config), on top of `fixed`
export function configOf(controls, state, fixed = {}) {
  const config = { ...fixed };
  for (const c of controls) if (c.field) config[c.field] = state[c.key];
  return config;
}

// The text a slider shows for its value: its printf format ("%.2f") or the value as written in a link
export function valueText(c, value) {
  if (c.kind === "num" && c.fmt) {
    const m = /^%\.(\d+)f$/.exec(c.fmt);
    if (m) return format(value, `.${m[1]}f`);
  }
  return urlText(value);
}
