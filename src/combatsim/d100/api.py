"""d100 Python API: validate, derive the rule values with :mod:`combatsim.d100.model`, then stream
the kernels ("d100.attack", "d100.fight")."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from combatsim.d100 import model
from combatsim.d100.layout import (
    ATTACK_COUNT_NAMES,
    ATTACK_COUNTS,
    ATTACK_STEPS,
    C_AMBUSH_ATTACK,
    C_AMBUSH_DEFEND,
    C_ARMOUR,
    C_ATTACK,
    C_DUAL_ALLOWED,
    C_FLEE_BASE,
    C_NONLETHAL,
    C_POLICY,
    C_PRESS,
    C_RANGED,
    C_SIDE,
    FIELDS,
    FIGHT_COUNT_NAMES,
    FIGHT_COUNTS,
    POLICY_NAMES,
)
from combatsim.runner import (
    FightInfo,
    RunArguments,
    RunInfo,
    Work,
    nonzero_counts,
    run_result,
    simulate,
    simulation,
)
from combatsim.validation import (
    check_bool,
    check_choice,
    check_int,
    check_sequence,
    memoize_simple,
    parsed,
    register_immutable,
    remember,
    simple_key,
)

if TYPE_CHECKING:
    from combatsim.engine import Game

MAX_SCORE = 1000
MAX_RANK = 10
MAX_RANKS = 10
MAX_LETHALITY = 100
MAX_SEVERITY = 100
MAX_COMBATANTS = 64
MAX_PASSES = 16
MAX_ROUNDS = 10_000

#: Attack modifier names (docs/d100.md, section 2). "cover" is a ranged attack
#: on a target in cover: -20 and lethality x 0.5 (cover counts for ranged attacks only).
MODIFIERS = (
    "quick", "automatic_fire", "cover", "defend", "dual_wield",
    "distant_pistol", "distant_thrown", "distant_archery", "distant_carbine", "distant_long_gun",
)

#: The scripted policy's default weights (percent, in layout.POLICY_NAMES order).
DEFAULT_POLICY = (40, 10, 10, 5, 10, 5, 10, 10)
#: The fight counts' index of the rounds played (summed over fights).
FIGHT_ROUNDS = FIGHT_COUNT_NAMES.index("rounds")


def _check_ranks(name: str, ranks: object) -> tuple[int, ...]:
    if type(ranks) is tuple and not ranks:
        return ()
    if isinstance(ranks, int) and not isinstance(ranks, bool):
        ranks = (ranks,) if ranks else ()
    check_sequence(name, ranks, f"a rank 0..{MAX_RANK} or ranks")
    if len(ranks) > MAX_RANKS:
        raise ValueError(f"{name} must list at most {MAX_RANKS} ranks, got {len(ranks)}")
    return tuple(check_int(name, rank, 0, MAX_RANK) for rank in ranks)


def check_severity(value: object) -> Fraction:
    """Weapon severity: an int, a Fraction or a decimal string (Python's number forms: ``1.5``,
    ``2``, ``15e-1``), in tenths, 0..100."""
    from combatsim.validation import brief, parse_number

    if isinstance(value, bool) or not isinstance(value, int | Fraction | str):
        raise TypeError(
            f"severity must be an int, Fraction or decimal string such as '1.5', got {type(value).__name__}"
        )
    if isinstance(value, str):
        number = parse_number(value)
        # a big exponent is refused unread: Fraction(Decimal("1e999999999")) would build its digits
        if number is None or (number and not -32 <= number.adjusted() <= 32) or abs(number.as_tuple().exponent) > 32:
            raise ValueError(f"severity must be a number in 0..{MAX_SEVERITY} in tenths (e.g. 2 or 1.5), "
                             f"got {brief(value)}")
    severity = Fraction(value if not isinstance(value, str) else number)
    if (severity * 10).denominator != 1 or not 0 <= severity <= MAX_SEVERITY:
        raise ValueError(f"severity must be a number in 0..{MAX_SEVERITY} in tenths (e.g. 2 or 1.5), got {brief(value)}")
    return severity


@dataclass(frozen=True)
class Weapon:
    """A weapon (docs/d100.md, section 4): weapon_lethality, weapon_severity."""

    lethality: int
    severity: int | Fraction | str = 1
    nonlethal: bool = False
    category: str = "melee"
    long_range: bool = False

    @property
    def ranged(self) -> bool:
        return self.category != "melee"

    def checked(self, name: str = "weapon") -> Weapon:
        if not isinstance(self, Weapon):
            raise TypeError(f"{name} must be a Weapon, got {type(self).__name__}")
        check_int(f"{name}.lethality", self.lethality, 0, MAX_LETHALITY)
        try:
            parsed(check_severity, self.severity)
        except (TypeError, ValueError) as error:
            raise type(error)(f"{name}.{error}") from None
        check_bool(f"{name}.nonlethal", self.nonlethal)
        check_bool(f"{name}.long_range", self.long_range)
        check_choice(f"{name}.category", self.category, model.CATEGORIES)
        return self


# Once its checks pass a Weapon holds only immutable values (ints, a Fraction or text, bools).
register_immutable(Weapon)


@dataclass(frozen=True)
class Combatant:
    """One fighter. ``pool`` is the attack pool; it defaults to ``fighting``. ``arcane``: the Arcane
    score, the pool of its attacks with an ``elementalism`` weapon (required with one).
    ``distant``: its attacks are distant ranged attacks."""

    side: int
    fighting: int
    weapon: Weapon
    pool: int | None = None
    arcane: int | None = None
    parkour: int = 0
    perception: int = 0
    specialty: Sequence[int] = ()
    second_weapon: Weapon | None = None
    two_weapon_style: int = 0
    two_gun_style: int = 0
    ambush_specialist: Sequence[int] = ()
    combat_reflexes: Sequence[int] = ()
    torso: str = "none"
    helmet: bool = False
    automatic_fire: bool = False
    distant: bool = False
    policy: Sequence[int] = DEFAULT_POLICY


@dataclass(frozen=True)
class AttackResult(RunInfo):
    attacks: int
    counts: dict[str, int]
    full_skill: int
    lethality: int
    serious_threshold: int
    #: Per-attack tier and wounds (int8) with ``outcomes=True``.
    tier: np.ndarray | None = field(default=None, repr=False)
    wound: np.ndarray | None = field(default=None, repr=False)
    second_wound: np.ndarray | None = field(default=None, repr=False)

    def as_dict(self) -> dict:
        return {
            "attacks": self.attacks,
            **self.counts,
            "full_skill": self.full_skill,
            "capped_target": model.capped_target(self.full_skill),
            **self.record("lethality", "serious_threshold"),
        }


@dataclass(frozen=True)
class AttackParameters:
    full_skill: int
    lethality: int
    serious_threshold: int
    nonlethal: bool
    weapons: int


def attack_parameters(
    *,
    pool: int | None = None,
    specialty: object = (),
    taper: str = "halving",
    modifiers: Iterable[str] = (),
    lethality: int,
    severity: object = 1,
    armour: str = "none",
    nonlethal: bool = False,
    dual_wield: bool = False,
    arcane: int | None = None,
) -> AttackParameters:
    """Validate one attack's inputs and derive full skill, final lethality and serious threshold.

    ``pool``: the attack pool (Fighting); or ``arcane``: the attack is an Elementalism blast, with
    the Arcane score as its pool (a ranged attack for cover; no distant modifier applies)."""
    if (pool is None) == (arcane is None):
        raise ValueError("give pool (the attack pool) or arcane (an Elementalism blast's pool), exactly one")
    blast = arcane is not None
    pool = check_int("arcane" if blast else "pool", arcane if blast else pool, 0, MAX_SCORE)
    ranks = _check_ranks("specialty", specialty)
    check_choice("taper", taper, model.TAPERS)
    lethality = check_int("lethality", lethality, 0, MAX_LETHALITY)
    severity = check_severity(severity)
    check_choice("armour", armour, model.ARMOUR_NAMES)
    nonlethal = check_bool("nonlethal", nonlethal)
    dual_wield = check_bool("dual_wield", dual_wield)
    if isinstance(modifiers, str) or not isinstance(modifiers, Iterable):
        raise TypeError(f"modifiers must be a sequence of names from {', '.join(MODIFIERS)}")
    # at most one more than there are names: an endless iterator is not read to its end
    given = list(itertools.islice(modifiers, len(MODIFIERS) + 1))
    names = [check_choice("modifier", str(name).replace("-", "_"), MODIFIERS) if isinstance(name, str)
             else check_choice("modifier", name, MODIFIERS) for name in given]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated or len(given) > len(MODIFIERS):
        raise ValueError(f"modifiers must not repeat (at most {len(MODIFIERS)}, each once), "
                         f"got {', '.join(map(repr, repeated))} more than once")
    distant = [name for name in names if name.startswith("distant_")]
    if len(distant) > 1:
        raise ValueError(f"modifier: at most one distant_* modifier, got {distant!r}")
    if distant and blast:
        raise ValueError(f"modifier: no distant modifier applies to an Elementalism blast (arcane), got {distant[0]!r}")
    dual_wield = dual_wield or "dual_wield" in names
    category = distant[0].removeprefix("distant_") if distant else "melee"
    cover = "cover" in names
    total = model.attack_modifiers(
        quick="quick" in names,
        automatic_fire="automatic_fire" in names,
        target_in_cover=cover,
        ranged=cover,
        target_defending="defend" in names,
        dual_wield=dual_wield,
        distant=bool(distant),
        category=category,
    )
    skill = model.full_skill(pool, model.specialty_multiplier(ranks, taper), total)
    factor = model.lethality_factor(cover=cover, ranged=cover, armour=model.ARMOUR_NAMES.index(armour),
                                    dual_wield=dual_wield)
    final = model.final_lethality(lethality, factor)
    return AttackParameters(skill, final, model.serious_threshold(final, severity), nonlethal, 2 if dual_wield else 1)


def attack_scalars(p: AttackParameters) -> tuple[int, ...]:
    """The "d100.attack" kernel's params, in its order, as ints: both weapons of a dual wield are
    the same weapon."""
    return (p.full_skill, p.lethality, p.serious_threshold, int(p.nonlethal),
            p.lethality, p.serious_threshold, int(p.nonlethal), p.weapons)


@memoize_simple
def _attack_setup(**arguments: object) -> tuple[AttackParameters, tuple[np.ndarray, ...], Work]:
    """attack_parameters, the "d100.attack" kernel's params and an attack's work; remembered for
    repeated simple inputs (params shared, never written)."""
    p = attack_parameters(**arguments)
    params = tuple(np.array([value], dtype=np.int64) for value in attack_scalars(p))
    return p, params, Work(least=p.weapons, most=p.weapons)


@simulation(output_bytes_per_item=3, inputs=attack_parameters)
def simulate_attacks(run: RunArguments, /, **attack: object) -> AttackResult:
    """Simulate ``n`` d100 attacks with damage (docs/d100.md).

    ``pool`` is the attack pool (Fighting), or ``arcane`` the Arcane score of an Elementalism blast
    (its pool; give one of the two), ``specialty`` the weapon specialty ranks,
    ``modifiers`` names from :data:`MODIFIERS`. Dual wield (``dual_wield=True`` or the
    ``dual_wield`` modifier) attacks at -20 with two identical weapons, each at 75% lethality.
    Returns the five tier counts and the wounds (lethal includes instant deaths).
    """
    p, params, work = _attack_setup(attack)
    result, _, threads = simulate("d100.attack", run, params=params, counts_size=ATTACK_COUNTS,
                                        outputs=(("tier", "int8"), ("wound", "int8"), ("second_wound", "int8")), work=work)
    return run_result(
        AttackResult, run, result, threads,
        attacks=result.items_done,
        counts=dict(zip(ATTACK_COUNT_NAMES, result.counts.tolist(), strict=True)),
        full_skill=p.full_skill,
        lethality=p.lethality,
        serious_threshold=p.serious_threshold,
    )


def _contest_row(target: int) -> list[int]:
    return [*model.tier_bars(target), model.capped_target(target)]


def combatant_row(c: Combatant, taper: str = "halving", name: str = "combatant") -> list[int]:
    """Validate one combatant and derive its row of the fight table (columns: layout.C_*)."""
    if not isinstance(c, Combatant):
        raise TypeError(f"{name} must be a Combatant, got {type(c).__name__}")
    side = check_int(f"{name}.side", c.side, 0, 1)
    fighting = check_int(f"{name}.fighting", c.fighting, 0, MAX_SCORE)
    pool = fighting if c.pool is None else check_int(f"{name}.pool", c.pool, 0, MAX_SCORE)
    parkour = check_int(f"{name}.parkour", c.parkour, 0, MAX_SCORE)
    perception = check_int(f"{name}.perception", c.perception, 0, MAX_SCORE)
    weapons = (_weapon_key(c.weapon, f"{name}.weapon"),)
    if c.second_weapon is not None:
        weapons += (_weapon_key(c.second_weapon, f"{name}.second_weapon"),)
    arcane = None if c.arcane is None else check_int(f"{name}.arcane", c.arcane, 0, MAX_SCORE)
    if arcane is None and any(weapon[3] == model.ELEMENTALISM for weapon in weapons):
        raise ValueError(f"{name}.arcane: an elementalism weapon attacks with the Arcane score as its pool; "
                         f"give arcane, 0..{MAX_SCORE}")
    # An Elementalism blast is attacked with Arcane instead of the pool (press and disengage stay on it).
    attack_pool = arcane if weapons[0][3] == model.ELEMENTALISM else pool
    two_weapon = check_int(f"{name}.two_weapon_style", c.two_weapon_style, 0, MAX_RANK)
    two_gun = check_int(f"{name}.two_gun_style", c.two_gun_style, 0, MAX_RANK)
    torso = check_choice(f"{name}.torso", c.torso, model.TORSO_COVERAGES)
    helmet = check_bool(f"{name}.helmet", c.helmet)
    automatic_fire = check_bool(f"{name}.automatic_fire", c.automatic_fire)
    distant = check_bool(f"{name}.distant", c.distant)
    if isinstance(c.policy, str) or not isinstance(c.policy, Sequence):
        raise TypeError(f"{name}.policy must be {len(POLICY_NAMES)} weights ({', '.join(POLICY_NAMES)}) summing to 100, "
                        f"got {c.policy!r}")
    policy = tuple(check_int(f"{name}.policy", weight, 0, 100) for weight in c.policy)
    if len(policy) != len(POLICY_NAMES) or sum(policy) != 100:
        raise ValueError(f"{name}.policy must be {len(POLICY_NAMES)} weights ({', '.join(POLICY_NAMES)}) "
                         f"summing to 100, got {list(c.policy)!r}")
    ranks = (_check_ranks(f"{name}.specialty", c.specialty),
             _check_ranks(f"{name}.ambush_specialist", c.ambush_specialist),
             _check_ranks(f"{name}.combat_reflexes", c.combat_reflexes))
    return list(_derived_row(side, fighting, pool, attack_pool, parkour, perception, weapons, two_weapon, two_gun,
                             torso, helmet, automatic_fire, distant, policy, ranks, taper))


def _weapon_key(weapon: Weapon, name: str) -> tuple:
    """A checked weapon's inputs to a row, in canonical types (severity as a Fraction)."""
    Weapon.checked(weapon, name)
    return (int(weapon.lethality), parsed(check_severity, weapon.severity), bool(weapon.nonlethal), weapon.category,
            bool(weapon.long_range))



