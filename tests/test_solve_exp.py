"""combatsim.solve on EXP fights: each member's target in a unit a decision, checked against the odds
chain, brute force, the equilibrium bounds and fights played with the solved policies."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from combatsim.cli import main as cli_main
from combatsim.fight_odds import fight_odds
from combatsim.game import as_scenario, scenario_game
from combatsim.policies import play_fights
from combatsim.scenario import load, resolve
from combatsim.solve import best_response, decision_chain, equilibrium, evaluate, load_policy
from combatsim.solve.induction import Progress, Walk
from tests._solving import agrees, brute_force_best, env_rewards, saved_policy_fights, within_five_sigma

million_fights = pytest.mark.skipif(
    "'slow' not in (config.getoption('markexpr') or '').replace('not slow', '')",
    reason="the million-fight form: pytest -m slow tests/test_solve_exp.py")
#: Checks whose quick forms run in CI (the mixed tables' tests above) run in full under -m slow.
full_form = pytest.mark.skipif(
    "'slow' not in (config.getoption('markexpr') or '').replace('not slow', '')",
    reason="the full form: pytest -m slow tests/test_solve_exp.py")

#: Bob Too against the slug, cut down to a few hit points, shots and units (exact fractions).
SMALL_BOB = ["options.unit_limit=4", "sides[0].members[0].hit_points=6", "sides[1].members[0].hit_points=8",
             "sides[0].members[0].weapon.ammunition=3"]
TINY_BOB = ["options.unit_limit=2", "sides[0].members[0].hit_points=4", "sides[1].members[0].hit_points=5",
            "sides[0].members[0].weapon.ammunition=2"]


def bob(overrides=()):
    path, label = resolve("exp_bob_too")
    return load(path, list(overrides), label=label)


def creature(name: str, hit_points: int, armour_rating: int, bonus: int, damage: str, **weapon) -> dict:
    return {"kind": "creature", "name": name, "hit_points": hit_points, "armour_rating": armour_rating,
            "bonus": bonus, "maximum_roll": 900, "damage_adjustment": 0,
            "weapon": {"name": "weapon", "type": "A", "damage": damage, "natural": True, **weapon}}


def raiders(unit_limit: int = 3, brute_hit_points: int = 7):
    """Two raiders against a brute, whose choice of target (focus fire) matters."""
    archer = creature("Archer", 3, 500, 150, "1d4")
    archer["weapon"] = {"name": "bow", "type": "B", "damage": "1d4", "ammunition": 2}
    return as_scenario({
        "ruleset": "exp", "name": "raiders", "options": {"unit_limit": unit_limit},
        "sides": [{"name": "Raiders", "members": [archer, creature("Spearman", 5, 550, 100, "1d2")]},
                  {"name": "Brute", "members": [creature("Brute", brute_hit_points, 520, 120, "1d4")]}]})


def always(action: int):
    def policy(obs, masks):
        return np.full(len(obs), action, dtype=np.int64)

    policy.__qualname__ = f"always_{action}"
    return policy


# --- the chain ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("scenario", [bob(SMALL_BOB), raiders()], ids=["duel", "team"])
def test_the_scripted_value_is_the_exact_odds(scenario):
    """Every member scripted, the decision chain is ``odds fight``'s chain: the same fractions."""
    odds = fight_odds(scenario, method="exact")
    agent = scenario_game(scenario).member_names[-1]
    solved = best_response(scenario, agent, method="exact")
    assert solved.method == "exact"
    side = scenario_game(scenario).member_sides[-1]
    assert (solved.scripted.win, solved.scripted.loss) == (odds.wins[side], odds.wins[1 - side])
    assert (solved.scripted.draw, solved.scripted.unfinished) == (odds.draws, odds.unfinished)


