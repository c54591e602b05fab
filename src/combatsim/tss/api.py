"""TSS Python API: validate, flatten into the kernels' int64 tables, then stream the kernels."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from combatsim.dice import Dice
from combatsim.engine import Game
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
from combatsim.tss import engine
from combatsim.validation import check_bool, check_int, memoize_simple, parsed, register_immutable, remember

from .engine import (
    ATTACK_COUNTS,
    C_ARMOUR_COUNT,
    C_ARMOUR_MODIFIER,
    C_ARMOUR_PRESENT,
    C_ARMOUR_SIDES,
    C_DAMAGE,
    C_DAMAGE_WORDS,
    C_JOINT,
    C_JOINT_DAMAGE,
    C_JOINT_SIDES,
    C_SIT_COUNT,
    C_SIT_SIDES,
    C_SIT_SIGN,
    CONFIG_SIZE,
    FIGHT_COUNTS,
    JOINT_MAX_SIDES,
    R_ACTION_CHECK,
    R_ACTIONS,
    R_AIM_CHANCE,
    R_AMBIDEXTERITY,
    R_ARMOUR,
    R_ARMOUR_QUALITY,
    R_ATTACK_STEPS,
    R_BROAD,
    R_CHOOSES,
    R_DAMAGE,
    R_DEFENCE_STEPS,
    R_HAS_RESOLVE,
    R_HAS_SECOND,
    R_MORTAL,
    R_POLICY_DIE,
    R_RESOLVE,
    R_SIDE,
    R_SKILL,
    R_STUN,
    R_TWO_WEAPONS,
    R_WEAPON_CLASS,
    R_WEAPON_QUALITY,
    R_WOUND,
    ROW_BASE,
    SECOND,
    own_steps,
    shift_type,
)
from .model import (
    MAX_ARMOUR_DICE,
    MAX_DURABILITY,
    MAX_STEPS,
    TIER_NAMES,
    ActionCheck,
    Armour,
    DamageTier,
    DamageTrack,
    Score,
    Weapon,
    _check_dice,
    _named,
    check_hand,
    quality_grade,
    situation_die,
)

# Frozen and checked when made, with immutable fields (not Armour: it holds a dict of dice).
register_immutable(Dice, Score, ActionCheck, DamageTier, DamageTrack, Weapon)

MAX_CHARACTERS = 64
MAX_ROUNDS = 100_000
#: The fight counts' index of the rounds played (summed over fights): wins 0, 1, draws, rounds.
FIGHT_ROUNDS = 3


def _armour_die(armour: str | Dice | Armour | None, damage_class: str) -> tuple[Dice | None, int | None]:
    if armour is None:
        return None, None
    if isinstance(armour, Armour):
        return armour.die_for(damage_class), armour.quality
    die = Dice.parse(armour, "armour", constant=False)
    _check_dice("armour", die, MAX_ARMOUR_DICE)
    return die, None


def attack_config(
    *,
    skill: str | int | Score,
    steps: int = 0,
    damage: str | DamageTrack,
    weapon_quality: str | int = "ordinary",
    damage_class: str = "En",
    armour: str | Dice | Armour | None = None,
    armour_quality: str | int = "ordinary",
    one_step_shift: bool = False,
    joint_layout: bool = True,
    aim: bool = False,
    two_weapons: str | None = None,
    ambidexterity: bool = False,
    broad: bool = False,
) -> np.ndarray:
    """The attack kernel's int64 config (layout: combatsim.tss.engine, docs/tss.md).

    ``joint_layout=False`` forces the per-die word layout (for tests and reproductions). The
    attacker's choices (``attack_steps``) add to ``steps``."""
    score = Score.parse(skill, "skill")
    steps = attack_steps(steps, aim, two_weapons, ambidexterity, broad)
    weapon = Weapon.make(damage, damage_class, weapon_quality)
    one_step_shift = check_bool("one_step_shift", one_step_shift)
    joint_layout = check_bool("joint_layout", joint_layout)
    die, grade = _armour_die(armour, weapon.damage_class)
    if grade is None:
        grade = quality_grade(armour_quality, "armour_quality")
    config = np.zeros(CONFIG_SIZE, dtype=np.int64)
    config[0:3] = (score.amazing, score.good, score.ordinary)
    config[C_SIT_SIGN], config[C_SIT_COUNT], config[C_SIT_SIDES] = situation_die(steps)
    config[C_ARMOUR_SIDES] = 1  # no armour: a die size the kernels can still take a threshold of
    if die is not None:
        config[C_ARMOUR_PRESENT] = 1
        config[C_ARMOUR_COUNT], config[C_ARMOUR_SIDES], config[C_ARMOUR_MODIFIER] = die.count, die.sides, die.modifier
    words = 0
    damage_modulus = 1  # of the joint layout (below): the least common multiple of the damage dice
    for degree in range(3):
        tier = weapon.damage.tier(degree)
        damage_type = tier.type
        if die is not None:  # no armour, or no die for the class: no soak and no shift
            damage_type = shift_type(damage_type, weapon.quality, grade, one_step_shift)
        base = C_DAMAGE + 4 * degree
        config[base : base + 4] = (tier.dice.count, tier.dice.sides, tier.dice.modifier, damage_type)
        words = max(words, tier.dice.count)
        if tier.dice.count:
            damage_modulus = math.lcm(damage_modulus, tier.dice.sides)
    config[C_DAMAGE_WORDS] = words
    # The joint layout: one die for the whole attack when its faces stay small (docs/tss.md).
    armour_words = int(config[C_ARMOUR_COUNT]) if die is not None else 0
    faces = (20 * int(config[C_SIT_SIDES]) ** int(config[C_SIT_COUNT]) * damage_modulus**words
             * int(config[C_ARMOUR_SIDES]) ** armour_words)
    if faces <= JOINT_MAX_SIDES and joint_layout:
        config[C_JOINT], config[C_JOINT_SIDES], config[C_JOINT_DAMAGE] = 1, faces, damage_modulus
    return config


