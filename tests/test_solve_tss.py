"""combatsim.solve on TSS fights: the phase-by-phase decision chain against the odds chain, brute
force and fights played with the solved policies."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from combatsim.cli import main as cli_main
from combatsim.fight_odds import fight_odds
from combatsim.game import scenario_game
from combatsim.policies import play_fights
from combatsim.scenario import load, resolve
from combatsim.solve import best_response, decision_chain, equilibrium, evaluate
from combatsim.solve.chain import SCRIPTED
from combatsim.solve.induction import Progress, Walk, chosen_weights, group_starts, play
from tests._solving import agrees, env_rewards, saved_policy_fights, within_five_sigma

million_fights = pytest.mark.skipif(
    "'slow' not in (config.getoption('markexpr') or '').replace('not slow', '')",
    reason="the million-fight form: pytest -m slow tests/test_solve_tss.py")

SMALL = ["sides[0].members[0].durability=[3,3,2]", "sides[1].members[0].durability=[3,3,2]"]
#: Alex and the thug, small tracks, two rounds
ALEX = ["options.max_rounds=2", *SMALL]
#: Kara's two blades against the marksman, whose aim chance is 33%: small tracks, one round, tied
#: action checks (the tie-break order is drawn)
TIED = ["options.max_rounds=1", "sides[0].members[0].durability=[2,2,1]", "sides[1].members[0].durability=[2,2,1]"]
#: ... and the marksman's action check one lower (no tie: the observation shows the whole state)
BLADES = ["options.max_rounds=1", *TIED[1:], 'sides[1].members[0].action_check="+12/11/5/2"']
BLADES_SET = [word for item in BLADES for word in ("--set", item)]


def example(name: str, overrides=()):
    path, label = resolve(name)
    return load(path, list(overrides), label=label)


def always(action: int):
    def policy(obs, masks):
        return np.where(masks[:, action] != 0, action, 0).astype(np.int64)

    policy.__qualname__ = f"always_{action}"
    return policy


def scripted_outcome(scenario):
    chain = decision_chain(scenario, method="exact")
    walk = Walk(chain, (), dict.fromkeys(range(len(chain.game.member_names)), SCRIPTED), 10**7, Progress("", False))
    ends, unfinished, _ = play(walk, [np.ones(len(o.row), dtype=object) for o in walk.options], Progress("", False))
    return ends, unfinished


def test_the_state_bound_holds_every_state_met():
    """The bound counts, per member, only the lost points that sums of its foes' attacks reach: every
    state met with both members deciding (any play) has each member's points among them, and the
    states met are within the bound."""
    from combatsim.solve.tss import PAST, reachable_lost

    chain = decision_chain(example("tss_two_blades", TIED), method="float64")
    Walk(chain, (0, 1), {}, 10**7, Progress("", False))
    for j in range(chain.members):
        met = {value[0][j][:3] for value in chain._states.values if value != PAST and value[0][j] is not None}
        reachable = reachable_lost(chain.chain, j)
        assert met <= reachable and len(met) > 1
        assert len(reachable) < math.prod(chain.chain.tracks[j])  # tighter than every combination
    assert chain.state_count() <= chain.state_bound


@pytest.mark.parametrize(("name", "overrides"), [("tss_alex_vs_thug", ALEX), ("tss_two_blades", TIED)])
def test_each_row_is_the_same_worked_out_afresh(name, overrides):
    """The chain keeps each attack's law per (attacker, victim, penalty, aim, hand) and each round's
    opening per the people at the round's end, shared by every state that meets them: every row of
    a walk where two members decide is what the chain gives for that state with those memos empty."""
    chain = decision_chain(example(name, overrides), method="float64")  # the same operations: equal floats
    walk = Walk(chain, (0, 1), {}, 10**7, Progress("", False))
    rows = walk.rows
    starts = [*rows.moved_start, len(rows.moved_to)]
    kept = [(key, rows.moved_to[starts[r]:starts[r + 1]], rows.moved_p[starts[r]:starts[r + 1]])
            for key, r in rows.index.items()]
    ts = {kind: t for t in reversed(range(chain.horizon)) for kind in [chain.step_kind(t)]}
    for (kind, state, decisions), moved_to, moved_p in kept[::29]:
        chain._strikes.clear()
        chain._opened.clear()
        chain._openings.clear()
        step = chain.transitions(state, ts[kind], decisions)
        assert dict(zip(step.moved, step.moved_p, strict=True)) == dict(zip(moved_to, moved_p, strict=True))
    assert len(kept) > 500


@pytest.mark.parametrize(("name", "overrides"), [("tss_alex_vs_thug", ALEX), ("tss_two_blades", TIED),
                                                 ("tss_two_blades", BLADES)])
def test_every_member_scripted_is_the_exact_odds(name, overrides):
    """Phase by phase, with the aim die, two weapons and tie-break orders, the chain with every
    member scripted is ``odds fight``'s round-by-round chain: the same exact fractions."""
    scenario = example(name, overrides)
    odds = fight_odds(scenario, method="exact")
    ends, unfinished = scripted_outcome(scenario)
    assert odds.method == "exact"
    assert (ends[0], ends[1], unfinished) == (odds.wins[0], odds.wins[1], odds.unfinished)
    assert ends[2] == 0 == odds.draws


