"""Every clone of the hand-written C passes (kernels/clones.h, docs/kernels.md "What runs on which
CPU"): each clone this machine runs, forced in turn, against the reference on every pass, with
tails (counts that are not whole vector steps) and rejected words. A clone this CPU or build
cannot run is skipped, saying so."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from combatsim import rng
from combatsim.d100 import api as d100_api
from combatsim.d100 import model as d100_model
from combatsim.exp import engine as exp_engine
from combatsim.kernels import clones, rng_cy
from combatsim.kernels.d100 import _cy as d100_cy
from combatsim.kernels.exp import _cy as exp_cy
from combatsim.kernels.tss import _cy as tss_cy
from combatsim.registry import get_kernel

from .test_d100_fight_lanes import assert_same_fights, random_fighters
from .test_d100_kernels import _lane_fighters
from .test_d100_kernels import run_attack as run_d100_attack
from .test_exp_attack import run_attack as run_exp_attack

#: Blocks counts around the vector step (12 blocks) and the tiles, and ranges that straddle a high
#: index word (a step then goes block by block).
BLOCK_RANGES = [(0, 0), (5, 1), (7, 11), (0, 12), (3, 13), (11, 25), (100, 251), (2**32 - 7, 30), (2**40 + 1, 37)]


@pytest.fixture(params=clones.CLONES)
def clone(request):
    if request.param not in clones.available():
        pytest.skip(f"clone {request.param} does not run here: this CPU and build run "
                    f"{', '.join(clones.available())}")
    with clones.forced(request.param):
        yield request.param


def dense_words(seed, first_block, blocks, domain=rng.DOMAIN_DENSE):
    return [w for g in range(first_block, first_block + blocks) for w in rng.block(seed, g, 0, domain)]


def test_forcing_reaches_every_module_and_is_undone(clone):
    level = clones.CLONES.index(clone)
    for name in clones.MODULES:
        assert sys.modules[name]._clone_level() == level, name
    assert clones.current() == clone


def test_forcing_refuses_unknown_and_unavailable_clones():
    with pytest.raises(ValueError, match="clone must be one of portable, avx2, x86-64-v4; got 'sse9'"), \
            clones.forced("sse9"):
        pass
    assert clones.available()[0] == "portable"
    # outside forced(), only COMBATSIM_CLONE caps the level
    named = os.environ.get(clones.ENVIRONMENT)
    widest = clones.available()[-1]
    assert clones.current() == (named if named in clones.available() else widest)


def test_the_environment_variable_caps_a_fresh_process():
    """COMBATSIM_CLONE caps every module of a process, and a name that is no clone is warned about."""
    code = ("import warnings; warnings.simplefilter('error');"
            "from combatsim.kernels import clones; print(clones.current())")
    env = dict(os.environ, COMBATSIM_CLONE="portable")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "portable"
    env["COMBATSIM_CLONE"] = "avx9"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode != 0 and "COMBATSIM_CLONE must be one of portable, avx2, x86-64-v4; got 'avx9'" in out.stderr


@pytest.mark.parametrize("sides", [1000, 6, 3 * 2**29])  # 3 * 2**29: a quarter of the words rejected
def test_dense_count_pass(clone, sides):
    for seed, (first_block, blocks) in enumerate(BLOCK_RANGES):
        words = dense_words(seed, first_block, blocks)
        for first_value in (0, sides // 3, sides):
            count, rejected = rng_cy.dense_count_pass(seed, first_block, first_block + blocks, sides, first_value)
            assert count == sum(rng.scale(w, sides)[0] >= first_value for w in words)
            assert bool(rejected) == any(rng.scale(w, sides)[1] < rng.rejection_threshold(sides) for w in words)


def test_philox_words_drawn_in_vectors_and_ahead(clone):
    for seed, (first_block, blocks) in enumerate(BLOCK_RANGES):
        for domain in (rng.DOMAIN_ITEM, rng.DOMAIN_DENSE):
            assert rng_cy.dense_words(seed, domain, first_block, blocks).tolist() == dense_words(
                seed, first_block, blocks, domain)
    streams = [(seed * 977, 2**63 + seed, seed * 3) for seed in range(13)]  # not a whole vector of 8
    columns = zip(*streams, strict=True)
    keyed = rng_cy.keyed_blocks(*(np.array(c, dtype=t) for c, t in zip(columns, (np.uint64, np.uint64, np.uint32),
                                                                       strict=True)), rng.DOMAIN_ITEM)
    assert [tuple(map(int, row)) for row in keyed] == [rng.block(*s, rng.DOMAIN_ITEM) for s in streams]
    for sides in (6, 100, 3 * 2**29):  # more dice than one draw ahead holds, and retried ones
        got = np.zeros(150, dtype=np.int64)
        rng_cy.ahead_dice(np.uint64(7), np.uint64(2**40 + 3), sides, got)
        stream = rng.ItemStream(7, 2**40 + 3)
        assert got.tolist() == [stream.die(sides) for _ in range(150)]


@pytest.mark.parametrize("faces", [20, 2400, 65521])
def test_tss_joint_histogram_pass(clone, faces):
    for seed, (first_block, blocks) in enumerate(BLOCK_RANGES):
        histogram, low = tss_cy.joint_histogram_pass(seed, first_block, blocks, faces)
        products = [w * faces for w in dense_words(seed, first_block, blocks)]
        expected = np.bincount([p >> 32 for p in products], minlength=faces) if products else np.zeros(faces)
        np.testing.assert_array_equal(histogram, expected)
        assert low == min((p & 0xFFFFFFFF for p in products), default=0xFFFFFFFF)


@pytest.mark.parametrize("hand_written", [True, False], ids=["hand-written-pass", "engine-pass"])
@pytest.mark.parametrize("dice", [(0, 1), (1, 6), (2, 10), (3, 12), (1, 1_500_000), (2, 1_400)])
def test_exp_joint_pass(clone, hand_written, dice):
    """exp.attack's counting pass (attack_count.h where the clone has it, else the engine's
    joint_word_tally as Cython builds it) against the per-unit path; joint dice near 2**31 faces
    reject up to a third of the words, so every tile fixes some."""
    exp_cy._use_hand_written_joint_pass(hand_written)
    try:
        for seed, (start, count) in enumerate([(0, 0), (1, 3), (3, 50), (8, 4 * 12), (2, 4 * 251 + 3),
                                               (4 * (2**32 - 7), 4 * 30), (5, 4 * 240 * 2 + 17)]):
            weapon = dict(bonus=300 + seed, maximum_roll=900, armour_rating=400, adjustment=-5,
                          dice=(*dice, -1 - seed), damage_adjustment=seed % 3 - 1)
            fast = run_exp_attack("cython", seed, start, count, outputs=False, **weapon)[0]
            exact = run_exp_attack("cython", seed, start, count, **weapon)[0]
            np.testing.assert_array_equal(fast, exact)
        np.testing.assert_array_equal(fast, run_exp_attack("python", seed, start, count, **weapon)[0])
    finally:
        exp_cy._use_hand_written_joint_pass(True)


def test_exp_joint_word_tally_is_fire_joint():
    """The counting passes' tally of a joint word is the engine's fire_joint of that word."""
    generator = np.random.default_rng(5)
    for dice_count, sides in ((0, 1), (1, 6), (2, 10), (3, 12), (1, 1_500_000)):
        for word in (*generator.integers(0, 2**32, size=200).tolist(), 0, 2**32 - 1):
            bar = exp_engine.kilodie_bar(250, 900, 700, 0, False, False) << 32
            padded = [sides] * dice_count + [1] * (3 - dice_count)
            hit, dealt, low = exp_engine.joint_word_tally(word, bar, *padded, dice_count - 2 + 1)
            assert (hit, hit * dealt) == exp_engine.fire_joint(word, 250, 900, 700, 0, dice_count, sides, -2, 1,
                                                               False, False)[:2]
            assert low == word * exp_engine.joint_faces(1, 0, dice_count, sides) % 2**32


def test_exp_to_hit_pass(clone):
    kernel = get_kernel("exp.to_hit", "cython")
    for seed, (start, count) in enumerate([(0, 1), (1, 47), (6, 4 * 4092 + 4 * 372 + 5), (4 * (2**32 - 7), 200)]):
        params = (np.array([seed * 50]), np.array([1500]), np.array([600]), False)
        fast = np.zeros(1, dtype=np.int64)
        kernel(np.uint64(seed), start, count, *params, fast, np.zeros(0, dtype=np.int32))
        rolls = np.zeros(count, dtype=np.int32)
        exact = np.zeros(1, dtype=np.int64)
        kernel(np.uint64(seed), start, count, *params, exact, rolls)
        assert fast[0] == exact[0] == np.count_nonzero(rolls > 600)


def test_d100_word_tally_pass(clone):
    """d100.attack's counting pass, single and dual weapons, with a rejected word (seed 12345, item 205)."""
    for seed, start, count, weapons in ((12345, 0, 400, 2), (12345, 1, 401, 1), (3, 2**33 + 1, 4099, 2),
                                        (9, 5, 1, 1)):
        params = tuple(np.array([v], dtype=np.int64) for v in (70, 30, 60, 0, 30, 60, 0, weapons))
        expected, _ = run_d100_attack("python", seed, start, count, params)
        fast, _ = run_d100_attack("cython", seed, start, count, params, keep=False)
        np.testing.assert_array_equal(fast, expected)


def test_d100_fight_lanes(clone):
    """The lanes run in the AVX2 and x86-64-v4 clones (int16 lanes only in the latter), the engine's
    fight in the portable one; every one plays the reference's fights."""
    assert bool(d100_cy._lockstep_runs()) == (clone != "portable")
    taper = d100_model.TAPERS[0]
    tables = [d100_api.fight_table(_lane_fighters(), taper),
              d100_api.fight_table(random_fighters(np.random.default_rng(11), 12), taper)]
    for narrow in (True, False):
        d100_cy._lockstep_narrow(narrow)
        try:
            for number, table in enumerate(tables):
                assert_same_fights(2**63 + number, 7, 3 * 128 + 5, table, 2, 8, number - 1)
        finally:
            d100_cy._lockstep_narrow(True)
