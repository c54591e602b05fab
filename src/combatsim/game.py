"""A scenario made ready for its ruleset's engine, with every member named.

``scenario_game`` takes a :class:`combatsim.scenario.Scenario`, a scenario file's path (or an
example's name) or a scenario document (a dict, validated by the same code as a file) and returns
the :class:`combatsim.engine.Game` of ``combatsim.<ruleset>.game.game``. Members are named for
environments and ``--policy``: a member's own ``name`` field, else its side's name when it is
alone on its side, else ``"<side name> <k>"`` with k counted from 1 within the side.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from importlib import import_module
from pathlib import Path

from combatsim.engine import Game
from combatsim.policies import member_index as member_index
from combatsim.scenario import Scenario, ScenarioError, load, resolve, validate


def as_scenario(scenario: Scenario | str | Path | Mapping) -> Scenario:
    """A validated Scenario from a Scenario, a path or example name, or a scenario document."""
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, Mapping):
        return validate(copy.deepcopy(dict(scenario)), "scenario", default_name="scenario")
    if isinstance(scenario, str | Path):
        path, label = resolve(str(scenario))
        return load(path, label=label)
    raise TypeError(f"scenario must be a path, an example's name or a scenario document (dict); "
                    f"got {type(scenario).__name__}")


def member_names(scenario: Scenario) -> tuple[str, ...]:
    """Every member's name, side 0's members first, in file order; refuses two members of one name."""
    names = []
    for side_name, side in zip(scenario.side_names, scenario.document["sides"], strict=True):
        members = side["members"]
        for k, member in enumerate(members):
            own = member.get("name")
            names.append(own if own is not None else side_name if len(members) == 1 else f"{side_name} {k + 1}")
    repeated = [name for k, name in enumerate(names) if name in names[:k]]
    if repeated:
        raise ScenarioError(f"{scenario.file}: two members are named {repeated[0]!r}; give each member a unique "
                            f"name (sides[S].members[M].name)")
    return tuple(names)


def scenario_game(scenario: Scenario | str | Path | Mapping) -> Game:
    """The engine's Game for ``scenario`` (a Scenario, a path or example name, or a document)."""
    scenario = as_scenario(scenario)
    module = import_module(f"combatsim.{scenario.ruleset}.game")
    return module.game(scenario.spec, member_names(scenario), tuple(scenario.side_names))
