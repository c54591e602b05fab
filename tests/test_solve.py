"""combatsim.solve: best responses over the exact chain, checked against brute force, against the
odds chain, and against fights played with the solved policy."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

from combatsim.cli import main as cli_main
from combatsim.fight_odds import TooManyStates, fight_odds
from combatsim.game import scenario_game
from combatsim.policies import play_fights
from combatsim.scenario import load, resolve
from combatsim.solve import PolicyError, best_response, decision_chain, evaluate
from tests._solving import agrees, brute_force_best, env_rewards, saved_policy_fights, within_five_sigma

million_fights = pytest.mark.skipif(
    "'slow' not in (config.getoption('markexpr') or '').replace('not slow', '')",
    reason="the million-fight form: pytest -m slow tests/test_solve.py")

ONE_PASS = ["options.passes=1", "options.max_rounds=1"]
SHORT = ["options.passes=2", "options.max_rounds=1"]
SHORT_SET = ["--set", SHORT[0], "--set", SHORT[1]]


def example(name: str, overrides=()):
    path, label = resolve(name)
    return load(path, list(overrides), label=label)


def always(action: int):
    def policy(obs, masks):
        return np.full(len(obs), action, dtype=np.int64)

    policy.__qualname__ = f"always_{action}"
    return policy


@pytest.mark.parametrize("overrides", [ONE_PASS, ["options.passes=1", "options.max_rounds=3"], SHORT])
def test_the_scripted_value_is_the_exact_odds(overrides):
    """The chain with every member scripted is ``odds fight``'s chain: the same exact fractions."""
    scenario = example("d100_duel", overrides)
    odds = fight_odds(scenario, method="exact")
    solved = best_response(scenario, "Veteran", method="exact")
    assert solved.method == "exact"
    assert (solved.scripted.win, solved.scripted.loss) == (odds.wins[0], odds.wins[1])
    assert (solved.scripted.draw, solved.scripted.unfinished) == (odds.draws, odds.unfinished)


@pytest.mark.parametrize("agent", ["Veteran", "Guard"])
def test_the_best_response_is_at_least_the_scripted_value_exactly(agent):
    solved = best_response(example("d100_duel", SHORT), agent, method="exact")
    assert solved.value.reward >= solved.scripted.reward
    assert solved.gain > 0  # the scripted mix is not optimal here
    assert solved.value.win + solved.value.loss + solved.value.draw + solved.value.unfinished == 1


@pytest.mark.parametrize("agent", ["Veteran", "Guard"])
def test_the_best_response_equals_brute_force_over_every_deterministic_policy(agent):
    """One round of one pass: every assignment of an action to each decision (state) played
    forward exactly; the best of them is the best response's value, exactly."""
    scenario = example("d100_duel", ONE_PASS)
    solved = best_response(scenario, agent, method="exact")
    chain = decision_chain(scenario, method="exact")
    assert brute_force_best(chain, chain.game.member_names.index(agent)) == solved.value.reward


def test_float64_is_within_its_bound_of_the_exact_value():
    scenario = example("d100_duel", SHORT)
    exact = best_response(scenario, "Veteran", method="exact")
    rough = best_response(scenario, "Veteran", method="float64")
    assert 0 < rough.error_bound < 1e-9
    for a, b in ((exact.value, rough.value), (exact.scripted, rough.scripted)):
        for name in ("win", "loss", "draw", "unfinished"):
            assert abs(float(getattr(a, name)) - getattr(b, name)) <= rough.error_bound


@pytest.mark.parametrize("agent", ["Veteran", "Guard"])
def test_the_best_response_beats_every_constant_policy_exactly(agent):
    scenario = example("d100_duel", SHORT)
    solved = best_response(scenario, agent, method="exact")
    rewards = [evaluate(scenario, agent, {agent: always(action)}, method="exact").reward for action in range(10)]
    assert max(rewards) <= solved.value.reward
    assert evaluate(scenario, agent, method="exact") == solved.scripted


