"""EXP scenario files (combatsim.scenario): personas and creatures, each with one weapon.

The fields are declared once, below (``OPTIONS``, ``MEMBER``); ``combatsim scenario fields exp``
prints them and ``combatsim scenario new exp`` prints the example ``EXAMPLE``.
"""

from __future__ import annotations

from dataclasses import replace

from combatsim.dice import Dice
from combatsim.exp.api import (
    DEFAULT_UNIT_LIMIT,
    MAX_ADJUSTMENT,
    MAX_ARMOUR_RATING,
    MAX_BONUS,
    MAX_DAMAGE_ADJUSTMENT,
    MAX_HIT_POINTS,
    MAX_ROLL,
    MAX_UNIT_LIMIT,
    Combatant,
    simulate_fight,
)
from combatsim.exp.model import (
    CLASSES,
    MAX_AMMUNITION,
    MAX_ATTRIBUTE,
    MAX_EXPERIENCE_BONUS,
    MAX_LEVEL,
    WEAPON_TYPES,
    Persona,
    Weapon,
)
from combatsim.fight_summary import FightSummary, kernel_summary, standing_by_side
from combatsim.runner import nonzero_counts
from combatsim.scenario_fields import MAX_MEMBERS_PER_SIDE, REQUIRED, Field, Reader, call, read_sides

MAX_MEMBERS = MAX_MEMBERS_PER_SIDE

OPTIONS = (
    Field("unit_limit", "integer", "units of combat time before the fight stops unfinished", default=DEFAULT_UNIT_LIMIT,
          low=1, high=MAX_UNIT_LIMIT),
    Field("hit_on_equal", "boolean", "a to-hit equal to the armour rating hits", default=False),
    Field("critical", "boolean", "a natural 1000 ignores the maximum roll", default=False),
)

WEAPON = (
    Field("name", "string", "the weapon's name (a persona's proficiency names it)"),
    Field("type", "choice", "weapon type: to-hit rolls per unit", choices=WEAPON_TYPES),
    Field("damage", "text", "damage dice", syntax="NdS+K, e.g. \"2d6\" or \"d8+1\"", parse=Dice.parse),
    Field("ammunition", "integer", "rounds or charges", default=None, low=0, high=MAX_AMMUNITION,
          note="absent: never runs out"),
    Field("natural", "boolean", "a creature's own attack (claws, bite)", default=False),
)

ATTRIBUTES = ("awe", "cha", "con", "dex", "int", "mstr", "pstr")
_PERSONA = 'kind = "persona" only'
_CREATURE = 'kind = "creature" only'

MEMBER = (
    Field("kind", "choice", "a persona (its combat table gives bonus, maximum roll and damage adjustment) "
          "or a creature (given explicitly)", choices=("persona", "creature")),
    Field("name", "string", "the combatant's name", default=None, note="absent: its kind"),
    Field("hit_points", "integer", "hit points", low=1, high=MAX_HIT_POINTS),
    Field("armour_rating", "integer", "armour rating (AR)", low=-MAX_ARMOUR_RATING, high=MAX_ARMOUR_RATING),
    Field("adjustment", "integer", "to-hit adjustment", default=0, low=-MAX_ADJUSTMENT, high=MAX_ADJUSTMENT),
    Field("weapon", "table", "the weapon", fields=WEAPON),
    Field("class", "choice", "persona class", choices=CLASSES, note=_PERSONA),
    Field("level", "integer", "persona level", default=1, low=1, high=MAX_LEVEL, note=_PERSONA),
    *(Field(name, "integer", f"attribute {name.upper()}", low=0, high=MAX_ATTRIBUTE, note=_PERSONA)
      for name in ATTRIBUTES),
    Field("proficient", "boolean", "proficient with its weapon", default=False, note=_PERSONA),
    Field("experience_bonus", "integers", "the experience bonus [A, B, C] of its level", default=None,
          low=-MAX_EXPERIENCE_BONUS, high=MAX_EXPERIENCE_BONUS, entries=(3, 3),
          note=_PERSONA + "; required above level 1"),
    Field("bonus", "integer", "to-hit bonus", low=-MAX_BONUS, high=MAX_BONUS, note=_CREATURE),
    Field("maximum_roll", "integer", "maximum roll (MR)", low=1, high=MAX_ROLL, note=_CREATURE),
    Field("damage_adjustment", "integer", "damage adjustment (DA)", default=0, low=-MAX_DAMAGE_ADJUSTMENT,
          high=MAX_DAMAGE_ADJUSTMENT, note=_CREATURE),
)
_FIELD = {f.name: f for f in MEMBER}
_ONLY = {"persona": {f.name for f in MEMBER if f.note.startswith(_CREATURE)},
         "creature": {f.name for f in MEMBER if f.note.startswith(_PERSONA)}}

