"""d100 kernels for Numba; the reference is combatsim.d100.reference (layout: docs/d100.md)."""

from __future__ import annotations

import llvmlite.binding
import numba
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
    ATTACK_COUNTS,
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
    D100,
    DRAW,
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
    FIGHT_COUNTS,
    UNFINISHED,
)

from .._numba import lowest_set_bit, njit
from ..rng_nb import (
    AHEAD_SIZE,
    DOMAIN_DENSE,
    MASK32,
    SHIFT32,
    STREAM_SIZE,
    ahead_die,
    ahead_start,
    block,
    dense_die,
    dense_die_in,
    rejection_threshold,
    seed_key,
    stream_bounded,
    stream_start,
)

#: Blocks per tile: a tile whose fast pass saw a rejected word has those words fixed exactly.
TILE_BLOCKS = 96
# Exact digit extraction without division (checked exhaustively in the tests):
# v // 10000 == (v * 429497) >> 32 for v < 1000000; r // 100 == (r * 5243) >> 19 for r < 10000.
DIV10000_M = np.uint64(429497)
DIV10000_S = np.uint64(32)
DIV100_M = np.uint64(5243)
DIV100_S = np.uint64(19)
TIER_SUCCESS = 2
TIER_CRITICAL = 0
FLESH, SERIOUS, LETHAL, INSTANT_DEATH = 1, 2, 3, 4


