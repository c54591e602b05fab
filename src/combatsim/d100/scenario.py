"""d100 scenario files (combatsim.scenario): combatants with scores, weapons and armour.

The fields are declared once, below (``OPTIONS``, ``MEMBER``); ``combatsim scenario fields d100``
prints them and ``combatsim scenario new d100`` prints the example ``EXAMPLE``.
"""

from __future__ import annotations

from dataclasses import replace

from combatsim.d100 import model
from combatsim.d100.api import (
    DEFAULT_POLICY,
    MAX_COMBATANTS,
    MAX_LETHALITY,
    MAX_PASSES,
    MAX_RANK,
    MAX_RANKS,
    MAX_ROUNDS,
    MAX_SCORE,
    Combatant,
    Weapon,
    check_severity,
    combatant_row,
    simulate_fights,
)
from combatsim.d100.layout import POLICY_NAMES
from combatsim.fight_summary import FightSummary, kernel_summary, standing_by_side
from combatsim.scenario_fields import MAX_MEMBERS_PER_SIDE, MEMBER_NAME, REQUIRED, Field, Reader, call, read_sides

MAX_MEMBERS = min(MAX_MEMBERS_PER_SIDE, MAX_COMBATANTS // 2)

OPTIONS = (
    Field("passes", "integer", "passes per round", default=2, low=1, high=MAX_PASSES),
    Field("max_rounds", "integer", "rounds before the fight stops unfinished", default=20, low=1, high=MAX_ROUNDS),
    Field("ambush_side", "integer", "the side that ambushes the other before round 1; -1: no ambush",
          default=-1, low=-1, high=1),
    Field("taper", "choice", "how several specialty ranks add up", default="halving", choices=model.TAPERS),
)

WEAPON = (
    Field("lethality", "integer", "weapon lethality", low=0, high=MAX_LETHALITY),
    Field("severity", "text", "weapon severity", default="1", syntax="0..100 in tenths, e.g. 1.5",
          parse=lambda text, _path: check_severity(text), numbers=True),
    Field("nonlethal", "boolean", "a nonlethal weapon (its lethal wounds are serious)", default=False),
    Field("category", "choice", "the weapon's category", default="melee", choices=model.CATEGORIES),
    Field("long_range", "boolean", "a ranged weapon used at long range", default=False),
)

SCORES = ("combat", "athletics", "strength", "agility", "endurance", "perception")
_SIX = "required without fighting: fighting = floor((combat x 4 + the other five) / 9)"


def _ranks(name: str, help: str) -> Field:
    return Field(name, "integers", help, default=(), low=0, high=MAX_RANK, entries=(0, MAX_RANKS))


MEMBER = (
    Field("fighting", "integer", "the Fighting score", default=None, low=0, high=MAX_SCORE,
          note="give fighting, or the six scores below"),
    *(Field(name, "integer", f"the {name.capitalize()} score", default=None, low=0, high=MAX_SCORE,
            note=_SIX + ("; with fighting, perception alone (default 0)" if name == "perception" else ""))
      for name in SCORES),
    Field("pool", "integer", "the attack pool", default=None, low=0, high=MAX_SCORE, note="absent: fighting"),
    Field("arcane", "integer", "the Arcane score: the pool of its elementalism weapon's attacks", default=None,
          low=0, high=MAX_SCORE, note="required with an elementalism weapon"),
    Field("parkour", "integer", "the Parkour score", default=0, low=0, high=MAX_SCORE),
    Field("weapon", "table", "the weapon", fields=WEAPON),
    Field("second_weapon", "table", "a second weapon, for dual wielding", default=None, fields=WEAPON),
    _ranks("specialty", "specialty ranks, one entry a specialty"),
    Field("two_weapon_style", "integer", "Two-Weapon Style rank", default=0, low=0, high=10),
    Field("two_gun_style", "integer", "Two-Gun Style rank", default=0, low=0, high=10),
    _ranks("ambush_specialist", "Ambush Specialist ranks"),
    _ranks("combat_reflexes", "Combat Reflexes ranks"),
    Field("torso", "choice", "torso armour", default="none", choices=model.TORSO_COVERAGES,
          note="heavy counts as light armour without a helmet"),
    Field("helmet", "boolean", "wears a helmet", default=False,
          note="armour class heavy needs heavy torso and a helmet; a helmet alone is light"),
    Field("automatic_fire", "boolean", "fires its weapon automatic", default=False),
    Field("distant", "boolean", "its attacks are distant ranged attacks", default=False),
    Field("policy", "table", "weights of the actions it picks each pass", default={}, note="the weights sum to 100",
          fields=tuple(Field(action, "integer", f"weight of {action.replace('_', ' ')}", default=weight, low=0, high=100)
                       for action, weight in zip(POLICY_NAMES, DEFAULT_POLICY, strict=True))),
    MEMBER_NAME,
)
_FIELD = {f.name: f for f in MEMBER}

#: The example scenario ``combatsim scenario new d100`` prints as a commented starting file.
EXAMPLE = "d100_duel"


def _weapon(table: Reader) -> Weapon:
    return Weapon(**table.read_all(WEAPON))


def _member(reader: Reader, side: int) -> Combatant:
    if reader.has(_FIELD["fighting"]):
        fighting = reader.read(_FIELD["fighting"])
        perception = reader.read(_FIELD["perception"]) or 0
        for name in SCORES[:-1]:
            if name in reader.table:
                raise reader.error(name, "give either fighting or the six scores, not both")
    else:
        scores = {name: reader.read(replace(_FIELD[name], default=REQUIRED)) for name in SCORES}
        fighting = model.fighting_score(**scores)
        perception = scores["perception"]
    weights = tuple(reader.read(_FIELD["policy"]).read_all(_FIELD["policy"].fields).values())
    second = reader.read(_FIELD["second_weapon"])
    pool = reader.read(_FIELD["pool"])
    combatant = Combatant(
        side=side,
        fighting=fighting,
        pool=fighting if pool is None else pool,
        perception=perception,
        weapon=_weapon(reader.read(_FIELD["weapon"])),
        second_weapon=None if second is None else _weapon(second),
        policy=weights,
        **{name: reader.read(_FIELD[name]) for name in (
            "arcane", "parkour", "specialty", "two_weapon_style", "two_gun_style", "ambush_specialist", "combat_reflexes",
            "torso", "helmet", "automatic_fire", "distant")},
    )
    # the API's own checks (weights summing to 100, dual-wield requirements...), with this path
    call(reader, combatant_row, combatant, name=reader.path)
    return combatant


def build(options: Reader, sides: list[list[Reader]]) -> dict:
    spec = options.read_all(OPTIONS)
    if spec["ambush_side"] < 0:  # the file's -1: no ambush
        spec["ambush_side"] = None
    spec["combatants"] = [combatant for side in read_sides(sides, _member, MEMBER) for combatant in side]
    return spec


def step_unit(spec: dict) -> str:
    return f"rounds of {spec['passes']} passes"


#: The kernel's totals over both sides (layout.FIGHT_COUNT_NAMES), as the report names them.
TOTALS = {
    "attacks": "attacks_count",
    "lethal": "lethal_wounds_count",
    "serious": "serious_wounds_count",
    "flesh": "flesh_wounds_count",
    "instant_death": "instant_deaths_count",
    "escalated_serious": "escalated_to_serious_count",
    "escalated_lethal": "escalated_to_lethal_count",
    "surprised": "surprised_count",
}


def run(spec: dict, *, n: int, seed: int, backend: str, threads: int | None,
        chunk_size: int | None = None, outcomes: bool = False) -> FightSummary:
    result = simulate_fights(n, spec["combatants"], passes=spec["passes"], max_rounds=spec["max_rounds"],
                             ambush_side=spec["ambush_side"], taper=spec["taper"], seed=seed, backend=backend,
                             threads=threads, chunk_size=chunk_size, outcomes=outcomes)
    counts = result.counts
    return kernel_summary(
        result, n, seed, step_unit(spec),
        wins=[counts["wins_side_0"], counts["wins_side_1"]],
        draws=counts["draws"],
        unfinished=counts["unfinished"],
        rounds_histogram=result.rounds_histogram,
        **_figures(counts),
        standing=standing_by_side(result.standing, [sum(c.side == side for c in spec["combatants"]) for side in (0, 1)]),
        winner=result.winner,
        rounds=result.rounds,
    )


def _figures(counts: dict) -> dict:
    """The per-side figures and the totals, from the fight counts by name."""
    return {"per_side": [{"wins_by_flight_count": counts[f"wins_by_flight_side_{side}"],
                          "escapes_count": counts[f"escapes_side_{side}"]} for side in (0, 1)],
            "totals": {label: counts[key] for key, label in TOTALS.items()}}


def engine_figures(spec: dict, results) -> dict:
    """``run``'s figures for fights the engine played (combatsim.policies.FightResults)."""
    return {"draws": results.draws, "unfinished": results.unfinished, **_figures(results.totals)}


def wins(spec: dict, totals) -> tuple[list[int], int]:
    from combatsim.d100.layout import F_DRAWS, F_UNFINISHED, F_WINS

    return [int(totals[F_WINS]), int(totals[F_WINS + 1])], int(totals[F_DRAWS] + totals[F_UNFINISHED])
