"""TSS: the Alternity-style d20 combat system (docs/tss.md).

The names below are imported on first use, so that importing one module of the package (its
command line, say) stays light."""

from combatsim.lazy import lazy_names

_NAMES = {
    "api": ("AttackResult", "Combatant", "FightResult", "simulate_attacks", "simulate_fights"),
    "model": ("ActionCheck", "Armour", "DamageTrack", "Score", "Weapon"),
    "prepared": ("Attack",),
}
__all__ = sorted(name for names in _NAMES.values() for name in names)

__getattr__, __dir__ = lazy_names(__name__, _NAMES)
