"""EXP Python API: validate, then stream the kernels."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from combatsim.dice import Dice
from combatsim.engine import Game
from combatsim.exp import engine
from combatsim.exp.engine import (
    ATTACK_COUNTS,
    COMBATANT_FIELDS,
    FIGHT_AMMUNITION_SIDE0,
    FIGHT_AMMUNITION_SIDE1,
    FIGHT_COUNTS,
    FIGHT_DAMAGE_SIDE0,
    FIGHT_DAMAGE_SIDE1,
    FIGHT_DRAWS,
    FIGHT_HITS_SIDE0,
    FIGHT_HITS_SIDE1,
    FIGHT_MUTUAL,
    FIGHT_ROLLS_SIDE0,
    FIGHT_ROLLS_SIDE1,
    FIGHT_UNITS,
    FIGHT_WINS_SIDE0,
    FIGHT_WINS_SIDE1,
)
from combatsim.exp.model import MAX_AMMUNITION, MAX_HIT_POINTS, ROUNDS_PER_BURST, Persona, Weapon
from combatsim.runner import FightInfo, RunArguments, RunInfo, Work, run_result, simulate, simulation
from combatsim.validation import (
    check_bool,
    check_int,
    check_int_array,
    check_text,
    memoize_simple,
    register_immutable,
    remember,
)

# Checked when made, with immutable fields: a validated setup stands for the same instance.
register_immutable(Dice, Weapon)

#: Bounds that keep every sum in int64 and every to-hit roll in int32.
MAX_BONUS = 1_000_000
MAX_ROLL = 2_000_000
MAX_ARMOUR_RATING = 2_000_000


@dataclass(frozen=True)
class ToHitResult(RunInfo):
    attacks: int
    hits: int
    #: Per-attack to-hit rolls (int32), when asked for with ``outcomes=True``.
    to_hit: np.ndarray | None = field(default=None, repr=False)

    @property
    def hit_rate(self) -> float:
        return self.hits / self.attacks if self.attacks else 0.0

    def as_dict(self) -> dict:
        return self.record("attacks", "hits", "hit_rate")


@simulation(output_bytes_per_item=4)
def simulate_to_hit(
    run: RunArguments,
    /,
    *,
    bonus,
    maximum_roll,
    armour_rating,
    hit_on_equal: bool = False,
    executor: str | None = None,
) -> ToHitResult:
    """Simulate ``n`` kilodie to-hit rolls: to-hit = min(kilodie + bonus, maximum roll).

    ``bonus``, ``maximum_roll`` and ``armour_rating`` are scalars or arrays with one entry per
    attack. A hit needs to-hit greater than the armour rating, or equal with ``hit_on_equal``.
    With ``outcomes=True`` the result carries every attack's to-hit roll (memory grows with n).
    ``executor="dask"`` runs the chunks on a Dask cluster (combatsim.executors), bit-identically.
    """
    if executor is not None:
        from combatsim.executors import resolve_executor

        run = run._replace(executor=resolve_executor(executor))
    hit_on_equal = check_bool("hit_on_equal", hit_on_equal)
    length = run.n
    bonus = check_int_array("bonus", bonus, length, -MAX_BONUS, MAX_BONUS)
    maximum_roll = check_int_array("maximum_roll", maximum_roll, length, 1, MAX_ROLL)
    armour_rating = check_int_array("armour_rating", armour_rating, length, -MAX_ARMOUR_RATING, MAX_ARMOUR_RATING)
    result, _, threads = simulate(
        "exp.to_hit",
        run,
        params=(bonus, maximum_roll, armour_rating, hit_on_equal),
        per_item=(len(bonus) > 1, len(maximum_roll) > 1, len(armour_rating) > 1, False),
        counts_size=1,
        outputs=(("to_hit", "int32"),),
    )
    return run_result(
        ToHitResult, run, result, threads,
        attacks=result.items_done,
        hits=int(result.counts[0]),
    )


# ---------------------------------------------------------------------------------------------
# Attacks with damage ("exp.attack") and fights ("exp.fight"): docs/exp.md.
# ---------------------------------------------------------------------------------------------
#: Bounds of the other attack inputs.
MAX_ADJUSTMENT = 1_000_000
MAX_DAMAGE_ADJUSTMENT = 1_000_000
MAX_UNIT_LIMIT = 1_000_000
MAX_COMBATANTS = 10_000
DEFAULT_UNIT_LIMIT = 100


def attack_work(weapon: Weapon, rolls: int) -> Work:
    """A unit of fire's work, in to-hit rolls: each roll, and each damage die of each round a
    roll may land (a die costs about three to-hit rolls; the kernels draw them hit or miss)."""
    rounds = ROUNDS_PER_BURST if weapon.automatic else 1
    work = rolls * (1 + 3 * rounds * weapon.damage.count)
    return Work(least=work, most=work)


def rolls_this_unit(weapon: Weapon, ammunition: int | None) -> int:
    """To-hit rolls in one unit of fire: the type's rolls, fewer if the load runs short."""
    shots = weapon.shots(ammunition)
    rolls = weapon.rolls_per_unit if shots < 0 else min(weapon.rolls_per_unit, shots)
    if rolls == 0:
        load = weapon.ammunition if ammunition is None else ammunition
        raise ValueError(
            f"ammunition: {weapon.name!r} has {load} round(s) and needs {weapon.rounds_per_roll} per to-hit roll; "
            "a weapon without ammunition cannot fire"
        )
    return rolls


