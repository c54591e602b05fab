/* d100 fights in lockstep lanes: the Cython "d100.fight" fast path (docs/kernels.md, "Fights").
 *
 * The engine's fight (combatsim.d100.engine) plays one fight at a time, and its branches follow the dice
 * (the policy's action, hit or miss, the wound, who is out), so the CPU mispredicts several of
 * them a pass. Here D100F_LANES fights run at once, one a lane, and a pass of every lane is a run
 * of loops over the lanes, for each combatant in turn: its declaration, its quick attack, its
 * standard attack, its engagement, its other action (the reference's play_pass), every
 * dice-decided branch a mask or a select, which GCC vectorises (in the clones of clones.h). Two
 * attack loops a combatant, where a pass resolved in table order would need one: the quick
 * attacks land before the standard ones.
 *
 * A lane is the engine's state spread out: the yes/no states are bits of per-lane masks,
 * the wound counters bit fields (deadly flesh 0..2 in two bits a combatant, serious 0..1 in one:
 * an escalation leaves no more), the engaged partners 4-bit fields, so that "combatant t's value"
 * for a t that differs by lane is a shift, and an update a masked insert (stores to computed
 * addresses do not vectorise). What an action needs of another combatant's declaration is in
 * masks too (who pressed, who disengaged, who was engaged while declaring); c's own declared
 * action and target, whom it attacked, and its failed flees, are rows per combatant.
 *
 * The lanes are int32, or int16 for tables of up to D100F_NARROW_MAX combatants in the x86-64-v4 clone
 * (d100f_narrow_fits): every value a step keeps then fits 16 bits, and a 512-bit vector holds 32
 * lanes, not 16, which the step loops' instruction count (not their memory) limits. The steps
 * are one source for both (fight_lanes_steps.h, included once a width); the dice stay 32-bit
 * words, their digits narrowed where they are rolled.
 *
 * Each lane rolls from its own fight's item stream (docs/rng.md), from a buffer of words drawn
 * ahead (16 blocks at a time, two lanes' draws at once: philox_ahead_pair, at x86-64-v4
 * philox_item_pair_avx512's vpmuludq rounds) and a position; a die is
 * a gather of the word at the position. Every die is a digit of its word: the d100 roll - 1 is the high word of w x 100,
 * and the attack value's three d100 digits are those of w, w x 100 and w x 10000 (mod 2^32 each;
 * word_tally.h). Lemire rejects a word only when its low product is below a threshold: each step
 * that gathers the lanes' next words also asks whether any of them is one that a d100 or the
 * attack die could reject (about 2e-4 of them), and only then works out, lane by lane, which die
 * the word is for and replaces a rejected one by the item's next accepted retry word, exactly as
 * the stream does (d100f_accept), before the step rolls it.
 *
 * The caller (the Cython kernel) holds the lanes of either width as a D100FightRun and starts
 * each fight in a lane (d100f_run_load): after the engine's ambush_contests when there is an ambush
 * (they roll the stream's first words; the lane takes over the rest of their last block and goes
 * on from the next block), else directly; and
 * records each ended fight (ended_bits).
 */
#ifndef COMBATSIM_D100_FIGHT_LANES_H
#define COMBATSIM_D100_FIGHT_LANES_H
#include <stdint.h>
#include <string.h>

#include "clones.h"
#include "philox.h"

/* Fights in flight (one a lane). More lanes share each step's fixed work (the per-combatant
 * constants, the rare-lane checks) among more fights, until the lanes' words outgrow the L2 cache
 * (256 lanes hold 116 KB of words); docs/kernels.md. */
#define D100F_LANES 128
/* The most combatants the lanes take: two rows of eight 4-bit partner fields (the masks would
 * take 32). */
#define D100F_MAX 16
/* Words a lane buffers: the rest of the last draw (fewer than a pass can roll, 3 x 16) plus one
 * draw of 64, and one past the end that a lane which rolls nothing reads without using. */
#define D100F_DRAW (4 * PHILOX_AHEAD_BLOCKS)
#define D100F_CAP (3 * D100F_MAX + D100F_DRAW + 1)
#define D100F_LANE_WORDS ((D100F_LANES + 63) / 64)

