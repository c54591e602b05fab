"""Exact odds of a d100 fight (docs/d100.md, section 8), by stepping the
distribution of the fight's state one pass at a time.

The state is what the rules track per combatant: in the fight, out or escaped; deadly flesh and
serious wounds (a lethal wound takes it out); in cover; dual wield on; failed flee attempts
(until the flee target reaches its cap); its engagement partner; and whether it has been
targeted this round. A pass follows the rulings' order: every declaration (one policy d100
each); all quick attacks (quick attack, charge) rolled against the state at the start of the
pass, their wounds landing together; then the standard attacks (attack, a press not spent
blocking) of everyone not yet out, against the state after the quick attacks, landing together;
then engagement, cover, dual wield, disengage contests and flight, in table order. A combatant
that flees leaves the fight: an escape. A side wins when it still has someone in the fight and
no foe does, by flight when one of those foes escaped; nobody left on either side is a draw.

Cover is kept only against a ranged foe, and being targeted, before a round's last pass, only
for whoever can still declare a flight. A pass's transitions from a state are enumerated once,
through memo tables. The moves after the attacks read no wounds and leave them as they are, so
they are mixed over the declarations once per skeleton of the attacks' outcomes (the state with
its wounds zeroed, and who attacked whom), and the outcomes' wounds are put back into the mixed
results. States and results are numbered; the weights step as a vector (exact: Fractions in
an object array) through each pass's sparse transitions.
"""

from __future__ import annotations

import gc
import math
from fractions import Fraction

import numpy as np

from combatsim.d100 import model
from combatsim.d100.engine import _first_wins, _legal, damage_column, flee_target
from combatsim.d100.layout import (
    ACTION_ATTACK,
    ACTION_CHARGE,
    ACTION_DEFEND,
    ACTION_DISENGAGE,
    ACTION_FLEE,
    ACTION_NONE,
    ACTION_PRESS,
    ACTION_QUICK_ATTACK,
    ACTION_TAKE_COVER,
    ACTION_TOGGLE_DUAL_WIELD,
    C_AMBUSH_ATTACK,
    C_AMBUSH_DEFEND,
    C_ARMOUR,
    C_ATTACK,
    C_DUAL_ALLOWED,
    C_FLEE_BASE,
    C_NONLETHAL,
    C_POLICY,
    C_PRESS,
    C_RANGED,
    C_SIDE,
    CONTEST_FIELDS,
    POLICY_ACTIONS,
)
from combatsim.d100.odds import tier_law, wound_law
from combatsim.fight_odds.chain import Numbering, Tally, check_states, segment_sum, zeros

D100 = 100
IN, OUT, ESCAPED = 0, 1, 2
#: Per combatant: status, deadly flesh, serious, in cover, dual wield on, failed flee attempts, partner.
STATUS, FLESH, SERIOUS, COVER, DUAL, FAILED, PARTNER = range(7)
GONE = (OUT, 0, 0, False, False, 0, -1)
#: The (deadly flesh, serious) wounds a combatant in the fight can have.
WOUND_LEVELS = model.FLESH_PER_SERIOUS * model.SERIOUS_PER_LETHAL
#: What a declaration makes of a combatant in the attacks of a pass.
QUICK, STANDARD, DEFENDS, NO_ATTACK = range(4)


def first_wins(bars, other_bars) -> Fraction:
    """The chance that a quick contest with target ``bars`` beats one with ``other_bars`` (the
    engine's rule: the better tier wins, then the larger margin; a full tie goes to the other side,
    the defender or the blocker), over every pair of d100 rolls."""
    pair = np.array([bars, other_bars], dtype=np.int64)
    wins = sum(_first_wins(pair, 0, 0, roll, 1, 0, other) for roll in range(1, D100 + 1) for other in range(1, D100 + 1))
    return Fraction(int(wins), D100 * D100)


