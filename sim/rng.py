"""The project's portable random generator: Philox4x32-10, so that numpy and the browser draw the same numbers.

Philox4x32-10 (Salmon, Moraes, Dror & Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC 2011) is
counter-based: it maps a counter of four 32-bit words (c0, c1, c2, c3) and a key of two (k0, k1) to four
random 32-bit words, with no state in between. Ten rounds of

    (c0, c1, c2, c3) <- (hi(M1 c2) ^ c1 ^ k0,  lo(M1 c2),  hi(M0 c0) ^ c3 ^ k1,  lo(M0 c0))
    (k0, k1)         <- (k0 + W0, k1 + W1) mod 2^32          (after every round but the last)

with M0 = 0xD2511F53, M1 = 0xCD9E8D57 (multipliers), W0 = 0x9E3779B9, W1 = 0xBB67AE85 (Weyl constants) and
hi / lo the upper and lower 32 bits of the exact 64-bit product. The products are exact in numpy's uint64 and,
in JavaScript, with Math.imul and a 16-bit split (assets/js/engine.js), so both compute every word bit for bit.

Uniforms. A *stream* is a key and the counter words (c1, c2, c3); its uniforms are numbered i = 0, 1, 2, ...
Uniform i comes from the block c0 = i // 2: its words (w0, w1) for even i, (w2, w3) for odd i, a and b:

    U = ((a >> 5) * 2^26 + (b >> 6)) / 2^53          in [0, 1), 53 random bits (numpy's random() construction)

so the uniform of any draw is a pure function of (key, stream, i): no draw depends on how many others were made.

The project's counter layout (assets/js/engine.js uses the same; docs/browser-engine.md has it as a table):

    the 24-prompt toy (sim/toy), seed index s = 0..S-1 of a run with ToyConfig.seed = seed:
        key = seed + s (a 64-bit integer: k0 its low 32 bits, k1 its high 32), c3 = TOY (0)
        c1 = t, the iteration (0-based: the draw from state t, recorded in counts[t])
        c2 = 0: the first draw: uniform i = j is prompt j's group, k_j = the Binomial(G, p_j) inverse CDF at U
        c2 = r = 1..max_redraws: dynamic sampling's refill round r: slot j (uniforms 2j, 2j + 1, i.e. block j)
             draws the prompt floor(U_2j P) (at most P - 1) and a group for it at U_2j+1; only empty slots use them
    the sharpening toy (sim/sharpen.py), SharpenConfig.seed = seed:
        key = seed, c3 = SHARPEN (1), c1 = the iteration i (0-based), c2 = the batch row b (group b)
        answer g of the group: uniform 2g picks its strategy, uniform 2g + 1 its 0/1 reward (block g)
    the KL page's Monte Carlo (sim/kl_clip.kl_monte_carlo), its seed = seed:
        key = seed, c3 = KL (2), c1 = the sample size n, c2 = the token v (0..V-2)
        repeat r: uniform r draws how many of the n tokens not yet assigned are token v (a binomial, by the
        inverse CDF: the tokens' counts are a chain of conditional binomials, a multinomial)
    TinyLM with GRPOConfig.rng = "philox" (sim/tinylm/sampling.py; the browser's trainer, assets/js/tinylm_grpo.js),
    its seed = seed, key = seed:
        c3 = TINYLM_PROMPTS (3), c1 = the GRPO iteration t (0-based), c2 = 0: uniform j picks prompt j of the
             batch, floor(U N) of the N training problems (at most N - 1)
        c3 = TINYLM_TOKENS (4), c1 = t, c2 = the batch row r (p G + g): uniform s picks its response token s
        c3 = TINYLM_EVAL (5), c1 = the held-out problem q (0..299), c2 = its sample j: uniform s its token s
        A token is the inverse CDF of the softmax at U: the number of cumulative probabilities at or below
        U * (their total), at most V - 1 (sim/tinylm/sampling.py: inverse_cdf).

Since a toy seed's key is seed + s, seed s of a band does not depend on how many seeds are run, and "seed 7"
of a band from seed 0 is the 1-seed run with seed 7 (so bands from seeds 0 and 1 share 15 of 16 runs).

Cost. numpy computes a round as five passes over stacked (2, ...) uint64 arrays: about 15-20 ns a uniform here,
against about 2 for numpy's own generator (64 seeds x 300 iterations: about 47 ms a run against 39). No cache:
the pages run the toy in the browser (assets/js/engine.js); sim's runs are the CLI's, the exports' and the tests'.
"""

