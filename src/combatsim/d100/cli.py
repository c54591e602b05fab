"""``combatsim attack d100`` and ``combatsim odds d100``.

Importing this module is cheap: each subcommand's options, and the modules they need, are added
when the subcommand is chosen (combatsim.cli.Parser).
"""

from __future__ import annotations

import argparse
import json

from combatsim.cli_tools import attack_report, checked, count_lines, emit, integer, run_options

#: The help lines of ``attack d100`` and ``odds d100`` (combatsim.cli adds both from add_attack_arguments).
ATTACK_HELP = "d100 attacks with damage (tiers and wounds)"
ODDS_HELP = "exact d100 odds of one attack (the same flags as attack d100)"


def add_attack_arguments(parser: argparse.ArgumentParser) -> None:
    """What one attack is: shared by ``attack d100`` and ``odds d100``, with the API's ranges."""
    from combatsim.d100.api import MAX_LETHALITY, MAX_RANK, MAX_SCORE, MAX_SEVERITY, MODIFIERS, check_severity
    from combatsim.d100.model import TAPERS

    pool = parser.add_mutually_exclusive_group(required=True)
    pool.add_argument("--pool", type=integer(0, MAX_SCORE), help=f"attack pool (Fighting), 0..{MAX_SCORE}")
    pool.add_argument("--arcane", type=integer(0, MAX_SCORE),
                      help=f"an Elementalism blast: the Arcane score is its pool, 0..{MAX_SCORE}")
    parser.add_argument("--specialty", type=integer(0, MAX_RANK), action="append", default=[],
                        help=f"a weapon specialty rank, 0..{MAX_RANK} (repeat for several ranks)")
    parser.add_argument("--taper", choices=TAPERS, default=TAPERS[0],
                        help=f"how several specialty ranks combine (option; default {TAPERS[0]})")
    parser.add_argument("--modifier", action="append", default=[], metavar="NAME",
                        help=f"an attack modifier (repeatable): {', '.join(m.replace('_', '-') for m in MODIFIERS)}")
    parser.add_argument("--lethality", type=integer(0, MAX_LETHALITY), required=True,
                        help=f"weapon_lethality, 0..{MAX_LETHALITY}")
    parser.add_argument("--severity", type=checked(check_severity), default="1",
                        help=f"weapon_severity, 0..{MAX_SEVERITY} in tenths (e.g. 2 or 1.5; default 1)")
    parser.add_argument("--armor", "--armour", dest="armour", choices=("none", "light", "heavy"), default="none",
                        help="the target's armour (default none)")
    parser.add_argument("--nonlethal", action="store_true", help="a nonlethal weapon (lethal results become serious)")
    parser.add_argument("--dual-wield", action="store_true", help="two such weapons: -20, each at 75%% lethality")


def attack_arguments(args: argparse.Namespace) -> dict:
    """The keyword arguments of ``simulate_attacks``/``attack_parameters`` that the flags give."""
    return dict(pool=args.pool, arcane=args.arcane, specialty=args.specialty, taper=args.taper, modifiers=args.modifier,
                lethality=args.lethality, severity=args.severity, armour=args.armour, nonlethal=args.nonlethal,
                dual_wield=args.dual_wield)


def run_attack(args: argparse.Namespace) -> int:
    from combatsim.d100.api import simulate_attacks

    result = simulate_attacks(
        args.n,
        **attack_arguments(args),
        **run_options(args),
    )
    return emit(args, result.as_dict(), _report)


def _report(record: dict) -> str:
    return attack_report([
        f"d100 attacks: {record['attacks']:,} (full skill {record['full_skill']}, capped target "
        f"{record['capped_target']}, lethality {record['lethality']}, serious threshold {record['serious_threshold']})",
        *count_lines(record, ("critical_success", "hard_success", "success", "failure", "critical_failure",
                              "lethal", "serious", "flesh", "instant_death")),
    ], record)


def run_odds(args: argparse.Namespace) -> int:
    from combatsim.d100.api import attack_parameters
    from combatsim.d100.odds import attack_odds

    odds = attack_odds(attack_parameters(**attack_arguments(args)))
    if args.json:
        print(json.dumps({"probabilities": {key: str(value) for key, value in odds.items()}}))
    else:
        for key, value in odds.items():
            print(f"{key:17s} {float(value):.6f}  ({value})")
    return 0
