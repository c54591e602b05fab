"""TSS: the Alternity-style d20 combat system (tss-combat.txt, RULINGS.md TSS)."""

from combatsim.tss.api import AttackResult, Combatant, FightResult, simulate_attacks, simulate_fights
from combatsim.tss.model import ActionCheck, Armour, DamageTrack, Score, Weapon
from combatsim.tss.prepared import Attack

__all__ = [
    "ActionCheck",
    "Armour",
    "Attack",
    "AttackResult",
    "Combatant",
    "DamageTrack",
    "FightResult",
    "Score",
    "Weapon",
    "simulate_attacks",
    "simulate_fights",
]
