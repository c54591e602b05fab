# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""d100 kernels for Cython; the reference is combatsim.d100.reference (layout: docs/d100.md).

Each attack's outcome is the engine's (combatsim.d100.engine.attack_outcome, the one source),
included from kernels/d100/kernel_rules.pxi, which setup.py writes from the engine. The fights are
the engine's too: its Cython build's fight, or the vector lanes (fight_lanes.h), whose fights start
with the engine's ambush contests (ambush_contests, included likewise)."""
import numpy as np

from combatsim.d100 import engine
from combatsim.engine import engine_kernels

from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t, uintptr_t
from libc.string cimport memset

from rng cimport (
    AHEAD_WORDS,
    DOMAIN_DENSE,
    Stream,
    Words,
    dense_block,
    dense_die,
    dense_die_in,
    rejection_threshold,
    stream_bounded,
    stream_die,
    stream_start,
)

# The engine's rules (attack_outcome, tier_bars, damage_bars, the counting passes' attack_tallies,
# tally_counts, word_bar and word_tallies, ambush_contests, and what they call) with the constants
# they and this module read (the engine's KERNEL_CONSTANTS: the wound severities and the layout).
include "kernel_rules.pxi"

cdef enum:
    # Blocks per tile: a tile whose fast pass saw a rejected word has those words fixed exactly.
    TILE_BLOCKS = 96

ctypedef struct Bars:
    # The tier bars (tier_bars) and each weapon's damage bars (damage_bars): a roll <= bar is in.
    int64_t critical
    int64_t hard
    int64_t success
    int64_t critical_failure
    int64_t lethal1
    int64_t worse1
    int64_t lethal2
    int64_t worse2
    int64_t two


ctypedef (int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t) Tallies


cdef inline void _add(int64_t* totals, int64_t sign, Tallies tallies) noexcept nogil:
    # One attack's tallies (the engine's attack_tallies or word_tallies), ``sign`` times.
    totals[0] += sign * tallies[0]
    totals[1] += sign * tallies[1]
    totals[2] += sign * tallies[2]
    totals[3] += sign * tallies[3]
    totals[4] += sign * tallies[4]
    totals[5] += sign * tallies[5]
    totals[6] += sign * tallies[6]
    totals[7] += sign * tallies[7]
    totals[8] += sign * tallies[8]
    totals[9] += sign * tallies[9]


cdef inline void _tally(int64_t value, const Bars* b, int64_t* t) noexcept nogil:
    # One attack's tallies from its 0-based value.
    _add(t, 1, attack_tallies(value, b.critical, b.hard, b.success, b.critical_failure, b.lethal1, b.worse1,
                              b.lethal2, b.worse2, b.two))


cdef extern from "word_tally.h" nogil:
    # The bars as thresholds on the 32-bit words themselves (the engine's word_bar; docs/kernels.md,
    # "The fast paths' arithmetic"): attack digit < B  <=>  w < ceil(B 2^32 / 100); damage digit < B
    # <=>  r1 (or r2) < the same.
    ctypedef struct WordBars "D100WordBars":
        uint32_t critical
        uint32_t hard
        uint32_t success
        uint32_t critical_failure
        uint32_t lethal1
        uint32_t worse1
        uint32_t lethal2
        uint32_t worse2
        uint32_t two
    # The ten tallies of a run of words and its rejected words (target clones by the CPU: clones.h).
    int d100_word_tally(const uint32_t* words, int64_t n, const WordBars* b, uint32_t threshold,
                         uint32_t* tallies)


cdef void _word_bars(const Bars* b, WordBars* wb) noexcept nogil:
    wb.critical = <uint32_t>word_bar(b.critical)
    wb.hard = <uint32_t>word_bar(b.hard)
    wb.success = <uint32_t>word_bar(b.success)
    wb.critical_failure = <uint32_t>word_bar(b.critical_failure)
    wb.lethal1 = <uint32_t>word_bar(b.lethal1)
    wb.worse1 = <uint32_t>word_bar(b.worse1)
    wb.lethal2 = <uint32_t>word_bar(b.lethal2)
    wb.worse2 = <uint32_t>word_bar(b.worse2)
    wb.two = <uint32_t>b.two


