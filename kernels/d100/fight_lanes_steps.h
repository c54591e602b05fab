/* The lockstep lanes' state and steps (fight_lanes.h's notes), written once for two lane widths:
 * fight_lanes.h includes this file twice, with
 *   D100F_L, D100F_UL  the lane type, signed and unsigned (int32_t / int16_t),
 *   D100F_NARROW       0 for int32 lanes (up to D100F_MAX combatants), 1 for int16 lanes
 *                      (up to D100F_NARROW_MAX: their masks, wound fields and partner fields fit
 *                      16 bits, so a 512-bit vector holds 32 lanes, not 16),
 *   D100F_S            the state's type name, D100F_F(name) a function's name;
 * this file undefines them at its end.
 * What the widths lay out differently is in the D100F_W_* constants below; the steps are the
 * same code. GCC narrows a step's int arithmetic to 16-bit vector ops only where the result is
 * truncated to 16 bits and every shift amount is known below 16, hence the masks on the amounts. */

/* Combatant numbers in the lanes: a bit shift's amount (D100F_W_AT), the empty mask's lowest
 * bit (d100f_lowest), the fields of wounds and partners. */
#if D100F_NARROW
#define D100F_W_AT 15
/* (an empty mask's index, 15, reads and writes back combatant 7's flesh field unchanged: no
 * wound without an attack, and no attack on an empty side) */
#define D100F_W_FLESH_AT 7
#define D100F_W_FIELDS 4 /* 4-bit partner fields a row */
#define D100F_W_FIELD_ROW 2
#define D100F_W_PER_ROW 1 /* counts a row */
#define D100F_COUNT_ROWS D100F_COUNTS
#define D100F_W_DAMAGE_ROWS 2
/* Failed flees are counted up to this: from there on the flee target is D100F_TARGET_CAP for every
 * flee base the narrow lanes take (|base| <= D100F_NARROW_FLEE: d100f_narrow_fits), and the
 * count times D100F_FLEE_STEP fits 16 bits. */
#define D100F_W_FLEE_CAP 100
#else
#define D100F_W_AT 31
#define D100F_W_FLESH_AT 15
#define D100F_W_FIELDS 8
#define D100F_W_FIELD_ROW 3
#define D100F_W_PER_ROW 2
#define D100F_COUNT_ROWS ((D100F_COUNTS + 1) / 2)
#define D100F_W_DAMAGE_ROWS 1
/* (likewise for the flee bases the wide lanes take, |base| <= LANE_VALUE_LIMIT in _cy.pyx) */
#define D100F_W_FLEE_CAP (1 << 16)
#endif

typedef struct {
    D100F_UL active[D100F_LANES], cover[D100F_LANES], dual[D100F_LANES], defending[D100F_LANES];
    D100F_UL targeted[D100F_LANES], surprised[D100F_LANES], escaped[D100F_LANES];
    /* This batch's take-outs, landing when it ends; this pass's engaging attacks (charges, melee
     * attacks): who made one, who took one and who took several, and the attacker of each who
     * took one in 4-bit fields (as partners); each attacker's target. */
    D100F_UL struck[D100F_LANES], made[D100F_LANES], took[D100F_LANES], took_several[D100F_LANES];
    D100F_UL attackers[2][D100F_LANES];
    D100F_UL flesh[D100F_LANES], serious[D100F_LANES]; /* two bits a combatant, and one: above */
    /* Engagements are pairs: bit c of `engaged` says c has a partner, and the partner is c's four
     * bits in partners[c / D100F_W_FIELDS]: a shift for a per-lane combatant, not a select over
     * all of them, and releasing x clears two bits. */
    D100F_UL engaged[D100F_LANES], partners[2][D100F_LANES];
    /* This pass's declarations that other combatants' actions ask about (who pressed, who
     * disengaged), and who was in the fight and engaged while they declared. */
    D100F_UL pressers[D100F_LANES], disengagers[D100F_LANES], declared_engaged[D100F_LANES];
    D100F_L first_of_side[2][D100F_LANES]; /* the first of each side in the fight then */
    D100F_L first_left[2][D100F_LANES];    /* and after the quick attacks */
    D100F_L declared[D100F_MAX][D100F_LANES], failed_flee[D100F_MAX][D100F_LANES];
    D100F_L attack_target[D100F_MAX][D100F_LANES];
    /* running: a fight in the lane; winner: set when it ended this pass (the side, or D100F_NOBODY_LEFT);
     * ended: after the pass, the fight is over (decided or unfinished) and ``round`` is its
     * rounds. */
    D100F_L running[D100F_LANES], winner[D100F_LANES], ended[D100F_LANES], round[D100F_LANES], pass[D100F_LANES];
    /* ended as bits (lane i: bit i % 64 of word i / 64), for the caller to visit only those lanes. */
    uint64_t ended_bits[D100F_LANE_WORDS];
    D100F_L first[D100F_LANES];
    D100F_L pos[D100F_LANES], end[D100F_LANES];
    /* Int32 lanes: count 2 j in the low 16 bits of row j, count 2 j + 1 in the high, half the
     * rows to add to at each attack; int16 lanes: a count a row. An attack adds at most 2 to a
     * count, a pass at most 2 D100F_MAX, so the caller takes them (take_counts) at least every
     * D100F_COUNT_PASSES passes. */
    D100F_UL counts[D100F_COUNT_ROWS][D100F_LANES];
    uint64_t index[D100F_LANES], retries[D100F_LANES];
    uint32_t next_block[D100F_LANES];
    uint32_t words[D100F_LANES][D100F_CAP];
} D100F_S;

#if D100F_NARROW
/* The lowest set bit's index of a mask in 16-bit ops (the float exponent below would widen the
 * lanes to 32 bits): each index bit is whether the lowest bit lies in one of three or four bit
 * sets, (y & set) + 2^b - 1 >> b for y a power of two up to 2^b. `few` (a constant: the passes
 * specialised for m <= 4) takes masks of up to 7 bits (7 for an empty one) in three sets, else
 * up to 15 (15). One pass uses one of the two, so its empty masks' index is the same throughout. */