#: The example scenario ``combatsim scenario new exp`` prints as a commented starting file.
EXAMPLE = "exp_bob_too"


def _weapon(table: Reader) -> Weapon:
    values = table.read_all(WEAPON)
    return call(table, Weapon, name=values["name"], weapon_type=values["type"], damage=values["damage"],
                ammunition=values["ammunition"], natural=values["natural"])


def _member(reader: Reader, side: int) -> Combatant:
    kind = reader.read(_FIELD["kind"])
    for name in _ONLY[kind]:
        if name in reader.table:
            raise reader.error(name, f"is for a {'creature' if kind == 'persona' else 'persona'}, not a {kind}")
    name = reader.read(_FIELD["name"]) or kind
    weapon = _weapon(reader.read(_FIELD["weapon"]))
    hit_points = reader.read(_FIELD["hit_points"])
    armour_rating = reader.read(_FIELD["armour_rating"])
    adjustment = reader.read(_FIELD["adjustment"])
    if kind == "creature":
        values = {key: reader.read(_FIELD[key]) for key in ("bonus", "maximum_roll", "damage_adjustment")}
        return call(reader, Combatant, name=name, hit_points=hit_points, armour_rating=armour_rating, weapon=weapon,
                    adjustment=adjustment, **values)
    attributes = {"int_" if key == "int" else key: reader.read(_FIELD[key]) for key in ATTRIBUTES}
    level = reader.read(_FIELD["level"])
    bonus = reader.read(_FIELD["experience_bonus"] if level == 1 else replace(_FIELD["experience_bonus"],
                                                                              default=REQUIRED))
    persona = call(reader, Persona, **attributes, hit_points=hit_points, persona_class=reader.read(_FIELD["class"]),
                   level=level, proficiencies=(weapon,) if reader.read(_FIELD["proficient"]) else (),
                   experience_bonus=bonus)
    return call(reader, Combatant.from_persona, persona, weapon, armour_rating=armour_rating, adjustment=adjustment,
                name=name)


def build(options: Reader, sides: list[list[Reader]]) -> dict:
    return {**options.read_all(OPTIONS), "sides": read_sides(sides, _member, MEMBER)}


def step_unit(spec: dict) -> str:
    return "units of combat time"


def run(spec: dict, *, n: int, seed: int, backend: str, threads: int | None,
        chunk_size: int | None = None, outcomes: bool = False) -> FightSummary:
    result = simulate_fight(n, spec["sides"][0], spec["sides"][1], unit_limit=spec["unit_limit"],
                            hit_on_equal=spec["hit_on_equal"], critical=spec["critical"], seed=seed,
                            backend=backend, threads=threads, chunk_size=chunk_size, outcomes=outcomes)
    return kernel_summary(
        result, n, seed, step_unit(spec),
        wins=list(result.wins),
        # the kernel's draws include the fights still running at the unit limit: reported apart
        draws=result.mutual,
        unfinished=result.draws - result.mutual,
        rounds_histogram=nonzero_counts(result.units_histogram, first=1),
        per_side=[_side_figures(result.fights, int(result.damage[side]), int(result.to_hit_rolls[side]),
                                int(result.hits[side]), int(result.ammunition[side])) for side in (0, 1)],
        totals={},
        standing=standing_by_side(result.standing, [len(side) for side in spec["sides"]]),
        winner=result.winner,
        rounds=result.units,
    )


def _side_figures(fights: int, damage: int, to_hit_rolls: int, hits: int, ammunition: int) -> dict:
    """One side's figures over ``fights`` fights."""
    return {
        "damage_dealt_total": damage,
        "damage_dealt_mean_per_fight": damage / (fights or 1),
        "to_hit_rolls_count": to_hit_rolls,
        "hits_count": hits,
        "hit_rate": hits / to_hit_rolls if to_hit_rolls else 0.0,
        "ammunition_spent_count": ammunition,
    }


def engine_figures(spec: dict, results) -> dict:
    """``run``'s figures for fights the engine played (combatsim.policies.FightResults)."""
    counts = results.totals
    return {"draws": results.draws, "unfinished": results.unfinished, "totals": {}, "per_side": [
        _side_figures(results.fights, counts[f"damage_side_{side}"], counts[f"to_hit_rolls_side_{side}"],
                      counts[f"hits_side_{side}"], counts[f"ammunition_side_{side}"]) for side in (0, 1)]}


def wins(spec: dict, totals) -> tuple[list[int], int]:
    from combatsim.exp.engine import FIGHT_DRAWS, FIGHT_WINS_SIDE0, FIGHT_WINS_SIDE1

    return [int(totals[FIGHT_WINS_SIDE0]), int(totals[FIGHT_WINS_SIDE1])], int(totals[FIGHT_DRAWS])
