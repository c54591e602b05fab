"""The EXP fight as a decision chain: the odds chain (combatsim.fight_odds.exp), each member's
target in a unit an env action instead of its target die.

A step is one unit of combat time. Every member standing with shots left chooses, at once, to
hold (no shots spent) or to fire at a standing foe; so two deciding members make a matrix game
per state. A member's scripted policy is the engine's target die: uniform over the standing
enemies. The unit's law is ``combatsim.fight_odds.exp.unit_of_fire``, the one the odds use.

A chain state is every member's hit points (0 once down) and shots left, exactly what the engine
shows (hit points, ammunition) besides the units played, so an observation determines the state
and the solved policy's key is the observation itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from combatsim.engine import DRAW, RUNNING, S_LENGTH, S_OUTCOME
from combatsim.exp import engine
from combatsim.exp.engine import FIRE_AT_FOE, HOLD, OBS_UNITS, ST_HIT_POINTS
from combatsim.fight_odds import exact_method
from combatsim.fight_odds.exp import ExpChain, unit_of_fire
from combatsim.solve.chain import SCRIPTED, DecisionChain, Step

#: "auto" solves in exact fractions up to this state bound, or up to EXACT_DECISIONS (state, unit)
#: pairs: backward induction touches every transition at every unit, and exact values carry
#: hundreds of digits after a long fight (exp_bob_too: 11,426 states, 100 units, 629 digits, some
#: 79 million products of fractions per pass).
EXACT_STATES = 2_000
EXACT_DECISIONS = 80_000
#: shots that stand in for a limited weapon's in a unit's law (more than any weapon carries)
_PLENTY = 1 << 40


def decisions(scenario, method: str, max_states: int) -> ExpDecisions:
    """The decision chain of an EXP scenario (``combatsim.solve.decision_chain``)."""
    chain = ExpChain(scenario.spec)
    # a state (hit points and shots) can be met before every unit (a run of misses), and each
    # (unit, state) is a decision: the bound is on those
    exact, bound = exact_method(chain, method, max_states, steps=chain.unit_limit)
    exact = exact and (method == "exact" or chain.state_bound() <= EXACT_STATES or bound <= EXACT_DECISIONS)
    return ExpDecisions(scenario, chain, exact, bound)


class ExpDecisions(DecisionChain):
    def __init__(self, scenario, chain: ExpChain, exact: bool, bound: int) -> None:
        super().__init__(scenario, chain, exact, bound)
        self.horizon = chain.unit_limit
        laws, denominators = chain._laws(exact)
        if exact:  # weights over each attacker's denominator, as probabilities
            laws = {key: [(v, Fraction(w, denominators[key[0]])) for v, w in law] for key, law in laws.items()}
        # one target's law (the target die's 1/enemies is the aim's chance here)
        self._laws = {(a, t, rolls): law for (a, t, rolls, enemies), law in laws.items() if enemies == 1}
        # per member: its foes' rows by foe slot (the engine's rows are the odds chain's, side 0's first)
        self._foe_rows = chain.foes
        self._side0 = chain.side.count(0)
        self._states.number(chain.start)  # a state: (hit points, shots) per member
        self._steps: dict[tuple, Step] = {}
        # (hit points, aims) -> the unit's law, shared by every state with those hit points
        self._unit_laws: dict[tuple, tuple] = {}
        # per state number: every member's observation and mask before the first unit
        self._seen_obs = np.zeros((0, self.members, len(self.game.observation_names)), dtype=np.float32)
        self._seen_masks = np.zeros((0, self.members, len(self.game.action_names)), dtype=np.int8)

    # --- the chain ---------------------------------------------------------------------------------
    def initial(self) -> list[tuple[int, object]]:
        return [(0, self._one)]

    def step_kind(self, t: int) -> int:
        """A unit's law does not depend on how many came before."""
        return 0

    def legal(self, state: int, t: int, member: int) -> tuple[int, ...]:
        hit_points, shots = self._states.values[state]
        if not engine.can_fire(hit_points[member], shots[member]):
            return (HOLD,)
        return (HOLD, *(FIRE_AT_FOE + j for j, row in enumerate(self._foe_rows[member]) if hit_points[row] > 0))

    def _aim(self, a: int, hit_points: tuple, shots: tuple, decision) -> tuple | None:
        """Member ``a``'s unit (``unit_of_fire``'s aim) under ``decision``: an env action (a foe
        down or out of range is masked: held), SCRIPTED (the target die), or a mix of actions."""
        if not engine.can_fire(hit_points[a], shots[a]):
            return None
        chain = self.chain
        rolls = chain.rolls[a] if shots[a] < 0 else min(chain.rolls[a], shots[a])
        if decision == SCRIPTED:
            enemies = [t for t in chain.foes[a] if hit_points[t] > 0]
            chance = self._one / len(enemies)
            return rolls, [(t, chance, self._laws[a, t, rolls]) for t in enemies]
        mix = decision if isinstance(decision, tuple) else ((decision, self._one),)
        chances: dict[int, object] = {}
        for action, p in mix:
            foe = action - FIRE_AT_FOE
            target = self._foe_rows[a][foe] if 0 <= foe < len(self._foe_rows[a]) else -1
            if target >= 0 and hit_points[target] <= 0:
                target = -1
            chances[target] = chances.get(target, 0) + p
        return rolls, [(t, p, self._laws[a, t, rolls] if t >= 0 else ()) for t, p in chances.items() if p]

    def transitions(self, state: int, t: int, decisions: Sequence[int]) -> Step:
        key = (state, tuple(decisions))
        step = self._steps.get(key)
        if step is not None:
            return step
        hit_points, shots = self._states.values[state]
        aims = [self._aim(a, hit_points, shots, d) for a, d in enumerate(decisions)]
        # decisions that aim alike (the target die over one enemy, fire at it) share the step
        aiming = tuple(None if aim is None else (aim[0], tuple((target, p) for target, p, _ in aim[1])) for aim in aims)
        step = self._steps.get((state, aiming))
        if step is None:
            step = self._steps[state, aiming] = self._unit(hit_points, shots, aims, aiming)
        self._steps[key] = step
        return step

    def _unit(self, hit_points: tuple, shots: tuple, aims: list, aiming: tuple) -> Step:
        """The unit's results from (``hit_points``, ``shots``): its law from ``_unit_law``, the
        same for every state with these hit points and aims (``aiming``: their rolls and chances),
        moved to these shots."""
        law = self._unit_laws.get((hit_points, aiming))
        if law is None:
            law = self._unit_laws[hit_points, aiming] = self._unit_law(hit_points, shots, aims)
        points_after, spent, moved_p, ended, ended_p = law
        number = self._states.number
        moved = []
        after_shots = {}
        for points, used in zip(points_after, spent, strict=True):
            left = after_shots.get(used)
            if left is None:
                left = after_shots[used] = tuple(s - u for s, u in zip(shots, used, strict=True))
            moved.append(number((points, left)))
        return Step(moved, moved_p, ended, ended_p)

    def _unit_law(self, hit_points: tuple, shots: tuple, aims: list) -> tuple:
        """``unit_of_fire`` from ``hit_points`` with every limited weapon's shots standing in as
        ``_PLENTY`` (the aims fix how many rolls each member fires, so its law reads no shots):
        the fights still running after the unit as (hit points, shots spent per member,
        probability), and the ended ones' probabilities by outcome."""
        plenty = tuple(s if s < 0 else _PLENTY for s in shots)
        after, _ = unit_of_fire(hit_points, plenty, aims, self._one)
        points_after, spent, moved_p, ended, ended_p = [], [], [], [], []
        size0 = self._side0
        for (points, left), p in after.items():
            up0 = any(points[:size0])
            up1 = any(points[size0:])
            if up0 and up1:
                points_after.append(points)
                spent.append(tuple(0 if s < 0 else _PLENTY - s for s in left))
                moved_p.append(p)
                continue
            code = 0 if up0 else 1 if up1 else DRAW
            if code in ended:
                ended_p[ended.index(code)] += p
            else:
                ended.append(code)
                ended_p.append(p)
        return points_after, spent, moved_p, ended, ended_p

    def describe(self, state: int) -> str:
        hit_points, shots = self._states.values[state]
        words = []
        for name, h, s in zip(self.game.member_names, hit_points, shots, strict=True):
            if h <= 0:
                words.append(f"{name}: down")
            else:
                words.append(f"{name}: {h} hit points" + ("" if s < 0 else f", {s} shots"))
        return "; ".join(words)

    # --- observations ------------------------------------------------------------------------------
    def engine_state(self, state: int, t: int) -> np.ndarray:
        """The engine's state row that the chain's ``state`` before step ``t`` stands for."""
        m = self.members
        hit_points, shots = self._states.values[state]
        s = np.zeros(engine.state_size(m), dtype=np.int64)
        s[S_OUTCOME] = RUNNING
        s[S_LENGTH] = t
        s[ST_HIT_POINTS:ST_HIT_POINTS + m] = hit_points
        s[ST_HIT_POINTS + m:ST_HIT_POINTS + 2 * m] = shots
        return s

    def observations(self, states: Sequence[int], t: int, member: int) -> tuple[np.ndarray, np.ndarray]:
        states = np.asarray(states, dtype=np.int64).reshape(-1)
        self._observe_new(int(states.max()) + 1 if len(states) else 0)
        obs = self._seen_obs[states, member]
        obs[:, OBS_UNITS] = t / self.chain.unit_limit  # every field but the units played is the state's
        return obs, self._seen_masks[states, member]

    def _observe_new(self, count: int) -> None:
        """Every member's observation and mask (at unit 0) of the states numbered below ``count``
        not yet seen, from the engine's own write_views."""
        seen = len(self._seen_obs)
        if count <= seen:
            return
        m = self.members
        size, actions = len(self.game.observation_names), len(self.game.action_names)
        obs = np.zeros((count - seen, m, size), dtype=np.float32)
        masks = np.zeros((count - seen, m, actions), dtype=np.int8)
        for k in range(count - seen):
            engine.write_views(self.game.table, self.game.config, self.engine_state(seen + k, 0)[None, :], 0,
                               obs[k:k + 1], masks[k:k + 1])
        self._seen_obs = np.concatenate([self._seen_obs, obs])
        self._seen_masks = np.concatenate([self._seen_masks, masks])
