"""EXP kilodie to-hit: the first kernel end to end (RULINGS.md, EXP)."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import icepool
import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from combatsim.cli import main as cli_main
from combatsim.exp import simulate_to_hit
from combatsim.exp.engine import KILODIE
from combatsim.registry import get_kernel
from combatsim.rng import DOMAIN_DENSE, dense_die, dense_word, rejection_threshold


def exact_hit_probability(bonus: int, maximum_roll: int, armour_rating: int, hit_on_equal: bool = False):
    to_hit = icepool.d(KILODIE).map(lambda roll: min(roll + bonus, maximum_roll))
    return to_hit.probability(">=" if hit_on_equal else ">", armour_rating)


def test_to_hit_rolls_follow_the_documented_stream():
    result = simulate_to_hit(16, bonus=110, maximum_roll=760, armour_rating=580, seed=7, backend="python", outcomes=True)
    expected = [min(dense_die(7, i, KILODIE) + 110, 760) for i in range(16)]
    assert result.to_hit.tolist() == expected
    assert result.hits == sum(total > 580 for total in expected)


@given(
    seed=st.integers(0, 2**64 - 1),
    n=st.integers(0, 70),
    bonus=st.integers(-1200, 1200),
    maximum_roll=st.integers(1, 2200),
    armour_rating=st.integers(-100, 2100),
    hit_on_equal=st.booleans(),
)
def test_backends_identical_with_scalar_inputs(seed, n, bonus, maximum_roll, armour_rating, hit_on_equal):
    results = {
        backend: simulate_to_hit(
            n, bonus=bonus, maximum_roll=maximum_roll, armour_rating=armour_rating,
            hit_on_equal=hit_on_equal, seed=seed, backend=backend, outcomes=True,
        )
        for backend in ("python", "numba", "cython")
    }
    for backend in ("numba", "cython"):
        np.testing.assert_array_equal(results[backend].to_hit, results["python"].to_hit)
        assert results[backend].hits == results["python"].hits


@given(seed=st.integers(0, 2**64 - 1), data=st.data())
def test_backends_identical_with_per_attack_arrays(seed, data):
    n = data.draw(st.integers(1, 60))
    arrays = st.lists(st.integers(-500, 1500), min_size=n, max_size=n)
    bonus = np.array(data.draw(arrays), dtype=np.int64)
    armour_rating = np.array(data.draw(arrays), dtype=np.int32)  # any integer dtype is accepted
    maximum_roll = np.array(data.draw(st.lists(st.integers(1, 1500), min_size=n, max_size=n)))
    hit_on_equal = data.draw(st.booleans())
    results = [
        simulate_to_hit(n, bonus=bonus, maximum_roll=maximum_roll, armour_rating=armour_rating,
                        hit_on_equal=hit_on_equal, seed=seed, backend=backend, outcomes=True)
        for backend in ("python", "numba", "cython")
    ]
    for other in results[1:]:
        np.testing.assert_array_equal(other.to_hit, results[0].to_hit)
        assert other.hits == results[0].hits
    expected_hits = np.count_nonzero(results[0].to_hit > armour_rating - int(hit_on_equal))
    assert results[0].hits == expected_hits


@pytest.mark.parametrize("backend", ["numba", "cython"])
@given(
    seed=st.integers(0, 2**64 - 1),
    start=st.integers(0, 2**34),
    count=st.integers(0, 5000),
    bonus=st.integers(-1100, 1100),
    armour_rating=st.integers(-100, 1800),
)
@example(seed=3, start=2**34 - 2001, count=5000, bonus=0, armour_rating=500)  # blocks cross a high word
def test_fast_path_counts_equal_the_reference_path(backend, seed, start, count, bonus, armour_rating):
    """The tiled, vectorised count (no per-attack output) equals the per-attack path, at any offset."""
    kernel = get_kernel("exp.to_hit", backend)
    params = (np.array([bonus]), np.array([1500]), np.array([armour_rating]), False)
    fast = np.zeros(1, dtype=np.int64)
    kernel(np.uint64(seed), start, count, *params, fast, np.zeros(0, dtype=np.int32))
    rolls = np.zeros(count, dtype=np.int32)
    exact = np.zeros(1, dtype=np.int64)
    kernel(np.uint64(seed), start, count, *params, exact, rolls)
    assert fast[0] == exact[0] == np.count_nonzero(rolls > armour_rating)


def test_fast_path_survives_rejected_words(compiled_backend):
    """Words that Lemire rejects (p = 296/2**32) are redrawn from the retry domain, never counted raw."""
    seed, count = 18, 1 << 23  # seed 18 has two rejected words among the first 2**23
    rejected = np.flatnonzero(numpy_dense_products(seed, count) & 0xFFFFFFFF < rejection_threshold(KILODIE))
    assert rejected.size > 0  # this range holds rejected words, so the exact re-count is exercised
    kernel = get_kernel("exp.to_hit", compiled_backend)
    params = (np.array([0]), np.array([1000]), np.array([499]), False)
    rolls = np.zeros(count, dtype=np.int32)
    exact = np.zeros(1, dtype=np.int64)
    kernel(np.uint64(seed), 0, count, *params, exact, rolls)
    fast = np.zeros(1, dtype=np.int64)
    kernel(np.uint64(seed), 0, count, *params, fast, np.zeros(0, dtype=np.int32))
    assert fast[0] == exact[0]
    assert [int(rolls[i]) for i in rejected] == [dense_die(seed, int(i), KILODIE) for i in rejected]


def numpy_dense_products(seed: int, count: int) -> np.ndarray:
    """An independent, vectorised numpy Philox4x32-10: word * 1000 for items 0..count-1 (dense layout)."""
    blocks = np.arange(count // 4, dtype=np.uint64)
    c0, c1 = blocks & np.uint64(0xFFFFFFFF), blocks >> np.uint64(32)
    c2 = np.zeros_like(blocks)
    c3 = np.full_like(blocks, DOMAIN_DENSE)
    k0, k1 = np.uint64(seed & 0xFFFFFFFF), np.uint64(seed >> 32)
    mask, shift = np.uint64(0xFFFFFFFF), np.uint64(32)
    for _ in range(10):
        p0 = np.uint64(0xD2511F53) * c0
        p1 = np.uint64(0xCD9E8D57) * c2
        c0, c1, c2, c3 = (p1 >> shift) ^ c1 ^ k0, p1 & mask, (p0 >> shift) ^ c3 ^ k1, p0 & mask
        k0 = (k0 + np.uint64(0x9E3779B9)) & mask
        k1 = (k1 + np.uint64(0xBB67AE85)) & mask
    return np.stack([c0, c1, c2, c3], axis=1).reshape(-1) * np.uint64(KILODIE)


def test_numpy_philox_agrees_with_the_reference():
    products = numpy_dense_products(77, 64)
    assert products.tolist() == [dense_word(77, i) * KILODIE for i in range(64)]


def test_item_indices_past_two_to_the_32(backend):
    start = 2**32 - 5
    kernel = get_kernel("exp.to_hit", backend)
    rolls = np.zeros(10, dtype=np.int32)
    kernel(np.uint64(99), start, 10, np.array([0]), np.array([1000]), np.array([0]), False, np.zeros(1, np.int64), rolls)
    assert rolls.tolist() == [dense_die(99, start + k, KILODIE) for k in range(10)]


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("chunk_size", [None, 1, 7, 4096])
def test_results_independent_of_threads_and_chunks(compiled_backend, threads, chunk_size):
    n = {1: 300, 7: 5_003}.get(chunk_size, 100_003)
    reference = simulate_to_hit(n, bonus=125, maximum_roll=750, armour_rating=575, seed=2026, backend="cython",
                                threads=1, outcomes=True)
    result = simulate_to_hit(n, bonus=125, maximum_roll=750, armour_rating=575, seed=2026, backend=compiled_backend,
                             threads=threads, chunk_size=chunk_size, outcomes=True)
    counted = simulate_to_hit(n, bonus=125, maximum_roll=750, armour_rating=575, seed=2026, backend=compiled_backend,
                              threads=threads, chunk_size=chunk_size)
    np.testing.assert_array_equal(result.to_hit, reference.to_hit[:n])
    assert result.hits == counted.hits == reference.hits


@pytest.mark.parametrize(
    ("bonus", "maximum_roll", "armour_rating", "hit_on_equal"),
    [(110, 760, 580, False), (178, 853, 800, False), (19, 750, 575, True), (234, 909, 909, True), (0, 1000, 999, False)],
)
def test_hit_rate_matches_exact_probability(compiled_backend, bonus, maximum_roll, armour_rating, hit_on_equal):
    n = 4_000_000
    p = float(exact_hit_probability(bonus, maximum_roll, armour_rating, hit_on_equal))
    result = simulate_to_hit(n, bonus=bonus, maximum_roll=maximum_roll, armour_rating=armour_rating,
                             hit_on_equal=hit_on_equal, seed=5, backend=compiled_backend)
    sigma = math.sqrt(n * p * (1 - p)) or 1.0
    assert abs(result.hits - n * p) <= 5 * sigma


def test_exact_probability_cross_check():
    # Independent of icepool: count the kilodie faces by hand.
    assert exact_hit_probability(110, 760, 580) == Fraction(sum(min(r + 110, 760) > 580 for r in range(1, 1001)), 1000)
    assert exact_hit_probability(234, 909, 909) == 0  # capped at MR 909: AR 909 is out of reach
    assert exact_hit_probability(234, 909, 909, True) == Fraction(sum(r + 234 >= 909 for r in range(1, 1001)), 1000)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (dict(n=-1), ValueError, "n must be in 0"),
        (dict(n=1.5), TypeError, "n must be an integer"),
        (dict(maximum_roll=0), ValueError, "maximum_roll must be in 1..2000000"),
        (dict(bonus=1.5), TypeError, "bonus must be an integer"),
        (dict(bonus="7"), TypeError, "bonus must be an integer"),
        (dict(bonus=np.array([1.0, 2.0])), TypeError, "bonus must hold integers"),
        (dict(bonus=np.array([1, 2, 3])), ValueError, "bonus must have one entry per attack"),
        (dict(armour_rating=np.zeros((2, 2), dtype=int)), ValueError, "armour_rating must be a scalar or a 1-D"),
        (dict(backend="fortran"), ValueError, "backend must be one of"),
        (dict(seed=-1), ValueError, "seed must be in 0..18446744073709551615"),
        (dict(seed=2**64), ValueError, "seed must be"),
        (dict(threads=0), ValueError, "threads must be in 1..1024"),
        (dict(hit_on_equal="yes"), TypeError, "hit_on_equal must be a bool"),
        (dict(bonus=True), TypeError, "bonus must be an integer"),
    ],
)
def test_bad_input_gets_a_clear_error(kwargs, error, match):
    arguments = dict(n=2, bonus=110, maximum_roll=760, armour_rating=580, seed=1)
    arguments.update(kwargs)
    with pytest.raises(error, match=match):
        simulate_to_hit(arguments.pop("n"), **arguments)


def test_interrupted_run_returns_a_partial_result():
    calls = []

    def stop_after_two_chunks(done, total):
        calls.append(done)
        if len(calls) == 2:
            raise KeyboardInterrupt

    result = simulate_to_hit(10_000, bonus=110, maximum_roll=760, armour_rating=580, seed=3, backend="numba",
                             chunk_size=1000, threads=1, progress=stop_after_two_chunks)
    assert result.partial
    # The interrupt lands after the second chunk was counted.
    assert result.attacks == 2000
    assert result.hits == simulate_to_hit(2000, bonus=110, maximum_roll=760, armour_rating=580, seed=3).hits


def test_cli_json(capsys):
    code = cli_main(["attack", "exp", "--bonus", "110", "--max-roll", "760", "--armour-rating", "580",
                     "-n", "100000", "--seed", "7", "--backend", "numba", "--threads", "2", "--json"])
    record = json.loads(capsys.readouterr().out)
    assert code == 0
    assert record["attacks"] == 100_000 and record["seed"] == 7 and record["backend"] == "numba"
    assert record["hits"] == simulate_to_hit(100_000, bonus=110, maximum_roll=760, armour_rating=580, seed=7).hits
    assert record["hit_rate"] == record["hits"] / record["attacks"]


def test_cli_human_report_and_errors(capsys):
    assert cli_main(["attack", "exp", "--bonus", "110", "--max-roll", "760", "--armour-rating", "580", "-n", "1e4"]) == 0
    assert "hit rate" in capsys.readouterr().out
    assert cli_main(["attack", "exp", "--bonus", "1", "--max-roll", "0", "--armour-rating", "5"]) == 2
    err = capsys.readouterr().err
    assert "--max-roll: must be an integer in 1..2000000" in err and "Traceback" not in err
    assert cli_main(["attack", "exp", "--bonus", "1", "--max-roll", "9", "--armour-rating", "5", "-n", "-3"]) == 2
    assert "-n/--attacks: must be an integer in 1.." in capsys.readouterr().err
