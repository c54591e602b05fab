"""d100 kernels: reference vs Numba vs Cython outcome by outcome, Monte Carlo vs exact
probabilities, the API's validation and the CLI."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from combatsim.cli import main
from combatsim.d100 import api, engine, layout, model
from combatsim.d100.api import Combatant, Weapon, simulate_attacks, simulate_fights
from combatsim.registry import get_kernel
from combatsim.rng import dense_die, rejection_threshold
from tests.test_d100_model import contest_wins

BACKENDS = ("python", "numba", "cython")
SEEDS = st.integers(0, 2**64 - 1)


def run_attack(backend, seed, start, count, params, keep=True):
    counts = np.zeros(layout.ATTACK_COUNTS, dtype=np.int64)
    outs = [np.zeros(count if keep else 0, dtype=np.int8) for _ in range(3)]
    get_kernel("d100.attack", backend)(seed, start, count, *params, counts, *outs)
    return counts, outs


def run_fight(backend, seed, start, count, table, passes, max_rounds, ambush_side):
    # The fixed counts, the rounds histogram, then each combatant's fights ended standing.
    counts = np.zeros(layout.FIGHT_COUNTS + max_rounds + 1 + len(table), dtype=np.int64)
    winner = np.zeros(count, dtype=np.int8)
    rounds = np.zeros(count, dtype=np.int32)
    get_kernel("d100.fight", backend)(seed, start, count, table, passes, max_rounds, ambush_side, counts,
                                      winner, rounds)
    # The rounds histogram after the fixed counts is exactly the per-fight rounds.
    histogram = counts[layout.FIGHT_COUNTS:layout.FIGHT_COUNTS + max_rounds + 1]
    np.testing.assert_array_equal(histogram, np.bincount(rounds, minlength=max_rounds + 1))
    return counts, winner, rounds


# Attacks: differential -------------------------------------------------------------------------
def attack_params(draw, count):
    def column(low, high):
        if draw(st.booleans()):
            return np.array([draw(st.integers(low, high))], dtype=np.int64)
        return np.array(draw(st.lists(st.integers(low, high), min_size=count, max_size=count)), dtype=np.int64)

    return (column(-60, 300), column(0, 100), column(0, 90), column(0, 1), column(0, 100), column(0, 90),
            column(0, 1), column(1, 2))


@st.composite
def attack_cases(draw):
    count = draw(st.integers(1, 40))
    return draw(SEEDS), draw(st.integers(0, 2**40)), count, attack_params(draw, count)


@given(attack_cases())
def test_attack_backends_agree_outcome_by_outcome(case):
    seed, start, count, params = case
    expected_counts, expected = run_attack("python", seed, start, count, params)
    for backend in ("numba", "cython"):
        counts, outs = run_attack(backend, seed, start, count, params)
        for out, want in zip(outs, expected, strict=True):
            np.testing.assert_array_equal(out, want)
        np.testing.assert_array_equal(counts, expected_counts)


@given(SEEDS, st.integers(0, 2**40), st.integers(1, 200), st.integers(-40, 260), st.integers(0, 100),
       st.integers(0, 90), st.booleans(), st.integers(1, 2))
def test_attack_fast_path_matches_reference(seed, start, count, skill, lethality, serious, nonlethal, weapons):
    params = tuple(np.array([v], dtype=np.int64) for v in
                   (skill, lethality, serious, nonlethal, lethality // 2, serious, 0, weapons))
    expected, _ = run_attack("python", seed, start, count, params)
    for backend in ("numba", "cython"):
        counts, _ = run_attack(backend, seed, start, count, params, keep=False)
        np.testing.assert_array_equal(counts, expected)


def test_attack_rejected_word_retries_in_every_path():
    # Seed 12345, item 205: its dense word is rejected by Lemire's bound for 1..1000000, so the
    # value comes from the retry domain; the fast path must fix its tally.
    params = tuple(np.array([v], dtype=np.int64) for v in (70, 30, 60, 0, 30, 60, 0, 2))
    expected, _ = run_attack("python", 12345, 0, 400, params)
    for backend in ("numba", "cython"):
        fast, _ = run_attack(backend, 12345, 0, 400, params, keep=False)
        np.testing.assert_array_equal(fast, expected)


@pytest.mark.parametrize("backend", ["numba", "cython"])
@pytest.mark.parametrize("seed, start", [(0, 0), (12345, 3), (2**64 - 1, 2**33 + 1)])
def test_attack_fast_path_matches_per_item_path(backend, seed, start):
    params = tuple(np.array([v], dtype=np.int64) for v in (75, 25, 50, 0, 25, 50, 1, 2))
    fast, _ = run_attack(backend, seed, start, 300_001, params, keep=False)
    slow, _ = run_attack(backend, seed, start, 300_001, params, keep=True)
    np.testing.assert_array_equal(fast, slow)


ATTACK_PARAMETERS = st.tuples(st.integers(-60, 300), st.integers(-5, 105), st.integers(-5, 105), st.booleans(),
                              st.integers(-5, 105), st.integers(-5, 105), st.booleans(), st.integers(1, 2))


def counting_bars(skill, lethality, serious, nonlethal, lethality2, serious2, nonlethal2, weapons):
    """The bars and ``two`` of the engine's attack_tallies for these attack parameters."""
    return (*engine.tier_bars(skill), *engine.damage_bars(lethality, serious, nonlethal),
            *engine.damage_bars(lethality2, serious2, nonlethal2), int(weapons == 2))


