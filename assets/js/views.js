// The views' documents, computed in the page, in both hosts: for each view the browser computes (One group, Wasted
// groups, KL and clipping, Std scaling, pass@k, Training dynamics) the one function that builds what a reader sees
// for a setting, its words, questions, metrics and charts (sim/views/doc.py's blocks), which assets/js/doc.js draws.
// The numbers are sim's formulas' JavaScript twins (exercises.js, engine.js), proved equal to sim/ by the unit tier
// (tests/test_views.py); the words are written here only.
//
//   SHOW.wasted({p: 0.05, group_size: 8}, ctx)  ->  [{kind: "formula", latex, text}, {kind: "caption", text}, ...]
//
// `fields` are the controls' values by their config's field names (control_rules.js configOf). `ctx` is what the
// page adds: {app: the app draws its links and lab verdicts, pinned: {label, config} (Training dynamics' Pin),
// lab: the app's "Use my lab code" numbers for this setting (sim/views/<view>.py lab_extras), or null}.

import { ask, caption, charts, columns, formula, heading, link, live, metrics, note, table, text } from "./blocks.js";
import { Band, BarSeries, Chart, COLORS, Heatmap, Line, read, rgba } from "./chart_spec.js";
import { crossoverK, expectedMeanAbsAdvantage, meanAbsAdvantage, meanPassAtKKnownP, passAtKKnownP, sharpenConfig, STD_SEEDS,
  toyConfig } from "./engine.js";
import * as X from "./exercises.js";
import { linspace } from "./numpy.js";
import { format as f, plain } from "./numfmt.js";
import { tinylm } from "./tinylm_views.js";
import { curves_chart } from "./toy_views.js";

// the blocks the app's lab numbers put at a place of a document (sim/views/<view>.py lab_extras), none without them
const slot = (ctx, name) => (ctx && ctx.lab && ctx.lab.slots && ctx.lab.slots[name]) || [];

const pct = (x, digits = 1) => f(x, `.${digits}%`);
const r4 = (x) => Number(f(x, ".4f")); // a table's number: x to 4 decimals, never -0
// One group's ε in std + ε: the chapter's "tiny". TRL's 1e-4 would show in the 4th decimal, the chapter's +1 as
// 0.9998 and 1/6 as 0.1666 (sim.exercises takes it as a parameter; it keeps an all-equal group at 0, not 0/0)
const TINY = 1e-8;
const TINY_WORDS = "ε is the chapter's “tiny” (1e-8 here; TRL adds 1e-4): it keeps a group whose answers all " +
  "agree at 0 instead of 0/0, and moves no digit shown here."; // prettier-ignore
const round = (x, n) => Number(f(x, `.${n}f`)); // x to n decimals as the page prints it (never -0)

// ---- Wasted groups (sim/views/wasted.py) ----
const PS = linspace(0, 1, 101);
const GS = Float64Array.from({ length: 63 }, (_, i) => i + 2);
const CURVES = [[4, COLORS.grey], [8, COLORS.bad], [16, COLORS.good], [64, "black"]];

function wasted({ p, group_size: G }, ctx = {}) {
  const sig8 = 1 - X.p_no_signal(0.05, 8);
  const sig64 = 1 - X.p_no_signal(0.05, 64);
  const none = X.p_no_signal(p, G);
  const z = new Float64Array(PS.length * GS.length);
  PS.forEach((pp, i) => GS.forEach((g, j) => (z[i * GS.length + j] = X.p_no_signal(pp, g))));
  const heat = Chart("P(group teaches nothing) over p and G", [
    Heatmap({ v: z, shape: [PS.length, GS.length] }, { x: PS, y: GS, colorscale: "Reds", colorbar_title: "P" }),
    Line([G], "your setting", { x: [p], reveal: "full", mode: "markers", size: 14, symbol: "x", color: COLORS.main }),
  ], { x_title: "p (solve rate)", y_title: "group size G", height: 420, given: [f(p, ".2f"), G, 0, 1] }); // prettier-ignore
  heat.caption = `The × is your setting, p = ${f(p, ".2f")} and G = ${G}: ${read(heat, "heatmap", "cell", ".1%", { x: p, y: G })} ` +
    "of its groups teach nothing. Dark at both edges: too-hard prompts (p ≈ 0) teach nothing, too-easy ones (p ≈ 1) " +
    "waste compute."; // prettier-ignore
  const mine = `G = ${G} (yours)`;
  const curves = Chart("P(no signal) against p", [
    ...CURVES.filter(([g]) => g !== G) // your G's own curve is "G = G (yours)" below, not a second legend entry
      .map(([g, color]) => Line(PS.map((x) => X.p_no_signal(x, g)), `G = ${g}`, { x: PS, reveal: "full", color })),
    Line(PS.map((x) => X.p_no_signal(x, G)), mine, { x: PS, reveal: "full", color: COLORS.main, width: 4 }),
  ], { x_title: "p (solve rate)", y_title: "P(group teaches nothing)", y_range: [0, 1], height: 420, vlines: [[p, ""]],
    given: [f(p, ".2f"), G, 64] }); // prettier-ignore
  curves.caption = `At p = ${f(p, ".2f")}, a group of ${G} teaches nothing ${read(curves, mine, "x", ".1%", { x: p })} of ` +
    `the time, a group of 64 ${read(curves, G === 64 ? mine : "G = 64", "x", ".1%", { x: p })}. Bigger groups rescue ` +
    "the extremes: the valley of useful prompts widens as G grows."; // prettier-ignore
  const tab = X.no_signal_table();
  const rows = tab.p.map((pp, i) => [f(pp, ".2f"), ...tab.p_no_signal[i].map((x) => f(x, ".3f"))]);
  const shown = [
    metrics([[`P(no signal) at p = ${f(p, ".2f")}, G = ${G}`, pct(none)], ["P(signal)", pct(1 - none)],
      ["P(signal) at G = 64", pct(1 - X.p_no_signal(p, 64))]]), // prettier-ignore
    columns([charts("wasted_heatmap", [heat])], [charts("wasted_curves", [curves])]),
  ];
  const rest = [
    note(`The chapter's case: p = 0.05 yields signal ${pct(sig8, 0)} of the time with G = 8 but ${pct(sig64, 0)} with ` +
      "G = 64. DeepSeekMath used G = 64; DeepSeek-R1-Zero G = 16."), // prettier-ignore
    heading("The chapter's table"),
    table("no_signal_table", ["p", ...tab.group_size.map((g) => `G = ${g}`)], rows),
    caption("Read it from both ends. RL can only reinforce what the model already sometimes does."),
    link("your_prompts", "This table for your own prompts: upload their pass rates (Your prompts)"),
  ];
  const questions = (then) => ask("wasted_g8", "A prompt is solved 5% of the time (p = 0.05). With G = 8, in what share " +
    "of its groups does at least one answer differ from the rest (a group that teaches something)?", round(100 * sig8, 1),
    { unit: "%", tolerance: 5, fmt: ".1f" }, [
      ask("wasted_g64", "And with G = 64?", round(100 * sig64, 1), { unit: "%", tolerance: 5, fmt: ".1f",
        explain: "DeepSeekMath used G = 64; DeepSeek-R1-Zero G = 16." }, then),
    ]); // prettier-ignore
  const law = formula(String.raw`P(\text{group teaches nothing}) = p^G + (1 - p)^G`, "P(group teaches nothing) = p^G + (1 − p)^G");
  const source = caption("Chapter 15, “Groups that teach nothing”: a prompt solved 5% of the time, with G = 8 and G = 64.");
  // asked first, the charts wait for the guesses; otherwise the charts come first (on the projector's first screen)
  // and the questions with their answers after them
  if (ctx.predict) return [law, source, questions([...shown, ...rest])];
  return [law, ...shown, source, questions([]), ...rest];
}