@lru_cache(maxsize=4096)
def _derived_row(side: int, fighting: int, pool: int, attack_pool: int, parkour: int, perception: int, weapons: tuple,
                 two_weapon: int, two_gun: int, torso: str, helmet: bool, automatic_fire: bool, distant: bool,
                 policy: tuple, ranks: tuple, taper: str) -> tuple[int, ...]:
    """The row of checked inputs (canonical types, so equal inputs are equal keys). A game loop
    that plays the same combatants again skips the exact arithmetic: about 0.7 ms a combatant."""
    from combatsim.d100.engine import damage_column  # the engine loads with the first table, not with the API

    multiplier, ambush, reflexes = (model.specialty_multiplier(r, taper) for r in ranks)
    dual_allowed = model.dual_wield_allowed(two_weapon, two_gun, [category for _, _, _, category, _ in weapons])
    first_category, first_long_range = weapons[0][3], weapons[0][4]
    row = [0] * FIELDS
    row[C_SIDE] = side
    row[C_RANGED] = int(first_category != "melee")
    row[C_ARMOUR] = model.armour_class(torso, helmet)
    row[C_DUAL_ALLOWED] = int(dual_allowed)
    row[C_FLEE_BASE] = (fighting + parkour) // 2  # model.flee_target before the +20 steps and cap
    # Press versus Disengage: full attack target with no action modifiers.
    row[C_PRESS : C_PRESS + 5] = _contest_row(model.full_skill(pool, multiplier))
    row[C_AMBUSH_ATTACK : C_AMBUSH_ATTACK + 5] = _contest_row(
        model.ambush_attacker_target(fighting, parkour, perception, ambush))
    row[C_AMBUSH_DEFEND : C_AMBUSH_DEFEND + 5] = _contest_row(
        model.ambush_defender_target(fighting, parkour, perception, reflexes))
    static = model.attack_modifiers(automatic_fire=automatic_fire, distant=distant, category=first_category,
                                    long_range=first_long_range)
    for step in range(ATTACK_STEPS):
        skill = model.full_skill(attack_pool, multiplier, static + step * model.QUICK_ATTACK)
        row[C_ATTACK + 4 * step : C_ATTACK + 4 * step + 4] = model.tier_bars(skill)
    for w in range(2):
        lethality, severity, nonlethal, category, _ = weapons[min(w, len(weapons) - 1)]
        row[C_NONLETHAL + w] = int(nonlethal)
        for cover in range(2):
            for target_armour in range(3):
                for dual in range(2):
                    factor = model.lethality_factor(cover=bool(cover), ranged=category != "melee",
                                                    armour=target_armour, dual_wield=bool(dual))
                    final = model.final_lethality(lethality, factor)
                    serious = model.serious_threshold(final, severity)
                    column = damage_column(w, cover, target_armour, dual)
                    row[column : column + 2] = model.damage_bars(final, serious, nonlethal)
    row[C_POLICY : C_POLICY + len(policy)] = itertools.accumulate(policy)  # each action's upper bound
    return tuple(row)