@pytest.mark.parametrize("agent", ["Kara", "Marksman"])
def test_the_best_response_is_at_least_the_scripted_value_exactly(agent):
    solved = best_response(example("tss_two_blades", BLADES), agent)
    assert solved.method == "exact" and solved.conflicts == 0
    assert solved.value.reward >= solved.scripted.reward
    assert solved.value.win + solved.value.loss + solved.value.draw + solved.value.unfinished == 1
    if agent == "Marksman":
        assert solved.gain > 0  # aiming by a 33% die is not the best play


@pytest.mark.parametrize("free", [pytest.param(6, id="CI: 6 of 8 decisions free"),
                                  pytest.param(8, id="all 8", marks=[pytest.mark.slow, million_fights])])
def test_the_best_response_equals_brute_force_over_every_deterministic_policy(free):
    """One round, one action each, any hit taking a member out, the marksman always acting in the
    Amazing phase: every assignment of an action to each decision (state, phase) played forward
    exactly; the best of them is the best response's value, exactly. (CI: the last decisions are
    the best response's, the first ``free`` take every action.)"""
    scenario = example("tss_two_blades", ["options.max_rounds=1", *(f"sides[{k}].members[0].{field}" for k in (0, 1)
                                                                     for field in ("durability=[1,1,1]",
                                                                                   "actions_per_round=1")),
                                          'sides[0].members[0].action_check="+20/19/19/19"',
                                          'sides[1].members[0].action_check="+21/20/20/20"'])
    solved = best_response(scenario, "Marksman", method="exact")
    chain = decision_chain(scenario, method="exact")
    member = chain.game.member_names.index("Marksman")
    side = chain.game.member_sides[member]
    walk = Walk(chain, (member,), {}, 10**6, Progress("", False))
    points = [(t, start, count) for t, options in enumerate(walk.options)
              for start, count in zip(group_starts(options.state),
                                      np.diff(np.r_[group_starts(options.state), len(options.state)]), strict=True)
              if count > 1]
    fixed = [(t, start) for t, options in enumerate(walk.options)
             for start, count in zip(group_starts(options.state),
                                     np.diff(np.r_[group_starts(options.state), len(options.state)]), strict=True)
             if count == 1]
    assert len(points) == 8 and math.prod(int(c) for _, _, c in points) <= 10_000
    walk_chosen = best_response_choices(walk, member)
    for t, start, _ in points[free:]:
        fixed.append((t, int(next(k for k in walk_chosen[t] if start <= k))))
    points = points[:free]
    best = None
    for assignment in itertools.product(*(range(int(c)) for _, _, c in points)):
        chosen = [[] for _ in walk.options]
        for t, start in fixed:
            chosen[t].append(int(start))
        for (t, start, _), pick in zip(points, assignment, strict=True):
            chosen[t].append(int(start) + pick)
        ends, _, _ = play(walk, chosen_weights(walk, [np.array(sorted(c), dtype=np.int64) for c in chosen]),
                          Progress("", False))
        reward = ends[side] - ends[1 - side]
        best = reward if best is None else max(best, reward)
    assert best == solved.value.reward > solved.scripted.reward


