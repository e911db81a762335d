// The browser's TinyLM story, one coordinator over the batch's shards: sim/tinylm/grpo_train.py's GRPOTrainer.step
// (its metrics under TRL's names, the latest groups, held-out pass@1 every eval_every iterations) and
// sim/tinylm/story.py's run_story (pass@k before and after on the 300 held-out problems, the problems never solved,
// where the curves cross), with the formulas of assets/js/tinylm_grpo.js.
//
// A batch is always split into SHARDS (2) fixed shards, computed by one Worker or two (a Shard in this thread, or
// one behind postMessage: RemoteShard): the gradient is the shards' sum in shard order either way, so a seed gives
// the same run, bit for bit, on one core or two. The coordinator keeps the parameters and AdamW's state and hands
// the parameters to the shards when they change.

import { crossoverK } from "./engine.js";
import {
  AdamW, HELDOUT, METRICS, SHARDS, Shard, T, clipGrad, groupAdvantages, learningRate, lossMetrics, meanPassAtK,
  promptIndices, responseText, sftTheta, tinylmConfig, trainProblems,
} from "./tinylm_grpo.js";

export { METRICS };

// A shard in this thread, with the remote one's asynchronous face (a call runs to its end before it returns).
export class LocalShard {
  constructor() {
    this.shard = null;
    this.remote = false;
  }

  async call(method, args) {
    if (method === "create") {
      this.shard = await Shard.create(...args);
      return this.shard.info();
    }
    return this.shard[method](...args);
  }
}

// A shard in another Worker (tinylm_run.js starts it): call(method, args) posts {id, method, args} and resolves with
// its {id, result}.
export class RemoteShard {
  constructor(worker) {
    this.worker = worker;
    this.remote = true;
    this.seq = 0;
    this.pending = new Map();
    worker.onmessage = (e) => {
      const { id, result, error } = e.data;
      const p = this.pending.get(id);
      this.pending.delete(id);
      if (p) error === undefined ? p.resolve(result) : p.reject(new Error(error));
    };
    worker.onerror = (e) => {
      if (e.preventDefault) e.preventDefault();
      for (const p of this.pending.values()) p.reject(new Error(`a TinyLM worker failed: ${e.message || e}`));
      this.pending.clear();
    };
  }

  call(method, args) {
    const id = ++this.seq;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, method, args });
    });
  }
}

// The message loop of a Worker that holds a shard: {method: "create", args: [cfg, index, opts]} first.
export function serveShard(scope) {
  let shard = null;
  scope.onmessage = async (e) => {
    const { id, method, args } = e.data;
    try {
      let result;
      if (method === "create") {
        shard = await Shard.create(...args);
        result = shard.info();
      } else result = shard[method](...args);
      const transfer = result && result.grad ? [result.grad.buffer] : [];
      scope.postMessage({ id, result }, transfer);
    } catch (err) {
      scope.postMessage({ id, error: String((err && err.message) || err) });
    }
  };
}

// All shards' calls at once, remote ones posted first (a local call runs to its end before returning), the results
// in shard order.
function onAll(shards, call) {
  const out = new Array(shards.length);
  const order = shards.map((_, i) => i).sort((a, b) => shards[b].remote - shards[a].remote);
  for (const i of order) out[i] = call(shards[i], i);
  return Promise.all(out);
}

function sampleStd(xs) {
  if (xs.length < 2) return NaN; // torch's std of one value
  let m = 0;
  for (const x of xs) m += x;
  m /= xs.length;
  let s = 0;
  for (const x of xs) s += (x - m) ** 2;
  return Math.sqrt(s / (xs.length - 1));
}

export class Trainer {
  // settings: tinylmConfig's values; shards: SHARDS shard handles (LocalShard or RemoteShard) not yet created.
  static async create(settings, shards = [new LocalShard(), new LocalShard()], { simd = true } = {}) {
    const t = new Trainer();
    t.cfg = tinylmConfig(settings);
    if (shards.length !== SHARDS) throw new Error(`a TinyLM trainer has ${SHARDS} shards, got ${shards.length}`);
    t.shards = shards;
    t.info = await onAll(shards, (s, i) => s.call("create", [t.cfg, i, { simd }]));
    t.theta = sftTheta();
    t.adam = new AdamW(t.theta.length, { betas: [t.cfg.adam_beta1, t.cfg.adam_beta2], weightDecay: t.cfg.weight_decay });
    t.problems = trainProblems({ blindSpot: t.cfg.blind_spot_prompts });
    t.nTrain = t.problems.length;
    t.iteration = 0;
    t.history = [];
    t.latestGroups = [];
    t.passAt1 = [[0, await t.heldoutPassAt1(null)]];
    return t;
  }

  get simd() {
    return this.info.every((i) => i.simd);
  }

  // Exact mean held-out pass@1 of the policy (theta: its new parameters, sent to the shards).
  async heldoutPassAt1(theta) {
    const sums = await onAll(this.shards, (s) => s.call("passAt1Sum", [theta]));
    return sums.reduce((a, b) => a + b, 0) / HELDOUT.length;
  }

