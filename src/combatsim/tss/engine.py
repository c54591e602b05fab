"""The TSS combat engine: a fight stepped one phase at a time (docs/tss.md, "The engine").

The contract (kernel signatures, shared state columns, outcome codes) is ``combatsim.engine``. This
module is the one source of the fight's rules: it runs as it is as the pure-Python reference, and
``combatsim.kernels.engine_nb.compile_engine`` compiles the same functions with Numba. So: plain
functions over int64 arrays and ints, dice only through the stream functions, nothing allocated
per step.

A step is one phase of a round (Amazing, Good, Ordinary, Marginal). A round's opening draws (each
character's Resolve-physical d20, action check and tie-break word) are made as the round begins: in
``reset`` for round 1, and at the end of the step that plays the previous round's Marginal phase,
so the observations and masks of a round's Amazing phase already show them. The draws are the
same, in the same order, as a fight played round by round.

Actions (the same list for every member; ``slots`` is the larger side's size): 0 ``hold`` (do
nothing now: no action is spent, the character may still act in a later phase of the round),
``1 + j`` ``attack_foe_j`` (foe j is the j-th member of the other side in table order),
``1 + slots`` ``aim`` (spend an action for -1 step on the next attack, held until that attack,
not stacking), and, when some member has a second weapon, ``2 + slots + j``
``attack_two_weapons_foe_j`` (one action: a main-hand attack then an off-hand attack, each a full
attack). The scripted policy attacks the lowest-index foe still in the fight; with its ``aim``
chance it first aims (holding no aim), with ``two_weapons`` it attacks with both weapons. A member
whose aim chance is strictly between 0 and 100 draws the policy d100 at each turn it may act while
holding no aim, whatever it then does, so an episode that replays the scripted choices from
outside is the scripted fight word for word; no other member draws a policy die.
"""

from __future__ import annotations

import numpy as np

from combatsim.engine import (
    RUNNING,
    S_BLOCK,
    S_INDEX,
    S_LENGTH,
    S_OUTCOME,
    S_RETRIES,
    S_RULESET,
    S_STEPS,
    S_WORDS,
    UNFINISHED,
    WINNERS,
    new_stream,
    rejection_threshold,
    stream_block,
    stream_bounded,
    stream_continue,
    stream_die,
    stream_resume,
    stream_retries_used,
    stream_roll,
    stream_word,
    stream_words_used,
)
from combatsim.tss.layout import MAX_STEPS, MORTAL, MOST_NEGATED, NOTHING, STUN, WOUND, situation_die

# --- the character table: one int64 row per character (combatsim.tss.api.fight_table) -------------
R_SIDE = 0
R_SKILL = 1  # amazing, good, ordinary
R_ACTION_CHECK = 4  # amazing, good, ordinary
R_ACTIONS = 7
R_ATTACK_STEPS, R_DEFENCE_STEPS = 8, 9
R_HAS_RESOLVE, R_RESOLVE = 10, 11  # Resolve-physical amazing, good, ordinary
R_STUN, R_WOUND, R_MORTAL = 14, 15, 16
R_WEAPON_QUALITY, R_WEAPON_CLASS, R_ARMOUR_QUALITY = 17, 18, 19
R_DAMAGE = 20  # per tier (AMAZING, GOOD, ORDINARY): count, sides, modifier, type before any shift
#: The second weapon's quality, class and damage sit SECOND columns after the first weapon's.
SECOND = 15
R_HAS_SECOND, R_AMBIDEXTERITY, R_BROAD = 47, 48, 49
#: the scripted policy's knobs: the percent chance to aim before an attack, attack with both weapons
R_AIM_CHANCE, R_TWO_WEAPONS = 50, 51
#: 1 when the scripted policy makes a choice (an aim chance or two weapons), 1 when it draws the
#: policy d100 (an aim chance strictly between 0 and 100): one test each on a plain member's turn
R_CHOOSES, R_POLICY_DIE = 52, 53
R_ARMOUR = 54  # per damage class: has a die, count, sides, modifier
ROW_BASE = 54
#: counts of the fight kernel: side 0 wins, side 1 wins, draws, rounds, attacks, stun, wound, mortal.
FIGHT_COUNTS = 8

# --- the engine's config (int64): options, then each member's place in its side, then the rosters
K_MAX_ROUNDS, K_ONE_STEP = 0, 1
#: the larger side's size: the foe (and ally) slots of every member's observation and actions
K_SLOTS = 2
K_SIZE = 3  # members of side 0, of side 1
#: 1 when some member has a second weapon: the two-weapon actions exist
K_TWO = 5
#: config[K_RANK + c]: member c's place in its side; then config[K_RANK + members + side * slots + j]
#: is the row of that side's j-th member (-1 past the side's end).
K_RANK = 6

# --- state columns after the shared ones (combatsim.engine) ---------------------------------------
#: the phase the next step plays: 0 Amazing .. 3 Marginal
S_PHASE = S_RULESET
#: members in this round's acting order
S_ORDERED = S_RULESET + 1
#: member c's columns start at S_MEMBERS + M_WIDTH * c
S_MEMBERS = S_RULESET + 2
M_STUN, M_WOUND, M_MORTAL = 0, 1, 2  # points lost
M_IN = 3  # 1 while in the fight
M_NEGATED = 4  # dazed steps negated by this round's Resolve-physical roll
M_PHASE = 5  # this round's phase from the action check
M_USED = 6  # actions spent this round
M_TIEBREAK = 7  # this round's tie-break word
M_ORDER = 8  # slot c of the acting order: the member acting c-th in a phase
M_INTENT = 9  # this step's action: a target row, INTENT_SCRIPTED, INTENT_HOLD, INTENT_AIM or INTENT_TWO - row
M_AIM = 10  # 1 while an aim bonus is held for the next attack
#: the action taken in the step last played, as its intent (a target row, INTENT_AIM or INTENT_TWO -
#: row; INTENT_HOLD when it did not act): combatsim.tss.game.taken_actions gives the action index
M_ACTION = 11
M_WIDTH = 12
INTENT_SCRIPTED, INTENT_HOLD, INTENT_AIM = -1, -2, -3
#: INTENT_TWO - row: attack that row with both weapons
INTENT_TWO = -4

# --- actions, counts, observations ----------------------------------------------------------------
HOLD = 0
#: action ATTACK + j: attack foe j
ATTACK = 1
C_WINS, C_UNFINISHED, C_ROUNDS, C_ATTACKS, C_STUN, C_WOUND, C_MORTAL, C_MASKED = 0, 2, 3, 4, 5, 6, 7, 8
COUNT_NAMES = ("wins_side_0", "wins_side_1", "unfinished", "rounds", "attacks", "stun", "wound", "mortal",
               "masked")
