// The views the toy engines compute in the page (Training dynamics, Std scaling, pass@k's sharpening toy and
// the toy's pass@k before and after): from a config and the engine's results (assets/js/engine.js), the player's
// charts, their captions, the words around them and the predict question, for the views sim/views/training.py,
// std_scaling.py and passk.py declare (the words live only here; tests/test_views.py reads them). Python stays the
// reference of the math; no formula of the engine lives here (pass@k and where two curves cross are the engine's),
// only what a view reads off a run (means over seeds as numpy takes them, the seeds' band) and how it says it.
//
// A run is the engine's result: arrays under sim's names (p, accuracy, kl_exact, entropy, counts,
// metrics[...]), each {v, shape} or a typed array with a shape, indexed [t][seed][prompt] as in Python.

import { Band, Bars, Chart, COLORS, Heatmap, Line, nd, read, readValue, rgba } from "./chart_spec.js";
import { crossoverK as crossover_k, firstAbove as first_above, meanPassAtKKnownP as mean_pass_at_k_known_p,
  HARD, passAtKKnownP as pass_at_k_known_p, STD_SEEDS } from "./engine.js";
import { pairwise, percentileRows } from "./numpy.js";
import { format as f, plain } from "./numfmt.js";

// ---- what a view reads off a run: numpy's arithmetic, so the numbers are Python's to the last bit ----

// x.mean(axis=1) of x (n, S), or of x[:, :, j] for x (n, S, P): (n,)
export function seedMean(x, j = null) {
  const a = nd(x);
  const [n, S] = a.shape;
  const P = j === null ? 1 : a.shape[2];
  const out = new Float64Array(n);
  for (let t = 0; t < n; t++) out[t] = pairwise(a.v, t * S * P + (j ?? 0), S, P) / S;
  return out;
}

// x[:, s] of x (n, S), or x[:, s] of x (n, S, P) as (n, P)
export function seedColumn(x, s = 0) {
  const a = nd(x);
  const [n, S] = a.shape;
  if (a.shape.length === 2) return Float64Array.from({ length: n }, (_, t) => a.v[t * S + s]);
  const P = a.shape[2];
  const out = new Float64Array(n * P);
  for (let t = 0; t < n; t++) out.set(a.v.subarray((t * S + s) * P, (t * S + s + 1) * P), t * P);
  return { v: out, shape: [n, P] };
}

// sim.toy.seed_band: mean and the 10..90% band over seeds of x (n, S)
export function seed_band(x, lo = 10.0, hi = 90.0) {
  return { mean: seedMean(x), lo: percentileRows(x, lo), hi: percentileRows(x, hi) };
}

const mean = (a) => pairwise(a, 0, a.length, 1) / a.length;
const last = (a) => a[a.length - 1];

// sim.toy.clip_summary
export function clip_summary(h, level) {
  const clip = seedMean(h.metrics["clip_ratio/region_mean"]); // (T,)
  return { clip: mean(clip), peak: Math.max(...clip), hard_at: first_above(seedMean(h.p, nd(h.p).shape[2] - 1), level) };
}

// ---- Training dynamics (sim/views/training.py) ----
export const HEIGHTS = [300, 330];
const NOT_DRAWN = 0;
const NO_SIGNAL = 1;
const SIGNAL = 2;

// (T+1, P) colour of bar j at iteration t: whether prompt j's group in iteration t had mixed rewards (seed 0)
export function bar_categories(run, G) {
  const counts = nd(run.counts);
  const [T, S, P] = counts.shape;
  const out = new Uint8Array((T + 1) * P).fill(NOT_DRAWN);
  for (let t = 0; t < T; t++) {
    for (let j = 0; j < P; j++) {
      const k = counts.v[t * S * P + j];
      out[(t + 1) * P + j] = k > 0 && k < G ? SIGNAL : NO_SIGNAL;
    }
  }
  return { v: out, shape: [T + 1, P] };
}

