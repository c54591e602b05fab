"""The EXP fight as a state machine (combatsim.engine's contract): one step is one unit of combat time.

This module is the one source of the fight's rules: it runs as it is as the pure-Python reference,
and ``combatsim.kernels.engine_nb.compile_engine`` compiles the same functions with Numba.

A unit (docs/exp.md, sections 3 and 6): every combatant standing at the unit's start (hit points above 0)
with shots left draws its target die, one die of the number of standing enemies, then fires one
unit of fire (``fire_unit``: its to-hit rolls, as many as its weapon makes in a unit and its shots
allow). Damage lands at the end of the unit, so attacks are simultaneous. The fight ends when a
side has no one standing (both at once: a draw) or when ``unit_limit`` units have been played
(unfinished; ``fight`` counts it as a draw, as the fight kernels do).

The attack kernels (``exp.to_hit``, ``exp.attack``) take their rules from here too
(``KERNEL_RULES``): every backend fires a unit with ``fire_unit`` or ``fire_joint`` (the Cython
kernels include them as kernels/exp/kernel_rules.pxi, combatsim.engine_cython).

Actions of each member: ``HOLD`` (0, do not fire this unit: no shots spent), then ``FIRE_AT_FOE``
+ j (fire at foe j, the j-th member of the other side in table order). ``SCRIPTED`` fires at the
standing enemy its target die picks. Every member that could fire draws the same dice whatever its
action: the target die (an external choice ignores it), then the unit of fire it would fire (held:
drawn and thrown away). So the dice a member draws never depend on another member's action.
"""

from __future__ import annotations

import numpy as np

from combatsim.engine import (
    DRAW,
    RUNNING,
    S_BLOCK,
    S_INDEX,
    S_LENGTH,
    S_OUTCOME,
    S_RETRIES,
    S_RULESET,
    S_STEPS,
    S_WORDS,
    SCRIPTED,
    UNFINISHED,
    WINNERS,
    new_stream,
    rejection_threshold,
    stream_block,
    stream_continue,
    stream_die,
    stream_resume,
    stream_retries_used,
    stream_roll,
    stream_words_used,
)
from combatsim.rng import MASK32

KILODIE = 1000
#: rejection_threshold(KILODIE), as a constant so a step never divides for it.
KILODIE_THRESHOLD = (2**32 - KILODIE) % KILODIE
#: Rounds a fully automatic burst that hits can land: 0..3, one d4 word.
ROUNDS_PER_BURST = 3
#: Above any to-hit a kernel can produce: the cap a critical natural 1000 uses instead of MR.
NO_CAP = 1 << 60
#: The most faces a joint die may have (1000 x sides ** dice): products of a word and the faces
#: stay below 2**63, so the compiled fast paths compare them as signed 64-bit integers.
JOINT_FACES_LIMIT = 2**31

#: Columns of the combatant table (one int64 row per combatant; exp.api.combatant_table).
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

#: config fields: the scenario's options, the observation's member slots, where each side's rows
#: start (CF_SIDE_START + side) and how many it has (CF_SIDE_SIZE + side); then (fill_config) the
#: rejection thresholds of each member's damage die and of a target die of 0..members sides.
CF_UNIT_LIMIT, CF_HIT_ON_EQUAL, CF_CRITICAL, CF_ALLY_SLOTS, CF_FOE_SLOTS, CF_SIDE_START, CF_SIDE_SIZE = 0, 1, 2, 3, 4, 5, 7
CONFIG_HEAD = 9

#: State columns after the shared ones: member c's hit points at ST_HIT_POINTS + c, then
#: (+ members) its shots left (negative: never runs out), then (+ 2 members) the damage it takes in
#: the unit being played (landing at the unit's end).
ST_HIT_POINTS = S_RULESET
STATE_PER_MEMBER = 3

#: counts layout of "exp.fight" (an episode's counts are the same, then UNFINISHED and MASKED).
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
#: An episode's counts: the FIGHT_* fields (draws include the unfinished), then these two.
COUNT_UNFINISHED, COUNT_MASKED = 13, 14
ENGINE_COUNTS = 15

#: Actions: hold, then fire at foe 0, 1, ...
HOLD = 0
FIRE_AT_FOE = 1

