"""What every ruleset's fight chain shares: outcome tallies, exact or float64 weights, the error bound.

A ruleset's chain (combatsim.fight_odds.<ruleset>) steps a distribution over fight states, one
round or unit at a time, and hands each ended fight's weight to :class:`Tally` under its outcome
and its length. Weights are integers over a common denominator that grows by a fixed factor each
step (exact arithmetic, no gcd on the way), or float64 probabilities (the factor is 1.0); the
same code runs both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

#: The unit roundoff of float64.
UNIT_ROUNDOFF = 2.0**-53
#: float64 chains drop states less likely than this (their mass joins the error bound).
PRUNE_BELOW = 1e-13
#: Tallied besides a fight's outcome (so not part of the length distribution).
OVERLAPPING = {("escapes",)}


class TooManyStates(ValueError):
    """A scenario whose fight has more states than the limit allows."""


def check_states(bound: int, max_states: int) -> None:
    if bound > max_states:
        raise TooManyStates(
            f"max_states: this fight has up to {bound:,} states, over the limit of {max_states:,}; raise "
            f"--max-states or estimate the odds by simulation with combatsim fight --target-error"
        )


class Numbering:
    """Values (chain states, memo keys) numbered 0, 1, 2... in the order they are first met, so a
    chain keeps small integers in its tables and looks each value up by its number."""

    def __init__(self) -> None:
        self.numbers: dict[tuple, int] = {}
        self.values: list[tuple] = []

    def number(self, value: tuple) -> int:
        number = self.numbers.get(value)
        if number is None:
            number = self.numbers[value] = len(self.values)
            self.values.append(value)
        return number

    def __len__(self) -> int:
        return len(self.values)


@dataclass
class Tally:
    """Ended fights' weight by (outcome key, length); ``scale`` is the weight of certainty after
    ``step`` steps (the product of the steps' denominators; 1.0 in float64)."""

    exact: bool
    scale: int | float = 1
    step: int = 0
    #: (key, length) -> weight over ``scale`` at that length; keys: ("wins", side), ("draws",), ...
    ended: dict[tuple, Fraction | float] = field(default_factory=dict)
    #: floating operations done, for the float64 error bound
    operations: int = 0
    #: float64: the probability of the states dropped by ``prune``
    dropped: float = 0.0
    #: this step's ended weights, over ``scale``, not yet divided
    pending: dict[tuple, int | float] = field(default_factory=dict)

    def prune(self, states: dict) -> dict:
        """float64 only: drop the states below ``PRUNE_BELOW``, counting their mass in the error
        bound (it could belong to any outcome). Exact weights are never dropped."""
        if self.exact:
            return states
        kept = {}
        for state, weight in states.items():
            if weight < PRUNE_BELOW:
                self.dropped += weight
            else:
                kept[state] = weight
        return kept

    def prune_array(self, weights):
        """``prune`` for a numpy vector of weights: the dropped ones become 0."""
        if self.exact:
            return weights
        dropped = (weights > 0) & (weights < PRUNE_BELOW)
        self.dropped += float(weights[dropped].sum())
        weights[dropped] = 0.0
        return weights

    def one(self) -> int | float:
        """Certainty's weight before the first step."""
        return 1 if self.exact else 1.0

    def next_step(self, factor: int) -> None:
        """Start a step whose transitions' weights are over ``factor`` (exact) or sum to 1 (float64)."""
        self.flush()
        self.step += 1
        if self.exact:
            self.scale *= factor

    def add(self, key: tuple, weight: int | float, length: int | None = None) -> None:
        """``weight`` (over this step's scale) of fights ending as ``key``, after ``length`` steps
        (default: this step)."""
        if weight:
            slot = (key, self.step if length is None else length)
            self.pending[slot] = self.pending.get(slot, 0) + weight

    def flush(self) -> None:
        for slot, weight in self.pending.items():
            value = Fraction(weight, self.scale) if self.exact else weight
            self.ended[slot] = self.ended.get(slot, 0) + value
        self.pending.clear()

    def probability(self, key: tuple) -> Fraction | float:
        self.flush()
        return sum((p for (k, _), p in self.ended.items() if k == key), Fraction(0) if self.exact else 0.0)

    def lengths(self) -> dict[int, Fraction | float]:
        self.flush()
        out: dict[int, Fraction | float] = {}
        for (key, length), p in self.ended.items():
            if key not in OVERLAPPING:
                out[length] = out.get(length, 0) + p
        return dict(sorted(out.items()))

    def error_bound(self) -> float:
        """A bound on each float64 probability's absolute error: every result is a sum of products
        of nonnegative numbers, so its relative error is at most gamma_N = N u / (1 - N u) with N
        the operations on its longest path, at most all the operations done (Higham, ch. 3); plus
        the mass of the states dropped as too unlikely to matter."""
        if self.exact:
            return 0.0
        n = self.operations + 4 * len(self.ended)  # and the final sums
        return n * UNIT_ROUNDOFF / (1 - n * UNIT_ROUNDOFF) + self.dropped * (1 + 2 * UNIT_ROUNDOFF)


def both_forms(value: Fraction | float) -> dict:
    """A probability for JSON: its exact fraction (or the float's repr) as text, and its float."""
    return {"p": str(value) if isinstance(value, Fraction) else repr(float(value)), "float": float(value)}


def lcm_all(values) -> int:
    return math.lcm(*values) if values else 1


def scaled(law: dict, denominator: int, exact: bool) -> list[tuple[object, int | float]]:
    """A law {outcome: Fraction} as [(outcome, weight)] in its order, outcomes of probability 0
    dropped: integer weights over ``denominator`` (exact), or floats."""
    if exact:
        return [(key, int(p * denominator)) for key, p in law.items() if p]
    return [(key, float(p)) for key, p in law.items() if p]


def attacker_laws(raw: dict, count: int, exact: bool) -> tuple[dict, list[int]]:
    """The laws ``raw`` (keyed by (attacker, ...)) ``scaled`` over each attacker's denominator, the
    lcm of its laws' (1 in float64), and those denominators."""
    denominators = [lcm_all([p.denominator for key, law in raw.items() if key[0] == a for p in law.values()])
                    if exact else 1 for a in range(count)]
    return {key: scaled(law, denominators[key[0]], exact) for key, law in raw.items()}, denominators


def segment_sum(index: np.ndarray, values: np.ndarray, size: int, exact: bool) -> np.ndarray:
    """The sums of ``values`` by ``index`` into ``size`` slots (exact: Fractions in an object array)."""
    if exact:
        out = np.full(size, Fraction(0), dtype=object)
        np.add.at(out, index, values)
        return out
    return np.bincount(index, weights=values, minlength=size)


def zeros(size: int, exact: bool) -> np.ndarray:
    return np.full(size, Fraction(0), dtype=object) if exact else np.zeros(size)
