"""An EXP scenario made ready for the engine (combatsim.exp.engine): its arrays and their names.

The builder lives in ``combatsim.exp.api``, whose policy path plays the fights it builds, so that the
API needs nothing from this module; this is its name for scenarios and environments.
"""

from __future__ import annotations

from combatsim.exp.api import COUNT_NAMES as COUNT_NAMES
from combatsim.exp.api import GLOBAL_FIELD_NAMES as GLOBAL_FIELD_NAMES
from combatsim.exp.api import MEMBER_FIELD_NAMES as MEMBER_FIELD_NAMES
from combatsim.exp.api import game as game
from combatsim.exp.api import observation_names as observation_names
