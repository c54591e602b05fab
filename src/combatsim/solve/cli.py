"""``combatsim solve SCENARIO --agent NAME`` (best response) and ``--agents A,B`` (equilibrium)."""

from __future__ import annotations

import argparse
import json
import sys


def add_solve_parser(commands, integer) -> None:
    """``combatsim solve``; ``integer`` is combatsim.cli's integer argument type."""
    _build(commands.add_parser("solve", help="the exact best response or equilibrium of a scenario's fight"), integer)


def _build(parser: argparse.ArgumentParser, integer) -> None:
    from combatsim.fight_odds import DEFAULT_MAX_STATES, METHODS

    parser.description = ("The best play of a member against the others' policies (--agent), or of two "
                          "members against each other (--agents A,B), solved exactly over the fight's "
                          "states (docs/solve.md).")
    parser.add_argument("scenario", help="scenario file, or an example's name such as d100_duel")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="PATH=VALUE",
                        help="override a field, e.g. options.max_rounds=5 (repeatable)")
    who = parser.add_mutually_exclusive_group(required=True)
    who.add_argument("--agent", metavar="NAME", help="the member whose best response is solved")
    who.add_argument("--agents", metavar="A,B", help="two members of opposite sides: solve the game between them")
    parser.add_argument("--against", action="append", default=[], metavar="NAME=module:callable",
                        help="another member's policy (repeatable; NAME=file:PATH for a saved one); "
                             "the rest play their scripted policy")
    parser.add_argument("--method", choices=METHODS, default="auto",
                        help="exact fractions, float64 with an error bound, or auto (exact where quick)")
    parser.add_argument("--max-states", type=integer(1, 10**12), default=DEFAULT_MAX_STATES,
                        help=f"refuse a fight with more states than this (default {DEFAULT_MAX_STATES:,})")
    parser.add_argument("--out", metavar="FILE.npz",
                        help="save the solved policy (--agents: FILE.npz is A's, and B's goes beside it)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=run_solve)


def _load(args: argparse.Namespace):
    from combatsim.scenario import load, resolve

    path, label = resolve(args.scenario)
    return load(path, args.overrides, label=label)


def _out_path(text: str | None):
    from combatsim.fights import check_output_path

    return None if text is None else check_output_path(text, "--out", (".npz",))


def run_solve(args: argparse.Namespace) -> int:
    from combatsim.policies import parse_policies
    from combatsim.solve import best_response

    out = _out_path(args.out)
    scenario = _load(args)
    against = parse_policies(args.against, "--against")
    progress = sys.stderr.isatty()
    result = best_response(scenario, args.agent, against=against, method=args.method, max_states=args.max_states,
                           progress=progress)
    if out is not None:
        result.policy.save(out)
        print(f"combatsim: wrote {args.agent}'s best response to {out} "
              f"(play it with --policy \"{args.agent}=file:{out}\")", file=sys.stderr)
    print(json.dumps(result.as_dict()) if args.json else best_response_report(result))
    return 0


def _probability(value) -> str:
    text = str(value)
    exact = f"  = {text}" if "/" in text and len(text) <= 48 else ""
    return f"{float(value):10.6f}{exact}"


def _outcome_lines(title: str, outcome) -> list[str]:
    return [f"  {title}",
            *(f"    {name:<10} {_probability(value)}" for name, value in
              (("win", outcome.win), ("loss", outcome.loss), ("draw", outcome.draw),
               ("unfinished", outcome.unfinished), ("reward", outcome.reward)))]


def best_response_report(result) -> str:
    method = "exact" if result.method == "exact" else f"float64, each within {result.error_bound:.1e}"
    against = ", ".join(f"{name}: {label}" for name, label in result.against.items()) or "their scripted policies"
    lines = [f"{result.scenario} ({result.ruleset}): best response of {result.member} against {against}; {method}",
             *_outcome_lines("best response", result.value),
             *_outcome_lines("scripted policy", result.scripted),
             f"  gain in expected reward {_probability(result.gain)}"]
    if result.conflicts:
        lines.append(f"  note: {result.conflicts:,} observations are shared by states whose best actions differ; "
                     f"the saved policy plays the first")
    lines.append(f"  {result.states:,} states, {result.peak_states:,} live at once; {result.seconds:.2f} s")
    return "\n".join(lines)
