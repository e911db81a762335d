// GRPO on TinyLM in the browser: sim/tinylm/grpo_train.py's iteration, with sim/grpo.py's formulas (group advantages,
// every loss type and its aggregation, the k3 KL), sim/tinylm/optim.py's AdamW and clipping, sim/tinylm/data.py's
// verifier and sim/tinylm/evaluate.py's evaluations, for one shard of a batch (assets/js/tinylm_trainer.js joins the
// shards). docs/tinylm-browser.md; tests/test_tinylm_js.py proves each piece equal to sim's.
//
// Random draws: the portable stream (sim/tinylm/sampling.py, sim/rng.py's TinyLM counters): with the same seed
// sim's trainer with rng="philox" samples the same prompts and completions, and a row's tokens depend only on
// its counter, so a batch split between Workers samples what one Worker would.
//
// Shapes use sim's letters: P prompts, G group size, R = P G rows (B for the whole batch), T = 4 response tokens.

import { checkedConfig, keyWords, streamUniforms } from "./engine.js";
import { TinyLM, arenaFloats, fromTorch } from "./tinylm_model.js";
import { createKernels } from "./tinylm_kernels.js";
import { SFT } from "./tinylm_sft.js";
import { TINYLM } from "./tinylm_data.js";

const TK = TINYLM.tokens;
// One declaration per export: sim/player/bundle.py exports only the first name of `export const A = 1, B = 2`.
export const EOS = TK.eos;
export const PAD = TK.pad;
export const T = TK.max_new_tokens;
export const PROMPT_LEN = TK.prompt_len;
export const V = TK.vocab_size;
export const METRICS = TINYLM.metrics;
export const HELDOUT = TINYLM.heldout; // the 300 held-out problems [a, b], as sim/tinylm/data.py's split() draws them
const STREAM = { prompts: 3, tokens: 4, eval: 5 }; // sim/rng.py: TINYLM_PROMPTS, TINYLM_TOKENS, TINYLM_EVAL
export const MAX_ROWS = 2048; // P G the browser trains at once (the page's largest, 64 x 32): memory, see below
export const MAX_EVAL_SAMPLES = 1024;

// ================================================================ settings

// The run's settings: GRPOConfig's fields (sim's ranges, in its declarations' words), StoryConfig's eval_samples and `preset`
// (its changes are the defaults the other values override, as on sim's command line). The browser draws from the
// portable stream only, so rng is "philox"; threads is torch's and ignored.
export function tinylmConfig(values = {}) {
  const { preset = "default", eval_samples, ...rest } = values ?? {};
  if (!(preset in TINYLM.presets)) {
    throw new Error(`preset must be one of ${Object.keys(TINYLM.presets).join(", ")}, got ${JSON.stringify(preset)}`);
  }
  if ((rest.rng ?? "philox") !== "philox") {
    throw new Error("rng must be 'philox' in the browser: torch's generator exists only in sim (the same seed "
      + "samples the same completions with rng='philox' there)"); // prettier-ignore
  }
  const grpo = checkedConfig(TINYLM.GRPOConfig, { ...TINYLM.presets[preset], ...rest, rng: "philox" }, "GRPOConfig");
  const story = checkedConfig(TINYLM.StoryConfig, eval_samples === undefined ? {} : { eval_samples }, "StoryConfig");
  const rows = grpo.prompts_per_iter * grpo.group_size;
  if (rows > MAX_ROWS) {
    throw new Error(`prompts_per_iter x group_size = ${rows} responses per iteration; the browser trains at most `
      + `${MAX_ROWS} at once: use fewer prompts or a smaller group`); // prettier-ignore
  }
  if (story.eval_samples > MAX_EVAL_SAMPLES) throw new Error(`eval_samples must be at most ${MAX_EVAL_SAMPLES} here`);
  return { ...grpo, eval_samples: story.eval_samples, preset };
}

// sim.tinylm.grpo_train.learning_rate: linear warmup, then constant or linear decay to 0 at the last iteration.
export function learningRate(cfg, iteration) {
  let lr = cfg.lr * Math.min(1, (iteration + 1) / (cfg.warmup + 1));
  if (cfg.lr_schedule === "linear") lr *= Math.max(0, 1 - iteration / Math.max(cfg.iterations, 1));
  return lr;
}