from __future__ import annotations

import numpy as np

from sim.refusals import refused

M0, M1 = 0xD2511F53, 0xCD9E8D57  # Philox4x32's multipliers
W0, W1 = 0x9E3779B9, 0xBB67AE85  # its Weyl constants (the key schedule)
ROUNDS = 10
TOY, SHARPEN, KL = 0, 1, 2  # c3 of each simulation's streams
TINYLM_PROMPTS, TINYLM_TOKENS, TINYLM_EVAL = 3, 4, 5
MAX_KEY = 2**64 - 1

_MASK = np.uint64(0xFFFFFFFF)
_U64 = np.uint64


def philox(c0, c1, c2, c3, k0, k1) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Philox4x32-10: the four output words (uint64 arrays holding 32-bit values) of counters (c0, c1, c2, c3)
    under keys (k0, k1); every argument an integer or an array of 32-bit values, all broadcast together.

    >>> [hex(int(w)) for w in philox(0, 0, 0, 0, 0, 0)]   # Random123's first known-answer vector
    ['0x6627e8d5', '0xe169c58d', '0xbc57ac4c', '0x9b00dbd8']
    """
    x, y = _rounds(c0, c1, c2, c3, k0, k1)
    return x[0], y[0], x[1], y[1]


def _rounds(c0, c1, c2, c3, k0, k1) -> tuple[np.ndarray, np.ndarray]:
    """The ten rounds on stacked (2, ...) arrays: x = (c0, c2), the words multiplied, and y = (c1, c3), the
    words xored in, in preallocated buffers. Returns the output words as x = (w0, w2), y = (w1, w3).
    Fastest with the key's varying axes first (the xor with the key then runs over long rows)."""
    c0, c1, c2, c3, k0, k1 = (np.asarray(a, dtype=_U64) for a in (c0, c1, c2, c3, k0, k1))
    shape = np.broadcast_shapes(c0.shape, c1.shape, c2.shape, c3.shape, k0.shape, k1.shape)
    ones = (1,) * len(shape)
    x, y = np.empty((2, *shape), _U64), np.empty((2, *shape), _U64)
    x[0], x[1], y[0], y[1] = c0, c2, c1, c3
    product = np.empty_like(x)
    mult = np.array([M0, M1], dtype=_U64).reshape(2, *ones)
    k0, k1 = np.broadcast_arrays(k0, k1)
    key = np.stack([k0, k1]).reshape(1, 2, *(1,) * (len(shape) - k0.ndim), *k0.shape)
    bumps = np.array([[W0, W1]], dtype=_U64) * np.arange(ROUNDS, dtype=_U64)[:, None]  # (ROUNDS, 2)
    keys = (key + bumps.reshape(ROUNDS, 2, *ones)) & _MASK  # (ROUNDS, 2, ...) each round's (k0, k1)
    for r in range(ROUNDS):
        np.multiply(x, mult, out=product)  # (M0 c0, M1 c2), exact in 64 bits
        np.right_shift(product[::-1], 32, out=x)  # (hi(M1 c2), hi(M0 c0))
        x ^= y  # ^ (c1, c3)
        x ^= keys[r]  # ^ (k0, k1)
        np.bitwise_and(product[::-1], _MASK, out=y)  # (lo(M1 c2), lo(M0 c0))
    return x, y