#: Observation: the global fields, then per member slot (self, allies, foes) these fields.
OBS_UNITS = 0
GLOBAL_FIELDS = 1
F_IN_FIGHT, F_HEALTH, F_HIT_POINTS, F_AMMUNITION, F_ARMOUR_RATING = range(5)
MEMBER_FIELDS = 5
#: Scales that keep the observation's numbers in 0..1 (clipped): hit points in hundreds, armour in thousands.
HIT_POINTS_SCALE = 100.0
ARMOUR_RATING_SCALE = 1000.0

#: counts layout of "exp.attack".
ATTACK_TO_HIT_ROLLS, ATTACK_HITS, ATTACK_DAMAGE, ATTACK_ROUNDS_FIRED, ATTACK_ROUNDS_HIT = range(5)
ATTACK_COUNTS = 5
#: The rules the attack kernels of every backend run (combatsim.engine_cython writes them for the
#: Cython kernels): a unit of fire from its item stream or from its joint die's word, which units
#: have a joint die, the to-hit rule as a bar on the kilodie, and a joint word's tally for the
#: counting passes.
KERNEL_RULES = ("to_hit_roll", "is_hit", "fire_unit", "joint_faces", "fire_joint", "kilodie_bar", "joint_word_tally")
#: The constants the compiled attack kernels read too.
KERNEL_CONSTANTS = ("KILODIE", "ROUNDS_PER_BURST")

NUMBA_INLINE = (
    "to_hit_roll", "is_hit", "damage", "fire_unit", "fire_joint", "joint_word_tally", "can_fire",
    "fight_outcome", "write_views", "play_units", "start_fight", "config_size",
    "dice_threshold_field", "target_threshold_field", "slot_row",
)
#: The loops over envs and fights, which never allocate: compiled without Numba's runtime, the
#: arrays handed to the helpers inlined in them are not reference counted for every env or fight.
NUMBA_NO_RUNTIME = ("reset", "_step_envs", "play_fights")


# ---- the rules of one unit of fire --------------------------------------------------------------
def to_hit_roll(kilodie, bonus, maximum_roll, adjustment=0, critical=False):
    """The to-hit roll (Chapter 27): min(kilodie + bonus, MR).

    A situational penalty (negative ``adjustment``) applies before the MR cap, a bonus after it.
    With the ``critical`` option a natural 1000 ignores the MR cap.
    """
    cap = NO_CAP if (critical != 0 and kilodie == KILODIE) else maximum_roll
    return min(kilodie + bonus + min(adjustment, 0), cap) + max(adjustment, 0)


def is_hit(to_hit, armour_rating, hit_on_equal=False):
    """A hit needs a to-hit greater than the armour rating (option: equal suffices).

    One comparison, not ``>`` or ``==``: whether a roll hits is a coin toss that a branch on the
    first comparison's result would mispredict half the time.
    """
    return to_hit > armour_rating - (1 if hit_on_equal != 0 else 0)


def damage(dice_total, modifier, damage_adjustment):
    """Damage = weapon dice + the DA of the weapon's row, never below 0."""
    return max(dice_total + modifier + damage_adjustment, 0)


def fire_unit(rng, bonus, maximum_roll, armour_rating, adjustment, dice_count, dice_sides, dice_threshold,
              dice_modifier, damage_adjustment, rolls, automatic, hit_on_equal, critical):
    """One unit of fire: ``rolls`` to-hit rolls (bursts if ``automatic``) -> (hits, damage, rounds hit).

    Fixed word layout per roll, consumed whether or not the roll hits (docs/exp.md): kilodie,
    then (automatic only) a d4 for rounds landed (d4 - 1 = 0..3), then the damage dice:
    ``dice_count`` dice for a single weapon, 3 x ``dice_count`` (round 1, 2, 3) for a burst.
    ``dice_sides`` is a uint64 and ``dice_threshold`` its rejection_threshold.
    """
    hits = 0
    total = 0
    rounds_hit = 0
    for _ in range(rolls):
        kilodie = stream_die(rng, np.uint64(KILODIE), np.uint64(KILODIE_THRESHOLD))
        # 0 or 1, a factor of what the roll scores: no branch on a hit, which is a coin toss
        hit = 1 if is_hit(to_hit_roll(kilodie, bonus, maximum_roll, adjustment, critical), armour_rating,
                          hit_on_equal) else 0
        if automatic != 0:
            landed = stream_die(rng, np.uint64(ROUNDS_PER_BURST + 1), np.uint64(0)) - 1
            for round_number in range(ROUNDS_PER_BURST):
                dice_total = stream_roll(rng, dice_count, dice_sides, dice_threshold, 0)
                lands = 1 if round_number < landed else 0
                total += hit * lands * damage(dice_total, dice_modifier, damage_adjustment)
            rounds_hit += hit * landed
        else:
            dice_total = stream_roll(rng, dice_count, dice_sides, dice_threshold, 0)
            total += hit * damage(dice_total, dice_modifier, damage_adjustment)
            rounds_hit += hit
        hits += hit
    return hits, total, rounds_hit


