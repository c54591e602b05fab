"""The RL family of the kernel registry, Numba backend (re-exports; see <ruleset>_nb)."""

from .d100_nb import d100_duels
from .exp_nb import exp_duels
from .tss_nb import tss_duels

__all__ = ["d100_duels", "exp_duels", "tss_duels"]