def attack_steps(steps: int, aim: bool = False, two_weapons: str | None = None, ambidexterity: bool = False,
                 broad: bool = False) -> int:
    """``steps`` with the attacker's choices (engine.own_steps): an aim held (``aim``), the main or
    off hand of a two-weapon action (``two_weapons`` "main" or "off", ``ambidexterity``), a broad
    skill (``broad``). A sum beyond MAX_STEPS rolls as MAX_STEPS, as in a fight."""
    steps = check_int("steps", steps, -1000, MAX_STEPS)
    aim = check_bool("aim", aim)
    hand = check_hand(two_weapons)
    ambidexterity = check_bool("ambidexterity", ambidexterity)
    if ambidexterity and not hand:
        raise ValueError("ambidexterity needs two_weapons ('main' or 'off'): the feat changes two-weapon attacks only")
    broad = check_bool("broad", broad)
    return min(MAX_STEPS, steps + own_steps(int(aim), int(broad), hand, int(ambidexterity)))


@memoize_simple
def _attack_setup(**arguments: object) -> tuple[np.ndarray, Work]:
    """attack_config and an attack's work, remembered for repeated simple inputs (damage tracks as
    text): the config is then shared, never written."""
    config = attack_config(**arguments)
    # Dice rolled: the control and situation dice, then one word (joint layout) or the damage and soak dice.
    dice = 2 + (1 if config[C_JOINT] else int(config[C_DAMAGE_WORDS] + config[C_ARMOUR_COUNT]))
    return config, Work(least=dice / 2, most=dice)


@dataclass(frozen=True)
class AttackResult(RunInfo):
    attacks: int
    #: amazing, good, ordinary, failure, critical_failure, stun, wound, mortal.
    counts: np.ndarray
    #: Per-attack tier codes (0 amazing .. 4 critical failure) and damage dealt, with outcomes=True.
    tier: np.ndarray | None = field(default=None, repr=False)
    stun: np.ndarray | None = field(default=None, repr=False)
    wound: np.ndarray | None = field(default=None, repr=False)
    mortal: np.ndarray | None = field(default=None, repr=False)

    def as_dict(self) -> dict:
        counts = self.counts.tolist()
        hits = sum(counts[:3])
        return {"attacks": self.attacks, **dict(zip((*TIER_NAMES, "stun", "wound", "mortal"), counts, strict=True)),
                "hit_rate": hits / self.attacks if self.attacks else 0.0, **self.record()}


@simulation(output_bytes_per_item=13, inputs=attack_config)
def simulate_attacks(run: RunArguments, /, **attack: object) -> AttackResult:
    """Simulate ``n`` TSS attacks: d20 control die ± the situation die of ``steps`` against
    ``skill`` (Ordinary/Good/Amazing), the tier's damage from ``damage`` (e.g. ``d4w/d4+2w/d4-1m``),
    the type shifted by weapon against armour quality, secondary damage, the armour soak.

    ``armour`` is the die against this weapon's class (``"d6"``) or an :class:`Armour`. With
    ``outcomes=True`` the result carries every attack's tier and damage (memory grows with n).
    ``joint_layout=False`` forces the per-die word layout (docs/tss.md); the default takes one
    word per attack whenever the attack's dice allow it. The attacker's choices add steps: ``aim``
    (an aim held, -1), ``two_weapons`` ("main" +2 or "off" +4, with ``ambidexterity`` +0 or +2),
    ``broad`` (a broad skill, +1).
    """
    config, work = _attack_setup(attack)
    result, _, threads = simulate(
        "tss.attack",
        run,
        params=(config,),
        counts_size=ATTACK_COUNTS,
        outputs=(("tier", "int8"), ("stun", "int32"), ("wound", "int32"), ("mortal", "int32")),
        work=work,
    )
    return run_result(
        AttackResult, run, result, threads,
        attacks=result.items_done,
        counts=result.counts,
    )