export function clip_note(cfg, run, ppo) {
  if (cfg.mu === 1) return "";
  const mine = clip_summary(run, HARD);
  const what = cfg.loss_type === "cispo" ? "capped the weight of" : "silenced";
  const eps_high = cfg.clip_eps_high === null || cfg.clip_eps_high === undefined ? cfg.clip_eps : cfg.clip_eps_high;
  let name = `PPO's clip (ε = ${f(cfg.clip_eps, "g")})`;
  if (cfg.loss_type === "cispo") name = `CISPO (ε_max = ${f(eps_high, "g")})`;
  else if (eps_high !== cfg.clip_eps) name = `clip-higher (ε high = ${f(eps_high, "g")})`;
  const hard = mine.hard_at === null ? "never" : `at iteration ${mine.hard_at}`;
  const text = `μ = ${cfg.mu} reuses each batch: ${name} ${what} ${f(mine.clip, ".2%")} of answers per step ` +
    `(${f(mine.peak, ".1%")} at most); the hardest prompt passes p = ${plain(HARD)} ${hard}`; // prettier-ignore
  if (!ppo) return text + ". Try clip-higher or CISPO, which keep the gradient of answers whose ratio rose.";
  const base = clip_summary(ppo, HARD);
  const baseHard = base.hard_at === null ? "never" : `at iteration ${base.hard_at}`;
  return text + `; with PPO's clip (ε = ${f(cfg.clip_eps, "g")}) it silenced ${f(base.clip, ".2%")} ` +
    `(${f(base.peak, ".1%")} at most) and the hardest prompt passed ${baseHard}.`; // prettier-ignore
}

// Each chart's caption, its numbers read off the chart itself (chart_spec.js read): the mean accuracy line's ends,
// the top of the zero-gradient stack, seed s's row of the heatmap, the KL and entropy lines. charts: training_charts'
// five, in order; their `caption` is set here.
export function caption_charts(cfg, charts) {
  const [acc, zero, bars, heat, kl] = charts;
  const mean = "mean of the seeds";
  acc.caption = `Accuracy ${read(acc, mean, "first", ".2f")} → ${read(acc, mean, "last", ".2f")}. Band: the middle ` +
    `80% of ${cfg.n_seeds} seeds; thick blue: their mean; dashed black: the exact expected run, drawn in full from the start.`;
  acc.given = ["80", String(cfg.n_seeds)];
  // which kind of dead group the stack shows more of at its first or last point
  const side = (at) => {
    const w = readValue(zero, "all wrong", at);
    const r = readValue(zero, "all correct", at);
    if (w + r === 0) return "";
    if (w === r) return " (as many all wrong as all correct)";
    return w > r ? " (mostly all wrong, red)" : " (mostly all correct, green)";
  };
  const top = (at) => read(zero, "all correct", at, ".0%", { stack: true });
  zero.caption = `No gradient: ${top("first")} of groups at first${side("first")}, ${top("last")} at the end` +
    `${side("last")}. Dashed: mean_j p_j^G + (1 − p_j)^G.`;
  zero.given = ["1"];
  bars.caption = "Blue: the prompt's group in iteration t had mixed rewards and taught something; grey: all its " +
    "answers got the same reward (no gradient).";
  const P = nd(heat.traces[0].z).shape[1];
  const starts = read(heat, "heatmap", "above", ".0f", { row: P - 1, level: HARD });
  heat.caption = starts !== null
    ? `The hardest prompt (top row) stays dark, below p = ${plain(HARD)}, until iteration ${starts}: its groups are all ` +
      "wrong until the shared skill makes it sometimes solvable."
    : `The hardest prompt (top row) never passes p = ${plain(HARD)}: its groups stay all wrong` +
      (cfg.lr_w === 0 ? ", and with lr_w = 0 no shared skill lifts it." : "."); // prettier-ignore
  heat.given = [plain(HARD), "0"];
  const H = (at) => readValue(kl, "entropy", at);
  const peak = H("argmax");
  let entropy;
  if (peak > 0 && H("max") > H("first") + 0.005 && H("last") < H("max")) {
    entropy = `Entropy first rises, ${read(kl, "entropy", "first", ".3f")} → ${read(kl, "entropy", "max", ".3f")} nats by ` +
      `iteration ${read(kl, "entropy", "argmax", ".0f")}, as the many hard prompts move from p ≈ 0 toward 1/2, where an ` +
      `answer is least certain; then it falls to ${read(kl, "entropy", "last", ".3f")} as prompts head for p = 1.`;
    kl.given = ["0", "1", "2"];
  } else {
    entropy = `Entropy goes ${read(kl, "entropy", "first", ".3f")} → ${read(kl, "entropy", "last", ".3f")} nats.`;
  }
  kl.caption = `KL to the reference rises to ${read(kl, "KL(π ‖ π_ref)", "last", ".2f")} nats. ${entropy} Dotted: expected.`;
  return charts;
}

