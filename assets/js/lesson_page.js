// A lesson's page (sim/lesson writes it; the lesson's one script, lesson.js, runs main()): a view's controls as the
// app declares them (sim/views/doc.py View.manifest: keys, labels, ranges, presets), its document computed in the
// page for the setting on screen (assets/js/views.js, the twin of sim/views's `show`) or recorded by sim when the lesson
// was built, drawn by assets/doc.js. On the contents page it only carries the page's flags into the links.
//
// Every control takes any value of its range and step. The setting lives in the link (the hash, which wins over
// the query), read by the app's rules (control_rules.js) with the app's words for what it corrects; the page
// follows the hash when it changes. ?classroom=1 gives the presenter sizes, ?hide=G,beta hides controls
// (hide=presets the presets), ?predict=1 asks each question before its answer. Nothing from the link or the data is
// rendered as markup: every text goes in with textContent; recorded data is parsed as JSON, never run.

import { configOf, stateFromLink, urlText, valueText } from "./control_rules.js";
import { DocView } from "./doc.js";
import { carryQuery, hideNames, isTrue, linkHash, manifestProblem, parseDoc, picksFromLink, readLink, REBUILD } from "./lesson_rules.js";
import { SHOW } from "./views.js";

const $ = (id) => document.getElementById(id);
const PLOTLY_HELP = "Plotly.js should be in this lesson's folder: rebuild it with python -m sim lesson build.";
const PICKS_MAX = 1024; // a Picks control's numbers in a link: 1 .. this (the page keeps those up to its count)

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function fail(text) {
  $("ls-error").textContent = text;
  $("ls-error").hidden = false;
}

export function main() {
  if (!$("lesson-manifest")) {
    // the contents page: presenter sizes, and its links carry ?classroom=1, ?predict=1, ?hide=... (nothing else)
    const { values } = readLink(location.search, "");
    document.body.classList.toggle("ls-classroom", isTrue(values.get("classroom")));
    const carried = carryQuery(location.search);
    for (const a of document.querySelectorAll(".ls-views a")) a.search = carried;
    return;
  }
  let manifest = null;
  try {
    manifest = JSON.parse($("lesson-manifest").textContent);
  } catch (e) {
    manifest = null;
  }
  const bad = manifest === null ? "its manifest is not JSON" : manifestProblem(manifest);
  if (bad) return fail(`This lesson's page is damaged (${bad}). ${REBUILD}`);
  const controls = manifest.controls;
  const multi = controls.filter((c) => c.kind === "picks").map((c) => c.key);
  let link = readLink(location.search, location.hash, multi);
  const flagsOf = (l) => ({ classroom: isTrue(l.values.get("classroom")), predict: isTrue(l.values.get("predict")),
    hide: hideNames(l.values.get("hide")) }); // prettier-ignore
  const flags = flagsOf(link);
  const hidden = new Set(flags.hide);
  document.body.classList.toggle("ls-classroom", flags.classroom);
  // the page's state, read by the tests: the setting on screen (by control key), how many were shown, the view
  const lesson = (window.grpoLesson = { shown: null, changes: 0, state: null, doc: null });
  const doc = (lesson.doc = new DocView($("ls-doc"), { classroom: flags.classroom, predict: flags.predict,
    plotly_url: manifest.plotly, plotly_help: PLOTLY_HELP })); // prettier-ignore

  if (manifest.kind === "recorded") {
    const [blocks, problem] = parseDoc($("ls-data").textContent);
    if (problem) return fail(`This lesson's data is damaged (${problem}). ${REBUILD}`);
    doc.show(blocks);
    lesson.shown = {};
    lesson.changes += 1;
    return;
  }

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
      inputs[c.key] = { get: () => picked,
        set: (v, state) => {
          picked = [...v];
          draw(state[c.count]);
          box.hidden = hidden.has(c.key) || (c.when !== null && state[c.when[0]] !== c.when[1]);
        } }; // prettier-ignore
    } else {
      const label = el("label", "ls-flag-label");
      const check = el("input");
      Object.assign(check, { type: "checkbox", id });
      check.addEventListener("change", changed);
      label.append(check, document.createTextNode(` ${c.label}`));
      box.append(label);
      inputs[c.key] = { get: () => check.checked, set: (v) => (check.checked = !!v) };
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
  const query = readLink(location.search, "", multi).values;
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  function writeLink(state) {
    const kept = {}; // what differs from the default, and what the query says (the hash must override it)
    for (const c of controls) {
      if (!same(state[c.key], c.default) || query.has(c.key) || hidden.has(c.key)) {
        kept[c.key] = Array.isArray(state[c.key]) ? state[c.key].map(urlText) : urlText(state[c.key]);
      }
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

  let current = null;
  function go(state) {
    current = state;
    lesson.state = state;
    for (const c of controls) inputs[c.key].set(state[c.key], state);
    writeLink(state);
    const picks = Object.fromEntries(controls.filter((c) => c.kind === "picks").map((c) => [c.key,
      state[c.key].filter((i) => i <= state[c.count])])); // prettier-ignore
    let blocks;
    try {
      blocks = SHOW[manifest.view](configOf(controls, { ...state, ...picks }));
    } catch (err) {
      $("ls-error").replaceChildren(el("strong", "", "These settings cannot run:"), el("pre", "", String(err.message || err)));
      $("ls-error").hidden = false;
      return;
    }
    $("ls-error").hidden = true;
    doc.show(blocks).then(() => {
      if (current !== state) return; // a newer setting is on its way
      lesson.shown = { ...state };
      lesson.changes += 1;
    });
  }

  function changed() {
    const state = {};
    for (const c of controls) state[c.key] = inputs[c.key].get(); // a control change leaves any preset
    go(state);
  }

  function fromLink() {
    const { state, notes } = stateFromLink(controls.filter((c) => c.kind !== "picks"), link.values);
    for (const c of controls.filter((x) => x.kind === "picks")) {
      const raw = link.lists.get(c.key);
      if (raw === undefined) state[c.key] = [...c.default];
      else {
        const [picks, note] = picksFromLink(c.key, raw, PICKS_MAX);
        state[c.key] = picks;
        if (note) notes.push(note);
      }
    }
    const note = $("ls-note");
    note.textContent = [...link.notes, ...notes].map((n) => (n.endsWith(".") ? n : `${n}.`)).join(" ");
    note.hidden = !note.textContent;
    go(state);
  }

  window.addEventListener("hashchange", () => {
    if (location.hash.replace(/^#/, "") === written) return; // the page's own rewrite
    const next = readLink(location.search, location.hash, multi);
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
