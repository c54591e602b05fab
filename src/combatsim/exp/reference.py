"""EXP reference kernels: plain loops, the executable specification (RULINGS.md, EXP).

Kernel signature (shared by the Numba and Cython twins):
``kernel(seed, start, count, *params, counts, *outputs)``; per-attack params have length 1
(the same for every attack) or ``count``; outputs have length ``count`` or 0 (not wanted).
"""

from __future__ import annotations

from combatsim.rng import ItemStream, dense_die

KILODIE = 1000


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
# The tactical combat system: attacks with damage, and whole fights (docs/exp.md).
# ---------------------------------------------------------------------------------------------
#: Rounds a fully automatic burst that hits can land: 0..3, one d4 word (RULINGS.md).
ROUNDS_PER_BURST = 3
#: Above any to-hit a kernel can produce: the cap a critical natural 1000 uses instead of MR.
NO_CAP = 1 << 60

#: counts layout of "exp.attack".
ATTACK_TO_HIT_ROLLS, ATTACK_HITS, ATTACK_DAMAGE, ATTACK_ROUNDS_FIRED, ATTACK_ROUNDS_HIT = range(5)
ATTACK_COUNTS = 5

#: Columns of the "exp.fight" combatant table (one row per combatant, int64).
(
    C_SIDE,
    C_HIT_POINTS,
    C_ARMOUR_RATING,
    C_BONUS,
    C_MAXIMUM_ROLL,
    C_ADJUSTMENT,
    C_DICE_COUNT,
    C_DICE_SIDES,
    C_DICE_MODIFIER,
    C_DAMAGE_ADJUSTMENT,
    C_ROLLS,
    C_AUTOMATIC,
    C_SHOTS,
) = range(13)
COMBATANT_FIELDS = 13

#: counts layout of "exp.fight"; a histogram of units to the end follows (index units - 1).
(
    FIGHT_WINS_SIDE0,
    FIGHT_WINS_SIDE1,
    FIGHT_DRAWS,
    FIGHT_MUTUAL,
    FIGHT_UNITS,
    FIGHT_DAMAGE_SIDE0,
    FIGHT_DAMAGE_SIDE1,
    FIGHT_AMMUNITION_SIDE0,
    FIGHT_AMMUNITION_SIDE1,
    FIGHT_ROLLS_SIDE0,
    FIGHT_ROLLS_SIDE1,
    FIGHT_HITS_SIDE0,
    FIGHT_HITS_SIDE1,
) = range(13)
FIGHT_COUNTS = 13
#: winner_out value of a draw (unit limit reached, or both sides out in the same unit).
DRAW = -1


def to_hit_roll(kilodie: int, bonus: int, maximum_roll: int, adjustment: int = 0, critical: bool = False) -> int:
    """The to-hit roll (Chapter 27; RULINGS.md): min(kilodie + bonus, MR).

    A situational penalty (negative ``adjustment``) applies before the MR cap, a bonus after it.
    With the ``critical`` option a natural 1000 ignores the MR cap.
    """
    cap = NO_CAP if (critical and kilodie == KILODIE) else maximum_roll
    return min(kilodie + bonus + min(adjustment, 0), cap) + max(adjustment, 0)


def is_hit(to_hit: int, armour_rating: int, hit_on_equal: bool = False) -> bool:
    """A hit needs a to-hit greater than the armour rating (option: equal suffices)."""
    return to_hit > armour_rating or (hit_on_equal and to_hit == armour_rating)


def damage(dice_total: int, modifier: int, damage_adjustment: int) -> int:
    """Damage = weapon dice + the DA of the weapon's row, never below 0 (RULINGS.md)."""
    return max(dice_total + modifier + damage_adjustment, 0)


