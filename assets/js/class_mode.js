// Class mode, in the app (the routes: ui/classroom_routes.py; the state: ui/classroom.py). The lecturer (the page
// whose session showed the presenter key) opens a class on any view; students who open the class link join with no
// account and no name. A student's page follows the lecturer's: its page, its setting (G, β, a preset), its
// player's iteration; a student may explore on their own and come back with one click. In question mode
// (?predict=1) each question is a poll: the lecturer asks it, each student sends one guess, the projector shows the
// guesses as a histogram growing live, and the lecturer's Reveal shows the answer on every screen; another round
// (after a discussion) is kept beside the first.
//
//   const cls = startClass(page, {api, lecturer}, code, swap);   // app_view.js: a view's page; null outside a class
//   cls.destroy();
//
// `swap(manifest, search)` puts another view's page in this one's place (app_view.js): a student's page follows the
// lecturer to another view with the view's declaration from the server (ui/classroom_routes.py, cached), and no
// Streamlit script run, so a class of 1,000 changes page at once.
//
// Transport: Server-Sent Events read with fetch (a header carries the lecturer's token, which EventSource cannot
// send), one stream per page, reconnecting after a pause; small JSON posts. The tab keeps its class (the code, the
// student's random id, whether it follows, its guesses) in sessionStorage, so a reload or a page the class follows
// keeps it; the lecturer's token too, so a reload of the projector's page keeps the class. Everything the server
// or a student sends is drawn with textContent.

import { linkText } from "./lesson_rules.js";
import { watchPlayers } from "./player.js";
import { el } from "./player_charts.js";
import { answerRange, answerText, fmtNumber, watchQuestions } from "./predict.js";

const STORE = "grpo-class"; // sessionStorage: this tab's class as a student {code, id, following, sent}
const LECTURER_STORE = "grpo-class-lecturer"; // sessionStorage: the lecturer's token
const LEAD_MS = 80; // the lecturer's moves go out this long after the last one
const RESYNC_MS = 2000; // while the lecturer's player plays, its iteration goes out this often
const RETRY_MS = [1000, 2000, 5000, 10000]; // a lost stream is opened again after these pauses
const BINS = 10; // about this many bars in a histogram of numbers
const MAX_SENT = 200; // guesses a tab remembers
export const CODE_FORM = /^[A-HJ-NP-Z2-9]{6}$/; // ui/classroom.py CODE_ALPHABET, CODE_LEN

// ---- the pure parts (tests/test_class_mode.py runs them under node) ----

// The class code a link carries (?class=K7QX2M), or null
export function classCode(search) {
  const code = new URLSearchParams(String(search || "").replace(/^\?/, "")).get("class");
  return code && CODE_FORM.test(code) ? code : null;
}

// A round step of at least x: 1, 2 or 5 times a power of ten
export function niceStep(x) {
  if (!(x > 0) || !Number.isFinite(x)) return 1;
  const p = 10 ** Math.floor(Math.log10(x));
  for (const m of [1, 2, 5, 10]) if (m * p >= x * (1 - 1e-12)) return m * p;
  return 10 * p;
}

// The guesses of each round counted in the same bars: a choice's options, or about BINS equal bins of a round width
// over every round's guesses and the answer (when shown). {edges | labels, counts: [[n per bar] per round]}
export function histogram(rounds, q, answer = null) {
  if (q.kind === "choice") {
    return { labels: q.options, counts: rounds.map((r) => q.options.map((_, i) => r.filter((x) => x === i).length)) };
  }
  const all = rounds.flat().concat(answer === null || answer === undefined ? [] : [answer]);
  if (!all.length) return { edges: [], counts: rounds.map(() => []) };
  const lo = Math.min(...all);
  const hi = Math.max(...all);
  const step = hi > lo ? niceStep((hi - lo) / BINS) : niceStep(Math.max(Math.abs(lo), 1) / BINS);
  const start = Math.floor(lo / step + 1e-9) * step;
  const n = Math.max(1, Math.floor((hi - start) / step + 1e-9) + 1);
  const edges = Array.from({ length: n + 1 }, (_, i) => Number((start + i * step).toPrecision(12)));
  const bin = (x) => Math.min(n - 1, Math.max(0, Math.floor((x - start) / step + 1e-9)));
  return { edges, counts: rounds.map((r) => {
    const c = new Array(n).fill(0);
    for (const x of r) c[bin(x)] += 1;
    return c;
  }) }; // prettier-ignore
}