// ---- One group (sim/views/one_group.py) ----
const ADVANTAGE_LEGEND = "Green answers are right, red ones wrong; TRL's bars are hatched.";
const ADVANTAGE = {
  group: [String.raw`\hat A^{(i)} = \frac{r^{(i)} - \operatorname{mean}(r)}{\operatorname{std}(r) + \varepsilon}`,
    "A_i = (r_i − mean(r)) / (std(r) + ε)"],
  none: [String.raw`\hat A^{(i)} = r^{(i)} - \operatorname{mean}(r)`, "A_i = r_i − mean(r)"],
}; // prettier-ignore
const LOSS = [String.raw`\mathcal{L} = -\frac{1}{G}\sum_i \frac{1}{|y^{(i)}|}\sum_t \min\big(\rho_t \hat A^{(i)},` +
  String.raw`\ \operatorname{clip}(\rho_t, 1-\epsilon, 1+\epsilon)\,\hat A^{(i)}\big)`,
  "L = −(1/G) Σ_i (1/|y_i|) Σ_t min(ρ_t A_i, clip(ρ_t, 1 − ε, 1 + ε) A_i)"]; // prettier-ignore
const GROUP_MEAN = String.raw`\frac{\hat A^{(i)}}{G\,|y^{(i)}|}`;
const TOKEN_MEAN = String.raw`\frac{\hat A^{(i)}}{\sum_j |y^{(j)}|}`;
const WEIGHT = { // the weight of each token at ratio 1, per loss type: LaTeX and plain text
  grpo: [GROUP_MEAN, "A_i / (G |y_i|)"],
  sapo: [GROUP_MEAN + String.raw`\quad(\text{the gate } 4\sigma(1-\sigma) = 1 \text{ at } \rho = 1)`,
    "A_i / (G |y_i|)   (the gate 4σ(1 − σ) = 1 at ρ = 1)"],
  bnpo: [TOKEN_MEAN, "A_i / Σ_j |y_j|"],
  dapo: [TOKEN_MEAN, "A_i / Σ_j |y_j|"],
  cispo: [String.raw`\min(\rho, \varepsilon_{max})\,` + TOKEN_MEAN + String.raw`\quad(\varepsilon_{max} = ` + f(X.CISPO_CAP, "g") + ")",
    `min(ρ, ε_max) · A_i / Σ_j |y_j|   (ε_max = ${f(X.CISPO_CAP, "g")})`],
  vespo: [String.raw`\varphi(w)\,` + TOKEN_MEAN + String.raw`\quad(\varphi(1) = 1)`, "φ(w) · A_i / Σ_j |y_j|   (φ(1) = 1)"],
  dr_grpo: [String.raw`\frac{\hat A^{(i)}}{G\,L_{\max}}`, "A_i / (G L_max)"],
  luspo: [String.raw`\frac{\hat A^{(i)}}{G}`, "A_i / G"],
}; // prettier-ignore
const LOSS_WORDS = "At ratio 1 the loss is the mean advantage, which is 0 by construction, so GRPO's logged loss " +
  "reads 0. Its gradient is REINFORCE with the group baseline, -A_i/G per answer, which vanishes only when the " +
  "group has no spread."; // prettier-ignore
