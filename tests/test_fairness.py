"""Fair by construction, EXP and TSS: swapping a scenario's two sides swaps its results.

Statistics: each side's wins and the draws of a run match the other side's in a run with the sides
swapped, within 5 sigma of the difference of two independent counts, for every example scenario, a
mirror match and teams; a mirror match also splits evenly within its own run.

Outcome by outcome: a fight's dice, replayed through the reference with the two sides' places
exchanged and each side's draws kept as its own, give the mirrored fight (winner swapped, same
length). The replay permutes the same draws, so the swapped fight is exactly as likely: no side
gains by where it stands. The exact odds swap exactly.
"""

from __future__ import annotations

import copy
import math
import types
from fractions import Fraction

import numpy as np
import pytest

from combatsim.exp import engine as exp_engine
from combatsim.exp import reference as exp_reference
from combatsim.exp.api import combatant_table
from combatsim.fight_odds import fight_odds
from combatsim.rng import ItemStream
from combatsim.scenario import example_path, load, ruleset_module, validate
from combatsim.tss import engine as tss_engine
from combatsim.tss import reference as tss_reference
from combatsim.tss.api import fight_table
from combatsim.tss.engine import R_HAS_RESOLVE

RUNS = [100_000, pytest.param(1_000_000, marks=pytest.mark.slow)]


# --- scenarios ------------------------------------------------------------------------------------


def scenario(ruleset: str, sides: list[list[dict]], **options):
    document = {"ruleset": ruleset, "name": "fairness", "options": options,
                "sides": [{"name": f"side {index}", "members": copy.deepcopy(members)}
                          for index, members in enumerate(sides)]}
    return validate(document, "fairness", "fairness")


def example(name: str):
    return load(example_path(name))


def swapped(original):
    """The same scenario with its two sides' places exchanged (members keep their order)."""
    document = copy.deepcopy(original.document)
    document["sides"] = document["sides"][::-1]
    return validate(document, original.file, original.name)


def creature(hit_points: int, armour_rating: int, bonus: int, damage: str, weapon_type: str = "A",
             maximum_roll: int = 900, ammunition: int | None = None) -> dict:
    weapon = {"name": "w", "type": weapon_type, "damage": damage}
    if ammunition is not None:
        weapon["ammunition"] = ammunition
    return {"kind": "creature", "hit_points": hit_points, "armour_rating": armour_rating, "bonus": bonus,
            "maximum_roll": maximum_roll, "weapon": weapon}


EXP_DUELLIST = creature(14, 600, 150, "2d6", weapon_type="D", ammunition=30)
EXP_GUNNER = creature(9, 560, 120, "1d6", weapon_type="automatic", ammunition=45)
EXP_BRAWLER = creature(12, 620, 180, "1d8+1")
EXP_SLUG = creature(6, 500, 90, "1d4", weapon_type="B", ammunition=8)

TSS_FIGHTER = {"skill": "14/7/3", "action_check": "+13/12/6/3", "actions_per_round": 2, "durability": [6, 6, 3],
               "resolve": "10/5/2", "weapon": {"damage": "d4s/d4w/d4+1w", "class": "LI", "quality": "good"},
               "armour": {"dice": {"LI": "d4"}, "quality": "ordinary"}}
TSS_SHOOTER = {"skill": "12/6/3", "action_check": "+12/11/5/2", "actions_per_round": 1, "durability": [5, 5, 2],
               "defence_steps": 1, "weapon": {"damage": "d4w/d6w/d4m", "class": "En"}}
TSS_THUG = {"skill": "13/6/3", "action_check": "+12/11/5/2", "actions_per_round": 1, "durability": [7, 7, 3],
            "weapon": {"damage": "d6s/d4w/d4+1w", "class": "LI", "quality": "marginal"},
            "armour": {"dice": {"En": "d4"}, "quality": "good"}}

