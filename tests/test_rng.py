"""sim/rng.py: Philox4x32-10 against Random123's published known answers, the uniforms' construction, and the
project's counter layout (what each draw of the toy and the sharpening toy reads)."""

import numpy as np
import pytest
from scipy import stats

from sim import rng

# Random123's known-answer vectors for Philox4x32-10 (its tests/kat_vectors; also in TensorFlow's Philox tests):
# (counter c0..c3, key k0 k1) -> the four output words.
KNOWN_ANSWERS = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


@pytest.mark.parametrize("counter, key, words", KNOWN_ANSWERS)
def test_philox_known_answers(counter, key, words):
    assert tuple(int(w) for w in rng.philox(*counter, *key)) == words


def test_philox_broadcasts_as_separate_calls():
    """Arrays of counters and keys (broadcast) give each element's own four words."""
    c0, c1 = np.arange(5)[:, None], np.array([0, 7, 0xFFFFFFFF])[None, :]
    k0 = np.array([3, 0xFFFFFFFF, 12345])[None, :]
    out = rng.philox(c0, c1, 9, 2, k0, 0x299F31D0)
    for i in range(5):
        for j in range(3):
            one = rng.philox(i, int(c1[0, j]), 9, 2, int(k0[0, j]), 0x299F31D0)
            assert [int(w[i, j]) for w in out] == [int(w) for w in one]


def test_uniform_takes_53_bits_of_two_words():
    # U = ((a >> 5) 2^26 + (b >> 6)) / 2^53: the largest words give the largest double below 1
    a, b = np.array([0xFFFFFFFF, 0, 1 << 5]), np.array([0xFFFFFFFF, 0, 1 << 6])
    u = rng.to_uniform(a.astype(np.uint64), b.astype(np.uint64))
    assert u[0] == 1 - 2.0**-53 and u[1] == 0.0 and u[2] == (2**26 + 1) * 2.0**-53


def test_stream_uniforms_layout():
    """Uniform i of a stream is block i // 2: words (w0, w1) for even i, (w2, w3) for odd i."""
    u = rng.stream_uniforms(11, 22, 33, 44, 55, 7)  # (7,) uniforms 0..6 of the stream (key 11, 22; 33, 44, 55)
    for i in range(7):
        w = rng.philox(i // 2, 33, 44, 55, 11, 22)
        a, b = (w[0], w[1]) if i % 2 == 0 else (w[2], w[3])
        assert u[i] == rng.to_uniform(a, b)


def test_toy_layout_seed_s_is_key_seed_plus_s():
    """Seed s of a band from `seed` draws with key seed + s: "seed 7" of a 16-seed band from 0 is the 1-seed
    run with seed 7, and a seed's draws do not depend on how many seeds run. Keys past 2**32 use both words."""
    band = rng.toy_first_uniforms(0, 16, 5, 3, 24)  # (n, S, P)
    alone = rng.toy_first_uniforms(7, 1, 5, 3, 24)
    np.testing.assert_array_equal(band[:, 7], alone[:, 0])
    w = rng.philox(np.arange(12), 6, 0, rng.TOY, 7, 0)  # iteration 6, first draw: prompt j at uniform j
    np.testing.assert_array_equal(band[1, 7, 0::2], rng.to_uniform(w[0], w[1]))
    np.testing.assert_array_equal(band[1, 7, 1::2], rng.to_uniform(w[2], w[3]))
    # computed a few iterations at a time (BLOCKS_PER_CALL): the same numbers as one stream at a time
    many = rng.toy_first_uniforms(3, 700, 0, 2, 23)  # 700 seeds x 12 blocks > BLOCKS_PER_CALL
    np.testing.assert_array_equal(many[1, 699], rng.stream_uniforms(702, 0, 1, 0, rng.TOY, 23))

    big = 2**63 - 1
    k0, k1 = rng.toy_keys(big, 2)
    assert [int(k0[1]), int(k1[1])] == [0, 2**31]  # 2**63: low word 0, high word 2**31
    with pytest.raises(ValueError, match="64-bit"):
        rng.key_words([2**64])


def test_toy_refill_and_sharpen_layout():
    keys = rng.toy_keys(3, 4)
    u_prompt, u_count = rng.toy_refill_uniforms(keys, 9, np.array([2, 3]), np.array([1, 3]), np.array([5, 0]))
    w = rng.philox(5, 9, 2, rng.TOY, 4, 0)  # round 2, seed 1 of the band (key 4), slot 5: block 5
    assert u_prompt[0, 0] == rng.to_uniform(w[0], w[1]) and u_count[0, 0] == rng.to_uniform(w[2], w[3])
    w = rng.philox(0, 9, 3, rng.TOY, 6, 0)  # round 3, seed 3 (key 6), slot 0
    assert u_prompt[1, 1] == rng.to_uniform(w[0], w[1]) and u_count[1, 1] == rng.to_uniform(w[2], w[3])
    u, v = rng.sharpen_uniforms(42, 10, 2, 8, 3)  # iterations 10, 11; 8 rows; G = 3
    w = rng.philox(2, 11, 6, rng.SHARPEN, 42, 0)  # iteration 11, row 6, answer 2
    assert u[1, 6, 2] == rng.to_uniform(w[0], w[1]) and v[1, 6, 2] == rng.to_uniform(w[2], w[3])


def test_uniforms_are_uniform_and_streams_independent():
    u = rng.toy_first_uniforms(0, 64, 0, 100, 24).ravel()  # 153,600 uniforms
    assert stats.kstest(u, "uniform").pvalue > 1e-3
    a, b = rng.stream_uniforms(0, 0, 0, 0, 0, 20_000), rng.stream_uniforms(1, 0, 0, 0, 0, 20_000)  # keys 0 and 1
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.03 and abs(np.corrcoef(a[:-1], a[1:])[0, 1]) < 0.03