#: Rows of combatants seen before, by their fields' simple key (see validation.simple_key): a
#: Combatant whose fields are all immutable (tuples, not lists; a Weapon holds only immutable
#: values once checked) cannot change, so its checked row stands.
_rows: dict[tuple, tuple[tuple[int, ...], list]] = {}
_COMBATANT_FIELDS = tuple(Combatant.__dataclass_fields__)


def _row(c: Combatant, taper: str, name: str) -> tuple[int, ...] | list[int]:
    seen = _rows_by_identity.get((id(c), taper))
    if seen is not None:
        return seen[0]
    if type(c) is not Combatant:
        return combatant_row(c, taper, name)
    held: list = []
    key = simple_key((taper, *(getattr(c, f) for f in _COMBATANT_FIELDS)), held)
    if key is None:
        return combatant_row(c, taper, name)
    found = _rows.get(key)
    if found is None:
        found = remember(_rows, key, (tuple(combatant_row(c, taper, name)), held))
    # The same immutable object again (the usual game loop) needs not even its key; the entry
    # holds the object, so its id stays its own.
    remember(_rows_by_identity, (id(c), taper), (found[0], c))
    return found[0]


_rows_by_identity: dict[tuple[int, str], tuple[tuple[int, ...], Combatant]] = {}


def fight_table(combatants: Sequence[Combatant], taper: str = "halving") -> np.ndarray:
    """The int64 combatant table of "d100.fight" (one row per combatant)."""
    check_choice("taper", taper, model.TAPERS)
    if isinstance(combatants, Combatant) or not isinstance(combatants, Sequence):
        raise TypeError("combatants must be a sequence of Combatant")
    if not 2 <= len(combatants) <= MAX_COMBATANTS:
        raise ValueError(f"combatants must hold 2..{MAX_COMBATANTS} combatants, got {len(combatants)}")
    rows = [_row(c, taper, f"combatants[{i}]") for i, c in enumerate(combatants)]
    sides = {row[C_SIDE] for row in rows}
    if sides != {0, 1}:
        raise ValueError("combatants must include at least one combatant on side 0 and one on side 1")
    if not all(type(row) is tuple for row in rows):
        return np.ascontiguousarray(np.array(rows, dtype=np.int64))
    # Remembered rows (see _row): the same rows give the same table, kept for the next call.
    key = tuple(map(id, rows))
    found = _tables.get(key)
    if found is None:
        found = remember(_tables, key, (np.ascontiguousarray(np.array(rows, dtype=np.int64)), rows), 1024)
    return found[0].copy()


