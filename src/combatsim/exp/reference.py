"""EXP reference kernels: plain loops, the executable specification (RULINGS.md, EXP).

Kernel signature (shared by the Numba and Cython twins):
``kernel(seed, start, count, *params, counts, *outputs)``; per-attack params have length 1
(the same for every attack) or ``count``; outputs have length ``count`` or 0 (not wanted).
"""

from __future__ import annotations

from combatsim.engine import new_stream, stream_resume
from combatsim.exp.engine import (  # noqa: F401  (the fight's layout and rules, re-exported)
    C_ADJUSTMENT,
    C_ARMOUR_RATING,
    C_AUTOMATIC,
    C_BONUS,
    C_DAMAGE_ADJUSTMENT,
    C_DICE_COUNT,
    C_DICE_MODIFIER,
    C_DICE_SIDES,
    C_HIT_POINTS,
    C_MAXIMUM_ROLL,
    C_ROLLS,
    C_SHOTS,
    C_SIDE,
    COMBATANT_FIELDS,
    DRAW_WINNER,
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
    KILODIE,
    NO_CAP,
    ROUNDS_PER_BURST,
    damage,
    fight,
    fire_unit,
    is_hit,
    to_hit_roll,
)
from combatsim.rng import dense_die


def _at(values, k: int) -> int:
    return int(values[k] if len(values) > 1 else values[0])


def to_hit(seed, start, count, bonus, maximum_roll, armour_rating, hit_on_equal, counts, to_hit_out) -> None:
    """Kilodie to-hit (Tables 9.2, 9.5; Ch. 27): to-hit = min(kilodie + bonus, MR).

    A hit needs to-hit greater than the armour rating (RULINGS.md; option: equal suffices).
    ``counts[0]`` gains the hits; ``to_hit_out[k]`` gets attack ``start + k``'s to-hit roll.
    """
    for k in range(count):
        roll = dense_die(seed, start + k, KILODIE)
        total = min(roll + _at(bonus, k), _at(maximum_roll, k))
        armour = _at(armour_rating, k)
        if total > armour or (hit_on_equal and total == armour):
            counts[0] += 1
        if len(to_hit_out):
            to_hit_out[k] = total


# ---------------------------------------------------------------------------------------------
# The tactical combat system: attacks with damage, and whole fights (docs/exp.md). The fight and
# the rules of a unit of fire live in combatsim.exp.engine (the one source the fight kernels and
# the RL environments are tested against); the attack kernel fires the engine's unit of fire.
# ---------------------------------------------------------------------------------------------
#: counts layout of "exp.attack".
ATTACK_TO_HIT_ROLLS, ATTACK_HITS, ATTACK_DAMAGE, ATTACK_ROUNDS_FIRED, ATTACK_ROUNDS_HIT = range(5)
ATTACK_COUNTS = 5
#: winner_out value of a draw (unit limit reached, or both sides out in the same unit).
DRAW = DRAW_WINNER


#: The most faces a joint word may have (1000 x sides ** dice): products of a word and the faces
#: stay below 2**63, so the compiled fast paths compare them as signed 64-bit integers.
JOINT_FACES_LIMIT = 2**31


def joint_faces(rolls: int, automatic: bool, dice_count: int, dice_sides: int) -> int:
    """Faces of the joint die a unit of fire rolls from its one dense word, or 0 (item stream).

    A single to-hit roll (weapon types A, B, C) whose kilodie and damage dice fit
    ``JOINT_FACES_LIMIT`` faces together reads one word (docs/exp.md); everything else reads
    the item stream.
    """
    if rolls != 1 or automatic:
        return 0
    faces = KILODIE * dice_sides**dice_count
    return faces if faces <= JOINT_FACES_LIMIT else 0