const CISPO_WORDS = `CISPO's cap here is ε_max = ${f(X.CISPO_CAP, "g")} (ScaleRL's value, TRL's epsilon_high). Left ` +
  "unset, TRL caps the weight at epsilon = 0.2 itself, so every weight below would be 0.2 times as large."; // prettier-ignore

// what the advantage chart shows, read off its bars (the chapter's and TRL's)
function advantage_words(rewards, chart, scale) {
  if (rewards.every((r) => r === rewards[0])) {
    return "Every answer got the same reward, so every advantage is 0: this group teaches nothing.";
  }
  const [chapter, trl] = ["population std (chapter)", "sample std (TRL)"];
  const said = `Right answers get ${read(chart, chapter, "max", "+.3f")}, wrong ones ${read(chart, chapter, "min", "+.3f")}; ` +
    "the advantages sum to zero. "; // prettier-ignore
  if (scale === "group") {
    chart.given = ["1"];
    return said + "TRL divides by the sample std (G - 1 in the denominator), which is larger, so its advantages are " +
      `smaller: ${read(chart, trl, "max", "+.3f")} and ${read(chart, trl, "min", "+.3f")}.`; // prettier-ignore
  }
  return said + "Without the std division both conventions give the same advantages.";
}

function length_words(effect) {
  const row = Object.fromEntries(effect.rows.map((r) => [r.loss_type, r]));
  return `${effect.biased.join(" and ")} average each answer over its own tokens, so the longer wrong answer is ` +
    `pushed down less per token (${f(row.grpo.long, "+.4f")} vs ${f(row.grpo.short, "+.4f")}; the chapter's -0.063 vs ` +
    `-0.083). ${effect.unbiased.join(", ")} give every token of a wrong answer the same push: one mean over all ` +
    `tokens of the group, a constant, or (luspo, ${f(row.luspo.short, "+.3f")}) a sum per answer. That removes the ` +
    "per-token bias; at ratio 1 cispo and vespo weigh like dapo."; // prettier-ignore
}

function credit_words(credit) {
  const first = credit.filter((r) => r.position === 0);
  return "Only tokens that follow the same text compete for the same probability, so only those are added up. The " +
    "first token always follows '=', shared by every answer: there " +
    first.map((r) => `${r.token} collects ${f(r.weight, "+.3f")}`).join(", ") +
    ". Later positions are grouped by the prefix they follow. Nobody told the algorithm which digit was the " +
    "mistake: credit assignment emerges only statistically, across many groups."; // prettier-ignore
}

// sim.views.one_group.rewards_of
function rewards_of(G, { mode, correct, pick }) {
  if (mode === "count") {
    const n = note(`c = ${correct} is more than G = ${G}; using c = ${G}.`);
    const c = Math.min(correct, G);
    return [Array.from({ length: G }, (_, i) => (i < c ? 1.0 : 0.0)), correct > G ? n : null];
  }
  return [Array.from({ length: G }, (_, i) => (pick.includes(i + 1) ? 1.0 : 0.0)), null];
}

function one_group(fields, ctx = {}) {
  const { group_size: G, scale, loss_type } = fields;
  const [rewards, warn] = rewards_of(G, fields);
  const chapter = X.group_summary(rewards, { scale, ddof: 0, eps: TINY });
  const trl = X.group_summary(rewards, { scale, ddof: 1, eps: TINY });
  const responses = X.group_responses(rewards);
  const weights = X.per_token_weights(responses, rewards, { loss_type, scale, eps: TINY,
    clip_eps_high: loss_type === "cispo" ? X.CISPO_CAP : null }); // prettier-ignore
  const effect = X.length_effect(responses, rewards, { scale, eps: TINY });
  const credit = X.credit_table(responses, weights);
  const adv = chapter.advantages;
  const xs = rewards.map((_, i) => i + 1);
  const colors = rewards.map((r) => (r > 0 ? COLORS.good : COLORS.bad));
  const bars = [
    BarSeries(xs, adv, "population std (chapter)", { colors }),
    BarSeries(xs, trl.advantages, "sample std (TRL)", { colors, opacity: 0.45, hatch: "/" }),
  ];
  const mine = ctx.lab && ctx.lab.advantages; // the app's "Use my lab code": the student's group_advantages
  if (mine) {
    bars.push(Line(mine.student, "your group_advantages", { x: xs, reveal: "full", mode: "markers", size: 16,
      symbols: mine.wrong.map((w) => (w ? "x" : "diamond")), marker_colors: mine.wrong.map((w) => (w ? COLORS.bad : "#000000")),
      outline: "white" })); // prettier-ignore
  }
  const advChart = Chart("Advantage of each answer", bars, { x_title: "answer i", y_title: "advantage", height: 360,
    barmode: "group" }); // prettier-ignore
  const said = advantage_words(rewards, advChart, scale);
  const doc = warn ? [warn] : [];
  doc.push(
    formula(...ADVANTAGE[scale]),
    ...(scale === "group" ? [caption(TINY_WORDS)] : []),
    metrics([["correct", `${rewards.reduce((s, r) => s + r, 0)} / ${G}`], ["mean(r)", f(chapter.mean, ".3f")],
      ["std, population (chapter)", f(chapter.std_population, ".3f")], ["std, sample (TRL)", f(chapter.std_sample, ".3f")],
      ["sum of advantages", f(round(adv.reduce((s, a) => s + a, 0), 6), "+.3f")]]), // prettier-ignore
    charts("adv_chart", [advChart]),
    ...slot(ctx, "after_chart"),
    caption(said.startsWith("Every") ? said : `${ADVANTAGE_LEGEND} ${said}`),
    heading("Loss value vs gradient"),
    formula(...LOSS),
    metrics([["loss at ratio 1", f(round(chapter.loss, 4), ".4f")], ["gradient norm ‖∂L/∂log π‖", f(chapter.grad_norm, ".4f")]]),
    caption(LOSS_WORDS),
    heading("The group, token by token"),
    text(`Each token's log-probability gets a gradient weight; at ratio 1, under ${loss_type} it is`,
      `Each token's log-probability gets a gradient weight; at ratio 1, under **${loss_type}** it is`),
    formula(...WEIGHT[loss_type]),
  );
  if (loss_type === "cispo") doc.push(caption(CISPO_WORDS));
  const theirs = ctx.lab && ctx.lab.weights; // the student's grpo_loss gradient on each answer's first token
  doc.push(table("weights_table", ["answer", "response", "reward", "advantage", "length", "weight per token",
    ...(theirs ? ["your weight (grpo_loss)"] : [])], responses.map((t, i) => [i + 1, t.join(" "), rewards[i], r4(adv[i]),
    t.length, r4(weights[i][0]), ...(theirs ? [r4(theirs[i])] : [])])), ...slot(ctx, "after_table")); // prettier-ignore
  if (effect !== null) {
    const [short, long] = [responses[effect.short].join(" "), responses[effect.long].join(" ")];
    doc.push(
      text("Length bias. Two wrong answers with the same advantage, per token, under each loss type:",
        "**Length bias.** Two wrong answers with the same advantage, per token, under each loss type:"),
      table("length_bias_table", ["loss type", `${short} (short, wrong)`, `${long} (long, wrong)`],
        effect.rows.map((r) => [r.loss_type, r4(r.short), r4(r.long)])), // prettier-ignore
      caption(length_words(effect)),
    );
  }
  doc.push(
    text("Credit: what each token collects across the group, among tokens chosen after the same text.",
      "**Credit:** what each token collects across the group, among tokens chosen after the same text."),
    table("credit_table", ["position", "context", "token", "weight", "count"],
      credit.map((r) => [r.position, r.context, r.token, r4(r.weight), r.count])), // prettier-ignore
    caption(credit_words(credit)),
  );
  return doc;
}

