"""What command-line users expect: fight --policy's report, threads, Dask and Ctrl-C; --target-error
without -n; progress on a terminal's stderr; labels (executor, unfinished fights, TSS points,
"P(1 hit)", --compare's limit); the README's --policy example; the two result-deciding rules in
``scenario fields``. The Ctrl-C and terminal cases go through the installed command.
"""

from __future__ import annotations

import csv
import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from combatsim.cli import main as cli_main
from tests._processes import interrupt

ROOT = Path(__file__).resolve().parent.parent
COMBATSIM = str(Path(sys.executable).with_name("combatsim"))

POLICY_MODULE = '''
import numpy as np


def attack_always(obs, masks):
    """Action 1 (d100: attack) in every fight, legal or not: masked choices get counted."""
    return np.ones(len(obs), dtype=np.int64)


def legal_attack(obs, masks):
    return np.where(masks[:, 1] > 0, 1, 0).astype(np.int64)
'''


@pytest.fixture
def policy_dir(tmp_path, monkeypatch):
    (tmp_path / "agents_mod.py").write_text(POLICY_MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def run(capsys, *argv) -> tuple[int, str, str]:
    code = cli_main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv) -> dict:
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


# --- fight --policy -------------------------------------------------------------------------------


def test_policy_fights_report_masked_actions_per_member(capsys, policy_dir):
    record = run_json(capsys, "fight", "d100_duel", "-n", 300, "--policy", "Guard=agents_mod:attack_always",
                      "--policy", "Veteran=agents_mod:legal_attack")
    assert record["masked_actions"]["Veteran"] == 0
    assert record["masked_actions"]["Guard"] > 0
    assert set(record["masked_actions"]) == {"Guard", "Veteran"}
    code, out, _ = run(capsys, "fight", "d100_duel", "-n", 300, "--policy", "Guard=agents_mod:attack_always")
    guard = f"{record['masked_actions']['Guard']:,}"
    assert code == 0 and (f"  Guard played by the policy agents_mod:attack_always; masked actions it chose "
                          f"(played as doing nothing): {guard}") in out.splitlines()


def test_policy_fights_honour_threads_with_the_same_fights(capsys, policy_dir):
    args = ("fight", "d100_duel", "-n", 5000, "--chunk-size", 700, "--policy", "Guard=agents_mod:legal_attack")
    one = run_json(capsys, *args)
    two = run_json(capsys, *args, "--threads", 2)
    assert one["threads"] == 1 and two["threads"] == 2
    del one["threads"], two["threads"]
    assert one == two
    assert two["fights"] == 5000


def test_policy_with_dask_is_one_line_refused_before_any_cluster(capsys, policy_dir):
    start = time.monotonic()
    code, out, err = run(capsys, "fight", "d100_duel", "-n", 100, "--policy", "Guard=agents_mod:legal_attack",
                         "--executor", "dask")
    assert code == 2 and out == "" and time.monotonic() - start < 1.0
    assert err.count("\n") == 1 and err.startswith("combatsim: error: --policy: ")
    assert "--executor dask" in err


def interrupt_after(arguments: list[str], seconds: float, cwd: Path) -> tuple[int, str, str]:
    """Run the installed ``combatsim ARGUMENTS``, send it SIGINT after ``seconds``, as Ctrl-C does."""
    stopped = interrupt(arguments, seconds, cwd=cwd)
    return stopped.returncode, stopped.out, stopped.err


def test_ctrl_c_on_policy_fights_prints_the_finished_fights_marked_partial(policy_dir):
    code, out, err = interrupt_after(["fight", "d100_duel", "-n", "1e9", "--policy", "Guard=agents_mod:legal_attack",
                                      "--json"], 3.0, policy_dir)
    assert code == 130, err
    record = json.loads(out)
    assert record["partial"] is True and 0 < record["fights"] < 10**9
    assert record["fights"] % 4096 == 0  # whole chunks only: fights 0..k-1
    assert sum(side["wins"] for side in record["sides"]) + record["draws"] + record["unfinished"] == record["fights"]
    code, out, _ = interrupt_after(["fight", "d100_duel", "-n", "1e9", "--policy", "Guard=agents_mod:legal_attack",
                                    "--threads", "2"], 3.0, policy_dir)
    assert code == 130 and out.rstrip().endswith("PARTIAL: interrupted before all fights ran")