def test_a_best_response_against_a_given_policy_uses_that_policy():
    scenario = example("d100_duel", SHORT)
    against_defence = best_response(scenario, "Veteran", against={"Guard": always(3)}, method="exact")
    scripted = best_response(scenario, "Veteran", method="exact")
    assert against_defence.against == {"Guard": "tests.test_solve:always_3"}
    assert against_defence.scripted != scripted.scripted
    assert against_defence.value.reward >= against_defence.scripted.reward


def test_a_policy_that_raises_is_named():
    def broken(obs, masks):
        raise RuntimeError("no idea")

    with pytest.raises(PolicyError, match=r"against: policy .*broken of 'Guard' raised RuntimeError: no idea"):
        best_response(example("d100_duel", SHORT), "Veteran", against={"Guard": broken})


def test_a_policy_with_wrong_actions_is_refused():
    def wrong(obs, masks):
        return np.full(len(obs), 99, dtype=np.int64)

    with pytest.raises(PolicyError, match=r"returned action 99; allowed: .*actions in 0..9"):
        best_response(example("d100_duel", SHORT), "Veteran", against={"Guard": wrong})


def test_too_many_states_is_refused_before_any_work():
    with pytest.raises(TooManyStates, match=r"up to 38,416 states, over the limit of 100"):
        best_response(example("d100_duel"), "Veteran", max_states=100)


def test_unbounded_exact_fractions_are_refused_before_any_work():
    """As ``odds fight`` refuses them: 10,000 d100 rounds make fractions of some 400,000 digits."""
    with pytest.raises(ValueError, match=r"^method exact: this fight's exact fractions would reach about 400,001 digits"):
        best_response(example("d100_duel", ["options.max_rounds=10000"]), "Veteran", method="exact")


@pytest.fixture
def little_free_memory(monkeypatch):
    """A machine with 1 MB free when the walk begins, and a process that holds 1 MB more at every
    later reading (a real walk's growth depends on what earlier tests left for it to reuse)."""
    import signal

    from combatsim.solve import induction

    handler = signal.getsignal(signal.SIGINT)
    readings = iter(range(2**30, 2**40, 2**20))
    monkeypatch.setattr(induction, "_resident_bytes", lambda: next(readings))
    monkeypatch.setattr(induction, "available_memory", lambda: 2**20)
    yield
    assert signal.getsignal(signal.SIGINT) is handler  # the walk's Ctrl-C handler is gone


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="the memory watch reads Linux's /proc")
def test_the_memory_watch_reads_this_process_and_this_machine():
    from combatsim.solve.induction import _resident_bytes, available_memory

    held, free = _resident_bytes(), available_memory()
    assert 2**20 < held < 2**40 and 0 < free < 2**50
    grown = b"\x01" * (64 * 2**20)  # written, so its pages are resident
    assert _resident_bytes() >= held + 60 * 2**20
    del grown