def joint_dice(value: int, dice_count: int, dice_sides: int) -> tuple[int, list[int]]:
    """The kilodie and the damage dice (1-based) in ``value`` (0-based) of a joint die.

    Mixed radix, most significant first: the kilodie, then damage die 1, 2, ... in base ``dice_sides``.
    """
    place = dice_sides**dice_count
    dice = [(value // dice_sides ** (dice_count - 1 - j)) % dice_sides + 1 for j in range(dice_count)]
    return value // place + 1, dice


def fire_joint(
    value: int,
    bonus: int,
    maximum_roll: int,
    armour_rating: int,
    adjustment: int,
    dice_count: int,
    dice_sides: int,
    dice_modifier: int,
    damage_adjustment: int,
    hit_on_equal: bool,
    critical: bool,
) -> tuple[int, int, int]:
    """One to-hit roll and its damage from ``value`` (0-based) of the joint die: (hits, damage, rounds hit)."""
    kilodie, dice = joint_dice(value, dice_count, dice_sides)
    dice_total = sum(dice)
    hit = is_hit(to_hit_roll(kilodie, bonus, maximum_roll, adjustment, critical), armour_rating, hit_on_equal)
    if not hit:
        return 0, 0, 0
    return 1, damage(dice_total, dice_modifier, damage_adjustment), 1


def attack(
    seed,
    start,
    count,
    bonus,
    maximum_roll,
    armour_rating,
    adjustment,
    dice_count,
    dice_sides,
    dice_modifier,
    damage_adjustment,
    rolls,
    automatic,
    hit_on_equal,
    critical,
    counts,
    hits_out,
    rounds_hit_out,
    damage_out,
) -> None:
    """EXP attacks with damage: item ``i`` is one unit of fire of one weapon (docs/exp.md).

    A unit with a joint die (``joint_faces``) reads item ``i``'s one dense word; any other reads
    item stream ``i``.

    counts += [to-hit rolls, hits, damage total, rounds fired, rounds hit]. ``rolls`` is the
    to-hit rolls this unit (1 for A/B/C, 2/3/4 for D/E/F, 5 bursts for automatic, fewer when the
    ammunition runs short: the API works that out). Outputs per item: hits, rounds hit, damage.
    """
    for k in range(count):
        n_rolls = _at(rolls, k)
        auto = bool(_at(automatic, k))
        unit_bonus, unit_maximum_roll, unit_armour_rating, unit_adjustment = (
            _at(bonus, k), _at(maximum_roll, k), _at(armour_rating, k), _at(adjustment, k))
        unit_dice_count, unit_dice_sides, unit_dice_modifier, unit_damage_adjustment = (
            _at(dice_count, k), _at(dice_sides, k), _at(dice_modifier, k), _at(damage_adjustment, k))
        faces = joint_faces(n_rolls, auto, unit_dice_count, unit_dice_sides)
        if faces:
            value = dense_die(seed, start + k, faces) - 1
            hits, total, rounds_hit = fire_joint(
                value, unit_bonus, unit_maximum_roll, unit_armour_rating, unit_adjustment, unit_dice_count,
                unit_dice_sides, unit_dice_modifier, unit_damage_adjustment, bool(hit_on_equal), bool(critical))
        else:
            rng = new_stream()
            stream_resume(rng, seed, start + k, 0, 0)
            hits, total, rounds_hit = fire_unit(
                rng, unit_bonus, unit_maximum_roll, unit_armour_rating, unit_adjustment, unit_dice_count,
                unit_dice_sides, 0, unit_dice_modifier, unit_damage_adjustment, n_rolls, auto, bool(hit_on_equal),
                bool(critical))
        counts[ATTACK_TO_HIT_ROLLS] += n_rolls
        counts[ATTACK_HITS] += hits
        counts[ATTACK_DAMAGE] += total
        counts[ATTACK_ROUNDS_FIRED] += n_rolls * (ROUNDS_PER_BURST if auto else 1)
        counts[ATTACK_ROUNDS_HIT] += rounds_hit
        if len(hits_out):
            hits_out[k] = hits
        if len(rounds_hit_out):
            rounds_hit_out[k] = rounds_hit
        if len(damage_out):
            damage_out[k] = total
