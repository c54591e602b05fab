"""EXP fights ("exp.fight"): differential, lanes and streaming, exact statistics, edges."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from combatsim.engine import WINNER_DRAW as DRAW
from combatsim.engine import WINNER_UNFINISHED as UNFINISHED
from combatsim.exp.api import Combatant, combatant_table, simulate_fight
from combatsim.exp.engine import FIGHT_COUNTS, KILODIE
from combatsim.exp.model import Persona, Weapon
from combatsim.registry import get_kernel

WEAPON_TYPES = ("A", "B", "C", "D", "E", "F", "automatic")


def run_fight(backend, seed, start, count, table, unit_limit, hit_on_equal=False, critical=False):
    kernel = get_kernel("exp.fight", backend)
    counts = np.zeros(FIGHT_COUNTS + unit_limit + len(table), dtype=np.int64)  # then who stood, per combatant
    winner = np.zeros(count, dtype=np.int8)
    units = np.zeros(count, dtype=np.int32)
    kernel(np.uint64(seed), start, count, table, unit_limit, hit_on_equal, critical, counts, winner, units)
    return counts, winner, units


def always_hits(name, hit_points, damage, armour_rating=0, weapon_type="A", ammunition=None):
    """A combatant whose every to-hit roll hits (kilodie + 1000 > any AR up to 1000)."""
    return Combatant(name, hit_points, armour_rating, Weapon(name, weapon_type, damage, ammunition=ammunition),
                     bonus=1000, maximum_roll=2000)


def never_hits(name, hit_points, damage="d6", armour_rating=0):
    """A combatant whose to-hit is at most 1: it never beats an AR of 1 or more."""
    return Combatant(name, hit_points, armour_rating, Weapon(name, "A", damage), bonus=0, maximum_roll=1)


# --- differential --------------------------------------------------------------------------------
combatants = st.builds(
    lambda hp, ar, bonus, mr, adj, dice, da, wtype, ammo: Combatant(
        "c", hp, ar, Weapon("w", wtype, dice, ammunition=ammo), bonus, mr, da, adj
    ),
    st.integers(1, 40),
    st.integers(0, 900),
    st.integers(-100, 400),
    st.integers(300, 1100),
    st.integers(-100, 100),
    st.sampled_from(["d4", "d6", "2d6", "d8", "3d10", "d4-2", "5", "d1000000"]),
    st.integers(-2, 6),
    st.sampled_from(WEAPON_TYPES),
    st.one_of(st.none(), st.integers(0, 20)),
)


@given(
    st.lists(combatants, min_size=1, max_size=3),
    st.lists(combatants, min_size=1, max_size=3),
    st.integers(0, 2**64 - 1),
    st.integers(0, 2**40),
    st.integers(1, 25),
    st.booleans(),
    st.booleans(),
)
def test_fight_backends_identical(side0, side1, seed, start, unit_limit, hit_on_equal, critical):
    table = combatant_table(side0, side1)
    count = 6
    expected = run_fight("python", seed, start, count, table, unit_limit, hit_on_equal, critical)
    for backend in ("numba", "cython"):
        got = run_fight(backend, seed, start, count, table, unit_limit, hit_on_equal, critical)
        for a, b in zip(expected, got, strict=True):
            np.testing.assert_array_equal(a, b)


@given(st.lists(combatants, min_size=1, max_size=4), st.lists(combatants, min_size=1, max_size=4),
       st.integers(0, 2**63))
def test_fight_lanes_restart_same_outcomes_as_one_at_a_time(side0, side1, seed):
    """Lanes interleave fights; each fight must still depend only on (seed, index, inputs)."""
    table = combatant_table(side0, side1)
    count = 37  # more fights than lanes, so lanes restart
    for backend in ("numba", "cython"):
        counts, winner, units = run_fight(backend, seed, 0, count, table, 30)
        singles = [run_fight(backend, seed, i, 1, table, 30) for i in range(count)]
        np.testing.assert_array_equal(winner, [s[1][0] for s in singles])
        np.testing.assert_array_equal(units, [s[2][0] for s in singles])
        np.testing.assert_array_equal(counts, sum(s[0] for s in singles))


def test_fight_results_independent_of_threads_and_chunks(compiled_backend):
    sides = ([always_hits("a", 30, "d8", 500), never_hits("b", 10)], [always_hits("c", 25, "2d6", 600)])
    sides[1][0] = Combatant("c", 25, 600, Weapon("c", "D", "2d6", ammunition=11), 120, 800)
    a = simulate_fight(3000, *sides, seed=11, backend=compiled_backend, threads=1, outcomes=True)
    b = simulate_fight(3000, *sides, seed=11, backend=compiled_backend, threads=2, chunk_size=101, outcomes=True)
    np.testing.assert_array_equal(a.winner, b.winner)
    np.testing.assert_array_equal(a.units, b.units)
    assert a.as_dict() | {"threads": 0} == b.as_dict() | {"threads": 0}


def test_fight_counts_are_consistent(backend):
    sides = (
        [Combatant("nomad", 30, 600, Weapon("sword", "A", "d8"), 125, 750, 6),
         Combatant("spie", 20, 620, Weapon("pistol", "E", "2d6", ammunition=10), 178, 853)],
        [Combatant("slug", 45, 560, Weapon("bite", "A", "2d6", natural=True), 100, 700, 2)],
    )
    n = 60 if backend == "python" else 5000
    result = simulate_fight(n, *sides, unit_limit=12, seed=2, backend=backend, outcomes=True)
    assert sum(result.wins) + result.draws == n
    assert result.units_histogram.sum() == n
    assert result.units_total == int(result.units.sum())
    assert result.units_total == int(np.dot(np.arange(1, 13), result.units_histogram))
    assert result.wins[0] == int(np.count_nonzero(result.winner == 0))
    # draws count the unfinished fights too; the per-fight winner tells them apart
    assert result.mutual == int(np.count_nonzero(result.winner == DRAW))
    assert result.draws - result.mutual == int(np.count_nonzero(result.winner == UNFINISHED))
    assert result.ammunition[0] <= result.to_hit_rolls[0] and result.ammunition[1] == result.to_hit_rolls[1]
    assert result.hits[0] <= result.to_hit_rolls[0]


# --- exact statistics ------------------------------------------------------------------------------
def hit_probability(bonus, maximum_roll, armour_rating):
    return Fraction(sum(min(v + bonus, maximum_roll) > armour_rating for v in range(1, KILODIE + 1)), KILODIE)


@pytest.mark.parametrize("unit_limit", [3, 50])
def test_duel_one_hit_kills_exact_probabilities(backend, unit_limit):
    """1 against 1, one hit kills: per unit side 0 wins with p0(1-p1), side 1 with p1(1-p0), both die
    with p0·p1, the fight goes on with q = (1-p0)(1-p1); the unit limit cuts it off as a draw."""
    a = Combatant("a", 5, 650, Weapon("a", "A", "5"), 150, 800)
    b = Combatant("b", 5, 700, Weapon("b", "B", "d4+4"), 100, 760)
    p0, p1 = hit_probability(150, 800, 700), hit_probability(100, 760, 650)
    q = (1 - p0) * (1 - p1)
    go_on = sum(q**u for u in range(unit_limit))
    exact = {
        "win0": p0 * (1 - p1) * go_on,
        "win1": p1 * (1 - p0) * go_on,
        "mutual": p0 * p1 * go_on,
        "units": sum((u + 1) * q**u * (1 - q) for u in range(unit_limit - 1)) + unit_limit * q ** (unit_limit - 1),
    }
    n = 2000 if backend == "python" else 200_000
    result = simulate_fight(n, [a], [b], unit_limit=unit_limit, seed=31, backend=backend)

    def close(observed, p):
        p = float(p)
        assert abs(observed - n * p) <= 5 * (n * p * (1 - p)) ** 0.5 + 1e-9

    close(result.wins[0], exact["win0"])
    close(result.wins[1], exact["win1"])
    close(result.mutual, exact["mutual"])
    close(result.draws, 1 - exact["win0"] - exact["win1"])
    for u in range(1, unit_limit + 1):
        p_u = q ** (u - 1) * (1 - q) if u < unit_limit else q ** (unit_limit - 1)
        close(int(result.units_histogram[u - 1]), p_u)
    mean = float(exact["units"])
    assert result.units_mean == pytest.approx(mean, rel=0.1)


def test_target_policy_uniform_among_standing_enemies(backend):
    """One attacker kills a random one of two defenders in unit 1: killing X (who always hits for 1)
    first wins in unit 2; killing Y (who never hits) first means X's second hit lands as the attacker
    kills X: both sides out, a draw. Each has probability 1/2."""
    attacker = always_hits("attacker", 2, "10", armour_rating=1)
    x = always_hits("x", 10, "1")
    y = never_hits("y", 10)
    n = 2000 if backend == "python" else 100_000
    result = simulate_fight(n, [attacker], [x, y], seed=5, backend=backend)
    assert result.units_histogram[1] == n  # always two units
    assert result.wins[0] + result.mutual == n
    assert abs(result.wins[0] - n / 2) <= 5 * (n / 4) ** 0.5


# --- ammunition, unit limit and simultaneity ----------------------------------------------------------
def test_ammunition_runs_out_then_a_draw_at_the_limit(backend):
    # 2 + 2 + 1 rolls, then empty; the target keeps swinging (and missing) until the unit limit
    gunner = always_hits("gunner", 10, "1", armour_rating=1, weapon_type="D", ammunition=5)
    target = never_hits("target", 1000)
    result = simulate_fight(3, [gunner], [target], unit_limit=10, seed=1, backend=backend, outcomes=True)
    assert result.to_hit_rolls == (15, 30)
    assert result.hits == (15, 0)
    assert result.ammunition[0] == 15
    assert result.damage[0] == 15
    assert result.draws == 3 and list(result.units) == [10, 10, 10]


def test_automatic_ammunition_in_bursts(backend):
    # 6 bursts, 2 rounds left over
    gunner = always_hits("gunner", 10, "1", armour_rating=1, weapon_type="automatic", ammunition=20)
    target = never_hits("target", 10_000)
    result = simulate_fight(2, [gunner], [target], unit_limit=5, seed=1, backend=backend)
    assert result.to_hit_rolls[0] == 2 * 6
    assert result.ammunition[0] == 2 * 18


def test_simultaneous_attacks_mutual_kill_is_a_draw(backend):
    a = always_hits("a", 5, "5")
    b = always_hits("b", 5, "5")
    result = simulate_fight(10, [a], [b], seed=3, backend=backend, outcomes=True)
    assert result.mutual == result.draws == 10
    assert list(result.winner) == [DRAW] * 10 and list(result.units) == [1] * 10


def test_personas_fight_through_from_persona(backend):
    sword = Weapon("long sword", "A", "d8")
    nomad = Persona(awe=10, cha=10, con=10, dex=16, int_=12, mstr=10, pstr=12, hit_points=30, persona_class="nomad",
                    proficiencies=(sword,))
    fighter = Combatant.from_persona(nomad, sword, armour_rating=600)
    assert (fighter.bonus, fighter.maximum_roll, fighter.damage_adjustment, fighter.hit_points) == (125, 750, 6, 30)
    slug = Combatant("slug", 40, 560, Weapon("bite", "A", "2d6", natural=True), 100, 700, 2)
    result = simulate_fight(20, [fighter], [slug], seed=8, backend=backend)
    assert result.fights == 20


# --- validation ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"hit_points": 0}, ValueError, "hit_points must be in 1.."),
        ({"armour_rating": 3_000_000}, ValueError, "armour_rating must be in"),
        ({"maximum_roll": 0}, ValueError, "maximum_roll must be in 1.."),
        ({"bonus": "x"}, TypeError, "bonus must be an integer"),
        ({"ammunition": -1}, ValueError, "ammunition must be in 0.."),
        ({"weapon": "sword"}, TypeError, "weapon must be a Weapon"),
    ],
)
def test_combatant_validation(kwargs, error, match):
    values = dict(name="c", hit_points=10, armour_rating=500, weapon=Weapon("w", "A", "d6"), bonus=10,
                  maximum_roll=700)
    values.update(kwargs)
    with pytest.raises(error, match=match):
        Combatant(**values)


def test_fight_validation():
    a = always_hits("a", 5, "5")
    with pytest.raises(ValueError, match="side1 must hold 1.."):
        simulate_fight(1, [a], [], backend="python")
    with pytest.raises(TypeError, match="side0 must be a sequence of Combatant"):
        simulate_fight(1, a, [a], backend="python")
    with pytest.raises(ValueError, match="unit_limit must be in 1.."):
        simulate_fight(1, [a], [a], unit_limit=0, backend="python")
    with pytest.raises(TypeError, match="hit_on_equal must be a bool"):
        simulate_fight(1, [a], [a], hit_on_equal="yes", backend="python")


@st.composite
def persona_combatant(draw):
    """A persona of any class and level with a weapon it may be proficient with, as a combatant."""
    from combatsim.exp.model import CLASSES, SPECIAL_CLASSES

    persona_class = draw(st.sampled_from(CLASSES))
    level = draw(st.integers(1, 10))
    weapon = Weapon("w", draw(st.sampled_from(WEAPON_TYPES)), draw(st.sampled_from(["d4", "2d6", "d8", "3d10"])),
                    ammunition=draw(st.one_of(st.none(), st.integers(0, 30))),
                    natural=persona_class in SPECIAL_CLASSES)
    values = {name: draw(st.integers(0, 20)) for name in ("awe", "cha", "con", "dex", "int_", "mstr", "pstr")}
    values.update(hit_points=draw(st.integers(1, 40)), persona_class=persona_class, level=level,
                  experience_bonus=draw(st.tuples(*[st.integers(0, 150)] * 3)) if level > 1 else None)
    try:
        persona = Persona(**values, proficiencies=(weapon,) if draw(st.booleans()) else ())
    except ValueError:
        persona = Persona(**values)
    return Combatant.from_persona(persona, weapon, armour_rating=draw(st.integers(300, 900)),
                                  adjustment=draw(st.integers(-50, 50)))


@given(st.lists(persona_combatant(), min_size=1, max_size=3), st.lists(persona_combatant(), min_size=1, max_size=3),
       st.integers(0, 2**63 - 1), st.booleans())
def test_fight_personas_backends_identical(side0, side1, seed, critical):
    results = [simulate_fight(5, side0, side1, unit_limit=20, critical=critical, seed=seed, backend=backend,
                              outcomes=True) for backend in ("python", "numba", "cython")]
    for other in results[1:]:
        np.testing.assert_array_equal(results[0].winner, other.winner)
        np.testing.assert_array_equal(results[0].units, other.units)
        assert results[0].as_dict() | {"backend": ""} == other.as_dict() | {"backend": ""}
