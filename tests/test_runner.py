"""The streaming runner: splits that never change a result, one pool, chunks sized by cost,
bounded count buffers, and run arguments refused before any work."""

from __future__ import annotations

import itertools
import threading
import tracemalloc

import numpy as np
import pytest

from combatsim import runner, validation
from combatsim.d100 import api as d100
from combatsim.exp import api as exp
from combatsim.exp.bench import FIGHTERS
from combatsim.exp.model import Weapon
from combatsim.registry import get_kernel
from combatsim.tss import api as tss


@pytest.fixture
def many_cores(monkeypatch):
    """Pretend to be a 100-core machine whose threads take any slice, however small."""
    _cores(monkeypatch, 100)
    monkeypatch.setattr(runner, "SPLIT_SECONDS", 1e-12)


def _cores(monkeypatch, cores: int) -> None:
    monkeypatch.setattr(runner, "CPU_COUNT", cores)
    monkeypatch.setattr(validation, "CPU_COUNT", cores)


def _to_hit_run(threads: int, chunk_size: int | None, backend: str = "cython") -> tuple[np.ndarray, np.ndarray]:
    n = 10_007
    bonus = np.arange(n, dtype=np.int64) % 300
    to_hit = np.empty(n, dtype=np.int32)
    result = runner.run_kernel(
        get_kernel("exp.to_hit", backend), n=n, seed=12, params=(bonus, np.array([760]), np.array([580]), False),
        per_item=(True, False, False, False), counts_size=1, outputs=(to_hit,), threads=threads,
        chunk_size=chunk_size, kernel_name="exp.to_hit", backend=backend, min_items_per_thread=1,
    )
    assert result.items_done == n and not result.partial
    return result.counts, to_hit


@pytest.mark.parametrize("backend", ["python", "numba", "cython"])
def test_results_are_identical_for_any_split(backend):
    counts, outcomes = _to_hit_run(1, None, backend)
    for threads, chunk in ((2, None), (3, None), (2, 7), (3, 1), (3, 1001), (1, 333)):
        other_counts, other_outcomes = _to_hit_run(threads, chunk, backend)
        np.testing.assert_array_equal(other_counts, counts)
        np.testing.assert_array_equal(other_outcomes, outcomes)


def test_fights_are_identical_for_any_split(many_cores):
    one = exp.simulate_fight(3001, *FIGHTERS, seed=4, threads=1, outcomes=True)
    for threads, chunk in ((2, None), (3, 7), (5, 1000), (3, None)):
        other = exp.simulate_fight(3001, *FIGHTERS, seed=4, threads=threads, chunk_size=chunk, outcomes=True)
        np.testing.assert_array_equal(other.winner, one.winner)
        np.testing.assert_array_equal(other.units_histogram, one.units_histogram)
        assert other.wins == one.wins and other.damage == one.damage


def test_the_pool_is_made_once_and_reused(many_cores):
    exp.simulate_to_hit(100_000, bonus=110, maximum_roll=760, armour_rating=580, threads=4)
    pool = runner._pool
    assert pool is not None
    before = threading.active_count()
    for seed in range(20):
        exp.simulate_to_hit(100_000, bonus=110, maximum_roll=760, armour_rating=580, threads=4, seed=seed)
    assert runner._pool is pool
    assert threading.active_count() <= before


def test_small_runs_never_leave_the_calling_thread(monkeypatch):
    def no_pool():
        raise AssertionError("split a run too small to pay for the handoff")

    monkeypatch.setattr(runner, "_shared_pool", no_pool)
    _cores(monkeypatch, 2)
    small = runner.items_for_seconds("exp.to_hit", "cython", runner.SPLIT_SECONDS)
    for n in (1, 1000, small):
        exp.simulate_to_hit(n, bonus=110, maximum_roll=760, armour_rating=580, backend="cython")
    exp.simulate_fight(64, *FIGHTERS, backend="cython")
    with pytest.raises(AssertionError, match="split a run"):  # a large run does use the pool
        exp.simulate_to_hit(4 * small, bonus=110, maximum_roll=760, armour_rating=580, backend="cython")