def joint_faces(rolls, automatic, dice_count, dice_sides):
    """Faces of the joint die a unit of fire rolls from its one dense word, or 0 (its item stream).

    A single to-hit roll (weapon types A, B, C) whose kilodie and damage dice fit a die of at most
    ``JOINT_FACES_LIMIT`` faces, 1000 x ``dice_sides`` ** ``dice_count``, reads one word (docs/exp.md);
    every other unit reads its item stream.
    """
    if rolls != 1 or automatic != 0:
        return 0
    faces = KILODIE
    for _ in range(dice_count):
        faces *= dice_sides
        if faces > JOINT_FACES_LIMIT:
            return 0
    return faces


def fire_joint(word, bonus, maximum_roll, armour_rating, adjustment, dice_count, dice_sides, dice_modifier,
               damage_adjustment, hit_on_equal, critical):
    """A unit of fire with a joint die (``joint_faces``): its one to-hit roll -> (hits, damage, rounds hit).

    ``word`` is the 32-bit word the joint die's value v = word x faces >> 32 comes from (the unit's
    dense word, or the retry that replaced a rejected one). v's digits in mixed radix, most
    significant first, are the kilodie, then damage dice 1, 2, ... of ``dice_sides`` (docs/exp.md);
    they come from a chain of multiplies, without division (floor(floor(x) / n) = floor(x / n)):
    q0 = word x 1000 gives the kilodie q0 >> 32, and q_j = (q_{j-1} mod 2**32) x ``dice_sides``
    damage die j, q_j >> 32 (0-based digits).
    """
    product = word * KILODIE
    kilodie = (product >> 32) + 1
    dice_total = dice_count  # the dice are 1-based
    for _ in range(dice_count):
        product = (product & MASK32) * dice_sides
        dice_total += product >> 32
    hit = 1 if is_hit(to_hit_roll(kilodie, bonus, maximum_roll, adjustment, critical), armour_rating,
                      hit_on_equal) else 0
    return hit, hit * damage(dice_total, dice_modifier, damage_adjustment), hit


def kilodie_bar(bonus, maximum_roll, armour_rating, adjustment, hit_on_equal, critical):
    """The least 0-based kilodie value (kilodie - 1) whose to-hit roll hits, KILODIE if none does.

    The to-hit roll never falls as the kilodie rises (a critical natural 1000 only lifts the cap),
    so exactly the values at or above the bar hit: the counting kernels compare a word's kilodie
    product with it. Found by bisection of ``to_hit_roll`` and ``is_hit`` themselves.
    """
    low = 0
    high = KILODIE  # values below low miss; values at or above high hit, but KILODIE is no value
    while low < high:
        middle = (low + high) >> 1
        if is_hit(to_hit_roll(middle + 1, bonus, maximum_roll, adjustment, critical), armour_rating, hit_on_equal):
            high = middle
        else:
            low = middle + 1
    return low


