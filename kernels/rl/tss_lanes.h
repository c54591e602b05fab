/* TSS duel steps in lockstep: the Cython vector env's fast path (docs/rl.md, "Lockstep lanes").
 *
 * combatsim.rl.tss_reference steps one environment at a time, and its branches (who acts, hit or
 * miss, the tier, each damage die, the armour die, a new round) follow the dice. tss_step_lanes
 * steps up to 64 environments at once in loops over lanes that GCC vectorises (target clones
 * picked at load time: clones.h), and does exactly what the reference's step does to
 * every lane it reports done. A phase has one order of events (the first mover's turn: its action,
 * an attack's control die, situation dice, damage dice and armour die, a two-weapon attack's
 * second attack; the other side's turn; then a new round's action checks and tie die), so the
 * lanes run each event once, as a loop over all lanes with a mask of the lanes it concerns, and
 * each lane reads its words in stream order from its own position. The step's first block of four
 * words is drawn ahead by the caller; the lanes draw a lane's next block when it may read past
 * those drawn (up to TSS_LANE_WORDS words), and a resetting lane's new episode's first block (its
 * action checks). A lane the lanes do not take is left untouched, and the caller steps
 * it with the reference's body:
 * - a step that reads more than TSS_LANE_WORDS words (without the seeds: more than the first
 *   block's four, or a reset) or meets a Lemire-rejected word,
 * - a state outside what the reference's own steps leave (phase, first mover, first phases,
 *   actions left or aim out of range, tracks beyond the lanes' range, a step count at max_steps).
 * A random policy (its choice draws a word) or parameters out of the ranges below send the whole
 * batch to the body. The layout constants are the reference's (tests/test_rl_tss_lanes.py compares them).
 */
#ifndef COMBATSIM_RL_TSS_LANES_H
#define COMBATSIM_RL_TSS_LANES_H
#include <stdint.h>
#include <string.h>

#include "clones.h"
#include "philox.h"
#include "rl/lanes_gather.h"

#define TSS_P_SKILL 0
#define TSS_P_ACTION_CHECK 3
#define TSS_P_ACTIONS_PER_ROUND 6
#define TSS_P_STEPS 7
#define TSS_P_TWO_WEAPONS 8
#define TSS_P_AMBIDEXTERITY 9
#define TSS_P_TRACK 10
#define TSS_P_TYPE 19
#define TSS_P_WEAPON_GRADE 22
#define TSS_P_ARMOUR_DIE 23
#define TSS_P_ARMOUR_GRADE 24
#define TSS_P_DURABILITY 25
#define TSS_SIDE_PARAMS 28
#define TSS_G_MAX_STEPS 56
#define TSS_G_ONE_STEP_SHIFT 57
#define TSS_S_EPISODE 0
#define TSS_S_T 1
#define TSS_S_RETRIES 2
#define TSS_S_NEEDS_RESET 3
#define TSS_S_PHASE 4
#define TSS_S_FIRST_MOVER 5
#define TSS_S_SIDE 6
#define TSS_S_STUN 0
#define TSS_S_WOUND 1
#define TSS_S_MORTAL 2
#define TSS_S_FIRST_PHASE 3
#define TSS_S_ACTIONS_LEFT 4
#define TSS_S_AIMED 5
#define TSS_SIDE_STATE 6
#define TSS_STATE_SIZE 18
#define TSS_A_ATTACK 0
#define TSS_A_AIM 1
#define TSS_A_TWO_WEAPON_ATTACK 2
#define TSS_A_WAIT 3
#define TSS_ACTIONS 4
#define TSS_OBS_SIZE 20
#define TSS_MAX_DICE 10
#define TSS_MAX_STEPS_PENALTY 20
#define TSS_WORDS_PER_STEP 120
#define TSS_D20 20
#define TSS_POLICY_EXTERNAL 0
#define TSS_POLICY_SCRIPTED 1
#define TSS_LANES 64
/* Fewer envs than this (a single env, a batch's last few) are stepped by the reference's body: the
 * lanes' loops cost the same for 1 env as for 64. */
#define TSS_LANES_MIN 16
/* An action that does nothing: an illegal choice (the reference's -1 or any action outside 0..3). */
#define TSS_NO_ACTION 4
/* Words a step may read in the lanes (blocks of four; the bench's duel reads at most 11). */
#ifndef TSS_LANE_WORDS
#define TSS_LANE_WORDS 12
#endif
/* Lemire's threshold for a d20: (2^32 - 20) mod 20 (a d2's, d4's and d8's are 0). */
#define TSS_D20_REJECT_BELOW 16u
/* Parameters the lanes take stay within +-2^20, tracks within 0 .. 2^20 - 1 (int32 sums of a few of
 * them cannot overflow, and float32 holds them exactly). */
#define TSS_LANE_RANGE (1 << 20)

/* The helpers are inlined into each clone of the step (a call in a loop keeps it scalar). */
#if defined(__GNUC__)
#define TSS_INLINE static inline __attribute__((always_inline))
#else
#define TSS_INLINE static inline
#endif

/* The lowest set bit's index (bits != 0): lists of the few lanes that need a block drawn. */
#if defined(__GNUC__)
#define TSS_LOWEST_BIT(bits) __builtin_ctzll(bits)
#else
TSS_INLINE int TSS_LOWEST_BIT(uint64_t bits) {
    int i = 0;
    for (; !(bits & 1); bits >>= 1)
        i++;
    return i;
}
#endif

/* One side's parameters (per tier: Ordinary, Good, Amazing), as int32 for the lanes' masks. */
typedef struct {
    int32_t skill[3], check[3], per_round, steps, two_weapons, main_steps; /* main_steps: 0 ambidextrous, else 2 */
    int32_t count[3], modifier[3], kind[3]; /* kind: the damage type after the shift against the foe's armour */
    int32_t most_dice; /* the most damage dice of a tier */
    uint32_t sides[3], reject_below[3];
    int32_t armoured; /* this side's armour die is rolled when it is hit */
    uint32_t armour_sides, armour_reject_below;
    int32_t durability[3];
} TssLaneSide;