def test_default_threads_never_exceed_the_cores(monkeypatch):
    _cores(monkeypatch, 3)
    assert exp.simulate_to_hit(10, bonus=1, maximum_roll=760, armour_rating=5).threads == 3
    assert exp.simulate_to_hit(10, bonus=1, maximum_roll=760, armour_rating=5, threads=1000).threads == 3
    assert exp.simulate_to_hit(10, bonus=1, maximum_roll=760, armour_rating=5, threads=2).threads == 2


def _chunks(call) -> list[int]:
    """The chunk sizes of a run, from its progress reports."""
    done = []
    call(progress=lambda d, n: done.append(d))
    return [b - a for a, b in zip([0, *done], done, strict=False)]


def test_chunks_are_sized_by_the_dice_an_attack_rolls():
    # The unit: 5 bursts of up to 3 rounds of 1000d1000000 (~60 us a unit, not 1.5 ns).
    heavy = _chunks(lambda progress: exp.simulate_attack(
        3000, bonus=110, maximum_roll=760, armour_rating=580, damage="1000d1000000", weapon_type="automatic",
        threads=1, progress=progress))
    bound = runner.items_for_seconds("exp.attack", "cython", runner.CHUNK_SECONDS, 5 * (1 + 3 * 3 * 1000))
    assert 100 < bound < 2000
    assert max(heavy) == bound and sum(heavy) == 3000
    light = runner.default_chunk("exp.attack", "cython", exp.attack_work(Weapon("w", "A", "d8"), 1).most)
    assert light > 1000 * bound


def test_fight_chunks_follow_the_rounds_played_and_are_reproducible():
    def run(progress):
        return exp.simulate_fight(300_000, *FIGHTERS, threads=1, progress=progress)

    chunks = _chunks(run)
    assert chunks == _chunks(run)  # from the counts, never from a clock
    # The first chunk assumes every fight runs to the unit limit; the measured units then let
    # chunks grow (at most CHUNK_GROWTH times a chunk) to about CHUNK_SECONDS of real work.
    assert len(chunks) > 3 and 10 * chunks[0] < chunks[-2]
    assert all(b <= runner.CHUNK_GROWTH * a for a, b in itertools.pairwise(chunks[:-1]))


def test_stalemates_keep_small_chunks():
    still = [exp.Combatant("a", 30, 99_999, Weapon("w", "A", "d8"), 1, 10)]
    chunks = _chunks(lambda progress: exp.simulate_fight(400, still, still, unit_limit=10_000, threads=1,
                                                         progress=progress))
    per_fight = 4 * 10_000  # two combatants' to-hit roll and d8 (3) a unit, to the limit
    assert max(chunks) <= runner.items_for_seconds("exp.fight", "cython", runner.CHUNK_SECONDS, per_fight)


def test_count_buffers_stay_bounded_whatever_the_threads(many_cores):
    assert runner.max_threads(1_000_020) * 8 * 1_000_020 <= runner.COUNTS_BUFFER_BYTES
    tracemalloc.start()
    try:
        result = exp.simulate_fight(3000, *FIGHTERS, unit_limit=1_000_000, threads=100, seed=3)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        fights = tss.simulate_fights(200, side_a=[_tss_fighter()], side_b=[_tss_fighter()], max_rounds=100_000,
                                     threads=1000, seed=3)
        _, tss_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.threads == runner.max_threads(1_000_000 + exp.FIGHT_COUNTS) < 100
    assert peak < 200 << 20 and tss_peak < 200 << 20
    assert fights.threads <= runner.max_threads(100_001 + 8) < 1000
    assert result.fights == 3000 and fights.fights == 200


def _tss_fighter() -> tss.Combatant:
    return tss.Combatant(skill="12/6/3", action_check="13/6/3", weapon="d4w/d4+2w/d4-1m")


def _entry_points():
    fighters = [d100.Combatant(side=0, fighting=60, weapon=d100.Weapon(30, 2)),
                d100.Combatant(side=1, fighting=55, weapon=d100.Weapon(40, 2))]
    return {
        "exp.simulate_to_hit": lambda **k: exp.simulate_to_hit(bonus=1, maximum_roll=760, armour_rating=5, **k),
        "exp.simulate_attack": lambda **k: exp.simulate_attack(bonus=1, maximum_roll=760, armour_rating=5,
                                                               damage="d8", **k),
        "exp.simulate_fight": lambda **k: exp.simulate_fight(side0=FIGHTERS[0], side1=FIGHTERS[1], **k),
        "d100.simulate_attacks": lambda **k: d100.simulate_attacks(pool=60, lethality=30, **k),
        "d100.simulate_fights": lambda **k: d100.simulate_fights(combatants=fighters, **k),
        "tss.simulate_attacks": lambda **k: tss.simulate_attacks(skill="12/6/3", damage="d4w/d4+2w/d4-1m", **k),
        "tss.simulate_fights": lambda **k: tss.simulate_fights(side_a=[_tss_fighter()], side_b=[_tss_fighter()], **k),
    }


