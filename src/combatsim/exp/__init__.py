"""EXP: the kilodie combat-table system (exp-combat-table.txt, exp-tactical-combat.txt)."""

from combatsim.exp.api import (
    AttackResult,
    Combatant,
    FightResult,
    ToHitResult,
    simulate_attack,
    simulate_fight,
    simulate_to_hit,
)
from combatsim.exp.model import CombatRow, CombatTable, Persona, Weapon
from combatsim.exp.prepared import Attack

__all__ = [
    "Attack",
    "AttackResult",
    "CombatRow",
    "CombatTable",
    "Combatant",
    "FightResult",
    "Persona",
    "ToHitResult",
    "Weapon",
    "simulate_attack",
    "simulate_fight",
    "simulate_to_hit",
]