static inline D100F_L D100F_F(lowest)(D100F_UL x, int few) {
    if (few) {
        D100F_UL y = (D100F_UL)(x | 0x80u), low = (D100F_UL)(y & (0u - y));
        return (D100F_L)((((low & 0xAAu) + 0x7Fu) >> 7) | ((((low & 0xCCu) + 0x7Fu) >> 7) << 1) |
                         ((((low & 0xF0u) + 0x7Fu) >> 7) << 2));
    }
    D100F_UL y = (D100F_UL)(x | 0x8000u), low = (D100F_UL)(y & (0u - y));
    return (D100F_L)((((low & 0xAAAAu) + 0x7FFFu) >> 15) | ((((low & 0xCCCCu) + 0x7FFFu) >> 15) << 1) |
                     ((((low & 0xF0F0u) + 0x7FFFu) >> 15) << 2) | ((((low & 0xFF00u) + 0x7FFFu) >> 15) << 3));
}
#else
/* The index of the lowest set bit of a mask below 2^30 (30 for an empty one): the exponent of its
 * lowest bit as a float (a power of two converts exactly), a conversion and two integer ops where
 * a count of trailing zeros does not vectorise and a search by five masks took fifteen. */
static inline D100F_L D100F_F(lowest)(D100F_UL x, int few) {
    (void)few;
    x |= 1u << 30;
    float f = (float)(int32_t)(x & (0u - x));
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return (int32_t)(bits >> 23) - 127;
}
#endif

/* Each lane's word at its position + ahead, into out: the AVX2 gather instruction, eight lanes at
 * a time in both clones that run the lanes (d100f_lanes_pay), as GCC's own vector code for this
 * loop loads lane by lane. */
#ifdef D100F_GATHER_PATHS
__attribute__((target("avx2"))) static void D100F_F(gather_avx2)(const D100F_S *s, int32_t ahead, uint32_t *out) {
    const __m256i lanes = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(D100F_CAP));
    for (int i = 0; i < D100F_LANES; i += 8) {
        __m256i pos = sizeof(D100F_L) == 2 ? _mm256_cvtepi16_epi32(_mm_loadu_si128((const __m128i *)(s->pos + i)))
                                           : _mm256_loadu_si256((const __m256i *)(s->pos + i));
        __m256i at = _mm256_add_epi32(pos, _mm256_set1_epi32(i * D100F_CAP + ahead));
        _mm256_storeu_si256((__m256i *)(out + i),
                            _mm256_i32gather_epi32((const int *)s->words, _mm256_add_epi32(at, lanes), 4));
    }
}
#define D100F_GATHER D100F_F(gather_avx2)
#else
/* (a build without the lanes: this keeps the steps compiling) */
static void D100F_F(gather_scalar)(const D100F_S *s, int32_t ahead, uint32_t *out) {
    const uint32_t *words = &s->words[0][0];
    for (int i = 0; i < D100F_LANES; i++)
        out[i] = words[i * D100F_CAP + s->pos[i] + ahead];
}
#define D100F_GATHER D100F_F(gather_scalar)
#endif

/* Returns whether any lane's word is marked (d100f_marked). Inlined into each step, so that the
 * marks are checked in the clone's vectors. */
static inline __attribute__((always_inline)) int32_t D100F_F(gather)(const D100F_S *s, int32_t ahead, uint32_t *out) {
    int32_t marked = 0;
    D100F_GATHER(s, ahead, out);
    for (int i = 0; i < D100F_LANES; i++)
        marked |= d100f_marked(out[i]);
    return marked;
}

/* Flags of the lanes (0 or 1) as bits, lane i bit i % 64 of word i / 64. Apart from the loop that
 * sets the flags: the stores to a word a lane would keep that loop scalar. Each word in 32-bit
 * halves, whose shifts and ORs vectorise (64-bit ones did not). */
static inline __attribute__((always_inline)) void D100F_F(lane_bits)(const D100F_L *flags, uint64_t *bits) {
    for (int w = 0; w < D100F_LANE_WORDS; w++) {
        uint32_t half[2] = {0, 0};
        for (int h = 0; h < 2; h++)
            for (int i = 0; i < 32 && 64 * w + 32 * h + i < D100F_LANES; i++)
                half[h] |= (uint32_t)flags[64 * w + 32 * h + i] << i;
        bits[w] = half[0] | (uint64_t)half[1] << 32;
    }
}

/* Bit t of a mask, for a t per lane or the same in every lane. A test of mask & 1 << t against 0
 * instead became, for t = 0 (passes specialised by m: d100f_lanes_pass), a conversion to a 1-bit
 * boolean that GCC does not vectorise (that lane loop then ran scalar). */
static inline D100F_L D100F_F(bit)(D100F_UL mask, D100F_L t) { return (D100F_L)((mask >> (t & D100F_W_AT)) & 1); }

/* b where `on` (0 or 1), else a, by masks: GCC turns a select whose arm converts to float into a
 * branch (the conversion may trap, so it is not run where not needed), and the loop stays scalar. */
static inline D100F_L D100F_F(pick)(D100F_L a, D100F_L b, D100F_L on) { return (D100F_L)(a ^ ((a ^ b) & -on)); }

/* Does combatant c declare in lane i this pass (a surprised one sits out pass 1 of round 1)? */
static inline D100F_L D100F_F(declares)(const D100F_S *s, int32_t c, int i) {
    return s->running[i] & D100F_F(bit)(s->active[i], c) & ((s->first[i] & D100F_F(bit)(s->surprised[i], c)) ^ 1);
}

/* x's 4-bit field of the rows low, high (partners, attackers). Both rows are loaded and one
 * picked by a mask: a select between their addresses left GCC unsure what the lane loops' stores
 * overlap. */
static inline D100F_L D100F_F(field)(D100F_UL low, D100F_UL high, D100F_L x) {
    D100F_UL row = (D100F_UL)(low ^ ((low ^ high) & -((D100F_UL)(x >> D100F_W_FIELD_ROW) & 1)));
    return (D100F_L)((row >> ((x & (D100F_W_FIELDS - 1)) * 4)) & 15);
}

/* x's partner (meaningful while x is engaged). */
static inline D100F_L D100F_F(partner)(const D100F_S *s, int i, D100F_L x) {
    return D100F_F(field)(s->partners[0][i], s->partners[1][i], x);
}

