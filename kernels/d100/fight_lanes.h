/* d100 fights in lockstep lanes: the Cython "d100.fight" fast path (docs/d100.md, "Kernels and speed").
 *
 * The scalar kernel (_cy.pyx, fight) plays one fight at a time, and its branches follow the dice
 * (the policy's action, hit or miss, the wound, who is out), so the CPU mispredicts several of
 * them a pass. Here D100F_LANES fights run at once, one a lane, and a pass of every lane is a run
 * of loops over the lanes, one for each combatant's declaration and one for each resolution,
 * every dice-decided branch a mask or a select, which GCC vectorises (target clones: clones.h).
 *
 * A lane is the scalar kernel's state spread out: the yes/no states are bits of per-lane masks,
 * the wound counters bit fields (deadly flesh 0..2 in two bits a combatant, serious 0..1 in one:
 * an escalation leaves no more), the engaged partners 4-bit fields, so that "combatant t's value"
 * for a t that differs by lane is a shift, and an update a masked insert (stores to computed
 * addresses do not vectorise). What a resolution needs of another combatant's declaration is in
 * masks too (who pressed, who disengaged, who was engaged while declaring); c's own declared
 * action and target, and its failed flees, are int32 rows per combatant.
 *
 * Each lane rolls from its own fight's item stream (docs/rng.md), from a buffer of words drawn
 * ahead (16 blocks at a time: philox_ahead_blocks, on AVX-512 philox_item_blocks_avx512, whose
 * vpmuludq rounds took the bench fight from 21.1 to 19.3 ns an attack) and a position; a die is
 * a gather of the word at the position. Every die is a digit of its word: the d100 roll - 1 is the high word of w x 100,
 * and the attack value's three d100 digits are those of w, w x 100 and w x 10000 (mod 2^32 each;
 * word_tally.h). Lemire rejects a word only when its low product is below a threshold: each step
 * that gathers the lanes' next words also asks whether any of them is one that a d100 or the
 * attack die could reject (about 2e-4 of them), and only then works out, lane by lane, which die
 * the word is for and replaces a rejected one by the item's next accepted retry word, exactly as
 * the stream does (d100f_accept), before the step rolls it.
 *
 * The caller (the Cython kernel) starts each fight in a lane (d100f_lane_load): after the scalar
 * kernel's _begin when there is an ambush (its contests roll the stream's first words, which the
 * lane takes over), else directly; and records each ended fight (ended_bits).
 */
#ifndef COMBATSIM_D100_FIGHT_LANES_H
#define COMBATSIM_D100_FIGHT_LANES_H
#include <stdint.h>
#include <string.h>

#include "clones.h"
#include "philox.h"

/* Fights in flight (one a lane). More lanes share each step's fixed work (the per-combatant
 * constants, the rare-lane checks) among more fights: bench fight, A/B in one process, 16 lanes
 * 26.4, 32 lanes 23.5, 64 lanes 22.5, 128 lanes 21.6 ns an attack; with the later steps, 64 lanes
 * 19.4, 128 lanes 18.4, 256 lanes 20.7 (65536 fights a call, the runner's chunk: 18.7, 18.4, 20.7:
 * 256 lanes hold 116 KB of words). */
#define D100F_LANES 128
/* The most combatants the lanes take: two rows of eight 4-bit partner fields (the masks would
 * take 32). */
#define D100F_MAX 16
/* Words a lane buffers: the rest of the last draw (fewer than a pass can roll, 3 x 16) plus one
 * draw of 64, and one past the end that a lane which rolls nothing reads without using. */
#define D100F_DRAW (4 * PHILOX_AHEAD_BLOCKS)
#define D100F_CAP (3 * D100F_MAX + D100F_DRAW + 1)
#define D100F_LANE_WORDS ((D100F_LANES + 63) / 64)

/* combatsim.d100.layout's actions (the Cython kernel's enum; tests compare its LAYOUT). */
#define D100F_NONE 0
#define D100F_ATTACK 1
#define D100F_QUICK_ATTACK 2
#define D100F_DEFEND 3
#define D100F_FLEE 4
#define D100F_PRESS 5
#define D100F_DISENGAGE 6
#define D100F_CHARGE 7
#define D100F_TAKE_COVER 8
#define D100F_TOGGLE_DUAL_WIELD 9
#define D100F_ATTACKING ((1 << D100F_ATTACK) | (1 << D100F_QUICK_ATTACK) | (1 << D100F_PRESS) | (1 << D100F_CHARGE))
/* A declaration is action << 5 | target. */
#define D100F_SHIFT 5
/* The lanes' counts: layout.F_ATTACKS .. F_FLEE_SUCCESSES, in that order. */
#define D100F_COUNTS 8
#define D100F_ATTACKS 0
#define D100F_LETHAL 1
#define D100F_SERIOUS 2
#define D100F_FLESH 3
#define D100F_INSTANT_DEATH 4
#define D100F_ESCALATED_SERIOUS 5
#define D100F_ESCALATED_LETHAL 6
#define D100F_FLEE_SUCCESSES 7
#define D100F_COUNT_PASSES 1024
/* Lemire's thresholds, (2^32 - sides) mod sides. */
#define D100F_D100_REJECT 96u
#define D100F_ATTACK_SIDES 1000000u
#define D100F_ATTACK_REJECT 967296u