_tables: dict[tuple[int, ...], tuple[np.ndarray, list]] = {}


@dataclass(frozen=True)
class FightResult(FightInfo):
    fights: int
    counts: dict[str, int]
    winner: np.ndarray | None = field(default=None, repr=False)
    rounds: np.ndarray | None = field(default=None, repr=False)
    #: rounds to the end -> fights (0 rounds: decided by the ambush alone, if ever)
    rounds_histogram: dict[int, int] = field(default_factory=dict)

    @property
    def wins(self) -> tuple[int, int]:
        return self.counts["wins_side_0"], self.counts["wins_side_1"]

    @property
    def draws(self) -> int:
        return self.counts["draws"]

    @property
    def win_rates(self) -> tuple[float, float, float]:
        """(side 0 wins, side 1 wins, draws) per fight; the rest are unfinished (``unfinished_rate``)."""
        n = self.fights or 1
        return (self.counts["wins_side_0"] / n, self.counts["wins_side_1"] / n, self.counts["draws"] / n)

    @property
    def unfinished_rate(self) -> float:
        """Fights still running after ``max_rounds`` rounds, per fight."""
        return self.counts["unfinished"] / (self.fights or 1)

    @property
    def mean_rounds(self) -> float:
        return self.counts["rounds"] / self.fights if self.fights else 0.0

    def as_dict(self) -> dict:
        side0, side1, _ = self.win_rates
        return {
            **self.fight_record(),
            **self.counts,
            "win_rate_side_0": side0,
            "win_rate_side_1": side1,
            **self.record("unfinished_rate", "mean_rounds"),
        }