def joint_word_tally(word, bar, sides1, sides2, sides3, base):
    """One joint word of a unit of fire with at most three damage dice, as the counting passes
    tally it: (hit, damage if it hits, the chain's last low word).

    ``bar`` is ``kilodie_bar(...) << 32``, the least kilodie product that hits; ``sides1`` ..
    ``sides3`` are the damage dice's sides, 1 for a die the weapon does not roll (its digit is
    then 0); ``base`` is the dice count (the dice are 1-based) + the damage modifier + DA. The
    digits are fire_joint's chain of multiplies, and the last product's low word is the joint
    product's, which decides Lemire's rejection. Branch-free, so the compiled passes vectorise it;
    masking both factors to 32 bits lets LLVM multiply each pair in one 32 x 32-bit instruction.
    """
    low = np.uint64(MASK32)
    q0 = np.uint64(word) * np.uint64(KILODIE)
    q1 = (q0 & low) * (np.uint64(sides1) & low)
    q2 = (q1 & low) * (np.uint64(sides2) & low)
    q3 = (q2 & low) * (np.uint64(sides3) & low)
    shift = np.uint64(32)
    dealt = np.int64(q1 >> shift) + np.int64(q2 >> shift) + np.int64(q3 >> shift) + base
    return np.int64(q0 >= np.uint64(bar)), max(dealt, 0), np.int64(q3 & low)


# ---- the scenario's arrays ------------------------------------------------------------------------
def config_size(members):
    return CONFIG_HEAD + 2 * members + 1


def dice_threshold_field(c):
    """config field of member ``c``'s damage die's rejection threshold."""
    return CONFIG_HEAD + c


def target_threshold_field(members, enemies):
    """config field of the rejection threshold of a target die of ``enemies`` sides."""
    return CONFIG_HEAD + members + enemies


def fill_config(table, unit_limit, hit_on_equal, critical, config):
    """The config of a combatant table whose rows are side 0's members, then side 1's, into ``config``
    (zeros, config_size long or more): the options; the observation's slots (the largest side: its
    size less one allies, its size foes); where the sides' rows are; the dice's rejection thresholds."""
    members = table.shape[0]
    size0 = 0
    for c in range(members):
        size0 += 1 if table[c, C_SIDE] == 0 else 0
    largest = max(size0, members - size0)
    config[CF_UNIT_LIMIT] = unit_limit
    config[CF_HIT_ON_EQUAL] = 1 if hit_on_equal else 0
    config[CF_CRITICAL] = 1 if critical else 0
    config[CF_ALLY_SLOTS] = largest - 1
    config[CF_FOE_SLOTS] = largest
    config[CF_SIDE_START + 1] = size0
    config[CF_SIDE_SIZE] = size0
    config[CF_SIDE_SIZE + 1] = members - size0
    for c in range(members):
        config[dice_threshold_field(c)] = rejection_threshold(np.uint64(table[c, C_DICE_SIDES]))
    for enemies in range(1, members + 1):
        config[target_threshold_field(members, enemies)] = rejection_threshold(np.uint64(enemies))


def state_size(members):
    return S_RULESET + STATE_PER_MEMBER * members


# ---- the state machine ------------------------------------------------------------------------------
# Helpers called for every env take scalars only: where Numba's runtime is on, an array passed to a
# helper costs two atomic reference-count calls, several times an EXP unit's arithmetic (the loops
# over envs and fights run without it: NUMBA_NO_RUNTIME).
def can_fire(hit_points, shots):
    """Standing, with shots left (negative shots never run out)."""
    return hit_points > 0 and shots != 0


def slot_row(c, slot, ally_slots, own_start, own_size, foe_start, foe_size):
    """The row in member ``c``'s observation slot ``slot`` (its allies in table order, then its
    foes), or -1 for an empty slot."""
    if slot < ally_slots:
        row = own_start + slot
        row += 1 if row >= c else 0  # c's own row is not an ally slot
        return row if slot < own_size - 1 else -1
    foe = slot - ally_slots
    return foe_start + foe if foe < foe_size else -1


def reset(table, config, seeds, indices, which, state, counts, obs, mask):
    """Start fight ``indices[e]`` of every env with ``which[e]``: full hit points and shots."""
    for e in range(state.shape[0]):
        if which[e] == 0:
            continue
        start_fight(table, state, e, indices[e])
        for f in range(counts.shape[1]):
            counts[e, f] = 0
        write_views(table, config, state, e, obs, mask)


def start_fight(table, state, e, index):
    """Env ``e``'s state at the start of fight ``index``: no words drawn, no unit played, every
    member at full hit points and shots, no damage taken."""
    members = table.shape[0]
    for k in range(state.shape[1]):
        state[e, k] = 0
    state[e, S_INDEX] = index
    state[e, S_OUTCOME] = RUNNING
    for c in range(members):
        state[e, ST_HIT_POINTS + c] = table[c, C_HIT_POINTS]
        state[e, ST_HIT_POINTS + members + c] = table[c, C_SHOTS]