def best_response_choices(walk, member):
    from combatsim.solve.induction import best_response_values

    chosen, _ = best_response_values(walk, member, Progress("", False))
    return [sorted(c.tolist()) for c in chosen]


def test_the_best_response_beats_every_constant_policy_exactly():
    scenario = example("tss_two_blades", BLADES)
    solved = best_response(scenario, "Marksman")
    actions = len(scenario_game(scenario).action_names)
    rewards = [evaluate(scenario, "Marksman", {"Marksman": always(a)}, method="exact").reward for a in range(actions)]
    assert max(rewards) <= solved.value.reward


def test_float64_is_within_its_bound_of_the_exact_value():
    scenario = example("tss_alex_vs_thug", ["options.max_rounds=1", *SMALL])
    exact = best_response(scenario, "Thug", method="exact")
    rough = best_response(scenario, "Thug", method="float64")
    assert 0 < rough.error_bound < 1e-9
    for a, b in ((exact.value, rough.value), (exact.scripted, rough.scripted)):
        for name in ("win", "loss", "draw", "unfinished"):
            assert abs(float(getattr(a, name)) - getattr(b, name)) <= rough.error_bound


def hiding(monkeypatch, field: str) -> None:
    """Solved policies keyed as if the observation lacked ``field`` in every member's block."""
    from combatsim.solve import keys_tss
    from combatsim.tss import engine

    shown = keys_tss.key_observations
    k = engine.MEMBER_NAMES.index(field)

    def key_observations(obs, blocks):
        keys = shown(obs, blocks)
        keys[:, engine.G + k::engine.F] = 0
        return keys

    monkeypatch.setattr(keys_tss, "key_observations", key_observations)


@pytest.mark.parametrize("agent", ["Kara", "Marksman"])
def test_tied_action_checks_show_the_order_in_the_observation(agent, monkeypatch):
    """Kara and the marksman tie their action checks: each one's place in the acting order is in
    the observation, so one observation is one state, and the saved policy, played over the exact
    chain from observations alone, gets the solved value. Without it, states that differ only in
    the tie-break order look alike and need different actions: the policy gets less (the
    marksman's win chance 0.3609 for 0.3641, over 6 sigma of 1e6 fights)."""
    scenario = example("tss_two_blades", TIED)
    solved = best_response(scenario, agent, method="float64")
    played = evaluate(scenario, agent, {agent: solved.policy}, method="float64")
    assert solved.conflicts == 0 and abs(played.reward - solved.value.reward) <= 1e-12
    hiding(monkeypatch, "acting_place")
    blind = best_response(scenario, agent, method="float64")
    assert blind.conflicts > 0 and blind.value.reward == solved.value.reward
    assert evaluate(scenario, agent, {agent: blind.policy}, method="float64").reward < solved.value.reward - 0.005


def test_resolve_physical_negated_steps_are_in_the_observation():
    """The marksman's Resolve-physical roll negates up to 3 dazed steps each round, more than the
    dazed field shows before he is hurt: the negated steps are in the observation, so one
    observation is one state and the saved policy gets the solved value over the exact chain."""
    scenario = example("tss_two_blades", [*TIED, 'sides[1].members[0].resolve="12/6/3"'])
    solved = best_response(scenario, "Marksman", method="float64")
    assert solved.conflicts == 0 and solved.gain > 0.1
    negated = scenario_game(scenario).observation_names.index("self.negated")
    assert set(solved.policy.keys[:, negated].tolist()) == {0.0, *np.float32([1 / 3, 2 / 3]).tolist(), 1.0}
    played = evaluate(scenario, "Marksman", {"Marksman": solved.policy}, method="float64")
    assert abs(played.reward - solved.value.reward) <= 1e-12


@pytest.mark.parametrize("overrides", [pytest.param(BLADES, id="no tie"), pytest.param(TIED, id="tied")])
@pytest.mark.parametrize("n", [pytest.param(100_000, id="1e5"),
                               pytest.param(1_000_000, id="1e6", marks=[pytest.mark.slow, million_fights])])