#: observation fields before the members': the phase the next step plays, rounds begun / max_rounds
GLOBAL_NAMES = ("phase", "round")
#: per member, from self, then allies, then foes (docs/tss.md)
MEMBER_NAMES = ("in_fight", "stun_left", "wound_left", "mortal_left", "dazed", "action_phase", "actions_left",
                "may_act", "aiming", "acting_place", "negated")
G = len(GLOBAL_NAMES)
F = len(MEMBER_NAMES)
#: the dazed field is the dazed penalty in steps over this (capped at 1)
DAZED_SCALE = 8
MAX_ACTIONS = 4

# --- the attack kernel's config (int64, CONFIG_SIZE entries; combatsim.tss.api.attack_config) --------
C_AMAZING, C_GOOD, C_ORDINARY = 0, 1, 2  # skill thresholds
C_SIT_SIGN, C_SIT_COUNT, C_SIT_SIDES = 3, 4, 5  # situation die: -1/0/+1, dice, sides
C_DAMAGE_WORDS = 6  # words reserved for damage dice: the largest count over the three tiers
C_ARMOUR_PRESENT, C_ARMOUR_COUNT, C_ARMOUR_SIDES, C_ARMOUR_MODIFIER = 7, 8, 9, 10
#: Damage per tier (AMAZING, GOOD, ORDINARY): dice count, sides, modifier, type after the shift.
C_DAMAGE = 11
#: The joint layout (docs/tss.md): 1 when every die of the attack comes from one joint die of
#: JOINT_SIDES faces; JOINT_DAMAGE is the modulus of each damage position (lcm of the tiers' sides).
C_JOINT, C_JOINT_SIDES, C_JOINT_DAMAGE = 23, 24, 25
CONFIG_SIZE = 26
#: The joint layout is used when the joint die has at most this many faces (so every quotient
#: of its mixed-radix decomposition is exact by multiply-shift in the compiled kernels).
JOINT_MAX_SIDES = 1 << 16
#: counts of the attack kernel: amazing, good, ordinary, failure, critical_failure, stun, wound, mortal.
ATTACK_COUNTS = 8
#: The rules the attack kernels of every backend run (combatsim.engine_cython writes them for the
#: Cython kernels): one attack's outcome, per die from its item stream or from the 0-based value of
#: its joint die, and the fast passes' counts over many attacks' words.
KERNEL_RULES = ("attack_outcome", "joint_outcome", "die_pass_fits", "die_pass", "joint_pass_fits", "joint_pass")
#: The attack config layout, which the compiled attack kernels read too.
KERNEL_CONSTANTS = ("C_AMAZING", "C_GOOD", "C_ORDINARY", "C_SIT_SIGN", "C_SIT_COUNT", "C_SIT_SIDES", "C_DAMAGE_WORDS",
                    "C_ARMOUR_PRESENT", "C_ARMOUR_COUNT", "C_ARMOUR_SIDES", "C_ARMOUR_MODIFIER", "C_DAMAGE", "C_JOINT",
                    "C_JOINT_SIDES", "C_JOINT_DAMAGE", "ATTACK_COUNTS")

D20 = np.uint64(20)
#: rejection_threshold(D20), computed once
THRESHOLD20 = np.uint64(rejection_threshold(20))
#: the scripted policy's aim die
D100 = np.uint64(100)
THRESHOLD100 = np.uint64(rejection_threshold(100))

#: The Difficulty Scale, model.situation_die's (the rule's one copy), by steps - LEAST_STEPS for steps
#: LEAST_STEPS .. MAX_STEPS (beyond either end it is that end's), with each sides' rejection
#: threshold: tables, as compiled code cannot call the model (as fast as a chain of branches, measured).
LEAST_STEPS = -5
_SCALE = tuple(situation_die(steps) for steps in range(LEAST_STEPS, MAX_STEPS + 1))
SITUATION_SIGN = tuple(sign for sign, _, _ in _SCALE)
SITUATION_DICE = tuple(dice for _, dice, _ in _SCALE)
SITUATION_SIDES = tuple(sides for _, _, sides in _SCALE)
SITUATION_THRESHOLD = tuple(rejection_threshold(sides) for _, _, sides in _SCALE)
#: rejection_threshold(sides) of the dice up to a d20 (0 for 0 sides): the damage and armour
#: dice's thresholds without a division per roll.
DIE_THRESHOLD = tuple(rejection_threshold(sides) if sides else 0 for sides in range(21))

#: Inlined into their callers (by Numba; the Cython build's are ``inline``): small helpers, the
#: per-member loops whose array arguments cost more as a call than their code (a phase's too: a
#: fight's hot loop runs one per step), and the step and a fight's start, which only dispatch
#: (measured); the attack, the two-weapon action and the round's opening stay calls, which keeps
#: the compile time down and a phase's loop small.
NUMBA_INLINE = ("take_actions", "write_views", "save_stream", "write_member", "copy_member", "finish", "tier_of",
                "situation_roll", "dealt", "shift_type", "roll", "die_threshold", "attack_tier", "dazed", "dazed_steps",
                "acts_before", "may_act", "acts_in", "first_foe", "start_fight", "play_step", "play_phase",
                "scripted_intent", "own_steps",
                "tier_value", "tier_column", "magic_of", "magic_quotient", "tally", "pass_counts")
#: Helpers that never allocate, compiled without Numba's runtime: arrays passed to them are not
#: reference counted on every call.
NUMBA_NO_RUNTIME = (
    "attack", "two_weapon_attack", "begin_round", "_reset_envs", "_step_envs", "play_fights", "die_pass",
    "joint_pass",
)


def tier_of(control, total, amazing, good, ordinary):
    """0 Amazing, 1 Good, 2 Ordinary, 3 failure, 4 critical failure (a control die of 20)."""
    if control == 20:
        return 4
    if total <= amazing:
        return 0
    if total <= good:
        return 1
    if total <= ordinary:
        return 2
    return 3


def situation_roll(rng, steps):
    """The situation dice of ``steps`` summed, with their sign (0 at steps 0: no die)."""
    k = min(max(steps, LEAST_STEPS), MAX_STEPS) - LEAST_STEPS
    return SITUATION_SIGN[k] * stream_roll(rng, SITUATION_DICE[k], np.uint64(SITUATION_SIDES[k]),
                                           np.uint64(SITUATION_THRESHOLD[k]), 0)


def shift_type(damage_type, weapon_quality, armour_quality, one_step=False):
    """Quality shifts the damage type by (weapon grade - armour grade) along nothing < stun < wound <
    mortal, clamped; option ``one_step``: one step at most."""
    shift = weapon_quality - armour_quality
    if one_step:
        shift = max(-1, min(1, shift))
    return max(NOTHING, min(MORTAL, damage_type + shift))


def dealt(amount, damage_type, soak):
    """(stun, wound, mortal): secondary from the pre-armour amount, soak off the primary only."""
    amount = max(0, amount)
    primary = max(0, amount - max(0, soak))
    half = amount >> 1
    # Products with the type's tests, not branches: the compiled attack passes stay vectorised.
    stun = primary * (damage_type == STUN) + half * (damage_type >= WOUND)
    wound = primary * (damage_type == WOUND) + half * (damage_type == MORTAL)
    mortal = primary * (damage_type == MORTAL)
    return stun, wound, mortal


