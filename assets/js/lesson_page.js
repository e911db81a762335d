// A lesson's page (sim/lesson writes it; the lesson's one script, lesson.js, runs main()): a view computed in the
// page, drawn by the same ViewPage as the app's (assets/js/page.js), its setting in the link's hash; or a document
// sim recorded when the lesson was built (TinyLM's runs, the lab's tasks), drawn by the same DocView. On the
// contents page it only carries the page's flags into the links.
//
// The setting lives in the link (the hash, which wins over the query), read by the app's rules (control_rules.js);
// the page follows the hash when it changes. ?classroom=1 gives the presenter sizes, ?hide=G,beta hides controls
// (hide=presets the presets), ?predict=1 asks each question before its answer. Nothing from the link or the data is
// rendered as markup: every text goes in with textContent; recorded data is parsed as JSON, never run.

import { carryQuery, isTrue, manifestProblem, parseDoc, readLink, REBUILD } from "./lesson_rules.js";
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
  if (!$("lesson-manifest")) {
    // the contents page: presenter sizes, and its links carry ?classroom=1, ?predict=1, ?hide=... (nothing else)
    const { values } = readLink(location.search, "");
    document.body.classList.toggle("ls-classroom", isTrue(values.get("classroom")));
    const carried = carryQuery(location.search);
    for (const a of document.querySelectorAll("a.ls-carry")) {
      const own = new URLSearchParams(a.search); // a question-mode link keeps its predict=1
      const out = new URLSearchParams(carried);
      for (const [k, v] of own) out.set(k, v);
      const text = out.toString().replaceAll("%2C", ",");
      a.search = text ? `?${text}` : "";
    }
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
  const flags = flagsOf(readLink(location.search, location.hash));
  document.body.classList.toggle("ls-classroom", flags.classroom);
  const host = { ...HASH_HOST, plotly_url: manifest.plotly, plotly_help: PLOTLY_HELP };

  if (manifest.kind === "recorded") {
    const [blocks, problem] = parseDoc($("ls-data").textContent);
    if (problem) return fail(`This lesson's data is damaged (${problem}). ${REBUILD}`);
    host.blocks = blocks;
  }
  new ViewPage($("ls-page"), manifest, host);
}