def test_the_legal_actions_and_observations_are_the_engines():
    """Before every unit, the chain's observations and masks are what the engine writes for the
    engine state the chain state stands for (hold always; fire only at a standing foe, with shots)."""
    scenario = raiders()
    chain = decision_chain(scenario, method="exact")
    walk = Walk(chain, (2,), {}, 10**6, Progress("", False))
    for t, live in enumerate(walk.live):
        for member in range(3):
            obs, masks = chain.observations(live.tolist(), t, member)
            for k, state in enumerate(live.tolist()):
                assert tuple(np.flatnonzero(masks[k])) == chain.legal(state, t, member)
                assert obs[k, 0] == np.float32(t / 3)
    assert any(len(chain.legal(s, 1, 2)) == 3 for s in walk.live[1].tolist())  # both raiders standing: a choice


def test_auto_is_exact_up_to_its_bound_of_state_unit_pairs():
    """``auto`` takes exact fractions up to 2,000 states or 80,000 (state, unit) pairs in the bound,
    float64 beyond (exp_bob_too's 1,779,400 pairs would take hours in fractions)."""
    from combatsim.solve.exp import EXACT_DECISIONS, EXACT_STATES

    big = raiders(unit_limit=3, brute_hit_points=30)
    chain = decision_chain(big)
    assert chain.chain.state_bound() > EXACT_STATES and chain.state_bound <= EXACT_DECISIONS and chain.exact
    longer = decision_chain(raiders(unit_limit=30, brute_hit_points=30))
    assert longer.state_bound > EXACT_DECISIONS and not longer.exact
    assert decision_chain(longer.scenario, method="exact").exact
    assert not decision_chain(bob()).exact


def test_a_unit_law_shared_by_states_gives_each_state_its_own_step():
    """A unit's law is worked out once per hit points and aims and moved to each state's shots: every
    row met equals ``unit_of_fire`` run on that very state, exactly (limited and unlimited weapons,
    holding and firing, both deciders' joint choices)."""
    from combatsim.fight_odds.exp import unit_of_fire

    scenario = raiders(unit_limit=4)
    chain = decision_chain(scenario, method="exact")
    walk = Walk(chain, (0, 2), {}, 10**6, Progress("", False))
    checked = 0
    for _kind, state, decisions in walk.rows.index:
        hit_points, shots = chain._states.values[state]
        aims = [chain._aim(a, hit_points, shots, d) for a, d in enumerate(decisions)]
        direct, _ = unit_of_fire(hit_points, shots, aims, Fraction(1))
        step = chain.transitions(state, 0, decisions)
        moved = {chain._states.values[s]: p for s, p in zip(step.moved, step.moved_p, strict=True)}
        running = {key: p for key, p in direct.items() if any(key[0][:2]) and key[0][2]}
        assert moved == running
        assert sum(step.ended_p) + sum(moved.values()) == 1
        checked += 1
    assert checked > 100 and any(s[1][0] == 0 for s in chain._states.values)  # the archer's arrows run out


@pytest.mark.parametrize("agent", ["Brute", "Archer"])
def test_the_best_response_is_at_least_the_scripted_value_exactly(agent):
    solved = best_response(raiders(), agent, method="exact")
    assert solved.value.reward >= solved.scripted.reward
    assert solved.value.win + solved.value.loss + solved.value.draw + solved.value.unfinished == 1
    if agent == "Brute":
        assert solved.gain > 0  # focus fire beats the target die


def test_the_best_response_equals_brute_force_over_every_deterministic_policy():
    """Two units of the cut-down duel: every assignment of hold or fire to each of Bob's decisions,
    played forward exactly; the best is the best response's value, exactly."""
    scenario = bob(TINY_BOB)
    solved = best_response(scenario, "Bob Too", method="exact")
    assert brute_force_best(decision_chain(scenario, method="exact"), 0, most=4096) == solved.value.reward


def test_the_best_response_beats_every_constant_policy_exactly():
    scenario = raiders()
    solved = best_response(scenario, "Brute", method="exact")
    for action in range(3):
        assert evaluate(scenario, "Brute", {"Brute": always(action)}, method="exact").reward <= solved.value.reward