/* combatsim.d100.layout's actions, numbered as there (the policy columns follow that order;
 * tests/test_d100_fight_lanes.py compares these and the counts and dice below with the layout). */
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
/* The lanes' counts: layout.F_ATTACKS .. F_ESCALATED_LETHAL, in that order (escapes and the
 * outcomes the caller counts from each ended fight's escaped and winner). */
#define D100F_COUNTS 7
#define D100F_ATTACKS 0
#define D100F_LETHAL 1
#define D100F_SERIOUS 2
#define D100F_FLESH 3
#define D100F_INSTANT_DEATH 4
#define D100F_ESCALATED_SERIOUS 5
#define D100F_ESCALATED_LETHAL 6
/* A lane's winner when nobody is left on either side. */
#define D100F_NOBODY_LEFT 2
#define D100F_COUNT_PASSES 1024
/* The d100's sides (layout.D100), and the flee rule's and the wound escalation's numbers, the
 * engine's TARGET_CAP, FLEE_STEP, FLESH_PER_SERIOUS and SERIOUS_PER_LETHAL (the test above
 * compares them too). */
#define D100F_D100 100u
#define D100F_TARGET_CAP 95
#define D100F_FLEE_STEP 20
#define D100F_FLESH_PER_SERIOUS 3
#define D100F_SERIOUS_PER_LETHAL 2
/* The lanes keep 0..2 deadly flesh wounds in two bits and 0..1 serious ones in one, and escalate
 * by the carry out of those fields (D100F_F(wound)): that holds for these two counts only. */
_Static_assert(D100F_FLESH_PER_SERIOUS == 3 && D100F_SERIOUS_PER_LETHAL == 2,
               "the lanes' wound fields escalate by carries: rework D100F_F(wound) for other counts");
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
     * the lethal and serious-or-worse bars of weapon 0, then weapon 1 (engine.damage_column).
     * One table load a lane, where four were slower. */
    int32_t attack[D100F_MAX][5], damage[D100F_MAX][12];
    int32_t policy[D100F_MAX][8]; /* cumulative bounds, ascending; the last >= 100 */
    int32_t press[D100F_MAX][5];  /* contest bars and capped target */
} D100FightTable;

/* 100 as a value GCC cannot see, for the lane loops' products (taken before each loop: an asm in
 * the loop kept the loops scalar). By the constant, GCC (generic tuning) multiplies in shifts and
 * adds, four vector ops a product, where one vpmulld does. */
static inline uint32_t d100f_hundred(void) {
    uint32_t hundred = D100F_D100;
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
    return (w * D100F_D100 < D100F_D100_REJECT) | (w * D100F_ATTACK_SIDES < D100F_ATTACK_REJECT);
}

#if defined(COMBATSIM_HAVE_AVX2_PATH) && D100F_LANES % 8 == 0
#define D100F_GATHER_PATHS 1
#endif

/* Whether the lanes pay at this level (clones.h): their loops in AVX2 or x86-64-v4 code. The
 * portable clone (SSE2, no gathers) is several times slower than the engine's fight, so the
 * lanes' portable clone never runs. */
static inline int d100f_lanes_pay(void) {
#ifdef D100F_GATHER_PATHS
    return combatsim_level() >= COMBATSIM_AVX2;
#else
    return 0;
#endif
}

static inline int32_t d100f_min(int32_t a, int32_t b) { return a < b ? a : b; }

static inline int32_t d100f_clamp(int32_t x, int32_t low, int32_t high) { return x < low ? low : x > high ? high : x; }

/* The quick contest of a disengage against its partner's press (the engine's
 * _first_wins on the press bars): does the disengage win? Ties go to the blocker. */
static inline int32_t d100f_tier(int32_t roll, const int32_t *bars) {
    return (roll > bars[0]) + (roll > bars[1]) + (roll > bars[2]) + (roll > bars[3]);
}

static int32_t d100f_disengages(int32_t roll, const int32_t *bars, int32_t press_roll, const int32_t *press_bars) {
    int32_t own = d100f_tier(roll, bars), other = d100f_tier(press_roll, press_bars);
    return own != other ? own < other : bars[4] - roll > press_bars[4] - press_roll;
}

