"""Gymnasium's own wrappers and habits on every combatsim env: RecordEpisodeStatistics (single and
vector, every autoreset mode), the NEXT_STEP default with the normalizing wrappers stacked on it,
the plain id in processes that did not import combatsim, the rl extra's install hint, and a
CleanRL-style PPO loop that knows nothing of combatsim but ``import combatsim.rl`` and an id.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import combatsim.rl
from combatsim.rl import ENV_IDS, FightVectorEnv

IDS = sorted(ENV_IDS.values())
MODES = list(AutoresetMode)


def legal(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    """A uniformly drawn legal action per row of ``masks``."""
    return (rng.random(masks.shape) * masks).argmax(axis=-1).astype(np.int64)


@pytest.mark.parametrize("env_id", IDS)
def test_record_episode_statistics_wraps_every_single_env(env_id):
    env = gym.wrappers.RecordEpisodeStatistics(gym.make(env_id, backend="python"))
    rng = np.random.default_rng(1)
    _, info = env.reset(seed=3)
    episodes, total = 0, 0.0
    while episodes < 5:
        _obs, reward, terminated, truncated, info = env.step(int(legal(rng, info["action_mask"][None])[0]))
        total += reward
        if terminated or truncated:
            assert info["episode"]["r"] == total == reward  # every step before the end gives 0
            assert info["episode"]["l"] == info["outcome"]["steps"]
            episodes, total = episodes + 1, 0.0
            _obs, info = env.reset()
    assert len(env.return_queue) == 5


@pytest.mark.parametrize("mode", MODES, ids=[m.value for m in MODES])
@pytest.mark.parametrize("env_id", IDS)
def test_vector_record_episode_statistics_in_every_autoreset_mode(env_id, mode):
    envs = 6
    venv = gym.wrappers.vector.RecordEpisodeStatistics(
        gym.make_vec(env_id, num_envs=envs, vectorization_mode="vector_entry_point", autoreset_mode=mode,
                     backend="python"))
    rng = np.random.default_rng(2)
    _, info = venv.reset(seed=5)
    ended = 0
    for _ in range(40):
        _obs, rewards, terminated, truncated, info = venv.step(legal(rng, info["action_mask"]))
        done = terminated | truncated
        if done.any():
            assert info["_episode"].tolist() == done.tolist()
            # a fight's return is its last reward, and its length the steps it took
            np.testing.assert_array_equal(info["episode"]["r"][done], rewards[done])
            outcome = info["final_info"]["outcome"] if mode is AutoresetMode.SAME_STEP else info["outcome"]
            np.testing.assert_array_equal(info["episode"]["l"][done], outcome["steps"][done])
            ended += int(done.sum())
            if mode is AutoresetMode.DISABLED:
                _obs, info = venv.reset(options={"reset_mask": done})
    assert ended > 0 and venv.episode_count == ended


def test_the_vector_env_defaults_to_next_step_and_the_sb3_adapter_keeps_same_step():
    venv = gym.make_vec("combatsim/D100Duel-v0", num_envs=2, vectorization_mode="vector_entry_point")
    assert venv.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    assert FightVectorEnv(2, scenario="d100_duel", agent="Guard").autoreset_mode is AutoresetMode.NEXT_STEP
    from combatsim.rl.sb3 import vec_env

    assert vec_env("d100_duel", "Guard", num_envs=2).venv.autoreset_mode is AutoresetMode.SAME_STEP


@pytest.mark.parametrize("env_id", IDS)
def test_normalizing_wrappers_stack_on_the_default_vector_env(env_id):
    venv = gym.make_vec(env_id, num_envs=4, vectorization_mode="vector_entry_point", backend="python")
    venv = gym.wrappers.vector.RecordEpisodeStatistics(venv)
    venv = gym.wrappers.vector.NormalizeObservation(venv)
    venv = gym.wrappers.vector.NormalizeReward(venv)
    venv = gym.wrappers.vector.ClipReward(venv, -5.0, 5.0)
    rng = np.random.default_rng(4)
    obs, info = venv.reset(seed=0)
    for _ in range(30):
        obs, rewards, _terminated, _truncated, info = venv.step(legal(rng, info["action_mask"]))
        assert np.isfinite(obs).all() and np.isfinite(rewards).all() and (np.abs(rewards) <= 5.0).all()
    assert venv.episode_count > 0 if hasattr(venv, "episode_count") else True


def test_the_single_env_wrappers_stack_too():
    env = gym.make("combatsim/TssDuel-v0", backend="python")
    env = gym.wrappers.RecordEpisodeStatistics(env)
    env = gym.wrappers.NormalizeObservation(env)
    env = gym.wrappers.NormalizeReward(env)
    env = gym.wrappers.ClipReward(env, -5.0, 5.0)
    _, info = env.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(50):
        _obs, _reward, terminated, truncated, info = env.step(int(legal(rng, info["action_mask"][None])[0]))
        if terminated or truncated:
            assert "episode" in info
            _obs, info = env.reset()


def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=240, env={**os.environ, **env})


def run_script(directory, text: str, *args: str) -> str:
    """Runs ``text`` as a script file in ``directory`` (as a user's script runs: spawned processes
    import its top level); its stdout, after checking that it exited 0."""
    script = directory / "script.py"
    script.write_text(text)
    result = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=600,
                            cwd=directory)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


@pytest.mark.parametrize("start_method", ["forkserver", "fork"])
def test_the_plain_id_works_in_subprocesses_when_the_script_imports_combatsim_late(start_method):
    # The script imports combatsim.rl inside a function: the forkserver imports only the
    # script's top level, yet its processes know the plain id.
    result = run_python(f"""
        import multiprocessing
        import numpy as np
        import gymnasium as gym

        def main():
            import combatsim.rl  # noqa: F401
            venv = gym.vector.AsyncVectorEnv(
                [lambda: gym.make("combatsim/D100Duel-v0", backend="python") for _ in range(2)],
                context="{start_method}")
            obs, info = venv.reset(seed=0)
            obs, *_ = venv.step(np.ones(2, dtype=np.int64))
            venv.close()
            print("ok", obs.shape)

        if __name__ == "__main__":
            main()
        """)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "ok (2, 38)" in result.stdout


SPAWNED_EPISODE = """
import json
import multiprocessing
import sys

