"""``combatsim attack tss`` and ``combatsim odds tss``.

Importing this module is cheap: each subcommand's options, and the modules they need, are added
when the subcommand is chosen (combatsim.cli.Parser).
"""

from __future__ import annotations

import argparse
import json

from combatsim.cli_tools import attack_report, checked, count_lines, emit, integer, run_options

#: The help lines of ``attack tss`` and ``odds tss`` (combatsim.cli adds both from add_attack_arguments).
ATTACK_HELP = "TSS d20 attacks with damage and armour"
ODDS_HELP = "exact TSS odds of one attack (the same flags as attack tss)"


def _armour_die(text: str) -> str:
    """An armour die rolls at least one die: a bare number (``-3``) would soak nothing yet shift
    the damage type as armour does."""
    from combatsim.dice import Dice

    Dice.parse(text, "armour", constant=False)
    return text


def add_attack_arguments(parser: argparse.ArgumentParser) -> None:
    """What one attack is: shared by ``attack tss`` and ``odds tss``, with the API's ranges."""
    from combatsim.tss.model import MAX_STEPS

    parser.add_argument("--skill", required=True, help="attack skill Ordinary/Good/Amazing, e.g. 16/8/4, or one score")
    parser.add_argument("--steps", type=integer(-1000, MAX_STEPS), default=0,
                        help=f"summed difficulty steps, -1000..{MAX_STEPS} (negative is a bonus; default 0)")
    parser.add_argument("--damage", required=True, help="damage track Ordinary/Good/Amazing, e.g. d4w/d4+2w/d4-1m")
    parser.add_argument("--weapon-quality", default="ordinary",
                        help="marginal, ordinary, good or amazing (default ordinary)")
    parser.add_argument("--armour", "--armor", type=checked(_armour_die), default=None,
                        help="armour die against the weapon's class, e.g. d6 or d4+1 (default: no armour)")
    parser.add_argument("--armour-quality", "--armor-quality", default=None,
                        help="armour quality: marginal, ordinary, good or amazing (with --armour; default ordinary)")
    parser.add_argument("--one-step-shift", action="store_true",
                        help="quality shifts the type one step at most (option; with --armour)")
    parser.add_argument("--aim", action="store_true", help="an aim is held: -1 step")
    parser.add_argument("--two-weapons", choices=("main", "off"), default=None,
                        help="the main-hand (+2 steps) or off-hand (+4) attack of a two-weapon action")
    parser.add_argument("--ambidexterity", action="store_true",
                        help="the Ambidexterity feat: two weapons at +0/+2 (with --two-weapons)")
    parser.add_argument("--broad", action="store_true", help="a broad skill: +1 step")


def attack_arguments(args: argparse.Namespace) -> dict:
    """The keyword arguments of ``simulate_attacks``/``attack_config`` that the flags give; armour
    options without ``--armour`` would change nothing, so they are refused."""
    if args.armour is None:
        given = [flag for flag, value in (("--armour-quality", args.armour_quality),
                                          ("--one-step-shift", args.one_step_shift or None)) if value is not None]
        if given:
            raise ValueError(f"{given[0]} needs --armour (without armour there is no type shift)")
    if args.ambidexterity and args.two_weapons is None:
        raise ValueError("--ambidexterity needs --two-weapons main|off (the feat changes two-weapon attacks only)")
    return dict(skill=args.skill, steps=args.steps, damage=args.damage, weapon_quality=args.weapon_quality,
                armour=args.armour, armour_quality="ordinary" if args.armour_quality is None else args.armour_quality,
                one_step_shift=args.one_step_shift, aim=args.aim, two_weapons=args.two_weapons,
                ambidexterity=args.ambidexterity, broad=args.broad)


def run_attack(args: argparse.Namespace) -> int:
    from combatsim.tss.api import simulate_attacks

    result = simulate_attacks(args.n, **attack_arguments(args), **run_options(args))
    return emit(args, result.as_dict(), _report)


def _report(record: dict) -> str:
    return attack_report([
        f"TSS attacks: {record['attacks']:,}, hit rate {record['hit_rate']:.6f}",
        *count_lines(record, ("amazing", "good", "ordinary", "failure", "critical_failure")),
        "  damage dealt after armour (points in all, mean per attack):",
        *(f"  {name + ' points':17s} {record[name]:>14,}  {record[name] / (record['attacks'] or 1):.6f} per attack"
          for name in ("stun", "wound", "mortal")),
    ], record)


def run_odds(args: argparse.Namespace) -> int:
    from combatsim.tss.model import TIER_NAMES
    from combatsim.tss.odds import DAMAGE_TYPES, attack_odds

    odds, laws = attack_odds(argparse.Namespace(**attack_arguments(args)))
    if args.json:
        probabilities: dict[str, object] = {name: str(odds[name]) for name in TIER_NAMES}
        probabilities.update({name: {str(v): str(p) for v, p in laws[name].items() if p} for name in DAMAGE_TYPES})
        print(json.dumps({"probabilities": probabilities, "means": {name: str(odds[name]) for name in DAMAGE_TYPES}}))
    else:
        for name, value in odds.items():
            label = "mean per attack" if name in DAMAGE_TYPES else "probability"
            print(f"{name:17s} {float(value):.6f}  ({value}, {label})")
    return 0
