"""``combatsim attack exp`` and ``combatsim table exp``."""

from __future__ import annotations

import argparse
import json

from combatsim.exp.model import CLASSES, SPECIAL_CLASSES, WEAPON_TYPES

#: Options that turn ``attack exp`` from the plain to-hit kernel into the attack-with-damage kernel.
_ATTACK_OPTIONS = (
    "damage", "weapon_type", "persona_class", "ammunition", "adjustment", "critical", "damage_adjustment"
)


def _bonus_triple(text: str) -> tuple[int, int, int]:
    parts = text.split(",")
    if len(parts) != 3:
        raise argparse.ArgumentTypeError(f"expected three integers A,B,C such as 60,80,65, got {text!r}")
    try:
        return tuple(int(p) for p in parts)  # type: ignore[return-value]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected three integers A,B,C such as 60,80,65, got {text!r}") from None


def add_persona_options(parser: argparse.ArgumentParser, required: bool) -> None:
    """A persona's class, level and attributes (Chapter 9)."""
    parser.add_argument("--class", dest="persona_class", choices=CLASSES, required=required, help="persona class")
    parser.add_argument(
        "--adopted-class",
        choices=[c for c in CLASSES if c not in SPECIAL_CLASSES],
        default=None,
        help="the class a tool-using alien or an android uses",
    )
    parser.add_argument("--level", type=int, default=1, help="experience level (default 1)")
    for name in ("awe", "cha", "con", "dex", "int", "mstr", "pstr"):
        needed = required and name in ("awe", "dex", "int", "pstr")
        parser.add_argument(f"--{name}", type=int, required=needed, default=None if needed else 0, help=name.upper())
    parser.add_argument("--hit-points", type=int, default=1, help="HPS")
    parser.add_argument(
        "--experience-bonus",
        type=_bonus_triple,
        default=None,
        help="experience bonus to BP for A,B,C (e.g. 60,80,65); needed above level 1",
    )


def _persona(args: argparse.Namespace, proficiencies=()):
    from combatsim.exp.model import Persona

    return Persona(
        awe=args.awe,
        cha=args.cha,
        con=args.con,
        dex=args.dex,
        int_=args.int,
        mstr=args.mstr,
        pstr=args.pstr,
        hit_points=args.hit_points,
        persona_class=args.persona_class,
        level=args.level,
        proficiencies=tuple(proficiencies),
        experience_bonus=args.experience_bonus,
        adopted_class=args.adopted_class,
    )


def add_attack_parser(subparsers, add_run_options) -> None:
    parser = subparsers.add_parser(
        "exp",
        help="EXP kilodie attacks (to-hit against armour rating, with damage)",
        description=(
            "Raw numbers (--bonus, --max-roll) or a persona (--class, attributes) with a weapon "
            "(--weapon-type, --damage). Without damage, weapon or persona options this is the plain "
            "to-hit kernel."
        ),
    )
    add_attack_arguments(parser)
    add_run_options(parser, default_n=10_000_000)
    parser.set_defaults(handler=run_attack)


def add_attack_arguments(parser: argparse.ArgumentParser) -> None:
    """What one attack is: shared by ``attack exp`` and ``odds exp``."""
    parser.add_argument("--bonus", type=int, default=None, help="BP or BNP added to the kilodie")
    parser.add_argument("--max-roll", type=int, default=None, help="maximum roll (MR)")
    parser.add_argument("--armour-rating", "--armor-rating", type=int, required=True, help="target AR")
    parser.add_argument("--hit-on-equal", action="store_true", help="a to-hit equal to AR hits (option)")
    parser.add_argument("--critical", action="store_true", default=None, help="a natural 1000 ignores MR (option)")
    parser.add_argument("--adjustment", type=int, default=None, help="situational adjustment (+ after MR, - before)")
    parser.add_argument("--damage", default=None, help="weapon damage dice, e.g. d8, 3d10, d4+2")
    parser.add_argument("--weapon-type", choices=WEAPON_TYPES, default=None, help="A..F or automatic (default A)")
    parser.add_argument("--weapon-name", default="weapon", help="the weapon's name")
    parser.add_argument("--ammunition", type=int, default=None, help="rounds or charges loaded (default: unlimited)")
    parser.add_argument("--damage-adjustment", type=int, default=None, help="DA added to each damage roll (raw mode)")
    add_persona_options(parser, required=False)
    parser.add_argument("--proficient", action="store_true", help="the persona is proficient with the weapon")


