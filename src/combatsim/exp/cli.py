"""``combatsim attack exp``, ``odds exp``, ``curve exp`` and ``table exp``.

Importing this module is cheap: each subcommand's options, and the modules they need, are added
when the subcommand is chosen (combatsim.cli.Parser).
"""

from __future__ import annotations

import argparse
import json

from combatsim.cli_tools import attack_report, checked, emit, exact_integer, integer, run_options

#: The help lines of ``attack exp`` and ``odds exp`` (combatsim.cli adds both from add_attack_arguments).
ATTACK_HELP = "EXP kilodie attacks (to-hit against armour rating, with damage)"
ATTACK_DESCRIPTION = ("Raw numbers (--bonus, --max-roll) or a persona (--class, attributes) with a weapon "
                      "(--weapon-type, --damage). Without damage, weapon or persona options this is the plain "
                      "to-hit kernel.")
ODDS_HELP = "exact EXP odds of one attack (the same flags as attack exp)"

#: Options that turn ``attack exp`` from the plain to-hit kernel into the attack-with-damage kernel.
_ATTACK_OPTIONS = (
    "damage", "weapon_type", "persona_class", "ammunition", "adjustment", "critical", "damage_adjustment"
)
#: A persona's attributes, as the flags name them (the model's ``int_`` is --int).
_ATTRIBUTES = ("awe", "cha", "con", "dex", "int", "mstr", "pstr")
#: Options that describe a persona: they need --class.
_PERSONA_OPTIONS = ("adopted_class", "level", *_ATTRIBUTES, "experience_bonus", "proficient")
#: Options that describe the attacker by raw numbers: they exclude --class.
_RAW_OPTIONS = ("bonus", "max_roll", "damage_adjustment")


def _flag(name: str) -> str:
    return "--" + {"persona_class": "class", "max_roll": "max-roll"}.get(name, name).replace("_", "-")


def _bonus_triple(text: str) -> tuple[int, int, int]:
    parts = [exact_integer(part) for part in text.split(",")]
    if len(parts) != 3 or None in parts:
        raise argparse.ArgumentTypeError(f"must be three integers A,B,C such as 60,80,65, got {text!r}")
    return tuple(parts)  # type: ignore[return-value]


def add_persona_options(parser: argparse.ArgumentParser, required: bool) -> None:
    """A persona's class, level and attributes (Chapter 9)."""
    from combatsim.exp.model import CLASSES, MAX_ATTRIBUTE, MAX_LEVEL, SPECIAL_CLASSES

    needed = "" if required else " (with --class)"
    parser.add_argument("--class", dest="persona_class", choices=CLASSES, required=required,
                        help="persona class" + ("" if required else " (persona mode, instead of --bonus/--max-roll)"))
    parser.add_argument(
        "--adopted-class",
        choices=[c for c in CLASSES if c not in SPECIAL_CLASSES],
        default=None,
        help="the class a tool-using alien or an android uses" + needed,
    )
    parser.add_argument("--level", type=integer(1, MAX_LEVEL), default=None,
                        help=f"experience level, 1..{MAX_LEVEL} (default 1)" + needed)
    for name in _ATTRIBUTES:
        must = name in ("awe", "dex", "int", "pstr")
        parser.add_argument(f"--{name}", type=integer(0, MAX_ATTRIBUTE), required=required and must, default=None,
                            help=f"{name.upper()}, 0..{MAX_ATTRIBUTE}" + ("" if must else " (default 0)") + needed)
    parser.add_argument(
        "--experience-bonus",
        type=_bonus_triple,
        default=None,
        help="experience bonus to BP for A,B,C (e.g. 60,80,65); needed above level 1" + needed,
    )


def _persona(args: argparse.Namespace, proficiencies=()):
    from combatsim.exp.model import Persona

    missing = [name for name in ("awe", "dex", "int", "pstr") if getattr(args, name) is None]
    if missing:
        raise ValueError(f"a persona needs --{', --'.join(missing)}")
    attributes = {"int_" if name == "int" else name: getattr(args, name) or 0 for name in _ATTRIBUTES}
    return Persona(
        **attributes,
        hit_points=1,  # a persona's combat table and attacks do not depend on it
        persona_class=args.persona_class,
        level=args.level or 1,
        proficiencies=tuple(proficiencies),
        experience_bonus=args.experience_bonus,
        adopted_class=args.adopted_class,
    )