@settings(max_examples=200)
@given(st.lists(st.integers(0, 999_999), min_size=1, max_size=20), ATTACK_PARAMETERS)
def test_attack_tallies_count_the_attack_outcomes(values, params):
    # The counting passes' tallies of an attack are its attack_outcome's tier and wounds, and
    # tally_counts turns their sums into the counts that count_attack counts attack by attack.
    bars = counting_bars(*params)
    expected = np.zeros(layout.ATTACK_COUNTS, dtype=np.int64)
    one_by_one = np.zeros(layout.ATTACK_COUNTS, dtype=np.int64)
    totals = np.zeros(10, dtype=np.int64)
    for value in values:
        tier, wound, wound2 = engine.attack_outcome(value, *params)
        tallies = engine.attack_tallies(value, *bars)
        assert tallies == (tier == model.CRITICAL_SUCCESS, tier <= model.HARD_SUCCESS, tier <= model.SUCCESS,
                           tier == model.CRITICAL_FAILURE,
                           wound >= model.LETHAL, wound >= model.SERIOUS, wound == model.INSTANT_DEATH,
                           wound2 >= model.LETHAL, wound2 >= model.SERIOUS, wound2 == model.INSTANT_DEATH)
        totals += tallies
        expected[tier] += 1
        for dealt in (wound, wound2):  # the counts as docs/d100.md words them
            if dealt == model.FLESH:
                expected[layout.A_FLESH] += 1
            elif dealt == model.SERIOUS:
                expected[layout.A_SERIOUS] += 1
            elif dealt >= model.LETHAL:
                expected[layout.A_LETHAL] += 1
                expected[layout.A_INSTANT_DEATH] += dealt == model.INSTANT_DEATH
        engine.count_attack(one_by_one, tier, wound, wound2)
    counts = np.zeros(layout.ATTACK_COUNTS, dtype=np.int64)
    engine.tally_counts(counts, len(values), bars[-1], *totals)
    np.testing.assert_array_equal(counts, expected)
    np.testing.assert_array_equal(one_by_one, expected)


@settings(max_examples=300)
@given(st.one_of(st.integers(0, 2**32 - 1), st.sampled_from([0, 1, 42949672, 42949673, 2**32 - 1])), ATTACK_PARAMETERS)
def test_word_tallies_are_the_tallies_of_the_words_value(word, params):
    # A word Lemire's bound takes (low word of w 10^6 at least the threshold) is the value
    # (w 10^6) >> 32; word_tallies on the word and the word bars are attack_tallies on that value.
    product = word * layout.ATTACK_SIDES
    assume(product & (2**32 - 1) >= rejection_threshold(layout.ATTACK_SIDES))
    bars = counting_bars(*params)
    word_bars = (*(engine.word_bar(bar) for bar in bars[:-1]), bars[-1])
    assert engine.word_tallies(word, *word_bars) == engine.attack_tallies(product >> 32, *bars)


def test_attack_known_outcomes_snapshot(backend):
    # Pins the layout (dense word -> 1..1000000 -> three d100s) so all backends cannot drift together.
    # Seed 1, items 0..7 draw 72204, 117256, ...: item 0 is attack 8, damage 23, second damage 4.
    assert [dense_die(1, i, 1_000_000) for i in range(3)] == [72204, 117256, 283267]
    params = tuple(np.array([v], dtype=np.int64) for v in (60, 30, 60, 0, 30, 60, 0, 2))
    counts, (tier, wound, wound2) = run_attack(backend, 1, 0, 8, params)
    assert counts.tolist() == [1, 5, 0, 2, 0, 3, 5, 4, 0]
    assert tier.tolist() == [1, 1, 1, 0, 1, 3, 1, 3]
    assert wound.tolist() == [3, 1, 2, 1, 2, 0, 1, 0]
    assert wound2.tolist() == [3, 2, 1, 2, 3, 0, 2, 0]


# Attacks: statistics ------------------------------------------------------------------------
def exact_attack_probabilities(skill, lethality, serious, nonlethal, weapons):
    """Exact expected counts per attack by enumerating the 100 x 100 x 100 dice (model functions)."""
    expected = [Fraction(0)] * layout.ATTACK_COUNTS
    wound_index = {model.LETHAL: layout.A_LETHAL, model.SERIOUS: layout.A_SERIOUS, model.FLESH: layout.A_FLESH}
    for roll in range(1, 101):
        tier = model.tier(roll, skill)
        expected[tier] += Fraction(1, 100)
        if tier > model.SUCCESS:
            continue
        for damage in range(1, 101):
            wound = model.wound_severity(damage, lethality, serious, nonlethal, tier == model.CRITICAL_SUCCESS)
            weight = Fraction(weapons, 10000)  # both weapons' damage dice are uniform and independent
            if wound == model.INSTANT_DEATH:
                expected[layout.A_LETHAL] += weight
                expected[layout.A_INSTANT_DEATH] += weight
            else:
                expected[wound_index[wound]] += weight
    return expected