// ================================================================ problems and the verifier (sim/tinylm/data.py)

// Every (a, b), 10 <= a, b <= 99, in sim's order; the training problems are those not held out, in that order.
export function trainProblems({ blindSpot = true } = {}) {
  const held = new Set(HELDOUT.map(([a, b]) => a * 100 + b));
  const out = [];
  for (let a = 10; a <= 99; a++) {
    for (let b = 10; b <= 99; b++) if (!held.has(a * 100 + b) && (blindSpot || !rippleCarry(a, b))) out.push([a, b]);
  }
  return out;
}

// sim.tinylm.teacher.ripple_carry: the ones carry and the tens sum to 9 (45 + 57 = 102).
export function rippleCarry(a, b) {
  return (a % 10) + (b % 10) >= 10 && Math.floor(a / 10) + Math.floor(b / 10) === 9;
}

export function promptTokens(a, b, out = new Int32Array(PROMPT_LEN), at = 0) {
  out.set([Math.floor(a / 10), a % 10, TK.plus, Math.floor(b / 10), b % 10, TK.equals], at);
  return out;
}

// The target response: the answer's digits, <eos>, then <pad> (sim.tinylm.data.answer_tokens).
export function answerTokens(a, b) {
  const out = new Int32Array(T).fill(PAD);
  const digits = String(a + b);
  for (let i = 0; i < digits.length; i++) out[i] = digits.charCodeAt(i) - 48;
  out[digits.length] = EOS;
  return out;
}

// The chapter's verifier on token ids: 1 when the tokens up to the first <eos> are the answer's digits.
export function reward(tokens, at, a, b) {
  const digits = String(a + b);
  for (let i = 0; i < digits.length; i++) if (tokens[at + i] !== digits.charCodeAt(i) - 48) return 0;
  return tokens[at + digits.length] === EOS ? 1 : 0;
}

// The length the loss sees: up to and including the first <eos>, else all T (sim.tinylm.data.completion_mask).
export function completionLength(tokens, at) {
  for (let s = 0; s < T; s++) if (tokens[at + s] === EOS) return s + 1;
  return T;
}

// What a response says: its characters before the first <eos>, <pad> as "_" (sim.tinylm.data.response_text).
export function responseText(tokens, at) {
  let out = "";
  for (let s = 0; s < T && tokens[at + s] !== EOS; s++) out += tokens[at + s] === PAD ? "_" : TK.chars[tokens[at + s]];
  return out;
}

// ================================================================ the portable stream (sim/tinylm/sampling.py)

export function promptIndices(seed, iteration, n, count) {
  const [k0, k1] = keyWords(seed);
  const u = streamUniforms(k0, k1, iteration, 0, STREAM.prompts, count);
  return Array.from(u, (x) => Math.min(Math.floor(x * n), n - 1));
}

// (rows, T) uniforms, row i on stream (c1s[i], c2s[i], c3), into out.
function rowUniforms(seed, c3, c1s, c2s, out) {
  const [k0, k1] = keyWords(seed);
  const words = new Uint32Array(4), u = new Float64Array(T);
  for (let i = 0; i < c1s.length; i++) {
    streamUniforms(k0, k1, c1s[i], c2s[i], c3, T, u, words);
    out.set(u, i * T);
  }
  return out;
}

// Token of logits at f[off..off+V) at temperature tau for the uniform U: the number of cumulative probabilities at or
// below U times their total, at most V - 1 (sim.tinylm.sampling.inverse_cdf, in double precision).
export function inverseCdf(f, off, tau, U, cdf = new Float64Array(V)) {
  let max = -Infinity;
  for (let v = 0; v < V; v++) max = Math.max(max, f[off + v] / tau);
  let z = 0;
  for (let v = 0; v < V; v++) z += cdf[v] = Math.exp(f[off + v] / tau - max);
  let acc = 0;
  for (let v = 0; v < V; v++) cdf[v] = acc += cdf[v] / z;
  const x = U * cdf[V - 1];
  let k = 0;
  while (k < V && cdf[k] <= x) k++;
  return Math.min(k, V - 1);
}