/* The combatant table as the lanes read it (int32; the caller checks the ranges). */
typedef struct {
    int32_t m, passes, max_rounds;
    uint32_t k0, k1;
    uint32_t sides[2], armour1, armour2; /* bit c: combatant c's side; armour class bit 0, bit 1 */
    uint32_t opponents[D100F_MAX];
    int32_t side[D100F_MAX], ranged[D100F_MAX], dual_allowed[D100F_MAX], flee_base[D100F_MAX], deadly[2][D100F_MAX];
    /* Bars as bytes, clamped to 0..100 (a roll - 1 of 0..99 is below them or not, as before):
     * attack[c][steps] holds the critical and success bars (the bars ascend, so these two give
     * the tier that matters) for 0..4 penalty steps; damage[c][(cover * 3 + armour) * 2 + dual]
     * the lethal and serious-or-worse bars of weapon 0, then weapon 1 (layout.damage_column).
     * One table load a lane, where four were slower. */
    int32_t attack[D100F_MAX][5], damage[D100F_MAX][12];
    int32_t policy[D100F_MAX][8]; /* cumulative bounds, ascending; the last >= 100 */
    int32_t press[D100F_MAX][5];  /* contest bars and capped target */
} D100FightTable;

typedef struct {
    uint32_t active[D100F_LANES], cover[D100F_LANES], dual[D100F_LANES], defending[D100F_LANES];
    uint32_t targeted[D100F_LANES], surprised[D100F_LANES];
    uint32_t flesh[D100F_LANES], serious[D100F_LANES]; /* two bits a combatant, and one: above */
    /* Engagements are pairs: bit c of `engaged` says c has a partner, and the partner is c's four
     * bits in partners[c >> 3] (bits 4 (c & 7) on): a shift for a per-lane combatant, not a
     * select over all of them, and releasing x clears two bits. */
    uint32_t engaged[D100F_LANES], partners[2][D100F_LANES];
    /* This pass's declarations that other combatants' resolutions ask about (who pressed, who
     * disengaged), and who was in the fight and engaged while they declared. */
    uint32_t pressers[D100F_LANES], disengagers[D100F_LANES], declared_engaged[D100F_LANES];
    int32_t first_of_side[2][D100F_LANES]; /* the first of each side in the fight then */
    int32_t declared[D100F_MAX][D100F_LANES], failed_flee[D100F_MAX][D100F_LANES];
    /* running: a fight in the lane; winner: set when it ended this pass; ended: after the pass,
     * the fight is over (winner or draw) and ``round`` is its rounds. */
    int32_t running[D100F_LANES], winner[D100F_LANES], ended[D100F_LANES], round[D100F_LANES], pass[D100F_LANES];
    /* ended as bits (lane i: bit i % 64 of word i / 64), for the caller to visit only those lanes. */
    uint64_t ended_bits[D100F_LANE_WORDS];
    int32_t first[D100F_LANES];
    int32_t pos[D100F_LANES], end[D100F_LANES];
    /* Count 2 j in the low 16 bits of row j, count 2 j + 1 in the high: half the rows to add to at
     * each resolution. A resolution adds at most 2 to a count, a pass at most 2 D100F_MAX, so the
     * caller takes them (d100f_take_counts) at least every D100F_COUNT_PASSES passes. */
    uint32_t counts[D100F_COUNTS / 2][D100F_LANES];
    uint64_t index[D100F_LANES], retries[D100F_LANES];
    uint32_t next_block[D100F_LANES];
    uint32_t words[D100F_LANES][D100F_CAP];
} D100FightLanes;

/* 100 as a value GCC cannot see, for the lane loops' products (taken before each loop: an asm in
 * the loop kept the loops scalar). By the constant, GCC (generic tuning) multiplies in shifts and
 * adds, four vector ops a product; one vpmulld instead ran the bench fight at 16.6 ns an attack,
 * not 17.4 (Zen 4, A/B in one process). */
static inline uint32_t d100f_hundred(void) {
    uint32_t hundred = 100u;
    __asm__("" : "+r"(hundred));
    return hundred;
}