/* Every lane's state during a step: the sides' tracks and round, the choices, the next word's
 * position, and the attack under way. */
typedef struct {
    int32_t stun[2][TSS_LANES], wound[2][TSS_LANES], mortal[2][TSS_LANES], first_phase[2][TSS_LANES];
    int32_t left[2][TSS_LANES], aimed[2][TSS_LANES], choice[2][TSS_LANES], dealt[2][TSS_LANES];
    int32_t phase[TSS_LANES], first[TSS_LANES], t[TSS_LANES], reset[TSS_LANES], slow[TSS_LANES], pos[TSS_LANES];
    int32_t actor[TSS_LANES], attacking[TSS_LANES], second[TSS_LANES], extra[TSS_LANES], extra2[TSS_LANES];
    int32_t control[TSS_LANES], sit_n[TSS_LANES], sit_negative[TSS_LANES], sit_sum[TSS_LANES];
    int32_t tier[TSS_LANES], hit[TSS_LANES], damage[TSS_LANES], dice_left[TSS_LANES], round[TSS_LANES];
    uint32_t sit_sides[TSS_LANES], sit_reject_below[TSS_LANES];
    int32_t drawn[TSS_LANES], need[TSS_LANES]; /* words drawn, and words the lane may read, so far */
} TssLanes;

/* yes where mask (all ones), no where not (zero): a select GCC vectorises without branches. */
TSS_INLINE int32_t tss_select(int32_t mask, int32_t yes, int32_t no) { return (yes & mask) | (no & ~mask); }

TSS_INLINE uint32_t tss_select_u(int32_t mask, uint32_t yes, uint32_t no) {
    return (yes & (uint32_t)mask) | (no & ~(uint32_t)mask);
}

/* A tier's value (tier 1..3) by the masks "tier > 1" and "tier > 2". */
TSS_INLINE int32_t tss_tier(int32_t tier, const int32_t *by_tier) {
    int32_t past1 = -(tier > 1), past2 = -(tier > 2);
    return by_tier[0] ^ ((by_tier[0] ^ by_tier[1]) & past1) ^ ((by_tier[1] ^ by_tier[2]) & past2);
}

TSS_INLINE uint32_t tss_tier_u(int32_t tier, const uint32_t *by_tier) {
    uint32_t past1 = -(uint32_t)(tier > 1), past2 = -(uint32_t)(tier > 2);
    return by_tier[0] ^ ((by_tier[0] ^ by_tier[1]) & past1) ^ ((by_tier[1] ^ by_tier[2]) & past2);
}

/* The reference's dazed and is_out on a side's tracks. */
TSS_INLINE int32_t tss_dazed(const TssLaneSide *p, int32_t stun, int32_t wound, int32_t mortal) {
    return mortal + (2 * stun >= p->durability[0]) + (2 * wound >= p->durability[1]);
}

TSS_INLINE int32_t tss_out(const TssLaneSide *p, int32_t stun, int32_t wound, int32_t mortal) {
    return (stun >= p->durability[0]) | (wound >= p->durability[1]) | (mortal >= p->durability[2]);
}

/* The first phase of an action check (the reference's _new_round). */
TSS_INLINE int32_t tss_first_phase(const TssLaneSide *p, int32_t check) {
    return tss_select(-(check <= p->check[2]), 0,
                      tss_select(-(check <= p->check[1]), 1, tss_select(-(check <= p->check[0]), 2, 3)));
}

/* Lane i's word at position pos (a word past those drawn is a zero, and its lane goes to the
 * body). A select over the positions: an indexed load per lane left the loops scalar. */
TSS_INLINE uint32_t tss_word_at(const uint32_t words[TSS_LANE_WORDS][TSS_LANES], int32_t pos, int i) {
    uint32_t word = words[0][i];
    for (int k = 1; k < TSS_LANE_WORDS; k++)
        word = tss_select_u(-(pos == k), words[k][i], word);
    return word;
}

/* A die of `sides` from lane i's next word where `on` (a mask): the value (1..sides), the lane's
 * position moved past the word, and the lane marked slow if the word is rejected or not drawn. */
TSS_INLINE int32_t tss_die(const uint32_t words[TSS_LANE_WORDS][TSS_LANES], TssLanes *L, int i, int32_t on,
                           uint32_t sides, uint32_t reject_below) {
    int32_t pos = L->pos[i];
    uint32_t word = tss_word_at(words, pos, i);
    L->slow[i] |= on & ((word * sides < reject_below) | (pos >= L->drawn[i]));
    L->pos[i] = pos + (on & 1);
    return (int32_t)(((uint64_t)word * (uint64_t)sides) >> 32) + 1;
}

/* The further blocks of the lanes that may read past the words drawn for them (L->need), one
 * block at a time, those lanes' only: most steps read no more than the first block. */
TSS_INLINE void tss_lanes_ensure(const uint64_t *seeds, const int64_t *state, int64_t count, TssLanes *L,
                                 uint32_t words[TSS_LANE_WORDS][TSS_LANES]) {
    int32_t short_of_words = 0;
    for (int i = 0; i < TSS_LANES; i++)
        short_of_words |= L->need[i] > L->drawn[i];
    if (!short_of_words || !seeds)
        return; /* without the seeds (tss_lanes_alone) such lanes go to the body */
    /* The lanes each block is for, as bits (a branch a lane mispredicted). */
    uint64_t wanting[TSS_LANE_WORDS / 4] = {0};
    for (int i = 0; i < count; i++)
        for (int block = 1; block < TSS_LANE_WORDS / 4; block++)
            wanting[block] |= (uint64_t)((L->need[i] > 4 * block) & (L->drawn[i] <= 4 * block)) << i;
    for (int block = 1; block < TSS_LANE_WORDS / 4; block++) {
        int n = 0, lane[TSS_LANES];
        uint64_t keys[TSS_LANES], items[TSS_LANES];
        uint32_t blocks[TSS_LANES], drawn[4 * TSS_LANES];
        for (uint64_t bits = wanting[block]; bits; bits &= bits - 1) {
            int i = TSS_LOWEST_BIT(bits);
            const int64_t *row = state + i * TSS_STATE_SIZE;
            lane[n] = i;
            keys[n] = seeds[i];
            items[n] = (uint64_t)row[TSS_S_EPISODE];
            blocks[n] = (uint32_t)(((row[TSS_S_T] + 1) * TSS_WORDS_PER_STEP) >> 2) + (uint32_t)block;
            n++;
        }
        if (n == 0)
            continue;
        philox_keyed_blocks(n, keys, items, blocks, 0, drawn);
        for (int k = 0; k < n; k++) {
            for (int j = 0; j < 4; j++)
                words[4 * block + j][lane[k]] = drawn[4 * k + j];
            L->drawn[lane[k]] = 4 * block + 4;
        }
    }
}