// log softmax(z / tau)[y] and the entropy of softmax(z / tau), in double precision; probs (V) receives softmax.
function logProb(f, off, tau, y, probs) {
  let max = -Infinity;
  for (let v = 0; v < V; v++) max = Math.max(max, f[off + v] / tau);
  let z = 0;
  for (let v = 0; v < V; v++) z += probs[v] = Math.exp(f[off + v] / tau - max);
  const logZ = Math.log(z);
  let ent = 0;
  for (let v = 0; v < V; v++) {
    const lp = f[off + v] / tau - max - logZ;
    probs[v] /= z;
    ent -= probs[v] * lp;
  }
  return [f[off + y] / tau - max - logZ, ent];
}

// ================================================================ advantages and the loss (sim/grpo.py)

// sim.grpo.group_advantages: r (B) rewards in groups of G -> advantages (Float64Array B).
export function groupAdvantages(r, G, { baseline = "mean", scale = "group", ddof = 0, eps = 1e-4 } = {}) {
  const B = r.length, P = B / G, adv = new Float64Array(B), flat = new Uint8Array(P);
  const std = (xs) => {
    if (xs.length <= ddof) return 0;
    let m = 0;
    for (const x of xs) m += x;
    m /= xs.length;
    let s = 0;
    for (const x of xs) s += (x - m) ** 2;
    return Math.sqrt(s / (xs.length - ddof));
  };
  for (let p = 0; p < P; p++) {
    const g = r.slice(p * G, (p + 1) * G);
    let sum = 0, lo = Infinity, hi = -Infinity;
    for (const x of g) {
      sum += x;
      lo = Math.min(lo, x);
      hi = Math.max(hi, x);
    }
    flat[p] = lo === hi ? 1 : 0;
    for (let i = 0; i < G; i++) {
      if (baseline === "mean") adv[p * G + i] = g[i] - sum / G;
      else if (baseline === "loo") {
        if (G < 2) throw new Error("baseline loo needs group_size >= 2");
        adv[p * G + i] = g[i] - (sum - g[i]) / (G - 1);
      } else adv[p * G + i] = g[i];
    }
    if (scale === "group") {
      let s = std(g);
      if (baseline === "none" && flat[p]) s = 1 - eps; // a flat group keeps its raw reward
      for (let i = 0; i < G; i++) adv[p * G + i] /= s + eps;
    }
  }
  if (scale === "batch") {
    const s = std(Array.from(r)) + eps;
    for (let i = 0; i < B; i++) adv[i] /= s > 0 ? s : 1;
  }
  if (baseline !== "none") for (let p = 0; p < P; p++) if (flat[p]) adv.fill(0, p * G, (p + 1) * G);
  return adv;
}

const AGGREGATION = { grpo: "grpo", sapo: "grpo", bnpo: "bnpo", dapo: "bnpo", cispo: "bnpo", vespo: "bnpo",
  dr_grpo: "dr_grpo", luspo: "luspo" }; // prettier-ignore
const CLIPPED = new Set(["grpo", "bnpo", "dapo", "dr_grpo", "luspo"]);
const sigmoid = (x) => 1 / (1 + Math.exp(-x));