@njit
def tier_bars(skill):
    """model.tier_bars: (critical, hard, success, critical-failure) roll bars of a full skill."""
    capped = min(95, skill)
    success_bar = max(0, capped)
    hard_bar = max(0, min(capped, skill // 2))
    critical_bar = max(0, min(hard_bar, skill // 10))
    failure_range = 100 - success_bar
    return critical_bar, hard_bar, success_bar, 100 - (failure_range + 9) // 10


@njit
def _split(value):
    """model.split_attack_value, 0-based: (attack, damage, second damage) in 0..99."""
    attack = (value * DIV10000_M) >> DIV10000_S
    rest = value - attack * np.uint64(10000)
    damage = (rest * DIV100_M) >> DIV100_S
    return attack, damage, rest - damage * np.uint64(100)


@njit
def _tallies(value, cb, hb, sb, fb, lb1, wb1, lb2, wb2, two):
    """One attack's contributions, branch-free: bars are 0-based (value < bar means roll <= bar).

    Returns (critical, hard-or-better, success-or-better, critical failure, lethal 1, serious-or-worse 1,
    instant 1, lethal 2, serious-or-worse 2, instant 2).
    """
    attack, damage, damage2 = _split(value)
    critical = np.int64(attack < cb)
    success = np.int64(attack < sb)
    lethal1 = success & np.int64(damage < lb1)
    lethal2 = success & two & np.int64(damage2 < lb2)
    return (
        critical,
        np.int64(attack < hb),
        success,
        np.int64(attack >= fb),
        lethal1,
        success & np.int64(damage < wb1),
        lethal1 & critical,
        lethal2,
        success & two & np.int64(damage2 < wb2),
        lethal2 & critical,
    )


@njit
def _word_bar(bar):
    """ceil(bar 2^32 / 100), at most 2^32 - 1 (r1 and r2 are multiples of 4, never 2^32 - 1)."""
    threshold = ((np.uint64(bar) << SHIFT32) + np.uint64(99)) // np.uint64(100)
    return np.uint32(min(threshold, MASK32))


@njit(inline="always")
def _word_tallies(w, cb, hb, sb, fb, lb1, wb1, lb2, wb2, two):
    """_tallies of the word w itself, with the bars as word thresholds (_word_bar), in 32 bits.

    With v = (w 10^6) >> 32: attack digit v // 10000 = (100 w) >> 32, damage digit
    v // 100 % 100 = (100 r1) >> 32 with r1 = 100 w mod 2^32, second damage digit (100 r2) >> 32
    with r2 = 100 r1 mod 2^32; so "digit < B" is "w (or r1, r2) < ceil(B 2^32 / 100)". Every
    argument is a uint32, so LLVM keeps eight words to a vector in the fast pass.
    """
    r1 = np.uint32(w * np.uint32(100))
    r2 = np.uint32(r1 * np.uint32(100))
    critical = np.uint32(w < cb)
    success = np.uint32(w < sb)
    lethal1 = np.uint32(success & np.uint32(r1 < lb1))
    lethal2 = np.uint32(success & two & np.uint32(r2 < lb2))
    return (
        critical,
        np.uint32(w < hb),
        success,
        np.uint32(w >= fb),
        lethal1,
        np.uint32(success & np.uint32(r1 < wb1)),
        np.uint32(lethal1 & critical),
        lethal2,
        np.uint32(success & two & np.uint32(r2 < wb2)),
        np.uint32(lethal2 & critical),
    )


@njit
def _fast_tile(k0, k1, first_block, last_block, cb, hb, sb, fb, lb1, wb1, lb2, wb2, two, threshold, buffer):
    """Tallies over whole dense blocks (word thresholds) plus the count of rejected words; the low
    word of w 10^6, which decides Lemire's rejection, is 100 r2 mod 2^32. Two loops: Philox into
    ``buffer``, then a branch-free pass over it that LLVM vectorises. The pass keeps everything
    in 32 bits (a tile's tallies fit), so a vector holds eight words, not four."""
    n = 0
    for g in range(first_block, last_block):
        w0, w1, w2, w3 = block(k0, k1, g, 0, DOMAIN_DENSE)
        buffer[n] = np.uint32(w0)
        buffer[n + 1] = np.uint32(w1)
        buffer[n + 2] = np.uint32(w2)
        buffer[n + 3] = np.uint32(w3)
        n += 4
    hundred = np.uint32(100)
    t0 = t1 = t2 = t3 = t4 = t5 = t6 = t7 = t8 = t9 = rejected = np.uint32(0)
    for j in range(n):
        w = buffer[j]
        low = np.uint32(np.uint32(np.uint32(w * hundred) * hundred) * hundred)
        rejected = np.uint32(rejected + np.uint32(low < threshold))
        a0, a1, a2, a3, a4, a5, a6, a7, a8, a9 = _word_tallies(w, cb, hb, sb, fb, lb1, wb1, lb2, wb2, two)
        t0 = np.uint32(t0 + a0)
        t1 = np.uint32(t1 + a1)
        t2 = np.uint32(t2 + a2)
        t3 = np.uint32(t3 + a3)
        t4 = np.uint32(t4 + a4)
        t5 = np.uint32(t5 + a5)
        t6 = np.uint32(t6 + a6)
        t7 = np.uint32(t7 + a7)
        t8 = np.uint32(t8 + a8)
        t9 = np.uint32(t9 + a9)
    return (np.int64(t0), np.int64(t1), np.int64(t2), np.int64(t3), np.int64(t4), np.int64(t5), np.int64(t6),
            np.int64(t7), np.int64(t8), np.int64(t9), np.int64(rejected))


@njit
def _add(totals, sign, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9):
    totals[0] += sign * a0
    totals[1] += sign * a1
    totals[2] += sign * a2
    totals[3] += sign * a3
    totals[4] += sign * a4
    totals[5] += sign * a5
    totals[6] += sign * a6
    totals[7] += sign * a7
    totals[8] += sign * a8
    totals[9] += sign * a9


@njit
def _uniform_attacks(seed, start, count, skill, lethal1, serious1, lethal2, serious2, two, counts):
    """Same parameters for every attack, no per-attack outputs: dense blocks in tiles."""
    k0, k1 = seed_key(seed)
    sides = np.uint64(ATTACK_SIDES)
    threshold = rejection_threshold(sides)
    state = np.zeros(STREAM_SIZE, dtype=np.uint64)
    totals = np.zeros(10, dtype=np.int64)
    c, h, s, f = tier_bars(skill)
    cb, hb, sb, fb = np.uint64(c), np.uint64(h), np.uint64(s), np.uint64(f)
    lb1, wb1 = np.uint64(lethal1), np.uint64(serious1)
    lb2, wb2 = np.uint64(lethal2), np.uint64(serious2)
    end = start + count
    first_block = (start + 3) >> 2
    last_block = max(first_block, end >> 2)
    # Items outside whole blocks (at most 3 at each end) go one by one.
    for i in range(start, min(end, first_block * 4)):
        value = np.uint64(dense_die(state, k0, k1, i, sides, threshold) - 1)
        _add(totals, 1, *_tallies(value, cb, hb, sb, fb, lb1, wb1, lb2, wb2, two))
    for i in range(max(last_block * 4, start), end):
        value = np.uint64(dense_die(state, k0, k1, i, sides, threshold) - 1)
        _add(totals, 1, *_tallies(value, cb, hb, sb, fb, lb1, wb1, lb2, wb2, two))
    wc, wh, ws, wf = _word_bar(c), _word_bar(h), _word_bar(s), _word_bar(f)
    buffer = np.empty(4 * TILE_BLOCKS, dtype=np.uint32)
    wl1, ww1, wl2, ww2 = _word_bar(lethal1), _word_bar(serious1), _word_bar(lethal2), _word_bar(serious2)
    word_two = np.uint32(two)
    for tile in range(first_block, last_block, TILE_BLOCKS):
        tile_end = min(tile + TILE_BLOCKS, last_block)
        t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, rejected = _fast_tile(
            k0, k1, tile, tile_end, wc, wh, ws, wf, wl1, ww1, wl2, ww2, word_two, np.uint32(threshold), buffer)
        _add(totals, 1, t0, t1, t2, t3, t4, t5, t6, t7, t8, t9)
        if rejected:
            # Replace each rejected word's fast tally with its exact value (retry domain); the
            # buffer still holds the tile's words, item tile * 4 + j at j.
            for j in range(4 * (tile_end - tile)):
                word = buffer[j]
                if ((word * sides) & MASK32) < threshold:
                    _add(totals, -1, *_word_tallies(word, wc, wh, ws, wf, wl1, ww1, wl2, ww2, word_two))
                    stream_start(state, k0, k1, tile * 4 + j)
                    value = np.uint64(stream_bounded(state, word, sides, threshold))
                    _add(totals, 1, *_tallies(value, cb, hb, sb, fb, lb1, wb1, lb2, wb2, two))
    critical, hard_or_better, success_or_better, critical_failure = totals[0], totals[1], totals[2], totals[3]
    counts[0] += critical
    counts[1] += hard_or_better - critical
    counts[2] += success_or_better - hard_or_better
    counts[3] += count - success_or_better - critical_failure
    counts[4] += critical_failure
    counts[A_LETHAL] += totals[4] + totals[7]
    counts[A_SERIOUS] += totals[5] - totals[4] + totals[8] - totals[7]
    counts[A_FLESH] += success_or_better * (1 + two) - totals[5] - totals[8]
    counts[A_INSTANT_DEATH] += totals[6] + totals[9]


@njit
def _damage_bars(lethality, serious, nonlethal):
    """model.damage_bars: (lethal bar, serious-or-worse bar)."""
    worst = max(lethality, serious)
    return (0 if nonlethal else lethality), worst


@njit
def one_attack(seed, index, full_skill, lethality, serious, nonlethal, lethality2, serious2, nonlethal2, weapons):
    """Item ``index`` of _attack_kernel alone (combatsim.d100.Attack): (tier, wound, second wound),
    from the bulk kernel's own per-item loop over that one item. (The loop body as an inline
    function shared with it ran the bulk attacks with outcomes at 1.5x the time.)"""
    p = np.array((full_skill, lethality, serious, nonlethal, lethality2, serious2, nonlethal2, weapons),
                 dtype=np.int64)
    out = np.empty(3, dtype=np.int8)
    _attack_kernel(seed, index, 1, p[0:1], p[1:2], p[2:3], p[3:4], p[4:5], p[5:6], p[6:7], p[7:8],
                   np.zeros(ATTACK_COUNTS, dtype=np.int64), out[0:1], out[1:2], out[2:3])
    return out[0], out[1], out[2]


@njit
def _attack_kernel(seed, start, count, full_skill, lethality, serious, nonlethal, lethality2, serious2, nonlethal2,
           weapons, counts, tier_out, wound_out, wound2_out):
    uniform = (full_skill.shape[0] == 1 and lethality.shape[0] == 1 and serious.shape[0] == 1
               and nonlethal.shape[0] == 1 and lethality2.shape[0] == 1 and serious2.shape[0] == 1
               and nonlethal2.shape[0] == 1 and weapons.shape[0] == 1)
    keep = tier_out.shape[0] > 0 or wound_out.shape[0] > 0 or wound2_out.shape[0] > 0
    if uniform and not keep:
        lb1, wb1 = _damage_bars(lethality[0], serious[0], nonlethal[0])
        lb2, wb2 = _damage_bars(lethality2[0], serious2[0], nonlethal2[0])
        _uniform_attacks(seed, start, count, full_skill[0], lb1, wb1, lb2, wb2, np.int64(weapons[0] == 2), counts)
        return
    k0, k1 = seed_key(seed)
    sides = np.uint64(ATTACK_SIDES)
    threshold = rejection_threshold(sides)
    state = np.zeros(STREAM_SIZE, dtype=np.uint64)
    w0 = w1 = w2 = w3 = np.uint64(0)
    for k in range(count):
        i = start + k
        if k == 0 or i & 3 == 0:  # one dense block serves four attacks
            w0, w1, w2, w3 = block(k0, k1, i >> 2, 0, DOMAIN_DENSE)
        value = np.uint64(dense_die_in(state, k0, k1, i, w0, w1, w2, w3, sides, threshold) - 1)
        attack_value, damage, damage2 = _split(value)
        roll = np.int64(attack_value) + 1
        c, h, s, f = tier_bars(full_skill[k if full_skill.shape[0] > 1 else 0])
        tier = np.int64(roll > c) + np.int64(roll > h) + np.int64(roll > s) + np.int64(roll > f)
        counts[tier] += 1
        wound1 = 0
        wound2 = 0
        if tier <= TIER_SUCCESS:
            for w in range(weapons[k if weapons.shape[0] > 1 else 0]):
                if w == 0:
                    lb, wb = _damage_bars(lethality[k if lethality.shape[0] > 1 else 0],
                                          serious[k if serious.shape[0] > 1 else 0],
                                          nonlethal[k if nonlethal.shape[0] > 1 else 0])
                    roll_w = np.int64(damage) + 1
                else:
                    lb, wb = _damage_bars(lethality2[k if lethality2.shape[0] > 1 else 0],
                                          serious2[k if serious2.shape[0] > 1 else 0],
                                          nonlethal2[k if nonlethal2.shape[0] > 1 else 0])
                    roll_w = np.int64(damage2) + 1
                if roll_w <= lb:
                    wound = INSTANT_DEATH if tier == TIER_CRITICAL else LETHAL
                    counts[A_LETHAL] += 1
                    counts[A_INSTANT_DEATH] += tier == TIER_CRITICAL
                elif roll_w <= wb:
                    wound = SERIOUS
                    counts[A_SERIOUS] += 1
                else:
                    wound = FLESH
                    counts[A_FLESH] += 1
                if w == 0:
                    wound1 = wound
                else:
                    wound2 = wound
        if tier_out.shape[0]:
            tier_out[k] = tier
        if wound_out.shape[0]:
            wound_out[k] = wound1
        if wound2_out.shape[0]:
            wound2_out[k] = wound2


# ---------------------------------------------------------------------------------------------
# Fights: the reference's _Fight (the Cython twin's layout). Combatant c is bit c of the yes/no
# states (m <= 64), so "first active opponent", "is a side out" and "every active combatant in
# order" are bit operations, not loops over the table.
# ---------------------------------------------------------------------------------------------
#: api.MAX_COMBATANTS: one bit each in an int64 (bit 63 too: the masks only shift, and, or, test).
MAX_FIGHTERS = 64
#: The actions that attack (and mark their target as targeted), as a set of bits.
ATTACKING = (1 << ACTION_ATTACK) | (1 << ACTION_QUICK_ATTACK) | (1 << ACTION_PRESS) | (1 << ACTION_CHARGE)

# Per-combatant state columns (int64 array of shape (m, S_FIELDS) per lane). Lethal wounds are
# not kept: one takes the combatant out.
# S_ATTACKED: whom it attacked this pass; S_INVOLVED: the mask of those it is in an engaging
# attack with this pass.
S_DEADLY_FLESH, S_SERIOUS, S_FAILED_FLEE, S_ENGAGED, S_ACTION, S_TARGET, S_ATTACKED, S_INVOLVED = range(8)
S_FIELDS = 8
# Per-lane scalars (int64 array of shape (FIGHT_LANES, L_FIELDS)): the fight's item, round and
# pass, the masks of combatants in the fight, in cover, dual wielding, defending this pass,
# targeted this round, surprised and escaped.
L_ITEM, L_ROUND, L_PASS, L_ACTIVE, L_COVER, L_DUAL, L_DEFENDING, L_TARGETED, L_SURPRISED, L_ESCAPED = range(10)
L_FIELDS = 10


@njit(inline="always")
def _has(bits, c):
    return (bits >> c) & 1


@njit(inline="always")
def _contest_tier(roll, table, c, column):
    return (np.int64(roll > table[c, column]) + np.int64(roll > table[c, column + 1])
            + np.int64(roll > table[c, column + 2]) + np.int64(roll > table[c, column + 3]))


@njit(inline="always")
def _first_wins(roll, table, c, column, opposing_roll, o, opposing_column):
    own = _contest_tier(roll, table, c, column)
    other = _contest_tier(opposing_roll, table, o, opposing_column)
    if own != other:
        return own < other
    return table[c, column + 4] - roll > table[o, opposing_column + 4] - opposing_roll


@njit(inline="always")
def _first_active_opponent(table, lane, sides, c):
    opponents = lane[L_ACTIVE] & sides[1 - table[c, C_SIDE]]
    return lowest_set_bit(opponents) if opponents else -1


@njit(inline="always")
def _end_if_out(lane, sides, side):
    """The winning side when ``side`` has nobody left in the fight, else -1."""
    return -1 if lane[L_ACTIVE] & sides[side] else 1 - side


@njit(inline="always")
def _release(st, c):
    partner = st[c, S_ENGAGED]
    if partner >= 0 and st[partner, S_ENGAGED] == c:
        st[partner, S_ENGAGED] = -1
    st[c, S_ENGAGED] = -1


@njit(inline="always")
def _wound(table, st, counts, c, t, column, damage_roll, critical, deadly):
    """One weapon's wound on t, and its escalation, without branches: which wound a hit deals is
    a coin flip no predictor learns. Returns 1 when t now has a lethal wound (direct or escalated).
    (Whether the attack hits is a branch in _attack: skipping both wounds on a miss measured
    faster than masking them, in Cython.)"""
    lethal = np.int64(damage_roll <= table[c, column])
    serious = np.int64(damage_roll > table[c, column]) & np.int64(damage_roll <= table[c, column + 1])
    flesh = np.int64(damage_roll > table[c, column + 1])
    counts[F_LETHAL] += lethal
    counts[F_INSTANT_DEATH] += lethal & critical
    counts[F_SERIOUS] += serious
    counts[F_FLESH] += flesh
    # Escalation, cascading: three deadly flesh -> serious, two serious -> lethal.
    deadly_flesh = st[t, S_DEADLY_FLESH] + (flesh & deadly)  # nonlethal flesh wounds do not count
    to_serious = np.int64(deadly_flesh >= 3)
    st[t, S_DEADLY_FLESH] = deadly_flesh - 3 * to_serious
    serious_wounds = st[t, S_SERIOUS] + serious + to_serious
    to_lethal = np.int64(serious_wounds >= 2)
    st[t, S_SERIOUS] = serious_wounds - 2 * to_lethal
    counts[F_ESCALATED_SERIOUS] += to_serious
    counts[F_ESCALATED_LETHAL] += to_lethal
    return lethal | to_lethal


@njit(inline="always")
def _attack(table, st, lane, rng, c, t, quick, counts, sides_attack, threshold_attack):
    """c attacks t (the reference's attack); returns 1 when t now has a lethal wound (it goes out
    when its batch's wounds have all landed)."""
    cover = _has(lane[L_COVER], t) & table[c, C_RANGED]
    dual = _has(lane[L_DUAL], c)
    steps = quick + dual + cover + _has(lane[L_DEFENDING], t)
    armour = table[t, C_ARMOUR]
    value = np.uint64(ahead_die(rng, sides_attack, threshold_attack) - 1)
    attack_value, damage, damage2 = _split(value)
    tier = _contest_tier(np.int64(attack_value) + 1, table, c, C_ATTACK + 4 * steps)
    counts[F_ATTACKS] += 1
    st[c, S_ATTACKED] = t
    if tier > TIER_SUCCESS:
        return 0
    critical = np.int64(tier == TIER_CRITICAL)
    # Weapon 0, then weapon 1 when dual wielding (layout.damage_column).
    out = _wound(table, st, counts, c, t, C_DAMAGE + 2 * ((cover * 3 + armour) * 2 + dual), np.int64(damage) + 1,
                 critical, 1 - table[c, C_NONLETHAL])
    if dual:
        out |= _wound(table, st, counts, c, t, C_DAMAGE + 2 * (((2 + cover) * 3 + armour) * 2 + dual),
                      np.int64(damage2) + 1, critical, 1 - table[c, C_NONLETHAL + 1])
    return out


@njit(inline="always")
def _declare(table, policy, st, lane, rng, sides, c, first_pass, d100_threshold):
    st[c, S_ATTACKED] = -1
    if first_pass and _has(lane[L_SURPRISED], c):
        st[c, S_ACTION] = ACTION_NONE
        return
    partner = st[c, S_ENGAGED]
    engaged = np.int64(partner >= 0)
    action = np.int64(policy[c, engaged, ahead_die(rng, np.uint64(D100), d100_threshold)])
    if table[c, C_DUAL_ALLOWED] & (1 - _has(lane[L_DUAL], c)):
        action = ACTION_TOGGLE_DUAL_WIELD
    target = partner if engaged else _first_active_opponent(table, lane, sides, c)
    st[c, S_ACTION] = action
    st[c, S_TARGET] = target
    # A running fight always has an active opponent (target >= 0); the mask only keeps the shift
    # defined.
    lane[L_TARGETED] |= ((ATTACKING >> action) & 1) << (target & 63)
    lane[L_DEFENDING] |= np.int64(action == ACTION_DEFEND) << c


@njit(inline="always")
def _attack_batch(table, st, lane, rng, sides, quick, counts, sides_attack, threshold_attack):
    """The quick attacks (quick attack, charge) or the standard ones (attack, a press not spent
    blocking a disengage) of every combatant in the fight, in table order, all against the state
    before the batch: who it takes out goes out after it (the reference's attack_batch)."""
    struck = np.int64(0)
    todo = lane[L_ACTIVE]
    while todo:
        c = lowest_set_bit(todo)
        todo &= todo - 1
        action = st[c, S_ACTION]
        target = st[c, S_TARGET]
        if quick:
            if not (np.int64(action == ACTION_QUICK_ATTACK) | np.int64(action == ACTION_CHARGE)):
                continue
        elif action == ACTION_PRESS:
            if np.int64(st[target, S_ACTION] == ACTION_DISENGAGE) & np.int64(st[target, S_TARGET] == c):
                continue  # the press is spent blocking the disengage
        elif action != ACTION_ATTACK:
            continue
        if not _has(lane[L_ACTIVE], target):  # out in the quick attacks: the first opponent still in
            target = _first_active_opponent(table, lane, sides, c)
            if target < 0:
                continue
        struck |= _attack(table, st, lane, rng, c, target, np.int64(quick), counts, sides_attack,
                          threshold_attack) << target
    todo = struck
    while todo:
        t = lowest_set_bit(todo)
        todo &= todo - 1
        _release(st, t)
    lane[L_ACTIVE] &= ~struck


@njit(inline="always")
def _outcome(lane, sides):
    """The fight's outcome when a side has nobody left in it (the winning side, or DRAW), else
    UNFINISHED (it goes on)."""
    in0 = lane[L_ACTIVE] & sides[0]
    in1 = lane[L_ACTIVE] & sides[1]
    if in0 and in1:
        return UNFINISHED
    if in0:
        return 0
    return 1 if in1 else DRAW


@njit(inline="always")
def _engaging_attack(table, st, lane, c):
    """Whom c made an engaging attack on this pass (a charge, or a melee attack); -1 for nobody."""
    t = st[c, S_ATTACKED]
    return t if (t >= 0) & (np.int64(st[c, S_ACTION] == ACTION_CHARGE) | (1 - table[c, C_RANGED])) else -1


@njit(inline="always")
def _move(table, st, lane, rng, c, counts, d100_threshold):
    """c's action after the attacks: take cover, toggle dual wield, disengage or flee."""
    action = st[c, S_ACTION]
    d100 = np.uint64(D100)
    if action == ACTION_TAKE_COVER:
        lane[L_COVER] |= np.int64(1) << c
    elif action == ACTION_TOGGLE_DUAL_WIELD:
        lane[L_DUAL] |= np.int64(1) << c
    elif action == ACTION_DISENGAGE:
        partner = st[c, S_ENGAGED]
        if partner < 0:
            return
        if np.int64(st[partner, S_ACTION] == ACTION_PRESS) & np.int64(st[partner, S_TARGET] == c):
            disengage_roll = ahead_die(rng, d100, d100_threshold)
            press_roll = ahead_die(rng, d100, d100_threshold)
            if _first_wins(disengage_roll, table, c, C_PRESS, press_roll, partner, C_PRESS):
                _release(st, c)
        else:
            _release(st, c)
    elif action == ACTION_FLEE:
        if st[c, S_ENGAGED] >= 0:
            return
        if _has(lane[L_TARGETED], c):
            flee_target = min(95, table[c, C_FLEE_BASE] + 20 * st[c, S_FAILED_FLEE])
            if ahead_die(rng, d100, d100_threshold) > flee_target:
                st[c, S_FAILED_FLEE] += 1
                lane[L_COVER] |= np.int64(1) << c
                return
        lane[L_ACTIVE] &= ~(np.int64(1) << c)
        lane[L_ESCAPED] |= np.int64(1) << c


#: Fights in flight per kernel call (docs/d100.md, "Kernels and speed"): each lane holds one fight's
#: state and stream; the lanes advance one pass each in turn, and a lane whose fight ended starts
#: the next fight index at once. Results do not depend on it: fight i draws only from item stream i.
#: One lane is fastest (the branch predictor learns from the same fight's earlier passes; bench
#: fight, A/B in one process: 8 lanes 113.5, 1 lane 109.3 ns an attack).
FIGHT_LANES = 1
#: The lockstep lanes (fight_lanes_nb.py) take calls of at least LOCKSTEP_MIN_FIGHTS fights of at
#: most LOCKSTEP_FIGHTERS combatants (their masks and indices fit 16 bits), LOCKSTEP_LANES fights at
#: a time; the scalar lanes above take the rest. Bench fight, A/B in one process: 32 lanes 15.5 ns
#: an attack, 64 lanes 15.4 (an earlier version: 16 lanes 18.8, 32 lanes 17.5); a call of 64
#: fights takes 33.5 us in 32 lanes, 41.1 us scalar, one of 32 fights 24.9 and 22.3 us (64 lanes
#: broke even at about 128 fights).
LOCKSTEP_FIGHTERS = 16
LOCKSTEP_LANES = 32
LOCKSTEP_MIN_FIGHTS = 2 * LOCKSTEP_LANES


def _compiles_for_avx2() -> bool:
    """Whether Numba compiles for a CPU with AVX2: NUMBA_CPU_FEATURES when set, else the host's (as
    Numba's own codegen decides)."""
    features = numba.config.CPU_FEATURES
    if features is None:
        try:
            features = llvmlite.binding.get_host_cpu_features().flatten()
        except RuntimeError:  # no feature detection on this platform
            return False
    return "+avx2" in features.split(",")


#: Whether the lockstep lanes are used at all: only where they pay. Compiled for the baseline x86-64
#: (SSE2; NUMBA_CPU_NAME=x86-64 NUMBA_CPU_FEATURES=""), LLVM has no gathers and the lanes ran 76.9
#: ns an attack against the scalar lanes' 40.5; for x86-64-v3 (AVX2) 28.8 against 38.4; on the Zen
#: 4 host (AVX-512) 15.7 against 34.2 (bench fight, A/B in one process).
LOCKSTEP_CPU = _compiles_for_avx2()


@njit(inline="always")
def _begin(table, st, lane, rng, sides, k0, k1, index, m, ambush_side, ambushers, ambusher_count, counts,
           d100_threshold):
    """A fight's start: fresh combatants, then the ambush contests (the stream's first words)."""
    d100 = np.uint64(D100)
    ahead_start(rng, k0, k1, index)
    lane[L_ACTIVE] = sides[0] | sides[1]
    lane[L_COVER] = 0
    lane[L_DUAL] = 0
    lane[L_DEFENDING] = 0
    lane[L_TARGETED] = 0
    lane[L_SURPRISED] = 0
    lane[L_ESCAPED] = 0
    for c in range(m):
        st[c, S_DEADLY_FLESH] = 0
        st[c, S_SERIOUS] = 0
        st[c, S_FAILED_FLEE] = 0
        st[c, S_ENGAGED] = -1
    if ambush_side >= 0:
        rank = 0
        for d in range(m):
            if table[d, C_SIDE] == ambush_side:
                continue
            a = ambushers[rank % ambusher_count]
            rank += 1
            attacker_roll = ahead_die(rng, d100, d100_threshold)
            defender_roll = ahead_die(rng, d100, d100_threshold)
            if _first_wins(attacker_roll, table, a, C_AMBUSH_ATTACK, defender_roll, d, C_AMBUSH_DEFEND):
                lane[L_SURPRISED] |= np.int64(1) << d
                counts[F_SURPRISED] += 1


@njit(inline="always")
def _one_pass(table, policy, st, lane, rng, sides, round_number, pass_number, counts, sides_attack,
              threshold_attack, d100_threshold):
    """Pass ``pass_number`` of round ``round_number`` (the reference's play_pass): declarations,
    the quick attacks, the standard attacks, then engagements and the other actions. Returns the
    fight's outcome when it ended in this pass, else UNFINISHED. Actions need no reset: every
    combatant whose action is read (an active one, its partner, its declared target) declared
    this pass."""
    if pass_number == 1:
        lane[L_TARGETED] = 0
    lane[L_DEFENDING] = 0
    first_pass = round_number == 1 and pass_number == 1
    declared = lane[L_ACTIVE]
    todo = declared
    while todo:
        _declare(table, policy, st, lane, rng, sides, lowest_set_bit(todo), first_pass, d100_threshold)
        todo &= todo - 1
    _attack_batch(table, st, lane, rng, sides, True, counts, sides_attack, threshold_attack)
    _attack_batch(table, st, lane, rng, sides, False, counts, sides_attack, threshold_attack)
    outcome = _outcome(lane, sides)
    if outcome != UNFINISHED:
        return outcome
    # Engagements: an engaging attack (a charge, or a melee attack) pairs attacker and target when
    # both are still in the fight, unless either is in another engaging attack of the pass (the
    # reference's engage_after_attacks). S_INVOLVED: with whom each is in one. A charger leaves
    # its cover.
    todo = declared
    while todo:
        c = lowest_set_bit(todo)
        todo &= todo - 1
        st[c, S_INVOLVED] = 0
    todo = declared
    while todo:
        c = lowest_set_bit(todo)
        todo &= todo - 1
        lane[L_COVER] &= ~((np.int64(st[c, S_ATTACKED] >= 0) & np.int64(st[c, S_ACTION] == ACTION_CHARGE)) << c)
        t = _engaging_attack(table, st, lane, c)
        if t >= 0:
            st[c, S_INVOLVED] |= np.int64(1) << t
            st[t, S_INVOLVED] |= np.int64(1) << c
    todo = declared
    while todo:
        c = lowest_set_bit(todo)
        todo &= todo - 1
        t = _engaging_attack(table, st, lane, c)
        if (t >= 0 and _has(lane[L_ACTIVE], c) & _has(lane[L_ACTIVE], t) and st[c, S_INVOLVED] == np.int64(1) << t
                and st[t, S_INVOLVED] == np.int64(1) << c and st[c, S_ENGAGED] != t):
            _release(st, c)
            _release(st, t)
            st[c, S_ENGAGED] = t
            st[t, S_ENGAGED] = c
    todo = lane[L_ACTIVE]
    while todo:
        _move(table, st, lane, rng, lowest_set_bit(todo), counts, d100_threshold)
        todo &= todo - 1
    return _outcome(lane, sides)


@njit(inline="always")
def _outcome_of_lane(winner):
    """A lockstep lane's WINNER as an outcome: 2 (nobody left) is DRAW; -1 (none) UNFINISHED."""
    return DRAW if winner == 2 else winner


@njit(inline="always")
def _bit_count(bits):
    n = 0
    while bits:
        bits &= bits - 1
        n += 1
    return n


@njit(inline="always")
def _finish(k, outcome, rounds, escaped, sides, counts, winner_out, rounds_out):
    """Records fight k's outcome (the winning side, DRAW or UNFINISHED) after ``rounds`` rounds, its
    combatants in ``escaped`` having fled (the reference's record)."""
    counts[F_ROUNDS] += rounds
    counts[FIGHT_COUNTS + rounds] += 1  # the rounds histogram follows the fixed counts
    counts[F_ESCAPES] += _bit_count(escaped & sides[0])
    counts[F_ESCAPES + 1] += _bit_count(escaped & sides[1])
    if outcome >= 0:
        counts[F_WINS + outcome] += 1
        counts[F_WINS_BY_FLIGHT + outcome] += np.int64((escaped & sides[1 - outcome]) != 0)
    elif outcome == DRAW:
        counts[F_DRAWS] += 1
    else:
        counts[F_UNFINISHED] += 1
    if winner_out.shape[0]:
        winner_out[k] = outcome
    if rounds_out.shape[0]:
        rounds_out[k] = rounds


@njit
def _fight_kernel(seed, start, count, table, passes, max_rounds, ambush_side, counts, winner_out, rounds_out):
    """Fights start..start+count-1: in the lockstep lanes (fight_lanes_nb.py) on a CPU where they pay
    (LOCKSTEP_CPU), when there are enough of them and the table fits the lanes (at most
    LOCKSTEP_FIGHTERS combatants), else in the scalar lanes (_fight_scalar). Either gives the
    reference's fights."""
    if LOCKSTEP_CPU and count >= LOCKSTEP_MIN_FIGHTS and fight_lanes_nb.fits(table, passes, max_rounds):
        fight_lanes_nb.fight_lockstep(seed, start, count, table, passes, max_rounds, ambush_side, counts, winner_out,
                                      rounds_out)
    else:
        _fight_scalar(seed, start, count, table, passes, max_rounds, ambush_side, counts, winner_out, rounds_out)


@njit
def _fight_scalar(seed, start, count, table, passes, max_rounds, ambush_side, counts, winner_out, rounds_out):
    """Any table (at most MAX_FIGHTERS combatants): fights start..start+count-1 in FIGHT_LANES lanes
    advanced one pass per lane per sweep; a lane whose fight ends starts the next fight index at
    once. Fight i uses item stream i only, and every count is a sum, so the results equal the
    reference's fight-by-fight loop.

    The lanes are compiled without Numba's runtime (``_nrt=False``, as Numba compiles its own hot
    string helpers), so no array is reference counted in them: even on borrowed arrays
    (_numba.borrow) every inlined helper's array arguments cost an indirect call each on entry
    and on exit, about 14 calls a declaration or a resolution (A/B in one process, the former
    lanes: 108 -> 75 ns an attack). Every helper is inlined: the seven-scalar calls of separate
    helpers cost most of the rest (as in the RL step twins)."""
    m = table.shape[0]
    if m > MAX_FIGHTERS:
        raise ValueError("at most 64 combatants")
    rng = np.zeros((FIGHT_LANES, AHEAD_SIZE), dtype=np.uint64)
    st = np.zeros((FIGHT_LANES, m, S_FIELDS), dtype=np.int64)
    lane = np.zeros((FIGHT_LANES, L_FIELDS), dtype=np.int64)
    ambushers = np.zeros(m, dtype=np.int64)
    sides = np.zeros(2, dtype=np.int64)
    policy = np.zeros((m, 2, D100 + 1), dtype=np.int8)
    _fight_lanes(seed, start, count, table, passes, max_rounds, ambush_side, counts, winner_out, rounds_out, rng,
                 st, lane, ambushers, sides, policy)


@njit(_nrt=False)
def _fight_lanes(seed, start, count, table, passes, max_rounds, ambush_side, counts, winner_out, rounds_out, rng,
                 st, lane, ambushers, sides, policy):
    k0, k1 = seed_key(seed)
    m = table.shape[0]
    lanes = FIGHT_LANES
    # policy[c, engaged, roll]: combatant c's action for policy roll 1..100, not engaged or engaged
    # (the scripted policy's choice and the overrides that depend on being engaged; one load in
    # _declare, not a loop over the bounds).
    for c in range(m):
        for engaged in range(2):
            for roll in range(1, D100 + 1):
                # The first action whose cumulative bound is >= the roll (layout.POLICY_ACTIONS is
                # ATTACK..TAKE_COVER in order; the last bound is 100).
                choice = 0
                while roll > table[c, C_POLICY + choice]:
                    choice += 1
                action = ACTION_ATTACK + choice
                if action == ACTION_FLEE and engaged:
                    action = ACTION_DISENGAGE
                elif action == ACTION_DISENGAGE and not engaged:
                    action = ACTION_ATTACK
                policy[c, engaged, roll] = action
    ambusher_count = 0
    for c in range(m):
        sides[table[c, C_SIDE]] |= np.int64(1) << c
        if table[c, C_SIDE] == ambush_side:
            ambushers[ambusher_count] = c
            ambusher_count += 1
    sides_attack = np.uint64(ATTACK_SIDES)
    threshold_attack = np.uint64(rejection_threshold(sides_attack))
    d100_threshold = np.uint64(rejection_threshold(np.uint64(D100)))
    # A fight with no pass at all (passes or max_rounds 0; the API never asks for one) is a draw
    # after max_rounds rounds, as in the reference.
    empty = passes <= 0 or max_rounds <= 0
    next_fight = 0
    running = 0
    for j in range(lanes):
        lane[j, L_ITEM] = -1
    # Sweeps: each running lane plays one pass; ended lanes take the next fight index.
    while True:
        for j in range(lanes):
            k = lane[j, L_ITEM]
            if k >= 0:
                round_number = lane[j, L_ROUND]
                pass_number = lane[j, L_PASS]
                outcome = _one_pass(table, policy, st[j], lane[j], rng[j], sides, round_number, pass_number,
                                    counts, sides_attack, threshold_attack, d100_threshold)
                if outcome != UNFINISHED:
                    _finish(k, outcome, round_number, lane[j, L_ESCAPED], sides, counts, winner_out, rounds_out)
                    k = -1
                elif pass_number < passes:
                    lane[j, L_PASS] = pass_number + 1
                elif round_number < max_rounds:
                    lane[j, L_ROUND] = round_number + 1
                    lane[j, L_PASS] = 1
                else:
                    _finish(k, UNFINISHED, max_rounds, lane[j, L_ESCAPED], sides, counts, winner_out, rounds_out)
                    k = -1
            while k < 0 and next_fight < count:
                k = next_fight
                next_fight += 1
                _begin(table, st[j], lane[j], rng[j], sides, k0, k1, start + k, m, ambush_side, ambushers,
                       ambusher_count, counts, d100_threshold)
                if empty:
                    _finish(k, UNFINISHED, max(max_rounds, 0), 0, sides, counts, winner_out, rounds_out)
                    k = -1
                else:
                    lane[j, L_ROUND] = 1
                    lane[j, L_PASS] = 1
            if k >= 0 and lane[j, L_ITEM] < 0:
                running += 1
            elif k < 0 and lane[j, L_ITEM] >= 0:
                running -= 1
            lane[j, L_ITEM] = k
        if running == 0 and next_fight >= count:
            break


# The registry's entry points. Numba types a Python int seed as int64 on the first call and then
# cannot take a seed of 2**63 or more ("int too big to convert"); passing np.uint64 fixes the type.
def attack(seed, start, count, full_skill, lethality, serious, nonlethal, lethality2, serious2, nonlethal2,
           weapons, counts, tier_out, wound_out, wound2_out):
    """Attacks with damage; the reference is combatsim.d100.reference.attack."""
    _attack_kernel(np.uint64(seed), np.int64(start), np.int64(count), full_skill, lethality, serious, nonlethal,
            lethality2, serious2, nonlethal2, weapons, counts, tier_out, wound_out, wound2_out)


def fight(seed, start, count, table, passes, max_rounds, ambush_side, counts, winner_out, rounds_out):
    """Fights; the reference is combatsim.d100.reference.fight."""
    _fight_kernel(np.uint64(seed), np.int64(start), np.int64(count), table, np.int64(passes), np.int64(max_rounds),
           np.int64(ambush_side), counts, winner_out, rounds_out)


# The lockstep lanes use this module's helpers: imported after them, as a module (either of the two
# may be imported first).
from . import fight_lanes_nb  # noqa: E402