def is_plain_to_hit(args: argparse.Namespace) -> bool:
    """No damage, weapon or persona option: the plain to-hit kernel."""
    return not any(getattr(args, name) is not None for name in _ATTACK_OPTIONS)


def weapon_and_persona(args: argparse.Namespace):
    """The weapon and, if a class is given, the persona that ``attack exp``/``odds exp`` describe."""
    from combatsim.exp.model import Weapon

    weapon = Weapon(
        args.weapon_name,
        args.weapon_type or "A",
        args.damage or "0",
        ammunition=args.ammunition,
    )
    persona = None
    if args.persona_class is not None:
        missing = [name for name in ("awe", "dex", "int", "pstr") if getattr(args, name) is None]
        if missing:
            raise ValueError(f"a persona needs --{', --'.join(missing)}")
        persona = _persona(args, (weapon,) if args.proficient else ())
    return weapon, persona


def run_attack(args: argparse.Namespace) -> int:
    from combatsim.cli import emit, run_options

    if is_plain_to_hit(args):
        return _run_to_hit(args)
    from combatsim.exp.api import simulate_attack

    weapon, persona = weapon_and_persona(args)
    result = simulate_attack(
        args.n,
        persona=persona,
        weapon=weapon,
        bonus=args.bonus,
        maximum_roll=args.max_roll,
        damage_adjustment=args.damage_adjustment,
        armour_rating=args.armour_rating,
        adjustment=args.adjustment or 0,
        hit_on_equal=args.hit_on_equal,
        critical=bool(args.critical),
        **run_options(args),
    )
    return emit(args, result.as_dict(), _attack_report)


def _run_to_hit(args: argparse.Namespace) -> int:
    from combatsim.cli import emit, run_options
    from combatsim.exp.api import simulate_to_hit

    if args.bonus is None or args.max_roll is None:
        raise ValueError("give --bonus and --max-roll, or a persona (--class and attributes) and a weapon")
    result = simulate_to_hit(
        args.n,
        bonus=args.bonus,
        maximum_roll=args.max_roll,
        armour_rating=args.armour_rating,
        hit_on_equal=args.hit_on_equal,
        **run_options(args),
    )
    return emit(args, result.as_dict(), _report)


def _report(record: dict) -> str:
    from combatsim.cli import run_footer

    lines = [
        f"EXP to-hit: {record['attacks']:,} attacks, {record['hits']:,} hits, hit rate {record['hit_rate']:.6f}",
    ]
    lines.extend(run_footer(record))
    return "\n".join(lines)


def _attack_report(record: dict) -> str:
    from combatsim.cli import run_footer

    lines = [
        f"EXP attack: {record['units']:,} units, {record['to_hit_rolls']:,} to-hit rolls, {record['hits']:,} hits, "
        f"hit rate {record['hit_rate']:.6f}",
        f"damage {record['damage_total']:,}, mean per hit {record['damage_mean_per_hit']:.4f}",
    ]
    if "rounds_fired" in record:
        lines.append(f"rounds fired {record['rounds_fired']:,}, rounds hit {record['rounds_hit']:,}")
    lines.extend(run_footer(record))
    return "\n".join(lines)


def add_table_parser(subparsers) -> None:
    """``combatsim table exp``: a persona's combat table, laid out like Table 9.8."""
    parser = subparsers.add_parser("exp", help="EXP combat table (Chapter 9)")
    add_persona_options(parser, required=True)
    parser.add_argument(
        "--json", action="store_true", help='print {"A": {"bp": .., "bnp": .., "mr": .., "da": ..}, "B": .., "C": ..}'
    )
    parser.set_defaults(handler=run_table)


def run_table(args: argparse.Namespace) -> int:
    table = _persona(args).combat_table()
    print(json.dumps(table.as_dict()) if args.json else table.format())
    return 0
