"""EXP Python API: validate, then stream the kernels."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from combatsim.runner import INT64_MAX_ITEMS, simulate
from combatsim.validation import check_int, check_int_array

#: Bounds that keep every sum in int64 and every to-hit roll in int32.
MAX_BONUS = 1_000_000
MAX_ROLL = 2_000_000
MAX_ARMOUR_RATING = 2_000_000


@dataclass(frozen=True)
class ToHitResult:
    attacks: int
    hits: int
    seed: int
    backend: str
    threads: int
    partial: bool = False
    #: Per-attack to-hit rolls (int32), when asked for with ``outcomes=True``.
    to_hit: np.ndarray | None = field(default=None, repr=False)

    @property
    def hit_rate(self) -> float:
        return self.hits / self.attacks if self.attacks else 0.0

    def as_dict(self) -> dict:
        return {
            "attacks": self.attacks,
            "hits": self.hits,
            "hit_rate": self.hit_rate,
            "seed": self.seed,
            "backend": self.backend,
            "threads": self.threads,
            "partial": self.partial,
        }


def simulate_to_hit(
    n: int,
    *,
    bonus,
    maximum_roll,
    armour_rating,
    hit_on_equal: bool = False,
    seed: int = 0,
    backend: str = "auto",
    threads: int | None = None,
    chunk_size: int | None = None,
    outcomes: bool = False,
    progress: Callable[[int, int], None] | None = None,
    executor: str | None = None,
) -> ToHitResult:
    """Simulate ``n`` kilodie to-hit rolls: to-hit = min(kilodie + bonus, maximum roll).

    ``bonus``, ``maximum_roll`` and ``armour_rating`` are scalars or arrays with one entry per
    attack. A hit needs to-hit greater than the armour rating, or equal with ``hit_on_equal``.
    With ``outcomes=True`` the result carries every attack's to-hit roll (memory grows with n).
    ``executor="dask"`` runs the chunks on a Dask cluster (combatsim.executors), bit-identically.
    """
    if not isinstance(hit_on_equal, bool | np.bool_):
        raise TypeError(f"hit_on_equal must be a bool, got {type(hit_on_equal).__name__}")
    if not isinstance(outcomes, bool | np.bool_):
        raise TypeError(f"outcomes must be a bool, got {type(outcomes).__name__}")
    n = length = check_int("n", n, 0, INT64_MAX_ITEMS)
    bonus = check_int_array("bonus", bonus, length, -MAX_BONUS, MAX_BONUS)
    maximum_roll = check_int_array("maximum_roll", maximum_roll, length, 1, MAX_ROLL)
    armour_rating = check_int_array("armour_rating", armour_rating, length, -MAX_ARMOUR_RATING, MAX_ARMOUR_RATING)
    to_hit = np.empty(length if outcomes else 0, dtype=np.int32)
    result, backend, threads = simulate(
        "exp.to_hit",
        n=n,
        seed=seed,
        backend=backend,
        threads=threads,
        chunk_size=chunk_size,
        params=(bonus, maximum_roll, armour_rating, bool(hit_on_equal)),
        per_item=(len(bonus) > 1, len(maximum_roll) > 1, len(armour_rating) > 1, False),
        counts_size=1,
        outputs=(to_hit,),
        progress=progress,
        executor=executor,
    )
    return ToHitResult(
        attacks=result.items_done,
        hits=int(result.counts[0]),
        seed=seed,
        backend=backend,
        threads=threads,
        partial=result.partial,
        to_hit=to_hit[: result.items_done] if outcomes else None,
    )
