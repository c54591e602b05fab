"""TSS: the Alternity-style d20 combat system (docs/tss.md).

The names below are imported on first use, so that importing one module of the package (its
command line, say) stays light."""

from combatsim.lazy import lazy_names

_MODULES = {
    "AttackResult": "combatsim.tss.api",
    "Combatant": "combatsim.tss.api",
    "FightResult": "combatsim.tss.api",
    "simulate_attacks": "combatsim.tss.api",
    "simulate_fights": "combatsim.tss.api",
    "ActionCheck": "combatsim.tss.model",
    "Armour": "combatsim.tss.model",
    "DamageTrack": "combatsim.tss.model",
    "Score": "combatsim.tss.model",
    "Weapon": "combatsim.tss.model",
    "Attack": "combatsim.tss.prepared",
}
__all__ = sorted(_MODULES)

__getattr__, __dir__ = lazy_names(__name__, _MODULES)