cdef extern from "philox.h" nogil:
    # The words of dense blocks in block order, twelve blocks a step in AVX2 lanes where the CPU
    # has it (rng.pxd's block(), lane-wise).
    void philox_dense_words(uint32_t k0, uint32_t k1, uint32_t domain, int64_t first, int64_t count,
                            uint32_t* out)


cdef int64_t _fast_tile(uint32_t k0, uint32_t k1, int64_t first_block, int64_t last_block, const WordBars* b,
                        uint32_t threshold, int64_t* totals, uint32_t* buffer) noexcept nogil:
    # Tallies over whole dense blocks; returns the rejected words, fixed by the caller. Two
    # passes: Philox into ``buffer``, then word_tally.h's branch-free tally over it.
    cdef uint32_t tallies[11]
    cdef int j
    philox_dense_words(k0, k1, DOMAIN_DENSE, first_block, last_block - first_block, buffer)
    d100_word_tally(buffer, 4 * (last_block - first_block), b, threshold, tallies)
    for j in range(10):
        totals[j] += tallies[j]
    return tallies[10]


cdef void _uniform_attacks(uint64_t seed, int64_t start, int64_t count, const Bars* b,
                           int64_t[::1] counts) noexcept nogil:
    cdef uint32_t threshold = rejection_threshold(ATTACK_SIDES)
    cdef uint32_t k0 = <uint32_t>seed, k1 = <uint32_t>(seed >> 32)
    cdef Stream stream
    cdef int64_t totals[10]
    cdef int64_t end = start + count, first_block, last_block, tile, tile_end, i
    cdef int j
    cdef uint32_t word
    cdef uint64_t product
    cdef WordBars wb
    cdef uint32_t buffer[4 * TILE_BLOCKS]
    _word_bars(b, &wb)
    for j in range(10):
        totals[j] = 0
    first_block = (start + 3) >> 2
    last_block = max(first_block, end >> 2)
    # Items outside whole blocks (at most 3 at each end) go one by one.
    for i in range(start, min(end, first_block * 4)):
        _tally(dense_die(&stream, seed, <uint64_t>i, ATTACK_SIDES, threshold) - 1, b, totals)
    for i in range(max(last_block * 4, start), end):
        _tally(dense_die(&stream, seed, <uint64_t>i, ATTACK_SIDES, threshold) - 1, b, totals)
    tile = first_block
    while tile < last_block:
        tile_end = min(tile + TILE_BLOCKS, last_block)
        if _fast_tile(k0, k1, tile, tile_end, &wb, threshold, totals, buffer):
            # Replace each rejected word's fast tally with its exact value (retry domain); the
            # buffer still holds the tile's words, item tile * 4 + j at j.
            for j in range(4 * (tile_end - tile)):
                word = buffer[j]
                product = <uint64_t>word * ATTACK_SIDES
                if <uint32_t>product < threshold:
                    # word_tally.h tallied it as the engine's word_tallies does
                    _add(totals, -1, word_tallies(word, wb.critical, wb.hard, wb.success, wb.critical_failure,
                                                  wb.lethal1, wb.worse1, wb.lethal2, wb.worse2, wb.two))
                    stream_start(&stream, seed, <uint64_t>(tile * 4 + j))
                    _tally(stream_bounded(&stream, word, ATTACK_SIDES, threshold), b, totals)
        tile = tile_end
    tally_counts(counts, count, b.two, totals[0], totals[1], totals[2], totals[3], totals[4], totals[5], totals[6],
                 totals[7], totals[8], totals[9])


