"""``combatsim attack exp``."""

from __future__ import annotations

import argparse


def add_attack_parser(subparsers, add_run_options) -> None:
    parser = subparsers.add_parser("exp", help="EXP kilodie attacks (to-hit against armour rating)")
    parser.add_argument("--bonus", type=int, required=True, help="BP or BNP added to the kilodie")
    parser.add_argument("--max-roll", type=int, required=True, help="maximum roll (MR)")
    parser.add_argument("--armour-rating", "--armor-rating", type=int, required=True, help="target AR")
    parser.add_argument("--hit-on-equal", action="store_true", help="a to-hit equal to AR hits (option)")
    add_run_options(parser, default_n=10_000_000)
    parser.set_defaults(handler=run_attack)


def run_attack(args: argparse.Namespace) -> int:
    from combatsim.cli import emit
    from combatsim.exp.api import simulate_to_hit

    result = simulate_to_hit(
        args.n,
        bonus=args.bonus,
        maximum_roll=args.max_roll,
        armour_rating=args.armour_rating,
        hit_on_equal=args.hit_on_equal,
        seed=args.seed,
        backend=args.backend,
        threads=args.threads,
        chunk_size=args.chunk_size,
    )
    return emit(args, result.as_dict(), _report)


def _report(record: dict) -> str:
    lines = [
        f"EXP to-hit: {record['attacks']:,} attacks, {record['hits']:,} hits, hit rate {record['hit_rate']:.6f}",
        f"seed {record['seed']}, backend {record['backend']}, {record['threads']} thread(s)",
    ]
    if record["partial"]:
        lines.append("PARTIAL: interrupted before all attacks ran")
    return "\n".join(lines)
