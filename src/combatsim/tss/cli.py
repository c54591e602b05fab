"""``combatsim attack tss``."""

from __future__ import annotations

import argparse


def add_attack_parser(subparsers, add_run_options) -> None:
    parser = subparsers.add_parser("tss", help="TSS d20 attacks with damage and armour (tss-combat.txt)")
    add_attack_arguments(parser)
    add_run_options(parser, default_n=10_000_000)
    parser.set_defaults(handler=run_attack)


def add_attack_arguments(parser: argparse.ArgumentParser) -> None:
    """What one attack is: shared by ``attack tss`` and ``odds tss``."""
    parser.add_argument("--skill", required=True, help="attack skill Ordinary/Good/Amazing, e.g. 16/8/4, or one score")
    parser.add_argument("--steps", type=int, default=0, help="summed difficulty steps (negative is a bonus)")
    parser.add_argument("--damage", required=True, help="damage track Ordinary/Good/Amazing, e.g. d4w/d4+2w/d4-1m")
    parser.add_argument("--weapon-quality", default="ordinary", help="marginal, ordinary, good or amazing")
    parser.add_argument("--armour", "--armor", default=None, help="armour die against the weapon's class, e.g. d6")
    parser.add_argument("--armour-quality", "--armor-quality", default="ordinary", help="armour quality")
    parser.add_argument("--one-step-shift", action="store_true", help="quality shifts the type one step at most")


def run_attack(args: argparse.Namespace) -> int:
    from combatsim.cli import emit, run_options
    from combatsim.tss.api import simulate_attacks

    result = simulate_attacks(
        args.n,
        skill=args.skill,
        steps=args.steps,
        damage=args.damage,
        weapon_quality=args.weapon_quality,
        armour=args.armour,
        armour_quality=args.armour_quality,
        one_step_shift=args.one_step_shift,
        **run_options(args),
    )
    return emit(args, result.as_dict(), _report)


def _report(record: dict) -> str:
    from combatsim.cli import run_footer

    attacks = record["attacks"] or 1
    lines = [f"TSS attacks: {record['attacks']:,}, hit rate {record['hit_rate']:.6f}"]
    for name in ("amazing", "good", "ordinary", "failure", "critical_failure"):
        lines.append(f"  {name:17s} {record[name]:>14,}  {record[name] / attacks:.6f}")
    for name in ("stun", "wound", "mortal"):
        lines.append(f"  {name:17s} {record[name]:>14,}  {record[name] / attacks:.6f} per attack")
    lines.extend(run_footer(record))
    return "\n".join(lines)