// The key numbers of a run, as big metrics above its charts (what a hall reads from the back): accuracy and the
// share of groups that teach nothing, first and last; when the hardest prompt learns; the KL at the end
export function training_metrics(cfg, run) {
  const acc = seedMean(run.accuracy);
  const z = seedMean(run.metrics.frac_reward_zero_std);
  const starts = first_above(seedMean(run.p, nd(run.p).shape[2] - 1), HARD);
  return [
    ["accuracy, first → last", `${f(acc[0], ".2f")} → ${f(last(acc), ".2f")}`],
    ["groups with no gradient", `${f(z[0], ".0%")} → ${f(last(z), ".0%")}`],
    [`hardest prompt passes p = ${plain(HARD)} (mean of the seeds)`, starts === null ? "never" : `iteration ${starts}`],
    ["KL to the reference, last", `${f(last(seedMean(run.kl_exact)), ".2f")} nats`],
  ];
}

// Training dynamics' five charts for run = runToy(cfg), exp = expectedRun(cfg). o.pinned = [label, run] overlays a
// pinned run; o.mine = the expected run with a student's advantages; o.big = presenter heights; o.ppo = this
// setting's run with PPO's symmetric clip, for the clip caption (mu > 1).
export function training_charts(cfg, run, exp, o = {}) {
  const { pinned = null, mine = null, big = false } = o;
  const G = cfg.group_size;
  const S = cfg.n_seeds;
  const h = big ? HEIGHTS[1] : HEIGHTS[0];
  const band = seed_band(run.accuracy);
  const m = run.metrics;
  const em = exp.metrics;
  const acc = [
    Band(band.lo, band.hi, `middle 80% of ${S} seeds`, { color: rgba(COLORS.main, 0.28) }),
    Line(band.mean, "mean of the seeds", { color: COLORS.main, width: 4 }),
    Line(seedColumn(exp.accuracy), "expected (exact)", { reveal: "full", color: COLORS.expected, width: 2, dash: "dash" }),
  ]; // prettier-ignore
  const zero = [
    Line(seedMean(m.frac_all_wrong), "all wrong", { x0: 1, stackgroup: "z", color: COLORS.bad }),
    Line(seedMean(m.frac_all_correct), "all correct", { x0: 1, stackgroup: "z", color: COLORS.good }),
    Line(seedColumn(em.expected_zero_frac), "expected", { x0: 1, reveal: "full", color: COLORS.expected, dash: "dash" }),
  ]; // prettier-ignore
  const kl = [
    Line(seedMean(run.kl_exact), "KL(π ‖ π_ref)", { color: COLORS.main, width: 3 }),
    Line(seedMean(run.entropy), "entropy", { color: COLORS.good, width: 3 }),
    Line(seedColumn(exp.kl_exact), "KL, expected", { reveal: "full", color: COLORS.main, dash: "dot", width: 1.5 }),
    Line(seedColumn(exp.entropy), "entropy, expected", { reveal: "full", color: COLORS.good, dash: "dot", width: 1.5 }),
  ]; // prettier-ignore
  if (pinned) {
    const [label, p] = pinned;
    acc.push(Line(seedMean(p.accuracy), label, { color: COLORS.pin, width: 3 }));
    zero.push(Line(seedMean(p.metrics.frac_reward_zero_std), label, { x0: 1, color: COLORS.pin, width: 3 }));
    kl.push(Line(seedMean(p.kl_exact), `KL, ${label}`, { color: COLORS.pin }),
      Line(seedMean(p.entropy), `entropy, ${label}`, { color: COLORS.pin, dash: "dot" })); // prettier-ignore
  }
  if (mine) {
    acc.push(Line(seedColumn(mine.accuracy), "expected, your group_advantages", { reveal: "full", color: "#9467bd",
      width: 3, dash: "dashdot" })); // prettier-ignore
  }
  return caption_charts(cfg, [
    Chart(`Mean accuracy over the ${cfg.n_prompts} prompts (G = ${G})`, acc, { y_title: "accuracy  mean_j p_j",
      y_range: [0, 1], height: h }), // prettier-ignore
    Chart(`Groups with zero gradient (G = ${G})`, zero, { y_title: "fraction of groups", y_range: [0, 1], height: h }),
    Chart("Each prompt's p_j after {t} iterations (seed " + String(cfg.seed) + ")", [
      Bars(seedColumn(run.p), { categories: bar_categories(run, G), colors: ["#9ecae1", COLORS.grey, COLORS.main],
        names: ["no group drawn yet", "all answers equal: no signal", "mixed rewards: taught something"] }),
    ], { x_title: "prompt j (easy → hard)", y_title: "p_j", y_range: [0, 1], height: h }), // prettier-ignore
    Chart(`p_j over time (seed ${cfg.seed}): hard prompts wait`, [Heatmap(seedColumn(run.p), { colorbar_title: "p_j" })],
      { y_title: "prompt j (easy → hard)", height: h }), // prettier-ignore
    Chart("KL to the reference and entropy", kl, { y_title: "nats (mean over prompts)", height: h }),
  ]);
}

