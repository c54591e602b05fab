"""EXP: the kilodie combat-table system (exp-combat-table.txt, exp-tactical-combat.txt)."""

from combatsim.exp.api import ToHitResult, simulate_to_hit

__all__ = ["ToHitResult", "simulate_to_hit"]
