// A view's page, for both hosts: its intro, its controls and presets, a share link, and its document for the
// setting on screen (assets/js/views.js computes it, assets/js/doc.js draws it). The lesson (lesson_page.js) keeps
// the setting in the link's hash; the app's component (app_view.js) in the query, as Streamlit's pages do. Nothing
// else differs: the same code draws the same controls, reads a link by the same rules (control_rules.js) and says
// the same words in both.
//
//   const page = new ViewPage(parentElement, manifest, host);
//   host = {
//     app: false,                        // the app draws links to its other pages and its server's extras
//     read(): {search, hash},            // the link as it is now
//     write(search, hash),               // put the setting into the address bar (no reload, no history entry)
//     part: "hash" | "query",            // where this host writes the setting
//     plotly_url, plotly_help,
//     report(state)?,                    // the app: the setting, for a server that computes for it (lab mode, a
//                                        // document the server computes: manifest.server)
//     action(request)?,                  // the app: an export, computed by the server on a click
//     blocks?,                           // a recorded document (the lab's tasks): drawn as it is
//     data?,                             // what sim read for the view's document (TinyLM's records): ctx.data
//     trainer_url?, tinylm_api?,         // TinyLM's trainer script; the app's routes for a run on its server
//   }
//   page.update({lab, result, doc})      // the app's extras, new with every script run (doc: {for, blocks}, the
//                                        // document the server computed for a setting: Your run, Lab)
//   page.onChange = (state, by) => ...   // class mode (class_mode.js): each setting shown; by "class" if applyLink's
//   page.applyLink("G=16&beta=0.04")     // class mode: the lecturer's setting, read by the link's rules
//
// `manifest` is sim/views/doc.py View.manifest(): {view, title, intro, intro_md, fold_intro, controls, presets,
// tools}. Every text goes in with textContent (or as KaTeX of our own formulas): nothing from a link is markup.

import { configOf, stateFromLink, urlText, valueText } from "./control_rules.js";
import { DocView, inline } from "./doc.js";
import { COMPUTING } from "./live.js";
import { hideNames, isTrue, linkText, picksFromLink, readLink } from "./lesson_rules.js";
import { cannotRun, el } from "./player_charts.js";
import { TrainerView } from "./tinylm_trainer_view.js";
import { SHOW } from "./views.js";

export const PICKS_MAX = 1024; // a Picks control's numbers in a link: 1 .. this (the page keeps those up to its count)
const NARROW = "(max-width: 700px)"; // a phone: the settings start folded, so the first chart is on the first screen
const SEED_MAX = 9999;

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// The pinned run's label: what differs from the setting on screen, by key ("pinned (G=16, lr=0.5)")
export function pinLabel(controls, pinned, state) {
  const changed = controls.filter((c) => !same(pinned[c.key], state[c.key]))
    .map((c) => `${c.key}=${Array.isArray(pinned[c.key]) ? pinned[c.key].join(",") : urlText(pinned[c.key])}`);
  return "pinned" + (changed.length ? ` (${changed.join(", ")})` : "");
}

// The page's flags (classroom, predict, hide) from a link
export function flagsOf(link) {
  return { classroom: isTrue(link.values.get("classroom")), predict: isTrue(link.values.get("predict")),
    hide: hideNames(link.values.get("hide")) }; // prettier-ignore
}

export class ViewPage {
  constructor(parent, manifest, host) {
    this.m = manifest;
    this.host = host;
    this.controls = manifest.controls;
    this.multi = this.controls.filter((c) => c.kind === "picks").map((c) => c.key);
    this.link = this.readLink();
    this.flags = flagsOf(this.link);
    this.hidden = this.known(this.flags.hide);
    this.extras = { lab: null, result: null, doc: null };
    this.pinned = null; // the pinned setting (Training dynamics' Pin), kept in the page
    this.current = null;
    this.written = null; // the address this page last wrote: its own change is not a new link
    // what the tests read: the setting on screen, how many settings were shown, the document
    this.state = (window.grpoPage = { shown: null, changes: 0, state: null, doc: null, page: this });
    this.build(parent);
    this.onLink = () => this.followLink();
    window.addEventListener(host.part === "hash" ? "hashchange" : "popstate", this.onLink);
    this.fromLink();
  }

