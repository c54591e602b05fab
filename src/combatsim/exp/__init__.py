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

__all__ = [
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
