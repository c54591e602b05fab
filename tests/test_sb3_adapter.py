"""combatsim.rl.sb3.vec_env: SB3's VecEnv protocol over one kernel vector env.

Checked without SB3 (the plain protocol class; with SB3 installed, its VecEnv subclass): env ``e``
must give exactly what SB3's DummyVecEnv over the single env seeded ``s + e`` gives, written out
here step by step (autoreset, terminal observations, the truncation flag, infos, reset infos).
"""

from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest

import combatsim.rl  # registers combatsim/Fight-v0
from combatsim.rl.fight_env import FightEnv
from combatsim.rl.sb3 import vec_env
from tests import fake_engine

FAKE_DUEL = fake_engine.game((0, 1), ("A", "B"), ("A", "B"), limit=3)


def assert_same(a, b, path="info") -> None:
    """Equal, type for type, array for array (dtype, shape, values), key for key."""
    assert type(a) is type(b), f"{path}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, dict):
        assert a.keys() == b.keys(), f"{path}: keys {sorted(a)} != {sorted(b)}"
        for key in a:
            assert_same(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, list):
        assert len(a) == len(b), f"{path}: {len(a)} items != {len(b)}"
        for k, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{path}[{k}]")
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, f"{path}: {a.dtype}{a.shape} != {b.dtype}{b.shape}"
        np.testing.assert_array_equal(a, b, err_msg=path)
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


class DummyVecEnvByHand:
    """What SB3's DummyVecEnv does with single envs, for comparison (SB3 need not be installed)."""

    def __init__(self, envs: list[FightEnv]) -> None:
        self.envs = envs
        self.reset_infos: list[dict] = [{} for _ in envs]

    def reset(self, seed: int) -> np.ndarray:
        observations = []
        for e, env in enumerate(self.envs):
            obs, self.reset_infos[e] = env.reset(seed=seed + e)
            observations.append(obs)
        return np.stack(observations)

    def step(self, actions: np.ndarray):
        observations, rewards, dones, infos = [], [], [], []
        for e, env in enumerate(self.envs):
            obs, reward, terminated, truncated, info = env.step(actions[e])
            info["TimeLimit.truncated"] = truncated and not terminated
            if terminated or truncated:
                info["terminal_observation"] = obs
                # what SB3's Monitor adds (the return is the last reward; "t" left out)
                info["episode"] = {"r": reward, "l": info["outcome"]["steps"]}
                obs, self.reset_infos[e] = env.reset()
            observations.append(obs)
            rewards.append(reward)
            dones.append(terminated or truncated)
            infos.append(info)
        return np.stack(observations), np.array(rewards, dtype=np.float32), np.array(dones), infos


@pytest.mark.parametrize(("scenario", "agent", "backend"), [
    (FAKE_DUEL, "B", "python"),
    ("d100_duel", "Guard", "python"),
    ("tss_alex_vs_thug", "Alex", "python"),
])
def test_env_e_is_dummy_vec_env_over_the_single_env_seeded_s_plus_e(scenario, agent, backend):
    envs, seed = 5, 21
    adapter = vec_env(scenario, agent, num_envs=envs, backend=backend)
    by_hand = DummyVecEnvByHand([FightEnv(scenario, agent, backend=backend) for _ in range(envs)])
    assert adapter.seed(seed) == [seed + e for e in range(envs)]
    obs = adapter.reset()
    assert_same(obs, by_hand.reset(seed))
    assert_same(adapter.reset_infos, by_hand.reset_infos, "reset_infos")
    rng = np.random.default_rng(3)
    ends = truncations = 0
    for _ in range(60):
        masks = np.stack(adapter.env_method("action_masks"))
        assert_same(masks, adapter.action_masks(), "masks")
        assert_same(masks, np.stack([env.action_masks() for env in by_hand.envs]), "masks")
        actions = (rng.random(masks.shape) * masks).argmax(axis=1).astype(np.int64)
        obs, rewards, dones, infos = adapter.step(actions)
        expected = by_hand.step(actions)
        assert_same(obs, expected[0], "obs")
        assert_same(rewards, expected[1], "rewards")
        assert_same(dones, expected[2], "dones")
        assert_same(infos, expected[3], "infos")
        assert_same(adapter.reset_infos, by_hand.reset_infos, "reset_infos")
        ends += int(dones.sum())
        truncations += sum(info["TimeLimit.truncated"] for info in infos)
        for info in infos:
            if "terminal_observation" in info:
                assert {"outcome", "episode"} <= info.keys() and info["episode"]["l"] == info["outcome"]["steps"]
    assert ends > 0
    if scenario is FAKE_DUEL:
        assert truncations > 0  # the coin-flip fights reach their 3-step limit


