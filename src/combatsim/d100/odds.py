"""Exact d100 odds of one attack, by counting d100 faces (no simulation).

``combatsim odds d100`` (combatsim.d100.cli) takes the flags of ``combatsim attack d100`` and
prints, with the same keys as ``attack d100 --json``: the probability of each tier, and for each wound severity the
expected number of such wounds per attack (a probability for one weapon; with dual wield both
weapons roll damage, so up to two wounds). ``lethal`` includes instant deaths, as in the counts.
"""

from __future__ import annotations

from fractions import Fraction

from combatsim.d100 import model
from combatsim.d100.api import AttackParameters

D100 = 100


def attack_odds(parameters: AttackParameters) -> dict[str, Fraction]:
    tiers = [model.tier(roll, parameters.full_skill) for roll in range(1, D100 + 1)]
    odds = {name: Fraction(tiers.count(index), D100) for index, name in enumerate(model.TIER_NAMES)}
    successes = odds["critical_success"] + odds["hard_success"] + odds["success"]
    lethal_bar, serious_bar = model.damage_bars(parameters.lethality, parameters.serious_threshold,
                                                parameters.nonlethal)
    weapons = parameters.weapons  # each weapon rolls its own damage d100 on a success
    odds["lethal"] = weapons * successes * Fraction(lethal_bar, D100)
    odds["serious"] = weapons * successes * Fraction(serious_bar - lethal_bar, D100)
    odds["flesh"] = weapons * successes * Fraction(D100 - serious_bar, D100)
    odds["instant_death"] = weapons * odds["critical_success"] * Fraction(lethal_bar, D100)
    return odds
