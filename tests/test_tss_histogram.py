"""TSS attack kernel, histogram fast path (docs/tss.md): counting the joint die's values over whole
dense blocks and folding the histogram through the exact per-value outcome gives exactly the
attack-by-attack counts, rejected words included."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from combatsim import rng
from combatsim.kernels import clones
from combatsim.kernels.tss import _cy, _nb
from combatsim.tss.api import attack_config
from combatsim.tss.engine import ATTACK_COUNTS, magic_of, magic_quotient

from .test_tss_kernels import REJECTED_JOINT_ITEM, qualities, run_attack, scores

#: The histogram pass and fold alone, over dense blocks first .. last - 1, whatever their number.
HISTOGRAM = {"numba": _nb.attack_joint_histogram, "cython": _cy.attack_joint_histogram}
#: The kernels take the histogram pass when the whole blocks hold at least 4 (Numba) or 1
#: (Cython) attacks per face; tests send 8 per face to be sure of it.
MIN_ATTACKS_PER_FACE = 8

ALEX = dict(skill="16/8/4", steps=-1, damage="d4w/d4+2w/d4-1m", weapon_quality="good", armour="d6")
#: 20 · d20 · d20 damage · d8 armour = 64,000 faces: 2**32 mod 64000 = 55296, so about one dense
#: word in 78,000 is rejected. At seed 0, items 321514 and 462626 are, and their retried values
#: have other outcomes than the rejected ones (a Good hit and a failure, a failure and a critical).
WIDE = dict(skill="16/8/4", steps=5, damage="d20w/d20w/d20w", armour="d8")
WIDE_REJECTED = (321_514, 462_626)


small_sides = st.sampled_from([1, 2, 3, 4, 6, 8, 10, 12, 20])


@st.composite
def small_dice(draw, max_count: int, min_count: int = 0) -> str:
    count = draw(st.integers(min_count, max_count))
    modifier = draw(st.integers(-3, 3))
    return f"{count}d{draw(small_sides)}{modifier:+d}" if count else str(modifier)


@st.composite
def joint_attack_configs(draw) -> np.ndarray:
    """Attacks whose dice fit the joint layout (faces <= 2**16), up to three dice of each kind."""
    config = attack_config(
        skill=draw(scores()),
        steps=draw(st.integers(-6, 6)),
        damage="/".join(draw(small_dice(3)) + draw(st.sampled_from("swm")) for _ in range(3)),
        weapon_quality=draw(qualities),
        armour=draw(st.none() | small_dice(2, min_count=1)),  # armour rolls a die
        armour_quality=draw(qualities),
        one_step_shift=draw(st.booleans()),
    )
    assume(config[23])
    return config


def histogram_counts(backend: str, seed: int, first_block: int, last_block: int, config: np.ndarray) -> np.ndarray:
    counts = np.zeros(ATTACK_COUNTS, dtype=np.int64)
    HISTOGRAM[backend](seed, first_block, last_block, config, counts)
    return counts


def is_rejected(seed: int, item: int, faces: int) -> bool:
    return (rng.dense_word(seed, item) * faces) % 2**32 < rng.rejection_threshold(faces)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(config=joint_attack_configs(), seed=st.integers(0, 2**64 - 1), first_block=st.integers(0, 2**38),
       blocks=st.integers(0, 30))
def test_histogram_and_fold_equal_the_reference(config, seed, first_block, blocks):
    expected = run_attack("python", seed, 4 * first_block, 4 * blocks, config, outputs=False)[0]
    for backend in HISTOGRAM:
        np.testing.assert_array_equal(histogram_counts(backend, seed, first_block, first_block + blocks, config),
                                      expected)


@pytest.mark.parametrize("compiled", sorted(HISTOGRAM))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(config=joint_attack_configs(), seed=st.integers(0, 2**64 - 1), first_block=st.integers(0, 2**38),
       blocks=st.integers(0, 3000))
def test_histogram_and_fold_equal_the_attack_by_attack_path(compiled, config, seed, first_block, blocks):
    exact = run_attack(compiled, seed, 4 * first_block, 4 * blocks, config)[0]
    np.testing.assert_array_equal(histogram_counts(compiled, seed, first_block, first_block + blocks, config), exact)


@pytest.mark.parametrize(("parameters", "item"), [(ALEX, REJECTED_JOINT_ITEM), (WIDE, WIDE_REJECTED[0]),
                                                  (WIDE, WIDE_REJECTED[1])])
def test_histogram_moves_a_rejected_word_to_its_retried_value(parameters, item):
    config = attack_config(**parameters)
    faces = int(config[24])
    assert config[23] and is_rejected(0, item, faces)
    first_block = item // 4 - 300
    expected = run_attack("python", 0, 4 * first_block, 4 * 700, config, outputs=False)[0]
    for backend in HISTOGRAM:
        np.testing.assert_array_equal(histogram_counts(backend, 0, first_block, first_block + 700, config), expected)


def test_kernel_histogram_path_with_a_rejected_word_equals_the_reference():
    """Enough attacks for the kernels to take the histogram pass, with an exact head and tail."""
    config = attack_config(**ALEX)
    count = MIN_ATTACKS_PER_FACE * int(config[24]) + 7
    start = REJECTED_JOINT_ITEM - 5001
    expected = run_attack("python", 0, start, count, config, outputs=False)[0]
    for backend in HISTOGRAM:
        np.testing.assert_array_equal(run_attack(backend, 0, start, count, config, outputs=False)[0], expected)


@pytest.mark.parametrize("parameters", [
    WIDE,
    ALEX,
    # Three damage positions: beyond the direct fast pass, so only the histogram pass is fast.
    dict(skill="14/7/3", steps=0, damage="3d4w/2d4+1w/d4m"),
    dict(skill="16/8/4", steps=2, damage="d6s/d6w/d6m", armour="2d4-1", armour_quality="good"),
    dict(skill="18/9/4", steps=6, damage="d4s/d4+1w/d4m"),  # two situation dice
])
def test_kernel_histogram_path_equals_the_attack_by_attack_path(parameters):
    config = attack_config(**parameters)
    assert config[23]
    count = MIN_ATTACKS_PER_FACE * int(config[24]) + 3
    start = 440_001 if parameters is WIDE else 12_345
    exact = run_attack("numba", 0, start, count, config)[0]
    assert exact.sum() > 0
    for backend in HISTOGRAM:
        np.testing.assert_array_equal(run_attack(backend, 0, start, count, config, outputs=False)[0], exact)
        np.testing.assert_array_equal(run_attack(backend, 0, start, count, config)[0], exact)


def test_direct_fast_pass_magic_division_is_exact_below_2_16():
    """The direct fast pass divides v < 2**16 by d <= 2**16 as (v * ceil(2**32 / d)) >> 32 (the
    engine's magic_quotient; d = 1 adds v itself). With v = q d + r, that is q + (r + v e / 2**32) / d
    for e = ceil(2**32 / d) d - 2**32 < d, so it is exact when v e < 2**32: checked for every d, and
    by brute force over every v for some d."""
    divisors = np.arange(2, 2**16 + 1, dtype=np.uint64)
    magic = (np.uint64(2**32) + divisors - np.uint64(1)) // divisors
    excess = magic * divisors - np.uint64(2**32)
    assert (excess < divisors).all()
    assert (excess * np.uint64(2**16 - 1) < np.uint64(2**32)).all()
    values = np.arange(2**16, dtype=np.int64)
    for d in [1, 2, 3, 7, 20, 80, 320, 1920, 3000, 32000, 40000, 64000, 65521, 65535, 65536]:
        assert magic_of(d) == (-(-(2**32) // d) if d >= 2 else 0)
        np.testing.assert_array_equal(magic_quotient(values, magic_of(d), int(d == 1)), values // d)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**64 - 1), first_block=st.integers(0, 2**40) | st.integers(2**32 - 40, 2**32 + 5),
       count=st.integers(0, 200), faces=st.sampled_from([1, 20, 1920, 3000, 64000, 65536]))
def test_cython_histogram_widest_clone_equals_portable_clone(seed, first_block, count, faces):
    """joint_histogram.h: the widest clone this machine runs and the portable clone give the same
    histogram and smallest low word, also across a change of the block index's high word
    (tests/test_clones.py runs every clone against the reference)."""
    fast, fast_low = _cy.joint_histogram_pass(seed, first_block, count, faces)
    with clones.forced("portable"):
        portable, portable_low = _cy.joint_histogram_pass(seed, first_block, count, faces)
    np.testing.assert_array_equal(fast, portable)
    assert fast_low == portable_low
    assert int(fast.sum()) == 4 * count
    words = [rng.dense_word(seed, 4 * first_block + j) * faces for j in range(4 * min(count, 5))]
    for product in words:
        assert fast[product >> 32] >= 1
    if count:
        assert fast_low <= min(product % 2**32 for product in words)