import gymnasium as gym
import numpy as np


def make():
    if multiprocessing.parent_process() is not None:  # in a spawned process: nothing imported combatsim.rl
        assert "combatsim.rl" not in sys.modules, "combatsim.rl was imported before gym.make"
    return gym.make("combatsim/D100Duel-v0", backend="python")


def first_legal(masks):
    # the first legal action past "do nothing", else 0: the same rule the test replays
    return np.array([int(np.flatnonzero(row[1:])[0]) + 1 if row[1:].any() else 0 for row in masks])


def main():
    if sys.argv[1] == "late":
        import combatsim.rl  # noqa: F401  (inside main: the spawned processes never run this)
    venv = gym.vector.AsyncVectorEnv([make, make], context="spawn")
    obs, infos = venv.reset(seed=5)
    rewards, observations = [], [obs[0].tolist()]
    while True:
        obs, reward, terminated, truncated, infos = venv.step(first_legal(infos["action_mask"]))
        rewards.append(float(reward[0]))
        if terminated[0] or truncated[0]:
            break
        observations.append(obs[0].tolist())
    venv.close()
    print(json.dumps([rewards, observations]))


if __name__ == "__main__":
    main()
"""


@pytest.mark.parametrize("how", ["late", "never"])
def test_the_plain_id_works_in_spawned_processes_however_the_script_imports(tmp_path, how):
    # spawn (the default on macOS and Windows) starts fresh interpreters that import the script's
    # top level and gymnasium, never the late import: the installed .pth registers the ids there
    rewards, observations = json.loads(run_script(tmp_path, SPAWNED_EPISODE, how).strip().splitlines()[-1])
    env = gym.make("combatsim/D100Duel-v0", backend="python")  # env 0 of the vector: seed 5, the same actions
    obs, info = env.reset(seed=5)
    expected_rewards, expected = [], [obs.tolist()]
    while True:
        action = np.flatnonzero(info["action_mask"][1:])
        obs, reward, terminated, truncated, info = env.step(int(action[0]) + 1 if len(action) else 0)
        expected_rewards.append(float(reward))
        if terminated or truncated:
            break
        expected.append(obs.tolist())
    assert rewards == expected_rewards
    np.testing.assert_array_equal(np.array(observations), np.array(expected))


def test_gymnasium_knows_the_ids_without_importing_combatsim():
    # the .pth line adds a finder at startup; the ids are registered when gymnasium is imported,
    # by their entry points' names: nothing of combatsim (or NumPy) is imported until an env is made
    result = run_python("""
        import json
        import sys
        at_startup = sorted(m for m in sys.modules if m.split(".")[0] in ("combatsim", "_combatsim_gym", "numpy"))
        import gymnasium as gym
        from gymnasium.envs import registration
        print(json.dumps({"at startup": at_startup,
                          "after gymnasium": sorted(m for m in sys.modules if m.startswith("combatsim")),
                          "ids": sorted(i for i in gym.registry if i.startswith("combatsim/")),
                          "entry point": gym.spec("combatsim/D100Duel-v0").entry_point,
                          "loaders": [type(registration.__loader__).__name__,
                                      type(registration.__spec__.loader).__name__]}))
        """)
    assert result.returncode == 0, result.stderr[-2000:]
    found = json.loads(result.stdout)
    assert found["at startup"], "no _combatsim_gym.pth ran: reinstall combatsim (pip install -e .) to install it"
    assert found == {
        "at startup": ["_combatsim_gym"], "after gymnasium": [],
        "ids": sorted([combatsim.rl.FIGHT_ENV_ID, *ENV_IDS.values()]),
        "entry point": "combatsim.rl.fight_env:FightEnv",
        "loaders": ["SourceFileLoader", "SourceFileLoader"],  # the hook's loader leaves no trace
    }


def test_import_without_gymnasium_names_the_extra():
    result = run_python("""
        import sys
        sys.modules["gymnasium"] = None  # as if the rl extra were not installed
        import combatsim.rl
        """)
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("ModuleNotFoundError: combatsim.rl needs the rl extra (gymnasium is not installed)")
    assert 'pip install ".[rl]" in the clone of combatsim' in last and '"gymnasium>=1.0"' in last


# --- a CleanRL-style PPO loop: Gymnasium's vector API and wrappers, nothing of combatsim but the id ---


CLEANRL_PPO = """
import sys