  // One GRPO iteration: its metrics, as sim's GRPOTrainer.step returns them.
  async step() {
    const cfg = this.cfg, G = cfg.group_size, t0 = performance.now();
    const batch = promptIndices(cfg.seed, this.iteration, this.nTrain, cfg.prompts_per_iter);
    const problems = this.problems;
    const theta = this.theta.slice(); // the shards take a copy (a remote one by postMessage anyway)
    const parts = await onAll(this.shards, (s) => s.call("sample", [this.iteration, batch, theta]));
    const rewards = Float64Array.from(parts.flatMap((p) => Array.from(p.rewards)));
    const lengths = parts.flatMap((p) => Array.from(p.lengths));
    const B = rewards.length, tokens = lengths.reduce((a, b) => a + b, 0);
    const adv = groupAdvantages(rewards, G, cfg);
    const wantRef = cfg.beta > 0 || this.iteration % cfg.kl_every === 0;
    const lr = learningRate(cfg, this.iteration);
    const sums = {};
    const rowsOf = parts.map((p) => p.rewards.length);
    for (let inner = 0; inner < cfg.mu; inner++) {
      let row = 0;
      const advOf = rowsOf.map((n) => adv.slice(row, (row += n)));
      const innerTheta = inner > 0 ? this.theta.slice() : null;
      const out = await onAll(this.shards, (s, i) => s.call("lossGrad", [{ adv: advOf[i], norms: { B, tokens }, inner,
        theta: innerTheta, wantRef }])); // prettier-ignore
      const grad = out[0].grad;
      for (const o of out.slice(1)) for (let j = 0; j < grad.length; j++) grad[j] += o.grad[j];
      const gn = clipGrad(grad, cfg.max_grad_norm);
      this.adam.step(this.theta, grad, lr);
      const total = (k) => out.reduce((a, o) => a + o.sums[k], 0);
      const m = lossMetrics(cfg.loss_type, { low: total("low"), high: total("high"), region: total("region"),
        cispo: total("cispo"), phi: total("phi"), kl: total("kl") }, out[0].hasRef); // prettier-ignore
      m.loss = out.reduce((a, o) => a + o.loss, 0);
      m.grad_norm = gn;
      m.entropy = total("entropy");
      for (const [k, v] of Object.entries(m)) sums[k] = (sums[k] ?? 0) + v;
    }
    this.iteration += 1;
    const metrics = {};
    for (const [k, v] of Object.entries(sums)) metrics[k] = v / cfg.mu;
    let zeroStd = 0;
    for (let p = 0; p < B / G; p++) {
      const g = rewards.subarray(p * G, (p + 1) * G);
      if (Math.max(...g) === Math.min(...g)) zeroStd += 1;
    }
    Object.assign(metrics, {
      iteration: this.iteration,
      reward: rewards.reduce((a, b) => a + b, 0) / B,
      reward_std: sampleStd(rewards),
      frac_reward_zero_std: zeroStd / (B / G),
      "completions/mean_length": tokens / B,
    });
    const tok = parts.flatMap((p) => Array.from(p.tokens));
    this.latestGroups = [];
    for (let p = 0; p < Math.min(cfg.keep_groups, B / G); p++) {
      const [a, b] = problems[batch[p]], rows = Array.from({ length: G }, (_, g) => p * G + g);
      this.latestGroups.push({ prompt: `${a}+${b}=`, responses: rows.map((r) => responseText(tok, r * T)),
        rewards: rows.map((r) => rewards[r]), advantages: rows.map((r) => adv[r]) }); // prettier-ignore
    }
    if (this.iteration % cfg.eval_every === 0 || this.iteration === cfg.iterations) {
      metrics.pass_at_1 = await this.heldoutPassAt1(this.theta.slice());
      this.passAt1.push([this.iteration, metrics.pass_at_1]);
    }
    metrics.step_time = (performance.now() - t0) / 1000;
    this.history.push(metrics);
    return metrics;
  }

  // pass@k of the SFT model ("ref") and the trained policy on the held-out problems, n samples each from the same
  // uniforms (common random numbers: with 0 iterations the two are identical). gate() is awaited between chunks
  // (a pause); onProgress(done, total) counts problems.
  async evaluate({ gate = async () => {}, onProgress = () => {} } = {}) {
    const n = this.cfg.eval_samples, seed = this.cfg.seed, total = 2 * HELDOUT.length;
    const counts = { ref: new Int32Array(HELDOUT.length), policy: new Int32Array(HELDOUT.length) };
    let done = 0;
    for (const which of ["ref", "policy"]) {
      const theta = which === "policy" ? this.theta.slice() : null;
      await onAll(this.shards, async (s, i) => {
        const [lo, hi] = this.info[i].heldout, step = this.info[i].evalProblems;
        let first = true;
        for (let q0 = lo; q0 < hi; q0 += step) {
          await gate();
          const q1 = Math.min(hi, q0 + step);
          const c = await s.call("passkChunk", [which, n, seed, q0, q1, first ? theta : null]);
          first = false;
          counts[which].set(c, q0);
          done += q1 - q0;
          onProgress(done, total);
        }
      });
    }
    const before = meanPassAtK(n, counts.ref), after = meanPassAtK(n, counts.policy);
    const never = (c) => HELDOUT.filter((_, q) => c[q] === 0).map(([a, b]) => `${a}+${b}=`);
    const ks = Array.from({ length: n }, (_, k) => k + 1);
    return {
      pass_at_1_before: before[0],
      pass_at_1_after: after[0],
      pass_at_k_before: Array.from(before),
      pass_at_k_after: Array.from(after),
      never_solved_before: never(counts.ref),
      never_solved_after: never(counts.policy),
      crossover_k: crossoverK(ks, after, before),
      correct_before: Array.from(counts.ref),
      correct_after: Array.from(counts.policy),
    };
  }
}
