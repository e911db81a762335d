// TinyLM in the browser: sim/tinylm/model.py's decoder-only transformer, forward with its key/value cache and
// backward, in float32 on one arena (assets/js/tinylm_kernels.js: the matrix products in WebAssembly SIMD).
// docs/tinylm-browser.md describes it; tests/test_tinylm_js.py proves it equal to torch's.
//
// A batch is P prompts of 6 tokens, each answered by G rows (R = P G). Like sim's generate and
// response_logprobs, every prompt is read once (the "prefix" segment, P x 6 tokens) and its keys and values are
// shared by its G rows; the rows' own tokens (the "continuation" segment: response tokens 0..L-1 as inputs,
// L = 3, positions 6..8) attend to their prompt's 6 keys and to their own earlier tokens. The continuation is
// stored time-major, token (t, r) at t R + r, so a generation step (one position of every row) is a contiguous
// block of rows and computes the same numbers, bit for bit, as the teacher-forced pass over all positions at once.
// That is why generate() keeps every activation: with mu = 1 the loss's forward pass is the sampling's, and the
// backward pass runs on it directly (sim runs a second, identical forward pass with autograd).
//
// Logits: row r's response position s (0..3) is predicted by the prefix's last position of prompt r / G (s = 0)
// or by continuation token (s - 1, r). The gradient of the shared s = 0 logits is the sum over the G rows.
//
// Parameters live in one flat float32 vector `theta`, in torch's state_dict order and sizes, except that a Linear's
// weight is stored (in, out), the transpose of torch's (out, in), so that the forward product is X W with W's rows
// contiguous; `wT` holds torch's orientation of the same weights for the backward product dX = dY W^T
// (syncWeights() refreshes it after theta changes). `grad` has theta's layout.

import { ACC, RELU } from "./tinylm_kernels.js";

const LN_EPS = 1e-5; // torch.nn.LayerNorm's default

// [{name, shape (torch's), size, linear}] in torch's state_dict order for a ModelConfig.
export function paramSpec(cfg) {
  const C = cfg.d_model, V = cfg.vocab_size;
  const out = [
    { name: "tok_emb.weight", shape: [V, C] },
    { name: "pos_emb.weight", shape: [cfg.block_size, C] },
  ];
  for (let l = 0; l < cfg.n_layer; l++) {
    const b = `blocks.${l}.`;
    out.push(
      { name: b + "ln1.weight", shape: [C] }, { name: b + "ln1.bias", shape: [C] },
      { name: b + "attn.qkv.weight", shape: [3 * C, C], linear: true }, { name: b + "attn.qkv.bias", shape: [3 * C] },
      { name: b + "attn.proj.weight", shape: [C, C], linear: true }, { name: b + "attn.proj.bias", shape: [C] },
      { name: b + "ln2.weight", shape: [C] }, { name: b + "ln2.bias", shape: [C] },
      { name: b + "mlp.0.weight", shape: [4 * C, C], linear: true }, { name: b + "mlp.0.bias", shape: [4 * C] },
      { name: b + "mlp.2.weight", shape: [C, 4 * C], linear: true }, { name: b + "mlp.2.bias", shape: [C] },
    ); // prettier-ignore
  }
  out.push({ name: "ln_f.weight", shape: [C] }, { name: "ln_f.bias", shape: [C] },
    { name: "head.weight", shape: [V, C], linear: true }); // prettier-ignore
  let off = 0;
  for (const p of out) {
    p.size = p.shape.reduce((a, b) => a * b, 1);
    p.off = off;
    off += p.size;
  }
  return out;
}

export function nParams(cfg) {
  const spec = paramSpec(cfg);
  return spec[spec.length - 1].off + spec[spec.length - 1].size;
}

// theta's layout from torch's (a flat vector in state_dict order), and back: only the Linear weights move.
export function fromTorch(cfg, flat, out = new Float32Array(flat.length)) {
  for (const p of paramSpec(cfg)) {
    if (!p.linear) out.set(flat.subarray(p.off, p.off + p.size), p.off);
    else transpose(flat, p.off, p.shape[0], p.shape[1], out, p.off);
  }
  return out;
}

export function toTorch(cfg, theta, out = new Float32Array(theta.length)) {
  for (const p of paramSpec(cfg)) {
    if (!p.linear) out.set(theta.subarray(p.off, p.off + p.size), p.off);
    else transpose(theta, p.off, p.shape[1], p.shape[0], out, p.off);
  }
  return out;
}

