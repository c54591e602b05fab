"""combatsim.openspiel: the fight as an OpenSpiel game, checked by OpenSpiel's own tests and
against combatsim solve (the same values within 1e-9), and a policy OpenSpiel trains played in
fights and the envs."""

from __future__ import annotations

import copy

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")
pytest.importorskip("open_spiel")

from open_spiel.python.algorithms import best_response as openspiel_best_response  # noqa: E402
from open_spiel.python.algorithms import cfr, expected_game_score, exploitability, value_iteration  # noqa: E402

from combatsim import openspiel as fight_spiel  # noqa: E402
from combatsim.game import as_scenario, scenario_game  # noqa: E402
from combatsim.policies import play_fights  # noqa: E402
from combatsim.scenario import example_names, load, resolve  # noqa: E402
from combatsim.solve import best_response, load_policy  # noqa: E402

#: The slow form of a check runs only when ``-m slow`` selects it.
slow_form = pytest.mark.skipif(
    "'slow' not in (config.getoption('markexpr') or '').replace('not slow', '')",
    reason="the two-pass form: pytest -m slow tests/test_openspiel.py")

ONE_PASS = ["options.passes=1", "options.max_rounds=1"]
SHORT = ["options.passes=2", "options.max_rounds=1"]


@pytest.fixture(autouse=True)
def simplex_matrix_games(monkeypatch):
    """Value iteration solves each simultaneous state's matrix game with OpenSpiel's linear
    program, whose default solver (ECOS, an interior-point method) stops within 1e-7. The same
    program takes HiGHS, whose simplex ends on a vertex, exact to rounding: then OpenSpiel's values
    and solve's compare within 1e-9."""
    cvxpy = pytest.importorskip("cvxpy")
    from open_spiel.python.algorithms import lp_solver

    monkeypatch.setattr(lp_solver.LinearProgram.solve, "__defaults__", (cvxpy.HIGHS, {}))


def example(name: str, overrides=()):
    path, label = resolve(name)
    return load(path, list(overrides), label=label)


def team_document() -> dict:
    """d100_duel with a second veteran on side 0: a two-against-one fight."""
    document = copy.deepcopy(example("d100_duel", ONE_PASS).document)
    second = copy.deepcopy(document["sides"][0]["members"][0])
    second["name"] = "Recruit"
    document["sides"][0]["members"][0]["name"] = "Veteran"
    document["sides"][0]["members"].append(second)
    return document


def root_value(game, values) -> float:
    """Value iteration's values are of decision nodes; the root is the opening's chance node
    (d100: the ambush contests), or the first decision (EXP)."""
    root = game.new_initial_state()
    if not root.is_chance_node():
        return values[str(root)]
    return sum(p * values[str(root.child(action))] for action, p in root.chance_outcomes())


def decision_states(game):
    return list(fight_spiel._decision_states(game))


# --- the game ---------------------------------------------------------------------------------------

def test_the_game_string_loads_the_same_game():
    game = fight_spiel.load_game("d100_duel", ["Veteran", "Guard"], overrides=ONE_PASS)
    again = pyspiel.load_game(str(game))
    by_hand = pyspiel.load_game(
        "combatsim_fight(scenario=d100_duel,agents=Veteran;Guard,set=options.passes:1;options.max_rounds:1)")
    for other in (again, by_hand):
        assert other.num_players() == 2
        assert other.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS
        assert other.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
        assert other.max_game_length() == 1
        assert other.num_distinct_actions() == 10
    one = fight_spiel.load_game("d100_duel", ["Guard"])
    assert one.num_players() == 1 and one.get_type().dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    assert one.max_game_length() == 40  # 2 passes, 20 rounds
    # a loaded scenario travels as its document
    loaded = fight_spiel.load_game(example("d100_duel", ONE_PASS), ["Veteran"])
    assert pyspiel.load_game(str(loaded)).num_players() == 1


