"""Exact TSS odds of one attack, by enumerating the dice (no simulation).

``combatsim odds tss`` (combatsim.tss.cli) takes the flags of ``combatsim attack tss`` and prints, with the keys of
``attack tss --json``: the probability of each tier, the exact law of the stun, wound and mortal
damage dealt by one attack (after the type shift, secondary damage and the armour soak), and
their means.
"""

from __future__ import annotations

import argparse
import math
from fractions import Fraction

from combatsim.dice import Dice
from combatsim.tss import engine
from combatsim.tss.model import (
    CRITICAL_FAILURE,
    FAILURE,
    MAX_STEPS,
    TIER_NAMES,
    DamageTrack,
    Score,
    quality_grade,
    situation_die,
)

DAMAGE_TYPES = ("stun", "wound", "mortal")


#: Exact odds pair at most this many (damage roll, armour roll) outcomes over the three damaging
#: tiers (1-2 us each with the final fractions): 0.2 s at most.
MAX_DAMAGE_PAIRS = 100_000


def check_attack_size(track: DamageTrack, soak: Dice | None) -> None:
    """Refuse, before any work, an attack whose exact odds pair more than ``MAX_DAMAGE_PAIRS`` rolls."""
    soak_outcomes = soak.check_law("armour").outcomes if soak is not None else 1
    pairs = 0
    for degree, name in enumerate(TIER_NAMES[:3]):
        dice = track.tier(degree).dice
        pairs += dice.check_law(f"damage ({name})").outcomes * soak_outcomes
    if pairs > MAX_DAMAGE_PAIRS:
        raise ValueError(
            f"damage {track} against armour {soak} pairs {pairs:,} rolls; exact odds are limited to "
            f"{MAX_DAMAGE_PAIRS:,} (simulate it instead)"
        )


def situation_law(steps: int) -> dict[int, Fraction]:
    """The signed situation roll of the Difficulty Scale for ``steps`` (a larger sum counts as MAX_STEPS)."""
    sign, count, sides = situation_die(min(steps, MAX_STEPS))
    if count == 0:
        return {0: Fraction(1)}
    return {sign * total: p for total, p in Dice(count, sides).distribution().items()}


def tier_law(steps: int, amazing: int, good: int, ordinary: int) -> dict[int, Fraction]:
    """An attack's degree: d20 control die plus the situation roll (the engine's tier_of).
    ``combatsim odds tss`` and the fight-odds chain (combatsim.fight_odds.tss) both take an
    attack's law from here and ``damage_law``."""
    law: dict[int, Fraction] = {}
    for roll, p in situation_law(steps).items():
        for control in range(1, 21):
            tier = engine.tier_of(control, control + roll, amazing, good, ordinary)
            law[tier] = law.get(tier, 0) + p / 20
    return law


def damage_ways(dice: Dice, damage_type: int, soak: Dice | None) -> tuple[dict[tuple[int, int, int], int], int]:
    """The (stun, wound, mortal) a damaging attack deals (the engine's ``dealt``: secondary damage from
    the pre-armour amount, the armour roll off the primary), as the number of its equally likely
    damage and armour rolls giving each, and that number of rolls. ``damage_type`` is the tier's,
    already shifted by quality where the armour applies; ``soak`` is the armour's dice, or None."""
    soak_ways = soak.ways() if soak is not None else [1]
    soak_minimum = soak.minimum if soak is not None else 0
    ways: dict[tuple[int, int, int], int] = {}
    for amount, amount_ways in enumerate(dice.ways(), start=dice.minimum):
        for roll, roll_ways in enumerate(soak_ways, start=soak_minimum):
            done = engine.dealt(amount, damage_type, roll)
            ways[done] = ways.get(done, 0) + amount_ways * roll_ways
    return ways, dice.sides**dice.count * (soak.sides**soak.count if soak is not None else 1)


def damage_law(dice: Dice, damage_type: int, soak: Dice | None) -> dict[tuple[int, int, int], Fraction]:
    """``damage_ways`` as probabilities."""
    ways, rolls = damage_ways(dice, damage_type, soak)
    return {done: Fraction(count, rolls) for done, count in ways.items()}


