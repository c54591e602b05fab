"""What a run of fights reports, whoever played them: :class:`FightSummary` (``combatsim fight``'s
record), the win rates' intervals, and the helpers that make one from a fight kernel's result or
from fights the engine played. The rulesets' scenario and API modules build on this module, so it
imports none of them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from combatsim.engine import WINNER_DRAW, WINNER_UNFINISHED, WINNERS

Z95 = 1.959963984540054
#: The outcomes --compare pairs and --plot stacks, by their winner codes; "wins" rows are the sides'.
NO_WINNER_OUTCOMES = (("draws", WINNER_DRAW), ("unfinished", WINNER_UNFINISHED))


@dataclass
class FightSummary:
    fights: int
    wins: list[int]
    draws: int
    #: steps (rounds, or EXP units) to the end -> number of fights
    rounds_histogram: dict[int, int]
    seed: int
    backend: str
    threads: int
    partial: bool = False
    stopped_early: bool = False
    #: what one step is, in the ruleset's words ("units of combat time", "rounds of 2 passes")
    step_unit: str = "rounds"
    #: figures of each side, keyed with what they are (``hits_count``, ``damage_dealt_mean_per_fight``)
    per_side: list[dict] = field(default_factory=lambda: [{}, {}])
    #: figures the kernels count over both sides together
    totals: dict = field(default_factory=dict)
    #: per side, each member's fights ended still in the fight, members in file order
    standing: list[list[int]] = field(default_factory=lambda: [[], []])
    #: fights still running at the step limit, where the ruleset tells them apart from draws
    #: (None: counted in ``draws``)
    unfinished: int | None = None
    #: per-fight winner (0, 1, WINNER_UNFINISHED or WINNER_DRAW) and length, with outcomes=True
    winner: np.ndarray | None = field(default=None, repr=False)
    rounds: np.ndarray | None = field(default=None, repr=False)

    def as_dict(self, side_names: list[str], member_names: Sequence[str] | None = None) -> dict:
        """The JSON record; ``member_names``: every member's, side 0's first (default "member k",
        counted over both sides)."""
        fights = self.fights or 1
        total = sum(self.rounds_histogram.values())
        mean = sum(r * c for r, c in self.rounds_histogram.items()) / total if total else 0.0
        names = iter(member_names if member_names is not None else
                     [f"member {k + 1}" for k in range(sum(len(side) for side in self.standing))])
        return {
            "fights": self.fights,
            "sides": [
                {"name": name, "wins": wins, "win_rate": wins / fights,
                 "win_rate_ci95": list(wilson_interval(wins, self.fights)), **figures,
                 "members": [{"name": next(names), "standing_count": count, "standing_rate": count / fights}
                             for count in standing]}
                for name, wins, figures, standing in zip(side_names, self.wins, self.per_side, self.standing,
                                                         strict=True)
            ],
            "draws": self.draws,
            "draw_rate": self.draws / fights,
            **({} if self.unfinished is None else
               {"unfinished": self.unfinished, "unfinished_rate": self.unfinished / fights}),
            "length": {"unit": self.step_unit, "mean": mean,
                       "histogram": {str(k): v for k, v in sorted(self.rounds_histogram.items())}},
            "totals": self.totals,
            "seed": self.seed,
            "backend": self.backend,
            "threads": self.threads,
            "partial": self.partial,
            "stopped_early": self.stopped_early,
        }


def wilson_interval(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """95% Wilson score interval for a win rate (well behaved at 0 and 1, unlike the normal one)."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def standing_by_side(standing: Sequence[int], side_sizes: Sequence[int]) -> list[list[int]]:
    """A fight kernel's per-member standing counts (side 0's members first) split per side."""
    counts = [int(count) for count in standing]
    return [counts[:side_sizes[0]], counts[side_sizes[0]:side_sizes[0] + side_sizes[1]]]


def kernel_summary(result, n: int, seed: int, step_unit: str, **figures) -> FightSummary:
    """The summary of a ruleset's ``simulate_fight(s)`` result for ``n`` fights: how it ran, and
    the ruleset's ``figures`` (the other FightSummary fields)."""
    return FightSummary(fights=result.fights, seed=seed, backend=result.backend, threads=result.threads,
                        partial=result.partial, stopped_early=result.fights < n and not result.partial,
                        step_unit=step_unit, **figures)


def engine_outcomes(results) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Each fight's winner (0, 1, WINNER_DRAW or WINNER_UNFINISHED; int8) and length (int32) of
    fights the engine played (combatsim.policies.FightResults), or (None, None) without outcomes."""
    if results.outcome is None:
        return None, None
    return np.array(WINNERS, dtype=np.int8)[results.outcome], results.length.astype(np.int32)
