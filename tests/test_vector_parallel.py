"""combatsim.rl.vector_parallel_env: N copies of a multi-agent scenario in one engine call.

Env ``e`` of a vector env reset with seed ``s`` must be the PettingZoo env seeded ``s + e``, step
by step and across autoresets: observations, masks, rewards, ends, outcomes and episode stats.
"""

from __future__ import annotations

import copy
import pickle
from functools import partial
from types import SimpleNamespace

import numpy as np
import pytest
from gymnasium.vector import VectorEnv

from combatsim.rl.fight_parallel import parallel_env
from combatsim.rl.vector_parallel import vector_parallel_env
from tests import fake_engine
from tests.test_fight_env import assert_same

FAKE_TEAMS = fake_engine.game((0, 0, 1, 1), ("A 1", "A 2", "B 1", "B 2"), ("A", "B"), limit=4)


def batched(infos: list[dict], envs: int) -> dict:
    """Per-env infos (None where an env has none) batched as Gymnasium's vector envs batch them."""
    batcher = SimpleNamespace(num_envs=envs)
    batcher._add_info = partial(VectorEnv._add_info, batcher)
    out: dict = {}
    for e, info in enumerate(infos):
        if info is not None:
            out = batcher._add_info(out, info, e)
    return out


def env_info(infos: dict, names: list[str]) -> dict:
    """One env's info in the vector env's form, from the parallel env's infos by agent."""
    info = {"action_mask": np.stack([infos[name]["action_mask"] for name in names]),
            "masked_actions": infos[names[0]]["masked_actions"]}
    if "outcome" in infos[names[0]]:
        info["outcome"] = infos[names[0]]["outcome"]
    return info


def legal_actions(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    """A uniformly drawn legal action per row of ``masks`` (..., actions)."""
    scores = rng.random(masks.shape) * masks
    return scores.argmax(axis=-1).astype(np.int64)


@pytest.mark.parametrize(("scenario", "agents", "backend"), [
    (FAKE_TEAMS, ["A 2", "B 1", "A 1"], "python"),
    (FAKE_TEAMS, None, "numba"),
    ("d100_duel", ["Veteran", "Guard"], "python"),
])
def test_env_e_is_the_parallel_env_seeded_s_plus_e(scenario, agents, backend):
    envs, seed, steps = 4, 11, 40
    vector = vector_parallel_env(scenario, agents, num_envs=envs, backend=backend)
    singles = [parallel_env(scenario, agents, backend=backend) for _ in range(envs)]
    names = list(vector.possible_agents)
    obs, infos = vector.reset(seed=seed)
    for e, single in enumerate(singles):
        single_obs, single_infos = single.reset(seed=seed + e)
        for k, name in enumerate(names):
            np.testing.assert_array_equal(obs[e, k], single_obs[name])
            np.testing.assert_array_equal(infos["action_mask"][e, k], single_infos[name]["action_mask"])
    rng = np.random.default_rng(5)
    ends = 0
    for _ in range(steps):
        actions = legal_actions(rng, infos["action_mask"])
        obs, rewards, terminated, truncated, infos = vector.step(actions)
        assert obs.shape == (envs, len(names), len(vector.observation_names)) and rewards.shape == (envs, len(names))
        last_infos, final_obs, final_infos = [], [], []
        for e, single in enumerate(singles):
            s_obs, s_rewards, s_term, s_trunc, s_infos = single.step(
                {name: int(actions[e, k]) for k, name in enumerate(names)})
            assert [s_rewards[name] for name in names] == rewards[e].tolist()
            assert s_term[names[0]] == terminated[e] and s_trunc[names[0]] == truncated[e]
            if terminated[e] or truncated[e]:
                ends += 1
                final = infos["final_info"]
                assert infos["_final_obs"][e] and final["_outcome"][e]
                for k, name in enumerate(names):
                    np.testing.assert_array_equal(infos["final_obs"][e][k], s_obs[name])
                assert "episode" not in final  # Gymnasium's RecordEpisodeStatistics writes that key
                outcome = s_infos[names[0]]["outcome"]
                assert final["outcome"]["text"][e] == outcome["text"]
                assert final["outcome"]["standing"][e] == outcome["standing"]
                assert final["outcome"]["steps"][e] == outcome["steps"]
                final_obs.append(np.stack([s_obs[name] for name in names]))
                final_infos.append(env_info(s_infos, names))
                s_obs, s_infos = single.reset()  # SAME_STEP: the next fight starts in this step
            else:
                if "_final_obs" in infos:
                    assert not infos["_final_obs"][e]
                final_obs.append(None)
                final_infos.append(None)
            last_infos.append(env_info(s_infos, names))
            for k, name in enumerate(names):
                np.testing.assert_array_equal(obs[e, k], s_obs[name])
                np.testing.assert_array_equal(infos["action_mask"][e, k], s_infos[name]["action_mask"])
        expected = batched(last_infos, envs)
        if any(info is not None for info in final_infos):
            expected = batched([{**info, "final_obs": o, "final_info": final} if final is not None else info
                                for info, o, final in zip(last_infos, final_obs, final_infos, strict=True)], envs)
        assert_same(infos, expected, "infos")
    assert ends > 0


def test_rewards_follow_each_agents_side():
    vector = vector_parallel_env(FAKE_TEAMS, ["A 1", "B 1", "A 2"], num_envs=64, backend="python")
    vector.reset(seed=2)
    seen = 0
    for _ in range(10):
        _, rewards, terminated, _, infos = vector.step(np.ones((64, 3), dtype=np.int64))
        winners = infos.get("final_info", {}).get("outcome", {}).get("winner", np.full(64, None))
        for e in np.flatnonzero(terminated):
            expected = {"A": [1.0, -1.0, 1.0], "B": [-1.0, 1.0, -1.0], None: [0.0, 0.0, 0.0]}[winners[e]]
            assert rewards[e].tolist() == expected
            seen += 1
    assert seen > 0


def test_spaces_masks_and_bad_actions():
    vector = vector_parallel_env(FAKE_TEAMS, ["A 1", "B 2"], num_envs=3, backend="python")
    obs, infos = vector.reset(seed=0)
    assert vector.single_observation_space.shape == (2, len(vector.observation_names))
    assert obs in vector.observation_space
    assert vector.action_masks().shape == (3, 2, len(vector.action_names))
    assert infos["_action_mask"].all()
    with pytest.raises(ValueError, match=r"actions must have shape \(3, 2\), got \(3,\)"):
        vector.step(np.zeros(3, dtype=np.int64))
    with pytest.raises(ValueError, match=r"actions must be in 0\.\.2, got 7"):
        vector.step(np.full((3, 2), 7, dtype=np.int64))
    with pytest.raises(ValueError, match=r"agents: no member is named 'Z'"):
        vector_parallel_env(FAKE_TEAMS, ["A 1", "Z"])


def test_pickles_and_steps_on():
    vector = vector_parallel_env(FAKE_TEAMS, None, num_envs=4, backend="python")
    vector.reset(seed=9)
    copy = pickle.loads(pickle.dumps(vector))
    actions = np.ones((4, 4), dtype=np.int64)
    for _ in range(5):
        a, b = vector.step(actions), copy.step(actions)
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])


