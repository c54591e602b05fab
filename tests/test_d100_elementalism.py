"""d100 Elementalism (docs/d100.md): a blast is attacked with the Arcane score as its pool, a ranged
attack for cover with no distant modifier; everything else is as for a weapon."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from combatsim.d100 import layout
from combatsim.d100.api import Combatant, Weapon, attack_parameters, combatant_row, simulate_attacks
from combatsim.d100.prepared import Attack
from combatsim.fight_odds import fight_odds
from combatsim.scenario import ScenarioError, validate

BLAST = Weapon(35, 2, category="elementalism")


def test_a_blast_attacks_with_arcane_and_presses_with_the_pool():
    """The mage's attack tiers are those of a pool-70 ranged attacker (its pistol twin, not distant);
    press and disengage stay on its Fighting pool."""
    mage = combatant_row(Combatant(side=0, fighting=40, arcane=70, weapon=BLAST))
    pistol = combatant_row(Combatant(side=0, fighting=40, pool=70, weapon=Weapon(35, 2, category="pistol")))
    fighter = combatant_row(Combatant(side=0, fighting=40, weapon=Weapon(35, 2, category="pistol")))
    attack = slice(layout.C_ATTACK, layout.C_ATTACK + 4 * layout.ATTACK_STEPS)
    assert mage[attack] == pistol[attack] != fighter[attack]
    press = slice(layout.C_PRESS, layout.C_PRESS + 5)
    assert mage[press] == fighter[press]
    assert mage[layout.C_RANGED] == 1
    # no distant modifier applies to a blast
    far = combatant_row(Combatant(side=0, fighting=40, arcane=70, weapon=BLAST, distant=True))
    assert far[attack] == mage[attack]


def test_an_elementalism_weapon_needs_arcane():
    with pytest.raises(ValueError, match=r"^mage\.arcane: an elementalism weapon attacks with the Arcane score"):
        combatant_row(Combatant(side=0, fighting=40, weapon=BLAST), name="mage")
    document = {"ruleset": "d100", "name": "m", "sides": [
        {"members": [{"fighting": 40, "weapon": {"lethality": 35, "category": "elementalism"}}]},
        {"members": [{"fighting": 40, "weapon": {"lethality": 35}}]}]}
    with pytest.raises(ScenarioError, match=r"sides\[0\]\.members\[0\].*arcane"):
        validate(document, "m", "m")
    document["sides"][0]["members"][0]["arcane"] = 65
    assert validate(document, "m", "m").spec["combatants"][0].arcane == 65


def test_attack_with_arcane_is_an_attack_with_that_pool():
    blast = simulate_attacks(20_000, arcane=65, lethality=35, severity=2, modifiers=["cover"], seed=5, outcomes=True)
    plain = simulate_attacks(20_000, pool=65, lethality=35, severity=2, modifiers=["cover"], seed=5, outcomes=True)
    np.testing.assert_array_equal(blast.tier, plain.tier)
    assert blast.counts == plain.counts and blast.full_skill == plain.full_skill == 65 - 20  # cover: -20
    assert Attack(arcane=65, lethality=35).odds() == Attack(pool=65, lethality=35).odds()


def test_attack_arcane_bad_input_is_one_line():
    with pytest.raises(ValueError, match=r"^give pool .* or arcane .*exactly one"):
        attack_parameters(pool=50, arcane=60, lethality=30)
    with pytest.raises(ValueError, match=r"^give pool"):
        attack_parameters(lethality=30)
    with pytest.raises(ValueError, match=r"^modifier: no distant modifier applies to an Elementalism blast"):
        attack_parameters(arcane=60, lethality=30, modifiers=["distant_pistol"])
    with pytest.raises(ValueError, match=r"^arcane must be"):
        attack_parameters(arcane=10_000, lethality=30)


def test_cli_attack_and_odds_take_arcane():
    run = [sys.executable, "-m", "combatsim"]
    out = subprocess.run([*run, "odds", "d100", "--arcane", "65", "--lethality", "35"], capture_output=True, text=True)
    same = subprocess.run([*run, "odds", "d100", "--pool", "65", "--lethality", "35"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout == same.stdout
    both = subprocess.run([*run, "attack", "d100", "--arcane", "65", "--pool", "3", "--lethality", "35"],
                          capture_output=True, text=True)
    assert both.returncode == 2 and "--pool: not allowed with argument --arcane" in both.stderr


def test_exact_fight_odds_of_a_mage_equal_its_pistol_twin():
    """A blast is a ranged weapon attacked with Arcane: the exact odds of a mage are those of a
    fighter whose pool is its Arcane with a pistol (neither distant, both attacking only)."""
    def spec(mage: dict) -> object:
        return validate({"ruleset": "d100", "name": "m", "options": {"max_rounds": 3}, "sides": [
            {"members": [{**mage, "policy": {"attack": 100, "quick_attack": 0, "defend": 0, "flee": 0, "press": 0,
                                              "disengage": 0, "charge": 0, "take_cover": 0}}]},
            {"members": [{"fighting": 55, "weapon": {"lethality": 30}, "torso": "light"}]}]}, "m", "m")

    mage = fight_odds(spec({"fighting": 30, "arcane": 60, "weapon": {"lethality": 35, "category": "elementalism"}}))
    twin = fight_odds(spec({"fighting": 30, "pool": 60, "weapon": {"lethality": 35, "category": "pistol"}}))
    assert mage.wins == twin.wins and mage.draws == twin.draws
    plain = fight_odds(spec({"fighting": 30, "weapon": {"lethality": 35, "category": "pistol"}}))
    assert plain.wins != mage.wins
