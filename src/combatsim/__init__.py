"""combatsim: compiled-core simulation of tabletop combat rules (EXP, TSS, d100)."""

from combatsim.dice import Dice
from combatsim.registry import available_backends

__version__ = "0.1.0"
__all__ = ["Dice", "__version__", "available_backends", "simulate_scenario"]


def __getattr__(name: str):
    # simulate_scenario loads the rulesets and the engine: only when asked for
    if name == "simulate_scenario":
        from combatsim.fights import simulate_scenario

        return simulate_scenario
    raise AttributeError(f"module 'combatsim' has no attribute {name!r}")