@pytest.mark.parametrize("agents", [["A 1", "A 2", "B 1"], ["B 2", "A 1"]], ids=["consecutive", "any order"])
def test_results_are_fresh_arrays(agents):
    """A later step does not overwrite what an earlier one returned, whichever members are agents."""
    vector = vector_parallel_env(FAKE_TEAMS, agents, num_envs=8, backend="python")
    obs, infos = vector.reset(seed=4)
    actions = np.ones((8, len(agents)), dtype=np.int64)
    results = [(obs, infos)]
    while "final_info" not in results[-1][-1]:
        results.append(vector.step(actions))
    kept = copy.deepcopy(results)
    ending = results[-1][4]
    returned = [obs, infos["action_mask"], results[1][0], results[1][4]["action_mask"],
                ending["final_info"]["action_mask"], *(o for o in ending["final_obs"] if o is not None)]
    for _ in range(10):
        vector.step(actions)
    assert_same(results, kept)
    for now in returned:
        assert not any(np.shares_memory(now, buffer) for buffer in vector._b.values())


def test_next_step_autoreset_plays_the_same_fights_a_step_later():
    """One env in NEXT_STEP mode against one in SAME_STEP: the step that ends a fight returns its last
    observation (SAME_STEP's final_obs) and outcome; the next step, whose actions are not played,
    returns the next fight's first observation with reward 0; then both play on alike."""
    agents = ["A 1", "B 2"]
    same = vector_parallel_env(FAKE_TEAMS, agents, num_envs=1, backend="python")
    nxt = vector_parallel_env(FAKE_TEAMS, agents, num_envs=1, backend="python", autoreset_mode="NextStep")
    assert_same(same.reset(seed=6), nxt.reset(seed=6))
    rng = np.random.default_rng(1)
    ends = 0
    for _ in range(40):
        actions = rng.integers(0, 3, size=(1, 2))
        obs, rewards, terminated, truncated, infos = same.step(actions)
        n_obs, n_rewards, n_terminated, n_truncated, n_infos = nxt.step(actions)
        assert_same((n_rewards, n_terminated, n_truncated), (rewards, terminated, truncated))
        if not (terminated | truncated)[0]:
            assert_same((n_obs, n_infos), (obs, infos))
            continue
        ends += 1
        final = infos["final_info"]
        np.testing.assert_array_equal(n_obs[0], infos["final_obs"][0])
        assert_same(n_infos, final)  # with one env, every key is present
        n_obs, n_rewards, n_terminated, n_truncated, n_infos = nxt.step(rng.integers(0, 3, size=(1, 2)))
        assert_same((n_obs, n_infos), (obs, {key: infos[key] for key in n_infos}))
        assert n_rewards.tolist() == [[0.0, 0.0]] and not (n_terminated | n_truncated).any()
    assert ends > 1