// The page's predict-first question (assets/js/predict.js): when does the hardest prompt pass HARD? null if
// it never does in this run.
export function hard_prompt_question(cfg, run) {
  const hard = seedMean(run.p, nd(run.p).shape[2] - 1);
  const starts = first_above(hard, HARD);
  if (starts === null) return null;
  return {
    question: `The hardest prompt starts at p = ${f(hard[0], ".3f")}, so its groups are all wrong. Around which ` +
      `iteration will its p pass ${plain(HARD)} (mean over the seeds)?`,
    answer: starts, tolerance: Math.max(10, Math.floor(starts / 5)), fmt: ".0f", lo: 0, hi: cfg.iterations,
    whose: "this run's answer", // the chapter prints no iteration: the toy's run says it
    explain: "It waits until the shared skill w, pushed by the other prompts, makes it sometimes " +
      "solvable: RL can only reinforce answers the model sometimes produces.",
  }; // prettier-ignore
}

// ---- Your prompts (sim/views/your_data.py): the toy on a visitor's pool ----

// Training dynamics' charts for the toy whose prompts are the pool, titled for it (the groups caption already says
// which side the dead groups are on, first and last)
export function pool_charts(cfg, run, exp, reduction, pool_size, o = {}) {
  const charts = training_charts(cfg, run, exp, { big: !!o.big });
  const what = cfg.n_prompts === pool_size ? `your ${f(pool_size, ",.0f")} prompts`
    : `${cfg.n_prompts} quantiles of your ${f(pool_size, ",.0f")} prompts`; // prettier-ignore
  charts[0] = { ...charts[0], title: `Mean accuracy over ${what} (G = ${cfg.group_size})` };
  charts[2] = { ...charts[2], // the axis keeps Training's short title: a presenter's third of the width holds it
    caption: charts[2].caption + ` The toy's prompts, easy to hard by your base model's rate: ${reduction}.`, // given
    given: [...charts[2].given, ...(reduction.match(/\d[\d,]*(\.\d+)?%?/g) || [])] }; // prettier-ignore
  return charts;
}

// ---- Std scaling (sim/views/std_scaling.py): `runs` is the engine's comparison, by run name ----
const RUN_COLORS = { "with std": COLORS.main, "without std, same lr": COLORS.grey,
  "without std, same first step": COLORS.pin }; // prettier-ignore

export function std_charts(runs) {
  const lines = (what) => Object.entries(runs).map(([name, r]) =>
    Line(r[what], `${name} (lr ${f(r.lr, ".2f")})`, { color: RUN_COLORS[name], width: 3 })); // prettier-ignore
  return [
    Chart(`Mean accuracy (${STD_SEEDS} seeds)`, lines("accuracy"), { y_title: "accuracy", y_range: [0, 1] }),
    Chart("The hardest prompt's p_j", lines("hard"), { y_title: "p_j of the hardest prompt", y_range: [0, 1] }),
  ];
}

// Std scaling's key numbers: each run's accuracy at the end
export function std_metrics(runs) {
  return Object.entries(runs).map(([name, r]) => [`accuracy, ${name}`, f(last(r.accuracy), ".3f")]);
}