@dataclass(frozen=True)
class Combatant:
    """One character in a fight (flattened by :func:`fight_table`).

    ``attack_steps``: the attacker's own modifiers (skill bonuses, accuracy, range, equipment);
    ``defence_steps``: what it imposes on attackers (resistance, dodge, stealth).
    ``resolve``: a Resolve-physical score, or None. ``second_weapon``: the off-hand weapon of a
    two-weapon attack; ``ambidexterity``: the feat (+0/+2 instead of +2/+4); ``broad_skill``: the
    attack skill is a broad one (+1 step). The scripted policy's choices: ``aim_chance`` (percent,
    0-100) to aim before an attack, ``two_weapons`` to attack with both weapons.
    """

    skill: str | int | Score
    action_check: str | int | Score | ActionCheck
    weapon: Weapon | str
    durability: tuple[int, int, int] = (10, 10, 5)
    actions_per_round: int = 1
    armour: Armour | None = None
    attack_steps: int = 0
    defence_steps: int = 0
    resolve: str | int | Score | None = None
    second_weapon: Weapon | str | None = None
    ambidexterity: bool = False
    broad_skill: bool = False
    aim_chance: int = 0
    two_weapons: bool = False


def _weapon(weapon: object, label: str) -> Weapon:
    if isinstance(weapon, str):
        weapon = _named(label, parsed, Weapon.make, weapon)
    if not isinstance(weapon, Weapon):
        raise TypeError(f"{label} must be a Weapon or a damage track, got {type(weapon).__name__}")
    return weapon



#: Fight tables by their sides (see _sides_key), as built and checked once: a game loop that asks
#: about the same fighters again skips a few microseconds a member.
_tables: dict[tuple, tuple[tuple[np.ndarray, int, int], list]] = {}


def _sides_key(side_a: object, side_b: object, held: list) -> tuple | None:
    """A key equal only for the same Combatant objects with the same armour dice, or None (the
    caller builds the table afresh). A frozen Combatant changes only through a list it holds or
    its Armour's mapping: a list takes the full path, the mapping's items are part of the key, and
    every other field the table reads is immutable once checked (text, ints, Score, Weapon)."""
    key: list[object] = []
    for side in (side_a, side_b):
        if type(side) is not list and type(side) is not tuple:
            return None
        key.append(len(side))
        for member in side:
            if type(member) is not Combatant or type(member.durability) is not tuple:
                return None
            armour = member.armour
            if armour is not None:
                if type(armour) is not Armour or type(armour.dice) is not dict:
                    return None
                armour = tuple(armour.dice.items())
            key += (id(member), armour)
            held.append(member)
    return tuple(key)


def fight_table(side_a: Sequence[Combatant], side_b: Sequence[Combatant]) -> tuple[np.ndarray, int, int]:
    """(characters, n_characters, n_classes): the fight kernel's flat int64 rows (docs/tss.md), a
    fresh array each call."""
    held: list = []
    key = _sides_key(side_a, side_b, held)
    found = _tables.get(key) if key is not None else None
    if found is None:
        found = (_build_fight_table(side_a, side_b), held)
        if key is not None:
            remember(_tables, key, found, 1024)
    characters, n_characters, n_classes = found[0]
    return characters.copy(), n_characters, n_classes