def attack(uint64_t seed, int64_t start, int64_t count, const int64_t[::1] full_skill,
           const int64_t[::1] lethality, const int64_t[::1] serious, const int64_t[::1] nonlethal,
           const int64_t[::1] lethality2, const int64_t[::1] serious2, const int64_t[::1] nonlethal2,
           const int64_t[::1] weapons, int64_t[::1] counts, int8_t[::1] tier_out, int8_t[::1] wound_out,
           int8_t[::1] wound2_out):
    cdef uint32_t threshold = rejection_threshold(ATTACK_SIDES)
    cdef Stream stream
    cdef Bars b
    cdef int64_t k, value, tier, wound, wound2
    cdef Words words
    cdef bint uniform = (full_skill.shape[0] == 1 and lethality.shape[0] == 1 and serious.shape[0] == 1
                         and nonlethal.shape[0] == 1 and lethality2.shape[0] == 1 and serious2.shape[0] == 1
                         and nonlethal2.shape[0] == 1 and weapons.shape[0] == 1)
    cdef bint keep = tier_out.shape[0] > 0 or wound_out.shape[0] > 0 or wound2_out.shape[0] > 0
    if uniform and not keep:
        b.critical, b.hard, b.success, b.critical_failure = tier_bars(full_skill[0])
        b.lethal1, b.worse1 = damage_bars(lethality[0], serious[0], nonlethal[0])
        b.lethal2, b.worse2 = damage_bars(lethality2[0], serious2[0], nonlethal2[0])
        b.two = weapons[0] == 2
        with nogil:
            _uniform_attacks(seed, start, count, &b, counts)
        return
    with nogil:
        for k in range(count):
            if k == 0 or ((start + k) & 3) == 0:  # one dense block serves four attacks
                words = dense_block(seed, <uint64_t>(start + k))
            value = dense_die_in(&stream, seed, <uint64_t>(start + k), words, ATTACK_SIDES, threshold)
            tier, wound, wound2 = attack_outcome(
                value - 1, full_skill[k if full_skill.shape[0] > 1 else 0],
                lethality[k if lethality.shape[0] > 1 else 0], serious[k if serious.shape[0] > 1 else 0],
                nonlethal[k if nonlethal.shape[0] > 1 else 0], lethality2[k if lethality2.shape[0] > 1 else 0],
                serious2[k if serious2.shape[0] > 1 else 0], nonlethal2[k if nonlethal2.shape[0] > 1 else 0],
                weapons[k if weapons.shape[0] > 1 else 0])
            count_attack(counts, tier, wound, wound2)
            if tier_out.shape[0]:
                tier_out[k] = <int8_t>tier
            if wound_out.shape[0]:
                wound_out[k] = <int8_t>wound
            if wound2_out.shape[0]:
                wound2_out[k] = <int8_t>wound2


cdef class OneAttack:
    """One prepared attack (combatsim.d100.Attack): ``resolve(seed, index)`` is item ``index`` of
    ``attack`` with these parameters, as (tier, wound, second_wound). Callers validate."""

    cdef int64_t full_skill, lethality, serious, nonlethal, lethality2, serious2, nonlethal2, weapons

    def __cinit__(self, int64_t full_skill, int64_t lethality, int64_t serious, int64_t nonlethal,
                  int64_t lethality2, int64_t serious2, int64_t nonlethal2, int64_t weapons):
        self.full_skill = full_skill
        self.lethality = lethality
        self.serious = serious
        self.nonlethal = nonlethal
        self.lethality2 = lethality2
        self.serious2 = serious2
        self.nonlethal2 = nonlethal2
        self.weapons = weapons

    def resolve(self, uint64_t seed, int64_t index):
        cdef Stream stream
        cdef int64_t value = dense_die(&stream, seed, <uint64_t>index, ATTACK_SIDES, rejection_threshold(ATTACK_SIDES))
        return attack_outcome(value - 1, self.full_skill, self.lethality, self.serious, self.nonlethal,
                              self.lethality2, self.serious2, self.nonlethal2, self.weapons)


# ---------------------------------------------------------------------------------------------
# Fights. In lockstep vector lanes (fight_lanes.h) where they pay and take the table; else the
# engine's own fight (combatsim.d100.engine.fight, the reference) as its Cython build. A lane's
# fight starts with the engine's ambush contests (ambush_contests, from kernel_rules.pxi).
# Combatant c is bit c of the lanes' masks.
# ---------------------------------------------------------------------------------------------
cdef extern from * nogil:
    # The kernels build with GCC or Clang only (clones.h, fight_lanes.h): their builtins.
    int lowest_bit "__builtin_ctzll"(unsigned long long x)  # of a nonzero word
    int bit_count "__builtin_popcountll"(unsigned long long x)


