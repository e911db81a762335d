// pass@k from known success probabilities, and where two pass@k curves cross: sim/passk.py's
// pass_at_k_known_p, mean_pass_at_k_known_p and crossover_k in JavaScript (same names, same arithmetic;
// tests/test_js_views.py runs both on the same inputs). Shapes: P problems, K values of k.

// pass@k = 1 - (1 - p)^k, as -expm1(k log1p(-p)) so that tiny p and large k keep their digits.
export function pass_at_k_known_p(p, k) {
  if (!(p >= 0 && p <= 1)) throw new Error("p (success probability) must be in [0, 1]");
  if (!(k >= 1)) throw new Error("k must be >= 1");
  return 0.0 - Math.expm1(k * Math.log1p(-p));
}

// mean over the P problems (p (P,)) of pass@k at each k of ks (K,): (K,). numpy's mean over the first axis
// adds the rows in order, from 0.
export function mean_pass_at_k_known_p(p, ks) {
  const out = new Float64Array(ks.length);
  ks.forEach((k, i) => {
    let s = 0.0;
    for (const pj of p) s += pass_at_k_known_p(pj, k);
    out[i] = s / p.length;
  });
  return out;
}

// The k where curve_a crosses curve_b (log-k interpolation by default), or null if they never do; ties
// within atol do not count. sim/passk.py's docstring says how.
export function crossover_k(ks, a, b, { scale = "log", atol = 1e-12 } = {}) {
  const n = ks.length;
  const d = Array.from({ length: n }, (_, i) => a[i] - b[i]);
  const sign = d.map((x) => (Math.abs(x) <= atol ? 0 : Math.sign(x)));
  const nonzero = [];
  sign.forEach((s, i) => s !== 0 && nonzero.push(i));
  if (!nonzero.length) return null;
  const first = sign[nonzero[0]];
  const j = sign.indexOf(-first);
  if (j < 0) return null;
  const m = nonzero.filter((i) => i < j).at(-1);
  if (m + 1 < j) return ks[m + 1];
  const x = (i) => (scale === "log" ? Math.log(ks[i]) : ks[i]);
  const t = d[m] / (d[m] - d[j]);
  const root = x(m) + t * (x(j) - x(m));
  return scale === "log" ? Math.exp(root) : root;
}
