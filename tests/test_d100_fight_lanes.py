"""d100 fights in lockstep lanes (docs/kernels.md, "Fights"): the Cython kernel plays
fights of up to a limit of combatants many at once, one fight per vector lane (kernels/d100/
fight_lanes.h); fight by fight it must give the reference's results, whatever the count, the
combatants, the passes or the dice."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from combatsim.d100 import api, bench, layout, model
from combatsim.d100.api import Combatant, Weapon
from combatsim.kernels.d100 import _cy
from combatsim.rng import ItemStream

from .test_d100_kernels import SEEDS, _lane_fighters, combatants, run_fight

#: The most combatants the lanes take, the fights they play at once, and the fewest fights a call
#: must ask for (fewer run the engine's fight).
FIGHTERS, LANES, MIN_FIGHTS = _cy.lockstep_fighters, _cy.lockstep_lanes, _cy.lockstep_min_fights


def assert_same_fights(seed, start, count, table, passes, max_rounds, ambush_side):
    expected = run_fight("python", seed, start, count, table, passes, max_rounds, ambush_side)
    got = run_fight("cython", seed, start, count, table, passes, max_rounds, ambush_side)
    for value, want in zip(got, expected, strict=True):
        np.testing.assert_array_equal(value, want)
    return expected


def random_fighters(rng, m):
    """m combatants, sides interleaved (each side has at least one), weapons of every kind."""
    def fighter(side):
        dual = bool(rng.integers(0, 2))
        category = str(rng.choice(["melee", "pistol", "carbine", "thrown"]))
        second = Weapon(int(rng.integers(10, 50)), 2, bool(rng.integers(0, 2)), category) if dual else None
        weights = rng.integers(0, 10, size=8) + np.eye(8, dtype=np.int64)[0]
        policy = [int(w) * 100 // int(weights.sum()) for w in weights]
        policy[0] += 100 - sum(policy)
        return Combatant(side, int(rng.integers(20, 110)), Weapon(int(rng.integers(5, 70)), 2, category=category),
                         parkour=int(rng.integers(0, 80)), perception=int(rng.integers(0, 80)),
                         second_weapon=second, two_weapon_style=2 * dual, two_gun_style=2 * dual,
                         torso=str(rng.choice(model.TORSO_COVERAGES)), helmet=bool(rng.integers(0, 2)),
                         policy=policy)

    return [fighter(0)] + [fighter(int(side)) for side in rng.integers(0, 2, size=m - 2)] + [fighter(1)]


def test_the_lockstep_limits():
    """The lanes take fights of at least 8 combatants; a 64-combatant fight (test_d100_kernels)
    still runs the engine's fight."""
    assert 8 <= FIGHTERS < api.MAX_COMBATANTS
    assert 1 <= LANES <= MIN_FIGHTS


def test_lockstep_lanes_match_the_reference_for_any_count():
    """Counts either side of the lanes' minimum and not multiples of the lanes (lanes end and
    restart out of order, the last ones idle), with and without an ambush, one to three passes,
    round limits that end fights in draws."""
    table = api.fight_table(_lane_fighters(), model.TAPERS[0])
    for count in (0, 1, MIN_FIGHTS - 1, MIN_FIGHTS, MIN_FIGHTS + LANES - 1, MIN_FIGHTS + 3 * LANES + 7):
        for passes, max_rounds, ambush_side in ((2, 6, -1), (1, 1, 0), (3, 12, 1)):
            assert_same_fights(2**63 + 99 + count, 3 * count, max(count, 0), table, passes,
                               max_rounds, ambush_side)


def test_lockstep_lanes_at_and_past_their_combatant_limit():
    """The largest fight the lanes take and the smallest they leave to the engine's fight; passes
    up to 3 and ambushes make the most dice a pass and a fight's start can draw."""
    rng = np.random.default_rng(FIGHTERS)
    for m in (2, FIGHTERS - 1, FIGHTERS, FIGHTERS + 1):
        table = api.fight_table(random_fighters(rng, m), model.TAPERS[1])
        for passes, max_rounds, ambush_side in ((3, 6, 0), (1, 4, 1), (2, 3, -1)):
            expected = assert_same_fights(int(rng.integers(0, 2**63)), int(rng.integers(0, 2**40)), MIN_FIGHTS + 5,
                                          table, passes, max_rounds, ambush_side)
            assert expected[0][layout.F_ATTACKS] > 0


