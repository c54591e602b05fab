"""TSS kernels: reference, Numba and Cython identical outcome by outcome; fast paths equal exact paths."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from combatsim import rng
from combatsim.registry import get_kernel
from combatsim.tss.api import Combatant, attack_config, fight_table, simulate_attacks, simulate_fights
from combatsim.tss.engine import ATTACK_COUNTS, FIGHT_COUNTS, TIER_BITS, die_pass, joint_pass
from combatsim.tss.model import Armour, Weapon

BACKENDS = ("python", "numba", "cython")
#: Seed 0, item 447859920: in the per-die layout word 0 (the control d20) is rejected and retries.
REJECTED_ITEM = 447_859_920
#: Seed 0, item 16144695: its dense word is rejected for a joint die of 1920 faces (Alex v. thug).
REJECTED_JOINT_ITEM = 16_144_695

sides = st.sampled_from([1, 2, 3, 4, 6, 8, 10, 12, 20, 100, 1000])


@st.composite
def dice_text(draw, max_count: int = 3, min_count: int = 0) -> str:
    count = draw(st.integers(min_count, max_count))
    modifier = draw(st.integers(-3, 3))
    if count == 0:
        return str(modifier)
    return f"{count}d{draw(sides)}{modifier:+d}" if modifier else f"{count}d{draw(sides)}"


@st.composite
def tracks(draw) -> str:
    return "/".join(draw(dice_text()) + draw(st.sampled_from("swm")) for _ in range(3))


@st.composite
def scores(draw, high: int = 30) -> str:
    values = sorted((draw(st.integers(0, high)) for _ in range(3)), reverse=True)
    return "/".join(map(str, values))


qualities = st.sampled_from(["marginal", "ordinary", "good", "amazing"])


@st.composite
def attack_configs(draw) -> np.ndarray:
    return attack_config(
        skill=draw(scores()),
        steps=draw(st.integers(-7, 10)),
        damage=draw(tracks()),
        weapon_quality=draw(qualities),
        armour=draw(st.none() | dice_text(2, min_count=1)),  # armour rolls a die
        armour_quality=draw(qualities),
        one_step_shift=draw(st.booleans()),
        joint_layout=draw(st.booleans()),
    )


def run_attack(backend: str, seed: int, start: int, count: int, config: np.ndarray, outputs: bool = True):
    counts = np.zeros(ATTACK_COUNTS, dtype=np.int64)
    length = count if outputs else 0
    tier = np.full(length, -1, dtype=np.int8)
    damage = [np.full(length, -1, dtype=np.int32) for _ in range(3)]
    get_kernel("tss.attack", backend)(seed, start, count, config, counts, tier, *damage)
    return counts, tier, damage


@given(config=attack_configs(), seed=st.integers(0, 2**64 - 1), start=st.integers(0, 2**40),
       count=st.integers(0, 120))
def test_attack_backends_agree_outcome_by_outcome(config, seed, start, count):
    expected = run_attack("python", seed, start, count, config)
    for backend in ("numba", "cython"):
        counts, tier, damage = run_attack(backend, seed, start, count, config)
        np.testing.assert_array_equal(counts, expected[0])
        np.testing.assert_array_equal(tier, expected[1])
        for got, want in zip(damage, expected[2], strict=True):
            np.testing.assert_array_equal(got, want)
    # Counts agree with the per-attack outputs.
    tiers = np.bincount(expected[1], minlength=5) if count else np.zeros(5, dtype=np.int64)
    np.testing.assert_array_equal(expected[0][:5], tiers)
    np.testing.assert_array_equal(expected[0][5:], [int(d.sum()) for d in expected[2]])


@pytest.mark.parametrize("compiled", ["numba", "cython"])
@given(config=attack_configs(), seed=st.integers(0, 2**64 - 1), start=st.integers(0, 2**40))
def test_attack_fast_path_equals_exact_path(compiled, config, seed, start):
    exact = run_attack(compiled, seed, start, 3000, config)[0]
    fast = run_attack(compiled, seed, start, 3000, config, outputs=False)[0]
    np.testing.assert_array_equal(fast, exact)


@pytest.mark.parametrize(("armour", "joint"), [(None, False), ("d6", False), ("d6", True)])
def test_attack_fast_path_redoes_a_tile_with_a_rejected_word(armour, joint):
    config = attack_config(skill="16/8/4", steps=-1, damage="d4w/d4+2w/d4-1m", weapon_quality="good",
                           armour=armour, joint_layout=joint)
    assert config[23] == joint
    item = REJECTED_JOINT_ITEM if joint else REJECTED_ITEM
    start, count = item - 701, 1500
    expected = run_attack("python", 0, start, count, config)
    for backend in ("numba", "cython"):
        np.testing.assert_array_equal(run_attack(backend, 0, start, count, config, outputs=False)[0], expected[0])
        np.testing.assert_array_equal(run_attack(backend, 0, start, count, config)[1], expected[1])


@pytest.mark.parametrize("joint", [True, False])
def test_engine_fast_passes_count_as_the_reference_in_python(joint):
    """The engine's fast passes, run as they are (the compiled kernels' are their builds), count the
    reference's attacks from those attacks' words: the joint die words, or each attack's first item
    block, word k of attack i at k * count + i."""
    config = attack_config(skill="16/8/4", steps=-1, damage="d4w/d4+2w/d4-1m", weapon_quality="good", armour="d6",
                           joint_layout=joint)
    seed, start, count = 99, 1_000_003, 300
    if joint:
        words = np.array([rng.dense_word(seed, start + i) for i in range(count)], dtype=np.uint32)
    else:
        blocks = [rng.block(seed, start + i, 0, 0) for i in range(count)]
        words = np.array([block[k] for k in range(4) for block in blocks], dtype=np.uint32)
    counts = np.zeros(ATTACK_COUNTS, dtype=np.int64)
    assert (joint_pass if joint else die_pass)(config, words, count, counts) == 0
    np.testing.assert_array_equal(counts, run_attack("python", seed, start, count, config, outputs=False)[0])


def test_a_tile_fits_the_passes_packed_tier_counts():
    """A pass call counts each tier in TIER_BITS bits: the kernels' tiles (at most TILE attacks) fit."""
    from combatsim.kernels.tss import _nb

    assert _nb.TILE < 2**TIER_BITS