@simulation(output_bytes_per_item=5)
def simulate_fights(
    run: RunArguments,
    /,
    combatants: Sequence[Combatant],
    *,
    passes: int = 2,
    max_rounds: int = 20,
    ambush_side: int | None = None,
    taper: str = "halving",
    policies: Mapping[str, Callable] | None = None,
) -> FightResult:
    """Simulate ``n`` independent fights of the same combatants (docs/d100.md, section 8, "A fight").

    Each round has ``passes`` passes; a fight ends when a side has no combatant left in it (out
    with a lethal wound, dead, or fled): the other side wins, or with nobody left on either side
    it is a draw. After ``max_rounds`` rounds it is unfinished. With ``ambush_side`` 0 or 1 that
    side ambushes the other before round 1. ``winner`` (with ``outcomes``) holds each fight's
    winning side, WINNER_DRAW or WINNER_UNFINISHED (combatsim.engine).

    ``policies`` ({member name: policy(obs, masks) -> actions}, combatsim.policies) plays those
    members by the policies and the others by their weights, through the engine (backend numba
    or python, one thread): members are named "side 0" when alone on their side, else "side 0 1",
    "side 0 2"... in order (as a scenario names the members of sides called "side 0", "side 1").
    """
    passes = check_int("passes", passes, 1, MAX_PASSES)
    max_rounds = check_int("max_rounds", max_rounds, 1, MAX_ROUNDS)
    ambush = -1 if ambush_side is None else check_int("ambush_side", ambush_side, 0, 1)
    table = fight_table(combatants, taper)
    if policies is not None:
        return _policy_fights(combatants, passes, max_rounds, ambush_side, taper, run, policies, table)
    per_round = len(table) * passes  # every combatant acts once a pass
    result, _, threads = simulate(
        "d100.fight", run, params=(table, passes, max_rounds, ambush),
        counts_size=FIGHT_COUNTS + max_rounds + 1 + len(table), outputs=(("winner", "int8"), ("rounds", "int32")),
        work=Work(least=per_round, most=per_round * (max_rounds + 1), counted=FIGHT_ROUNDS, per_count=per_round),
    )
    histogram = result.counts[FIGHT_COUNTS:FIGHT_COUNTS + max_rounds + 1]
    return run_result(
        FightResult, run, result, threads,
        fights=result.items_done,
        counts=dict(zip(FIGHT_COUNT_NAMES, result.counts[:FIGHT_COUNTS].tolist(), strict=True)),
        rounds_histogram=nonzero_counts(histogram),
        standing=tuple(result.counts[FIGHT_COUNTS + max_rounds + 1:].tolist()),
    )