@pytest.fixture(params=[True, False], ids=["int16-lanes", "int32-lanes"])
def narrow_lanes(request):
    """The Cython lanes with their int16 lanes (small tables on AVX-512 CPUs) allowed, and turned
    off so that the int32 lanes play small tables too, as they do on AVX2 CPUs."""
    _cy._lockstep_narrow(request.param)
    yield request.param
    _cy._lockstep_narrow(True)


def test_cython_lanes_at_and_past_the_int16_lanes_limit(narrow_lanes):
    """The int16 lanes hold fewer combatants than the int32 ones (their fields are narrower): the
    largest table they take and the smallest they leave to the int32 lanes, either way the
    reference's fights; so are the bench fight's, with the rejected dice it meets."""
    narrow, limit = _cy.lockstep_narrow_fighters, _cy.lockstep_fighters
    assert 4 <= narrow < limit
    rng = np.random.default_rng(narrow)
    count = _cy.lockstep_min_fights + 3
    for m in (2, 3, 4, narrow, narrow + 1):
        table = api.fight_table(random_fighters(rng, m), model.TAPERS[2])
        for passes, max_rounds, ambush_side in ((3, 5, 1), (2, 4, -1)):
            expected = assert_same_fights(int(rng.integers(0, 2**63)), int(rng.integers(0, 2**40)), count, table,
                                          passes, max_rounds, ambush_side)
            assert expected[0][layout.F_ATTACKS] > 0
    assert_same_fights(17, 0, 1500, api.fight_table(bench.FIGHTERS, model.TAPERS[0]), 2, 20, -1)


class _CountingStream(ItemStream):
    retries = 0

    def retry_word(self) -> int:
        _CountingStream.retries += 1
        return super().retry_word()


def test_lockstep_lanes_take_rejected_dice_from_the_retry_words(monkeypatch):
    """A die whose word Lemire's method rejects takes retry-domain words and the item stream goes
    on at the next word (rng.ItemStream.bounded): the reference run below meets such dice (an
    attack die is rejected about once in 4,400), and the lanes must give the same fights."""
    table = api.fight_table(bench.FIGHTERS, model.TAPERS[0])
    monkeypatch.setattr(_CountingStream, "retries", 0)
    monkeypatch.setattr("combatsim.engine.ItemStream", _CountingStream)  # the engine's item streams
    assert_same_fights(17, 0, 1500, table, 2, 20, -1)
    assert _CountingStream.retries >= 3


@st.composite
def lockstep_cases(draw):
    m = draw(st.integers(2, FIGHTERS + 1))
    sides = [0, 1, *draw(st.lists(st.integers(0, 1), min_size=m - 2, max_size=m - 2))]
    fighters = [draw(combatants(side)) for side in draw(st.permutations(sides))]
    table = api.fight_table(fighters, draw(st.sampled_from(model.TAPERS)))
    count = draw(st.integers(0, MIN_FIGHTS + 40))
    return (draw(SEEDS), draw(st.integers(0, 2**40)), count, table, draw(st.integers(1, 3)),
            draw(st.integers(1, 8)), draw(st.sampled_from([-1, 0, 1])))


@settings(max_examples=12)
@given(lockstep_cases())
def test_lockstep_lanes_agree_with_the_reference_on_random_fights(case):
    assert_same_fights(*case)


def test_the_lanes_restate_the_layout_exactly():
    """fight_lanes.h numbers the actions, its counts, its dice, the flee rule and the wound
    escalation itself: each as the layout and the engine do."""
    from combatsim.d100 import engine
    from combatsim.rng import rejection_threshold

    restated = _cy.LANE_LAYOUT
    for name in (*(n for n in restated if n.startswith("ACTION_")), "ATTACK_SIDES", "D100"):
        assert restated[name] == getattr(layout, name), name
    # the flee target's cap and step, and how many wounds escalate, as the engine's rules read them
    for name in ("TARGET_CAP", "FLEE_STEP", "FLESH_PER_SERIOUS", "SERIOUS_PER_LETHAL"):
        assert restated[name] == getattr(engine, name), name
    counts = ("F_ATTACKS", "F_LETHAL", "F_SERIOUS", "F_FLESH", "F_INSTANT_DEATH", "F_ESCALATED_SERIOUS",
              "F_ESCALATED_LETHAL")
    assert [restated[name] for name in counts] == [getattr(layout, name) - layout.F_ATTACKS for name in counts]
    assert restated["ATTACK_REJECT"] == rejection_threshold(layout.ATTACK_SIDES)
    assert restated["D100_REJECT"] == rejection_threshold(layout.D100)
    assert len([n for n in restated if n.startswith("ACTION_")]) == len(
        [n for n in dir(layout) if n.startswith("ACTION_")])