/* The d100 roll - 1 of a word: Lemire's high product floor(w 100 / 2^32), in 32-bit halves (GCC
 * did not vectorise the lane loops with the 64-bit product); hundred is 100 (d100f_hundred). */
static inline int32_t d100f_digit(uint32_t w, uint32_t hundred) {
    return (int32_t)(((w >> 16) * hundred + (((w & 0xFFFFu) * hundred) >> 16)) >> 16);
}

/* Could a d100 or the attack die reject this word? */
static inline int32_t d100f_marked(uint32_t w) {
    return (w * 100u < D100F_D100_REJECT) | (w * D100F_ATTACK_SIDES < D100F_ATTACK_REJECT);
}

/* The index of the lowest set bit of a mask below 2^30 (30 for an empty one): the exponent of its
 * lowest bit as a float (a power of two converts exactly), a conversion and two integer ops where
 * a count of trailing zeros does not vectorise and a search by five masks took fifteen. */

static inline int32_t d100f_lowest(uint32_t x) {
    x |= 1u << 30;
    float f = (float)(int32_t)(x & (0u - x));
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return (int32_t)(bits >> 23) - 127;
}

/* Each lane's word at its position + ahead, into out. GCC's own vector code for this loop (under
 * the clones' generic tuning) loaded lane by lane, about a tenth of the time; the AVX2 gather
 * instruction is picked at run time (the same words), on AVX-512 CPUs too: its eight lanes at a
 * time ran the bench fight at 17.5 ns an attack, sixteen at 17.7 (Zen 4). */
static inline void d100f_gather_scalar(const D100FightLanes *s, int32_t ahead, uint32_t *out) {
    const uint32_t *words = &s->words[0][0];
    for (int i = 0; i < D100F_LANES; i++)
        out[i] = words[i * D100F_CAP + s->pos[i] + ahead];
}

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__) && D100F_LANES % 8 == 0
#include <immintrin.h>
#define D100F_GATHER_PATHS 1

__attribute__((target("avx2"))) static void d100f_gather_avx2(const D100FightLanes *s, int32_t ahead, uint32_t *out) {
    const __m256i lanes = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(D100F_CAP));
    for (int i = 0; i < D100F_LANES; i += 8) {
        __m256i at = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(s->pos + i)),
                                      _mm256_set1_epi32(i * D100F_CAP + ahead));
        _mm256_storeu_si256((__m256i *)(out + i),
                            _mm256_i32gather_epi32((const int *)s->words, _mm256_add_epi32(at, lanes), 4));
    }
}
#endif

/* Whether the lanes pay on this CPU: their loops in AVX2 or AVX-512. The portable clone (SSE2, no
 * gathers) ran the bench fight at 128 ns an attack against the scalar kernel's 40; the AVX2 one
 * at 26, the AVX-512 one at 22 (when the lanes were first built). */
static inline int d100f_lanes_pay(void) {
#ifdef D100F_GATHER_PATHS
    return combatsim_cpu_has_avx2();
#else
    return 0;
#endif
}

/* Returns whether any lane's word is marked (d100f_marked). */
static inline int32_t d100f_gather(const D100FightLanes *s, int32_t ahead, uint32_t *out) {
    int32_t marked = 0;
#ifdef D100F_GATHER_PATHS
    if (combatsim_cpu_has_avx2())
        d100f_gather_avx2(s, ahead, out);
    else
#endif
        d100f_gather_scalar(s, ahead, out);
    for (int i = 0; i < D100F_LANES; i++)
        marked |= d100f_marked(out[i]);
    return marked;
}

/* Flags of the lanes (0 or 1) as bits, lane i bit i % 64 of word i / 64. Apart from the loop that
 * sets the flags: the stores to a word a lane would keep that loop scalar. Each word in 32-bit
 * halves, whose shifts and ORs vectorise (64-bit ones did not). */