def test_the_solved_policy_plays_its_value_in_fights(n, overrides, tmp_path):
    """Tied, the tie-break order is drawn each round; the policy sees it in the observation and
    plays the best response's value (0.14 over the scripted aim die's)."""
    scenario = example("tss_two_blades", overrides)
    solved = best_response(scenario, "Marksman", method="float64")
    assert solved.conflicts == 0 and solved.gain > 0
    results = saved_policy_fights(scenario, "Marksman", solved, n, tmp_path / "marksman.npz", "numba")
    agrees(solved.value.win, results.wins[1], n)
    agrees(solved.value.loss, results.wins[0], n)
    agrees(solved.value.unfinished, results.unfinished, n)


def test_a_saved_policy_plays_in_the_environment():
    from combatsim.rl.fight_env import FightEnv

    scenario = example("tss_two_blades", BLADES)
    solved = best_response(scenario, "Marksman", method="float64")
    env = FightEnv(scenario, "Marksman", backend="python")
    assert within_five_sigma(env_rewards(env, solved.policy, 300, seed=3), float(solved.value.reward))


@pytest.fixture(scope="module")
def blades_game():
    return equilibrium(example("tss_two_blades", BLADES), "Kara,Marksman")


def test_the_equilibrium_value_lies_between_the_best_responses(blades_game):
    game = blades_game
    assert game.bounds_hold and game.conflicts == 0
    assert game.low <= game.value <= game.high and game.error_bound < 1e-9
    assert game.value <= float(game.best_responses["Kara"].value.reward) + game.error_bound
    assert game.value >= -float(game.best_responses["Marksman"].value.reward) - game.error_bound
    assert abs(float(game.outcome.reward) - game.value) <= game.error_bound


def test_no_constant_policy_gains_against_the_equilibrium(blades_game):
    game = blades_game
    scenario = example("tss_two_blades", BLADES)
    kara, marksman = game.policies["Kara"], game.policies["Marksman"]
    for action in range(len(scenario_game(scenario).action_names)):
        against_marksman = evaluate(scenario, "Kara", {"Kara": always(action), "Marksman": marksman})
        against_kara = evaluate(scenario, "Marksman", {"Marksman": always(action), "Kara": kara})
        assert against_marksman.reward <= game.value + game.error_bound
        assert against_kara.reward <= -game.value + game.error_bound


def test_the_equilibrium_policies_play_their_value_in_fights(blades_game):
    n = 100_000
    results = play_fights(scenario_game(example("tss_two_blades", BLADES)), n, 9, blades_game.policies,
                          backend="numba")
    agrees(blades_game.outcome.win, results.wins[0], n)
    agrees(blades_game.outcome.loss, results.wins[1], n)


#: A two-round duel whose equilibrium is mixed: some phases' matrix games have no saddle point
#: (the first member, sturdy and hard to hit, against a two-action member of weak stun blows;
#: their action checks tie).
MIXED_DUEL = [{"skill": "14/7/3", "action_check": "+9/8/4/2", "actions_per_round": 1, "durability": [1, 1, 1],
               "defence_steps": 3, "weapon": {"damage": "d4m/d4w/d4s", "class": "LI"}},
              {"skill": "10/5/2", "action_check": "+9/8/4/2", "actions_per_round": 2, "durability": [2, 2, 1],
               "attack_steps": 1, "weapon": {"damage": "d6s/d4s/d2s", "class": "LI"}}]


def mixed_duel():
    from combatsim.scenario import validate

    document = {"ruleset": "tss", "name": "mixed duel", "options": {"max_rounds": 2},
                "sides": [{"name": name, "members": [member]} for name, member in zip("AB", MIXED_DUEL, strict=True)]}
    return validate(document, "mixed duel", "mixed duel")


@pytest.fixture(scope="module")
def mixed_game():
    return equilibrium(mixed_duel(), "A,B")


def test_a_mixed_equilibrium_lies_between_the_best_responses(mixed_game):
    game = mixed_game
    assert game.games["linear program"] >= 10 and game.conflicts == 0
    for policy in game.policies.values():  # both mix: some observation's second action has over 2%
        assert np.sort(policy.probabilities, axis=1)[:, -2].max() > 0.02
    assert game.bounds_hold and game.low <= game.value <= game.high and game.error_bound < 1e-9
    assert game.value <= float(game.best_responses["A"].value.reward) + game.error_bound
    assert game.value >= -float(game.best_responses["B"].value.reward) - game.error_bound
    assert abs(float(game.outcome.reward) - game.value) <= game.error_bound


