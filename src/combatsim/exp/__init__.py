"""EXP: the kilodie combat-table system (docs/exp.md).

The names below are imported on first use, so that importing one module of the package (its
command line, say) stays light."""

from combatsim.lazy import lazy_names

_NAMES = {
    "api": ("AttackResult", "Combatant", "FightResult", "ToHitResult", "simulate_attack", "simulate_fight",
            "simulate_to_hit"),
    "model": ("CombatRow", "CombatTable", "Persona", "Weapon"),
    "prepared": ("Attack",),
}
__all__ = sorted(name for names in _NAMES.values() for name in names)

__getattr__, __dir__ = lazy_names(__name__, _NAMES)