/* The engaged bits that releasing x clears: its own, and its partner's while it has one. */
static inline D100F_UL D100F_F(released)(D100F_UL engaged, D100F_L x, D100F_L partner) {
    return (D100F_UL)((1u << (x & D100F_W_AT)) |
                      ((D100F_UL)-D100F_F(bit)(engaged, x) & (1u << (partner & D100F_W_AT))));
}

/* Lane i's word at q as a die of `sides`: itself, or when Lemire's method rejects it the item's
 * next accepted retry word (rng.pxd's stream_bounded), which replaces it. Its value is the
 * accepted product's, so the lanes work on it as on any word. */
static uint32_t D100F_F(accept)(D100F_S *s, const D100FightTable *k, int i, int32_t q, uint32_t sides) {
    uint32_t threshold = (0u - sides) % sides;
    uint32_t *word = &s->words[i][q];
    while (*word * sides < threshold)
        *word = philox_retry_word(k->k0, k->k1, s->index[i], s->retries[i]++);
    return *word;
}

/* The words of the lanes that `want` (0 or 1) at their positions, as dice of `sides` (a rejected
 * word replaced by its retry word: d100f_accept), into out; 0 for the others. For a step in which
 * few lanes roll (a quick attack, a flee), loads lane by lane beat a gather of every lane's word. */
static inline __attribute__((always_inline)) void D100F_F(fetch)(D100F_S *s, const D100FightTable *k,
                                                                 const D100F_L *want, uint32_t sides,
                                                                 uint32_t *out) {
    uint64_t bits[D100F_LANE_WORDS];
    D100F_F(lane_bits)(want, bits);
    memset(out, 0, D100F_LANES * sizeof *out);
    for (int w = 0; w < D100F_LANE_WORDS; w++)
        for (uint64_t b = bits[w]; b; b &= b - 1) {
            int i = 64 * w + __builtin_ctzll(b);
            out[i] = D100F_F(accept)(s, k, i, s->pos[i], sides);
        }
}

/* Lane i takes a fight that _begin started: item `index`, its stream's words from `words` on
 * (n of them, the next block `next_block`), `retries` retry words used, `surprised` combatants. */
static void D100F_F(lane_load)(D100F_S *s, const D100FightTable *k, int i, uint64_t index, uint64_t retries,
                               const uint32_t *words, int32_t n, uint32_t next_block, uint32_t surprised) {
    s->active[i] = (D100F_UL)(k->sides[0] | k->sides[1]);
    s->cover[i] = s->dual[i] = s->defending[i] = s->targeted[i] = 0;
    s->flesh[i] = s->serious[i] = 0;
    s->surprised[i] = (D100F_UL)surprised;
    s->escaped[i] = s->struck[i] = 0;
    s->engaged[i] = s->partners[0][i] = s->partners[1][i] = 0;
    for (int c = 0; c < k->m; c++)
        s->failed_flee[c][i] = 0;
    s->running[i] = 1;
    s->winner[i] = -1;
    s->ended[i] = 0;
    s->round[i] = 1;
    s->pass[i] = 1;
    s->index[i] = index;
    s->retries[i] = retries;
    s->next_block[i] = next_block;
    memcpy(s->words[i], words, (size_t)n * sizeof *words);
    s->pos[i] = 0;
    s->end[i] = (D100F_L)n;
}

/* Lane i holds no fight (no more to start). */
static void D100F_F(lane_idle)(D100F_S *s, int i) {
    s->running[i] = 0;
    s->ended[i] = 0;
    s->active[i] = 0;
    s->pos[i] = s->end[i] = 0;
}

/* Lane i keeps the words it has left at the front of its buffer and returns where its next draw
 * goes (block next_block[i] on, which it counts as drawn). */
static inline uint32_t *D100F_F(refill_at)(D100F_S *s, int i) {
    uint32_t *words = s->words[i];
    int32_t pos = s->pos[i], left = s->end[i] - pos;
    memmove(words, words + pos, (size_t)left * sizeof *words);
    s->next_block[i] += PHILOX_AHEAD_BLOCKS;
    s->pos[i] = 0;
    s->end[i] = (D100F_L)(left + D100F_DRAW);
    return words + left;
}

/* The lanes in `bits` draw their next words, two lanes a draw (philox_ahead_pair: at x86-64-v4
 * two lanes' chains keep the multiplier busier than one's). */
static void D100F_F(refill)(D100F_S *s, const D100FightTable *k, const uint64_t *bits) {
    uint64_t index[2];
    uint32_t first[2], *to[2];
    int held = 0;
    for (int w = 0; w < D100F_LANE_WORDS; w++)
        for (uint64_t b = bits[w]; b; b &= b - 1) {
            int i = 64 * w + __builtin_ctzll(b);
            index[held] = s->index[i];
            first[held] = s->next_block[i];
            to[held] = D100F_F(refill_at)(s, i);
            if (++held == 2) {
                philox_ahead_pair(k->k0, k->k1, index, first, to);
                held = 0;
            }
        }
    if (held)
        philox_ahead_blocks(k->k0, k->k1, index[0], first[0], to[0]);
}

