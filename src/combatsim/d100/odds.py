"""Exact d100 odds of one attack, by counting d100 faces (no simulation).

``combatsim odds d100`` (combatsim.d100.cli) takes the flags of ``combatsim attack d100`` and
prints, with the same keys as ``attack d100 --json``: the probability of each tier, and for each wound severity the
expected number of such wounds per attack (a probability for one weapon; with dual wield both
weapons roll damage, so up to two wounds). ``lethal`` includes instant deaths, as in the counts.
"""

from __future__ import annotations

from fractions import Fraction

from combatsim.d100 import engine, model
from combatsim.d100.api import AttackParameters
from combatsim.d100.layout import D100, FLESH, LETHAL, SERIOUS


def tier_law(bars: tuple[int, int, int, int]) -> list[Fraction]:
    """The chance of each tier (CRITICAL_SUCCESS..CRITICAL_FAILURE) of an attack d100 against a
    target given by its bars (the engine's tier_bars), by the engine's tier rule."""
    faces = [0] * len(model.TIER_NAMES)
    for roll in range(1, D100 + 1):
        faces[engine._tier(roll, *bars)] += 1
    return [Fraction(count, D100) for count in faces]


def wound_law(lethal_bar: int, serious_bar: int) -> dict[int, Fraction]:
    """The wound one damage d100 of a successful attack deals, by the weapon's damage bars (the
    engine's damage_bars): lethal at or below the lethal bar, serious at or below the other, else
    flesh. ``combatsim odds d100`` and the fight-odds chain (combatsim.fight_odds.d100) both take
    an attack's law from here and ``tier_law``."""
    lethal = min(max(lethal_bar, 0), D100)
    serious = min(max(serious_bar, lethal), D100)
    return {LETHAL: Fraction(lethal, D100), SERIOUS: Fraction(serious - lethal, D100),
            FLESH: Fraction(D100 - serious, D100)}


def attack_odds(parameters: AttackParameters) -> dict[str, Fraction]:
    odds = dict(zip(model.TIER_NAMES, tier_law(engine.tier_bars(parameters.full_skill)), strict=True))
    successes = odds["critical_success"] + odds["hard_success"] + odds["success"]
    wounds = wound_law(*model.damage_bars(parameters.lethality, parameters.serious_threshold, parameters.nonlethal))
    weapons = parameters.weapons  # each weapon rolls its own damage d100 on a success
    odds["lethal"] = weapons * successes * wounds[LETHAL]
    odds["serious"] = weapons * successes * wounds[SERIOUS]
    odds["flesh"] = weapons * successes * wounds[FLESH]
    odds["instant_death"] = weapons * odds["critical_success"] * wounds[LETHAL]
    return odds
