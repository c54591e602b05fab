"""``combatsim fight SCENARIO``: whole fights from a scenario file, for every ruleset.

Each ruleset's ``combatsim.<ruleset>.scenario`` module provides ``build`` (validation, see
combatsim.scenario), ``run(spec, n, seed, backend, threads, outcomes) -> FightSummary``,
``step_unit(spec)`` (what one step of a fight is called in that ruleset) and
``wins(spec, totals) -> (wins per side, draws)`` so a stop rule can read a run's running totals.

``--set PATH=VALUE`` overrides a field; ``--compare PATH=VALUE`` runs a second scenario on the
same seed and fight indices (common random numbers) and reports the paired difference of each
side's win rate (docs/scenarios.md, "What-if").
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import csv
import json
import math
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from combatsim.engine import ENGINE_BACKENDS
from combatsim.fight_summary import (
    NO_WINNER_OUTCOMES,
    Z95,
    FightSummary,
    engine_outcomes,
    standing_by_side,
    wilson_interval,
)
from combatsim.progress import ProgressLine
from combatsim.runner import observe, run_line, with_executor
from combatsim.scenario import Scenario, ScenarioError, apply_override, load, resolve, ruleset_module, validate
from combatsim.validation import check_int

MAX_FIGHTS = 10**12
#: Fights without -n: the default run, and the most a run with --target-error and no -n takes
#: on its way to the target (E = 0.0001 needs about 10**8 fights).
DEFAULT_FIGHTS = 100_000
MAX_TARGET_FIGHTS = 10**9
#: Fights whose per-fight winners (int8) and lengths (int32) are kept: for --compare's pairing and
#: the chart's bars by outcome. 5 bytes a fight: 50 MB at this bound.
MAX_OUTCOME_FIGHTS = 10_000_000
PLOT_EXTENSIONS = (".png", ".svg", ".pdf")


def add_fight_parser(commands) -> None:
    from combatsim.cli_tools import add_run_options

    parser = commands.add_parser(
        "fight", help="simulate whole fights from a TOML scenario file",
        description="Simulate whole fights from a scenario file or an example's name "
                    "(combatsim example list). Fields: combatsim scenario fields RULESET.")
    parser.add_argument("scenario", help="scenario file, or an example's name such as d100_duel")
    add_run_options(parser, default_n=DEFAULT_FIGHTS, items="fights")
    fights = parser._option_string_actions["-n"]  # None tells "-n not given" apart for --target-error
    fights.default = None
    fights.help = (f"fights to simulate (default {DEFAULT_FIGHTS:,}; with --target-error, as many as the target "
                   f"needs, at most {MAX_TARGET_FIGHTS:,}; 1e6 and 1_000_000 work)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="PATH=VALUE",
                        help="override a field, e.g. sides[0].members[0].torso=light (repeatable); "
                             "VALUE is a TOML value or a bare string")
    parser.add_argument("--compare", action="append", default=[], metavar="PATH=VALUE",
                        help="also run the scenario with this override (repeatable) on the same seeds and "
                             "report each side's win-rate difference with a 95%% interval")
    parser.add_argument("--csv", metavar="FILE", help="write the win rates and the length histogram as CSV")
    parser.add_argument("--plot", metavar="FILE.png",
                        help="chart the fights' lengths by outcome (.png, .svg or .pdf; needs the plot extra)")
    parser.add_argument("--target-error", type=float, default=None, metavar="E",
                        help="stop once every side's 95%% win-rate interval reaches at most E on each side of "
                             "the rate; E is a fraction in (0, 0.5): 0.001 is +-0.1 percentage points. Without "
                             f"-n the run goes on until the target is met, at most {MAX_TARGET_FIGHTS:,} fights; "
                             "the report says whether it was met")
    parser.add_argument("--policy", dest="policies", action="append", default=[], metavar="NAME=MODULE:CALLABLE",
                        help="play member NAME with a batched policy(obs, masks) -> actions, e.g. "
                             "Guard=examples.constant_policy:attack from the clone's root (repeatable; "
                             "docs/rl.md); the fights run on the engine (--backend auto, cython, numba or python), "
                             "on one thread unless --threads T is given, as a policy may keep state between "
                             "calls (with T, it is called from T threads at once); not on --executor dask")
    parser.set_defaults(handler=run_fight_command)


# --- output files: checked before the run, written whole or not at all ---------------------------


def check_output_path(path: str, flag: str, extensions: tuple[str, ...] = ()) -> Path:
    """Refuse an output path the run could not write, before the run (which would then be lost)."""
    from combatsim.validation import brief, check_text

    if not path or not path.strip():
        raise ValueError(f"{flag}: must name a file, got {path!r}")
    check_text(flag, path, max_length=4096)  # no escape sequences echoed back in "wrote ..."
    target = Path(path)
    try:
        name_max = os.pathconf(target.parent, "PC_NAME_MAX") if target.parent.is_dir() else 255
    except (OSError, ValueError):
        name_max = 255
    # the temporary file beside it is named ".NAME.XXXXXXXX.SUFFIX": that name must fit too
    if len(os.fsencode(target.name)) + len(target.suffix) + 10 > name_max:
        raise ValueError(f"{flag}: the file name {brief(target.name)} is too long; "
                         f"allowed: at most {name_max - len(target.suffix) - 10} bytes")
    if extensions and target.suffix.lower() not in extensions:
        found = f"extension {brief(target.suffix)}" if target.suffix else "no extension"
        raise ValueError(f"{flag}: {brief(path)} has {found}; allowed: {', '.join(extensions)}")
    try:
        if target.is_dir():
            raise ValueError(f"{flag}: {brief(path)} is a directory; name a file in it")
        if target.exists() and not target.is_file():
            raise ValueError(f"{flag}: {brief(path)} is not a regular file (a device or pipe); name a regular file")
        directory = target.parent
        if not directory.is_dir():
            raise ValueError(f"{flag}: directory {brief(str(directory))} does not exist")
    except OSError as error:
        raise ValueError(f"{flag}: cannot write {brief(path)}: {error.strerror or error}") from None
    try:  # a file made and removed in the directory: the write at the end will be allowed
        handle, probe = tempfile.mkstemp(dir=directory, prefix=f".{target.name}.", suffix=".probe")
        os.close(handle)
        os.unlink(probe)
    except OSError as error:
        raise ValueError(f"{flag}: cannot write in {brief(str(directory))}: {error.strerror}") from None
    return target


def write_whole(target: Path, write: Callable[[str], None]) -> None:
    """``write(temporary path)`` beside ``target``, then rename it over ``target``: no half file."""
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=target.suffix)
    os.close(handle)
    try:
        write(temporary)
        # mkstemp makes the file private (0600); the result gets a new file's usual mode.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


# --- the command ----------------------------------------------------------------------------------


def run_fight_command(args: argparse.Namespace) -> int:
    if args.n is None:
        args.n = MAX_TARGET_FIGHTS if args.target_error is not None else DEFAULT_FIGHTS
    csv_path = check_output_path(args.csv, "--csv") if args.csv is not None else None
    plot_path = check_output_path(args.plot, "--plot", PLOT_EXTENSIONS) if args.plot is not None else None
    if args.compare and (csv_path or plot_path or args.target_error is not None):
        raise ValueError("--compare reports on the terminal or with --json; it takes no --csv, --plot or --target-error")
    path, label = resolve(args.scenario)
    scenario = load(path, args.overrides, label=label)
    variant = None
    if args.compare:
        document = copy.deepcopy(scenario.document)
        for override in args.compare:
            apply_override(document, override, scenario.file, flag="--compare")
        variant = validate(document, scenario.file, default_name=scenario.name)
        if variant.side_names != scenario.side_names:
            raise ValueError("--compare: the sides' names must stay the same, so the two runs' sides pair up")
    check_int("n", args.n, 1, MAX_FIGHTS)
    if args.policies and (args.compare or args.target_error is not None):
        raise ValueError("--policy: fights played by a policy take no --compare or --target-error")
    if args.compare:
        if args.n > MAX_OUTCOME_FIGHTS:  # each fight's winner is kept to pair the two runs
            raise ValueError(f"-n must be at most {MAX_OUTCOME_FIGHTS:,} with --compare (it keeps each fight's "
                             f"winner to pair the two runs), got {args.n:,}")
        return compare_command(args, scenario, variant)
    if args.target_error is not None and not 0 < args.target_error < 0.5:
        raise ValueError(f"--target-error must be in (0, 0.5), got {args.target_error}")
    module = ruleset_module(scenario.ruleset)

    def precise_enough(done: int, totals) -> bool:
        return widest_error(module.wins(scenario.spec, totals)[0], done) <= args.target_error

    by_outcome = plot_path is not None and args.n <= MAX_OUTCOME_FIGHTS
    if args.policies:
        from combatsim.policies import parse_policies

        if os.getcwd() not in sys.path:  # as `python -m` would: a policy module in the current directory imports
            sys.path.insert(0, os.getcwd())
        with ProgressLine() as progress:
            results = simulate_policy_fights(scenario, args.n, seed=args.seed, policies=parse_policies(args.policies),
                                             backend=args.backend, threads=args.threads, chunk_size=args.chunk_size,
                                             outcomes=by_outcome, progress=progress)
        summary = engine_summary(scenario, results)
    else:
        summary = run_scenario(args, scenario, outcomes=by_outcome,
                               stop=precise_enough if args.target_error else None)
    record = with_executor({"scenario": scenario.name, "ruleset": scenario.ruleset,
                            **summary.as_dict(scenario.side_names, report_member_names(scenario))})
    if args.target_error is not None:
        record["target_error"] = target_record(summary, args.target_error)
    if args.policies:
        record["policies"] = dict(text.rpartition("=")[::2] for text in args.policies)
        record["masked_actions"] = results.masked_actions
    if csv_path is not None:
        write_whole(csv_path, lambda temporary: write_csv(temporary, record))
        print(f"combatsim: wrote the win rates and the length histogram to {csv_path}", file=sys.stderr)
    if plot_path is not None:
        plot_lengths(summary, scenario, plot_path)
        print(f"combatsim: wrote the chart of fight lengths to {plot_path}", file=sys.stderr)
    print(json.dumps(record) if args.json else human_report(record))
    return 130 if summary.partial else 0


def widest_error(wins: Sequence[int], fights: int) -> float:
    """The largest distance, over the sides, from a side's win rate to either end of its 95 % interval."""
    if not fights:
        return 1.0
    return max(max(w / fights - lo, hi - w / fights) for w in wins for lo, hi in [wilson_interval(w, fights)])


