"""Self-play at kernel speed: N fights of a scenario with several members played from outside.

``vector_parallel_env(scenario=..., agents=[names], num_envs=N)`` is the PettingZoo env of
combatsim.rl.fight_parallel, N copies stepped by one engine call: observations ``(N, agents,
obs)``, masks ``(N, agents, actions)``, actions ``(N, agents)``, rewards ``(N, agents)``. It is
``combatsim/Fight-v0``'s vector env with several agent rows, so it has that env's rules: env ``e``
after ``reset(seed=s)`` is the PettingZoo env seeded ``s + e``, step by step, with that env's
``autoreset_mode``, SAME_STEP by default here, as self-play loops step it (``infos["final_obs"]``,
``infos["final_info"]`` for the envs that ended).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from combatsim.engine import Game
from combatsim.rl.fight_env import as_game
from combatsim.rl.fight_parallel import agent_rows
from combatsim.rl.fight_vector import FightVectorEnv
from combatsim.scenario import Scenario


class FightVectorParallelEnv(FightVectorEnv):
    """``num_envs`` fights of one scenario, the members named in ``agents`` played from outside.

    ``agents`` (names, in the order of the agent axis) and ``possible_agents`` are fixed: an agent
    whose member is out of its fight stays, with only its do-nothing action legal, until that
    fight ends. Rewards: +1 to each agent of the side that wins, -1 to the others.
    """

    def __init__(self, num_envs: int = 1, *, scenario: Scenario | str | Path | Mapping | Game,
                 agents: Sequence[str] | None = None, backend: str = "auto", render_mode: str | None = None,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP) -> None:
        game = as_game(scenario)
        rows = agent_rows(game, agents)
        super().__init__(num_envs, scenario=game, agent=next(iter(rows)), backend=backend, render_mode=render_mode,
                         autoreset_mode=autoreset_mode)
        del self.agent
        self.agents = self.possible_agents = tuple(rows)
        # indexes the member axis: obs[:, agent_index] is (num_envs, agents, obs); a slice (a view,
        # copied once) where the agents are consecutive members in order, else an integer array
        members = list(rows.values())
        consecutive = members == list(range(members[0], members[0] + len(members)))
        self.agent_index = (slice(members[0], members[0] + len(members)) if consecutive
                            else np.array(members, dtype=np.int64))
        side_0 = np.array([1.0 if game.member_sides[row] == 0 else -1.0 for row in rows.values()])
        # reward of each agent by outcome code: side 0 wins, side 1 wins, draw, unfinished, RUNNING (-1)
        self._rewards = np.zeros((5, len(rows)), dtype=np.float64)
        self._rewards[0], self._rewards[1] = side_0, -side_0
        self.single_observation_space = gym.spaces.Box(0.0, 1.0, shape=(len(rows), len(game.observation_names)),
                                                       dtype=np.float32)
        self.single_action_space = gym.spaces.MultiDiscrete(np.full(len(rows), len(game.action_names)))
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)


def vector_parallel_env(scenario: Scenario | str | Path | Mapping | Game, agents: Sequence[str] | None = None,
                        num_envs: int = 1, *, backend: str = "auto",
                        autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP) -> FightVectorParallelEnv:
    """N copies of ``scenario`` with ``agents`` (member names; all members by default), one engine call a step."""
    return FightVectorParallelEnv(num_envs, scenario=scenario, agents=agents, backend=backend,
                                  autoreset_mode=autoreset_mode)