/* The state and steps in int32 lanes (any table the lanes take) and in int16 lanes (small
 * tables in the x86-64-v4 clone: d100f_narrow_fits), from one source. */
#define D100F_L int32_t
#define D100F_UL uint32_t
#define D100F_NARROW 0
#define D100F_S D100FightLanes
#define D100F_F(name) d100f_##name
#include "fight_lanes_steps.h"

#define D100F_L int16_t
#define D100F_UL uint16_t
#define D100F_NARROW 1
#define D100F_S D100FightLanes16
#define D100F_F(name) d100f16_##name
#include "fight_lanes_steps.h"

/* The most combatants the int16 lanes take (eight 2-bit flesh fields fill 16 bits; two rows of
 * four partner fields), and the flee bases, whose targets they work out in 16 bits. */
#define D100F_NARROW_MAX 8
#define D100F_NARROW_FLEE 1000

/* Whether the int16 lanes may take tables that fit them (1 unless a test turns them off). */
static int d100f_narrow_allowed = 1;

/* Do the int16 lanes take this table? Only in the x86-64-v4 clone: AVX2 has no 16-bit variable
 * shifts. */
static inline int d100f_narrow_fits(const D100FightTable *k) {
    if (!d100f_narrow_allowed || combatsim_level() != COMBATSIM_V4 || k->m > D100F_NARROW_MAX ||
        k->passes > INT16_MAX || k->max_rounds > INT16_MAX)
        return 0;
    for (int c = 0; c < k->m; c++)
        if (k->flee_base[c] < -D100F_NARROW_FLEE || k->flee_base[c] > D100F_NARROW_FLEE)
            return 0;
    return 1;
}

/* The lanes of one call, in either width (the caller's interface). */
typedef struct {
    union {
        D100FightLanes wide;
        D100FightLanes16 narrow;
    } u;
    int32_t is_narrow;
} D100FightRun;

/* Step `name` (d100f_name or d100f16_name) of r's lanes, and field `name` of r's lanes. */
#define D100F_RUN_CALL(r, name, ...)                                                                    \
    ((r)->is_narrow ? d100f16_##name(&(r)->u.narrow, __VA_ARGS__) : d100f_##name(&(r)->u.wide, __VA_ARGS__))
#define D100F_RUN_FIELD(r, name) ((r)->is_narrow ? (r)->u.narrow.name : (r)->u.wide.name)

static void d100f_run_begin(D100FightRun *r, const D100FightTable *k) { r->is_narrow = d100f_narrow_fits(k); }

static void d100f_run_load(D100FightRun *r, const D100FightTable *k, int i, uint64_t index, uint64_t retries,
                           const uint32_t *words, int32_t n, uint32_t next_block, uint32_t surprised) {
    D100F_RUN_CALL(r, lane_load, k, i, index, retries, words, n, next_block, surprised);
}

static void d100f_run_idle(D100FightRun *r, int i) { D100F_RUN_CALL(r, lane_idle, i); }

static int32_t d100f_run_pass(D100FightRun *r, const D100FightTable *k) { return D100F_RUN_CALL(r, lanes_pass, k); }

static void d100f_run_take_counts(D100FightRun *r, int64_t *counts) { D100F_RUN_CALL(r, take_counts, counts); }

static inline const uint64_t *d100f_run_ended_bits(const D100FightRun *r) { return D100F_RUN_FIELD(r, ended_bits); }

/* Lane i's ended fight: the winning side, -2 for a draw (combatsim.engine.WINNER_DRAW), -1 unfinished. */
static inline int32_t d100f_run_winner(const D100FightRun *r, int i) {
    int32_t winner = D100F_RUN_FIELD(r, winner[i]);
    return winner == D100F_NOBODY_LEFT ? -2 : winner;
}

static inline uint32_t d100f_run_escaped(const D100FightRun *r, int i) { return D100F_RUN_FIELD(r, escaped[i]); }

/* Lane i's combatants still in its ended fight (neither out nor fled). */
static inline uint32_t d100f_run_active(const D100FightRun *r, int i) { return D100F_RUN_FIELD(r, active[i]); }

static inline int32_t d100f_run_round(const D100FightRun *r, int i) { return D100F_RUN_FIELD(r, round[i]); }

#endif