def target_record(summary: FightSummary, target: float) -> dict:
    """Whether ``--target-error`` was met, and if not, why the run stopped short of it."""
    reached = widest_error(summary.wins, summary.fights)
    met = reached <= target
    why = None if met else "interrupted" if summary.partial else "fight limit"
    return {"target": target, "reached": reached, "met": met, "stopped_short_because": why}


def report_member_names(scenario: Scenario) -> tuple[str, ...] | None:
    """The members' names (combatsim.game), or None where two share a name: a fight needs no
    unique names, and the report then names members by position."""
    from combatsim.game import member_names

    try:
        return member_names(scenario)
    except ScenarioError:
        return None


def run_scenario(args: argparse.Namespace, scenario: Scenario, outcomes: bool, stop=None) -> FightSummary:
    module = ruleset_module(scenario.ruleset)
    with ProgressLine() as progress, observe(progress=progress, stop=stop):
        return module.run(scenario.spec, n=args.n, seed=args.seed, backend=args.backend, threads=args.threads,
                          chunk_size=args.chunk_size, outcomes=outcomes)


def simulate_scenario(scenario, n: int, *, seed: int = 0, policies=None, backend: str = "auto",
                      threads: int | None = None, chunk_size: int | None = None, outcomes: bool = False,
                      progress: Callable[[int, int], None] | None = None) -> FightSummary:
    """Fights 0..n-1 of ``seed`` of ``scenario`` (a Scenario, a path or example name, or a document).

    ``policies`` maps member names (combatsim.game) to batched policies ``policy(obs, masks) ->
    actions`` (combatsim.policies): those members are played by them, every other member by its
    scripted policy, through the engine, ``chunk_size`` fights at a time in lockstep (``threads``
    chunks at once, default one, as a policy may keep state; ``backend`` auto, cython, numba or
    python: auto is Cython where built, else Numba). Without
    policies this is ``combatsim fight``'s run on the fight kernels. Either way the summary is
    the one ``combatsim fight`` reports; ``progress(done, n)`` is told as fights finish.
    """
    from combatsim.game import as_scenario

    scenario = as_scenario(scenario)
    module = ruleset_module(scenario.ruleset)
    if not policies:
        with observe(progress=progress):
            return module.run(scenario.spec, n=n, seed=seed, backend=backend, threads=threads,
                              chunk_size=chunk_size, outcomes=outcomes)
    return engine_summary(scenario, simulate_policy_fights(scenario, n, seed=seed, policies=policies, backend=backend,
                                                           threads=threads, chunk_size=chunk_size, outcomes=outcomes,
                                                           progress=progress))


