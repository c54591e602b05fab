"""Philox4x32-10 and the dice built on it, in every backend."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from combatsim import rng
from combatsim.kernels import clones, dense_count_nb, rng_cy, rng_nb
from combatsim.registry import get_kernel
from combatsim.runner import run_kernel

# Random123's known-answer vectors for philox4x32_10 (kat_vectors): counter, key, output.
KNOWN_ANSWERS = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    (
        (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
        (0xA4093822, 0x299F31D0),
        (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
    ),
]


def _numba_philox(counter, key):
    values = rng_nb.philox4x32(*(np.uint64(c) for c in counter), np.uint64(key[0]), np.uint64(key[1]))
    return tuple(int(v) for v in values)


PHILOX = {"python": rng.philox4x32, "numba": _numba_philox, "cython": rng_cy.philox4x32}
WORDS = {"python": rng.philox_words, "numba": rng_nb.philox_words, "cython": rng_cy.philox_words}


@pytest.mark.parametrize(("counter", "key", "expected"), KNOWN_ANSWERS)
def test_philox_known_answers(backend, counter, key, expected):
    assert PHILOX[backend](counter, key) == expected


def test_public_philox_is_the_reference():
    from combatsim.rng import philox4x32

    assert philox4x32((0, 0, 0, 0), (0, 0)) == KNOWN_ANSWERS[0][2]


@given(
    seed=st.integers(0, 2**64 - 1),
    index=st.integers(0, 2**62),
    domain=st.integers(0, 2),
)
def test_word_streams_identical_across_backends(seed, index, domain):
    streams = {}
    for name, words in WORDS.items():
        out = np.zeros(12, dtype=np.uint64)
        words(np.uint64(seed), index, 3, domain, out)
        streams[name] = out
    np.testing.assert_array_equal(streams["python"], streams["numba"])
    np.testing.assert_array_equal(streams["python"], streams["cython"])


@given(seed=st.integers(0, 2**64 - 1), index=st.integers(0, 2**63), sides=st.sampled_from([6, 100, 2**31 + 1]))
@example(seed=0, index=0, sides=2**31 + 1)
def test_streams_drawn_ahead_give_the_item_streams_dice(seed, index, sides):
    """The Cython fights' streams drawn ahead (16 blocks at a time): the item stream's dice in order, past
    several draws, rejected words retrying from the retry domain (sides 2^31 + 1 rejects half)."""
    stream = rng.ItemStream(seed, index)
    expected = [stream.die(sides) for _ in range(150)]
    out = np.zeros(150, dtype=np.int64)
    rng_cy.ahead_dice(np.uint64(seed), np.uint64(index), sides, out)
    assert out.tolist() == expected


def test_counter_layout_separates_index_words_and_seed_words():
    # Index 2**32 must not alias index 0: the high word is a counter word of its own.
    assert rng.block(5, 2**32, 0, 0) != rng.block(5, 0, 0, 0)
    assert rng.block(2**32, 0, 0, 0) != rng.block(0, 0, 0, 0)
    assert rng.block(5, 2**32 + 7, 0, 0) == rng.philox4x32((7, 1, 0, 0), (5, 0))
    assert rng.block(2**32 + 9, 3, 2, 1) == rng.philox4x32((3, 0, 2, 1), (9, 1))


def test_dense_layout_takes_one_word_per_item():
    words = rng.block(11, 0, 0, rng.DOMAIN_DENSE) + rng.block(11, 1, 0, rng.DOMAIN_DENSE)
    assert [rng.dense_word(11, i) for i in range(8)] == list(words)


def test_dense_die_word_is_the_word_dense_die_reads():
    sides = 300_000_000  # rejects about one word in 45
    words = [rng.dense_die_word(5, i, sides) for i in range(400)]
    assert [rng.scale(w, sides)[0] + 1 for w in words] == [rng.dense_die(5, i, sides) for i in range(400)]
    replaced = [i for i in range(400) if words[i] != rng.dense_word(5, i)]
    assert replaced and all(rng.scale(rng.dense_word(5, i), sides)[1] < rng.rejection_threshold(sides)
                            for i in replaced)


def test_rejection_retries_come_from_the_retry_domain():
    # sides = 2**31 + 1 rejects almost half of all words, so retries are exercised constantly.
    sides = 2**31 + 1
    threshold = rng.rejection_threshold(sides)
    assert threshold == 2**31 - 1
    stream = rng.ItemStream(3, 12)
    value = stream.bounded(0, sides)  # word 0: product 0 has low word 0 < threshold, rejected
    assert stream.retries_used >= 1
    retry = rng.block(3, 12, 0, rng.DOMAIN_RETRY)
    accepted = next(w for w in retry if (w * sides) & rng.MASK32 >= threshold)
    assert value == (accepted * sides) >> 32


@pytest.mark.parametrize("family_kernel", ["rng.dense_dice", "rng.item_dice"])
@given(seed=st.integers(0, 2**64 - 1), start=st.integers(0, 2**40), sides=st.sampled_from([1, 6, 20, 1000, 2**31 + 1]))
def test_dice_identical_across_backends(family_kernel, seed, start, sides):
    outputs = {}
    for backend in ("python", "numba", "cython"):
        kernel = get_kernel(family_kernel, backend)
        out = np.zeros(37, dtype=np.int64)
        counts = np.zeros(0, dtype=np.int64)
        extra = (3,) if family_kernel == "rng.item_dice" else ()
        kernel(np.uint64(seed), start, 37, np.array([sides], dtype=np.int64), *extra, counts, out)
        outputs[backend] = out
    np.testing.assert_array_equal(outputs["python"], outputs["numba"])
    np.testing.assert_array_equal(outputs["python"], outputs["cython"])
    per_die = 3 if family_kernel == "rng.item_dice" else 1
    assert outputs["python"].min() >= per_die and outputs["python"].max() <= per_die * sides


def _chi_square_p_value(observed: np.ndarray) -> float:
    """Upper tail of the chi-square statistic against the uniform law (Wilson-Hilferty)."""
    expected = observed.sum() / observed.size
    statistic = float(((observed - expected) ** 2 / expected).sum())
    dof = observed.size - 1
    z = ((statistic / dof) ** (1 / 3) - (1 - 2 / (9 * dof))) / np.sqrt(2 / (9 * dof))
    from math import erfc, sqrt

    return 0.5 * erfc(z / sqrt(2))


@pytest.mark.parametrize("sides", [1000, 100, 20])
@pytest.mark.parametrize("family_kernel", ["rng.dense_dice", "rng.item_dice"])
def test_dice_chi_square_uniform(backend, family_kernel, sides):
    n = 20_000 if backend == "python" else 2_000_000
    extra = (4,) if family_kernel == "rng.item_dice" else ()
    result = run_kernel(
        get_kernel(family_kernel, backend),
        n=n // 4 if extra else n,
        seed=20261130,
        params=(np.array([sides], dtype=np.int64), *extra),
        per_item=(False,) * (1 + len(extra)),
        counts_size=sides,
        outputs=(np.zeros(0, dtype=np.int64),),
        chunk_size=1 << 20,
    )
    assert result.counts.sum() == (n // 4) * 4 if extra else n
    assert _chi_square_p_value(result.counts) > 1e-4


def test_documented_vectors():
    """The vectors printed in docs/rng.md."""
    assert rng.block(7, 0, 0, rng.DOMAIN_DENSE) == (0xD6A62573, 0x71EADE72, 0x3AC9655A, 0x2AFFC9A4)
    assert [rng.dense_die(7, i, 1000) for i in range(8)] == [839, 445, 230, 168, 740, 652, 137, 698]
    assert [rng.dense_die(7, 2**32 + i, 1000) for i in range(4)] == [180, 555, 449, 819]
    stream = rng.ItemStream(42, 5)
    assert [stream.word() for _ in range(5)] == [0x5099D809, 0x4B20B5D2, 0x0D41B5E2, 0x0A653407, 0x4E9B5CDF]
    stream = rng.ItemStream(42, 5)
    assert [stream.die(s) for s in (20, 100, 8, 8, 4, 6)] == [7, 30, 1, 1, 2, 6]
    assert rng.ItemStream(2**64 - 1, 2**40 + 3).roll(3, 10) == 13
    stream = rng.ItemStream(3, 12)
    assert stream.bounded(0, 2**31 + 1) == 591835129 and stream.retries_used == 1


@given(
    seed=st.integers(0, 2**64 - 1),
    first_block=st.integers(0, 2**40),
    blocks=st.integers(0, 300),
    sides=st.sampled_from([6, 20, 100, 1000, 3 * 2**29]),  # 3 * 2**29: a quarter of words rejected
    data=st.data(),
)
@example(seed=5, first_block=2**32 - 7, blocks=30, sides=1000, data=None)  # straddles a high word
def test_dense_count_widest_and_portable_clones_and_numba_equal_the_reference(seed, first_block, blocks, sides, data):
    first_value = data.draw(st.integers(0, sides)) if data else 500
    fast = rng_cy.dense_count_pass(seed, first_block, first_block + blocks, sides, first_value)
    with clones.forced("portable"):
        portable = rng_cy.dense_count_pass(seed, first_block, first_block + blocks, sides, first_value)
    # The count is exact on both paths; "rejected" says only whether any word was rejected.
    assert fast[0] == portable[0] and bool(fast[1]) == bool(portable[1])
    k0, k1 = np.uint64(seed & rng.MASK32), np.uint64(seed >> 32)
    numba_count = dense_count_nb.dense_count(dense_count_nb.dense_keys(k0, k1), k0, k1, first_block,
                                             first_block + blocks, np.uint64(sides), np.uint64(first_value) << 32,
                                             np.uint64(rng.rejection_threshold(sides)))
    assert numba_count == (fast[0], bool(fast[1]))
    if blocks <= 40:
        words = [w for g in range(first_block, first_block + blocks) for w in rng.block(seed, g, 0, rng.DOMAIN_DENSE)]
        assert fast[0] == sum(rng.scale(w, sides)[0] >= first_value for w in words)
        assert bool(fast[1]) == any(rng.scale(w, sides)[1] < rng.rejection_threshold(sides) for w in words)


@given(st.lists(st.tuples(st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1), st.integers(0, 2**32 - 1)),
                max_size=40),
       st.sampled_from([rng.DOMAIN_ITEM, rng.DOMAIN_RETRY]))
def test_keyed_blocks_each_under_its_own_key_equal_the_reference(streams, domain):
    """philox.h's many-streams blocks (the RL steps' SIMD pass): any count, not only whole vectors."""
    keys, items, blocks = (np.array(column, dtype=dtype) for column, dtype in
                           zip(zip(*streams, strict=True) if streams else ((), (), ()),
                               (np.uint64, np.uint64, np.uint32), strict=True))
    words = rng_cy.keyed_blocks(keys, items, blocks, domain)
    assert [tuple(int(w) for w in row) for row in words] == [rng.block(*stream, domain) for stream in streams]


@given(seed=st.integers(0, 2**64 - 1), first_block=st.integers(0, 2**40), blocks=st.integers(0, 50),
       domain=st.sampled_from([rng.DOMAIN_ITEM, rng.DOMAIN_DENSE]))
@example(seed=5, first_block=2**32 - 7, blocks=30, domain=rng.DOMAIN_DENSE)  # straddles a high word
def test_dense_words_simd_path_equals_reference_blocks(seed, first_block, blocks, domain):
    words = rng_cy.dense_words(seed, domain, first_block, blocks)
    expected = [w for g in range(first_block, first_block + blocks) for w in rng.block(seed, g, 0, domain)]
    assert words.tolist() == expected
