// GRPO Playground lesson: the rules a lesson page applies to its link and to its data, with no DOM (node's test
// imports this module; the lesson's page script, assets/js/lesson_page.js, imports it).
//
// The link is user input: read by one set of rules in both hosts (control_rules.js). A key given twice in the query (or twice in
// the hash) takes its last value, with a note, except a control that holds several values (`multi`: One group's
// picked answers, `pick=1&pick=4`, as Streamlit writes it); the hash wins over the query (it is what the page
// rewrites); numbers are decimal only (no 0x10, 0b10, Infinity); anything shown back is cut to 40 characters and
// its invisible characters escaped as sim/validate.py's `neutral` does. Data is parsed as JSON, never run, and a
// document of the wrong shape is refused with the "rebuild" message.

export const TRUE = ["1", "true", "yes", "on"];
export const FLAGS = ["classroom", "hide", "predict"]; // the page's own keys: the only ones the contents page carries
export const LIMIT = 40; // characters of a link's value shown back
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

// A link's text as a note shows it: cut to `limit` characters (code points) with an ellipsis, then neutral
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

// The link's parameters: {values: Map key -> value, lists: Map key -> every value (the part that gave it last),
// fromHash: Set of keys the hash gave, notes: [text]}. Keys in `multi` hold several values, with no note.
export function readLink(search, hash, multi = []) {
  const values = new Map();
  const lists = new Map();
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
      lists.set(k, vs);
      if (part === "hash") fromHash.add(k);
      if (vs.length > 1 && !multi.includes(k)) {
        notes.push(`URL parameter ${shown(k)} is given ${vs.length} times (${shown(vs.join(", "))}); using the last one`);
      }
    }
  }
  return { values, lists, fromHash, notes };
}

// A Picks control's values from the link (`pick=1&pick=4`, or `pick=1,4`): whole numbers from 1 up to `most`, in
// order, each once; [picks, note or null] (a value that is none of them is dropped, and said)
export function picksFromLink(key, raw, most) {
  const out = new Set();
  const bad = [];
  for (const part of raw.flatMap((r) => String(r).split(","))) {
    if (part.trim() === "") continue;
    const x = decimal(part);
    if (Number.isInteger(x) && x >= 1 && x <= most) out.add(x);
    else bad.push(part);
  }
  const note = bad.length ? `URL parameter ${key}=${shown(bad.join(","))} is not a whole number from 1 to ${most}; left out` : null;
  return [[...out].sort((a, b) => a - b), note];
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

// The text a view writes into its link (the hash in a lesson, the query in the app) for its state: the setting,
// then the page's flags the link carried, as the page reads them (undefined: not written; classroom=0 and hide=
// stay, so that a value elsewhere in the link cannot win on a reload)
export function linkText(state, flags) {
  const h = new URLSearchParams();
  for (const [k, v] of Object.entries(state)) {
    if (Array.isArray(v)) for (const x of v) h.append(k, String(x)); // a Picks control: once per number
    else h.set(k, String(v));
  }
  if (flags.classroom !== undefined) h.set("classroom", flags.classroom ? "1" : "0");
  if (flags.hide !== undefined) h.set("hide", flags.hide.join(","));
  if (flags.predict !== undefined) h.set("predict", flags.predict ? "1" : "0");
  return h.toString().replaceAll("%2C", ",");
}

// ---- data: parsed, then checked for the shape the page draws (a problem's text, or null) ----
const isObject = (x) => typeof x === "object" && x !== null && !Array.isArray(x);
const isList = (x, each) => Array.isArray(x) && x.every(each);
const isText = (x) => typeof x === "string";
const TEXTS = ["heading", "text", "formula", "caption", "note", "code"];

// A document (sim/views/doc.py's blocks, as a recorded view's page holds them): the problem, or null
export function docProblem(doc) {
  if (!Array.isArray(doc)) return "it is not a list of blocks";
  for (const b of doc) {
    if (!isObject(b) || !isText(b.kind)) return "a block is not a block";
    if (TEXTS.includes(b.kind) && !isText(b.text)) return `its ${b.kind} is not text`;
    if (b.kind === "metrics" && !isList(b.items, (i) => isList(i, isText))) return "its numbers are not numbers";
    if (b.kind === "table" && !(isList(b.columns, isText) && isList(b.rows, Array.isArray))) return "its tables are not tables";
    if (b.kind === "charts" && !(isObject(b.payload) && Array.isArray(b.payload.charts) && Array.isArray(b.payload.arrays))) {
      return "its charts are not charts";
    }
    if (b.kind === "ask" && !(isObject(b.question) && isText(b.question.question))) return "its questions are not questions";
    const inner = b.kind === "ask" ? [b.then] : b.kind === "columns" ? b.columns : [];
    for (const blocks of inner) {
      const problem = docProblem(blocks);
      if (problem) return problem;
    }
    if (b.kind === "text" && !(b.md === undefined || b.md === null || isText(b.md))) return "its text is not text";
    if (b.kind === "formula" && !(b.latex === undefined || b.latex === null || isText(b.latex))) return "its formula is not text";
    const isLink = (l) => isObject(l) && isText(l.page) && isText(l.label) && isObject(l.query ?? {}) &&
      isList(l.also ?? [], (a) => Array.isArray(a) && isText(a[0]) && isObject(a[1])); // prettier-ignore
    if (b.kind === "link" && !isLink(b)) return "its links are not links";
    if (b.kind === "links" && !isList(b.items, isLink)) return "its links are not links";
    if (![...TEXTS, "metrics", "table", "charts", "ask", "columns", "link", "links"].includes(b.kind)) {
      return `a ${shown(b.kind)} block is not a recorded view's`;
    }
  }
  return null;
}

// The text of a <script type="application/json"> block as a document: [doc, null] or [null, problem]
export function parseDoc(text) {
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return [null, "it is not JSON"];
  }
  const problem = docProblem(doc);
  return problem ? [null, problem] : [doc, null];
}

// A view page's manifest (sim.views.doc.View.manifest): the problem, or null
export function manifestProblem(m) {
  if (!isObject(m) || !isText(m.view) || !isText(m.title)) return "it is not a view's";
  if (!isList(m.controls, (c) => isObject(c) && isText(c.key) && isText(c.label))) return "its controls are not controls";
  if (!isList(m.presets, (p) => isObject(p) && isText(p.name) && isObject(p.values))) return "its presets are not presets";
  if (!["page", "recorded"].includes(m.kind)) return "it is not computed in the page nor recorded";
  return null;
}

// The contents page's manifest (sim/lesson/html.py contents_page): the problem, or null
export function contentsProblem(m) {
  if (!isObject(m) || m.kind !== "contents" || !isText(m.title)) return "it is not a contents page's";
  if (!isList(m.pages, isText)) return "its pages are not page names";
  return null;
}