// ---- KL and clipping (sim/views/kl_clip.py) ----
const U = linspace(0.05, 4.0, 400);
const RHO = linspace(0.3, 1.8, 301);
const RHO_W = linspace(0.2, 2.5, 231);
// np.unique(np.round(np.logspace(0, log10(1024), 21)).astype(int)): the Monte Carlo's sample sizes, 1 .. 1024
export const SIZES = [...new Set(Array.from({ length: 21 }, (_, i) => Math.round(10 ** ((i * Math.log10(1024)) / 20))))];
const N_TICKS = [1, 4, 16, 64, 256, 1024];
const CLIP_BAND = "rgba(44,160,44,0.12)";
const ESTIMATORS = [["k1", COLORS.grey], ["k2", COLORS.pin], ["k3", COLORS.main]];
const REPEATS = 400;

function titles(view) {
  const eps = view.clip_eps;
  const eh = view.clip_eps_high === null ? eps : view.clip_eps_high;
  return { "PPO clip (grpo)": `PPO clip, ε = ${f(eps, ".2f")}`, "clip-higher (DAPO)": `clip-higher, ε high = ${f(eh, ".2f")}`,
    "two-sided (δ)": `two-sided, δ = ${f(view.delta, ".1f")}`, CISPO: `CISPO, cap 1 + ε high = ${f(1 + eh, ".2f")}`,
    SAPO: `SAPO, τ = ${f(view.sapo_temperature_pos, "g")} / ${f(view.sapo_temperature_neg, "g")}`,
    "GSPO (sequence ratio)": `GSPO, ratio ρ^(1/${X.RESPONSE_LENGTH}), ε = ${f(eps, ".2f")}` }; // prettier-ignore
}

function leash({ pi, pi_ref }, ctx) {
  const k = X.kl_estimators(U);
  const chk = X.kl_check(pi, pi_ref);
  const lines = ESTIMATORS.map(([name, color]) => Line(k[name], name, { x: U, reveal: "full", color, width: name === "k3" ? 3 : 2 }));
  lines.push(Line([chk.k3], `your token: u = ${f(chk.u, ".3f")}`, { x: [chk.u], reveal: "full", mode: "markers", size: 12,
    color: "black" })); // prettier-ignore
  if (ctx.lab && ctx.lab.k3) lines.push(Line(ctx.lab.k3, "your k3_kl", { x: U, reveal: "full", color: "black", dash: "dot" }));
  return [
    heading("The KL leash, per token"),
    caption("Chapter 15, “Adding the KL leash, in the loss”: the numeric check of k3."),
    text("GRPO puts the KL penalty in the loss, estimated per sampled token from u = π_ref / π_θ:",
      "GRPO puts the KL penalty in the loss, estimated per sampled token from $u = \\pi_{ref}/\\pi_\\theta$:"),
    formula(String.raw`k_1 = -\log u \qquad k_2 = \tfrac12 (\log u)^2 \qquad k_3 = u - \log u - 1 \;\ge 0`,
      "k1 = −log u,   k2 = ½ (log u)²,   k3 = u − log u − 1 ≥ 0"),
    charts("kl_chart", [klChart(lines)]),
    ...slot(ctx, "after_kl_chart"),
    ask("k3", `The policy gives a token probability ${f(pi, ".2f")}, the reference ${f(pi_ref, ".2f")}. What is its k3?`,
      round(chk.k3, 4), { tolerance: 0.002, lo: 0, explain: "k3 = u − log u − 1 with u = π_ref / π." }, [
        metrics([["u = π_ref / π", f(chk.u, ".3f")], ["k3", f(chk.k3, ".4f")], ["d k3 / d log π = 1 − u", f(chk.dk3_dlogp, ".3f")],
          ["k1", f(chk.k1, ".4f")]]), // prettier-ignore
      ]),
    caption("k3 is never negative, unbiased when the token is sampled from π, and zero exactly when π = π_ref. Chapter " +
      "check: π = 0.6, π_ref = 0.5 gives u = 0.833, k3 = 0.0157 and slope 0.167: gradient descent on +β k3 nudges " +
      "the token back down toward the reference. k1 can be negative for a single token; k2 is biased."), // prettier-ignore
  ];
}