def simulate_policy_fights(scenario: Scenario, n: int, *, seed: int, policies, backend: str, threads: int | None,
                           chunk_size: int | None, outcomes: bool,
                           progress: Callable[[int, int], None] | None) -> object:
    """simulate_scenario's fights with policies, as the engine counted them (combatsim.policies.FightResults)."""
    from combatsim.game import scenario_game
    from combatsim.policies import DEFAULT_CHUNK, play_fights
    from combatsim.validation import check_choice

    check_choice("backend", backend, ENGINE_BACKENDS)
    check_int("n", n, 1, MAX_FIGHTS)
    return play_fights(scenario_game(scenario), n, seed, policies, backend=backend,
                       chunk=DEFAULT_CHUNK if chunk_size is None else min(chunk_size, 1 << 20), outcomes=outcomes,
                       progress=progress, threads=1 if threads is None else threads)


def engine_summary(scenario: Scenario, results) -> FightSummary:
    """``combatsim fight``'s summary of fights the engine played (combatsim.policies.FightResults)."""
    module = ruleset_module(scenario.ruleset)
    winner, rounds = engine_outcomes(results)
    return FightSummary(
        fights=results.fights, wins=list(results.wins), rounds_histogram=results.length_histogram,
        seed=results.seed, backend=results.backend, threads=results.threads, partial=results.partial,
        step_unit=module.step_unit(scenario.spec), winner=winner, rounds=rounds,
        standing=standing_by_side(results.standing, [len(side["members"]) for side in scenario.document["sides"]]),
        **module.engine_figures(scenario.spec, results),
    )