#: Example scenarios, mirror matches (one a side and identical teams) and unequal teams.
SWAPS = {
    "exp_bob_too": lambda: example("exp_bob_too"),
    "exp_mirror": lambda: scenario("exp", [[EXP_DUELLIST], [EXP_DUELLIST]]),
    "exp_team_mirror": lambda: scenario("exp", [[EXP_GUNNER, EXP_BRAWLER], [EXP_GUNNER, EXP_BRAWLER]],
                                        unit_limit=40),
    "exp_teams": lambda: scenario("exp", [[EXP_DUELLIST, EXP_SLUG], [EXP_GUNNER, EXP_SLUG, EXP_SLUG]]),
    "tss_alex_vs_thug": lambda: example("tss_alex_vs_thug"),
    "tss_mirror": lambda: scenario("tss", [[TSS_FIGHTER], [TSS_FIGHTER]], max_rounds=6),
    "tss_team_mirror": lambda: scenario("tss", [[TSS_SHOOTER, TSS_FIGHTER], [TSS_SHOOTER, TSS_FIGHTER]],
                                        max_rounds=8),
    "tss_teams": lambda: scenario("tss", [[TSS_FIGHTER, TSS_SHOOTER], [TSS_THUG, TSS_THUG, TSS_SHOOTER]],
                                  max_rounds=8),
}
MIRRORS = ("exp_mirror", "exp_team_mirror", "tss_mirror", "tss_team_mirror")


# --- statistics -----------------------------------------------------------------------------------


def run(fight, n: int, seed: int):
    return ruleset_module(fight.ruleset).run(fight.spec, n=n, seed=seed, backend="auto", threads=None)


def independent_sigmas(a: int, b: int, n: int) -> float:
    """|a - b| in standard errors of the difference of two independent binomial counts out of n."""
    error = math.sqrt(a * (n - a) / n + b * (n - b) / n)
    return abs(a - b) / error if error else (0.0 if a == b else math.inf)


def paired_sigmas(a: int, b: int, n: int) -> float:
    """|a - b| in standard errors, for two outcomes' counts of one multinomial run of n."""
    error = math.sqrt(a + b - (a - b) ** 2 / n)
    return abs(a - b) / error if error else (0.0 if a == b else math.inf)


def swap_sigmas(fight, n: int) -> dict[str, float]:
    """Each side's wins against the other side's in the swapped run, and the draws, in sigmas."""
    one, other = run(fight, n, seed=101), run(swapped(fight), n, seed=202)
    assert one.fights == other.fights == n
    return {"wins side 0": independent_sigmas(one.wins[0], other.wins[1], n),
            "wins side 1": independent_sigmas(one.wins[1], other.wins[0], n),
            "draws": independent_sigmas(one.draws, other.draws, n)}


@pytest.mark.parametrize("n", RUNS)
@pytest.mark.parametrize("name", list(SWAPS))
def test_swapping_the_sides_swaps_the_results(name, n):
    sigmas = swap_sigmas(SWAPS[name](), n)
    assert max(sigmas.values()) <= 5, sigmas


@pytest.mark.parametrize("n", RUNS)
@pytest.mark.parametrize("name", MIRRORS)
def test_mirror_match_splits_evenly(name, n):
    result = run(SWAPS[name](), n, seed=303)
    decided = result.wins[0] + result.wins[1]
    assert 0.2 * n < decided and paired_sigmas(*result.wins, n) <= 5, (result.wins, result.draws)


# --- outcome by outcome: the reference replays a fight's draws with the sides exchanged ----------


class RecordedStream:
    """An item stream that records every draw it makes: (what was asked, the value)."""

    def __init__(self, seed: int, index: int) -> None:
        self.stream = ItemStream(seed, index)
        self.draws: list[tuple[tuple, int]] = []

    def _keep(self, asked: tuple, value: int) -> int:
        self.draws.append((asked, value))
        return value

    def die(self, sides: int) -> int:
        return self._keep(("die", sides), self.stream.die(sides))

    def roll(self, count: int, sides: int, modifier: int = 0) -> int:
        return self._keep(("roll", count, sides, modifier), self.stream.roll(count, sides, modifier))

    def word(self) -> int:
        return self._keep(("word",), self.stream.word())


