"""The d100 scenario as a :class:`combatsim.engine.Game`: the engine's arrays and their names.

The builder lives in ``combatsim.d100.api``, whose policy path plays the fights it builds, so that the
API needs nothing from this module; this is its name for scenarios and environments.
"""

from __future__ import annotations

from combatsim.d100.api import game as game