def step(table, config, seeds, state, actions, counts, obs, mask):
    """One unit of every running env (the module docstring): fire, land the damage, end or go on."""
    _step_envs(table, config, seeds, state, actions, counts, obs, mask, new_stream())


def _step_envs(table, config, seeds, state, actions, counts, obs, mask, rng):
    for e in range(state.shape[0]):
        if state[e, S_OUTCOME] != RUNNING:
            continue
        # each env draws from its own fight's item stream, where its last step left it
        stream_continue(rng, seeds[e], state[e, S_INDEX], state[e, S_WORDS], state[e, S_RETRIES], state[e, S_BLOCK],
                        state[e, S_BLOCK + 1])
        play_units(rng, table, config, state, e, actions, counts, False)
        write_views(table, config, state, e, obs, mask)


def play_units(rng, table, config, state, e, actions, counts, to_the_end):
    """Env ``e``'s next unit (``step`` without the views) or, ``to_the_end``, every unit left of
    its fight, drawing from ``rng``: its fight's item stream at the position ``state`` records,
    and records again (a whole fight's units read on from one stream, resumed once).

    A fight's units loop here, not around a call of one unit: that compiled call alone (each
    array's pointer and strides passed) cost a tenth of the fight.
    """
    members = table.shape[0]
    hit_on_equal = config[CF_HIT_ON_EQUAL]
    critical = config[CF_CRITICAL]
    foe_slots = config[CF_FOE_SLOTS]
    size0 = config[CF_SIDE_SIZE]  # side 0's rows come first
    shots_at = ST_HIT_POINTS + members
    taken_at = ST_HIT_POINTS + 2 * members
    standing0 = 0
    standing1 = 0
    for c in range(members):
        standing = 1 if state[e, ST_HIT_POINTS + c] > 0 else 0
        standing0 += standing if c < size0 else 0
        standing1 += standing if c >= size0 else 0
    while True:  # each unit after the first starts with the standing counts the last one landed
        for a in range(members):
            action = actions[e, a]
            shots = state[e, shots_at + a]
            able = can_fire(state[e, ST_HIT_POINTS + a], shots)
            side = table[a, C_SIDE]
            target = -1
            if action >= FIRE_AT_FOE and action < FIRE_AT_FOE + foe_slots and able:
                foe = action - FIRE_AT_FOE
                if foe < config[CF_SIDE_SIZE + 1 - side]:
                    target = config[CF_SIDE_START + 1 - side] + foe
                    if state[e, ST_HIT_POINTS + target] <= 0:
                        target = -1
            if action != SCRIPTED and action != HOLD and target < 0:
                counts[e, COUNT_MASKED] += 1  # masked: held
                action = HOLD
            if not able:
                continue
            enemies = standing1 if side == 0 else standing0
            pick = stream_die(rng, np.uint64(enemies), np.uint64(config[target_threshold_field(members, enemies)])) - 1
            if action == SCRIPTED:  # the pick-th standing enemy in table order
                foe_start = config[CF_SIDE_START + 1 - side]
                foe_size = config[CF_SIDE_SIZE + 1 - side]
                # a lone enemy needs no search: it is standing, or the fight would have ended (every
                # fight starts with every member's hit points above 0)
                if foe_size == 1:
                    target = foe_start
                else:  # no branch on the pick, a die roll: every enemy row is visited
                    for t in range(foe_start, foe_start + foe_size):
                        standing = 1 if state[e, ST_HIT_POINTS + t] > 0 else 0
                        # a product, not a choice, which the C compiler turns back into branches
                        target += (t - target) * standing * (1 if pick == 0 else 0)
                        pick -= standing
            rolls = table[a, C_ROLLS] if shots < 0 else min(table[a, C_ROLLS], shots)
            armour_rating = table[target, C_ARMOUR_RATING] if target >= 0 else 0
            hits, dealt, _ = fire_unit(
                rng, table[a, C_BONUS], table[a, C_MAXIMUM_ROLL], armour_rating, table[a, C_ADJUSTMENT],
                table[a, C_DICE_COUNT], np.uint64(table[a, C_DICE_SIDES]), np.uint64(config[dice_threshold_field(a)]),
                table[a, C_DICE_MODIFIER], table[a, C_DAMAGE_ADJUSTMENT], rolls, table[a, C_AUTOMATIC],
                hit_on_equal, critical,
            )
            if target < 0:  # held: the unit's dice are drawn and thrown away
                continue
            if shots > 0:
                state[e, shots_at + a] = shots - rolls
            state[e, taken_at + target] += dealt
            counts[e, FIGHT_DAMAGE_SIDE0 + side] += dealt
            counts[e, FIGHT_AMMUNITION_SIDE0 + side] += rolls * (ROUNDS_PER_BURST if table[a, C_AUTOMATIC] else 1)
            counts[e, FIGHT_ROLLS_SIDE0 + side] += rolls
            counts[e, FIGHT_HITS_SIDE0 + side] += hits
        standing0 = 0
        standing1 = 0
        for c in range(members):  # the damage lands
            hit_points = state[e, ST_HIT_POINTS + c] - state[e, taken_at + c]
            state[e, ST_HIT_POINTS + c] = hit_points
            state[e, taken_at + c] = 0
            standing = 1 if hit_points > 0 else 0
            standing0 += standing if c < size0 else 0
            standing1 += standing if c >= size0 else 0
        state[e, S_STEPS] += 1
        state[e, S_LENGTH] += 1
        counts[e, FIGHT_UNITS] += 1
        outcome = fight_outcome(standing0, standing1, state[e, S_LENGTH], config[CF_UNIT_LIMIT])
        if outcome != RUNNING:
            state[e, S_OUTCOME] = outcome
            if outcome == 0 or outcome == 1:
                counts[e, FIGHT_WINS_SIDE0 + outcome] += 1
            else:  # the fight's counts take the unfinished as draws too
                counts[e, FIGHT_DRAWS] += 1
                counts[e, FIGHT_MUTUAL if outcome == DRAW else COUNT_UNFINISHED] += 1
        if outcome != RUNNING or not to_the_end:
            # where the stream stopped, recorded once: no unit reads it
            state[e, S_WORDS] = stream_words_used(rng)
            state[e, S_RETRIES] = stream_retries_used(rng)
            state[e, S_BLOCK] = stream_block(rng, 0)
            state[e, S_BLOCK + 1] = stream_block(rng, 1)
            return


