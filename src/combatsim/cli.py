"""combatsim: simulate tabletop combat (EXP, TSS, d100) fast, and compute its exact odds.

Each ruleset's ``attack`` and ``odds`` subcommands (and ``curve`` and ``table`` where it has them)
come from ``combatsim.<ruleset>.cli``. A subcommand's options are added only when it is chosen, so a command
imports only the code it runs. Every error in the input, argparse's own included, prints one line,
``combatsim: error: ...``, naming the flag and what it allows, and exits with status 2.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import re
import sys
from collections.abc import Callable

from combatsim.cli_tools import add_ruleset_command, one_line
from combatsim.registry import BACKENDS, RULESETS, available_backends

#: ``bench --seconds``: the longest minimum time per measurement.
MAX_BENCH_SECONDS = 3600
_NUMBER = r"([0-9][0-9_]*(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?"
#: A negative number, or a curve range that starts with one (-1:5:1).
_NEGATIVE_NUMBER = re.compile(rf"^-{_NUMBER}(:-?{_NUMBER}){{0,2}}$")


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter, without importing shutil (and with it bz2 and lzma) on every command:
    argparse makes one per option to check it. The width is found as shutil.get_terminal_size does."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        if width is None:
            try:
                columns = int(os.environ.get("COLUMNS", "0"))
            except ValueError:
                columns = 0
            if columns <= 0:
                try:
                    columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
                except (AttributeError, ValueError, OSError):
                    columns = 0
            width = (columns or 80) - 2
        super().__init__(prog, indent_increment, max_help_position, width)


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors, and subcommands whose options are added when they are chosen.

    ``add_parser(..., build=f)`` on a subcommand defers ``f(parser)`` to the first parse (or help)
    of that subcommand, so ``combatsim attack exp`` never imports the d100 or TSS code.
    """

    def __init__(self, *args, build: Callable[[Parser], None] | None = None, **kwargs) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)
        self._build = build
        # A value such as -1e3, -1_000 or -1:5:1 is a value (argparse knows only -12 and -1.5).
        self._negative_number_matcher = _NEGATIVE_NUMBER

    def parse_known_args(self, args=None, namespace=None):
        if self._build is not None:
            build, self._build = self._build, None
            build(self)
        return super().parse_known_args(args, namespace)

    def error(self, message: str):
        self.exit(2, f"combatsim: error: {one_line(message)}\n")


class _Placeholders:
    """Stands in for a subparsers action while a deferred module adds its commands: ``add_parser``
    returns the placeholder already listed under that name, given the module's description."""

    def __init__(self, parsers: dict[str, Parser]) -> None:
        self.parsers = parsers

    def add_parser(self, name: str, **kwargs) -> Parser:
        parser = self.parsers[name]
        for key in ("description", "epilog", "usage", "formatter_class"):
            if key in kwargs:
                setattr(parser, key, kwargs[key])
        return parser


def defer_commands(commands, helps: dict[str, str], register: Callable[[_Placeholders], None]) -> None:
    """Commands whose module is imported only when one of them is chosen: each is listed now with
    its help line, and ``register`` (which adds them through ``add_parser``) runs on first use."""
    placeholders: dict[str, Parser] = {}
    pending = [register]

    def build(_parser: Parser) -> None:
        if pending:
            pending.pop()(_Placeholders(placeholders))

    for name, text in helps.items():
        placeholders[name] = commands.add_parser(name, help=text, build=build)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value <= MAX_BENCH_SECONDS:  # nan fails every comparison
        raise argparse.ArgumentTypeError(f"must be a number of seconds in (0, {MAX_BENCH_SECONDS}], got {text!r}")
    return value


def _backends(args: argparse.Namespace) -> int:
    available = available_backends()
    if args.json:
        print(json.dumps({backend: backend in available for backend in BACKENDS}))
    else:
        for backend in BACKENDS:
            print(f"{backend:8s} {'available' if backend in available else 'unavailable'}")
    return 0


