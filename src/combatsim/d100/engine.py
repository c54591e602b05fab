"""The d100 engine: a fight as a state machine stepped one pass at a time (docs/d100.md, "The engine").

The one source of the d100 fight rules in the kernels' path: run as it is, this module is the
pure-Python reference (``reference.fight`` is :func:`fight`); ``combatsim.kernels.engine_nb``
compiles the same functions with Numba. The contract (kernel signatures, shared state columns,
outcome codes) is :mod:`combatsim.engine`'s. It is the one source of each "d100.attack" attack's
outcome too (:func:`attack_outcome`, ``KERNEL_RULES``): the reference attack kernel runs it, the
Numba kernels compile it, the Cython kernels include its translation (combatsim.engine_cython).

One step is one pass (docs/d100.md, "Rounds, passes and the scripted policy"): declarations, the
quick attacks, the standard attacks, engagements, the other actions. A member's action is its
scripted policy's (``SCRIPTED``) or one of :data:`ACTION_NAMES`, given from outside; its target
follows the scripted rule either way: its engaged partner, else the first foe still in the fight
in table order. An external action draws the policy d100 a scripted choice would draw and ignores
it, so every die after it is the die a scripted fight reads there.
"""

from __future__ import annotations

import numpy as np

from combatsim.d100.layout import (
    A_FLESH,
    A_INSTANT_DEATH,
    A_LETHAL,
    A_SERIOUS,
    ACTION_ATTACK,
    ACTION_CHARGE,
    ACTION_DEFEND,
    ACTION_DISENGAGE,
    ACTION_FLEE,
    ACTION_NONE,
    ACTION_PRESS,
    ACTION_QUICK_ATTACK,
    ACTION_TAKE_COVER,
    ACTION_TOGGLE_DUAL_WIELD,
    ATTACK_SIDES,
    C_AMBUSH_ATTACK,
    C_AMBUSH_DEFEND,
    C_ARMOUR,
    C_ATTACK,
    C_DAMAGE,
    C_DUAL_ALLOWED,
    C_FLEE_BASE,
    C_NONLETHAL,
    C_POLICY,
    C_PRESS,
    C_RANGED,
    C_SIDE,
    CRITICAL_FAILURE,
    CRITICAL_SUCCESS,
    D100,
    F_ATTACKS,
    F_DRAWS,
    F_ESCALATED_LETHAL,
    F_ESCALATED_SERIOUS,
    F_ESCAPES,
    F_FLESH,
    F_INSTANT_DEATH,
    F_LETHAL,
    F_ROUNDS,
    F_SERIOUS,
    F_SURPRISED,
    F_UNFINISHED,
    F_WINS,
    F_WINS_BY_FLIGHT,
    FAILURE,
    FIGHT_COUNT_NAMES,
    FIGHT_COUNTS,
    FLEE_STEP,
    FLESH,
    FLESH_PER_SERIOUS,
    HARD_SUCCESS,
    INSTANT_DEATH,
    LETHAL,
    NO_WOUND,
    POLICY_ACTIONS,
    SERIOUS,
    SERIOUS_PER_LETHAL,
    SUCCESS,
    TARGET_CAP,
)
from combatsim.d100.layout import ATTACK_COUNTS as ATTACK_COUNTS
from combatsim.d100.layout import FIELDS as FIELDS
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
    stream_block,
    stream_continue,
    stream_die,
    stream_resume,
    stream_retries_used,
    stream_words_used,
)
from combatsim.engine import WINNER_DRAW as WINNER_DRAW
from combatsim.rng import MASK32
from combatsim.rng import rejection_threshold as _threshold

D100_THRESHOLD = _threshold(D100)
ATTACK_THRESHOLD = _threshold(ATTACK_SIDES)

#: The actions, numbered as layout.ACTION_*: "none" does nothing this pass.
ACTION_NAMES = ("none", "attack", "quick_attack", "defend", "flee", "press", "disengage", "charge",
                "take_cover", "toggle_dual_wield")
ACTIONS = len(ACTION_NAMES)
#: The declarations that mark their target as targeted for the round.
TARGETING_ACTIONS = (ACTION_ATTACK, ACTION_QUICK_ATTACK, ACTION_CHARGE, ACTION_PRESS)

# ---- config: int64 fields -----------------------------------------------------------------------
G_PASSES, G_MAX_ROUNDS, G_AMBUSH_SIDE, G_ALLY_SLOTS, G_FOE_SLOTS = 0, 1, 2, 3, 4
CONFIG_SIZE = 5

# ---- counts: the fight kernel's fixed counts, then the masked actions ---------------------------
C_MASKED = FIGHT_COUNTS
COUNT_NAMES = (*FIGHT_COUNT_NAMES, "masked")
ENGINE_COUNTS = len(COUNT_NAMES)

# ---- state: the shared columns, the passes played in the current round, then per-member fields --
# S_LENGTH holds the rounds begun (the fight's rounds once it has ended).
S_PASS = S_RULESET
S_MEMBERS = S_RULESET + 1
# Member field f of member c is column S_MEMBERS + c * MEMBER_FIELDS + f: a member's fields side by
# side, so the code that reads one member's fields adds constants to one base column.
(M_ACTIVE, M_ESCAPED, M_FLESH, M_SERIOUS, M_LETHAL, M_COVER, M_DEFENDING, M_DUAL, M_FAILED_FLEE, M_PARTNER,
 M_SURPRISED, M_TARGETED, M_ACTION, M_TARGET, M_ATTACKED, M_INVOLVED, M_INVOLVED_MANY) = range(17)
MEMBER_FIELDS = 17
# M_FLESH counts deadly flesh wounds not yet escalated, M_PARTNER is the engaged partner (-1: none),
# M_ATTACKED the member attacked in this pass (-1: none); M_INVOLVED and M_INVOLVED_MANY are a
# pass's scratch (the one member met by engaging attacks, or several).

