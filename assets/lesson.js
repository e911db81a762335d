// GRPO Playground lesson: one view page of a static lesson (sim/lesson writes it; see sim/lesson/__init__.py).
//
// The page's manifest and every setting's data are inline JSON blocks (<script type="application/json">, which
// no browser runs): sim/ computed every number at build time. This script only selects: it reads the state from
// the link (lesson_rules.js, above in this file: the app's rules), snaps it to the grid, parses the setting's
// block with JSON.parse (which works from file://, where fetch() does not), checks its shape, and hands it to
// the same player the app uses (player.js). Nothing from the link or the data is ever rendered as markup:
// every text goes in with textContent.
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  if (!$("lesson-manifest")) {
    // the contents page: presenter sizes, and its links carry ?classroom=1, ?predict=1, ?hide=... (nothing else)
    const { values } = readLink(location.search, "");
    document.body.classList.toggle("ls-classroom", isTrue(values.get("classroom")));
    const carried = carryQuery(location.search);
    for (const a of document.querySelectorAll(".ls-views a")) a.search = carried;
    return;
  }
  const problemOf = (why) => new Error(`This lesson's page is damaged (${why}). ${REBUILD}`);
  let manifest;
  try {
    manifest = JSON.parse($("lesson-manifest").textContent);
  } catch (e) {
    manifest = null;
  }
  const manifestBad = manifest === null ? "its manifest is not JSON" : manifestProblem(manifest);
  if (manifestBad) {
    $("ls-error").textContent = problemOf(manifestBad).message;
    $("ls-error").hidden = false;
    return;
  }
  const note = $("ls-note");
  const playerBox = $("ls-player");

  // ---- data: one inline JSON block per setting, parsed when first shown ----
  const loaded = new Map(); // id -> entry
  window.grpoLesson = {
    shown: null, // id of the setting on screen (read by the tests)
    changes: 0,
    figuresDrawn: 0, // static chart draws done
  };

  function load(setting) {
    if (loaded.has(setting.id)) return Promise.resolve(loaded.get(setting.id));
    const block = document.getElementById(`ls-data-${setting.id}`);
    if (!block || block.type !== "application/json") {
      return Promise.reject(new Error(`This lesson is missing the data of setting ${shown(setting.id)}. ${REBUILD}`));
    }
    const [entry, problem] = parseEntry(block.textContent);
    if (problem) return Promise.reject(new Error(`This lesson's data for setting ${shown(setting.id)} is damaged (${problem}). ${REBUILD}`));
    loaded.set(setting.id, entry);
    return Promise.resolve(entry);
  }

  // ---- Plotly.js: one <script> from the lesson's folder, started before anything waits for it ----
  let plotlyLoading = null;
  function plotly() {
    if (window.Plotly) return Promise.resolve(window.Plotly);
    if (!plotlyLoading) {
      plotlyLoading = new Promise((resolve, reject) => {
        const s = document.createElement("script");
        s.src = manifest.plotly;
        s.onload = () => resolve(window.Plotly);
        s.onerror = () => {
          plotlyLoading = null;
          s.remove();
          reject(new Error(`Plotly.js could not be loaded from ${manifest.plotly}. Plotly.js should be in this lesson's folder: rebuild it with python -m sim lesson build.`));
        };
        // after the next paint: the page's text, controls and tables show before Plotly.js runs (~2 s of main thread)
        requestAnimationFrame(() => setTimeout(() => document.head.appendChild(s), 0));
      });
    }
    return plotlyLoading;
  }

  // ---- the link: query and hash, the hash winning; a repeated key takes its last value (lesson_rules.js) ----
  let link = readLink(location.search, location.hash);
  const params = link.values;
  const flagsOf = (l) => ({ classroom: isTrue(l.values.get("classroom")), predict: isTrue(l.values.get("predict")), hide: hideNames(l.values.get("hide")) });
  const flags = flagsOf(link);
  const classroom = flags.classroom;
  const predictMode = flags.predict;
  const hidden = new Set(flags.hide);
  document.body.classList.toggle("ls-classroom", classroom);

  const dims = manifest.dims;
  const dimKeys = new Set(dims.map((d) => d.key));
  const numeric = (d) => d.values.every((v) => typeof v === "number");
  const sameState = (a, b) => {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
  };
  const find = (state) => manifest.settings.find((s) => sameState(s.values, state));

  // A value from the link, snapped onto the grid: [value, refused text or null].
  function snap(dim, raw) {
    const dflt = manifest.defaults[dim.key];
    if (raw === undefined) return [dflt, null];
    if (numeric(dim)) {
      const x = decimal(raw);
      if (!Number.isFinite(x)) return [dflt, raw];
      let best = dim.values[0];
      for (const v of dim.values) if (Math.abs(v - x) < Math.abs(best - x)) best = v;
      return [best, best === x ? null : raw];
    }
    const hit = dim.values.find((v) => String(v) === raw);
    return hit === undefined ? [dflt, raw] : [hit, null];
  }

  function stateFromLink() {
    const state = {};
    const refused = [];
    for (const d of dims) {
      const [v, bad] = snap(d, params.get(d.key));
      state[d.key] = v;
      if (bad !== null) refused.push(`${d.key} = ${shown(bad)} is not in this lesson: showing ${d.names[d.values.indexOf(v)]}`);
    }
    // a preset's setting off the grid (lr_w = 0): kept only if the lesson has exactly that setting
    const extras = {};
    for (const [k, raw] of params) {
      if (dimKeys.has(k) || !manifest.extras.includes(k)) continue;
      extras[k] = Number.isFinite(decimal(raw)) ? decimal(raw) : raw;
    }
    if (Object.keys(extras).length && find({ ...state, ...extras })) Object.assign(state, extras);
    else for (const k of Object.keys(extras)) refused.push(`${k} = ${shown(params.get(k))} is not in this lesson`);
    return [state, [...link.notes, ...refused]];
  }

  // The hash keeps the setting and the flags the hash carried (?classroom=1 in the query stays in the query)
  let written = null; // the hash this page last wrote: its own hashchange is not a new link
  function writeLink(state) {
    const keep = { classroom: link.fromHash.has("classroom") && classroom, predict: link.fromHash.has("predict") && predictMode, hide: link.fromHash.has("hide") ? [...hidden] : [] };
    written = linkHash(state, keep);
    if (location.hash.replace(/^#/, "") === written) return;
    try {
      history.replaceState(null, "", `${location.pathname}${location.search}#${written}`);
    } catch (e) {
      location.hash = written; // a sandboxed frame or some file:// setups refuse replaceState
    }
  }

  // ---- controls: native elements with <label>s worded as in the app ----
  const controls = $("ls-controls");
  const inputs = {};
  function buildControls() {
    for (const d of dims) {
      const box = document.createElement("div");
      box.className = `ls-control ls-${d.control}`;
      box.hidden = hidden.has(d.key);
      const id = `ls-${d.key}`;
      if (d.control === "radio") {
        const fs = document.createElement("fieldset");
        const legend = document.createElement("legend");
        legend.textContent = d.label;
        fs.append(legend);
        d.values.forEach((v, i) => {
          const r = document.createElement("input");
          r.type = "radio";
          r.name = id;
          r.id = `${id}-${i}`;
          r.value = String(i);
          const l = document.createElement("label");
          l.htmlFor = r.id;
          l.textContent = d.names[i];
          r.addEventListener("change", changed);
          fs.append(r, l);
        });
        box.append(fs);
        inputs[d.key] = { get: () => Number(fs.querySelector("input:checked").value), set: (i) => (fs.querySelectorAll("input")[i].checked = true) };
      } else {
        const label = document.createElement("label");
        label.htmlFor = id;
        label.textContent = d.label;
        let el;
        if (d.control === "range") {
          el = document.createElement("input");
          el.type = "range";
          el.min = "0";
          el.max = String(d.values.length - 1);
          el.step = "1";
          const out = document.createElement("output");
          out.htmlFor = id;
          el.addEventListener("input", () => {
            out.textContent = d.names[Number(el.value)];
            el.setAttribute("aria-valuetext", d.names[Number(el.value)]);
            changed();
          });
          box.append(label, el, out);
          inputs[d.key] = {
            get: () => Number(el.value),
            set: (i) => {
              el.value = String(i);
              out.textContent = d.names[i];
              el.setAttribute("aria-valuetext", d.names[i]);
            },
          };
        } else {
          el = document.createElement("select");
          d.names.forEach((name, i) => {
            const o = document.createElement("option");
            o.value = String(i);
            o.textContent = name;
            el.append(o);
          });
          el.addEventListener("change", changed);
          box.append(label, el);
          inputs[d.key] = { get: () => Number(el.value), set: (i) => (el.value = String(i)) };
        }
        el.id = id;
      }
      controls.append(box);
    }
    const presets = $("ls-presets");
    presets.hidden = !manifest.presets.length || hidden.has("presets");
    for (const p of manifest.presets) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "ls-preset";
      b.textContent = p.name;
      b.addEventListener("click", () => go(p.values));
      presets.append(b);
    }
  }

  function showControls(state) {
    for (const d of dims) inputs[d.key].set(Math.max(0, d.values.indexOf(state[d.key])));
  }

  function changed() {
    const state = {};
    for (const d of dims) state[d.key] = d.values[inputs[d.key].get()]; // a control change leaves any preset
    go(state);
  }

  // ---- predict first: the answer is in the page, as in any static quiz ----
  let revealed = null; // id of the setting whose answer was revealed
  function predictBox(questions, then) {
    const box = $("ls-predict");
    box.replaceChildren();
    box.hidden = false;
    const ask = (i) => {
      const q = questions[i];
      const p = document.createElement("p");
      const b = document.createElement("strong");
      b.textContent = "Predict first. ";
      p.append(b, document.createTextNode(q.question));
      const reveal = document.createElement("button");
      reveal.type = "button";
      reveal.textContent = "Reveal";
      reveal.disabled = true;
      const hint = document.createElement("p");
      hint.className = "ls-caption";
      hint.textContent = "The answer (and the charts) appear once you have guessed.";
      const part = [p];
      let verdict;
      if (q.kind === "choice") {
        const fs = document.createElement("fieldset");
        fs.className = "ls-choice";
        const legend = document.createElement("legend");
        legend.textContent = "Your answer";
        fs.append(legend);
        q.options.forEach((o, j) => {
          const r = document.createElement("input");
          r.type = "radio";
          r.name = `ls-choice-${i}`;
          r.id = `ls-choice-${i}-${j}`;
          r.value = String(j);
          r.addEventListener("change", () => (reveal.disabled = false));
          const l = document.createElement("label");
          l.htmlFor = r.id;
          l.textContent = o;
          fs.append(r, l);
        });
        part.push(fs);
        verdict = () => {
          const pick = q.options[Number(fs.querySelector("input:checked").value)];
          const right = pick === q.answer;
          return [right, right ? `Right: ${q.answer}.` : `Not quite: you picked “${pick}”; the chapter's answer is ${q.answer}.`];
        };
      } else {
        const label = document.createElement("label");
        label.textContent = "Your guess ";
        const input = document.createElement("input");
        input.type = "number";
        input.id = i ? `ls-guess-${i}` : "ls-guess";
        label.htmlFor = input.id;
        input.addEventListener("input", () => (reveal.disabled = !Number.isFinite(input.valueAsNumber)));
        part.push(label, input);
        verdict = () => {
          const g = input.valueAsNumber;
          const off = Math.abs(g - q.answer);
          const close = off <= q.tolerance;
          return [close, `Your guess ${g}, the answer ${q.answer_text}: off by ${off.toFixed(q.digits)}, ${close ? "close" : "not within"} ±${q.tolerance_text}.`];
        };
      }
      part.push(reveal, hint);
      reveal.addEventListener("click", () => {
        const [good, text] = verdict();
        const line = document.createElement("p");
        line.className = good ? "ls-close" : "ls-far";
        line.textContent = `${text}${q.explain ? ` ${q.explain}` : ""}`;
        for (const e of part.slice(1)) e.remove();
        p.after(line);
        if (i + 1 < questions.length) ask(i + 1);
        else revealed = then();
      });
      box.append(...part);
    };
    ask(0);
  }

  // ---- show a setting ----
  let current = null;
  function go(state) {
    current = state;
    showControls(state);
    writeLink(state);
    const setting = find(state);
    if (!setting) return fail(new Error("This setting is not in the lesson."));
    load(setting).then(
      (entry) => current === state && render(setting, entry),
      (err) => current === state && fail(err)
    );
  }

  function fail(err) {
    playerBox.hidden = true;
    $("ls-error").textContent = err.message;
    $("ls-error").hidden = false;
  }

  function render(setting, entry) {
    try {
      draw(setting, entry);
    } catch (e) {
      fail(new Error(`This lesson's data for setting ${shown(setting.id)} cannot be shown (${shown(e.message)}). ${REBUILD}`));
    }
  }

  function draw(setting, entry) {
    $("ls-error").hidden = true;
    const data = entry.payload && { ...entry.payload, plotly_url: manifest.plotly, classroom };
    if (data) {
      data.plotly_help = "Plotly.js should be in this lesson's folder: rebuild it with python -m sim lesson build.";
      if (classroom) {
        data.columns = manifest.classroom.columns || data.columns;
        if (manifest.classroom.height) data.charts = data.charts.map((c) => ({ ...c, height: manifest.classroom.height }));
      }
    }
    // a view without charts (payload null) shows its text and tables only
    const show = (withAbove) => {
      if (withAbove) $("ls-above").textContent = entry.above;
      $("ls-below").textContent = entry.below;
      tables(entry.tables || []);
      figures(entry.figures || []);
      playerBox.hidden = !data;
      // the player loads Plotly.js itself (and speeds up its array lookups); a view has a player or static charts
      if (data) window.grpoMountPlayer({ data, parentElement: playerBox, setStateValue: () => {} });
      window.grpoLesson.shown = setting.id;
      window.grpoLesson.changes += 1;
      return setting.id;
    };
    if (predictMode && entry.predict && revealed === null) {
      // nothing that holds the answer is shown before the guess: the charts, tables and (without charts) the text
      playerBox.hidden = true;
      $("ls-above").textContent = data ? entry.above : "";
      $("ls-below").textContent = "";
      tables([]);
      figures([]);
      predictBox(entry.predict, () => show(true));
    } else {
      if (setting.id !== revealed) $("ls-predict").hidden = true;
      show(true);
    }
  }

  // tables computed at build time: every cell is text
  function tables(list) {
    const box = $("ls-tables");
    box.replaceChildren();
    for (const t of list) {
      const h = document.createElement("h2");
      h.textContent = t.title;
      const table = document.createElement("table");
      table.className = "ls-table";
      const head = table.createTHead().insertRow();
      for (const c of t.columns) {
        const th = document.createElement("th");
        th.textContent = c;
        head.append(th);
      }
      const body = table.createTBody();
      for (const row of t.rows) {
        const tr = body.insertRow();
        for (const cell of row) tr.insertCell().textContent = cell;
      }
      box.append(h, table);
      if (t.caption) {
        const c = document.createElement("p");
        c.className = "ls-caption";
        c.textContent = t.caption;
        box.append(c);
      }
    }
  }

  // ---- static charts (sim/lesson/figures.py): series over any x, drawn once per setting ----
  const FONT = classroom ? { tick: 18, axis: 20, legend: 18, title: 24 } : { tick: 13, axis: 14, legend: 13, title: 17 }; // ui/page.py's FONT
  const orNone = (v) => (v === null ? undefined : v);
  // an evenly spaced x series arrives as {start, step, n} (sim/lesson/figures.py): laid out, not computed
  const axisValues = (x) => (Array.isArray(x) ? x : Array.from({ length: x.n }, (_, i) => Number((x.start + i * x.step).toFixed(9))));
  function figTraces(fig) {
    return fig.traces.map((t) => {
      if (t.kind === "bars") {
        const marker = { color: t.colors, opacity: t.opacity };
        if (t.hatch) marker.pattern = { shape: t.hatch };
        return { type: "bar", x: t.x, y: t.y, name: t.name, marker };
      }
      const tr = { type: "scatter", mode: t.markers ? "markers" : "lines", x: axisValues(t.x), y: t.y, name: t.name };
      const color = orNone(t.color);
      if (t.markers) {
        tr.marker = { size: t.size, color };
        if (t.outline) tr.marker.line = { width: 2, color: t.outline };
      } else tr.line = { color, width: t.width, dash: t.dash || "solid" };
      if (!t.hover) tr.hoverinfo = "skip";
      return tr;
    });
  }
  function figLayout(fig) {
    const axis = (title, r) => ({ title: { text: title, font: { size: FONT.axis } }, tickfont: { size: FONT.tick }, automargin: true, ...(r ? { range: r, autorange: false } : { autorange: true }) });
    const shapes = [
      ...fig.bands.map(([x0, x1, color]) => ({ type: "rect", xref: "x", yref: "paper", x0, x1, y0: 0, y1: 1, fillcolor: color, line: { width: 0 }, layer: "below" })),
      ...fig.vlines.map((x) => ({ type: "line", xref: "x", yref: "paper", x0: x, x1: x, y0: 0, y1: 1, line: { dash: "dot", width: 1.5, color: "#444" } })),
    ];
    return {
      title: { text: fig.title, font: { size: FONT.title } }, height: fig.height, margin: { l: 60, r: 20, t: 50, b: 30 },
      font: { size: FONT.tick, family: "system-ui, sans-serif", color: "#31333f" }, hovermode: "x unified", hoverlabel: { font: { size: FONT.tick } },
      showlegend: fig.legend, legend: { orientation: "h", yanchor: "top", y: -0.3, x: 0, xanchor: "left", font: { size: FONT.legend } },
      xaxis: axis(fig.x_title, fig.x_range), yaxis: axis(fig.y_title, fig.y_range), barmode: fig.barmode, shapes,
      paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "#ffffff", uirevision: "keep",
    }; // prettier-ignore
  }
  let figShape = null;
  let figPlots = [];
  let figDraw = 0;
  function figures(rows) {
    const box = $("ls-figures");
    const shape = JSON.stringify(rows.map((r) => [r.heading, r.columns, r.figures.length]));
    const draw = ++figDraw;
    if (shape !== figShape) {
      // a new layout of sections: new plots (a setting of the same view keeps them, and Plotly.react updates them)
      if (window.Plotly) for (const d of figPlots) window.Plotly.purge(d);
      box.replaceChildren();
      figPlots = [];
      figShape = shape;
      rows.forEach((row, r) => {
        const section = document.createElement("section");
        section.className = "ls-figsection";
        const h = document.createElement("h2");
        const text = document.createElement("p");
        text.className = "ls-text";
        const grid = document.createElement("div");
        grid.className = "ls-figrow";
        grid.style.gridTemplateColumns = `repeat(${row.columns}, minmax(0, 1fr))`;
        const cap = document.createElement("p");
        cap.className = "ls-caption";
        cap.id = `ls-figcaption-${r}`;
        for (let i = 0; i < row.figures.length; i++) {
          const d = document.createElement("div");
          d.className = "ls-plot";
          // a figure named by its chart's title (below), the row's caption its text equivalent
          d.setAttribute("role", "figure");
          d.setAttribute("aria-describedby", cap.id);
          grid.append(d);
          figPlots.push(d);
        }
        section.append(h, text, grid, cap);
        box.append(section);
      });
    }
    rows.forEach((row, i) => {
      const [h, text, , cap] = box.children[i].children;
      for (const [e, t] of [[h, row.heading], [text, row.text], [cap, row.caption]]) {
        e.textContent = t;
        e.hidden = !t;
      }
    });
    if (!rows.length) return;
    const figs = rows.flatMap((r) => r.figures);
    figs.forEach((f, i) => figPlots[i].setAttribute("aria-label", f.title));
    plotly().then(
      (P) => {
        if (draw !== figDraw) return; // a newer setting is on its way
        return Promise.all(figs.map((f, i) => P.react(figPlots[i], figTraces(f), figLayout(f), { displaylogo: false, responsive: true }))).then(() => {
          if (draw === figDraw) window.grpoLesson.figuresDrawn += 1;
        });
      },
      (err) => draw === figDraw && fail(err)
    );
  }

  function follow() {
    const [state, refused] = stateFromLink();
    note.textContent = refused.join(". ");
    note.hidden = !refused.length;
    go(state); // Plotly.js is loaded once the setting is parsed: text and tables show before it runs
  }

  // A new link in the same page (the address bar, a same-page link, an iframe's src): follow it. A change of
  // the page's flags (presenter sizes, hidden controls, predict) rebuilds the page: reload it.
  window.addEventListener("hashchange", () => {
    if (location.hash.replace(/^#/, "") === written) return; // the page's own rewrite
    const next = readLink(location.search, location.hash);
    const f = flagsOf(next);
    if (f.classroom !== classroom || f.predict !== predictMode || f.hide.join(",") !== [...hidden].join(",")) {
      location.reload();
      return;
    }
    link = next;
    for (const k of [...params.keys()]) params.delete(k);
    for (const [k, v] of next.values) params.set(k, v);
    follow();
  });

  buildControls();
  follow();
})();