def test_chance_nodes_are_the_chains_grouped_results():
    game = fight_spiel.load_game("d100_duel", overrides=SHORT)
    chain = game.chain
    root = game.new_initial_state()
    assert root.is_chance_node()
    assert [p for _, p in root.chance_outcomes()] == pytest.approx([float(p) for _, p in chain.initial()])
    state = root.child(0)
    actions = [state.legal_actions(0)[1], state.legal_actions(1)[0]]
    state.apply_actions(actions)
    step = chain.transitions(state._state, 0, list(actions))
    outcomes = state.chance_outcomes()
    assert len(outcomes) == len(set(step.moved)) + len(set(step.ended))  # one outcome a result
    assert sum(p for _, p in outcomes) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("name", example_names())
def test_openspiels_random_simulation_test_on_each_example(name):
    try:
        # a random fight meets a few hundred states of the TSS examples' bounds of tens of millions;
        # their fights are cut to 1 round, as each deserialization builds the game anew
        tss = name.startswith("tss")
        game = fight_spiel.load_game(name, overrides=["options.max_rounds=1"] if tss else (),
                                     max_states=2**31 - 1 if tss else None)
    except ValueError as problem:
        if "solving is available" in str(problem):
            pytest.skip(str(problem))
        raise
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)
    pyspiel.random_sim_test(pyspiel.convert_to_turn_based(game), num_sims=2, serialize=True, verbose=False)


def test_openspiels_random_simulation_test_on_a_team_fight():
    # the bound (11 million states) is far past what one random fight meets
    game = fight_spiel.load_game(team_document(), ["Veteran", "Guard"], max_states=10**8)  # the recruit scripted
    assert game.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)
    pyspiel.random_sim_test(pyspiel.convert_to_turn_based(game), num_sims=3, serialize=True, verbose=False)
    allies = fight_spiel.load_game(team_document(), ["Veteran", "Recruit"], max_states=10**8)
    assert allies.get_type().utility == pyspiel.GameType.Utility.IDENTICAL
    everyone = fight_spiel.load_game(team_document(), max_states=10**8)
    assert everyone.num_players() == 3 and everyone.get_type().utility == pyspiel.GameType.Utility.GENERAL_SUM
    pyspiel.random_sim_test(everyone, num_sims=2, serialize=True, verbose=False)


def exp_team_document(unit_limit: int = 2) -> dict:
    """A small EXP team fight: two raiders against a brute, few hit points, two units."""
    def creature(name, hit_points, damage, **weapon):
        return {"kind": "creature", "name": name, "hit_points": hit_points, "armour_rating": 520, "bonus": 120,
                "maximum_roll": 900, "damage_adjustment": 0,
                "weapon": {"name": "weapon", "type": "A", "damage": damage, "natural": True, **weapon}}

    archer = creature("Archer", 3, "1d4")
    archer["weapon"] = {"name": "bow", "type": "B", "damage": "1d4", "ammunition": 2}
    return {"ruleset": "exp", "name": "raiders", "options": {"unit_limit": unit_limit},
            "sides": [{"name": "Raiders", "members": [archer, creature("Spearman", 4, "1d2")]},
                      {"name": "Brute", "members": [creature("Brute", 6, "1d4")]}]}


#: exp_bob_too cut down to a few hit points, shots and units
SMALL_BOB = ["options.unit_limit=3", "sides[0].members[0].hit_points=6", "sides[1].members[0].hit_points=8",
             "sides[0].members[0].weapon.ammunition=2"]


def test_openspiels_random_simulation_test_on_an_exp_team_fight():
    game = fight_spiel.load_game(exp_team_document(unit_limit=8), ["Archer", "Brute"])
    assert game.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)
    pyspiel.random_sim_test(pyspiel.convert_to_turn_based(game), num_sims=3, serialize=True, verbose=False)
    everyone = fight_spiel.load_game(exp_team_document(unit_limit=8))
    assert everyone.num_players() == 3
    pyspiel.random_sim_test(everyone, num_sims=2, serialize=True, verbose=False)


@pytest.mark.parametrize(("scenario", "agent", "overrides"), [
    ("exp_bob_too", "Bob Too", SMALL_BOB), ("exp_bob_too", "Giant Arctic Sea Slug", SMALL_BOB),
    (exp_team_document(), "Brute", ()), (exp_team_document(), "Archer", ())], ids=["bob", "slug", "brute", "archer"])
