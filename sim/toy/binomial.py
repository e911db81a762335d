"""Exact binomial sampling for many different p at once, at a cost nearly independent of G.

The GRPO toy (sim/toy/) needs, every iteration, the number k of correct answers out of G for each
of S * P groups, each with its own p. numpy's Generator.binomial costs ~250 ns per draw when every draw
has its own p (more than the whole GRPO update) and grows with G. BinomialSampler inverts the CDF with
precomputed tables instead:

    k = min{k : U < F(k; p)},   F(k; p) = sum_{i <= k} C(G, i) p^i (1 - p)^(G - i),   U ~ Uniform[0, 1)

which has the law Binomial(G, p), one uniform per draw.
"""

from __future__ import annotations

import functools

import numpy as np
from numpy.lib.stride_tricks import as_strided
from scipy.special import bdtr, gammaln, xlog1py, xlogy


def binomial_pmf(p: np.ndarray, group_size: int) -> np.ndarray:
    """(P, G+1) probability of k = 0..G correct answers out of G for each p_j: C(G, k) p^k (1 - p)^(G - k)."""
    G = group_size
    k = np.arange(G + 1)
    p = np.asarray(p, dtype=float)[:, None]  # (P, 1)
    log_choose = gammaln(G + 1) - gammaln(k + 1) - gammaln(G - k + 1)  # (G+1,)
    return np.exp(log_choose + xlogy(k, p) + xlog1py(G - k, -p))


