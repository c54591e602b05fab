"""The RL family of the kernel registry, pure-Python backend (re-exports; see <ruleset>_reference)."""

from combatsim.rl.d100_reference import d100_duels
from combatsim.rl.exp_reference import exp_duels
from combatsim.rl.tss_reference import tss_duels

__all__ = ["d100_duels", "exp_duels", "tss_duels"]