def add_attack_arguments(parser: argparse.ArgumentParser) -> None:
    """What one attack is: shared by ``attack exp`` and ``odds exp``, with the API's ranges."""
    from combatsim.dice import Dice
    from combatsim.exp.api import MAX_ADJUSTMENT, MAX_ARMOUR_RATING, MAX_BONUS, MAX_DAMAGE_ADJUSTMENT, MAX_ROLL
    from combatsim.exp.model import MAX_AMMUNITION, WEAPON_TYPES

    parser.add_argument("--bonus", type=integer(-MAX_BONUS, MAX_BONUS), default=None,
                        help=f"BP or BNP added to the kilodie, {-MAX_BONUS}..{MAX_BONUS} (raw mode)")
    parser.add_argument("--max-roll", type=integer(1, MAX_ROLL), default=None,
                        help=f"maximum roll (MR), 1..{MAX_ROLL} (raw mode)")
    parser.add_argument("--armour-rating", "--armor-rating", type=integer(-MAX_ARMOUR_RATING, MAX_ARMOUR_RATING),
                        required=True, help=f"target AR, {-MAX_ARMOUR_RATING}..{MAX_ARMOUR_RATING}")
    parser.add_argument("--hit-on-equal", action="store_true", help="a to-hit equal to AR hits (option)")
    parser.add_argument("--critical", action="store_true", default=None, help="a natural 1000 ignores MR (option)")
    parser.add_argument("--adjustment", type=integer(-MAX_ADJUSTMENT, MAX_ADJUSTMENT), default=None,
                        help=f"situational adjustment, {-MAX_ADJUSTMENT}..{MAX_ADJUSTMENT} (+ after MR, - before)")
    parser.add_argument("--damage", type=checked(lambda text: Dice.parse(text, "damage")), default=None,
                        help="weapon damage dice, e.g. d8, 3d10, d4+2")
    parser.add_argument("--weapon-type", choices=WEAPON_TYPES, default=None, help="A..F or automatic (default A)")
    parser.add_argument("--weapon-name", default=None,
                        help="the weapon's name, for messages (with --damage or --weapon-type)")
    parser.add_argument("--ammunition", type=integer(0, MAX_AMMUNITION), default=None,
                        help=f"rounds or charges loaded, 0..{MAX_AMMUNITION} (default: unlimited)")
    parser.add_argument("--damage-adjustment", type=integer(-MAX_DAMAGE_ADJUSTMENT, MAX_DAMAGE_ADJUSTMENT),
                        default=None, help=f"DA added to each damage roll, {-MAX_DAMAGE_ADJUSTMENT}.."
                        f"{MAX_DAMAGE_ADJUSTMENT} (raw mode; a persona's comes from its table)")
    add_persona_options(parser, required=False)
    parser.add_argument("--proficient", action="store_true", default=None,
                        help="the persona is proficient with the weapon (with --class)")


def is_plain_to_hit(args: argparse.Namespace) -> bool:
    """No damage, weapon or persona option: the plain to-hit kernel."""
    return not any(getattr(args, name) is not None for name in _ATTACK_OPTIONS)


def check_mode(args: argparse.Namespace) -> None:
    """Refuse flags the chosen mode would ignore: persona options without --class, raw numbers
    with it, a weapon's name without a weapon."""
    given = [name for name in _PERSONA_OPTIONS if getattr(args, name) is not None]
    if args.persona_class is None:
        if given:
            raise ValueError(f"{_flag(given[0])} needs --class (persona mode); with --bonus and --max-roll give "
                             "no persona options")
        if args.bonus is None or args.max_roll is None:
            raise ValueError("give --bonus and --max-roll, or a persona (--class and attributes) and a weapon")
    else:
        raw = [name for name in _RAW_OPTIONS if getattr(args, name) is not None]
        if raw:
            raise ValueError(f"{_flag(raw[0])} is for raw mode; with --class the persona's table gives BP/BNP, MR "
                             "and DA")
    if args.weapon_name is not None and args.damage is None and args.weapon_type is None:
        raise ValueError("--weapon-name names the weapon of --damage or --weapon-type; give one of them")


def attack_arguments(args: argparse.Namespace) -> dict:
    """The inputs of ``simulate_attack`` (and of a prepared ``Attack``) that the flags give: the
    weapon and, if a class is given, the persona, or the raw numbers."""
    from combatsim.exp.model import Weapon

    weapon = Weapon(
        args.weapon_name or "weapon",
        args.weapon_type or "A",
        "0" if args.damage is None else args.damage,
        ammunition=args.ammunition,
    )
    persona = None if args.persona_class is None else _persona(args, (weapon,) if args.proficient else ())
    return dict(persona=persona, weapon=weapon, bonus=args.bonus, maximum_roll=args.max_roll,
                damage_adjustment=args.damage_adjustment, armour_rating=args.armour_rating,
                adjustment=args.adjustment or 0, hit_on_equal=args.hit_on_equal, critical=bool(args.critical))


def run_attack(args: argparse.Namespace) -> int:
    check_mode(args)
    from combatsim.exp.api import simulate_attack, simulate_to_hit

    if is_plain_to_hit(args):
        result = simulate_to_hit(args.n, bonus=args.bonus, maximum_roll=args.max_roll, armour_rating=args.armour_rating,
                                 hit_on_equal=args.hit_on_equal, **run_options(args))
        return emit(args, result.as_dict(), _report)
    result = simulate_attack(args.n, **attack_arguments(args), **run_options(args))
    return emit(args, result.as_dict(), _attack_report)


