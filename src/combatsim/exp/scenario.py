"""EXP scenario files (combatsim.scenario): personas and creatures, each with one weapon.

```toml
ruleset = "exp"
[options]                  # all optional
unit_limit = 100           # then a draw
hit_on_equal = false       # option: a to-hit equal to AR hits
critical = false           # option: a natural 1000 ignores MR
[[sides]]
name = "Bob Too"
[[sides.members]]
kind = "persona"           # a persona: its combat table gives BP/BNP, MR and DA
class = "nomad"
level = 1                  # above 1 needs experience_bonus = [A, B, C]
awe = 10
cha = 10
con = 12
dex = 16
int = 12
mstr = 10
pstr = 12
hit_points = 30
armour_rating = 520
proficient = true          # proficient with its weapon (takes one of Table 9.7's slots)
weapon = { name = "harpoon", type = "B", damage = "1d8", ammunition = 6 }
[[sides.members]]
kind = "creature"          # a creature: explicit bonus, MR and DA
hit_points = 40
armour_rating = 575
bonus = 90
maximum_roll = 750
weapon = { name = "bite", type = "A", damage = "2d6", natural = true }
```
"""

from __future__ import annotations

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
from combatsim.exp.model import CLASSES, MAX_AMMUNITION, MAX_ATTRIBUTE, WEAPON_TYPES, Persona, Weapon
from combatsim.fights import FightSummary
from combatsim.scenario import MAX_MEMBERS_PER_SIDE, Reader

ATTRIBUTES = ("awe", "cha", "con", "dex", "int", "mstr", "pstr")


def _weapon(reader: Reader) -> Weapon:
    table = reader.sub("weapon")
    ammunition = table.integer("ammunition", 0, MAX_AMMUNITION) if "ammunition" in table.table else None
    weapon = Weapon(
        name=table.string("name"),
        weapon_type=table.choice("type", WEAPON_TYPES),
        damage=table.parsed("damage", Dice.parse),
        ammunition=ammunition,
        natural=table.boolean("natural"),
    )
    table.finish()
    return weapon


def _member(reader: Reader) -> Combatant:
    kind = reader.choice("kind", ("persona", "creature"))
    name = reader.string("name", default=kind)
    weapon = _weapon(reader)
    hit_points = reader.integer("hit_points", 1, MAX_HIT_POINTS)
    armour_rating = reader.integer("armour_rating", -MAX_ARMOUR_RATING, MAX_ARMOUR_RATING)
    adjustment = reader.integer("adjustment", -MAX_ADJUSTMENT, MAX_ADJUSTMENT, default=0)
    try:
        if kind == "creature":
            return Combatant(
                name=name, hit_points=hit_points, armour_rating=armour_rating, weapon=weapon,
                bonus=reader.integer("bonus", -MAX_BONUS, MAX_BONUS),
                maximum_roll=reader.integer("maximum_roll", 1, MAX_ROLL),
                damage_adjustment=reader.integer("damage_adjustment", -MAX_DAMAGE_ADJUSTMENT, MAX_DAMAGE_ADJUSTMENT,
                                                 default=0),
                adjustment=adjustment,
            )
        attributes = {name.rstrip("_"): reader.integer(name, 0, MAX_ATTRIBUTE) for name in ATTRIBUTES}
        bonus = reader.table.get("experience_bonus")
        reader.used.add("experience_bonus")
        if bonus is not None and (not isinstance(bonus, list) or len(bonus) != 3
                                  or not all(isinstance(b, int) and not isinstance(b, bool) for b in bonus)):
            raise reader.error("experience_bonus", f"must be three integers [A, B, C], got {bonus!r}")
        persona = Persona(
            awe=attributes["awe"], cha=attributes["cha"], con=attributes["con"], dex=attributes["dex"],
            int_=attributes["int"], mstr=attributes["mstr"], pstr=attributes["pstr"],
            hit_points=hit_points,
            persona_class=reader.choice("class", CLASSES),
            level=reader.integer("level", 1, 100, default=1),
            proficiencies=(weapon,) if reader.boolean("proficient") else (),
            experience_bonus=tuple(bonus) if bonus is not None else None,
        )
        return Combatant.from_persona(persona, weapon, armour_rating=armour_rating, adjustment=adjustment, name=name)
    except (ValueError, TypeError) as problem:
        if str(problem).startswith(reader.file):
            raise
        raise reader.error(None, str(problem)) from None


def build(top: Reader, sides: list[Reader]) -> dict:
    options = top.sub("options", required=False)
    spec = {
        "unit_limit": options.integer("unit_limit", 1, MAX_UNIT_LIMIT, default=DEFAULT_UNIT_LIMIT),
        "hit_on_equal": options.boolean("hit_on_equal"),
        "critical": options.boolean("critical"),
    }
    options.finish()
    members = []
    for side in sides:
        side_members = []
        for member in side.items("members", MAX_MEMBERS_PER_SIDE):
            side_members.append(_member(member))
            member.finish()
        members.append(side_members)
    spec["sides"] = members
    return spec


def run(spec: dict, *, n: int, seed: int, backend: str, threads: int | None,
        chunk_size: int | None = None) -> FightSummary:
    result = simulate_fight(n, spec["sides"][0], spec["sides"][1], unit_limit=spec["unit_limit"],
                            hit_on_equal=spec["hit_on_equal"], critical=spec["critical"], seed=seed,
                            backend=backend, threads=threads, chunk_size=chunk_size)
    return FightSummary(
        fights=result.fights,
        wins=list(result.wins),
        draws=result.draws,
        rounds_histogram={units + 1: int(c) for units, c in enumerate(result.units_histogram) if c},
        seed=seed,
        backend=result.backend,
        threads=result.threads,
        partial=result.partial,
        stopped_early=result.fights < n and not result.partial,
        round_name="units",
        statistics={"mutual_kills": result.mutual, "damage_dealt": list(result.damage),
                    "ammunition_spent": list(result.ammunition), "to_hit_rolls": list(result.to_hit_rolls),
                    "hits": list(result.hits)},
    )


def wins(spec: dict, totals) -> tuple[list[int], int]:
    from combatsim.exp.reference import FIGHT_DRAWS, FIGHT_WINS_SIDE0, FIGHT_WINS_SIDE1

    return [int(totals[FIGHT_WINS_SIDE0]), int(totals[FIGHT_WINS_SIDE1])], int(totals[FIGHT_DRAWS])
