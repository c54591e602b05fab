"""Exact TSS odds of one attack, by enumerating the dice (no simulation).

``combatsim odds tss`` takes the flags of ``combatsim attack tss`` and prints, with the keys of
``attack tss --json``: the probability of each tier, the exact law of the stun, wound and mortal
damage dealt by one attack (after the type shift, secondary damage and the armour soak), and
their means.
"""

from __future__ import annotations

import argparse
import json
from fractions import Fraction

from combatsim.dice import Dice
from combatsim.tss.model import (
    CRITICAL_FAILURE,
    TIER_NAMES,
    DamageTrack,
    Score,
    damage_dealt,
    quality_grade,
    shift_type,
    situation_die,
)

DAMAGE_TYPES = ("stun", "wound", "mortal")


def exact_attack(skill, steps, damage, weapon_quality, armour, armour_quality, one_step, laws=None):
    """Per attack: the five tier probabilities and (mean, variance) of stun, wound and mortal dealt.

    With ``laws`` (three dicts), also the exact law of each damage type dealt, value -> probability.

    Control d20 and situation dice (tss-combat.txt, "Rolling Attack"), then the tier's damage,
    its type shifted by quality, secondary damage, and the armour soak (RULINGS.md, TSS).
    """
    score = Score.parse(skill)
    sign, count, sides = situation_die(steps)
    situation = Dice(count, sides).distribution()
    track = DamageTrack.parse(damage)
    soak = Dice.parse(armour).distribution() if armour else {0: Fraction(1)}
    tiers = [Fraction(0)] * 5
    first = [Fraction(0)] * 3
    second = [Fraction(0)] * 3
    for control in range(1, 21):
        for value, p_situation in situation.items():
            p = p_situation / 20
            tier = CRITICAL_FAILURE if control == 20 else score.tier(control + sign * value)
            tiers[tier] += p
            if tier > 2:
                continue
            damage_tier = track.tier(tier)
            damage_type = damage_tier.type
            if armour:
                damage_type = shift_type(damage_type, quality_grade(weapon_quality), quality_grade(armour_quality),
                                         one_step)
            for amount, p_amount in damage_tier.dice.distribution().items():
                for roll, p_soak in soak.items():
                    q = p * p_amount * p_soak
                    for k, dealt in enumerate(damage_dealt(amount, damage_type, roll)):
                        first[k] += q * dealt
                        second[k] += q * dealt * dealt
                        if laws is not None:
                            laws[k][dealt] = laws[k].get(dealt, Fraction(0)) + q
    if laws is not None:
        for law in laws:  # failed attacks deal nothing
            law[0] = law.get(0, Fraction(0)) + (1 - sum(law.values()))
    return tiers, [(m, s - m * m) for m, s in zip(first, second, strict=True)]


def attack_odds(args: argparse.Namespace) -> tuple[dict[str, Fraction], dict[str, dict[int, Fraction]]]:
    from combatsim.tss.api import attack_config

    # attack_config validates every flag, with the field's name, before anything is enumerated.
    attack_config(skill=args.skill, steps=args.steps, damage=args.damage, weapon_quality=args.weapon_quality,
                  armour=args.armour, armour_quality=args.armour_quality, one_step_shift=args.one_step_shift)
    laws: list[dict[int, Fraction]] = [{}, {}, {}]
    tiers, moments = exact_attack(args.skill, args.steps, args.damage, args.weapon_quality, args.armour,
                                  args.armour_quality, args.one_step_shift, laws)
    odds = dict(zip(TIER_NAMES, tiers, strict=True))
    odds.update({name: mean for name, (mean, _) in zip(DAMAGE_TYPES, moments, strict=True)})
    return odds, {name: dict(sorted(law.items())) for name, law in zip(DAMAGE_TYPES, laws, strict=True)}


def add_odds_parser(subparsers) -> None:
    from combatsim.tss.cli import add_attack_arguments

    parser = subparsers.add_parser("tss", help="exact TSS odds of one attack (the same flags as attack tss)")
    add_attack_arguments(parser)
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(handler=_run_odds)


def _run_odds(args: argparse.Namespace) -> int:
    odds, laws = attack_odds(args)
    if args.json:
        probabilities: dict[str, object] = {name: str(odds[name]) for name in TIER_NAMES}
        probabilities.update({name: {str(v): str(p) for v, p in laws[name].items() if p} for name in DAMAGE_TYPES})
        print(json.dumps({"probabilities": probabilities, "means": {name: str(odds[name]) for name in DAMAGE_TYPES}}))
    else:
        for name, value in odds.items():
            label = "mean per attack" if name in DAMAGE_TYPES else "probability"
            print(f"{name:17s} {float(value):.6f}  ({value}, {label})")
    return 0
