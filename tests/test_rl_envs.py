"""RL environments: Gymnasium and PettingZoo API checks, vector == single trajectories, registration."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")
pytest.importorskip("pettingzoo")

from gymnasium.utils.env_checker import check_env  # noqa: E402
from gymnasium.vector import AutoresetMode  # noqa: E402
from pettingzoo.test import parallel_api_test, parallel_seed_test  # noqa: E402

import combatsim.rl as rl  # noqa: E402

RULESETS = ("exp", "d100", "tss")
RL_BACKENDS = ("python", "numba", "cython")


@pytest.fixture(params=RULESETS)
def ruleset(request) -> str:
    return request.param


@pytest.fixture(params=RL_BACKENDS)
def rl_backend(request) -> str:
    return request.param


def test_ids_registered_on_import():
    for ruleset, env_id in rl.ENV_IDS.items():
        spec = gym.spec(env_id)
        assert spec.vector_entry_point is not None
        env = gym.make(env_id)
        assert env.unwrapped.ruleset.name == ruleset
    assert set(rl.ENV_IDS.values()) == {"combatsim/D100Duel-v0", "combatsim/ExpDuel-v0", "combatsim/TssDuel-v0"}


def test_check_env(ruleset, rl_backend):
    env = gym.make(rl.ENV_IDS[ruleset], backend=rl_backend).unwrapped
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the checker warns about anything it dislikes
        check_env(env, skip_render_check=True)


def test_parallel_api_and_seed(ruleset, rl_backend):
    parallel_api_test(rl.parallel_env(ruleset, backend=rl_backend), num_cycles=100)
    parallel_seed_test(lambda: rl.parallel_env(ruleset, backend=rl_backend), num_cycles=100)


def test_make_vec_is_kernel_backed_and_declares_autoreset(ruleset):
    env = gym.make_vec(rl.ENV_IDS[ruleset], num_envs=5, vectorization_mode="vector_entry_point")
    assert isinstance(env, rl.DuelVectorEnv)
    assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    obs, info = env.reset(seed=1)
    assert obs.shape == (5, env.ruleset.obs_size) and obs.dtype == np.float32
    assert info["action_mask"].shape == (5, env.ruleset.n_actions)
    assert env.observation_space.contains(obs)


def _policy_actions(rng: np.random.Generator, mask: np.ndarray) -> np.ndarray:
    """Uniform legal actions (and now and then an illegal one, which must do nothing)."""
    n = mask.shape[0]
    actions = np.empty(n, dtype=np.int64)
    for e in range(n):
        legal = np.flatnonzero(mask[e])
        actions[e] = rng.integers(mask.shape[1]) if rng.random() < 0.1 else rng.choice(legal)
    return actions


@pytest.mark.parametrize("opponent", ["scripted", "random"])
def test_vector_trajectories_equal_single_envs(ruleset, opponent):
    """Env e of a vector env seeded s == a single env seeded s + e, step by step, across autoresets."""
    n, steps, seed = 4, 150, 1000
    vector = gym.make_vec(rl.ENV_IDS[ruleset], num_envs=n, vectorization_mode="vector_entry_point",
                          opponent=opponent, max_steps=40)
    singles = [gym.make(rl.ENV_IDS[ruleset], opponent=opponent, max_steps=40).unwrapped for _ in range(n)]
    vobs, vinfo = vector.reset(seed=seed)
    sobs = []
    smask = []
    for e, env in enumerate(singles):
        o, i = env.reset(seed=seed + e)
        sobs.append(o)
        smask.append(i["action_mask"])
    np.testing.assert_array_equal(vobs, np.array(sobs))
    rng = np.random.default_rng(0)
    pending = [False] * n
    episodes_ended = 0
    for _ in range(steps):
        actions = _policy_actions(rng, vinfo["action_mask"])
        vobs, vrew, vterm, vtrunc, vinfo = vector.step(actions)
        for e, env in enumerate(singles):
            if pending[e]:  # NEXT_STEP autoreset: the single env resets where the vector env did
                o, i = env.reset()
                r, te, tr = 0.0, False, False
                pending[e] = False
            else:
                o, r, te, tr, i = env.step(actions[e])
            np.testing.assert_array_equal(vobs[e], o)
            np.testing.assert_array_equal(vinfo["action_mask"][e], i["action_mask"])
            assert (vrew[e], vterm[e], vtrunc[e]) == (np.float32(r), te, tr)
            if te or tr:
                pending[e] = True
                episodes_ended += 1
    assert episodes_ended >= n  # the comparison crossed autoresets


def assert_traces_equal(traces) -> None:
    """Every trace (observations, rewards, flags, masks, step by step) equals the first."""
    for other in traces[1:]:
        for a, b in zip(traces[0], other, strict=True):
            np.testing.assert_array_equal(a, b)


def test_vector_backends_and_threads_agree(ruleset, monkeypatch):
    import combatsim.rl.vector as vector

    # Split even 7 envs across the threads (normally only batches of 2 x 4096+ envs are split).
    monkeypatch.setattr(vector, "MIN_ENVS_PER_THREAD", 1)
    results = []
    for backend, threads in (("python", 1), ("numba", 1), ("numba", 3), ("cython", 1), ("cython", 2)):
        cls = {"exp": rl.ExpDuelVectorEnv, "d100": rl.D100DuelVectorEnv, "tss": rl.TssDuelVectorEnv}[ruleset]
        env = cls(7, backend=backend, threads=threads, opponent="random", max_steps=30)
        obs, info = env.reset(seed=5)
        trace = [obs]
        for t in range(60):
            obs, rew, term, trunc, info = env.step(np.full(7, t % env.ruleset.n_actions))
            trace += [obs, rew, term, trunc, info["action_mask"]]
        env.close()
        results.append(trace)
    assert_traces_equal(results)


def test_threads_split_only_batches_big_enough(monkeypatch):
    import combatsim.rl.vector as vector

    env = rl.D100DuelVectorEnv(1024, backend="cython", threads=2)
    assert env._ranges == [(0, 1024)] and env._pool is None  # 1024 envs: one thread is faster
    monkeypatch.setattr(vector, "MIN_ENVS_PER_THREAD", 256)
    env = rl.D100DuelVectorEnv(1024, backend="cython", threads=2)
    assert env._ranges == [(0, 512), (512, 1024)]
    env.close()
    env = rl.D100DuelVectorEnv(1024, backend="cython", threads=8)
    assert len(env._ranges) == 4  # at least MIN_ENVS_PER_THREAD envs each
    env.close()


@pytest.mark.parametrize("backend", ["numba", "cython"])
def test_vector_threads_agree_on_a_large_batch(backend, monkeypatch):
    import combatsim.rl.vector as vector

    monkeypatch.setattr(vector, "MIN_ENVS_PER_THREAD", 300)
    traces = []
    for threads in (1, 2, 3):
        env = rl.D100DuelVectorEnv(1000, backend=backend, threads=threads, opponent="random", max_steps=20,
                                   copy=True)
        assert len(env._ranges) == threads
        obs, _ = env.reset(seed=11)
        trace = [obs]
        rng = np.random.default_rng(3)
        for _ in range(50):
            obs, rew, term, trunc, info = env.step(rng.integers(0, 8, size=1000))
            trace += [obs, rew, term, trunc, info["action_mask"]]
        env.close()
        traces.append(trace)
    assert_traces_equal(traces)


@pytest.mark.parametrize("backend", RL_BACKENDS)
def test_vector_copy_true_returns_fresh_arrays_and_copy_false_views(backend):
    n = 16
    env = rl.TssDuelVectorEnv(n, backend=backend, copy=True)
    obs, info = env.reset(seed=3)
    first = env.step(np.zeros(n, dtype=np.int64))
    saved = [first[0].copy(), first[1].copy(), first[2].copy(), first[3].copy(), first[4]["action_mask"].copy()]
    for _ in range(5):
        second = env.step(np.zeros(n, dtype=np.int64))
    returned = [first[0], first[1], first[2], first[3], first[4]["action_mask"]]
    for kept, now in zip(saved, returned, strict=True):
        np.testing.assert_array_equal(kept, now)  # later steps did not overwrite earlier results
    for array in [*returned, obs, info["action_mask"]]:
        for buffer in (env._b.obs, env._b.reward, env._b.terminated, env._b.truncated, env._b.mask):
            assert not np.shares_memory(array, buffer)
    assert not np.array_equal(saved[0], second[0])  # the episode moved on
    assert first[2].dtype == np.bool_ and first[4]["action_mask"].dtype == np.int8

    view_env = rl.TssDuelVectorEnv(n, backend=backend, copy=False)
    obs, info = view_env.reset(seed=3)
    a = view_env.step(np.zeros(n, dtype=np.int64))
    b = view_env.step(np.zeros(n, dtype=np.int64))
    assert all(x is y for x, y in zip(a[:4], b[:4], strict=True))  # the same views every step
    assert np.shares_memory(b[0], view_env._b.obs) and b[0].shape == (n, view_env.ruleset.obs_size)


def test_callable_opponent_matches_scripted(ruleset):
    """A callable that plays the scripted policy's first choice reproduces the scripted opponent
    for the rulesets whose scripted policy is 'the first legal of a fixed order'."""
    scripted = gym.make(rl.ENV_IDS[ruleset], opponent="scripted").unwrapped
    calls = []

    def opponent(obs, mask):
        calls.append(mask.copy())
        return {"exp": int(np.flatnonzero(mask)[0]), "d100": 0 if mask[0] else 4, "tss": 0 if mask[0] else 3}[ruleset]

    custom = gym.make(rl.ENV_IDS[ruleset], opponent=opponent).unwrapped
    _a, _ = scripted.reset(seed=9)
    _b, _ = custom.reset(seed=9)
    for _ in range(50):
        ra = scripted.step(0)
        rb = custom.step(0)
        np.testing.assert_array_equal(ra[0], rb[0])
        assert ra[1:4] == rb[1:4]
        if ra[2] or ra[3]:
            break
    assert calls


def test_reset_without_seed_continues_the_seed_and_reseeding_repeats():
    env = rl.D100DuelEnv(opponent="random")
    first, _ = env.reset(seed=3)
    trace = [env.step(0)[0] for _ in range(5)]
    env.reset()  # episode 1 of seed 3
    assert env._b.state[0, 0] == 1
    again, _ = env.reset(seed=3)
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(np.array(trace), np.array([env.step(0)[0] for _ in range(5)]))


def test_vector_reset_mask_and_seed_list():
    env = rl.ExpDuelVectorEnv(3)
    env.reset(seed=[5, 6, 7])
    assert list(env._b.seeds) == [5, 6, 7]
    for _ in range(3):
        env.step(np.zeros(3, dtype=np.int64))
    env.reset(options={"reset_mask": np.array([True, False, False])})
    assert env._b.state[0, 1] == 0 and env._b.state[1, 1] == 3
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=[1, 2])


def test_rollout_scripted_beats_random(ruleset):
    env = {"exp": rl.ExpDuelVectorEnv, "d100": rl.D100DuelVectorEnv, "tss": rl.TssDuelVectorEnv}[ruleset](
        64, opponent="random")
    env.reset(seed=0)
    totals = env.rollout(400, agent="scripted")
    assert totals[3] == 64 * 400
    assert totals[0] > 2 * totals[1]


def test_parallel_env_self_play_is_zero_sum(ruleset):
    env = rl.parallel_env(ruleset)
    env.reset(seed=2)
    total = 0.0
    while env.agents:
        _, rewards, _, _, _ = env.step({agent: 0 for agent in env.agents})
        assert rewards["side_0"] == -rewards["side_1"]
        total += rewards["side_0"]
    with pytest.raises(RuntimeError, match="reset"):
        env.step({"side_0": 0, "side_1": 0})
    assert env.state().shape == (2 * env.ruleset.obs_size,)


def test_simulate_duels_streams_identically_and_matches_the_env(ruleset):
    """Duel k of simulate_duels is episode k of an env seeded alike, for any threads/chunks/backend."""
    results = [
        rl.simulate_duels(ruleset, 40, seed=11, backend=backend, threads=threads, chunk_size=chunk, outcomes=True, max_steps=60)
        for backend, threads, chunk in (("python", 1, None), ("numba", 2, 7), ("cython", 3, 5))
    ]
    for other in results[1:]:
        np.testing.assert_array_equal(results[0].outcomes, other.outcomes)
        assert (other.side_0_wins, other.side_1_wins, other.steps) == (
            results[0].side_0_wins, results[0].side_1_wins, results[0].steps)
    env = {"exp": rl.ExpDuelVectorEnv, "d100": rl.D100DuelVectorEnv, "tss": rl.TssDuelVectorEnv}[ruleset](
        1, opponent="random", max_steps=60)
    env.reset(seed=11)
    outcomes = []
    steps = 0
    while len(outcomes) < 5:
        env.rollout(1, agent="scripted")
        steps += 1
        if env._b.terminated[0] or env._b.truncated[0]:
            reward = env._b.reward[0]
            outcomes.append(1 if reward[0] > 0.5 else (-1 if reward[1] > 0.5 else 0))
            env.rollout(1, agent="scripted")  # the autoreset step
    assert outcomes == results[0].outcomes[:5].tolist()
    with pytest.raises(ValueError, match="agent"):
        rl.simulate_duels(ruleset, 1, agent="smart")