// Std scaling's words: the intro above its charts (the first steps' sizes), and the caption below them, its numbers
// read off the charts (std_charts(runs), which it marks)
export function std_words(runs, lr, charts) {
  const [acc, hard] = charts;
  const base = runs["with std"];
  const sameLr = runs["without std, same lr"];
  const sameStep = runs["without std, same first step"];
  const intro =
    `At the same learning rate ${f(lr, ".2f")}, the first step without the std is ${f(sameLr.step / base.step, ".2f")} ` +
    `times the size of the step with it (lr × mean |A|: ${f(sameLr.step, ".3f")} vs ${f(base.step, ".3f")}), so that ` +
    `comparison mixes step size with weighting. Without std at lr ${f(sameStep.lr, ".2f")} the first step is as ` +
    "large as with std: what differs then is only how the prompts are weighted."; // prettier-ignore
  const line = (name) => `${name} (lr ${f(runs[name].lr, ".2f")})`;
  const T = nd(base.accuracy).v.length - 1;
  const final = (name) => read(acc, line(name), "last", ".3f");
  const when = (name) => {
    const at = read(hard, line(name), "above", ".0f", { level: HARD });
    return at === null ? `never within ${T} iterations` : `at iteration ${at}`;
  };
  const gap = Math.abs(readValue(acc, line("with std"), "last") - readValue(acc, line("without std, same first step"), "last"));
  const caption =
    `Same toy and seeds; means over ${STD_SEEDS} seeds. With std: accuracy ${final("with std")} after ${T} ` +
    `iterations, hardest prompt past p = ${plain(HARD)} ${when("with std")}. Without std at the same lr (grey): ` +
    `${final("without std, same lr")}, ${when("without std, same lr")}: smaller steps, not a different weighting. ` +
    `Without std at the same first step (orange): ${final("without std, same first step")}, ` +
    `${when("without std, same first step")}. What remains between blue and orange is the reweighting's effect` +
    (gap < 0.02 ? ": here it is small, because a shared skill lifts every prompt whichever way they are weighted."
      : `: ${f(gap, ".3f")} in final accuracy here.`); // prettier-ignore
  acc.given = [String(STD_SEEDS), String(T), plain(HARD), f(gap, ".3f")]; // the gap: two of its reads, subtracted
  return [intro, caption];
}

// ---- pass@k (sim/views/passk.py) ----
export const KS = Float64Array.from({ length: 64 }, (_, i) => i + 1);
const K_TICKS = [1, 2, 4, 8, 16, 32, 64];
const K_RANGE = [-0.05, 1.87];
const BEFORE_AFTER = ["before RL", "after RL"];
export const TOY_T = 200;

export function curves_chart(title, before, after, o = {}) {
  const { names = BEFORE_AFTER, per_problem = [], height = 380, span = 1 } = o;
  const lines = [];
  per_problem.forEach((label, i) => {
    for (const [p, color, when] of [[before[i], COLORS.grey, names[0]], [after[i], COLORS.main, names[1]]]) {
      lines.push(Line(KS.map((k) => pass_at_k_known_p(p, k)), `problem ${label}, ${when}`, { x: KS, reveal: "full",
        color, width: 2, dash: ["dot", "dash"][i % 2] })); // prettier-ignore
    }
  });
  const m = per_problem.length ? "mean, " : "";
  lines.push(
    Line(mean_pass_at_k_known_p(before, KS), m + names[0], { x: KS, reveal: "full", color: COLORS.grey, width: 4 }),
    Line(mean_pass_at_k_known_p(after, KS), m + names[1], { x: KS, reveal: "full", color: COLORS.main, width: 4 })
  );
  return Chart(title, lines, { x_title: "k (log scale)", y_title: "pass@k", y_range: [0, 1.02], x_range: K_RANGE,
    x_log: true, x_ticks: K_TICKS, vlines: [[64, "k = 64"]], height, span }); // prettier-ignore
}

// h: the engine's runSharpen result (p (I+1, P), pass_at_1, pass_at_k, entropy (I+1,)) and its config
export function sharpen_charts(cfg, h) {
  const p = nd(h.p);
  const P = p.shape[1];
  return [
    Chart("pass@1 rises while pass@64 falls", [
      Line(h.pass_at_1, "pass@1", { color: COLORS.main, width: 3 }),
      Line(h.pass_at_k, `pass@${cfg.k_eval}`, { color: COLORS.bad, width: 3 }),
    ], { y_title: "pass@k", y_range: [0, 1.02] }),
    Chart("Policy entropy over strategies", [Line(h.entropy, "entropy", { color: COLORS.good, width: 3 })],
      { y_title: "entropy (nats)" }),
    curves_chart("Sharpening toy: pass@k before and after", p.v.slice(0, P), p.v.slice(-P), { per_problem: ["A", "B"],
      span: 2 }),
  ]; // prettier-ignore
}

