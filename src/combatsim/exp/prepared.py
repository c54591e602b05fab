"""EXP prepared attacks: ``Attack(persona=..., weapon=..., armour_rating=...)`` validated once,
resolved many times (combatsim.prepared)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from combatsim.exp.api import attack_inputs
from combatsim.exp.engine import ATTACK_COUNTS
from combatsim.prepared import PreparedAttack


class AttackOutcome(NamedTuple):
    """One unit of fire (or, from ``resolve_many``, arrays of them), as ``simulate_attack``
    outcomes: to-hit rolls that hit, rounds that hit (automatic fire: of the bursts' rounds),
    damage dealt."""

    hits: int
    rounds_hit: int
    damage: int


class Attack(PreparedAttack):
    """One EXP unit of fire with ``simulate_attack``'s inputs (less n, seed, threads and outcomes):
    a ``persona`` with a ``weapon``, or ``bonus`` and ``maximum_roll`` (and ``damage_adjustment``)
    with a ``weapon`` or ``damage`` dice and ``weapon_type``; and the ``armour_rating``.

    ``resolve(seed, index)`` is unit ``index`` of ``simulate_attack(n, seed=seed, outcomes=True)``;
    ``resolve_many(seed, start, count)`` a slice of them; ``odds()`` the exact laws
    (``combatsim.exp.odds.attack_odds``). ``backend`` picks the kernels, as in simulate_attack.
    """

    kernel_name = "exp.attack"
    Outcome = AttackOutcome
    dtypes = (np.int32, np.int32, np.int64)
    counts_size = ATTACK_COUNTS

    inputs = staticmethod(attack_inputs)

    def _setup(self, **inputs: object) -> tuple[tuple, tuple]:
        self.weapon, params = attack_inputs(1, **inputs)
        # The kernel's scalars, in its parameter order (arrays of one entry, then the two flags).
        self._scalars = tuple(int(p[0]) if isinstance(p, np.ndarray) else p for p in params)
        return params, self._scalars

    def _exact_odds(self) -> dict:
        from combatsim.exp.odds import attack_odds

        (bonus, maximum_roll, armour_rating, adjustment, _count, _sides, _modifier, damage_adjustment, rolls,
         automatic, hit_on_equal, critical) = self._scalars
        return attack_odds(bonus=bonus, maximum_roll=maximum_roll, armour_rating=armour_rating,
                           dice=self.weapon.damage, damage_adjustment=damage_adjustment, rolls=rolls,
                           automatic=bool(automatic), adjustment=adjustment, hit_on_equal=hit_on_equal,
                           critical=critical)

    def __repr__(self) -> str:
        bonus, maximum_roll, armour_rating = self._scalars[:3]
        return (f"exp.Attack(weapon={self.weapon.name!r}, bonus={bonus}, maximum_roll={maximum_roll}, "
                f"armour_rating={armour_rating}, backend={self.backend!r})")