@pytest.mark.parametrize("entry", list(_entry_points()))
def test_outcomes_past_the_memory_cap_are_refused_before_any_allocation(entry):
    call = _entry_points()[entry]
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"^n must be at most \d+ with outcomes=True \(4 GiB") as error:
            call(n=10**12, outcomes=True)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "\n" not in str(error.value)
    assert peak < 1 << 20
    # Cheap scalar checks come first: a bad seed is named even with the huge n.
    with pytest.raises(ValueError, match="^seed must be in 0..18446744073709551615"):
        call(n=10**12, outcomes=True, seed=-1)
    limit = int(str(error.value).split()[5])
    assert runner.OUTPUT_BYTES // 16 <= limit <= runner.OUTPUT_BYTES  # 1 to 16 bytes an item


def test_items_for_seconds_is_what_dask_tasks_are_sized_by():
    assert runner.items_for_seconds("exp.to_hit", "cython", 1.0) == 20 * runner.default_chunk("exp.to_hit", "cython")
    assert runner.items_for_seconds("d100.fight", "python", 1.0, 10.0) < runner.items_for_seconds(
        "d100.fight", "numba", 1.0, 10.0)
    assert runner.items_for_seconds("no.such", "cython", 1.0) >= 1  # unknown kernels get a default cost


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_a_forked_child_splits_on_a_pool_of_its_own(many_cores):
    import multiprocessing

    exp.simulate_to_hit(100_000, bonus=110, maximum_roll=760, armour_rating=580, threads=4)
    assert runner._pool is not None
    context = multiprocessing.get_context("fork")
    with context.Pool(1) as pool:  # the parent's pool threads do not exist in the child
        hits = pool.apply_async(_split_hits).get(timeout=60)
    assert hits == _split_hits()


def _split_hits() -> int:
    runner.CPU_COUNT = 4
    runner.SPLIT_SECONDS = 1e-12
    return exp.simulate_to_hit(100_000, bonus=110, maximum_roll=760, armour_rating=580, threads=4).hits


RESULT_CLASSES = (exp.ToHitResult, exp.AttackResult, exp.FightResult, d100.AttackResult, d100.FightResult,
                  tss.AttackResult, tss.FightResult)


@pytest.mark.parametrize("cls", RESULT_CLASSES, ids=lambda cls: f"{cls.__module__}.{cls.__name__}")
def test_make_result_equals_the_constructor(cls):
    import dataclasses

    required = {f.name: k for k, f in enumerate(dataclasses.fields(cls))
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    every = {f.name: (k, "value") for k, f in enumerate(dataclasses.fields(cls))}
    for values in (required, every):
        made, built = runner.make_result(cls, values), cls(**values)
        assert made == built and repr(made) == repr(built)
        assert dataclasses.asdict(made) == dataclasses.asdict(built)
        with pytest.raises(dataclasses.FrozenInstanceError):
            made.seed = 1
    # a default made by a factory is the made result's own, never shared with another's
    factories = [f.name for f in dataclasses.fields(cls) if f.default_factory is not dataclasses.MISSING]
    first, second = runner.make_result(cls, required), runner.make_result(cls, required)
    for name in factories:
        assert getattr(first, name) == getattr(cls(**required), name)
        assert getattr(first, name) is not getattr(second, name)


@pytest.mark.parametrize("first", [0, 1])
def test_nonzero_counts_is_the_histograms_filled_entries_in_order(first):
    histogram = np.zeros(1_000_001, dtype=np.int64)
    histogram[[0, 7, 999_999]] = [3, 1, 2]
    found = runner.nonzero_counts(histogram, first)
    assert found == {first: 3, first + 7: 1, first + 999_999: 2}
    assert list(found) == sorted(found) and all(type(k) is int and type(v) is int for k, v in found.items())
    assert runner.nonzero_counts(np.zeros(5, dtype=np.int64)) == {}