/* Lane i's attack at L->extra more steps, if L->attacking: the situation die's size from the
 * attack's steps (the Difficulty Scale), and the words it may read (L->need). */
TSS_INLINE int32_t tss_attack_setup(const TssLaneSide *P, TssLanes *L, int i) {
    int32_t on = L->attacking[i], am = -L->actor[i];
    int32_t dazed0 = tss_dazed(&P[0], L->stun[0][i], L->wound[0][i], L->mortal[0][i]);
    int32_t dazed1 = tss_dazed(&P[1], L->stun[1][i], L->wound[1][i], L->mortal[1][i]);
    int32_t steps = tss_select(am, P[1].steps, P[0].steps) + tss_select(am, dazed1, dazed0) + L->extra[i];
    int32_t negative = steps < 0;
    int32_t size = tss_select(-negative, tss_select(-(steps < -5), 5, -steps), steps); /* beyond 5: d20s */
    uint32_t table_sides = tss_select_u(-(size == 1), 4u, tss_select_u(-(size == 2), 6u,
                                        tss_select_u(-(size == 3), 8u, tss_select_u(-(size == 4), 12u, 20u))));
    uint32_t table_reject = tss_select_u(-((size == 2) | (size == 4)), 4u,
                                         tss_select_u(-(size >= 5), TSS_D20_REJECT_BELOW, 0u));
    int32_t penalty = tss_select(-(steps < TSS_MAX_STEPS_PENALTY), steps, TSS_MAX_STEPS_PENALTY);
    int32_t dice = on & tss_select(-(steps == 0), 0, tss_select(-(steps > 5), penalty - 4, 1));
    L->sit_n[i] = dice;
    L->sit_sides[i] = table_sides;
    L->sit_reject_below[i] = table_reject;
    L->sit_negative[i] = -negative;
    int32_t bound = L->pos[i] + 1 + dice + tss_select(am, P[1].most_dice, P[0].most_dice) + 1;
    L->need[i] = on & -(L->slow[i] ^ 1) & bound;
    return dice;
}

/* A turn's start in every lane (the reference's _act up to its attacks): the side whose turn it is
 * spends an action on a legal attack, two-weapon attack or aim; an attack's lanes are marked in
 * `attacking` and set up. Returns whether any lane attacks; *most_situation: the most situation
 * dice an attack rolls. */
TSS_INLINE int32_t tss_lanes_turn(const TssLaneSide *P, TssLanes *L, int turn, int32_t *most_situation) {
    int32_t any = 0, most = 0;
    for (int i = 0; i < TSS_LANES; i++) {
        int32_t live = -((L->reset[i] | L->slow[i]) ^ 1);
        int32_t who = L->first[i] ^ turn, wm = -who;
        int32_t stun0 = L->stun[0][i], wound0 = L->wound[0][i], mortal0 = L->mortal[0][i];
        int32_t stun1 = L->stun[1][i], wound1 = L->wound[1][i], mortal1 = L->mortal[1][i];
        int32_t left0 = L->left[0][i], left1 = L->left[1][i], aimed0 = L->aimed[0][i], aimed1 = L->aimed[1][i];
        int32_t c = tss_select(wm, L->choice[1][i], L->choice[0][i]);
        int32_t out_who = tss_select(wm, tss_out(&P[1], stun1, wound1, mortal1), tss_out(&P[0], stun0, wound0, mortal0));
        int32_t can = (L->phase[i] >= tss_select(wm, L->first_phase[1][i], L->first_phase[0][i])) &
                      (tss_select(wm, left1, left0) > 0) & (out_who ^ 1);
        int32_t two = c == TSS_A_TWO_WEAPON_ATTACK;
        int32_t attacks =
            live & -(can & ((c == TSS_A_ATTACK) | (two & tss_select(wm, P[1].two_weapons, P[0].two_weapons))));
        int32_t aims = live & -(can & (c == TSS_A_AIM));
        int32_t acts = attacks | aims;
        int32_t aim = tss_select(wm, aimed1, aimed0), main_steps = tss_select(wm, P[1].main_steps, P[0].main_steps);
        L->left[0][i] = left0 - (acts & ~wm & 1);
        L->left[1][i] = left1 - (acts & wm & 1);
        L->aimed[0][i] = tss_select(aims & ~wm, 1, tss_select(attacks & ~wm, 0, aimed0));
        L->aimed[1][i] = tss_select(aims & wm, 1, tss_select(attacks & wm, 0, aimed1));
        L->actor[i] = who;
        L->attacking[i] = attacks;
        L->extra[i] = tss_select(-two, main_steps, 0) - aim;
        L->extra2[i] = main_steps + 2;
        L->second[i] = attacks & -two;
        any |= attacks;
        int32_t dice = tss_attack_setup(P, L, i);
        most = most > dice ? most : dice;
    }
    *most_situation = most;
    return any;
}

/* One attack in every lane marked `attacking` and set up (the reference's _attack): the control
 * die, the situation die(s), the tier, the damage dice, the armour die, and the damage landing on
 * the defender. */