@dataclass(frozen=True)
class AttackResult(RunInfo):
    """Totals of ``units`` units of fire (one per simulated item)."""

    units: int
    to_hit_rolls: int
    hits: int
    damage_total: int
    rounds_fired: int
    rounds_hit: int
    automatic: bool
    #: Per-unit hits, rounds hit and damage, when asked for with ``outcomes=True``.
    hits_per_unit: np.ndarray | None = field(default=None, repr=False)
    rounds_hit_per_unit: np.ndarray | None = field(default=None, repr=False)
    damage_per_unit: np.ndarray | None = field(default=None, repr=False)

    @property
    def hit_rate(self) -> float:
        """Hits per to-hit roll (for automatic weapons: bursts that hit per burst)."""
        return self.hits / self.to_hit_rolls if self.to_hit_rolls else 0.0

    @property
    def damage_mean_per_hit(self) -> float:
        """Damage per hit (for automatic weapons: per burst that hit)."""
        return self.damage_total / self.hits if self.hits else 0.0

    def as_dict(self) -> dict:
        rounds = ("rounds_fired", "rounds_hit") if self.automatic else ()
        return {"attacks": self.units, **self.record("units", "to_hit_rolls", "hits", "hit_rate", "damage_total",
                                                     "damage_mean_per_hit", *rounds)}


