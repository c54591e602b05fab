"""combatsim: compiled-core simulation of tabletop combat rules (EXP, TSS, d100)."""

from combatsim.dice import Dice
from combatsim.registry import available_backends

__version__ = "0.1.0"
__all__ = ["Dice", "__version__", "available_backends"]
