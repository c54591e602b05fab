"""Exact EXP odds, computed by counting kilodie faces (no simulation).

``combatsim odds exp`` prints them as exact fractions; ``combatsim curve exp`` sweeps one
parameter. Keys match ``combatsim attack exp --json``.
"""

from __future__ import annotations

import argparse
import json
from fractions import Fraction

from combatsim.dice import Dice
from combatsim.exp.reference import KILODIE, ROUNDS_PER_BURST, damage, is_hit, to_hit_roll

#: Exact damage distributions are kept to this many outcomes; beyond it, simulate instead.
MAX_OUTCOMES = 20_000
Distribution = dict[int, Fraction]


def hit_probability(bonus: int, maximum_roll: int, armour_rating: int, hit_on_equal: bool = False) -> Fraction:
    """P(min(kilodie + bonus, MR) > AR), or >= with ``hit_on_equal`` (RULINGS.md, EXP)."""
    hit_bar = armour_rating - int(hit_on_equal)  # a hit: to-hit > hit_bar
    if maximum_roll <= hit_bar:
        return Fraction(0)
    faces = KILODIE - min(KILODIE, max(0, hit_bar - bonus))  # faces r with r + bonus > hit_bar
    return Fraction(faces, KILODIE)


def _convolve(a: Distribution, b: Distribution) -> Distribution:
    out: Distribution = {}
    for x, p in a.items():
        for y, q in b.items():
            out[x + y] = out.get(x + y, Fraction(0)) + p * q
    if len(out) > MAX_OUTCOMES:
        raise ValueError(f"damage has more than {MAX_OUTCOMES} possible totals; exact odds are limited to that")
    return out


def _power(single: Distribution, times: int) -> Distribution:
    total: Distribution = {0: Fraction(1)}
    for _ in range(times):
        total = _convolve(total, single)
    return total


def _mix(parts: list[tuple[Fraction, Distribution]]) -> Distribution:
    out: Distribution = {}
    for weight, distribution in parts:
        for value, p in distribution.items():
            out[value] = out.get(value, Fraction(0)) + weight * p
    return {value: p for value, p in sorted(out.items()) if p}


def _mean(distribution: Distribution) -> Fraction:
    return sum((value * p for value, p in distribution.items()), Fraction(0))


def attack_odds(*, bonus: int, maximum_roll: int, armour_rating: int, dice: Dice, damage_adjustment: int = 0,
                rolls: int = 1, automatic: bool = False, adjustment: int = 0, hit_on_equal: bool = False,
                critical: bool = False) -> dict[str, object]:
    """Exact distributions for one unit of fire (Chapter 27, RULINGS.md): per to-hit roll and per unit.

    Counts kilodie faces with the reference's own to-hit rule, then convolves damage: a hit deals
    dice + DA (never below 0); an automatic burst that hits lands 0..3 rounds uniformly, each
    rolling its own damage; the ``rolls`` to-hit rolls of a unit are independent.
    """
    faces = sum(
        is_hit(to_hit_roll(kilodie, bonus, maximum_roll, adjustment, critical), armour_rating, hit_on_equal)
        for kilodie in range(1, KILODIE + 1)
    )
    p_hit = Fraction(faces, KILODIE)
    one_round: Distribution = {}
    for total, p in Dice(dice.count, dice.sides).distribution().items():  # several totals clamp to 0 damage
        dealt = damage(total, dice.modifier, damage_adjustment)
        one_round[dealt] = one_round.get(dealt, Fraction(0)) + p
    if automatic:
        landed = Fraction(1, ROUNDS_PER_BURST + 1)
        per_hit = _mix([(landed, _power(one_round, rounds)) for rounds in range(ROUNDS_PER_BURST + 1)])
        rounds_per_roll = _mix([(1 - p_hit, {0: Fraction(1)})] +
                               [(p_hit * landed, {rounds: Fraction(1)}) for rounds in range(ROUNDS_PER_BURST + 1)])
    else:
        per_hit = one_round
        rounds_per_roll = {0: 1 - p_hit, 1: p_hit}
    per_roll = _mix([(1 - p_hit, {0: Fraction(1)}), (p_hit, per_hit)])
    hits_per_unit = _power({0: 1 - p_hit, 1: p_hit}, rolls)
    odds: dict[str, object] = {
        "hits": p_hit,
        "hits_per_unit": {k: v for k, v in sorted(hits_per_unit.items()) if v},
        "damage_per_unit": _mix([(Fraction(1), _power(per_roll, rolls))]),
        "damage_mean_per_hit": _mean(per_hit),
    }
    if automatic:
        odds["rounds_hit_per_unit"] = _mix([(Fraction(1), _power(rounds_per_roll, rolls))])
    return odds


def parse_sweep(text: str, field: str) -> list[int]:
    """``600`` or ``400:1000:10`` (start:stop:step, stop included)."""
    parts = text.split(":")
    try:
        numbers = [int(part) for part in parts]
    except ValueError:
        raise ValueError(f"{field} must be an integer or start:stop:step, got {text!r}") from None
    if len(numbers) == 1:
        return numbers
    if len(numbers) != 3 or numbers[2] <= 0 or numbers[1] < numbers[0]:
        raise ValueError(f"{field} must be start:stop:step with start <= stop and step >= 1, got {text!r}")
    if (numbers[1] - numbers[0]) // numbers[2] > 100_000:
        raise ValueError(f"{field} sweeps at most 100001 points, got {text!r}")
    return list(range(numbers[0], numbers[1] + 1, numbers[2]))


