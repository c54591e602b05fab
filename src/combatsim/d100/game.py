"""The d100 scenario as a :class:`combatsim.engine.Game`: the engine's arrays and their names."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from combatsim.d100 import engine
from combatsim.d100.api import fight_table
from combatsim.d100.layout import C_SIDE
from combatsim.engine import Game


def observation_names(ally_slots: int, foe_slots: int) -> tuple[str, ...]:
    """One member's observation, field by field: the global fields, then its own block, its
    allies' blocks and its foes' blocks (docs/d100.md, "The engine")."""
    blocks = ["self"] + [f"ally{k}" for k in range(ally_slots)] + [f"foe{k}" for k in range(foe_slots)]
    return (*engine.GLOBAL_NAMES, *(f"{block}.{name}" for block in blocks for name in engine.MEMBER_NAMES))


def game(spec: dict, member_names: Sequence[str], side_names: Sequence[str], table: np.ndarray | None = None) -> Game:
    """The engine's Game for a validated d100 scenario spec (``combatsim.d100.scenario.build``).

    Member ``c`` is ``spec["combatants"][c]``: side 0's members in file order, then side 1's.
    ``table``: the spec's fight table (api.fight_table) where the caller has built it already.
    """
    table = fight_table(spec["combatants"], spec["taper"]) if table is None else table
    members = table.shape[0]
    if len(member_names) != members:
        raise ValueError(f"member_names must name the scenario's {members} members, got {len(member_names)}")
    if len(side_names) != 2:
        raise ValueError(f"side_names must name the 2 sides, got {len(side_names)}")
    ambush_side = -1 if spec["ambush_side"] is None else spec["ambush_side"]
    config = engine.make_config(table, spec["passes"], spec["max_rounds"], ambush_side)
    names = observation_names(int(config[engine.G_ALLY_SLOTS]), int(config[engine.G_FOE_SLOTS]))
    return Game(
        ruleset="d100",
        table=table,
        config=config,
        member_names=tuple(member_names),
        member_sides=tuple(int(side) for side in table[:, C_SIDE]),
        side_names=(side_names[0], side_names[1]),
        action_names=engine.ACTION_NAMES,
        observation_names=names,
        count_names=engine.COUNT_NAMES,
        state_size=engine.state_size(members),
        step_name="pass",
        length_unit="round",
        engine_module="combatsim.d100.engine",
    )