def test_reset_without_seed_plays_each_envs_next_fight():
    adapter = vec_env(FAKE_DUEL, "A", num_envs=3, backend="python")
    adapter.seed(4)
    first = adapter.reset()
    again = adapter.reset()
    single = FightEnv(FAKE_DUEL, "A", backend="python")
    for e in range(3):
        np.testing.assert_array_equal(first[e], single.reset(seed=4 + e)[0])
        np.testing.assert_array_equal(again[e], single.reset()[0])


def test_protocol_answers():
    adapter = vec_env(FAKE_DUEL, "A", num_envs=4, backend="python")
    size = len(FAKE_DUEL.observation_names)
    assert adapter.num_envs == 4 and adapter.observation_space == gym.spaces.Box(0, 1, (size,), np.float32)
    assert adapter.action_space == gym.spaces.Discrete(3)
    assert adapter.get_attr("render_mode") == [None] * 4
    assert adapter.get_attr("action_names", indices=[1, 3]) == [FAKE_DUEL.action_names] * 2
    assert len(adapter.get_attr("action_masks")) == 4  # MaskablePPO's is_masking_supported
    with pytest.raises(AttributeError):
        adapter.get_attr("no_such_attribute")
    assert adapter.env_is_wrapped(gym.Wrapper) == [False] * 4
    adapter.seed(0)
    adapter.reset()
    rows = adapter.env_method("action_masks", indices=[2])
    assert len(rows) == 1 and rows[0].dtype == np.bool_ and rows[0].shape == (3,)
    with pytest.raises(ValueError, match="indices: the envs share one vector env"):
        adapter.set_attr("agent", "B", indices=[0])


def test_adapter_takes_only_a_same_step_vector_env():
    from combatsim.rl.fight_vector import FightVectorEnv
    from combatsim.rl.sb3 import KernelVecEnv

    vector = FightVectorEnv(2, scenario=FAKE_DUEL, agent="A", backend="python", autoreset_mode="NextStep")
    with pytest.raises(ValueError, match="autoreset_mode must be SAME_STEP for SB3, got AutoresetMode.NEXT_STEP"):
        KernelVecEnv(vector)


@pytest.mark.parametrize(("actions", "error", "message"), [
    (np.zeros(3, dtype=np.int64), ValueError, r"actions must have shape \(4,\), got \(3,\)"),
    (np.full(4, 3, dtype=np.int64), ValueError, r"actions must be in 0\.\.2, got 3"),
    (np.zeros(4, dtype=np.float32), TypeError, r"actions must be integers in 0\.\.2, got dtype float32"),
])
def test_bad_actions_are_one_line_errors_before_the_kernel(actions, error, message):
    adapter = vec_env(FAKE_DUEL, "A", num_envs=4, backend="python")
    adapter.reset()
    with pytest.raises(error, match=message):
        adapter.step(actions)