// its own caption, since the one after the question below is about the question; no number a guess could use
function klChart(lines) {
  const chart = Chart("KL estimators against u = π_ref / π", lines, { x_title: "u = π_ref / π",
    y_title: "per-token estimate", y_range: [-1.5, 3], height: 380, caption: "k3 (the thick line) is never negative " +
      "and is zero where π = π_ref; k1 goes below zero for a token the policy likes more than the reference; the " +
      "black dot is your token." }); // prettier-ignore
  chart.given = ["1", "3"]; // the estimators' names, k1 and k3
  return chart;
}

function clip({ p_old, p_new }, view, ctx) {
  const eps = view.clip_eps;
  const ends = [RHO[0], RHO.at(-1)];
  const list = [[1.0, "A > 0 (A = +1)"], [-1.0, "A < 0 (A = −1)"]].map(([A, title]) => Chart(`Clipped surrogate, ${title}`, [
    Line(ends.map((r) => r * A), "unclipped ρA", { x: ends, reveal: "full", color: COLORS.grey, dash: "dash" }),
    Line(X.surrogate_curve(RHO, A, eps).surrogate, "clipped", { x: RHO, reveal: "full", color: COLORS.main, width: 3 }),
  ], { x_title: "ratio ρ", y_title: "objective s", height: 340, shade: [[1 - eps, 1 + eps, CLIP_BAND]] })); // prettier-ignore
  const ex = X.clip_example(p_old, p_new, 1.0, eps);
  const [pushed, stopped] = ["still pushed", "no gradient: clipped"];
  const outcome = ex.clipped ? "is clipped: no more gradient on the next inner step" : "is still pushed";
  return [
    heading("PPO's clip"),
    caption("Chapter 15, “Adding PPO's clip”: a token whose probability rose from 0.40 to 0.50."),
    formula(String.raw`\rho = \frac{\pi_\theta}{\pi_{old}},\qquad s = \min\big(\rho A,\ \operatorname{clip}(\rho, 1-\epsilon, 1+\epsilon)\,A\big)`,
      "ρ = π_θ / π_old,   s = min(ρA, clip(ρ, 1 − ε, 1 + ε) A)"),
    charts("clip_charts", list, 2),
    caption("Where the curve is flat there is no gradient: a positive-advantage token past 1 + ε, or a negative one " +
      "below 1 − ε, stops being pushed. At ρ = 1 the clip is inert and the gradient is plain REINFORCE.", [1]), // prettier-ignore
    ask("clip", `After one inner step a token's probability went ${f(p_old, ".2f")} → ${f(p_new, ".2f")}; its advantage is ` +
      `positive and ε = ${f(eps, ".2f")}. On the next inner step, is the token still pushed up?`, ex.clipped ? stopped : pushed,
      { kind: "choice", options: [pushed, stopped] }, [
        note(`Token probability ${f(p_old, ".2f")} → ${f(p_new, ".2f")}: ratio ${f(ex.ratio, ".3f")}; with A > 0 and ε = ` +
          `${f(eps, ".2f")} the token ${outcome}. (Chapter: 0.40 → 0.50 gives 1.25 > 1.2.)`),
      ]), // prettier-ignore
    ...slot(ctx, "after_clip"),
  ];
}

