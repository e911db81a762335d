// The closed forms of the exercise views, for a page that computes them (a lesson): the JavaScript twin of what
// sim/exercises.py, sim/kl_clip.py and sim/passk.py compute for One group, KL and clipping, pass@k and Wasted groups.
// sim/ is the reference: it computes by autograd through sim.grpo.policy_loss where this file writes the derivative
// out; tests/test_js_twins.py runs both on random settings and compares every number (to 1e-9) and every word.
// sim's names, one function per formula; no DOM.
//
// Shapes: G answers of a group, N grid points, R repeats, V tokens.

import { binomialInverse, keyWords, logChoose, streamUniforms } from "./engine.js";
import { mean, percentile, std } from "./numpy.js";

// ---- groups (sim/exercises.py) ----

export const CISPO_CAP = 5.0; // ScaleRL's eps_max for CISPO in the views
export const LOSS_TYPES = ["grpo", "bnpo", "dapo", "dr_grpo", "cispo", "sapo", "luspo", "vespo"];
const CORRECT_ANSWER = ["8", "5", "<eos>"];
const WRONG_ANSWERS = [["7", "5", "<eos>"], ["8", "1", "5", "<eos>"], ["8", "6", "<eos>"], ["9", "5", "<eos>"],
  ["8", "4", "<eos>"], ["7", "4", "5", "<eos>"]]; // prettier-ignore
export const TABLE_PS = [0.01, 0.05, 0.2, 0.5, 0.8, 0.95, 0.99];
export const TABLE_GROUP_SIZES = [4, 8, 16, 64];

const sum = (a) => a.reduce((s, x) => s + x, 0);

// sim.exercises.p_no_signal: p^G + (1 - p)^G
export function p_no_signal(p, G) {
  return p ** G + (1.0 - p) ** G;
}

// sim.exercises.no_signal_table: rows p (TABLE_PS), columns G (TABLE_GROUP_SIZES)
export function no_signal_table() {
  return { p: TABLE_PS, group_size: TABLE_GROUP_SIZES, p_no_signal: TABLE_PS.map((p) => TABLE_GROUP_SIZES.map((G) => p_no_signal(p, G))) };
}

// sim.grpo.group_advantages for one group of 0/1 rewards, baseline mean: (r - mean) / (std + eps), 0 if flat
function advantages(r, scale, ddof, eps) {
  const G = r.length;
  const m = sum(r) / G;
  const flat = r.every((x) => x === r[0]);
  let adv = r.map((x) => x - m);
  if (scale === "group") {
    const s = G > ddof ? Math.sqrt(sum(r.map((x) => (x - m) ** 2)) / (G - ddof)) : 0;
    adv = adv.map((a) => a / (s + eps));
  }
  return flat ? adv.map(() => 0) : adv;
}

// sim.exercises.group_summary: mean, both stds, the advantages, the loss at ratio 1 (minus their mean) and the norm
// of its gradient (-A_i / G per answer)
export function group_summary(rewards, { scale = "group", ddof = 0, eps = 1e-4 } = {}) {
  const G = rewards.length;
  const m = sum(rewards) / G;
  const dev = sum(rewards.map((x) => (x - m) ** 2));
  const adv = advantages(rewards, scale, ddof, eps);
  return { mean: m, std_population: Math.sqrt(dev / G), std_sample: Math.sqrt(dev / (G - 1)), advantages: adv,
    loss: sum(adv.map((a) => -a)) / G, grad_norm: Math.sqrt(sum(adv.map((a) => (a / G) ** 2))) }; // prettier-ignore
}

// sim.exercises.group_responses: a correct answer is 8 5 <eos>, the wrong ones are, in turn, WRONG_ANSWERS
export function group_responses(rewards) {
  let wrong = 0;
  return rewards.map((r) => (r > 0 ? CORRECT_ANSWER : WRONG_ANSWERS[wrong++ % WRONG_ANSWERS.length]));
}