// dst[j, i] = src[i, j] for a (rows, cols) matrix at src[so..], into dst[do..] as (cols, rows).
function transpose(src, so, rows, cols, dst, dOff) {
  for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) dst[dOff + j * rows + i] = src[so + i * cols + j];
}

// Floats a TinyLM with these capacities takes from its arena (createKernels(need)).
export function arenaFloats(cfg, { prompts, rows }) {
  return new Arena(null, 0).plan(cfg, { prompts, rows });
}

class Arena {
  constructor(f32, base) {
    this.f32 = f32;
    this.next = base;
  }

  alloc(n) {
    const off = this.next;
    this.next += Math.ceil(n / 4) * 4 + 4; // 16-byte aligned, with a gap
    return off;
  }

  plan(cfg, cap) {
    const m = Object.create(TinyLM.prototype);
    m.cfg = cfg;
    m.layout(this, cap);
    return this.next;
  }
}

export class TinyLM {
  // k: kernels (createKernels), cfg: ModelConfig fields, cap: {prompts, rows} the most this instance computes at once.
  constructor(k, cfg, cap) {
    this.k = k;
    this.cfg = cfg;
    this.f = k.f32;
    this.layout(new Arena(k.f32, k.base), cap);
  }

  layout(arena, { prompts, rows }) {
    const cfg = this.cfg, C = cfg.d_model, H = cfg.n_head, V = cfg.vocab_size;
    this.C = C;
    this.H = H;
    this.hd = C / H;
    this.V = V;
    this.Tp = 6; // prompt tokens
    this.L = cfg.block_size - 6 - 1; // continuation inputs: response tokens 0..2
    this.S = this.L + 1; // response positions with logits
    this.KMAX = cfg.block_size; // most keys a query sees
    this.cap = { prompts, rows };
    this.spec = paramSpec(cfg);
    this.where = Object.fromEntries(this.spec.map((p) => [p.name, p.off])); // a parameter's offset in theta
    this.n = nParams(cfg);
    this.keys = new Int32Array(cfg.block_size); // the key offsets of one query (attention)
    this.dkeys = new Int32Array(cfg.block_size);
    this.theta = arena.alloc(this.n);
    this.grad = arena.alloc(this.n);
    this.wT = {}; // torch-oriented copies of the Linear weights, by name
    for (const p of this.spec) if (p.linear) this.wT[p.name] = arena.alloc(p.size);
    this.pre = this.segment(arena, prompts * this.Tp, prompts); // the prefix: every prompt position
    this.con = this.segment(arena, rows * this.L, rows * this.L); // the continuation, time-major
    this.prefixTokens = new Int32Array(prompts * this.Tp);
    this.contTokens = new Int32Array(rows * this.S); // response tokens (R, 4), row-major: what generate() samples
  }

  // Buffers of one segment of N tokens, of which F get the final LayerNorm and the head.
  segment(arena, N, F) {
    const C = this.C, a = (n) => arena.alloc(n);
    const layers = [];
    for (let l = 0; l < this.cfg.n_layer; l++) {
      layers.push({ xhat1: a(N * C), rstd1: a(N), h1: a(N * C), qkv: a(N * 3 * C), probs: a(N * this.H * this.KMAX),
        att: a(N * C), xhat2: a(N * C), rstd2: a(N), h2: a(N * C), r: a(N * 4 * C) }); // prettier-ignore
    }
    return { N, F, layers, x: a(N * C), xhatf: a(F * C), rstdf: a(F), hf: a(F * C), logits: a(F * this.V),
      dx: a(N * C), dh: a(N * C), dqkv: a(N * 3 * C), datt: a(N * C), du: a(N * 4 * C), dlogits: a(F * this.V) }; // prettier-ignore
  }

  // ---- parameters ----
  off(name) {
    return this.theta + this.where[name];
  }

  params() {
    return this.f.subarray(this.theta, this.theta + this.n);
  }

  grads() {
    return this.f.subarray(this.grad, this.grad + this.n);
  }

  setParams(theta) {
    this.f.set(theta, this.theta);
    this.syncWeights();
  }

  syncWeights() {
    for (const p of this.spec) {
      if (p.linear) transpose(this.f, this.theta + p.off, p.shape[1], p.shape[0], this.f, this.wT[p.name]);
    }
  }

