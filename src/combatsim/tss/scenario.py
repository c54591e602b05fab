"""TSS scenario files (combatsim.scenario): characters with scores, a weapon and armour.

The fields are declared once, below (``OPTIONS``, ``MEMBER``); ``combatsim scenario fields tss``
prints them and ``combatsim scenario new tss`` prints the example ``EXAMPLE``.
"""

from __future__ import annotations

from combatsim.fight_summary import FightSummary, kernel_summary, standing_by_side
from combatsim.scenario_fields import MAX_MEMBERS_PER_SIDE, MEMBER_NAME, Field, Reader, call, read_sides
from combatsim.tss.api import MAX_CHARACTERS, MAX_ROUNDS, Combatant, fight_table, simulate_fights
from combatsim.tss.model import MAX_DURABILITY, QUALITIES, ActionCheck, Armour, DamageTrack, Score, Weapon

MAX_MEMBERS = min(MAX_MEMBERS_PER_SIDE, MAX_CHARACTERS // 2)
#: what ``scenario fields tss`` says of ``sides[].members``: the order decides every attack's target
MEMBERS_NOTE = ("in order: everyone attacks the foe listed first that is still in the fight, so the order "
                "of a side's members decides whom the other side focuses")

OPTIONS = (
    Field("max_rounds", "integer", "rounds before the fight stops unfinished", default=100, low=1, high=MAX_ROUNDS),
    Field("one_step_shift", "boolean", "quality shifts the damage type one step at most", default=False),
)

WEAPON = (
    Field("damage", "text", "the damage track", syntax='Ordinary/Good/Amazing damage, e.g. "d4w/d4+2w/d4-1m"',
          parse=DamageTrack.parse),
    Field("class", "string", "the damage class, e.g. LI, HI or En", default="En"),
    Field("quality", "choice", "the weapon's quality", default="ordinary", choices=QUALITIES),
)

ARMOUR = (
    Field("dice", "mapping", "a soak die per damage class", syntax='e.g. { En = "d6", LI = "d4+1" }'),
    Field("quality", "choice", "the armour's quality", default="ordinary", choices=QUALITIES),
)

POLICY = (
    Field("aim", "integer", "percent chance to aim (one action) before an attack, holding no aim", default=0,
          low=0, high=100),
    Field("two_weapons", "boolean", "attack with both weapons (needs second_weapon)", default=False),
)

MEMBER = (
    Field("skill", "text", "the attack skill score", syntax='Ordinary/Good/Amazing, e.g. "16/8/4", or one score "16"',
          parse=Score.parse),
    Field("action_check", "text", "the action check", syntax='Marginal/Ordinary/Good/Amazing, e.g. "+14/13/6/3"',
          parse=ActionCheck.parse),
    Field("actions_per_round", "integer", "actions a round", default=1, low=1, high=4),
    Field("durability", "integers", "durability [stun, wound, mortal]", default=(10, 10, 5), low=1,
          high=MAX_DURABILITY, entries=(3, 3)),
    Field("attack_steps", "integer", "the attacker's own modifiers (accuracy, equipment, ...), in steps",
          default=0, low=-1000, high=24),
    Field("defence_steps", "integer", "what it imposes on attackers (resistance, dodge, ...), in steps",
          default=0, low=-1000, high=24),
    Field("resolve", "text", "Resolve-physical score", default=None, syntax='Ordinary/Good/Amazing, e.g. "12/6/3"',
          parse=Score.parse),
    Field("weapon", "table", "the weapon (the main hand's)", fields=WEAPON),
    Field("second_weapon", "table", "the off-hand weapon of a two-weapon attack", default=None, fields=WEAPON),
    Field("ambidexterity", "boolean", "the Ambidexterity feat: two weapons at +0/+2 instead of +2/+4",
          default=False),
    Field("broad_skill", "boolean", "the attack skill is a broad one (+1 step)", default=False),
    Field("armour", "table", "armour", default=None, fields=ARMOUR),
    Field("policy", "table", "the scripted policy's choices", default={}, fields=POLICY),
    MEMBER_NAME,
)
_FIELD = {f.name: f for f in MEMBER}

#: The example scenario ``combatsim scenario new tss`` prints as a commented starting file.
EXAMPLE = "tss_alex_vs_thug"


def _weapon(weapon_table: Reader) -> Weapon:
    values = weapon_table.read_all(WEAPON)
    return call(weapon_table, Weapon.make, values["damage"], damage_class=values["class"],
                quality=values["quality"])


def _member(reader: Reader, side: int) -> Combatant:
    weapon = _weapon(reader.read(_FIELD["weapon"]))
    second_table = reader.read(_FIELD["second_weapon"])
    second = None if second_table is None else _weapon(second_table)
    policy = reader.read(_FIELD["policy"])
    aim, two_weapons = policy.read_all(POLICY).values()
    if two_weapons and second is None:
        raise policy.error("two_weapons", "needs a second_weapon: attacking with two weapons takes one in each hand")
    armour = None
    armour_table = reader.read(_FIELD["armour"])
    if armour_table is not None:
        dice, quality = armour_table.read_all(ARMOUR).values()
        armour = call(armour_table, Armour.make, dice, quality=quality)
    names = ("skill", "action_check", "actions_per_round", "durability", "attack_steps", "defence_steps", "resolve",
             "ambidexterity", "broad_skill")
    combatant = Combatant(weapon=weapon, armour=armour, second_weapon=second, aim_chance=aim,
                          two_weapons=two_weapons, **{name: reader.read(_FIELD[name]) for name in names})
    call(reader, fight_table, [combatant], [combatant])  # the characters' own checks, with this path
    return combatant


def build(options: Reader, sides: list[list[Reader]]) -> dict:
    return {**options.read_all(OPTIONS), "sides": read_sides(sides, _member, MEMBER)}


def step_unit(spec: dict) -> str:
    return "rounds"


def run(spec: dict, *, n: int, seed: int, backend: str, threads: int | None,
        chunk_size: int | None = None, outcomes: bool = False) -> FightSummary:
    result = simulate_fights(n, side_a=spec["sides"][0], side_b=spec["sides"][1], max_rounds=spec["max_rounds"],
                             one_step_shift=spec["one_step_shift"], seed=seed, backend=backend, threads=threads,
                             chunk_size=chunk_size, outcomes=outcomes)
    c = [int(v) for v in result.counts]
    return kernel_summary(
        result, n, seed, step_unit(spec),
        wins=[c[0], c[1]],
        # no TSS fight ends in a draw (one attack at a time: a side is out first); the kernel's
        # third count is the fights still running after max_rounds
        draws=0,
        unfinished=c[2],
        rounds_histogram=result.rounds_histogram,
        per_side=[{}, {}],
        totals=_totals(*c[4:8]),
        standing=standing_by_side(result.standing, [len(side) for side in spec["sides"]]),
        winner=result.winner,
        rounds=result.rounds,
    )


def _totals(attacks: int, stun: int, wound: int, mortal: int) -> dict:
    """The attacks and the points they dealt after armour, secondary damage included (docs/tss.md),
    both sides together."""
    per_attack = attacks or 1
    return {"attacks_count": attacks,
            "stun_points_total": stun, "stun_points_mean_per_attack": stun / per_attack,
            "wound_points_total": wound, "wound_points_mean_per_attack": wound / per_attack,
            "mortal_points_total": mortal, "mortal_points_mean_per_attack": mortal / per_attack}


def engine_figures(spec: dict, results) -> dict:
    """``run``'s figures for fights the engine played (combatsim.policies.FightResults)."""
    counts = results.totals
    return {"draws": results.draws, "unfinished": results.unfinished, "per_side": [{}, {}],
            "totals": _totals(counts["attacks"], counts["stun"], counts["wound"], counts["mortal"])}


def wins(spec: dict, totals) -> tuple[list[int], int]:
    return [int(totals[0]), int(totals[1])], int(totals[2])
