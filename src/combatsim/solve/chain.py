"""The fight as a decision chain: the exact chain of ``combatsim odds fight`` with choices in it.

A :class:`DecisionChain` is the state machine the solvers (and any other game solver, such as an
OpenSpiel game) walk. It numbers the chain's states; a step is one of the ruleset's steps (a d100
pass); in each step, each member in :attr:`DecisionChain.deciders` that is asked for an action
takes one of its legal env actions (the very masks the environments give), every other member
plays its scripted policy (or a policy given as a fixed action per state), and the step's dice
take the state to a distribution over next states or ended fights. Probabilities are exact
Fractions, or float64 with the error bound the odds report states (docs/fight-odds.md).

Chance is grouped by result: one step's transitions from a state under one joint action are the
distinct next states and fight ends, each with the total probability of every roll that leads
there; states that the rules cannot tell apart from then on (the chain's own merging: cover that
no foe's weapon reads, flee attempts past the cap, marks nobody reads) are one state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from combatsim.engine import DRAW, UNFINISHED
from combatsim.fight_odds.chain import Numbering

#: A member's decision in ``DecisionChain.transitions``: an env action, or its scripted policy.
SCRIPTED = -1


@dataclass(frozen=True)
class Step:
    """One step's results from a state under one joint decision: parallel lists. ``moved`` are the
    next states' numbers, ``ended`` the fight's end as the engine's outcome code (0 or 1: that side
    won; DRAW); every probability is Fraction (exact) or float."""

    moved: Sequence[int]
    moved_p: Sequence
    ended: Sequence[int]
    ended_p: Sequence


def reward(outcome: int, side: int) -> int:
    """The environments' reward for an ended fight's ``outcome`` to a member of ``side``: +1 when
    its side won, -1 when the other did, 0 for a draw or an unfinished fight."""
    if outcome in (DRAW, UNFINISHED):
        return 0
    return 1 if outcome == side else -1


class DecisionChain:
    """What every ruleset's decision chain provides (``combatsim.solve.<ruleset>``).

    Attributes: ``game`` (the engine's Game: member names, sides, action names), ``exact``,
    ``horizon`` (steps; a fight still running after the last one is unfinished), ``states``
    (the numbered states met so far: ``state_count()``).
    """

    game = None
    exact: bool = True
    horizon: int = 0

    def __init__(self, scenario, chain, exact: bool, bound: int) -> None:
        """What every ruleset's chain keeps: the scenario, its odds chain, whether probabilities
        are exact, the state bound checked, and the engine's Game of the scenario."""
        from combatsim.game import scenario_game

        self.scenario = scenario
        self.chain = chain
        self.exact = exact
        self.state_bound = bound
        self.game = scenario_game(scenario)
        self.members = len(self.game.member_names)
        self._one = Fraction(1) if exact else 1.0
        self._states = Numbering()  # the chain's states, numbered as met
        self._views: dict[tuple, tuple] = {}  # (state, step kind) -> every member's view (``views``)

    def initial(self) -> list[tuple[int, object]]:
        """[(state, probability)] before the first step."""
        raise NotImplementedError

    def legal(self, state: int, t: int, member: int) -> tuple[int, ...]:
        """The env actions ``member`` may take in ``state`` before step ``t`` (its mask's 1s); a
        member with one legal action is not asked."""
        raise NotImplementedError

    def transitions(self, state: int, t: int, decisions: Sequence[int]) -> Step:
        """Step ``t``'s results from ``state``: ``decisions[c]`` is member ``c``'s env action, or
        ``SCRIPTED`` for its scripted policy's mix."""
        raise NotImplementedError

    def observations(self, states: Sequence[int], t: int, member: int) -> tuple[np.ndarray, np.ndarray]:
        """``member``'s observations (float32 (n, size)) and masks (int8 (n, actions)) in ``states``
        before step ``t``: the engine's own, from the engine state the chain state stands for
        (``views``), kept per step kind, with the fields that tell the steps of a kind apart set
        by ``step_fields``."""
        obs = np.zeros((len(states), len(self.game.observation_names)), dtype=np.float32)
        masks = np.zeros((len(states), len(self.game.action_names)), dtype=np.int8)
        kind = self.step_kind(t)
        for k, state in enumerate(states):
            seen = self._views.get((state, kind))
            if seen is None:
                seen = self._views[state, kind] = self.views(state, t)
            obs[k], masks[k] = seen[0][member], seen[1][member]
        self.step_fields(obs, t)
        return obs, masks

    def views(self, state: int, t: int) -> tuple[np.ndarray, np.ndarray]:
        """Every member's observation (m, size) and mask (m, actions) in ``state`` before step ``t``."""
        raise NotImplementedError

    def step_fields(self, obs: np.ndarray, t: int) -> None:
        """Set the fields of ``obs`` that differ between steps of one kind (the round, say)."""

    def keyer_spec(self) -> dict:
        """What the ruleset's ``key_observations`` needs besides the observations (saved with a
        solved policy, which rebuilds its keyer from it: ``keyer``)."""
        return {}

    def keyer(self):
        """The function from observations to their keys in a solved policy's table, as a saved
        policy rebuilds it (``combatsim.solve.policy.SavedKeyer``)."""
        from combatsim.solve.policy import SavedKeyer

        return SavedKeyer(self.keyer_spec(), self.game.ruleset)

    def observation_keys(self, obs: np.ndarray, member: int) -> list[bytes]:
        """Each observation's key in a solved policy's table: the observation with the fields the
        chain does not track (they change no later law: last pass's defence, a mark nobody reads)
        set to 0, as bytes. States of one step with one key look alike to the member."""
        return [row.tobytes() for row in self.keyer()(obs)]

    def step_kind(self, t: int) -> int:
        """Steps of one kind have the same transitions from a state, so a solver shares them
        (default: every step its own kind)."""
        return t

    def state_count(self) -> int:
        return len(self._states)

    def describe(self, state: int) -> str:
        """The state in words, for error messages."""
        return str(state)