@pytest.mark.slow
@pytest.mark.parametrize("skill, lethality, serious, nonlethal, weapons",
                         [(60, 22, 44, False, 2), (150, 40, 90, False, 1), (-10, 30, 60, False, 1),
                          (95, 50, 90, True, 1), (33, 95, 90, False, 2)])
def test_attack_rates_match_exact_probabilities(backend, skill, lethality, serious, nonlethal, weapons):
    n = 20_000 if backend == "python" else 1_000_000
    params = tuple(np.array([v], dtype=np.int64) for v in
                   (skill, lethality, serious, int(nonlethal), lethality, serious, int(nonlethal), weapons))
    counts, _ = run_attack(backend, 20260101, 0, n, params, keep=False)
    for j, probability in enumerate(exact_attack_probabilities(skill, lethality, serious, nonlethal, weapons)):
        p = float(probability) / weapons if j >= layout.A_LETHAL else float(probability)
        mean = n * float(probability)
        # wound counts are sums over `weapons` Bernoulli trials per attack; bound their spread generously
        sigma = (n * p * (1 - p)) ** 0.5 * (weapons if j >= layout.A_LETHAL else 1)
        assert abs(counts[j] - mean) <= 5 * sigma + 1e-9, (layout.ATTACK_COUNT_NAMES[j], counts[j], mean)


# Fights: differential -----------------------------------------------------------------------
CATEGORIES = st.sampled_from(model.CATEGORIES)


@st.composite
def weapons(draw):
    return Weapon(draw(st.integers(0, 100)), draw(st.sampled_from([1, 2, 3, "1.5"])), draw(st.booleans()),
                  draw(CATEGORIES), draw(st.booleans()))


