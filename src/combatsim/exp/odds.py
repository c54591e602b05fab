"""Exact EXP odds, computed by counting kilodie faces (no simulation).

``combatsim odds exp`` prints them as exact fractions; ``combatsim curve exp`` sweeps one
parameter (combatsim.exp.cli). Keys match ``combatsim attack exp --json``.
"""

from __future__ import annotations

import math
from fractions import Fraction

from combatsim.dice import Dice
from combatsim.exp.engine import KILODIE, ROUNDS_PER_BURST, damage, kilodie_bar
from combatsim.validation import check_int

#: Exact odds convolve at most this many pairs of outcomes (an integer product each): 0.2 s at most.
MAX_CONVOLUTION_PAIRS = 500_000
Distribution = dict[int, Fraction]


def hit_probability(bonus: int, maximum_roll: int, armour_rating: int, hit_on_equal: bool = False) -> Fraction:
    """P(min(kilodie + bonus, MR) > AR), or >= with ``hit_on_equal``."""
    return Fraction(hit_faces(bonus, maximum_roll, 0, armour_rating, hit_on_equal, False), KILODIE)


def hit_faces(bonus: int, maximum_roll: int, adjustment: int, armour_rating: int, hit_on_equal: bool,
              critical: bool) -> int:
    """Kilodie faces that hit: those at or above the engine's kilodie bar."""
    return KILODIE - kilodie_bar(bonus, maximum_roll, armour_rating, adjustment, hit_on_equal, critical)


def _convolve(a: Distribution, b: Distribution, cap: int | None = None) -> Distribution:
    """The law of the sum of independent draws from ``a`` and ``b`` (every sum at or above ``cap``
    merged into ``cap``): in integer weights over each law's common denominator (an int product
    costs a fraction of a Fraction product's gcd)."""
    a_weights, a_denominator = _weights(a)
    b_weights, b_denominator = _weights(b)
    out: dict[int, int] = {}
    for x, p in a_weights:
        for y, q in b_weights:
            total = x + y if cap is None or x + y < cap else cap
            out[total] = out.get(total, 0) + p * q
    denominator = a_denominator * b_denominator
    return {value: Fraction(weight, denominator) for value, weight in out.items()}