def _report(record: dict) -> str:
    return attack_report(
        [f"EXP to-hit: {record['attacks']:,} attacks, {record['hits']:,} hits, hit rate {record['hit_rate']:.6f}"],
        record)


def _attack_report(record: dict) -> str:
    lines = [
        f"EXP attack: {record['units']:,} units, {record['to_hit_rolls']:,} to-hit rolls, {record['hits']:,} hits, "
        f"hit rate {record['hit_rate']:.6f}",
        f"damage {record['damage_total']:,}, mean per hit {record['damage_mean_per_hit']:.4f}",
    ]
    if "rounds_fired" in record:
        lines.append(f"rounds fired {record['rounds_fired']:,}, rounds hit {record['rounds_hit']:,}")
    return attack_report(lines, record)


def run_odds(args: argparse.Namespace) -> int:
    from collections.abc import Mapping

    from combatsim.exp.odds import hit_probability
    from combatsim.exp.prepared import Attack

    check_mode(args)
    if is_plain_to_hit(args):
        p = hit_probability(args.bonus, args.max_roll, args.armour_rating, args.hit_on_equal)
        record = {"probabilities": {"hits": str(p), "misses": str(1 - p)}}
        print(json.dumps(record) if args.json else f"P(hit) = {p} = {float(p):.6f}")
        return 0
    odds = Attack(**attack_arguments(args), backend="python").odds()  # the exact laws; python: nothing to compile
    record = {"probabilities": {key: {str(k): str(v) for k, v in value.items()} if isinstance(value, Mapping) else str(value)
                                for key, value in odds.items() if key != "damage_mean_per_hit"},
              "damage_mean_per_hit": str(odds["damage_mean_per_hit"])}
    if args.json:
        print(json.dumps(record))
    else:
        print(f"P(hit) per to-hit roll = {odds['hits']} = {float(odds['hits']):.6f}")
        print(f"mean damage per hit = {float(odds['damage_mean_per_hit']):.4f}")
        for hits, p in odds["hits_per_unit"].items():
            print(f"P({hits} {'hit' if hits == 1 else 'hits'} in a unit) = {float(p):.6f}")
    return 0


def add_curve_parser(subparsers) -> None:
    def build(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--bonus", required=True, help="value or start:stop:step (each in the range of attack exp)")
        parser.add_argument("--max-roll", required=True, help="value or start:stop:step")
        parser.add_argument("--armour-rating", "--armor-rating", required=True, help="value or start:stop:step")
        parser.add_argument("--hit-on-equal", action="store_true", help="a to-hit equal to AR hits (option)")
        parser.add_argument("--plot", metavar="FILE.png",
                            help="draw the curve to a .png, .svg or .pdf file (needs the plot extra: matplotlib)")
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.set_defaults(handler=run_curve)

    subparsers.add_parser("exp", help="EXP hit probability over a range of one parameter", build=build)


def run_curve(args: argparse.Namespace) -> int:
    import sys

    from combatsim.exp.odds import hit_curve

    plot_path = None
    if args.plot is not None:  # checked before the work, like fight's
        from combatsim.fights import PLOT_EXTENSIONS, check_output_path, write_whole

        plot_path = check_output_path(args.plot, "--plot", PLOT_EXTENSIONS)
    curve = hit_curve(args.bonus, args.max_roll, args.armour_rating, args.hit_on_equal)
    if plot_path is not None:
        from combatsim.plotting import plot_curve

        write_whole(plot_path, lambda temporary: plot_curve(curve, temporary, title="EXP hit probability"))
        print(f"combatsim: wrote the curve to {plot_path}", file=sys.stderr)
    if args.json:
        print(json.dumps(curve))
    else:
        parameter = curve["parameter"]
        for point in curve["points"]:
            value, p = point[parameter], point["hit_probability_float"]
            print(f"{parameter}={value:>6}  P(hit)={p:.4f}  ({point['hit_probability']})")
    return 0


def add_table_parser(subparsers) -> None:
    """``combatsim table exp``: a persona's combat table, laid out like Table 9.8."""
    def build(parser: argparse.ArgumentParser) -> None:
        add_persona_options(parser, required=True)
        parser.add_argument("--json", action="store_true",
                            help='print {"A": {"bp": .., "bnp": .., "mr": .., "da": ..}, "B": .., "C": ..}')
        parser.set_defaults(handler=run_table)

    subparsers.add_parser("exp", help="EXP combat table (Chapter 9)", build=build)


def run_table(args: argparse.Namespace) -> int:
    table = _persona(args).combat_table()
    print(json.dumps(table.as_dict()) if args.json else table.format())
    return 0
