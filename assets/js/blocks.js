// The blocks of a document (sim/views/doc.py's, as assets/js/doc.js draws them), built in the page: one function
// per kind, for every document the browser writes (assets/js/views.js, tinylm_views.js).
//
//   [heading("The chapter's table"), table("no_signal_table", ["p", "G = 8"], rows), caption("Read it from both ends.")]

export const heading = (text, level = 2) => ({ kind: "heading", text, level });
export const text = (t, md = null) => ({ kind: "text", text: t, md });
export const formula = (latex, t) => ({ kind: "formula", latex, text: t });
// a link to another page of the playground (a lesson names a page it does not have as "in the app only")
export const link = (page, label, o = {}) => ({ kind: "link", page, label, what: o.what ?? "", before: o.before ?? "",
  query: o.query ?? {}, also: o.also ?? [] }); // prettier-ignore
// a caption; `given`: its numbers that no chart above it draws (the chapter's, a setting), for the browser tests
export const caption = (t, given = null) => ({ kind: "caption", text: t, ...(given ? { given: given.map(String) } : {}) });
export const note = (t, tone = "info") => ({ kind: "note", text: t, tone });
export const metrics = (items) => ({ kind: "metrics", items: items.map((i) => i.map(String)) });
// charts drawn whole; with T > 1 the player replays them over T iterations
export const charts = (key, list, columns = 1, T = 1) => ({ kind: "charts", key, charts: list, columns, T });
export const table = (key, columns, rows, title = null) => ({ kind: "table", key, title, columns, rows });
export const columns = (...cols) => ({ kind: "columns", columns: cols });
export const live = (key, request) => ({ kind: "live", key, request });
export const QUESTION = { kind: "number", options: [], tolerance: null, unit: null, explain: null, fmt: ".4g",
  lo: null, hi: null }; // prettier-ignore
export const ask = (key, question, answer, o, then) => ({ kind: "ask", key, question: { ...QUESTION, question, answer, ...o },
  then }); // prettier-ignore
