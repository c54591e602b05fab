"""EXP reference kernels: plain loops, the executable specification (docs/exp.md). Each to-hit
roll and unit of fire is the engine's (combatsim.exp.engine, the one source of the rules); these
loops draw the dice.

Kernel signature (shared by the Numba and Cython twins):
``kernel(seed, start, count, *params, counts, *outputs)``; per-attack params have length 1
(the same for every attack) or ``count``; outputs have length ``count`` or 0 (not wanted).
"""

from __future__ import annotations

from combatsim.engine import new_stream, stream_resume
from combatsim.exp.engine import (  # noqa: F401  fight: the engine's
    ATTACK_DAMAGE,
    ATTACK_HITS,
    ATTACK_ROUNDS_FIRED,
    ATTACK_ROUNDS_HIT,
    ATTACK_TO_HIT_ROLLS,
    KILODIE,
    ROUNDS_PER_BURST,
    fight,
    fire_joint,
    fire_unit,
    is_hit,
    joint_faces,
    to_hit_roll,
)
from combatsim.rng import dense_die, dense_die_word


def _at(values, k: int) -> int:
    return int(values[k] if len(values) > 1 else values[0])


def to_hit(seed, start, count, bonus, maximum_roll, armour_rating, hit_on_equal, counts, to_hit_out) -> None:
    """Kilodie to-hit (Tables 9.2, 9.5; Ch. 27): to-hit = min(kilodie + bonus, MR).

    A hit needs to-hit greater than the armour rating (option: equal suffices).
    ``counts[0]`` gains the hits; ``to_hit_out[k]`` gets attack ``start + k``'s to-hit roll.
    """
    for k in range(count):
        total = to_hit_roll(dense_die(seed, start + k, KILODIE), _at(bonus, k), _at(maximum_roll, k), 0, False)
        if is_hit(total, _at(armour_rating, k), hit_on_equal):
            counts[0] += 1
        if len(to_hit_out):
            to_hit_out[k] = total


# ---------------------------------------------------------------------------------------------
# The tactical combat system: attacks with damage, and whole fights (docs/exp.md). The fight and
# the rules of a unit of fire live in combatsim.exp.engine (the one source the fight kernels and
# the RL environments are tested against); the attack kernel draws each unit's dice and fires the
# engine's unit of fire (``fire_unit`` from the item stream, ``fire_joint`` from a joint die).
# ---------------------------------------------------------------------------------------------


def joint_dice(value: int, dice_count: int, dice_sides: int) -> tuple[int, list[int]]:
    """The kilodie and the damage dice (1-based) in ``value`` (0-based) of a joint die, as docs/exp.md
    reads them: mixed radix, most significant first, the kilodie, then damage die 1, 2, ... in base
    ``dice_sides``. (``fire_joint`` reads the same digits from the word the value came from.)
    """
    place = dice_sides**dice_count
    dice = [(value // dice_sides ** (dice_count - 1 - j)) % dice_sides + 1 for j in range(dice_count)]
    return value // place + 1, dice


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

    A unit with a joint die (``joint_faces``) reads item ``i``'s one dense word and fires the
    engine's ``fire_joint``; any other reads item stream ``i`` and fires the engine's ``fire_unit``.

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
            hits, total, rounds_hit = fire_joint(
                dense_die_word(seed, start + k, faces), unit_bonus, unit_maximum_roll, unit_armour_rating,
                unit_adjustment, unit_dice_count, unit_dice_sides, unit_dice_modifier, unit_damage_adjustment,
                bool(hit_on_equal), bool(critical))
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