cdef inline void _finish(int64_t k, int64_t outcome, int64_t rounds, uint64_t escaped, uint64_t active,
                         const uint32_t* sides, int64_t standing_at, int64_t* local, int64_t[::1] counts,
                         int8_t[::1] winner_out, int32_t[::1] rounds_out) noexcept nogil:
    # Records fight k's outcome (the winning side, DRAW or UNFINISHED) after ``rounds`` rounds, its
    # combatants in ``escaped`` having fled and those in ``active`` still standing (the reference's
    # record: their counts from ``standing_at``, after the rounds histogram).
    local[F_ROUNDS] += rounds
    counts[FIGHT_COUNTS + rounds] += 1  # the rounds histogram follows the fixed counts
    while active:
        counts[standing_at + lowest_bit(active)] += 1
        active &= active - 1
    local[F_ESCAPES] += bit_count(escaped & sides[0])
    local[F_ESCAPES + 1] += bit_count(escaped & sides[1])
    if outcome >= 0:
        local[F_WINS + outcome] += 1
        local[F_WINS_BY_FLIGHT + outcome] += (escaped & sides[1 - outcome]) != 0
    elif outcome == WINNER_DRAW:
        local[F_DRAWS] += 1
    else:
        local[F_UNFINISHED] += 1
    if winner_out.shape[0]:
        winner_out[k] = <int8_t>outcome
    if rounds_out.shape[0]:
        rounds_out[k] = <int32_t>rounds


cdef extern from "fight_lanes.h" nogil:
    # Fights in lockstep lanes (its notes): the fast path for up to D100F_MAX combatants.
    enum:
        D100F_LANES
        D100F_MAX
        D100F_COUNTS
        D100F_LANE_WORDS
        D100F_COUNT_PASSES
        D100F_NARROW_MAX
        # the layout's numbers, restated in C (LANE_LAYOUT below; a test compares them)
        D100F_NONE
        D100F_ATTACK
        D100F_QUICK_ATTACK
        D100F_DEFEND
        D100F_FLEE
        D100F_PRESS
        D100F_DISENGAGE
        D100F_CHARGE
        D100F_TAKE_COVER
        D100F_TOGGLE_DUAL_WIELD
        D100F_ATTACKS
        D100F_LETHAL
        D100F_SERIOUS
        D100F_FLESH
        D100F_INSTANT_DEATH
        D100F_ESCALATED_SERIOUS
        D100F_ESCALATED_LETHAL
        D100F_ATTACK_SIDES
        D100F_ATTACK_REJECT
        D100F_D100_REJECT
        D100F_D100
        D100F_TARGET_CAP
        D100F_FLEE_STEP
        D100F_FLESH_PER_SERIOUS
        D100F_SERIOUS_PER_LETHAL
    ctypedef struct D100FightTable:
        int32_t m, passes, max_rounds
        uint32_t k0, k1
        uint32_t sides[2]
        uint32_t armour1, armour2
        uint32_t opponents[D100F_MAX]
        int32_t side[D100F_MAX]
        int32_t ranged[D100F_MAX]
        int32_t dual_allowed[D100F_MAX]
        int32_t flee_base[D100F_MAX]
        int32_t deadly[2][D100F_MAX]
        int32_t attack[D100F_MAX][5]
        int32_t damage[D100F_MAX][12]
        int32_t policy[D100F_MAX][8]
        int32_t press[D100F_MAX][5]
    ctypedef struct D100FightRun:
        pass
    int d100f_narrow_allowed
    void d100f_run_begin(D100FightRun* r, const D100FightTable* k)
    void d100f_run_load(D100FightRun* r, const D100FightTable* k, int i, uint64_t index, uint64_t retries,
                        const uint32_t* words, int32_t n, uint32_t next_block, uint32_t surprised)
    void d100f_run_idle(D100FightRun* r, int i)
    int32_t d100f_run_pass(D100FightRun* r, const D100FightTable* k)
    void d100f_run_take_counts(D100FightRun* r, int64_t* counts)
    const uint64_t* d100f_run_ended_bits(const D100FightRun* r)
    int32_t d100f_run_winner(const D100FightRun* r, int i)
    int32_t d100f_run_round(const D100FightRun* r, int i)
    uint32_t d100f_run_escaped(const D100FightRun* r, int i)
    uint32_t d100f_run_active(const D100FightRun* r, int i)
    int d100f_lanes_pay()

cdef enum:
    # Fewer fights than this in a call go to the engine's fight: every pass costs the lanes' loops
    # whatever the fights in them, so fewer fights than lanes pay less than the engine.
    LOCKSTEP_MIN_FIGHTS = D100F_LANES

#: The lockstep path's limits, for the tests: the most combatants it takes, its lanes and the
#: fewest fights a call gives it (whether the lanes run at all: _lockstep_runs).
lockstep_fighters = D100F_MAX
lockstep_lanes = D100F_LANES
lockstep_min_fights = LOCKSTEP_MIN_FIGHTS
#: The most combatants of the int16 lanes (x86-64-v4 clone only; fight_lanes.h, d100f_narrow_fits).
lockstep_narrow_fighters = D100F_NARROW_MAX