def attack_inputs(
    length: int,
    *,
    armour_rating,
    persona: Persona | None = None,
    weapon: Weapon | None = None,
    bonus=None,
    maximum_roll=None,
    damage_adjustment=None,
    damage: str | Dice | None = None,
    weapon_type: str | None = None,
    ammunition: int | None = None,
    adjustment=0,
    hit_on_equal: bool = False,
    critical: bool = False,
) -> tuple[Weapon, tuple]:
    """Validate :func:`simulate_attack`'s inputs for ``length`` units: (the weapon, the
    "exp.attack" kernel's params). Prepared attacks (combatsim.exp.Attack) validate here too."""
    hit_on_equal = check_bool("hit_on_equal", hit_on_equal)
    critical = check_bool("critical", critical)
    if weapon is not None and not isinstance(weapon, Weapon):
        raise TypeError(f"weapon must be a Weapon, got {type(weapon).__name__}")
    no_damage = weapon is None and damage is None
    if weapon is None:
        weapon = Weapon(
            "weapon",
            "A" if weapon_type is None else weapon_type,
            Dice.parse("0" if damage is None else damage, "damage"),
        )
    elif damage is not None or weapon_type is not None:
        raise ValueError("damage and weapon_type come from the weapon: give one or the other, not both")
    if persona is not None:
        if not isinstance(persona, Persona):
            raise TypeError(f"persona must be a Persona, got {type(persona).__name__}")
        if bonus is not None or maximum_roll is not None or damage_adjustment is not None:
            raise ValueError("bonus, maximum_roll and damage_adjustment come from the persona: give one or the other")
        bonus, maximum_roll, damage_adjustment = persona.attack_profile(weapon)
    elif bonus is None or maximum_roll is None:
        raise ValueError("give a persona, or both bonus and maximum_roll")
    if ammunition is not None:
        ammunition = check_int("ammunition", ammunition, 0, MAX_AMMUNITION)
    rolls = rolls_this_unit(weapon, ammunition)
    bonus = check_int_array("bonus", bonus, length, -MAX_BONUS, MAX_BONUS)
    maximum_roll = check_int_array("maximum_roll", maximum_roll, length, 1, MAX_ROLL)
    armour_rating = check_int_array("armour_rating", armour_rating, length, -MAX_ARMOUR_RATING, MAX_ARMOUR_RATING)
    adjustment = check_int_array("adjustment", adjustment, length, -MAX_ADJUSTMENT, MAX_ADJUSTMENT)
    damage_adjustment = check_int_array(
        "damage_adjustment", 0 if damage_adjustment is None else damage_adjustment, length,
        -MAX_DAMAGE_ADJUSTMENT, MAX_DAMAGE_ADJUSTMENT,
    )
    if no_damage:  # checked last, so that the other inputs' errors come first
        raise ValueError("give weapon= (a Weapon) or damage= (dice such as 'd8', or '0' for none); "
                         "for to-hit rolls alone use simulate_to_hit")
    dice = weapon.damage
    one = lambda value: np.array([value], dtype=np.int64)  # noqa: E731
    params = (
        bonus, maximum_roll, armour_rating, adjustment, one(dice.count), one(dice.sides), one(dice.modifier),
        damage_adjustment, one(rolls), one(int(weapon.automatic)), hit_on_equal, critical,
    )
    return weapon, params


@memoize_simple
def _attack_setup(**arguments: object) -> tuple[Weapon, tuple, tuple[bool, ...], Work]:
    """attack_inputs, which params are per unit, and the work of a unit; remembered for repeated
    simple inputs (the kernel params are then shared, never written)."""
    weapon, params = attack_inputs(**arguments)
    per_item = tuple(isinstance(p, np.ndarray) and len(p) > 1 for p in params)
    return weapon, params, per_item, attack_work(weapon, int(params[8][0]))


@simulation(output_bytes_per_item=16, inputs=attack_inputs)
def simulate_attack(run: RunArguments, /, **attack: object) -> AttackResult:
    """Simulate ``n`` units of fire of one weapon against armour rating ``armour_rating`` (Chapter 27).

    Either a ``persona`` with a ``weapon`` (BP if proficient, else BNP; MR and DA of the weapon's
    row), or raw ``bonus`` and ``maximum_roll`` (and ``damage_adjustment``, default 0) with a
    ``weapon`` or with ``damage`` dice and ``weapon_type`` (default "A").

    Options (docs/exp.md, section 4), honoured by every backend: ``adjustment`` is the signed situational
    adjustment (a penalty applies before the MR cap, a bonus after it); ``hit_on_equal`` lets a
    to-hit equal to the AR hit; ``critical`` lets a natural 1000 ignore the MR cap.
    ``ammunition`` overrides the weapon's load: a unit makes as many to-hit rolls as it allows.
    ``bonus``, ``maximum_roll``, ``armour_rating``, ``adjustment`` and ``damage_adjustment`` may
    be arrays with one entry per unit.
    """
    attack["length"] = run.n
    weapon, params, per_item, work = _attack_setup(attack)
    result, _, threads = simulate(
        "exp.attack",
        run,
        params=params,
        per_item=per_item,
        counts_size=ATTACK_COUNTS,
        outputs=(("hits_per_unit", "int32"), ("rounds_hit_per_unit", "int32"), ("damage_per_unit", "int64")),
        work=work,
    )
    counts = result.counts.tolist()
    return run_result(
        AttackResult, run, result, threads,
        units=result.items_done,
        to_hit_rolls=counts[0],
        hits=counts[1],
        damage_total=counts[2],
        rounds_fired=counts[3],
        rounds_hit=counts[4],
        automatic=weapon.automatic,
    )