def test_attack_results_do_not_depend_on_threads_or_chunks(compiled_backend):
    args = dict(skill="16/8/4", steps=-1, damage="d4w/d4+2w/d4-1m", weapon_quality="good", armour="d6", seed=77,
                backend=compiled_backend)
    one = simulate_attacks(100_003, threads=1, **args)
    many = simulate_attacks(100_003, threads=2, chunk_size=9_999, **args)
    np.testing.assert_array_equal(one.counts, many.counts)
    outcomes = simulate_attacks(100_003, threads=2, chunk_size=4_321, outcomes=True, **args)
    np.testing.assert_array_equal(one.counts, outcomes.counts)


def test_attack_snapshot(backend):
    """Pinned outcomes: the three backends cannot drift wrong together."""
    result = simulate_attacks(3000, skill="16/8/4", steps=-1, damage="d4w/d4+2w/d4-1m", weapon_quality="good",
                              armour="d6", seed=2026, backend=backend)
    assert result.counts.tolist() == ATTACK_SNAPSHOT


ATTACK_SNAPSHOT = [953, 614, 1140, 127, 166, 2803, 2803, 1385]


# --- fights --------------------------------------------------------------------------------------
@st.composite
def combatants(draw) -> Combatant:
    classes = ["En", "LI", "HI"]
    armour = None
    if draw(st.booleans()):
        dice = {name: draw(dice_text(2, min_count=1)) for name in classes if draw(st.booleans())}
        armour = Armour.make(dice, draw(qualities))
    return Combatant(
        skill=draw(scores()),
        action_check=draw(scores(20)),
        weapon=Weapon.make(draw(tracks()), draw(st.sampled_from(classes)), draw(qualities)),
        durability=(draw(st.integers(1, 12)), draw(st.integers(1, 12)), draw(st.integers(1, 6))),
        actions_per_round=draw(st.integers(1, 4)),
        armour=armour,
        attack_steps=draw(st.integers(-6, 9)),
        defence_steps=draw(st.integers(-3, 6)),
        resolve=draw(st.none() | scores(20)),
        **draw(tactics(classes)),
    )