class ScriptedStream:
    """An item stream that answers from a script, checking that each draw asks what the script holds."""

    def __init__(self, draws: list[tuple[tuple, int]]) -> None:
        self.draws = list(draws)
        self.used = 0

    def _next(self, asked: tuple) -> int:
        expected, value = self.draws[self.used]
        assert asked == expected, (self.used, asked, expected)
        self.used += 1
        return value

    def die(self, sides: int) -> int:
        return self._next(("die", sides))

    def roll(self, count: int, sides: int, modifier: int = 0) -> int:
        return self._next(("roll", count, sides, modifier))

    def word(self) -> int:
        return self._next(("word",))


def recorded_fights(monkeypatch, module, kernel, seed: int, fights: int):
    """Run ``kernel`` (a reference fight with its stream patched) fight by fight: (draws, winner, length)."""
    streams: list[RecordedStream] = []
    monkeypatch.setattr(module, "ItemStream", lambda s, i: streams.append(RecordedStream(s, i)) or streams[-1])
    outcomes = [kernel(seed, index) for index in range(fights)]
    return [(stream.draws, *outcome) for stream, outcome in zip(streams, outcomes, strict=True)]


def replayed_fight(monkeypatch, module, kernel, draws):
    """(winner, length, counts) of ``kernel`` fed ``draws``, all of which it must use."""
    script = ScriptedStream(draws)
    monkeypatch.setattr(module, "ItemStream", lambda s, i: script)
    outcome = kernel(0, 0)
    assert script.used == len(draws)
    return outcome


#: Where the EXP kernel below gets a fight's stream: patched to record or replay the draws.
EXP_DICE = types.SimpleNamespace(ItemStream=ItemStream)


def exp_kernel(table, spec):
    """The reference fight (the EXP engine), its dice drawn from ``EXP_DICE.ItemStream(seed, index)``."""
    def fight(seed, index):
        stream = EXP_DICE.ItemStream(seed, index)
        counts = np.zeros(exp_engine.FIGHT_COUNTS + spec["unit_limit"] + len(table), dtype=np.int64)
        winner, units = np.zeros(1, dtype=np.int8), np.zeros(1, dtype=np.int32)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(exp_engine, "stream_resume", lambda rng, *position: None)
            patch.setattr(exp_engine, "stream_die", lambda rng, sides, threshold: stream.die(int(sides)))
            patch.setattr(exp_engine, "stream_roll", lambda rng, count, sides, threshold, modifier:
                          stream.roll(int(count), int(sides), int(modifier)))
            exp_reference.fight(seed, index, 1, table, spec["unit_limit"], spec["hit_on_equal"], spec["critical"],
                                counts, winner, units)
        return int(winner[0]), int(units[0]), counts
    return fight


def exp_turns(table, draws):
    """A one-against-one fight's draws cut into units, each [(combatant, its turn's draws)].

    A turn is the target die and one unit of fire (docs/exp.md, `exp.fight`): per to-hit roll a
    kilodie and the damage dice (a burst: a d4 and three rounds' dice), as ammunition allows.
    """
    shots = [int(row[exp_engine.C_SHOTS]) for row in table]
    units, position = [], 0
    while position < len(draws) and any(shots):
        unit = []
        for member, row in enumerate(table):
            if shots[member] == 0:
                continue
            rolls = int(row[exp_engine.C_ROLLS])
            if shots[member] > 0:
                rolls = min(rolls, shots[member])
                shots[member] -= rolls
            size = 1 + rolls * (5 if row[exp_engine.C_AUTOMATIC] else 2)
            turn = draws[position:position + size]
            assert turn[0][0] == ("die", 1)  # the target die of one foe
            unit.append((member, turn))
            position += size
        units.append(unit)
    assert position == len(draws)
    return units


EXP_REPLAYS = {
    "exp_bob_too": lambda: example("exp_bob_too"),
    "exp_mirror": lambda: SWAPS["exp_mirror"](),
    "exp_gunner_against_brawler": lambda: scenario("exp", [[EXP_GUNNER], [EXP_BRAWLER]], unit_limit=12),
}


