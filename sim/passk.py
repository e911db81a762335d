"""pass@k: the probability that at least one of k independent samples solves a problem.

Chapter 15, "Does RL teach new reasoning? The pass@k debate". pass@1 is ordinary accuracy;
pass@k at large k measures coverage (can the model solve the problem at all?). Two ways to get it:

    known success probability p:     pass@k = 1 - (1 - p)^k
    n samples of which c correct:    pass@k = 1 - C(n - c, k) / C(n, k)      (Chen et al., 2021)

The second is the unbiased estimator: the probability that a random subset of k of the n samples
contains at least one correct one. Its expectation over c ~ Binomial(n, p) is exactly the first.

Shapes: P problems, K values of k. Everything broadcasts like numpy; curves are (P, K) per problem
and (K,) for the mean over problems, which is what papers plot.
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln

CROSS_SCALES = ("log", "linear")


def _as_int_array(name: str, x, low: int) -> np.ndarray:
    a = np.asarray(x)
    if a.size and not np.all(np.isfinite(a.astype(float))):
        raise ValueError(f"{name} must be finite integers >= {low}")
    if a.size and not np.all(a.astype(float) == np.round(a.astype(float))):
        raise ValueError(f"{name} must be whole numbers, got {x!r}")
    a = a.astype(np.int64)
    if a.size and a.min() < low:
        raise ValueError(f"{name} must be >= {low}, got min {a.min()}")
    return a


def _check_nck(n, c, k) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = _as_int_array("n (samples per problem)", n, 1)
    c = _as_int_array("c (correct samples)", c, 0)
    k = _as_int_array("k", k, 1)
    n, c, k = np.broadcast_arrays(n, c, k)
    if np.any(c > n):
        raise ValueError("c (correct samples) must be in [0, n]")
    if np.any(k > n):
        raise ValueError("k must be in [1, n]: the estimator needs n >= k samples")
    return n, c, k


def pass_at_k(n, c, k) -> np.ndarray:
    """Unbiased pass@k from n samples with c correct (Chen et al., 2021).

        pass@k = 1 - C(n - c, k) / C(n, k)

    computed as 1 - exp(log C(n-c, k) - log C(n, k)) with log-gamma and expm1 (`_log_none_correct`), so it
    stays accurate to ~1e-12 for n in the thousands (the binomials themselves overflow a float past
    n ~ 1030). When n - c < k every k-subset holds a correct sample and pass@k = 1.

    Broadcasts over n, c, k. Raises ValueError for c outside [0, n] or k outside [1, n].

    >>> round(float(pass_at_k(4, 1, 2)), 12)   # 1 - C(3,2)/C(4,2) = 1 - 3/6
    0.5
    """
    n, c, k = _check_nck(n, c, k)
    out = np.asarray(-np.expm1(_log_none_correct(n, c, k)))
    out[c == 0] = 0.0  # exactly: no correct sample, no success (log-gamma would leave ~1e-13)
    return out


def p_none_correct(n, c, k) -> np.ndarray:
    """The other side of the same count: the probability that a random k-subset of n samples, c of them
    correct, holds no correct one,

        C(n - c, k) / C(n, k)        (= 1 - pass@k, kept accurate when it is tiny)

    unbiased for (1 - p)^k when c ~ Binomial(n, p) and k <= n. With c and n - c swapped it is the chance
    that all k are correct: p_none_correct(n, n - c, k) = C(c, k) / C(n, k), unbiased for p^k (sim/yourdata/plan.py's
    all-correct groups). Log-gamma keeps n in the millions finite; its relative error grows like
    log(n!) * 1e-16, about 1e-9 at n = 10^6. Broadcasts; ValueError as pass_at_k.

    >>> float(p_none_correct(4, 1, 2))   # C(3,2)/C(4,2) = 3/6
    0.5
    """
    n, c, k = _check_nck(n, c, k)
    out = np.asarray(np.exp(_log_none_correct(n, c, k)))
    out[c == 0] = 1.0  # exactly
    return out


def _log_none_correct(n: np.ndarray, c: np.ndarray, k: np.ndarray) -> np.ndarray:
    """log [C(n - c, k) / C(n, k)] for checked integer arrays; -inf where n - c < k (no such subset)."""
    out = np.full(n.shape, -np.inf)
    ok = n - c >= k
    nn, cc, kk = n[ok].astype(float), c[ok].astype(float), k[ok].astype(float)
    # = lgam(n-c+1) - lgam(n-c-k+1) - lgam(n+1) + lgam(n-k+1)
    log_ratio = gammaln(nn - cc + 1) - gammaln(nn - cc - kk + 1) - gammaln(nn + 1) + gammaln(nn - kk + 1)
    out[ok] = np.minimum(log_ratio, 0.0)
    return out


def pass_at_k_curves(n: int, correct, ks=None) -> np.ndarray:
    """Per-problem pass@k curves, shape (P, K), for P problems with `correct` (P,) of n correct.

    `ks` defaults to 1..n.
    """
    c = np.atleast_1d(np.asarray(correct))  # (P,)
    ks = np.arange(1, int(n) + 1) if ks is None else np.atleast_1d(np.asarray(ks))  # (K,)
    return pass_at_k(n, c[:, None], ks[None, :])  # (P, K)


def mean_pass_at_k(n: int, correct, ks=None) -> np.ndarray:
    """pass@k averaged over problems, shape (K,): the curve that papers plot. `ks` defaults to 1..n."""
    return pass_at_k_curves(n, correct, ks).mean(axis=0)


def pass_at_k_known_p(p, k) -> np.ndarray:
    """pass@k when the per-sample success probability p is known.

        pass@k = 1 - (1 - p)^k

    computed as -expm1(k * log1p(-p)) so tiny p and large k keep their digits. Broadcasts.
    Chapter: p = 0.05 gives 1 - 0.95^64 = 0.9625 at k = 64.
    """
    p = np.asarray(p, dtype=float)
    if p.size and (not np.all(np.isfinite(p)) or p.min() < 0.0 or p.max() > 1.0):
        raise ValueError("p (success probability) must be in [0, 1]")
    k = np.asarray(k, dtype=float)
    if k.size and (not np.all(np.isfinite(k)) or k.min() < 1.0):
        raise ValueError("k must be >= 1")
    with np.errstate(divide="ignore"):  # log1p(-1) = -inf is the right answer for p = 1
        log_fail = np.log1p(-p)
    return 0.0 - np.expm1(k * log_fail)


def mean_pass_at_k_known_p(p, ks) -> np.ndarray:
    """pass@k averaged over P problems with known success probabilities p (P,): shape (K,)."""
    p = np.atleast_1d(np.asarray(p, dtype=float))  # (P,)
    ks = np.atleast_1d(np.asarray(ks))  # (K,)
    return pass_at_k_known_p(p[:, None], ks[None, :]).mean(axis=0)


def crossover_k(ks, curve_a, curve_b, *, scale: str = "log", atol: float = 1e-12) -> float | None:
    """The k where two pass@k curves cross, or None if they never do.

    With d(k) = curve_a(k) - curve_b(k): find the first k whose d has the opposite sign to the
    first nonzero d. If the last point before it had d = 0 (the curves touch), that k is returned;
    otherwise the root is interpolated linearly between the two neighbouring points, in log k
    (scale="log", the default, since pass@k curves are plotted against log k) or in k
    (scale="linear"). Differences with |d| <= atol count as ties (so float noise where both curves
    have reached 1 is not a crossing). Returns a float between two of `ks`.

    Example: a sharpened model (0.98, 0.01) against its base (0.6, 0.05), mean over two problems:
    d(2) = +0.041 and d(3) = -0.024, so the crossing lies between k = 2 and k = 3.
    """
    if scale not in CROSS_SCALES:
        raise ValueError(f"scale must be one of {CROSS_SCALES}, got {scale!r}")
    ks = np.asarray(ks, dtype=float)  # (K,)
    a, b = np.asarray(curve_a, dtype=float), np.asarray(curve_b, dtype=float)
    if ks.ndim != 1 or a.shape != ks.shape or b.shape != ks.shape:
        raise ValueError(f"ks, curve_a, curve_b must be 1-D of equal length, got {ks.shape}, {a.shape}, {b.shape}")
    if np.any(np.diff(ks) <= 0) or (scale == "log" and ks.size and ks[0] <= 0):
        raise ValueError("ks must be strictly increasing (and > 0 for scale='log')")
    d = a - b
    sign = np.where(np.abs(d) <= atol, 0, np.sign(d)).astype(int)  # (K,)
    nonzero = np.flatnonzero(sign)
    if nonzero.size == 0:
        return None
    first = sign[nonzero[0]]
    flipped = np.flatnonzero(sign == -first)
    if flipped.size == 0:
        return None
    j = flipped[0]
    m = nonzero[nonzero < j][-1]  # last point still on the first side
    if m + 1 < j:  # the curves touched (tied) between m and j: cross where they first touched
        return float(ks[m + 1])
    x = np.log(ks) if scale == "log" else ks
    t = d[m] / (d[m] - d[j])  # in (0, 1)
    root = x[m] + t * (x[j] - x[m])
    return float(np.exp(root) if scale == "log" else root)