// sim.grpo.policy_loss for rows 0..n-1 of a batch, and its gradient: logp, old (null: on-policy), ref (null: none),
// len (each row's completion length), adv (each row's advantage); norms {B, tokens}: the whole batch's response
// count and token count (a shard computes its share of the batch's loss). Writes d loss / d logp into dlogp (n T)
// and returns {loss, sums} where sums are the batch metrics' numerators (tinylm_trainer.js divides).
// Defaults are sim's (TRL's); kl_times_ratio, delta and the sapo/vespo constants are not GRPOConfig fields today.
export function policyLossGrad(logp, old, ref, len, adv, n, norms, o, dlogp) {
  const { loss_type, beta = 0, clip_eps = 0.2, clip_eps_high = null, importance_sampling_level = "token",
    kl_times_ratio = false, delta = null, sapo_temperature_pos = 1.0, sapo_temperature_neg = 1.05, vespo_k_pos = 2.0,
    vespo_lambda_pos = 3.0, vespo_k_neg = 3.0, vespo_lambda_neg = 2.0 } = o; // prettier-ignore
  const how = AGGREGATION[loss_type], perSeq = importance_sampling_level === "sequence";
  const epsHigh = clip_eps_high ?? clip_eps, B = norms.B, tokens = Math.max(norms.tokens, 1);
  const sums = { low: 0, high: 0, region: 0, cispo: 0, phi: 0, kl: 0 };
  let loss = 0;
  const w = new Float64Array(T), lr = new Float64Array(T), klv = new Float64Array(T);
  dlogp.fill(0, 0, n * T);
  for (let r = 0; r < n; r++) {
    const A = adv[r], m = len[r], m1 = Math.max(m, 1), base = r * T;
    for (let s = 0; s < T; s++) {
      const mask = s < m ? 1 : 0;
      w[s] = mask * (how === "grpo" ? 1 / (m1 * B) : how === "bnpo" ? 1 / tokens : how === "dr_grpo" ? 1 / (B * T) : 1 / B);
      lr[s] = old ? logp[base + s] - old[base + s] : 0; // on-policy: logp - logp.detach() = 0, exactly
    }
    let seq = 0;
    for (let s = 0; s < m; s++) seq += lr[s];
    seq /= m1;
    const seqRatio = Math.exp(seq);
    let W = 0;
    for (let s = 0; s < T; s++) W += w[s];
    const flags = (x, mk) => (perSeq ? x / B : (x * mk) / tokens); // a share over responses, or over tokens
    // the objective's gradient with respect to logp, per token (sequence-level terms gathered in gseq)
    let gseq = 0; // d loss / d (the response's sequence ratio), when the objective is per response
    if (CLIPPED.has(loss_type)) {
      const clipped = (rho) => {
        const u = delta === null ? rho : Math.min(rho, delta), du = delta === null || rho <= delta ? 1 : 0;
        const c = Math.min(Math.max(rho, 1 - clip_eps), 1 + epsHigh), dc = rho >= 1 - clip_eps && rho <= 1 + epsHigh ? 1 : 0;
        const a = u * A, b = c * A; // torch.minimum's gradient: all to the smaller, half each on a tie
        const d = a < b ? du : a > b ? dc : 0.5 * (du + dc);
        return [Math.min(a, b), d * A, u];
      };
      const mark = (rho, mk) => {
        const x = delta === null ? rho : Math.min(rho, delta);
        const lo = x < 1 - clip_eps && A < 0, hi = x > 1 + epsHigh && A > 0;
        sums.low += flags(lo ? 1 : 0, mk);
        sums.high += flags(hi ? 1 : 0, mk);
        sums.region += flags(lo || hi ? 1 : 0, mk);
      };
      if (perSeq) {
        const [obj, d] = clipped(seqRatio);
        loss -= W * obj;
        gseq = -W * d;
        mark(seqRatio, 1);
      } else {
        for (let s = 0; s < T; s++) {
          const rho = Math.exp(lr[s]), [obj, d] = clipped(rho);
          loss -= w[s] * obj;
          dlogp[base + s] -= w[s] * d * rho;
          if (s < m) mark(rho, 1);
        }
      }
    } else if (loss_type === "cispo") {
      const cap = clip_eps_high ?? clip_eps;
      for (let s = 0; s < T; s++) {
        const rho = perSeq ? seqRatio : Math.exp(lr[s]), c = Math.min(rho, cap);
        loss -= w[s] * c * A * logp[base + s];
        dlogp[base + s] -= w[s] * c * A;
        if (!perSeq && s < m) sums.cispo += flags(rho > cap && A > 0 ? 1 : 0, 1);
      }
      if (perSeq) sums.cispo += flags(seqRatio > cap && A > 0 ? 1 : 0, 1);
    } else if (loss_type === "sapo") {
      const tau = A > 0 ? sapo_temperature_pos : sapo_temperature_neg;
      const gate = (rho) => {
        const sg = sigmoid(tau * (rho - 1));
        return [(sg * 4) / tau * A, 4 * sg * (1 - sg) * A];
      };
      if (perSeq) {
        const [obj, d] = gate(seqRatio);
        loss -= W * obj;
        gseq = -W * d;
      } else {
        for (let s = 0; s < T; s++) {
          const rho = Math.exp(lr[s]), [obj, d] = gate(rho);
          loss -= w[s] * obj;
          dlogp[base + s] -= w[s] * d * rho;
        }
      }
    } else { // vespo: a Gamma weight of the response's ratio (a product over its tokens), at either level
      let logW = 0;
      for (let s = 0; s < m; s++) logW += Math.min(Math.max(lr[s], -20), 20);
      logW = Math.min(Math.max(logW, Math.log(1e-8)), 20);
      const k = A >= 0 ? vespo_k_pos : vespo_k_neg, lam = Math.max(A >= 0 ? vespo_lambda_pos : vespo_lambda_neg, 1e-4);
      let phi = Math.exp(lam + k * logW - lam * Math.exp(logW));
      if (!Number.isFinite(phi)) phi = 0;
      sums.phi += phi / B;
      for (let s = 0; s < T; s++) {
        loss -= w[s] * phi * A * logp[base + s];
        dlogp[base + s] -= w[s] * phi * A;
      }
    }
    if (gseq !== 0) for (let s = 0; s < m; s++) dlogp[base + s] += (gseq * seqRatio) / m1; // d ratio / d logp_s
    if (ref) { // beta * k3 (times the ratio with kl_times_ratio), and its metric
      let wkl = 0;
      for (let s = 0; s < T; s++) {
        const d = ref[base + s] - logp[base + s], k3 = Math.expm1(d) - d;
        const rho = perSeq ? seqRatio : Math.exp(lr[s]);
        klv[s] = kl_times_ratio ? k3 * rho : k3;
        if (s < m) sums.kl += klv[s] / tokens;
        if (beta !== 0) {
          loss += beta * w[s] * klv[s];
          dlogp[base + s] += beta * w[s] * -Math.expm1(d) * (kl_times_ratio ? rho : 1);
          if (kl_times_ratio && !perSeq) dlogp[base + s] += beta * w[s] * k3 * rho;
          wkl += w[s] * k3;
        }
      }
      if (beta !== 0 && kl_times_ratio && perSeq) for (let s = 0; s < m; s++) dlogp[base + s] += (beta * wkl * seqRatio) / m1;
    }
  }
  return { loss, sums };
}

