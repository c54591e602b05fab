"""d100 reference kernels: plain loops, the executable specification (docs/d100.md).

Kernel signature (shared by the Numba and Cython twins):
``kernel(seed, start, count, *params, counts, *outputs)``. The parameters are the already-derived
rule values (full skill, final lethality, ...; :mod:`combatsim.d100.model`) or, for fights, the
combatant table built by :mod:`combatsim.d100.api`. The rules are the engine's
(:mod:`combatsim.d100.engine`): each attack's outcome is its ``attack_outcome``, which this loop
feeds the attacks' values; the fight is its ``fight``: reset, then one pass a step with every
combatant's scripted policy, until the end.
"""

from __future__ import annotations

from combatsim.d100.engine import attack_outcome, count_attack, fight
from combatsim.d100.layout import ATTACK_SIDES
from combatsim.rng import dense_die

__all__ = ["attack", "fight"]


def _at(values, k: int) -> int:
    return int(values[k] if len(values) > 1 else values[0])


def attack(seed, start, count, full_skill, lethality, serious, nonlethal, lethality2, serious2, nonlethal2,
           weapons, counts, tier_out, wound_out, wound2_out) -> None:
    """Attacks with damage (docs/d100.md, sections 3 and 4).

    Attack ``start + k`` draws one value 1..1000000 from the dense layout, whose 0-based value is
    the attack d100, the damage d100 and the second weapon's damage d100
    (engine.split_attack_value). ``counts`` gains the five tiers (0..4), then lethal (instant
    deaths included), serious, flesh and instant deaths (5..8), over every weapon that dealt
    damage. ``weapons`` is 2 for a dual-wield attack (both weapons deal damage on a success), else 1.
    """
    for k in range(count):
        tier, wound, wound2 = attack_outcome(
            dense_die(seed, start + k, ATTACK_SIDES) - 1, _at(full_skill, k), _at(lethality, k), _at(serious, k),
            _at(nonlethal, k), _at(lethality2, k), _at(serious2, k), _at(nonlethal2, k), _at(weapons, k))
        count_attack(counts, tier, wound, wound2)
        if len(tier_out):
            tier_out[k] = tier
        if len(wound_out):
            wound_out[k] = wound
        if len(wound2_out):
            wound2_out[k] = wound2
