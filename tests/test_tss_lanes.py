"""TSS fight kernels: any count, tiny ones included, gives the reference's results fight by fight
and count by count, and a range of fights split anywhere gives one call's results."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from combatsim.registry import get_kernel
from combatsim.tss.api import Combatant, fight_table
from combatsim.tss.engine import FIGHT_COUNTS, R_STUN
from combatsim.tss.model import Armour, Weapon


def run_fight(backend, seed, start, count, table, n_characters, n_classes, max_rounds, one_step, outputs=True):
    counts = np.zeros(FIGHT_COUNTS + max_rounds + 1 + n_characters, dtype=np.int64)  # then who stood
    length = count if outputs else 0
    winner = np.full(length, -2, dtype=np.int8)
    rounds = np.full(length, -2, dtype=np.int32)
    get_kernel("tss.fight", backend)(seed, start, count, table, n_characters, n_classes, max_rounds, one_step,
                                     counts, winner, rounds)
    return counts, winner, rounds


def _sides():
    """Two against two with mixed durability, so fights end in very different rounds (lanes restart
    out of step) and some reach max_rounds (draws)."""
    sword = Weapon.make("d6+1w/d4+1w/d4s", "LI", "ordinary")
    club = Weapon.make("d4+1s/d4s/d2s", "En", "marginal")
    armour = Armour.make({"LI": "d4", "En": "d6"}, "good")
    a = [
        Combatant(skill="14/7/3", action_check="13/6/3", weapon=sword, durability=(10, 10, 5), actions_per_round=2,
                  armour=armour),
        Combatant(skill="10/5/2", action_check="10/5/2", weapon=club, durability=(4, 4, 2)),
    ]
    b = [
        Combatant(skill="12/6/3", action_check="12/6/3", weapon=sword, durability=(8, 8, 4), resolve="12/6/3"),
        Combatant(skill="9/4/2", action_check="9/4/2", weapon=club, durability=(12, 12, 6), armour=armour,
                  defence_steps=1),
    ]
    return a, b


@pytest.mark.parametrize("compiled", ["numba", "cython"])
@pytest.mark.parametrize("count", [0, 1, 2, 5, 101])
@pytest.mark.parametrize("max_rounds", [1, 3, 30])
def test_lanes_equal_reference_for_any_count(compiled, count, max_rounds):
    table, n_characters, n_classes = fight_table(*_sides())
    for seed, start in ((7, 0), (2**64 - 1, 2**40 + 5)):
        expected = run_fight("python", seed, start, count, table, n_characters, n_classes, max_rounds, True)
        got = run_fight(compiled, seed, start, count, table, n_characters, n_classes, max_rounds, True)
        for a, b in zip(got, expected, strict=True):
            np.testing.assert_array_equal(a, b)
        # Without outputs the counts (rounds histogram included) are the same.
        counts_only = run_fight(compiled, seed, start, count, table, n_characters, n_classes, max_rounds, True,
                                outputs=False)[0]
        np.testing.assert_array_equal(counts_only, expected[0])


@pytest.mark.parametrize("compiled", ["numba", "cython"])
def test_lanes_split_anywhere_equal_one_call(compiled):
    """Fight i is a pure function of (seed, i, inputs): splitting the range at any point changes nothing."""
    table, n_characters, n_classes = fight_table(*_sides())
    whole = run_fight(compiled, 11, 3, 8, table, n_characters, n_classes, 20, False)
    for cut in (0, 1, 5):
        head = run_fight(compiled, 11, 3, cut, table, n_characters, n_classes, 20, False)
        tail = run_fight(compiled, 11, 3 + cut, 8 - cut, table, n_characters, n_classes, 20, False)
        np.testing.assert_array_equal(head[0] + tail[0], whole[0])
        np.testing.assert_array_equal(np.concatenate([head[1], tail[1]]), whole[1])
        np.testing.assert_array_equal(np.concatenate([head[2], tail[2]]), whole[2])


def test_fight_table_reuse_sees_every_change():
    """fight_table reuses the table it built for the same Combatant objects, but a reused table is
    a fresh array, an Armour's changed dice and a list's changed durability show, and a failed
    check is made again."""
    a, b = _sides()
    first = fight_table(a, b)
    first[0][:] = -1  # the caller's copy only
    again = fight_table(a, b)
    np.testing.assert_array_equal(again[0], fight_table(*_sides())[0])
    assert again[1:] == first[1:]

    armour = a[0].armour
    armour.dice["LI"] = armour.dice["En"]  # d6 where it was d4: the table must follow
    changed = fight_table(a, b)[0]
    assert not np.array_equal(changed, again[0])
    rebuilt = fight_table([replace(m) for m in a], [replace(m) for m in b])[0]  # new objects: built afresh
    np.testing.assert_array_equal(changed, rebuilt)

    durability = [10, 10, 5]
    listed = [Combatant(skill="14/7/3", action_check="13/6/3", weapon=a[0].weapon, durability=durability)]
    assert fight_table(listed, b)[0][R_STUN] == 10
    durability[0] = 3
    assert fight_table(listed, b)[0][R_STUN] == 3

    broken = [Combatant(skill="14/7/3", action_check="13/6/3", weapon=a[0].weapon, durability=(0, 10, 5))]
    for _ in range(2):
        with pytest.raises(ValueError, match=r"side_a\[0\]\.durability stun"):
            fight_table(broken, b)