static inline __attribute__((always_inline)) void d100f_lane_bits(const int32_t *flags, uint64_t *bits) {
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
 * boolean that GCC does not vectorise (that lane loop ran scalar, 3.5x slower). */
static inline int32_t d100f_bit(uint32_t mask, int32_t t) { return (int32_t)((mask >> (t & 31)) & 1); }

static inline int32_t d100f_min(int32_t a, int32_t b) { return a < b ? a : b; }

/* b where `on` (0 or 1), else a, by masks: GCC turns a select whose arm converts to float into a
 * branch (the conversion may trap, so it is not run where not needed), and the loop stays scalar. */
static inline int32_t d100f_pick(int32_t a, int32_t b, int32_t on) { return a ^ ((a ^ b) & -on); }

/* Does combatant c declare in lane i this pass (a surprised one sits out pass 1 of round 1)? */
static inline int32_t d100f_declares(const D100FightLanes *s, int32_t c, int i) {
    return s->running[i] & d100f_bit(s->active[i], c) & ((s->first[i] & d100f_bit(s->surprised[i], c)) ^ 1);
}

/* x's partner (meaningful while x is engaged). Both rows are loaded and one picked by a mask: a
 * select between their addresses left GCC unsure what the lane loops' stores overlap. */
static inline int32_t d100f_partner(const D100FightLanes *s, int i, int32_t x) {
    uint32_t low = s->partners[0][i], high = s->partners[1][i];
    uint32_t row = low ^ ((low ^ high) & -((uint32_t)(x >> 3) & 1));
    return (int32_t)((row >> ((x & 7) * 4)) & 15);
}

/* The engaged bits that releasing x clears: its own, and its partner's while it has one. */
static inline uint32_t d100f_released(uint32_t engaged, int32_t x, int32_t partner) {
    return (1u << (x & 31)) | ((uint32_t)-d100f_bit(engaged, x) & (1u << (partner & 31)));
}

/* What c's resolution in lane i rolls (the reference's resolve): an attack (one attack die), a
 * flee roll (one d100) or a contested disengage (two d100s). Who declared what is read from the
 * pass's masks:
 * - c's press is spent when its target t declared a disengage from c: t disengaging was engaged,
 *   and targets its partner then, which is c exactly when c too was engaged then (pairs);
 * - c's disengage is contested when its partner p pressed against c: p engaged when declaring
 *   targeted its partner then, c exactly when c's declared target (its partner then) is p;
 *   p not engaged targeted the first of c's side in the fight. */
typedef struct {
    int32_t attack, flee_roll, contested;
} D100FPlan;

static inline D100FPlan d100f_plan(const D100FightLanes *s, int32_t c, int i, int32_t side) {
    D100FPlan plan;
    uint32_t active = s->active[i], declared_engaged = s->declared_engaged[i];
    int32_t on = s->running[i] & (s->winner[i] < 0) & d100f_bit(active, c);
    int32_t decl = s->declared[c][i], act = decl >> D100F_SHIFT, declared_target = decl & 31;
    int32_t engaged = d100f_bit(s->engaged[i], c), partner = d100f_partner(s, i, c);
    int32_t blocked = (act == D100F_PRESS) & d100f_bit(s->disengagers[i], declared_target) &
                      d100f_bit(declared_engaged, c);
    /* Both sides' rows loaded, one picked (as d100f_partner). */
    int32_t first0 = s->first_of_side[0][i], first1 = s->first_of_side[1][i];
    int32_t first_of_side = first0 ^ ((first0 ^ first1) & -side);
    int32_t pressed_on_c = d100f_bit(declared_engaged, partner) ? declared_target == partner : first_of_side == c;
    plan.attack = on & ((D100F_ATTACKING >> act) & 1) & (blocked ^ 1);
    plan.flee_roll = on & (act == D100F_FLEE) & (engaged ^ 1) & d100f_bit(s->targeted[i], c);
    plan.contested = on & (act == D100F_DISENGAGE) & engaged & d100f_bit(active, partner) &
                     d100f_bit(s->pressers[i], partner) & pressed_on_c;
    return plan;
}

/* Lane i's word at q as a die of `sides`: itself, or when Lemire's method rejects it the item's
 * next accepted retry word (rng.pxd's stream_bounded), which replaces it. Its value is the
 * accepted product's, so the lanes work on it as on any word. */
static uint32_t d100f_accept(D100FightLanes *s, const D100FightTable *k, int i, int32_t q, uint32_t sides) {
    uint32_t threshold = (0u - sides) % sides;
    uint32_t *word = &s->words[i][q];
    while (*word * sides < threshold)
        *word = philox_retry_word(k->k0, k->k1, s->index[i], s->retries[i]++);
    return *word;
}

/* Lane i takes a fight that _begin started: item `index`, its stream's words from `words` on
 * (n of them, the next block `next_block`), `retries` retry words used, `surprised` combatants. */
static void d100f_lane_load(D100FightLanes *s, const D100FightTable *k, int i, uint64_t index, uint64_t retries,
                            const uint32_t *words, int32_t n, uint32_t next_block, uint32_t surprised) {
    s->active[i] = k->sides[0] | k->sides[1];
    s->cover[i] = s->dual[i] = s->defending[i] = s->targeted[i] = 0;
    s->flesh[i] = s->serious[i] = 0;
    s->surprised[i] = surprised;
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
    s->end[i] = n;
}

/* Lane i holds no fight (no more to start). */
static void d100f_lane_idle(D100FightLanes *s, int i) {
    s->running[i] = 0;
    s->ended[i] = 0;
    s->active[i] = 0;
    s->pos[i] = s->end[i] = 0;
}

/* Lane i's next draw, after the words it has left. */
static void d100f_refill(D100FightLanes *s, const D100FightTable *k, int i) {
    uint32_t *words = s->words[i];
    int32_t pos = s->pos[i], left = s->end[i] - pos;
    memmove(words, words + pos, (size_t)left * sizeof *words);
    philox_ahead_blocks(k->k0, k->k1, s->index[i], s->next_block[i], words + left);
    s->next_block[i] += PHILOX_AHEAD_BLOCKS;
    s->pos[i] = 0;
    s->end[i] = left + D100F_DRAW;
}

/* Combatant c declares in every lane (the reference's declare). */
static inline __attribute__((always_inline)) void d100f_declare(D100FightLanes *restrict s,
                                                                const D100FightTable *restrict k, int32_t c) {
    uint32_t word[D100F_LANES];
    if (d100f_gather(s, 0, word))
        for (int i = 0; i < D100F_LANES; i++)
            if (d100f_marked(word[i]) && d100f_declares(s, c, i))
                word[i] = d100f_accept(s, k, i, s->pos[i], 100u);
    const int32_t *bound = k->policy[c];
    const uint32_t opponents = k->opponents[c];
    const int32_t dual_allowed = k->dual_allowed[c];
    const uint32_t hundred = d100f_hundred();
    for (int i = 0; i < D100F_LANES; i++) {
        int32_t on = d100f_declares(s, c, i);
        int32_t roll = d100f_digit(word[i], hundred) + 1;
        /* The first action whose cumulative bound is >= the roll: the bounds below the roll, as
         * they ascend (the caller checks) and the last is 100. A chain of selects instead did
         * not vectorise (GCC turned it into selects of booleans). */
        int32_t choice = 0;
#pragma GCC unroll 7
        for (int j = 0; j < 7; j++)
            choice += roll > bound[j];
        int32_t engaged = d100f_bit(s->engaged[i], c);
        int32_t action = D100F_ATTACK + choice;
        /* The overrides as sums: as selects, GCC derived the compares below from them as
         * selects of booleans, which it does not vectorise. */
        action += -((action == D100F_FLEE) & engaged) & (D100F_DISENGAGE - D100F_FLEE);
        action -= -((action == D100F_DISENGAGE) & (engaged ^ 1)) & (D100F_DISENGAGE - D100F_ATTACK);
        action += -(dual_allowed & (d100f_bit(s->dual[i], c) ^ 1)) & (D100F_TOGGLE_DUAL_WIELD - action);
        /* Both candidates computed, then picked: a load under the condition became a masked load
         * that GCC checked against the stores at run time. */
        int32_t partner = d100f_partner(s, i, c), first_opponent = d100f_lowest(s->active[i] & opponents);
        int32_t target = d100f_pick(first_opponent, partner, engaged);
        s->targeted[i] |= (uint32_t)(on & ((D100F_ATTACKING >> action) & 1)) << (target & 31);
        s->defending[i] |= (uint32_t)(on & (action == D100F_DEFEND)) << c;
        s->pressers[i] |= (uint32_t)(on & (action == D100F_PRESS)) << c;
        s->disengagers[i] |= (uint32_t)(on & (action == D100F_DISENGAGE)) << c;
        s->declared[c][i] = on ? action << D100F_SHIFT | target : D100F_NONE;
        s->pos[i] += on;
    }
}

/* One weapon's wound on a target whose deadly flesh and serious wounds are *flesh, *serious
 * (the scalar kernel's _wound); returns 1 when the target now has a lethal wound. */
static inline int32_t d100f_wound(int32_t hit, int32_t damage, int32_t lethal_bar, int32_t worse_bar,
                                  int32_t critical, int32_t deadly, int32_t *flesh, int32_t *serious,
                                  int32_t *counts) {
    int32_t lethal = hit & (damage < lethal_bar);
    int32_t worse = hit & (damage < worse_bar);
    int32_t serious_wound = worse & (lethal ^ 1), flesh_wound = hit & (worse ^ 1) & (lethal ^ 1);
    counts[D100F_LETHAL] += lethal;
    counts[D100F_INSTANT_DEATH] += lethal & critical;
    counts[D100F_SERIOUS] += serious_wound;
    counts[D100F_FLESH] += flesh_wound;
    /* A target holds 0..2 deadly flesh wounds and 0..1 serious ones, so 3 and 2 are the sums' top
     * bits: shifts, not compares (whose masks cost conversions back to 0/1 values). */
    int32_t f = *flesh + (flesh_wound & deadly), to_serious = (f + 1) >> 2;
    int32_t sw = *serious + serious_wound + to_serious, to_lethal = sw >> 1;
    *flesh = f & (to_serious - 1);
    *serious = sw & 1;
    counts[D100F_ESCALATED_SERIOUS] += to_serious;
    counts[D100F_ESCALATED_LETHAL] += to_lethal;
    return lethal | to_lethal;
}

/* The quick contest of a disengage against its partner's press (the scalar kernel's
 * _first_wins on the press bars): does the disengage win? Ties go to the blocker. */
static inline int32_t d100f_tier(int32_t roll, const int32_t *bars) {
    return (roll > bars[0]) + (roll > bars[1]) + (roll > bars[2]) + (roll > bars[3]);
}

static int32_t d100f_disengages(int32_t roll, const int32_t *bars, int32_t press_roll, const int32_t *press_bars) {
    int32_t own = d100f_tier(roll, bars), other = d100f_tier(press_roll, press_bars);
    return own != other ? own < other : bars[4] - roll > press_bars[4] - press_roll;
}

/* Combatant x's partner field set to v where `on`. */
static inline void d100f_pair(D100FightLanes *s, int i, int32_t x, int32_t v, int32_t on) {
    uint32_t shift = (uint32_t)(x & 7) * 4, high = (uint32_t)(x >> 3) & 1;
    uint32_t in_high = -((uint32_t)on & high), in_low = -((uint32_t)on & (high ^ 1));
    uint32_t field = 15u << shift, value = (uint32_t)(v & 15) << shift;
    s->partners[0][i] = (s->partners[0][i] & ~(field & in_low)) | (value & in_low);
    s->partners[1][i] = (s->partners[1][i] & ~(field & in_high)) | (value & in_high);
}

/* Combatant c resolves in every lane where it is still in a running fight (the reference's
 * resolve). */
static inline __attribute__((always_inline)) void d100f_resolve(D100FightLanes *restrict s,
                                                                const D100FightTable *restrict k, int32_t c) {
    uint32_t word[D100F_LANES];
    int32_t contested[D100F_LANES], any_contested = 0;
    const uint32_t opponents = k->opponents[c];
    const int32_t side = k->side[c];
    /* A contest's two d100s are settled where it is rolled, after the loop. */
    if (d100f_gather(s, 0, word))
        for (int i = 0; i < D100F_LANES; i++) {
            if (!d100f_marked(word[i]))
                continue;
            D100FPlan plan = d100f_plan(s, c, i, side);
            if (plan.attack | plan.flee_roll)
                word[i] = d100f_accept(s, k, i, s->pos[i], plan.attack ? D100F_ATTACK_SIDES : 100u);
        }
    const uint32_t side0 = k->sides[0], side1 = k->sides[1], armour1 = k->armour1, armour2 = k->armour2;
    const int32_t ranged = k->ranged[c], deadly0 = k->deadly[0][c], deadly1 = k->deadly[1][c];
    const int32_t flee_base = k->flee_base[c];
    /* Local copies of the tables the lanes read by a per-lane index: loads through k that GCC
     * cannot tell apart from the stores into s would need run-time alias checks. */
    int32_t attack_bars[5], damage_bars[12];
    memcpy(attack_bars, k->attack[c], sizeof attack_bars);
    memcpy(damage_bars, k->damage[c], sizeof damage_bars);
    const uint32_t hundred = d100f_hundred();
    for (int i = 0; i < D100F_LANES; i++) {
        D100FPlan plan = d100f_plan(s, c, i, side);
        uint32_t active = s->active[i], cover = s->cover[i], dual = s->dual[i], engaged = s->engaged[i];
        int32_t on = s->running[i] & (s->winner[i] < 0) & d100f_bit(active, c);
        int32_t decl = s->declared[c][i], act = decl >> D100F_SHIFT, declared_target = decl & 31;
        int32_t partner = d100f_partner(s, i, c), engaged_c = d100f_bit(engaged, c);
        int32_t target = d100f_pick(d100f_lowest(active & opponents), declared_target, d100f_bit(active, declared_target));
        int32_t partner_t = d100f_partner(s, i, target);
        int32_t counts[D100F_COUNTS] = {0};

        /* Attack, quick attack, charge or press. */
        int32_t attack = plan.attack, charge = act == D100F_CHARGE;
        cover &= ~((uint32_t)(attack & charge) << c); /* a charge leaves cover */
        int32_t quick = (act == D100F_QUICK_ATTACK) | charge;
        int32_t in_cover = d100f_bit(cover, target) & ranged, dual_on = d100f_bit(dual, c);
        int32_t steps = quick + dual_on + in_cover + d100f_bit(s->defending[i], target);
        /* The bars at `steps`, by masks: selects became a five-way branch that GCC did not
         * if-convert. */
        int32_t bars = 0;
#pragma GCC unroll 5
        for (int j = 0; j < 5; j++)
            bars |= -(int32_t)(steps == j) & attack_bars[j];
        uint32_t w = word[i], r1 = w * hundred, r2 = r1 * hundred;
        int32_t roll = d100f_digit(w, hundred), damage1 = d100f_digit(r1, hundred), damage2 = d100f_digit(r2, hundred);
        int32_t hit = attack & (roll < (bars >> 8)), critical = roll < (bars & 255);
        /* The damage bars at the lane's column ((cover * 3 + armour) * 2 + dual) by a tree of
         * selects: eleven, where a mask for each of the twelve columns took twice the ops. */
        int32_t armoured = d100f_bit(armour1, target), heavy = d100f_bit(armour2, target);
        int32_t by_dual[2][2];
#pragma GCC unroll 2
        for (int x = 0; x < 2; x++)
#pragma GCC unroll 2
            for (int y = 0; y < 2; y++) {
                int32_t bars_by_armour = armoured ? damage_bars[x * 6 + 2 + y] : damage_bars[x * 6 + y];
                by_dual[x][y] = heavy ? damage_bars[x * 6 + 4 + y] : bars_by_armour;
            }
        int32_t damage = in_cover ? (dual_on ? by_dual[1][1] : by_dual[1][0]) : (dual_on ? by_dual[0][1] : by_dual[0][0]);
        uint32_t flesh_at = (uint32_t)(target & 15) * 2;
        int32_t flesh = (int32_t)((s->flesh[i] >> flesh_at) & 3);
        int32_t serious = d100f_bit(s->serious[i], target);
        counts[D100F_ATTACKS] += attack;
        int32_t out = d100f_wound(hit, damage1, damage & 255, (damage >> 8) & 255, critical, deadly0, &flesh, &serious,
                                  counts);
        out |= d100f_wound(hit & dual_on, damage2, (damage >> 16) & 255, (damage >> 24) & 255, critical, deadly1,
                           &flesh, &serious, counts);
        uint32_t keep = ~(1u << (target & 31));
        s->flesh[i] = (s->flesh[i] & ~(3u << flesh_at)) | ((uint32_t)flesh << flesh_at);
        s->serious[i] = (s->serious[i] & keep) | ((uint32_t)serious << (target & 31));
        active &= ~((uint32_t)out << (target & 31));
        /* Melee attacks and charges engage (pairwise: a pair already engaged stays). */
        int32_t engage = attack & (out ^ 1) & (charge | (ranged ^ 1)) & ((engaged_c & (partner == target)) ^ 1);

        cover |= (uint32_t)(on & (act == D100F_TAKE_COVER)) << c;
        dual |= (uint32_t)(on & (act == D100F_TOGGLE_DUAL_WIELD)) << c;

        /* Disengage: released at once unless the partner pressed against it; a contest (rare) is
         * settled after the loop. */
        int32_t release = on & (act == D100F_DISENGAGE) & engaged_c & (plan.contested ^ 1);
        contested[i] = plan.contested;
        any_contested |= plan.contested;

        /* Flee: blocked when engaged; targeted this round, it must roll, and a failure takes cover.
         * One that flees is not engaged: nothing to release. */
        int32_t failed = s->failed_flee[c][i];
        int32_t fail = plan.flee_roll & (roll + 1 > d100f_min(95, flee_base + 20 * failed));
        int32_t fled = on & (act == D100F_FLEE) & (engaged_c ^ 1) & (fail ^ 1);
        s->failed_flee[c][i] = d100f_min(failed + fail, 1 << 16); /* past 5 the target is capped */
        cover |= (uint32_t)fail << c;
        active &= ~((uint32_t)fled << c);
        counts[D100F_FLEE_SUCCESSES] += fled;

        /* Engagements: a take-out releases the target, an engagement both (then pairs them), a
         * disengage c. */
        uint32_t clear = (-(uint32_t)(engage | out) & d100f_released(engaged, target, partner_t)) |
                         (-(uint32_t)(engage | release) & d100f_released(engaged, c, partner));
        s->engaged[i] = (engaged & ~clear) | (-(uint32_t)engage & ((1u << c) | (1u << (target & 31))));
        d100f_pair(s, i, c, target, engage);
        d100f_pair(s, i, target, c, engage);

        /* One resolution takes out at most one combatant, so at most one side runs out. */
        int32_t winner = (active & side0) == 0 ? 1 : ((active & side1) == 0 ? 0 : -1);
        s->winner[i] = on ? winner : s->winner[i];
        s->active[i] = active;
        s->cover[i] = cover;
        s->dual[i] = dual;
        s->pos[i] += attack + plan.flee_roll + 2 * plan.contested;
#pragma GCC unroll 4
        for (int j = 0; j < D100F_COUNTS / 2; j++)
            s->counts[j][i] += (uint32_t)counts[2 * j] | (uint32_t)counts[2 * j + 1] << 16;
    }
    /* A contested disengage changed nothing else in its lane (its two d100s are the words just
     * before the new position): a win releases the pair now. */
    if (any_contested)
        for (int i = 0; i < D100F_LANES; i++) {
            if (!contested[i])
                continue;
            int32_t partner = d100f_partner(s, i, c);
            int32_t roll = d100f_digit(d100f_accept(s, k, i, s->pos[i] - 2, 100u), 100u) + 1;
            int32_t press_roll = d100f_digit(d100f_accept(s, k, i, s->pos[i] - 1, 100u), 100u) + 1;
            if (d100f_disengages(roll, k->press[c], press_roll, k->press[partner]))
                s->engaged[i] &= ~((1u << c) | (1u << partner));
        }
}

/* One pass of every running lane for m combatants: declarations, then resolutions; then each
 * lane's next pass or round, or ``ended``. Returns the lanes that ended. */
static inline __attribute__((always_inline)) int32_t d100f_pass_m(D100FightLanes *restrict s,
                                                                  const D100FightTable *restrict k, int32_t m) {
    const int32_t need = 3 * m; /* at most one d100 a declaration and two a resolution */
    int32_t refill = 0, refills[D100F_LANES];
    for (int i = 0; i < D100F_LANES; i++) {
        int32_t pass_one = s->pass[i] == 1;
        s->first[i] = pass_one & (s->round[i] == 1);
        s->targeted[i] &= pass_one ? 0u : ~0u;
        s->defending[i] = s->pressers[i] = s->disengagers[i] = 0;
        s->first_of_side[0][i] = d100f_lowest(s->active[i] & k->sides[0]);
        s->first_of_side[1][i] = d100f_lowest(s->active[i] & k->sides[1]);
        s->declared_engaged[i] = s->engaged[i];
        s->winner[i] = -1;
        refills[i] = s->running[i] & (s->end[i] - s->pos[i] < need);
        refill |= refills[i];
    }
    /* The lanes to refill (a few a pass, at random) found by bits, not by a branch a lane. */
    if (refill) {
        uint64_t bits[D100F_LANE_WORDS];
        d100f_lane_bits(refills, bits);
        for (int w = 0; w < D100F_LANE_WORDS; w++)
            for (; bits[w]; bits[w] &= bits[w] - 1)
                d100f_refill(s, k, 64 * w + __builtin_ctzll(bits[w]));
    }
#pragma GCC unroll 4
    for (int32_t c = 0; c < m; c++)
        d100f_declare(s, k, c);
#pragma GCC unroll 4
    for (int32_t c = 0; c < m; c++)
        d100f_resolve(s, k, c);
    int32_t ended = 0;
    for (int i = 0; i < D100F_LANES; i++) {
        int32_t last_pass = s->pass[i] >= k->passes, last = last_pass & (s->round[i] >= k->max_rounds);
        int32_t over = s->running[i] & ((s->winner[i] >= 0) | last);
        s->ended[i] = over;
        s->pass[i] = over ? s->pass[i] : (last_pass ? 1 : s->pass[i] + 1);
        s->round[i] = s->round[i] + ((over ^ 1) & last_pass);
        ended += over;
    }
    d100f_lane_bits(s->ended, s->ended_bits);
    return ended;
}

/* The pass with m known at compile time for the small tables (the bench fight is 2 against 2): the
 * loops over combatants unroll, so c is a constant in each copy (its bits, rows and table entries
 * at fixed places). */
COMBATSIM_CLONES static int32_t d100f_lanes_pass(D100FightLanes *restrict s, const D100FightTable *restrict k) {
    switch (k->m) {
    case 2:
        return d100f_pass_m(s, k, 2);
    case 3:
        return d100f_pass_m(s, k, 3);
    case 4:
        return d100f_pass_m(s, k, 4);
    default:
        return d100f_pass_m(s, k, k->m);
    }
}

/* Adds the lanes' counts to counts[0 .. D100F_COUNTS - 1] (layout.F_ATTACKS on) and clears them. */
static void d100f_take_counts(D100FightLanes *s, int64_t *counts) {
    for (int j = 0; j < D100F_COUNTS / 2; j++)
        for (int i = 0; i < D100F_LANES; i++) {
            counts[2 * j] += s->counts[j][i] & 0xFFFFu;
            counts[2 * j + 1] += s->counts[j][i] >> 16;
            s->counts[j][i] = 0;
        }
}

#endif