// The metrics policy_loss reports for a loss type (sim.grpo.policy_loss), from the summed shares.
export function lossMetrics(loss_type, sums, hasRef) {
  const out = {};
  if (CLIPPED.has(loss_type)) {
    out["clip_ratio/low_mean"] = sums.low;
    out["clip_ratio/high_mean"] = sums.high;
    out["clip_ratio/region_mean"] = sums.region;
  } else if (loss_type === "cispo") out.cispo_clip_ratio = sums.cispo;
  else if (loss_type === "vespo") out["vespo/phi_seq_mean"] = sums.phi;
  if (hasRef) out.kl = sums.kl;
  return out;
}

// ================================================================ the optimizer (sim/tinylm/optim.py)

// Global-norm clipping in place: g <- g min(1, max_norm / (||g|| + 1e-6)) (0: off); returns the norm before.
export function clipGrad(g, maxNorm) {
  let sq = 0;
  for (let i = 0; i < g.length; i++) sq += g[i] * g[i];
  const norm = Math.sqrt(sq);
  if (maxNorm > 0 && Number.isFinite(norm)) {
    const c = Math.min(1, maxNorm / (norm + 1e-6));
    if (c < 1) for (let i = 0; i < g.length; i++) g[i] *= c;
  }
  return norm;
}

// AdamW on a flat float32 vector, torch.optim.AdamW's update (sim.tinylm.optim.FlatAdamW).
export class AdamW {
  constructor(n, { betas = [0.9, 0.999], eps = 1e-8, weightDecay = 0 } = {}) {
    this.m = new Float32Array(n);
    this.v = new Float32Array(n);
    this.t = 0;
    this.betas = betas;
    this.eps = eps;
    this.weightDecay = weightDecay;
  }