#: fight_lanes.h's restatement of the layout, by the layout's and the engine's names: the actions
#: (numbered as the policy columns), the lanes' counts (offsets from F_ATTACKS), the dice it draws,
#: and the flee rule's and the wound escalation's numbers.
LANE_LAYOUT = {
    "ACTION_NONE": D100F_NONE, "ACTION_ATTACK": D100F_ATTACK, "ACTION_QUICK_ATTACK": D100F_QUICK_ATTACK,
    "ACTION_DEFEND": D100F_DEFEND, "ACTION_FLEE": D100F_FLEE, "ACTION_PRESS": D100F_PRESS,
    "ACTION_DISENGAGE": D100F_DISENGAGE, "ACTION_CHARGE": D100F_CHARGE, "ACTION_TAKE_COVER": D100F_TAKE_COVER,
    "ACTION_TOGGLE_DUAL_WIELD": D100F_TOGGLE_DUAL_WIELD,
    "F_ATTACKS": D100F_ATTACKS, "F_LETHAL": D100F_LETHAL, "F_SERIOUS": D100F_SERIOUS, "F_FLESH": D100F_FLESH,
    "F_INSTANT_DEATH": D100F_INSTANT_DEATH, "F_ESCALATED_SERIOUS": D100F_ESCALATED_SERIOUS,
    "F_ESCALATED_LETHAL": D100F_ESCALATED_LETHAL,
    "ATTACK_SIDES": D100F_ATTACK_SIDES, "ATTACK_REJECT": D100F_ATTACK_REJECT, "D100_REJECT": D100F_D100_REJECT,
    "D100": D100F_D100, "TARGET_CAP": D100F_TARGET_CAP, "FLEE_STEP": D100F_FLEE_STEP,
    "FLESH_PER_SERIOUS": D100F_FLESH_PER_SERIOUS, "SERIOUS_PER_LETHAL": D100F_SERIOUS_PER_LETHAL,
}


def _lockstep_runs():
    # Whether large calls play in the lanes now (the level of clones.h: AVX2 or x86-64-v4).
    return bool(d100f_lanes_pay())


def _lockstep_narrow(bint allowed):
    # Lets a test turn the int16 lanes off (fight_lanes.h, d100f_narrow_fits), so that the int32
    # lanes run small tables too.
    global d100f_narrow_allowed
    d100f_narrow_allowed = allowed


cdef enum:
    # Values the lanes keep in int32 and compare or add in small steps.
    LANE_VALUE_LIMIT = 1 << 20


cdef inline bint _in_lane_range(const int64_t* row, int64_t first, int64_t end) noexcept nogil:
    # Whether row[first .. end - 1] all lie within the lanes' int32 steps.
    cdef int64_t j
    for j in range(first, end):
        if not -LANE_VALUE_LIMIT <= row[j] <= LANE_VALUE_LIMIT:
            return False
    return True


cdef inline int32_t _bar_byte(int64_t bar) noexcept nogil:
    # A bar that a roll - 1 of 0..99 is compared below, as 0..100: the same answers for every roll.
    return <int32_t>min(max(bar, 0), 100)


