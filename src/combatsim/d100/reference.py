"""d100 reference kernels: plain loops, the executable specification (docs/d100.md).

Kernel signature (shared by the Numba and Cython twins):
``kernel(seed, start, count, *params, counts, *outputs)``. Rule arithmetic comes from
:mod:`combatsim.d100.model`; the parameters are the already-derived rule values (full skill,
final lethality, ...) or, for fights, the combatant table built by :mod:`combatsim.d100.api`.
The fight is the engine's (:mod:`combatsim.d100.engine`): reset, then one pass a step with every
combatant's scripted policy, until the end.
"""

from __future__ import annotations

from combatsim.d100 import model
from combatsim.d100.engine import fight
from combatsim.d100.layout import A_FLESH, A_INSTANT_DEATH, A_LETHAL, A_SERIOUS, ATTACK_SIDES
from combatsim.rng import dense_die

__all__ = ["attack", "fight"]


def _at(values, k: int) -> int:
    return int(values[k] if len(values) > 1 else values[0])


def attack(seed, start, count, full_skill, lethality, serious, nonlethal, lethality2, serious2, nonlethal2,
           weapons, counts, tier_out, wound_out, wound2_out) -> None:
    """Attacks with damage (d100-combat-math.txt, "Roll result tiers", "Damage resolution").

    Attack ``start + k`` draws one value 1..1000000 from the dense layout and splits it into the
    attack d100, the damage d100 and the second weapon's damage d100 (model.split_attack_value).
    ``counts`` gains the five tiers (0..4), then lethal (instant deaths included), serious,
    flesh and instant deaths (5..8), over every weapon that dealt damage. ``weapons`` is 2 for a
    dual-wield attack (both weapons deal damage on a success), else 1.
    """
    for k in range(count):
        roll, damage, damage2 = model.split_attack_value(dense_die(seed, start + k, ATTACK_SIDES) - 1)
        tier = model.tier(roll, _at(full_skill, k))
        counts[tier] += 1
        wounds = [model.NO_WOUND, model.NO_WOUND]
        if tier <= model.SUCCESS:
            critical = tier == model.CRITICAL_SUCCESS
            weapon_values = [
                (damage, _at(lethality, k), _at(serious, k), _at(nonlethal, k)),
                (damage2, _at(lethality2, k), _at(serious2, k), _at(nonlethal2, k)),
            ]
            for w in range(_at(weapons, k)):
                roll_w, lethal_w, serious_w, nonlethal_w = weapon_values[w]
                wounds[w] = model.wound_severity(roll_w, lethal_w, serious_w, bool(nonlethal_w), critical)
                _count_wound(counts, wounds[w])
        if len(tier_out):
            tier_out[k] = tier
        if len(wound_out):
            wound_out[k] = wounds[0]
        if len(wound2_out):
            wound2_out[k] = wounds[1]


def _count_wound(counts, wound: int) -> None:
    if wound == model.FLESH:
        counts[A_FLESH] += 1
    elif wound == model.SERIOUS:
        counts[A_SERIOUS] += 1
    elif wound >= model.LETHAL:
        counts[A_LETHAL] += 1
        if wound == model.INSTANT_DEATH:
            counts[A_INSTANT_DEATH] += 1