  step(theta, g, lr) {
    const [b1, b2] = this.betas, m = this.m, v = this.v;
    this.t += 1;
    const c1 = 1 - b1 ** this.t, c2 = 1 - b2 ** this.t, decay = 1 - lr * this.weightDecay, a = -lr / c1;
    for (let i = 0; i < theta.length; i++) {
      m[i] = m[i] + (1 - b1) * (g[i] - m[i]);
      v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
      theta[i] = theta[i] * decay + (a * m[i]) / (Math.sqrt(v[i] / c2) + this.eps);
    }
  }
}

// ================================================================ pass@k (sim/passk.py)

// Mean pass@k over problems, k = 1..n, from each problem's correct count c of n samples, by the unbiased estimator
// 1 - C(n - c, k) / C(n, k), its product form prod_{i<k} (n - c - i) / (n - i).
export function meanPassAtK(n, counts) {
  const out = new Float64Array(n);
  for (const c of counts) {
    if (c === 0) continue;
    let none = 1;
    for (let k = 1; k <= n; k++) {
      none = n - c - k + 1 > 0 ? (none * (n - c - k + 1)) / (n - k + 1) : 0;
      out[k - 1] += 1 - none;
    }
  }
  for (let k = 0; k < n; k++) out[k] /= counts.length;
  return out;
}

// ================================================================ one shard of the batch

export const SHARDS = 2; // the batch's fixed split: the same run with one Worker or two (see tinylm_trainer.js)

// Prompts lo..hi-1 of P belong to shard s of n (the same split for any number of Workers).
export function shardRange(P, s, n = SHARDS) {
  return [Math.floor((s * P) / n), Math.floor(((s + 1) * P) / n)];
}

// The SFT weights in theta's layout (assets/js/tinylm_model.js).
export function sftTheta() {
  const text = atob(SFT.base64), bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return fromTorch(SFT.model_config, new Float32Array(bytes.buffer));
}

// A shard of the batch: its prompts' rows through sampling, the loss and backward, on its own policy and reference
// models (its own arena). Everything it returns is plain data and typed arrays, so it can live in a Worker.
export class Shard {
  static async create(cfg, index, { simd = true } = {}) {
    const s = new Shard();
    s.cfg = cfg;
    s.index = index;
    const mc = SFT.model_config, [lo, hi] = shardRange(cfg.prompts_per_iter, index);
    const [hlo, hhi] = shardRange(HELDOUT.length, index);
    const evalProblems = Math.max(1, Math.floor(256 / cfg.eval_samples)); // problems per pass@k chunk
    s.cap = { prompts: Math.max(hi - lo, hhi - hlo, evalProblems, 1),
      rows: Math.max((hi - lo) * cfg.group_size, hhi - hlo, evalProblems * cfg.eval_samples, 1) }; // prettier-ignore
    s.evalProblems = Math.max(1, Math.floor(s.cap.rows / cfg.eval_samples));
    const sft = sftTheta();
    s.policy = new TinyLM(await createKernels(arenaFloats(mc, s.cap), { simd }), mc, s.cap);
    s.ref = new TinyLM(await createKernels(arenaFloats(mc, s.cap), { simd }), mc, s.cap);
    s.policy.setParams(sft);
    s.ref.setParams(sft);
    s.simd = s.policy.k.simd;
    s.problems = trainProblems({ blindSpot: cfg.blind_spot_prompts });
    return s;
  }

  setParams(theta) {
    this.policy.setParams(theta);
  }

  // Phase 1 of iteration `iteration`: sample G responses for this shard's prompts of the batch (`batch`: the P
  // problems' indices into the training problems) with the policy (theta: its parameters, when they changed), score
  // them. Returns {rewards, lengths, tokens}.
  sample(iteration, batch, theta = null) {
    if (theta) this.policy.setParams(theta);
    const cfg = this.cfg, G = cfg.group_size, [lo, hi] = shardRange(batch.length, this.index);
    const P = hi - lo, R = P * G;
    this.rows = R;
    this.batch = batch.slice(lo, hi).map((i) => this.problems[i]);
    const c1 = new Array(R).fill(iteration), c2 = Array.from({ length: R }, (_, r) => lo * G + r);
    const U = rowUniforms(cfg.seed, STREAM.tokens, c1, c2, new Float64Array(R * T));
    const tokens = this.generate(this.policy, this.batch, G, U, cfg.temperature).slice(0, R * T);
    this.tokens = tokens;
    const rewards = new Float64Array(R), lengths = new Int32Array(R);
    for (let r = 0; r < R; r++) {
      const [a, b] = this.batch[Math.floor(r / G)];
      rewards[r] = reward(tokens, r * T, a, b);
      lengths[r] = completionLength(tokens, r * T);
    }
    this.lengths = lengths;
    // the sampling policy's log-probabilities (pi_old when mu > 1) and entropies: the generation's own logits
    this.logp = new Float64Array(R * T);
    this.entropy = new Float64Array(R * T);
    this.readLogp(this.policy, this.logp, this.entropy);
    this.fresh = true; // the policy's activations are this batch's, under the parameters that sampled it
    return { rewards, lengths, tokens };
  }

