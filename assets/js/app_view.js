// The app's side of a view (ui/view.py's one component): the same ViewPage as a lesson's (assets/js/page.js), its
// setting in the query as Streamlit's pages keep it, or a document the server computed (TinyLM's runs, a visitor's
// run or pool), drawn by the same DocView. A control move redraws in the page and sends nothing to the server;
// the server hears of the setting only when it has work to do for it: the student's lab code ("Use my lab code"),
// a document it computes for the setting (Your run, Your prompts, the Lab: `report`), or an export (`action`, on a
// click).
//
// Streamlit calls mount() again with new data on every script run: the ViewPage (its setting, its player's
// iteration, a revealed answer) or the DocView attached to the element is kept and updated.

import { classCode, startClass } from "./class_mode.js";
import { DocView } from "./doc.js";
import { isTrue, readLink } from "./lesson_rules.js";
import { ViewPage } from "./page.js";

const MOUNTED = new WeakMap(); // Streamlit's element -> {page} | {doc}
const REPORT_MS = 150; // the setting reaches the server this long after the last move (lab mode only)

// Presenter mode (?classroom=1, read by the link's rules like every flag): kept for the tab (Streamlit's navigation
// drops the query, so a page reached through it gets classroom=1 back in its address), put on the page's body
// (ui/page.py's styles scale what Streamlit draws under it; doc.css the renderer's), and the navigation folded once
// so that the projector's width goes to the charts (its arrow opens it). ?classroom=0 turns it off.
const PRESENTER = "grpo-presenter";
export function presenter() {
  const said = readLink(location.search, "").values.get("classroom");
  let on = said !== undefined ? isTrue(said) : sessionStorage.getItem(PRESENTER) === "1";
  try {
    if (said !== undefined) sessionStorage.setItem(PRESENTER, on ? "1" : "0");
  } catch (e) {
    on = on && said !== undefined; // no storage (a sandboxed frame): the link alone says
  }
  if (on && said === undefined) {
    const q = new URLSearchParams(location.search);
    q.set("classroom", "1");
    history.replaceState(history.state, "", `${location.pathname}?${q.toString().replaceAll("%2C", ",")}${location.hash}`);
  }
  const was = document.body.classList.contains(PRESENTER);
  document.body.classList.toggle(PRESENTER, on);
  if (on && !was) { // the sidebar folded once, as the page opens in presenter mode
    // Streamlit 1.67 marks an open sidebar with data-collapsed="false" and its fold button with aria-expanded="true"
    const fold = document.querySelector('[data-testid="stSidebar"]:not([data-collapsed="true"]) ' +
      '[data-testid="stSidebarCollapseButton"] button[aria-expanded="true"]');
    if (fold) fold.click();
  }
  return on;
}

export function mount(component) {
  const { data, parentElement, setStateValue, setTriggerValue } = component;
  data.classroom = presenter();
  let m = MOUNTED.get(parentElement);
  if (!m) {
    m = data.mode === "view" ? viewPage(parentElement, data, setStateValue, setTriggerValue) : docView(parentElement, data);
    MOUNTED.set(parentElement, m);
  }
  m.data = data;
  if (m.page && !m.moved) {
    m.page.update({ lab: data.lab || null, result: data.result || null, doc: data.doc || null });
    if (data.report && m.page.current) m.report(m.page.current); // lab mode just switched on: the server needs it
  } else if (m.doc) m.doc.show(data.blocks);
  return () => {
    if (m.cls) m.cls.destroy();
    (m.page || m.doc).destroy();
    MOUNTED.delete(parentElement);
  };
}

// A document the server computed: the renderer alone, at presenter sizes under ?classroom=1 as a view's page is
function docView(parent, data) {
  const box = document.createElement("div");
  box.className = data.classroom ? "ls-docpage ls-classroom" : "ls-docpage";
  parent.append(box);
  return { doc: new DocView(box, { classroom: !!data.classroom, plotly_url: data.plotly_url, app: true }) };
}

function viewPage(parent, data, setStateValue, setTriggerValue) {
  const m = {};
  let timer = 0;
  let sent = null;
  m.report = (state) => {
    if (!m.data || !m.data.report) return; // only a server that computes for the setting hears of it
    clearTimeout(timer);
    timer = setTimeout(() => {
      const text = JSON.stringify(state);
      if (text === sent) return;
      sent = text;
      setStateValue("values", state);
    }, REPORT_MS);
  };
  let asked = 0;
  const host = {
    part: "query",
    app: true,
    plotly_url: data.plotly_url,
    plotly_help: "",
    read: () => ({ search: location.search, hash: location.hash }),
    write: (search, hash) => history.replaceState(history.state, "", `${location.pathname}${search}${hash}`),
    report: (state) => m.report(state),
    action: (request) => setTriggerValue("action", { ...request, id: ++asked }),
    data: data.data || null, // what sim read for the view's document (TinyLM's records)
    trainer_url: data.trainer_url || "", // TinyLM's trainer script; its runs on this server
    tinylm_api: data.tinylm_api || "",
  };
  m.data = data;
  const code = classCode(location.search); // read before the page writes its setting into the address bar
  m.page = new ViewPage(parent, data.manifest, host);
  // Class mode (class_mode.js): a lecturer's, a student's, or null. A student's page follows the lecturer to another
  // view in place, with no script run (the address bar says where it is); the exports and the lab's numbers belong
  // to the page the server drew, so a page moved to another view has neither.
  const swap = (manifest, search) => {
    const to = new URL(`./${manifest.view}${search}`, location.href);
    history.replaceState(history.state, "", `${to.pathname}${to.search}`);
    m.page.destroy();
    m.moved = manifest.view !== data.manifest.view;
    m.page = new ViewPage(parent, manifest, m.moved ? { ...host, report: null, action: null } : host);
    return m.page;
  };
  m.cls = startClass(m.page, data.class_mode, code, swap);
  return m;
}
