"""Who is still standing at a fight's end: each member's count, the same from every fight kernel
(reference, Numba, Cython, the policy path) as a direct count from the engine's final states, and
in ``combatsim fight``'s JSON, human report and CSV."""

from __future__ import annotations

import copy
import csv
import json
import tomllib

import numpy as np
import pytest

from combatsim.cli import main as cli_main
from combatsim.engine import DRAW, RUNNING, S_OUTCOME, UNFINISHED
from combatsim.fights import simulate_scenario
from combatsim.game import scenario_game
from combatsim.policies import play_fights
from combatsim.scenario import example_path

#: A second member for each side of an example duel: a copy, weaker so that fights differ.
WEAKER = {"d100": {"fighting": 35}, "exp": {"hit_points": 8}, "tss": {"durability": [5, 5, 3]}}
EXAMPLES = {"d100": "d100_duel", "exp": "exp_bob_too", "tss": "tss_alex_vs_thug"}
FIGHTS = {"d100": 160, "exp": 120, "tss": 120}


def team_document(ruleset: str) -> dict:
    """The ruleset's example duel as two against two: each side's member and a weaker copy."""
    with open(example_path(EXAMPLES[ruleset]), "rb") as handle:
        document = tomllib.load(handle)
    for side in document["sides"]:
        first = side["members"][0]
        second = copy.deepcopy(first)
        second = {key: value for key, value in second.items() if key not in ("combat", "athletics", "strength",
                                                                              "agility", "endurance")}
        second.update(WEAKER[ruleset], name=f"{side['name']} junior")
        first["name"] = f"{side['name']} senior"
        side["members"].append(second)
    return document


def standing_in_state(ruleset: str, engine, state: np.ndarray, members: int) -> np.ndarray:
    """(fights, members) bool: each member's standing read from the engine's final state columns."""
    if ruleset == "d100":
        columns = [engine.S_MEMBERS + engine.MEMBER_FIELDS * c + engine.M_ACTIVE for c in range(members)]
        return state[:, columns] != 0
    if ruleset == "exp":
        return state[:, engine.ST_HIT_POINTS:engine.ST_HIT_POINTS + members] > 0
    columns = [engine.S_MEMBERS + engine.M_WIDTH * c + engine.M_IN for c in range(members)]
    return state[:, columns] != 0


def engine_fights(ruleset: str, document: dict, n: int, seed: int) -> tuple[np.ndarray, np.ndarray, tuple]:
    """Fights 0..n-1 stepped on the Python engine, every member scripted: outcomes, who stands, sides."""
    game = scenario_game(document)
    engine = game.engine("python")
    b = game.buffers(n)
    b["seeds"][:] = seed
    b["indices"][:] = np.arange(n)
    engine.reset(game.table, game.config, b["seeds"], b["indices"], b["which"], b["state"], b["counts"], b["obs"],
                 b["mask"])
    while (b["state"][:, S_OUTCOME] == RUNNING).any():
        engine.step(game.table, game.config, b["seeds"], b["state"], b["actions"], b["counts"], b["obs"], b["mask"])
    standing = standing_in_state(ruleset, engine, b["state"], game.members)
    return b["state"][:, S_OUTCOME].copy(), standing, game.member_sides


@pytest.mark.parametrize("ruleset", ["d100", "exp", "tss"])
def test_every_kernel_counts_the_members_the_engine_leaves_standing(ruleset):
    document, n, seed = team_document(ruleset), FIGHTS[ruleset], 5
    outcome, standing, sides = engine_fights(ruleset, document, n, seed)
    sides = np.array(sides)
    on_side = [standing[:, sides == side].sum(axis=1) for side in (0, 1)]
    # A winning side has someone standing and the losing side no one (d100: who fled is not
    # standing); nobody won: both sides out (a draw), or both in at the limit.
    for side in (0, 1):
        assert (on_side[side][outcome == side] > 0).all()
        assert (on_side[1 - side][outcome == side] == 0).all()
    assert (on_side[0][outcome == DRAW] == on_side[1][outcome == DRAW]).all()
    for side in (0, 1):
        assert (on_side[side][outcome == UNFINISHED] > 0).all()
    expected = standing.sum(axis=0).tolist()
    assert min(expected) > 0 and max(expected) < n  # every member both falls and stands in some fight
    split = [expected[:2], expected[2:]]
    for backend in ("python", "numba", "cython"):
        summary = simulate_scenario(document, n, seed=seed, backend=backend, threads=1)
        assert summary.standing == split, backend
    for backend in ("python", "numba"):
        assert play_fights(scenario_game(document), n, seed, backend=backend, chunk=50).standing == expected
    # A run split in chunks over threads sums the same counts.
    assert simulate_scenario(document, n, seed=seed, backend="cython", threads=2, chunk_size=37).standing == split


