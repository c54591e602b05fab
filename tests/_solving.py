"""Shared checks of combatsim.solve's tests."""

from __future__ import annotations

import itertools
import math

import numpy as np

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