def test_value_iteration_and_best_response_equal_solves_best_response_exp(scenario, agent, overrides):
    loaded = example(scenario, overrides) if isinstance(scenario, str) else as_scenario(scenario)
    solved = best_response(loaded, agent)
    game = fight_spiel.load_game(scenario, [agent], overrides=overrides)
    values = value_iteration.value_iteration(game, -1, 1e-12)
    assert root_value(game, values) == pytest.approx(float(solved.value.reward), abs=1e-9)
    responder = openspiel_best_response.BestResponsePolicy(game, 0, fight_spiel.openspiel_policy(
        game, {agent: solved.policy}))
    assert responder.value(game.new_initial_state()) == pytest.approx(float(solved.value.reward), abs=1e-9)


def test_the_exp_equilibrium_equals_solves_and_is_unexploitable():
    # information states are observations (Markov), so not the perfect recall the sequence-form LP
    # needs: value iteration is the second opinion
    check_equilibrium((), linear_program=False, scenario=exp_team_document(), agents=("Archer", "Brute"))


def test_a_serialized_state_plays_on_in_a_new_game():
    game = fight_spiel.load_game("d100_duel", overrides=SHORT)
    state = game.new_initial_state()
    state.apply_action(1)
    state.apply_actions([state.legal_actions(0)[1], state.legal_actions(1)[1]])
    state.apply_action(state.chance_outcomes()[-1][0])
    text = pyspiel.serialize_game_and_state(game, state)
    other_game, restored = pyspiel.deserialize_game_and_state(text)
    assert other_game is not game
    assert str(restored) == str(state)
    assert restored.history() == state.history()
    for player in (0, 1):
        assert restored.legal_actions(player) == state.legal_actions(player)
        assert restored.observation_tensor(player) == state.observation_tensor(player)
    joint = [state.legal_actions(0)[1], state.legal_actions(1)[-1]]
    restored.apply_actions(joint)
    state.apply_actions(joint)
    assert [a for a, _ in restored.chance_outcomes()] == [a for a, _ in state.chance_outcomes()]
    assert [p for _, p in restored.chance_outcomes()] == pytest.approx([p for _, p in state.chance_outcomes()])


def test_actions_masks_and_observations_are_the_envs():
    game = fight_spiel.load_game("d100_duel", overrides=SHORT)
    chain = game.chain
    for state in decision_states(game):
        for player, row in enumerate(game.fight.rows):
            obs, masks = chain.observations([state._state], state._t, row)
            assert state.observation_tensor(player) == pytest.approx(obs[0].tolist())
            assert state.information_state_tensor(player) == pytest.approx(obs[0].tolist())
            assert state.legal_actions(player) == np.flatnonzero(masks[0]).tolist()
    # the env's first observations are the game's after its opening
    from combatsim.rl.fight_parallel import parallel_env

    opening = game.new_initial_state()
    keys = {game.fight.key(opening.child(action)._state, 0, player)
            for action, _ in opening.chance_outcomes() for player in (0, 1)}
    env = parallel_env(example("d100_duel", SHORT), ["Veteran", "Guard"])
    for seed in range(12):
        observations, _ = env.reset(seed=seed)
        for player, name in enumerate(("Veteran", "Guard")):
            assert chain.observation_keys(observations[name][None, :], player)[0] in keys


def test_information_states_are_words_one_to_one_with_observations():
    game = fight_spiel.load_game("d100_duel", overrides=SHORT)
    for player in (0, 1):
        words_of: dict[bytes, str] = {}
        for state in decision_states(game):
            key = game.fight.key(state._state, state._t, player)
            words = state.information_state_string(player)
            assert words_of.setdefault(key, words) == words
            assert state.observation_string(player) == words
        assert len(set(words_of.values())) == len(words_of)
    text = decision_states(game)[0].information_state_string(0)
    assert text.startswith("d100: round 1 of 1, pass 1 of 2, Veteran sees")
    assert "Guard (foe)" in text and "Veteran (you)" in text
    ended = game.new_initial_state()
    while not ended.is_terminal():
        if ended.is_chance_node():
            ended.apply_action(ended.chance_outcomes()[0][0])
        else:
            ended.apply_actions([1, ended.legal_actions(1)[0]])
    assert "fight over" in ended.information_state_string(0)
    assert ended.returns() in ([1.0, -1.0], [-1.0, 1.0], [0.0, 0.0])


