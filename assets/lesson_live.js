// A lesson page whose view computes in the page (sim/lesson writes it; the bundle live.js runs main()): the app's
// controls for that view (sim/views' CONTROLS, in the page's manifest), its presets, and a LiveView (assets/live.js)
// that runs the engine for the setting on screen. Every control takes any value of its range and step; the
// setting lives in the link (the hash, which wins over the query), read by the app's rules (control_rules.js)
// with the app's words for what it corrects; the page follows the hash when it changes. Nothing from the link or
// the manifest is rendered as markup: every text goes in with textContent.

import { configOf, stateFromLink, urlText, valueText } from "./control_rules.js";
import { hideNames, isTrue, linkHash, readLink, REBUILD } from "./lesson_rules.js";
import { LiveView } from "./live.js";

const $ = (id) => document.getElementById(id);

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

const manifestOk = (m) =>
  m && typeof m.live === "string" && Array.isArray(m.controls) && m.controls.every((c) => c && typeof c.key === "string") &&
  Array.isArray(m.presets) && typeof m.fixed === "object"; // prettier-ignore

export function main() {
  let manifest = null;
  try {
    manifest = JSON.parse($("lesson-manifest").textContent);
  } catch (e) {
    manifest = null;
  }
  if (!manifestOk(manifest)) {
    $("ls-error").textContent = `This lesson's page is damaged (its manifest is not a live view's). ${REBUILD}`;
    $("ls-error").hidden = false;
    return;
  }
  const controls = manifest.controls;
  let link = readLink(location.search, location.hash);
  const flagsOf = (l) => ({ classroom: isTrue(l.values.get("classroom")), predict: isTrue(l.values.get("predict")),
    hide: hideNames(l.values.get("hide")) }); // prettier-ignore
  const flags = flagsOf(link);
  const hidden = new Set(flags.hide);
  document.body.classList.toggle("ls-classroom", flags.classroom);
  // the page's state, read by the tests: the setting on screen (by control key), how many were shown, the view
  const lesson = (window.grpoLesson = { shown: null, changes: 0, state: null, view: null });

  // ---- the view ----
  const view = (lesson.view = new LiveView($("ls-live"), { key: manifest.live }));

  // ---- controls: native elements with <label>s worded as in the app ----
  const inputs = {};
  const form = $("ls-controls");
  for (const c of controls) {
    const box = el("div", `ls-control ls-${c.kind}`);
    box.hidden = hidden.has(c.key);
    const id = `ls-${c.key}`;
    if (c.help) box.title = c.help;
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
        out.setAttribute("aria-label", c.label);
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
          if (!Number.isFinite(v)) return shownValue(Number(range.value));
          range.value = String(Math.min(Math.max(v, c.lo), c.hi));
          shownValue(Number(range.value));
          changed();
        });
      }
      box.append(label, range, out);
      inputs[c.key] = { get: () => (c.integer ? Math.round(Number(range.value)) : Number(range.value)),
        set: (v) => { range.value = String(v); shownValue(v); } }; // prettier-ignore
    } else if (c.kind === "choice") {
      const fs = el("fieldset");
      fs.append(el("legend", "", c.label));
      c.options.forEach((o, i) => {
        const r = el("input");
        Object.assign(r, { type: "radio", name: id, id: `${id}-${i}`, value: String(i) });
        // the option as the app writes it, and its caption ("0.0 (TRL default)"); a caption that already names the
        // option stands alone ("group std (GRPO)")
        const text = c.text.options[i];
        const caption = c.labels[i];
        const l = el("label", "ls-option");
        l.append(r, document.createTextNode(` ${!caption ? text : caption.startsWith(text) ? caption : `${text} (${caption})`}`));
        r.addEventListener("change", changed);
        fs.append(l);
      });
      box.append(fs);
      inputs[c.key] = { get: () => c.options[Number(fs.querySelector("input:checked").value)],
        set: (v) => { const i = c.options.indexOf(v); fs.querySelectorAll("input")[Math.max(i, 0)].checked = true; } }; // prettier-ignore
    } else {
      const label = el("label", "ls-flag-label");
      const box2 = el("input");
      Object.assign(box2, { type: "checkbox", id });
      box2.addEventListener("change", changed);
      label.append(box2, document.createTextNode(` ${c.label}`));
      box.append(label);
      inputs[c.key] = { get: () => box2.checked, set: (v) => (box2.checked = !!v) };
    }
    form.append(box);
  }
  const presets = $("ls-presets");
  presets.hidden = !manifest.presets.length || hidden.has("presets");
  for (const p of manifest.presets) {
    const b = el("button", "ls-preset", p.name);
    b.type = "button";
    const fixed = Object.keys(p.values).filter((k) => hidden.has(k)).sort();
    b.disabled = fixed.length > 0;
    if (fixed.length) b.title = `the link fixes ${fixed.join(", ")} (hide=${fixed.join(",")})`;
    b.addEventListener("click", () => {
      // every visible control to the preset's value, or to its default where the preset says nothing (the app's)
      const state = { ...current };
      for (const c of controls) if (!hidden.has(c.key)) state[c.key] = c.key in p.values ? p.values[c.key] : c.default;
      go(state);
    });
    presets.append(b);
  }

  // ---- the link ----
  let written = null; // the hash this page last wrote: its own hashchange is not a new link
  const query = readLink(location.search, "").values;
  function writeLink(state) {
    const kept = {}; // what differs from the default, and what the query says (the hash must override it)
    for (const c of controls) {
      if (state[c.key] !== c.default || query.has(c.key) || hidden.has(c.key)) kept[c.key] = urlText(state[c.key]);
    }
    const keep = { classroom: link.fromHash.has("classroom") && flags.classroom, predict: link.fromHash.has("predict") &&
      flags.predict, hide: link.fromHash.has("hide") ? [...hidden] : [] }; // prettier-ignore
    written = linkHash(kept, keep);
    if (location.hash.replace(/^#/, "") === written) return;
    try {
      history.replaceState(null, "", `${location.pathname}${location.search}${written ? "#" + written : ""}`);
    } catch (e) {
      location.hash = written; // a sandboxed frame or some file:// setups refuse replaceState
    }
  }

  const perSetting = (state) => {
    // std: the table and question of Exercise 15.4 for this G, computed at build time
    const key = manifest.static_key;
    return key ? manifest.static[String(state[key])] || null : null;
  };

  let current = null;
  function go(state) {
    current = state;
    lesson.state = state;
    for (const c of controls) inputs[c.key].set(state[c.key]);
    writeLink(state);
    const extra = perSetting(state);
    tables(extra ? extra.tables : []);
    const classroom = flags.classroom;
    const request = {
      view: manifest.live, config: configOf(controls, state, manifest.fixed), pinned: null, table: null,
      big: classroom, columns: classroom ? manifest.classroom.columns : manifest.columns, classroom,
      predict: flags.predict, question: extra ? extra.question : null, plotly_url: manifest.plotly,
      plotly_help: "Plotly.js should be in this lesson's folder: rebuild it with python -m sim lesson build.",
    }; // prettier-ignore
    view.show(request).then(() => {
      if (current !== state) return;
      lesson.shown = { ...state };
      lesson.changes += 1;
    });
  }

  function changed() {
    const state = {};
    for (const c of controls) state[c.key] = inputs[c.key].get(); // a control change leaves any preset
    go(state);
  }

  // tables computed at build time: every cell is text
  function tables(list) {
    const box = $("ls-tables");
    box.replaceChildren();
    for (const t of list) {
      const table = el("table", "ls-table");
      const head = table.createTHead().insertRow();
      for (const c of t.columns) head.append(el("th", "", c));
      const body = table.createTBody();
      for (const row of t.rows) {
        const tr = body.insertRow();
        for (const cell of row) tr.insertCell().textContent = cell;
      }
      box.append(el("h2", "", t.title), table);
      if (t.caption) box.append(el("p", "ls-caption", t.caption));
    }
  }

  function fromLink() {
    const { state, notes } = stateFromLink(controls, link.values);
    const note = $("ls-note");
    note.textContent = [...link.notes, ...notes].map((n) => (n.endsWith(".") ? n : `${n}.`)).join(" ");
    note.hidden = !note.textContent;
    go(state);
  }

  window.addEventListener("hashchange", () => {
    if (location.hash.replace(/^#/, "") === written) return; // the page's own rewrite
    const next = readLink(location.search, location.hash);
    const f = flagsOf(next);
    if (f.classroom !== flags.classroom || f.predict !== flags.predict || f.hide.join(",") !== [...hidden].join(",")) {
      location.reload();
      return;
    }
    link = next;
    fromLink();
  });
  fromLink();
}
