"""TSS scenario files (combatsim.scenario): characters with scores, a weapon and armour.

```toml
ruleset = "tss"
[options]                      # all optional
max_rounds = 100               # then a draw
one_step_shift = false         # option: quality shifts the damage type one step at most
[[sides]]
name = "Alex"
[[sides.members]]
skill = "16/8/4"               # Ordinary/Good/Amazing, or one score
action_check = "+14/13/6/3"
actions_per_round = 2
durability = [10, 10, 5]       # stun, wound, mortal
attack_steps = -3              # the attacker's own modifiers (accuracy, equipment, ...)
defence_steps = 0              # what it imposes on attackers (resistance, dodge, ...)
resolve = "12/6/3"             # optional Resolve-physical
weapon = { damage = "d4w/d4+2w/d4-1m", class = "En", quality = "good" }
armour = { dice = { En = "d6" }, quality = "ordinary" }      # optional
```
"""

from __future__ import annotations

from combatsim.fights import FightSummary
from combatsim.scenario import MAX_MEMBERS_PER_SIDE, Reader
from combatsim.tss.api import MAX_CHARACTERS, MAX_ROUNDS, Combatant, simulate_fights
from combatsim.tss.model import MAX_DURABILITY, QUALITIES, Armour, Weapon
from combatsim.tss.reference import FIGHT_COUNTS  # noqa: F401  (the counts layout wins() reads)


def _make(reader: Reader, factory, *args, **kwargs):
    """Run a model constructor, giving its ValueError/TypeError this table's path."""
    try:
        return factory(*args, **kwargs)
    except (ValueError, TypeError) as problem:
        raise reader.error(None, str(problem)) from None


def _member(reader: Reader) -> Combatant:
    weapon_table = reader.sub("weapon")
    weapon = _make(weapon_table, Weapon.make, weapon_table.string("damage"),
                   damage_class=weapon_table.string("class", default="En"),
                   quality=weapon_table.choice("quality", QUALITIES, default="ordinary"))
    weapon_table.finish()
    armour = None
    if "armour" in reader.table:
        armour_table = reader.sub("armour")
        dice = armour_table.sub("dice")
        classes = {name: dice.string(name) for name in list(dice.table)}
        dice.finish()
        armour = _make(armour_table, Armour.make, classes,
                       quality=armour_table.choice("quality", QUALITIES, default="ordinary"))
        armour_table.finish()
    else:
        reader.used.add("armour")
    durability = reader.table.get("durability", [10, 10, 5])
    reader.used.add("durability")
    if not isinstance(durability, list) or len(durability) != 3 or not all(
        isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= MAX_DURABILITY for v in durability
    ):
        raise reader.error("durability", f"must be [stun, wound, mortal], each in 1..{MAX_DURABILITY}, got {durability!r}")
    resolve = reader.string("resolve", default="") if "resolve" in reader.table else None
    combatant = Combatant(
        skill=reader.string("skill"),
        action_check=reader.string("action_check"),
        weapon=weapon,
        durability=tuple(durability),
        actions_per_round=reader.integer("actions_per_round", 1, 4, default=1),
        armour=armour,
        attack_steps=reader.integer("attack_steps", -1000, 24, default=0),
        defence_steps=reader.integer("defence_steps", -1000, 24, default=0),
        resolve=resolve,
    )
    from combatsim.tss.api import fight_table

    _make(reader, fight_table, [combatant], [combatant])  # scores and tracks parse here, with this path
    return combatant


def build(top: Reader, sides: list[Reader]) -> dict:
    options = top.sub("options", required=False)
    spec = {
        "max_rounds": options.integer("max_rounds", 1, MAX_ROUNDS, default=100),
        "one_step_shift": options.boolean("one_step_shift"),
    }
    options.finish()
    limit = min(MAX_MEMBERS_PER_SIDE, MAX_CHARACTERS // 2)
    members = []
    for side in sides:
        side_members = []
        for member in side.items("members", limit):
            side_members.append(_member(member))
            member.finish()
        members.append(side_members)
    spec["sides"] = members
    return spec


def run(spec: dict, *, n: int, seed: int, backend: str, threads: int | None,
        chunk_size: int | None = None) -> FightSummary:
    result = simulate_fights(n, side_a=spec["sides"][0], side_b=spec["sides"][1], max_rounds=spec["max_rounds"],
                             one_step_shift=spec["one_step_shift"], seed=seed, backend=backend, threads=threads,
                             chunk_size=chunk_size)
    c = [int(v) for v in result.counts]
    return FightSummary(
        fights=result.fights,
        wins=[c[0], c[1]],
        draws=c[2],
        rounds_histogram=result.rounds_histogram,
        seed=seed,
        backend=result.backend,
        threads=result.threads,
        partial=result.partial,
        stopped_early=result.fights < n and not result.partial,
        statistics={"attacks": c[4], "stun": c[5], "wound": c[6], "mortal": c[7]},
    )


def wins(spec: dict, totals) -> tuple[list[int], int]:
    return [int(totals[0]), int(totals[1])], int(totals[2])