/* Combatant c declares in every lane (the reference's declare). */
static inline __attribute__((always_inline)) void D100F_F(declare)(D100F_S *restrict s,
                                                                   const D100FightTable *restrict k, int32_t c,
                                                                   int few) {
    uint32_t word[D100F_LANES];
    if (D100F_F(gather)(s, 0, word))
        for (int i = 0; i < D100F_LANES; i++)
            if (d100f_marked(word[i]) && D100F_F(declares)(s, c, i))
                word[i] = D100F_F(accept)(s, k, i, s->pos[i], D100F_D100);
#if D100F_NARROW
    /* The bounds clamped to 0..100 (a roll of 1..100 is above them or not, as before), so that
     * the compares are 16-bit. */
    D100F_L bound[7];
    for (int j = 0; j < 7; j++)
        bound[j] = (D100F_L)d100f_clamp(k->policy[c][j], 0, D100F_D100);
#else
    const int32_t *bound = k->policy[c];
#endif
    const D100F_UL opponents = (D100F_UL)k->opponents[c];
    const D100F_L dual_allowed = (D100F_L)k->dual_allowed[c];
    const uint32_t hundred = d100f_hundred();
    for (int i = 0; i < D100F_LANES; i++) {
        D100F_L on = D100F_F(declares)(s, c, i);
        D100F_L roll = (D100F_L)(d100f_digit(word[i], hundred) + 1);
        /* The first action whose cumulative bound is >= the roll: the bounds below the roll, as
         * they ascend (the caller checks) and the last is 100. A chain of selects instead did
         * not vectorise (GCC turned it into selects of booleans). */
        D100F_L choice = 0;
#pragma GCC unroll 7
        for (int j = 0; j < 7; j++)
            choice += roll > bound[j];
        D100F_L engaged = D100F_F(bit)(s->engaged[i], c);
        D100F_L action = D100F_ATTACK + choice;
        /* The overrides as sums: as selects, GCC derived the compares below from them as
         * selects of booleans, which it does not vectorise. */
        action += -((action == D100F_FLEE) & engaged) & (D100F_DISENGAGE - D100F_FLEE);
        action -= -((action == D100F_DISENGAGE) & (engaged ^ 1)) & (D100F_DISENGAGE - D100F_ATTACK);
        action += -(dual_allowed & (D100F_F(bit)(s->dual[i], c) ^ 1)) & (D100F_TOGGLE_DUAL_WIELD - action);
        /* Both candidates computed, then picked: a load under the condition became a masked load
         * that GCC checked against the stores at run time. */
        D100F_L partner = D100F_F(partner)(s, i, c), first_opponent = D100F_F(lowest)(s->active[i] & opponents, few);
        D100F_L target = D100F_F(pick)(first_opponent, partner, engaged);
        s->targeted[i] |= (D100F_UL)((on & ((D100F_ATTACKING >> action) & 1)) << (target & D100F_W_AT));
        s->defending[i] |= (D100F_UL)((on & (action == D100F_DEFEND)) << c);
        s->pressers[i] |= (D100F_UL)((on & (action == D100F_PRESS)) << c);
        s->disengagers[i] |= (D100F_UL)((on & (action == D100F_DISENGAGE)) << c);
        s->declared[c][i] = on ? (D100F_L)(action << D100F_SHIFT | target) : D100F_NONE;
        s->pos[i] += on;
    }
}

/* One weapon's wound on a target whose deadly flesh and serious wounds are *flesh, *serious
 * (the engine's _wound); returns 1 when the target now has a lethal wound. */
static inline D100F_L D100F_F(wound)(D100F_L hit, D100F_L damage, D100F_L lethal_bar, D100F_L worse_bar,
                                     D100F_L critical, D100F_L deadly, D100F_L *flesh, D100F_L *serious,
                                     D100F_L *counts) {
    D100F_L lethal = hit & (damage < lethal_bar);
    D100F_L worse = hit & (damage < worse_bar);
    D100F_L serious_wound = worse & (lethal ^ 1), flesh_wound = hit & (worse ^ 1) & (lethal ^ 1);
    counts[D100F_LETHAL] += lethal;
    counts[D100F_INSTANT_DEATH] += lethal & critical;
    counts[D100F_SERIOUS] += serious_wound;
    counts[D100F_FLESH] += flesh_wound;
    /* A target holds 0..2 deadly flesh wounds and 0..1 serious ones, so 3 and 2 are the sums' top
     * bits: shifts, not compares (whose masks cost conversions back to 0/1 values). */
    D100F_L f = *flesh + (flesh_wound & deadly), to_serious = (f + 1) >> 2;
    D100F_L sw = *serious + serious_wound + to_serious, to_lethal = sw >> 1;
    *flesh = f & (to_serious - 1);
    *serious = sw & 1;
    counts[D100F_ESCALATED_SERIOUS] += to_serious;
    counts[D100F_ESCALATED_LETHAL] += to_lethal;
    return lethal | to_lethal;
}

/* x's 4-bit field of the rows *low, *high set to v where `on`. */
static inline void D100F_F(set_field)(D100F_UL *low, D100F_UL *high, D100F_L x, D100F_L v, D100F_L on) {
    D100F_UL shift = (D100F_UL)((x & (D100F_W_FIELDS - 1)) * 4), up = (D100F_UL)((x >> D100F_W_FIELD_ROW) & 1);
    D100F_UL in_high = (D100F_UL)-(D100F_UL)(on & up), in_low = (D100F_UL)-(D100F_UL)(on & (up ^ 1));
    D100F_UL field = (D100F_UL)(15u << shift), value = (D100F_UL)((v & 15) << shift);
    *low = (D100F_UL)((*low & ~(field & in_low)) | (value & in_low));
    *high = (D100F_UL)((*high & ~(field & in_high)) | (value & in_high));
}

/* Combatant x's partner field set to v where `on`. */
static inline void D100F_F(pair)(D100F_S *s, int i, D100F_L x, D100F_L v, D100F_L on) {
    D100F_UL low = s->partners[0][i], high = s->partners[1][i];
    D100F_F(set_field)(&low, &high, x, v, on);
    s->partners[0][i] = low;
    s->partners[1][i] = high;
}

/* Whether c attacks in lane i in this batch, and whom: in the quick batch its declared quick
 * attack or charge, on its declared target (in the fight at the start of the pass); in the
 * standard batch, if still in, its attack, or its press unless spent blocking a disengage, on its
 * declared target, or if that one went out the first opponent still in (none: no attack). A press
 * is spent when its target t declared a disengage from c: t disengaging was engaged, and targets
 * its partner then, which is c exactly when c too was engaged then (pairs). */
typedef struct {
    D100F_L attack, target;
} D100F_F(aim_t);

