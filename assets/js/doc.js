// The one renderer of a view's document (sim/views/doc.py's blocks), in both hosts: the blocks assets/js/views.js
// computes in the page, or a document sim computed (a recorded view, a visitor's run read by the app's server),
// drawn with the DOM, KaTeX for formulas and the shared chart code. The lesson's pages and the app's component
// (app_view.js) both draw with this class.
//
//   const doc = new DocView(parentElement, {classroom, predict, plotly_url, app});
//   doc.show(blocks);   // again with new blocks for a new setting: charts and live views are kept and updated
//
// Blocks: heading, text (its `md`: our own **bold**, `code` and $math$), formula (KaTeX of its `latex`, else its
// text), caption, metrics, charts (the player, no Play bar unless it replays a run), table, note, code (text to
// copy), ask (predict, then reveal: ?predict=1), columns, live (a LiveView: the toy engine in the page), link (to
// another page, in either host) and links (a list of them), and in the app only (`app`): verdict (a student's lab code
// against the reference), finding (a rule checked on a visitor's log) and fold (blocks under a line that opens them).
// Every text goes in with textContent: nothing from a link or the data is ever parsed as markup.

import { buildPayload } from "./chart_spec.js";
import { LiveView } from "./live.js";
import { Player } from "./player.js";
import { el } from "./player_charts.js";
import { answerLine, PredictBox } from "./predict.js";

// Math with KaTeX when the page has it (the lesson's katex.js, the app's route), else the formula's plain text
function math(latex, text, display) {
  const node = el(display ? "div" : "span", display ? "ls-formula" : "ls-math");
  if (display) { // a formula wider than its column scrolls in its box: a named region Tab can reach, as a table's
    node.tabIndex = 0;
    node.setAttribute("role", "region");
    node.setAttribute("aria-label", `formula: ${text}`);
  }
  const katex = typeof window !== "undefined" ? window.katex : undefined;
  if (katex && latex) {
    try {
      katex.render(latex, node, { displayMode: display, throwOnError: true, output: "htmlAndMathml", trust: false });
      return node;
    } catch (err) {
      node.replaceChildren(); // a formula KaTeX cannot read: its plain text, as without KaTeX
    }
  }
  node.textContent = text;
  return node;
}

