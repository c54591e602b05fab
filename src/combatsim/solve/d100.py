"""The d100 fight as a decision chain: the odds chain (combatsim.fight_odds.d100), a member's
declaration in each pass an env action instead of its policy d100's mix.

A step is a pass. Every member's declaration is simultaneous (the rules roll them before any of
them acts), so two deciding members make a matrix game per state. The engine state a chain state
stands for (for the observations) has the chain's people, marks and surprise, the pass and the
round; the pass's own scratch (last pass's defence, whom each attacked) is not tracked by the
chain, which is why ``observation_keys`` sets those fields to 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from combatsim.d100 import engine
from combatsim.d100.engine import (
    ACTIONS,
    G_ALLY_SLOTS,
    M_ACTIVE,
    M_ATTACKED,
    M_COVER,
    M_DUAL,
    M_ESCAPED,
    M_FAILED_FLEE,
    M_FLESH,
    M_INVOLVED,
    M_PARTNER,
    M_SERIOUS,
    M_SURPRISED,
    M_TARGET,
    M_TARGETED,
    MEMBER_FIELDS,
    S_MEMBERS,
    S_PASS,
    _legal,
)
from combatsim.d100.layout import C_DUAL_ALLOWED
from combatsim.engine import DRAW, RUNNING, S_LENGTH, S_OUTCOME
from combatsim.fight_odds import exact_method
from combatsim.fight_odds.d100 import COVER, DUAL, ESCAPED, FAILED, FLESH, IN, PARTNER, SERIOUS, STATUS, D100Chain
from combatsim.solve.chain import SCRIPTED, DecisionChain, Step


def decisions(scenario, method: str, max_states: int) -> D100Decisions:
    """The decision chain of a d100 scenario (``combatsim.solve.decision_chain``)."""
    chain = D100Chain(scenario.spec)
    exact, bound = exact_method(chain, method, max_states)
    return D100Decisions(scenario, chain, exact, bound)


class D100Decisions(DecisionChain):
    def __init__(self, scenario, chain: D100Chain, exact: bool, bound: int) -> None:
        super().__init__(scenario, chain, exact, bound)
        self.passes = chain.passes
        self.horizon = chain.passes * chain.max_rounds
        self._initial = chain.prepare(exact)
        self._states = chain._states
        self._given = {}  # decisions -> the chain's declarations
        self._end_codes: dict[int, int] = {}
        # the observation fields' layout, for observation_keys
        ally_slots = int(self.game.config[G_ALLY_SLOTS])
        self._blocks = 1 + ally_slots + int(self.game.config[engine.G_FOE_SLOTS])
        self._friend_blocks = 1 + ally_slots

    # --- the chain ---------------------------------------------------------------------------------
    def initial(self) -> list[tuple[int, object]]:
        return list(self._initial.items())

    def step_kind(self, t: int) -> int:
        """By pass number; the first step is its own kind, since its legal actions read surprise."""
        return t % self.passes if t else -1

    def pass_of(self, t: int) -> tuple[int, int]:
        """(round, pass) of step ``t`` (0-based), both counted from 1."""
        return t // self.passes + 1, t % self.passes + 1

    def legal(self, state: int, t: int, member: int) -> tuple[int, ...]:
        people, _, surprised = self.chain._states.values[state]
        person = people[member]
        acting = person[STATUS] == IN and not (t == 0 and surprised[member])
        engaged = person[PARTNER] >= 0
        may_toggle = bool(self.chain.table[member][C_DUAL_ALLOWED]) and not person[DUAL]
        return tuple(a for a in range(ACTIONS) if _legal(a, acting, engaged, may_toggle))

    def transitions(self, state: int, t: int, decisions: Sequence[int]) -> Step:
        key = tuple(decisions)
        given = self._given.get(key)
        if given is None:
            given = self._given[key] = tuple(None if d == SCRIPTED else d if isinstance(d, tuple) else ((d, Fraction(1)),)
                                             for d in key)
        self.chain.declare(given)
        moved, moved_p, ended, ended_p = self.chain._step(state, self.pass_of(t)[1])
        return Step(moved, moved_p, [self._end_code(e) for e in ended], ended_p)

    def _end_code(self, end: int) -> int:
        code = self._end_codes.get(end)
        if code is None:
            code = self._end_codes[end] = next(
                (key[1] for key in self.chain._ends.values[end] if key[0] in ("wins", "wins_by_flight")), DRAW)
        return code

    def describe(self, state: int) -> str:
        people, targeted, _surprised = self.chain._states.values[state]
        words = []
        for name, person, mark in zip(self.game.member_names, people, targeted, strict=True):
            if person[STATUS] != IN:
                words.append(f"{name}: {'escaped' if person[STATUS] == ESCAPED else 'out'}")
            else:
                words.append(f"{name}: flesh {person[FLESH]}, serious {person[SERIOUS]}"
                             + (", in cover" if person[COVER] else "") + (", dual wield" if person[DUAL] else "")
                             + (f", engaged with {self.game.member_names[person[PARTNER]]}" if person[PARTNER] >= 0 else "")
                             + (", targeted" if mark else ""))
        return "; ".join(words)

    # --- observations ------------------------------------------------------------------------------
    def engine_state(self, state: int, t: int) -> np.ndarray:
        """The engine's state row that the chain's ``state`` before step ``t`` stands for."""
        m = self.members
        people, targeted, surprised = self.chain._states.values[state]
        round_number, pass_number = self.pass_of(t)
        s = np.zeros(engine.state_size(m), dtype=np.int64)
        s[S_OUTCOME] = RUNNING
        s[S_PASS] = pass_number - 1
        s[S_LENGTH] = round_number - (pass_number == 1)
        for c, person in enumerate(people):
            base = S_MEMBERS + c * MEMBER_FIELDS
            s[base + M_ACTIVE] = person[STATUS] == IN
            s[base + M_ESCAPED] = person[STATUS] == ESCAPED
            s[base + M_FLESH] = person[FLESH]
            s[base + M_SERIOUS] = person[SERIOUS]
            s[base + M_COVER] = person[COVER]
            s[base + M_DUAL] = person[DUAL]
            s[base + M_FAILED_FLEE] = person[FAILED]
            s[base + M_PARTNER] = person[PARTNER]
            s[base + M_SURPRISED] = surprised[c]
            s[base + M_TARGETED] = targeted[c] and pass_number > 1
            s[base + M_TARGET] = -1
            s[base + M_ATTACKED] = -1
            s[base + M_INVOLVED] = -1
        return s

    def views(self, state: int, t: int) -> tuple[np.ndarray, np.ndarray]:
        obs = np.zeros((self.members, len(self.game.observation_names)), dtype=np.float32)
        masks = np.zeros((self.members, ACTIONS), dtype=np.int8)
        engine._observe(self.game.table, self.game.config, self.engine_state(state, t), self.members, obs, masks)
        return obs, masks

    def step_fields(self, obs: np.ndarray, t: int) -> None:
        """The pass and the round (the first pass, which shows surprise, is a kind of its own)."""
        round_number, pass_number = self.pass_of(t)
        obs[:, 0] = (pass_number - 1) / self.passes
        obs[:, 1] = (round_number - (pass_number == 1)) / self.chain.max_rounds

    def keyer_spec(self) -> dict:
        """What ``key_observations`` needs besides the observations."""
        return {"passes": self.passes, "blocks": self._blocks, "friend_blocks": self._friend_blocks}

