// GRPO Playground lesson: the rules a lesson page applies to its link and to its data, with no DOM (node's test
// imports this module; sim/lesson/build.py inlines it, its `export`s dropped, at the top of the lesson's lesson.js).
//
// The link is user input: read by the app's rules (ui/controls.py). A key given twice in the query (or twice in
// the hash) takes its last value, with a note; the hash wins over the query (it is what the page rewrites);
// numbers are decimal only (no 0x10, 0b10, Infinity); anything shown back is cut to 40 characters and its
// invisible characters escaped as sim/validate.py's `neutral` does. Data is parsed as JSON, never run, and an
// entry of the wrong shape is refused with the "rebuild" message.

export const TRUE = ["1", "true", "yes", "on"];
export const FLAGS = ["classroom", "hide", "predict"]; // the page's own keys: the only ones the contents page carries
export const LIMIT = 40; // characters of a link's value shown back (ui/controls.py's PLAIN_LIMIT)
export const REBUILD = "Rebuild the lesson: python -m sim lesson build OUT --force";

// Python's str.isprintable() is false for these categories (and true for the space, U+0020)
const HIDDEN = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

// sim.validate.neutral: every character that is not printable written as a visible escape (\u202e, \U0001d173)
export function neutral(text) {
  let out = "";
  for (const ch of String(text)) {
    const code = ch.codePointAt(0);
    if (ch === " " || !HIDDEN.test(ch)) out += ch;
    else out += code <= 0xffff ? `\\u${code.toString(16).padStart(4, "0")}` : `\\U${code.toString(16).padStart(8, "0")}`;
  }
  return out;
}

// ui/controls.plain's text: cut to `limit` characters (code points) with an ellipsis, then neutral
export function shown(text, limit = LIMIT) {
  const chars = Array.from(String(text));
  const cut = chars.length > limit ? `${chars.slice(0, limit - 1).join("")}…` : chars.join("");
  return neutral(cut);
}

export const isTrue = (raw) => raw !== undefined && raw !== null && TRUE.includes(String(raw).trim().toLowerCase());

// A decimal number (as Python's float() reads one, ASCII digits only), else NaN
const DECIMAL = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/;
export function decimal(raw) {
  return typeof raw === "string" && DECIMAL.test(raw) ? Number(raw) : NaN;
}

// The link's parameters: {values: Map key -> value, fromHash: Set of keys the hash gave, notes: [text]}
export function readLink(search, hash) {
  const values = new Map();
  const fromHash = new Set();
  const notes = [];
  for (const [part, text] of [["query", search], ["hash", hash]]) {
    const all = new Map();
    for (const [k, v] of new URLSearchParams(String(text || "").replace(/^[?#]/, ""))) {
      if (!all.has(k)) all.set(k, []);
      all.get(k).push(v);
    }
    for (const [k, vs] of all) {
      values.set(k, vs[vs.length - 1]);
      if (part === "hash") fromHash.add(k);
      if (vs.length > 1) notes.push(`${shown(k)} is given ${vs.length} times (${shown(vs.join(", "))}); using the last one`);
    }
  }
  return { values, fromHash, notes };
}

// Names in ?hide=: comma-separated, each a control's key (letters, digits, _)
export function hideNames(raw) {
  return String(raw || "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => /^[A-Za-z0-9_]{1,40}$/.test(s));
}

// The contents page's links: only the page's own keys, each in its canonical form ("" when none)
export function carryQuery(search) {
  const { values } = readLink(search, "");
  const out = new URLSearchParams();
  if (isTrue(values.get("classroom"))) out.set("classroom", "1");
  const hide = hideNames(values.get("hide"));
  if (hide.length) out.set("hide", hide.join(","));
  if (isTrue(values.get("predict"))) out.set("predict", "1");
  const text = out.toString().replaceAll("%2C", ",");
  return text ? `?${text}` : "";
}

// The hash a view writes for its state: the setting, then the page's flags the hash carried (classroom, hide, predict)
export function linkHash(state, flags) {
  const h = new URLSearchParams();
  for (const [k, v] of Object.entries(state)) h.set(k, String(v));
  if (flags.classroom) h.set("classroom", "1");
  if (flags.hide && flags.hide.length) h.set("hide", flags.hide.join(","));
  if (flags.predict) h.set("predict", "1");
  return h.toString().replaceAll("%2C", ",");
}

// ---- data: parsed, then checked for the shape the page draws (a problem's text, or null) ----
const isObject = (x) => typeof x === "object" && x !== null && !Array.isArray(x);
const isList = (x, each) => Array.isArray(x) && x.every(each);
const optional = (x, ok) => x === undefined || x === null || ok(x);
const isText = (x) => typeof x === "string";

export function entryProblem(entry) {
  if (!isObject(entry)) return "it is not an object";
  for (const k of ["above", "below"]) if (!optional(entry[k], isText)) return `its ${k} is not text`;
  const table = (t) => isObject(t) && isText(t.title) && isList(t.columns, isText) && isList(t.rows, Array.isArray);
  if (!optional(entry.tables, (x) => isList(x, table))) return "its tables are not tables";
  const row = (r) => isObject(r) && Array.isArray(r.figures) && r.figures.every((f) => isObject(f) && Array.isArray(f.traces));
  if (!optional(entry.figures, (x) => isList(x, row))) return "its charts are not charts";
  if (!optional(entry.payload, (p) => isObject(p) && Array.isArray(p.charts))) return "its player data is not player data";
  const question = (q) => isObject(q) && ["number", "choice"].includes(q.kind) && isText(q.question);
  if (!optional(entry.predict, (x) => isList(x, question))) return "its questions are not questions";
  return null;
}

// The text of a <script type="application/json"> block as an entry: [entry, null] or [null, problem]
export function parseEntry(text) {
  let entry;
  try {
    entry = JSON.parse(text);
  } catch (e) {
    return [null, "it is not JSON"];
  }
  const problem = entryProblem(entry);
  return problem ? [null, problem] : [entry, null];
}

export function manifestProblem(m) {
  if (!isObject(m)) return "it is not an object";
  const dim = (d) => isObject(d) && isText(d.key) && isList(d.names, isText) && Array.isArray(d.values) && d.values.length === d.names.length;
  if (!isList(m.dims, dim)) return "its controls are not controls";
  if (!isList(m.settings, (s) => isObject(s) && isText(s.id) && isObject(s.values))) return "its settings are not settings";
  if (!isObject(m.defaults) || !Array.isArray(m.presets) || !Array.isArray(m.extras)) return "it lacks its defaults";
  return null;
}