class D100Chain:
    """The fight's chain for one scenario spec (combatsim.d100.scenario.build)."""

    step_unit = "rounds"
    #: "auto" is exact up to this many states: the d100 chain's transitions are Fractions
    exact_states = 1_000
    notes = ("escapes: the chance that at least one combatant flees successfully (it overlaps the other "
             "outcomes); draws: nobody left on either side; unfinished: max_rounds came first",)

    def __init__(self, spec: dict) -> None:
        from combatsim.d100.api import fight_table

        self.table = [[int(v) for v in row] for row in fight_table(spec["combatants"], spec["taper"])]
        self.count = len(self.table)
        self.passes = spec["passes"]
        self.max_rounds = spec["max_rounds"]
        self.ambush_side = spec["ambush_side"]
        self.side = [row[C_SIDE] for row in self.table]
        self.foes = [[o for o in range(self.count) if self.side[o] != self.side[c]] for c in range(self.count)]
        # cover counts for ranged attacks only: without a ranged foe, being in cover is no state
        self.cover_counts = [any(self.table[o][C_RANGED] for o in self.foes[c]) for c in range(self.count)]
        # failed flee attempts beyond this make no difference: the flee target is capped
        self.flee_cap = [max(0, -(-(model.TARGET_CAP - row[C_FLEE_BASE]) // model.FLEE_STEP)) for row in self.table]

    def exact_digits(self) -> int:
        """About the digits of the exact denominators after max_rounds: each pass rolls a few d100s
        per combatant (policy, attack, two damage dice, flee or contest)."""
        return self.max_rounds * self.passes * self.count * 10 + 1

    def state_bound(self) -> int:
        """Out, escaped, or in with its wounds, cover, dual wield, failed flee attempts and partner;
        times who has been targeted this round."""
        per = [2 + 3 * 2 * 2 * (2 if row[C_DUAL_ALLOWED] else 1) * (self.flee_cap[c] + 1) * (len(self.foes[c]) + 1)
               for c, row in enumerate(self.table)]
        return math.prod(per) * 2**self.count

    def prepare(self, exact: bool) -> dict[int, object]:
        """Empty memo tables, in exact or float64 weights; the distribution of the numbered states
        before the first pass (after the ambush's contests)."""
        self.exact = exact
        self.one = Fraction(1) if exact else 1.0
        self._attack_laws: dict[tuple, list] = {}
        self._contests: dict[tuple, object] = {}
        self._passes: dict[tuple, list] = {}
        self._wound_laws: dict[tuple, list] = {}
        self._attack_changes: dict[tuple, list] = {}
        self._declared: dict[tuple, list] = {}
        #: a group of declarations, (probability, number of the moves' view) each -> its mixes (``_mix``)
        self._mix_tables: dict[tuple, dict] = {}
        #: (seen's number, attack kinds' number) -> the attacks' outcomes (``_attack_groups``)
        self._attack_grouped: dict[tuple, list] = {}
        self._views = Numbering()  # the declarations as the moves see them
        self._seen = Numbering()  # status, wounds, cover and dual wield per combatant: what the attacks read
        self._rest = Numbering()  # cover, dual wield, failed flee attempts and partner per combatant
        self._sigmas = Numbering()  # (status per combatant, attacker -> target) after the attacks
        self._bare_results = Numbering()  # (people, targeted) after a pass, without wounds
        self._wound_codes = WOUND_LEVELS**self.count
        self._kinds = Numbering()
        self._ends = Numbering()  # an ended fight's outcome keys
        self._states = Numbering()  # (people, targeted, surprised) at the start of a pass
        self._steps: dict[tuple, list] = {}
        #: members' declarations given from outside (``declare``): None while every member is scripted
        self._given: tuple | None = None
        self._given_memos: dict[tuple | None, tuple] = {None: (self._steps, self._passes, self._declared)}
        self._next_states: dict[int, int] = {}  # 3 x result + marking -> state
        start = tuple((IN, 0, 0, False, False, 0, -1) for _ in range(self.count))
        distribution: dict[int, object] = {}
        for surprised, w in self._ambush().items():
            key = self._states.number((start, (False,) * self.count, surprised))
            distribution[key] = distribution.get(key, 0) + w
        return distribution

    def declare(self, given: tuple | None) -> None:
        """From now on, the declarations of the members ``given`` names come from it, not from their
        scripted policy: ``given[c]`` is None (scripted) or ((env action, probability as a Fraction),
        ...). An action that is not legal in a state does nothing, as the engine plays it. Each
        ``given`` keeps its own memo of the passes (combatsim.solve steps the chain state by state,
        one joint decision at a time); ``None`` (or all None) is every member scripted."""
        if given is not None and all(g is None for g in given):
            given = None
        memo = self._given_memos.get(given)
        if memo is None:
            memo = self._given_memos[given] = ({}, {}, {})
        self._steps, self._passes, self._declared = memo
        self._given = given

    def run(self, tally: Tally, max_states: int) -> int:
        distribution = self.prepare(tally.exact)
        # the memo tables are a million small tuples, lists and dicts without a reference cycle:
        # the cyclic garbage collector would walk them again and again, a third of the time
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self._run(tally, max_states, distribution)
        finally:
            if collecting:
                gc.enable()

    def _step(self, state: int, pass_number: int) -> tuple:
        """A pass's results from the numbered ``state``: ([the next states' numbers], [their
        probabilities], [the numbers of the ended fights' outcome keys], [their probabilities])."""
        key = (state, pass_number)
        cached = self._steps.get(key)
        if cached is None:
            people, targeted, surprised = self._states.values[state]
            if pass_number == 1:
                targeted = (False,) * self.count
            # whom the next pass sees targeted: nobody after the round's last pass; before it, only
            # whoever can declare a flight in it (in the fight, not engaged), which makes fewer states
            marking = 2 if pass_number == self.passes else int(pass_number == self.passes - 1)
            following = self._next_states
            cached = self._steps[key] = ([], [], [], [])
            moved, moved_p, ended, ended_p = cached
            for result, p in self._pass(people, targeted, surprised):
                if result >= 0:
                    state_after = following.get(3 * result + marking, -1)
                    moved.append(state_after if state_after >= 0 else self._next_state(result, marking))
                    moved_p.append(p)
                else:
                    ended.append(-1 - result)
                    ended_p.append(p)
        return cached

    def _next_state(self, code: int, marking: int) -> int:
        """The number of the state after a pass's result ``code`` (see ``_result``); a surprised
        combatant sits out one pass only."""
        people, marks = self._result(code)
        if marking == 2:
            marks = (False,) * self.count
        elif marking == 1:
            marks = tuple(mark and person[STATUS] == IN and person[PARTNER] < 0
                          for person, mark in zip(people, marks, strict=True))
        number = self._next_states[3 * code + marking] = self._states.number((people, marks, (False,) * self.count))
        return number

    def _run(self, tally: Tally, max_states: int, distribution: dict) -> int:
        """Over numbered states: each pass's transitions from a state are enumerated once (the
        first time the state is live at that pass), kept as sparse (from, to, probability)
        arrays, and a pass multiplies the weight vector by them (exact: Fractions in object
        arrays, float64: floats)."""
        dtype = object if tally.exact else np.float64
        weights = zeros(len(self._states.values), tally.exact)
        for state, w in distribution.items():
            weights[state] = w
        # per pass number: the states enumerated, and their moves and endings (to the number of
        # the outcome keys) as arrays
        enumerated = {p: set() for p in range(1, self.passes + 1)}
        moves = {p: [np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, dtype)] for p in enumerated}
        endings = {p: [np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, dtype)] for p in enumerated}
        peak = len(distribution)
        for round_number in range(1, self.max_rounds + 1):
            for pass_number in range(1, self.passes + 1):
                tally.next_step(1)
                new_moves: list[list] = [[], [], []]
                new_endings: list[list] = [[], [], []]
                done = enumerated[pass_number]
                for i in np.flatnonzero(weights).tolist():
                    if i in done:
                        continue
                    done.add(i)
                    moved, moved_p, ended, ended_p = self._step(i, pass_number)
                    for (source, target, probability), to, p in ((new_moves, moved, moved_p), (new_endings, ended, ended_p)):
                        source.extend([i] * len(to))
                        target.extend(to)
                        probability.extend(p)
                for table, new in ((moves, new_moves), (endings, new_endings)):
                    if new[0]:
                        table[pass_number] = [np.concatenate((old, np.array(column, dtype=old.dtype)))
                                              for old, column in zip(table[pass_number], new, strict=True)]
                source, target, p = moves[pass_number]
                flow = weights[source] * p
                tally.operations += 2 * int(np.count_nonzero(flow))
                source, ends, p = endings[pass_number]
                ended = segment_sum(ends, weights[source] * p, len(self._ends.values), tally.exact)
                for end, weight in enumerate(ended.tolist()):
                    if weight:
                        for key in self._ends.values[end]:
                            tally.add(key, weight, length=round_number)
                weights = tally.prune_array(segment_sum(target, flow, len(self._states.values), tally.exact))
                live_count = int(np.count_nonzero(weights))
                peak = max(peak, live_count)
                check_states(live_count, max_states)
            if round_number == self.max_rounds:
                for i, weight in enumerate(weights.tolist()):
                    if weight:
                        tally.add(("unfinished",), weight, length=round_number)
                        if any(person[STATUS] == ESCAPED for person in self._states.values[i][0]):
                            tally.add(("escapes",), weight, length=round_number)
                weights[:] = 0
            if not weights.any():
                break
        tally.flush()
        return peak

    def _probability(self, value: Fraction):
        return value if self.exact else float(value)

    def _ambush(self) -> dict[tuple, object]:
        """Who is surprised: each member of the ambushed side, in table order, against one ambusher
        (cycling) in a quick contest; ties go to the defender."""
        out = {(False,) * self.count: self.one}
        if self.ambush_side is None:
            return out
        ambushers = [c for c in range(self.count) if self.side[c] == self.ambush_side]
        ambushed = [c for c in range(self.count) if self.side[c] != self.ambush_side]
        for rank, d in enumerate(ambushed):
            a = ambushers[rank % len(ambushers)]
            p = self._probability(first_wins(self.table[a][C_AMBUSH_ATTACK:C_AMBUSH_ATTACK + CONTEST_FIELDS],
                                             self.table[d][C_AMBUSH_DEFEND:C_AMBUSH_DEFEND + CONTEST_FIELDS]))
            following = {}
            for key, w in out.items():
                for surprised, q in ((True, p), (False, 1 - p)):
                    if q:
                        new = (*key[:d], surprised, *key[d + 1:])
                        following[new] = following.get(new, 0) + w * q
            out = following
        return out

    # --- one pass ---------------------------------------------------------------------------------

    def _pass(self, people: tuple, targeted: tuple, surprised: tuple) -> list:
        """The pass's results from a state: [(the code of (people, targeted) after it (``_result``),
        or -1 - the number of the ended fight's outcome keys, probability)].

        The moves after the attacks read no wounds, and carry them over unchanged: so the moves
        are mixed over a group of declarations once per skeleton of the attacks' outcome (``_mix``:
        who is out, who attacked whom, and the rest of the state but wounds), and each outcome's
        wounds are added to the mixed results' codes."""
        key = (people, targeted, surprised)
        cached = self._passes.get(key)
        if cached is None:
            results: dict[int, object] = {}
            tallied = results.get
            seen = self._seen.number(tuple(person[:DUAL + 1] for person in people))
            rest = self._rest.number(tuple(person[COVER:] for person in people))
            for kinds, kinds_number, mixes, plans in self._plans(people, targeted, surprised):
                outcomes = (self._attack_grouped.get((seen, kinds_number))
                            or self._attack_groups(people, kinds, seen, kinds_number))
                for sigma, wounded, total in outcomes:
                    ends, moves = mixes.get((rest, sigma)) or self._mix(mixes, people, rest, sigma, plans)
                    for result, q in ends:
                        results[result] = tallied(result, 0) + total * q
                    for base, q in moves:
                        for wounds, w in wounded:
                            result = base + wounds
                            results[result] = tallied(result, 0) + w * q
            cached = self._passes[key] = list(results.items())
        return cached

    def _wound_code(self, wounds) -> int:
        """(deadly flesh, serious) per combatant as one number: a digit of base ``WOUND_LEVELS`` each."""
        return sum((flesh * model.SERIOUS_PER_LETHAL + serious) * WOUND_LEVELS**c
                   for c, (flesh, serious) in enumerate(wounds))

    def _result(self, code: int) -> tuple:
        """A result of ``_pass``: ("end", keys) for -1 - the number of the outcome keys, else (people,
        targeted) for the code ``number of (people, targeted) without wounds x WOUND_LEVELS^count +
        the wounds' code``. The wounds of whoever is no longer in the fight (one who fled in the
        moves) are not read: two codes can name one result."""
        if code < 0:
            return ("end", self._ends.values[-1 - code])
        bare, wounds = divmod(code, self._wound_codes)
        people, marks = self._bare_results.values[bare]
        people = tuple((IN, wounds // WOUND_LEVELS**c % WOUND_LEVELS // model.SERIOUS_PER_LETHAL,
                        wounds // WOUND_LEVELS**c % model.SERIOUS_PER_LETHAL, *person[COVER:])
                       if person[STATUS] == IN else person for c, person in enumerate(people))
        return people, marks

    def _attack_groups(self, people: tuple, kinds: tuple, seen: int, kinds_number: int) -> list:
        """The attacks' outcomes by who is out and who attacked whom (numbered: ``sigma``):
        [(sigma, [(wounds' code, probability)], their total probability)]."""
        grouped: dict[tuple, list] = {}
        for wounded, attacked, w in self._attack_outcomes(people, kinds):
            statuses = tuple(wound[STATUS] for wound in wounded)
            grouped.setdefault((statuses, attacked), []).append(
                (self._wound_code(wound[FLESH:] for wound in wounded), w))
        cached = self._attack_grouped[seen, kinds_number] = [
            (self._sigmas.number(group), outcomes, sum(w for _, w in outcomes)) for group, outcomes in grouped.items()]
        return cached

    def _mix(self, mixes: dict, people: tuple, rest: int, sigma: int, plans: list) -> tuple:
        """The moves from the attacks' outcome ``sigma`` (who is out, who attacked whom) in a state
        (``people``, whose ``rest`` is all but status and wounds), mixed over a group of declarations
        (``plans``; ``mixes`` holds the group's mixes): (ends [(-1 - the outcome keys' number,
        probability)], moves [(the result's code without wounds, probability)])."""
        statuses, attacked = self._sigmas.values[sigma]
        state = self._after_attacks(people, tuple((status, 0, 0) for status in statuses))
        mixed: dict[int, object] = {}
        for p, _, actions, targets, marks in plans:
            for result, q in self._engage_and_move(state, actions, targets, attacked, marks):
                if result[0] == "end":
                    code = -1 - self._ends.number(result[1])
                else:
                    code = self._bare_results.number(result) * self._wound_codes
                mixed[code] = mixed.get(code, 0) + p * q
        cached = mixes[rest, sigma] = ([(code, w) for code, w in mixed.items() if code < 0],
                                       [(code, w) for code, w in mixed.items() if code >= 0])
        return cached

    def _plans(self, people: tuple, targeted: tuple, surprised: tuple) -> list:
        """The declarations as the rest of the pass sees them: [(attack kinds, their number, the
        group's mixes (``_mix``), [(probability, number of the moves' view, actions, targets,
        targeted)])], alike ones merged. The attacks see who makes a quick or a standard attack at
        whom and who defends; engagement and the moves see charges, moves, presses (and their
        targets) and who is targeted. The declarations depend on the people only through who is
        in and undeclared, their targets and dual wield."""
        seen = []
        for c, person in enumerate(people):
            if person[STATUS] != IN or surprised[c]:
                seen.append(None)
            else:
                engaged = person[PARTNER] >= 0
                target = person[PARTNER] if engaged else next(o for o in self.foes[c] if people[o][STATUS] == IN)
                seen.append((target, engaged, person[DUAL]))
        key = (tuple(seen), targeted)
        cached = self._declared.get(key)
        if cached is None:
            merged: dict[tuple, list] = {}
            for (actions, targets, marks), p in self._declarations(*key):
                kinds = []
                for c, action in enumerate(actions):
                    if action in (ACTION_QUICK_ATTACK, ACTION_CHARGE):
                        kinds.append((QUICK, targets[c]))
                    elif action == ACTION_ATTACK or (action == ACTION_PRESS and not (
                            actions[targets[c]] == ACTION_DISENGAGE and targets[targets[c]] == c)):
                        kinds.append((STANDARD, targets[c]))  # a press spent blocking a disengage is no attack
                    else:
                        kinds.append((DEFENDS if action == ACTION_DEFEND else NO_ATTACK, -1))
                moving = tuple(ACTION_NONE if a in (ACTION_ATTACK, ACTION_QUICK_ATTACK, ACTION_DEFEND) else a
                               for a in actions)
                pressing = tuple(t if a == ACTION_PRESS else -1 for a, t in zip(actions, targets, strict=True))
                view = (tuple(kinds), self._views.number((moving, pressing, marks)))
                if view in merged:
                    merged[view][0] += p
                else:
                    merged[view] = [p, *view, moving, pressing, marks]
            grouped: dict[tuple, list] = {}
            for p, kinds, declaration, *view in merged.values():
                grouped.setdefault(kinds, []).append((p, declaration, *view))
            # groups alike in their declarations share their mixes
            cached = self._declared[key] = [
                (kinds, self._kinds.number(kinds),
                 self._mix_tables.setdefault(tuple((p, declaration) for p, declaration, *_ in plans), {}), plans)
                for kinds, plans in grouped.items()]
        return cached

    def _declarations(self, seen: tuple, targeted: tuple) -> list:
        """[((actions, targets, targeted), probability)]: one policy d100 per combatant that declares
        (``seen``: None, or its target, whether it is engaged and whether it dual wields)."""
        branches = [((), (), targeted, self.one)]
        for c in range(self.count):
            if seen[c] is None:
                branches = [((*a, ACTION_NONE), (*t, -1), marks, w) for a, t, marks, w in branches]
                continue
            row = self.table[c]
            target, engaged, dual = seen[c]
            choices: dict[int, Fraction] = {}
            low = 0
            given = self._given[c] if self._given is not None else None
            for action, p in given or ():
                if not _legal(action, 1, engaged, row[C_DUAL_ALLOWED] and not dual):
                    action = ACTION_NONE  # masked: the engine plays it as nothing
                choices[action] = choices.get(action, 0) + p
            for index, action in enumerate(POLICY_ACTIONS if given is None else ()):
                high = row[C_POLICY + index]
                if high > low:
                    if row[C_DUAL_ALLOWED] and not dual:
                        action = ACTION_TOGGLE_DUAL_WIELD
                    elif action == ACTION_FLEE and engaged:
                        action = ACTION_DISENGAGE  # flee is blocked while engaged
                    elif action == ACTION_DISENGAGE and not engaged:
                        action = ACTION_ATTACK
                    choices[action] = choices.get(action, 0) + Fraction(high - low, D100)
                low = max(low, high)
            following = []
            for a, t, marks, w in branches:
                for action, p in choices.items():
                    new_marks = marks
                    if action in (ACTION_ATTACK, ACTION_QUICK_ATTACK, ACTION_CHARGE, ACTION_PRESS):
                        new_marks = (*marks[:target], True, *marks[target + 1:])
                    following.append(((*a, action), (*t, target), new_marks, w * self._probability(p)))
            branches = following
        return [((a, t, marks), w) for a, t, marks, w in branches]

    def _attack_law(self, c: int, t: int, steps: int, cover: bool, dual: bool) -> list:
        """[(wounds dealt, in order, probability)]: one attack roll and, on a success, each weapon's
        damage d100 (both weapons when dual wielding)."""
        key = (c, t, steps, cover, dual)
        law = self._attack_laws.get(key)
        if law is None:
            row = self.table[c]
            bars = row[C_ATTACK + 4 * steps:C_ATTACK + 4 * steps + 4]
            successes = sum(tier_law(bars)[:model.SUCCESS + 1])
            per_weapon = []
            for w in range(2 if dual else 1):
                column = damage_column(w, int(cover), self.table[t][C_ARMOUR], int(dual))
                wound_odds = wound_law(row[column], row[column + 1])
                per_weapon.append([((wound, bool(row[C_NONLETHAL + w])), p) for wound, p in wound_odds.items() if p])
            combined: dict[tuple, Fraction] = {(): 1 - successes}
            hits: dict[tuple, Fraction] = {(): successes}
            for weapon in per_weapon:
                hits = {(*wounds, wound): p * q for wounds, p in hits.items() for wound, q in weapon}
            for wounds, p in hits.items():
                combined[wounds] = combined.get(wounds, 0) + p
            law = self._attack_laws[key] = [(wounds, self._probability(p)) for wounds, p in combined.items() if p]
        return law

    def _contest(self, disengager: int, blocker: int):
        key = (disengager, blocker)
        if key not in self._contests:
            self._contests[key] = self._probability(first_wins(
                self.table[disengager][C_PRESS:C_PRESS + CONTEST_FIELDS],
                self.table[blocker][C_PRESS:C_PRESS + CONTEST_FIELDS]))
        return self._contests[key]

    def _engage_and_move(self, state: tuple, actions: tuple, targets: tuple, attacked: tuple, targeted: tuple) -> list:
        """Engagement and the moves after the attacks: [(("end", keys) or (people, targeted), probability)]."""
        ended = self._decided(state)
        if ended:
            return [(("end", ended), self.one)]
        state = [list(person) for person in state]
        self._engage(state, actions, attacked)
        results: list = []
        for final, w in self._moves(state, actions, targets, targeted):
            ended = self._decided(final)
            if ended:
                results.append((("end", ended), w))
            else:
                people_after = tuple(GONE if p[STATUS] == OUT else (*p[:COVER], p[COVER] and self.cover_counts[c], *p[DUAL:])
                                     if p[STATUS] == IN else (ESCAPED, 0, 0, False, False, 0, -1)
                                     for c, p in enumerate(final))
                results.append(((people_after, targeted), w))
        return results

    def _after_attacks(self, people: tuple, wounded: tuple) -> tuple:
        """The people with their (status, deadly flesh, serious) after the attacks: whoever is out is
        gone, and its partner no longer engaged."""
        return tuple(GONE if status == OUT else (
            status, flesh, serious, *person[COVER:PARTNER],
            -1 if person[PARTNER] >= 0 and wounded[person[PARTNER]][0] == OUT
            and people[person[PARTNER]][PARTNER] == c else person[PARTNER])
            for c, (person, (status, flesh, serious)) in enumerate(zip(people, wounded, strict=True)))

    def _attack_outcomes(self, people: tuple, kinds: tuple) -> list:
        """[((status, deadly flesh, serious) per combatant, attacker -> target, probability)] after
        the attacks. They read only each combatant's status, wounds, cover and dual wield, so
        states alike in those share them (taking someone out also ends its engagement: the
        caller does that)."""
        seen = tuple(person[:DUAL + 1] for person in people)
        key = (seen, kinds)
        cached = self._attack_changes.get(key)
        if cached is None:
            worlds = {(people, (-1,) * self.count): self.one}
            for kind in (QUICK, STANDARD):
                following: dict[tuple, object] = {}
                for (state, attacked), weight in worlds.items():
                    for result, p in self._batch(state, attacked, kinds, kind):
                        following[result] = following.get(result, 0) + weight * p
                worlds = following
            cached = self._attack_changes[key] = [
                (tuple(person[:SERIOUS + 1] for person in state), attacked, w) for (state, attacked), w in worlds.items()]
        return cached

    def _batch(self, state: tuple, attacked: tuple, kinds: tuple, kind: int) -> list:
        """One batch of attacks, rolled against ``state`` and landing together: [((state, attacked),
        probability)]. Each target's wounds depend only on the attacks at it, so the batch is the
        product of the targets' wound laws; a lethal wound takes the target out after the batch."""
        m = self.count
        attacked = list(attacked)
        at: dict[int, list] = {}  # target -> the attack laws' keys, in attacker order
        for c in range(m):
            if state[c][STATUS] != IN:
                continue
            own, t = kinds[c]
            if own != kind:
                continue
            if state[t][STATUS] != IN:  # out in the quick attacks: the first opponent still in
                t = next((o for o in self.foes[c] if state[o][STATUS] == IN), -1)
                if t < 0:
                    continue
            cover = state[t][COVER] and bool(self.table[c][C_RANGED])  # cover counts for ranged attacks only
            dual = state[c][DUAL]
            steps = int(kind == QUICK) + int(dual) + int(cover) + int(kinds[t][0] == DEFENDS)
            attacked[c] = t
            at.setdefault(t, []).append((c, t, steps, cover, dual))
        attacked = tuple(attacked)
        outcomes = [([list(person) for person in state], self.one)]
        for t, laws in at.items():
            following = []
            for s, w in outcomes:
                for (flesh, serious, dead), p in self._wounds(state[t][FLESH], state[t][SERIOUS], tuple(laws)):
                    s2 = [person.copy() for person in s]
                    s2[t][FLESH], s2[t][SERIOUS] = flesh, serious
                    if dead:
                        s2[t][STATUS] = -1  # out once the whole batch has landed
                    following.append((s2, w * p))
            outcomes = following
        results = []
        for s, w in outcomes:
            for t in range(m):
                if s[t][STATUS] == -1:
                    s[t][STATUS] = IN
                    self._take_out(s, t, OUT)
            results.append(((tuple(GONE if p[STATUS] == OUT else tuple(p) for p in s), attacked), w))
        return results

    def _wounds(self, flesh: int, serious: int, laws: tuple) -> list:
        """[((deadly flesh, serious, dead), probability)] after the attacks ``laws`` at one target
        in order, escalating after each wound; every dead outcome is one."""
        key = (flesh, serious, laws)
        cached = self._wound_laws.get(key)
        if cached is None:
            outcomes = {(flesh, serious, False): self.one}
            for law in laws:
                following: dict[tuple, object] = {}
                for (f, s, dead), w in outcomes.items():
                    for wounds, p in self._attack_law(*law):
                        f2, s2, lethal = f, s, int(dead)
                        for wound, nonlethal in wounds:
                            f2, s2, lethal, _, _ = model.record_wound(f2, s2, lethal, wound, nonlethal)
                        after = (0, 0, True) if lethal else (f2, s2, False)
                        following[after] = following.get(after, 0) + w * p
                outcomes = following
            cached = self._wound_laws[key] = list(outcomes.items())
        return cached

    def _take_out(self, state: list, c: int, status: int) -> None:
        self._release(state, c)
        state[c][STATUS] = status

    def _release(self, state: list, c: int) -> None:
        partner = state[c][PARTNER]
        if partner >= 0 and state[partner][PARTNER] == c:
            state[partner][PARTNER] = -1
        state[c][PARTNER] = -1

    def _engage(self, state: list, actions: tuple, attacked: list) -> None:
        """An engaging attack (a charge with any weapon, or a melee attack) pairs attacker and target
        when both are still in, unless either made or took another engaging attack this pass; a
        charger leaves its cover."""
        m = self.count

        def engaging(c: int) -> int:
            t = attacked[c]
            return t if t >= 0 and (actions[c] == ACTION_CHARGE or not self.table[c][C_RANGED]) else -1

        involved = [set() for _ in range(m)]
        for c in range(m):
            if attacked[c] >= 0 and actions[c] == ACTION_CHARGE:
                state[c][COVER] = False
            t = engaging(c)
            if t >= 0:
                involved[c].add(t)
                involved[t].add(c)
        for c in range(m):
            t = engaging(c)
            if (t >= 0 and state[c][STATUS] == IN and state[t][STATUS] == IN and involved[c] == {t}
                    and involved[t] == {c} and state[c][PARTNER] != t):
                self._release(state, c)
                self._release(state, t)
                state[c][PARTNER], state[t][PARTNER] = t, c

    def _moves(self, state: list, actions: tuple, targets: tuple, targeted: tuple) -> list:
        """Take cover, dual wield, disengage and flee, in table order: [(state, probability)]."""
        branches = [(state, self.one)]
        for c in range(self.count):
            action = actions[c]
            following = []
            for s, w in branches:
                if s[c][STATUS] != IN:
                    following.append((s, w))
                    continue
                if action in (ACTION_TAKE_COVER, ACTION_TOGGLE_DUAL_WIELD):
                    s = [p.copy() for p in s]
                    s[c][COVER if action == ACTION_TAKE_COVER else DUAL] = True
                    following.append((s, w))
                elif action == ACTION_DISENGAGE and s[c][PARTNER] >= 0:
                    partner = s[c][PARTNER]
                    released = [q.copy() for q in s]
                    self._release(released, c)
                    if actions[partner] == ACTION_PRESS and targets[partner] == c:
                        p = self._contest(c, partner)
                        following.extend([(released, w * p), (s, w * (1 - p))])
                    else:
                        following.append((released, w))
                elif action == ACTION_FLEE:
                    if s[c][PARTNER] >= 0:
                        following.append((s, w))  # engaged by an attack this pass: blocked
                        continue
                    fled = [q.copy() for q in s]
                    self._take_out(fled, c, ESCAPED)
                    if not targeted[c]:
                        following.append((fled, w))  # nobody targets it: it leaves without a roll
                        continue
                    target = flee_target(self.table[c][C_FLEE_BASE], s[c][FAILED])
                    p = self._probability(Fraction(max(0, min(target, D100)), D100))
                    stayed = [q.copy() for q in s]
                    stayed[c][FAILED] = min(stayed[c][FAILED] + 1, self.flee_cap[c])
                    stayed[c][COVER] = True  # a failure leaves it in cover at its position
                    following.extend([(fled, w * p), (stayed, w * (1 - p))])
                else:
                    following.append((s, w))
            branches = [(s, w) for s, w in following if w]
        return branches

    def _decided(self, state: list) -> tuple:
        """The outcome keys when a side has nobody left in the fight, else ()."""
        standing = [False, False]
        for c in range(self.count):
            if state[c][STATUS] == IN:
                standing[self.side[c]] = True
        if standing[0] and standing[1]:
            return ()
        escaped = [c for c in range(self.count) if state[c][STATUS] == ESCAPED]
        keys: tuple = (("escapes",),) if escaped else ()
        if not (standing[0] or standing[1]):
            return (("draws",), *keys)
        winner = 0 if standing[0] else 1
        by_flight = any(self.side[c] != winner for c in escaped)
        return (("wins_by_flight" if by_flight else "wins", winner), *keys)