@pytest.mark.parametrize("ruleset", ["d100", "exp", "tss"])
def test_fight_json_and_report_list_each_members_standing(ruleset, capsys, tmp_path):
    document = team_document(ruleset)
    n, seed = 80, 3
    summary = simulate_scenario(document, n, seed=seed, backend="cython")
    names = [[f"{side['name']} senior", f"{side['name']} junior"] for side in document["sides"]]
    record = summary.as_dict([side["name"] for side in document["sides"]], [*names[0], *names[1]])
    for side, side_names, counts in zip(record["sides"], names, summary.standing, strict=True):
        assert side["members"] == [{"name": name, "standing_count": count, "standing_rate": count / n}
                                   for name, count in zip(side_names, counts, strict=True)]
        # someone of a side stands in every fight it wins
        assert max(member["standing_count"] for member in side["members"]) <= n
        assert sum(member["standing_count"] for member in side["members"]) >= side["wins"]
    path = tmp_path / "team.toml"
    path.write_text(to_toml(document))
    assert cli_main(["fight", str(path), "-n", str(n), "--seed", str(seed), "--json", "--backend", "cython"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert [side["members"] for side in printed["sides"]] == [side["members"] for side in record["sides"]]
    table = tmp_path / "team.csv"
    assert cli_main(["fight", str(path), "-n", str(n), "--seed", str(seed), "--csv", str(table)]) == 0
    report = capsys.readouterr().out.splitlines()
    for side in record["sides"]:
        for member in side["members"]:
            line = f"{member['name']} standing"
            assert any(row.strip().startswith(line) and f"{member['standing_count']:,}" in row for row in report)
    rows = [row for row in csv.reader(table.open()) if row[0] == "standing"]
    assert rows == [["standing", member["name"], str(member["standing_count"]), "", ""]
                    for side in record["sides"] for member in side["members"]]


def test_a_duel_lists_its_members_in_json_only(capsys):
    # short fights: some still running at the limit
    assert cli_main(["fight", "d100_duel", "-n", "300", "--json", "--set", "options.max_rounds=2"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["unfinished"] > 0
    for side in record["sides"]:
        (member,) = side["members"]
        assert member["name"] == side["name"]
        # alone on its side, a member stands exactly where its side wins or the fight is unfinished
        assert member["standing_count"] == side["wins"] + record["unfinished"]
    assert cli_main(["fight", "d100_duel", "-n", "300"]) == 0
    assert "standing" not in capsys.readouterr().out


def to_toml(document: dict) -> str:
    """A scenario document as TOML (the few value types scenario files use)."""

    def value(v) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + " }"
        return str(v)

    lines = [f"{k} = {value(v)}" for k, v in document.items() if k not in ("options", "sides")]
    if "options" in document:
        lines += ["[options]", *(f"{k} = {value(v)}" for k, v in document["options"].items())]
    for side in document["sides"]:
        lines += ["[[sides]]", *(f"{k} = {value(v)}" for k, v in side.items() if k != "members")]
        for member in side["members"]:
            lines += ["[[sides.members]]", *(f"{k} = {value(v)}" for k, v in member.items())]
    return "\n".join(lines) + "\n"


def hold(obs, masks):
    return np.zeros(len(obs), dtype=np.int64)  # action 0: none / hold, always allowed


@pytest.mark.parametrize("ruleset", ["d100", "exp", "tss"])
def test_fights_with_a_policy_report_who_stands(ruleset):
    document, n = team_document(ruleset), 60
    policies = {f"{document['sides'][0]['name']} senior": hold}
    played = play_fights(scenario_game(document), n, 9, policies, backend="numba")
    summary = simulate_scenario(document, n, seed=9, policies=policies, backend="numba")
    assert summary.standing == [played.standing[:2], played.standing[2:]]
    sides = np.array(scenario_game(document).member_sides)
    for side in (0, 1):
        # a side that won had someone standing, so its members stood in at least its wins
        assert sum(summary.standing[side]) >= summary.wins[side]
    assert sides.tolist() == [0, 0, 1, 1]