cdef bint _lane_table(const int64_t[:, ::1] table, int64_t passes, int64_t max_rounds, uint64_t seed,
                      D100FightTable* k) noexcept nogil:
    # The table as the lanes read it; False when the lanes do not take it (the engine's fight
    # does): too many combatants, a side without any, flags that are not 0/1, attack bars or policy
    # bounds that do not ascend (the lanes read only the critical and success bars, and count the
    # bounds below the policy roll), values outside int32 steps. api.fight_table's tables pass.
    cdef int64_t m = table.shape[0], c, j, step, side
    cdef const int64_t* row
    if m > D100F_MAX or passes < 1 or max_rounds < 1 or passes > LANE_VALUE_LIMIT or max_rounds > LANE_VALUE_LIMIT:
        return False
    memset(k, 0, sizeof(D100FightTable))
    k.m = <int32_t>m
    k.passes = <int32_t>passes
    k.max_rounds = <int32_t>max_rounds
    k.k0 = <uint32_t>seed
    k.k1 = <uint32_t>(seed >> 32)
    for c in range(m):
        row = &table[c, 0]
        for j in range(C_DUAL_ALLOWED + 1):
            if j != C_ARMOUR and (row[j] < 0 or row[j] > 1):
                return False
        if row[C_ARMOUR] < 0 or row[C_ARMOUR] > 2 or row[C_NONLETHAL] & ~1 or row[C_NONLETHAL + 1] & ~1:
            return False
        if not (_in_lane_range(row, C_FLEE_BASE, C_AMBUSH_ATTACK) and _in_lane_range(row, C_ATTACK, C_NONLETHAL)
                and _in_lane_range(row, C_DAMAGE, FIELDS)):
            return False
        if row[C_POLICY + 7] < D100:
            return False
        for j in range(7):
            if row[C_POLICY + j] > row[C_POLICY + j + 1]:
                return False
        for step in range(5):
            for j in range(3):
                if row[C_ATTACK + 4 * step + j] > row[C_ATTACK + 4 * step + j + 1]:
                    return False
            k.attack[c][step] = _bar_byte(row[C_ATTACK + 4 * step]) | _bar_byte(row[C_ATTACK + 4 * step + 2]) << 8
        side = row[C_SIDE]
        k.sides[side] |= (<uint32_t>1) << c
        k.armour1 |= <uint32_t>((row[C_ARMOUR] & 1) << c)
        k.armour2 |= <uint32_t>((row[C_ARMOUR] >> 1) << c)
        k.side[c] = <int32_t>side
        k.ranged[c] = <int32_t>row[C_RANGED]
        k.dual_allowed[c] = <int32_t>row[C_DUAL_ALLOWED]
        k.flee_base[c] = <int32_t>row[C_FLEE_BASE]
        k.deadly[0][c] = <int32_t>(1 - row[C_NONLETHAL])
        k.deadly[1][c] = <int32_t>(1 - row[C_NONLETHAL + 1])
        for j in range(12):
            k.damage[c][j] = (_bar_byte(row[C_DAMAGE + 2 * j]) | _bar_byte(row[C_DAMAGE + 2 * j + 1]) << 8
                              | _bar_byte(row[C_DAMAGE + 24 + 2 * j]) << 16 | _bar_byte(row[C_DAMAGE + 24 + 2 * j + 1]) << 24)
        for j in range(8):
            k.policy[c][j] = <int32_t>row[C_POLICY + j]
        for j in range(5):
            k.press[c][j] = <int32_t>row[C_PRESS + j]
    if not k.sides[0] or not k.sides[1]:
        return False
    for c in range(m):
        k.opponents[c] = k.sides[1 - table[c, C_SIDE]]
    return True


cdef inline void _start_lane(D100FightRun* lanes, const D100FightTable* k, int j, uint64_t seed, int64_t index,
                             const int64_t[:, ::1] table, const int64_t[::1] config, int64_t[::1] scratch,
                             int64_t[::1] local) noexcept nogil:
    # Fight ``index``'s start, handed to lane j: without an ambush no word is read yet, and the lane
    # takes the fight as it is; with one, the engine's ambush contests roll the item stream's first
    # words (their surprised defenders into the state row ``scratch``, counted in ``local``), and
    # the lane goes on from where they stopped: the retries used, the unread words of the current
    # block, the blocks drawn, and the surprised bits.
    cdef Stream stream
    cdef int64_t m = table.shape[0], c, at
    cdef uint64_t used
    cdef uint32_t surprised = 0
    if config[G_AMBUSH_SIDE] < 0:
        d100f_run_load(lanes, k, j, <uint64_t>index, 0, &stream.words[0], 0, 0, 0)
        return
    stream_start(&stream, seed, <uint64_t>index)
    ambush_contests(table, config, scratch, local, &stream)
    for c in range(m):
        at = _at(M_SURPRISED, c, m)
        surprised |= <uint32_t>(scratch[at] != 0) << c
        scratch[at] = 0
    used = stream.used
    d100f_run_load(lanes, k, j, <uint64_t>index, stream.retries, &stream.words[used & (AHEAD_WORDS - 1)],
                   <int32_t>((4 - (used & 3)) & 3), <uint32_t>((used + 3) >> 2), surprised)