@dataclass(frozen=True)
class Combatant:
    """One fighter: a persona with a weapon (``from_persona``) or a creature with explicit numbers.

    ``bonus``, ``maximum_roll`` and ``damage_adjustment`` are what its attacks use; ``adjustment``
    is its situational adjustment; ``ammunition`` overrides the weapon's load.
    """

    name: str
    hit_points: int
    armour_rating: int
    weapon: Weapon
    bonus: int
    maximum_roll: int
    damage_adjustment: int = 0
    adjustment: int = 0
    ammunition: int | None = None

    def __post_init__(self) -> None:
        check_text("name", self.name)
        if not isinstance(self.weapon, Weapon):
            raise TypeError(f"weapon must be a Weapon, got {type(self.weapon).__name__}")
        check_int("hit_points", self.hit_points, 1, MAX_HIT_POINTS)
        check_int("armour_rating", self.armour_rating, -MAX_ARMOUR_RATING, MAX_ARMOUR_RATING)
        check_int("bonus", self.bonus, -MAX_BONUS, MAX_BONUS)
        check_int("maximum_roll", self.maximum_roll, 1, MAX_ROLL)
        check_int("damage_adjustment", self.damage_adjustment, -MAX_DAMAGE_ADJUSTMENT, MAX_DAMAGE_ADJUSTMENT)
        check_int("adjustment", self.adjustment, -MAX_ADJUSTMENT, MAX_ADJUSTMENT)
        if self.ammunition is not None:
            check_int("ammunition", self.ammunition, 0, MAX_AMMUNITION)

    @classmethod
    def from_persona(
        cls,
        persona: Persona,
        weapon: Weapon,
        *,
        armour_rating: int,
        adjustment: int = 0,
        ammunition: int | None = None,
        name: str | None = None,
    ) -> Combatant:
        """A persona fighting with ``weapon``: BP or BNP, MR and DA from its combat table."""
        if not isinstance(persona, Persona):
            raise TypeError(f"persona must be a Persona, got {type(persona).__name__}")
        bonus, maximum_roll, damage_adjustment = persona.attack_profile(weapon)
        return cls(
            name=name or persona.persona_class,
            hit_points=persona.hit_points,
            armour_rating=armour_rating,
            weapon=weapon,
            bonus=bonus,
            maximum_roll=maximum_roll,
            damage_adjustment=damage_adjustment,
            adjustment=adjustment,
            ammunition=ammunition,
        )

    def row(self, side: int) -> list[int]:
        """This combatant's row of the kernel's combatant table (engine.C_* columns)."""
        dice = self.weapon.damage
        return [
            side, self.hit_points, self.armour_rating, self.bonus, self.maximum_roll, self.adjustment,
            dice.count, dice.sides, dice.modifier, self.damage_adjustment, self.weapon.rolls_per_unit,
            int(self.weapon.automatic), self.weapon.shots(self.ammunition),
        ]