def _weights(law: Distribution) -> tuple[list[tuple[int, int]], int]:
    denominator = math.lcm(*(p.denominator for p in law.values()))
    return [(value, p.numerator * (denominator // p.denominator)) for value, p in law.items()], denominator


def _power_pairs(outcomes: int, times: int) -> int:
    """The pairs :func:`_power` convolves for a law of ``outcomes`` consecutive values (the k-th
    partial sum has ``k * (outcomes - 1) + 1`` values)."""
    return sum((k * (outcomes - 1) + 1) * outcomes for k in range(times))


def check_attack_size(dice: Dice, rolls: int, automatic: bool) -> None:
    """Refuse, before any work, an attack whose exact odds take more than ``MAX_CONVOLUTION_PAIRS``:
    the same steps as :func:`attack_odds`, counted from the damage dice's number of totals."""
    outcomes = Dice(dice.count, dice.sides).check_law("damage").outcomes
    pairs = 0
    if automatic:  # 0..ROUNDS_PER_BURST rounds land, each its own damage roll
        pairs += sum(_power_pairs(outcomes, rounds) for rounds in range(ROUNDS_PER_BURST + 1))
        outcomes = ROUNDS_PER_BURST * (outcomes - 1) + 1
    pairs += _power_pairs(outcomes + 1, rolls)  # a miss adds the value 0
    if pairs > MAX_CONVOLUTION_PAIRS:
        raise ValueError(
            f"damage {dice} with {rolls} to-hit roll(s) a unit{' of automatic fire' if automatic else ''} needs "
            f"{pairs:,} convolution steps; exact odds are limited to {MAX_CONVOLUTION_PAIRS:,} (simulate it instead)"
        )


def _power(single: Distribution, times: int, cap: int | None = None) -> Distribution:
    total: Distribution = {0: Fraction(1)}
    for _ in range(times):
        total = _convolve(total, single, cap)
    return total


def _mix(parts: list[tuple[Fraction, Distribution]]) -> Distribution:
    """The law that follows ``distribution`` with probability ``weight``, in integer weights too."""
    weighted = [(weight, *_weights(distribution)) for weight, distribution in parts if weight]
    denominator = math.lcm(*(weight.denominator * law_denominator for weight, _, law_denominator in weighted))
    out: dict[int, int] = {}
    for weight, weights, law_denominator in weighted:
        scale = weight.numerator * (denominator // (weight.denominator * law_denominator))
        for value, p in weights:
            out[value] = out.get(value, 0) + scale * p
    return {value: Fraction(p, denominator) for value, p in sorted(out.items()) if p}


def damage_laws(p_hit: Fraction, dice: Dice, damage_adjustment: int, automatic: bool,
                cap: int | None = None) -> tuple[Distribution, Distribution]:
    """The laws of the damage of one hit and of one to-hit roll (Chapter 27), every value at or above
    ``cap`` merged into ``cap``: a hit deals dice + DA (never below 0); an automatic burst that hits
    lands 0..3 rounds uniformly, each rolling its own damage. ``combatsim odds exp`` and the
    fight-odds chain (combatsim.fight_odds.exp) both take a unit's damage from here."""
    one_round: Distribution = {}
    for total, p in Dice(dice.count, dice.sides).distribution().items():  # several totals clamp to 0 damage
        dealt = damage(total, dice.modifier, damage_adjustment)
        dealt = dealt if cap is None else min(dealt, cap)
        one_round[dealt] = one_round.get(dealt, Fraction(0)) + p
    if automatic:
        landed = Fraction(1, ROUNDS_PER_BURST + 1)
        per_hit = _mix([(landed, _power(one_round, rounds, cap)) for rounds in range(ROUNDS_PER_BURST + 1)])
    else:
        per_hit = one_round
    return per_hit, _mix([(1 - p_hit, {0: Fraction(1)}), (p_hit, per_hit)])


def unit_damage_law(faces: int, dice: Dice, damage_adjustment: int, rolls: int, automatic: bool,
                    cap: int | None = None) -> Distribution:
    """The law of the damage one unit of fire of ``rolls`` independent to-hit rolls deals, each
    hitting with ``faces``/1000 (every value at or above ``cap`` merged into ``cap``)."""
    per_roll = damage_laws(Fraction(faces, KILODIE), dice, damage_adjustment, automatic, cap)[1]
    return _mix([(Fraction(1), _power(per_roll, rolls, cap))])


def attack_odds(*, bonus: int, maximum_roll: int, armour_rating: int, dice: Dice, damage_adjustment: int = 0,
                rolls: int = 1, automatic: bool = False, adjustment: int = 0, hit_on_equal: bool = False,
                critical: bool = False) -> dict[str, object]:
    """Exact distributions for one unit of fire (Chapter 27): per to-hit roll and per unit.

    Counts kilodie faces with the engine's to-hit rule, then convolves damage (``damage_laws``);
    the ``rolls`` to-hit rolls of a unit are independent.
    """
    check_attack_size(dice, rolls, automatic)
    faces = hit_faces(bonus, maximum_roll, adjustment, armour_rating, hit_on_equal, critical)
    p_hit = Fraction(faces, KILODIE)
    per_hit, _ = damage_laws(p_hit, dice, damage_adjustment, automatic)
    hits_per_unit = _power({0: 1 - p_hit, 1: p_hit}, rolls)
    odds: dict[str, object] = {
        "hits": p_hit,
        "hits_per_unit": {k: v for k, v in sorted(hits_per_unit.items()) if v},
        "damage_per_unit": unit_damage_law(faces, dice, damage_adjustment, rolls, automatic),
        "damage_mean_per_hit": sum((value * p for value, p in per_hit.items()), Fraction(0)),
    }
    if automatic:
        landed = Fraction(1, ROUNDS_PER_BURST + 1)
        rounds_per_roll = _mix([(1 - p_hit, {0: Fraction(1)})] +
                               [(p_hit * landed, {rounds: Fraction(1)}) for rounds in range(ROUNDS_PER_BURST + 1)])
        odds["rounds_hit_per_unit"] = _mix([(Fraction(1), _power(rounds_per_roll, rolls))])
    return odds


def parse_sweep(text: str, field: str, low: int | None = None, high: int | None = None) -> list[int]:
    """``600`` or ``400:1000:10`` (start:stop:step, stop included); every value in ``low..high``.
    Each number is written as an integer flag's is (combatsim.validation.parse_integer)."""
    from combatsim.validation import brief, parse_integer

    if not isinstance(text, str):
        raise TypeError(f"{field} must be a string: an integer or start:stop:step, got {type(text).__name__}")
    parts = text.split(":")
    numbers = [parse_integer(part) for part in parts] if len(parts) <= 3 else [None]
    if None in numbers:
        raise ValueError(f"{field} must be an integer or start:stop:step, got {brief(text)}")
    if len(numbers) == 1:
        values = numbers
    elif len(numbers) != 3 or numbers[2] <= 0 or numbers[1] < numbers[0]:
        raise ValueError(f"{field} must be start:stop:step with start <= stop and step >= 1, got {brief(text)}")
    elif (numbers[1] - numbers[0]) // numbers[2] > 100_000:
        raise ValueError(f"{field} sweeps at most 100001 points, got {brief(text)}")
    else:
        values = range(numbers[0], numbers[1] + 1, numbers[2])
    for value in (values[0], values[-1]):  # the smallest and the largest
        check_int(field, value, low, high)
    return list(values)


def hit_curve(bonus: str, maximum_roll: str, armour_rating: str, hit_on_equal: bool = False) -> dict:
    """P(hit) over one swept parameter, each value in the range ``attack exp`` accepts."""
    from combatsim.exp.api import MAX_ARMOUR_RATING, MAX_BONUS, MAX_ROLL

    texts = {"bonus": bonus, "maximum_roll": maximum_roll, "armour_rating": armour_rating}
    ranges = {"bonus": (-MAX_BONUS, MAX_BONUS), "maximum_roll": (1, MAX_ROLL),
              "armour_rating": (-MAX_ARMOUR_RATING, MAX_ARMOUR_RATING)}
    sweeps = {name: parse_sweep(text, name, *ranges[name]) for name, text in texts.items()}
    # a range is swept even when it holds one point (0:1:5 is just 0): the report names that parameter
    ranged = [name for name in sweeps if ":" in texts[name]]
    if len(ranged) > 1:
        raise ValueError(f"sweep one parameter at a time; got ranges for {', '.join(ranged)}")
    parameter = ranged[0] if ranged else "armour_rating"
    fixed = {name: values[0] for name, values in sweeps.items()}
    points = []
    for value in sweeps[parameter]:
        p = hit_probability(**dict(fixed, **{parameter: value}), hit_on_equal=hit_on_equal)
        points.append({parameter: value, "hit_probability": str(p), "hit_probability_float": float(p)})
    return {"parameter": parameter, "fixed": {k: v for k, v in fixed.items() if k != parameter}, "points": points}