  // the names of ?hide= that are this page's: its controls' keys, and "presets"
  known(names) {
    return new Set(names.filter((k) => k === "presets" || this.controls.some((c) => c.key === k)));
  }

  readLink() {
    const { search, hash } = this.host.read();
    return readLink(search, this.host.part === "hash" ? hash : "", this.multi);
  }

  // ---- the page's parts ----
  build(parent) {
    const m = this.m;
    this.root = el("div", "ls-page");
    if (this.flags.classroom) this.root.classList.add("ls-classroom");
    const narrow = !!(window.matchMedia && window.matchMedia(NARROW).matches);
    if (m.intro) {
      const intro = el("p", "ls-intro");
      intro.append(...inline(m.intro_md || m.intro));
      if (m.fold_intro || narrow) { // folded where the view says so, and on a phone: the first chart comes first
        const about = el("details", "ls-about");
        about.append(el("summary", "", "What this page shows"), intro);
        this.root.append(about);
      } else this.root.append(intro);
    }
    this.note = el("div", "ls-note");
    this.note.setAttribute("role", "status");
    this.note.hidden = true;
    const layout = el("div", "ls-layout");
    const view = el("div", "ls-view");
    this.tools = el("div", "ls-tools");
    this.tools.hidden = true;
    if (this.controls.length || m.presets.length) layout.append(this.side(narrow));
    else layout.classList.add("ls-wide");
    this.error = el("div", "ls-error");
    this.error.setAttribute("role", "alert");
    this.error.hidden = true;
    this.computing = el("p", "gp-status", COMPUTING);
    this.computing.setAttribute("role", "status");
    this.computing.hidden = !this.m.server;
    const docBox = el("div", "ls-doc-box");
    if (!this.tools.isConnected) view.append(this.tools);
    view.append(this.computing, this.error, docBox);
    layout.append(view);
    this.root.append(this.note, layout);
    parent.append(this.root);
    this.doc = this.state.doc = new DocView(docBox, { classroom: this.flags.classroom, predict: this.flags.predict,
      plotly_url: this.host.plotly_url, plotly_help: this.host.plotly_help, app: !!this.host.app, Trainer: TrainerView,
      trainer_url: this.host.trainer_url || "", api: this.host.tinylm_api || "" }); // prettier-ignore
  }

  // The settings: presets first, then each control, then the share links; folded on a phone, where the tools (Pin,
  // New seed, the exports) are folded with them, so that the first chart is on the first screen
  side(narrow) {
    const aside = el("aside", "ls-side");
    aside.setAttribute("aria-label", "Settings");
    const fold = el("details", "ls-settings");
    fold.open = !narrow;
    fold.append(el("summary", "ls-side-title", "Settings"));
    if (narrow) fold.append(this.tools);
    this.presetRow = el("div", "ls-presets");
    this.presetRow.setAttribute("role", "group");
    this.presetRow.setAttribute("aria-label", "Presets");
    this.presetRow.hidden = !this.m.presets.length || this.hidden.has("presets");
    if (!this.presetRow.hidden) this.presetRow.append(el("span", "ls-presets-title", "Presets"));
    for (const p of this.m.presets) this.presetRow.append(this.presetButton(p));
    const form = el("form", "ls-controls");
    form.addEventListener("submit", (e) => e.preventDefault());
    this.inputs = {};
    for (const c of this.controls) form.append(this.control(c));
    fold.append(this.presetRow, form, this.share());
    aside.append(fold);
    return aside;
  }

  presetButton(p) {
    const b = el("button", "ls-preset", p.name);
    b.type = "button";
    const fixed = Object.keys(p.values).filter((k) => this.hidden.has(k)).sort();
    b.disabled = fixed.length > 0;
    if (fixed.length) b.title = `the link fixes ${fixed.join(", ")} (hide=${fixed.join(",")})`;
    b.addEventListener("click", () => {
      // every visible control to the preset's value, or to its default where the preset says nothing
      const state = { ...this.current };
      for (const c of this.controls) if (!this.hidden.has(c.key)) state[c.key] = c.key in p.values ? p.values[c.key] : c.default;
      this.go(state);
    });
    return b;
  }