// sim.exercises.per_token_weights at ratio 1, written out (sim: autograd through policy_loss), in autograd's order
// of operations, so that the weights are sim's to the last bit (a table rounds them): the aggregation's gradient g
// on a token times the objective's, A_i:
//   grpo, sapo g = (1/G) / |y_i|; bnpo, dapo, cispo, vespo g = 1 / sum |y_j|; dr_grpo g = 1 / (G L), L the longest;
//   luspo g = 1/G. cispo's weight min(1, cap) A_i (cap >= 1 in the views), vespo's phi(1) A_i = A_i; sapo's gate
//   4 sigma (1 - sigma) = 1 passes through its temperature tau (float32, as torch.where makes it), as autograd does.
export function per_token_weights(tokens, rewards, { loss_type = "grpo", scale = "group", ddof = 0, eps = 1e-4,
  clip_eps_high = null } = {}) { // prettier-ignore
  const G = tokens.length;
  const adv = advantages(rewards, scale, ddof, eps);
  const total = sum(tokens.map((t) => t.length));
  const L = Math.max(...tokens.map((t) => t.length));
  const cap = clip_eps_high === null ? 0.2 : clip_eps_high; // sim.losses.cispo_cap with clip_eps 0.2
  return tokens.map((t, i) => {
    const a = adv[i];
    let g;
    if (loss_type === "grpo" || loss_type === "sapo") g = 1 / G / t.length;
    else if (loss_type === "dr_grpo") g = 1 / (G * L);
    else if (loss_type === "luspo") g = 1 / G;
    else g = 1 / total;
    let w = g * (loss_type === "cispo" ? Math.min(1.0, cap) * a : a);
    if (loss_type === "sapo") {
      const tau = Math.fround(a > 0 ? 1.0 : 1.05); // sim.grpo.policy_loss's default temperatures
      w = (w / tau) * tau;
    }
    return t.map(() => w + 0.0);
  });
}

// sim.exercises.length_effect: the per-token weight of the shortest and the longest wrong answer under every loss
// type; null without two wrong answers of different lengths
export function length_effect(tokens, rewards, { scale = "group", ddof = 0, eps = 1e-4, cispo_cap = CISPO_CAP } = {}) {
  const wrong = rewards.map((r, i) => [r, i]).filter(([r]) => r === 0).map(([, i]) => i);
  if (!wrong.length) return null;
  let short = wrong[0];
  let long = wrong[0];
  for (const i of wrong) {
    if (tokens[i].length < tokens[short].length) short = i;
    if (tokens[i].length > tokens[long].length) long = i;
  }
  if (tokens[long].length === tokens[short].length) return null;
  const rows = LOSS_TYPES.map((lt) => {
    const w = per_token_weights(tokens, rewards, { loss_type: lt, scale, ddof, eps,
      clip_eps_high: lt === "cispo" ? cispo_cap : null }); // prettier-ignore
    return { loss_type: lt, short: w[short][0], long: w[long][0] };
  });
  const same = rows.filter((r) => Math.abs(r.short - r.long) < 1e-12).map((r) => r.loss_type);
  return { short, long, rows, unbiased: same, biased: rows.map((r) => r.loss_type).filter((lt) => !same.includes(lt)) };
}

// sim.exercises.credit_table: the weights of tokens chosen after the same text, added up, by position then first
// appearance
export function credit_table(tokens, weights, prompt_end = "=") {
  const table = new Map();
  tokens.forEach((toks, i) => {
    toks.forEach((tok, pos) => {
      const context = [prompt_end, ...toks.slice(0, pos)].join(" ");
      const key = JSON.stringify([pos, context, tok]);
      if (!table.has(key)) table.set(key, { position: pos, context, token: tok, weight: 0.0, count: 0 });
      const row = table.get(key);
      row.weight += weights[i][pos];
      row.count += 1;
    });
  });
  return [...table.values()].sort((a, b) => a.position - b.position); // stable: first appearance within
}

// ---- KL and clipping (sim/kl_clip.py) ----

export const RESPONSE_LENGTH = 4;
export const CHAPTER_P_OLD = 0.4;
export const CHAPTER_P_NEW = 0.5;

// sim.kl_clip.kl_estimators: k1, k2, k3 at u = pi_ref / pi (log pi = 0, log pi_ref = log u)
export function kl_estimators(us) {
  const d = Float64Array.from(us, Math.log);
  return { k1: d.map((x) => 0 - x), k2: d.map((x) => 0.5 * x ** 2), k3: d.map((x) => Math.expm1(x) - x) }; // never < 0
}