# ---- observations: float32, for each member from its own perspective ----------------------------
#: Global fields: passes played in this round / passes, rounds begun / max_rounds.
GLOBAL_NAMES = ("pass", "round")
#: Each member's block, for itself, then its allies, then its foes (docs/d100.md, "The engine").
MEMBER_NAMES = ("in_fight", "escaped", "flesh", "serious", "in_cover", "defending", "dual_wield",
                "dual_allowed", "engaged", "engaged_with_self", "targeted", "surprised", "flee_target",
                "ranged", "armour", "attack_target", "attacked_self", "target_of_self")
(B_IN_FIGHT, B_ESCAPED, B_FLESH, B_SERIOUS, B_IN_COVER, B_DEFENDING, B_DUAL_WIELD, B_DUAL_ALLOWED, B_ENGAGED,
 B_ENGAGED_WITH_SELF, B_TARGETED, B_SURPRISED, B_FLEE_TARGET, B_RANGED, B_ARMOUR, B_ATTACK_TARGET,
 B_ATTACKED_SELF, B_TARGET_OF_SELF) = range(18)
GLOBAL_FIELDS = len(GLOBAL_NAMES)
BLOCK_FIELDS = len(MEMBER_NAMES)

#: The rules the compiled kernels run as well (combatsim.engine_cython writes them for the Cython
#: kernels): one attack's outcome, for the "d100.attack" kernels of every backend (the tier and
#: wounds of an attack's 0-based value), their counting passes' rules (the bars the digits are
#: compared with, each attack's tallies from its value or, as word thresholds, from its dense word,
#: and the counts from the tallies), and the ambush's contests, with which the Cython "d100.fight"
#: kernel starts a fight before its vector lanes play it.
KERNEL_RULES = ("attack_outcome", "tier_bars", "damage_bars", "count_attack", "attack_tallies", "tally_counts", "word_bar",
                "word_tallies", "ambush_contests")
#: What else the Cython kernel module (kernels/d100/_cy.pyx) reads with the rules: the wound
#: severities its attack kernel counts by, the attack counts, and the fight table's columns and the
#: fight counts of its vector lanes (ATTACK_COUNTS, FIELDS and WINNER_DRAW are imported for it alone).
KERNEL_CONSTANTS = ("NO_WOUND", "FLESH", "SERIOUS", "LETHAL", "INSTANT_DEATH", "ATTACK_SIDES", "ATTACK_COUNTS",
                    "C_RANGED", "C_ARMOUR", "C_DUAL_ALLOWED", "C_FLEE_BASE", "C_PRESS", "C_ATTACK", "C_NONLETHAL",
                    "C_DAMAGE", "C_POLICY", "FIELDS", "F_WINS", "F_WINS_BY_FLIGHT", "F_ESCAPES", "F_DRAWS",
                    "F_UNFINISHED", "F_ROUNDS", "F_ATTACKS", "FIGHT_COUNTS", "WINNER_DRAW")

#: Inlined by Numba into their callers (``cdef inline`` in the Cython build): the helpers that
#: _play_pass and _advance call. Numba does not inline calls between the engine's functions
#: otherwise; inlined, these make a Numba fight about 1.6x as fast. _play_pass and the functions
#: above it stay calls: inlined, they cost more compile time than they saved, and inlined into
#: ``fight`` (which allocates, so runs with Numba's runtime) they made it several times slower.
#: word_tallies is inlined for the Numba attack kernel's fast pass, a loop LLVM vectorises.
NUMBA_INLINE = ("_at", "damage_column", "_tier", "tier_bars", "damage_bars", "split_attack_value",
                "wound_severity", "escalate", "flee_target", "_legal", "_wound", "_attack", "_release", "_take_out",
                "_first_foe_in", "_target_of", "_may_toggle", "_press_spent", "_engaging_attack", "_involve",
                "_only_met", "_outcome_now", "_first_wins", "_declare", "_move", "_block", "_attack_batch",
                "_engage_after_attacks", "_finish", "word_tallies")
#: Helpers that never allocate (the inlined ones among them): compiled without Numba's runtime (no
#: reference counting per call).
NUMBA_NO_RUNTIME = (*NUMBA_INLINE, "attack_outcome", "attack_tallies", "tally_counts", "word_bar", "_play_pass",
                    "_observe", "_reset_envs", "_step_envs", "_begin", "ambush_contests", "_advance")


def state_size(members):
    return S_MEMBERS + MEMBER_FIELDS * members


def observation_size(ally_slots, foe_slots):
    return GLOBAL_FIELDS + BLOCK_FIELDS * (1 + ally_slots + foe_slots)


def make_config(table, passes, max_rounds, ambush_side):
    """The config array; every member's observation has room for the largest side's members."""
    config = np.zeros(CONFIG_SIZE, dtype=np.int64)
    fill_config(table, passes, max_rounds, ambush_side, config)
    return config


def fill_config(table, passes, max_rounds, ambush_side, config):
    """make_config's fields, written into ``config`` (CONFIG_SIZE long or more)."""
    members = table.shape[0]
    side1 = 0
    for c in range(members):
        side1 += table[c, C_SIDE]
    largest = max(side1, members - side1)
    config[G_PASSES] = passes
    config[G_MAX_ROUNDS] = max_rounds
    config[G_AMBUSH_SIDE] = ambush_side
    config[G_ALLY_SLOTS] = largest - 1
    config[G_FOE_SLOTS] = largest


# ---- small helpers -------------------------------------------------------------------------------
def _at(field, c, m):
    """The state column of member ``c``'s ``field`` (``m`` members: every caller has it, the Cython
    fight lanes' too, though the column does not depend on it)."""
    return S_MEMBERS + c * MEMBER_FIELDS + field


def damage_column(weapon, cover, armour, dual_wield):
    """Column of the lethal bar (the serious-or-worse bar follows) for weapon 0 or 1 (dual wield's
    second weapon), target in cover (ranged attacker), target armour class 0..2, dual wield."""
    return C_DAMAGE + 2 * (((weapon * 2 + cover) * 3 + armour) * 2 + dual_wield)