def roll(rng, count, sides, modifier):
    """``count`` dice of ``sides`` plus ``modifier`` (no die, no threshold: a constant may have 0 sides)."""
    if count <= 0:
        return modifier
    return stream_roll(rng, count, np.uint64(sides), die_threshold(sides), modifier)


def die_threshold(sides):
    """rejection_threshold(sides), from the table up to a d20."""
    return np.uint64(DIE_THRESHOLD[sides]) if sides < len(DIE_THRESHOLD) else rejection_threshold(np.uint64(sides))


def attack_tier(config, control, situation):
    """The attack config's tier of a control die and a situation roll (unsigned)."""
    return tier_of(control, control + config[C_SIT_SIGN] * situation, config[C_AMAZING], config[C_GOOD],
                   config[C_ORDINARY])


def attack_outcome(rng, config):
    """(tier, stun, wound, mortal) of one attack of the per-die layout, from its item stream: word 0
    the control d20, then the situation dice, then ``C_DAMAGE_WORDS`` damage words (the tier's
    first ``count`` of them rolled, on a hit only), then the armour dice (on a hit only)."""
    control = stream_die(rng, D20, THRESHOLD20)
    tier = attack_tier(config, control, roll(rng, config[C_SIT_COUNT], config[C_SIT_SIDES], 0))
    if tier > 2:
        return tier, 0, 0, 0
    base = C_DAMAGE + 4 * tier
    sides = config[base + 1]
    threshold = die_threshold(sides)
    amount = config[base + 2]
    for j in range(config[C_DAMAGE_WORDS]):
        word = stream_word(rng)
        if j < config[base]:
            amount += stream_bounded(rng, word, np.uint64(sides), threshold) + 1
    soak = 0
    if config[C_ARMOUR_PRESENT]:
        soak = roll(rng, config[C_ARMOUR_COUNT], config[C_ARMOUR_SIDES], config[C_ARMOUR_MODIFIER])
    stun, wound, mortal = dealt(amount, config[base + 3], soak)
    return tier, stun, wound, mortal


def joint_outcome(config, value):
    """(tier, stun, wound, mortal) of one attack of the joint layout from its joint die's 0-based
    ``value``, read in mixed radix, least significant digit first: the control d20, the situation
    dice, ``C_DAMAGE_WORDS`` damage positions (the tier's die j is position j % sides + 1), the
    armour dice."""
    control = value % 20 + 1
    value //= 20
    situation = 0
    for _ in range(config[C_SIT_COUNT]):
        situation += value % config[C_SIT_SIDES] + 1
        value //= config[C_SIT_SIDES]
    tier = attack_tier(config, control, situation)
    if tier > 2:
        return tier, 0, 0, 0
    base = C_DAMAGE + 4 * tier
    amount = config[base + 2]
    for j in range(config[C_DAMAGE_WORDS]):
        if j < config[base]:
            amount += value % config[C_JOINT_DAMAGE] % config[base + 1] + 1
        value //= config[C_JOINT_DAMAGE]
    soak = 0
    if config[C_ARMOUR_PRESENT]:
        soak = config[C_ARMOUR_MODIFIER]
        for _ in range(config[C_ARMOUR_COUNT]):
            soak += value % config[C_ARMOUR_SIDES] + 1
            value //= config[C_ARMOUR_SIDES]
    stun, wound, mortal = dealt(amount, config[base + 3], soak)
    return tier, stun, wound, mortal


# --- the attack kernels' fast passes (their callers draw the words and redo rejected ones) ---------
def tier_value(tier, amazing, good, ordinary):
    """A hit's value for its tier (0 Amazing, 1 Good, else Ordinary): arithmetic, not loads or
    branches, so the passes vectorise."""
    return ordinary + (good - ordinary) * (tier <= 1) + (amazing - good) * (tier == 0)


def tier_column(config, field):
    """Damage ``field`` (0 dice, 1 sides, 2 modifier, 3 type) of the Amazing, Good and Ordinary tiers:
    read once before a pass's loop (the compilers keep config reads in it)."""
    return config[C_DAMAGE + field], config[C_DAMAGE + 4 + field], config[C_DAMAGE + 8 + field]


#: A fast pass counts the tiers packed in one int64, this many bits a tier (5 tiers): so a call of
#: the pass takes fewer than 2**TIER_BITS attacks.
TIER_BITS = 12


def tally(tier, amount, damage_type, soak, tiers, stun, wound, mortal):
    """A fast pass's sums (the tier counts packed, TIER_BITS bits a tier, and the damage) with one
    more attack's: its tier and, on a hit, its damage ``amount`` of ``damage_type`` against ``soak``."""
    dealt_stun, dealt_wound, dealt_mortal = dealt(amount * (tier <= 2), damage_type, soak)
    return tiers + (np.int64(1) << (TIER_BITS * tier)), stun + dealt_stun, wound + dealt_wound, mortal + dealt_mortal


def pass_counts(counts, rejected, tiers, stun, wound, mortal):
    """A fast pass's sums added to ``counts`` unless it saw ``rejected`` words; returns their number."""
    if rejected == 0:
        for tier in range(5):
            counts[tier] += (tiers >> (TIER_BITS * tier)) & ((1 << TIER_BITS) - 1)
        counts[5] += stun
        counts[6] += wound
        counts[7] += mortal
    return rejected


def die_pass_fits(config):
    """Whether an attack of the per-die layout draws at most one block (four words) unless rejected."""
    armour = config[C_ARMOUR_COUNT] if config[C_ARMOUR_PRESENT] else 0
    return 1 + config[C_SIT_COUNT] + config[C_DAMAGE_WORDS] + armour <= 4