def _policy_fights(combatants, passes, max_rounds, ambush_side, taper, run, policies, table) -> FightResult:
    """``simulate_fights`` with ``policies``: the fights through the engine (combatsim.policies), members
    named as in a scenario whose sides are "side 0" and "side 1" ("side 0", or "side 0 1", "side 0 2"...)."""
    from combatsim.policies import api_fights, policy_result

    spec = {"passes": passes, "max_rounds": max_rounds, "ambush_side": ambush_side, "taper": taper,
            "combatants": list(combatants)}
    results = api_fights(game, spec, [c.side for c in combatants], run, policies, table)
    return policy_result(
        FightResult, run, results,
        counts={name: results.totals[name] for name in FIGHT_COUNT_NAMES},
        rounds_histogram=results.length_histogram,
    )


# --- the engine's Game (combatsim.d100.game names it for scenarios) ------------------------------


def observation_names(ally_slots: int, foe_slots: int) -> tuple[str, ...]:
    """One member's observation, field by field: the global fields, then its own block, its
    allies' blocks and its foes' blocks (docs/d100.md, "The engine")."""
    from combatsim.d100 import engine  # the engine loads on the first fight, not with the API

    blocks = ["self"] + [f"ally{k}" for k in range(ally_slots)] + [f"foe{k}" for k in range(foe_slots)]
    return (*engine.GLOBAL_NAMES, *(f"{block}.{name}" for block in blocks for name in engine.MEMBER_NAMES))


def game(spec: dict, member_names: Sequence[str], side_names: Sequence[str], table: np.ndarray | None = None) -> Game:
    """The engine's Game for a validated d100 scenario spec (``combatsim.d100.scenario.build``).

    Member ``c`` is ``spec["combatants"][c]``: side 0's members in file order, then side 1's.
    ``table``: the spec's fight table (api.fight_table) where the caller has built it already.
    """
    from combatsim.d100 import engine
    from combatsim.engine import Game

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
