"""d100 prepared attacks: ``Attack(pool=60, lethality=30, ...)`` validated once, resolved many times
(combatsim.prepared)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from combatsim.d100.api import attack_parameters, attack_scalars
from combatsim.d100.layout import ATTACK_COUNTS
from combatsim.prepared import PreparedAttack


class AttackOutcome(NamedTuple):
    """One attack (or, from ``resolve_many``, arrays of them), as ``simulate_attacks`` outcomes:
    ``tier`` 0 critical success .. 4 critical failure; ``wound`` and ``second_wound`` 0 none,
    1 flesh, 2 serious, 3 lethal, 4 instant death (``second_wound``: the second weapon of a dual
    wield)."""

    tier: int
    wound: int
    second_wound: int


class Attack(PreparedAttack):
    """One d100 attack with ``simulate_attacks``'s inputs (less n, seed, threads and outcomes).

    ``resolve(seed, index)`` is item ``index`` of ``simulate_attacks(n, seed=seed, outcomes=True)``;
    ``resolve_many(seed, start, count)`` a slice of them; ``odds()`` the exact probabilities
    (``combatsim.d100.odds.attack_odds``). ``backend`` picks the kernels, as in simulate_attacks.
    """

    kernel_name = "d100.attack"
    Outcome = AttackOutcome
    dtypes = (np.int8, np.int8, np.int8)
    counts_size = ATTACK_COUNTS

    inputs = staticmethod(attack_parameters)

    def _setup(self, **inputs: object) -> tuple[tuple, tuple]:
        self.parameters = p = attack_parameters(**inputs)
        scalars = attack_scalars(p)
        return tuple(np.array([value], dtype=np.int64) for value in scalars), scalars

    def _exact_odds(self) -> dict:
        from combatsim.d100.odds import attack_odds

        return attack_odds(self.parameters)

    def __repr__(self) -> str:
        p = self.parameters
        return (f"d100.Attack(full_skill={p.full_skill}, lethality={p.lethality}, "
                f"serious_threshold={p.serious_threshold}, nonlethal={p.nonlethal}, weapons={p.weapons}, "
                f"backend={self.backend!r})")