  // ---- forward ----
  // The prefix: prompts (P x 6 ids, row-major) through every block, then the final LayerNorm and head at each
  // prompt's last position: prefix logits (P, V).
  prefix(prompts, P) {
    if (P > this.cap.prompts) throw new Error(`${P} prompts exceed this model's capacity of ${this.cap.prompts}`);
    this.P = P;
    this.prefixTokens.set(prompts.subarray(0, P * this.Tp));
    const s = this.pre, C = this.C, f = this.f;
    for (let p = 0; p < P; p++) {
      for (let j = 0; j < this.Tp; j++) this.embed(s.x + (p * this.Tp + j) * C, prompts[p * this.Tp + j], j);
    }
    for (let l = 0; l < this.cfg.n_layer; l++) this.blockForward(s, l, 0, P * this.Tp, null);
    this.layerNorm(P, s.x + (this.Tp - 1) * C, this.Tp * C, "ln_f", s.xhatf, s.rstdf, s.hf); // last positions, packed
    this.k.matmul(P, this.V, C, s.hf, this.off("head.weight"), 0, s.logits, 0);
    return f.subarray(s.logits, s.logits + P * this.V);
  }

  // Continuation positions t0..t1-1 of R rows answering the current prefix in groups of G (R = P G); each row's
  // input tokens come from this.contTokens (row r's response token t at r * 4 + t). Fills their logits.
  continuation(R, G, t0, t1) {
    if (R > this.cap.rows) throw new Error(`${R} rows exceed this model's capacity of ${this.cap.rows}`);
    if (R !== this.P * G) throw new Error(`${R} rows do not answer ${this.P} prompts in groups of ${G}`);
    this.R = R;
    this.G = G;
    const s = this.con, C = this.C;
    for (let t = t0; t < t1; t++) {
      for (let r = 0; r < R; r++) this.embed(s.x + (t * R + r) * C, this.contTokens[r * this.S + t], this.Tp + t);
    }
    const a = t0 * R, b = t1 * R;
    for (let l = 0; l < this.cfg.n_layer; l++) this.blockForward(s, l, a, b, this.pre);
    this.layerNorm(b - a, s.x + a * C, C, "ln_f", s.xhatf + a * C, s.rstdf + a, s.hf + a * C);
    this.k.matmul(b - a, this.V, C, s.hf + a * C, this.off("head.weight"), 0, s.logits + a * this.V, 0);
  }

  // Logits (V floats, an offset into this.f) predicting row r's response token s.
  logitsAt(r, s) {
    if (s === 0) return this.pre.logits + Math.floor(r / this.G) * this.V;
    return this.con.logits + ((s - 1) * this.R + r) * this.V;
  }

  embed(x, id, pos) {
    const f = this.f, C = this.C, te = this.off("tok_emb.weight") + id * C, pe = this.off("pos_emb.weight") + pos * C;
    for (let c = 0; c < C; c++) f[x + c] = f[te + c] + f[pe + c];
  }

  // LayerNorm `name` of n tokens, token i's C values at x + i stride: xhat (n, C), rstd (n), out (n, C).
  layerNorm(n, x, stride, name, xhat, rstd, out) {
    const f = this.f, C = this.C, g = this.off(name + ".weight"), b = this.off(name + ".bias");
    for (let i = 0; i < n; i++, x += stride, xhat += C, out += C) {
      let mean = 0;
      for (let c = 0; c < C; c++) mean += f[x + c];
      mean /= C;
      let v = 0;
      for (let c = 0; c < C; c++) v += (f[x + c] - mean) ** 2;
      const rs = 1 / Math.sqrt(v / C + LN_EPS);
      f[rstd + i] = rs;
      for (let c = 0; c < C; c++) {
        const xh = (f[x + c] - mean) * rs;
        f[xhat + c] = xh;
        f[out + c] = xh * f[g + c] + f[b + c];
      }
    }
  }