def _tier(roll, critical_bar, hard_bar, success_bar, critical_failure_bar):
    """The result tier of ``roll`` against a target given by its bars (model.tier_bars).

    The bars ascend and the tiers are numbered CRITICAL_SUCCESS (0) .. CRITICAL_FAILURE (4), so the
    tier is the number of bars below the roll: counted, not branched on (a die's tier is a coin
    flip to the branch predictor)."""
    return ((1 if roll > critical_bar else 0) + (1 if roll > hard_bar else 0) + (1 if roll > success_bar else 0)
            + (1 if roll > critical_failure_bar else 0))


# ---- one attack: the "d100.attack" kernels' rules (model's functions of these names are these) ------
def tier_bars(skill):
    """(critical bar, hard bar, success bar, critical-failure bar) of a full skill (model.tier_bars).

    A skill below 0 has a capped target below 0, so its halves and tenths, whichever way they
    round, are clamped to 0 with it (the C build divides with truncation)."""
    capped = min(TARGET_CAP, skill)
    success_bar = max(0, capped)
    hard_bar = max(0, min(capped, skill // 2))
    critical_bar = max(0, min(hard_bar, skill // 10))
    # failure range F = 100 - success bar; a failed roll above 100 - ceil(F / 10) is critical
    return critical_bar, hard_bar, success_bar, 100 - (100 - success_bar + 9) // 10


def damage_bars(lethality, serious, nonlethal):
    """(lethal bar, serious-or-worse bar) of a weapon (model.damage_bars): a nonlethal weapon has no
    lethal results, its lethal range counts as serious."""
    return (0 if nonlethal else lethality), max(lethality, serious)


def split_attack_value(value):
    """The attack, damage and second damage d100s (1..100) of an attack's 0-based value 0..999999
    (model.split_attack_value; docs/d100.md)."""
    return value // 10000 + 1, value // 100 % 100 + 1, value % 100 + 1


def wound_severity(damage_roll, lethality, serious, nonlethal, critical):
    """The wound of a successful attack's damage d100 (model.wound_severity), by the damage bars."""
    lethal_bar, worse_bar = damage_bars(lethality, serious, nonlethal)
    if damage_roll <= lethal_bar:
        return INSTANT_DEATH if critical else LETHAL
    if damage_roll <= worse_bar:
        return SERIOUS
    return FLESH


def attack_outcome(value, full_skill, lethality, serious, nonlethal, lethality2, serious2, nonlethal2, weapons):
    """(tier, wound, second wound) of one "d100.attack" attack from its 0-based value 0..999999: the
    attack d100 against the full skill's tier bars; on a success, the damage d100 against the first
    weapon's bars and, when ``weapons`` is 2 (dual wield), the second damage d100 against the second
    weapon's. A weapon that dealt no wound has NO_WOUND."""
    roll, damage, damage2 = split_attack_value(value)
    critical_bar, hard_bar, success_bar, critical_failure_bar = tier_bars(full_skill)
    tier = _tier(roll, critical_bar, hard_bar, success_bar, critical_failure_bar)
    if tier > SUCCESS:
        return tier, NO_WOUND, NO_WOUND
    critical = tier == CRITICAL_SUCCESS
    wound = wound_severity(damage, lethality, serious, nonlethal, critical)
    second = NO_WOUND
    if weapons == 2:
        second = wound_severity(damage2, lethality2, serious2, nonlethal2, critical)
    return tier, wound, second


# ---- many attacks with the same bars: the "d100.attack" kernels' counting passes ----------------
def attack_tallies(value, critical_bar, hard_bar, success_bar, critical_failure_bar, lethal_bar, worse_bar,
                   lethal_bar2, worse_bar2, two):
    """One attack's contributions to the counting passes' ten tallies, from its 0-based value and the
    bars (tier_bars, then damage_bars of each weapon; ``two`` is 1 for dual wield), branch-free.

    The tallies: critical, hard-or-better, success-or-better, critical failure, then for each weapon
    lethal, serious-or-worse and instant death; a kernel's counts are their differences."""
    roll, damage, damage2 = split_attack_value(value)
    critical = np.int64(roll <= critical_bar)
    success = np.int64(roll <= success_bar)
    lethal = success & np.int64(damage <= lethal_bar)
    lethal2 = success & two & np.int64(damage2 <= lethal_bar2)
    return (critical, np.int64(roll <= hard_bar), success, np.int64(roll > critical_failure_bar), lethal,
            success & np.int64(damage <= worse_bar), lethal & critical, lethal2,
            success & two & np.int64(damage2 <= worse_bar2), lethal2 & critical)


def count_attack(counts, tier, wound, wound2):
    """Adds one attack to the "d100.attack" ``counts``: its tier, then each weapon's wound (lethal
    includes instant deaths; NO_WOUND counts nowhere)."""
    counts[tier] += 1
    counts[A_LETHAL] += (wound >= LETHAL) + (wound2 >= LETHAL)
    counts[A_SERIOUS] += (wound == SERIOUS) + (wound2 == SERIOUS)
    counts[A_FLESH] += (wound == FLESH) + (wound2 == FLESH)
    counts[A_INSTANT_DEATH] += (wound == INSTANT_DEATH) + (wound2 == INSTANT_DEATH)


def tally_counts(counts, count, two, critical, hard_or_better, success_or_better, critical_failure, lethal, worse,
                 instant_death, lethal2, worse2, instant_death2):
    """Adds to the "d100.attack" ``counts`` those of ``count`` attacks from their attack_tallies, summed."""
    counts[CRITICAL_SUCCESS] += critical
    counts[HARD_SUCCESS] += hard_or_better - critical
    counts[SUCCESS] += success_or_better - hard_or_better
    counts[FAILURE] += count - success_or_better - critical_failure
    counts[CRITICAL_FAILURE] += critical_failure
    counts[A_LETHAL] += lethal + lethal2
    counts[A_SERIOUS] += worse - lethal + worse2 - lethal2
    counts[A_FLESH] += success_or_better * (1 + two) - worse - worse2
    counts[A_INSTANT_DEATH] += instant_death + instant_death2


def word_bar(bar):
    """A bar of attack_tallies as a threshold on words (docs/kernels.md, "The fast paths'
    arithmetic"): a d100 is at most ``bar`` when its word (word_tallies' ``word``, r1 or r2) is
    below ceil(bar 2^32 / 100), clamped to 0..2^32 - 1. The clamp keeps every answer: r1 and r2
    are multiples of 4, never 2^32 - 1, and no tier bar reaches 100."""
    return max(0, min((bar * (MASK32 + 1) + 99) // 100, MASK32))


def word_tallies(word, critical_bar, hard_bar, success_bar, critical_failure_bar, lethal_bar, worse_bar,
                 lethal_bar2, worse_bar2, two):
    """attack_tallies of the attack whose dense word is ``word``, from the word itself and the bars as
    word_bar thresholds: the damage d100s' words are r1 = 100 word and r2 = 100^2 word, mod 2^32.
    For a word Lemire's bound rejects, what the fast passes count before they take it back. Every
    value is a uint32 given a uint32 word and bars, so the Numba fast pass keeps eight words to a
    vector."""
    first = np.uint32((word * 100) & MASK32)
    second = np.uint32((word * 10000) & MASK32)
    critical = np.uint32(word < critical_bar)
    success = np.uint32(word < success_bar)
    lethal = np.uint32(success & np.uint32(first < lethal_bar))
    lethal2 = np.uint32(success & two & np.uint32(second < lethal_bar2))
    return (critical, np.uint32(word < hard_bar), success, np.uint32(word >= critical_failure_bar), lethal,
            np.uint32(success & np.uint32(first < worse_bar)), np.uint32(lethal & critical), lethal2,
            np.uint32(success & two & np.uint32(second < worse_bar2)), np.uint32(lethal2 & critical))


def _first_wins(table, first, first_column, roll, other, other_column, other_roll):
    """Quick contest: tier first, then margin (capped target - roll); ties to the other.

    A contest target is 5 columns: model.tier_bars, then the capped target."""
    own = _tier(roll, table[first, first_column], table[first, first_column + 1], table[first, first_column + 2],
                table[first, first_column + 3])
    opposing = _tier(other_roll, table[other, other_column], table[other, other_column + 1],
                     table[other, other_column + 2], table[other, other_column + 3])
    if own != opposing:
        return own < opposing
    return table[first, first_column + 4] - roll > table[other, other_column + 4] - other_roll


def _first_foe_in(table, s, m, c):
    """The first member of the other side still in the fight, in table order; -1 for none."""
    side = table[c, C_SIDE]
    for o in range(m):
        if s[_at(M_ACTIVE, o, m)] != 0 and table[o, C_SIDE] != side:
            return o
    return -1


def _target_of(table, s, m, c):
    """Whom ``c``'s attacks aim at: its engaged partner, else the first foe still in the fight."""
    partner = s[_at(M_PARTNER, c, m)]
    if partner >= 0:
        return partner
    return _first_foe_in(table, s, m, c)


def _release(s, m, c):
    """``c`` leaves its engagement (engagements are always mutual)."""
    partner = s[_at(M_PARTNER, c, m)]
    if partner >= 0:
        s[_at(M_PARTNER, partner, m)] = -1
    s[_at(M_PARTNER, c, m)] = -1


def _take_out(s, m, c):
    s[_at(M_ACTIVE, c, m)] = 0
    _release(s, m, c)


def _outcome_now(table, s, m):
    """RUNNING while both sides have someone in the fight; else the side still in, or DRAW."""
    in0 = 0
    in1 = 0
    for o in range(m):
        if s[_at(M_ACTIVE, o, m)] != 0:
            if table[o, C_SIDE] == 0:
                in0 = 1
            else:
                in1 = 1
    if in0 != 0 and in1 != 0:
        return RUNNING
    if in0 == 0 and in1 == 0:
        return DRAW
    return 0 if in0 != 0 else 1


# ---- declarations --------------------------------------------------------------------------------
def _legal(action, acting, engaged, may_toggle):
    """1 when a member may take ``action`` now: ``acting`` (in the fight, and not surprised in
    pass 1 of round 1), ``engaged``, ``may_toggle`` (dual wield allowed and not on yet)."""
    if action == ACTION_NONE:
        return 1
    if not acting:
        return 0
    if action == ACTION_FLEE:
        return 0 if engaged else 1
    if action == ACTION_DISENGAGE:
        return 1 if engaged else 0
    if action == ACTION_TOGGLE_DUAL_WIELD:
        return 1 if may_toggle else 0
    return 1


def _may_toggle(table, s, m, c):
    return table[c, C_DUAL_ALLOWED] != 0 and s[_at(M_DUAL, c, m)] == 0


def _declare(table, s, m, c, external, first_pass, rng, counts):
    """Member ``c`` declares: its scripted policy (``external`` SCRIPTED) or ``external`` if legal,
    else nothing (counted as masked). Draws the policy d100 either way, except for a member out of
    the fight or surprised in pass 1 of round 1, who draws nothing and does nothing (any action but
    "none" masked)."""
    if s[_at(M_ACTIVE, c, m)] == 0 or (first_pass and s[_at(M_SURPRISED, c, m)] != 0):
        s[_at(M_ACTION, c, m)] = ACTION_NONE
        if external > ACTION_NONE:
            counts[C_MASKED] += 1
        return
    policy_roll = stream_die(rng, np.uint64(D100), np.uint64(D100_THRESHOLD))
    engaged = s[_at(M_PARTNER, c, m)] >= 0
    if external == SCRIPTED:
        # The first action whose cumulative bound is >= the roll: the bounds below the roll, counted
        # (the last bound is 100), not a loop that stops at a random bound.
        choice = 0
        for bound in range(len(POLICY_ACTIONS) - 1):
            choice += 1 if policy_roll > table[c, C_POLICY + bound] else 0
        action = POLICY_ACTIONS[choice]
        if _may_toggle(table, s, m, c):
            action = ACTION_TOGGLE_DUAL_WIELD
        elif action == ACTION_FLEE and engaged:
            action = ACTION_DISENGAGE  # flee is blocked while engaged
        elif action == ACTION_DISENGAGE and not engaged:
            action = ACTION_ATTACK
    elif _legal(external, True, engaged, _may_toggle(table, s, m, c)) != 0:
        action = external
    else:
        action = ACTION_NONE
        counts[C_MASKED] += 1
    target = _target_of(table, s, m, c)
    s[_at(M_ACTION, c, m)] = action
    s[_at(M_TARGET, c, m)] = target
    # Written whatever the action, not branched on (the scripted choice is a coin flip to the
    # branch predictor); the pass began with Defend off, and a running fight's target is a member.
    s[_at(M_TARGETED, target, m)] |= 1 if action in TARGETING_ACTIONS else 0
    s[_at(M_DEFENDING, c, m)] = 1 if action == ACTION_DEFEND else 0


# ---- attacks -------------------------------------------------------------------------------------
def _wound(table, s, m, c, t, w, damage_roll, cover, critical, counts):
    """Weapon ``w`` of ``c`` wounds ``t``: severity from the damage bars, then escalation
    (three deadly flesh wounds make a serious one, two serious a lethal one)."""
    column = damage_column(w, cover, table[t, C_ARMOUR], s[_at(M_DUAL, c, m)])
    # The bars ascend (lethal, serious or worse; model.damage_bars): the severity is counted, not
    # branched on (which wound a hit deals is a coin flip to the branch predictor).
    lethal = 1 if damage_roll <= table[c, column] else 0
    serious_or_worse = 1 if damage_roll <= table[c, column + 1] else 0
    flesh = 1 - serious_or_worse
    deadly = 0 if table[c, C_NONLETHAL + w] != 0 else 1  # a nonlethal weapon's flesh wounds never escalate
    counts[F_LETHAL] += lethal
    counts[F_INSTANT_DEATH] += lethal * critical
    counts[F_SERIOUS] += serious_or_worse - lethal
    counts[F_FLESH] += flesh
    now_flesh, now_serious, now_lethal, to_serious, to_lethal = escalate(
        s[_at(M_FLESH, t, m)] + flesh * deadly, s[_at(M_SERIOUS, t, m)] + serious_or_worse - lethal,
        s[_at(M_LETHAL, t, m)] + lethal)
    s[_at(M_FLESH, t, m)] = now_flesh
    s[_at(M_SERIOUS, t, m)] = now_serious
    s[_at(M_LETHAL, t, m)] = now_lethal
    counts[F_ESCALATED_SERIOUS] += to_serious
    counts[F_ESCALATED_LETHAL] += to_lethal


def flee_target(flee_base, failed_attempts):
    """The flee roll's target: the base floor((Fighting + Parkour) / 2), + 20 per prior failed attempt,
    capped at 95 (model.flee_target)."""
    return min(TARGET_CAP, flee_base + FLEE_STEP * failed_attempts)


def escalate(flesh, serious, lethal):
    """Cascading wounds: every three deadly flesh wounds make a serious one, then every two
    serious wounds a lethal one. (flesh, serious, lethal, flesh-to-serious escalations,
    serious-to-lethal escalations) after them (model.record_wound)."""
    to_serious = flesh // FLESH_PER_SERIOUS
    serious += to_serious
    to_lethal = serious // SERIOUS_PER_LETHAL
    return (flesh - to_serious * FLESH_PER_SERIOUS, serious - to_lethal * SERIOUS_PER_LETHAL, lethal + to_lethal,
            to_serious, to_lethal)


def _attack(table, s, m, c, t, quick, rng, counts):
    """One attack roll by ``c`` on ``t`` (a lethal wound takes ``t`` out when its batch's wounds
    have all landed). One value 1..1000000 is the attack, damage and second damage d100s
    (split_attack_value)."""
    ranged = table[c, C_RANGED] != 0
    cover = 1 if ranged and s[_at(M_COVER, t, m)] != 0 else 0  # cover counts for ranged attacks only
    dual = s[_at(M_DUAL, c, m)]
    steps = quick + dual + cover + s[_at(M_DEFENDING, t, m)]  # each -20
    roll, damage, damage2 = split_attack_value(
        stream_die(rng, np.uint64(ATTACK_SIDES), np.uint64(ATTACK_THRESHOLD)) - 1)
    counts[F_ATTACKS] += 1
    s[_at(M_ATTACKED, c, m)] = t
    bars = C_ATTACK + 4 * steps
    tier = _tier(roll, table[c, bars], table[c, bars + 1], table[c, bars + 2], table[c, bars + 3])
    if tier > SUCCESS:
        return
    critical = tier == CRITICAL_SUCCESS
    _wound(table, s, m, c, t, 0, damage, cover, critical, counts)
    if dual != 0:
        _wound(table, s, m, c, t, 1, damage2, cover, critical, counts)


def _press_spent(s, m, c):
    """A press whose target declared a disengage from the presser blocks it instead of attacking."""
    target = s[_at(M_TARGET, c, m)]
    return s[_at(M_ACTION, target, m)] == ACTION_DISENGAGE and s[_at(M_TARGET, target, m)] == c


def _attack_batch(table, s, m, quick, rng, counts):
    """The quick attacks (quick attack, charge) or the standard ones (attack, a press not spent
    blocking) of every member in the fight, in table order, all against the state before the
    batch; the batch's lethal wounds take their members out together at its end."""
    for c in range(m):
        if s[_at(M_ACTIVE, c, m)] == 0:
            continue
        action = s[_at(M_ACTION, c, m)]
        if quick != 0:
            if action != ACTION_QUICK_ATTACK and action != ACTION_CHARGE:
                continue
        elif not (action == ACTION_ATTACK or (action == ACTION_PRESS and not _press_spent(s, m, c))):
            continue
        target = s[_at(M_TARGET, c, m)]
        if s[_at(M_ACTIVE, target, m)] == 0:  # out in the quick attacks: the first foe still in
            target = _first_foe_in(table, s, m, c)
            if target < 0:
                continue
        _attack(table, s, m, c, target, quick, rng, counts)
    for t in range(m):
        # Every batch ends so: a member still in the fight with a lethal wound was struck in this one.
        if s[_at(M_ACTIVE, t, m)] != 0 and s[_at(M_LETHAL, t, m)] > 0:
            _take_out(s, m, t)


# ---- engagements and the other actions ----------------------------------------------------------
def _engaging_attack(table, s, m, c):
    """The member ``c`` made an engaging attack on in this pass (a charge, or a melee attack); -1."""
    t = s[_at(M_ATTACKED, c, m)]
    if t >= 0 and (s[_at(M_ACTION, c, m)] == ACTION_CHARGE or table[c, C_RANGED] == 0):
        return t
    return -1


def _involve(s, m, c, t):
    """Records that ``c`` met ``t`` in an engaging attack (M_INVOLVED_MANY: it met several)."""
    first = s[_at(M_INVOLVED, c, m)]
    if first < 0:
        s[_at(M_INVOLVED, c, m)] = t
    elif first != t:
        s[_at(M_INVOLVED_MANY, c, m)] = 1


def _only_met(s, m, c, t):
    return s[_at(M_INVOLVED, c, m)] == t and s[_at(M_INVOLVED_MANY, c, m)] == 0


def _engage_after_attacks(table, s, m):
    """An engaging attack pairs attacker and target when both are still in the fight, unless
    either made or took another engaging attack in this pass. A charger leaves its cover."""
    for c in range(m):
        if s[_at(M_ATTACKED, c, m)] >= 0 and s[_at(M_ACTION, c, m)] == ACTION_CHARGE:
            s[_at(M_COVER, c, m)] = 0
        t = _engaging_attack(table, s, m, c)
        if t >= 0:
            _involve(s, m, c, t)
            _involve(s, m, t, c)
    for c in range(m):
        t = _engaging_attack(table, s, m, c)
        if (t >= 0 and s[_at(M_ACTIVE, c, m)] != 0 and s[_at(M_ACTIVE, t, m)] != 0 and _only_met(s, m, c, t)
                and _only_met(s, m, t, c) and s[_at(M_PARTNER, c, m)] != t):
            _release(s, m, c)
            _release(s, m, t)
            s[_at(M_PARTNER, c, m)] = t
            s[_at(M_PARTNER, t, m)] = c


def _move(table, s, m, c, rng, counts):
    """``c``'s action after the attacks: take cover, toggle dual wield, disengage or flee."""
    action = s[_at(M_ACTION, c, m)]
    if action == ACTION_TAKE_COVER:
        s[_at(M_COVER, c, m)] = 1
    elif action == ACTION_TOGGLE_DUAL_WIELD:
        s[_at(M_DUAL, c, m)] = 1
    elif action == ACTION_DISENGAGE:
        partner = s[_at(M_PARTNER, c, m)]
        if partner < 0:
            return  # no longer engaged
        if s[_at(M_ACTION, partner, m)] == ACTION_PRESS and s[_at(M_TARGET, partner, m)] == c:
            # Press versus Disengage: full attack targets, no action modifiers; ties to the blocker.
            disengage_roll = stream_die(rng, np.uint64(D100), np.uint64(D100_THRESHOLD))
            press_roll = stream_die(rng, np.uint64(D100), np.uint64(D100_THRESHOLD))
            if _first_wins(table, c, C_PRESS, disengage_roll, partner, C_PRESS, press_roll):
                _release(s, m, c)
        else:
            _release(s, m, c)
    elif action == ACTION_FLEE:
        if s[_at(M_PARTNER, c, m)] >= 0:
            return  # engaged by an attack this pass: blocked
        if s[_at(M_TARGETED, c, m)] != 0:
            failed = s[_at(M_FAILED_FLEE, c, m)]
            if stream_die(rng, np.uint64(D100), np.uint64(D100_THRESHOLD)) > flee_target(table[c, C_FLEE_BASE], failed):
                s[_at(M_FAILED_FLEE, c, m)] = failed + 1
                s[_at(M_COVER, c, m)] = 1  # failure: in cover at the current position
                return
        counts[F_ESCAPES + table[c, C_SIDE]] += 1
        s[_at(M_ESCAPED, c, m)] = 1
        _take_out(s, m, c)


def _play_pass(table, s, m, actions, first_pass, rng, counts):
    """One pass (docs/d100.md, "Order inside a pass"); the outcome (RUNNING while it goes on)."""
    for c in range(m):
        # The pass's own fields start afresh (Defend lasts one pass), here in the declarations' loop.
        s[_at(M_DEFENDING, c, m)] = 0
        s[_at(M_ATTACKED, c, m)] = -1
        s[_at(M_INVOLVED, c, m)] = -1
        s[_at(M_INVOLVED_MANY, c, m)] = 0
        _declare(table, s, m, c, actions[c], first_pass, rng, counts)
    _attack_batch(table, s, m, 1, rng, counts)
    _attack_batch(table, s, m, 0, rng, counts)
    outcome = _outcome_now(table, s, m)
    if outcome != RUNNING:
        return outcome
    _engage_after_attacks(table, s, m)
    for c in range(m):
        if s[_at(M_ACTIVE, c, m)] != 0:
            _move(table, s, m, c, rng, counts)
    return _outcome_now(table, s, m)


def member_standing(state, e, m, c):
    """Whether member ``c`` of env ``e`` is still in the fight (neither out nor fled); ``e`` may be
    a slice (combatsim.policies reads a chunk's final states at once)."""
    return state[e, S_MEMBERS + c * MEMBER_FIELDS + M_ACTIVE] != 0


def _finish(table, s, m, outcome, counts):
    """The fight ended: its outcome and rounds go into the state and the counts."""
    s[S_OUTCOME] = outcome
    counts[F_ROUNDS] += s[S_LENGTH]
    if outcome == 0 or outcome == 1:
        counts[F_WINS + outcome] += 1
        fled = 0
        for o in range(m):
            if table[o, C_SIDE] != outcome and s[_at(M_ESCAPED, o, m)] != 0:
                fled = 1
        counts[F_WINS_BY_FLIGHT + outcome] += fled
    elif outcome == DRAW:
        counts[F_DRAWS] += 1
    else:
        counts[F_UNFINISHED] += 1


# ---- observations and masks ----------------------------------------------------------------------
def _observe(table, config, s, m, obs, mask):
    """Every member's observation and action mask (skipped when their last axis is empty)."""
    first_pass = s[S_LENGTH] == 0
    if mask.shape[1] > 0:
        for c in range(m):
            acting = s[_at(M_ACTIVE, c, m)] != 0 and not (first_pass and s[_at(M_SURPRISED, c, m)] != 0)
            engaged = s[_at(M_PARTNER, c, m)] >= 0
            may_toggle = _may_toggle(table, s, m, c)
            for action in range(ACTIONS):
                mask[c, action] = _legal(action, acting, engaged, may_toggle)
    if obs.shape[1] == 0:
        return
    foe_blocks = GLOBAL_FIELDS + BLOCK_FIELDS * (1 + config[G_ALLY_SLOTS])
    end = foe_blocks + BLOCK_FIELDS * config[G_FOE_SLOTS]
    passes_played = s[S_PASS] / config[G_PASSES]  # the global fields: one division each, not one per member
    rounds_begun = s[S_LENGTH] / config[G_MAX_ROUNDS]
    for c in range(m):
        obs[c, 0] = passes_played
        obs[c, 1] = rounds_begun
        _block(table, s, m, c, c, -1, first_pass, obs[c], GLOBAL_FIELDS)  # its own: no one aims at itself
    for c in range(m):
        target = _target_of(table, s, m, c) if s[_at(M_ACTIVE, c, m)] != 0 else -1
        side = table[c, C_SIDE]
        allies = 0
        foes = 0
        for o in range(m):
            # Member o's block as c sees it: after its own, its allies', then its foes', in table order.
            if o == c:
                continue
            if table[o, C_SIDE] == side:
                allies += 1
                base = GLOBAL_FIELDS + BLOCK_FIELDS * allies
            else:
                base = foe_blocks + BLOCK_FIELDS * foes
                foes += 1
            # It is o's own block but for the three fields about the one who looks: copied, not
            # computed again for every member who looks, and those three written.
            for j in range(BLOCK_FIELDS):
                obs[c, base + j] = obs[o, GLOBAL_FIELDS + j]
            obs[c, base + B_ENGAGED_WITH_SELF] = 1 if s[_at(M_PARTNER, o, m)] == c else 0
            obs[c, base + B_ATTACKED_SELF] = 1 if s[_at(M_ATTACKED, o, m)] == c else 0
            obs[c, base + B_TARGET_OF_SELF] = 1 if o == target else 0
        # The blocks of absent allies and foes are 0, each field written once.
        for j in range(GLOBAL_FIELDS + BLOCK_FIELDS * (1 + allies), foe_blocks):
            obs[c, j] = 0
        for j in range(foe_blocks + BLOCK_FIELDS * foes, end):
            obs[c, j] = 0


def _block(table, s, m, o, c, target, first_pass, row, base):
    """Member ``o``'s block as member ``c`` (aiming at ``target``) sees it, into ``row`` from ``base``."""
    row[base + B_IN_FIGHT] = s[_at(M_ACTIVE, o, m)]
    row[base + B_ESCAPED] = s[_at(M_ESCAPED, o, m)]
    row[base + B_FLESH] = s[_at(M_FLESH, o, m)] / FLESH_PER_SERIOUS
    row[base + B_SERIOUS] = s[_at(M_SERIOUS, o, m)] / SERIOUS_PER_LETHAL
    row[base + B_IN_COVER] = s[_at(M_COVER, o, m)]
    row[base + B_DEFENDING] = s[_at(M_DEFENDING, o, m)]
    row[base + B_DUAL_WIELD] = s[_at(M_DUAL, o, m)]
    row[base + B_DUAL_ALLOWED] = table[o, C_DUAL_ALLOWED]
    partner = s[_at(M_PARTNER, o, m)]
    row[base + B_ENGAGED] = 1 if partner >= 0 else 0
    row[base + B_ENGAGED_WITH_SELF] = 1 if partner == c else 0
    row[base + B_TARGETED] = s[_at(M_TARGETED, o, m)]
    row[base + B_SURPRISED] = 1 if first_pass and s[_at(M_SURPRISED, o, m)] != 0 else 0
    row[base + B_FLEE_TARGET] = flee_target(table[o, C_FLEE_BASE], s[_at(M_FAILED_FLEE, o, m)]) / 100
    row[base + B_RANGED] = table[o, C_RANGED]
    row[base + B_ARMOUR] = table[o, C_ARMOUR] / 2
    row[base + B_ATTACK_TARGET] = table[o, C_ATTACK + 2] / 100  # capped target, no action modifiers
    row[base + B_ATTACKED_SELF] = 1 if s[_at(M_ATTACKED, o, m)] == c else 0
    row[base + B_TARGET_OF_SELF] = 1 if o == target else 0


# ---- the kernels ---------------------------------------------------------------------------------
def reset(table, config, seeds, indices, which, state, counts, obs, mask):
    """Starts fight ``indices[e]`` of ``seeds[e]`` for each env with ``which[e]``: the ambush's
    contests (docs/d100.md, "Ambush"), then every member's observation and mask."""
    _reset_envs(table, config, seeds, indices, which, state, counts, obs, mask, new_stream())


def step(table, config, seeds, state, actions, counts, obs, mask):
    """One pass of each fight still running, with ``actions[e, c]`` for member ``c``."""
    _step_envs(table, config, seeds, state, actions, counts, obs, mask, new_stream())


def _reset_envs(table, config, seeds, indices, which, state, counts, obs, mask, rng):
    m = table.shape[0]
    for e in range(state.shape[0]):
        if which[e] != 0:
            _begin(table, config, seeds[e], indices[e], state[e], counts[e], rng)
            _observe(table, config, state[e], m, obs[e], mask[e])


def _step_envs(table, config, seeds, state, actions, counts, obs, mask, rng):
    m = table.shape[0]
    for e in range(state.shape[0]):
        if state[e, S_OUTCOME] != RUNNING:
            continue
        # Envs step one at a time, each from where its own stream stopped.
        stream_continue(rng, seeds[e], state[e, S_INDEX], state[e, S_WORDS], state[e, S_RETRIES], state[e, S_BLOCK],
                        state[e, S_BLOCK + 1])
        _advance(table, config, state[e], actions[e], counts[e], rng)
        _observe(table, config, state[e], m, obs[e], mask[e])


def _begin(table, config, seed, index, s, counts, rng):
    """Starts fight ``index`` of ``seed`` in the state row ``s``, zeroing its ``counts``: the
    ambush's contests (docs/d100.md, "Ambush"); ``rng`` is left where the first pass reads on."""
    m = table.shape[0]
    for j in range(s.shape[0]):
        s[j] = 0
    for j in range(counts.shape[0]):
        counts[j] = 0
    s[S_INDEX] = index
    s[S_OUTCOME] = RUNNING
    for c in range(m):
        s[_at(M_ACTIVE, c, m)] = 1
        s[_at(M_PARTNER, c, m)] = -1
        s[_at(M_TARGET, c, m)] = -1
        s[_at(M_ATTACKED, c, m)] = -1
        s[_at(M_INVOLVED, c, m)] = -1
    stream_resume(rng, seed, index, 0, 0)
    ambush_contests(table, config, s, counts, rng)
    s[S_WORDS] = stream_words_used(rng)
    s[S_RETRIES] = stream_retries_used(rng)
    s[S_BLOCK] = stream_block(rng, 0)
    s[S_BLOCK + 1] = stream_block(rng, 1)


def ambush_contests(table, config, s, counts, rng):
    """The ambush's contests (docs/d100.md, "Ambush"), the first dice of a fight's stream ``rng``:
    each member of the ambushed side, in table order, against the next ambusher (cycling); a
    defender who loses is surprised (its M_SURPRISED set in ``s``, counted in F_SURPRISED). No
    contest without an ambush (G_AMBUSH_SIDE -1)."""
    m = table.shape[0]
    ambush_side = config[G_AMBUSH_SIDE]
    if ambush_side < 0:
        return
    a = -1
    for d in range(m):
        if table[d, C_SIDE] == ambush_side:
            continue
        a = (a + 1) % m  # the next ambusher in table order, cycling
        while table[a, C_SIDE] != ambush_side:
            a = (a + 1) % m
        attacker_roll = stream_die(rng, np.uint64(D100), np.uint64(D100_THRESHOLD))
        defender_roll = stream_die(rng, np.uint64(D100), np.uint64(D100_THRESHOLD))
        if _first_wins(table, a, C_AMBUSH_ATTACK, attacker_roll, d, C_AMBUSH_DEFEND, defender_roll):
            s[_at(M_SURPRISED, d, m)] = 1
            counts[F_SURPRISED] += 1


def _advance(table, config, s, actions, counts, rng):
    """One pass of the running fight in the state row ``s``, its dice read from ``rng`` where it
    stands (the stream position goes back into ``s``)."""
    m = table.shape[0]
    first_pass = s[S_LENGTH] == 0
    if s[S_PASS] == 0:  # a new round
        s[S_LENGTH] += 1
        for c in range(m):
            s[_at(M_TARGETED, c, m)] = 0
    outcome = _play_pass(table, s, m, actions, first_pass, rng, counts)
    s[S_STEPS] += 1
    s[S_PASS] += 1
    if outcome == RUNNING and s[S_PASS] == config[G_PASSES]:
        s[S_PASS] = 0
        if s[S_LENGTH] == config[G_MAX_ROUNDS]:
            outcome = UNFINISHED
    if outcome != RUNNING:
        _finish(table, s, m, outcome, counts)
    s[S_WORDS] = stream_words_used(rng)
    s[S_RETRIES] = stream_retries_used(rng)
    s[S_BLOCK] = stream_block(rng, 0)
    s[S_BLOCK + 1] = stream_block(rng, 1)


def fight(seed, start, count, table, passes, max_rounds, ambush_side, counts, winner_out, rounds_out):
    """Fights between side 0 and side 1 (docs/d100.md, "A fight"): reset, then step with every
    member SCRIPTED until the end, fight by fight (the "d100.fight" kernel's signature).

    Fight ``start + k`` uses item stream ``start + k``. ``counts`` gains the layout's F_* fields,
    then the rounds histogram (0 .. max_rounds), then each member's fights ended standing;
    ``winner_out[k]`` gets 0 or 1 (the winning side), WINNER_DRAW or WINNER_UNFINISHED,
    ``rounds_out[k]`` the rounds (empty outputs: not wanted).
    """
    m = table.shape[0]
    # The fight's buffers are the rows of one array, one allocation per call (the Cython build
    # allocates through Python): the state (row 0, an env's state row), the config, the members'
    # actions and the counts, each in a row as long as the state, the longest of them.
    buffers = np.zeros((4, state_size(m)), dtype=np.int64)
    s = buffers[0]
    config = buffers[1]
    fill_config(table, passes, max_rounds, ambush_side, config)
    scripted = buffers[2]
    for c in range(m):
        scripted[c] = SCRIPTED
    # One env's rows: a fight's passes read one stream in order, so it is not resumed from the
    # state between them, and no one reads observations or masks (all members scripted).
    fight_counts = buffers[3]
    rng = new_stream()
    for k in range(count):
        _begin(table, config, seed, start + k, s, fight_counts, rng)
        while s[S_OUTCOME] == RUNNING:
            _advance(table, config, s, scripted, fight_counts, rng)
        for j in range(FIGHT_COUNTS):
            counts[j] += fight_counts[j]
        rounds = s[S_LENGTH]
        counts[FIGHT_COUNTS + rounds] += 1  # the rounds histogram follows the fixed counts
        for c in range(m):  # then each member's fights ended still standing
            if member_standing(buffers, 0, m, c):
                counts[FIGHT_COUNTS + max_rounds + 1 + c] += 1
        if len(winner_out):
            winner_out[k] = WINNERS[s[S_OUTCOME]]
        if len(rounds_out):
            rounds_out[k] = rounds