def _build_fight_table(side_a: Sequence[Combatant], side_b: Sequence[Combatant]) -> tuple[np.ndarray, int, int]:
    sides = [("side_a", side_a), ("side_b", side_b)]
    everyone = []
    for name, side in sides:
        if isinstance(side, Combatant) or not isinstance(side, Sequence) or not side:
            raise ValueError(f"{name} must be a non-empty list of Combatant")
        for index, member in enumerate(side):
            if not isinstance(member, Combatant):
                raise TypeError(f"{name}[{index}] must be a Combatant, got {type(member).__name__}")
            everyone.append((0 if name == "side_a" else 1, f"{name}[{index}]", member))
    if len(everyone) > MAX_CHARACTERS:
        raise ValueError(f"a fight holds at most {MAX_CHARACTERS} characters, got {len(everyone)}")
    weapons = [_weapon(member.weapon, f"{label}.weapon") for _, label, member in everyone]
    seconds = [None if member.second_weapon is None else _weapon(member.second_weapon, f"{label}.second_weapon")
               for _, label, member in everyone]
    # the damage classes in order of first use, main weapons first
    classes = list(dict.fromkeys(weapon.damage_class.lower() for weapon in (*weapons, *seconds) if weapon is not None))
    width = ROW_BASE + 4 * len(classes)
    # Rows as Python lists, one array at the end: item by item into an array cost ~1 us a field.
    table = [0] * (len(everyone) * width)
    for i, ((side, label, member), weapon, second) in enumerate(zip(everyone, weapons, seconds, strict=True)):
        row = [0] * width
        skill = parsed(Score.parse, member.skill, f"{label}.skill")
        check = parsed(ActionCheck.parse, member.action_check, f"{label}.action_check").score
        row[R_SIDE] = side
        row[R_SKILL : R_SKILL + 3] = (skill.amazing, skill.good, skill.ordinary)
        row[R_ACTION_CHECK : R_ACTION_CHECK + 3] = (check.amazing, check.good, check.ordinary)
        row[R_ACTIONS] = check_int(f"{label}.actions_per_round", member.actions_per_round, 1, 4)
        row[R_ATTACK_STEPS] = check_int(f"{label}.attack_steps", member.attack_steps, -1000, MAX_STEPS)
        row[R_DEFENCE_STEPS] = check_int(f"{label}.defence_steps", member.defence_steps, -1000, MAX_STEPS)
        if member.resolve is not None:
            resolve = parsed(Score.parse, member.resolve, f"{label}.resolve")
            row[R_HAS_RESOLVE] = 1
            row[R_RESOLVE : R_RESOLVE + 3] = (resolve.amazing, resolve.good, resolve.ordinary)
        durability = member.durability
        if not isinstance(durability, tuple | list) or len(durability) != 3:
            raise ValueError(f"{label}.durability must be (stun, wound, mortal), got {durability!r}")
        for offset, track in zip((R_STUN, R_WOUND, R_MORTAL), ("stun", "wound", "mortal"), strict=True):
            row[offset] = check_int(f"{label}.durability {track}", durability[offset - R_STUN], 1, MAX_DURABILITY)
        for offset, arms in ((0, weapon), (SECOND, second)):
            if arms is None:
                continue
            row[R_WEAPON_QUALITY + offset] = arms.quality
            row[R_WEAPON_CLASS + offset] = classes.index(arms.damage_class.lower())
            for degree in range(3):
                tier = arms.damage.tier(degree)
                base = R_DAMAGE + offset + 4 * degree
                row[base : base + 4] = (tier.dice.count, tier.dice.sides, tier.dice.modifier, tier.type)
        row[R_HAS_SECOND] = second is not None
        row[R_AMBIDEXTERITY] = check_bool(f"{label}.ambidexterity", member.ambidexterity)
        row[R_BROAD] = check_bool(f"{label}.broad_skill", member.broad_skill)
        row[R_AIM_CHANCE] = check_int(f"{label}.aim_chance", member.aim_chance, 0, 100)
        row[R_TWO_WEAPONS] = check_bool(f"{label}.two_weapons", member.two_weapons)
        if row[R_TWO_WEAPONS] and second is None:
            raise ValueError(f"{label}.two_weapons needs a second_weapon: attacking with two weapons "
                             "takes one in each hand")
        row[R_CHOOSES] = row[R_AIM_CHANCE] > 0 or row[R_TWO_WEAPONS]
        row[R_POLICY_DIE] = 0 < row[R_AIM_CHANCE] < 100
        if member.armour is not None:
            if not isinstance(member.armour, Armour):
                raise TypeError(f"{label}.armour must be an Armour, got {type(member.armour).__name__}")
            row[R_ARMOUR_QUALITY] = member.armour.quality
            for c, name in enumerate(classes):
                die = member.armour.die_for(name)
                if die is not None:
                    row[R_ARMOUR + 4 * c : R_ARMOUR + 4 * c + 4] = (1, die.count, die.sides, die.modifier)
        table[i * width : (i + 1) * width] = row
    return np.array(table, dtype=np.int64), len(everyone), len(classes)