  // Block l on tokens a..b-1 of segment s (x updated in place); `past` is the prefix whose keys the
  // continuation's rows also see (null for the prefix itself).
  blockForward(s, l, a, b, past) {
    const k = this.k, C = this.C, L = s.layers[l], n = b - a, pre = `blocks.${l}.`;
    this.layerNorm(n, s.x + a * C, C, pre + "ln1", L.xhat1 + a * C, L.rstd1 + a, L.h1 + a * C);
    k.matmul(n, 3 * C, C, L.h1 + a * C, this.off(pre + "attn.qkv.weight"), this.off(pre + "attn.qkv.bias"),
      L.qkv + a * 3 * C, 0); // prettier-ignore
    if (past) this.attendContinuation(L, past.layers[l], a, b);
    else this.attendPrefix(L, a, b);
    // x += proj(att) and x += fc2(relu(fc1(ln2(x)))): each product adds itself to the residual stream (ACC); fc1's
    // output is stored after its ReLU (RELU), and its backward reads the ReLU's mask from it (r > 0 where u > 0)
    k.matmul(n, C, C, L.att + a * C, this.off(pre + "attn.proj.weight"), this.off(pre + "attn.proj.bias"),
      s.x + a * C, ACC); // prettier-ignore
    this.layerNorm(n, s.x + a * C, C, pre + "ln2", L.xhat2 + a * C, L.rstd2 + a, L.h2 + a * C);
    k.matmul(n, 4 * C, C, L.h2 + a * C, this.off(pre + "mlp.0.weight"), this.off(pre + "mlp.0.bias"),
      L.r + a * 4 * C, RELU); // prettier-ignore
    k.matmul(n, C, 4 * C, L.r + a * 4 * C, this.off(pre + "mlp.2.weight"), this.off(pre + "mlp.2.bias"),
      s.x + a * C, ACC); // prettier-ignore
  }

  // Softmax attention of query q (offset of its q/k/v triple) over the nk keys whose triples start at this.keys[0..nk),
  // for every head: the attention output at out, the probabilities at probs (H x KMAX).
  attendOne(q, nk, out, probs) {
    const f = this.f, C = this.C, hd = this.hd, scale = 1 / Math.sqrt(hd), sc = this.scores, keys = this.keys;
    for (let h = 0; h < this.H; h++) {
      const qh = q + h * hd;
      let max = -Infinity;
      for (let j = 0; j < nk; j++) {
        const kj = keys[j] + C + h * hd;
        let d = 0;
        for (let e = 0; e < hd; e++) d += f[qh + e] * f[kj + e];
        sc[j] = d * scale;
        if (sc[j] > max) max = sc[j];
      }
      let z = 0;
      for (let j = 0; j < nk; j++) z += sc[j] = Math.exp(sc[j] - max);
      const o = out + h * hd, pr = probs + h * this.KMAX;
      for (let e = 0; e < hd; e++) f[o + e] = 0;
      for (let j = 0; j < nk; j++) {
        const p = sc[j] / z;
        f[pr + j] = p;
        const vj = keys[j] + 2 * C + h * hd;
        for (let e = 0; e < hd; e++) f[o + e] += p * f[vj + e];
      }
    }
  }

  get scores() {
    return (this._scores ??= new Float64Array(this.cfg.block_size));
  }

  // Token i of the prefix sees its prompt's tokens up to itself.
  attendPrefix(L, a, b) {
    const C3 = 3 * this.C, Tp = this.Tp, keys = this.keys;
    for (let i = a; i < b; i++) {
      const first = i - (i % Tp), nk = (i % Tp) + 1;
      for (let j = 0; j < nk; j++) keys[j] = L.qkv + (first + j) * C3;
      this.attendOne(L.qkv + i * C3, nk, L.att + i * this.C, L.probs + i * this.H * this.KMAX);
    }
  }

  // Continuation token (t, r) sees its prompt's 6 tokens (the prefix P's keys), then its row's tokens up to itself.
  attendContinuation(L, P, a, b) {
    const C3 = 3 * this.C, Tp = this.Tp, R = this.R, G = this.G, keys = this.keys;
    for (let i = a; i < b; i++) {
      const t = Math.floor(i / R), r = i - t * R, p = Math.floor(r / G);
      for (let j = 0; j < Tp; j++) keys[j] = P.qkv + (p * Tp + j) * C3;
      for (let j = 0; j <= t; j++) keys[Tp + j] = L.qkv + (j * R + r) * C3;
      this.attendOne(L.qkv + i * C3, Tp + t + 1, L.att + i * this.C, L.probs + i * this.H * this.KMAX);
    }
  }

