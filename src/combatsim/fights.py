"""``combatsim fight SCENARIO.toml``: whole fights from a scenario file, for every ruleset.

Each ruleset's ``combatsim.<ruleset>.scenario`` module provides ``build`` (validation, see
combatsim.scenario), ``run(spec, n, seed, backend, threads) -> FightSummary`` and
``wins(spec, totals) -> (wins per side, draws)`` so a stop rule can read a run's running totals.
"""

from __future__ import annotations

import argparse
import csv
import importlib
import json
import sys
import time
from dataclasses import dataclass, field

from combatsim.runner import observe
from combatsim.scenario import load, wilson_interval

MAX_FIGHTS = 10**12


@dataclass
class FightSummary:
    fights: int
    wins: list[int]
    draws: int
    #: rounds (or EXP units) to the end -> number of fights
    rounds_histogram: dict[int, int]
    seed: int
    backend: str
    threads: int
    partial: bool = False
    stopped_early: bool = False
    #: "rounds" for d100 and TSS, "units" for EXP
    round_name: str = "rounds"
    #: ruleset-specific totals (damage by type, wounds by severity, ammunition...)
    statistics: dict = field(default_factory=dict)

    def as_dict(self, side_names: list[str]) -> dict:
        total = sum(self.rounds_histogram.values())
        mean = sum(r * c for r, c in self.rounds_histogram.items()) / total if total else 0.0
        return {
            "fights": self.fights,
            "draws": self.draws,
            "sides": [
                {"name": name, "wins": wins, "win_rate": wins / self.fights if self.fights else 0.0,
                 "ci95": list(wilson_interval(wins, self.fights))}
                for name, wins in zip(side_names, self.wins, strict=True)
            ],
            # Always under "rounds"; "round_unit" says what one is (EXP fights count units).
            "rounds": {"mean": mean, "histogram": {str(k): v for k, v in sorted(self.rounds_histogram.items())}},
            "round_unit": self.round_name,
            "statistics": self.statistics,
            "seed": self.seed,
            "backend": self.backend,
            "threads": self.threads,
            "partial": self.partial,
            "stopped_early": self.stopped_early,
        }


def add_fight_parser(commands, add_run_options) -> None:
    parser = commands.add_parser("fight", help="simulate whole fights from a TOML scenario file")
    parser.add_argument("scenario", help="scenario file (see examples/)")
    add_run_options(parser, default_n=100_000)
    parser.add_argument("--csv", metavar="FILE", help="write the rounds histogram and win rates as CSV")
    parser.add_argument("--plot", metavar="FILE.png", help="plot the rounds histogram (needs the plot extra)")
    parser.add_argument("--target-error", type=float, default=None,
                        help="stop once every side's 95%% win-rate interval is at most this wide on each side")
    parser.set_defaults(handler=run_fight_command)


class ProgressLine:
    """A progress bar on a terminal's stderr (rich's, when rich is installed); silent anywhere else."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and sys.stderr.isatty() and sys.stdout.isatty()
        self.last = 0.0
        self.rich = None
        if self.enabled:
            try:
                from rich.progress import Progress
            except ImportError:
                pass
            else:
                self.rich = Progress(transient=True)
                self.task = self.rich.add_task("fights", total=None)
                self.rich.start()

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if not self.enabled or (now - self.last < 0.1 and done < total):
            return
        if self.rich is not None:
            self.rich.update(self.task, completed=done, total=total)
            return
        self.last = now
        width = 30
        filled = int(width * done / total) if total else width
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done:,}/{total:,}")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    def close(self) -> None:
        if self.rich is not None:
            self.rich.stop()


def run_fight_command(args: argparse.Namespace) -> int:
    from combatsim.validation import check_int

    scenario = load(args.scenario)
    check_int("n", args.n, 1, MAX_FIGHTS)
    if args.target_error is not None and not 0 < args.target_error < 0.5:
        raise ValueError(f"--target-error must be in (0, 0.5), got {args.target_error}")
    module = importlib.import_module(f"combatsim.{scenario.ruleset}.scenario")

    def precise_enough(done: int, totals) -> bool:
        wins, _ = module.wins(scenario.spec, totals)
        return all(
            max(w / done - lo, hi - w / done) <= args.target_error
            for w in wins
            for lo, hi in [wilson_interval(w, done)]
        )

    progress = ProgressLine(enabled=not args.json)
    try:
        with observe(progress=progress, stop=precise_enough if args.target_error else None):
            summary = module.run(scenario.spec, n=args.n, seed=args.seed, backend=args.backend, threads=args.threads,
                                 chunk_size=args.chunk_size)
    finally:
        progress.close()
    record = {"scenario": scenario.name, "ruleset": scenario.ruleset, **summary.as_dict(scenario.side_names)}
    if args.csv:
        write_csv(args.csv, record, summary.round_name)
    if args.plot:
        from combatsim.plotting import plot_histogram

        plot_histogram(record["rounds"]["histogram"], args.plot,
                       title=f"{scenario.name}: {summary.round_name} to the end", xlabel=summary.round_name)
    print(json.dumps(record) if args.json else human_report(record, summary.round_name))
    return 130 if summary.partial else 0


def write_csv(path: str, record: dict, round_name: str) -> None:
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["kind", "key", "value", "ci95_low", "ci95_high"])
        for side in record["sides"]:
            writer.writerow(["win_rate", side["name"], side["win_rate"], *side["ci95"]])
        writer.writerow(["draws", "", record["draws"], "", ""])
        for key, value in record["rounds"]["histogram"].items():
            writer.writerow([round_name, key, value, "", ""])


def human_report(record: dict, round_name: str) -> str:
    lines = [f"{record['scenario']} ({record['ruleset']}): {record['fights']:,} fights, seed {record['seed']}, "
             f"backend {record['backend']}"]
    for side in record["sides"]:
        lo, hi = side["ci95"]
        lines.append(f"  {side['name']:<24} wins {side['win_rate']:.4%}  (95% CI {lo:.4%} .. {hi:.4%})")
    lines.append(f"  draws {record['draws']:,}; mean {round_name} to the end {record['rounds']['mean']:.3f}")
    for key, value in record["statistics"].items():
        lines.append(f"  {key}: {value}")
    if record["stopped_early"]:
        lines.append("  stopped early: the target error was reached")
    if record["partial"]:
        lines.append("PARTIAL: interrupted before all fights ran")
    return "\n".join(lines)