static inline D100F_F(aim_t) D100F_F(aim)(const D100F_S *s, int32_t c, int i, int quick, D100F_UL opponents,
                                          int32_t side, int few) {
    D100F_F(aim_t) aim;
    D100F_UL active = s->active[i];
    D100F_L decl = s->declared[c][i], act = decl >> D100F_SHIFT, declared_target = decl & 31;
    D100F_L on = s->running[i] & D100F_F(bit)(active, c);
    if (quick) {
        aim.attack = on & ((act == D100F_QUICK_ATTACK) | (act == D100F_CHARGE));
        aim.target = declared_target;
    } else {
        D100F_L blocked = (act == D100F_PRESS) & D100F_F(bit)(s->disengagers[i], declared_target) &
                          D100F_F(bit)(s->declared_engaged[i], c);
        /* The first opponent still in: the first of the other side after the quick attacks. */
        D100F_L first_opponent = D100F_F(pick)(s->first_left[1][i], s->first_left[0][i], (D100F_L)side);
        (void)few;
        aim.attack = on & ((act == D100F_ATTACK) | ((act == D100F_PRESS) & (blocked ^ 1))) & ((active & opponents) != 0);
        aim.target = D100F_F(pick)(first_opponent, declared_target, D100F_F(bit)(active, declared_target));
    }
    return aim;
}

/* Combatant c's attack of one batch (quick or standard) in every lane where it makes one (the
 * reference's attack_batch, one attacker): rolled against the state before the batch, since what
 * the batch changes of it lands at the batch's end (struck) or is not read by an attack (the
 * wounds: escalation depends only on their totals; the pairs). */
static inline __attribute__((always_inline)) void D100F_F(attack)(D100F_S *restrict s,
                                                                  const D100FightTable *restrict k, int32_t c,
                                                                  int few, int quick) {
    uint32_t word[D100F_LANES];
    D100F_L attacks[D100F_LANES], targets[D100F_LANES];
    const D100F_UL opponents = (D100F_UL)k->opponents[c];
    const int32_t side = k->side[c];
    for (int i = 0; i < D100F_LANES; i++) {
        D100F_F(aim_t) aim = D100F_F(aim)(s, c, i, quick, opponents, side, few);
        attacks[i] = aim.attack;
        targets[i] = aim.target;
    }
    if (quick) /* a fifth of the lanes: their words one by one */
        D100F_F(fetch)(s, k, attacks, D100F_ATTACK_SIDES, word);
    else if (D100F_F(gather)(s, 0, word))
        for (int i = 0; i < D100F_LANES; i++)
            if (d100f_marked(word[i]) && attacks[i])
                word[i] = D100F_F(accept)(s, k, i, s->pos[i], D100F_ATTACK_SIDES);
    const D100F_UL armour1 = (D100F_UL)k->armour1, armour2 = (D100F_UL)k->armour2;
    const D100F_L ranged = (D100F_L)k->ranged[c];
    const D100F_L deadly0 = (D100F_L)k->deadly[0][c], deadly1 = (D100F_L)k->deadly[1][c];
    /* Local copies of the tables the lanes read by a per-lane index: loads through k that GCC
     * cannot tell apart from the stores into s would need run-time alias checks. Each damage
     * entry is four bars (bytes); int16 lanes split it in two rows of two. */
    D100F_L attack_bars[5], damage_bars[D100F_W_DAMAGE_ROWS][12];
    for (int j = 0; j < 5; j++)
        attack_bars[j] = (D100F_L)k->attack[c][j];
    for (int r = 0; r < D100F_W_DAMAGE_ROWS; r++)
        for (int j = 0; j < 12; j++)
            damage_bars[r][j] = (D100F_L)((uint32_t)k->damage[c][j] >> (16 * r));
    const uint32_t hundred = d100f_hundred();
    for (int i = 0; i < D100F_LANES; i++) {
        D100F_L attack = attacks[i], target = targets[i];
        D100F_UL engaged = s->engaged[i];
        D100F_L act = s->declared[c][i] >> D100F_SHIFT;
        D100F_L partner_t = D100F_F(partner)(s, i, target);
        D100F_L counts[D100F_COUNT_ROWS * D100F_W_PER_ROW] = {0};

        D100F_L in_cover = D100F_F(bit)(s->cover[i], target) & ranged, dual_on = D100F_F(bit)(s->dual[i], c);
        D100F_L steps = quick + dual_on + in_cover + D100F_F(bit)(s->defending[i], target);
        /* The bars at `steps`, by masks: selects became a five-way branch that GCC did not
         * if-convert. */
        D100F_L bars = 0;
#pragma GCC unroll 5
        for (int j = 0; j < 5; j++)
            bars |= -(D100F_L)(steps == j) & attack_bars[j];
        uint32_t w = word[i], r1 = w * hundred, r2 = r1 * hundred;
        D100F_L roll = (D100F_L)d100f_digit(w, hundred), damage1 = (D100F_L)d100f_digit(r1, hundred);
        D100F_L damage2 = (D100F_L)d100f_digit(r2, hundred);
        D100F_L hit = attack & (roll < (bars >> 8)), critical = roll < (bars & 255);
        /* The damage bars at the lane's column ((cover * 3 + armour) * 2 + dual) by a tree of
         * selects: eleven, where a mask for each of the twelve columns took twice the ops. */
        D100F_L armoured = D100F_F(bit)(armour1, target), heavy = D100F_F(bit)(armour2, target);
        D100F_L damage[D100F_W_DAMAGE_ROWS];
#pragma GCC unroll 2
        for (int r = 0; r < D100F_W_DAMAGE_ROWS; r++) {
            D100F_L by_dual[2][2];
#pragma GCC unroll 2
            for (int x = 0; x < 2; x++)
#pragma GCC unroll 2
                for (int y = 0; y < 2; y++) {
                    D100F_L bars_by_armour = armoured ? damage_bars[r][x * 6 + 2 + y] : damage_bars[r][x * 6 + y];
                    by_dual[x][y] = heavy ? damage_bars[r][x * 6 + 4 + y] : bars_by_armour;
                }
            damage[r] = in_cover ? (dual_on ? by_dual[1][1] : by_dual[1][0])
                                 : (dual_on ? by_dual[0][1] : by_dual[0][0]);
        }
        /* Weapon w's two bars: bytes 2 w and 2 w + 1 of the entry. */
        D100F_L weapon0 = damage[0] & 0xFFFF;
        D100F_L weapon1 = D100F_NARROW ? damage[D100F_W_DAMAGE_ROWS - 1] : (D100F_L)((uint32_t)damage[0] >> 16);
        D100F_UL flesh_at = (D100F_UL)((target & D100F_W_FLESH_AT) * 2);
        D100F_L flesh = (D100F_L)((s->flesh[i] >> flesh_at) & 3);
        D100F_L serious = D100F_F(bit)(s->serious[i], target);
        counts[D100F_ATTACKS] += attack;
        D100F_L out = D100F_F(wound)(hit, damage1, weapon0 & 255, (weapon0 >> 8) & 255, critical, deadly0, &flesh,
                                     &serious, counts);
        out |= D100F_F(wound)(hit & dual_on, damage2, weapon1 & 255, (weapon1 >> 8) & 255, critical, deadly1, &flesh,
                              &serious, counts);
        D100F_UL keep = (D100F_UL) ~(1u << (target & D100F_W_AT));
        s->flesh[i] = (D100F_UL)((s->flesh[i] & ~(3u << flesh_at)) | ((D100F_UL)flesh << flesh_at));
        s->serious[i] = (D100F_UL)((s->serious[i] & keep) | ((D100F_UL)serious << (target & D100F_W_AT)));
        /* Out at the batch's end; its pair released now (no attack reads the pairs). */
        s->struck[i] |= (D100F_UL)((D100F_UL)out << (target & D100F_W_AT));
        s->engaged[i] = (D100F_UL)(engaged & ~(-(D100F_UL)out & D100F_F(released)(engaged, target, partner_t)));
        /* An engaging attack (a charge, or a melee attack), for the engagements after the attacks
         * (D100F_F(engagers)). */
        D100F_L engaging = attack & ((act == D100F_CHARGE) | (ranged ^ 1));
        s->made[i] |= (D100F_UL)((D100F_UL)engaging << c);
        s->attack_target[c][i] = D100F_F(pick)(s->attack_target[c][i], target, attack);
        s->pos[i] += attack;
#pragma GCC unroll 8
        for (int j = 0; j < D100F_COUNT_ROWS; j++)
            s->counts[j][i] += (D100F_UL)((uint32_t)counts[D100F_W_PER_ROW * j] |
                                          (D100F_W_PER_ROW == 2 ? (uint32_t)counts[(2 * j + 1) % (2 * D100F_COUNT_ROWS)] << 16
                                                                : 0u));
    }
}