// Our own short Markdown (never a visitor's text): **bold**, `code` and $math$, as DOM nodes
export function inline(md) {
  const out = [];
  for (const part of String(md).split(/(\*\*[^*]+\*\*|`[^`]+`|\$[^$]+\$)/)) {
    if (!part) continue;
    if (part.startsWith("**") && part.endsWith("**") && part.length > 4) out.push(el("strong", "", part.slice(2, -2)));
    else if (part.startsWith("`") && part.endsWith("`") && part.length > 2) out.push(el("code", "", part.slice(1, -1)));
    else if (part.startsWith("$") && part.endsWith("$") && part.length > 2) out.push(math(part.slice(1, -1), part.slice(1, -1), false));
    else out.push(document.createTextNode(part));
  }
  return out;
}

// A box that scrolls sideways (a wide formula or table on a phone) says so: .ls-scrolls draws a shadow at the edge
// it scrolls to (doc.css), since a phone's scroll bar shows only while scrolling. Checked again as the box resizes.
const scrollWatch = typeof ResizeObserver !== "undefined" ? new ResizeObserver((entries) => {
  for (const { target } of entries) markOne(target);
}) : null; // prettier-ignore
const markOne = (box) => box.classList.toggle("ls-scrolls", box.scrollWidth > box.clientWidth + 1);
const watched = new Set(); // the boxes on the page, checked again when a font arrives
function markScrolling(root) {
  if (!scrollWatch) return;
  for (const box of root.querySelectorAll(".ls-formula, .ls-tablebox")) {
    scrollWatch.observe(box);
    watched.add(box);
  }
}
// a formula grows when KaTeX's fonts arrive, inside a box whose own size does not change
if (typeof document !== "undefined" && document.fonts) {
  document.fonts.addEventListener("loadingdone", () => {
    for (const box of watched) box.isConnected ? markOne(box) : watched.delete(box);
  });
}

export const APP_ONLY = ["verdict", "finding", "fold"]; // blocks only the app draws: they need its server

// a finding's status, as its box says it (sim/yourdata/rules: warn, info, ok, unknown)
const STATUS = { warn: "Warning", info: "Finding", ok: "Checked", unknown: "Not judged" };

// the caption that follows a row of charts (before the next heading or charts) describes those of its charts
// that have no caption of their own
export function rowCaption(blocks, i) {
  const j = rowCaptionAt(blocks, i);
  return j === null ? "" : blocks[j].text;
}

// the index of that caption, or null
function rowCaptionAt(blocks, i) {
  for (let j = i + 1; j < blocks.length; j++) {
    if (blocks[j].kind === "caption") return j;
    if (["heading", "charts", "ask"].includes(blocks[j].kind)) break; // a caption after a question is about it
  }
  return null;
}

export class DocView {
  constructor(parent, { classroom = false, predict = false, plotly_url = "", plotly_help = "", app = false, pages = null,
    carry = "", Trainer = null, trainer_url = "", api = "" } = {}) {
    this.root = el("div", "ls-doc");
    parent.appendChild(this.root);
    // pages: the pages a lesson has (a link to another is named as text); carry: flags its links keep (?hide=...);
    // Trainer, trainer_url, api: what draws a `trainer` block (TinyLM's page: assets/js/tinylm_trainer_view.js)
    this.o = { classroom, predict, plotly_url, plotly_help, app, pages, carry, Trainer, trainer_url, api };
    this.kept = new Map(); // key -> {node, player | live | box}: what survives a new setting
    this.stats = (window.grpoDoc = window.grpoDoc || { shows: 0, charts: 0 });
  }

  // Draw the blocks; the promise settles once the views the engine computes are on screen (or refused)
  show(blocks) {
    this.used = new Set();
    this.pending = [];
    this.root.replaceChildren(...this.nodes(blocks));
    for (const [key, k] of this.kept) {
      if (this.used.has(key)) continue;
      if (k.player) k.player.destroy();
      if (k.live) k.live.destroy();
      if (k.box) k.box.ask(null);
      if (k.trainer) k.trainer.destroy();
      this.kept.delete(key);
    }
    this.blocks = blocks;
    markScrolling(this.root);
    this.stats.shows += 1;
    return Promise.all(this.pending);
  }

  // In predict mode a question asks before anything tells: what follows an open question waits for its Reveal
  // (a later caption, table or chart could give the answer away), with a line that says so.
  nodes(blocks) {
    const shown = blocks.filter((b) => this.o.app || !APP_ONLY.includes(b.kind));
    const out = [];
    const describes = new Map(); // a row's caption -> the key of the charts it describes (the browser tests read it)
    let waiting = false;
    shown.forEach((b, i) => {
      if (b.kind === "charts" && rowCaptionAt(shown, i) !== null) describes.set(rowCaptionAt(shown, i), b.key);
      const node = this.node(b, b.kind === "charts" ? rowCaption(shown, i) : "");
      if (describes.has(i)) node.dataset.charts = describes.get(i);
      if (waiting) node.hidden = true;
      out.push(node);
      if (b.kind === "ask" && this.o.predict && !waiting && !this.kept.get(`ask:${b.key}`).box.open) {
        waiting = true;
        out.push(el("p", "ls-caption ls-waiting", "The rest of this page follows once you have guessed and revealed the answer above."));
      }
    });
    return out;
  }

  node(b, rowCaption = "") {
    if (b.kind === "heading") return el(b.level > 2 ? "h3" : "h2", "ls-heading", b.text);
    if (b.kind === "text") {
      const p = el("p", "ls-text");
      if (b.md) p.append(...inline(b.md));
      else p.textContent = b.text;
      return p;
    }
    if (b.kind === "formula") return math(b.latex, b.text, true);
    if (b.kind === "caption") {
      const p = el("p", "ls-caption", b.text);
      if (b.given) p.dataset.given = JSON.stringify(b.given); // numbers no chart above it draws (the browser tests)
      return p;
    }
    if (b.kind === "note") return el("div", `ls-box ls-${b.tone}`, b.text);
    if (b.kind === "code") return this.code(b);
    if (b.kind === "link") return this.link(b);
    if (b.kind === "links") {
      const ul = el("ul", "ls-links");
      for (const item of b.items) {
        const li = el("li");
        li.append(...this.link(item).childNodes);
        ul.append(li);
      }
      return ul;
    }
    if (b.kind === "verdict") return this.verdict(b);
    if (b.kind === "finding") return this.finding(b);
    if (b.kind === "fold") return this.fold(b);
    if (b.kind === "metrics") return this.metrics(b);
    if (b.kind === "table") return this.table(b);
    if (b.kind === "charts") return this.charts(b, rowCaption);
    if (b.kind === "ask") return this.ask(b);
    if (b.kind === "live") return this.live(b);
    if (b.kind === "trainer") return this.trainer(b);
    if (b.kind === "columns") {
      const row = el("div", "ls-columns");
      row.style.gridTemplateColumns = `repeat(${b.columns.length}, minmax(0, 1fr))`;
      for (const col of b.columns) {
        const c = el("div", "ls-column");
        c.append(...this.nodes(col));
        row.append(c);
      }
      return row;
    }
    throw new Error(`not a block: ${b.kind}`);
  }

  // text to copy (a command, a signature): preformatted, with a Copy button
  code(b) {
    const box = el("div", "ls-codebox");
    const pre = el("pre", "ls-code", b.text);
    const copy = el("button", "ls-copy", b.label || "Copy");
    copy.type = "button";
    const said = el("output", "ls-copied");
    copy.addEventListener("click", () => {
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(b.text).then(() => (said.textContent = "Copied."), () => (said.textContent = "Select the text to copy it."));
      } else said.textContent = "Select the text to copy it.";
    });
    box.append(copy, said, pre);
    return box;
  }

  // A link to another page, in either host (the app's ./NAME, a lesson's NAME.html), keeping the page's flags
  // (presenter mode, `carry`) under the link's own (?predict=1); a page this lesson lacks is named as text
  link(b) {
    const p = el("p", "ls-linkline");
    if (b.before) p.append(el("span", "ls-link-before", `${b.before} `));
    const here = this.o.app || !this.o.pages || this.o.pages.includes(b.page);
    const to = (label, query) => {
      if (!here) return el("span", "ls-app-only", label);
      const flags = new URLSearchParams(this.o.carry || "");
      if (this.o.classroom) flags.set("classroom", "1");
      for (const [k, v] of Object.entries(query || {})) flags.set(k, v);
      const q = flags.toString().replaceAll("%2C", ",");
      const a = el("a", "ls-pagelink", label);
      a.href = `${this.o.app ? `./${b.page}` : `${b.page}.html`}${q ? `?${q}` : ""}`;
      a.target = "_self";
      return a;
    };
    p.append(to(b.label, b.query));
    for (const [label, query] of b.also || []) if (here) p.append(document.createTextNode(" · "), to(label, query));
    if (!here) p.append(el("span", "ls-tag", " (in the app only)"));
    if (b.what) p.append(el("span", "ls-link-what", ` ${b.what}`));
    return p;
  }

  // a student's lab function against the reference: a coloured line, then what the check says, as plain text
  verdict(b) {
    const box = el("div", `ls-box ls-${b.tone} ls-verdict`);
    box.append(el("p", "ls-verdict-title", b.title));
    for (const text of [b.message, b.check].filter(Boolean)) box.append(el("pre", "ls-verdict-text", text));
    return box;
  }

  // a rule checked on a visitor's log: its status and title, then the rule, the steps, the reading, what to do
  finding(b) {
    const box = el("div", `ls-finding ls-finding-${STATUS[b.status] ? b.status : "info"}`);
    const title = el("p", "ls-finding-title");
    title.append(el("span", "ls-finding-status", `${STATUS[b.status] || STATUS.info}: `), document.createTextNode(b.title));
    box.append(title);
    for (const [label, text] of [["Rule", b.rule], ["Steps", b.steps], ["Reading", b.reading], ["What to do", b.remedy]]) {
      if (!text) continue;
      const p = el("p", "ls-finding-part");
      p.append(el("strong", "", `${label}. `), document.createTextNode(text));
      box.append(p);
    }
    return box;
  }

  // blocks folded under one line; opened or closed by the reader, it stays so for the next setting
  fold(b) {
    const open = (this.folds = this.folds || new Map()).get(b.key);
    const box = el("details", "ls-fold");
    box.open = open === undefined ? !!b.open : open;
    box.addEventListener("toggle", () => this.folds.set(b.key, box.open));
    box.append(el("summary", "", b.summary), ...this.nodes(b.blocks));
    return box;
  }

  keep(key, make) {
    this.used.add(key);
    if (!this.kept.has(key)) this.kept.set(key, make());
    return this.kept.get(key);
  }

  metrics(b) {
    const row = el("div", "ls-metrics");
    for (const [label, value, delta] of b.items) {
      const m = el("div", "ls-metric");
      m.append(el("div", "ls-metric-label", label), el("div", "ls-metric-value", value));
      if (delta !== undefined) m.append(el("div", "ls-metric-delta", delta));
      row.append(m);
    }
    return row;
  }

  table(b) {
    const box = el("div", "ls-tablebox");
    // a wide table scrolls in its box (presenter sizes, a narrow column): the box is a named region Tab can reach
    box.tabIndex = 0;
    box.setAttribute("role", "region");
    box.setAttribute("aria-label", b.title || `table: ${b.columns.join(", ")}`);
    if (b.title) box.append(el("p", "ls-table-title", b.title));
    const t = el("table", "ls-table");
    const head = t.createTHead().insertRow();
    for (const c of b.columns) head.append(el("th", "", c));
    const body = t.createTBody();
    for (const row of b.rows) {
      const tr = body.insertRow();
      for (const cell of row) tr.insertCell().textContent = String(cell);
    }
    box.append(t);
    return box;
  }

  // a Charts block: computed in the page (its charts) or by sim (its payload, arrays in base64)
  charts(b, rowCaption = "") {
    const k = this.keep(`charts:${b.key}`, () => {
      const node = el("div", "ls-charts");
      return { node, player: new Player(node) };
    });
    k.node.dataset.key = b.key;
    const T = b.payload ? b.payload.T : b.T;
    const payload = b.payload ? { ...b.payload } : buildPayload(b.key, { T, charts: b.charts, columns: b.columns,
      bar: T > 1 }); // prettier-ignore
    Object.assign(payload, { classroom: this.o.classroom, plotly_url: this.o.plotly_url, plotly_help: this.o.plotly_help,
      row_caption: rowCaption }); // prettier-ignore
    k.player.load(payload);
    this.stats.charts += 1;
    return k.node;
  }

  // predict, then reveal: in predict mode the `then` blocks wait for the guess; otherwise the answer is one line
  ask(b) {
    const box = el("div", "ls-ask");
    const then = el("div", "ls-then");
    then.append(...this.nodes(b.then));
    if (!this.o.predict) { // the question, then its answer: ?predict=1 asks for a guess first
      box.append(el("p", "ls-asked", b.question.question), el("p", "ls-caption ls-answer", answerLine(b.question)), then);
      return box;
    }
    const k = this.keep(`ask:${b.key}`, () => {
      const node = el("div", "ls-question");
      const state = { node, then: null };
      state.box = new PredictBox(node, () => this.show(this.blocks)); // its answer, and what waited for it
      return state;
    });
    k.then = then;
    k.box.ask(b.question);
    then.hidden = !k.box.open;
    box.append(k.node, then);
    return box;
  }

  live(b) {
    const k = this.keep(`live:${b.key}`, () => {
      const node = el("div", "ls-live");
      return { node, live: new LiveView(node, { key: b.key }) };
    });
    const { classroom, predict, plotly_url, plotly_help } = this.o;
    const r = b.request;
    const json = JSON.stringify(r);
    if (k.shown !== json) { // another control of the page changed: this part computes nothing again
      k.shown = json;
      k.done = k.live.show({ ...r, big: classroom, classroom, predict, plotly_url, plotly_help,
        columns: classroom ? r.classroom_columns ?? r.columns : r.columns }); // prettier-ignore
    }
    this.pending.push(k.done);
    return k.node;
  }

  // A trainer (TinyLM's run in the page or on the app's server): kept while the settings change, told the new ones
  trainer(b) {
    const k = this.keep(`trainer:${b.key}`, () => {
      const node = el("div", "ls-trainer");
      const { classroom, app, plotly_url, plotly_help, trainer_url, api } = this.o;
      if (!this.o.Trainer) return { node: el("p", "ls-error", "This page cannot train: its trainer is not loaded.") };
      return { node, trainer: new this.o.Trainer(node, { classroom, app, plotly_url, plotly_help, trainer_url, api }) };
    });
    if (k.trainer) k.trainer.update(b);
    return k.node;
  }

  destroy() {
    for (const k of this.kept.values()) {
      if (k.player) k.player.destroy();
      if (k.live) k.live.destroy();
      if (k.trainer) k.trainer.destroy();
    }
    this.root.remove();
  }
}
