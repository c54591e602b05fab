"""Exact fight odds: the probability of every outcome of a scenario's fight, and of its length.

``fight_odds(scenario)`` works over the fight's states, not over samples: each ruleset's chain
(``combatsim.fight_odds.<ruleset>``) enumerates the laws of each step from the documented step
order, with each roll's rule taken from the ruleset's engine (the one source of the rules), so it
also checks the kernels' stepping, targeting and dice. Probabilities are exact fractions, or float64
with a stated error bound when the fight is too large for exact arithmetic to be quick
(docs/fight-odds.md).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction

from combatsim.fight_odds.chain import Tally, TooManyStates, both_forms, check_states

__all__ = ["DEFAULT_MAX_STATES", "FightOdds", "TooManyStates", "fight_odds"]

DEFAULT_MAX_STATES = 10_000_000
#: Above this many states (its bound), "auto" computes in float64 rather than exact fractions
#: (a chain may set a lower ``exact_states`` where its exact arithmetic is dearer).
EXACT_STATES = 100_000
#: ... and when the common denominator after the step limit has at most this many digits: exact
#: integers grow with every step, so a limit of 10^5 rounds would make numbers of millions of digits.
EXACT_DIGITS = 20_000
METHODS = ("auto", "exact", "float64")
#: "exact" asked for by name is refused beyond these, before any work: the common denominator's
#: digits after the step limit, and those digits times the states (about 0.4 bytes a digit-state),
#: where big-integer arithmetic would run for hours or fill the memory.
MAX_EXACT_DIGITS = 100_000
MAX_EXACT_DIGIT_STATES = 5 * 10**9


@dataclass
class FightOdds:
    """The odds of one scenario's fight; probabilities are Fractions (exact) or floats (float64)."""

    scenario: str
    ruleset: str
    side_names: list[str]
    #: "exact" or "float64"
    method: str
    #: a bound on every probability's absolute error (0 when exact)
    error_bound: float
    #: per side
    wins: list[Fraction | float]
    wins_by_flight: list[Fraction | float]
    escapes: Fraction | float
    draws: Fraction | float
    unfinished: Fraction | float
    #: length (rounds or units) -> probability that the fight ends there (unfinished: at the limit)
    length: dict[int, Fraction | float]
    step_unit: str
    #: the bound on the number of states checked against max_states, and the most states live at once
    state_bound: int
    peak_states: int
    seconds: float = 0.0
    #: what draws mean in this ruleset, and what the engine counts as a draw
    notes: list[str] = field(default_factory=list)

    @property
    def length_mean(self) -> Fraction | float:
        return sum((steps * p for steps, p in self.length.items()), Fraction(0) if self.method == "exact" else 0.0)

    def as_dict(self) -> dict:
        both = both_forms
        return {
            "scenario": self.scenario,
            "ruleset": self.ruleset,
            "method": self.method,
            "error_bound": self.error_bound,
            "sides": [{"name": name, "wins": both(w), "wins_by_flight": both(f)}
                      for name, w, f in zip(self.side_names, self.wins, self.wins_by_flight, strict=True)],
            **{key: both(getattr(self, key)) for key in ("escapes", "draws", "unfinished")},
            "length": {"unit": self.step_unit, "mean": both(self.length_mean),
                       "distribution": {str(k): both(v) for k, v in self.length.items()}},
            "states": {"bound": self.state_bound, "peak": self.peak_states},
            "seconds": self.seconds,
            "notes": self.notes,
        }


def _chain(scenario):
    if scenario.ruleset == "exp":
        from combatsim.fight_odds.exp import ExpChain

        return ExpChain(scenario.spec)
    if scenario.ruleset == "tss":
        from combatsim.fight_odds.tss import TssChain

        return TssChain(scenario.spec)
    from combatsim.fight_odds.d100 import D100Chain

    return D100Chain(scenario.spec)


def check_scenario(scenario: object) -> None:
    """A loaded scenario: a name, a path or a document is refused with the call that loads one."""
    from combatsim.scenario import Scenario

    if not isinstance(scenario, Scenario):
        raise TypeError("scenario must be a loaded combatsim.scenario.Scenario (combatsim.scenario.load(path); "
                        f"an example: combatsim.scenario.example_path(name)), got {type(scenario).__name__}")


def check_method(method: str) -> None:
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")


def check_exact(digits: int, states: int) -> None:
    """Refuse exact fractions of about ``digits`` digits over up to ``states`` states where that
    arithmetic is unbounded in practice (MAX_EXACT_DIGITS, MAX_EXACT_DIGIT_STATES)."""
    if digits > MAX_EXACT_DIGITS or digits * states > MAX_EXACT_DIGIT_STATES:
        raise ValueError(f"method exact: this fight's exact fractions would reach about {digits:,} digits over up to "
                         f"{states:,} states; exact allows at most {MAX_EXACT_DIGITS:,} digits and "
                         f"{MAX_EXACT_DIGIT_STATES:,} digit-states: use method float64 or auto, or a lower step "
                         "limit (options.unit_limit or options.max_rounds)")


def exact_method(chain, method: str, max_states: int, steps: int = 1) -> tuple[bool, int]:
    """Whether a chain (an odds chain, or the decision chain over it) computes in exact fractions:
    asked for (refused where that is unbounded: ``check_exact``), or "auto" where its state bound
    is at most its ``exact_states`` (default EXACT_STATES) and its denominators' digits at most
    EXACT_DIGITS; and its state bound times ``steps`` (a decision chain whose states can all be
    live before every one of its steps counts each (step, state)), refused past ``max_states``
    before any work."""
    bound = chain.state_bound() * steps
    check_states(bound, max_states)
    if method == "exact":
        check_exact(chain.exact_digits(), bound)
        return True, bound
    return (method == "auto" and chain.state_bound() <= getattr(chain, "exact_states", EXACT_STATES)
            and chain.exact_digits() <= EXACT_DIGITS), bound


def fight_odds(scenario, *, max_states: int = DEFAULT_MAX_STATES, method: str = "auto") -> FightOdds:
    """The odds of ``scenario``'s fight (a ``combatsim.scenario.Scenario``), exact where they fit.

    ``max_states`` bounds the states of the fight's chain: a larger fight raises
    :class:`TooManyStates` (a ValueError) before any work. ``method`` is "auto" (exact up to
    ``EXACT_STATES`` states, else float64), "exact" or "float64".
    """
    from combatsim.validation import check_int

    check_scenario(scenario)
    check_int("max_states", max_states, 1, 10**12)
    check_method(method)
    started = time.perf_counter()
    chain = _chain(scenario)
    exact, bound = exact_method(chain, method, max_states)
    tally = Tally(exact)
    peak = chain.run(tally, max_states)
    probability = tally.probability
    side_keys = range(len(scenario.side_names))
    return FightOdds(
        scenario=scenario.name,
        ruleset=scenario.ruleset,
        side_names=list(scenario.side_names),
        method="exact" if exact else "float64",
        error_bound=tally.error_bound(),
        wins=[probability(("wins", s)) + probability(("wins_by_flight", s)) for s in side_keys],
        wins_by_flight=[probability(("wins_by_flight", s)) for s in side_keys],
        escapes=probability(("escapes",)),
        draws=probability(("draws",)),
        unfinished=probability(("unfinished",)),
        length=tally.lengths(),
        step_unit=chain.step_unit,
        state_bound=bound,
        peak_states=peak,
        seconds=time.perf_counter() - started,
        notes=list(chain.notes),
    )