  // ---- backward ----
  // Gradients of every parameter (into grad, which is zeroed first) from dlogits: the prefix's (P, V) at
  // pre.dlogits and the continuation's (L R, V) at con.dlogits, as written by the caller (see logitsAt).
  backward() {
    const f = this.f, C = this.C, V = this.V, k = this.k, P = this.P, R = this.R;
    f.fill(0, this.grad, this.grad + this.n);
    const gHead = this.grad + this.spec.find((p) => p.name === "head.weight").off;
    const pre = this.pre, con = this.con, Nc = this.L * R, Np = P * this.Tp;
    // the head and the final LayerNorm
    k.matmulTN(Nc, V, C, con.hf, con.dlogits, gHead);
    k.matmulTN(P, V, C, pre.hf, pre.dlogits, gHead);
    k.matmul(Nc, C, V, con.dlogits, this.wT["head.weight"], 0, con.dh, 0);
    k.matmul(P, C, V, pre.dlogits, this.wT["head.weight"], 0, pre.dh, 0);
    f.fill(0, con.dx, con.dx + Nc * C);
    f.fill(0, pre.dx, pre.dx + Np * C);
    this.layerNormBack(Nc, "ln_f", con.dh, con.xhatf, con.rstdf, con.dx, C);
    this.layerNormBack(P, "ln_f", pre.dh, pre.xhatf, pre.rstdf, pre.dx + (this.Tp - 1) * C, this.Tp * C);
    for (let l = this.cfg.n_layer - 1; l >= 0; l--) {
      // the continuation's queries add to the prefix's key and value gradients, then the prefix's own
      f.fill(0, pre.dqkv, pre.dqkv + Np * 3 * C);
      f.fill(0, con.dqkv, con.dqkv + Nc * 3 * C);
      this.blockBackward(con, l, Nc, pre);
      this.blockBackward(pre, l, Np, null);
    }
    // the embeddings
    const gTok = this.grad + this.spec[0].off, gPos = this.grad + this.spec[1].off;
    for (let i = 0; i < Np; i++) this.embedBack(pre.dx + i * C, this.prefixTokens[i], i % this.Tp, gTok, gPos);
    for (let i = 0; i < Nc; i++) {
      const t = Math.floor(i / R), r = i - t * R;
      this.embedBack(con.dx + i * C, this.contTokens[r * this.S + t], this.Tp + t, gTok, gPos);
    }
    return this.grads();
  }

  embedBack(dx, id, pos, gTok, gPos) {
    const f = this.f, C = this.C;
    for (let c = 0; c < C; c++) {
      f[gTok + id * C + c] += f[dx + c];
      f[gPos + pos * C + c] += f[dx + c];
    }
  }

  gradOff(name) {
    return this.grad + this.where[name];
  }

  // LayerNorm `name` backward over n tokens: dx (token i at dx + i stride) += the input gradient for output gradients
  // dh (n, C); its weight and bias gradients accumulate.
  layerNormBack(n, name, dh, xhat, rstd, dx, stride) {
    const f = this.f, C = this.C, g = this.off(name + ".weight");
    const gg = this.gradOff(name + ".weight"), gb = this.gradOff(name + ".bias");
    for (let i = 0; i < n; i++, dh += C, xhat += C, dx += stride) {
      let m1 = 0, m2 = 0;
      for (let c = 0; c < C; c++) {
        const d = f[dh + c] * f[g + c];
        m1 += d;
        m2 += d * f[xhat + c];
        f[gg + c] += f[dh + c] * f[xhat + c];
        f[gb + c] += f[dh + c];
      }
      m1 /= C;
      m2 /= C;
      const rs = f[rstd + i];
      for (let c = 0; c < C; c++) f[dx + c] += rs * (f[dh + c] * f[g + c] - m1 - f[xhat + c] * m2);
    }
  }

  // Linear backward over n rows: weight and bias gradients accumulate; dX (n, in) = dY W^T written at dx.
  linearBack(name, n, nIn, nOut, x, dy, dx) {
    const f = this.f, k = this.k;
    k.matmulTN(n, nOut, nIn, x, dy, this.gradOff(name + ".weight"));
    const gb = this.gradOff(name + ".bias");
    for (let i = 0; i < n; i++) for (let o = 0; o < nOut; o++) f[gb + o] += f[dy + i * nOut + o];
    k.matmul(n, nIn, nOut, dy, this.wT[name + ".weight"], 0, dx, 0);
  }