@dataclass(frozen=True)
class FightResult(FightInfo):
    fights: int
    #: side 0 wins, side 1 wins, draws, rounds, attacks, stun, wound, mortal (sums over fights).
    counts: np.ndarray
    #: Per-fight winner (0 or 1, -1 unfinished at max_rounds: no TSS fight is a draw) and rounds,
    #: with outcomes=True.
    winner: np.ndarray | None = field(default=None, repr=False)
    rounds: np.ndarray | None = field(default=None, repr=False)
    #: rounds to the end -> fights
    rounds_histogram: dict[int, int] = field(default_factory=dict)
    # standing: per character, side a's then side b's: the fights it ended still standing (neither
    # knocked out nor dying)

    @property
    def wins(self) -> tuple[int, int]:
        return int(self.counts[0]), int(self.counts[1])

    @property
    def draws(self) -> int:
        return int(self.counts[2])

    def as_dict(self) -> dict:
        c = [int(v) for v in self.counts]
        fights = self.fights or 1
        return {
            **self.fight_record(),
            "side_a_wins": c[0],
            "side_b_wins": c[1],
            "side_a_win_rate": c[0] / fights,
            "side_b_win_rate": c[1] / fights,
            "mean_rounds": c[3] / fights,
            "attacks": c[4],
            "stun": c[5],
            "wound": c[6],
            "mortal": c[7],
            **self.record(),
        }


@simulation(output_bytes_per_item=5)
def simulate_fights(
    run: RunArguments,
    /,
    *,
    side_a: Sequence[Combatant],
    side_b: Sequence[Combatant],
    max_rounds: int = 100,
    one_step_shift: bool = False,
    policies: Mapping[str, Callable] | None = None,
) -> FightResult:
    """Simulate ``n`` independent fights of ``side_a`` against ``side_b`` (policy: docs/tss.md).

    ``policies`` ({member name: policy(obs, masks) -> actions}, combatsim.policies) plays those
    members by the policies and the others by their scripted policy, through the engine (backend
    numba or python, one thread): members are named "side 0" when alone on their side, else
    "side 0 1", "side 0 2"... in order (as a scenario names the members of sides called "side 0",
    "side 1").
    """
    one_step_shift = check_bool("one_step_shift", one_step_shift)
    max_rounds = check_int("max_rounds", max_rounds, 1, MAX_ROUNDS)
    table, n_characters, n_classes = fight_table(side_a, side_b)
    if policies is not None:
        return _policy_fights(side_a, side_b, max_rounds, one_step_shift, run, policies,
                              (table, n_characters, n_classes))
    width = len(table) // n_characters
    # A round: each character's action check, then its actions' attacks and their damage dice.
    per_round = sum(1 + int(table[i * width + R_ACTIONS]) * (2 + int(table[i * width + R_DAMAGE]))
                    for i in range(n_characters))
    result, _, threads = simulate(
        "tss.fight",
        run,
        params=(table, n_characters, n_classes, max_rounds, one_step_shift),
        counts_size=FIGHT_COUNTS + max_rounds + 1 + n_characters,
        outputs=(("winner", "int8"), ("rounds", "int32")),
        work=Work(least=per_round, most=per_round * max_rounds, counted=FIGHT_ROUNDS, per_count=per_round),
    )
    return run_result(
        FightResult, run, result, threads,
        fights=result.items_done,
        counts=result.counts[:FIGHT_COUNTS],
        rounds_histogram=nonzero_counts(result.counts[FIGHT_COUNTS:FIGHT_COUNTS + max_rounds + 1]),
        standing=tuple(result.counts[FIGHT_COUNTS + max_rounds + 1:].tolist()),
    )


def _policy_fights(side_a, side_b, max_rounds, one_step_shift, run, policies, table) -> FightResult:
    """``simulate_fights`` with ``policies``: the fights through the engine (combatsim.policies)."""
    from combatsim.policies import api_fights, policy_result

    spec = {"max_rounds": max_rounds, "one_step_shift": one_step_shift, "sides": [list(side_a), list(side_b)]}
    results = api_fights(game, spec, [0] * len(side_a) + [1] * len(side_b), run, policies, table)
    return policy_result(
        FightResult, run, results,  # winner: 0, 1, or -1 unfinished
        # the engine's counts begin with the fight kernel's, in its order
        counts=np.array(list(results.totals.values())[:FIGHT_COUNTS], dtype=np.int64),
        rounds_histogram=results.length_histogram,
    )


# --- the engine's Game (combatsim.tss.game names it for scenarios) -------------------------------


def action_names(slots: int, two_weapons: bool) -> tuple[str, ...]:
    """hold, attack_foe_0 .. attack_foe_{slots-1} (foe j: the j-th member of the other side), aim,
    then, when some member has a second weapon, attack_two_weapons_foe_0 .."""
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