def die_pass(config, words, count, counts):
    """``count`` (< 2**TIER_BITS) attacks of the per-die layout that fit one block (die_pass_fits),
    attack i from its item stream's first block, whose word k is ``words[k * count + i]`` (each word
    a contiguous run: vector loads): their counts are added to ``counts`` and 0 returned, or, when
    a word might have been rejected (a superset of the true rejections), nothing is added and that
    number returned: the caller redoes those attacks exactly. Branch-free, all int64: the compiled
    builds vectorise the loop."""
    s = config[C_SIT_COUNT]
    d = config[C_DAMAGE_WORDS]
    a = config[C_ARMOUR_COUNT] if config[C_ARMOUR_PRESENT] else 0
    armour_modifier = config[C_ARMOUR_MODIFIER] if config[C_ARMOUR_PRESENT] else 0
    # Words 1..3: situation dice, then damage words, then armour dice. A word's fixed die (situation
    # or armour; 1 side elsewhere) and its damage die's index (99, never rolled, elsewhere).
    sit1, sit2, sit3 = np.int64(s >= 1), np.int64(s >= 2), np.int64(s >= 3)
    arm1 = np.int64(s + d < 1 and s + d + a >= 1)
    arm2 = np.int64(s + d < 2 and s + d + a >= 2)
    arm3 = np.int64(s + d < 3 and s + d + a >= 3)
    fs1 = config[C_SIT_SIDES] if sit1 else (config[C_ARMOUR_SIDES] if arm1 else 1)
    fs2 = config[C_SIT_SIDES] if sit2 else (config[C_ARMOUR_SIDES] if arm2 else 1)
    fs3 = config[C_SIT_SIDES] if sit3 else (config[C_ARMOUR_SIDES] if arm3 else 1)
    ft1, ft2, ft3 = np.int64(die_threshold(fs1)), np.int64(die_threshold(fs2)), np.int64(die_threshold(fs3))
    di1 = 1 - s - 1 if s < 1 and s + d >= 1 else 99
    di2 = 2 - s - 1 if s < 2 and s + d >= 2 else 99
    di3 = 3 - s - 1 if s < 3 and s + d >= 3 else 99
    dm1, dm2, dm3 = np.int64(di1 != 99), np.int64(di2 != 99), np.int64(di3 != 99)
    threshold20 = np.int64(THRESHOLD20)
    sign, amazing, good, ordinary = config[C_SIT_SIGN], config[C_AMAZING], config[C_GOOD], config[C_ORDINARY]
    dice0, dice1, dice2 = tier_column(config, 0)
    sides0, sides1, sides2 = tier_column(config, 1)
    modifier0, modifier1, modifier2 = tier_column(config, 2)
    type0, type1, type2 = tier_column(config, 3)
    t0, t1, t2 = np.int64(die_threshold(sides0)), np.int64(die_threshold(sides1)), np.int64(die_threshold(sides2))
    tiers = stun = wound = mortal = rejected = 0
    for i in range(count):
        w0, w1, w2, w3 = (np.int64(words[i]), np.int64(words[count + i]), np.int64(words[2 * count + i]),
                          np.int64(words[3 * count + i]))
        p0, p1, p2, p3 = w0 * 20, w1 * fs1, w2 * fs2, w3 * fs3
        control = (p0 >> 32) + 1
        v1, v2, v3 = (p1 >> 32) + 1, (p2 >> 32) + 1, (p3 >> 32) + 1
        rejected += (np.int64((p0 & 0xFFFFFFFF) < threshold20) + np.int64((p1 & 0xFFFFFFFF) < ft1)
                     + np.int64((p2 & 0xFFFFFFFF) < ft2) + np.int64((p3 & 0xFFFFFFFF) < ft3))
        tier = tier_of(control, control + sign * (v1 * sit1 + v2 * sit2 + v3 * sit3), amazing, good, ordinary)
        dice = tier_value(tier, dice0, dice1, dice2)
        sides = tier_value(tier, sides0, sides1, sides2)
        threshold = tier_value(tier, t0, t1, t2)
        q1, q2, q3 = w1 * sides, w2 * sides, w3 * sides
        rejected += (np.int64((q1 & 0xFFFFFFFF) < threshold) * dm1 + np.int64((q2 & 0xFFFFFFFF) < threshold) * dm2
                     + np.int64((q3 & 0xFFFFFFFF) < threshold) * dm3)
        amount = (((q1 >> 32) + 1) * np.int64(di1 < dice) + ((q2 >> 32) + 1) * np.int64(di2 < dice)
                  + ((q3 >> 32) + 1) * np.int64(di3 < dice)
                  + tier_value(tier, modifier0, modifier1, modifier2))
        tiers, stun, wound, mortal = tally(tier, amount, tier_value(tier, type0, type1, type2),
                                           v1 * arm1 + v2 * arm2 + v3 * arm3 + armour_modifier, tiers, stun, wound,
                                           mortal)
    return pass_counts(counts, rejected, tiers, stun, wound, mortal)


def magic_of(divisor):
    """ceil(2**32 / divisor) for 2 <= divisor <= 2**16, else 0: magic_quotient's multiplier."""
    return (0x100000000 + divisor - 1) // divisor if divisor >= 2 else 0


def magic_quotient(value, magic, unit):
    """value // divisor for 0 <= value < 2**16: ``magic`` magic_of(divisor), ``unit`` 1 for a divisor
    of 1 (for 0, the quotient is 0). The factors masked to 32 bits (a literal mask: the Cython
    build's stays a constant) make it one 32 by 32 bit vector multiply."""
    return ((((value & 0xFFFFFFFF) * (magic & 0xFFFFFFFF)) >> 32) + value * unit) & 0xFFFFFFFF


def joint_pass_fits(config):
    """Whether an attack of the joint layout has at most two situation dice, damage positions and
    armour dice: the digits joint_pass reads."""
    armour = config[C_ARMOUR_COUNT] if config[C_ARMOUR_PRESENT] else 0
    return config[C_SIT_COUNT] <= 2 and config[C_DAMAGE_WORDS] <= 2 and armour <= 2


