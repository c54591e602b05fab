"""The scenario environments: combatsim/Fight-v0 (single and vector) and the PettingZoo parallel env.

Every example scenario with every member as the agent, on each ruleset's engine, plus a small
coin-flip engine (tests/fake_engine.py) that exercises teams, flight and masks. An env episode is
checked against the fight the engine plays for the same seed and index (combatsim.policies).
"""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from pettingzoo.test import parallel_api_test, parallel_seed_test

import combatsim.rl  # registers combatsim/Fight-v0
from combatsim.engine import DRAW, UNFINISHED
from combatsim.game import scenario_game
from combatsim.policies import play_fights
from combatsim.rl.fight_env import FightEnv
from combatsim.rl.fight_parallel import parallel_env
from combatsim.rl.fight_vector import FightVectorEnv
from combatsim.scenario import example_names
from tests import fake_engine

FAKE_DUEL = fake_engine.game((0, 1), ("A", "B"), ("A", "B"))
FAKE_TEAMS = fake_engine.game((0, 0, 1, 1), ("A 1", "A 2", "B 1", "B 2"), ("A", "B"), limit=4)


def team_document(ruleset: str) -> dict:
    """A 2-against-2 scenario of ``ruleset``, members named."""
    member = {
        "d100": lambda k: {"fighting": 45 + 5 * k, "weapon": {"lethality": 25 + 5 * k}},
        "exp": lambda k: {"kind": "creature", "hit_points": 12 + 3 * k, "armour_rating": 500, "bonus": 80,
                          "maximum_roll": 700, "weapon": {"name": "claw", "type": "A", "damage": "1d6",
                                                          "natural": True}},
        "tss": lambda k: {"skill": "14/7/3", "action_check": "+13/12/6/3", "durability": [8, 8, 4],
                          "weapon": {"damage": "d4s/d4w/d4+1w", "class": "LI"}},
    }[ruleset]
    return {"ruleset": ruleset, "sides": [
        {"name": "Red", "members": [{**member(0), "name": "Ann"}, {**member(1), "name": "Bea"}]},
        {"name": "Blue", "members": [{**member(2), "name": "Cid"}, {**member(3), "name": "Dov"}]},
    ], "options": {"max_rounds": 12} if ruleset != "exp" else {"unit_limit": 30}}


def real_game(scenario):
    try:
        return scenario_game(scenario)
    except (ImportError, AttributeError) as problem:  # an engine not landed yet
        pytest.skip(f"engine not available: {problem}")


EXAMPLES = example_names()
RULESETS = ("d100", "exp", "tss")


def examples_and_members():
    cases = []
    for name in EXAMPLES:
        try:
            members = scenario_game(name).member_names
        except (ImportError, AttributeError):
            members = ("?",)
        cases.extend(pytest.param(name, member, id=f"{name}-{member}") for member in members)
    return cases