@pytest.mark.parametrize("name", list(EXP_REPLAYS))
def test_exp_fight_replayed_with_the_sides_exchanged_is_the_mirrored_fight(monkeypatch, name):
    """Attacks in a unit are simultaneous, so the order in which the sides take their turns cannot
    matter: each side's turns, replayed as the other side, give the mirrored fight, counts and all."""
    fight = EXP_REPLAYS[name]()
    other = swapped(fight)
    table = combatant_table(*fight.spec["sides"])
    swapped_table = combatant_table(*other.spec["sides"])
    recorded = recorded_fights(monkeypatch, EXP_DICE, exp_kernel(table, fight.spec), seed=7, fights=1000)
    winners = set()
    for draws, winner, units, counts in recorded:
        exchanged = [draw for unit in exp_turns(table, draws) for _, turn in reversed(unit) for draw in turn]
        mirrored_winner, mirrored_units, mirrored = replayed_fight(monkeypatch, EXP_DICE,
                                                                  exp_kernel(swapped_table, other.spec), exchanged)
        assert (mirrored_winner, mirrored_units) == (1 - winner if winner >= 0 else winner, units)
        for side0, side1 in ((exp_engine.FIGHT_WINS_SIDE0, exp_engine.FIGHT_WINS_SIDE1),
                             (exp_engine.FIGHT_DAMAGE_SIDE0, exp_engine.FIGHT_DAMAGE_SIDE1),
                             (exp_engine.FIGHT_AMMUNITION_SIDE0, exp_engine.FIGHT_AMMUNITION_SIDE1),
                             (exp_engine.FIGHT_ROLLS_SIDE0, exp_engine.FIGHT_ROLLS_SIDE1),
                             (exp_engine.FIGHT_HITS_SIDE0, exp_engine.FIGHT_HITS_SIDE1)):
            assert (mirrored[side0], mirrored[side1]) == (counts[side1], counts[side0])
        assert mirrored[exp_engine.FIGHT_DRAWS] == counts[exp_engine.FIGHT_DRAWS]
        assert mirrored[exp_engine.FIGHT_MUTUAL] == counts[exp_engine.FIGHT_MUTUAL]
        winners.add(winner)
    assert {0, 1} <= winners  # both sides win some of the fights replayed


#: Where the TSS kernel below gets a fight's stream: patched to record or replay the draws.
TSS_DICE = types.SimpleNamespace(ItemStream=ItemStream)


def tss_kernel(spec):
    """The reference fight (the TSS engine), its dice drawn from ``TSS_DICE.ItemStream(seed, index)``."""
    table, count, classes = fight_table(*spec["sides"])
    max_rounds = spec["max_rounds"]

    def fight(seed, index):
        stream = TSS_DICE.ItemStream(seed, index)
        counts = np.zeros(tss_engine.FIGHT_COUNTS + max_rounds + 1 + count, dtype=np.int64)
        winner, rounds = np.zeros(1, dtype=np.int8), np.zeros(1, dtype=np.int32)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(tss_engine, "stream_resume", lambda rng, *position: None)
            patch.setattr(tss_engine, "stream_die", lambda rng, sides, threshold: stream.die(int(sides)))
            patch.setattr(tss_engine, "stream_roll", lambda rng, count, sides, threshold, modifier:
                          stream.roll(int(count), int(sides), int(modifier)))
            patch.setattr(tss_engine, "stream_word", lambda rng: stream.word())
            tss_reference.fight(seed, index, 1, table, count, classes, max_rounds, spec["one_step_shift"], counts,
                                winner, rounds)
        return int(winner[0]), int(rounds[0]), counts
    return fight, table, count


def tss_exchanged(table, count, draws):
    """A one-against-one fight's draws with each round's opening draws of the two characters exchanged.

    A round opens with each character's Resolve-physical d20 (if it has that score), action check
    d20, situation roll and tie-break word, in index order (docs/tss.md, `tss.fight`); its attacks
    follow in the order of play, which the swap keeps. Returns the draws and whether two tie-break
    words were ever equal (the one case the index, not the die, settles).
    """
    width = len(table) // count
    opening = [3 + int(table[i * width + R_HAS_RESOLVE]) for i in range(count)]
    words = [position for position, (asked, _) in enumerate(draws) if asked == ("word",)]
    assert len(words) % 2 == 0
    exchanged, tie = [], False
    for round_index in range(0, len(words), 2):
        first_end, second_end = words[round_index] + 1, words[round_index + 1] + 1
        first = draws[first_end - opening[0]:first_end]
        second = draws[first_end:second_end]
        assert len(second) == opening[1]
        attacks_end = words[round_index + 2] + 1 - opening[0] if round_index + 2 < len(words) else len(draws)
        exchanged += second + first + draws[second_end:attacks_end]
        tie |= first[-1][1] == second[-1][1]
    return exchanged, tie