import gymnasium as gym
import numpy as np

import combatsim.rl  # noqa: F401  (registers the ids)

env_id, num_envs, num_steps, iterations = sys.argv[1], 8, 16, 3
rng = np.random.default_rng(1)


def make_env():
    def thunk():
        env = gym.make(env_id)
        env = gym.wrappers.RecordEpisodeStatistics(env)
        env = gym.wrappers.NormalizeObservation(env)
        env = gym.wrappers.NormalizeReward(env, gamma=0.99)
        return env
    return thunk


def softmax(logits):
    z = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


for envs in (gym.vector.SyncVectorEnv([make_env() for _ in range(num_envs)]),
             gym.wrappers.vector.NormalizeObservation(gym.wrappers.vector.RecordEpisodeStatistics(
                 gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point")))):
    obs_size, actions = envs.single_observation_space.shape[0], envs.single_action_space.n
    actor = np.zeros((obs_size, actions))   # a linear actor and critic, as small as CleanRL's MLPs are not
    critic = np.zeros(obs_size)
    obs_buf = np.zeros((num_steps, num_envs, obs_size))
    act_buf = np.zeros((num_steps, num_envs), dtype=np.int64)
    logp_buf = np.zeros((num_steps, num_envs))
    rew_buf = np.zeros((num_steps, num_envs))
    done_buf = np.zeros((num_steps, num_envs))
    val_buf = np.zeros((num_steps, num_envs))
    next_obs, _ = envs.reset(seed=1)
    next_done = np.zeros(num_envs)
    returns_seen = []
    for iteration in range(iterations):
        for step in range(num_steps):
            obs_buf[step], done_buf[step] = next_obs, next_done
            probs = softmax(next_obs @ actor)
            action = (probs.cumsum(axis=1) > rng.random((num_envs, 1))).argmax(axis=1)
            val_buf[step] = next_obs @ critic
            act_buf[step], logp_buf[step] = action, np.log(probs[np.arange(num_envs), action])
            next_obs, reward, terminations, truncations, infos = envs.step(action)
            next_done = np.logical_or(terminations, truncations).astype(np.float64)
            rew_buf[step] = reward
            if "episode" in infos:
                returns_seen.extend(infos["episode"]["r"][infos["_episode"]].tolist())
        next_value = next_obs @ critic
        advantages = np.zeros_like(rew_buf)
        last = 0.0
        for t in reversed(range(num_steps)):
            not_done = 1.0 - (next_done if t == num_steps - 1 else done_buf[t + 1])
            following = next_value if t == num_steps - 1 else val_buf[t + 1]
            delta = rew_buf[t] + 0.99 * following * not_done - val_buf[t]
            advantages[t] = last = delta + 0.99 * 0.95 * not_done * last
        returns = (advantages + val_buf).reshape(-1)
        flat_obs, flat_act = obs_buf.reshape(-1, obs_size), act_buf.reshape(-1)
        adv = advantages.reshape(-1)
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        for epoch in range(2):  # the clipped surrogate's gradient, by hand for a linear softmax
            probs = softmax(flat_obs @ actor)
            ratio = np.exp(np.log(probs[np.arange(len(flat_act)), flat_act]) - logp_buf.reshape(-1))
            active = np.where(adv > 0, ratio < 1.2, ratio > 0.8) * ratio * adv
            onehot = np.eye(actions)[flat_act]
            actor += 2.5e-3 * flat_obs.T @ (active[:, None] * (onehot - probs)) / len(adv)
            critic += 2.5e-3 * flat_obs.T @ (returns - flat_obs @ critic) / len(adv)
        assert np.isfinite(actor).all() and np.isfinite(critic).all()
    envs.close()
    assert returns_seen and all(abs(r) <= 1.0 for r in returns_seen), returns_seen[:5]
    print(type(envs).__name__, "episodes", len(returns_seen))
"""


@pytest.mark.parametrize("env_id", IDS)
def test_a_cleanrl_style_ppo_loop_runs_on_each_example(env_id, tmp_path):
    out = run_script(tmp_path, CLEANRL_PPO, env_id)
    assert "SyncVectorEnv episodes" in out and "NormalizeObservation episodes" in out


def test_the_env_ids_register_once():
    assert combatsim.rl.FIGHT_ENV_ID in gym.registry


def test_a_registration_that_fails_warns_and_leaves_gymnasiums_import_alone():
    import importlib.machinery
    import types

    import _combatsim_gym

    class Loader:
        def create_module(self, spec):
            return None

        def exec_module(self, module):
            module.ran = True

    module = types.ModuleType("registration_without_a_registry")
    module.__spec__ = importlib.machinery.ModuleSpec(module.__name__, None)
    with pytest.warns(RuntimeWarning, match=r"could not register its Gymnasium ids \(AttributeError.*import combatsim.rl"):
        _combatsim_gym._RegisteringLoader(Loader()).exec_module(module)
    assert module.ran and isinstance(module.__loader__, Loader)