TSS_INLINE void tss_lanes_attack(const TssLaneSide *P, TssLanes *L, const uint64_t *seeds, const int64_t *state,
                                 int64_t count, int32_t most_situation, uint32_t words[TSS_LANE_WORDS][TSS_LANES]) {
    int32_t most_dice = 0;
    tss_lanes_ensure(seeds, state, count, L, words);
    for (int i = 0; i < TSS_LANES; i++) {
        L->control[i] = tss_die(words, L, i, L->attacking[i], TSS_D20, TSS_D20_REJECT_BELOW);
        int32_t on = -(L->sit_n[i] > 0);
        L->sit_sum[i] = on & tss_die(words, L, i, on, L->sit_sides[i], L->sit_reject_below[i]);
    }
    for (int j = 1; j < most_situation; j++)
        for (int i = 0; i < TSS_LANES; i++) {
            int32_t on = -(j < L->sit_n[i]);
            L->sit_sum[i] += on & tss_die(words, L, i, on, L->sit_sides[i], L->sit_reject_below[i]);
        }
    /* The tier; a hit's damage dice (the first here). */
    for (int i = 0; i < TSS_LANES; i++) {
        int32_t am = -L->actor[i], control = L->control[i], sit_sum = L->sit_sum[i];
        int32_t total = control + tss_select(L->sit_negative[i], -sit_sum, sit_sum);
        int32_t ordinary = tss_select(am, P[1].skill[0], P[0].skill[0]);
        int32_t good = tss_select(am, P[1].skill[1], P[0].skill[1]);
        int32_t amazing = tss_select(am, P[1].skill[2], P[0].skill[2]);
        int32_t fail = (control == TSS_D20) | (total > ordinary);
        int32_t tier = tss_select(-(total <= amazing), 3, tss_select(-(total <= good), 2, 1));
        int32_t hit = L->attacking[i] & -(fail ^ 1);
        int32_t dice = hit & tss_select(am, tss_tier(tier, P[1].count), tss_tier(tier, P[0].count));
        uint32_t sides = tss_select_u(am, tss_tier_u(tier, P[1].sides), tss_tier_u(tier, P[0].sides));
        uint32_t reject = tss_select_u(am, tss_tier_u(tier, P[1].reject_below), tss_tier_u(tier, P[0].reject_below));
        int32_t on = -(dice > 0);
        L->tier[i] = tier;
        L->hit[i] = hit;
        L->dice_left[i] = dice;
        L->damage[i] = tss_select(am, tss_tier(tier, P[1].modifier), tss_tier(tier, P[0].modifier)) +
                       (on & tss_die(words, L, i, on, sides, reject));
        most_dice = most_dice > dice ? most_dice : dice;
    }
    for (int j = 1; j < most_dice; j++)
        for (int i = 0; i < TSS_LANES; i++) {
            int32_t on = -(j < L->dice_left[i]), am = -L->actor[i], tier = L->tier[i];
            uint32_t sides = tss_select_u(am, tss_tier_u(tier, P[1].sides), tss_tier_u(tier, P[0].sides));
            uint32_t reject = tss_select_u(am, tss_tier_u(tier, P[1].reject_below), tss_tier_u(tier, P[0].reject_below));
            L->damage[i] += on & tss_die(words, L, i, on, sides, reject);
        }
    /* The damage, never below 0, its type shifted (to nothing: no armour die), soaked, landing. */
    for (int i = 0; i < TSS_LANES; i++) {
        int32_t am = -L->actor[i], tier = L->tier[i], damage = L->damage[i];
        damage &= -(damage > 0);
        int32_t kind = tss_select(am, tss_tier(tier, P[1].kind), tss_tier(tier, P[0].kind));
        int32_t lands = L->hit[i] & -(kind != 0);
        int32_t armoured = lands & -tss_select(am, P[0].armoured, P[1].armoured); /* the defender's armour */
        uint32_t armour_sides = tss_select_u(am, P[0].armour_sides, P[1].armour_sides);
        uint32_t armour_reject = tss_select_u(am, P[0].armour_reject_below, P[1].armour_reject_below);
        int32_t soaked = damage - tss_die(words, L, i, armoured, armour_sides, armour_reject);
        int32_t primary = tss_select(armoured, soaked & -(soaked > 0), damage);
        int32_t half = damage >> 1, k3 = -(kind == 3), k2 = -(kind == 2);
        int32_t add_mortal = lands & k3 & primary;
        int32_t add_wound = lands & tss_select(k3, half, k2 & primary);
        int32_t add_stun = lands & tss_select(k3 | k2, half, primary);
        int32_t to0 = am, to1 = ~am; /* side 1 attacking hits side 0 */
        L->stun[0][i] += to0 & add_stun;
        L->wound[0][i] += to0 & add_wound;
        L->mortal[0][i] += to0 & add_mortal;
        L->stun[1][i] += to1 & add_stun;
        L->wound[1][i] += to1 & add_wound;
        L->mortal[1][i] += to1 & add_mortal;
        int32_t dealt = add_mortal + add_wound + add_stun;
        L->dealt[0][i] += to1 & dealt;
        L->dealt[1][i] += to0 & dealt;
    }
}

/* A turn: its start, its attack, and a two-weapon attack's second attack if the target still stands. */
TSS_INLINE void tss_lanes_take_turn(const TssLaneSide *P, TssLanes *L, int turn, const uint64_t *seeds,
                                    const int64_t *state, int64_t count, uint32_t words[TSS_LANE_WORDS][TSS_LANES]) {
    int32_t most_situation = 0;
    if (!tss_lanes_turn(P, L, turn, &most_situation))
        return;
    tss_lanes_attack(P, L, seeds, state, count, most_situation, words);
    int32_t again_any = 0;
    most_situation = 0;
    for (int i = 0; i < TSS_LANES; i++) {
        int32_t am = -L->actor[i];
        int32_t defender_out = tss_select(am, tss_out(&P[0], L->stun[0][i], L->wound[0][i], L->mortal[0][i]),
                                          tss_out(&P[1], L->stun[1][i], L->wound[1][i], L->mortal[1][i]));
        int32_t again = L->second[i] & -(defender_out ^ 1);
        L->attacking[i] = again;
        L->extra[i] = L->extra2[i];
        again_any |= again;
        int32_t dice = tss_attack_setup(P, L, i);
        most_situation = most_situation > dice ? most_situation : dice;
    }
    if (again_any)
        tss_lanes_attack(P, L, seeds, state, count, most_situation, words);
}