def member_standing(state, e, members, c):
    """Whether member ``c`` of env ``e`` has hit points left; ``e`` may be a slice
    (combatsim.policies reads a chunk's final states at once)."""
    return state[e, ST_HIT_POINTS + c] > 0


def fight_outcome(standing0, standing1, units, unit_limit):
    """The winning side when the other has no one standing, DRAW when neither has, UNFINISHED at
    the unit limit, else RUNNING."""
    if standing0 == 0 and standing1 == 0:
        return DRAW
    if standing1 == 0:
        return 0
    if standing0 == 0:
        return 1
    return UNFINISHED if units >= unit_limit else RUNNING


def write_views(table, config, state, e, obs, mask):
    """The observation (global, self, allies, foes; empty slots all 0) and action mask of each
    member ``c`` < obs.shape[1].

    Each member's fields are worked out once, in its own self slot, then copied into the others'.
    """
    members = table.shape[0]
    ally_slots = config[CF_ALLY_SLOTS]
    slots = ally_slots + config[CF_FOE_SLOTS]
    units = state[e, S_LENGTH] / config[CF_UNIT_LIMIT]
    for t in range(obs.shape[1]):
        left = max(state[e, ST_HIT_POINTS + t], 0)
        shots, start_shots = state[e, ST_HIT_POINTS + members + t], table[t, C_SHOTS]
        obs[e, t, OBS_UNITS] = units
        obs[e, t, GLOBAL_FIELDS + F_IN_FIGHT] = 1.0 if left > 0 else 0.0
        obs[e, t, GLOBAL_FIELDS + F_HEALTH] = left / table[t, C_HIT_POINTS]
        # The scaled fields are clipped: the observation space is Box(0, 1), and hit points past the
        # scale or an armour rating outside 0..1000 are allowed inputs.
        obs[e, t, GLOBAL_FIELDS + F_HIT_POINTS] = min(left / HIT_POINTS_SCALE, 1.0)
        obs[e, t, GLOBAL_FIELDS + F_AMMUNITION] = 1.0 if shots < 0 else (shots / start_shots if start_shots > 0 else 0.0)
        obs[e, t, GLOBAL_FIELDS + F_ARMOUR_RATING] = min(max(table[t, C_ARMOUR_RATING] / ARMOUR_RATING_SCALE, 0.0), 1.0)
    for c in range(obs.shape[1]):
        side = table[c, C_SIDE]
        own_start, own_size = config[CF_SIDE_START + side], config[CF_SIDE_SIZE + side]
        foe_start, foe_size = config[CF_SIDE_START + 1 - side], config[CF_SIDE_SIZE + 1 - side]
        able = can_fire(state[e, ST_HIT_POINTS + c], state[e, ST_HIT_POINTS + members + c])
        mask[e, c, HOLD] = 1
        for slot in range(slots):
            t = slot_row(c, slot, ally_slots, own_start, own_size, foe_start, foe_size)
            at = GLOBAL_FIELDS + MEMBER_FIELDS * (1 + slot)
            for f in range(MEMBER_FIELDS):
                obs[e, c, at + f] = obs[e, t, GLOBAL_FIELDS + f] if t >= 0 else 0.0
            if slot >= ally_slots:
                legal = able and t >= 0 and state[e, ST_HIT_POINTS + t] > 0
                mask[e, c, FIRE_AT_FOE + slot - ally_slots] = 1 if legal else 0


