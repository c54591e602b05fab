"""An EXP scenario made ready for the engine (combatsim.exp.engine): its arrays and their names.

The builder lives in ``combatsim.exp.api``, whose policy path plays the fights it builds, so that the
API needs nothing from this module; this is its name for scenarios and environments.
"""

from __future__ import annotations

from combatsim.exp.api import game as game