def plot_lengths(summary: FightSummary, scenario: Scenario, path: Path) -> None:
    from combatsim.plotting import plot_stacked_bars

    lengths = sorted(summary.rounds_histogram)
    title = f"{scenario.name}: fight lengths"
    if summary.winner is not None:
        top = max(lengths, default=0) + 1
        outcomes = [(f"{scenario.side_names[0]} wins", 0), (f"{scenario.side_names[1]} wins", 1), *NO_WINNER_OUTCOMES]
        stacks = []
        for name, code in outcomes:
            by_length = np.bincount(summary.rounds[summary.winner == code], minlength=top)
            stacks.append((name, [int(by_length[x]) for x in lengths]))
    else:
        stacks = [("fights", [summary.rounds_histogram[x] for x in lengths])]
        title += f" (not split by outcome: over {MAX_OUTCOME_FIGHTS:,} fights)"
    write_whole(path, lambda temporary: plot_stacked_bars(lengths, stacks, temporary, title=title,
                                                          xlabel=summary.step_unit, ylabel="fights",
                                                          file_format=path.suffix[1:].lower()))


def write_csv(path: str, record: dict) -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["kind", "key", "value", "ci95_low", "ci95_high"])
        for side in record["sides"]:
            writer.writerow(["wins", side["name"], side["wins"], "", ""])
            writer.writerow(["win_rate", side["name"], side["win_rate"], *side["win_rate_ci95"]])
        writer.writerows([key, "", record[key], "", ""] for key in ("draws", "draw_rate", "unfinished", "unfinished_rate")
                         if key in record)
        for side in record["sides"]:
            for member in side["members"]:
                writer.writerow(["standing", member["name"], member["standing_count"], "", ""])
                writer.writerow(["standing_rate", member["name"], member["standing_rate"], "", ""])
        for key, value in record["length"]["histogram"].items():
            writer.writerow([f"fights by length in {record['length']['unit']}", key, value, "", ""])