def hit_curve(bonus: str, maximum_roll: str, armour_rating: str, hit_on_equal: bool = False) -> dict:
    sweeps = {
        "bonus": parse_sweep(bonus, "bonus"),
        "maximum_roll": parse_sweep(maximum_roll, "maximum_roll"),
        "armour_rating": parse_sweep(armour_rating, "armour_rating"),
    }
    ranged = [name for name, values in sweeps.items() if len(values) > 1]
    if len(ranged) > 1:
        raise ValueError(f"sweep one parameter at a time; got ranges for {', '.join(ranged)}")
    parameter = ranged[0] if ranged else "armour_rating"
    fixed = {name: values[0] for name, values in sweeps.items()}
    points = []
    for value in sweeps[parameter]:
        arguments = dict(fixed, **{parameter: value})
        p = hit_probability(arguments["bonus"], arguments["maximum_roll"], arguments["armour_rating"], hit_on_equal)
        points.append({parameter: value, "hit_probability": str(p), "hit_probability_float": float(p)})
    return {"parameter": parameter, "fixed": {k: v for k, v in fixed.items() if k != parameter}, "points": points}


def add_odds_parser(subparsers) -> None:
    from combatsim.exp.cli import add_attack_arguments

    parser = subparsers.add_parser("exp", help="exact EXP odds of one attack (the same flags as attack exp)")
    add_attack_arguments(parser)
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(handler=_run_odds)


def add_curve_parser(subparsers) -> None:
    parser = subparsers.add_parser("exp", help="EXP hit probability over a range of one parameter")
    parser.add_argument("--bonus", required=True, help="value or start:stop:step")
    parser.add_argument("--max-roll", required=True, help="value or start:stop:step")
    parser.add_argument("--armour-rating", "--armor-rating", required=True, help="value or start:stop:step")
    parser.add_argument("--hit-on-equal", action="store_true")
    parser.add_argument("--plot", metavar="FILE.png", help="draw the curve (needs the plot extra: matplotlib)")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(handler=_run_curve)


def _run_odds(args: argparse.Namespace) -> int:
    from combatsim.exp.api import rolls_this_unit
    from combatsim.exp.cli import is_plain_to_hit, weapon_and_persona
    from combatsim.validation import check_int

    if is_plain_to_hit(args):
        if args.bonus is None or args.max_roll is None:
            raise ValueError("give --bonus and --max-roll, or a persona (--class and attributes) and a weapon")
        check_int("maximum_roll", args.max_roll, 1, None)
        p = hit_probability(args.bonus, args.max_roll, args.armour_rating, args.hit_on_equal)
        record = {"probabilities": {"hits": str(p), "misses": str(1 - p)}}
        print(json.dumps(record) if args.json else f"P(hit) = {p} = {float(p):.6f}")
        return 0
    weapon, persona = weapon_and_persona(args)
    if persona is not None:
        bonus, maximum_roll, damage_adjustment = persona.attack_profile(weapon)
    elif args.bonus is None or args.max_roll is None:
        raise ValueError("give a persona (--class and attributes), or both --bonus and --max-roll")
    else:
        bonus, maximum_roll, damage_adjustment = args.bonus, args.max_roll, args.damage_adjustment or 0
    check_int("maximum_roll", maximum_roll, 1, None)
    odds = attack_odds(bonus=bonus, maximum_roll=maximum_roll, armour_rating=args.armour_rating,
                       dice=weapon.damage, damage_adjustment=damage_adjustment,
                       rolls=rolls_this_unit(weapon, args.ammunition), automatic=weapon.automatic,
                       adjustment=args.adjustment or 0, hit_on_equal=args.hit_on_equal, critical=bool(args.critical))
    record = {"probabilities": {key: {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else str(value)
                                for key, value in odds.items() if key != "damage_mean_per_hit"},
              "damage_mean_per_hit": str(odds["damage_mean_per_hit"])}
    if args.json:
        print(json.dumps(record))
    else:
        print(f"P(hit) per to-hit roll = {odds['hits']} = {float(odds['hits']):.6f}")
        print(f"mean damage per hit = {float(odds['damage_mean_per_hit']):.4f}")
        for hits, p in odds["hits_per_unit"].items():
            print(f"P({hits} hits in a unit) = {float(p):.6f}")
    return 0


def _run_curve(args: argparse.Namespace) -> int:
    curve = hit_curve(args.bonus, args.max_roll, args.armour_rating, args.hit_on_equal)
    if args.plot:
        from combatsim.plotting import plot_curve

        plot_curve(curve, args.plot, title="EXP hit probability")
    if args.json:
        print(json.dumps(curve))
    else:
        parameter = curve["parameter"]
        for point in curve["points"]:
            value, p = point[parameter], point["hit_probability_float"]
            print(f"{parameter}={value:>6}  P(hit)={p:.4f}  ({point['hit_probability']})")
    return 0