  // P problems, G rows each, sampled at the uniforms U (R T) at temperature tau: the tokens (R T, row-major),
  // every activation kept in `model` (its last forward pass is this batch's, teacher-forced).
  generate(model, problems, G, U, tau) {
    const P = problems.length, R = P * G, f = model.f, ids = new Int32Array(P * PROMPT_LEN), cdf = new Float64Array(V);
    problems.forEach(([a, b], p) => promptTokens(a, b, ids, p * PROMPT_LEN));
    model.prefix(ids, P);
    model.G = G; // logitsAt(r, 0) reads the prefix's logits of prompt r / G
    const tok = model.contTokens;
    for (let s = 0; s < T; s++) {
      if (s > 0) model.continuation(R, G, s - 1, s);
      for (let r = 0; r < R; r++) tok[r * T + s] = inverseCdf(f, model.logitsAt(r, s), tau, U[r * T + s], cdf);
    }
    return tok;
  }

  // log pi(token) and entropy of each row and position under `model`'s last forward pass at the run's temperature.
  readLogp(model, logp, entropy) {
    const tok = model.contTokens, probs = new Float64Array(V), tau = this.cfg.temperature;
    for (let r = 0; r < this.rows; r++) {
      for (let s = 0; s < T; s++) {
        const [lp, ent] = logProb(model.f, model.logitsAt(r, s), tau, tok[r * T + s], probs);
        logp[r * T + s] = lp;
        if (entropy) entropy[r * T + s] = ent;
      }
    }
  }

  // Teacher-forced forward of this shard's batch (its prompts, the sampled tokens) on `model`.
  forward(model) {
    const G = this.cfg.group_size, P = this.batch.length, ids = new Int32Array(P * PROMPT_LEN);
    this.batch.forEach(([a, b], p) => promptTokens(a, b, ids, p * PROMPT_LEN));
    model.prefix(ids, P);
    model.contTokens.set(this.tokens.subarray(0, this.rows * T));
    model.continuation(this.rows, G, 0, T - 1);
  }

  // Phase 2, inner step `inner` of mu: with the batch's advantages of this shard's rows and the batch's norms
  // {B, tokens}, the loss's share and the gradient of every parameter. `theta`: the policy's parameters when they
  // changed since sampling (inner > 0), else null. wantRef: compute log pi_ref (first inner step only).
  lossGrad({ adv, norms, inner = 0, theta = null, wantRef = false }) {
    const cfg = this.cfg, R = this.rows, model = this.policy;
    if (inner === 0) { // log pi_ref once per batch, for every inner step (sim computes it before its mu steps)
      this.refLogp = null;
      if (wantRef) {
        this.forward(this.ref);
        this.refLogp = new Float64Array(R * T);
        this.readLogp(this.ref, this.refLogp, null);
      }
    }
    let logp = this.logp, entropy = this.entropy;
    if (theta || !this.fresh) {
      if (theta) model.setParams(theta);
      this.forward(model);
      logp = new Float64Array(R * T);
      entropy = new Float64Array(R * T);
      this.readLogp(model, logp, entropy);
    }
    const old = cfg.mu > 1 ? this.logp : null;
    const dlogp = new Float64Array(R * T);
    const { loss, sums } = policyLossGrad(logp, old, this.refLogp, this.lengths, adv, R, norms, cfg, dlogp);
    // d loss / d logits = dlogp (onehot - softmax) / tau, the first position's summed over the group
    const f = model.f, G = cfg.group_size, probs = new Float64Array(V), tau = cfg.temperature, tok = this.tokens;
    f.fill(0, model.pre.dlogits, model.pre.dlogits + this.batch.length * V);
    f.fill(0, model.con.dlogits, model.con.dlogits + (T - 1) * R * V);
    for (let r = 0; r < R; r++) {
      for (let s = 0; s < T; s++) {
        const src = model.logitsAt(r, s), g = dlogp[r * T + s];
        const dst = s === 0 ? model.pre.dlogits + Math.floor(r / G) * V : model.con.dlogits + ((s - 1) * R + r) * V;
        logProb(f, src, tau, tok[r * T + s], probs);
        for (let v = 0; v < V; v++) f[dst + v] += (g * ((v === tok[r * T + s] ? 1 : 0) - probs[v])) / tau;
      }
    }
    const grad = model.backward().slice();
    this.fresh = false; // the parameters move after this step
    let ent = 0;
    for (let r = 0; r < R; r++) for (let s = 0; s < this.lengths[r]; s++) ent += entropy[r * T + s];
    return { grad, loss, sums: { ...sums, entropy: ent / Math.max(norms.tokens, 1) }, hasRef: !!this.refLogp };
  }

