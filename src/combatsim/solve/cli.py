"""``combatsim solve SCENARIO --agent NAME`` (best response) and ``--agents A,B`` (equilibrium)."""

from __future__ import annotations

import argparse
import json
import sys

from combatsim.fight_odds.cli import common_options, load_scenario, probability_text


def add_solve_parser(commands) -> None:
    """``combatsim solve``."""
    parser = commands.add_parser("solve", help="the exact best response or equilibrium of a scenario's fight")
    parser.description = ("The best play of a member against the others' policies (--agent), or of two "
                          "members against each other (--agents A,B), solved exactly over the fight's "
                          "states (docs/solve.md).")
    common_options(parser)
    who = parser.add_mutually_exclusive_group(required=True)
    who.add_argument("--agent", metavar="NAME", help="the member whose best response is solved")
    who.add_argument("--agents", metavar="A,B", help="two members of opposite sides: solve the game between them")
    parser.add_argument("--against", action="append", default=[], metavar="NAME=module:callable",
                        help="another member's policy (repeatable; NAME=file:PATH for a saved one); "
                             "the rest play their scripted policy")
    parser.add_argument("--exploitability", action="store_true",
                        help="with one --against policy of a foe: also solve the game between the two, and report "
                             "how much more than its value the best response gets")
    parser.add_argument("--out", metavar="FILE.npz",
                        help="save the solved policy (--agents: FILE.npz is A's, and B's goes beside it)")
    parser.set_defaults(handler=run_solve)


def run_solve(args: argparse.Namespace) -> int:
    from combatsim.fights import check_output_path
    from combatsim.policies import parse_policies
    from combatsim.solve import best_response, equilibrium, exploitability

    out = None if args.out is None else check_output_path(args.out, "--out", (".npz",))
    scenario = load_scenario(args)
    against = parse_policies(args.against, "--against")
    progress = sys.stderr.isatty()
    if args.agents is not None:
        if against:
            raise ValueError("--against: the game between --agents plays everyone else scripted; give --against "
                             "with --agent")
        if args.method == "exact":
            raise ValueError("--method: the equilibrium is computed in float64 with a certified bound; "
                             "allowed with --agents: auto, float64")
        result = equilibrium(scenario, args.agents, max_states=args.max_states, progress=progress)
        if out is not None:
            paths = _pair_paths(out, result.members)
            for name, path in zip(result.members, paths, strict=True):
                result.policies[name].save(path)
                print(f"combatsim: wrote {name}'s equilibrium policy to {path}", file=sys.stderr)
        print(json.dumps(result.as_dict()) if args.json else equilibrium_report(result))
        return 0
    if args.exploitability:
        result = exploitability(scenario, args.agent, against=against, method=args.method,
                                max_states=args.max_states, progress=progress)
    else:
        result = best_response(scenario, args.agent, against=against, method=args.method,
                               max_states=args.max_states, progress=progress)
    if out is not None:
        result.policy.save(out)
        print(f"combatsim: wrote {args.agent}'s best response to {out} "
              f"(play it with --policy \"{args.agent}=file:{out}\")", file=sys.stderr)
    print(json.dumps(result.as_dict()) if args.json else best_response_report(result))
    return 0


def _pair_paths(out, members) -> list:
    """--out for two policies: FILE.npz is the first member's, FILE-<second>.npz the second's."""
    second = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in members[1])
    return [out, out.with_name(f"{out.stem}-{second}{out.suffix}")]


def _outcome_lines(title: str, outcome) -> list[str]:
    return [f"  {title}", *(f"    {name:<10} {probability_text(getattr(outcome, name), 48)}"
                            for name in ("win", "loss", "draw", "unfinished", "reward"))]


def best_response_report(result) -> str:
    method = "exact" if result.method == "exact" else f"float64, each within {result.error_bound:.1e}"
    against = ", ".join(f"{name}: {label}" for name, label in result.against.items()) or "their scripted policies"
    lines = [f"{result.scenario} ({result.ruleset}): best response of {result.member} against {against}; {method}",
             *_outcome_lines("best response", result.value),
             *_outcome_lines("scripted policy", result.scripted),
             f"  gain in expected reward {probability_text(result.gain, 48)}"]
    if result.conflicts:
        lines.append(f"  note: {result.conflicts:,} observations are shared by states whose best actions differ; "
                     f"the saved policy plays the first")
    exploit = getattr(result, "exploitability", None)
    if exploit is not None:
        lines.append(f"  exploitability {exploit.value + 0.0:+.6f}: the best response's reward minus the equilibrium "
                     f"value {exploit.equilibrium:+.6f} (within {exploit.error_bound:.1e})")
    lines.append(f"  {result.states:,} states, {result.peak_states:,} live at once; {result.seconds:.2f} s")
    return "\n".join(lines)


def equilibrium_report(result) -> str:
    a, b = result.members
    br_a, br_b = result.best_responses[a], result.best_responses[b]
    lines = [f"{result.scenario} ({result.ruleset}): the game between {a} and {b}, everyone else scripted; "
             f"float64, within {result.error_bound:.1e}",
             f"  value to {a}   {result.value:+.6f}  (certified {result.low:+.6f} .. {result.high:+.6f})",
             *_outcome_lines(f"both playing the equilibrium, for {a}", result.outcome),
             f"  {a}'s best response to the scripted {b}: reward {float(br_a.value.reward):+.6f} (>= the value)",
             f"  {b}'s best response to the scripted {a}: reward {float(br_b.value.reward):+.6f} "
             f"(-that <= the value)",
             f"  the bounds hold: {'yes' if result.bounds_hold else 'NO'}",
             "  matrix games: " + ", ".join(f"{count:,} {kind}" for kind, count in result.games.items()),
             f"  {result.states:,} states, {result.peak_states:,} live at once; {result.seconds:.2f} s"]
    if result.conflicts:
        lines.append(f"  note: {result.conflicts:,} observations are shared by states whose mixes differ")
    return "\n".join(lines)
