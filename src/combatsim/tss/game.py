"""A TSS scenario made ready for the engine (combatsim.tss.engine): its arrays and the names in them."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from combatsim.engine import Game
from combatsim.tss import engine
from combatsim.tss.api import fight_table


def action_names(slots: int, two_weapons: bool) -> tuple[str, ...]:
    """hold, attack_foe_0 .. attack_foe_{slots-1} (foe j: the j-th member of the other side), aim,
    then, when some member has a second weapon, attack_two_weapons_foe_0 .. (engine.action_count)."""
    two = tuple(f"attack_two_weapons_foe_{j}" for j in range(slots)) if two_weapons else ()
    return ("hold", *(f"attack_foe_{j}" for j in range(slots)), "aim", *two)


def observation_names(slots: int) -> tuple[str, ...]:
    """The globals, then self, allies (ally0 ..) and foes (foe0 ..), each slot's member fields."""
    members = ["self"] + [f"ally{j}" for j in range(slots - 1)] + [f"foe{j}" for j in range(slots)]
    return (*engine.GLOBAL_NAMES, *(f"{who}.{name}" for who in members for name in engine.MEMBER_NAMES))


def game(spec: dict, member_names: Sequence[str], side_names: Sequence[str], table: tuple | None = None) -> Game:
    """The Game of a validated TSS scenario spec (combatsim.tss.scenario.build): member c is row c,
    side 0's members in file order, then side 1's. ``table``: the spec's api.fight_table where the
    caller has built it already."""
    characters, members, classes = fight_table(spec["sides"][0], spec["sides"][1]) if table is None else table
    if len(member_names) != members:
        raise ValueError(f"member_names must name the scenario's {members} members, got {len(member_names)}")
    if len(side_names) != 2:
        raise ValueError(f"side_names must name the 2 sides, got {len(side_names)}")
    table = characters.reshape(members, engine.ROW_BASE + 4 * classes)
    slots = engine.side_slots(table)
    config = np.zeros(engine.config_size(members, slots), dtype=np.int64)
    engine.fill_config(table, spec["max_rounds"], spec["one_step_shift"], config)
    return Game(
        ruleset="tss",
        table=table,
        config=config,
        member_names=tuple(member_names),
        member_sides=tuple(int(side) for side in table[:, engine.R_SIDE]),
        side_names=(side_names[0], side_names[1]),
        action_names=action_names(slots, bool(config[engine.K_TWO])),
        observation_names=observation_names(slots),
        count_names=engine.COUNT_NAMES,
        state_size=engine.state_size(members),
        step_name="phase",
        length_unit="rounds",
        engine_module="combatsim.tss.engine",
    )


def taken_actions(g: Game, state: np.ndarray) -> np.ndarray:
    """(envs, members): the action index each member took in the step last played (hold when it did
    not act), from the engine's state: given from outside, they play that step again."""
    slots = int(g.config[engine.K_SLOTS])
    columns = [engine.S_MEMBERS + engine.M_WIDTH * c + engine.M_ACTION for c in range(len(g.table))]
    intent = state[:, columns]
    two = intent <= engine.INTENT_TWO
    row = np.where(two, engine.INTENT_TWO - intent, np.maximum(intent, 0))
    rank = g.config[engine.K_RANK + row]
    action = np.where(two, engine.ATTACK + slots + 1 + rank, engine.ATTACK + rank)
    action = np.where(intent == engine.INTENT_AIM, engine.ATTACK + slots, action)
    return np.where(intent == engine.INTENT_HOLD, engine.HOLD, action).astype(np.int64)
