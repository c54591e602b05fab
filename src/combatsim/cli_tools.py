"""What the command line's modules share: argument types, the run options and the reports.

``combatsim.cli`` loads each ruleset's ``combatsim.<ruleset>.cli`` by name; those import what they
need from here, never from ``combatsim.cli``, so no module imports back the one that loaded it.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable

from combatsim.registry import BACKEND_CHOICES

#: The most threads a run takes (as combatsim.validation.check_threads).
MAX_THREADS = 1024


def integer(low: int | None = None, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer in ``low..high`` (either open), written as 12, 1_000, 1e9 or
    2.5e3 and read exactly (9007199254740993.0 is that integer, not the nearest float)."""
    allowed = f"an integer{_range(low, high)}"

    def parse(text: str) -> int:
        value = exact_integer(text)
        if value is None:
            from combatsim.validation import brief

            raise argparse.ArgumentTypeError(f"must be {allowed}, got {brief(text)}")
        if (low is not None and value < low) or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be {allowed}, got {text.strip()}")
        return value

    return parse


def checked(check: Callable[[str], object]) -> Callable[[str], object]:
    """An argparse type from a check that raises ValueError, whose message becomes the error."""
    def parse(text: str) -> object:
        try:
            return check(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    return parse


#: A word of an error message longer than this is a value echoed whole: only its start is kept.
_LONG_WORD = re.compile(r"\S{121,}")


def one_line(message: object) -> str:
    """An error message as one line of readable length: whitespace runs become one space, and a
    word over 120 characters (a value quoted whole) keeps its first 100."""
    text = " ".join(str(message).split())
    if not text.isprintable():  # an escape sequence in a quoted value is shown, never sent to the terminal
        text = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)
    text = _LONG_WORD.sub(lambda word: f"{word[0][:100]}... ({len(word[0]):,} characters)", text)
    return text if len(text) <= 2000 else f"{text[:2000]}... ({len(text):,} characters)"


def exact_integer(text: str) -> int | None:
    """The integer ``text`` writes, or None (combatsim.validation.parse_integer: Python's literal
    forms, ASCII digits, at most 40 digits, which no flag's range exceeds)."""
    from combatsim.validation import parse_integer

    return parse_integer(text)


def _range(low: int | None, high: int | None) -> str:
    if low is not None and high is not None:
        return f" in {low}..{high}"
    if low is not None:
        return f" >= {low}"
    if high is not None:
        return f" <= {high}"
    return ""


def add_run_options(parser: argparse.ArgumentParser, default_n: int, items: str) -> None:
    """The options every simulation command shares; ``items`` names what ``-n`` counts and its long
    form (``--attacks``, ``--fights``)."""
    from combatsim.runner import INT64_MAX_ITEMS
    from combatsim.validation import SEED_MAX

    parser.add_argument("-n", f"--{items}", dest="n", type=integer(1, INT64_MAX_ITEMS), default=default_n,
                        help=f"{items} to simulate (default {default_n:,}; 1e6 and 1_000_000 work)")
    parser.add_argument("--seed", type=integer(0, SEED_MAX), default=0, help=f"seed, 0..{SEED_MAX} (default 0)")
    parser.add_argument("--backend", choices=BACKEND_CHOICES, default="auto",
                        help="compiled kernels to use (default auto: cython, else numba, else python)")
    parser.add_argument("--threads", type=integer(1, MAX_THREADS), default=None,
                        help=f"threads, 1..{MAX_THREADS} (default: all cores)")
    parser.add_argument("--chunk-size", type=integer(1, INT64_MAX_ITEMS), default=None, help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--executor", choices=("local", "dask"), default="local",
                        help="where chunks run: this process, or a Dask cluster (needs the dask extra)")
    parser.add_argument("--scheduler", default=None, help="Dask scheduler address (default: a LocalCluster)")


def add_ruleset_command(subparsers, ruleset: str, help: str, add_arguments: Callable[[argparse.ArgumentParser], None],
                        handler: Callable[[argparse.Namespace], int], simulates: bool = False,
                        description: str | None = None) -> None:
    """A ruleset's ``attack`` subcommand (``simulates``: with the run options) or ``odds``
    subcommand (``--json`` prints exact fractions): the flags of one attack from ``add_arguments``."""
    def build(parser: argparse.ArgumentParser) -> None:
        add_arguments(parser)
        if simulates:
            add_run_options(parser, default_n=10_000_000, items="attacks")
        else:
            parser.add_argument("--json", action="store_true", help="print one JSON object of exact fractions")
        parser.set_defaults(handler=handler)

    subparsers.add_parser(ruleset, help=help, description=description, build=build)


def run_options(args: argparse.Namespace) -> dict:
    """The keyword arguments every simulation API takes from add_run_options' flags."""
    return {"seed": args.seed, "backend": args.backend, "threads": args.threads, "chunk_size": args.chunk_size}


def count_lines(record: dict, names: tuple[str, ...], suffix: str = "") -> list[str]:
    """An attack report's table: each count in ``names`` and its rate per attack."""
    attacks = record["attacks"] or 1
    return [f"  {name:17s} {record[name]:>14,}  {record[name] / attacks:.6f}{suffix}" for name in names]


def attack_report(lines: list[str], record: dict) -> str:
    """An attack report: ``lines``, then how the run went, and whether it was cut short."""
    from combatsim.runner import run_line

    lines = [*lines, f"seed {record['seed']}, {run_line(record)}"]
    if record["partial"]:
        lines.append("PARTIAL: interrupted before all attacks ran")
    return "\n".join(lines)


def emit(args: argparse.Namespace, record: dict, human: Callable[[dict], str]) -> int:
    """Print ``record`` as JSON with --json, else as a short report; partial runs exit 130. A
    simulation's record (one with a backend) gets the executor it ran on."""
    if "backend" in record and "threads" in record:
        from combatsim.runner import with_executor

        record = with_executor(record)
    print(json.dumps(record) if args.json else human(record))
    return 130 if record.get("partial") else 0