# --- --target-error -------------------------------------------------------------------------------


def test_target_error_without_n_runs_until_the_target_is_met(capsys):
    record = run_json(capsys, "fight", "d100_duel", "--target-error", 0.004)
    target = record["target_error"]
    assert target["met"] and target["reached"] <= 0.004 and target["stopped_short_because"] is None
    assert 100_000 < record["fights"] < 10**9  # past the default -n, well short of the cap


def test_target_error_says_when_it_stopped_short_and_why(capsys):
    record = run_json(capsys, "fight", "d100_duel", "-n", 2000, "--target-error", 0.001)
    target = record["target_error"]
    assert not target["met"] and target["stopped_short_because"] == "fight limit" and target["reached"] > 0.001
    code, out, _ = run(capsys, "fight", "d100_duel", "-n", 2000, "--target-error", 0.001)
    assert code == 0
    assert re.search(r"target error 0\.001 \(\+-0\.1 percentage points\) NOT met: the run reached its limit of "
                     r"2,000 fights \(-n\) at \+-[\d.]+ points; raise -n or leave it out", out)


def test_target_error_help_says_it_is_a_fraction(capsys):
    code, out, _ = run(capsys, "fight", "--help")
    text = " ".join(out.split())
    assert code == 0
    assert "E is a fraction in (0, 0.5): 0.001 is +-0.1 percentage points" in text
    assert "at most 1,000,000,000 fights" in text


# --- progress on a terminal -------------------------------------------------------------------------


