"""The ``combatsim`` command line: ``attack``, ``backends``, ``bench``.

Each ruleset adds its own ``attack`` subcommand from ``combatsim.<ruleset>.cli``. Errors in the
input print one line naming the field and its allowed range, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import sys
from collections.abc import Callable

from combatsim.registry import BACKEND_CHOICES, BACKENDS, RULESETS, available_backends


def add_run_options(parser: argparse.ArgumentParser, default_n: int = 1_000_000) -> None:
    """The options every simulation command shares."""
    parser.add_argument("-n", "--attacks", dest="n", type=_integer, default=default_n, help="items to simulate")
    parser.add_argument("--seed", type=_integer, default=0, help="64-bit seed (0..2**64-1)")
    parser.add_argument("--backend", choices=BACKEND_CHOICES, default="auto")
    parser.add_argument("--threads", type=_integer, default=None, help="threads (default: all cores)")
    parser.add_argument("--chunk-size", type=_integer, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--executor", choices=("local", "dask"), default="local",
                        help="where chunks run: this process, or a Dask cluster (needs the dask extra)")
    parser.add_argument("--scheduler", default=None, help="Dask scheduler address (default: a LocalCluster)")


def run_options(args: argparse.Namespace) -> dict:
    """The keyword arguments every simulation API takes from add_run_options' flags."""
    return {"seed": args.seed, "backend": args.backend, "threads": args.threads, "chunk_size": args.chunk_size}


def run_footer(record: dict) -> list[str]:
    """The closing lines of every attack report: how it ran, and whether it was cut short."""
    lines = [f"seed {record['seed']}, backend {record['backend']}, {record['threads']} thread(s)"]
    if record["partial"]:
        lines.append("PARTIAL: interrupted before all attacks ran")
    return lines


def emit(args: argparse.Namespace, record: dict, human: Callable[[dict], str]) -> int:
    """Print ``record`` as JSON with --json, else as a short report; partial runs exit 130."""
    print(json.dumps(record) if args.json else human(record))
    return 130 if record.get("partial") else 0


def _integer(text: str) -> int:
    """Integers, also written as 1e9 or 10_000_000, but never a fractional value."""
    try:
        return int(text.replace("_", ""))
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not value.is_integer():
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}")
    return int(value)


def _backends(args: argparse.Namespace) -> int:
    available = available_backends()
    if args.json:
        print(json.dumps({backend: backend in available for backend in BACKENDS}))
    else:
        for backend in BACKENDS:
            print(f"{backend:8s} {'available' if backend in available else 'unavailable'}")
    return 0


def _bench(args: argparse.Namespace) -> int:
    from combatsim.bench import run_benchmarks

    records = run_benchmarks(kernels=args.kernel, seconds=args.seconds, quiet=args.json)
    if args.json:
        print(json.dumps(records))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="combatsim", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)

    attack = commands.add_parser("attack", help="simulate many attacks of one ruleset")
    rulesets = attack.add_subparsers(dest="ruleset", required=True)
    for ruleset in RULESETS:  # each combatsim.<ruleset>.cli provides add_attack_parser
        importlib.import_module(f"combatsim.{ruleset}.cli").add_attack_parser(rulesets, add_run_options)

    from combatsim.fights import add_fight_parser

    add_fight_parser(commands, add_run_options)

    odds = commands.add_parser("odds", help="exact probabilities of one attack's outcomes")
    odds_rulesets = odds.add_subparsers(dest="ruleset", required=True)
    curve = commands.add_parser("curve", help="hit probability over a range of one parameter")
    curve_rulesets = curve.add_subparsers(dest="ruleset", required=True)
    for ruleset in RULESETS:  # each combatsim.<ruleset>.odds may provide add_odds_parser / add_curve_parser
        if importlib.util.find_spec(f"combatsim.{ruleset}.odds") is None:
            continue
        module = importlib.import_module(f"combatsim.{ruleset}.odds")
        if hasattr(module, "add_odds_parser"):
            module.add_odds_parser(odds_rulesets)
        if hasattr(module, "add_curve_parser"):
            module.add_curve_parser(curve_rulesets)

    backends = commands.add_parser("backends", help="list the available backends")
    backends.add_argument("--json", action="store_true")
    backends.set_defaults(handler=_backends)

    table = commands.add_parser("table", help="print a persona's combat table for one ruleset")
    table_rulesets = table.add_subparsers(dest="ruleset", required=True)
    for ruleset in RULESETS:  # rulesets with a combat table provide add_table_parser
        module = importlib.import_module(f"combatsim.{ruleset}.cli")
        if hasattr(module, "add_table_parser"):
            module.add_table_parser(table_rulesets)

    bench = commands.add_parser("bench", help="time every kernel against numpy and pure Python")
    bench.add_argument("--kernel", action="append", help="only this kernel (repeatable), e.g. exp.to_hit")
    bench.add_argument("--seconds", type=float, default=0.5, help="minimum time per measurement")
    bench.add_argument("--json", action="store_true")
    bench.set_defaults(handler=_bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    from combatsim.executors import use_executor

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if getattr(args, "executor", "local") == "dask":
            with use_executor("dask", args.scheduler):
                return args.handler(args)
        return args.handler(args)
    except (ValueError, TypeError) as error:
        print(f"combatsim: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("combatsim: interrupted", file=sys.stderr)
        return 130
    except OSError as error:  # unreadable or unwritable files named on the command line
        print(f"combatsim: error: {error}", file=sys.stderr)
        return 2
    except Exception as error:  # a bug: one line, the traceback only on request
        if os.environ.get("COMBATSIM_DEBUG"):
            raise
        print(f"combatsim: internal error: {type(error).__name__}: {error} (set COMBATSIM_DEBUG=1 for a traceback)",
              file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
