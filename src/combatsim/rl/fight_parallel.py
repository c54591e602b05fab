"""A PettingZoo ParallelEnv on any scenario: every named member an agent, the others scripted.

``parallel_env(scenario=..., agents=[names])``: each agent is a member, named as in
``combatsim/Fight-v0`` (combatsim.game), with that env's observation and action spaces and
``infos[agent]["action_mask"]``; two members of each side as agents is team self-play. An agent
whose member is out of the fight stays an agent (only its "do nothing" action is legal) until the
fight ends; then every agent is done at once. Rewards: +1 to each agent of the side that wins,
-1 to the others, 0 for a draw or an unfinished fight. Episode ``k`` after ``reset(seed=s)`` is
fight ``k`` of seed ``s``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium.utils import seeding
from pettingzoo import ParallelEnv

from combatsim.engine import DRAW, RUNNING, S_OUTCOME, SCRIPTED, UNFINISHED, Game
from combatsim.game import member_index
from combatsim.rl.fight_env import (
    Outcomes,
    PicklesWithoutEngine,
    as_game,
    check_action,
    check_backend,
    checked_render_mode,
    next_fight,
    observation_box,
    render_text,
)
from combatsim.scenario import Scenario
from combatsim.validation import check_seed


def agent_rows(game: Game, agents: Sequence[str] | None) -> dict[str, int]:
    """``{agent name: member row}`` for ``agents`` (member names, each once; all members when None)."""
    names = list(game.member_names if agents is None else agents)
    if isinstance(agents, str) or not names:
        raise ValueError(f"agents must be a non-empty list of member names; the scenario's members: "
                         f"{', '.join(map(repr, game.member_names))}")
    rows = {name: member_index(game, name, field="agents") for name in names}
    if len(rows) != len(names):
        raise ValueError(f"agents must name each member once, got {names!r}")
    return rows


class FightParallelEnv(PicklesWithoutEngine, ParallelEnv):
    """A scenario's fight with several members played from outside (docs/rl.md)."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "name": "combatsim_fight_v0",
                                          "is_parallelizable": True}

    def __init__(self, scenario: Scenario | str | Path | Mapping | Game, agents: Sequence[str] | None = None, *,
                 backend: str = "auto", render_mode: str | None = None) -> None:
        self.game = game = as_game(scenario)
        self._rows = agent_rows(game, agents)
        names = list(self._rows)
        self.backend = check_backend(backend)
        self.render_mode = checked_render_mode(render_mode, self.metadata["render_modes"])
        self.possible_agents = names
        self.agents: list[str] = []
        self.observation_names = game.observation_names
        self.action_names = game.action_names
        size = len(game.observation_names)
        self.observation_spaces = {a: observation_box(size) for a in names}
        self.action_spaces = {a: gym.spaces.Discrete(len(game.action_names)) for a in names}
        self.state_space = observation_box(game.members * size)
        self._engine = game.engine(self.backend)
        self._b = game.buffers(1)
        self._masked = game.count_names.index("masked")
        self._outcomes = Outcomes(game)
        self._np_random, _ = seeding.np_random()
        self._started = False
        self._last: dict[int, int | None] = dict.fromkeys(self._rows.values())
        self._before: np.ndarray | None = None  # every member's observation before the last step (ansi render)

    def observation_space(self, agent: str) -> gym.spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gym.spaces.Space:
        return self.action_spaces[agent]

    def _observations(self) -> tuple[dict, dict]:
        b = self._b
        obs = {agent: b["obs"][0, row].copy() for agent, row in self._rows.items()}
        infos = {agent: {"action_mask": b["mask"][0, row].copy(), "masked_actions": int(b["counts"][0, self._masked])}
                 for agent, row in self._rows.items()}
        return obs, infos

    def reset(self, seed: int | None = None, options: dict | None = None):
        b = self._b
        if seed is not None:
            self._np_random, _ = seeding.np_random(check_seed(seed))
        next_fight(b, seed, self._started, self._np_random)
        self._started = True
        self.agents = list(self.possible_agents)
        self._last = dict.fromkeys(self._rows.values())
        self._before = None
        self._engine.reset(self.game.table, self.game.config, b["seeds"], b["indices"], b["which"], b["state"],
                           b["counts"], b["obs"], b["mask"])
        return self._observations()

    def step(self, actions: Mapping[str, object]):
        b = self._b
        if not self.agents:
            raise RuntimeError("step() outside an episode: call reset() first, and again after an episode ends")
        if not isinstance(actions, Mapping):
            raise TypeError(f"actions must be a dict of agent -> action for the agents {self.agents!r}, "
                            f"got {type(actions).__name__}")
        unknown = set(actions) - set(self.agents)
        missing = [agent for agent in self.agents if agent not in actions]
        if unknown or missing:
            raise ValueError(f"actions must hold one action for each agent {self.agents!r}; "
                             f"{'missing ' + repr(missing) if missing else 'unknown ' + repr(sorted(unknown))}")
        b["actions"][0, :] = SCRIPTED
        for agent, row in self._rows.items():
            b["actions"][0, row] = self._last[row] = check_action(actions[agent], len(self.action_names))
        if self.render_mode == "ansi":
            self._before = b["obs"][0].copy()
        self._engine.step(self.game.table, self.game.config, b["seeds"], b["state"], b["actions"], b["counts"],
                          b["obs"], b["mask"])
        outcome = int(b["state"][0, S_OUTCOME])
        obs, infos = self._observations()
        sides = self.game.member_sides
        rewards = {agent: 1.0 if outcome == sides[row] else -1.0 if outcome == 1 - sides[row] else 0.0
                   for agent, row in self._rows.items()}
        ended = outcome != RUNNING
        terminations = dict.fromkeys(self.agents, outcome in (0, 1, DRAW))
        truncations = dict.fromkeys(self.agents, outcome == UNFINISHED)
        if ended:
            summary = self._outcomes.single(b["state"][0], b["counts"][0], b["obs"][0])
            for info in infos.values():
                info["outcome"] = summary
            self.agents = []
        return obs, rewards, terminations, truncations, infos

    def render(self):
        if self.render_mode != "ansi":
            return None
        if not self._started:  # the buffers hold no fight yet: their zeros would read as an ended one
            raise RuntimeError("render() before reset(): call reset() first")
        return render_text(self.game, self._b["state"][0], self._b["obs"][0], self._last, self._before)

    def state(self) -> np.ndarray:
        """Every member's own observation, in table order, end to end."""
        return self._b["obs"][0].reshape(-1).copy()

    def action_mask(self, agent: str) -> np.ndarray:
        return self._b["mask"][0, self._rows[agent]].astype(bool)


def parallel_env(scenario: Scenario | str | Path | Mapping | Game, agents: Sequence[str] | None = None, *,
                 backend: str = "auto", render_mode: str | None = None) -> FightParallelEnv:
    """A PettingZoo ParallelEnv of ``scenario`` with ``agents`` (member names; all members by default)."""
    return FightParallelEnv(scenario, agents, backend=backend, render_mode=render_mode)