# --- reports --------------------------------------------------------------------------------------


def label(key: str) -> str:
    """A figure's key in words: ``hits_count`` -> 'hits (count)', ``stun_points_mean_per_attack`` ->
    'stun points (mean per attack)'."""
    for suffix in ("_count", "_total"):
        if key.endswith(suffix):
            return f"{key.removesuffix(suffix).replace('_', ' ')} ({suffix[1:]})"
    if "_mean_per_" in key:
        what, _, per = key.partition("_mean_per_")
        return f"{what.replace('_', ' ')} (mean per {per.replace('_', ' ')})"
    return key.replace("_", " ")


def figure(key: str, value) -> str:
    if key.endswith("_rate"):
        return f"{value:.2%}"
    if isinstance(value, float):
        return f"{value:,.3f}"
    return f"{value:,}"


def human_report(record: dict) -> str:
    length = record["length"]
    lines = [f"{record['scenario']} ({record['ruleset']}): {record['fights']:,} fights, seed {record['seed']}"]
    width = max(len(side["name"]) for side in record["sides"])
    for side in record["sides"]:
        lo, hi = side["win_rate_ci95"]
        lines.append(f"  {side['name']:<{width}} wins   {side['wins']:>13,}  {side['win_rate']:8.3%}"
                     f"  (95% interval {lo:.3%} .. {hi:.3%})")
    lines.append(f"  {'draws':<{width}}        {record['draws']:>13,}  {record['draw_rate']:8.3%}")
    if "unfinished" in record:
        lines.append(f"  {'unfinished':<{width + 8}}{record['unfinished']:>13,}  {record['unfinished_rate']:8.3%}")
    lines.append(f"  length: mean {length['mean']:,.3f} {length['unit']}")
    not_figures = ("name", "wins", "win_rate", "win_rate_ci95", "members")
    groups = [(side["name"], {k: v for k, v in side.items() if k not in not_figures}, side["members"])
              for side in record["sides"]]
    groups.append(("both sides", record["totals"], []))
    for name, figures, members in groups:
        # A member alone on its side stands where its side wins or the fight ran to the limit: the
        # side's figures say it already, so only teams list their members.
        members = members if len(members) > 1 else []
        if figures or members:
            lines.append(f"  {name}:")
            key_width = max([len(label(k)) for k in figures] + [len(m["name"]) + 9 for m in members])
            lines.extend(f"    {label(k):<{key_width}}  {figure(k, v):>16}" for k, v in figures.items())
            lines.extend(f"    {m['name'] + ' standing':<{key_width}}  {m['standing_count']:>16,}  "
                         f"{m['standing_rate']:.2%}" for m in members)
    if any("wins_by_flight_count" in side for side in record["sides"]):
        lines.append("  wins include wins by flight (at least one foe escaped rather than went out)")
    masked = record.get("masked_actions", {})
    for name, policy in record.get("policies", {}).items():
        lines.append(f"  {name} played by the policy {policy}; masked actions it chose (played as doing nothing): "
                     f"{masked.get(name, 0):,}")
    lines.append(f"  {run_line(record)}")
    target = record.get("target_error")
    if target is not None:
        goal = f"target error {target['target']:g} (+-{100 * target['target']:g} percentage points)"
        reached = f"+-{100 * target['reached']:.4g} points"
        if target["met"]:
            lines.append(f"  {goal} met after {record['fights']:,} fights ({reached})")
        elif target["stopped_short_because"] == "interrupted":
            lines.append(f"  {goal} NOT met: interrupted after {record['fights']:,} fights (reached {reached})")
        else:
            lines.append(f"  {goal} NOT met: the run reached its limit of {record['fights']:,} fights (-n) "
                         f"at {reached}; raise -n or leave it out")
    if record["partial"]:
        lines.append("PARTIAL: interrupted before all fights ran")
    return "\n".join(lines)