def with_terminal_stderr(arguments: list[str]) -> tuple[int, str, str]:
    """Run the installed command with stderr on a pseudo-terminal and stdout on a pipe."""
    leader, follower = pty.openpty()
    process = subprocess.Popen([COMBATSIM, *arguments], stdout=subprocess.PIPE, stderr=follower, text=True)
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 120)
        if not ready:
            break
        try:
            data = os.read(leader, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    out = process.stdout.read()
    process.wait(timeout=60)
    os.close(leader)
    return process.returncode, out, b"".join(chunks).decode()


def test_progress_shows_on_a_terminals_stderr_with_percent_rate_and_eta():
    code, out, err = with_terminal_stderr(["fight", "d100_duel", "-n", "5e5", "--json", "--threads", "1"])
    assert code == 0 and json.loads(out)["fights"] == 500_000  # stdout is not a terminal: still progress
    assert re.search(r"\d+\.\d%  [\d,]+/500,000 fights  [\d,]+ fights/s  ETA \S+", err), err[-300:]
    assert err.endswith("\r\x1b[K")  # the line is cleared: the report starts on a line of its own


def test_attack_progress_on_a_terminal():
    code, _, err = with_terminal_stderr(["attack", "d100", "--pool", "60", "--lethality", "30", "-n", "2e7",
                                         "--threads", "1"])
    assert code == 0 and re.search(r"% +[\d,]+/20,000,000 attacks", err) and err.endswith("\r\x1b[K")


def test_bench_says_which_kernel_it_times_and_how_many_remain(capsys, monkeypatch):
    import combatsim.bench

    monkeypatch.setattr(combatsim.bench, "measure", lambda call, items, seconds: 1.0)  # no timing: the words
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    code, out, err = run(capsys, "bench", "--kernel", "exp.to_hit", "--kernel", "d100.attack", "--json")
    assert code == 0 and len(json.loads(out)) > 0
    assert err.splitlines() == ["combatsim: timing exp.to_hit (kernel 1 of 2; 1 after it)",
                                "combatsim: timing d100.attack (kernel 2 of 2; 0 after it)"]


# --- labels ---------------------------------------------------------------------------------------------


def test_reports_name_the_executor(capsys):
    record = run_json(capsys, "attack", "exp", "--bonus", 110, "--max-roll", 760, "--armour-rating", 580, "-n", 1000)
    assert record["executor"] == "local"
    code, out, _ = run(capsys, "fight", "d100_duel", "-n", 200)
    assert code == 0 and "  backend " in out and ", executor local, " in out
    assert run_json(capsys, "fight", "d100_duel", "-n", 200)["executor"] == "local"
    from combatsim.executors import ExecutorChoice
    from combatsim.runner import EXECUTOR, run_line, with_executor

    token = EXECUTOR.set(ExecutorChoice("dask"))
    try:
        record = with_executor({"backend": "cython", "threads": 2})
    finally:
        EXECUTOR.reset(token)
    assert record["executor"] == "dask" and record["threads"] == 1
    assert run_line(record) == "backend cython, executor dask (each task on one worker thread)"


@pytest.mark.parametrize(("example", "limit"), [("exp_bob_too", "options.unit_limit=2"),
                                                ("tss_alex_vs_thug", "options.max_rounds=1"),
                                                ("d100_duel", "options.max_rounds=1")])
def test_unfinished_fights_are_apart_from_draws_in_every_ruleset(capsys, tmp_path, example, limit):
    target = tmp_path / "rates.csv"
    record = run_json(capsys, "fight", example, "-n", 2000, "--set", limit, "--csv", target)
    assert record["unfinished"] > 0
    assert sum(side["wins"] for side in record["sides"]) + record["draws"] + record["unfinished"] == 2000
    rows = {(row["kind"], row["key"]): row["value"] for row in csv.DictReader(target.open())}
    assert int(rows[("unfinished", "")]) == record["unfinished"] and int(rows[("draws", "")]) == record["draws"]
    code, out, _ = run(capsys, "fight", example, "-n", 2000, "--set", limit)
    assert code == 0 and re.search(rf"^  unfinished +{record['unfinished']:,} ", out, flags=re.M)


LIMITS = [("exp_bob_too", "options.unit_limit=2"), ("tss_alex_vs_thug", "options.max_rounds=1"),
          ("d100_duel", "options.max_rounds=2")]
FIRST_MEMBERS = {"exp_bob_too": "Bob Too", "tss_alex_vs_thug": "Alex", "d100_duel": "Veteran"}


@pytest.mark.parametrize(("example", "limit"), LIMITS)
def test_compare_reports_draws_and_unfinished_apart_as_fight_does(capsys, example, limit):
    # the variant sets a limit that leaves fights unfinished: each run's draws and unfinished are
    # the very rates `fight` reports for the scenario as written and with the change
    record = run_json(capsys, "fight", example, "-n", 2000, "--seed", 3, "--compare", limit)
    as_written = run_json(capsys, "fight", example, "-n", 2000, "--seed", 3)
    limited = run_json(capsys, "fight", example, "-n", 2000, "--seed", 3, "--set", limit)
    assert limited["unfinished"] > 0
    rows = [("draws", record["draw_rate"], "draw_rate"), ("unfinished", record["unfinished_rate"], "unfinished_rate")]
    for name, row, key in rows:
        assert row["name"] == name
        assert (row["baseline_rate"], row["variant_rate"]) == (as_written[key], limited[key])
    assert sum(row["variant_rate"] for row in [*record["win_rates"], *(row for _, row, _ in rows)]) == pytest.approx(1)
    code, out, _ = run(capsys, "fight", example, "-n", 2000, "--seed", 3, "--compare", limit)
    assert code == 0
    assert re.search(rf"^  draws +{100 * as_written['draw_rate']:.3f}% ", out, flags=re.M)
    assert re.search(rf"^  unfinished +{100 * as_written['unfinished_rate']:.3f}% +"
                     rf"{100 * limited['unfinished_rate']:.3f}% ", out, flags=re.M)


@pytest.mark.parametrize("policy", [None, "legal_attack"])
@pytest.mark.parametrize(("example", "limit"), LIMITS)
def test_plot_stacks_draws_and_unfinished_apart(capsys, policy_dir, monkeypatch, example, limit, policy):
    # the stacks of the kernels' fights, and of the engine's with a policy
    from combatsim import plotting

    drawn = {}
    monkeypatch.setattr(plotting, "plot_stacked_bars", lambda xs, stacks, path, **kw: drawn.update(stacks=stacks))
    extra = [] if policy is None else ["--policy", f"{FIRST_MEMBERS[example]}=agents_mod:{policy}"]
    record = run_json(capsys, "fight", example, "-n", 2000, "--set", limit, "--plot", policy_dir / "lengths.png", *extra)
    assert [name for name, _ in drawn["stacks"]] == [f"{side['name']} wins" for side in record["sides"]] + [
        "draws", "unfinished"]
    totals = [sum(counts) for _, counts in drawn["stacks"]]
    assert totals == [*(side["wins"] for side in record["sides"]), record["draws"], record["unfinished"]]
    assert record["unfinished"] > 0


def test_tss_attack_labels_its_point_totals(capsys):
    code, out, _ = run(capsys, "attack", "tss", "--skill", "16/8/4", "--damage", "d4w/d4+2w/d4-1m", "-n", 1000)
    assert code == 0
    assert "  damage dealt after armour (points in all, mean per attack):" in out
    for kind in ("stun", "wound", "mortal"):
        assert re.search(rf"^  {kind} points +[\d,]+  \d\.\d{{6}} per attack$", out, flags=re.M)


def test_odds_say_one_hit_in_the_singular(capsys):
    code, out, _ = run(capsys, "odds", "exp", "--bonus", 184, "--max-roll", 834, "--armour-rating", 600,
                       "--weapon-type", "B", "--damage", "d8", "--damage-adjustment", 3)
    assert code == 0 and "P(1 hit in a unit) = " in out and "P(1 hits" not in out


def test_compare_limit_names_compare(capsys):
    code, _, err = run(capsys, "fight", "d100_duel", "-n", "2e7", "--compare", "sides[0].members[0].torso=none")
    assert code == 2 and err.startswith("combatsim: error: ") and "--compare" in err and "10,000,000" in err


def test_the_readme_policy_example_runs_as_written():
    readme = (ROOT / "README.md").read_text()
    commands = re.findall(r"^(combatsim fight [^\n]*--policy [^\n]*?)\s*(?:#.*)?$", readme, flags=re.M)
    runnable = [c for c in commands if "mlp_policy" not in c]  # those run from examples/ after training
    assert runnable
    for command in runnable:
        done = subprocess.run(command.replace("combatsim", COMBATSIM, 1), shell=True, capture_output=True, text=True,
                              cwd=ROOT, timeout=300)
        assert done.returncode == 0, (command, done.stderr)
        assert "played by the policy examples.constant_policy:" in done.stdout


def test_scenario_fields_state_the_rules_that_decide_results(capsys):
    code, out, _ = run(capsys, "scenario", "fields", "tss")
    assert code == 0 and "everyone attacks the foe listed first that is still in the fight" in " ".join(out.split())
    code, out, _ = run(capsys, "scenario", "fields", "d100")
    assert code == 0 and "heavy counts as light armour without a helmet" in " ".join(out.split())


def test_readme_spells_out_the_terms_where_they_first_appear():
    readme = (ROOT / "README.md").read_text()
    for term, words in (("BP", "bonus proficient"), ("BNP", "bonus non-proficient"), ("MR", "maximum roll"),
                        ("DA", "damage adjustment"), ("kilodie", "d1000")):
        first = re.search(rf"\b{term}\b", readme).start()
        assert words in readme[first:first + 120], term
    for ruleset in ("EXP", "TSS", "d100"):
        bullet = re.search(rf"^- \*\*{ruleset}\*\* [^\n]*\n(  [^\n]*\n)*", readme, flags=re.M).group(0)
        assert "role-playing" in bullet, ruleset