def test_the_equilibrium_value_lies_between_the_best_responses():
    result = equilibrium(raiders(), "Archer,Brute")
    assert result.bounds_hold
    assert result.value <= float(result.best_responses["Archer"].value.reward) + result.error_bound
    assert result.value >= -float(result.best_responses["Brute"].value.reward) - result.error_bound
    assert abs(float(result.outcome.reward) - result.value) <= result.error_bound + 1e-9


# --- the solved policy plays -------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [100_000, pytest.param(1_000_000, marks=[pytest.mark.slow, million_fights])])
def test_the_solved_policy_plays_its_value_in_fights(n, tmp_path):
    scenario = raiders(unit_limit=6)
    solved = best_response(scenario, "Brute")
    results = saved_policy_fights(scenario, "Brute", solved, n, tmp_path / "brute.npz", "cython")
    agrees(solved.value.win, results.wins[1], n)
    agrees(solved.value.loss, results.wins[0], n)
    agrees(solved.value.unfinished, results.unfinished, n)


def mixed_brute(scenario):
    """The Brute's best response mixed half and half with the target die's choice of foe 0."""
    from combatsim.solve.policy import TablePolicy

    table = best_response(scenario, "Brute", method="exact").policy
    probabilities = 0.5 * table.probabilities
    probabilities[:, 1] += 0.5
    return TablePolicy(ruleset="exp", scenario=table.scenario, member="Brute", keys=table.keys,
                       probabilities=probabilities, keyer=table.keyer, label="half foe 0")


def test_a_mixed_policy_draws_from_the_fight_and_plays_its_exact_value():
    """EXP rolls no policy die: a mixed table's choice comes from the fight's own stream, so
    backends and thread counts make the same choices, and the fights give the exact value."""
    scenario = raiders()
    mixed = mixed_brute(scenario)
    assert mixed.mixed and mixed.uses_policy_die
    exact = evaluate(scenario, "Brute", {"Brute": mixed}, method="exact")
    game = scenario_game(scenario)
    n = 100_000
    results = play_fights(game, n, 4, {"Brute": mixed}, backend="cython", outcomes=True, threads=2, chunk=4096)
    agrees(exact.win, results.wins[1], n)
    agrees(exact.loss, results.wins[0], n)
    again = play_fights(game, 2000, 4, {"Brute": mixed}, backend="python", outcomes=True, chunk=333)
    np.testing.assert_array_equal(again.outcome, results.outcome[:2000])


def test_a_mixed_policy_samples_in_an_environment_loop():
    """Called without uniform values (an env loop), a mixed table samples from its own seeded
    generator: the mean reward is the exact value within 5 sigma, and reseeding repeats it."""
    from combatsim.rl.fight_env import FightEnv

    scenario = raiders()
    mixed = mixed_brute(scenario)
    exact = evaluate(scenario, "Brute", {"Brute": mixed}, method="exact")
    env = FightEnv(scenario, "Brute", backend="python")
    mixed.reseed(7)
    first = env_rewards(env, mixed, 1500, seed=11)
    assert within_five_sigma(first, float(exact.reward))
    mixed.reseed(7)
    assert env_rewards(env, mixed, 200, seed=11) == first[:200]


def test_the_policy_stream_is_philox_apart_from_the_dice():
    from combatsim.engine import S_INDEX, S_STEPS
    from combatsim.rng import DOMAIN_POLICY, block
    from combatsim.solve.policy import stream_uniforms

    states = np.zeros((5, 12), dtype=np.int64)
    states[:, S_INDEX] = [0, 1, 2**33 + 5, 7, 7]
    states[:, S_STEPS] = [0, 3, 1, 0, 1]
    seeds = np.array([1, 2, 3, 2**40 + 9, 2**40 + 9])
    for member in (0, 1, 5):
        got = stream_uniforms(seeds, states, member)
        for e in range(5):
            word = block(int(seeds[e]), int(states[e, S_INDEX]), int(states[e, S_STEPS]),
                         DOMAIN_POLICY | (member >> 2))[member & 3]
            assert got[e] == word / 2**32