/* The state's fields from TSS_S_RETRIES on, gathered as int32 rows (lanes_gather8). */
#define TSS_GATHERED (TSS_STATE_SIZE - TSS_S_RETRIES)
_Static_assert(TSS_LANES == LANES_COLUMNS && TSS_GATHERED == 16, "the gather's rows");

TSS_INLINE int32_t tss_in_range(int64_t value) { return value >= -TSS_LANE_RANGE && value <= TSS_LANE_RANGE; }

/* A side's parameters into int32 (against the other side's armour); 0 when one is outside what the
 * lanes take. */
TSS_INLINE int tss_lane_side(TssLaneSide *s, const int64_t *iparams, int side, int64_t policy) {
    const int64_t *p = iparams + side * TSS_SIDE_PARAMS, *q = iparams + (1 - side) * TSS_SIDE_PARAMS;
    if (policy != TSS_POLICY_EXTERNAL && policy != TSS_POLICY_SCRIPTED)
        return 0; /* a random policy draws its choice: the reference's steps */
    for (int k = 0; k < 3; k++) {
        if (!tss_in_range(p[TSS_P_SKILL + k]) || !tss_in_range(p[TSS_P_ACTION_CHECK + k]) ||
            p[TSS_P_DURABILITY + k] < 1 || p[TSS_P_DURABILITY + k] > TSS_LANE_RANGE)
            return 0;
        s->skill[k] = (int32_t)p[TSS_P_SKILL + k];
        s->check[k] = (int32_t)p[TSS_P_ACTION_CHECK + k];
        s->durability[k] = (int32_t)p[TSS_P_DURABILITY + k];
    }
    if (p[TSS_P_ACTIONS_PER_ROUND] < 1 || p[TSS_P_ACTIONS_PER_ROUND] > TSS_LANE_RANGE || !tss_in_range(p[TSS_P_STEPS]) ||
        !tss_in_range(p[TSS_P_WEAPON_GRADE]) || !tss_in_range(q[TSS_P_ARMOUR_GRADE]) ||
        !tss_in_range(q[TSS_P_ARMOUR_DIE]))
        return 0;
    s->per_round = (int32_t)p[TSS_P_ACTIONS_PER_ROUND];
    s->steps = (int32_t)p[TSS_P_STEPS];
    s->two_weapons = p[TSS_P_TWO_WEAPONS] != 0;
    s->main_steps = p[TSS_P_AMBIDEXTERITY] ? 0 : 2;
    int64_t foe_armour = q[TSS_P_ARMOUR_DIE], shift = p[TSS_P_WEAPON_GRADE] - q[TSS_P_ARMOUR_GRADE];
    if (iparams[TSS_G_ONE_STEP_SHIFT])
        shift = shift < -1 ? -1 : shift > 1 ? 1 : shift;
    for (int k = 0; k < 3; k++) {
        const int64_t *track = p + TSS_P_TRACK + 3 * k;
        int64_t kind = p[TSS_P_TYPE + k];
        if (track[0] < 0 || track[0] > TSS_MAX_DICE || !tss_in_range(track[2]) || kind < 0 || kind > 3)
            return 0;
        if (track[0] > 0 && (track[1] < 1 || track[1] > TSS_LANE_RANGE))
            return 0;
        s->count[k] = (int32_t)track[0];
        s->modifier[k] = (int32_t)track[2];
        s->sides[k] = track[0] > 0 ? (uint32_t)track[1] : 1u;
        s->reject_below[k] = (0u - s->sides[k]) % s->sides[k]; /* (2^32 - sides) mod sides */
        if (foe_armour > 0) {
            kind += shift;
            kind = kind < 0 ? 0 : kind > 3 ? 3 : kind;
        }
        s->kind[k] = (int32_t)kind;
    }
    s->most_dice = s->count[0] > s->count[1] ? s->count[0] : s->count[1];
    s->most_dice = s->most_dice > s->count[2] ? s->most_dice : s->count[2];
    int64_t armour = p[TSS_P_ARMOUR_DIE];
    if (armour > TSS_LANE_RANGE || armour < -TSS_LANE_RANGE)
        return 0;
    s->armoured = armour > 0;
    s->armour_sides = armour > 0 ? (uint32_t)armour : 1u;
    s->armour_reject_below = (0u - s->armour_sides) % s->armour_sides;
    return 1;
}

/* x / d as the reference writes it into a float32 observation (a float64 quotient, then rounded):
 * for integers below 2^24 that is the float32 quotient (a quotient rounded to 53 bits, then to 24,
 * is the one rounded to 24: 53 >= 2 x 24 + 2, Figueroa 1995), and vdivps is twice vdivpd's width. */
TSS_INLINE float tss_ratio(int32_t x, int32_t d) { return (float)x / (float)d; }

/* 1.0 where flag (0 or 1), else 0.0, by its bits: GCC turned (float)flag into masked stores. */
TSS_INLINE float tss_one_if(int32_t flag) {
    uint32_t bits = (uint32_t)-flag & 0x3f800000u;
    float one;
    memcpy(&one, &bits, sizeof one);
    return one;
}

TSS_INLINE float tss_capped_ratio(int32_t x, int32_t d) { return tss_ratio(tss_select(-(x < d), x, d), d); }

/* Steps lanes 0 .. count - 1 (count <= 64; pointers at the first lane's rows; ahead: each lane's
 * first block of the step, four words a lane). Returns the lanes it stepped as bits. */