/* Where the fight ended after a batch of changes: side 0 or 1 won, D100F_NOBODY_LEFT (nobody left on
 * either side), or -1 (it goes on; the reference's decided). */
static inline D100F_L D100F_F(outcome)(D100F_UL active, D100F_UL side0, D100F_UL side1) {
    D100F_L in0 = (active & side0) != 0, in1 = (active & side1) != 0;
    /* As sums of masks: -1 with both in, else 0, 1 or 2 (neither). */
    return (D100F_L)(-(in0 & in1) + ((in0 ^ 1) & in1) + (-((in0 | in1) ^ 1) & D100F_NOBODY_LEFT));
}

/* Combatant c's engaging attack, if it made one, among those its target took this pass: who took
 * one (and from whom) and who took several. */
static inline __attribute__((always_inline)) void D100F_F(engagers)(D100F_S *restrict s, int32_t c) {
    for (int i = 0; i < D100F_LANES; i++) {
        D100F_L engaging = D100F_F(bit)(s->made[i], c), target = s->attack_target[c][i];
        D100F_UL taken = (D100F_UL)((D100F_UL)engaging << (target & D100F_W_AT));
        s->took_several[i] |= (D100F_UL)(s->took[i] & taken);
        s->took[i] |= taken;
        D100F_UL low = s->attackers[0][i], high = s->attackers[1][i];
        D100F_F(set_field)(&low, &high, target, (D100F_L)c, engaging);
        s->attackers[0][i] = low;
        s->attackers[1][i] = high;
    }
}

/* Combatant c's engagement in every lane where its fight goes on: its engaging attack pairs it
 * with its target when both are still in and neither made or took another engaging attack this
 * pass (the reference's engage_after_attacks: its target's only attacker is c, and c's only
 * attacker, if any, is its target, whose own attack is on c). A charger leaves its cover. */
static inline __attribute__((always_inline)) void D100F_F(engage)(D100F_S *restrict s, int32_t c) {
    for (int i = 0; i < D100F_LANES; i++) {
        D100F_UL active = s->active[i], engaged = s->engaged[i], made = s->made[i], took = s->took[i];
        D100F_UL several = s->took_several[i];
        D100F_L on = s->running[i] & (s->winner[i] < 0);
        D100F_L t = s->attack_target[c][i];
        D100F_L partner = D100F_F(partner)(s, i, c), partner_t = D100F_F(partner)(s, i, t);
        D100F_L attacker_of_c = D100F_F(field)(s->attackers[0][i], s->attackers[1][i], (D100F_L)c);
        D100F_L mutual = D100F_F(bit)(made, t);
        D100F_L only_t_on_c = mutual ? (D100F_F(bit)(took, c) & (D100F_F(bit)(several, c) ^ 1) & (attacker_of_c == t))
                                     : (D100F_F(bit)(took, c) ^ 1);
        D100F_L paired = D100F_F(bit)(engaged, c) & (partner == t);
        D100F_L ok = on & D100F_F(bit)(made, c) & D100F_F(bit)(active, c) & D100F_F(bit)(active, t) &
                     (D100F_F(bit)(several, t) ^ 1) & only_t_on_c & (paired ^ 1);
        D100F_UL clear = (D100F_UL)(-(D100F_UL)ok & (D100F_F(released)(engaged, t, partner_t) |
                                                      D100F_F(released)(engaged, (D100F_L)c, partner)));
        s->engaged[i] = (D100F_UL)((engaged & ~clear) | (-(D100F_UL)ok & ((1u << c) | (1u << (t & D100F_W_AT)))));
        D100F_F(pair)(s, i, (D100F_L)c, t, ok);
        D100F_F(pair)(s, i, t, (D100F_L)c, ok);
        D100F_L charged = on & ((s->declared[c][i] >> D100F_SHIFT) == D100F_CHARGE);
        s->cover[i] &= (D100F_UL) ~((D100F_UL)charged << c);
    }
}