// sim.kl_clip.kl_check: u, k1, k2, k3 and d k3 / d log pi = 1 - u at one token
export function kl_check(pi, pi_ref) {
  const lp = Math.log(pi);
  const lr = Math.log(pi_ref);
  const d = lr - lp;
  return { u: pi_ref / pi, k1: lp - lr, k2: 0.5 * d ** 2, k3: Math.expm1(d) - d, dk3_dlogp: -Math.expm1(d) };
}

// d/d rho of min(u(rho), c(rho)) as torch's minimum differentiates it (a tie splits the gradient in half)
function minSlope(u, gu, c, gc) {
  if (u < c) return gu;
  if (c < u) return gc;
  return gu / 2 + gc / 2;
}

// PPO's clipped surrogate s = min(min(rho, delta) A, clip(rho, 1 - eps, 1 + eps_high) A) and d s / d rho
export function surrogate(rho, A, clip_eps, clip_eps_high = null, delta = null) {
  const hi = 1.0 + (clip_eps_high === null ? clip_eps : clip_eps_high);
  const lo = 1.0 - clip_eps;
  const r = delta === null ? rho : Math.min(rho, delta);
  const u = r * A;
  const c = Math.min(Math.max(rho, lo), hi) * A;
  const gu = delta === null || rho <= delta ? A : 0;
  const gc = rho >= lo && rho <= hi ? A : 0;
  return { surrogate: Math.min(u, c), slope: minSlope(u, gu, c, gc) };
}

// sim.kl_clip.surrogate_curve: the surrogate and its slope over the ratios
export function surrogate_curve(rhos, A, clip_eps) {
  const s = Array.from(rhos, (rho) => surrogate(rho, A, clip_eps));
  return { ratio: Float64Array.from(rhos), surrogate: Float64Array.from(s, (x) => x.surrogate),
    slope: Float64Array.from(s, (x) => x.slope) }; // prettier-ignore
}

// sim.kl_clip.clip_example: a token whose probability moved p_old -> p_new, and whether the clip stops it
export function clip_example(p_old, p_new, A, clip_eps) {
  const ratio = p_new / p_old;
  const s = surrogate(ratio, A, clip_eps);
  return { ratio, surrogate: s.surrogate, slope: s.slope, clipped: s.slope === 0 && A !== 0 };
}

// sim.kl_clip.objectives: the six objectives compared, as weight functions of (rho, A), for a ClipView's fields
export function objectives(view) {
  const eps = view.clip_eps;
  const eh = view.clip_eps_high === null ? eps : view.clip_eps_high;
  const ppo = (clip_eps_high, delta) => (rho, A) => surrogate(rho, A, eps, clip_eps_high, delta).slope * rho;
  return {
    "PPO clip (grpo)": ppo(null, null),
    "clip-higher (DAPO)": ppo(eh, null),
    "two-sided (δ)": ppo(null, view.delta),
    CISPO: (rho, A) => Math.min(rho, 1.0 + eh) * A, // weight min(rho, cap) A, never zero
    SAPO: (rho, A) => { // 4 sigma (1 - sigma) rho A, sigma = sigmoid(tau (rho - 1))
      // float32, as torch.where(A > 0, pos, neg) makes it from two Python floats (in sim.losses and in TRL alike)
      const tau = Math.fround(A > 0 ? view.sapo_temperature_pos : view.sapo_temperature_neg);
      const sig = 1 / (1 + Math.exp(-tau * (rho - 1.0)));
      return 4.0 * sig * (1 - sig) * rho * A;
    },
    "GSPO (sequence ratio)": (rho, A) => { // the response's one ratio s = rho^(1/|y|): slope(s) s
      const s = Math.exp(Math.log(rho) / RESPONSE_LENGTH);
      return surrogate(s, A, eps).slope * s;
    },
  }; // prettier-ignore
}

// sim.kl_clip.weight_curves: each objective's weight against the ratio for A = +1 and A = -1
export function weight_curves(rhos, view) {
  const out = {};
  for (const [name, f] of Object.entries(objectives(view))) {
    out[name] = { pos: Float64Array.from(rhos, (r) => f(Math.exp(Math.log(r)), 1.0) + 0.0),
      neg: Float64Array.from(rhos, (r) => f(Math.exp(Math.log(r)), -1.0) + 0.0) }; // prettier-ignore
  }
  return out;
}