@st.composite
def tactics(draw, classes) -> dict:
    """A member's second weapon, feats and scripted choices: often none (the plain fight)."""
    if not draw(st.booleans()):
        return {}
    second = draw(st.none() | st.builds(Weapon.make, tracks(), st.sampled_from(classes), qualities))
    return {"second_weapon": second, "ambidexterity": draw(st.booleans()), "broad_skill": draw(st.booleans()),
            "aim_chance": draw(st.sampled_from((0, 1, 30, 99, 100)) | st.integers(0, 100)),
            "two_weapons": second is not None and draw(st.booleans())}


def run_fight(backend, seed, start, count, table, n_characters, n_classes, max_rounds, one_step):
    # The fixed counts, the rounds histogram, then each character's fights ended standing.
    counts = np.zeros(FIGHT_COUNTS + max_rounds + 1 + n_characters, dtype=np.int64)
    winner = np.full(count, -2, dtype=np.int8)
    rounds = np.full(count, -2, dtype=np.int32)
    get_kernel("tss.fight", backend)(seed, start, count, table, n_characters, n_classes, max_rounds, one_step,
                                     counts, winner, rounds)
    # The rounds histogram after the fixed counts is exactly the per-fight rounds.
    histogram = counts[FIGHT_COUNTS:FIGHT_COUNTS + max_rounds + 1]
    np.testing.assert_array_equal(histogram, np.bincount(rounds, minlength=max_rounds + 1))
    return counts, winner, rounds


@given(side_a=st.lists(combatants(), min_size=1, max_size=3), side_b=st.lists(combatants(), min_size=1, max_size=3),
       seed=st.integers(0, 2**64 - 1), start=st.integers(0, 2**40), count=st.integers(0, 12),
       max_rounds=st.integers(1, 30), one_step=st.booleans())
def test_fight_backends_agree_fight_by_fight(side_a, side_b, seed, start, count, max_rounds, one_step):
    table, n_characters, n_classes = fight_table(side_a, side_b)
    expected = run_fight("python", seed, start, count, table, n_characters, n_classes, max_rounds, one_step)
    for backend in ("numba", "cython"):
        got = run_fight(backend, seed, start, count, table, n_characters, n_classes, max_rounds, one_step)
        for a, b in zip(got, expected, strict=True):
            np.testing.assert_array_equal(a, b)
    counts, winner, rounds = expected
    assert counts[:3].tolist() == [int((winner == 0).sum()), int((winner == 1).sum()), int((winner == -1).sum())]
    assert counts[3] == rounds.sum()
    assert ((rounds >= 1) & (rounds <= max_rounds)).all()
    assert (rounds[winner == -1] == max_rounds).all()


def test_fight_results_do_not_depend_on_threads_or_chunks(compiled_backend):
    from combatsim.tss.bench import ALEX, THUG

    args = dict(side_a=[ALEX], side_b=[THUG, THUG], seed=3, backend=compiled_backend)
    one = simulate_fights(5001, threads=1, **args)
    many = simulate_fights(5001, threads=2, chunk_size=999, outcomes=True, **args)
    np.testing.assert_array_equal(one.counts, many.counts)


def test_fight_snapshot(backend):
    from combatsim.tss.bench import ALEX, THUG

    result = simulate_fights(200, side_a=[ALEX], side_b=[THUG, THUG], seed=2026, backend=backend)
    assert result.counts.tolist() == FIGHT_SNAPSHOT


FIGHT_SNAPSHOT = [72, 128, 0, 1923, 5877, 3339, 2761, 871]


def test_fight_validation_names_the_field():
    good = Combatant(skill="12", action_check="10", weapon="d4w/d6w/d8m")
    with pytest.raises(ValueError, match="side_a"):
        simulate_fights(1, side_a=[], side_b=[good], backend="python")
    with pytest.raises(TypeError, match=r"side_b\[0\]"):
        simulate_fights(1, side_a=[good], side_b=["thug"], backend="python")
    bad = Combatant(skill="12", action_check="10", weapon="d4w/d6w/d8m", actions_per_round=5)
    with pytest.raises(ValueError, match=r"side_b\[0\].actions_per_round"):
        simulate_fights(1, side_a=[good], side_b=[bad], backend="python")
    bad = Combatant(skill="12", action_check="10", weapon="d4w/d6w/d8m", durability=(0, 5, 5))
    with pytest.raises(ValueError, match="durability stun"):
        simulate_fights(1, side_a=[bad], side_b=[good], backend="python")
    bad = Combatant(skill="4/8/16", action_check="10", weapon="d4w/d6w/d8m")
    with pytest.raises(ValueError, match=r"side_a\[0\].skill"):
        simulate_fights(1, side_a=[bad], side_b=[good], backend="python")
    with pytest.raises(ValueError, match="max_rounds"):
        simulate_fights(1, side_a=[good], side_b=[good], max_rounds=0, backend="python")
    with pytest.raises(TypeError, match="outcomes"):
        simulate_fights(1, side_a=[good], side_b=[good], outcomes=1, backend="python")


