"""Exact EXP odds, computed by counting kilodie faces (no simulation).

``combatsim odds exp`` prints them as exact fractions; ``combatsim curve exp`` sweeps one
parameter. Keys match ``combatsim attack exp --json``.
"""

from __future__ import annotations

import argparse
import json
from fractions import Fraction

from combatsim.exp.reference import KILODIE


def hit_probability(bonus: int, maximum_roll: int, armour_rating: int, hit_on_equal: bool = False) -> Fraction:
    """P(min(kilodie + bonus, MR) > AR), or >= with ``hit_on_equal`` (RULINGS.md, EXP)."""
    hit_bar = armour_rating - int(hit_on_equal)  # a hit: to-hit > hit_bar
    if maximum_roll <= hit_bar:
        return Fraction(0)
    faces = KILODIE - min(KILODIE, max(0, hit_bar - bonus))  # faces r with r + bonus > hit_bar
    return Fraction(faces, KILODIE)


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
    parser = subparsers.add_parser("exp", help="exact EXP to-hit odds")
    parser.add_argument("--bonus", type=int, required=True)
    parser.add_argument("--max-roll", type=int, required=True)
    parser.add_argument("--armour-rating", "--armor-rating", type=int, required=True)
    parser.add_argument("--hit-on-equal", action="store_true")
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
    from combatsim.validation import check_int

    check_int("maximum_roll", args.max_roll, 1, None)
    p = hit_probability(args.bonus, args.max_roll, args.armour_rating, args.hit_on_equal)
    record = {"probabilities": {"hits": str(p), "misses": str(1 - p)}}
    print(json.dumps(record) if args.json else f"P(hit) = {p} = {float(p):.6f}")
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
