"""EXP: the kilodie combat-table system (docs/exp.md).

The names below are imported on first use, so that importing one module of the package (its
command line, say) stays light."""

from combatsim.lazy import lazy_names

_MODULES = {
    "AttackResult": "combatsim.exp.api",
    "Combatant": "combatsim.exp.api",
    "FightResult": "combatsim.exp.api",
    "ToHitResult": "combatsim.exp.api",
    "simulate_attack": "combatsim.exp.api",
    "simulate_fight": "combatsim.exp.api",
    "simulate_to_hit": "combatsim.exp.api",
    "CombatRow": "combatsim.exp.model",
    "CombatTable": "combatsim.exp.model",
    "Persona": "combatsim.exp.model",
    "Weapon": "combatsim.exp.model",
    "Attack": "combatsim.exp.prepared",
}
__all__ = sorted(_MODULES)

__getattr__, __dir__ = lazy_names(__name__, _MODULES)