COMBATSIM_CLONES static uint64_t tss_step_lanes(const int64_t *iparams, const uint64_t *seeds, int64_t *state,
                                                const int64_t *actions, const int64_t *policies, double shaping,
                                                float *obs, float *reward, uint8_t *terminated, uint8_t *truncated,
                                                int8_t *mask_out, int64_t count, const uint32_t *ahead) {
    TssLaneSide P[2];
    TssLanes lanes, *L = &lanes;
    uint32_t words[TSS_LANE_WORDS][TSS_LANES];
    int32_t ended[TSS_LANES], cut[TSS_LANES];
    uint32_t reward0[TSS_LANES], reward1[TSS_LANES]; /* float32 bits */
    float rows[24][TSS_LANES]; /* the observations, and padding for the last transpose */
    uint32_t mask_bytes[TSS_LANES];
    int64_t max_steps = iparams[TSS_G_MAX_STEPS];
    int n_sides = policies[1] == TSS_POLICY_EXTERNAL ? 2 : 1;
    if (count < TSS_LANES_MIN)
        return 0;
    if (!tss_lane_side(&P[0], iparams, 0, policies[0]) || !tss_lane_side(&P[1], iparams, 1, policies[1]))
        return 0;
    if (max_steps < 1 || max_steps > TSS_LANE_RANGE)
        return 0;
    int64_t score0 = iparams[TSS_P_ACTION_CHECK], score1 = iparams[TSS_SIDE_PARAMS + TSS_P_ACTION_CHECK];
    int32_t tie_first = score0 > score1 ? 0 : score1 > score0 ? 1 : -1; /* -1: the tie die decides */
    int any_reset = 0;

    /* Gather: every lane's state into lanes of int32. A state the reference's own steps never leave
     * goes to the reference (a resetting lane's state is replaced, whatever it was). */
    int32_t fields[TSS_GATHERED][TSS_LANES], wide[TSS_LANES], late[TSS_LANES];
    int full = (int)count & ~7;
    for (int first = 0; first < full; first += 8) /* a field outside int32 is `wide`, and so bad */
        lanes_gather8(state, TSS_STATE_SIZE, TSS_S_RETRIES, TSS_GATHERED / 4, first, fields, wide);
    for (int i = full; i < count; i++)
        lanes_gather1(state, TSS_STATE_SIZE, TSS_S_RETRIES, TSS_GATHERED / 4, i, fields, wide);
    for (int i = 0; i < count; i++) {
        const int64_t *row = state + i * TSS_STATE_SIZE;
        /* The flags in full width: the int32 fields stand for the rest where no field is wide. */
        L->reset[i] = row[TSS_S_NEEDS_RESET] != 0;
        late[i] = (uint64_t)row[TSS_S_T] >= (uint64_t)max_steps;
        L->t[i] = (int32_t)row[TSS_S_T];
    }
#define TSS_FIELD(name) fields[(name) - TSS_S_RETRIES][i]
#define TSS_SIDE_FIELD(side, name) fields[TSS_S_SIDE + (side) * TSS_SIDE_STATE + (name) - TSS_S_RETRIES][i]
    for (int i = 0; i < count; i++) {
        int32_t reset = L->reset[i];
        /* Fields with one bound checked together: an OR of values in 0 .. 2^k - 1 stays below 2^k
         * (int32 values here: every field outside int32 is `wide`, and so bad). */
        uint32_t tracks = (uint32_t)(TSS_SIDE_FIELD(0, TSS_S_STUN) | TSS_SIDE_FIELD(0, TSS_S_WOUND) |
                                     TSS_SIDE_FIELD(0, TSS_S_MORTAL) | TSS_SIDE_FIELD(1, TSS_S_STUN) |
                                     TSS_SIDE_FIELD(1, TSS_S_WOUND) | TSS_SIDE_FIELD(1, TSS_S_MORTAL));
        uint32_t phases = (uint32_t)(TSS_FIELD(TSS_S_PHASE) | TSS_SIDE_FIELD(0, TSS_S_FIRST_PHASE) |
                                     TSS_SIDE_FIELD(1, TSS_S_FIRST_PHASE));
        uint32_t flags = (uint32_t)(TSS_FIELD(TSS_S_FIRST_MOVER) | TSS_SIDE_FIELD(0, TSS_S_AIMED) |
                                    TSS_SIDE_FIELD(1, TSS_S_AIMED));
        int32_t bad = wide[i] | late[i] | (tracks >= TSS_LANE_RANGE) | (phases > 3) | (flags > 1) |
                      ((uint32_t)TSS_SIDE_FIELD(0, TSS_S_ACTIONS_LEFT) > (uint32_t)P[0].per_round) |
                      ((uint32_t)TSS_SIDE_FIELD(1, TSS_S_ACTIONS_LEFT) > (uint32_t)P[1].per_round);
        int32_t keep = -((bad | reset) ^ 1); /* zeros where the lane resets or goes to the body */
        L->slow[i] = seeds ? bad & (reset ^ 1) : bad | reset;
        any_reset |= reset;
        L->t[i] &= keep;
        L->phase[i] = TSS_FIELD(TSS_S_PHASE) & keep;
        L->first[i] = TSS_FIELD(TSS_S_FIRST_MOVER) & keep;
        for (int side = 0; side < 2; side++) {
            L->stun[side][i] = TSS_SIDE_FIELD(side, TSS_S_STUN) & keep;
            L->wound[side][i] = TSS_SIDE_FIELD(side, TSS_S_WOUND) & keep;
            L->mortal[side][i] = TSS_SIDE_FIELD(side, TSS_S_MORTAL) & keep;
            L->first_phase[side][i] = TSS_SIDE_FIELD(side, TSS_S_FIRST_PHASE) & keep;
            L->left[side][i] = TSS_SIDE_FIELD(side, TSS_S_ACTIONS_LEFT) & keep;
            L->aimed[side][i] = TSS_SIDE_FIELD(side, TSS_S_AIMED) & keep;
        }
    }
#undef TSS_FIELD
#undef TSS_SIDE_FIELD
    for (int i = 0; i < count; i++) {
        for (int side = 0; side < 2; side++) {
            int64_t action = actions[2 * i + side];
            L->choice[side][i] = (uint64_t)action < TSS_ACTIONS ? (int32_t)action : TSS_NO_ACTION;
        }
        const uint32_t *block = ahead + 4 * i;
        words[0][i] = block[0];
        words[1][i] = block[1];
        words[2][i] = block[2];
        words[3][i] = block[3];
    }
    /* Lanes past count idle through the step (nothing of theirs is written). */
    for (int i = (int)count; i < TSS_LANES; i++) {
        L->reset[i] = 0;
        L->slow[i] = 1;
        L->t[i] = L->phase[i] = L->first[i] = 0;
        for (int side = 0; side < 2; side++) {
            L->stun[side][i] = L->wound[side][i] = L->mortal[side][i] = 0;
            L->first_phase[side][i] = L->left[side][i] = L->aimed[side][i] = L->dealt[side][i] = 0;
            L->choice[side][i] = TSS_NO_ACTION;
        }
        words[0][i] = words[1][i] = words[2][i] = words[3][i] = 0;
    }
    memset(words[4], 0, sizeof words - sizeof words[0] * 4);
    if (any_reset && seeds) { /* the new episode's first block: its first round's action checks */
        int n = 0, lane[TSS_LANES];
        uint64_t keys[TSS_LANES], items[TSS_LANES], resetting = 0;
        uint32_t blocks[TSS_LANES], fresh[4 * TSS_LANES];
        for (int i = 0; i < count; i++)
            resetting |= (uint64_t)L->reset[i] << i;
        for (; resetting; resetting &= resetting - 1) {
            int i = TSS_LOWEST_BIT(resetting);
            lane[n] = i;
            keys[n] = seeds[i];
            items[n] = (uint64_t)state[i * TSS_STATE_SIZE + TSS_S_EPISODE] + 1;
            blocks[n++] = 0;
        }
        philox_keyed_blocks(n, keys, items, blocks, 0, fresh);
        for (int k = 0; k < n; k++)
            for (int j = 0; j < 4; j++)
                words[j][lane[k]] = fresh[4 * k + j];
    }

    /* The choices (on the state at the start of the phase). */
    for (int i = 0; i < TSS_LANES; i++) {
        for (int side = 0; side < 2; side++) {
            const TssLaneSide *p = &P[side];
            int32_t can = (L->phase[i] >= L->first_phase[side][i]) & (L->left[side][i] > 0) &
                          (tss_out(p, L->stun[side][i], L->wound[side][i], L->mortal[side][i]) ^ 1);
            int32_t scripted = tss_select(-can, TSS_A_ATTACK, TSS_A_WAIT); /* attack whenever able */
            L->choice[side][i] = tss_select(-(policies[side] == TSS_POLICY_SCRIPTED), scripted, L->choice[side][i]);
        }
        L->pos[i] = 0;
        L->drawn[i] = 4;
        L->dealt[0][i] = L->dealt[1][i] = 0;
    }

    /* The first mover's turn, the other's, then the next phase (or a new round: its action checks
     * and tie die); a resetting lane only rolls its first round's. */
    tss_lanes_take_turn(P, L, 0, seeds, state, count, words);
    tss_lanes_take_turn(P, L, 1, seeds, state, count, words);
    int32_t any_round = 0;
    for (int i = 0; i < TSS_LANES; i++) {
        int32_t out = tss_out(&P[0], L->stun[0][i], L->wound[0][i], L->mortal[0][i]) |
                      tss_out(&P[1], L->stun[1][i], L->wound[1][i], L->mortal[1][i]);
        int32_t reset = -L->reset[i], goes_on = ~reset & -(out ^ 1);
        int32_t phase = L->phase[i] + (goes_on & 1);
        int32_t round = reset | (goes_on & -(phase == 4));
        L->phase[i] = phase & ~round;
        L->round[i] = round;
        L->need[i] = round & -(L->slow[i] ^ 1) & (L->pos[i] + 3);
        any_round |= round;
    }
    if (any_round) {
        tss_lanes_ensure(seeds, state, count, L, words);
        for (int i = 0; i < TSS_LANES; i++) {
            int32_t round = L->round[i];
            int32_t check0 = tss_die(words, L, i, round, TSS_D20, TSS_D20_REJECT_BELOW) +
                             tss_dazed(&P[0], L->stun[0][i], L->wound[0][i], L->mortal[0][i]);
            int32_t check1 = tss_die(words, L, i, round, TSS_D20, TSS_D20_REJECT_BELOW) +
                             tss_dazed(&P[1], L->stun[1][i], L->wound[1][i], L->mortal[1][i]);
            int32_t tie = tss_die(words, L, i, round, 2u, 0u) - 1;
            L->first_phase[0][i] = tss_select(round, tss_first_phase(&P[0], check0), L->first_phase[0][i]);
            L->first_phase[1][i] = tss_select(round, tss_first_phase(&P[1], check1), L->first_phase[1][i]);
            L->left[0][i] = tss_select(round, P[0].per_round, L->left[0][i]);
            L->left[1][i] = tss_select(round, P[1].per_round, L->left[1][i]);
            L->first[i] = tss_select(round, tss_select(-(tie_first < 0), tie, tie_first), L->first[i]);
        }
    }

    /* The outcome (a resetting lane: none, rewards +0.0) and the sides' observations. */
    int32_t total0 = P[0].durability[0] + P[0].durability[1] + P[0].durability[2];
    int32_t total1 = P[1].durability[0] + P[1].durability[1] + P[1].durability[2];
    for (int i = 0; i < TSS_LANES; i++) {
        int32_t keep = -(L->reset[i] ^ 1);
        int32_t out0 = tss_out(&P[0], L->stun[0][i], L->wound[0][i], L->mortal[0][i]);
        int32_t out1 = tss_out(&P[1], L->stun[1][i], L->wound[1][i], L->mortal[1][i]);
        int32_t step = (L->t[i] + 1) & keep;
        ended[i] = (out0 | out1) & keep;
        cut[i] = (ended[i] ^ 1) & (step >= max_steps) & keep;
        double outcome = (double)(out1 & (out0 ^ 1)) - (double)(out0 & (out1 ^ 1));
        double shaped = shaping * ((double)L->dealt[0][i] / (double)total1 - (double)L->dealt[1][i] / (double)total0);
        float stepped0 = (float)(outcome + shaped), stepped1 = (float)(-outcome - shaped);
        uint32_t bits0, bits1;
        memcpy(&bits0, &stepped0, sizeof bits0);
        memcpy(&bits1, &stepped1, sizeof bits1);
        reward0[i] = bits0 & (uint32_t)keep;
        reward1[i] = bits1 & (uint32_t)keep;
        L->t[i] = step;
    }

    uint64_t done = 0;
    memset(rows[TSS_OBS_SIZE], 0, sizeof rows - sizeof rows[0] * TSS_OBS_SIZE);
    for (int side = 0; side < n_sides; side++) {
        const TssLaneSide *self = &P[side], *other = &P[1 - side];
        int o = 1 - side;
        for (int i = 0; i < TSS_LANES; i++) {
            int32_t phase = L->phase[i];
            int32_t own_out = tss_out(self, L->stun[side][i], L->wound[side][i], L->mortal[side][i]);
            int32_t foe_out = tss_out(other, L->stun[o][i], L->wound[o][i], L->mortal[o][i]);
            int32_t can = (phase >= L->first_phase[side][i]) & (L->left[side][i] > 0) & (own_out ^ 1);
            int32_t foe_can = (phase >= L->first_phase[o][i]) & (L->left[o][i] > 0) & (foe_out ^ 1);
            int32_t own_dazed = tss_dazed(self, L->stun[side][i], L->wound[side][i], L->mortal[side][i]);
            int32_t foe_dazed = tss_dazed(other, L->stun[o][i], L->wound[o][i], L->mortal[o][i]);
            /* min(x / d, 1.0) as min(x, d) / d: d / d is 1 exactly (a float min kept the loop scalar). */
            rows[0][i] = tss_capped_ratio(L->stun[side][i], self->durability[0]);
            rows[1][i] = tss_capped_ratio(L->wound[side][i], self->durability[1]);
            rows[2][i] = tss_capped_ratio(L->mortal[side][i], self->durability[2]);
            rows[3][i] = tss_capped_ratio(L->stun[o][i], other->durability[0]);
            rows[4][i] = tss_capped_ratio(L->wound[o][i], other->durability[1]);
            rows[5][i] = tss_capped_ratio(L->mortal[o][i], other->durability[2]);
            rows[6][i] = tss_one_if(phase == 0);
            rows[7][i] = tss_one_if(phase == 1);
            rows[8][i] = tss_one_if(phase == 2);
            rows[9][i] = tss_one_if(phase == 3);
            rows[10][i] = tss_one_if(can);
            rows[11][i] = tss_ratio(L->left[side][i], self->per_round);
            rows[12][i] = tss_one_if(foe_can);
            rows[13][i] = tss_one_if(L->aimed[side][i] != 0);
            rows[14][i] = tss_ratio(tss_select(-(own_dazed < 5), own_dazed, 5), 5);
            rows[15][i] = tss_ratio(tss_select(-(foe_dazed < 5), foe_dazed, 5), 5);
            rows[16][i] = tss_ratio(L->first_phase[side][i], 3);
            rows[17][i] = tss_ratio(L->first_phase[o][i], 3);
            rows[18][i] = tss_one_if(L->first[i] == side);
            rows[19][i] = tss_ratio(L->t[i], (int32_t)max_steps);
            /* The mask's bytes: attack, aim, two-weapon attack, wait (little-endian). */
            mask_bytes[i] = (uint32_t)can | (uint32_t)can << 8 | (uint32_t)(can & self->two_weapons) << 16 | 1u << 24;
        }
        for (int group = 0; group < TSS_LANES / 8; group++) {
            int32_t some_slow = 0;
            for (int j = 0; j < 8; j++)
                some_slow |= L->slow[8 * group + j];
            if (8 * group + 8 <= count && !some_slow) {
                LanesFloats8 first8[8], second8[8], last4[8];
                lanes_rows8(rows, 0, group, first8);
                lanes_rows8(rows, 1, group, second8);
                lanes_rows8(rows, 2, group, last4); /* rows 16..19 (20..23 are padding) */
                for (int j = 0; j < 8; j++) {
                    float *o_row = obs + (2 * (8 * group + j) + side) * TSS_OBS_SIZE;
                    *(LanesFloats8u *)o_row = first8[j];
                    *(LanesFloats8u *)(o_row + 8) = second8[j];
                    memcpy(o_row + 16, &last4[j], 4 * sizeof(float));
                    memcpy(mask_out + (2 * (8 * group + j) + side) * TSS_ACTIONS, &mask_bytes[8 * group + j],
                           TSS_ACTIONS);
                }
                continue;
            }
            for (int i = 8 * group; i < 8 * group + 8 && i < count; i++) {
                if (L->slow[i])
                    continue;
                float *o_row = obs + (2 * i + side) * TSS_OBS_SIZE;
                for (int k = 0; k < TSS_OBS_SIZE; k++)
                    o_row[k] = rows[k][i];
                memcpy(mask_out + (2 * i + side) * TSS_ACTIONS, &mask_bytes[i], TSS_ACTIONS);
            }
        }
    }
    for (int i = 0; i < count; i++) {
        int64_t *row = state + i * TSS_STATE_SIZE;
        if (L->slow[i])
            continue;
        memcpy(&reward[2 * i], &reward0[i], sizeof reward0[i]);
        memcpy(&reward[2 * i + 1], &reward1[i], sizeof reward1[i]);
        terminated[i] = (uint8_t)ended[i];
        truncated[i] = (uint8_t)cut[i];
        row[TSS_S_EPISODE] += L->reset[i];
        row[TSS_S_T] = L->t[i];
        row[TSS_S_RETRIES] &= -(int64_t)(L->reset[i] ^ 1);
        row[TSS_S_NEEDS_RESET] = ended[i] | cut[i];
        row[TSS_S_PHASE] = L->phase[i];
        row[TSS_S_FIRST_MOVER] = L->first[i];
        for (int side = 0; side < 2; side++) {
            int64_t *r = row + TSS_S_SIDE + side * TSS_SIDE_STATE;
            r[TSS_S_STUN] = L->stun[side][i];
            r[TSS_S_WOUND] = L->wound[side][i];
            r[TSS_S_MORTAL] = L->mortal[side][i];
            r[TSS_S_FIRST_PHASE] = L->first_phase[side][i];
            r[TSS_S_ACTIONS_LEFT] = L->left[side][i];
            r[TSS_S_AIMED] = L->aimed[side][i];
        }
        done |= 1ull << i;
    }
    return done;
}

#endif