@st.composite
def combatants(draw, side):
    weights = draw(st.lists(st.integers(0, 10), min_size=8, max_size=8).filter(lambda w: sum(w) > 0))
    policy = [w * 100 // sum(weights) for w in weights]
    policy[0] += 100 - sum(policy)
    dual = draw(st.booleans())
    weapon = draw(weapons())
    second = Weapon(draw(st.integers(0, 100)), 2, draw(st.booleans()), weapon.category) if dual else None
    # an elementalism weapon attacks with the Arcane score, which such a member must have
    arcane = draw(st.integers(0, 120)) if weapon.category == "elementalism" else draw(st.none() | st.integers(0, 120))
    return Combatant(
        side=side, fighting=draw(st.integers(0, 120)), weapon=weapon, parkour=draw(st.integers(0, 100)),
        perception=draw(st.integers(0, 100)), specialty=draw(st.lists(st.integers(0, 5), max_size=3)),
        second_weapon=second, two_weapon_style=draw(st.integers(0, 3)), two_gun_style=draw(st.integers(0, 3)),
        ambush_specialist=draw(st.lists(st.integers(0, 5), max_size=2)),
        combat_reflexes=draw(st.lists(st.integers(0, 5), max_size=2)),
        torso=draw(st.sampled_from(model.TORSO_COVERAGES)), helmet=draw(st.booleans()),
        automatic_fire=draw(st.booleans()), distant=draw(st.booleans()), policy=policy, arcane=arcane,
    )


@st.composite
def fight_cases(draw):
    side0 = draw(st.lists(combatants(0), min_size=1, max_size=3))
    side1 = draw(st.lists(combatants(1), min_size=1, max_size=3))
    order = draw(st.permutations(side0 + side1))
    table = api.fight_table(order, draw(st.sampled_from(model.TAPERS)))
    return (draw(SEEDS), draw(st.integers(0, 2**40)), draw(st.integers(1, 12)), table, draw(st.integers(1, 3)),
            draw(st.integers(1, 8)), draw(st.sampled_from([-1, 0, 1])))


@settings(max_examples=40)
@given(fight_cases())
def test_fight_backends_agree_fight_by_fight(case):
    seed, start, count, table, passes, max_rounds, ambush_side = case
    expected = run_fight("python", seed, start, count, table, passes, max_rounds, ambush_side)
    for backend in ("numba", "cython"):
        got = run_fight(backend, seed, start, count, table, passes, max_rounds, ambush_side)
        for value, want in zip(got, expected, strict=True):
            np.testing.assert_array_equal(value, want)


def test_fight_results_do_not_depend_on_threads_or_chunks():
    fighters = [Combatant(0, 60, Weapon(30, 2)), Combatant(0, 40, Weapon(20, 2, category="pistol")),
                Combatant(1, 55, Weapon(35, 2), torso="heavy", helmet=True)]
    one = simulate_fights(3000, fighters, seed=9, backend="cython", threads=1, outcomes=True)
    for backend, threads, chunk in (("numba", 2, 777), ("cython", 2, 1001), ("python", 1, 500)):
        n = 3000 if backend != "python" else 300
        other = simulate_fights(n, fighters, seed=9, backend=backend, threads=threads, chunk_size=chunk,
                                outcomes=True)
        np.testing.assert_array_equal(other.winner, one.winner[:n])
        np.testing.assert_array_equal(other.rounds, one.rounds[:n])


def _lane_fighters():
    # Fights of very different lengths (a quick kill, long draws), so lanes end and restart out of
    # order; a second weapon, cover and fleeing make the word order per fight vary.
    return [Combatant(0, 70, Weapon(40, 2), policy=(40, 20, 10, 10, 0, 0, 10, 10)),
            Combatant(0, 30, Weapon(10, 1, category="pistol"), policy=(20, 20, 20, 20, 0, 0, 10, 10)),
            Combatant(1, 50, Weapon(30, 2), torso="heavy", helmet=True, policy=(50, 10, 20, 10, 0, 0, 5, 5))]


@pytest.mark.parametrize("backend_name", ["numba", "cython"])
def test_fight_lanes_match_the_reference_for_any_count(backend_name):
    """Issue 4: the compiled kernels' fights (below the Cython lanes' minimum: the engine's fight)
    give the reference's results fight by fight for tiny counts (0, 1, 2) and odd ones, with or
    without per-fight outputs."""
    table = api.fight_table(_lane_fighters(), model.TAPERS[0])
    for count in (0, 1, 2, 5, 61):
        for passes, max_rounds, ambush_side in ((2, 6, -1), (1, 1, 0), (3, 12, 1)):
            seed, start = 2**63 + 12345 + count, 7 * count
            expected = run_fight("python", seed, start, count, table, passes, max_rounds, ambush_side)
            got = run_fight(backend_name, seed, start, count, table, passes, max_rounds, ambush_side)
            for value, want in zip(got, expected, strict=True):
                np.testing.assert_array_equal(value, want)
            # No per-fight outputs wanted: the same counts, the rounds histogram included.
            counts = np.zeros(layout.FIGHT_COUNTS + max_rounds + 1 + len(table), dtype=np.int64)
            get_kernel("d100.fight", backend_name)(seed, start, count, table, passes, max_rounds, ambush_side,
                                                   counts, np.zeros(0, np.int8), np.zeros(0, np.int32))
            np.testing.assert_array_equal(counts, expected[0])


@pytest.mark.parametrize("backend_name", ["numba", "cython"])
def test_fight_kernels_match_the_reference_at_the_combatant_limit(backend_name):
    """The kernels keep combatants as bits of 64-bit masks: with api.MAX_COMBATANTS combatants,
    bit 63 in use (alone on its side, or among many, sides interleaved), fight by fight."""
    rng = np.random.default_rng(63)
    m = api.MAX_COMBATANTS

    def fighter(side):
        return Combatant(side, int(rng.integers(20, 90)), Weapon(int(rng.integers(10, 60)), 2,
                         category=str(rng.choice(["melee", "pistol", "carbine"]))),
                         torso=str(rng.choice(model.TORSO_COVERAGES)))

    alone_last = [fighter(0) for _ in range(m - 1)] + [fighter(1)]
    interleaved = [fighter(int(side)) for side in rng.integers(0, 2, size=m - 2)] + [fighter(0), fighter(1)]
    for fighters in (alone_last, interleaved):
        table = api.fight_table(fighters, model.TAPERS[0])
        for passes, max_rounds, ambush_side in ((2, 8, -1), (1, 3, 1), (2, 5, 0)):
            expected = run_fight("python", 2**64 - 5, 11, 5, table, passes, max_rounds, ambush_side)
            got = run_fight(backend_name, 2**64 - 5, 11, 5, table, passes, max_rounds, ambush_side)
            for value, want in zip(got, expected, strict=True):
                np.testing.assert_array_equal(value, want)
        assert expected[0][layout.F_ATTACKS] > 0


# Fights: exact probabilities ------------------------------------------------------------------
ALWAYS_ATTACK = (100, 0, 0, 0, 0, 0, 0, 0)
ALWAYS_FLEE = (0, 0, 0, 100, 0, 0, 0, 0)
ALWAYS_DEFEND = (0, 0, 100, 0, 0, 0, 0, 0)


def lethal_probability(skill, lethality, serious):
    expected = exact_attack_probabilities(skill, lethality, serious, False, 1)
    return expected[layout.A_LETHAL]


def check_rate(count, n, probability):
    p = float(probability)
    sigma = (n * p * (1 - p)) ** 0.5
    assert abs(count - n * p) <= 5 * sigma + 1e-9, (count, n * p)


@pytest.mark.slow
def test_one_round_duel_win_rates_match_exact(backend):
    # passes=1, one round: both attack at once (docs/d100.md, "Order inside a pass"), so each side
    # wins when its attack wounds lethally and the other's does not; both: a draw.
    fighters = [Combatant(0, 70, Weapon(30, 2), policy=ALWAYS_ATTACK),
                Combatant(1, 50, Weapon(40, 2), policy=ALWAYS_ATTACK)]
    n = 3000 if backend == "python" else 200_000
    result = simulate_fights(n, fighters, passes=1, max_rounds=1, seed=5, backend=backend, threads=1)
    p0, p1 = lethal_probability(70, 30, 60), lethal_probability(50, 40, 80)
    check_rate(result.counts["wins_side_0"], n, p0 * (1 - p1))
    check_rate(result.counts["wins_side_1"], n, p1 * (1 - p0))
    check_rate(result.counts["draws"], n, p0 * p1)
    assert result.counts["rounds"] == n
    assert result.counts["unfinished"] == n - result.counts["wins_side_0"] - result.counts["wins_side_1"] - \
        result.counts["draws"]


def kill_on_any_hit_odds(hit0, hit1, passes):
    """Two fighters who always attack and kill on any hit, over ``passes`` passes (by hand): a pass
    goes on with q = (1 - hit0)(1 - hit1), and ends in a win of side 0 with hit0 (1 - hit1), of side 1
    with hit1 (1 - hit0), in a draw with hit0 hit1. So side 0 wins with hit0 (1 - hit1)(1 - q^N)/(1 - q)
    over N passes, and so on; unfinished: q^N."""
    q = (1 - hit0) * (1 - hit1)
    reached = (1 - q**passes) / (1 - q)
    return hit0 * (1 - hit1) * reached, hit1 * (1 - hit0) * reached, hit0 * hit1 * reached, q**passes


def test_kill_on_any_hit_duel_matches_its_fractions(backend):
    # Fighting 60 and 40: a hit is a roll at or under 60 (40); lethality 100: every hit is lethal.
    # Two passes, three rounds: six passes. Side 0 wins 126/200 (1 - (6/25)^6)/(19/25) ...
    fighters = [Combatant(0, 60, Weapon(100, 1), policy=ALWAYS_ATTACK),
                Combatant(1, 40, Weapon(100, 1), policy=ALWAYS_ATTACK)]
    odds = kill_on_any_hit_odds(Fraction(60, 100), Fraction(40, 100), 6)
    assert odds[0] == Fraction(36, 100) * (1 - Fraction(6, 25) ** 6) / Fraction(19, 25)
    assert sum(odds) == 1
    n = 3000 if backend == "python" else 100_000
    result = simulate_fights(n, fighters, passes=2, max_rounds=3, seed=12, backend=backend, threads=1)
    for name, probability in zip(("wins_side_0", "wins_side_1", "draws", "unfinished"), odds, strict=True):
        check_rate(result.counts[name], n, probability)


def test_flee_when_not_targeted_needs_no_roll(backend):
    fighters = [Combatant(0, 60, Weapon(30, 2), policy=ALWAYS_DEFEND),
                Combatant(1, 10, Weapon(30, 2), policy=ALWAYS_FLEE)]
    result = simulate_fights(200, fighters, passes=2, max_rounds=3, seed=1, backend=backend, threads=1)
    assert result.counts["escapes_side_1"] == 200
    assert result.counts["wins_side_0"] == result.counts["wins_by_flight_side_0"] == 200
    assert result.counts["attacks"] == result.counts["escapes_side_0"] == 0


@pytest.mark.slow
def test_flee_under_fire_rate_and_escalating_target(backend):
    # Side 0 shoots with Fighting 0 (always misses; a ranged attack does not engage), so side 1 is
    # targeted and must roll to flee: flee target floor((51 + 40) / 2) = 45, then 65 after one
    # failure (passes=2, one round).
    fighters = [Combatant(0, 0, Weapon(30, 2, category="pistol"), policy=ALWAYS_ATTACK),
                Combatant(1, 51, Weapon(30, 2), parkour=40, policy=ALWAYS_FLEE)]
    n = 3000 if backend == "python" else 200_000
    result = simulate_fights(n, fighters, passes=2, max_rounds=1, seed=11, backend=backend, threads=1)
    first = Fraction(45, 100)
    check_rate(result.counts["escapes_side_1"], n, first + (1 - first) * Fraction(65, 100))
    assert result.counts["escapes_side_1"] == result.counts["wins_by_flight_side_0"] == result.counts["wins_side_0"]
    assert result.counts["attacks"] >= n


@pytest.mark.slow
def test_ambush_surprise_rate_matches_exact_contest(backend):
    fighters = [Combatant(0, 60, Weapon(30, 2), parkour=50, perception=40, ambush_specialist=(2,)),
                Combatant(1, 50, Weapon(30, 2), parkour=30, perception=60)]
    attacker = model.ambush_attacker_target(60, 50, 40, model.specialty_multiplier([2]))
    defender = model.ambush_defender_target(50, 30, 60)
    probability = Fraction(sum(contest_wins(a, attacker, d, defender)
                               for a in range(1, 101) for d in range(1, 101)), 10000)
    n = 3000 if backend == "python" else 200_000
    result = simulate_fights(n, fighters, passes=1, max_rounds=1, ambush_side=0, seed=3, backend=backend,
                             threads=1)
    check_rate(result.counts["surprised"], n, probability)


def test_surprised_defender_skips_pass_one(backend):
    # One pass, one round: side 0 ambushes and only defends; side 1 always attacks, so it makes
    # exactly one attack per fight in which it was not surprised.
    fighters = [Combatant(0, 90, Weapon(0, 1), parkour=90, perception=90, policy=ALWAYS_DEFEND),
                Combatant(1, 20, Weapon(0, 1), policy=ALWAYS_ATTACK)]
    n = 300
    result = simulate_fights(n, fighters, passes=1, max_rounds=1, ambush_side=0, seed=4, backend=backend, threads=1)
    assert 0 < result.counts["surprised"] < n
    assert result.counts["attacks"] == n - result.counts["surprised"]
    # Without the ambush nobody is surprised.
    plain = simulate_fights(n, fighters, passes=1, max_rounds=1, seed=4, backend=backend, threads=1)
    assert (plain.counts["surprised"], plain.counts["attacks"]) == (0, n)


def test_escalation_and_nonlethal_counts_are_consistent(backend):
    # A nonlethal weapon never deals lethal wounds directly: every lethal wound is an escalation.
    fighters = [Combatant(0, 80, Weapon(60, 2, nonlethal=True), policy=ALWAYS_ATTACK),
                Combatant(1, 0, Weapon(0, 1), policy=ALWAYS_DEFEND)]
    n = 200 if backend == "python" else 5000
    result = simulate_fights(n, fighters, passes=2, max_rounds=30, seed=8, backend=backend, threads=1)
    assert result.counts["lethal"] == 0
    assert result.counts["instant_death"] == 0
    assert result.counts["escalated_serious"] == 0  # nonlethal flesh wounds do not escalate
    assert result.counts["escalated_lethal"] == result.counts["wins_side_0"]


# API, validation, CLI -----------------------------------------------------------------------------
def test_simulate_attacks_derives_rule_values():
    result = simulate_attacks(1000, pool=60, specialty=[2], modifiers=["quick", "cover"], lethality=30, severity=2,
                              armour="light", dual_wield=True, seed=1, backend="cython", threads=1, outcomes=True)
    # 60 x 1.2 = 72; -20 quick -20 cover -20 dual wield = 12
    assert result.full_skill == 12
    # 30 x 0.5 x 0.75 x 0.75 = 8.4375 -> 8; serious min(90, 16)
    assert (result.lethality, result.serious_threshold) == (8, 16)
    assert sum(result.counts[name] for name in model.TIER_NAMES) == 1000
    assert result.second_wound is not None and (result.second_wound > 0).sum() > 0


def test_simulate_attacks_backends_agree():
    kwargs = dict(pool=55, specialty=[3, 1], modifiers=["distant-pistol"], lethality=40, severity="1.5",
                  armour="heavy", seed=77, threads=1)
    results = [simulate_attacks(3000, backend=b, outcomes=True, **kwargs) for b in BACKENDS]
    for other in results[1:]:
        assert other.counts == results[0].counts
        np.testing.assert_array_equal(other.tier, results[0].tier)


@pytest.mark.parametrize(
    "kwargs, error, field",
    [
        ({"pool": -1}, ValueError, "pool"),
        ({"pool": 1.5}, TypeError, "pool"),
        ({"lethality": 101}, ValueError, "lethality"),
        ({"severity": "1.25"}, ValueError, "severity"),
        ({"severity": 1.5}, TypeError, "severity"),
        ({"armour": "medium"}, ValueError, "armour"),
        ({"modifiers": ["sneaky"]}, ValueError, "modifier"),
        ({"modifiers": ["distant_pistol", "distant_archery"]}, ValueError, "modifier"),
        ({"specialty": [11]}, ValueError, "specialty"),
        ({"taper": "linear"}, ValueError, "taper"),
        ({"nonlethal": 1}, TypeError, "nonlethal"),
    ],
)
def test_simulate_attacks_validation(kwargs, error, field):
    arguments = dict(pool=60, lethality=30, severity=2)
    arguments.update(kwargs)
    with pytest.raises(error, match=field):
        simulate_attacks(10, **arguments)


def test_simulate_fights_validation():
    good = [Combatant(0, 50, Weapon(30)), Combatant(1, 50, Weapon(30))]
    with pytest.raises(ValueError, match="policy"):
        simulate_fights(1, [Combatant(0, 50, Weapon(30), policy=(50, 0, 0, 0, 0, 0, 0, 0)), good[1]])
    with pytest.raises(ValueError, match="side 1"):
        simulate_fights(1, [good[0], good[0]])
    with pytest.raises(ValueError, match="passes"):
        simulate_fights(1, good, passes=0)
    with pytest.raises(ValueError, match=r"combatants\[1\].weapon.lethality"):
        simulate_fights(1, [good[0], Combatant(1, 50, Weapon(130))])
    with pytest.raises(ValueError, match=r"weapon.category"):
        simulate_fights(1, [good[0], Combatant(1, 50, Weapon(30, category="laser"))])
    with pytest.raises(ValueError, match="ambush_side"):
        simulate_fights(1, good, ambush_side=2)
    with pytest.raises(TypeError, match="combatants"):
        simulate_fights(1, good[0])


def test_cli_attack_json(capsys):
    code = main(["attack", "d100", "--pool", "60", "--specialty", "2", "--modifier", "quick", "--modifier", "cover",
                 "--lethality", "30", "--severity", "2", "--armor", "light", "--dual-wield", "-n", "5000",
                 "--seed", "3", "--backend", "cython", "--threads", "1", "--json"])
    assert code == 0
    record = json.loads(capsys.readouterr().out)
    for name in ("critical_success", "hard_success", "success", "failure", "critical_failure", "lethal",
                 "serious", "flesh", "instant_death"):
        assert name in record
    assert sum(record[name] for name in model.TIER_NAMES) == 5000
    direct = simulate_attacks(5000, pool=60, specialty=[2], modifiers=["quick", "cover"], lethality=30, severity=2,
                              armour="light", dual_wield=True, seed=3, backend="numba", threads=1)
    assert all(record[name] == value for name, value in direct.counts.items())


def test_cli_attack_error_names_the_field(capsys):
    code = main(["attack", "d100", "--pool", "60", "--lethality", "300", "-n", "10"])
    assert code == 2
    assert "lethality" in capsys.readouterr().err


def test_flee_is_blocked_while_engaged(backend):
    # A melee attack engages its target after the attacks and before any flee (whatever the table
    # order), and an engaged combatant's flee becomes a disengage: nobody ever flees.
    for order in (1, -1):
        fighters = [Combatant(0, 0, Weapon(30, 2), policy=ALWAYS_ATTACK),
                    Combatant(1, 90, Weapon(30, 2), parkour=90, policy=ALWAYS_FLEE)][::order]
        result = simulate_fights(100, fighters, passes=2, max_rounds=4, seed=2, backend=backend, threads=1)
        assert result.counts["escapes_side_1"] == 0
        assert result.counts["unfinished"] == 100
    shooter = [Combatant(0, 0, Weapon(30, 2, category="pistol"), policy=ALWAYS_ATTACK), fighters[0]]
    result = simulate_fights(100, shooter, passes=2, max_rounds=4, seed=2, backend=backend, threads=1)
    assert result.counts["escapes_side_1"] == result.counts["wins_by_flight_side_0"] == result.counts["wins_side_0"]
    assert result.counts["wins_side_0"] > 90


def test_engaging_attacks_that_meet_on_one_combatant_engage_nobody(backend):
    # Two melee attackers (always missing) on one fleeing target: each engaging attack meets the
    # other on the target, so neither engages it, whatever the table order, and its flee is not
    # blocked (flee target floor((90 + 90) / 2) = 90, then 95): nearly every fight ends in its
    # escape, a win by flight.
    attackers = [Combatant(0, 0, Weapon(30, 2), policy=ALWAYS_ATTACK) for _ in range(2)]
    target = Combatant(1, 90, Weapon(30, 2), parkour=90, policy=ALWAYS_FLEE)
    for fighters in ([*attackers, target], [target, *attackers]):
        result = simulate_fights(100, fighters, passes=2, max_rounds=4, seed=2, backend=backend, threads=1)
        assert result.counts["escapes_side_1"] == result.counts["wins_by_flight_side_0"] == \
            result.counts["wins_side_0"] > 95


MIXED = (20, 10, 10, 15, 15, 10, 10, 10)
#: Every action, dual wield (melee and pistols), nonlethal weapons, armour, cover and an ambush.
SKIRMISH = [
    Combatant(0, 60, Weapon(30, 2), parkour=40, perception=50, specialty=(2,), policy=MIXED),
    Combatant(0, 50, Weapon(20, 3, category="pistol"), second_weapon=Weapon(20, 3, category="pistol"),
              two_gun_style=2, torso="light"),
    Combatant(1, 55, Weapon(40, 2, category="carbine"), torso="heavy", helmet=True, policy=MIXED),
    Combatant(1, 45, Weapon(25, 2, nonlethal=True), second_weapon=Weapon(25, 2), two_weapon_style=2, policy=MIXED),
]


def test_fight_snapshot(backend):
    # Pins fight outcomes (seed 2026) so the three backends cannot drift wrong together.
    result = simulate_fights(300, SKIRMISH, ambush_side=1, seed=2026, backend=backend, threads=1, outcomes=True)
    assert result.counts == {
        "wins_side_0": 177, "wins_side_1": 112, "wins_by_flight_side_0": 124, "wins_by_flight_side_1": 36,
        "escapes_side_0": 76, "escapes_side_1": 192, "draws": 9, "unfinished": 2, "rounds": 1506, "attacks": 4762,
        "lethal": 323, "serious": 457, "flesh": 1089, "instant_death": 27, "escalated_serious": 150,
        "escalated_lethal": 179, "surprised": 271,
    }
    assert result.winner[:12].tolist() == [1, 1, 0, 1, 1, 1, 0, 0, 1, 0, 0, 1]
    assert result.rounds[:12].tolist() == [6, 4, 4, 6, 9, 9, 5, 3, 3, 2, 5, 4]


@pytest.mark.slow
def test_escalation_chain_win_rate_matches_binomial(backend):
    # Lethality 0 and severity 0: every hit is a deadly flesh wound. Full skill 200 caps at 95, so
    # each attack hits with probability 95/100 (the defender's -20 leaves 180, still capped). Six
    # flesh wounds escalate to serious twice, then to lethal: side 0 wins within four rounds of two
    # passes exactly when at least 6 of its 8 attacks hit.
    fighters = [Combatant(0, 200, Weapon(0, 0), policy=ALWAYS_ATTACK),
                Combatant(1, 50, Weapon(30, 2), policy=ALWAYS_DEFEND)]
    n = 2000 if backend == "python" else 100_000
    result = simulate_fights(n, fighters, passes=2, max_rounds=4, seed=21, backend=backend, threads=1)
    p = Fraction(95, 100)
    win = sum(Fraction(math.comb(8, k)) * p**k * (1 - p) ** (8 - k) for k in range(6, 9))
    check_rate(result.counts["wins_side_0"], n, win)
    assert result.counts["lethal"] == result.counts["serious"] == 0
    assert result.counts["escalated_lethal"] == result.counts["wins_side_0"]
    assert result.counts["escalated_serious"] >= 2 * result.counts["wins_side_0"]


# Fairness: no side gains by where it stands in the table ----------------------------------------


def swapped(combatants):
    """The same fight with the two sides' places exchanged: side 1's members first, as side 0."""
    return [replace(c, side=1 - c.side) for c in combatants if c.side == 1] + \
        [replace(c, side=1 - c.side) for c in combatants if c.side == 0]


def example_duel_without_ambush():
    from combatsim.scenario import example_path, load

    spec = load(example_path("d100_duel"), ["options.ambush_side=-1"]).spec
    return spec["combatants"], dict(passes=spec["passes"], max_rounds=spec["max_rounds"])


def assert_swapping_swaps_the_results(combatants, n, **options):
    """Each side's wins (and wins by flight, escapes, draws) in one run match the other side's in
    the run with the sides swapped, within 5 sigma of the difference of two independent counts."""
    one = simulate_fights(n, combatants, seed=31, **options).counts
    other = simulate_fights(n, swapped(combatants), seed=32, **options).counts
    for name in ("wins_side_{}", "wins_by_flight_side_{}", "escapes_side_{}"):
        for side in (0, 1):
            a, b = one[name.format(side)], other[name.format(1 - side)]
            assert abs(a - b) <= 5 * math.sqrt(a + b) + 1e-9, (name.format(side), a, b)
    for name in ("draws", "unfinished"):
        a, b = one[name], other[name]
        assert abs(a - b) <= 5 * math.sqrt(a + b) + 1e-9, (name, a, b)
    return one


MIRROR = [Combatant(0, 60, Weapon(30, 2), parkour=40, perception=50, specialty=(2,)),
          Combatant(1, 60, Weapon(30, 2), parkour=40, perception=50, specialty=(2,))]


@pytest.mark.parametrize("n", [100_000, pytest.param(1_000_000, marks=pytest.mark.slow)])
def test_mirror_match_splits_half_and_half(n):
    """Two identical fighters, one a side (the default scripted policy: every action happens): each
    side wins half the decided fights within 5 sigma, and so on for every per-side count."""
    counts = assert_swapping_swaps_the_results(MIRROR, n)
    for name in ("wins_side_{}", "wins_by_flight_side_{}", "escapes_side_{}"):
        a, b = counts[name.format(0)], counts[name.format(1)]
        assert abs(a - b) <= 5 * math.sqrt(a + b), (name, a, b)
    assert counts["draws"] > 0 and counts["wins_by_flight_side_0"] > 0


@pytest.mark.parametrize("n", [100_000, pytest.param(1_000_000, marks=pytest.mark.slow)])
def test_swapping_the_sides_of_the_example_duel_swaps_its_results(n):
    """examples/d100_duel.toml without its ambush (which favours the ambushing side by design)."""
    combatants, options = example_duel_without_ambush()
    assert_swapping_swaps_the_results(combatants, n, **options)


@pytest.mark.parametrize("n", [30_000, pytest.param(1_000_000, marks=pytest.mark.slow)])
def test_swapping_the_sides_of_a_skirmish_swaps_its_results(n):
    """Teams, every action, dual wield, nonlethal weapons and cover (the fight snapshot's skirmish)."""
    assert_swapping_swaps_the_results(SKIRMISH, n, passes=2, max_rounds=20)