function weights({ p_old, p_new }, view) {
  const curves = X.weight_curves(RHO_W, view);
  const token = X.chapter_token(view, p_old, p_new);
  const names = titles(view);
  const ends = [RHO_W[0], RHO_W.at(-1)];
  const panels = Object.keys(X.objectives(view)).map((name) => {
    const lines = [];
    for (const [sign, color] of [[1.0, COLORS.good], [-1.0, COLORS.bad]]) {
      const key = sign > 0 ? "pos" : "neg";
      lines.push(
        Line(ends.map((r) => sign * r), "unclipped ρA", { x: ends, reveal: "full", color: COLORS.grey, dash: "dash", hover: false }),
        Line(curves[name][key], `A = ${f(sign, "+.0f")}`, { x: RHO_W, reveal: "full", color, width: 3 }),
        Line([token.weights[name][key]], `your token, A = ${f(sign, "+.0f")}`, { x: [token.ratio], reveal: "full",
          mode: "markers", size: 11, color, outline: "black" }),
      ); // prettier-ignore
    }
    return Chart(names[name], lines, { x_title: "ratio ρ of the token", y_title: "gradient weight", height: 320,
      y_range: [-2.7, 2.7], legend: false, vlines: [[token.ratio, ""]] }); // prettier-ignore
  });
  const w = token.weights;
  // the caption's weights and ratio, read off each panel's marker for the token (A = +1)
  const panel = Object.fromEntries(Object.keys(X.objectives(view)).map((name, i) => [name, panels[i]]));
  const [ppo, hi, cispo, sapo, gspo] = ["PPO clip (grpo)", "clip-higher (DAPO)", "CISPO", "SAPO", "GSPO (sequence ratio)"]
    .map((k) => read(panel[k], "your token, A = +1", "first", ".3f")); // prettier-ignore
  const ratio = read(panel["PPO clip (grpo)"], "your token, A = +1", "argmax", ".3f");
  return [
    heading("The clip and what came after it: the gradient weight a token gets"),
    text("Each panel is one objective from TRL 1.16.0 (loss_type, importance_sampling_level): the weight " +
      `−|y| ∂L / ∂log π on one token of a ${X.RESPONSE_LENGTH}-token response as its ratio ρ moves, the other tokens at ` +
      "ratio 1. Green: A = +1, red: A = −1, grey dashes: the unclipped ρA. The dotted line is your token " +
      `(${f(p_old, ".2f")} → ${f(p_new, ".2f")}). Every curve is autograd on sim.grpo.policy_loss.`,
    "Each panel is one objective from TRL 1.16.0 (`loss_type`, `importance_sampling_level`): the weight " +
      String.raw`$-|y|\,\partial \mathcal{L} / \partial \log \pi$ on one token of a ` + `${X.RESPONSE_LENGTH}-token response ` +
      "as its ratio ρ moves, the other tokens at ratio 1. **Green: A = +1**, **red: A = −1**, grey dashes: the " +
      `unclipped ρA. The dotted line is your token (${f(p_old, ".2f")} → ${f(p_new, ".2f")}). Every curve is autograd ` +
      "on `sim.grpo.policy_loss`."), // prettier-ignore
    charts("weight_charts", panels, 3),
    table("weights_at_token", ["objective", "weight, A = +1", "weight, A = −1"],
      Object.keys(w).map((name) => [names[name], round(w[name].pos, 3), round(w[name].neg, 3)])), // prettier-ignore
    caption(`Your token, ratio ${ratio}, A > 0: PPO's clip gives weight ${ppo}` +
      (Number(ppo) === 0 ? " (silenced: the clip is flat past 1 + ε)" : "") +
      `; clip-higher ${hi}; CISPO keeps it at ${cispo}, a clipped weight but never a zero gradient (the “wait” tokens ` +
      `PPO's clip silences); SAPO's soft gate gives ${sapo}; GSPO's one ratio for the whole response is ` +
      `${f(token.sequence_ratio, ".3f")} (${X.RESPONSE_LENGTH} tokens), so it gives ${gspo}, and real GSPO runs clip with ` +
      `ε around 3e-4. For A < 0 the two-sided δ stops the ever larger push down past ρ = ${f(view.delta, ".1f")}, where ` +
      "PPO's weight grows without bound.", [f(token.sequence_ratio, ".3f"), X.RESPONSE_LENGTH, f(view.delta, ".1f"), 1, 0]), // prettier-ignore
  ];
}

function sampling({ pi, pi_ref, n }) {
  const doc = [
    heading("Why k3: bias, noise and sign, by sampling"),
    text(`Sample tokens from the policy, which gives the token ${f(pi, ".2f")} and everything else ${f(1 - pi, ".2f")}, and ` +
      `estimate KL(π ‖ π_ref) against the reference's ${f(pi_ref, ".2f")} / ${f(1 - pi_ref, ".2f")} by averaging each ` +
      `estimator over the sampled tokens. ${REPEATS} repeats for every sample size.`), // prettier-ignore
  ];
  if (pi === 1.0 || pi_ref === 1.0) {
    return [...doc, note("With π or π_ref = 1 the other token has probability 0 and the KL is not finite: lower it below 1.")];
  }
  const mc = X.kl_monte_carlo([pi, 1 - pi], [pi_ref, 1 - pi_ref], SIZES, { repeats: REPEATS });
  const traces = [];
  for (const [name, color] of ESTIMATORS) {
    const r = mc[name];
    traces.push(
      Band(r.lo, r.hi, `${name}: middle 80%`, { x: SIZES, color: rgba(color, 0.15) }),
      Line(r.mean, `${name}: mean of ${REPEATS} estimates`, { x: SIZES, reveal: "full", mode: "lines+markers", color,
        width: name === "k3" ? 3 : 2 }),
    ); // prettier-ignore
  }
  const chart = Chart("Estimates of KL against the number of sampled tokens", traces, { x_title: "tokens per estimate n (log scale)",
    y_title: "estimate (nats)", height: 400, x_log: true, x_ticks: N_TICKS, vlines: [[n, ""]],
    hlines: [[mc.exact, `exact KL = ${f(mc.exact, ".4f")}`, "dash"]] }); // prettier-ignore
  const one = X.kl_monte_carlo([pi, 1 - pi], [pi_ref, 1 - pi_ref], [n], { repeats: REPEATS });
  return [
    ...doc,
    charts("kl_mc_chart", [chart]),
    metrics(ESTIMATORS.map(([name]) => [`${name} with n = ${n}`, `${f(one[name].mean[0], ".4f")} ± ${f(one[name].std[0], ".4f")}`,
      `negative in ${f(one[name].frac_negative[0], ".0%")} of estimates`])), // prettier-ignore
    caption(`Shaded: the middle 80% of the ${REPEATS} estimates. The exact KL here is ${f(mc.exact, ".4f")}. k1 (grey) is right ` +
      `on average but noisy, and with one token it is negative ${f(mc.k1.frac_negative[0], ".0%")} of the time. k2 (orange) ` +
      `is never negative but biased: its mean stays at ${read(chart, `k2: mean of ${REPEATS} estimates`, "last", ".4f")} ` +
      "however many tokens (the bias grows as π and π_ref move apart). k3 (blue) is unbiased and never negative, with a " +
      `spread of ${f(mc.k3.std[0], ".4f")} from one token against k1's ${f(mc.k1.std[0], ".4f")}: that is why GRPO uses it.`,
    [f(mc.k1.frac_negative[0], ".0%"), f(mc.k3.std[0], ".4f"), f(mc.k1.std[0], ".4f")]), // the spreads: not drawn (std, not the band) // prettier-ignore
  ];
}

