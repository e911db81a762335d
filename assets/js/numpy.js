// What the views read off arrays, computed as numpy computes it, so that a number the page shows is Python's to
// the last bit where that matters (a caption's rounding): numpy's pairwise summation, mean, population std,
// linear percentiles and linspace. No DOM; sim/views (Python) is the reference (tests/test_js_twins.py).

import { nd } from "./chart_spec.js";

// numpy's pairwise sum of n values a[start + i * stride] (what x.sum(axis=-1) does along a row)
export function pairwise(a, start, n, stride) {
  if (n < 8) {
    let res = 0.0;
    for (let i = 0; i < n; i++) res += a[start + i * stride];
    return res;
  }
  if (n <= 128) {
    const r = [0, 1, 2, 3, 4, 5, 6, 7].map((j) => a[start + j * stride]);
    let i = 8;
    for (; i < n - (n % 8); i += 8) for (let j = 0; j < 8; j++) r[j] += a[start + (i + j) * stride];
    let res = r[0] + r[1] + (r[2] + r[3]) + (r[4] + r[5] + (r[6] + r[7]));
    for (; i < n; i++) res += a[start + i * stride];
    return res;
  }
  let n2 = Math.floor(n / 2);
  n2 -= n2 % 8;
  return pairwise(a, start, n2, stride) + pairwise(a, start + n2 * stride, n - n2, stride);
}

// x.mean() of a 1-D array, as numpy: the pairwise sum over n
export function mean(a) {
  return pairwise(a, 0, a.length, 1) / a.length;
}

// x.std() of a 1-D array (ddof 0), as numpy's _var: the mean, the squared deviations, their mean, its root
export function std(a) {
  const m = mean(a);
  const d = Float64Array.from(a, (x) => (x - m) * (x - m));
  return Math.sqrt(pairwise(d, 0, d.length, 1) / d.length);
}

// np.percentile(row, q) (method "linear") of each row of x (n, S)
export function percentileRows(x, q) {
  const a = nd(x);
  const [n, S] = a.shape;
  const out = new Float64Array(n);
  const virtual = (S - 1) * (q / 100);
  for (let t = 0; t < n; t++) {
    const row = Float64Array.from(a.v.subarray(t * S, (t + 1) * S)).sort();
    let prev = Math.floor(virtual);
    let next = prev + 1;
    if (virtual >= S - 1) prev = next = -1;
    const gamma = virtual - prev;
    const lo = row.at(prev);
    const hi = row.at(next);
    const diff = hi - lo;
    out[t] = gamma >= 0.5 ? hi - diff * (1 - gamma) : lo + diff * gamma;
  }
  return out;
}

// np.percentile(x, q) of a 1-D array
export function percentile(a, q) {
  return percentileRows({ v: Float64Array.from(a), shape: [1, a.length] }, q)[0];
}

// np.linspace(start, stop, num): i * step + start, the last value stop itself
export function linspace(start, stop, num) {
  const out = new Float64Array(num);
  const step = (stop - start) / (num - 1);
  for (let i = 0; i < num; i++) out[i] = i * step + start;
  if (num > 1) out[num - 1] = stop;
  return out;
}