def joint_pass(config, words, count, counts):
    """``count`` (< 2**TIER_BITS) attacks of the joint layout that fit joint_pass_fits, one a word of
    ``words`` in any order (the sums do not depend on it), each with the joint die value
    ``word * faces >> 32`` (dense_die's unless the word is rejected): their counts are added to
    ``counts`` and 0 returned, or, when words were rejected, nothing is added and their number
    returned: the caller redoes those attacks exactly. Branch-free, all int64
    (every value stays below 2**48): the compiled builds vectorise the loop. Each digit of the
    value's mixed radix is Q_k - Q_{k+1} r_k for the quotients Q_k = value // P_k by the place
    values P_1 = 20, P_2 = 20 r_1, ..., each straight from the value (no dependency chain); an
    unused place has radix 1 (its digit is 0) and its die is masked out."""
    sit_count = config[C_SIT_COUNT]
    damage_words = config[C_DAMAGE_WORDS]
    armour_count = config[C_ARMOUR_COUNT] if config[C_ARMOUR_PRESENT] else 0
    armour_modifier = config[C_ARMOUR_MODIFIER] if config[C_ARMOUR_PRESENT] else 0
    faces = config[C_JOINT_SIDES]
    threshold = np.int64(rejection_threshold(np.uint64(faces)))
    e1, e2 = np.int64(sit_count >= 1), np.int64(sit_count >= 2)
    f1, f2 = np.int64(armour_count >= 1), np.int64(armour_count >= 2)
    r1 = config[C_SIT_SIDES] if sit_count >= 1 else 1
    r2 = config[C_SIT_SIDES] if sit_count >= 2 else 1
    r3 = config[C_JOINT_DAMAGE] if damage_words >= 1 else 1
    r4 = config[C_JOINT_DAMAGE] if damage_words >= 2 else 1
    r5 = config[C_ARMOUR_SIDES] if armour_count >= 1 else 1
    r6 = config[C_ARMOUR_SIDES] if armour_count >= 2 else 1
    # Place values, all >= 20 (no unit) and at most the joint faces <= 2**16.
    m1, m2, m3 = magic_of(20), magic_of(20 * r1), magic_of(20 * r1 * r2)
    m4, m5 = magic_of(20 * r1 * r2 * r3), magic_of(20 * r1 * r2 * r3 * r4)
    m6, m7 = magic_of(20 * r1 * r2 * r3 * r4 * r5), magic_of(20 * r1 * r2 * r3 * r4 * r5 * r6)
    sign, amazing, good, ordinary = config[C_SIT_SIGN], config[C_AMAZING], config[C_GOOD], config[C_ORDINARY]
    dice0, dice1, dice2 = tier_column(config, 0)
    sides0, sides1, sides2 = tier_column(config, 1)
    modifier0, modifier1, modifier2 = tier_column(config, 2)
    type0, type1, type2 = tier_column(config, 3)
    magic0, magic1, magic2 = magic_of(sides0), magic_of(sides1), magic_of(sides2)
    unit0, unit1, unit2 = np.int64(sides0 == 1), np.int64(sides1 == 1), np.int64(sides2 == 1)
    tiers = stun = wound = mortal = rejected = 0
    for j in range(count):
        product = (np.int64(words[j]) & 0xFFFFFFFF) * (faces & 0xFFFFFFFF)
        rejected += np.int64((product & 0xFFFFFFFF) < threshold)
        value = product >> 32
        q1, q2, q3 = magic_quotient(value, m1, 0), magic_quotient(value, m2, 0), magic_quotient(value, m3, 0)
        q4, q5, q6 = magic_quotient(value, m4, 0), magic_quotient(value, m5, 0), magic_quotient(value, m6, 0)
        q7 = magic_quotient(value, m7, 0)
        control = value - q1 * 20 + 1
        situation = (q1 - q2 * r1 + 1) * e1 + (q2 - q3 * r2 + 1) * e2
        position1, position2 = q3 - q4 * r3, q4 - q5 * r4
        soak = (q5 - q6 * r5 + 1) * f1 + (q6 - q7 * r6 + 1) * f2 + armour_modifier
        tier = tier_of(control, control + sign * situation, amazing, good, ordinary)
        dice = tier_value(tier, dice0, dice1, dice2)
        sides = tier_value(tier, sides0, sides1, sides2)
        magic = tier_value(tier, magic0, magic1, magic2)
        unit = tier_value(tier, unit0, unit1, unit2)
        amount = (tier_value(tier, modifier0, modifier1, modifier2)
                  + (position1 - magic_quotient(position1, magic, unit) * sides + 1) * np.int64(dice >= 1)
                  + (position2 - magic_quotient(position2, magic, unit) * sides + 1) * np.int64(dice >= 2))
        tiers, stun, wound, mortal = tally(tier, amount, tier_value(tier, type0, type1, type2), soak, tiers, stun,
                                           wound, mortal)
    return pass_counts(counts, rejected, tiers, stun, wound, mortal)


# --- layout sizes ----------------------------------------------------------------------------------
def side_slots(table):
    """The larger side's size."""
    first = 0
    for c in range(table.shape[0]):
        if table[c, R_SIDE] == 0:
            first += 1
    return max(first, table.shape[0] - first)


def config_size(members, slots):
    return K_RANK + members + 2 * slots


def state_size(members):
    return S_MEMBERS + M_WIDTH * members


def observation_size(slots):
    return G + F * 2 * slots


def fill_config(table, max_rounds, one_step, config):
    """The config of a fight of ``table``'s characters, into zeros config_size(members, side_slots(table))
    long or longer."""
    n = table.shape[0]
    slots = side_slots(table)
    config[K_MAX_ROUNDS] = max_rounds
    config[K_ONE_STEP] = 1 if one_step else 0
    config[K_SLOTS] = slots
    config[K_SIZE] = 0
    config[K_SIZE + 1] = 0
    config[K_TWO] = 0
    for c in range(n):
        if table[c, R_HAS_SECOND] != 0:
            config[K_TWO] = 1
    for j in range(2 * slots):
        config[K_RANK + n + j] = -1
    for c in range(n):
        side = table[c, R_SIDE]
        rank = config[K_SIZE + side]
        config[K_RANK + c] = rank
        config[K_RANK + n + side * slots + rank] = c
        config[K_SIZE + side] = rank + 1


# --- the rules -------------------------------------------------------------------------------------
def dazed(table, state, e, c):
    """Being dazed: +1 at half the stun track, +1 at half the wound track, +1 per mortal point,
    less the round's Resolve-physical negation, never below 0."""
    b = S_MEMBERS + M_WIDTH * c
    return dazed_steps(state[e, b + M_STUN], table[c, R_STUN], state[e, b + M_WOUND], table[c, R_WOUND],
                       state[e, b + M_MORTAL], state[e, b + M_NEGATED])


def dazed_steps(stun_lost, stun, wound_lost, wound, mortal_lost, negated):
    """The dazed penalty in steps: +1 for at least half the stun track lost, +1 for at least half
    the wound track, +1 per mortal point lost, less ``negated`` (the round's Resolve-physical
    success: 1 Ordinary, 2 Good, 3 Amazing), never below 0."""
    penalty = (1 if 2 * stun_lost >= stun else 0) + (1 if 2 * wound_lost >= wound else 0) + max(0, mortal_lost)
    return max(0, penalty - negated)


def acts_before(table, state, e, i, j):
    """Does i act before j within a phase: higher action check score, higher tie-break, lower index."""
    score_i = table[i, R_ACTION_CHECK + 2]
    score_j = table[j, R_ACTION_CHECK + 2]
    if score_i != score_j:
        return score_i > score_j
    tiebreak_i = state[e, S_MEMBERS + M_WIDTH * i + M_TIEBREAK]
    tiebreak_j = state[e, S_MEMBERS + M_WIDTH * j + M_TIEBREAK]
    if tiebreak_i != tiebreak_j:
        return tiebreak_i > tiebreak_j
    return i < j


def may_act(table, state, e, c):
    """Member c may act in the phase the next step plays (the fight still running)."""
    return (state[e, S_OUTCOME] == RUNNING) & acts_in(table, state, e, c, state[e, S_PHASE])


def acts_in(table, state, e, c, phase):
    """Member c may act in ``phase`` of a running fight: in the fight, its phase reached, actions left."""
    b = S_MEMBERS + M_WIDTH * c
    # ``and``, not ``&``: in a phase most members have not reached theirs, and the rest is skipped
    return state[e, b + M_IN] != 0 and state[e, b + M_PHASE] <= phase and state[e, b + M_USED] < table[c, R_ACTIONS]