def test_a_walk_stops_before_it_takes_the_memory_free(little_free_memory, capsys):
    from combatsim.solve.induction import TooMuchMemory

    with pytest.raises(TooMuchMemory, match=r"^memory: the solve holds .* GB after [\d,]+ states, 80% of the 0\.0 GB "
                                            r"free when it began; solve fewer rounds \(--set options.max_rounds=N\)"):
        best_response(example("tss_alex_vs_thug", ["options.max_rounds=1"]), "Alex")
    assert cli_main(["solve", "tss_alex_vs_thug", "--set", "options.max_rounds=1", "--agent", "Alex"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("combatsim: error: memory: the solve holds") and err.count("\n") == 1


def test_an_unknown_agent_is_one_line():
    with pytest.raises(ValueError, match=r"agent: no member is named 'Nobody'; the scenario's members: 'Veteran', 'Guard'"):
        best_response(example("d100_duel", SHORT), "Nobody")


@pytest.mark.parametrize(("n", "overrides"), [
    pytest.param(100_000, ["options.max_rounds=4"], id="1e5"),
    pytest.param(1_000_000, [], id="1e6", marks=[pytest.mark.slow, million_fights])])
def test_the_solved_policy_plays_its_value_in_fights(n, overrides, tmp_path):
    scenario = example("d100_duel", overrides)
    solved = best_response(scenario, "Veteran")
    results = saved_policy_fights(scenario, "Veteran", solved, n, tmp_path / "veteran.npz", "numba")
    agrees(solved.value.win, results.wins[0], n)
    agrees(solved.value.loss, results.wins[1], n)
    agrees(solved.value.draw, results.draws, n)


def test_a_saved_policy_plays_in_the_environment():
    from combatsim.rl.fight_env import FightEnv

    solved = best_response(example("d100_duel", SHORT), "Veteran")
    env = FightEnv(example("d100_duel", SHORT), "Veteran", backend="python")
    assert within_five_sigma(env_rewards(env, solved.policy, 200, seed=3), float(solved.value.reward))


def test_cli_solve_json_and_out(capsys, tmp_path):
    out = tmp_path / "v.npz"
    assert cli_main(["solve", "d100_duel", "--agent", "Veteran", *SHORT_SET,
                     "--method", "exact", "--json", "--out", str(out)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["member"] == "Veteran" and report["method"] == "exact"
    assert report["gain"]["float"] > 0 and out.exists()
    assert cli_main(["fight", "d100_duel", *SHORT_SET, "-n", "2000",
                     "--policy", f"Veteran=file:{out}", "--json"]) == 0


@pytest.mark.parametrize(("argv", "message"), [
    (["--agent", "Nobody"], "agent: no member is named 'Nobody'"),
    (["--agent", "Veteran", "--against", "Guard=no_such_module_here:policy"], "does not import"),
    (["--agent", "Veteran", "--max-states", "10"], "over the limit of 10"),
    (["--agent", "Veteran", "--against", "Veteran=numpy:zeros"], "is the member being solved for"),
    (["--agent", "Veteran", "--out", "x.txt"], "--out: 'x.txt' has extension '.txt'; allowed: .npz"),
])
def test_cli_bad_input_is_one_line_exit_2(capsys, argv, message):
    assert cli_main(["solve", "d100_duel", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


# --- the equilibrium --------------------------------------------------------------------------------

TWO_ROUNDS = ["options.max_rounds=2"]


@pytest.mark.parametrize(("matrix", "value", "a_mix", "b_mix"), [
    ([[1, -1], [-1, 1]], 0.0, [0.5, 0.5], [0.5, 0.5]),                                  # matching pennies
    ([[0, -1, 1], [1, 0, -1], [-1, 1, 0]], 0.0, [1 / 3] * 3, [1 / 3] * 3),             # rock, paper, scissors
    ([[3, 0], [-1, 2], [0, 0]], 1.0, [0.5, 0.5, 0.0], [1 / 3, 2 / 3]),                  # a dominated row
    ([[2, 5], [1, 0]], 2.0, [1.0, 0.0], [1.0, 0.0]),                                    # a saddle point
    ([[1], [3], [2]], 3.0, [0.0, 1.0, 0.0], [1.0]),                                      # B has one action
    ([[1, 3, 0.5]], 0.5, [1.0], [0.0, 0.0, 1.0]),                                        # A has one action
])
def test_matrix_games_by_hand(matrix, value, a_mix, b_mix):
    from combatsim.solve.games import solve_game

    counter = {"one-sided": 0, "pure": 0, "linear program": 0}
    found, x, y = solve_game(np.array(matrix, dtype=float), counter)
    assert found == pytest.approx(value, abs=1e-9)
    np.testing.assert_allclose(x, a_mix, atol=1e-9)
    np.testing.assert_allclose(y, b_mix, atol=1e-9)


@pytest.fixture(scope="module")
def two_rounds_game():
    from combatsim.solve import equilibrium

    return equilibrium(example("d100_duel", TWO_ROUNDS), "Veteran,Guard")


def test_the_equilibrium_value_lies_between_the_best_responses(two_rounds_game):
    game = two_rounds_game
    assert game.bounds_hold
    assert game.low <= game.value <= game.high and game.error_bound < 1e-9
    assert game.value <= float(game.best_responses["Veteran"].value.reward)
    assert game.value >= -float(game.best_responses["Guard"].value.reward)
    assert abs(float(game.outcome.reward) - game.value) <= game.error_bound


def test_no_constant_policy_gains_against_the_equilibrium(two_rounds_game):
    game = two_rounds_game
    scenario = example("d100_duel", TWO_ROUNDS)
    veteran, guard = game.policies["Veteran"], game.policies["Guard"]
    for action in range(10):
        against_guard = evaluate(scenario, "Veteran", {"Veteran": always(action), "Guard": guard})
        against_veteran = evaluate(scenario, "Guard", {"Guard": always(action), "Veteran": veteran})
        assert against_guard.reward <= game.value + game.error_bound
        assert against_veteran.reward <= -game.value + game.error_bound


def test_the_equilibrium_policies_play_their_value_in_fights(two_rounds_game):
    game = two_rounds_game
    n = 100_000
    results = play_fights(scenario_game(example("d100_duel", TWO_ROUNDS)), n, 9, game.policies, backend="numba")
    agrees(game.outcome.win, results.wins[0], n)
    agrees(game.outcome.loss, results.wins[1], n)
    agrees(game.outcome.unfinished, results.unfinished, n)


def test_the_equilibrium_policy_is_not_exploitable_and_constant_ones_are(two_rounds_game):
    from combatsim.solve import exploitability

    scenario = example("d100_duel", TWO_ROUNDS)
    solid = exploitability(scenario, "Veteran", {"Guard": two_rounds_game.policies["Guard"]})
    assert abs(solid.exploitability.value) <= solid.exploitability.error_bound
    idle = exploitability(scenario, "Veteran", {"Guard": always(0)})  # a guard that never acts
    assert idle.exploitability.value > 0.1
    attacking = exploitability(scenario, "Veteran", {"Guard": always(1)})  # close to the equilibrium, not at it
    assert 0 < attacking.exploitability.value < 0.01


@pytest.mark.parametrize(("argv", "message"), [
    (["--agents", "Veteran,Guard,Veteran"], "agents: name exactly two members of opposite sides"),
    (["--agents", "Veteran,Veteran"], "are on one side"),
    (["--agents", "Veteran,Nobody"], "agents: no member is named 'Nobody'"),
    (["--agents", "Veteran,Guard", "--method", "exact"], "--method: the equilibrium is computed in float64"),
    (["--agents", "Veteran,Guard", "--against", "Guard=numpy:zeros"], "--against: the game between --agents"),
    (["--agent", "Veteran", "--agents", "Veteran,Guard"], "not allowed with argument"),
])
def test_cli_agents_bad_input_is_one_line_exit_2(capsys, argv, message):
    assert cli_main(["solve", "d100_duel", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_cli_agents_json_and_out(capsys, tmp_path):
    out = tmp_path / "eq.npz"
    assert cli_main(["solve", "d100_duel", "--agents", "Veteran,Guard", *SHORT_SET, "--json", "--out", str(out)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["members"] == ["Veteran", "Guard"] and report["bounds_hold"]
    assert out.exists() and (tmp_path / "eq-Guard.npz").exists()


def test_a_trained_policy_s_share_of_the_best_response():
    from combatsim.solve import best_response_share, share_report

    scenario = example("d100_duel", SHORT)
    solved = best_response(scenario, "Veteran")
    share = best_response_share(scenario, "Veteran", solved.policy)
    assert share["share_of_value"] == pytest.approx(1.0, abs=1e-12)
    idle = best_response_share(scenario, "Veteran", always(0))  # never acts
    assert idle["share_of_gain"] < 0.5 and idle["share_of_value"] < 0.5
    assert "of its value" in share_report("Veteran", idle)


def test_a_mixed_policy_draws_from_the_policy_die_and_plays_its_exact_value():
    """A mixed table policy (each state: its best action or attack, half and half) evaluated
    exactly as a mix on the chain, and played in fights through the engine's policy die: the
    two agree within 5 sigma, and the same fights make the same choices."""
    from combatsim.solve.policy import TablePolicy

    scenario = example("d100_duel", TWO_ROUNDS)
    solved = best_response(scenario, "Veteran")
    table = solved.policy
    probabilities = 0.5 * table.probabilities
    probabilities[:, 1] += 0.5
    mixed = TablePolicy(ruleset="d100", scenario=table.scenario, member="Veteran", keys=table.keys,
                        probabilities=probabilities, keyer=table.keyer, label="half attack")
    assert mixed.uses_policy_die
    exact = evaluate(scenario, "Veteran", {"Veteran": mixed})
    assert exact.reward < solved.value.reward
    game = scenario_game(scenario)
    n = 100_000
    results = play_fights(game, n, 4, {"Veteran": mixed}, backend="numba", outcomes=True)
    agrees(exact.win, results.wins[0], n)
    agrees(exact.loss, results.wins[1], n)
    again = play_fights(game, 2000, 4, {"Veteran": mixed}, backend="python", outcomes=True)
    np.testing.assert_array_equal(again.outcome, results.outcome[:2000])


# --- the shipped trained policies against the best response -------------------------------------------


def shipped_policies() -> dict:
    """The shipped trained policies (examples/mlp_policy.py), by label: (member, policy)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent.parent / "examples"))
    try:
        import mlp_policy
    finally:
        sys.path.pop(0)
    return {"sb3_veteran": ("Veteran", mlp_policy.sb3_veteran), "selfplay Veteran": ("Veteran", mlp_policy.selfplay),
            "selfplay Guard": ("Guard", mlp_policy.selfplay)}


def test_no_shipped_trained_policy_beats_the_best_response_exactly():
    """On the duel cut to 5 rounds (the policies read the round as a fraction of the limit, so
    they play it as they play any fight): each policy's exact value is at most the best response's."""
    scenario = example("d100_duel", ["options.max_rounds=5"])
    responses = {name: best_response(scenario, name) for name in ("Veteran", "Guard")}
    for label, (member, policy) in shipped_policies().items():
        own = evaluate(scenario, member, {member: policy})
        assert own.reward <= responses[member].value.reward + responses[member].error_bound, label


@pytest.mark.slow
@million_fights
def test_no_shipped_trained_policy_beats_the_best_response_in_a_million_fights():
    policies = shipped_policies()
    responses = {name: best_response("d100_duel", name) for name in ("Veteran", "Guard")}
    game = scenario_game("d100_duel")
    n = 1_000_000
    for label, (member, policy) in policies.items():
        results = play_fights(game, n, 1, {member: policy}, backend="numba")
        side = game.member_sides[game.member_names.index(member)]
        rewards = (results.wins[side] - results.wins[1 - side]) / n
        spread = math.sqrt((results.wins[side] + results.wins[1 - side]) / n - rewards**2) / math.sqrt(n)
        assert rewards <= float(responses[member].value.reward) + 5 * spread, label


@pytest.mark.slow
@million_fights
def test_the_equilibrium_policies_play_their_value_in_a_million_fights():
    from combatsim.solve import equilibrium

    game_value = equilibrium("d100_duel", "Veteran,Guard")
    n = 1_000_000
    results = play_fights(scenario_game("d100_duel"), n, 9, game_value.policies, backend="numba")
    agrees(game_value.outcome.win, results.wins[0], n)
    agrees(game_value.outcome.loss, results.wins[1], n)


def test_ctrl_c_stops_a_solve_in_one_line():
    """SIGINT part-way through the walk of the chain: exit 130 and one line."""
    import time

    from tests._processes import interrupt

    def walking(process):
        time.sleep(3.0)  # imports done, the walk under way (the whole solve takes half a minute)
        assert process.poll() is None

    stopped = interrupt(["solve", "d100_duel", "--agents", "Veteran,Guard"], walking, group=True)
    assert stopped.returncode == 130, stopped.err
    assert stopped.err == "combatsim: interrupted\n" and stopped.out == ""
