"""The example ids (combatsim/ExpDuel-v0, D100Duel-v0, TssDuel-v0) and the vector env's seeding,
buffers and argument checks on the rulesets' engines (tests/test_fight_env.py has the rest)."""

from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import combatsim.rl as rl
from combatsim.game import scenario_game
from combatsim.rl.fight_env import FightEnv
from combatsim.rl.fight_vector import FightVectorEnv
from tests.test_fight_env import assert_same

RULESETS = ("exp", "d100", "tss")


def trace(env, seed, actions):
    """reset(seed), then the given actions: every step's result, resetting where an episode ends."""
    out = [env.reset(seed=seed)]
    for action in actions:
        result = env.step(action)
        out.append(result)
        if result[2] is True or result[3] is True:
            out.append(env.reset())
    return out


@pytest.mark.parametrize("ruleset", RULESETS)
def test_example_id_is_fight_env_on_its_example_with_side_0_first_member(ruleset):
    env_id, example, agent = rl.EXAMPLE_ENVS[ruleset]
    assert rl.ENV_IDS[ruleset] == env_id and gym.spec(env_id).vector_entry_point is not None
    game = scenario_game(example)
    assert game.ruleset == ruleset and agent == game.member_names[game.member_sides.index(0)]
    env = gym.make(env_id, backend="python").unwrapped
    assert isinstance(env, FightEnv) and env.agent == agent and env.backend == "python"
    direct = FightEnv(example, agent, backend="python")
    actions = np.random.default_rng(4).integers(0, len(game.action_names), size=60)
    assert_same(trace(env, 9, actions), trace(direct, 9, actions))
    other = game.member_names[1]
    assert gym.make(env_id, agent=other, backend="python").unwrapped.agent_index == 1
    rendered = gym.make(env_id, render_mode="ansi", backend="python")
    rendered.reset(seed=0)
    assert len(rendered.render().splitlines()) == 1 + game.members
    with pytest.raises(ValueError, match=r"^agent: no member is named 'Nobody'; the scenario's members: "):
        gym.make(env_id, agent="Nobody")


@pytest.mark.parametrize("ruleset", RULESETS)
def test_example_id_make_vec_is_the_engine_vector_env(ruleset):
    env_id, _, agent = rl.EXAMPLE_ENVS[ruleset]
    vector = gym.make_vec(env_id, num_envs=4, vectorization_mode="vector_entry_point", backend="python")
    assert isinstance(vector, FightVectorEnv) and vector.num_envs == 4 and vector.agent == agent
    assert vector.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP  # the default, as Gymnasium 1.x
    obs, info = vector.reset(seed=30)
    single = gym.make(env_id, backend="python")
    for e in range(4):
        first, first_info = single.reset(seed=30 + e)
        assert np.array_equal(obs[e], first) and np.array_equal(info["action_mask"][e], first_info["action_mask"])


def test_vector_reset_takes_a_seed_per_env():
    seeds = [5, 17, 2**64 - 1]
    vector = FightVectorEnv(3, scenario="d100_duel", agent="Guard", backend="python")
    obs, _ = vector.reset(seed=seeds)
    for e, seed in enumerate(seeds):
        assert np.array_equal(obs[e], FightEnv("d100_duel", "Guard", backend="python").reset(seed=seed)[0])
    with pytest.raises(ValueError, match=r"^seed must be an integer or a list of 3 integers, got 2$"):
        vector.reset(seed=[1, 2])
    with pytest.raises(ValueError, match="^seed must be in 0..18446744073709551615"):
        vector.reset(seed=[1, 2, -1])


def test_reseeding_repeats_and_reset_without_seed_plays_the_next_fight():
    env = FightEnv("tss_alex_vs_thug", "Thug", backend="python")
    actions = [1] * 40
    first = trace(env, 3, actions)
    assert_same(first, trace(env, 3, actions))
    env.reset(seed=3)
    following = env.reset()[0]  # fight 1 of seed 3
    vector = FightVectorEnv(1, scenario="tss_alex_vs_thug", agent="Thug", backend="python")
    vector.reset(seed=3)
    assert np.array_equal(vector.reset()[0][0], following)


def test_vector_results_are_fresh_arrays():
    """A later step does not overwrite what an earlier one returned, infos and final infos included."""
    n = 8
    # final_obs and final_info are SAME_STEP's; the default NEXT_STEP returns neither
    vector = FightVectorEnv(n, scenario="exp_bob_too", agent="Bob Too", backend="python",
                            autoreset_mode=AutoresetMode.SAME_STEP)
    returned = [vector.reset(seed=3)]
    for _ in range(1000):
        if "final_info" in returned[-1][-1]:
            break
        returned.append(vector.step(np.ones(n, dtype=np.int64)))
    assert "final_info" in returned[-1][-1], "no fight ended in 1000 steps"
    first, ending = returned[1], returned[-1]
    kept = copy.deepcopy(returned)
    for _ in range(10):
        vector.step(np.ones(n, dtype=np.int64))
    assert_same(returned, kept)
    for buffer in vector._b.values():
        assert not np.shares_memory(first[0], buffer) and not np.shares_memory(first[4]["action_mask"], buffer)
        assert not any(np.shares_memory(o, buffer) for o in ending[4]["final_obs"] if o is not None)


def test_bad_arguments_are_one_line_errors():
    with pytest.raises(ValueError, match="^num_envs must be"):
        FightVectorEnv(0, scenario="d100_duel", agent="Guard")
    with pytest.raises(ValueError, match="^seed must be in 0..18446744073709551615"):
        FightEnv("d100_duel", "Guard", backend="python").reset(seed=-1)
    with pytest.raises(ValueError, match="^seed must be in 0..18446744073709551615"):
        FightVectorEnv(2, scenario="d100_duel", agent="Guard", backend="python").reset(seed=-1)
    with pytest.raises(ValueError, match="^render_mode must be None for the vector env"):
        gym.make_vec("combatsim/D100Duel-v0", num_envs=2, vectorization_mode="vector_entry_point", render_mode="ansi")