def to_uniform(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """U = ((a >> 5) 2^26 + (b >> 6)) / 2^53 from two 32-bit words: a float64 in [0, 1) with 53 random bits."""
    return ((a >> 5) << 26 | (b >> 6)).astype(np.float64) * 2.0**-53


def _uniform_bits(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """to_uniform's 53 bits, (a >> 5) 2^26 + (b >> 6), of the stacked words x = (w0, w2), y = (w1, w3), in x:
    row 0 holds uniform 2 c0 of each block, row 1 uniform 2 c0 + 1."""
    x >>= 5
    x <<= 26
    y >>= 6
    x |= y
    return x


def stream_uniforms(k0, k1, c1, c2, c3, count: int) -> np.ndarray:
    """Uniforms 0..count-1 of the streams (key, c1, c2, c3): an array of the broadcast shape of the arguments
    plus a last axis of `count`, uniform i from block i // 2 (see the module docstring)."""
    blocks = (count + 1) // 2
    c0 = np.arange(blocks, dtype=_U64)
    k0, k1, c1, c2, c3 = (np.asarray(a, dtype=_U64)[..., None] for a in (k0, k1, c1, c2, c3))
    bits = _uniform_bits(*_rounds(c0, c1, c2, c3, k0, k1))  # (2, ..., blocks)
    u = np.empty((*bits.shape[1:], 2))
    np.multiply(np.moveaxis(bits, 0, -1), 2.0**-53, out=u)  # (..., blocks, 2): uniforms 2 c0 and 2 c0 + 1
    return u.reshape(*bits.shape[1:-1], 2 * blocks)[..., :count]


def check_key(key: int) -> int:
    if not 0 <= key <= MAX_KEY:
        raise refused("philox_key", key=key)
    return int(key)


def key_words(keys) -> tuple[np.ndarray, np.ndarray]:
    """(k0, k1): the low and high 32-bit words of 64-bit integer keys (a sequence of Python ints)."""
    keys = [check_key(int(k)) for k in keys]
    return (np.array([k & 0xFFFFFFFF for k in keys], dtype=_U64), np.array([k >> 32 for k in keys], dtype=_U64))


def toy_keys(seed: int, n_seeds: int) -> tuple[np.ndarray, np.ndarray]:
    """The keys of a toy run's seeds, seed + s for s = 0..S-1, as (k0, k1), (S,) each."""
    return key_words(range(seed, seed + n_seeds))


BLOCKS_PER_CALL = 8192  # Philox blocks computed at once, at most: past this its arrays outgrow the cache


def toy_first_uniforms(seed: int, n_seeds: int, t0: int, n: int, n_prompts: int) -> np.ndarray:
    """(n, S, P): the uniforms of the first draw of iterations t0..t0+n-1 (c2 = 0) of seeds seed..seed+S-1, per
    seed and prompt, computed with the seeds first (the order in which the key's xor is fastest), at most
    BLOCKS_PER_CALL blocks at a time."""
    keys = toy_keys(seed, n_seeds)
    S, P, B = n_seeds, n_prompts, (n_prompts + 1) // 2
    k0, k1 = (k[:, None, None] for k in keys)  # (S, 1, 1)
    c0 = np.arange(B, dtype=_U64)
    u = np.empty((n, S, B, 2))
    parts = max(1, -(-n * S * B // BLOCKS_PER_CALL))  # calls of at most BLOCKS_PER_CALL blocks, as even as can be
    step = max(1, -(-n // parts))
    for a in range(0, n, step):
        t = np.arange(t0 + a, t0 + min(a + step, n), dtype=_U64)[None, :, None]  # (1, m, 1)
        bits = _uniform_bits(*_rounds(c0, t, 0, TOY, k0, k1))  # (2, S, m, B)
        np.multiply(bits.transpose(2, 1, 3, 0), 2.0**-53, out=u[a : a + step])  # (m, S, B, 2)
    return u.reshape(n, S, 2 * B)[..., :P]


def toy_refill_uniforms(keys: tuple, t: int, rounds: np.ndarray, seeds: np.ndarray, slots: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray]:
    """Dynamic sampling's refill rounds (1-based, (b,)) of iteration t, for the slots (seeds[n], slots[n]):
    (prompt uniforms, count uniforms), (b, n) each: slot j's uniforms 2j and 2j + 1 (block j) of each round."""
    w0, w1, w2, w3 = philox(slots[None, :], t, np.asarray(rounds)[:, None], TOY, keys[0][seeds][None, :],
                            keys[1][seeds][None, :])
    return to_uniform(w0, w1), to_uniform(w2, w3)


def sharpen_uniforms(seed: int, i0: int, n: int, rows: int, group_size: int) -> tuple[np.ndarray, np.ndarray]:
    """The sharpening toy's uniforms for iterations i0..i0+n-1: (strategy uniforms, reward uniforms), each
    (n, rows, G): answer g of batch row b draws its strategy at uniform 2g and its reward at 2g + 1."""
    k0, k1 = key_words([seed])
    i = np.arange(i0, i0 + n, dtype=_U64)[:, None]  # (n, 1)
    b = np.arange(rows, dtype=_U64)[None, :]  # (1, rows)
    u = stream_uniforms(k0[0], k1[0], i, b, SHARPEN, 2 * group_size)  # (n, rows, 2G)
    return u[..., 0::2], u[..., 1::2]
