"""Exact odds of an EXP fight (docs/exp.md, section 3), by stepping the
distribution of the fight's state one unit of combat time at a time.

The state after a unit is every combatant's hit points (0 once out: nothing below 0 matters) and
the to-hit rolls its ammunition has left. In a unit every combatant standing at its start whose
weapon can fire picks a uniformly random enemy standing at the start and fires one unit of fire;
the damage lands at the end of the unit. The chain enumerates, attacker by attacker in table
order, the target die and the exact law of the unit's damage (kilodie faces, the damage dice,
bursts), each roll's rule (the to-hit, a hit, the damage dealt) the engine's.
"""

from __future__ import annotations

import math
from fractions import Fraction

from combatsim.exp.odds import hit_faces, unit_damage_law
from combatsim.fight_odds.chain import Tally, attacker_laws, check_states


class ExpChain:
    """The fight's chain for one scenario spec (combatsim.exp.scenario.build)."""

    step_unit = "units of combat time"
    notes = ("draws: both sides went down in the same unit; unfinished: the unit limit came first "
             "(combatsim fight counts both as draws)",)

    def __init__(self, spec: dict) -> None:
        self.members = [c for side in spec["sides"] for c in side]
        self.side = [s for s, side in enumerate(spec["sides"]) for _ in side]
        self.unit_limit = spec["unit_limit"]
        self.hit_on_equal = spec["hit_on_equal"]
        self.critical = spec["critical"]
        count = len(self.members)
        self.foes = [[t for t in range(count) if self.side[t] != self.side[a]] for a in range(count)]
        self.rolls = [c.weapon.rolls_per_unit for c in self.members]
        self.start = (tuple(c.hit_points for c in self.members),
                      tuple(c.weapon.shots(c.ammunition) for c in self.members))

    def exact_digits(self) -> int:
        """Digits of the common denominator after the unit limit (each unit multiplies it by every
        attacker's denominator, at most 1000 ** rolls x (4 sides ** dice) ** rolls... bounded here
        by the laws' own denominators)."""
        _, denominators = self._laws(True)
        return int(self.unit_limit * sum(math.log10(d) for d in denominators)) + 1

    def state_bound(self) -> int:
        """Hit points 0..HP of each combatant times the shots left of each limited weapon."""
        hit_points, shots = self.start
        return math.prod(h + 1 for h in hit_points) * math.prod(
            s // r + 2 for s, r in zip(shots, self.rolls, strict=True) if s >= 0)

    def _laws(self, exact: bool) -> tuple[dict, list[int]]:
        """(attacker, target, rolls, enemies standing) -> [(damage, weight)]; and each attacker's
        denominator, the lcm of its outcomes' (exact: weights are integers over it; float64: 1)."""
        raw: dict[tuple, dict[int, Fraction]] = {}
        for a, attacker in enumerate(self.members):
            shots = self.start[1][a]
            roll_counts = {self.rolls[a]} | ({shots % self.rolls[a]} if shots > 0 else set())
            roll_counts.discard(0)
            for t in self.foes[a]:
                target = self.members[t]
                faces = hit_faces(attacker.bonus, attacker.maximum_roll, attacker.adjustment, target.armour_rating,
                                  self.hit_on_equal, self.critical)
                for rolls in roll_counts:
                    law = unit_damage_law(faces, attacker.weapon.damage, attacker.damage_adjustment, rolls,
                                          attacker.weapon.automatic, target.hit_points)
                    for enemies in range(1, len(self.foes[a]) + 1):
                        raw[a, t, rolls, enemies] = {v: p / enemies for v, p in law.items()}
        return attacker_laws(raw, len(self.members), exact)

    def run(self, tally: Tally, max_states: int) -> int:
        """Step the chain to its end, tallying ended fights; the largest number of live states."""
        laws, denominators = self._laws(tally.exact)
        if len(self.members) == 2:
            return self._duel(tally, laws, denominators)
        return self._teams(tally, laws, denominators, max_states)

    def _duel(self, tally: Tally, laws: dict, denominators: list[int]) -> int:
        """One against one: each is the other's only target, so the two hit point tracks move
        independently until the fight ends. With S_a(u) the chance that combatant a still stands
        after u units of the other's fire alone and K_a(u) the chance it goes down in unit u,
        side 0 wins in unit u with chance K_1(u) S_0(u), side 1 with K_0(u) S_1(u), a draw
        K_0(u) K_1(u); unfinished S_0(L) S_1(L) at the limit L. Each track is a 1-D chain, hit
        points by the damage law; every figure is a sum of products of nonnegative numbers."""
        (survival0, down0), (survival1, down1) = (self._track(a, laws, denominators[1 - a], tally) for a in (0, 1))
        scale = denominators[0] * denominators[1] if tally.exact else 1
        for unit in range(1, self.unit_limit + 1):
            tally.next_step(scale)
            tally.add(("wins", 0), down1[unit] * survival0[unit])
            tally.add(("wins", 1), down0[unit] * survival1[unit])
            tally.add(("draws",), down0[unit] * down1[unit])
            tally.operations += 3
            if unit == self.unit_limit:
                tally.add(("unfinished",), survival0[unit] * survival1[unit])
            if not survival0[unit] or not survival1[unit]:
                break
        tally.flush()
        return max(self.start[0]) + 1

    def _track(self, target: int, laws: dict, denominator: int, tally: Tally) -> tuple[list, list]:
        """The weights that ``target`` still stands after u = 0..L units of its foe's fire, and that
        it goes down in unit u (index 0: nothing), over the foe's denominator to the power u
        (exact) or as probabilities."""
        attacker = 1 - target
        shots, rolls = self.start[1][attacker], self.rolls[attacker]
        points = {self.start[0][target]: tally.one()}
        survival, down = [tally.one()], [0]
        for _ in range(self.unit_limit):
            fired = rolls if shots < 0 else min(rolls, shots)
            if shots > 0:
                shots -= fired
            fallen = 0
            if fired:
                law = laws[attacker, target, fired, 1]
                following: dict[int, int | float] = {}
                for before, w in points.items():
                    for dealt, p in law:
                        if dealt < before:
                            following[before - dealt] = following.get(before - dealt, 0) + w * p
                        else:
                            fallen += w * p
                tally.operations += 2 * len(law) * len(points)
                points = tally.prune(following)
            elif shots == 0:  # the foe's weapon is empty: nothing changes to the limit
                standing = sum(points.values())
                while len(survival) <= self.unit_limit:
                    if tally.exact:
                        standing *= denominator
                    survival.append(standing)
                    down.append(0)
                break
            survival.append(sum(points.values()))
            down.append(fallen)
            if not points:  # down for certain (float64: underflowed): nothing more happens
                survival.extend([0] * (self.unit_limit + 1 - len(survival)))
                down.extend([0] * (self.unit_limit + 1 - len(down)))
                break
        return survival, down

    def aims(self, hit_points: tuple, shots: tuple, laws: dict) -> list:
        """Each combatant's scripted unit (``unit_of_fire``'s ``aims``): the target die over the
        enemies standing, the laws' weights over its denominator (exact) or probabilities."""
        aims = []
        for a in range(len(self.members)):
            if hit_points[a] <= 0 or shots[a] == 0:
                aims.append(None)
                continue
            rolls = self.rolls[a] if shots[a] < 0 else min(self.rolls[a], shots[a])
            enemies = [t for t in self.foes[a] if hit_points[t] > 0]
            aims.append((rolls, [(t, 1, laws[a, t, rolls, len(enemies)]) for t in enemies]))
        return aims

    def _teams(self, tally: Tally, laws: dict, denominators: list[int], max_states: int) -> int:
        count = len(self.members)
        step_factor = math.prod(denominators)
        distribution = {self.start: tally.one()}
        peak = 1
        while distribution:
            tally.next_step(step_factor)
            unit = tally.step
            following: dict[tuple, int | float] = {}
            for (hit_points, shots), weight in distribution.items():
                aims = self.aims(hit_points, shots, laws)
                # exact: who does not fire still rolls certainty over its denominator
                idle = math.prod(denominators[a] for a, aim in enumerate(aims) if aim is None) if tally.exact else 1
                partial, done = unit_of_fire(hit_points, shots, aims, weight)
                tally.operations += done
                for (points, shots_key), w in partial.items():
                    if idle != 1:
                        w *= idle
                    up = [False, False]
                    for t in range(count):
                        if points[t]:
                            up[self.side[t]] = True
                    if up[0] and up[1]:
                        if not any(points[t] and shots_key[t] for t in range(count)):
                            tally.add(("unfinished",), w, length=self.unit_limit)  # no one can fire again
                        elif unit == self.unit_limit:
                            tally.add(("unfinished",), w)
                        else:
                            key = (points, shots_key)
                            following[key] = following.get(key, 0) + w
                    elif up[0] or up[1]:
                        tally.add(("wins", 0 if up[0] else 1), w)
                    else:
                        tally.add(("draws",), w)
            distribution = tally.prune(following)
            peak = max(peak, len(distribution))
            check_states(len(distribution), max_states)
        tally.flush()
        return peak


def unit_of_fire(hit_points: tuple, shots: tuple, aims, weight) -> tuple[dict, int]:
    """One unit of combat time of a team fight from ``hit_points`` and ``shots`` (``weight``: its
    weight): ``aims[a]`` is None for a combatant that does not fire (down, or no shots left), else
    (rolls, [(target, chance, law)]): the to-hit rolls a unit of its fire makes and, per target
    (-1: it holds, spending no shots; law unused), the chance it aims there and the law of the
    damage it deals there, [(damage, weight)]. Attackers in table order; each fires at whoever
    stood at the unit's start, and the damage lands at its end (so the order does not matter).
    Returns {(hit points, shots): weight} after the unit, and the floating operations done."""
    partial = {(hit_points, shots): weight}
    operations = 0
    for a, aim in enumerate(aims):
        if aim is None:
            continue
        rolls, targets = aim
        expanded: dict[tuple, int | float] = {}
        for (points, left), w in partial.items():
            spent = left if left[a] < 0 else (*left[:a], left[a] - rolls, *left[a + 1:])
            for t, chance, law in targets:
                aimed = w if chance == 1 else w * chance
                if t < 0:
                    expanded[points, left] = expanded.get((points, left), 0) + aimed
                    continue
                before = points[t]
                for dealt, p in law:
                    after = before - dealt if dealt < before else 0
                    key = (points if after == before else (*points[:t], after, *points[t + 1:]), spent)
                    expanded[key] = expanded.get(key, 0) + aimed * p
                operations += 2 * len(law)
        partial = expanded
    return partial, operations
