// The browser's TinyLM trainer under node, for tests/test_tinylm_js.py (through tests/fixtures/node.py's allowed()):
// reads a JSON request (or a list of them) on stdin, prints the reply (or the list of replies). Float arrays travel as base64 of little-endian float32
// ({f32: "..."}) or float64 ({f64: "..."}), parameters and gradients in torch's layout and state_dict order.
//   {op: "kernels"}                                          the WebAssembly and JavaScript products, bit for bit
//   {op: "model", prompts, responses, G, dlogits, simd}      logits (R, 4, V) and the gradient of sum(logits dlogits)
//   {op: "loss", prompts, responses, G, adv, old, ref, options, temperature}
//                                                            policyLossGrad through the model: loss, metrics, gradient
//   {op: "adamw", theta, grads: [...], lrs, options}          theta after AdamW steps with these gradients
//   {op: "first", settings, iterations}                      the trainer's first iterations: metrics, groups, thetas
//   {op: "eval", settings}                                   a whole run: its pass@1 checks, then the evaluation
//   {op: "bundle", script, settings}                         the same through the page's bundle (a classic script at
//                                                            path `script`) and its API, on this thread: the snapshot
import { readFileSync } from "node:fs";
import { createKernels } from "../../assets/js/tinylm_kernels.js";
import { AdamW, V, lossMetrics, policyLossGrad, sftTheta } from "../../assets/js/tinylm_grpo.js";
import { TinyLM, arenaFloats, toTorch } from "../../assets/js/tinylm_model.js";
import { SFT } from "../../assets/js/tinylm_sft.js";
import { Trainer } from "../../assets/js/tinylm_trainer.js";

const cfg = SFT.model_config;
const b64 = (typed) => Buffer.from(typed.buffer, typed.byteOffset, typed.byteLength).toString("base64");
const bytes = (s) => {
  const b = Buffer.from(s, "base64");
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
};
const f32of = (s) => new Float32Array(bytes(s));
const f64of = (s) => new Float64Array(bytes(s));

async function kernelsOp() {
  const a = await createKernels(1 << 20), b = await createKernels(1 << 20, { simd: false });
  const shapes = [[1, 1, 1], [5, 14, 64], [7, 13, 3], [128, 192, 64], [9, 64, 256], [3, 256, 64], [6, 9, 14]];
  let differ = 0, checked = 0;
  for (const [M, N, K] of shapes) {
    for (const k of [a, b]) for (let i = 0; i < 200000; i++) k.f32[k.base + i] = Math.sin(i * 1.37) * (i % 7);
    const X = a.base, W = X + M * K + 4, B = W + K * N + 8, Y = B + N + 4, G = Y + M * N + 4;
    for (const k of [a, b]) {
      k.matmul(M, N, K, X, W, B, Y, 0);
      k.matmul(M, N, K, X, W, B, Y, 1); // ACC
      k.matmul(M, N, K, X, W, 0, Y, 3); // ACC | RELU
      k.matmulTN(M, N, K, X, Y, G);
      k.matmul(M, N, K, X, W, B, Y, 2); // RELU
    }
    for (let i = 0; i < M * N; i++, checked++) if (a.f32[Y + i] !== b.f32[Y + i]) differ++;
    for (let i = 0; i < K * N; i++, checked++) if (a.f32[G + i] !== b.f32[G + i]) differ++;
  }
  return { simd: [a.simd, b.simd], differ, checked };
}

// The SFT model, teacher-forced on prompts (P, 6) and responses (R, 4): the model, its logits (R, 4, V).
async function forced(q) {
  const P = q.prompts.length, G = q.G, R = P * G;
  const k = await createKernels(arenaFloats(cfg, { prompts: P, rows: R }), { simd: q.simd !== false });
  const m = new TinyLM(k, cfg, { prompts: P, rows: R });
  m.setParams(sftTheta());
  m.prefix(Int32Array.from(q.prompts.flat()), P);
  for (let r = 0; r < R; r++) for (let s = 0; s < 4; s++) m.contTokens[r * 4 + s] = q.responses[r][s];
  m.continuation(R, G, 0, 3);
  const logits = new Float32Array(R * 4 * V);
  for (let r = 0; r < R; r++) for (let s = 0; s < 4; s++) logits.set(k.f32.subarray(m.logitsAt(r, s), m.logitsAt(r, s) + V), (r * 4 + s) * V);
  return { m, k, P, G, R, logits };
}

