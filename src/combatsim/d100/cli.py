"""``combatsim attack d100``."""

from __future__ import annotations

import argparse

from combatsim.d100.api import MODIFIERS


def add_attack_parser(subparsers, add_run_options) -> None:
    parser = subparsers.add_parser("d100", help="d100 attacks with damage (tiers and wounds)")
    add_attack_arguments(parser)
    add_run_options(parser, default_n=10_000_000)
    parser.set_defaults(handler=run_attack)


def add_attack_arguments(parser: argparse.ArgumentParser) -> None:
    """What one attack is: shared by ``attack d100`` and ``odds d100``."""
    parser.add_argument("--pool", type=int, required=True, help="attack pool: Fighting or Arcane")
    parser.add_argument("--specialty", type=int, action="append", default=[],
                        help="a weapon specialty rank (repeat for several ranks)")
    parser.add_argument("--taper", choices=("halving", "highest", "flat"), default="halving",
                        help="how several specialty ranks combine (option; default halving)")
    parser.add_argument("--modifier", action="append", default=[], metavar="NAME",
                        help=f"an attack modifier (repeatable): {', '.join(m.replace('_', '-') for m in MODIFIERS)}")
    parser.add_argument("--lethality", type=int, required=True, help="weapon_lethality 0..100")
    parser.add_argument("--severity", default="1", help="weapon_severity, in tenths (e.g. 2 or 1.5)")
    parser.add_argument("--armor", "--armour", dest="armour", choices=("none", "light", "heavy"), default="none")
    parser.add_argument("--nonlethal", action="store_true", help="a nonlethal weapon (lethal results become serious)")
    parser.add_argument("--dual-wield", action="store_true", help="two such weapons: -20, each at 75%% lethality")


def attack_arguments(args: argparse.Namespace) -> dict:
    """The keyword arguments of ``simulate_attacks``/``attack_parameters`` that the flags give."""
    return dict(pool=args.pool, specialty=args.specialty, taper=args.taper, modifiers=args.modifier,
                lethality=args.lethality, severity=args.severity, armour=args.armour, nonlethal=args.nonlethal,
                dual_wield=args.dual_wield)


def run_attack(args: argparse.Namespace) -> int:
    from combatsim.cli import emit, run_options
    from combatsim.d100.api import simulate_attacks

    result = simulate_attacks(
        args.n,
        **attack_arguments(args),
        **run_options(args),
    )
    return emit(args, result.as_dict(), _report)


def _report(record: dict) -> str:
    from combatsim.cli import run_footer

    n = record["attacks"] or 1
    lines = [
        f"d100 attacks: {record['attacks']:,} (full skill {record['full_skill']}, capped target "
        f"{record['capped_target']}, lethality {record['lethality']}, serious threshold {record['serious_threshold']})",
    ]
    for name in ("critical_success", "hard_success", "success", "failure", "critical_failure",
                 "lethal", "serious", "flesh", "instant_death"):
        lines.append(f"  {name:17s} {record[name]:>14,}  {record[name] / n:.6f}")
    lines.extend(run_footer(record))
    return "\n".join(lines)