// What the server checks a guess against: the question's text, its kind, its range (predict.js answerRange) or options
export function questionOf(q) {
  const kind = q.kind ?? "number";
  if (kind === "choice") return { text: q.question, kind, options: q.options };
  const [lo, hi] = answerRange(q.answer, q.unit, q.lo, q.hi);
  return { text: q.question, kind, lo, hi, unit: q.unit || "" };
}

// The lecturer's page as a link: its query (the setting, and question mode), and its address
export function followSearch(lead) {
  const q = new URLSearchParams(lead.query);
  if (lead.predict) q.set("predict", "1");
  const text = q.toString().replaceAll("%2C", ",");
  return text ? `?${text}` : "";
}

export const followUrl = (lead) => `./${lead.view}${followSearch(lead)}`;

// A player's iteration now, from a lead received `ms` ago (a playing player has moved on since)
export function leadT(s, ms, T = Infinity) {
  const t = s.playing ? s.t + Math.floor((Math.max(ms, 0) / 1000) * s.speed) : s.t;
  return { ...s, t: Math.min(t, T), playing: s.playing && t < T };
}

// The events of a Server-Sent Events text so far: [messages (parsed JSON of the data lines), the unfinished rest]
export function parseEvents(text) {
  const parts = text.split("\n\n");
  const rest = parts.pop();
  const out = [];
  for (const part of parts) {
    const data = part.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, "")).join("\n");
    if (!data) continue; // a comment: the stream's heartbeat
    try {
      out.push(JSON.parse(data));
    } catch (e) {
      // not a message of ours: skipped
    }
  }
  return [out, rest];
}

// The page's setting as a link's query, without its flags: what the lecturer leads and a student compares
const queryOf = (page) => linkText(page.kept(page.current, new Set()), {});