def first_foe(table, state, e, c):
    """The lowest-index member of the other side still in the fight (-1 if none)."""
    side = table[c, R_SIDE]
    for j in range(table.shape[0]):
        if table[j, R_SIDE] != side and state[e, S_MEMBERS + M_WIDTH * j + M_IN] != 0:
            return j
    return -1


def begin_round(table, state, counts, e, rng):
    """A round begins: for every character still in, in index order, a Resolve-physical d20 if it has
    that skill (negates 1/2/3 dazed steps this round), the action check d20 and its situation dice
    (the dazed penalty), one raw word as the tie-break die; each goes into the acting order."""
    state[e, S_LENGTH] += 1
    counts[e, C_ROUNDS] = state[e, S_LENGTH]
    state[e, S_PHASE] = 0
    ordered = 0
    for c in range(table.shape[0]):
        b = S_MEMBERS + M_WIDTH * c
        if state[e, b + M_IN] == 0:
            continue
        state[e, b + M_NEGATED] = 0
        if table[c, R_HAS_RESOLVE]:
            resolve = stream_die(rng, D20, THRESHOLD20)
            tier = tier_of(resolve, resolve, table[c, R_RESOLVE], table[c, R_RESOLVE + 1], table[c, R_RESOLVE + 2])
            state[e, b + M_NEGATED] = MOST_NEGATED - tier if tier <= 2 else 0
        steps = dazed(table, state, e, c)
        check = stream_die(rng, D20, THRESHOLD20)
        check += situation_roll(rng, steps)
        # The action check never fails: above Ordinary is the Marginal phase.
        state[e, b + M_PHASE] = min(3, tier_of(0, check, table[c, R_ACTION_CHECK], table[c, R_ACTION_CHECK + 1],
                                               table[c, R_ACTION_CHECK + 2]))
        state[e, b + M_TIEBREAK] = np.int64(stream_word(rng))
        state[e, b + M_USED] = 0
        # Insertion into the acting order.
        position = ordered
        while position > 0 and acts_before(table, state, e, c, state[e, S_MEMBERS + M_WIDTH * (position - 1) + M_ORDER]):
            state[e, S_MEMBERS + M_WIDTH * position + M_ORDER] = state[e, S_MEMBERS + M_WIDTH * (position - 1) + M_ORDER]
            position -= 1
        state[e, S_MEMBERS + M_WIDTH * position + M_ORDER] = c
        ordered += 1
    state[e, S_ORDERED] = ordered


def attack(table, config, state, counts, e, rng, c, target, weapon, steps):
    """Member c attacks ``target`` with its first weapon (``weapon`` 0) or its second (``SECOND``),
    at ``steps`` of its own (aim, broad skill, two weapons, dazed): control d20, situation dice, then
    on a hit the damage dice and the target's armour dice. Returns the side that wins by it, or -1."""
    t = S_MEMBERS + M_WIDTH * target
    counts[e, C_ATTACKS] += 1
    steps += table[target, R_DEFENCE_STEPS]
    control = stream_die(rng, D20, THRESHOLD20)
    total = control + situation_roll(rng, steps)
    tier = tier_of(control, total, table[c, R_SKILL], table[c, R_SKILL + 1], table[c, R_SKILL + 2])
    if tier > 2:
        return -1
    base = R_DAMAGE + weapon + 4 * tier
    amount = roll(rng, table[c, base], table[c, base + 1], table[c, base + 2])
    damage_type = table[c, base + 3]
    armour = R_ARMOUR + 4 * table[c, R_WEAPON_CLASS + weapon]
    soak = 0
    if table[target, armour]:
        damage_type = shift_type(damage_type, table[c, R_WEAPON_QUALITY + weapon], table[target, R_ARMOUR_QUALITY],
                                 config[K_ONE_STEP])
        soak = roll(rng, table[target, armour + 1], table[target, armour + 2], table[target, armour + 3])
    stun, wound, mortal = dealt(amount, damage_type, soak)
    state[e, t + M_STUN] += stun
    state[e, t + M_WOUND] += wound
    state[e, t + M_MORTAL] += mortal
    counts[e, C_STUN] += stun
    counts[e, C_WOUND] += wound
    counts[e, C_MORTAL] += mortal
    if (state[e, t + M_STUN] >= table[target, R_STUN] or state[e, t + M_WOUND] >= table[target, R_WOUND]
            or state[e, t + M_MORTAL] >= table[target, R_MORTAL]):
        # Knocked out (stun or wound track) or dying (mortal track).
        state[e, t + M_IN] = 0
        defending = table[target, R_SIDE]
        for j in range(table.shape[0]):
            if table[j, R_SIDE] == defending and state[e, S_MEMBERS + M_WIDTH * j + M_IN] != 0:
                return -1
        return table[c, R_SIDE]
    return -1


def own_steps(aimed, broad, hand, ambidexterity):
    """The steps an attacker's choices add: -1 with an aim held (``aimed`` 1), +1 with a broad skill,
    and for the attacks of a two-weapon action (``hand`` 1 main, 2 off; 0 one weapon) +2 main and +4
    off hand, or +0 and +2 with the Ambidexterity feat."""
    hands = (2 - 2 * ambidexterity + 2 * (hand == 2)) * (hand != 0)
    return broad - aimed + hands


def two_weapon_attack(table, config, state, counts, e, rng, c, target, steps, aimed):
    """Member c's two-weapon action at ``target``: the main-hand attack, then the off-hand one, each a
    full attack at its own steps (own_steps); the off-hand attack goes to the first foe still in
    when the main-hand one took ``target`` out. Returns the side that wins, or -1."""
    broad, ambidexterity = table[c, R_BROAD], table[c, R_AMBIDEXTERITY]
    winner = attack(table, config, state, counts, e, rng, c, target, 0,
                    steps + own_steps(aimed, broad, 1, ambidexterity))
    if winner >= 0:
        return winner
    if state[e, S_MEMBERS + M_WIDTH * target + M_IN] == 0:
        target = first_foe(table, state, e, c)
    return attack(table, config, state, counts, e, rng, c, target, SECOND,
                  steps + own_steps(aimed, broad, 2, ambidexterity))


def take_actions(table, config, state, actions, counts, e):
    """Each member's action for this step, judged against the state its mask was written from:
    a masked action is a hold, counted."""
    n = table.shape[0]
    slots = config[K_SLOTS]
    for c in range(n):
        b = S_MEMBERS + M_WIDTH * c
        state[e, b + M_ACTION] = INTENT_HOLD
        action = actions[e, c]
        intent = INTENT_SCRIPTED
        if action == HOLD:
            intent = INTENT_HOLD
        elif action == ATTACK + slots:
            intent = INTENT_AIM
            if not may_act(table, state, e, c) or state[e, b + M_AIM] != 0:
                intent = INTENT_HOLD
                counts[e, C_MASKED] += 1
        elif action >= ATTACK:
            two = action > ATTACK + slots
            j = action - ATTACK - (slots + 1 if two else 0)
            foe = -1
            other = 1 - table[c, R_SIDE]
            if j < config[K_SIZE + other] and (not two or table[c, R_HAS_SECOND] != 0):
                foe = config[K_RANK + n + other * slots + j]
            if foe >= 0 and may_act(table, state, e, c) and state[e, S_MEMBERS + M_WIDTH * foe + M_IN] != 0:
                intent = INTENT_TWO - foe if two else foe
            else:
                intent = INTENT_HOLD
                counts[e, C_MASKED] += 1
        state[e, b + M_INTENT] = intent