  // One control: native elements with <label>s worded as the declaration (sim/settings.py) words them
  control(c) {
    const box = el("div", `ls-control ls-${c.kind}`);
    box.hidden = this.hidden.has(c.key);
    const id = `ls-${c.key}`;
    if (c.help) box.title = c.help;
    const changed = () => this.changed();
    if (c.kind === "num") {
      const label = el("label", "", c.label);
      label.htmlFor = id;
      const range = el("input");
      Object.assign(range, { type: "range", id, min: String(c.lo), max: String(c.hi), step: String(c.step) });
      const steps = Math.round((c.hi - c.lo) / c.step);
      // a slider of thousands of steps (the seed) gets a number box to type into; the others show their value
      const out = steps > 200 ? el("input", "ls-number") : el("output");
      if (steps > 200) {
        Object.assign(out, { type: "number", min: String(c.lo), max: String(c.hi), step: String(c.step) });
        out.setAttribute("aria-label", `${c.label}: type a number`); // not the slider's name: two controls, two names
      } else out.htmlFor = id;
      const shownValue = (v) => {
        const text = valueText(c, v);
        if (out.tagName === "INPUT") out.value = urlText(v);
        else out.textContent = text;
        range.setAttribute("aria-valuetext", text);
      };
      range.addEventListener("input", () => {
        shownValue(Number(range.value));
        changed();
      });
      if (out.tagName === "INPUT") {
        out.addEventListener("change", () => {
          const v = Number(out.value);
          if (out.value.trim() === "" || !Number.isFinite(v)) return shownValue(Number(range.value));
          range.value = String(Math.min(Math.max(v, c.lo), c.hi));
          shownValue(Number(range.value));
          changed();
        });
      }
      box.append(label, range, out);
      this.inputs[c.key] = { get: () => (c.integer ? Math.round(Number(range.value)) : Number(range.value)),
        set: (v) => { range.value = String(v); shownValue(v); } }; // prettier-ignore
    } else if (c.kind === "choice") {
      const fs = el("fieldset");
      fs.append(el("legend", "", c.label));
      c.options.forEach((o, i) => {
        const r = el("input");
        Object.assign(r, { type: "radio", name: id, id: `${id}-${i}`, value: String(i) });
        // the option as a link writes it, and its caption ("0 (TRL default)"); the whole label selects it
        const text = urlText(o);
        const caption = c.labels[i];
        const l = el("label", "ls-option");
        l.htmlFor = r.id;
        l.append(r, document.createTextNode(` ${!caption ? text : caption.startsWith(text) ? caption : `${text} (${caption})`}`));
        r.addEventListener("change", changed);
        fs.append(l);
      });
      box.append(fs);
      this.inputs[c.key] = { get: () => c.options[Number(fs.querySelector("input:checked").value)],
        set: (v) => { const i = c.options.indexOf(v); fs.querySelectorAll("input")[Math.max(i, 0)].checked = true; } }; // prettier-ignore
    } else if (c.kind === "picks") {
      // toggle buttons 1..n (n: the count control's value), shown while the `when` control says so
      const fs = el("fieldset", "ls-picks");
      fs.append(el("legend", "", c.label));
      const row = el("div", "ls-pick-row");
      fs.append(row);
      box.append(fs);
      let picked = [...c.default];
      const draw = (n) => {
        row.replaceChildren();
        for (let i = 1; i <= n; i++) {
          const b = el("button", "ls-pick", String(i));
          b.type = "button";
          b.setAttribute("aria-pressed", picked.includes(i) ? "true" : "false");
          b.addEventListener("click", () => {
            picked = picked.includes(i) ? picked.filter((x) => x !== i) : [...picked, i].sort((a, b2) => a - b2);
            changed();
          });
          row.append(b);
        }
      };
      this.inputs[c.key] = { get: () => picked,
        set: (v, state) => {
          picked = [...v];
          draw(state[c.count]);
          box.hidden = this.hidden.has(c.key) || (c.when !== null && state[c.when[0]] !== c.when[1]);
        } }; // prettier-ignore
    } else {
      const label = el("label", "ls-flag-label");
      const check = el("input");
      Object.assign(check, { type: "checkbox", id });
      check.addEventListener("change", changed);
      label.append(check, document.createTextNode(` ${c.label}`));
      box.append(label);
      this.inputs[c.key] = { get: () => check.checked, set: (v) => (check.checked = !!v) };
    }
    return box;
  }