def _bench(args: argparse.Namespace) -> int:
    from combatsim.bench import cases, run_benchmarks

    known = [case.kernel for case in cases()]
    for name in args.kernel or ():
        if name not in known:
            raise ValueError(f"--kernel must be one of {', '.join(known)}; got {name!r}")
    def announce(kernel: str, number: int, total: int) -> None:
        print(f"combatsim: timing {kernel} (kernel {number} of {total}; {total - number} after it)", file=sys.stderr,
              flush=True)

    records = run_benchmarks(kernels=args.kernel, seconds=args.seconds, quiet=args.json,
                             announce=announce if sys.stderr.isatty() else None)
    if args.json:
        print(json.dumps(records))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The whole command line; each command adds its rulesets and options when chosen (Parser)."""
    parser = Parser(prog="combatsim", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def attack_rulesets(attack: Parser) -> None:
        rulesets = attack.add_subparsers(dest="ruleset", required=True)
        for ruleset in RULESETS:  # each combatsim.<ruleset>.cli: ATTACK_HELP, add_attack_arguments, run_attack
            module = importlib.import_module(f"combatsim.{ruleset}.cli")
            add_ruleset_command(rulesets, ruleset, module.ATTACK_HELP, module.add_attack_arguments, module.run_attack,
                                simulates=True, description=getattr(module, "ATTACK_DESCRIPTION", None))

    commands.add_parser("attack", help="simulate many attacks of one ruleset", build=attack_rulesets)

    # fight, scenario and example need the scenario machinery (tomllib, tempfile, ...): imported when chosen.
    defer_commands(commands, {"fight": "simulate whole fights from a TOML scenario file"},
                   lambda into: importlib.import_module("combatsim.fights").add_fight_parser(into))
    defer_commands(commands, {"scenario": "the scenario file reference, and a starting file",
                              "example": "the example scenarios shipped with combatsim"},
                   lambda into: importlib.import_module("combatsim.scenario_cli").add_scenario_parsers(into))

    defer_commands(commands, {"solve": "the exact best response or equilibrium of a scenario's fight"},
                   lambda into: importlib.import_module("combatsim.solve.cli").add_solve_parser(into))

    built: list[bool] = []

    def odds_and_curve_rulesets(_chosen: Parser) -> None:  # built together: fight_odds adds to both
        if built:
            return
        built.append(True)
        odds_rulesets = odds.add_subparsers(dest="ruleset", required=True)
        curve_rulesets = curve.add_subparsers(dest="ruleset", required=True)
        for ruleset in RULESETS:  # each combatsim.<ruleset>.cli: ODDS_HELP and run_odds; maybe add_curve_parser
            module = importlib.import_module(f"combatsim.{ruleset}.cli")
            add_ruleset_command(odds_rulesets, ruleset, module.ODDS_HELP, module.add_attack_arguments, module.run_odds)
            if hasattr(module, "add_curve_parser"):
                module.add_curve_parser(curve_rulesets)
        importlib.import_module("combatsim.fight_odds.cli").add_parsers(odds_rulesets, curve_rulesets)

    odds = commands.add_parser("odds", help="exact probabilities of one attack's or one fight's outcomes",
                               build=odds_and_curve_rulesets)
    curve = commands.add_parser("curve", help="exact probabilities over a range of one parameter",
                                build=odds_and_curve_rulesets)

    def backends_options(backends: Parser) -> None:
        backends.add_argument("--json", action="store_true", help="print one JSON object")
        backends.set_defaults(handler=_backends)

    commands.add_parser("backends", help="list the available backends", build=backends_options)

    def table_rulesets(table: Parser) -> None:
        rulesets = table.add_subparsers(dest="ruleset", required=True)
        for ruleset in RULESETS:  # rulesets with a combat table provide add_table_parser
            module = importlib.import_module(f"combatsim.{ruleset}.cli")
            if hasattr(module, "add_table_parser"):
                module.add_table_parser(rulesets)

    commands.add_parser("table", help="print a persona's combat table for one ruleset", build=table_rulesets)

    def bench_options(bench: Parser) -> None:
        bench.add_argument("--kernel", action="append",
                           help="only this kernel (repeatable), e.g. exp.to_hit; an unknown name lists the known ones")
        bench.add_argument("--seconds", type=_seconds, default=0.5,
                           help=f"minimum time per measurement, in (0, {MAX_BENCH_SECONDS}] seconds (default 0.5)")
        bench.add_argument("--json", action="store_true", help="print the records as one JSON list")
        bench.set_defaults(handler=_bench)

    commands.add_parser("bench", help="time every kernel against numpy and pure Python", build=bench_options)
    return parser


def _run_handler(args: argparse.Namespace) -> int:
    """The command's handler; ``attack`` with a progress line on a terminal's stderr (``fight``
    draws its own)."""
    if args.command != "attack":
        return args.handler(args)
    from combatsim.progress import ProgressLine
    from combatsim.runner import observe

    with ProgressLine("attacks") as line, observe(progress=line):
        return args.handler(args)


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exit_:  # --help, or a usage error already printed as one line
        return exit_.code if isinstance(exit_.code, int) else 2
    except KeyboardInterrupt:  # while the command's modules import: nothing ran yet
        print("combatsim: interrupted", file=sys.stderr)
        return 130
    try:
        if getattr(args, "scheduler", None) is not None and args.executor != "dask":
            raise ValueError("--scheduler needs --executor dask")
        if getattr(args, "executor", "local") == "dask" and getattr(args, "policies", None):
            raise ValueError("--policy: the policies run in this process, so --executor dask does not apply; "
                             "drop it (--threads T plays T chunks of fights at once here)")
        if getattr(args, "executor", "local") == "dask" and getattr(args, "threads", None) is not None:
            raise ValueError("--threads applies to local runs; with --executor dask each task runs on one worker thread")
        if getattr(args, "executor", "local") == "dask":
            from combatsim.executors import check_scheduler, hold_interrupts_after_stop, use_executor

            check_scheduler(args.scheduler, "--scheduler")  # before dask's import, which takes a second
            with use_executor("dask", args.scheduler), hold_interrupts_after_stop():
                return _run_handler(args)
        return _run_handler(args)
    except (ValueError, TypeError) as error:
        print(f"combatsim: error: {one_line(error)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("combatsim: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader closed the pipe (combatsim ... | head): stop quietly, as on SIGPIPE
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as error:  # unreadable or unwritable files named on the command line
        if error.strerror and error.filename is not None:  # not "[Errno 36]": the file, then why
            error = f"{error.filename!r}: {error.strerror}"
        print(f"combatsim: error: {one_line(error)}", file=sys.stderr)
        return 2
    except Exception as error:  # a bug: one line, the traceback only on request
        if os.environ.get("COMBATSIM_DEBUG"):
            raise
        print(f"combatsim: internal error: {type(error).__name__}: {error} (set COMBATSIM_DEBUG=1 for a traceback)",
              file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
