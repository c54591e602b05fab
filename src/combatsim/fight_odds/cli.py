"""``combatsim odds fight SCENARIO`` and ``combatsim curve fight SCENARIO --vary PATH=...``."""

from __future__ import annotations

import argparse
import json
import sys

from combatsim.cli_tools import integer


def add_parsers(odds_subparsers, curve_subparsers) -> None:
    """The ``fight`` subcommands of odds and curve."""
    odds_subparsers.add_parser("fight", help="exact odds of a whole fight from a scenario file", build=_build_odds)
    curve_subparsers.add_parser("fight", help="a fight's outcome probabilities over one field's values",
                                build=_build_curve)


def common_options(parser: argparse.ArgumentParser, method: bool = True) -> None:
    """The scenario and the options of every command over a fight's chain (``method``: --method too)."""
    from combatsim.fight_odds import DEFAULT_MAX_STATES, METHODS

    parser.add_argument("scenario", help="scenario file, or an example's name such as exp_bob_too")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="PATH=VALUE",
                        help="override a field, e.g. options.max_rounds=5 (repeatable)")
    parser.add_argument("--max-states", type=integer(1, 10**12), default=DEFAULT_MAX_STATES,
                        help=f"refuse a fight with more states than this (default {DEFAULT_MAX_STATES:,})")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    if method:
        parser.add_argument("--method", choices=METHODS, default="auto",
                            help="exact fractions, float64 with an error bound, or auto (exact where quick)")


def _build_odds(parser: argparse.ArgumentParser) -> None:
    parser.description = ("The exact probability of every outcome of a scenario's fight and of its length, "
                          "computed over the fight's states (docs/fight-odds.md).")
    common_options(parser)
    parser.set_defaults(handler=run_odds)


def _build_curve(parser: argparse.ArgumentParser) -> None:
    from combatsim.fight_odds.curve import DEFAULT_FIGHTS, MAX_POINTS
    from combatsim.validation import SEED_MAX

    parser.description = ("A fight's outcome probabilities at each value of one field: exact where "
                          "combatsim odds fight can, simulated otherwise.")
    common_options(parser, method=False)
    parser.add_argument("--vary", required=True, metavar="PATH=SPEC",
                        help="the field and its values: start:stop:step (stop included) or v1,v2,...; "
                             f"at most {MAX_POINTS} values, e.g. sides[0].members[0].armour_rating=500:700:10")
    parser.add_argument("--plot", metavar="FILE.png", help="chart the curve (.png, .svg or .pdf; needs the plot extra)")
    parser.add_argument("-n", "--fights", dest="n", type=integer(1, 10**9), default=DEFAULT_FIGHTS,
                        help=f"fights simulated for a point too large for exact odds (default {DEFAULT_FIGHTS:,})")
    parser.add_argument("--seed", type=integer(0, SEED_MAX), default=0, help="seed of simulated points (default 0)")
    parser.set_defaults(handler=run_curve)


def load_scenario(args: argparse.Namespace):
    from combatsim.scenario import load, resolve

    path, label = resolve(args.scenario)
    return load(path, args.overrides, label=label)


def run_odds(args: argparse.Namespace) -> int:
    from combatsim.fight_odds import fight_odds

    odds = fight_odds(load_scenario(args), max_states=args.max_states, method=args.method)
    print(json.dumps(odds.as_dict()) if args.json else odds_report(odds))
    return 0


def probability_text(value, longest: int = 40) -> str:
    """A probability for the terminal: its float, and the fraction when it is short."""
    text = str(value)
    exact = f"  = {text}" if "/" in text and len(text) <= longest else ""
    return f"{float(value):10.6f}{exact}"


def odds_report(odds) -> str:
    method = "exact" if odds.method == "exact" else f"float64, each within {odds.error_bound:.1e}"
    lines = [f"{odds.scenario} ({odds.ruleset}): {method}"]
    width = max(len(name) for name in odds.side_names) + 5
    for name, wins, by_flight in zip(odds.side_names, odds.wins, odds.wins_by_flight, strict=True):
        lines.append(f"  {name + ' wins':<{width}} {probability_text(wins)}")
        if by_flight:
            lines.append(f"  {'  by flight':<{width}} {probability_text(by_flight)}")
    for key in ("escapes", "draws", "unfinished"):
        value = getattr(odds, key)
        if key != "escapes" or value:
            lines.append(f"  {key:<{width}} {probability_text(value)}")
    lines.append(f"  length: mean {float(odds.length_mean):.4f} {odds.step_unit}; "
                 + ", ".join(f"{steps}: {float(p):.4f}" for steps, p in list(odds.length.items())[:8])
                 + (", ..." if len(odds.length) > 8 else ""))
    lines.extend(f"  {note}" for note in odds.notes)
    lines.append(f"  {odds.state_bound:,} states at most, {odds.peak_states:,} live at once; {odds.seconds:.3f} s")
    return "\n".join(lines)


def run_curve(args: argparse.Namespace) -> int:
    from combatsim.fight_odds.curve import fight_curve, plot_fight_curve
    from combatsim.fights import PLOT_EXTENSIONS, check_output_path, write_whole

    plot_path = check_output_path(args.plot, "--plot", PLOT_EXTENSIONS) if args.plot is not None else None
    curve = fight_curve(load_scenario(args), args.vary, max_states=args.max_states, n=args.n, seed=args.seed)
    if plot_path is not None and curve["points"]:
        write_whole(plot_path, lambda temporary: plot_fight_curve(curve, temporary))
        print(f"combatsim: wrote the curve to {plot_path}", file=sys.stderr)
    print(json.dumps(curve) if args.json else curve_report(curve))
    return 130 if curve["partial"] else 0


def curve_report(curve: dict) -> str:
    partial = (f"PARTIAL: interrupted after {len(curve['points'])} of {curve['points_asked']} points"
               if curve["partial"] else "")
    if not curve["points"]:
        return f"{curve['scenario']} ({curve['ruleset']}): over {curve['axis']}\n{partial}"
    names = [side["name"] for side in curve["points"][0]["sides"]]
    columns = [f"{name} wins" for name in names] + ["draws", "unfinished"]
    value_width = max(len(curve["path"].rsplit(".", 1)[-1]), *(len(str(p["value"])) for p in curve["points"]))
    widths = [max(10, len(c)) for c in columns]
    lines = [f"{curve['scenario']} ({curve['ruleset']}): over {curve['axis']}",
             "  " + f"{curve['path'].rsplit('.', 1)[-1]:>{value_width}}  "
             + "  ".join(f"{c:>{w}}" for c, w in zip(columns, widths, strict=True)) + "  method"]
    for point in curve["points"]:
        cells = [side["wins"]["float"] for side in point["sides"]]
        cells += [point["draws"]["float"], point.get("unfinished", {}).get("float", float("nan"))]
        method = point["method"] + (f" ({point['fights']:,} fights{', partial' if point.get('partial') else ''})"
                                    if point["method"] == "simulated" else "")
        lines.append("  " + f"{point['value']!s:>{value_width}}  "
                     + "  ".join(f"{c:>{w}.6f}" for c, w in zip(cells, widths, strict=True)) + f"  {method}")
    if partial:
        lines.append(partial)
    return "\n".join(lines)