# --- the command line ----------------------------------------------------------------------------------

def test_cli_solve_exp_json(capsys, tmp_path):
    import json

    out = tmp_path / "bob.npz"
    argv = ["solve", "exp_bob_too", "--agent", "Bob Too", "--json", "--out", str(out)]
    for override in SMALL_BOB:
        argv += ["--set", override]
    assert cli_main(argv) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["ruleset"] == "exp" and result["method"] == "exact"
    assert float(result["best_response"]["reward"]["float"]) >= float(result["scripted"]["reward"]["float"])
    assert load_policy(out).member == "Bob Too"


@pytest.mark.parametrize(("argv", "message"), [
    (["--agent", "Nobody"], "agent: no member is named 'Nobody'"),
    (["--agents", "Bob Too,Bob Too"], "on one side"),
    (["--agents", "Bob Too"], "agents: name exactly two members"),
    (["--agent", "Bob Too", "--max-states", "10"], "over the limit of 10"),
    (["--agent", "Bob Too", "--against", "Giant Arctic Sea Slug=no_such_module_here:policy"], "does not import"),
])
def test_cli_bad_input_is_one_line_exit_2(capsys, argv, message):
    assert cli_main(["solve", "exp_bob_too", "--set", "options.unit_limit=2", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def two_against_two(unit_limit: int = 3):
    """A sniper and a tank a side: both snipers choose whom to shoot at once, and some of the
    states' matrix games have only mixed solutions."""
    def side(name, sniper_hit_points, sniper_bonus, tank_hit_points, tank_bonus, tank_damage, tank_armour):
        return {"name": name, "members": [
            creature(f"{name} Sniper", sniper_hit_points, 500, sniper_bonus, "1d6"),
            {**creature(f"{name} Tank", tank_hit_points, tank_armour, tank_bonus, tank_damage), "maximum_roll": 800}]}

    return as_scenario({"ruleset": "exp", "name": "two against two", "options": {"unit_limit": unit_limit},
                        "sides": [side("Blue", 4, 200, 8, 50, "1d3", 550), side("Red", 5, 180, 7, 60, "1d4", 520)]})


@pytest.mark.slow
@full_form
def test_a_mixed_equilibrium_plays_its_value_in_fights_and_an_environment_loop():
    """The two snipers' equilibrium has mixed strategies (a linear program's): played against each
    other in fights (their choices drawn from each fight's own stream) and in an environment loop
    (each policy sampling from its own generator), both give the equilibrium outcome within 5 sigma."""
    from combatsim.rl.fight_parallel import parallel_env

    scenario = two_against_two()
    result = equilibrium(scenario, "Blue Sniper,Red Sniper")
    assert result.games["linear program"] >= 1
    assert all(policy.mixed for policy in result.policies.values())
    n = 400_000
    fights = play_fights(scenario_game(scenario), n, 9, result.policies, backend="cython")
    agrees(result.outcome.win, fights.wins[0], n)
    agrees(result.outcome.loss, fights.wins[1], n)
    env = parallel_env(scenario, ["Blue Sniper", "Red Sniper"], backend="cython")
    rewards = []
    for episode in range(20_000):
        observations, infos = env.reset(seed=5) if episode == 0 else env.reset()
        while env.agents:
            actions = {name: int(result.policies[name](observations[name][None], infos[name]["action_mask"][None])[0])
                       for name in env.agents}
            observations, reward, _, _, infos = env.step(actions)
        rewards.append(reward["Blue Sniper"])
    mean, spread = float(np.mean(rewards)), float(np.std(rewards)) / math.sqrt(len(rewards))
    assert abs(mean - result.value) <= 5 * spread
