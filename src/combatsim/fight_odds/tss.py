"""Exact odds of a TSS fight (docs/tss.md, sections 2-6), by stepping the
distribution of the fight's state one round at a time and, inside a round, one attack at a time.

The state between rounds is the stun, wound and mortal points each character has lost (capped at
its tracks; a character out of the fight is one state). At the start of a round every character
still in rolls Resolve-physical (if it has it) and its action check; characters whose action
check scores tie are ordered by their tie-break words, high first, then by index: for k tied
characters and N = 2^32 faces, an order with d places where a higher index comes first has
chance C(N + k - 1 - d, k) / N^k (weakly decreasing words, strictly where the index falls).
These choices fix the round's schedule of actions; the attacks then land one at a time, each at
the lowest-index enemy still in, with the attacker's dazed penalty as it stands. The scripted
policy's choices are part of the chain: a character with an aim chance holds an aim bit (its state
is then (stun, wound, mortal, 1)), aims by its policy d100 when it holds none, and uses it up on its
next attack; a two-weapon action is the main-hand attack, then the off-hand one at the first foe
still in.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

from combatsim.dice import Dice
from combatsim.fight_odds.chain import Tally, attacker_laws, check_states, lcm_all, scaled
from combatsim.tss.engine import (
    R_ACTION_CHECK,
    R_ACTIONS,
    R_AIM_CHANCE,
    R_AMBIDEXTERITY,
    R_ARMOUR,
    R_ARMOUR_QUALITY,
    R_ATTACK_STEPS,
    R_BROAD,
    R_DAMAGE,
    R_DEFENCE_STEPS,
    R_HAS_RESOLVE,
    R_HAS_SECOND,
    R_MORTAL,
    R_RESOLVE,
    R_SIDE,
    R_SKILL,
    R_STUN,
    R_TWO_WEAPONS,
    R_WEAPON_CLASS,
    R_WEAPON_QUALITY,
    R_WOUND,
    ROW_BASE,
    SECOND,
    dazed_steps,
    own_steps,
    shift_type,
    tier_of,
)
from combatsim.tss.odds import damage_law, situation_law, tier_law

#: Faces of a tie-break word (a raw 32-bit word).
TIE_FACES = 2**32
#: Phases: Amazing, Good, Ordinary, Marginal; a character out of the fight gets NEVER.
PHASES = 4
NEVER = PHASES
#: The state of a character out of the fight.
OUT = None


def ties_order_chance(order: tuple[int, ...]) -> Fraction:
    """The chance that tie-break words sort ``order`` (indices) first to last: words high first,
    equal words by index."""
    k = len(order)
    falls = sum(a > b for a, b in itertools.pairwise(order))
    return Fraction(math.comb(TIE_FACES + k - 1 - falls, k), TIE_FACES**k)


class TssChain:
    """The fight's chain for one scenario spec (combatsim.tss.scenario.build)."""

    step_unit = "rounds"
    notes = ("attacks land one at a time, so there are no draws; unfinished: max_rounds came first "
             "(combatsim fight counts it as a draw)",)

    def __init__(self, spec: dict, choices: bool = False) -> None:
        from combatsim.tss.api import fight_table

        #: True: laws for every attack a member may choose (aimed or not, one weapon or two), not
        #: only its scripted policy's (combatsim.solve.tss)
        self.choices = choices
        table, count, classes = fight_table(spec["sides"][0], spec["sides"][1])
        width = ROW_BASE + 4 * classes
        self.rows = [[int(v) for v in table[i * width:(i + 1) * width]] for i in range(count)]
        self.count = count
        self.max_rounds = spec["max_rounds"]
        self.one_step = spec["one_step_shift"]
        self.tracks = [(row[R_STUN], row[R_WOUND], row[R_MORTAL]) for row in self.rows]
        self.side = [row[R_SIDE] for row in self.rows]
        self.foes = [[j for j in range(count) if self.side[j] != self.side[i]] for i in range(count)]
        scores = [row[R_ACTION_CHECK + 2] for row in self.rows]
        self.tie_groups = [group for score in sorted(set(scores), reverse=True)
                           if len(group := [i for i in range(count) if scores[i] == score]) > 1]
        # the round's order: action check score high first; ties settled by tie_groups' orders
        self.by_score = sorted(range(count), key=lambda i: (-scores[i], i))
        # the scripted policy's choices: the aim chance (percent), and 2 attacks an action with two weapons
        self.aim_chance = [row[R_AIM_CHANCE] for row in self.rows]
        self.hands = [2 if row[R_TWO_WEAPONS] and row[R_HAS_SECOND] else 1 for row in self.rows]
        self.tactics = any(self.aim_chance) or max(self.hands) > 1

    def exact_digits(self) -> int:
        """Digits of the common denominator after max_rounds rounds."""
        self._laws(True)
        per_round = (sum(math.log10(d) for d in self.start_denominators) + 32 * math.log10(2) * sum(map(len, self.tie_groups))
                     + sum(math.log10(d) * row[R_ACTIONS] for d, row in zip(self.slot_denominators, self.rows, strict=True)))
        return int(self.max_rounds * per_round) + 1

    def state_bound(self) -> int:
        return math.prod((s + 1) * (w + 1) * (m + 1) * (2 if chance else 1)
                         for (s, w, m), chance in zip(self.tracks, self.aim_chance, strict=True))

    def _strikes(self, i: int) -> list[tuple[int, int]]:
        """(aimed, hand) of the attacks ``i`` may make (engine.own_steps's codes)."""
        if self.choices:
            return [(aimed, hand) for aimed in (0, 1) for hand in ((0, 1, 2) if self.rows[i][R_HAS_SECOND] else (0,))]
        aims = (0, 1) if self.aim_chance[i] else (0,)
        hands = (1, 2) if self.hands[i] == 2 else (0,)
        return [(aimed, hand) for aimed in aims for hand in hands]

    def dazed(self, i: int, lost: tuple[int, int, int], negated: int) -> int:
        stun, wound, _mortal = self.tracks[i]
        return dazed_steps(lost[0], stun, lost[1], wound, lost[2], negated)

    def _penalties(self, i: int) -> range:
        return range(0, 2 + self.tracks[i][2])

    def _laws(self, exact: bool) -> None:
        """Every law a round uses, as integer weights over fixed denominators (exact)."""
        self.start_laws: list[dict[int, list]] = []  # i -> penalty -> [((negated, phase), w)]
        self.start_denominators = []
        for i, row in enumerate(self.rows):
            if row[R_HAS_RESOLVE]:
                resolve: dict[int, Fraction] = {}
                for roll in range(1, 21):
                    tier = tier_of(roll, roll, *row[R_RESOLVE:R_RESOLVE + 3])
                    negated = 3 - tier if tier <= 2 else 0
                    resolve[negated] = resolve.get(negated, 0) + Fraction(1, 20)
            else:
                resolve = {0: Fraction(1)}
            laws = {}
            for penalty in self._penalties(i):
                joint: dict[tuple[int, int], Fraction] = {}
                for negated, q in resolve.items():
                    for roll, p in situation_law(max(0, penalty - negated)).items():
                        for die in range(1, 21):
                            phase = min(3, tier_of(0, die + roll, *row[R_ACTION_CHECK:R_ACTION_CHECK + 3]))
                            joint[negated, phase] = joint.get((negated, phase), 0) + q * p / 20
                laws[penalty] = joint
            denominator = lcm_all([p.denominator for law in laws.values() for p in law.values()])
            self.start_denominators.append(denominator if exact else 1)
            self.start_laws.append({k: scaled(law, denominator, exact) for k, law in laws.items()})
        self._outcome_cache: dict[tuple, tuple] = {}
        raw = {}  # (attacker, target, penalty, aimed, hand) -> the attack's law
        for i, row in enumerate(self.rows):
            for j in self.foes[i]:
                for aimed, hand in self._strikes(i):
                    weapon = SECOND if hand == 2 else 0
                    damage = {tier: self._damage_law(i, j, tier, weapon) for tier in range(3)}
                    own = own_steps(aimed, row[R_BROAD], hand, row[R_AMBIDEXTERITY])
                    for penalty in self._penalties(i):  # dazed: 2 at most for stun and wound, mortal lost < track
                        steps = row[R_ATTACK_STEPS] + own + self.rows[j][R_DEFENCE_STEPS] + penalty
                        law: dict[tuple[int, int, int], Fraction] = {}
                        for tier, p in tier_law(steps, *row[R_SKILL:R_SKILL + 3]).items():
                            for done, q in (damage[tier].items() if tier <= 2 else [((0, 0, 0), Fraction(1))]):
                                law[done] = law.get(done, 0) + p * q
                        raw[i, j, penalty, aimed, hand] = law
        self.attack_laws, self.attack_denominators = attacker_laws(raw, self.count, exact)
        # An action's weights sum to its slot denominator: the policy d100 (an aim chance strictly
        # between 0 and 100), then one attack's, or two's with two weapons.
        self.slot_denominators = [(100 if exact and 0 < chance < 100 else 1) * d ** hands for d, chance, hands in
                                  zip(self.attack_denominators, self.aim_chance, self.hands, strict=True)]

    def _damage_law(self, i: int, j: int, tier: int, weapon: int = 0) -> dict[tuple[int, int, int], Fraction]:
        """(stun, wound, mortal) an attack of degree ``tier`` with ``weapon`` (0, or SECOND) deals: the
        tier's dice, its type shifted by quality when the target's armour has a die for the class,
        secondary damage from the pre-armour amount, the armour roll off the primary (docs/tss.md,
        section 4)."""
        row, target = self.rows[i], self.rows[j]
        base = R_DAMAGE + weapon + 4 * tier
        count, sides, modifier, damage_type = row[base:base + 4]
        armour = R_ARMOUR + 4 * row[R_WEAPON_CLASS + weapon]
        soak = None
        if target[armour]:
            damage_type = shift_type(damage_type, row[R_WEAPON_QUALITY + weapon], target[R_ARMOUR_QUALITY],
                                     self.one_step)
            soak = Dice(target[armour + 1], target[armour + 2], target[armour + 3])
        return damage_law(Dice(count, sides, modifier), damage_type, soak)

    def run(self, tally: Tally, max_states: int) -> int:
        exact = tally.exact
        self._laws(exact)
        ties = [TIE_FACES ** len(group) if exact else 1 for group in self.tie_groups]
        actions = [row[R_ACTIONS] for row in self.rows]
        if not exact and self.count == 2 and not self.tactics:
            return self._duel(tally, ties)
        slot_budget = math.prod(d ** a for d, a in zip(self.slot_denominators, actions, strict=True))
        round_factor = math.prod(self.start_denominators) * math.prod(ties) * slot_budget
        distribution = {tuple((0, 0, 0) for _ in range(self.count)): tally.one()}
        peak = 1
        schedule_cache: dict[tuple, dict] = {}
        for round_number in range(1, self.max_rounds + 1):
            tally.next_step(round_factor)
            # states that share a round's start (negations and order of attacks) play it together
            by_schedule: dict[tuple, dict[tuple, int | float]] = {}
            for lost, weight in distribution.items():
                start = tuple(OUT if state is OUT else self.dazed(i, state, 0) for i, state in enumerate(lost))
                if start not in schedule_cache:
                    schedule_cache[start] = self._schedules(lost, ties)
                for key, w in schedule_cache[start].items():
                    states = by_schedule.setdefault(key, {})
                    states[lost] = states.get(lost, 0) + weight * w
            following: dict[tuple, int | float] = {}
            for (negated, schedule), states in by_schedule.items():
                self._play(states, negated, schedule, actions, tally, following)
            if round_number == self.max_rounds:
                for w in following.values():
                    tally.add(("unfinished",), w)
                following = {}
            distribution = tally.prune(following)
            peak = max(peak, len(distribution))
            check_states(len(distribution), max_states)
            if not distribution:
                break
        tally.flush()
        return peak

    def _round_openings(self, lost: tuple, ties: list[int]) -> dict[tuple, int | float]:
        """A round's opening draws from state ``lost`` (Resolve, action checks, tie-break words):
        (negations, phases, acting order) -> weight, over the start laws' and ``ties``' denominators
        (exact) or a probability."""
        starts: dict[tuple, int | float] = {((), ()): 1}
        for i in range(self.count):
            if lost[i] is OUT:
                starts = {((*n, 0), (*p, NEVER)): w * self.start_denominators[i] for (n, p), w in starts.items()}
                continue
            law = self.start_laws[i][self.dazed(i, lost[i], 0)]
            starts = {((*n, negated), (*p, phase)): w * q for (n, p), w in starts.items()
                      for (negated, phase), q in law}
        orders: list[tuple[tuple[int, ...], int | float]] = [((), 1)]
        for group, factor in zip(self.tie_groups, ties, strict=True):
            active = [i for i in group if lost[i] is not OUT]
            options = []
            for order in itertools.permutations(active):
                chance = ties_order_chance(order)
                # exact: over TIE_FACES ** len(group), whoever of the group is still in
                options.append((order, chance.numerator * (factor // chance.denominator) if factor != 1
                                else float(chance)))
            orders = [(o + order, w * q) for o, w in orders for order, q in options]
        return {(negated, phases, tuple(self._order(tied_order, lost))): w * q
                for (negated, phases), w in starts.items() for tied_order, q in orders}

    def _schedules(self, lost: tuple, ties: list[int]) -> dict[tuple, int | float]:
        """The round's start, from state ``lost``: (negations, order of attacks) -> weight."""
        schedules: dict[tuple, int | float] = {}
        for (negated, phases, order), w in self._round_openings(lost, ties).items():
            used = [0] * self.count
            slots = []
            for current in range(PHASES):
                for i in order:
                    if phases[i] <= current and used[i] < self.rows[i][R_ACTIONS]:
                        used[i] += 1
                        slots.append(i)
            key = (negated, tuple(slots))
            schedules[key] = schedules.get(key, 0) + w
        return schedules

    def _order(self, tied_order: tuple[int, ...], lost: tuple) -> list[int]:
        """The round's order of the characters still in: by action check score; each tie group in
        ``tied_order``'s order."""
        placed = iter(tied_order)
        tied = {i for group in self.tie_groups for i in group}
        return [next(placed) if i in tied else i for i in self.by_score if lost[i] is not OUT]

    def _outcomes(self, attacker: int, target: int, penalty: int, lost: tuple, aimed: int = 0,
                  hand: int = 0) -> tuple:
        """One attack on a target whose state is ``lost``: (the weight of taking it out, [(its state
        after, weight)]), outcomes that lead to the same state merged (its aim bit kept)."""
        key = (attacker, target, penalty, lost, aimed, hand)
        cached = self._outcome_cache.get(key)
        if cached is None:
            track = self.tracks[target]
            taken_out = 0
            after: dict[tuple, int | float] = {}
            for (s, w, m), p in self.attack_laws[attacker, target, penalty, aimed, hand]:
                points = (lost[0] + s, lost[1] + w, lost[2] + m, *lost[3:])
                if points[0] >= track[0] or points[1] >= track[1] or points[2] >= track[2]:
                    taken_out += p
                else:
                    after[points] = after.get(points, 0) + p
            cached = self._outcome_cache[key] = (taken_out, list(after.items()))
        return cached

    def _play(self, states: dict, negated: tuple, schedule: tuple, actions: list[int], tally: Tally,
              following: dict) -> None:
        """The actions of ``schedule`` in turn from each of ``states``; ended fights to ``tally``, the
        rest to ``following``. Every path's weight ends over the round's factor: an action not
        taken (attacker out, or fewer slots than actions), an attack not made (the off-hand one
        after a win) and the policy die not drawn (an aim held) count their denominators."""
        denominators = self.slot_denominators  # all 1 in float64
        unused = math.prod(denominators[i] ** (actions[i] - schedule.count(i)) for i in range(self.count))
        remaining = [1] * (len(schedule) + 1)  # product of the denominators of slots k.. onward
        for k in range(len(schedule) - 1, -1, -1):
            remaining[k] = remaining[k + 1] * denominators[schedule[k]]
        for k, attacker in enumerate(schedule):
            chance, hands = self.aim_chance[attacker], self.hands[attacker]
            die = 100 if tally.exact and 0 < chance < 100 else 1
            attack_weight = self.attack_denominators[attacker] if tally.exact else 1
            aim_scale = 100 if tally.exact else 1  # the policy d100's faces: weights are percents
            # (state, weight) of the attacks made now, by whether an aim is used: the rest aim or are out
            attacks: list[dict] = [{}, {}]
            after: dict[tuple, int | float] = {}
            for state, w in states.items():
                mine = state[attacker]
                if mine is OUT:
                    after[state] = after.get(state, 0) + w * denominators[attacker]
                    continue
                aimed = len(mine) > 3
                if chance and not aimed:
                    aiming = w * (chance * die // aim_scale if tally.exact else chance / 100) * attack_weight ** hands
                    new = (*state[:attacker], (*mine, 1), *state[attacker + 1:])
                    after[new] = after.get(new, 0) + aiming
                    if chance < 100:
                        attacks[0][state] = attacks[0].get(state, 0) + w * (
                            (100 - chance) if tally.exact else (100 - chance) / 100)
                    continue
                if aimed:
                    state = (*state[:attacker], mine[:3], *state[attacker + 1:])
                attacks[aimed][state] = attacks[aimed].get(state, 0) + w * die
            won = 0
            for aimed in (0, 1):
                if not attacks[aimed]:
                    continue
                if hands == 1:
                    landed, wins = self._strike(attacks[aimed], attacker, negated, aimed, 0, tally)
                    won += wins
                else:
                    landed, wins = self._strike(attacks[aimed], attacker, negated, aimed, 1, tally)
                    won += wins * attack_weight  # the off-hand attack not made
                    landed, wins = self._strike(landed, attacker, negated, aimed, 2, tally)
                    won += wins
                for state, w in landed.items():
                    after[state] = after.get(state, 0) + w
            if won:
                tally.add(("wins", self.side[attacker]), won * remaining[k + 1] * unused)
            states = after
        for state, w in states.items():
            following[state] = following.get(state, 0) + w * unused

    def _strike(self, states: dict, attacker: int, negated: tuple, aimed: int, hand: int,
                tally: Tally) -> tuple[dict, int | float]:
        """One attack from each of ``states`` (the attacker still in) at the first foe still in:
        (the states after, the weight of the fights it won)."""
        after: dict[tuple, int | float] = {}
        won = 0
        for state, w in states.items():
            target = next(j for j in self.foes[attacker] if state[j] is not OUT)
            penalty = self.dazed(attacker, state[attacker], negated[attacker])
            taken_out, outcomes = self._outcomes(attacker, target, penalty, state[target], aimed, hand)
            if taken_out:
                new = (*state[:target], OUT, *state[target + 1:])
                if all(new[j] is OUT for j in self.foes[attacker]):
                    won += w * taken_out
                else:
                    after[new] = after.get(new, 0) + w * taken_out
            for lost, p in outcomes:
                new = state if lost == state[target] else (*state[:target], lost, *state[target + 1:])
                after[new] = after.get(new, 0) + w * p
            tally.operations += 2 * len(outcomes) + 2
        return after, won

    # --- one against one in float64: the chain as matrices -----------------------------------------

    def _duel(self, tally: Tally, ties: list) -> int:
        """One against one, float64: the distribution is a matrix P[a, b] over the two characters'
        reachable lost points. An attack by character 0 moves the columns: the rows of each dazed
        penalty of character 0 times that penalty's transition matrix over character 1's points;
        character 1's attacks move the rows likewise. The chance of taking the target out goes
        to the attacker's wins."""
        import numpy as np

        states = [sorted(reachable_lost(self, 0, bounded=False)), sorted(reachable_lost(self, 1, bounded=False))]
        index = [{lost: k for k, lost in enumerate(points)} for points in states]
        sizes = [len(points) for points in states]
        # transitions[attacker][penalty] = (matrix over the target's points, chance of taking it out)
        transitions: list[dict[int, tuple]] = [{}, {}]
        for attacker in (0, 1):
            target = 1 - attacker
            for penalty in self._penalties(attacker):
                matrix = np.zeros((sizes[target], sizes[target]))
                out = np.zeros(sizes[target])
                for k, lost in enumerate(states[target]):
                    taken_out, outcomes = self._outcomes(attacker, target, penalty, lost)
                    out[k] = taken_out
                    for after, p in outcomes:
                        matrix[k, index[target][after]] += p
                transitions[attacker][penalty] = (matrix, out)
        start_penalty = [np.array([self.dazed(c, lost, 0) for lost in states[c]]) for c in (0, 1)]
        # the round's schedules for each pair of start penalties, from a representative state of each
        representative = [{} for _ in (0, 1)]
        for c in (0, 1):
            for lost, penalty in zip(states[c], start_penalty[c], strict=True):
                representative[c].setdefault(int(penalty), lost)
        schedules: dict[tuple, np.ndarray] = {}
        penalties = [sorted(representative[c]) for c in (0, 1)]
        for i, pa in enumerate(penalties[0]):
            for j, pb in enumerate(penalties[1]):
                for key, w in self._schedules((representative[0][pa], representative[1][pb]), ties).items():
                    table = schedules.setdefault(key, np.zeros((len(penalties[0]), len(penalties[1]))))
                    table[i, j] += w
        rows = np.searchsorted(penalties[0], start_penalty[0])
        columns = np.searchsorted(penalties[1], start_penalty[1])
        weights = {key: table[np.ix_(rows, columns)] for key, table in schedules.items()}
        dazed = [np.array([[self.dazed(c, lost, n) for lost in states[c]] for n in range(4)]) for c in (0, 1)]
        distribution = np.zeros((sizes[0], sizes[1]))
        distribution[0, 0] = 1.0
        peak = 1
        for _ in range(self.max_rounds):
            tally.next_step(1)
            following = np.zeros_like(distribution)
            won = [0.0, 0.0]
            for (negated, schedule), weight in weights.items():
                matrix = distribution * weight
                for attacker in schedule:
                    penalty = dazed[attacker][negated[attacker]]
                    after = np.zeros_like(matrix)
                    for value, (moves, out) in transitions[attacker].items():
                        if attacker == 0:
                            part = matrix[penalty == value, :]
                            if part.size:
                                won[0] += float((part @ out).sum())
                                after[penalty == value, :] += part @ moves
                        else:  # character 1 attacks character 0: the rows move, by column's penalty
                            part = matrix[:, penalty == value]
                            if part.size:
                                won[1] += float((out @ part).sum())
                                after[:, penalty == value] += moves.T @ part
                    tally.operations += 2 * matrix.size * (max(sizes) + 1)
                    matrix = after
                following += matrix
            for side in (0, 1):
                tally.add(("wins", side), won[side])
            distribution = tally.prune_array(following)
            peak = max(peak, int(np.count_nonzero(distribution)))
            if not distribution.any():
                break
        else:
            tally.add(("unfinished",), float(distribution.sum()))
        tally.flush()
        return peak


def reachable_lost(chain: TssChain, target: int, bounded: bool = True) -> set[tuple[int, int, int]]:
    """The lost points (stun, wound, mortal) member ``target`` can have while in the fight. Only
    attacks take points, and an attack adds one of its law's (stun, wound, mortal) to what the
    target has lost, so these are among the sums of at most (its foes' attacks in max_rounds rounds)
    of the points any attack on it can deal, each below its track (reaching one takes it out): far
    fewer than every combination of points on the three tracks. Not ``bounded``: every sum below the
    tracks, however many attacks it takes (a set that every attack maps into itself)."""
    dealt: set[tuple[int, int, int]] = set()
    attackers: set[int] = set()
    for (i, j, *_), law in chain.attack_laws.items():
        if j == target:
            dealt.update(done for done, _ in law)
            attackers.add(i)
    rows = chain.rows
    most = chain.max_rounds * sum(rows[i][R_ACTIONS] * (2 if rows[i][R_HAS_SECOND] else 1) for i in attackers)
    tracks = chain.tracks[target]
    reached = {(0, 0, 0)}
    frontier = reached
    for _ in range(most) if bounded else itertools.count():
        following = set()
        for lost in frontier:
            for step in dealt:
                after = (lost[0] + step[0], lost[1] + step[1], lost[2] + step[2])
                if after[0] < tracks[0] and after[1] < tracks[1] and after[2] < tracks[2] and after not in reached:
                    following.add(after)
        if not following:
            break
        reached |= following
        frontier = following
    return reached
