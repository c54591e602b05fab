"""TSS prepared attacks: ``Attack(skill="14/7/3", damage="d4w/d4+2w/d4-1m", ...)`` validated once,
resolved many times (combatsim.prepared)."""

from __future__ import annotations

import inspect
from types import SimpleNamespace
from typing import NamedTuple

import numpy as np

from combatsim.prepared import PreparedAttack
from combatsim.tss.api import attack_config
from combatsim.tss.engine import ATTACK_COUNTS
from combatsim.tss.model import Armour

#: attack_config's defaults: the odds read every input.
_DEFAULTS = {name: parameter.default for name, parameter in inspect.signature(attack_config).parameters.items()}


class AttackOutcome(NamedTuple):
    """One attack (or, from ``resolve_many``, arrays of them), as ``simulate_attacks`` outcomes:
    ``tier`` 0 amazing, 1 good, 2 ordinary, 3 failure, 4 critical failure; the stun, wound and
    mortal damage dealt."""

    tier: int
    stun: int
    wound: int
    mortal: int


class Attack(PreparedAttack):
    """One TSS attack with ``simulate_attacks``'s inputs (less n, seed, threads and outcomes).

    ``resolve(seed, index)`` is item ``index`` of ``simulate_attacks(n, seed=seed, outcomes=True)``;
    ``resolve_many(seed, start, count)`` a slice of them; ``odds()`` the exact tier probabilities,
    the mean stun, wound and mortal damage per attack, and under ``"laws"`` each damage type's
    exact law (``combatsim.tss.odds``). ``backend`` picks the kernels, as in simulate_attacks.
    """

    kernel_name = "tss.attack"
    Outcome = AttackOutcome
    dtypes = (np.int8, np.int32, np.int32, np.int32)
    counts_size = ATTACK_COUNTS

    inputs = staticmethod(attack_config)

    def _setup(self, **inputs: object) -> tuple[tuple, tuple]:
        config = self.config = attack_config(**inputs)
        inputs = self._inputs = SimpleNamespace(**{**_DEFAULTS, **inputs})
        if isinstance(inputs.armour, Armour):  # the odds take the die against this weapon's class and its grade
            inputs.armour, inputs.armour_quality = inputs.armour.die_for(inputs.damage_class), inputs.armour.quality
        return (config,), (config,)

    def _exact_odds(self) -> dict:
        from combatsim.tss.odds import attack_odds

        odds, laws = attack_odds(self._inputs)
        return {**odds, "laws": laws}

    def __repr__(self) -> str:
        return f"tss.Attack(skill={self._inputs.skill!r}, damage={self._inputs.damage!r}, backend={self.backend!r})"