# ---- the whole fight --------------------------------------------------------------------------------
def fight(seed, start, count, combatants, unit_limit, hit_on_equal, critical, counts, winner_out, units_out):
    """EXP fights (docs/exp.md): fight ``i`` is an env's fight ``i`` (reset, then steps to the end) of
    scripted actions, on item stream ``i``.

    The "exp.fight" kernel signature: ``combatants`` is the int64 combatant table (``C_*``);
    counts: ``FIGHT_*``, the histogram of units (index units - 1, unit_limit of them), then each
    member's fights ended standing (hit points left); winner_out gets 0, 1, WINNER_DRAW (both
    sides out) or WINNER_UNFINISHED (the unit limit), units_out the units played.
    """
    members = combatants.shape[0]
    # The fight's buffers are the rows of one array, one allocation per call (the Cython build
    # allocates through Python): an env's state, the config, the members' actions and the fight's
    # counts, each in a row as long as the longest of them.
    buffers = np.zeros((4, max(state_size(members), config_size(members), ENGINE_COUNTS)), dtype=np.int64)
    state = buffers[0:1]
    config = buffers[1]
    fill_config(combatants, unit_limit, hit_on_equal, critical, config)
    actions = buffers[2:3]
    for c in range(members):
        actions[0, c] = SCRIPTED
    # every fight's counts added up: a fight starts without reset, which would zero them and write
    # views that nobody reads
    fight_counts = buffers[3:4]
    play_fights(seed, start, count, combatants, config, state, actions, fight_counts, counts, winner_out, units_out,
                new_stream())


def play_fights(seed, start, count, combatants, config, state, actions, fight_counts, counts, winner_out, units_out,
                rng):
    """``fight``'s fights on the buffers (and stream) it made. It allocates nothing, so the compiled
    builds run it without the GIL (fights split over threads run side by side)."""
    members = combatants.shape[0]
    unit_limit = config[CF_UNIT_LIMIT]
    for k in range(count):
        start_fight(combatants, state, 0, start + k)
        stream_resume(rng, seed, start + k, 0, 0)
        play_units(rng, combatants, config, state, 0, actions, fight_counts, True)
        units = state[0, S_LENGTH]
        counts[FIGHT_COUNTS + units - 1] += 1
        for c in range(members):  # then each member's fights ended standing (no branch on a coin toss)
            counts[FIGHT_COUNTS + unit_limit + c] += 1 if member_standing(state, 0, members, c) else 0
        if len(winner_out):
            winner_out[k] = WINNERS[state[0, S_OUTCOME]]
        if len(units_out):
            units_out[k] = units
    for f in range(FIGHT_COUNTS):
        counts[f] += fight_counts[0, f]