# --- a second opinion for combatsim solve -----------------------------------------------------------

@pytest.mark.parametrize("overrides", [ONE_PASS, SHORT], ids=["one pass", "two passes"])
def test_value_iteration_and_best_response_equal_solves_best_response(overrides):
    solved = best_response(example("d100_duel", overrides), "Veteran")
    game = fight_spiel.load_game("d100_duel", ["Veteran"], overrides=overrides)
    values = value_iteration.value_iteration(game, -1, 1e-12)
    assert root_value(game, values) == pytest.approx(float(solved.value.reward), abs=1e-9)
    responder = openspiel_best_response.BestResponsePolicy(game, 0, fight_spiel.openspiel_policy(
        game, {"Veteran": solved.policy}))
    assert responder.value(game.new_initial_state()) == pytest.approx(float(solved.value.reward), abs=1e-9)
    # the solved policy, played in OpenSpiel, is worth its value
    played = expected_game_score.policy_value(game.new_initial_state(),
                                              [fight_spiel.openspiel_policy(game, {"Veteran": solved.policy})])
    assert played[0] == pytest.approx(float(solved.value.reward), abs=1e-9)


def test_openspiels_best_response_to_a_solved_policy_equals_solves():
    scenario = example("d100_duel", ONE_PASS)
    veteran = best_response(scenario, "Veteran").policy
    guard = best_response(scenario, "Guard", against={"Veteran": veteran})
    game = fight_spiel.load_game("d100_duel", overrides=ONE_PASS)

    def idle(obs, masks):
        return np.zeros(len(obs), dtype=np.int64)

    played = fight_spiel.openspiel_policy(game, {"Veteran": veteran, "Guard": idle})
    responder = openspiel_best_response.BestResponsePolicy(game, 1, played)
    assert responder.value(game.new_initial_state()) == pytest.approx(float(guard.value.reward), abs=1e-9)


def check_equilibrium(overrides, linear_program: bool, scenario="d100_duel", agents=("Veteran", "Guard")) -> None:
    """OpenSpiel's value iteration gives the value, and OpenSpiel finds nothing to exploit in the
    equilibrium policies, both within 1e-9."""
    from combatsim.solve import equilibrium

    game = fight_spiel.load_game(scenario, list(agents), overrides=overrides)
    turn_based = pyspiel.convert_to_turn_based(game)
    value = root_value(game, value_iteration.value_iteration(game, -1, 1e-12))
    if linear_program:
        from open_spiel.python.algorithms import sequence_form_lp

        assert sequence_form_lp.solve_zero_sum_game(turn_based)[0] == pytest.approx(value, abs=1e-9)
    solved = equilibrium(example(scenario, overrides) if isinstance(scenario, str) else as_scenario(scenario),
                         list(agents))
    assert solved.value == pytest.approx(value, abs=1e-9)
    profile = fight_spiel.openspiel_policy(turn_based, solved.policies)
    assert exploitability.exploitability(turn_based, profile) <= 1e-9
    assert expected_game_score.policy_value(turn_based.new_initial_state(), [profile, profile])[0] == pytest.approx(
        solved.value, abs=1e-9)


def test_the_equilibrium_equals_solves_and_is_unexploitable():
    check_equilibrium(ONE_PASS, linear_program=True)


@slow_form
@pytest.mark.slow
def test_the_equilibrium_equals_solves_and_is_unexploitable_two_passes():
    check_equilibrium(SHORT, linear_program=False)


#: TSS: Kara's two blades against the marksman, small tracks, one round, the marksman's action
#: check one lower (no tie-break order)
TSS_BLADES = ["options.max_rounds=1", "sides[0].members[0].durability=[2,2,1]",
              "sides[1].members[0].durability=[2,2,1]", 'sides[1].members[0].action_check="+12/11/5/2"']