function kl_clip(fields, ctx = {}) {
  const view = { clip_eps: fields.clip_eps, clip_eps_high: fields.clip_eps_high, delta: fields.delta,
    sapo_temperature_pos: fields.sapo_temperature_pos, sapo_temperature_neg: fields.sapo_temperature_neg }; // prettier-ignore
  return [...leash(fields, ctx), ...clip(fields, view, ctx), ...weights(fields, view), ...sampling(fields)];
}

// ---- pass@k (sim/views/passk.py) ----
const CHAPTER_P_BEFORE = [0.6, 0.05];
const CHAPTER_P_AFTER = [0.98, 0.01];

function sharpening_summary() { // sim.sharpen.sharpening_summary
  const ks = Array.from({ length: 64 }, (_, i) => i + 1);
  const before = meanPassAtKKnownP(CHAPTER_P_BEFORE, ks);
  const after = meanPassAtKKnownP(CHAPTER_P_AFTER, ks);
  return { "pass@1_before": (0.6 + 0.05) / 2, "pass@1_after": (0.98 + 0.01) / 2, "pass@64_before": before.at(-1),
    "pass@64_after": after.at(-1), crossover_k: crossoverK(ks, after, before) }; // prettier-ignore
}

function estimator({ n, c, k }) {
  const doc = [];
  if (c > n) {
    doc.push(note(`c = ${c} is more than n = ${n}; using c = ${n}.`));
    c = n;
  }
  if (k > n) {
    doc.push(note(`k = ${k} is more than n = ${n}; using k = ${n}.`));
    k = n;
  }
  const ks = Array.from({ length: n }, (_, i) => i + 1);
  const chart = Chart(`Unbiased pass@k for n = ${n}, c = ${c}`, [
    Line(ks.map((kk) => X.pass_at_k(n, c, kk)), "pass@k", { x: ks, reveal: "full", color: COLORS.main, width: 3 }),
  ], { x_title: "k", y_title: "pass@k", y_range: [0, 1.02], height: 300, vlines: [[k, ""]] }); // prettier-ignore
  return [...doc, formula(String.raw`\text{pass@}k = 1 - \binom{n-c}{k} \Big/ \binom{n}{k}`, "pass@k = 1 − C(n − c, k) / C(n, k)"),
    metrics([[`pass@${k} from n = ${n}, c = ${c}`, f(X.pass_at_k(n, c, k), ".4f")]]), charts("estimator_chart", [chart])];
}

function problems() {
  const s = sharpening_summary();
  const [[a0, b0], [a1, b1]] = [CHAPTER_P_BEFORE, CHAPTER_P_AFTER];
  const chart = curves_chart("pass@k of problems A and B, and their mean", CHAPTER_P_BEFORE, CHAPTER_P_AFTER,
    { per_problem: ["A", "B"] }); // prettier-ignore
  const at64 = (name) => read(chart, name, "last", ".3f"); // k = 64, the curves' last point
  const perProblem = `Per problem: A is solved within 64 tries either way (pass@64 ${at64("problem A, before RL")} → ` +
    `${at64("problem A, after RL")}), while B's pass@64 collapses from ${at64("problem B, before RL")} to ` +
    `${at64("problem B, after RL")}; the mean falls ${at64("mean, before RL")} → ${at64("mean, after RL")}. RL helped ` +
    "at k = 1 (through A) and hurt at k = 64 (all through B): it sharpened the common strategy, and the rare one that " +
    "cracked B faded."; // prettier-ignore
  chart.given = ["64", "1"];
  return [
    heading("The chapter's two problems"),
    caption("Chapter 15, “Does RL teach new reasoning?”: a toy example of how RL can sharpen and narrow coverage."),
    text(`Problem A: p = ${plain(a0)} → ${plain(a1)}; problem B (a rare strategy): p = ${plain(b0)} → ${plain(b1)}. Averaged over ` +
      `the two problems, pass@1 rises ${f(s["pass@1_before"], ".3f")} → ${f(s["pass@1_after"], ".3f")}.`,
    `Problem A: $p = ${plain(a0)} \\to ${plain(a1)}$; problem B (a rare strategy): $p = ${plain(b0)} \\to ${plain(b1)}$. ` +
      `Averaged over the two problems, pass@1 rises ${f(s["pass@1_before"], ".3f")} → ${f(s["pass@1_after"], ".3f")}.`), // prettier-ignore
    ask("two_problems", `Before RL the mean pass@64 is ${f(s["pass@64_before"], ".3f")}. What is it after RL?`,
      round(s["pass@64_after"], 3), { tolerance: 0.03, lo: 0, hi: 1, explain: `The curves cross near k = ${f(s.crossover_k, ".1f")}.` }, [
        charts("chapter_passk_chart", [chart]),
        caption(perProblem),
      ]), // prettier-ignore
  ];
}