# ---- envs travel to other processes (SubprocVecEnv, AsyncVectorEnv) ----
def test_vec_env_pickles_with_the_standard_library_and_steps_on_alike():
    env = vec_env("d100_duel", "Veteran", num_envs=4, backend="python")
    env.seed(3)
    env.reset()
    copy = pickle.loads(pickle.dumps(env))
    assert type(copy) is type(env)  # SB3's VecEnv subclass where SB3 is installed, else the protocol class
    actions = np.ones(4, dtype=np.int64)
    for _ in range(12):
        a, b = env.step(actions), copy.step(actions)
        for x, y in zip(a[:3], b[:3], strict=True):
            np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("make", [
    lambda: FightEnv("d100_duel", "Veteran", backend="python"),
    lambda: combatsim.rl.parallel_env("d100_duel", backend="python"),
])
def test_single_envs_pickle_and_step_on_alike(make):
    env = make()
    env.reset(seed=12)
    copy = pickle.loads(pickle.dumps(env))
    for _ in range(8):
        if isinstance(env, FightEnv):
            a, b = env.step(1), copy.step(1)
            if a[2] or a[3]:
                assert a[4]["outcome"] == b[4]["outcome"]
                a, b = env.reset(), copy.reset()
        else:
            actions = dict.fromkeys(env.agents, 1)
            a, b = env.step(actions), copy.step(dict(actions))
            if not env.agents:
                a, b = env.reset(), copy.reset()
        a_obs, b_obs = a[0], b[0]
        if isinstance(a_obs, dict):
            a_obs, b_obs = np.stack(list(a_obs.values())), np.stack(list(b_obs.values()))
        np.testing.assert_array_equal(a_obs, b_obs)


def test_async_vector_env_with_two_envs_is_the_single_envs():
    # a spawned process starts bare: "combatsim.rl:" imports the package that registers the id
    fns = [lambda: gym.make("combatsim.rl:combatsim/Fight-v0", scenario="d100_duel", agent="Guard",
                            backend="python")] * 2
    env = gym.vector.AsyncVectorEnv(fns, context="spawn")
    try:
        obs, infos = env.reset(seed=30)
        singles = [FightEnv("d100_duel", "Guard", backend="python") for _ in range(2)]
        expected = [single.reset(seed=30 + e) for e, single in enumerate(singles)]
        for step in range(4):
            for e in range(2):
                np.testing.assert_array_equal(obs[e], expected[e][0], err_msg=f"step {step}, env {e}")
                np.testing.assert_array_equal(infos["action_mask"][e], expected[e][1]["action_mask"])
            obs, _, terminated, truncated, infos = env.step(np.array([1, 3]))
            expected = [single.step(action)[::4] for single, action in zip(singles, (1, 3), strict=True)]
            if (terminated | truncated).any():
                break
    finally:
        env.close()


# ---- a trained policy's weights play fights (examples/mlp_policy.py: NumPy alone) ----
def load_mlp_policy_module():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "examples" / "mlp_policy.py"
    spec = importlib.util.spec_from_file_location("mlp_policy", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_saved_policy_plays_legal_actions_and_bad_files_are_one_line_errors(tmp_path):
    from combatsim.game import scenario_game
    from combatsim.policies import play_fights

    module = load_mlp_policy_module()
    game = scenario_game("d100_duel")
    obs_size, actions = len(game.observation_names), len(game.action_names)
    rng = np.random.default_rng(0)
    weights = {"w0": rng.normal(size=(8, obs_size)), "b0": np.zeros(8), "w1": rng.normal(size=(actions, 8)),
               "b1": np.zeros(actions)}
    np.savez(tmp_path / "p.npz", **weights)
    policy = module.MlpPolicy(tmp_path / "p.npz")
    masks = (rng.random((50, actions)) < 0.5).astype(np.int8)
    masks[:, 0] = 1
    chosen = policy(rng.random((50, obs_size), dtype=np.float32), masks)
    assert chosen.dtype == np.int64 and masks[np.arange(50), chosen].all()
    results = play_fights(game, 200, 3, {"Guard": policy}, backend="python")
    assert sum(results.wins) + results.draws + results.unfinished == 200
    (tmp_path / "bad.npz").write_text("not an npz")
    with pytest.raises(ValueError, match=r"policy file .*bad\.npz does not load"):
        module.MlpPolicy(tmp_path / "bad.npz")
    with pytest.raises(ValueError, match=rf"takes observations of shape \(N, {obs_size}\), got \(3, 4\)"):
        policy(np.zeros((3, 4), dtype=np.float32), masks[:3])
    with pytest.raises(ValueError, match=rf"gives {actions} actions, the scenario has 3"):
        policy(np.zeros((3, obs_size), dtype=np.float32), masks[:3, :3])
