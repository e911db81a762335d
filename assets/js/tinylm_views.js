// TinyLM's page, in both hosts: the reader's own GRPO run (a `trainer` block: assets/js/tinylm_trainer_view.js runs
// it and draws it with live_blocks()), then both presets as recorded over seeds, then the default run replayed.
// Written once, here: the charts and words of a live run and of the records. The records are data sim reads from
// assets/data (sim/views/tinylm.py `data`: the presets' runs over seeds, the replayed run, the TRL run, the presets'
// words); the trainer computes in the page (assets/js/tinylm_run.js, proved equal to sim/tinylm).
//
//   SHOW.tinylm(fields, {data})   -> [trainer block, ...the records' blocks]
//   live_blocks(snapshot, {preset, presets, trl})   -> a run's metrics, charts, latest groups and results

import { caption, charts, columns, heading, metrics, note, table, text } from "./blocks.js";
import { Band, Chart, COLORS, Line, read, rgba } from "./chart_spec.js";
import { format as f } from "./numfmt.js";

const K_TICKS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];
const ks = (n) => Float64Array.from({ length: n }, (_, i) => i + 1);
const last = (a) => a[a.length - 1];
export function median(values) { // statistics.median
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
const g = (x) => f(x, "g"); // a count or a difference of counts, no decimals to choose

// ---- charts ----

// pass@k against log k (ticks at the powers of 2), each curve's value marked and labelled at the largest k.
// curves: [name, pass@k for k = 1..n, colour]; bands: [lower, upper, colour] shaded ranges
export function passk_chart(n, curves, { title, bands = [], height = 380 }) {
  const x = ks(n);
  const traces = bands.map(([lo, hi, color]) => Band(lo, hi, "", { x, color: rgba(color, 0.2) }));
  const ends = curves.map(([, c]) => last(c));
  curves.forEach(([name, curve, color], i) => {
    traces.push(Line(curve, name, { x, reveal: "full", color, width: 3 }));
    const other = Math.max(...ends.filter((_, j) => j !== i), 0);
    const above = last(curve) > other || (last(curve) === other && i === curves.length - 1); // the higher label on top
    traces.push(Line([last(curve)], `${name} pass@${n}`, { x: [n], reveal: "full", mode: "markers", size: 12,
      symbol: "diamond", color, showlegend: false, text: [`${name} ${f(last(curve), ".3f")}`],
      text_position: above ? "top left" : "bottom left" })); // prettier-ignore
  });
  return Chart(title, traces, { x_title: "k (log scale)", y_title: "pass@k", y_range: [0, 1.02], height, x_log: true,
    x_ticks: K_TICKS.filter((k) => k <= n) }); // prettier-ignore
}

// GRPO's pass@k minus SFT's, one line per seed: above 0 GRPO solves more within k samples, below 0 fewer; where a
// line crosses 0 the two curves cross. Zoomed: at k = 1 the lines start far above the top (GRPO leads by ~0.3); the
// large-k end is what the debate is about.
export function gap_chart(rows) {
  const n = rows[0].pass_at_k_after.length;
  const lines = rows.map((r) => Line(r.pass_at_k_after.map((a, k) => a - r.pass_at_k_before[k]), `seed ${r.seed}`,
    { x: ks(n), reveal: "full", showlegend: false })); // prettier-ignore
  return Chart("GRPO − SFT pass@k, per seed (zoomed)", lines, { x_title: "k (log scale)", y_title: "difference",
    y_range: [-0.06, 0.15], height: 260, x_log: true, x_ticks: K_TICKS.filter((k) => k <= n), hlines: [[0, "", "dot"]] }); // prettier-ignore
}

// ---- which side of the pass@k debate runs show ----

export const SIDES = {
  widened: "GRPO widened coverage (more problems solved within 64 samples than SFT: the other side of the debate)",
  narrowed: "GRPO narrowed coverage (fewer problems solved within 64 samples than SFT: the chapter's lab)",
  mixed: "The seeds disagree on what GRPO did at large k",
};

// sim.tinylm.figures.side: judged on coverage at k = 64 (medians over the rows): "widened" when GRPO's pass@64 is
// higher or fewer problems are never solved (and neither says the opposite), "narrowed" the other way, else "mixed"
export function side(rows) {
  const change = (key) => median(rows.map((r) => r[`${key}_after`])) - median(rows.map((r) => r[`${key}_before`]));
  const wider = [change("pass_at_64"), -change("never_solved")];
  if (Math.max(...wider) > 0 && Math.min(...wider) >= 0) return "widened";
  if (Math.min(...wider) < 0 && Math.max(...wider) <= 0) return "narrowed";
  return "mixed";
}

// A run's figures as the records keep them (sim.tinylm.figures.seed_row, its numbers)
export function seed_row(result) {
  return { seed: result.config.grpo.seed, pass_at_1_before: result.pass_at_1_before, pass_at_1_after: result.pass_at_1_after,
    pass_at_64_before: last(result.pass_at_k_before), pass_at_64_after: last(result.pass_at_k_after),
    never_solved_before: result.never_solved_before.length, never_solved_after: result.never_solved_after.length,
    crossover_k: result.crossover_k }; // prettier-ignore
}

// Which side these runs show and why: the side, the figures behind it (medians over the rows; pass@1 and pass@64 read
// off `chart`, the pass@k chart it sits under, lines "SFT" and "GRPO") and the preset's reason when they show the
// side the preset's records show (a run with other settings may not). presets: {name: {title, why, side}}.
export function side_caption(rows, preset, chart, presets) {
  const med = (key) => median(rows.map((r) => r[key]));
  const crossed = rows.map((r) => r.crossover_k).filter((k) => k !== null);
  const where = rows.length > 1 ? `the curves cross in ${crossed.length} of ${rows.length} seeds`
    : crossed.length ? `the curves cross at k ≈ ${f(crossed[0], ".1f")}` : "the curves do not cross"; // prettier-ignore
  const at = (line, end) => read(chart, line, end, ".3f");
  let words = `${SIDES[side(rows)]}: pass@1 ${at("SFT", "first")} → ${at("GRPO", "first")}, pass@64 ${at("SFT", "last")} ` +
    `→ ${at("GRPO", "last")}, never solved ${g(med("never_solved_before"))} → ${g(med("never_solved_after"))}` +
    (rows.length > 1 ? " (medians)" : "") + `, ${where}.`; // prettier-ignore
  const p = presets[preset];
  if (p && p.side === side(rows)) words += ` Why: ${p.title}: ${p.why}.`;
  else if (p) words += ` Unlike the recorded ${preset} runs (${p.side} coverage): its settings or seed differ.`;
  // what the chart does not draw: the never-solved counts, the seeds, k = 64
  chart.given.push(g(med("never_solved_before")), g(med("never_solved_after")), String(rows.length), String(crossed.length),
    "64", ...crossed.map((k) => f(k, ".1f"))); // prettier-ignore
  return words;
}

// ---- the records (both presets over seeds; the default run replayed) ----

const tableRow = (r) => [r.seed, `${f(r.pass_at_1_before, ".3f")} → ${f(r.pass_at_1_after, ".3f")}`,
  `${f(r.pass_at_64_before, ".3f")} → ${f(r.pass_at_64_after, ".3f")}`, `${r.never_solved_before} → ${r.never_solved_after}`,
  r.crossover_k === null ? "none" : f(r.crossover_k, ".1f")]; // prettier-ignore

function preset_blocks(name, fig, presets) {
  const head = { widened: "coverage widens", narrowed: "coverage narrows" }[fig.side] || "seeds disagree";
  const rows = fig.runs;
  const out = [heading(`${name}: ${head}`, 3)];
  const before = fig.curves.pass_at_k_before;
  const after = fig.curves.pass_at_k_after;
  const chart = passk_chart(before.median.length, [["SFT", before.median, COLORS.grey], ["GRPO", after.median, COLORS.main]],
    { title: `pass@k, median of ${rows.length} seeds (band: their range)`, height: 340,
      bands: [[before.min, before.max, COLORS.grey], [after.min, after.max, COLORS.main]] }); // prettier-ignore
  out.push(charts(`tl_rec_${name}`, [chart, gap_chart(rows)]));
  const [b, a] = [median(rows.map((r) => r.never_solved_before)), median(rows.map((r) => r.never_solved_after))];
  out.push(metrics([["Never solved: SFT", g(b)], ["after GRPO", g(a), f(a - b, "+g")]]));
  const seed0 = rows[0];
  if (seed0.never_solved_problems_after) {
    out.push(text(`Never solved, seed ${seed0.seed}: SFT ${seed0.never_solved_problems_before.join(", ") || "none"}; ` +
      `GRPO ${seed0.never_solved_problems_after.join(", ") || "none"}`)); // prettier-ignore
  }
  out.push(caption(side_caption(rows, name, chart, presets)));
  return out;
}

// The replayed run's charts: its live metrics over its iterations (a gap where one was not logged), held-out pass@1
// and kl held at their last check
export function run_charts(record) {
  const m = record.metrics;
  const T = record.iterations.length;
  const every = record.pass_at_1.length > 1 ? record.pass_at_1[1][0] - record.pass_at_1[0][0] : T;
  const series = (values) => Float64Array.from(values, (v) => (v === null ? NaN : v));
  const held = (checks) => { // (T+1,) the value at the last check at or before each iteration (NaN before the first)
    const out = new Float64Array(T + 1).fill(NaN);
    checks.forEach(([i, v], j) => out.fill(v, i, j + 1 < checks.length ? checks[j + 1][0] : T + 1));
    return out;
  };
  const kl = record.iterations.map((i, j) => [i, m.kl[j]]).filter(([, v]) => v !== null);
  return [
    Chart("Mean reward of the sampled answers", [Line(series(m.reward), "reward", { x0: 1, color: COLORS.main })],
      { y_title: "reward", y_range: [0, 1] }),
    Chart(`Held-out pass@1 (exact, checked every ${every} iterations)`,
      [Line(held(record.pass_at_1), "pass@1 at the last check", { color: COLORS.good, width: 3 })],
      { y_title: "pass@1", y_range: [0, 1] }),
    Chart("Groups with zero reward std (no gradient)",
      [Line(series(m.frac_reward_zero_std), "frac_reward_zero_std", { x0: 1, color: COLORS.grey })],
      { y_title: "share of groups", y_range: [0, 1] }),
    Chart("Entropy and KL to the reference", [Line(series(m.entropy), "entropy", { x0: 1, color: COLORS.pin }),
      Line(held(kl), "kl (at the last check)", { color: COLORS.bad })], { y_title: "nats" }),
  ]; // prettier-ignore
}

// The default run replayed, its pass@1 said once: the exact figure its chart draws, in the text and in the table's
// first row (the other rows are pass@k estimated from its samples, which at k = 1 would be a second, sampled figure)
function replay(record) {
  const T = record.iterations.length;
  const p1 = record.pass_at_1;
  const [b, a] = [record.pass_at_k_before, record.pass_at_k_after];
  const n = Math.min(b.length, a.length);
  const rows = [["1 (exact)", f(p1[0][1], ".3f"), f(last(p1)[1], ".3f")],
    ...[2, 4, 8, 16, 32, 64].filter((k) => k <= n).map((k) => [k, f(b[k - 1], ".3f"), f(a[k - 1], ".3f")])]; // prettier-ignore
  return [
    heading("The default run, replayed"),
    text(`The shipped default run (sim's trainer, seed 0), recorded with ${record.command}: ${T} GRPO iterations; ` +
      `held-out pass@1 ${f(p1[0][1], ".3f")} at the start, ${f(last(p1)[1], ".3f")} at iteration ${last(p1)[0]}. Press Play ` +
      "to replay its live metrics; nothing is trained while it plays."), // prettier-ignore
    charts("tinylm_run", run_charts(record), 2, T),
    table("tinylm_run_passk", ["k", "SFT", "GRPO"], rows,
      `This run: held-out pass@k before (SFT) and after GRPO (k ≥ 2: from ${n} samples per problem)`),
  ];
}

export function recorded(data) {
  const figs = data && data.figures ? Object.entries(data.figures) : [];
  if (!figs.length) return [note("The recorded runs (assets/data/tinylm_*.json) are missing.", "warning")];
  const seeds = Math.max(...figs.map(([, fig]) => fig.runs.length));
  const out = [
    heading(`Both sides of the debate, recorded: two presets, ${seeds} GRPO seeds each`),
    text("Same SFT checkpoint, same settings, one switch: whether GRPO's training prompts include the teacher's " +
      "blind-spot problems (ripple carries such as 45+57, which SFT gets right about 2 % of the time)."),
    columns(...figs.map(([name, fig]) => preset_blocks(name, fig, data.presets))),
    columns(...figs.map(([name, fig]) => [table(`tl_seeds_${name}`, ["seed", "pass@1", "pass@64", "never solved", "cross at k"],
      fig.runs.map(tableRow), `${name}, per seed`), caption(fig.summary)])), // prettier-ignore
  ];
  return data.run ? [...out, ...replay(data.run)] : out;
}

// ---- a live run (the trainer's snapshot: sim/tinylm/job.py's TrainingJob.snapshot, or the browser's) ----

// the live charts, two to a row: one metric each (reward with held-out pass@1)
export const LIVE = [["reward", "pass_at_1"], ["entropy"], ["kl"], ["frac_reward_zero_std"], ["completions/mean_length"],
  ["grad_norm"], ["clip_ratio/region_mean"], ["step_time"]]; // prettier-ignore

// One live metric against iteration over the whole run (0 .. its iterations): the axis spans the run from its first
// draw, so a live chart fills in rather than rescaling; with `trl` (the recorded TRL run) its reward and pass@1 beside
export function metric_chart(snap, names, trl = null) {
  const [name] = names;
  const hist = snap.history.filter((m) => m[name] !== undefined && m[name] !== null); // kl: every few with β = 0
  const lines = [Line(hist.map((m) => m[name]), name, { x: hist.map((m) => m.iteration), reveal: "full", color: COLORS.main })];
  if (names.includes("pass_at_1") && snap.pass_at_1.length) {
    lines.push(Line(snap.pass_at_1.map(([, p]) => p), "held-out pass@1", { x: snap.pass_at_1.map(([i]) => i),
      reveal: "full", color: COLORS.good, width: 3 })); // prettier-ignore
  }
  if (trl && name === "reward") {
    lines.push(Line(trl.reward, "reward, TRL (recorded)", { x: trl.iterations, reveal: "full", color: COLORS.pin, dash: "dot" }));
  }
  if (trl && names.includes("pass_at_1")) {
    lines.push(Line(trl.pass_at_1.map(([, p]) => p), "held-out pass@1, TRL (recorded)", { x: trl.pass_at_1.map(([i]) => i),
      reveal: "full", color: COLORS.pin, width: 3, dash: "dash" })); // prettier-ignore
  }
  const end = Math.max(snap.iterations, ...lines.flatMap((l) => Array.from(l.x.v)));
  return Chart(name, lines, { x_title: "iteration", y_title: name, height: 260, x_range: [0, end + 0.5] });
}

const STAGE = { queued: "waiting", starting: "starting", sft: "training SFT", grpo: "GRPO", eval: "evaluating pass@k" };
const LIVE_STATES = ["queued", "starting", "sft", "grpo", "eval"];

// 10 minutes, 1 minute 30 s, 45 s: a limit or a time left, to the second
export function duration(seconds) {
  const t = Math.round(seconds);
  const [m, s] = [Math.floor(t / 60), t % 60];
  return [m ? `${m} minute${m !== 1 ? "s" : ""}` : "", s || !m ? `${s} s` : ""].filter(Boolean).join(" ");
}

const place = (n) => (n === 1 ? "next in line" : `place ${n} in line (${n - 1} run${n > 2 ? "s" : ""} ahead)`);

// What the trainer says of a run, one line: where it is, or how it ended. A run on the server (sim/tinylm/job.py)
// gives its trainer up while paused (pause_left_s: the time it has to resume), may wait for one to resume
// (resuming), and is stopped by a long pause (stopped_because).
export function status_text(snap) {
  const { state, iteration, iterations } = snap;
  if (snap.stopped_because === "pause limit") {
    return `This run was stopped after ${duration(snap.pause_limit_s)} paused. Press Start to run it again.`;
  }
  if (snap.stopped_because === "paused runs") {
    return `This run was stopped: it had been paused the longest, and the server keeps at most ${snap.max_paused} ` +
      "paused runs. Press Start to run it again."; // prettier-ignore
  }
  if (snap.resuming) return `Waiting for a free trainer on the server to resume: ${place(snap.queue_position)}.`;
  if (state === "queued" && snap.queue_position > 0) return `Waiting for a free trainer on the server: ${place(snap.queue_position)}.`;
  if (snap.paused && snap.pause_left_s !== undefined && snap.pause_left_s !== null && LIVE_STATES.includes(state)) {
    return `GRPO: ${iteration} / ${iterations} iterations (paused: its trainer on the server is free for the next run ` +
      `meanwhile; resume within ${duration(snap.pause_left_s)}, or the run stops).`; // prettier-ignore
  }
  if (state === "queued" || state === "starting") return "Starting the trainer…";
  if (state === "grpo") return `GRPO: ${iteration} / ${iterations} iterations${snap.paused ? " (paused)" : ""}.`;
  if (state === "eval") {
    const e = snap.eval;
    return `Evaluating pass@k on the held-out problems${e ? `: ${e.done} / ${e.total}` : ""}${snap.paused ? " (paused)" : ""}.`;
  }
  if (state === "done") {
    const p1 = snap.pass_at_1;
    const said = p1.length > 1 ? `; held-out pass@1 ${f(p1[0][1], ".3f")} → ${f(last(p1)[1], ".3f")} (exact)` : "";
    return `Done: ${iterations} GRPO iterations${said}, then pass@k before and after (below).`;
  }
  if (state === "stopped") {
    return snap.stopped_in === "eval" ? `You stopped this run during its pass@k evaluation, after its ${iteration} GRPO ` +
      "iterations: it has no pass@k results." : `You stopped this run at iteration ${iteration} of ${iterations}.`; // prettier-ignore
  }
  if (state === "error") return "The run stopped with an error:";
  return STAGE[state] || state;
}

// The latest groups, as TRL's completions log shows them
function group_rows(snap) {
  return snap.groups.flatMap((grp) => grp.responses.map((resp, i) => [grp.prompt, resp, grp.rewards[i], f(grp.advantages[i], ".3f")]));
}

// A finished run: pass@k before and after, whether the curves cross, the problems never solved, and the side it shows
export function results_blocks(result, preset, presets) {
  const n = result.eval_samples;
  const chart = passk_chart(n, [["SFT", result.pass_at_k_before, COLORS.grey], ["GRPO", result.pass_at_k_after, COLORS.main]],
    { title: `pass@k on ${result.heldout_problems} held-out problems` }); // prettier-ignore
  const cross = result.crossover_k;
  const out = [
    heading("Your run: pass@k before and after", 3),
    charts("tl_passk", [chart]),
    text(cross === null ? "The curves do not cross." : `The curves cross at k ≈ ${f(cross, ".1f")}.`),
    metrics([["Never solved by SFT", String(result.never_solved_before.length)],
      ["Never solved after GRPO", String(result.never_solved_after.length)]]), // prettier-ignore
    text(`Never solved by SFT: ${result.never_solved_before.join(", ") || "none"}; after GRPO: ` +
      `${result.never_solved_after.join(", ") || "none"}.`), // prettier-ignore
  ];
  if (n === 64) out.push(caption(`This run: ${side_caption([seed_row(result)], preset, chart, presets)}`)); // needs pass@64
  return out;
}

// What a run shows while it trains and once it ends: the latest metrics, the live charts, the latest groups, results
export function live_blocks(snap, { preset = null, presets = {}, trl = null } = {}) {
  const out = [];
  if (snap.state === "error" && snap.error) out.push(note(snap.error, "error"));
  if (snap.pause_limit_s !== undefined && LIVE_STATES.includes(snap.state)) { // a run on the server: its pause rule
    out.push(caption(`On the server, Pause gives the run's trainer to the next run in line (Resume waits for a free ` +
      `one); a run paused for ${duration(snap.pause_limit_s)} is stopped, as is the one paused longest when more than ` +
      `${snap.max_paused} are.`, [snap.max_paused])); // prettier-ignore
  }
  if (snap.history.length) {
    const latest = (name) => {
      const m = [...snap.history].reverse().find((h) => h[name] !== undefined && h[name] !== null);
      return m ? f(m[name], ".3f") : "–";
    };
    out.push(metrics(["reward", "entropy", "kl", "frac_reward_zero_std"].map((name) => [name, latest(name)])));
    out.push(charts("tl_live", LIVE.map((names) => metric_chart(snap, names, trl)), 2));
    if (snap.groups.length) {
      out.push(table("tl_groups", ["prompt", "response", "reward", "advantage"], group_rows(snap),
        "Latest groups (as in TRL's completions log)")); // prettier-ignore
    }
  }
  if (snap.state === "done" && snap.result) out.push(...results_blocks(snap.result, preset, presets));
  return out;
}

// ---- the page ----

// The trainer's settings: the page's fields but for what only the page reads (the TRL overlay)
export function trainer_settings(fields) {
  const { trl, ...settings } = fields;
  return settings;
}

export function tinylm(fields, ctx = {}) {
  const data = ctx.data || {};
  return [
    heading("Train it yourself"),
    text("Start trains GRPO from the shipped SFT checkpoint with the settings on this page, in your browser: nothing " +
      "is sent anywhere, and two Workers use two cores. Watch the reward rise and the entropy fall; at the end, " +
      "pass@k before and after on the 300 held-out problems, and the problems no sample solves."), // prettier-ignore
    { kind: "trainer", key: "tinylm", settings: trainer_settings(fields), preset: fields.preset,
      presets: data.presets || {}, trl: fields.trl ? data.trl || null : null }, // prettier-ignore
    ...recorded(data),
  ];
}