// ---- the routes ----
async function call(api, path, { body, token, method = "POST" } = {}) {
  const headers = body === undefined ? {} : { "Content-Type": "application/json" };
  if (token) headers["X-Class-Token"] = token;
  let r;
  try {
    r = await fetch(`${api}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store" }); // prettier-ignore
  } catch (e) {
    return { ok: false, status: 0, error: "The server cannot be reached: check the connection." };
  }
  let data = null;
  try {
    data = await r.json();
  } catch (e) {
    data = null;
  }
  if (r.ok) return { ok: true, status: r.status, data };
  const said = data && typeof data.error === "string" ? data.error : `The server refused this (${r.status}).`;
  return { ok: false, status: r.status, error: said.slice(0, 300) };
}

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

// One event stream: onMessage(each message), onState({connected} | {error, status}); stop() ends it
class Stream {
  constructor(url, token, onMessage, onState) {
    Object.assign(this, { url, token, onMessage, onState, stopped: false, ctrl: new AbortController() });
    this.run();
  }

  async run() {
    let retry = 0;
    while (!this.stopped) {
      let fatal = false;
      try {
        const r = await fetch(this.url, { headers: this.token ? { "X-Class-Token": this.token } : {}, cache: "no-store",
          signal: this.ctrl.signal }); // prettier-ignore
        if (!r.ok) {
          let error = `The server refused this (${r.status}).`;
          try {
            const d = await r.json();
            if (typeof d.error === "string") error = d.error.slice(0, 300);
          } catch (e) {
            // not JSON: the status says it
          }
          fatal = [400, 403, 404, 410].includes(r.status);
          this.onState({ error, status: r.status, fatal });
        } else {
          retry = 0;
          this.onState({ connected: true });
          const reader = r.body.getReader();
          const text = new TextDecoder();
          let buf = "";
          for (;;) {
            const { value, done } = await reader.read();
            if (done || this.stopped) break;
            const [messages, rest] = parseEvents(buf + text.decode(value, { stream: true }));
            buf = rest;
            for (const m of messages) if (!this.stopped) this.onMessage(m);
          }
        }
      } catch (e) {
        if (this.stopped) return;
      }
      if (this.stopped || fatal) return;
      this.onState({ connected: false });
      await sleep(RETRY_MS[Math.min(retry++, RETRY_MS.length - 1)]);
    }
  }

  stop() {
    this.stopped = true;
    this.ctrl.abort();
  }
}

function store(key, value) {
  try {
    if (value === null) sessionStorage.removeItem(key);
    else sessionStorage.setItem(key, JSON.stringify(value));
  } catch (e) {
    // storage refused (a private window's quota): the class lasts as long as the page
  }
}

function stored(key) {
  try {
    return JSON.parse(sessionStorage.getItem(key) || "null");
  } catch (e) {
    return null;
  }
}

function button(label, click, cls = "gp-btn") {
  const b = el("button", cls, label);
  b.type = "button";
  b.addEventListener("click", click);
  return b;
}

// The class bar at the top of the page: a status line, a message line, buttons
function classBar(page, cls) {
  const bar = el("div", `cm-bar ${cls}`);
  bar.setAttribute("role", "region");
  bar.setAttribute("aria-label", "Class");
  page.root.prepend(bar);
  return bar;
}

// ---- the histogram on the projector ----
const guessesText = (n) => `${n} guess${n === 1 ? "" : "es"}`;

// Each round's bars side by side, on the same bins; the answer marked once revealed
function drawHistogram(node, poll, q) {
  const rounds = poll.guesses || poll.counts.map(() => []);
  const answer = poll.revealed && (q.kind ?? "number") === "number" ? q.answer : null;
  const h = histogram(rounds, { kind: q.kind ?? "number", options: q.options }, answer);
  const fmt = q.fmt ?? ".4g";
  const labels = h.labels || h.edges.slice(0, -1).map((e, i) => `${fmtNumber(e, fmt)}–${fmtNumber(h.edges[i + 1], fmt, q.unit)}`);
  const figures = rounds.map((r, k) => {
    const n = poll.counts[k];
    const fig = el("figure", "cm-hist");
    const counts = h.counts[k];
    const top = Math.max(1, ...counts);
    const said = counts.map((c, i) => (c ? `${labels[i]}: ${c}` : "")).filter(Boolean).join(", ");
    fig.setAttribute("role", "img");
    fig.setAttribute("aria-label", `Round ${k + 1}: ${guessesText(n)}${said ? `; ${said}` : ""}` +
      `${poll.revealed ? `; the answer ${answerText(q)}` : ""}`); // prettier-ignore
    const head = el("figcaption", "cm-hist-title");
    head.append(el("span", "", `Round ${k + 1}: `), el("strong", "cm-count", guessesText(n)));
    const bars = el("div", "cm-bars");
    counts.forEach((c, i) => {
      const col = el("div", "cm-col");
      const isAnswer = h.labels ? poll.revealed && q.options[i] === q.answer : false;
      if (isAnswer) col.classList.add("cm-right");
      col.title = `${labels[i]}: ${c}`;
      const bar = el("div", "cm-barfill");
      bar.style.height = `${(100 * c) / top}%`;
      col.append(el("span", "cm-n", c ? String(c) : ""), bar);
      bars.append(col);
    });
    if (answer !== null && h.edges.length) {
      const [a, b] = [h.edges[0], h.edges[h.edges.length - 1]];
      const mark = el("div", "cm-answer");
      mark.style.left = `${(100 * (answer - a)) / (b - a)}%`;
      mark.append(el("span", "", `answer ${answerText(q)}`));
      bars.append(mark);
    }
    const axis = el("div", "cm-axis");
    const every = Math.ceil(labels.length / 6); // at most about six labels under the bars
    labels.forEach((text, i) => axis.append(el("span", "cm-tick", i % every === 0 || h.labels ? text : "")));
    fig.append(head, bars, axis);
    return fig;
  });
  node.replaceChildren(...figures);
  if (!rounds.some((r) => r.length) && !poll.revealed) node.append(el("p", "gp-caption", "The bars grow as the guesses arrive."));
}

// ---- the lecturer ----
class Lecturer {
  constructor(page, api, token) {
    Object.assign(this, { page, api, token, code: null, joined: 0, polls: new Map(), panels: new Map(),
      boxes: new Set(), players: new Map(), board: null, timer: 0, resync: 0 }); // prettier-ignore
    this.bar = classBar(page, "cm-lecturer");
    page.onChange = () => this.leadSoon();
    watchPlayers({ loaded: (p) => this.players.set(p.data.key, p), moved: () => this.leadSoon(),
      gone: (p) => p.data && this.players.get(p.data.key) === p && this.players.delete(p.data.key) }); // prettier-ignore
    watchQuestions({ hold: (box) => this.hold(box), drawn: (box) => this.drawn(box) });
    window.grpoClass = this; // the browser tests read it
    if (page.current) page.draw(); // its questions, drawn before class mode watched them
    this.draw();
    this.find();
  }

  async find() {
    const r = await call(this.api, "/mine", { method: "GET", token: this.token });
    if (!r.ok) {
      if (r.status === 403) store(LECTURER_STORE, null);
      return this.draw(r.error);
    }
    const open = r.data.classes;
    if (open.length) this.attach(open[open.length - 1].code);
  }

  async open() {
    const r = await call(this.api, "/open", { body: {}, token: this.token });
    if (!r.ok) return this.draw(r.error);
    this.attach(r.data.code);
  }

  attach(code) {
    this.code = code;
    this.board = new Stream(`${this.api}/${code}/board`, this.token, (m) => this.onBoard(m), (s) => {
      if (s.error) this.draw(s.error);
      if (s.fatal) this.detach();
    }); // prettier-ignore
    this.resync = setInterval(() => [...this.players.values()].some((p) => p.playing) && this.sendLead(), RESYNC_MS);
    this.sendLead();
    this.draw();
    this.redrawBoxes();
  }

  detach(said = "") {
    if (this.board) this.board.stop();
    clearInterval(this.resync);
    Object.assign(this, { code: null, board: null, joined: 0 });
    this.polls.clear();
    this.panels.clear();
    this.draw(said);
    this.redrawBoxes();
  }

  async end() {
    const r = await call(this.api, `/${this.code}/close`, { body: {}, token: this.token });
    this.detach(r.ok ? "The class has ended." : r.error);
  }

  // ---- leading ----
  leadSoon() {
    if (!this.code) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.sendLead(), LEAD_MS);
  }

  lead() {
    const players = {};
    for (const [key, p] of this.players) {
      if (!p.T || p.T < 1 || p.bar.hidden || !p.root.isConnected) continue; // a chart without a Play bar
      players[key] = { t: p.playing ? Math.max(p.shown, 0) : p.t, playing: p.playing, speed: p.speed };
    }
    return { view: this.page.m.view, predict: !!this.page.flags.predict, query: queryOf(this.page), players };
  }

  async sendLead() {
    if (!this.code || !this.page.current) return;
    const r = await call(this.api, `/${this.code}/lead`, { body: { lead: this.lead() }, token: this.token });
    if (!r.ok) this.draw(r.error);
  }

  // ---- the board ----
  onBoard(m) {
    if (m.closed) return this.detach("The class has ended.");
    this.joined = m.joined;
    for (const p of m.polls) {
      const old = this.polls.get(p.text);
      if (p.guesses === null) p.guesses = old && old.guesses ? old.guesses : null;
      this.polls.set(p.text, p);
    }
    if (this.joinedNode) this.joinedNode.textContent = this.joinedText();
    for (const [text, panel] of this.panels) {
      const poll = this.polls.get(text);
      if (poll) drawHistogram(panel.hist, poll, panel.q);
    }
    this.syncBoxes();
  }

  joinedText() {
    return `${this.joined} joined`;
  }

  // ---- the questions ----
  hold(box) {
    if (!this.code) return null;
    const poll = this.polls.get(box.q.question);
    if (!poll) return { label: "Ask the class", enabled: true, noGuess: true, send: () => this.ask(box),
      caption: "Each student sends one guess, with no name; the bars appear here as they arrive." }; // prettier-ignore
    // revealed before this box was drawn: syncBoxes reveals it next
    if (poll.revealed) return box.revealed ? { revealed: true } : { label: "Reveal to everyone", enabled: false,
      noGuess: true, caption: "" }; // prettier-ignore
    return { label: "Reveal to everyone", enabled: true, noGuess: true, send: () => this.reveal(box, poll),
      caption: "The answer appears on this screen and on every student's." }; // prettier-ignore
  }

  drawn(box) {
    this.boxes.add(box);
    const poll = this.code && box.q && this.polls.get(box.q.question);
    if (poll) box.box.append(this.panel(box, poll));
    if (poll && poll.revealed && !box.revealed) queueMicrotask(() => this.syncBoxes());
  }

  // A question the lecturer revealed (here, on another page, before a reload) shows its answer
  syncBoxes() {
    for (const box of [...this.boxes]) {
      const poll = box.q && box.box.isConnected && this.polls.get(box.q.question);
      if (poll && poll.revealed && !box.revealed) box.forceReveal();
    }
  }

  // The class's guesses under a question: the histograms and Another round
  panel(box, poll) {
    let p = this.panels.get(poll.text);
    if (!p) {
      p = { node: el("div", "cm-panel"), hist: el("div", "cm-hists"), q: box.q };
      p.again = button("Another round", () => this.again(p.box, this.polls.get(poll.text)));
      p.again.title = "after a discussion: every student guesses again; this round stays beside it";
      p.node.append(p.hist, p.again);
      this.panels.set(poll.text, p);
    }
    Object.assign(p, { box, q: box.q });
    p.again.hidden = poll.counts.length >= 3;
    drawHistogram(p.hist, poll, box.q);
    return p.node;
  }

  async ask(box) {
    const r = await call(this.api, `/${this.code}/ask`, { body: { question: questionOf(box.q) }, token: this.token });
    if (!r.ok) return this.draw(r.error);
    const p = r.data.poll;
    if (!this.polls.has(p.text)) this.polls.set(p.text, { ...p, counts: [0], guesses: [[]] });
    box.ask(box.q);
  }

  async reveal(box, poll) {
    const r = await call(this.api, `/${this.code}/reveal`, { body: { poll: poll.id }, token: this.token });
    if (!r.ok) return this.draw(r.error);
    poll.revealed = true;
    const now = this.polls.get(poll.text);
    if (now) now.revealed = true;
    box.forceReveal();
  }

  async again(box, poll) {
    if (!poll) return;
    const r = await call(this.api, `/${this.code}/again`, { body: { poll: poll.id }, token: this.token });
    if (!r.ok) return this.draw(r.error);
    Object.assign(poll, { revealed: false, counts: [...poll.counts, 0], guesses: [...(poll.guesses || []), []] });
    if (box.revealed) box.reopen();
    else box.ask(box.q);
  }

  redrawBoxes() {
    for (const box of [...this.boxes]) {
      if (!box.q || !box.box.isConnected) this.boxes.delete(box);
      else if (!box.revealed) box.ask(box.q);
    }
  }

  // ---- the bar ----
  draw(said = "") {
    this.bar.replaceChildren();
    this.joinedNode = null;
    if (!this.code) {
      this.bar.append(el("strong", "", "Class mode"), el("span", "cm-status", " Students' screens follow this one and " +
        "answer its questions from their own."), button("Open a class", () => this.open())); // prettier-ignore
    } else {
      const link = `${location.origin}${location.pathname}?class=${this.code}${this.page.flags.predict ? "&predict=1" : ""}`;
      this.joinedNode = el("strong", "cm-joined", this.joinedText());
      const line = el("p", "cm-line");
      line.append(el("strong", "", `Class ${this.code}`), document.createTextNode(" · "), this.joinedNode,
        document.createTextNode(" · students open "), el("code", "cm-link", link)); // prettier-ignore
      const copy = button("Copy the class link", () => {
        if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(link).catch(() => {});
      }, "ls-copy"); // prettier-ignore
      this.bar.append(line, copy);
      if (!this.page.flags.predict) {
        this.bar.append(button("Ask this page's questions", () => {
          const u = new URL(location.href);
          u.searchParams.set("predict", "1");
          location.assign(u.toString());
        }, "ls-copy")); // prettier-ignore
      }
      this.bar.append(button("End the class", () => this.end(), "ls-copy"));
    }
    if (said) this.bar.append(el("p", "cm-said", said));
  }

  destroy() {
    if (this.board) this.board.stop();
    clearInterval(this.resync);
    clearTimeout(this.timer);
    watchQuestions(null);
    watchPlayers(null);
    this.page.onChange = null;
    this.bar.remove();
  }
}

// ---- a student ----
const WAIT = "The lecturer has not asked this question yet: your guess goes in once it is asked.";
const SEND = "Your guess goes to the lecturer with no name; the answer appears when the lecturer reveals it.";
const SENT = "Your guess is in. The answer appears when the lecturer reveals it.";

class Student {
  constructor(page, api, code, swap) {
    const s = stored(STORE);
    this.s = s && s.code === code && typeof s.sent === "object" ? s : { code, id: null, following: true, sent: {} };
    Object.assign(this, { page, api, code, swap, home: page.m.view, lead: null, leadAt: 0, polls: new Map(),
      boxes: new Set(), players: new Map(), manifests: new Map(), stream: null, ended: false, moving: false }); // prettier-ignore
    this.save();
    this.bar = classBar(page, "cm-student");
    this.title = el("h1", "cm-title");
    this.watch(page);
    watchPlayers({ loaded: (p) => (this.players.set(p.data.key, p), this.followPlayer(p)),
      moved: () => this.s.following && this.lead && this.stepAway(),
      gone: (p) => p.data && this.players.get(p.data.key) === p && this.players.delete(p.data.key) }); // prettier-ignore
    watchQuestions({ hold: (box) => this.hold(box), drawn: (box) => this.drawn(box) });
    window.grpoClass = this; // the browser tests read it
    if (page.current) page.draw(); // its questions, drawn before class mode watched them
    this.draw("Joining the class…");
    this.join();
  }

  save() {
    const keys = Object.keys(this.s.sent);
    for (const k of keys.slice(0, Math.max(0, keys.length - MAX_SENT))) delete this.s.sent[k];
    store(STORE, this.ended ? null : this.s);
  }

  async join() {
    let r;
    for (const wait of [0, ...RETRY_MS]) { // the server out of reach, or too many joins at once: again, later
      if (wait) await sleep(wait);
      r = await call(this.api, `/${this.code}/join`, { body: { id: this.s.id } });
      if (r.ok || (r.status !== 0 && r.status !== 429) || this.ended) break;
    }
    if (!r.ok) return this.leave(r.error);
    this.s.id = r.data.id;
    this.save();
    this.stream = new Stream(`${this.api}/${this.code}/events?id=${encodeURIComponent(this.s.id)}`, null,
      (m) => this.onMessage(m), (st) => {
        if (st.status === 403 && !this.rejoined) { // an id the class forgot (a laptop asleep for long): a new one
          this.rejoined = true;
          this.s.id = null;
          this.join();
        } else if (st.fatal) this.leave(st.error);
        else if (st.connected === false) this.draw("Connection to the class lost: reconnecting…");
        else if (st.connected) this.draw();
      }); // prettier-ignore
  }

  onMessage(m) {
    if (m.closed) return this.leave("The class has ended. This page is yours now.");
    this.lead = m.lead;
    this.leadAt = performance.now();
    this.polls = new Map(m.polls.map((p) => [p.text, p]));
    this.draw();
    if (this.s.following && this.lead) this.follow();
    if (!this.navigating && !this.moving) this.syncBoxes();
  }

  // ---- following ----
  watch(page) {
    this.page = page;
    page.onChange = (state, by) => by !== "class" && this.s.following && this.lead && this.stepAway();
    page.root.prepend(this.bar);
    // moved to a view other than the one the server drew: its title here, Streamlit's (the drawn view's) hidden
    const moved = page.m.view !== this.home;
    document.body.classList.toggle("cm-moved", moved);
    this.title.textContent = page.m.title;
    if (moved) page.root.prepend(this.title);
    else this.title.remove();
  }

  follow() {
    const { lead, page } = this;
    if (lead.view !== page.m.view || !!lead.predict !== !!page.flags.predict) return this.move();
    if (queryOf(page) !== lead.query) page.applyLink(lead.query);
    for (const p of this.players.values()) this.followPlayer(p);
  }

  // To the lecturer's view (or into or out of question mode), in place: the newest lead once its view's declaration
  // has arrived; without it (a refused request), as a new page load
  async move() {
    if (this.moving) return;
    this.moving = true;
    const view = this.lead.view;
    const manifest = await this.manifest(view);
    this.moving = false;
    if (this.ended || !this.s.following) return;
    if (this.lead.view !== view) return this.follow(); // the lecturer moved on meanwhile
    if (!manifest || !this.swap) {
      this.navigating = true;
      this.draw("Following the lecturer to another page…");
      location.assign(followUrl(this.lead));
      return;
    }
    this.watch(this.swap(manifest, followSearch(this.lead)));
    this.draw();
    this.follow();
    this.syncBoxes();
  }

  async manifest(view) {
    if (!this.manifests.has(view)) {
      const r = await call(this.api, `/views/${encodeURIComponent(view)}`, { method: "GET" });
      const ok = r.ok && r.data && r.data.view === view && Array.isArray(r.data.controls);
      if (!ok) return null;
      this.manifests.set(view, r.data);
    }
    return this.manifests.get(view);
  }

  followPlayer(p) {
    const s = this.s.following && this.lead && !this.navigating && p.data && this.lead.players[p.data.key];
    if (s) p.follow(leadT(s, performance.now() - this.leadAt, p.T));
  }

  stepAway() {
    this.s.following = false;
    this.save();
    this.draw();
  }

  back() {
    this.s.following = true;
    this.save();
    this.draw();
    if (this.lead) this.follow();
  }

  // ---- the questions ----
  sentKey(poll) {
    return `${poll.id}:${poll.round}`;
  }

  hold(box) {
    if (this.ended) return null;
    const poll = this.polls.get(box.q.question);
    if (!poll || poll.kind !== (box.q.kind ?? "number")) return { label: "Send my guess", enabled: false, caption: WAIT };
    if (poll.revealed) return box.revealed ? { revealed: true } : { label: "Send my guess", enabled: false, caption: "" };
    const key = this.sentKey(poll);
    if (key in this.s.sent) {
      if (box.guess === null) box.guess = this.s.sent[key];
      return { label: "Sent", enabled: false, sent: true, caption: SENT };
    }
    return { label: "Send my guess", enabled: true, caption: SEND, send: (g) => this.send(box, poll, g) };
  }

  signature(box) {
    const poll = box.q && this.polls.get(box.q.question);
    return poll ? `${poll.id}:${poll.round}:${poll.revealed}:${this.sentKey(poll) in this.s.sent}` : "";
  }

  drawn(box) {
    this.boxes.add(box);
    box.classSig = this.signature(box);
    if (!this.syncing) { // a box drawn for a question revealed before it was (a reload, a page followed)
      this.syncing = true;
      queueMicrotask(() => {
        this.syncing = false;
        this.syncBoxes();
      });
    }
  }

  async send(box, poll, guess) {
    const value = poll.kind === "choice" ? poll.options.indexOf(guess) : guess;
    const r = await call(this.api, `/${this.code}/guess`, { body: { id: this.s.id, poll: poll.id, round: poll.round,
      guess: value } }); // prettier-ignore
    if (!r.ok && r.status !== 409) return this.draw(r.error);
    if (r.ok || /already/.test(r.error)) {
      this.s.sent[this.sentKey(poll)] = guess;
      this.save();
    } else this.draw(r.error);
    box.ask(box.q);
  }

  // The lecturer revealed a question or started another round: every box of it says so
  syncBoxes() {
    for (const box of [...this.boxes]) {
      if (!box.q || !box.box.isConnected) {
        this.boxes.delete(box);
        continue;
      }
      const poll = this.polls.get(box.q.question);
      if (poll && poll.revealed && !box.revealed) {
        const mine = this.s.sent[this.sentKey(poll)];
        box.guess = mine === undefined ? null : mine; // the guess sent, not one typed and kept
        box.classRound = poll.round;
        box.forceReveal();
      } else if (poll && !poll.revealed && box.revealed && box.classRound !== poll.round) {
        box.classRound = poll.round;
        box.reopen();
      } else if (this.signature(box) !== box.classSig) box.ask(box.q); // asked, or a new round before any Reveal
    }
  }

  // ---- the bar ----
  draw(said = "") {
    this.bar.replaceChildren();
    const line = el("p", "cm-line");
    line.append(el("strong", "", `Class ${this.code}`), document.createTextNode(" · "));
    if (this.ended) {
      this.bar.append(el("p", "cm-said", said));
      return;
    }
    if (this.s.following) {
      line.append(el("span", "cm-status", "Your screen follows the lecturer's."));
      this.bar.append(line, button("Explore on my own", () => this.stepAway(), "ls-copy"));
    } else {
      line.append(el("span", "cm-status", "You are exploring on your own."));
      this.bar.append(line, button("Back to the lecturer", () => this.back(), "ls-copy"));
    }
    if (said) this.bar.append(el("p", "cm-said", said));
  }

  leave(said) {
    this.ended = true;
    if (this.stream) this.stream.stop();
    store(STORE, null);
    this.draw(said);
    for (const box of [...this.boxes]) if (box.q && box.box.isConnected && !box.revealed) box.ask(box.q);
  }

  destroy() {
    if (this.stream) this.stream.stop();
    watchQuestions(null);
    watchPlayers(null);
    this.page.onChange = null;
    this.bar.remove();
    this.title.remove();
    document.body.classList.remove("cm-moved");
  }
}

// Class mode on a view's page: the lecturer's (a token from the server, or kept by this tab), a student's (a class
// code from the link, or kept by this tab), or none
export function startClass(page, data, code, swap = null) {
  if (!data || !data.api) return null;
  if (data.lecturer) store(LECTURER_STORE, data.lecturer);
  const token = data.lecturer || stored(LECTURER_STORE);
  if (token) return new Lecturer(page, data.api, token);
  const s = stored(STORE);
  const joining = code || (s && CODE_FORM.test(s.code || "") ? s.code : null);
  return joining ? new Student(page, data.api, joining, swap) : null;
}
