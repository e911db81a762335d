// A lesson's page (sim/lesson writes it; the lesson's one script, lesson.js, runs main()): a view computed in the
// page, drawn by the same ViewPage as the app's (assets/js/page.js), its setting in the link's hash; or a document
// sim recorded when the lesson was built (TinyLM's runs, the lab's tasks), drawn by the same DocView; or the contents
// page, the app's home document (sim/views/home.py).
//
// The setting lives in the link (the hash, which wins over the query), read by the app's rules (control_rules.js);
// the page follows the hash when it changes. ?classroom=1 gives the presenter sizes, ?hide=G,beta hides controls
// (hide=presets the presets), ?predict=1 asks each question before its answer. Nothing from the link or the data is
// rendered as markup: every text goes in with textContent; recorded data is parsed as JSON, never run.

import { DocView } from "./doc.js";
import { carryQuery, contentsProblem, isTrue, manifestProblem, parseDoc, readLink, REBUILD } from "./lesson_rules.js";
import { flagsOf, ViewPage } from "./page.js";

const $ = (id) => document.getElementById(id);
const PLOTLY_HELP = "Plotly.js should be in this lesson's folder: rebuild it with python -m sim lesson build.";

function fail(text) {
  const box = $("ls-error");
  box.textContent = text;
  box.hidden = false;
}

// The lesson's side of a ViewPage: the setting in the hash
export const HASH_HOST = {
  part: "hash",
  read: () => ({ search: location.search, hash: location.hash }),
  write(search, hash) {
    try {
      history.replaceState(history.state, "", `${location.pathname}${search}${hash}`);
    } catch (e) {
      location.hash = hash; // a sandboxed frame or some file:// setups refuse replaceState
    }
  },
};

export function main() {
  let manifest = null;
  try {
    manifest = JSON.parse($("lesson-manifest").textContent);
  } catch (e) {
    manifest = null;
  }
  if (manifest && manifest.kind === "contents") return contents(manifest);
  const bad = manifest === null ? "its manifest is not JSON" : manifestProblem(manifest);
  if (bad) return fail(`This lesson's page is damaged (${bad}). ${REBUILD}`);
  const flags = flagsOf(readLink(location.search, location.hash));
  document.body.classList.toggle("ls-classroom", flags.classroom);
  const host = { ...HASH_HOST, plotly_url: manifest.plotly, plotly_help: PLOTLY_HELP };

  if (manifest.kind === "recorded") {
    const [blocks, problem] = parseDoc($("ls-data").textContent);
    if (problem) return fail(`This lesson's data is damaged (${problem}). ${REBUILD}`);
    host.blocks = blocks;
  } else if ($("ls-data")) { // what sim read for a view computed in the page (TinyLM's records): its ctx.data
    try {
      host.data = JSON.parse($("ls-data").textContent);
    } catch (e) {
      return fail(`This lesson's data is damaged (it is not JSON). ${REBUILD}`);
    }
  }
  if (typeof manifest.trainer_script === "string") host.trainer_url = manifest.trainer_script; // beside this page
  new ViewPage($("ls-page"), manifest, host);
}

// The contents page (sim/views/home.py's document, as the app's home draws it): presenter sizes, and its links carry
// ?classroom=1, ?predict=1, ?hide=... (nothing else) to the lesson's pages; a page the lesson lacks is named as text
function contents(manifest) {
  const bad = contentsProblem(manifest);
  if (bad) return fail(`This lesson's contents page is damaged (${bad}). ${REBUILD}`);
  const [blocks, problem] = parseDoc($("ls-data").textContent);
  if (problem) return fail(`This lesson's data is damaged (${problem}). ${REBUILD}`);
  const { values } = readLink(location.search, location.hash); // the hash wins, as on a view's page
  const classroom = isTrue(values.get("classroom"));
  document.body.classList.toggle("ls-classroom", classroom);
  const box = $("ls-page");
  box.classList.toggle("ls-classroom", classroom);
  const carry = carryQuery(`?${new URLSearchParams([...values].map(([k, v]) => [k, String(v)])).toString()}`);
  new DocView(box, { classroom, pages: manifest.pages, carry: carry.replace(/^\?/, "") }).show(blocks);
}