@dataclass(frozen=True)
class FightResult(FightInfo):
    fights: int
    wins: tuple[int, int]
    draws: int
    mutual: int
    units_total: int
    #: units_histogram[u - 1]: fights that ended after u units.
    units_histogram: np.ndarray
    damage: tuple[int, int]
    ammunition: tuple[int, int]
    to_hit_rolls: tuple[int, int]
    hits: tuple[int, int]
    #: Per-fight winner (0 or 1, -1 unfinished at the unit limit, -2 a draw: both sides out in the
    #: same unit) and units, with ``outcomes=True``.
    winner: np.ndarray | None = field(default=None, repr=False)
    units: np.ndarray | None = field(default=None, repr=False)
    # standing: per combatant, side 0's then side 1's: the fights it ended with hit points left

    @property
    def win_rates(self) -> tuple[float, float]:
        return (self.wins[0] / self.fights, self.wins[1] / self.fights) if self.fights else (0.0, 0.0)

    @property
    def units_mean(self) -> float:
        return self.units_total / self.fights if self.fights else 0.0

    def as_dict(self) -> dict:
        return {**self.fight_record(), **self.record("mutual", "units_mean", "units_histogram", "damage",
                                                     "ammunition", "to_hit_rolls", "hits")}


def combatant_table(side0: Sequence[Combatant], side1: Sequence[Combatant]) -> np.ndarray:
    """The kernel's int64 combatant table: side 0's combatants, then side 1's (docs/exp.md)."""
    _check_sides(side0, side1)
    return _fight_setup(side0, side1)[0].copy()


def _check_sides(side0: Sequence[Combatant], side1: Sequence[Combatant]) -> None:
    for name, side in (("side0", side0), ("side1", side1)):
        if isinstance(side, Combatant) or not isinstance(side, Sequence):
            raise TypeError(f"{name} must be a sequence of Combatant")
        if not 1 <= len(side) <= MAX_COMBATANTS:
            raise ValueError(f"{name} must hold 1..{MAX_COMBATANTS} combatants, got {len(side)}")
        for member in side:
            if not isinstance(member, Combatant):
                raise TypeError(f"{name} must hold Combatant objects, got {type(member).__name__}")


#: Fight setups by the identities of their combatants: a Combatant, its Weapon and Dice are
#: frozen and checked when made, so the same objects always give the same table.
_setups: dict[tuple, tuple[np.ndarray, float, tuple]] = {}


def _fight_setup(side0: Sequence[Combatant], side1: Sequence[Combatant]) -> tuple[np.ndarray, float]:
    """(the combatant table, a unit's work) of checked sides; the table is shared, never written."""
    members = (*side0, None, *side1)
    key = tuple(map(id, members))
    found = _setups.get(key)
    if found is None:
        rows = [c.row(0) for c in side0] + [c.row(1) for c in side1]
        table = np.ascontiguousarray(np.array(rows, dtype=np.int64).reshape(len(rows), COMBATANT_FIELDS))
        per_unit = sum(attack_work(c.weapon, c.weapon.rolls_per_unit).most for c in (*side0, *side1))
        if all(type(c) is Combatant for c in (*side0, *side1)):
            remember(_setups, key, (table, per_unit, members), 1024)
        return table, per_unit
    return found[0], found[1]