/* What c's move in lane i rolls: a flee under fire (one d100) or a contested disengage (two).
 * c's disengage is contested when its partner p pressed against c: p engaged when declaring
 * targeted its partner then, c exactly when c's declared target (its partner then) is p; p not
 * engaged targeted the first of c's side in the fight then. */
typedef struct {
    D100F_L flee_roll, contested;
} D100F_F(plan_t);

static inline D100F_F(plan_t) D100F_F(plan)(const D100F_S *s, int32_t c, int i, int32_t side) {
    D100F_F(plan_t) plan;
    D100F_UL active = s->active[i], declared_engaged = s->declared_engaged[i];
    D100F_L on = s->running[i] & (s->winner[i] < 0) & D100F_F(bit)(active, c);
    D100F_L decl = s->declared[c][i], act = decl >> D100F_SHIFT, declared_target = decl & 31;
    D100F_L engaged = D100F_F(bit)(s->engaged[i], c), partner = D100F_F(partner)(s, i, c);
    /* Both sides' rows loaded, one picked (as partner). */
    D100F_L first_of_side = D100F_F(pick)(s->first_of_side[0][i], s->first_of_side[1][i], (D100F_L)side);
    D100F_L pressed_on_c = D100F_F(bit)(declared_engaged, partner) ? declared_target == partner : first_of_side == c;
    plan.flee_roll = on & (act == D100F_FLEE) & (engaged ^ 1) & D100F_F(bit)(s->targeted[i], c);
    plan.contested = on & (act == D100F_DISENGAGE) & engaged & D100F_F(bit)(active, partner) &
                     D100F_F(bit)(s->pressers[i], partner) & pressed_on_c;
    return plan;
}

/* Combatant c's action after the attacks in every lane where it is still in a fight that goes on
 * (the reference's move): take cover, toggle dual wield, disengage or flee. */
static inline __attribute__((always_inline)) void D100F_F(move)(D100F_S *restrict s,
                                                                const D100FightTable *restrict k, int32_t c) {
    uint32_t word[D100F_LANES];
    D100F_L contested[D100F_LANES], any_contested = 0;
    const int32_t side = k->side[c];
    /* Only flees under fire read a word here, one by one (few lanes); a contest's two d100s are
     * settled where it is rolled, after the loop. */
    D100F_L flee_rolls[D100F_LANES];
    for (int i = 0; i < D100F_LANES; i++) {
        D100F_F(plan_t) plan = D100F_F(plan)(s, c, i, side);
        flee_rolls[i] = plan.flee_roll;
        contested[i] = plan.contested;
    }
    D100F_F(fetch)(s, k, flee_rolls, D100F_D100, word);
    const D100F_L flee_base = (D100F_L)k->flee_base[c];
    const uint32_t hundred = d100f_hundred();
    for (int i = 0; i < D100F_LANES; i++) {
        D100F_L flee_roll = flee_rolls[i], is_contested = contested[i];
        D100F_UL active = s->active[i], cover = s->cover[i], engaged = s->engaged[i];
        D100F_L on = s->running[i] & (s->winner[i] < 0) & D100F_F(bit)(active, c);
        D100F_L act = s->declared[c][i] >> D100F_SHIFT;
        D100F_L partner = D100F_F(partner)(s, i, c), engaged_c = D100F_F(bit)(engaged, c);
        D100F_L roll = (D100F_L)d100f_digit(word[i], hundred);

        cover |= (D100F_UL)((on & (act == D100F_TAKE_COVER)) << c);
        s->dual[i] |= (D100F_UL)((on & (act == D100F_TOGGLE_DUAL_WIELD)) << c);

        /* Disengage: released at once unless the partner pressed against it; a contest (rare) is
         * settled after the loop. */
        D100F_L release = on & (act == D100F_DISENGAGE) & engaged_c & (is_contested ^ 1);
        any_contested |= is_contested;
        s->engaged[i] = (D100F_UL)(engaged & ~(-(D100F_UL)release & D100F_F(released)(engaged, (D100F_L)c, partner)));

        /* Flee: blocked when engaged; targeted this round, it must roll, and a failure takes cover.
         * One that flees is not engaged: nothing to release. */
        D100F_L failed = s->failed_flee[c][i];
        D100F_L fail = flee_roll & (roll + 1 > d100f_min(D100F_TARGET_CAP, flee_base + D100F_FLEE_STEP * failed));
        D100F_L fled = on & (act == D100F_FLEE) & (engaged_c ^ 1) & (fail ^ 1);
        s->failed_flee[c][i] = (D100F_L)d100f_min(failed + fail, D100F_W_FLEE_CAP);
        cover |= (D100F_UL)(fail << c);
        s->active[i] = (D100F_UL)(active & ~((D100F_UL)fled << c));
        s->escaped[i] |= (D100F_UL)((D100F_UL)fled << c);
        s->cover[i] = cover;
        s->pos[i] += flee_roll + 2 * is_contested;
    }
    /* A contested disengage changed nothing else in its lane (its two d100s are the words just
     * before the new position): a win releases the pair now. */
    if (any_contested)
        for (int i = 0; i < D100F_LANES; i++) {
            if (!contested[i])
                continue;
            int32_t partner = D100F_F(partner)(s, i, c);
            int32_t roll = d100f_digit(D100F_F(accept)(s, k, i, s->pos[i] - 2, D100F_D100), D100F_D100) + 1;
            int32_t press_roll = d100f_digit(D100F_F(accept)(s, k, i, s->pos[i] - 1, D100F_D100), D100F_D100) + 1;
            if (d100f_disengages(roll, k->press[c], press_roll, k->press[partner]))
                s->engaged[i] &= (D100F_UL) ~((1u << c) | (1u << partner));
        }
}

/* The end of an attack batch in every lane: its take-outs land; after the last batch
 * (``decide``), each running lane's outcome (winner) where its fight is decided now. */