// Gradients of sum(logits dlogits) for dlogits (R, 4, V): the first position's summed over each group.
function backwardFrom(m, k, P, G, R, dl) {
  k.f32.fill(0, m.pre.dlogits, m.pre.dlogits + P * V);
  for (let r = 0; r < R; r++) {
    for (let s = 0; s < 4; s++) {
      const dst = s === 0 ? m.pre.dlogits + Math.floor(r / G) * V : m.con.dlogits + ((s - 1) * R + r) * V;
      for (let v = 0; v < V; v++) k.f32[dst + v] = (s === 0 ? k.f32[dst + v] : 0) + dl[(r * 4 + s) * V + v];
    }
  }
  return toTorch(cfg, m.backward());
}

async function modelOp(q) {
  const { m, k, P, G, R, logits } = await forced(q);
  return { simd: k.simd, logits: b64(logits), grad: b64(backwardFrom(m, k, P, G, R, f64of(q.dlogits))) };
}

async function lossOp(q) {
  const { m, k, P, G, R, logits } = await forced(q);
  const tau = q.temperature ?? 1, logp = new Float64Array(R * 4), dl = new Float64Array(R * 4 * V);
  const probs = (r, s) => {
    const z = Array.from(logits.subarray((r * 4 + s) * V, (r * 4 + s + 1) * V), (x) => x / tau);
    const max = Math.max(...z), e = z.map((x) => Math.exp(x - max)), sum = e.reduce((a, b) => a + b, 0);
    return [e.map((x) => x / sum), z.map((x) => x - max - Math.log(sum))];
  };
  for (let r = 0; r < R; r++) for (let s = 0; s < 4; s++) logp[r * 4 + s] = probs(r, s)[1][q.responses[r][s]];
  const len = q.responses.map((row) => { const i = row.indexOf(12); return i < 0 ? 4 : i + 1; });
  const tokens = len.reduce((a, b) => a + b, 0), dlogp = new Float64Array(R * 4);
  const old = q.old ? f64of(q.old) : null, ref = q.ref ? f64of(q.ref) : null;
  const { loss, sums } = policyLossGrad(logp, old, ref, len, Float64Array.from(q.adv), R, { B: R, tokens }, q.options, dlogp);
  for (let r = 0; r < R; r++) {
    for (let s = 0; s < 4; s++) {
      const [p] = probs(r, s);
      for (let v = 0; v < V; v++) dl[(r * 4 + s) * V + v] = (dlogp[r * 4 + s] * ((v === q.responses[r][s] ? 1 : 0) - p[v])) / tau;
    }
  }
  const metrics = lossMetrics(q.options.loss_type, sums, !!ref);
  return { loss, metrics, logp: b64(logp), grad: b64(backwardFrom(m, k, P, G, R, dl)) };
}

function adamwOp(q) {
  const theta = f32of(q.theta), opt = new AdamW(theta.length, q.options);
  q.grads.forEach((g, i) => opt.step(theta, f32of(g), q.lrs[i]));
  return { theta: b64(theta) };
}

async function firstOp(q) {
  const tr = await Trainer.create(q.settings);
  const theta0 = toTorch(cfg, tr.theta), metrics = [], thetas = [];
  for (let i = 0; i < q.iterations; i++) {
    metrics.push(await tr.step());
    thetas.push(b64(toTorch(cfg, tr.theta)));
  }
  return { metrics, groups: tr.latestGroups, pass_at_1: tr.passAt1, theta0: b64(theta0), thetas };
}

async function evalOp(q) {
  const tr = await Trainer.create(q.settings);
  for (let i = 0; i < tr.cfg.iterations; i++) await tr.step();
  return { pass_at_1: tr.passAt1, result: await tr.evaluate() };
}

async function bundleOp(q) {
  const window = {};
  new Function("window", readFileSync(q.script, "utf8"))(window); // eslint-disable-line no-new-func
  return await new Promise((resolve) => {
    const run = window.grpoTinyLM.startTinyLM(q.settings, {
      onMessage: (msg) => ["done", "error"].includes(msg.type) && resolve(run.snapshot()),
    });
  });
}

const ops = { bundle: bundleOp, kernels: kernelsOp, model: modelOp, loss: lossOp, adamw: adamwOp, first: firstOp, eval: evalOp };
const request = JSON.parse(readFileSync(0, "utf8"));
const replies = [];
for (const q of [request].flat()) replies.push(await ops[q.op](q));
process.stdout.write(JSON.stringify(Array.isArray(request) ? replies : replies[0]));