@simulation(output_bytes_per_item=5)
def simulate_fight(
    run: RunArguments,
    /,
    side0: Sequence[Combatant],
    side1: Sequence[Combatant],
    *,
    unit_limit: int = DEFAULT_UNIT_LIMIT,
    hit_on_equal: bool = False,
    critical: bool = False,
    policies: Mapping[str, Callable] | None = None,
) -> FightResult:
    """Simulate ``n`` independent fights of ``side0`` against ``side1`` (docs/exp.md, section 3, "A fight").

    Each unit every standing combatant with ammunition left attacks a uniformly random standing
    enemy; attacks are simultaneous. A fight ends when a side has no one standing (hit points at
    or below 0; both sides at once is a draw) or after ``unit_limit`` units (a draw).

    ``policies`` ({member name: policy(obs, masks) -> actions}, combatsim.policies) plays those
    members by the policies and the others by their scripted policy, through the engine (backend
    numba or python, one thread): members are named "side 0" when alone on their side, else
    "side 0 1", "side 0 2"... in order (as a scenario names the members of sides called "side 0",
    "side 1").
    """
    hit_on_equal = check_bool("hit_on_equal", hit_on_equal)
    critical = check_bool("critical", critical)
    unit_limit = check_int("unit_limit", unit_limit, 1, MAX_UNIT_LIMIT)
    _check_sides(side0, side1)
    table, per_unit = _fight_setup(side0, side1)
    if policies is not None:
        return _policy_fights(side0, side1, unit_limit, hit_on_equal, critical, run, policies, table.copy())
    result, _, threads = simulate(
        "exp.fight",
        run,
        params=(table, unit_limit, hit_on_equal, critical),
        counts_size=FIGHT_COUNTS + unit_limit + len(table),
        outputs=(("winner", "int8"), ("units", "int32")),
        work=Work(least=per_unit, most=per_unit * unit_limit, counted=FIGHT_UNITS, per_count=per_unit),
    )
    c = result.counts.tolist()
    return run_result(
        FightResult, run, result, threads,
        fights=result.items_done,
        wins=(c[FIGHT_WINS_SIDE0], c[FIGHT_WINS_SIDE1]),
        draws=c[FIGHT_DRAWS],
        mutual=c[FIGHT_MUTUAL],
        units_total=c[FIGHT_UNITS],
        units_histogram=result.counts[FIGHT_COUNTS:FIGHT_COUNTS + unit_limit].copy(),
        damage=(c[FIGHT_DAMAGE_SIDE0], c[FIGHT_DAMAGE_SIDE1]),
        ammunition=(c[FIGHT_AMMUNITION_SIDE0], c[FIGHT_AMMUNITION_SIDE1]),
        to_hit_rolls=(c[FIGHT_ROLLS_SIDE0], c[FIGHT_ROLLS_SIDE1]),
        hits=(c[FIGHT_HITS_SIDE0], c[FIGHT_HITS_SIDE1]),
        standing=tuple(c[FIGHT_COUNTS + unit_limit:]),
    )


def _policy_fights(side0, side1, unit_limit, hit_on_equal, critical, run, policies, table) -> FightResult:
    """``simulate_fight`` with ``policies``: the fights through the engine (combatsim.policies)."""
    from combatsim.policies import api_fights, policy_result

    spec = {"unit_limit": unit_limit, "hit_on_equal": hit_on_equal, "critical": critical,
            "sides": [list(side0), list(side1)]}
    results = api_fights(game, spec, [0] * len(side0) + [1] * len(side1), run, policies, table)
    counts = results.totals
    histogram = np.zeros(unit_limit, dtype=np.int64)
    for units, fights in results.length_histogram.items():
        histogram[units - 1] = fights
    return policy_result(
        FightResult, run, results, "units",
        wins=(results.wins[0], results.wins[1]),
        draws=results.draws + results.unfinished,
        mutual=counts["mutual"],
        units_total=counts["units"],
        units_histogram=histogram,
        damage=(counts["damage_side_0"], counts["damage_side_1"]),
        ammunition=(counts["ammunition_side_0"], counts["ammunition_side_1"]),
        to_hit_rolls=(counts["to_hit_rolls_side_0"], counts["to_hit_rolls_side_1"]),
        hits=(counts["hits_side_0"], counts["hits_side_1"]),
    )


# --- the engine's Game (combatsim.exp.game names it for scenarios) -------------------------------


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
    config = np.zeros(engine.config_size(len(table)), dtype=np.int64)
    engine.fill_config(table, spec["unit_limit"], spec["hit_on_equal"], spec["critical"], config)
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