@pytest.mark.parametrize("agent", ["Kara", "Marksman"])
def test_tss_value_iteration_and_best_response_equal_solves(agent):
    solved = best_response(example("tss_two_blades", TSS_BLADES), agent, method="float64")
    game = fight_spiel.load_game(example("tss_two_blades", TSS_BLADES), [agent])
    values = value_iteration.value_iteration(game, -1, 1e-12)
    assert root_value(game, values) == pytest.approx(float(solved.value.reward), abs=1e-9)
    scripted = fight_spiel.load_game(example("tss_two_blades", TSS_BLADES), [agent])
    responder = openspiel_best_response.BestResponsePolicy(scripted, 0, fight_spiel.openspiel_policy(
        scripted, {agent: solved.policy}))
    assert responder.value(scripted.new_initial_state()) == pytest.approx(float(solved.value.reward), abs=1e-9)


@slow_form
@pytest.mark.slow
def test_tss_equilibrium_equals_solves_and_is_unexploitable():
    """Tracks of 1 (any hit takes a member out): OpenSpiel's exploitability of solve's equilibrium
    policies is at most 1e-9, and its value iteration gives the same value within 1e-9."""
    from combatsim.solve import equilibrium

    tiny = example("tss_two_blades", ["options.max_rounds=1", "sides[0].members[0].durability=[1,1,1]",
                                      "sides[1].members[0].durability=[1,1,1]",
                                      'sides[1].members[0].action_check="+12/11/5/2"'])
    game = fight_spiel.load_game(tiny)
    turn_based = pyspiel.convert_to_turn_based(game)
    solved = equilibrium(tiny, ["Kara", "Marksman"])
    profile = fight_spiel.openspiel_policy(turn_based, solved.policies)
    assert exploitability.exploitability(turn_based, profile) <= 1e-9
    assert expected_game_score.policy_value(turn_based.new_initial_state(), [profile, profile])[0] == pytest.approx(
        solved.value, abs=1e-9)
    assert solved.value == pytest.approx(root_value(game, value_iteration.value_iteration(game, -1, 1e-12)), abs=1e-9)


def test_tss_tied_orders_are_distinct_observations():
    """Kara and the marksman tie their action checks: each opening (phases, negated steps, the
    tie-break order) is its own state, and each player's observation tells them apart."""
    game = fight_spiel.load_game("tss_two_blades", overrides=["options.max_rounds=1"], max_states=2**31 - 1)
    root = game.new_initial_state()
    children = [root.child(action) for action, _ in root.chance_outcomes()]
    assert len({str(child) for child in children}) == len(children)
    for player in (0, 1):
        assert len({child.observation_string(player) for child in children}) == len(children)
        assert len({tuple(child.observation_tensor(player)) for child in children}) == len(children)
    assert any("acting place" in str(child) for child in children)


# --- a policy OpenSpiel trains, played in fights and the envs ---------------------------------------

def openspiel_value(turn_based, tables) -> float:
    profile = fight_spiel.openspiel_policy(turn_based, tables)
    return expected_game_score.policy_value(turn_based.new_initial_state(), [profile, profile])[0]


def test_a_cfr_policy_plays_in_fights_and_envs_as_in_openspiel(tmp_path):
    game = fight_spiel.load_game("d100_duel", overrides=ONE_PASS)
    turn_based = pyspiel.convert_to_turn_based(game)
    solver = cfr.CFRSolver(turn_based)
    for _ in range(30):
        solver.evaluate_and_update_policy()
    average = solver.average_policy()
    tables, pure = {}, {}
    for name in ("Veteran", "Guard"):
        fight_spiel.table_policy(game, average, name).save(tmp_path / f"{name}.npz")
        tables[name] = load_policy(tmp_path / f"{name}.npz")
        pure[name] = fight_spiel.table_policy(game, average, name, pure=True)
    assert tables["Veteran"].mixed  # fights draw its actions from the policy die
    fights = 100_000
    for played in (tables, pure):
        value = openspiel_value(turn_based, played)
        results = play_fights(scenario_game(example("d100_duel", ONE_PASS)), fights, 7, played)
        mean = (results.wins[0] - results.wins[1]) / fights
        spread = np.sqrt((results.wins[0] + results.wins[1]) / fights - mean**2) / np.sqrt(fights)
        assert abs(mean - value) <= 5 * spread
    # an env loop calls policy(obs, masks): the most likely action, as the pure table plays
    from combatsim.rl.fight_parallel import parallel_env

    env = parallel_env(example("d100_duel", ONE_PASS), ["Veteran", "Guard"])
    rewards = []
    for episode in range(3000):
        observations, infos = env.reset(seed=episode)
        while env.agents:
            actions = {name: int(tables[name](observations[name][None, :], infos[name]["action_mask"][None, :])[0])
                       for name in env.agents}
            observations, reward, _, _, infos = env.step(actions)
        rewards.append(reward["Veteran"])
    spread = np.std(rewards) / np.sqrt(len(rewards))
    assert abs(np.mean(rewards) - openspiel_value(turn_based, pure)) <= 5 * spread