static inline __attribute__((always_inline)) void D100F_F(land)(D100F_S *restrict s, const D100FightTable *restrict k,
                                                                int decide, int few) {
    const D100F_UL side0 = (D100F_UL)k->sides[0], side1 = (D100F_UL)k->sides[1];
    for (int i = 0; i < D100F_LANES; i++) {
        D100F_UL active = (D100F_UL)(s->active[i] & ~s->struck[i]);
        s->active[i] = active;
        s->struck[i] = 0;
        if (decide)
            s->winner[i] = D100F_F(pick)(s->winner[i], D100F_F(outcome)(active, side0, side1),
                                         s->running[i] & (s->winner[i] < 0));
        else {
            s->first_left[0][i] = D100F_F(lowest)(active & side0, few);
            s->first_left[1][i] = D100F_F(lowest)(active & side1, few);
        }
    }
}

/* One pass of every running lane for m combatants (the reference's play_pass): declarations, the
 * quick attacks, the standard attacks, engagements, the other actions; then each lane's next pass
 * or round, or ``ended``. Returns the lanes that ended. */
static inline __attribute__((always_inline)) int32_t D100F_F(pass_m)(D100F_S *restrict s,
                                                                     const D100FightTable *restrict k, int32_t m,
                                                                     int few) {
    const D100F_L need = (D100F_L)(3 * m); /* at most one d100 a declaration and two a move or one attack */
    const D100F_UL sides0 = (D100F_UL)k->sides[0], sides1 = (D100F_UL)k->sides[1];
    const D100F_L passes = (D100F_L)k->passes, max_rounds = (D100F_L)k->max_rounds;
    D100F_L refill = 0, refills[D100F_LANES];
    for (int i = 0; i < D100F_LANES; i++) {
        D100F_L pass_one = s->pass[i] == 1;
        s->first[i] = pass_one & (s->round[i] == 1);
        s->targeted[i] &= pass_one ? 0u : (D100F_UL)~0u;
        s->defending[i] = s->pressers[i] = s->disengagers[i] = 0;
        s->made[i] = s->took[i] = s->took_several[i] = 0;
        s->first_of_side[0][i] = D100F_F(lowest)(s->active[i] & sides0, few);
        s->first_of_side[1][i] = D100F_F(lowest)(s->active[i] & sides1, few);
        s->declared_engaged[i] = s->engaged[i];
        s->winner[i] = -1;
        refills[i] = s->running[i] & (s->end[i] - s->pos[i] < need);
        refill |= refills[i];
    }
    /* The lanes to refill (a few a pass, at random) found by bits, not by a branch a lane. */
    if (refill) {
        uint64_t bits[D100F_LANE_WORDS];
        D100F_F(lane_bits)(refills, bits);
        D100F_F(refill)(s, k, bits);
    }
#pragma GCC unroll 4
    for (int32_t c = 0; c < m; c++)
        D100F_F(declare)(s, k, c, few);
#pragma GCC unroll 4
    for (int32_t c = 0; c < m; c++)
        D100F_F(attack)(s, k, c, few, 1);
    D100F_F(land)(s, k, 0, few);
#pragma GCC unroll 4
    for (int32_t c = 0; c < m; c++)
        D100F_F(attack)(s, k, c, few, 0);
    D100F_F(land)(s, k, 1, few);
#pragma GCC unroll 4
    for (int32_t c = 0; c < m; c++)
        D100F_F(engagers)(s, c);
#pragma GCC unroll 4
    for (int32_t c = 0; c < m; c++)
        D100F_F(engage)(s, c);
#pragma GCC unroll 4
    for (int32_t c = 0; c < m; c++)
        D100F_F(move)(s, k, c);
    D100F_F(land)(s, k, 1, few);
    int32_t ended = 0;
    for (int i = 0; i < D100F_LANES; i++) {
        D100F_L last_pass = s->pass[i] >= passes, last = last_pass & (s->round[i] >= max_rounds);
        D100F_L over = s->running[i] & ((s->winner[i] >= 0) | last);
        s->ended[i] = over;
        s->pass[i] = over ? s->pass[i] : (last_pass ? 1 : s->pass[i] + 1);
        s->round[i] = s->round[i] + ((over ^ 1) & last_pass);
        ended += over;
    }
    D100F_F(lane_bits)(s->ended, s->ended_bits);
    return ended;
}

/* The pass with m known at compile time for the small tables (the bench fight is 2 against 2): the
 * loops over combatants unroll, so c is a constant in each copy (its bits, rows and table entries
 * at fixed places). Compiled in each clone (clones.h); only the AVX2 and x86-64-v4 ones run. */
static inline __attribute__((always_inline)) int32_t D100F_F(lanes_pass_body)(D100F_S *restrict s,
                                                                              const D100FightTable *restrict k) {
    switch (k->m) {
    case 2:
        return D100F_F(pass_m)(s, k, 2, 1);
    case 3:
        return D100F_F(pass_m)(s, k, 3, 1);
    case 4:
        return D100F_F(pass_m)(s, k, 4, 1);
    default:
        return D100F_F(pass_m)(s, k, k->m, 0);
    }
}

COMBATSIM_CLONED(int32_t, D100F_F(lanes_pass), (D100F_S *restrict s, const D100FightTable *restrict k), (s, k), )

/* Adds the lanes' counts to counts[0 .. D100F_COUNTS - 1] (layout.F_ATTACKS on) and clears them. */
static void D100F_F(take_counts)(D100F_S *s, int64_t *counts) {
    for (int j = 0; j < D100F_COUNT_ROWS; j++)
        for (int i = 0; i < D100F_LANES; i++) {
            for (int h = 0; h < D100F_W_PER_ROW && D100F_W_PER_ROW * j + h < D100F_COUNTS; h++)
                counts[D100F_W_PER_ROW * j + h] += ((uint32_t)s->counts[j][i] >> (16 * h)) & 0xFFFFu;
            s->counts[j][i] = 0;
        }
}

#undef D100F_W_AT
#undef D100F_W_FLESH_AT
#undef D100F_W_FIELDS
#undef D100F_W_FIELD_ROW
#undef D100F_W_PER_ROW
#undef D100F_COUNT_ROWS
#undef D100F_W_DAMAGE_ROWS
#undef D100F_W_FLEE_CAP
#undef D100F_GATHER
#undef D100F_L
#undef D100F_UL
#undef D100F_NARROW
#undef D100F_S
#undef D100F_F