def test_attack_validation_names_the_field():
    with pytest.raises(ValueError, match="skill"):
        simulate_attacks(1, skill="4/8/16", damage="d4w/d4w/d4w")
    with pytest.raises(ValueError, match="damage"):
        simulate_attacks(1, skill="16", damage="d4w")
    with pytest.raises(ValueError, match="weapon_quality"):
        simulate_attacks(1, skill="16", damage="d4w/d4w/d4w", weapon_quality="fine")
    with pytest.raises(TypeError, match="steps"):
        simulate_attacks(1, skill="16", damage="d4w/d4w/d4w", steps=1.5)
    with pytest.raises(ValueError, match="n must"):
        simulate_attacks(-1, skill="16", damage="d4w/d4w/d4w")
    with pytest.raises(TypeError, match="one_step_shift"):
        simulate_attacks(1, skill="16", damage="d4w/d4w/d4w", one_step_shift="yes")


def test_joint_layout_is_chosen_by_the_number_of_faces():
    alex = attack_config(skill="16/8/4", steps=-1, damage="d4w/d4+2w/d4-1m", armour="d6")
    assert alex[23:26].tolist() == [1, 20 * 4 * 4 * 6, 4]
    mixed = attack_config(skill="16/8/4", steps=6, damage="d4w/d6+2w/2d8m", armour="d6")
    assert mixed[23] == 0  # 20 * 20**2 * 24**2 * 6 faces > 2**16: the per-die layout
    assert attack_config(skill="16", damage="d4w/d4w/d4w", joint_layout=False)[23] == 0


@pytest.mark.parametrize(
    ("joint", "tiers", "damage"),
    [(True, [0, 0, 2, 3], [(0, 0, 0), (0, 0, 0), (2, 2, 0), (0, 0, 0)]),
     (False, [0, 4, 0, 2], [(1, 1, 0), (0, 0, 0), (0, 0, 0), (1, 1, 0)])],
)
def test_docs_test_vectors(backend, joint, tiers, damage):
    """The test vectors of docs/tss.md (seed 0, Alex's pistol against the thug's Ceremetal)."""
    config = attack_config(skill="16/8/4", steps=-1, damage="d4w/d4+2w/d4-1m", weapon_quality="good", armour="d6",
                           joint_layout=joint)
    _, tier, (stun, wound, mortal) = run_attack(backend, 0, 0, 4, config)
    assert tier.tolist() == tiers
    assert list(zip(stun.tolist(), wound.tolist(), mortal.tolist(), strict=True)) == damage


@pytest.mark.parametrize(("action_check", "actions", "per_round"), [("20/20/20", 4, 4), ("0/0/0", 4, 1),
                                                                    ("20/20/20", 2, 2), ("20/0/0", 3, 2)])
def test_fight_actions_per_round_in_distinct_phases(backend, action_check, actions, per_round):
    """Harmless weapons and a round limit: every round each side attacks once per phase it plays,
    from its action check's phase on (a Marginal roll leaves one action), up to its actions."""
    harmless = Weapon.make("0s/0s/0s")
    fast = Combatant(skill="10", action_check=action_check, weapon=harmless, actions_per_round=actions,
                     durability=(100, 100, 100))
    slow = Combatant(skill="10", action_check="0/0/0", weapon=harmless, durability=(100, 100, 100))
    rounds = 5
    result = simulate_fights(20, side_a=[fast], side_b=[slow], max_rounds=rounds, seed=8, backend=backend)
    expected_draws, expected_rounds = 20, 20 * rounds
    assert result.counts[2:4].tolist() == [expected_draws, expected_rounds]
    # 20/0/0 always rolls the Ordinary phase: Ordinary and Marginal are left, 2 of its 3 actions.
    assert result.counts[4] == 20 * rounds * (per_round + 1)
    assert not result.counts[5:].any()