def scripted_intent(table, state, e, c, aim_roll, target):
    """The scripted policy's intent at c's turn for a member that chooses (R_CHOOSES): aim (holding
    no aim, by its aim chance: ``aim_roll`` is its policy d100), else attack ``target`` (the first
    foe still in), with both weapons when its policy says so."""
    chance = table[c, R_AIM_CHANCE]
    if chance > 0 and state[e, S_MEMBERS + M_WIDTH * c + M_AIM] == 0 and (chance >= 100 or aim_roll <= chance):
        return INTENT_AIM
    if table[c, R_TWO_WEAPONS] != 0:
        return INTENT_TWO - target
    return target


def play_phase(table, config, state, counts, e, rng):
    """The phase S_PHASE: in the acting order, each member that may act takes its action: an attack
    on its chosen foe (on the first foe still in if that one went out earlier in the phase), a
    two-weapon attack, aiming, or nothing (a hold spends no action). Returns the side that won in
    it, or -1."""
    winner = -1
    phase = state[e, S_PHASE]
    for slot in range(state[e, S_ORDERED]):
        c = state[e, S_MEMBERS + M_WIDTH * slot + M_ORDER]
        if not acts_in(table, state, e, c, phase):
            continue
        b = S_MEMBERS + M_WIDTH * c
        intent = state[e, b + M_INTENT]
        aim_roll = 0
        if table[c, R_POLICY_DIE] != 0 and state[e, b + M_AIM] == 0:
            aim_roll = stream_die(rng, D100, THRESHOLD100)
        if intent == INTENT_SCRIPTED:
            intent = first_foe(table, state, e, c)
            if table[c, R_CHOOSES] != 0:
                intent = scripted_intent(table, state, e, c, aim_roll, intent)
        if intent == INTENT_HOLD:
            continue
        state[e, b + M_USED] += 1
        state[e, b + M_ACTION] = intent
        if intent == INTENT_AIM:
            state[e, b + M_AIM] = 1
            continue
        target = INTENT_TWO - intent if intent <= INTENT_TWO else intent
        if state[e, S_MEMBERS + M_WIDTH * target + M_IN] == 0:
            target = first_foe(table, state, e, c)
        # The aim bonus is used up by this attack (both attacks of a two-weapon action).
        aimed = state[e, b + M_AIM]
        state[e, b + M_AIM] = 0
        steps = table[c, R_ATTACK_STEPS] + dazed(table, state, e, c)
        if intent <= INTENT_TWO:
            winner = two_weapon_attack(table, config, state, counts, e, rng, c, target, steps, aimed)
        else:
            winner = attack(table, config, state, counts, e, rng, c, target, 0,
                            steps + own_steps(aimed, table[c, R_BROAD], 0, 0))
        if winner >= 0:
            break
    return winner


def member_standing(state, e, m, c):
    """Whether member ``c`` of env ``e`` is still in the fight (neither knocked out nor dying);
    ``e`` may be a slice (combatsim.policies reads a chunk's final states at once)."""
    return state[e, S_MEMBERS + M_WIDTH * c + M_IN] != 0


def finish(state, counts, e, outcome):
    state[e, S_OUTCOME] = outcome
    counts[e, C_WINS + outcome if outcome <= 1 else C_UNFINISHED] += 1


# --- observations and masks ------------------------------------------------------------------------
def write_member(table, state, e, c, obs):
    """Member c's fields into its own self block, obs[e, c, G:G + F]."""
    b = S_MEMBERS + M_WIDTH * c
    obs[e, c, G] = state[e, b + M_IN]
    obs[e, c, G + 1] = max(0, table[c, R_STUN] - state[e, b + M_STUN]) / table[c, R_STUN]
    obs[e, c, G + 2] = max(0, table[c, R_WOUND] - state[e, b + M_WOUND]) / table[c, R_WOUND]
    obs[e, c, G + 3] = max(0, table[c, R_MORTAL] - state[e, b + M_MORTAL]) / table[c, R_MORTAL]
    obs[e, c, G + 4] = min(DAZED_SCALE, dazed(table, state, e, c)) / DAZED_SCALE
    obs[e, c, G + 5] = state[e, b + M_PHASE] / 3
    obs[e, c, G + 6] = max(0, table[c, R_ACTIONS] - state[e, b + M_USED]) / MAX_ACTIONS
    obs[e, c, G + 7] = may_act(table, state, e, c)
    obs[e, c, G + 8] = state[e, b + M_AIM]
    # Its place in this round's acting order among the members still in: the tie-break words
    # decide it where action check scores tie, and a later attack's timing depends on it.
    place = 0
    for slot in range(state[e, S_ORDERED]):
        before = state[e, S_MEMBERS + M_WIDTH * slot + M_ORDER]
        if before == c:
            break
        if state[e, S_MEMBERS + M_WIDTH * before + M_IN] != 0:
            place += 1
    obs[e, c, G + 9] = state[e, b + M_IN] * place / max(1, table.shape[0] - 1)
    # The negated steps beyond the penalty now still count when a wound this round raises it.
    obs[e, c, G + 10] = state[e, b + M_NEGATED] / MOST_NEGATED


def copy_member(obs, e, c, viewer, at):
    """Member c's block (its self block) into the viewer's observation at ``at``."""
    for k in range(F):
        obs[e, viewer, at + k] = obs[e, c, G + k]


def write_views(table, config, state, e, obs, mask):
    """Every member's observation (globals, self, allies, foes in table order) and action mask.
    A member's block is the same from every view: written once, as its self block, then copied.
    Every field is written once: the slots no member fills get their 0 there."""
    n = table.shape[0]
    viewers = obs.shape[1]  # 0 in a whole fight, which nobody watches
    slots = config[K_SLOTS]
    phase = state[e, S_PHASE] / 3
    rounds = state[e, S_LENGTH] / max(1, config[K_MAX_ROUNDS])
    for c in range(viewers):
        obs[e, c, 0] = phase
        obs[e, c, 1] = rounds
        write_member(table, state, e, c, obs)
    for c in range(viewers):
        side = table[c, R_SIDE]
        at = G + F
        for j in range(config[K_SIZE + side]):
            ally = config[K_RANK + n + side * slots + j]
            if ally != c:
                copy_member(obs, e, ally, c, at)
                at += F
        for k in range(at, G + F * slots):
            obs[e, c, k] = 0
        other = 1 - side
        acting = may_act(table, state, e, c)
        mask[e, c, HOLD] = 1
        for j in range(slots):
            legal = False
            if j < config[K_SIZE + other]:
                foe = config[K_RANK + n + other * slots + j]
                copy_member(obs, e, foe, c, G + F * (slots + j))
                legal = acting & (state[e, S_MEMBERS + M_WIDTH * foe + M_IN] != 0)
            else:
                for k in range(F):
                    obs[e, c, G + F * (slots + j) + k] = 0
            mask[e, c, ATTACK + j] = legal
            if config[K_TWO]:
                mask[e, c, ATTACK + slots + 1 + j] = legal & (table[c, R_HAS_SECOND] != 0)
        mask[e, c, ATTACK + slots] = acting & (state[e, S_MEMBERS + M_WIDTH * c + M_AIM] == 0)


