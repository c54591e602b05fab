"""TSS prepared attacks: ``Attack(skill="14/7/3", damage="d4w/d4+2w/d4-1m", ...)`` validated once,
resolved many times (combatsim.prepared)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import NamedTuple

import numpy as np

from combatsim.dice import Dice
from combatsim.prepared import PreparedAttack
from combatsim.tss.api import attack_config
from combatsim.tss.engine import ATTACK_COUNTS
from combatsim.tss.model import Armour, DamageTrack, Score


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

    def __init__(
        self,
        *,
        skill: str | int | Score,
        damage: str | DamageTrack,
        steps: int = 0,
        weapon_quality: str | int = "ordinary",
        damage_class: str = "En",
        armour: str | Dice | Armour | None = None,
        armour_quality: str | int = "ordinary",
        one_step_shift: bool = False,
        joint_layout: bool = True,
        aim: bool = False,
        two_weapons: str | None = None,
        ambidexterity: bool = False,
        broad: bool = False,
        backend: str = "auto",
    ) -> None:
        self.config = config = attack_config(
            skill=skill, steps=steps, damage=damage, weapon_quality=weapon_quality, damage_class=damage_class,
            armour=armour, armour_quality=armour_quality, one_step_shift=one_step_shift, joint_layout=joint_layout,
            aim=aim, two_weapons=two_weapons, ambidexterity=ambidexterity, broad=broad,
        )
        if isinstance(armour, Armour):  # the odds take the die against this weapon's class and its grade
            armour, armour_quality = armour.die_for(damage_class), armour.quality
        self._inputs = SimpleNamespace(skill=skill, steps=steps, damage=damage, weapon_quality=weapon_quality,
                                       armour=armour, armour_quality=armour_quality, one_step_shift=one_step_shift,
                                       aim=aim, two_weapons=two_weapons, ambidexterity=ambidexterity, broad=broad)
        self._prepare((config,), backend, (config,))

    def _exact_odds(self) -> dict:
        from combatsim.tss.odds import attack_odds

        odds, laws = attack_odds(self._inputs)
        return {**odds, "laws": laws}

    def __repr__(self) -> str:
        return f"tss.Attack(skill={self._inputs.skill!r}, damage={self._inputs.damage!r}, backend={self.backend!r})"