  // "Share": this setting as a link, and a presenter link that hides the controls a class should not move
  share() {
    const box = el("details", "ls-share");
    box.append(el("summary", "", "Share / classroom link"));
    const copyRow = (label, get) => {
      const b = el("button", "ls-copy", label);
      b.type = "button";
      const out = el("output", "ls-copied");
      b.addEventListener("click", () => {
        const text = get();
        const done = () => (out.textContent = "Copied.");
        const shownText = () => {
          out.textContent = text; // where the clipboard is not available (file://, an old browser): select it
          out.classList.add("ls-link-text");
        };
        if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, shownText);
        else shownText();
      });
      return [b, out];
    };
    box.append(el("p", "ls-caption", "This setup, seed included, as one link:"),
      ...copyRow("Copy this link", () => this.linkFor({ hide: [...this.hidden], classroom: this.flags.classroom }))); // prettier-ignore
    const hideBox = el("fieldset", "ls-hide");
    hideBox.append(el("legend", "", "Hide these controls"));
    const picks = [];
    for (const c of this.controls) {
      const l = el("label", "ls-option");
      const check = el("input");
      check.type = "checkbox";
      check.value = c.key;
      picks.push(check);
      l.append(check, document.createTextNode(` ${c.label}`));
      hideBox.append(l);
    }
    const big = el("label", "ls-option");
    const bigCheck = el("input");
    bigCheck.type = "checkbox";
    bigCheck.checked = true;
    big.append(bigCheck, document.createTextNode(" Presenter mode (larger type)"));
    box.append(hideBox, big, el("p", "ls-caption", "Classroom link (hidden controls keep the values above):"),
      ...copyRow("Copy the classroom link", () => this.linkFor({ hide: picks.filter((p) => p.checked).map((p) => p.value),
        classroom: bigCheck.checked }))); // prettier-ignore
    return box;
  }

  // The address of this setting with these flags (the other flags of the link as they are)
  linkFor({ hide, classroom }) {
    const kept = this.kept(this.current, new Set(hide));
    const flags = { classroom: classroom || undefined, hide: hide.length ? hide : undefined, predict: this.flags.predict || undefined };
    const text = linkText(kept, flags);
    const { search } = this.host.read();
    const base = location.href.split(/[?#]/)[0];
    if (this.host.part === "hash") return `${base}${search}${text ? "#" + text : ""}`;
    return `${base}${text ? "?" + text : ""}`;
  }

  // What a link must carry of a state: what differs from the defaults, what the hidden controls hold, and (for the
  // hash) what the query says, which the hash must override
  kept(state, hidden) {
    const query = this.host.part === "hash" ? readLink(this.host.read().search, "", this.multi).values : new Map();
    const kept = {};
    for (const c of this.controls) {
      if (!same(state[c.key], c.default) || query.has(c.key) || hidden.has(c.key)) {
        kept[c.key] = Array.isArray(state[c.key]) ? state[c.key].map(urlText) : urlText(state[c.key]);
      }
    }
    return kept;
  }

  // Put the state into the address bar: the setting, and each flag the part this host writes carried, as the page
  // reads it (classroom=0 stays 0: the query's classroom=1 must not win on a reload)
  writeLink(state) {
    const from = this.host.part === "hash" ? this.link.fromHash : new Set(this.link.values.keys());
    const flags = { classroom: from.has("classroom") ? this.flags.classroom : undefined,
      predict: from.has("predict") ? this.flags.predict : undefined, hide: from.has("hide") ? [...this.hidden] : undefined }; // prettier-ignore
    const text = linkText(this.kept(state, this.hidden), flags);
    const { search, hash } = this.host.read();
    const next = this.host.part === "hash" ? { search, hash: text ? `#${text}` : "" } : { search: text ? `?${text}` : "", hash };
    this.written = next;
    if (next.search === search && next.hash === hash) return;
    this.host.write(next.search, next.hash);
  }

  // ---- the setting ----
  go(state, by = null) {
    this.current = state;
    this.state.state = state;
    for (const c of this.controls) this.inputs[c.key].set(state[c.key], state);
    this.writeLink(state);
    if (this.host.report) this.host.report(state);
    this.draw();
    if (this.onChange) this.onChange(state, by);
  }

  // Class mode: a setting from outside the address bar (the lecturer's, as a link's query), read by the link's rules
  applyLink(text) {
    const link = readLink(`?${text}`, "", this.multi);
    const { state } = stateFromLink(this.controls.filter((c) => c.kind !== "picks"), link.values);
    for (const c of this.controls.filter((x) => x.kind === "picks")) {
      const raw = link.lists.get(c.key);
      state[c.key] = raw === undefined ? [...c.default] : picksFromLink(c.key, raw, PICKS_MAX)[0];
    }
    this.go(state, "class");
  }

  changed() {
    const state = {};
    for (const c of this.controls) state[c.key] = this.inputs[c.key].get(); // a control change leaves any preset
    this.go(state);
  }

  // The document for the setting on screen, with the page's extras (a pinned run, the app's lab numbers)
  draw() {
    const state = this.current;
    const picks = Object.fromEntries(this.controls.filter((c) => c.kind === "picks").map((c) => [c.key,
      state[c.key].filter((i) => i <= state[c.count])])); // prettier-ignore
    const fields = configOf(this.controls, { ...state, ...picks });
    this.drawTools();
    let blocks;
    if (!this.host.blocks && this.m.server) { // the app's server computes this view's document for the setting
      const d = this.extras.doc;
      this.computing.hidden = !!d && same(d.for, this.labKey(state));
      if (!d) return; // the first: it comes with the server's next run (the page reported its setting)
      blocks = d.blocks; // until the setting's own arrives, the previous one stays, said to be computing
    }
    try {
      blocks = blocks || this.host.blocks || SHOW[this.m.view](fields, this.context(state));
    } catch (err) {
      this.error.replaceChildren(...cannotRun(err.message || err));
      this.error.hidden = false;
      return;
    }
    this.error.hidden = true;
    this.doc.show(blocks).then(() => {
      if (this.current !== state) return; // a newer setting is on its way
      this.state.shown = { ...state };
      this.state.changes += 1;
    });
  }

  // What a view's document may use besides its fields: the pinned run, the app's lab numbers for this setting
  context(state) {
    const lab = this.extras.lab;
    const ctx = { app: !!this.host.app, lab: lab && same(lab.for, this.labKey(state)) ? lab : null, pinned: null,
      predict: this.flags.predict, data: this.host.data || null }; // prettier-ignore
    if (this.pinned) {
      ctx.pinned = { label: pinLabel(this.controls, this.pinned, state), config: configOf(this.controls, this.pinned) };
    }
    return ctx;
  }

  labKey(state) {
    return Object.fromEntries(this.controls.map((c) => [c.key, state[c.key]]));
  }

  // Training dynamics' Pin / Unpin and New seed, and the app's exports (`manifest.tools`)
  drawTools() {
    const tools = this.m.tools || [];
    this.tools.replaceChildren();
    this.tools.hidden = !tools.length;
    const button = (label, click, o = {}) => {
      const b = el("button", "gp-btn", label);
      b.type = "button";
      if (o.disabled) {
        b.disabled = true;
        b.title = o.disabled;
      }
      b.addEventListener("click", click);
      this.tools.append(b);
      return b;
    };
    if (tools.includes("pin")) {
      if (this.pinned) button("Unpin", () => ((this.pinned = null), this.draw()));
      else button("Pin this run", () => ((this.pinned = { ...this.current }), this.draw())).title = "keep this run and overlay it on the next";
    }
    if (tools.includes("new_seed")) {
      const fixed = this.hidden.has("seed") ? "the link fixes seed (hide=seed)" : null;
      button("New seed", () => {
        let seed = this.current.seed;
        while (seed === this.current.seed) seed = Math.floor(Math.random() * (SEED_MAX + 1));
        this.go({ ...this.current, seed });
      }, { disabled: fixed }); // prettier-ignore
    }
    if (tools.includes("exports") && this.host.action) {
      for (const [kind, label] of [["csv", "Run history (CSV)"], ["json", "Settings (JSON)"], ["trl", "TRL GRPOConfig"]]) {
        button(label, () => this.host.action({ kind, values: this.labKey(this.current) }));
      }
      const r = this.extras.result;
      if (r && r.text !== undefined && same(r.values, this.labKey(this.current))) this.tools.append(this.resultBox(r));
    }
  }

  // An export the server computed: a download, and the text itself where it is short (the GRPOConfig)
  resultBox(r) {
    const box = el("div", "ls-result");
    const a = el("a", "ls-download", `Download ${r.filename}`);
    a.href = URL.createObjectURL(new Blob([r.text], { type: r.mime }));
    a.download = r.filename;
    box.append(a);
    if (r.show) box.append(el("pre", "ls-code", r.text));
    if (r.fresh) {
      r.fresh = false;
      a.click(); // the click that asked for it: the download starts at once
    }
    return box;
  }

  // ---- the link ----
  fromLink() {
    const { state, notes } = stateFromLink(this.controls.filter((c) => c.kind !== "picks"), this.link.values);
    for (const c of this.controls.filter((x) => x.kind === "picks")) {
      const raw = this.link.lists.get(c.key);
      if (raw === undefined) state[c.key] = [...c.default];
      else {
        const [picks, note] = picksFromLink(c.key, raw, PICKS_MAX);
        state[c.key] = picks;
        if (note) notes.push(note);
      }
    }
    const unknown = [...this.link.values.keys()].filter((k) => !this.controls.some((c) => c.key === k) &&
      !["classroom", "predict", "hide", "presenter", "class"].includes(k)); // prettier-ignore
    if (unknown.length) notes.push(`URL parameter${unknown.length > 1 ? "s" : ""} ${unknown.map((k) => k.slice(0, 40)).join(", ")} ` +
      `${unknown.length > 1 ? "are not settings" : "is not a setting"} of this page; ignored`); // prettier-ignore
    const unknownHide = String(this.link.values.get("hide") || "").split(",").map((s) => s.trim())
      .filter((k) => k && k !== "presets" && !this.controls.some((c) => c.key === k)); // prettier-ignore
    if (unknownHide.length) notes.push(`URL parameter hide names ${unknownHide.map((k) => k.slice(0, 40)).join(", ")}, ` +
      "which are not controls of this page; ignored"); // prettier-ignore
    if (this.link.values.has("class") && !this.host.app) notes.push("This link is for a class, which " +
      "needs the app's server; this lesson page works on its own"); // prettier-ignore
    this.note.textContent = [...this.link.notes, ...notes].map((n) => (n.endsWith(".") ? n : `${n}.`)).join(" ");
    this.note.hidden = !this.note.textContent;
    this.go(state);
  }

  // The address changed (back, forward, an edited hash): a new setting, or a new page where a flag changed
  followLink() {
    const { search, hash } = this.host.read();
    if (this.written && this.written.search === search && this.written.hash === hash) return; // the page's own
    const next = this.readLink();
    const f = flagsOf(next);
    if (f.classroom !== this.flags.classroom || f.predict !== this.flags.predict || !same([...this.known(f.hide)], [...this.hidden])) {
      location.reload();
      return;
    }
    this.link = next;
    this.fromLink();
  }

  // The app's extras, new with every script run: the lab's numbers for a setting, an export's result
  update(extras) {
    const before = JSON.stringify([this.extras.lab, this.extras.doc]);
    this.extras = { ...this.extras, ...extras };
    if (this.current && (JSON.stringify([this.extras.lab, this.extras.doc]) !== before || extras.result)) this.draw();
  }

  destroy() {
    window.removeEventListener(this.host.part === "hash" ? "hashchange" : "popstate", this.onLink);
    this.doc.destroy();
    this.root.remove();
  }
}