# --- the kernels (combatsim.engine) ----------------------------------------------------------------
def reset(table, config, seeds, indices, which, state, counts, obs, mask):
    _reset_envs(table, config, seeds, indices, which, state, counts, obs, mask, new_stream())


def step(table, config, seeds, state, actions, counts, obs, mask):
    _step_envs(table, config, seeds, state, actions, counts, obs, mask, new_stream())


def _reset_envs(table, config, seeds, indices, which, state, counts, obs, mask, rng):
    for e in range(state.shape[0]):
        if which[e] == 0:
            continue
        start_fight(table, config, state, counts, e, rng, seeds[e], indices[e])
        save_stream(state, e, rng)
        write_views(table, config, state, e, obs, mask)


def _step_envs(table, config, seeds, state, actions, counts, obs, mask, rng):
    for e in range(state.shape[0]):
        if state[e, S_OUTCOME] != RUNNING:
            continue
        # Each env's fight has its own stream: it goes on where this env's last step left it.
        stream_continue(rng, seeds[e], state[e, S_INDEX], state[e, S_WORDS], state[e, S_RETRIES], state[e, S_BLOCK],
                        state[e, S_BLOCK + 1])
        take_actions(table, config, state, actions, counts, e)
        play_step(table, config, state, counts, e, rng)
        # The intents are this step's scratch: cleared, the state is the fight's alone.
        for c in range(table.shape[0]):
            state[e, S_MEMBERS + M_WIDTH * c + M_INTENT] = INTENT_SCRIPTED
        save_stream(state, e, rng)
        write_views(table, config, state, e, obs, mask)


def save_stream(state, e, rng):
    """Env e's stream position (and its partly read block) into its state, for its next step."""
    state[e, S_WORDS] = stream_words_used(rng)
    state[e, S_RETRIES] = stream_retries_used(rng)
    state[e, S_BLOCK] = stream_block(rng, 0)
    state[e, S_BLOCK + 1] = stream_block(rng, 1)


def start_fight(table, config, state, counts, e, rng, seed, index):
    """Env e starts fight ``index`` of ``seed``: ``rng`` is that fight's stream from its start, and
    round 1 begins. Every member's intent is scripted, as a step leaves it."""
    for k in range(state.shape[1]):
        state[e, k] = 0
    for k in range(counts.shape[1]):
        counts[e, k] = 0
    state[e, S_INDEX] = index
    state[e, S_OUTCOME] = RUNNING
    for c in range(table.shape[0]):
        state[e, S_MEMBERS + M_WIDTH * c + M_IN] = 1
        state[e, S_MEMBERS + M_WIDTH * c + M_INTENT] = INTENT_SCRIPTED
    stream_resume(rng, seed, index, 0, 0)
    if config[K_MAX_ROUNDS] >= 1:
        begin_round(table, state, counts, e, rng)
    else:
        finish(state, counts, e, UNFINISHED)


def play_step(table, config, state, counts, e, rng):
    """Env e's step with its intents taken and ``rng`` where its fight's stream is: the phase, then
    the next phase, the next round or the fight's end."""
    winner = play_phase(table, config, state, counts, e, rng)
    state[e, S_STEPS] += 1
    if winner >= 0:
        finish(state, counts, e, winner)
    elif state[e, S_PHASE] < 3:
        state[e, S_PHASE] += 1
    elif state[e, S_LENGTH] >= config[K_MAX_ROUNDS]:
        finish(state, counts, e, UNFINISHED)
    else:
        begin_round(table, state, counts, e, rng)


def fight(seed, start, count, characters, n_characters, n_classes, max_rounds, one_step, counts, winner_out,
          rounds_out):
    """Fights ``start .. start + count - 1`` of ``seed`` between side 0 and side 1, every member
    scripted: start, then step until the end (the fight kernel tss.fight; layouts in docs/tss.md).

    ``counts``: side 0 wins, side 1 wins, draws (a fight unfinished after ``max_rounds`` rounds),
    rounds, attacks, stun, wound, mortal, then the fights by rounds (0 .. max_rounds), then each
    member's fights ended standing.
    """
    n = n_characters
    table = characters.reshape((n, ROW_BASE + 4 * n_classes))
    # The fight's buffers are the rows of one array, one allocation per call (the Cython build
    # allocates through Python): the config, an env's state and its counts, each in a row as long
    # as the longest of them.
    buffers = np.zeros((3, max(config_size(n, side_slots(table)), state_size(n), len(COUNT_NAMES))), dtype=np.int64)
    config = buffers[0]
    fill_config(table, max_rounds, one_step, config)
    state = buffers[1:2]
    episode = buffers[2:3]
    play_fights(seed, start, count, table, config, state, episode, max_rounds, counts, winner_out, rounds_out,
                new_stream())


def play_fights(seed, start, count, table, config, state, episode, max_rounds, counts, winner_out, rounds_out, rng):
    """``fight``'s fights on the buffers it made. It allocates nothing, so the compiled builds run
    it without the GIL (fights split over threads run side by side)."""
    n = table.shape[0]
    keep = winner_out.shape[0] > 0
    for k in range(count):
        # One stream for the whole fight: no step resumes it, and nobody reads the views, so
        # none are written. Every intent stays the scripted one start_fight wrote.
        start_fight(table, config, state, episode, 0, rng, seed, start + k)
        while state[0, S_OUTCOME] == RUNNING:
            play_step(table, config, state, episode, 0, rng)
        for f in range(FIGHT_COUNTS):  # an episode's counts begin with the fixed counts' fields
            counts[f] += episode[0, f]
        rounds = state[0, S_LENGTH]
        counts[FIGHT_COUNTS + rounds] += 1  # the rounds histogram follows the fixed counts
        for c in range(n):  # then each member's fights ended standing
            if member_standing(state, 0, n, c):
                counts[FIGHT_COUNTS + max_rounds + 1 + c] += 1
        if keep:
            winner_out[k] = WINNERS[state[0, S_OUTCOME]]
            rounds_out[k] = rounds