def test_a_policy_of_openspiels_cpp_solvers_saves_as_a_table():
    game = fight_spiel.load_game("d100_duel", overrides=ONE_PASS)
    turn_based = pyspiel.convert_to_turn_based(game)
    solver = pyspiel.CFRSolver(turn_based)  # its average policy names no game: asked in the turn-based form
    for _ in range(3):
        solver.evaluate_and_update_policy()
    average = solver.average_policy()
    mixed = fight_spiel.table_policy(game, average, "Guard")
    pure = fight_spiel.table_policy(game, average, "Guard", pure=True)
    assert mixed.mixed and not pure.mixed
    assert np.allclose(mixed.probabilities.sum(axis=1), 1.0)
    assert (pure.probabilities.argmax(axis=1) == mixed.probabilities.argmax(axis=1)).all()


# --- bad input --------------------------------------------------------------------------------------

def env_error(agents) -> str:
    from combatsim.rl.fight_parallel import parallel_env

    with pytest.raises(ValueError) as raised:
        parallel_env("d100_duel", agents)
    return str(raised.value)


@pytest.mark.parametrize("agents", [["Veteran", "Nobody"], ["Veteran", "Guard", "Veteran"], []])
def test_bad_agents_get_the_envs_errors(agents):
    message = env_error(agents)
    with pytest.raises(ValueError) as raised:
        fight_spiel.load_game("d100_duel", agents)
    assert str(raised.value) == message and "\n" not in message
    with pytest.raises(ValueError) as raised:
        pyspiel.load_game(f"combatsim_fight(scenario=d100_duel,agents={';'.join(agents) or ';'})")
    assert message in str(raised.value)


def test_a_chain_past_the_bound_is_refused_with_the_bound_and_the_estimate():
    with pytest.raises(ValueError, match=r"max_states: this fight has up to 38,416 states, over the limit of 1,000"):
        fight_spiel.load_game("d100_duel", max_states=1000)


def test_other_bad_input_gets_one_line_errors():
    with pytest.raises(ValueError, match="overrides: expected PATH=VALUE"):
        fight_spiel.load_game("d100_duel", overrides=["options.passes"])
    with pytest.raises(ValueError, match="cannot carry"):
        fight_spiel.load_game("d100_duel", overrides=["sides[0].name=a,b"])
    with pytest.raises(ValueError, match="no such scenario file or example"):
        fight_spiel.load_game("no_such_example")
    game = fight_spiel.load_game("d100_duel", overrides=ONE_PASS)
    with pytest.raises(ValueError, match="give one policy to each player"):
        fight_spiel.openspiel_policy(game, {"Veteran": lambda obs, masks: np.zeros(len(obs), dtype=np.int64)})
    with pytest.raises(ValueError, match="no player is named 'Nobody'"):
        fight_spiel.table_policy(game, None, "Nobody")


def test_the_example_runs(tmp_path, monkeypatch, capsys):
    import runpy
    import sys
    from pathlib import Path

    script = Path(__file__).parent.parent / "examples" / "openspiel_cfr.py"
    monkeypatch.setattr(sys, "argv", [str(script), "--iterations", "3", "--fights", "20000", "--out", str(tmp_path)])
    runpy.run_path(str(script), run_name="__main__")
    printed = capsys.readouterr().out
    assert "combatsim solve's equilibrium +0.032512" in printed
    assert (tmp_path / "Veteran-mixed.npz").is_file() and (tmp_path / "Guard-pure.npz").is_file()