function passk(fields) {
  const sharpen = sharpenConfig({ group_size: fields.group_size, iterations: fields.iterations, seed: fields.seed });
  return [
    ...estimator(fields),
    ...problems(),
    link("your_run", "Watch entropy in your own run: upload its log (Your run)"),
    link("your_prompts", "Your base model's pass@k over your prompts (Your prompts)"),
    heading("The 24-prompt toy, before vs after training"),
    live("passk_toy", { view: "passk_toy", config: {}, columns: 1, classroom_columns: 1 }),
    heading("The sharpening toy"),
    live("sharpen", { view: "sharpen", config: sharpen, columns: 2, classroom_columns: 2 }),
  ];
}

// ---- Std scaling (sim/views/std_scaling.py) ----
function exercise(G, predict = false) {
  const cs = Array.from({ length: G + 1 }, (_, c) => c);
  const withStd = meanAbsAdvantage(G, { scale: "group" });
  const without = meanAbsAdvantage(G, { scale: "none" });
  const wStd = PS.map((p) => expectedMeanAbsAdvantage(p, G, { scale: "group" }));
  const wNone = PS.map((p) => expectedMeanAbsAdvantage(p, G, { scale: "none" }));
  const stdChart = Chart(`Mean |A| of a group with c of ${G} correct`, [
    Line(withStd, "with std (GRPO)", { x: cs, reveal: "full", mode: "lines+markers", color: COLORS.main }),
    Line(without, "without std (Dr. GRPO)", { x: cs, reveal: "full", mode: "lines+markers", color: COLORS.pin }),
  ], { x_title: "number correct c", y_title: "mean |A|", height: 380 }); // prettier-ignore
  const weightChart = Chart("How hard a prompt is pushed, by its solve rate p", [
    Line(wStd.map((w) => w / wStd[50]), "with std", { x: PS, reveal: "full", color: COLORS.main, width: 3 }),
    Line(wNone.map((w) => w / wNone[50]), "without std", { x: PS, reveal: "full", color: COLORS.pin, width: 3 }),
  ], { x_title: "solve rate p of the prompt", y_title: "weight relative to p = 0.5", height: 380,
    given: [G, 0.5, 1, "5%", 0] }); // prettier-ignore
  weightChart.caption = `The reweighting itself: a prompt's expected mean |A| (G = ${G}), scaled so that p = 0.5 counts ` +
    `1. A prompt solved 5% of the time counts ${read(weightChart, "with std", "x", ".2f", { x: 0.05 })} with the std ` +
    `and ${read(weightChart, "without std", "x", ".2f", { x: 0.05 })} without: the std division gives hard (and easy) ` +
    "prompts a larger share of the update. Both fall to 0 at p = 0 and 1, where groups are all equal."; // prettier-ignore
  const revealed = [charts("std_chart", [stdChart])];
  if (G === 8) {
    revealed.push(note(`At G = 8: 1 correct gives ${f(withStd[1], ".2f")} with std vs ${f(without[1], ".2f")} without; 4 ` +
      `correct gives ${f(withStd[4], ".2f")} vs ${f(without[4], ".2f")} (the chapter's 0.66 vs 1.0 and 0.22 vs 0.5).`, "success")); // prettier-ignore
  }
  const half = Math.floor(G / 2);
  const question = (then) => ask("ex15_4", `A group of G = ${G} has 1 correct answer. With the std division, what is its ` +
    `mean |A|? (A group with ${half} correct has ${f(withStd[half], ".2f")}.)`, round(withStd[1], 2), { tolerance: 0.05,
    lo: 0, explain: `Without the std it would be ${f(without[1], ".2f")}.` }, then); // prettier-ignore
  const source = caption("Exercise 15.4: the mean |A| of a group, with and without the std division.", ["15.4"]);
  // asked first, the chart waits for the guess; otherwise it comes first, the question and its answer below it
  const left = predict ? [source, question(revealed)] : [...revealed.slice(0, 1), source, question(revealed.slice(1))];
  return [columns(left, [charts("weight_chart", [weightChart])])];
}

function std_scaling(fields, ctx = {}) {
  const cfg = toyConfig({ group_size: fields.group_size, lr: fields.lr, seed: fields.seed, n_seeds: STD_SEEDS });
  return [
    formula(String.raw`\overline{|\hat A|}(c) = \frac{1}{G}\sum_i \left|\frac{r_i - \operatorname{mean}(r)}{\operatorname{std}(r) + \varepsilon}\right| \quad\text{vs}\quad \frac{1}{G}\sum_i |r_i - \operatorname{mean}(r)|`,
      "mean |A|(c) = (1/G) Σ_i |r_i − mean(r)| / (std(r) + ε)   vs   (1/G) Σ_i |r_i − mean(r)|"),
    ...exercise(cfg.group_size, !!ctx.predict),
    heading("What it does to training: two comparisons"),
    live("std_scaling", { view: "std", config: cfg, columns: 2, classroom_columns: 2 }),
  ];
}

// ---- Training dynamics (sim/views/training.py) ----
function training(fields, ctx = {}) {
  const lab = ctx.lab;
  return [...slot(ctx, "top"), live("training", { view: "training", config: toyConfig(fields), pinned: ctx.pinned || null,
    table: (lab && lab.table) || null, columns: 2, classroom_columns: 3 })]; // prettier-ignore
}

export const SHOW = { wasted, one_group, kl_clip, passk, std_scaling, training, tinylm };