def test_no_constant_policy_gains_against_a_mixed_equilibrium(mixed_game):
    """Over the exact chain, with the other playing its mixed equilibrium policy."""
    game, scenario = mixed_game, mixed_duel()
    for action in range(len(scenario_game(scenario).action_names)):
        against_b = evaluate(scenario, "A", {"A": always(action), "B": game.policies["B"]}, method="float64")
        against_a = evaluate(scenario, "B", {"B": always(action), "A": game.policies["A"]}, method="float64")
        assert against_b.reward <= game.value + game.error_bound
        assert against_a.reward <= -game.value + game.error_bound


@pytest.mark.parametrize("n", [pytest.param(100_000, id="1e5"),
                               pytest.param(1_000_000, id="1e6", marks=[pytest.mark.slow, million_fights])])
def test_mixed_equilibrium_policies_play_their_value_in_fights(mixed_game, n):
    """Each mixed choice draws from the fight's own stream: the fights give the value."""
    results = play_fights(scenario_game(mixed_duel()), n, 13, mixed_game.policies, backend="numba")
    agrees(mixed_game.outcome.win, results.wins[0], n)
    agrees(mixed_game.outcome.loss, results.wins[1], n)
    agrees(mixed_game.outcome.unfinished, results.unfinished, n)


def test_cli_solve_json_out_and_fight(capsys, tmp_path):
    out = tmp_path / "m.npz"
    assert cli_main(["solve", "tss_two_blades", "--agent", "Marksman", *BLADES_SET, "--json", "--out", str(out)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["member"] == "Marksman" and report["method"] == "exact" and report["ruleset"] == "tss"
    assert report["gain"]["float"] > 0 and out.exists()
    assert cli_main(["fight", "tss_two_blades", *BLADES_SET, "-n", "2000", "--policy", f"Marksman=file:{out}",
                     "--json"]) == 0


@pytest.mark.parametrize(("argv", "message"), [
    (["tss_two_blades", *BLADES_SET, "--agent", "Nobody"], "agent: no member is named 'Nobody'"),
    # a fight over the state bound: the unknown member is still what is named
    (["tss_alex_vs_thug", "--max-states", "1000000", "--agent", "Nobody"], "agent: no member is named 'Nobody'"),
    (["tss_alex_vs_thug", "--max-states", "1000000", "--agents", "Alex,Nobody"], "agents: no member is named 'Nobody'"),
    (["tss_alex_vs_thug", "--max-states", "1000000", "--agent", "Alex", "--against", "Nobody=numpy:zeros"],
     "against: no member is named"),
    (["tss_alex_vs_thug", "--agent", "Alex", "--max-states", "1000000"],
     "max_states: this fight has up to 2,482,176 states, over the limit of 1,000,000"),
    (["tss_two_blades", "--agents", "Kara,Marksman", "--max-states", "1000000"],
     "max_states: this fight has up to 1,292,544 states"),
    (["tss_two_blades", "--agents", "Kara,Kara"], "are on one side"),
    (["tss_two_blades", "--agent", "Kara", "--against", "Marksman=no_such_module_here:policy"], "does not import"),
])
def test_cli_bad_input_is_one_line_exit_2(capsys, argv, message):
    assert cli_main(["solve", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_the_equilibrium_policy_is_not_exploitable_and_holding_is(blades_game):
    from combatsim.solve import exploitability

    scenario = example("tss_two_blades", BLADES)
    solid = exploitability(scenario, "Kara", {"Marksman": blades_game.policies["Marksman"]})
    assert abs(solid.exploitability.value) <= solid.exploitability.error_bound
    idle = exploitability(scenario, "Kara", {"Marksman": always(0)})  # a marksman who always holds
    assert idle.exploitability.value > 0.1


def test_cli_agents_json_and_out(capsys, tmp_path):
    out = tmp_path / "eq.npz"
    assert cli_main(["solve", "tss_two_blades", "--agents", "Kara,Marksman", *BLADES_SET, "--json", "--out",
                     str(out)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["members"] == ["Kara", "Marksman"] and report["bounds_hold"] and report["ruleset"] == "tss"
    assert out.exists() and (tmp_path / "eq-Marksman.npz").exists()
