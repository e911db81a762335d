// TinyLM's matrix products for the browser trainer (assets/js/tinylm_kernels.js loads them), WebAssembly SIMD.
//
// Built by scripts/build_tinylm_wasm.py (clang --target=wasm32 -msimd128, no libc) into base64 inside
// assets/js/tinylm_wasm.js; tests/test_tinylm_js.py checks that the committed module holds this file's build.
// Every matrix is row-major float32 in the module's memory (which the page owns: imported), addressed in bytes.
// Measured (docs/tinylm-browser.md): 18-30 GFLOP/s at TinyLM's shapes against 2-4 for the best plain-JavaScript
// loop, in node and in Chromium alike.
//
// Each output element is a sum over k in increasing order, the same in the vector body and in the tails, so a
// row's result does not depend on how many rows are computed at once (a generation step of one token gives the
// numbers the teacher-forced pass gives). Multiply then add, never fused: WebAssembly's SIMD has no fused
// multiply-add, and a scalar tail must round as a vector lane does.
#include <wasm_simd128.h>

#define EXPORT(name) __attribute__((export_name(name)))

// clang may turn a zeroing loop into a call to memset; there is no libc, so it is here.
void* memset(void* dst, int c, unsigned long n) {
  unsigned char* p = dst;
  while (n--) *p++ = (unsigned char)c;
  return dst;
}

static inline v128_t madd(v128_t acc, v128_t a, v128_t b) { return wasm_f32x4_add(acc, wasm_f32x4_mul(a, b)); }

#define ACC 1   // start from Y: Y += ...
#define RELU 2  // store max(0, result)

static inline v128_t start(const float* y, const float* bias, int flags) {
  v128_t a = (flags & ACC) ? wasm_v128_load(y) : wasm_f32x4_splat(0.0f);
  return bias ? wasm_f32x4_add(a, wasm_v128_load(bias)) : a;
}

static inline float start1(const float* y, const float* bias, int flags) {
  float a = (flags & ACC) ? *y : 0.0f;
  return bias ? a + *bias : a;
}

static inline v128_t finish(v128_t a, int flags) {
  return (flags & RELU) ? wasm_f32x4_max(a, wasm_f32x4_splat(0.0f)) : a;
}

// One row block of Y = (Y if ACC) + bias + X W, ReLU'd if RELU, for `rows` (1..4) rows.
static void row_block(int rows, int N, int K, const float* X, const float* W, const float* bias, float* Y, int flags) {
  const float* x[4];
  float* y[4];
  for (int r = 0; r < 4; r++) {
    int rr = r < rows ? r : rows - 1;  // a short block repeats its last row (computed, not stored)
    x[r] = X + rr * K;
    y[r] = Y + rr * N;
  }
  int n = 0;
  for (; n + 8 <= N; n += 8) {
    v128_t a[4][2];
    for (int r = 0; r < 4; r++) {
      a[r][0] = start(y[r] + n, bias ? bias + n : 0, flags);
      a[r][1] = start(y[r] + n + 4, bias ? bias + n + 4 : 0, flags);
    }
    const float* w = W + n;
    for (int k = 0; k < K; k++, w += N) {
      v128_t w0 = wasm_v128_load(w), w1 = wasm_v128_load(w + 4);
      for (int r = 0; r < 4; r++) {
        v128_t s = wasm_f32x4_splat(x[r][k]);
        a[r][0] = madd(a[r][0], s, w0);
        a[r][1] = madd(a[r][1], s, w1);
      }
    }
    for (int r = 0; r < rows; r++) {
      wasm_v128_store(y[r] + n, finish(a[r][0], flags));
      wasm_v128_store(y[r] + n + 4, finish(a[r][1], flags));
    }
  }
  for (; n + 4 <= N; n += 4) {
    v128_t a[4];
    for (int r = 0; r < 4; r++) a[r] = start(y[r] + n, bias ? bias + n : 0, flags);
    const float* w = W + n;
    for (int k = 0; k < K; k++, w += N) {
      v128_t w0 = wasm_v128_load(w);
      for (int r = 0; r < 4; r++) a[r] = madd(a[r], wasm_f32x4_splat(x[r][k]), w0);
    }
    for (int r = 0; r < rows; r++) wasm_v128_store(y[r] + n, finish(a[r], flags));
  }
  for (; n < N; n++) {
    for (int r = 0; r < rows; r++) {
      float s = start1(y[r] + n, bias ? bias + n : 0, flags);
      for (int k = 0; k < K; k++) s += x[r][k] * W[k * N + n];
      y[r][n] = (flags & RELU) && !(s > 0.0f) ? 0.0f : s;
    }
  }
}

// Y[M,N] = (Y if flags & ACC) + b + X[M,K] W[K,N] (b null: none), ReLU'd if flags & RELU. A linear layer's forward
// with W stored (in, out) (ACC: the residual stream's update in place), and its input gradient dX = dY W^T with W^T
// stored (out, in).
EXPORT("matmul")
void matmul(int M, int N, int K, const float* X, const float* W, const float* bias, float* Y, int flags) {
  for (int m = 0; m < M; m += 4) row_block(M - m < 4 ? M - m : 4, N, K, X + m * K, W, bias, Y + m * N, flags);
}

// G[K,N] += X[M,K]^T D[M,N]: a linear layer's weight gradient, summed over the M rows in order.
EXPORT("matmul_tn")
void matmul_tn(int M, int N, int K, const float* X, const float* D, float* G) {
  int k = 0;
  for (; k < K; k += 4) {
    int ks = K - k < 4 ? K - k : 4;
    int n = 0;
    for (; n + 8 <= N; n += 8) {
      v128_t a[4][2];
      for (int r = 0; r < 4; r++) {
        int rr = r < ks ? r : ks - 1;
        a[r][0] = wasm_v128_load(G + (k + rr) * N + n);
        a[r][1] = wasm_v128_load(G + (k + rr) * N + n + 4);
      }
      for (int m = 0; m < M; m++) {
        const float* d = D + m * N + n;
        const float* x = X + m * K + k;
        v128_t d0 = wasm_v128_load(d), d1 = wasm_v128_load(d + 4);
        for (int r = 0; r < 4; r++) {
          v128_t s = wasm_f32x4_splat(x[r < ks ? r : ks - 1]);
          a[r][0] = madd(a[r][0], s, d0);
          a[r][1] = madd(a[r][1], s, d1);
        }
      }
      for (int r = 0; r < ks; r++) {
        wasm_v128_store(G + (k + r) * N + n, a[r][0]);
        wasm_v128_store(G + (k + r) * N + n + 4, a[r][1]);
      }
    }
    for (; n + 4 <= N; n += 4) {
      v128_t a[4];
      for (int r = 0; r < 4; r++) a[r] = wasm_v128_load(G + (k + (r < ks ? r : ks - 1)) * N + n);
      for (int m = 0; m < M; m++) {
        v128_t d0 = wasm_v128_load(D + m * N + n);
        const float* x = X + m * K + k;
        for (int r = 0; r < 4; r++) a[r] = madd(a[r], wasm_f32x4_splat(x[r < ks ? r : ks - 1]), d0);
      }
      for (int r = 0; r < ks; r++) wasm_v128_store(G + (k + r) * N + n, a[r]);
    }
    for (; n < N; n++) {
      for (int r = 0; r < ks; r++) {
        float s = G[(k + r) * N + n];
        for (int m = 0; m < M; m++) s += X[m * K + k + r] * D[m * N + n];
        G[(k + r) * N + n] = s;
      }
    }
  }
}