def assert_same(a, b, path="") -> None:
    """Equal, type for type, array for array (dtype, shape, values), key for key."""
    assert type(a) is type(b), f"{path}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, dict):
        assert a.keys() == b.keys(), f"{path}: keys {sorted(a)} != {sorted(b)}"
        for key in a:
            assert_same(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, f"{path}: {a.dtype}{a.shape} != {b.dtype}{b.shape}"
        if a.dtype == object:
            for k, (x, y) in enumerate(zip(a, b, strict=True)):
                assert_same(x, y, f"{path}[{k}]")
        else:
            assert np.array_equal(a, b), f"{path}: {a} != {b}"
    elif isinstance(a, tuple | list):
        assert len(a) == len(b), f"{path}: {a} != {b}"
        for k, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{path}[{k}]")
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


def play_episodes(env, seed, count, action):
    """``count`` episodes from ``reset(seed)``, the agent always ``action``: per episode
    (outcome code, length, counts, reward, terminated, truncated, masked actions)."""
    out = []
    for episode in range(count):
        obs, info = env.reset(seed=seed) if episode == 0 else env.reset()
        assert env.observation_space.contains(obs) and info["action_mask"].dtype == np.int8
        done = False
        while not done:
            obs, reward, terminated, truncated, info = env.step(action)
            assert env.observation_space.contains(obs), obs  # every field in 0..1
            done = terminated or truncated
        outcome = info["outcome"]
        code = (0 if outcome["winner"] == env.unwrapped.game.side_names[0] and not outcome["draw"]
                else 1 if outcome["winner"] is not None else DRAW if outcome["draw"] else UNFINISHED)
        out.append((code, outcome["length"], outcome["counts"], reward, terminated, truncated,
                    info["masked_actions"]))
    return out


def check_episodes_equal_fights(game, agent, action, seed=5, count=25, backend="python"):
    env = gym.make("combatsim/Fight-v0", scenario=game, agent=agent, backend=backend)
    episodes = play_episodes(env, seed, count, action)
    row = game.member_names.index(agent)

    def constant(obs, masks):
        return np.full(len(obs), action, dtype=np.int64)

    fights = play_fights(game, count, seed, {agent: constant}, backend=backend, chunk=7, outcomes=True)
    assert [e[0] for e in episodes] == fights.outcome.tolist()
    assert [e[1] for e in episodes] == fights.length.tolist()
    summed = {name: sum(e[2][name] for e in episodes) for name in game.count_names}
    assert summed == fights.totals
    side = game.member_sides[row]
    for code, _, counts, reward, terminated, truncated, masked in episodes:
        assert reward == (1.0 if code == side else -1.0 if code == 1 - side else 0.0)
        assert terminated == (code != UNFINISHED) and truncated == (code == UNFINISHED)
        assert masked == counts["masked"]


# --- on the coin-flip engine --------------------------------------------------------------------------

@pytest.mark.parametrize("game", [FAKE_DUEL, FAKE_TEAMS], ids=["duel", "teams"])
def test_fake_check_env_and_episodes_equal_fights(game):
    for agent in game.member_names:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            check_env(gym.make("combatsim/Fight-v0", scenario=game, agent=agent, backend="python").unwrapped,
                      skip_render_check=False)
        for action in range(len(game.action_names)):
            check_episodes_equal_fights(game, agent, action, count=30)


def test_fake_outcome_info_says_what_happened():
    env = FightEnv(FAKE_TEAMS, "A 1", backend="python")
    seen = set()
    for episode in range(200):
        env.reset(seed=1) if episode == 0 else env.reset()
        done = False
        while not done:
            _, reward, terminated, truncated, info = env.step(2)  # flee whenever allowed
            done = terminated or truncated
        outcome = info["outcome"]
        counts = outcome["counts"]
        escapes = (counts["escapes_side_0"], counts["escapes_side_1"])
        assert outcome["escapes"] == escapes and len(outcome["escaped"]) == 0  # the fake shows no escaped flag
        if outcome["winner"] is not None:
            side = FAKE_TEAMS.side_names.index(outcome["winner"])
            assert outcome["by_flight"] == (counts[f"wins_by_flight_side_{side}"] > 0)
            assert outcome["text"] == f"{outcome['winner']} wins" + (" by flight" if outcome["by_flight"] else "")
            standing_sides = {FAKE_TEAMS.member_sides[FAKE_TEAMS.member_names.index(n)] for n in outcome["standing"]}
            assert standing_sides == {side}
            assert reward == (1.0 if side == 0 else -1.0)
        else:
            assert outcome["draw"] != outcome["unfinished"] and reward == 0.0 and not outcome["by_flight"]
            assert truncated == outcome["unfinished"]
        seen.add(outcome["text"])
    assert {"A wins", "B wins", "A wins by flight", "B wins by flight"} <= seen


def test_masked_action_is_counted_and_seeding_walks_the_fight_indices():
    env = FightEnv(FAKE_DUEL, "A", backend="python")
    _, info = env.reset(seed=4)
    assert info["action_mask"].tolist() == [1, 1, 0] and info["masked_actions"] == 0
    info = env.step(2)[4]  # flee is masked in the first step
    assert info["masked_actions"] == 1
    # episode k after reset(seed=4) is fight k of seed 4
    first = [env.reset(seed=4)[0]] + [env.reset()[0] for _ in range(3)]
    other = FightEnv(FAKE_DUEL, "A", backend="python")
    assert all(np.array_equal(a, b) for a, b in zip(first, [other.reset(seed=4)[0]] + [other.reset()[0]] * 3,
                                                      strict=True))


@pytest.mark.parametrize(("action", "error", "message"), [
    (3, ValueError, r"action must be in 0\.\.2, got 3"),
    (-1, ValueError, r"action must be in 0\.\.2, got -1"),
    (1.0, TypeError, r"action must be an integer in 0\.\.2, got float"),
    (True, TypeError, r"action must be an integer in 0\.\.2, got bool"),
])
def test_bad_action_is_a_one_line_error(action, error, message):
    env = FightEnv(FAKE_DUEL, "A", backend="python")
    env.reset(seed=1)
    with pytest.raises(error, match=message):
        env.step(action)
    assert env.step(np.int64(1))[0].dtype == np.float32 and FightEnv(FAKE_DUEL, "B").reset(seed=1)


def test_bad_construction_is_a_one_line_error():
    with pytest.raises(ValueError, match=r"agent: no member is named 'C'; the scenario's members: 'A', 'B'"):
        gym.make("combatsim/Fight-v0", scenario=FAKE_DUEL, agent="C")
    with pytest.raises(ValueError, match="backend must be one of 'auto', 'cython', 'numba', 'python'"):
        FightEnv(FAKE_DUEL, "A", backend="fortran")
    with pytest.warns(UserWarning, match="render_mode 'human' is not supported"):
        assert FightEnv(FAKE_DUEL, "A", render_mode="human").render_mode is None
    with pytest.raises(ValueError, match=r"agents: no member is named 'Z'"):
        parallel_env(FAKE_DUEL, ["A", "Z"])
    with pytest.raises(ValueError, match="agents must name each member once"):
        parallel_env(FAKE_DUEL, ["A", "A"])
    with pytest.raises(RuntimeError, match="call reset"):
        FightEnv(FAKE_DUEL, "A").step(0)


def test_render_is_a_line_per_member():
    env = FightEnv(FAKE_TEAMS, "A 2", backend="python", render_mode="ansi")
    env.reset(seed=2)
    env.step(1)
    lines = env.render().splitlines()
    assert len(lines) == 1 + FAKE_TEAMS.members
    assert lines[2].split()[:5] == ["A", "2", "side", "A", "in"] and "last action: attack -> " in lines[2]
    assert "last action: scripted -> " in lines[1]


def test_render_words_the_condition_and_the_result():
    env = FightEnv("d100_duel", "Guard", backend="python", render_mode="ansi")
    env.reset(seed=1)
    env.step(1)
    env.step(1)  # seed 1: the Guard's carbine takes the Veteran out; the Guard takes a flesh wound
    lines = env.render().splitlines()
    assert lines[0] == "d100: pass 2, Guard wins"
    assert lines[1].split() == ["Veteran", "side", "Veteran", "out", "targeted", "last", "action:", "scripted", "->",
                                "out", "of", "the", "fight"]
    assert lines[2].endswith("in   1 flesh wound, targeted  last action: attack -> +1 flesh wound")


def sync_vector(game, agent, n, backend, mode=AutoresetMode.SAME_STEP):
    return SyncVectorEnv([lambda: FightEnv(game, agent, backend=backend) for _ in range(n)], autoreset_mode=mode)


def check_vector_equals_single_envs(game, agent, backend="python", n=5, steps=60, seed=3,
                                    mode=AutoresetMode.SAME_STEP):
    """The vector env against Gymnasium's SyncVectorEnv over single envs in autoreset ``mode``,
    through random actions, the autoresets, a partial reset with new seeds half-way (and, with
    autoreset DISABLED, a partial reset of the envs that ended after each step)."""
    vector = gym.make_vec("combatsim/Fight-v0", num_envs=n, vectorization_mode="vector_entry_point",
                          scenario=game, agent=agent, backend=backend, autoreset_mode=mode)
    assert isinstance(vector, FightVectorEnv) and vector.metadata["autoreset_mode"] == mode
    singles = sync_vector(game, agent, n, backend, mode)
    assert_same(vector.reset(seed=seed), singles.reset(seed=seed), "reset")
    rng = np.random.default_rng(seed)
    ends = 0
    for step in range(steps):
        actions = rng.integers(0, len(game.action_names), size=n)
        got, expected = vector.step(actions), singles.step(actions)
        assert_same(got, expected, f"step {step}")
        ended = got[2] | got[3]
        ends += int(np.count_nonzero(ended))
        if mode == AutoresetMode.DISABLED and ended.any():
            assert_same(vector.reset(options={"reset_mask": ended}), singles.reset(options={"reset_mask": ended}),
                        f"reset of the envs that ended at step {step}")
        if step == steps // 2:
            some = np.arange(n) % 2 == 0
            seeds = [seed + 100 + e for e in range(n)]
            assert_same(vector.reset(seed=seeds, options={"reset_mask": some}),
                        singles.reset(seed=seeds, options={"reset_mask": some}), "partial reset with seeds")
    assert ends >= n  # autoreset was exercised
    assert_same(vector.reset(), singles.reset(), "reset without a seed: the next fight of each env")


@pytest.mark.parametrize("mode", list(AutoresetMode))
@pytest.mark.parametrize("backend", ["python", "numba"])
def test_fake_vector_env_equals_single_envs(backend, mode):
    check_vector_equals_single_envs(FAKE_TEAMS, "B 1", backend=backend, mode=mode)
    check_vector_equals_single_envs(FAKE_DUEL, "A", backend=backend, n=3, mode=mode)


def test_vector_env_autoreset_modes_and_reset_masks_are_checked():
    with pytest.raises(ValueError, match=r"autoreset_mode must be an AutoresetMode or one of \['Disabled', "
                                         r"'NextStep', 'SameStep'\], got 'next'"):
        FightVectorEnv(2, scenario=FAKE_DUEL, agent="A", backend="python", autoreset_mode="next")
    vector = FightVectorEnv(2, scenario=FAKE_DUEL, agent="A", backend="python", autoreset_mode="Disabled")
    assert vector.metadata["autoreset_mode"] is AutoresetMode.DISABLED
    assert FightVectorEnv.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP  # the class default stays
    with pytest.raises(ValueError, match=r"reset_mask'\] needs a first reset of every env"):
        vector.reset(options={"reset_mask": np.array([True, False])})
    vector.reset(seed=0)
    for bad, got in ((np.array([1, 0]), r"int64\(2,\)"), (np.array([True]), r"bool\(1,\)"), ([True, False], "list")):
        with pytest.raises(ValueError, match=rf"reset_mask'\] must be a bool numpy array of shape \(2,\), got {got}"):
            vector.reset(options={"reset_mask": bad})
    with pytest.raises(ValueError, match="must select at least one env, got none"):
        vector.reset(options={"reset_mask": np.zeros(2, np.bool_)})
    terminated = truncated = np.zeros(2, np.bool_)
    while not (terminated | truncated).any():
        _, _, terminated, truncated, _ = vector.step(np.zeros(2, np.int64))
    with pytest.raises(RuntimeError, match=r"step\(\) with ended envs \[\d.*\]: autoreset is disabled"):
        vector.step(np.zeros(2, np.int64))


def test_vector_env_bad_actions():
    vector = FightVectorEnv(3, scenario=FAKE_DUEL, agent="A", backend="python")
    vector.reset(seed=1)
    with pytest.raises(ValueError, match=r"actions must have shape \(3,\), got \(2,\)"):
        vector.step(np.zeros(2, dtype=np.int64))
    with pytest.raises(ValueError, match=r"actions must be in 0\.\.2, got 7"):
        vector.step(np.array([0, 7, 1]))
    with pytest.raises(TypeError, match="actions must be integers in 0..2, got dtype float64"):
        vector.step(np.zeros(3))


def check_parallel(game, agents, seed=0):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # parallel_api_test reports most problems as warnings
        parallel_api_test(parallel_env(game, agents, backend="python"), num_cycles=200)
        parallel_seed_test(lambda: parallel_env(game, agents, backend="python"))
    env = parallel_env(game, agents, backend="python", render_mode="ansi")
    observations, infos = env.reset(seed=seed)
    assert env.state_space.contains(env.state()) and env.state().shape == (game.members * len(game.observation_names),)
    assert set(observations) == set(agents) and all(infos[a]["action_mask"].dtype == np.int8 for a in agents)
    rewards = {}
    while env.agents:
        _, rewards, _, _, infos = env.step({a: 0 for a in env.agents})
    outcome = infos[agents[0]]["outcome"]
    for agent in agents:
        side_name = game.side_names[game.member_sides[game.member_names.index(agent)]]
        assert rewards[agent] == (0.0 if outcome["winner"] is None else 1.0 if outcome["winner"] == side_name else -1.0)
    assert len(env.render().splitlines()) == 1 + game.members


def test_fake_parallel_env():
    from combatsim.rl.fight_parallel import FightParallelEnv

    env = combatsim.rl.parallel_env(scenario=FAKE_TEAMS, agents=["A 1", "B 2"], backend="python")
    assert isinstance(env, FightParallelEnv) and env.possible_agents == ["A 1", "B 2"]
    check_parallel(FAKE_TEAMS, list(FAKE_TEAMS.member_names))
    check_parallel(FAKE_TEAMS, ["B 2", "A 1"])
    check_parallel(FAKE_DUEL, ["A"])


def test_parallel_env_agrees_with_single_env():
    """The parallel env with one agent is the single env, step by step."""
    single = FightEnv(FAKE_TEAMS, "A 2", backend="python")
    parallel = parallel_env(FAKE_TEAMS, ["A 2"], backend="python")
    obs, _ = single.reset(seed=8)
    observations, _ = parallel.reset(seed=8)
    rng = np.random.default_rng(0)
    for _ in range(100):
        assert np.array_equal(obs, observations["A 2"])
        action = int(rng.integers(0, 3))
        obs, reward, terminated, truncated, info = single.step(action)
        observations, rewards, terminations, truncations, infos = parallel.step({"A 2": action})
        assert (reward, terminated, truncated) == (rewards["A 2"], terminations["A 2"], truncations["A 2"])
        assert_same(info, infos["A 2"])
        if terminated or truncated:
            obs, _ = single.reset()
            observations, _ = parallel.reset()


# --- on the rulesets' engines -------------------------------------------------------------------------

@pytest.mark.parametrize(("example", "agent"), examples_and_members())
def test_example_check_env_for_every_member(example, agent):
    game = real_game(example)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(gym.make("combatsim/Fight-v0", scenario=example, agent=agent, backend="python").unwrapped,
                  skip_render_check=False)
    env = gym.make("combatsim/Fight-v0", scenario=example, agent=agent, backend="python", render_mode="ansi")
    env.reset(seed=0)
    assert env.unwrapped.observation_names == game.observation_names
    assert env.unwrapped.action_names == game.action_names
    assert env.observation_space.shape == (len(game.observation_names),)
    assert env.action_space.n == len(game.action_names)
    assert len(env.render().splitlines()) == 1 + game.members


@pytest.mark.parametrize(("example", "agent"), examples_and_members())
def test_example_episodes_equal_fights_for_every_constant_action(example, agent):
    game = real_game(example)
    for action in range(len(game.action_names)):
        check_episodes_equal_fights(game, agent, action, seed=11 + action, count=12)


@pytest.mark.parametrize("ruleset", RULESETS)
def test_team_episodes_equal_fights(ruleset):
    game = real_game(team_document(ruleset))
    assert game.member_names == ("Ann", "Bea", "Cid", "Dov")
    for agent in ("Bea", "Cid"):
        for action in (0, len(game.action_names) - 1):
            check_episodes_equal_fights(game, agent, action, seed=2, count=8)


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_vector_env_equals_single_envs(example):
    game = real_game(example)
    for mode in AutoresetMode:
        check_vector_equals_single_envs(game, game.member_names[-1], n=4, steps=60, mode=mode)


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_parallel_env(example):
    game = real_game(example)
    check_parallel(game, list(game.member_names))


@pytest.mark.parametrize("ruleset", RULESETS)
def test_team_parallel_env_self_play(ruleset):
    game = real_game(team_document(ruleset))
    check_parallel(game, list(game.member_names))
    check_vector_equals_single_envs(game, "Dov", n=3, steps=60)


def test_escape_says_who_escaped():
    """d100: an agent that always flees; an escape is told apart from a knockout."""
    game = real_game("d100_duel")
    env = FightEnv(game, "Guard", backend="python")
    flee = game.action_names.index("flee")
    escapes = 0
    for episode in range(60):
        env.reset(seed=21) if episode == 0 else env.reset()
        done = False
        while not done:
            _, reward, terminated, truncated, info = env.step(flee)
            done = terminated or truncated
        outcome = info["outcome"]
        if "Guard" in outcome["escaped"]:
            escapes += 1
            assert outcome["escapes"][1] == 1 and "Guard" not in outcome["standing"]
            if outcome["winner"] == "Veteran":
                assert outcome["by_flight"] and outcome["text"] == "Veteran wins by flight" and reward == -1.0
    assert escapes > 0


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_numba_envs_equal_python_envs(example):
    """The compiled engine behind the envs: the same steps, infos included, as the reference."""
    game = real_game(example)
    agent = game.member_names[0]
    compiled = FightVectorEnv(6, scenario=game, agent=agent, backend="numba")
    reference = FightVectorEnv(6, scenario=game, agent=agent, backend="python")
    assert_same(compiled.reset(seed=40), reference.reset(seed=40))
    rng = np.random.default_rng(1)
    for step in range(50):
        actions = rng.integers(0, len(game.action_names), size=6)
        assert_same(compiled.step(actions), reference.step(actions), f"step {step}")
    single = gym.make("combatsim/Fight-v0", scenario=game, agent=agent)  # Cython where built, else Numba
    assert single.unwrapped.backend == "auto"
    assert np.array_equal(single.reset(seed=45)[0], reference.reset(seed=40)[0][5])


@pytest.mark.parametrize("backend", ["python", "numba", "cython"])
def test_exp_observations_stay_in_the_space_past_their_scales(backend):
    """hit points past 100 and armour ratings outside 0..1000 are allowed: their fields clip."""
    import tomllib

    from combatsim.scenario import example_path

    document = tomllib.loads(example_path("exp_bob_too").read_text())
    agent = document["sides"][0]["members"][0]
    agent["hit_points"] = 500
    document["sides"][1]["members"][0]["armour_rating"] = -50
    env = gym.make("combatsim/Fight-v0", scenario=document, agent=agent["name"], backend=backend)
    obs, _ = env.reset(seed=1)
    names = env.unwrapped.observation_names
    assert env.observation_space.contains(obs)
    assert obs[names.index("self.hit_points")] == 1.0 and obs[names.index("self.health")] == 1.0
    assert obs[names.index("foe0.armour_rating")] == 0.0
    for _ in range(3):
        obs, *_ = env.step(0)
        assert env.observation_space.contains(obs)