# --- what-if: two scenarios on the same fights ----------------------------------------------------


def paired_difference(baseline: np.ndarray, variant: np.ndarray, outcome: int) -> tuple[float, float, float]:
    """Mean and 95 % interval of d_i = [variant_i == outcome] - [baseline_i == outcome].

    Fight i of both runs draws the same random words (same seed, same index), so the two
    indicators are correlated and the paired d_i's variance, not the sum of two binomial
    variances, measures the difference: with n+ fights where only the variant has the outcome and
    n- where only the baseline has it, mean = (n+ - n-)/n and the sample variance is
    ((n+ + n-)/n - mean^2) * n/(n - 1); the interval is the normal one, mean +- 1.96 sd/sqrt(n).
    """
    n = len(baseline)
    gained = int(np.count_nonzero((variant == outcome) & (baseline != outcome)))
    lost = int(np.count_nonzero((baseline == outcome) & (variant != outcome)))
    mean = (gained - lost) / n
    variance = ((gained + lost) / n - mean * mean) * n / (n - 1) if n > 1 else 0.0
    half = Z95 * math.sqrt(max(variance, 0.0) / n)
    return mean, mean - half, mean + half


def compare_command(args: argparse.Namespace, baseline: Scenario, variant: Scenario) -> int:
    first = run_scenario(args, baseline, outcomes=True)
    first.rounds = None  # only the winners pair up: free the lengths before the second run
    second = run_scenario(args, variant, outcomes=True) if not first.partial else None
    fights = min(first.fights, second.fights) if second is not None else 0
    a = first.winner[:fights]
    b = second.winner[:fights] if second is not None else a

    def rate(winner: np.ndarray, code: int) -> float:
        return int(np.count_nonzero(winner == code)) / fights if fights else 0.0

    rows = []
    for name, code in [(baseline.side_names[0], 0), (baseline.side_names[1], 1), *NO_WINNER_OUTCOMES]:
        mean, lo, hi = paired_difference(a, b, code) if fights else (0.0, 0.0, 0.0)
        rows.append({"name": name, "baseline_rate": rate(a, code), "variant_rate": rate(b, code),
                     "difference": mean, "difference_ci95": [lo, hi]})
    partial = first.partial or (second is not None and second.partial)
    record = {
        "scenario": baseline.name, "ruleset": baseline.ruleset, "fights": fights,
        "baseline": args.overrides, "variant": [*args.overrides, *args.compare],
        "win_rates": rows[:2], "draw_rate": rows[2], "unfinished_rate": rows[3],
        "method": "common random numbers: both runs use the same seed and fight indices; 95 % normal "
                  "interval on the paired per-fight differences",
        "seed": args.seed, "backend": first.backend, "threads": first.threads, "partial": partial,
    }
    record = with_executor(record)
    print(json.dumps(record) if args.json else compare_report(record))
    return 130 if partial else 0


def compare_report(record: dict) -> str:
    lines = [f"{record['scenario']} ({record['ruleset']}): {record['fights']:,} fights of each, on the same seeds "
             f"(seed {record['seed']})",
             f"  variant: {', '.join(record['variant'][len(record['baseline']):])}"]
    rows = [*record["win_rates"], record["draw_rate"], record["unfinished_rate"]]
    width = max(len(row["name"]) + 5 for row in rows)
    lines.append(f"  {'':<{width}}  {'baseline':>9}  {'variant':>9}  difference in percentage points (95% interval)")
    for row in rows:
        title = f"{row['name']} wins" if any(row is side for side in record["win_rates"]) else row["name"]
        lo, hi = row["difference_ci95"]
        lines.append(f"  {title:<{width}}  {row['baseline_rate']:9.3%}  {row['variant_rate']:9.3%}  "
                     f"{100 * row['difference']:+8.3f}  ({100 * lo:+.3f} .. {100 * hi:+.3f})")
    lines.append(f"  {run_line(record)}")
    if record["partial"]:
        lines.append("PARTIAL: interrupted before all fights ran")
    return "\n".join(lines)
