// TinyLM's two matrix products, on one float32 arena: WebAssembly SIMD (assets/wasm/tinylm_kernels.c, built into
// assets/js/tinylm_wasm.js) where the browser has it, else the same loops in JavaScript, rounding every product and
// sum to float32 in the same order, so both give the same bits (tests/test_tinylm_js.py checks it).
//
//   const k = await createKernels(nFloats);          // k.f32: the arena; k.simd: which one runs
//   k.matmul(M, N, K, x, w, bias, y, flags)          // Y[M,N] = (Y if flags & ACC) + bias + X[M,K] W[K,N],
//                                                    //   max(0, .) if flags & RELU
//   k.matmulTN(M, N, K, x, d, g)                     // G[K,N] += X[M,K]^T D[M,N]
//
// Arguments are float offsets into k.f32, at or above k.base (below it lies the WebAssembly code's stack); bias 0
// means none. WebAssembly SIMD measured 7-9x the best plain-JavaScript loop at TinyLM's shapes
// (docs/tinylm-browser.md), and every browser of the last three years has it; the JavaScript path is for the rest.

import { WASM_BASE64 } from "./tinylm_wasm.js";

const PAGE = 65536;
const RESERVED = 32768; // bytes below the arena: the compiled code's stack (16 kB: build_tinylm_wasm.py) and more
const f32 = Math.fround;

function bytesOf(base64) {
  const text = atob(base64);
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}

export const ACC = 1; // matmul's flags: start from Y
export const RELU = 2; // store max(0, .)

// The plain-JavaScript twin of tinylm_kernels.c: the same sums in the same order, each step rounded to float32.
function jsMatmul(a, M, N, K, x, w, bias, y, flags) {
  for (let m = 0; m < M; m++) {
    const xr = x + m * K, yr = y + m * N;
    for (let n = 0; n < N; n++) {
      let s = flags & ACC ? a[yr + n] : 0;
      if (bias) s = f32(s + a[bias + n]);
      for (let k = 0, wk = w + n; k < K; k++, wk += N) s = f32(s + f32(a[xr + k] * a[wk]));
      a[yr + n] = flags & RELU && !(s > 0) ? 0 : s;
    }
  }
}

function jsMatmulTN(a, M, N, K, x, d, g) {
  for (let k = 0; k < K; k++) {
    for (let n = 0; n < N; n++) {
      let s = a[g + k * N + n];
      for (let m = 0; m < M; m++) s = f32(s + f32(a[x + m * K + k] * a[d + m * N + n]));
      a[g + k * N + n] = s;
    }
  }
}

// Kernels over a fresh arena of at least nFloats floats. simd: false forces the JavaScript loops.
export async function createKernels(nFloats, { simd = true } = {}) {
  const pages = Math.ceil((nFloats * 4 + RESERVED) / PAGE);
  let wasm = null;
  if (simd && typeof WebAssembly === "object") {
    try {
      const memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
      const { instance } = await WebAssembly.instantiate(bytesOf(WASM_BASE64), { env: { memory } });
      wasm = { memory, ...instance.exports };
    } catch (e) {
      wasm = null; // no SIMD (or no WebAssembly): the JavaScript loops below
    }
  }
  if (wasm) {
    const a = new Float32Array(wasm.memory.buffer);
    if (wasm.__heap_base.value > RESERVED) throw new Error("tinylm_kernels: the stack outgrew its reserve");
    return {
      simd: true,
      base: RESERVED / 4,
      f32: a,
      matmul: (M, N, K, x, w, bias, y, flags) => wasm.matmul(M, N, K, 4 * x, 4 * w, 4 * bias, 4 * y, flags),
      matmulTN: (M, N, K, x, d, g) => wasm.matmul_tn(M, N, K, 4 * x, 4 * d, 4 * g),
    };
  }
  const a = new Float32Array((pages * PAGE) / 4);
  return {
    simd: false,
    base: RESERVED / 4,
    f32: a,
    matmul: (M, N, K, x, w, bias, y, flags) => jsMatmul(a, M, N, K, x, w, bias, y, flags),
    matmulTN: (M, N, K, x, d, g) => jsMatmulTN(a, M, N, K, x, d, g),
  };
}