// The sharpening toy's key numbers: pass@1 and pass@k, first and last
export function sharpen_metrics(cfg, h) {
  const [p1, pk] = [nd(h.pass_at_1).v, nd(h.pass_at_k).v];
  return [["pass@1, first → last", `${f(p1[0], ".3f")} → ${f(last(p1), ".3f")}`],
    [`pass@${cfg.k_eval}, first → last`, `${f(pk[0], ".3f")} → ${f(last(pk), ".3f")}`]]; // prettier-ignore
}

// The sharpening toy's caption, its numbers read off sharpen_charts(cfg, h), which it marks: the strategies' p is the
// curves' pass@1 (k = 1)
export function sharpen_caption(cfg, h, charts) {
  const [passk, entropy, curves] = charts;
  const p = nd(h.p);
  const P = p.shape[1];
  const cross = crossover_k(KS, mean_pass_at_k_known_p(p.v.slice(-P), KS), mean_pass_at_k_known_p(p.v.slice(0, P), KS));
  const pk = `pass@${cfg.k_eval}`;
  const at1 = (problem, when) => read(curves, `problem ${problem}, ${when}`, "first", ".2f");
  const ends = (chart, name, fmt) => `${read(chart, name, "first", fmt)} → ${read(chart, name, "last", fmt)}`;
  const text = `One set of strategy logits is shared by both problems. After ${cfg.iterations} iterations p = ` +
    `(${at1("A", "after RL")}, ${at1("B", "after RL")}) from (${at1("A", "before RL")}, ${at1("B", "before RL")}); ` +
    `entropy ${ends(entropy, "entropy", ".2f")} nats; pass@1 ${ends(passk, "pass@1", ".3f")}, ${pk} ` +
    `${ends(passk, pk, ".3f")}` +
    (cross !== null ? `; the curves cross at k ≈ ${f(cross, ".1f")}.` : "; the curves do not cross in this run.") +
    " Watch pass@k at large k and the entropy, not just pass@1."; // prettier-ignore
  curves.given = [String(cfg.iterations), ...(cross !== null ? [f(cross, ".1f")] : [])]; // where the mean curves cross
  return text;
}

// The toy's mean pass@k at iteration 0 and T (p_j (P,) each, from expectedRun of the chapter's defaults): the
// chart and what it shows.
// the toy's key numbers: mean pass@1 and pass@64 at iteration 0 and T
export function toy_metrics(p0, pT, T = TOY_T) {
  const [before, after] = [mean_pass_at_k_known_p(p0, KS), mean_pass_at_k_known_p(pT, KS)];
  return [[`pass@1, iteration 0 → ${T}`, `${f(before[0], ".3f")} → ${f(after[0], ".3f")}`],
    [`pass@64, iteration 0 → ${T}`, `${f(last(before), ".3f")} → ${f(last(after), ".3f")}`]]; // prettier-ignore
}

export function toy_curves(p0, pT, T = TOY_T) {
  const before = mean_pass_at_k_known_p(p0, KS);
  const after = mean_pass_at_k_known_p(pT, KS);
  const cross = crossover_k(KS, after, before);
  const names = ["iteration 0", `iteration ${T}`];
  const chart = curves_chart(`Toy: mean pass@k at iteration 0 and ${T}`, p0, pT, { names });
  const caption = `pass@1 ${read(chart, names[0], "first", ".3f")} → ${read(chart, names[1], "first", ".3f")}, pass@64 ` +
    `${read(chart, names[0], "last", ".3f")} → ${read(chart, names[1], "last", ".3f")}: ` +
    (cross !== null ? `the curves cross at k ≈ ${f(cross, ".1f")}.`
      : "no crossing. In this toy a shared skill lifts every prompt, so coverage grows too. Sharpening needs a " +
        "policy that can lose a rare way of solving, as below."); // prettier-ignore
  if (cross !== null) chart.given = [f(cross, ".1f")]; // where the two curves cross
  return [chart, caption];
}