class BinomialSampler:
    """Draws k ~ Binomial(G, p) for many different p at once, by inversion: k = min{k : U < F(k; p)}.

    The CDF F(k; p) is tabulated on a grid p = i/N. For p in [a, b] = [i/N, (i+1)/N],
    F(k; b) <= F(k; p) <= F(k; a), so a guide table over (i, m), m = floor(U L), gives a lower bound
    lo <= k (every k < lo has F(k; a) <= m/L <= U), and

        U < F(lo; b)  =>  k = lo                                     (the lean path: a "settled" draw)

    A second table holds F(lo; b), rounded down to float32, so a settled draw costs two table look-ups
    and one comparison. The others (a CDF level inside the guide cell, or U in the thin band between
    F(k; b) and F(k; a), together a few percent of the draws) take the careful path: the inverses k_a
    and k_b at both grid points (k_a <= k <= k_b), counted along the two CDF rows for G <= ROW_COUNT_MAX,
    or from the guide bracket [lo, hi] and the row only where needed for larger G; then
    scipy.special.bdtr at p itself where k_a < k_b. So k is the exact inverse-CDF transform of U (up to
    the float rounding of F) and its law is Binomial(G, p). Tables are cached per G (about 34 MB at
    G = 1024, where most draws take the careful path: there a run costs ~7x one at G = 8).
    """

    ROW_COUNT_MAX = 64  # up to this G the careful path compares U with both CDF rows whole

    def __init__(self, group_size: int, max_table: int = 2**21):
        G = self.G = group_size
        self.N = N = int(min(4096, max(256, max_table // (G + 1))))  # grid cells in p
        self.L = L = int(min(16 * (G + 1), max(G + 1, max_table // (N + 1))))  # guide resolution in U
        cdf = np.minimum(np.cumsum(binomial_pmf(np.arange(N + 1) / N, G), axis=1), 1.0)  # (N+1, G+1) at p = i/N
        cdf[:, G] = 1.0
        cdf = np.concatenate([cdf, cdf[-1:]])  # (N+2, G+1): row N+1 repeats p = 1
        self.cdf = cdf.ravel()
        # row i of `pairs` is F(.; i/N) followed by F(.; (i+1)/N): a view, no copy
        self.pairs = as_strided(self.cdf, shape=(N + 1, 2 * (G + 1)), strides=(8 * (G + 1), 8), writeable=False)
        # lo[i, m] = #{k : F(k; i/N) <= m/L} and hi[i, m] = #{k : F(k; i/N) <= (m+1)/L} bound the inverse at a
        # of any U in [m/L, (m+1)/L); F <= m/L  <=>  ceil(F L) <= m, so both are cumulative histograms of
        # ceil(F L) (with 1e-9 margins so that rounding can only widen the bracket).
        rows = np.arange(N + 1)[:, None] * (L + 2)

        def count_at_most(level: np.ndarray) -> np.ndarray:  # (N+1, L+2) cumulative counts of ceil(F L)
            bins = np.clip(np.ceil(level), 0, L + 1).astype(np.int64)
            hist = np.bincount((rows + bins).ravel(), minlength=(N + 1) * (L + 2)).reshape(N + 1, L + 2)
            return np.minimum(np.cumsum(hist, axis=1), G)

        lo = count_at_most(cdf[: N + 1] * L + 1e-9)[:, :L]  # (N+1, L)
        settle = np.take_along_axis(cdf[1:], lo, axis=1)  # (N+1, L) F(lo; b) at the cell's upper end b
        settle32 = settle.astype(np.float32)
        settle32 = np.where(settle32 > settle, np.nextafter(settle32, np.float32(-1)), settle32)  # round down
        # (N+1, L) raveled: the guide index is i L + m, so the draws of one prompt (similar p) share rows
        self.lo, self.settle = lo.astype(np.int16).ravel(), settle32.ravel()
        if G > self.ROW_COUNT_MAX:
            self.hi = count_at_most(cdf[: N + 1] * L - 1e-9)[:, 1 : L + 1].astype(np.int16).ravel()

    def __call__(self, rng: np.random.Generator, p: np.ndarray) -> np.ndarray:
        """k ~ Binomial(G, p) elementwise, one uniform per draw; p any shape with values in [0, 1]."""
        return self.invert(rng.random(p.shape), p)

    def offsets(self, U: np.ndarray) -> np.ndarray:
        """floor(U L), the guide-table column of each uniform (precompute it for many draws at once)."""
        return (U * self.L).astype(np.intp)

    def invert(self, U: np.ndarray, p: np.ndarray, offsets: np.ndarray | None = None) -> np.ndarray:
        """The inverse CDF min{k : U < F(k; p)}, elementwise (U, p of one shape), as np.intp.

        `offsets` = self.offsets(U) if already known."""
        shape = p.shape
        U, p = U.ravel(), p.ravel()
        i = (p * self.N).astype(np.intp)  # floor(p N): p's grid cell
        guide = i * self.L
        guide += self.offsets(U) if offsets is None else offsets.ravel()  # i L + m
        k = self.lo.take(guide).astype(np.intp)
        todo = (U >= self.settle.take(guide)).nonzero()[0]
        if todo.size:  # (the guide's lower bound lo = k[todo] is only read for G > ROW_COUNT_MAX)
            k[todo] = self._careful(U[todo], p[todo], i[todo], k[todo] if self.G > self.ROW_COUNT_MAX else None)
        return k.reshape(shape)

    def _careful(self, U: np.ndarray, p: np.ndarray, i: np.ndarray, lo: np.ndarray | None) -> np.ndarray:
        """The inverse for draws the lean path does not settle (1-D arrays of one length: i the grid cell,
        lo the guide table's lower bound, needed for G > ROW_COUNT_MAX only)."""
        G = self.G
        if G <= self.ROW_COUNT_MAX:  # count along both rows at once
            below = (self.pairs[i] <= U[:, None]).view(np.uint8).reshape(-1, 2, G + 1)
            k_ab = np.add.reduce(below, axis=2, dtype=np.uint8).astype(np.intp)  # (n, 2) inverses at a, b
            k, k_b = k_ab[:, 0], k_ab[:, 1]
            return self._bdtr_finish(U, p, k, (k < k_b).nonzero()[0], k_b)
        k, hi = lo, self.hi[i * self.L + self.offsets(U)]  # the inverse at grid point a = i/N is in [k, hi]
        table = self.cdf.reshape(-1, G + 1)  # (N+2, G+1)
        todo = np.flatnonzero(k < hi)  # bracket open (a tail of the CDF): count along the whole row
        k[todo] = (U[todo, None] >= table[i[todo]]).sum(axis=1)
        todo = np.flatnonzero(U >= self.cdf[i * (G + 1) + (G + 1) + k])  # not settled at b: p's own CDF decides
        k_b = (U[todo, None] >= table[i[todo] + 1]).sum(axis=1)  # the inverse at b bounds the answer
        return self._bdtr_finish(U, p, k, todo, k_b, all_b=False)

    def _bdtr_finish(self, U, p, k, todo, k_b, all_b: bool = True) -> np.ndarray:
        """Raise k[todo] (the inverse at a) to the inverse at p, at most to k_b (the inverse at b; indexed by
        todo where all_b, else one per todo entry)."""
        if not todo.size:
            return k
        U, p, k_t = U[todo], p[todo], k[todo]
        k_b = k_b[todo] if all_b else k_b
        up = U >= bdtr(k_t, self.G, p)  # usually all there is: k_p in [k_a, k_b], k_b - k_a small
        k_t += up
        more = up & (k_t < k_b)
        while np.count_nonzero(more):  # a draw stops at its first U < F(k; p) or at k_b
            up = more & (U >= bdtr(k_t, self.G, p))
            k_t += up
            more = up & (k_t < k_b)
        k[todo] = k_t
        return k


@functools.lru_cache(maxsize=8)
def binomial_sampler(group_size: int) -> BinomialSampler:
    """The cached BinomialSampler for G: the 8 most recent G (4 MB at G = 8, 19 MB at G = 64, 67 MB at
    G = 1024), so moving a G slider back and forth in the app does not rebuild tables (40-150 ms each)."""
    return BinomialSampler(group_size)


def inverse_cdf(U: np.ndarray, n: int, p: float) -> np.ndarray:
    """k = min{k : U < F(k; p)} for each uniform U, F the Binomial(n, p) CDF (scipy's bdtr): the exact inverse
    CDF transform, the draw BinomialSampler makes for the same U, without its tables (for a few draws at each of
    many n: the KL page's Monte Carlo). assets/js/engine.js binomialInverse walks the same CDF; the two pick the same
    k except where U is within float rounding of a CDF value."""
    if p <= 0.0:
        return np.zeros(np.shape(U), dtype=np.int64)
    if p >= 1.0:
        return np.full(np.shape(U), n, dtype=np.int64)
    cdf = np.minimum(bdtr(np.arange(n + 1), n, p), 1.0)  # (n+1,)
    cdf[n] = 1.0
    return np.searchsorted(cdf, np.asarray(U), side="right").astype(np.int64)