  // Block l of segment s backward over its N tokens: s.dx holds the gradient of the block's output and becomes that
  // of its input. For the continuation, `past` (the prefix) receives the gradient of its keys and values; s.dqkv
  // (and past's) are zeroed by the caller.
  blockBackward(s, l, N, past) {
    const f = this.f, C = this.C, L = s.layers[l], pre = `blocks.${l}.`;
    // the MLP: x_out = x_mid + fc2(relu(fc1(ln2(x_mid))))
    this.linearBack(pre + "mlp.2", N, 4 * C, C, L.r, s.dx, s.du);
    for (let i = 0; i < N * 4 * C; i++) if (!(f[L.r + i] > 0)) f[s.du + i] = 0;
    this.linearBack(pre + "mlp.0", N, C, 4 * C, L.h2, s.du, s.dh);
    this.layerNormBack(N, pre + "ln2", s.dh, L.xhat2, L.rstd2, s.dx, C);
    // attention: x_mid = x_in + proj(attend(qkv(ln1(x_in))))
    this.linearBack(pre + "attn.proj", N, C, C, L.att, s.dx, s.datt);
    if (past) this.attendContinuationBack(L, s, past.layers[l], past.dqkv, N);
    else this.attendPrefixBack(L, s, N);
    this.linearBack(pre + "attn.qkv", N, C, 3 * C, L.h1, s.dqkv, s.dh);
    this.layerNormBack(N, pre + "ln1", s.dh, L.xhat1, L.rstd1, s.dx, C);
  }

  // The gradient of one query's attention (see attendOne): dq into dq, dk and dv into the triples at this.dkeys.
  attendOneBack(q, dq, nk, datt, probs) {
    const f = this.f, C = this.C, hd = this.hd, scale = 1 / Math.sqrt(hd), dp = this.scores;
    const keys = this.keys, dkeys = this.dkeys;
    for (let h = 0; h < this.H; h++) {
      const pr = probs + h * this.KMAX, da = datt + h * hd;
      let dot = 0;
      for (let j = 0; j < nk; j++) {
        const vj = keys[j] + 2 * C + h * hd, dvj = dkeys[j] + 2 * C + h * hd, p = f[pr + j];
        let d = 0;
        for (let e = 0; e < hd; e++) {
          d += f[da + e] * f[vj + e];
          f[dvj + e] += p * f[da + e];
        }
        dp[j] = d;
        dot += p * d;
      }
      const qh = q + h * hd, dqh = dq + h * hd;
      for (let j = 0; j < nk; j++) {
        const ds = f[pr + j] * (dp[j] - dot) * scale;
        const kj = keys[j] + C + h * hd, dkj = dkeys[j] + C + h * hd;
        for (let e = 0; e < hd; e++) {
          f[dqh + e] += ds * f[kj + e];
          f[dkj + e] += ds * f[qh + e];
        }
      }
    }
  }

  attendPrefixBack(L, s, N) {
    const C3 = 3 * this.C, Tp = this.Tp, keys = this.keys, dkeys = this.dkeys;
    for (let i = 0; i < N; i++) {
      const first = i - (i % Tp), nk = (i % Tp) + 1;
      for (let j = 0; j < nk; j++) {
        keys[j] = L.qkv + (first + j) * C3;
        dkeys[j] = s.dqkv + (first + j) * C3;
      }
      this.attendOneBack(L.qkv + i * C3, s.dqkv + i * C3, nk, s.datt + i * this.C, L.probs + i * this.H * this.KMAX);
    }
  }

  attendContinuationBack(L, s, P, dP, N) {
    const C3 = 3 * this.C, Tp = this.Tp, R = this.R, G = this.G, keys = this.keys, dkeys = this.dkeys;
    for (let i = 0; i < N; i++) {
      const t = Math.floor(i / R), r = i - t * R, p = Math.floor(r / G);
      for (let j = 0; j < Tp; j++) {
        keys[j] = P.qkv + (p * Tp + j) * C3;
        dkeys[j] = dP + (p * Tp + j) * C3;
      }
      for (let j = 0; j <= t; j++) {
        keys[Tp + j] = L.qkv + (j * R + r) * C3;
        dkeys[Tp + j] = s.dqkv + (j * R + r) * C3;
      }
      this.attendOneBack(L.qkv + i * C3, s.dqkv + i * C3, Tp + t + 1, s.datt + i * this.C, L.probs + i * this.H * this.KMAX);
    }
  }
}
