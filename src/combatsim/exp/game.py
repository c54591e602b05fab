"""An EXP scenario made ready for the engine (combatsim.exp.engine): its arrays and their names."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from combatsim.engine import Game
from combatsim.exp import engine
from combatsim.exp.api import combatant_table

#: One member's fields in an observation, in engine order (F_*), each a small float.
MEMBER_FIELD_NAMES = ("in_fight", "health", "hit_points", "ammunition", "armour_rating")
#: The global fields, in engine order (OBS_*).
GLOBAL_FIELD_NAMES = ("units",)
#: The episode's count fields, in engine order (FIGHT_*, then COUNT_UNFINISHED, COUNT_MASKED).
COUNT_NAMES = (
    "wins_side_0", "wins_side_1", "draws", "mutual", "units", "damage_side_0", "damage_side_1",
    "ammunition_side_0", "ammunition_side_1", "to_hit_rolls_side_0", "to_hit_rolls_side_1", "hits_side_0",
    "hits_side_1", "unfinished", "masked",
)


def observation_names(ally_slots: int, foe_slots: int) -> tuple[str, ...]:
    """"units", then "self.<field>", "ally<k>.<field>", "foe<j>.<field>" (docs/exp.md, "The engine")."""
    slots = ["self", *(f"ally{k}" for k in range(ally_slots)), *(f"foe{j}" for j in range(foe_slots))]
    return GLOBAL_FIELD_NAMES + tuple(f"{slot}.{name}" for slot in slots for name in MEMBER_FIELD_NAMES)


def game(spec: dict, member_names: Sequence[str], side_names: Sequence[str], table: np.ndarray | None = None) -> Game:
    """The Game of a validated EXP scenario spec (``combatsim.exp.scenario.build``).

    Member ``c`` is row ``c``: side 0's members in file order, then side 1's. ``table``: the
    spec's combatant table (api.combatant_table) where the caller has built it already.
    """
    side0, side1 = spec["sides"]
    table = combatant_table(side0, side1) if table is None else table
    if len(member_names) != len(table):
        raise ValueError(f"member_names must name the scenario's {len(table)} members, got {len(member_names)}")
    config = engine.make_config(table, spec["unit_limit"], spec["hit_on_equal"], spec["critical"])
    foe_slots = int(config[engine.CF_FOE_SLOTS])
    names = observation_names(int(config[engine.CF_ALLY_SLOTS]), foe_slots)
    return Game(
        ruleset="exp",
        table=table,
        config=config,
        member_names=tuple(member_names),
        member_sides=tuple(int(side) for side in table[:, engine.C_SIDE]),
        side_names=(side_names[0], side_names[1]),
        action_names=("hold", *(f"fire_at_foe_{j}" for j in range(foe_slots))),
        observation_names=names,
        count_names=COUNT_NAMES,
        state_size=engine.state_size(len(table)),
        step_name="unit",
        length_unit="units",
        engine_module="combatsim.exp.engine",
    )