TSS_REPLAYS = {
    "tss_alex_vs_thug": lambda: example("tss_alex_vs_thug"),
    "tss_mirror": lambda: SWAPS["tss_mirror"](),
    "tss_thug_against_fighter": lambda: scenario("tss", [[TSS_THUG], [TSS_FIGHTER]], max_rounds=5),
}


@pytest.mark.parametrize("name", list(TSS_REPLAYS))
def test_tss_fight_replayed_with_the_sides_exchanged_is_the_mirrored_fight(monkeypatch, name):
    """Within a phase the action check score and then the seeded tie-break die decide who acts
    first, never the side: each character's draws, replayed with the sides exchanged, give the
    mirrored fight. In a mirror match, ties on the score are common and the die settles them."""
    fight = TSS_REPLAYS[name]()
    other = swapped(fight)
    kernel, table, count = tss_kernel(fight.spec)
    swapped_kernel = tss_kernel(other.spec)[0]
    assert count == 2
    recorded = recorded_fights(monkeypatch, TSS_DICE, kernel, seed=5, fights=1000)
    winners = set()
    for draws, winner, rounds, counts in recorded:
        exchanged, tie = tss_exchanged(table, count, draws)
        assert not tie
        mirrored_winner, mirrored_rounds, mirrored = replayed_fight(monkeypatch, TSS_DICE, swapped_kernel,
                                                                    exchanged)
        assert (mirrored_winner, mirrored_rounds) == (1 - winner if winner >= 0 else winner, rounds)
        assert list(mirrored[:2]) == [counts[1], counts[0]]
        assert list(mirrored[2:-count]) == list(counts[2:-count])
        assert list(mirrored[-count:]) == list(counts[-count:])[::-1]  # who stands, the sides exchanged
        winners.add(winner)
    assert {0, 1} <= winners


# --- exact odds -----------------------------------------------------------------------------------


def test_exact_odds_of_the_exp_example_swap_exactly():
    fight = example("exp_bob_too")
    odds, swapped_odds = fight_odds(fight, method="exact"), fight_odds(swapped(fight), method="exact")
    assert swapped_odds.wins == odds.wins[::-1] and odds.wins[0] != odds.wins[1]
    assert (swapped_odds.draws, swapped_odds.unfinished, swapped_odds.length) == \
        (odds.draws, odds.unfinished, odds.length)


def test_exact_odds_of_a_tss_fight_swap_exactly():
    """The TSS example with shorter tracks (the example's own odds take minutes): the characters'
    action check scores differ, so no tie-break word is compared and the swap is exact."""
    fight = load(example_path("tss_alex_vs_thug"), ["sides[0].members[0].durability=[4, 4, 2]",
                                                    "sides[1].members[0].durability=[5, 5, 3]"])
    odds, swapped_odds = fight_odds(fight, method="exact"), fight_odds(swapped(fight), method="exact")
    assert swapped_odds.wins == odds.wins[::-1] and odds.wins[0] != odds.wins[1]
    assert (swapped_odds.unfinished, swapped_odds.length) == (odds.unfinished, odds.length)


def test_exact_odds_of_a_tss_mirror_differ_by_equal_tie_break_words_alone():
    """Two characters with the same action check score: the tie-break die (a 32-bit word) decides,
    and only two equal words fall back on the index (docs/tss.md, section 2), at most a chance of
    2**-32 a round, favouring side 0."""
    member = {key: value for key, value in TSS_FIGHTER.items() if key != "armour"} | {"durability": [3, 3, 2]}
    fight = scenario("tss", [[member], [member]], max_rounds=3)
    odds = fight_odds(fight, method="exact")
    assert 0 < odds.wins[0] - odds.wins[1] <= Fraction(3, 2**32)