def exact_attack(skill, steps, damage, weapon_quality, armour, armour_quality, one_step, laws=None):
    """Per attack: the five tier probabilities and (mean, variance) of stun, wound and mortal dealt.

    With ``laws`` (three dicts), also the exact law of each damage type dealt, value -> probability.

    Control d20 and situation dice (docs/tss.md, section 4, ``tier_law``), then the tier's damage,
    its type shifted by quality, secondary damage, and the armour soak (``damage_ways``). The tier
    and the damage and armour rolls are independent, so each damaging tier pairs its damage roll
    with the armour roll once, in integer counts of equally likely rolls.
    """
    score = Score.parse(skill)
    track = DamageTrack.parse(damage)
    soak = Dice.parse(armour, "armour", constant=False) if armour else None
    check_attack_size(track, soak)
    degrees = tier_law(steps, score.amazing, score.good, score.ordinary)
    tiers = [degrees.get(tier, Fraction(0)) for tier in range(len(TIER_NAMES))]
    damaging = []  # per damaging tier: its probability, the rolls it counts over, ways per dealt value
    for degree in range(3):  # amazing, good, ordinary
        damage_tier = track.tier(degree)
        damage_type = damage_tier.type
        if armour:
            damage_type = engine.shift_type(damage_type, quality_grade(weapon_quality), quality_grade(armour_quality),
                                            one_step)
        joint, rolls = damage_ways(damage_tier.dice, damage_type, soak)
        weights: list[dict[int, int]] = [{}, {}, {}]
        for done, ways in joint.items():
            for k in range(3):
                weights[k][done[k]] = weights[k].get(done[k], 0) + ways
        damaging.append((tiers[degree], rolls, weights))
    moments = []
    for k in range(3):  # in integers over each tier's rolls: one Fraction per tier, not per value
        first, second = (sum((p * Fraction(sum(ways * v**power for v, ways in weights[k].items()), rolls)
                              for p, rolls, weights in damaging), Fraction(0)) for power in (1, 2))
        moments.append((first, second - first * first))
        if laws is not None:
            denominator = math.lcm(*(p.denominator * rolls for p, rolls, _ in damaging))
            numerators: dict[int, int] = {}
            for p, rolls, weights in damaging:
                scale = p.numerator * (denominator // (p.denominator * rolls))
                for v, ways in weights[k].items():
                    numerators[v] = numerators.get(v, 0) + scale * ways
            for v, numerator in numerators.items():
                laws[k][v] = laws[k].get(v, Fraction(0)) + Fraction(numerator, denominator)
            laws[k][0] = laws[k].get(0, Fraction(0)) + tiers[FAILURE] + tiers[CRITICAL_FAILURE]  # no damage
    return tiers, moments


def attack_odds(args: argparse.Namespace) -> tuple[dict[str, Fraction], dict[str, dict[int, Fraction]]]:
    from combatsim.tss.api import attack_config, attack_steps

    choices = {name: getattr(args, name, default) for name, default in
               (("aim", False), ("two_weapons", None), ("ambidexterity", False), ("broad", False))}
    # attack_config validates every flag, with the field's name, before anything is enumerated.
    attack_config(skill=args.skill, steps=args.steps, damage=args.damage, weapon_quality=args.weapon_quality,
                  armour=args.armour, armour_quality=args.armour_quality, one_step_shift=args.one_step_shift,
                  **choices)
    laws: list[dict[int, Fraction]] = [{}, {}, {}]
    tiers, moments = exact_attack(args.skill, attack_steps(args.steps, **choices), args.damage, args.weapon_quality,
                                  args.armour, args.armour_quality, args.one_step_shift, laws)
    odds = dict(zip(TIER_NAMES, tiers, strict=True))
    odds.update({name: mean for name, (mean, _) in zip(DAMAGE_TYPES, moments, strict=True)})
    return odds, {name: dict(sorted(law.items())) for name, law in zip(DAMAGE_TYPES, laws, strict=True)}
