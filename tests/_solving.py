"""Shared checks of combatsim.solve's tests."""

from __future__ import annotations

import itertools
import math

import numpy as np

from combatsim.game import scenario_game
from combatsim.policies import play_fights
from combatsim.solve import load_policy
from combatsim.solve.induction import Progress, Walk, chosen_weights, group_starts, play


def brute_force_best(chain, member: int, most: int = 1000):
    """The best expected reward of ``member`` over every deterministic policy: every assignment of
    an option to each of its decisions (a state before a step), played forward exactly on the
    chain. Refuses (assert) fewer than two policies, or more than ``most``."""
    side = chain.game.member_sides[member]
    walk = Walk(chain, (member,), {}, 10**6, Progress("", False))
    points = [(t, start, count) for t, options in enumerate(walk.options)
              for start, count in zip(group_starts(options.state),
                                      np.diff(np.r_[group_starts(options.state), len(options.state)]), strict=True)]
    assert 1 < math.prod(int(c) for _, _, c in points) <= most
    best = None
    for assignment in itertools.product(*(range(int(c)) for _, _, c in points)):
        chosen = [[] for _ in walk.options]
        for (t, start, _), pick in zip(points, assignment, strict=True):
            chosen[t].append(int(start) + pick)
        ends, _, _ = play(walk, chosen_weights(walk, [np.array(c, dtype=np.int64) for c in chosen]),
                          Progress("", False))
        reward = ends[side] - ends[1 - side]
        best = reward if best is None else max(best, reward)
    return best


def env_rewards(env, policy, episodes: int, seed: int) -> list[float]:
    """Each episode's final reward when ``policy`` plays ``env`` (a single FightEnv) for ``episodes``
    episodes, the first reset with ``seed``."""
    out = []
    for episode in range(episodes):
        obs, info = env.reset(seed=seed) if episode == 0 else env.reset()
        done = False
        while not done:
            action = int(policy(obs[None], info["action_mask"][None])[0])
            obs, reward, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        out.append(reward)
    return out


def within_five_sigma(rewards: list[float], value: float) -> bool:
    """Whether the rewards' mean is ``value`` within 5 standard errors."""
    mean, spread = float(np.mean(rewards)), float(np.std(rewards)) / math.sqrt(len(rewards))
    return abs(mean - value) <= 5 * spread + 1e-9


def agrees(p, count: int, n: int) -> None:
    """Assert that ``count`` of ``n`` fights is probability ``p`` within 5 standard errors."""
    p = float(p)
    sigma = math.sqrt(max(p * (1 - p), 1e-12) / n)
    assert abs(count / n - p) <= 5 * sigma + 1e-9, (count / n, p, sigma)


def saved_policy_fights(scenario, member: str, solved, n: int, path, backend: str):
    """``n`` fights (seed 5) with ``member`` playing ``solved.policy`` saved to ``path`` and loaded
    back, from observations alone; everyone else scripted."""
    solved.policy.save(path)
    return play_fights(scenario_game(scenario), n, 5, {member: load_policy(path)}, backend=backend)