  // Exact held-out pass@1's share: the sum over this shard's held-out problems of pi(answer | prompt) at
  // temperature 1 under the policy (sim.tinylm.evaluate.expected_pass_at_1), or under the reference (which: "ref").
  passAt1Sum(theta = null, which = "policy") {
    const model = which === "ref" ? this.ref : this.policy;
    if (theta) model.setParams(theta);
    const [lo, hi] = shardRange(HELDOUT.length, this.index), P = hi - lo;
    const ids = new Int32Array(P * PROMPT_LEN), targets = [];
    for (let p = 0; p < P; p++) {
      const [a, b] = HELDOUT[lo + p];
      promptTokens(a, b, ids, p * PROMPT_LEN);
      targets.push(answerTokens(a, b));
    }
    model.prefix(ids, P);
    model.G = 1;
    for (let p = 0; p < P; p++) for (let s = 0; s < T; s++) model.contTokens[p * T + s] = targets[p][s] === PAD ? 0 : targets[p][s];
    model.continuation(P, 1, 0, T - 1);
    const probs = new Float64Array(V);
    let sum = 0;
    for (let p = 0; p < P; p++) {
      let lp = 0;
      for (let s = 0; s < T && targets[p][s] !== PAD; s++) lp += logProb(model.f, model.logitsAt(p, s), 1, targets[p][s], probs)[0];
      sum += Math.exp(lp);
    }
    if (which !== "ref") this.fresh = false; // the policy's activations are no longer the batch's
    return sum;
  }

  // pass@k's correct counts of held-out problems q0..q1-1 (indices into HELDOUT, at most this.evalProblems of
  // them): n samples each at temperature 1 from the evaluation stream (c1 = the problem's index, c2 = the sample),
  // under the reference ("ref": the SFT model) or the policy (theta: its parameters, when they changed).
  passkChunk(which, n, seed, q0, q1, theta = null) {
    const model = which === "ref" ? this.ref : this.policy;
    if (theta) model.setParams(theta);
    const P = q1 - q0, R = P * n, c1 = new Array(R), c2 = new Array(R), counts = new Int32Array(P);
    for (let r = 0; r < R; r++) [c1[r], c2[r]] = [q0 + Math.floor(r / n), r % n];
    const U = rowUniforms(seed, STREAM.eval, c1, c2, new Float64Array(R * T));
    const problems = HELDOUT.slice(q0, q1), tok = this.generate(model, problems, n, U, 1);
    for (let r = 0; r < R; r++) counts[Math.floor(r / n)] += reward(tok, r * T, ...problems[Math.floor(r / n)]);
    if (which !== "ref") this.fresh = false;
    return counts;
  }

  // What the coordinator needs to know of this shard.
  info() {
    return { simd: this.simd, evalProblems: this.evalProblems, heldout: shardRange(HELDOUT.length, this.index) };
  }
}