cdef void _lockstep_fights(const int64_t[:, ::1] table, const int64_t[::1] config, int64_t[::1] scratch,
                           const D100FightTable* k, D100FightRun* lanes, uint64_t seed, int64_t start,
                           int64_t count, int64_t standing_at, int64_t[::1] local,
                           int64_t[::1] counts, int8_t[::1] winner_out, int32_t[::1] rounds_out) noexcept nogil:
    # Fights start..start+count-1 in the lanes; each lane that ends a fight records it and starts
    # the next index. Every count is a sum, and fight i rolls only item stream i, so the order in
    # which lanes finish does not change any result.
    cdef int64_t item[D100F_LANES]
    cdef int64_t next_fight = 0, running = 0, sweeps = 0
    cdef uint64_t bits
    cdef int j, w
    d100f_run_begin(lanes, k)
    for j in range(D100F_LANES):
        item[j] = -1
        if next_fight < count:
            item[j] = next_fight
            _start_lane(lanes, k, j, seed, start + next_fight, table, config, scratch, local)
            next_fight += 1
            running += 1
        else:
            d100f_run_idle(lanes, j)
    while running:
        if d100f_run_pass(lanes, k):
            for w in range(D100F_LANE_WORDS):
                bits = d100f_run_ended_bits(lanes)[w]
                while bits:
                    j = <int>(64 * w + lowest_bit(bits))
                    bits &= bits - 1
                    _finish(item[j], d100f_run_winner(lanes, j), d100f_run_round(lanes, j), d100f_run_escaped(lanes, j),
                            d100f_run_active(lanes, j), k.sides, standing_at, &local[0], counts, winner_out,
                            rounds_out)
                    if next_fight < count:
                        item[j] = next_fight
                        _start_lane(lanes, k, j, seed, start + next_fight, table, config, scratch, local)
                        next_fight += 1
                    else:
                        item[j] = -1
                        d100f_run_idle(lanes, j)
                        running -= 1
        sweeps += 1
        if sweeps % D100F_COUNT_PASSES == 0:  # before a lane's 16-bit counts could overflow
            d100f_run_take_counts(lanes, &local[F_ATTACKS])
    d100f_run_take_counts(lanes, &local[F_ATTACKS])


def fight(uint64_t seed, int64_t start, int64_t count, const int64_t[:, ::1] table, int64_t passes,
          int64_t max_rounds, int64_t ambush_side, int64_t[::1] counts, int8_t[::1] winner_out,
          int32_t[::1] rounds_out):
    """Fights start..start+count-1 (the engine's ``fight``, whose signature and results these are).

    Up to D100F_MAX combatants and at least LOCKSTEP_MIN_FIGHTS fights, on a CPU with AVX2, and a
    table the lanes take (_lane_table): in lockstep vector lanes (fight_lanes.h, _lockstep_fights).
    Else the engine's own fight as its Cython build (combatsim.d100.engine, kernels/d100/engine_cy.pyx).
    Fight i uses item stream i only, and every count is a sum, so either way the results equal the
    reference's fight-by-fight loop."""
    cdef int64_t m = table.shape[0], j
    cdef D100FightTable lane_table
    cdef uint8_t[::1] lane_buffer
    cdef D100FightRun* lane_state
    cdef int64_t[::1] config, scratch, local
    if not (count >= LOCKSTEP_MIN_FIGHTS and d100f_lanes_pay()
            and _lane_table(table, passes, max_rounds, seed, &lane_table)):
        engine_kernels("combatsim.d100.engine", "cython").fight(seed, start, count, table, passes, max_rounds,
                                                                ambush_side, counts, winner_out, rounds_out)
        return
    config = engine.make_config(table, passes, max_rounds, ambush_side)
    scratch = np.zeros(engine.state_size(m), dtype=np.int64)  # the ambush's surprised defenders
    local = np.zeros(FIGHT_COUNTS, dtype=np.int64)
    lane_buffer = np.zeros(sizeof(D100FightRun) + 64, dtype=np.uint8)
    lane_state = <D100FightRun*>((<uintptr_t>&lane_buffer[0] + 63) & ~(<uintptr_t>63))
    with nogil:
        _lockstep_fights(table, config, scratch, &lane_table, lane_state, seed, start, count,
                         FIGHT_COUNTS + max_rounds + 1, local, counts, winner_out, rounds_out)
    for j in range(FIGHT_COUNTS):
        counts[j] += local[j]


include "clones.pxi"