def fire_unit(
    stream: ItemStream,
    bonus: int,
    maximum_roll: int,
    armour_rating: int,
    adjustment: int,
    dice_count: int,
    dice_sides: int,
    dice_modifier: int,
    damage_adjustment: int,
    rolls: int,
    automatic: bool,
    hit_on_equal: bool,
    critical: bool,
) -> tuple[int, int, int]:
    """One unit of fire: ``rolls`` to-hit rolls (bursts if ``automatic``) -> (hits, damage, rounds hit).

    Fixed word layout per roll, consumed whether or not the roll hits (docs/exp.md):
    kilodie, then (automatic only) a d4 for rounds landed (d4 - 1 = 0..3), then the damage dice:
    ``dice_count`` dice for a single weapon, 3 × ``dice_count`` (round 1, 2, 3) for a burst.
    """
    hits = total = rounds_hit = 0
    for _ in range(rolls):
        kilodie = stream.die(KILODIE)
        hit = is_hit(to_hit_roll(kilodie, bonus, maximum_roll, adjustment, critical), armour_rating, hit_on_equal)
        if automatic:
            landed = stream.die(ROUNDS_PER_BURST + 1) - 1
            for round_number in range(ROUNDS_PER_BURST):
                dice_total = stream.roll(dice_count, dice_sides)
                if hit and round_number < landed:
                    total += damage(dice_total, dice_modifier, damage_adjustment)
            rounds_hit += landed if hit else 0
        else:
            dice_total = stream.roll(dice_count, dice_sides)
            if hit:
                total += damage(dice_total, dice_modifier, damage_adjustment)
                rounds_hit += 1
        hits += hit
    return hits, total, rounds_hit


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
        weapon = (
            _at(bonus, k),
            _at(maximum_roll, k),
            _at(armour_rating, k),
            _at(adjustment, k),
            _at(dice_count, k),
            _at(dice_sides, k),
            _at(dice_modifier, k),
            _at(damage_adjustment, k),
        )
        faces = joint_faces(n_rolls, auto, _at(dice_count, k), _at(dice_sides, k))
        if faces:
            value = dense_die(seed, start + k, faces) - 1
            hits, total, rounds_hit = fire_joint(value, *weapon, bool(hit_on_equal), bool(critical))
        else:
            stream = ItemStream(seed, start + k)
            hits, total, rounds_hit = fire_unit(stream, *weapon, n_rolls, auto, bool(hit_on_equal), bool(critical))
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


def fight(seed, start, count, combatants, unit_limit, hit_on_equal, critical, counts, winner_out, units_out) -> None:
    """EXP fights (docs/exp.md): fight ``i`` uses item stream ``i`` for all its dice.

    ``combatants`` is an int64 table, one row per combatant, columns ``C_*``. Each unit every
    combatant standing at its start (hit points > 0) that has shots left picks a uniformly random
    standing enemy (one die of the number of standing enemies: the k-th in table order), then fires
    one unit (``fire_unit``, rolls limited by its shots). Attacks are simultaneous: damage lands at
    the end of the unit. The fight ends when a side has no one standing (both at once: a draw) or
    after ``unit_limit`` units (a draw). counts: ``FIGHT_*`` then the histogram of units.
    """
    table = [[int(v) for v in row] for row in combatants]
    members = len(table)
    for k in range(count):
        stream = ItemStream(seed, start + k)
        hit_points = [row[C_HIT_POINTS] for row in table]
        shots = [row[C_SHOTS] for row in table]
        units = 0
        while True:
            taken = [0] * members
            for a, row in enumerate(table):
                if hit_points[a] <= 0 or shots[a] == 0:
                    continue
                side = row[C_SIDE]
                enemies = [t for t in range(members) if table[t][C_SIDE] != side and hit_points[t] > 0]
                target = enemies[stream.die(len(enemies)) - 1]
                n_rolls = row[C_ROLLS] if shots[a] < 0 else min(row[C_ROLLS], shots[a])
                if shots[a] > 0:
                    shots[a] -= n_rolls
                hits, total, _ = fire_unit(
                    stream,
                    row[C_BONUS],
                    row[C_MAXIMUM_ROLL],
                    table[target][C_ARMOUR_RATING],
                    row[C_ADJUSTMENT],
                    row[C_DICE_COUNT],
                    row[C_DICE_SIDES],
                    row[C_DICE_MODIFIER],
                    row[C_DAMAGE_ADJUSTMENT],
                    n_rolls,
                    bool(row[C_AUTOMATIC]),
                    bool(hit_on_equal),
                    bool(critical),
                )
                taken[target] += total
                counts[FIGHT_DAMAGE_SIDE0 + side] += total
                counts[FIGHT_AMMUNITION_SIDE0 + side] += n_rolls * (ROUNDS_PER_BURST if row[C_AUTOMATIC] else 1)
                counts[FIGHT_ROLLS_SIDE0 + side] += n_rolls
                counts[FIGHT_HITS_SIDE0 + side] += hits
            for t in range(members):
                hit_points[t] -= taken[t]
            units += 1
            standing = [0, 0]
            for t, row in enumerate(table):
                standing[row[C_SIDE]] += hit_points[t] > 0
            if standing[0] == 0 or standing[1] == 0 or units >= unit_limit:
                break
        if standing[0] and not standing[1]:
            winner = 0
        elif standing[1] and not standing[0]:
            winner = 1
        else:
            winner = DRAW
            counts[FIGHT_MUTUAL] += not (standing[0] or standing[1])
        counts[FIGHT_WINS_SIDE0 if winner == 0 else FIGHT_WINS_SIDE1 if winner == 1 else FIGHT_DRAWS] += 1
        counts[FIGHT_UNITS] += units
        counts[FIGHT_COUNTS + units - 1] += 1
        if len(winner_out):
            winner_out[k] = winner
        if len(units_out):
            units_out[k] = units