// sim.kl_clip.chapter_token: the token p_old -> p_new under each objective
export function chapter_token(view, p_old = CHAPTER_P_OLD, p_new = CHAPTER_P_NEW) {
  const rho = p_new / p_old;
  const curves = weight_curves([rho], view);
  const weights = {};
  for (const [name, c] of Object.entries(curves)) weights[name] = { pos: c.pos[0], neg: c.neg[0] };
  return { ratio: rho, sequence_ratio: rho ** (1.0 / RESPONSE_LENGTH), weights };
}

const KL_STREAM = 2; // sim/rng.py's KL: c3 of the Monte Carlo's streams

// sim.kl_clip.token_counts: (R) x (V) counts of each token among n drawn from pi, a chain of conditional
// binomials, each the inverse CDF of a uniform (key seed, c3 KL, c1 n, c2 v, uniform r)
export function token_counts(n, pi, repeats, seed = 0) {
  const [k0, k1] = keyWords(seed);
  const V = pi.length;
  const counts = Array.from({ length: repeats }, () => new Array(V).fill(0));
  const left = new Array(repeats).fill(n);
  const tables = new Map(); // log C(m, k) per m tokens left
  let mass = 1.0;
  for (let v = 0; v < V - 1; v++) {
    const U = streamUniforms(k0, k1, n, v, KL_STREAM, repeats);
    const p = mass > 0 ? Math.min(Math.max(pi[v] / mass, 0.0), 1.0) : 0.0;
    for (let r = 0; r < repeats; r++) {
      const m = left[r];
      if (p > 0 && p < 1 && !tables.has(m)) tables.set(m, logChoose(m));
      const k = p <= 0 ? 0 : p >= 1 ? m : binomialInverse(U[r], m, p, tables.get(m));
      counts[r][v] = k;
      left[r] -= k;
    }
    mass -= pi[v];
  }
  for (let r = 0; r < repeats; r++) counts[r][V - 1] = left[r];
  return counts;
}

// sim.kl_clip.kl_monte_carlo: k1, k2, k3 as estimates of KL(pi || pi_ref) from n sampled tokens, R times per n
export function kl_monte_carlo(pi, pi_ref, sizes, { repeats = 400, seed = 0 } = {}) {
  const lp = pi.map(Math.log);
  const lr = pi_ref.map(Math.log);
  const per_token = { k1: lp.map((x, v) => x - lr[v]), k2: lp.map((x, v) => 0.5 * (lr[v] - x) ** 2),
    k3: lp.map((x, v) => Math.exp(lr[v] - x) - (lr[v] - x) - 1.0) }; // prettier-ignore
  const out = { exact: sum(pi.map((p, v) => p * Math.log(p / pi_ref[v]))), n: sizes };
  for (const name of Object.keys(per_token)) {
    out[name] = { mean: [], std: [], lo: [], hi: [], frac_negative: [] };
  }
  for (const n of sizes) {
    const counts = token_counts(n, pi, repeats, seed);
    for (const [name, values] of Object.entries(per_token)) {
      const est = Float64Array.from(counts, (c) => c.reduce((s, k, v) => s + k * values[v], 0) / n);
      const s = out[name];
      s.mean.push(mean(est));
      s.std.push(std(est));
      s.lo.push(percentile(est, 10));
      s.hi.push(percentile(est, 90));
      s.frac_negative.push(mean(Float64Array.from(est, (x) => (x < 0 ? 1 : 0))));
    }
  }
  return out;
}

// ---- pass@k (sim/passk.py) ----

// sim.passk.pass_at_k: 1 - C(n - c, k) / C(n, k), as the product 1 - prod_{i = n-c+1..n} (1 - k / i)
// (sim: log-gamma; equal to rounding)
export function pass_at_k(n, c, k) {
  if (c === 0) return 0.0;
  if (n - c < k) return 1.0;
  let none = 1.0;
  for (let i = n - c + 1; i <= n; i++) none *= 1.0 - k / i;
  return 1.0 - none;
}
