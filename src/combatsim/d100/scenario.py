"""d100 scenario files (combatsim.scenario): combatants with scores, weapons and armour.

```toml
ruleset = "d100"
[options]                 # all optional
passes = 2                # passes per round
max_rounds = 20           # then a draw
ambush_side = 0           # that side ambushes the other before round 1 (-1 or absent: none)
taper = "halving"         # several specialty ranks: halving | highest | flat
[[sides]]
name = "Vera"
[[sides.members]]
fighting = 60             # or the six scores: combat, athletics, strength, agility, endurance, perception
parkour = 40
perception = 50
specialty = [2]
torso = "none"            # none | light | heavy
helmet = false
weapon = { lethality = 30, severity = "2", category = "melee" }
```
"""

from __future__ import annotations

from combatsim.d100 import model
from combatsim.d100.api import (
    DEFAULT_POLICY,
    MAX_COMBATANTS,
    MAX_LETHALITY,
    MAX_PASSES,
    MAX_ROUNDS,
    MAX_SCORE,
    Combatant,
    Weapon,
    check_severity,
    combatant_row,
    simulate_fights,
)
from combatsim.d100.layout import POLICY_NAMES
from combatsim.fights import FightSummary
from combatsim.scenario import MAX_MEMBERS_PER_SIDE, Reader

SCORES = ("combat", "athletics", "strength", "agility", "endurance", "perception")


def _weapon(reader: Reader, key: str, required: bool = True) -> Weapon | None:
    if not required and key not in reader.table:
        reader.used.add(key)
        return None
    table = reader.sub(key)
    weapon = Weapon(
        lethality=table.integer("lethality", 0, MAX_LETHALITY),
        severity=table.parsed("severity", lambda text, _field: check_severity(text), default="1"),
        nonlethal=table.boolean("nonlethal"),
        category=table.choice("category", model.CATEGORIES, default="melee"),
        long_range=table.boolean("long_range"),
    )
    table.finish()
    return weapon


def _ranks(reader: Reader, key: str) -> tuple[int, ...]:
    value = reader.table.get(key, [])
    reader.used.add(key)
    if not isinstance(value, list) or len(value) > 10 or not all(
        isinstance(r, int) and not isinstance(r, bool) and 0 <= r <= 10 for r in value
    ):
        raise reader.error(key, f"must be a list of at most 10 ranks in 0..10, got {value!r}")
    return tuple(value)


def _member(reader: Reader, side: int) -> Combatant:
    if "fighting" in reader.table:
        fighting = reader.integer("fighting", 0, MAX_SCORE)
        perception = reader.integer("perception", 0, MAX_SCORE, default=0)
    else:
        scores = {name: reader.integer(name, 0, MAX_SCORE) for name in SCORES}
        fighting = model.fighting_score(**scores)
        perception = scores["perception"]
    policy = reader.sub("policy", required=False)
    weights = tuple(policy.integer(action, 0, 100, default=default) for action, default in zip(POLICY_NAMES, DEFAULT_POLICY,
                                                                                             strict=True))
    policy.finish()
    combatant = Combatant(
        side=side,
        fighting=fighting,
        pool=reader.integer("pool", 0, MAX_SCORE, default=fighting),
        parkour=reader.integer("parkour", 0, MAX_SCORE, default=0),
        perception=perception,
        weapon=_weapon(reader, "weapon"),
        second_weapon=_weapon(reader, "second_weapon", required=False),
        specialty=_ranks(reader, "specialty"),
        two_weapon_style=reader.integer("two_weapon_style", 0, 10, default=0),
        two_gun_style=reader.integer("two_gun_style", 0, 10, default=0),
        ambush_specialist=_ranks(reader, "ambush_specialist"),
        combat_reflexes=_ranks(reader, "combat_reflexes"),
        torso=reader.choice("torso", model.TORSO_COVERAGES, default="none"),
        helmet=reader.boolean("helmet"),
        automatic_fire=reader.boolean("automatic_fire"),
        distant=reader.boolean("distant"),
        policy=weights,
    )
    try:  # the API's own checks (weights summing to 100, dual-wield requirements...), with this path
        combatant_row(combatant, name=reader.path)
    except (ValueError, TypeError) as problem:
        raise reader.error(None, str(problem)) from None
    return combatant


def build(top: Reader, sides: list[Reader]) -> dict:
    options = top.sub("options", required=False)
    ambush = options.integer("ambush_side", -1, 1, default=-1)  # -1: nobody ambushes
    spec = {
        "passes": options.integer("passes", 1, MAX_PASSES, default=2),
        "max_rounds": options.integer("max_rounds", 1, MAX_ROUNDS, default=20),
        "ambush_side": None if ambush < 0 else ambush,
        "taper": options.choice("taper", model.TAPERS, default="halving"),
    }
    options.finish()
    limit = min(MAX_MEMBERS_PER_SIDE, MAX_COMBATANTS // 2)
    combatants = []
    for side_index, side in enumerate(sides):
        for member in side.items("members", limit):
            combatants.append(_member(member, side_index))
            member.finish()
    spec["combatants"] = combatants
    return spec


def run(spec: dict, *, n: int, seed: int, backend: str, threads: int | None,
        chunk_size: int | None = None) -> FightSummary:
    result = simulate_fights(n, spec["combatants"], passes=spec["passes"], max_rounds=spec["max_rounds"],
                             ambush_side=spec["ambush_side"], taper=spec["taper"], seed=seed, backend=backend,
                             threads=threads, chunk_size=chunk_size)
    counts = result.counts
    return FightSummary(
        fights=result.fights,
        wins=[counts["wins_side_0"], counts["wins_side_1"]],
        draws=counts["draws"],
        rounds_histogram=result.rounds_histogram,
        seed=seed,
        backend=result.backend,
        threads=result.threads,
        partial=result.partial,
        stopped_early=result.fights < n and not result.partial,
        statistics={key: value for key, value in counts.items()
                    if key not in ("wins_side_0", "wins_side_1", "draws", "rounds")},
    )


def wins(spec: dict, totals) -> tuple[list[int], int]:
    from combatsim.d100.layout import F_DRAWS, F_WINS

    return [int(totals[F_WINS]), int(totals[F_WINS + 1])], int(totals[F_DRAWS])
