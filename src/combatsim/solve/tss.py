"""The TSS fight as a decision chain: the odds chain's laws (combatsim.fight_odds.tss), stepped one
phase at a time as the engine and the environments step it, each member's action in a phase an
env action instead of its scripted policy's.

A step is a phase (Amazing, Good, Ordinary, Marginal: 4 a round). Before a phase, every member
that may act in it chooses one env action, all at once (the engine takes every member's action
before the phase plays), so two deciding members make a matrix game per state. The phase then
plays in the round's acting order, each attack's law the odds chain's; after the Marginal phase
the next round's opening draws (Resolve-physical, the action check with the dazed penalty, the
tie-break words) are part of the step's chance, grouped by what they decide: each member's
negated steps and phase, and the acting order.

A state is, per member, out of the fight or (stun, wound, mortal lost, aim held, actions used,
this round's phase, negated dazed steps), and the acting order of the members still in. The
observation shows all of it (each member's place in the acting order and its negated steps among
the rest), so one observation of a step is one state.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from combatsim.engine import RUNNING, S_LENGTH, S_OUTCOME
from combatsim.fight_odds import exact_method
from combatsim.fight_odds.tss import OUT, PHASES, TIE_FACES, TssChain, reachable_lost
from combatsim.solve.chain import SCRIPTED, DecisionChain, Step
from combatsim.tss import engine
from combatsim.tss.engine import (
    ATTACK,
    HOLD,
    K_RANK,
    K_SIZE,
    K_SLOTS,
    K_TWO,
    M_AIM,
    M_IN,
    M_INTENT,
    M_MORTAL,
    M_NEGATED,
    M_ORDER,
    M_PHASE,
    M_STUN,
    M_TIEBREAK,
    M_USED,
    M_WIDTH,
    M_WOUND,
    R_ACTIONS,
    R_HAS_RESOLVE,
    R_HAS_SECOND,
    S_MEMBERS,
    S_ORDERED,
    S_PHASE,
)

#: A member's entry in a state: (stun, wound, mortal lost, aim held, actions used, phase, negated)
AIM, USED, PHASE, NEGATED = 3, 4, 5, 6
#: Intents in a phase (the engine's, by member row): hold, aim; an attack is (target row, hands)
_HOLD, _AIM = -2, -3
#: The state number past the last step: the fight ran out of rounds (unfinished)
PAST = "past max_rounds"


def decisions(scenario, method: str, max_states: int) -> TssDecisions:
    """The decision chain of a TSS scenario (``combatsim.solve.decision_chain``): exact where
    ``combatsim odds fight`` is, refused past ``max_states`` (its bound: ``state_bound``) before
    any work."""
    from combatsim.fight_odds.chain import check_states

    chain = TssChain(scenario.spec, choices=True)
    chain._laws(False)
    bound = state_bound(chain)
    check_states(bound, max_states)
    exact, _ = exact_method(TssChain(scenario.spec), method, 10**12)
    return TssDecisions(scenario, chain, exact, bound)


class TssDecisions(DecisionChain):
    def __init__(self, scenario, chain: TssChain, exact: bool, bound: int) -> None:
        super().__init__(scenario, chain, exact, bound)
        self.horizon = PHASES * chain.max_rounds
        chain._laws(exact)
        config = self.game.config
        self._slots = int(config[K_SLOTS])
        # member row -> its foes' rows in foe order (its attack_foe_j actions)
        self._foe_rows = []
        for c in range(self.members):
            other = 1 - chain.side[c]
            self._foe_rows.append([int(config[K_RANK + self.members + other * self._slots + j])
                                   for j in range(int(config[K_SIZE + other]))])
        self._two = bool(config[K_TWO])
        self._actions = [row[R_ACTIONS] for row in chain.rows]
        self._has_second = [bool(row[R_HAS_SECOND]) for row in chain.rows]
        self._openings: dict[tuple, list] = {}
        # the people at a round's end -> the next round's opening [(state, probability)]
        self._opened: dict[tuple, list] = {}
        self._strikes: dict[tuple, tuple] = {}
        self._past = self._states.number(PAST)
        start = tuple((0, 0, 0, 0, 0, 0, 0) for _ in range(self.members))
        self._initial = self._open(start) if chain.max_rounds >= 1 else [(self._past, self._one)]

    def initial(self) -> list[tuple[int, object]]:
        return list(self._initial)

    def step_kind(self, t: int) -> int:
        """Steps whose transitions from a state are alike: the phase, and the last step (after which
        no round begins)."""
        return -1 if t == self.horizon - 1 else t % PHASES

    def round_phase(self, t: int) -> tuple[int, int]:
        """(round, phase) of step ``t``: the round from 1, the phase 0 Amazing .. 3 Marginal."""
        return t // PHASES + 1, t % PHASES

    # --- the round's opening ---------------------------------------------------------------------
    def _open(self, people: tuple) -> list[tuple[int, object]]:
        """A round begins from ``people`` (their phases, actions and negations of the round before
        are dropped): [(state, probability)] over every member's negated steps and phase and the
        acting order, as the engine draws them (begin_round)."""
        lost = tuple(OUT if p is OUT else p[:3] for p in people)
        aims = tuple(0 if p is OUT else p[AIM] for p in people)
        key = (tuple(OUT if p is OUT else self.chain.dazed(i, p, 0) for i, p in enumerate(lost)),)
        law = self._openings.get(key)
        if law is None:
            law = self._openings[key] = self._opening_law(lost)
        out = []
        for (negated, phases, order), p in law:
            state = tuple(OUT if lost[i] is OUT else (*lost[i], aims[i], 0, phases[i], negated[i])
                          for i in range(self.members))
            out.append((self._states.number((state, order)), p))
        return out

    def _opening_law(self, lost: tuple) -> list[tuple[tuple, object]]:
        """The odds chain's round openings from ``lost``, as probabilities."""
        chain = self.chain
        ties = [TIE_FACES ** len(group) if self.exact else 1 for group in chain.tie_groups]
        scale = math.prod(chain.start_denominators) * math.prod(ties)
        return [(key, Fraction(w, scale) if self.exact else w) for key, w in chain._round_openings(lost, ties).items()]

    # --- decisions ---------------------------------------------------------------------------------
    def _acts(self, person, c: int, phase: int) -> bool:
        """engine.acts_in: in the fight, its phase reached, actions left."""
        return person is not OUT and person[PHASE] <= phase and person[USED] < self._actions[c]

    def legal(self, state: int, t: int, member: int) -> tuple[int, ...]:
        people, _order = self._states.values[state]
        person = people[member]
        if not self._acts(person, member, t % PHASES):
            return (HOLD,)
        slots = self._slots
        legal = [HOLD]
        foes = [j for j, row in enumerate(self._foe_rows[member]) if people[row] is not OUT]
        legal.extend(ATTACK + j for j in foes)
        if not person[AIM]:
            legal.append(ATTACK + slots)
        if self._two and self._has_second[member]:
            legal.extend(ATTACK + slots + 1 + j for j in foes)
        return tuple(legal)

    def _intent(self, people: tuple, c: int, phase: int, action: int):
        """take_actions: member c's env action as an intent, judged against the state before the
        phase (a masked action is a hold)."""
        slots = self._slots
        if action == HOLD or not self._acts(people[c], c, phase):
            return _HOLD
        if action == ATTACK + slots:
            return _HOLD if people[c][AIM] else _AIM
        two = action > ATTACK + slots
        j = action - ATTACK - (slots + 1 if two else 0)
        foes = self._foe_rows[c]
        if j < 0 or j >= len(foes) or (two and not self._has_second[c]) or people[foes[j]] is OUT:
            return _HOLD
        return (foes[j], 2 if two else 1)

    def transitions(self, state: int, t: int, decisions: Sequence) -> Step:
        people, order = self._states.values[state]
        phase = t % PHASES
        one = self._one
        # each member's intent mix: [(intent or SCRIPTED, probability)]
        mixes = []
        for c, decision in enumerate(decisions):
            if isinstance(decision, tuple):
                merged: dict = {}
                for action, p in decision:
                    intent = self._intent(people, c, phase, int(action))
                    merged[intent] = merged.get(intent, 0) + (Fraction(p) if self.exact else float(p))
                mixes.append(list(merged.items()))
            elif decision == SCRIPTED:
                mixes.append([(SCRIPTED, one)])
            else:
                mixes.append([(self._intent(people, c, phase, int(decision)), one)])
        moved: dict[int, object] = {}
        ended: dict[int, object] = {}
        for joint in itertools.product(*mixes):
            weight = math.prod((p for _, p in joint), start=one)
            if not weight:
                continue
            intents = tuple(intent for intent, _ in joint)
            running, won = self._phase(people, order, phase, intents)
            for winner, p in won.items():
                ended[winner] = ended.get(winner, 0) + weight * p
            for after, p in running.items():
                for number, q in self._after(after, order, t):
                    moved[number] = moved.get(number, 0) + weight * p * q
        return Step(list(moved), list(moved.values()), list(ended), list(ended.values()))

    def _after(self, people: tuple, order: tuple, t: int) -> list[tuple[int, object]]:
        """Where a phase that ended with ``people`` goes: the next phase, the next round's opening,
        or, after the last step, past max_rounds."""
        if t == self.horizon - 1:
            return [(self._past, self._one)]
        if t % PHASES < PHASES - 1:
            if OUT in people:
                order = tuple(i for i in order if people[i] is not OUT)
            return [(self._states.number((people, order)), self._one)]
        opened = self._opened.get(people)
        if opened is None:
            opened = self._opened[people] = self._open(people)
        return opened

    def _phase(self, people: tuple, order: tuple, phase: int, intents: tuple) -> tuple[dict, dict]:
        """The phase played in ``order`` from ``people`` with ``intents``: ({people after:
        probability} of the fights still running, {winner: probability})."""
        branches: dict[tuple, object] = {people: self._one}
        ended: dict[int, object] = {}
        for c in order:
            following: dict[tuple, object] = {}
            for now, w in branches.items():
                person = now[c]
                if not self._acts(person, c, phase):
                    following[now] = following.get(now, 0) + w
                    continue
                for (intent, p) in self._scripted(now, c, intents[c]):
                    if intent == _HOLD:
                        following[now] = following.get(now, 0) + w * p
                        continue
                    used = (*person[:USED], person[USED] + 1, *person[USED + 1:])
                    if intent == _AIM:
                        used = (*used[:AIM], 1, *used[AIM + 1:])
                        after = (*now[:c], used, *now[c + 1:])
                        following[after] = following.get(after, 0) + w * p
                        continue
                    target, hands = intent
                    aimed = person[AIM]
                    mine = (*used[:AIM], 0, *used[AIM + 1:])
                    start = (*now[:c], mine, *now[c + 1:])
                    for (after, winner), q in self._action(start, c, target, hands, aimed).items():
                        if winner >= 0:
                            ended[winner] = ended.get(winner, 0) + w * p * q
                        else:
                            following[after] = following.get(after, 0) + w * p * q
            branches = following
        return branches, ended

    def _scripted(self, people: tuple, c: int, intent) -> list[tuple[object, object]]:
        """Member c's intent at its turn: a given one, or its scripted policy's mix (scripted_intent):
        aim by its aim chance while holding no aim, else attack the first foe still in, with both
        weapons by its policy."""
        one = self._one
        if intent != SCRIPTED:
            return [(intent, one)]
        chain = self.chain
        target = next(j for j in chain.foes[c] if people[j] is not OUT)
        attack = (target, chain.hands[c])
        chance = chain.aim_chance[c]
        if chance <= 0 or people[c][AIM]:
            return [(attack, one)]
        if chance >= 100:
            return [(_AIM, one)]
        aim = Fraction(chance, 100) if self.exact else chance / 100
        return [(_AIM, aim), (attack, one - aim)]

    def _action(self, people: tuple, c: int, target: int, hands: int, aimed: int) -> dict:
        """Member c's attack action (its aim already used up in ``people``): one attack, or with
        ``hands`` 2 the main-hand attack then the off-hand one, at the first foe still in once the
        target is out (two_weapon_attack): {(people after, winner or -1): probability}."""
        if people[target] is OUT:
            target = next(j for j in self.chain.foes[c] if people[j] is not OUT)
        if hands == 1:
            return self._strike(people, c, target, aimed, 0)
        out: dict[tuple, object] = {}
        for (after, winner), p in self._strike(people, c, target, aimed, 1).items():
            if winner >= 0:
                out[after, winner] = out.get((after, winner), 0) + p
                continue
            second = target if after[target] is not OUT else next(j for j in self.chain.foes[c] if after[j] is not OUT)
            for key, q in self._strike(after, c, second, aimed, 2).items():
                out[key] = out.get(key, 0) + p * q
        return out

    def _strike(self, people: tuple, c: int, target: int, aimed: int, hand: int) -> dict:
        """One attack of c at ``target``: the odds chain's law (TssChain._outcomes), kept per
        attacker's penalty and victim as the victim's entries after it."""
        chain = self.chain
        person = people[c]
        penalty = chain.dazed(c, person[:3], person[NEGATED])
        victim = people[target]
        key = (c, target, penalty, victim, aimed, hand)
        law = self._strikes.get(key)
        if law is None:
            taken_out, outcomes = chain._outcomes(c, target, penalty, victim[:3], aimed, hand)
            scale = (lambda w: Fraction(w, chain.attack_denominators[c])) if self.exact else float
            law = self._strikes[key] = (scale(taken_out), [((*lost, *victim[3:]), scale(w)) for lost, w in outcomes])
        taken_out, outcomes = law
        out: dict[tuple, object] = {}
        if taken_out:
            after = (*people[:target], OUT, *people[target + 1:])
            winner = chain.side[c] if all(after[j] is OUT for j in chain.foes[c]) else -1
            out[after if winner < 0 else None, winner] = taken_out
        before, behind = people[:target], people[target + 1:]
        for entry, p in outcomes:  # distinct entries (the odds chain merges alike outcomes)
            out[(*before, entry, *behind), -1] = p
        return out

    # --- observations ------------------------------------------------------------------------------
    def engine_state(self, state: int, t: int) -> np.ndarray:
        """The engine's state row that the chain's ``state`` before step ``t`` stands for (a member
        out of the fight shows its tracks all lost; the tie-break words are the acting order's)."""
        people, order = self._states.values[state]
        s = np.zeros(engine.state_size(self.members), dtype=np.int64)
        round_number, phase = self.round_phase(t)
        s[S_OUTCOME] = RUNNING
        s[S_PHASE] = phase
        s[S_LENGTH] = round_number
        s[S_ORDERED] = len(order)
        for slot, c in enumerate(order):
            s[S_MEMBERS + M_WIDTH * slot + M_ORDER] = c
            s[S_MEMBERS + M_WIDTH * c + M_TIEBREAK] = len(order) - slot
        for c, person in enumerate(people):
            b = S_MEMBERS + M_WIDTH * c
            s[b + M_INTENT] = engine.INTENT_SCRIPTED
            if person is OUT:
                s[b + M_STUN], s[b + M_WOUND], s[b + M_MORTAL] = self.chain.tracks[c]
                continue
            s[b + M_IN] = 1
            s[b + M_STUN], s[b + M_WOUND], s[b + M_MORTAL] = person[:3]
            s[b + M_AIM] = person[AIM]
            s[b + M_USED] = person[USED]
            s[b + M_PHASE] = person[PHASE]
            s[b + M_NEGATED] = person[NEGATED]
        return s

    def views(self, state: int, t: int) -> tuple[np.ndarray, np.ndarray]:
        m = self.members
        obs = np.zeros((1, m, len(self.game.observation_names)), dtype=np.float32)
        masks = np.zeros((1, m, len(self.game.action_names)), dtype=np.int8)
        engine.write_views(self.game.table, self.game.config, self.engine_state(state, t)[None, :], 0, obs, masks)
        return obs[0], masks[0]

    def step_fields(self, obs: np.ndarray, t: int) -> None:
        obs[:, 1] = np.float32(self.round_phase(t)[0] / max(1, self.chain.max_rounds))

    def keyer_spec(self) -> dict:
        """What ``combatsim.solve.keys_tss.key_observations`` needs besides the observations."""
        return {"blocks": 2 * self._slots}

    def describe(self, state: int) -> str:
        value = self._states.values[state]
        if value == PAST:
            return "the fight ran past max_rounds"
        people, order = value
        words = []
        for name, person in zip(self.game.member_names, people, strict=True):
            if person is OUT:
                words.append(f"{name}: out")
            else:
                words.append(f"{name}: lost {person[0]} stun, {person[1]} wound, {person[2]} mortal, phase "
                             f"{person[PHASE]}, {person[USED]} actions used" + (", aiming" if person[AIM] else "")
                             + (f", {person[NEGATED]} dazed steps negated" if person[NEGATED] else ""))
        names = self.game.member_names
        return "; ".join(words) + "; acting order " + ", ".join(names[c] for c in order)


def state_bound(chain: TssChain) -> int:
    """A bound on the chain's states: per member, the lost points it can reach
    (``reachable_lost``), or out of the fight; aim held, actions used, phase and negated steps; and
    the acting orders of the tie groups. ``chain`` has its laws (``_laws``)."""
    bound = 1
    for j in range(chain.count):
        row = chain.rows[j]
        bound *= (len(reachable_lost(chain, j)) + 1) * 2 * (row[R_ACTIONS] + 1) * PHASES * (4 if row[R_HAS_RESOLVE] else 1)
    for group in chain.tie_groups:
        bound *= math.factorial(len(group))
    return bound
