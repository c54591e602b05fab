/* EXP duel steps in lockstep: the Cython vector env's fast path (docs/rl.md, "Lockstep lanes").
 *
 * combatsim.rl.exp_reference steps one environment at a time, and its branches (hit or miss, a
 * burst's rounds, each damage die, a new episode) follow the dice, so a CPU mispredicts several
 * of them a step. exp_step_lanes steps up to 64 environments at once, without those branches, in
 * loops over lanes that GCC vectorises (target clones picked at load time: clones.h),
 * and does exactly what the reference's step does to every lane it reports done. A lane it does
 * not take is left untouched, and the caller steps it with the reference's body:
 * - a step whose dice need more than the step's first block of four words (each env's, drawn
 *   ahead by the caller) or hit a Lemire-rejected word,
 * - a state outside what the reference's own steps leave (a weapon slot outside 0..2, counters
 *   out of range).
 * A random policy (its choice draws a word) or parameters out of the ranges below send the whole
 * batch to the body. The layout constants are the reference's (tests/test_rl_kernels.py compares them).
 */
#ifndef COMBATSIM_RL_EXP_LANES_H
#define COMBATSIM_RL_EXP_LANES_H
#include <stdint.h>
#include <string.h>

#include "clones.h"
#include "rl/lanes_gather.h"

#define EXP_SLOTS 3
#define EXP_P_BONUS 0
#define EXP_P_MAXIMUM_ROLL 1
#define EXP_P_DAMAGE_ADJUSTMENT 2
#define EXP_P_DICE_COUNT 3
#define EXP_P_DICE_SIDES 4
#define EXP_P_DICE_MODIFIER 5
#define EXP_P_ROLLS 6
#define EXP_P_BURST 7
#define EXP_P_CAPACITY 8
#define EXP_SLOT_PARAMS 9
#define EXP_P_HIT_POINTS 0
#define EXP_P_ARMOUR_RATING 1
#define EXP_P_SLOTS 2
#define EXP_SIDE_PARAMS 29
#define EXP_G_MAX_STEPS 58
#define EXP_G_HIT_ON_EQUAL 59
#define EXP_S_EPISODE 0
#define EXP_S_T 1
#define EXP_S_RETRIES 2
#define EXP_S_NEEDS_RESET 3
#define EXP_S_SIDE 4
#define EXP_S_HP 0
#define EXP_S_WEAPON 1
#define EXP_S_AMMO 2
#define EXP_SIDE_STATE 5
#define EXP_STATE_SIZE 14
#define EXP_A_FIRE 0
#define EXP_A_RELOAD 1
#define EXP_A_WEAPON 2
#define EXP_ACTIONS 5
#define EXP_OBS_SIZE 16
#define EXP_MAX_ROLLS 5
#define EXP_KILODIE 1000
#define EXP_POLICY_EXTERNAL 0
#define EXP_POLICY_SCRIPTED 1
#define EXP_LANES 64
_Static_assert(EXP_LANES == LANES_COLUMNS && EXP_OBS_SIZE == 16, "the observations' transposes");
/* Fewer envs than this (a single env, a batch's last few) are stepped by the reference's body: the
 * lanes' loops cost the same for 1 env as for 64. */
#define EXP_LANES_MIN 16
/* An action that does nothing: an illegal choice (the reference's -1). */
#define EXP_NO_ACTION 5
/* Lemire's threshold for the kilodie: (2^32 - 1000) mod 1000 (a d4's is 0: 4 divides 2^32). */
#define EXP_KILODIE_REJECT_BELOW 296u
/* Parameters and counters the lanes take stay within +-2^20 (int32 sums of a few of them cannot
 * overflow); exp_params keeps a persona's inside (hit points, ammunition, sides up to 10^6). */
#define EXP_LANE_RANGE (1 << 20)

/* The helpers are inlined into each clone of the step (a call in a loop keeps it scalar). */
#if defined(__GNUC__)
#define EXP_INLINE static inline __attribute__((always_inline))
#else
#define EXP_INLINE static inline
#endif

/* One side's parameters, per weapon slot where they belong to a slot. */
typedef struct {
    int32_t scripted, hit_points, bar; /* bar: the foe's armour rating less hit_on_equal */
    int32_t bonus[EXP_SLOTS], maximum_roll[EXP_SLOTS], base[EXP_SLOTS]; /* base: dice modifier + DA */
    int32_t count[EXP_SLOTS], rolls[EXP_SLOTS], burst[EXP_SLOTS], per_roll[EXP_SLOTS], capacity[EXP_SLOTS];
    int32_t armed[EXP_SLOTS]; /* a weapon in the slot (rolls > 0), as an int32 flag for the lanes' masks */
    uint32_t sides[EXP_SLOTS], reject_below[EXP_SLOTS];
    float hit_chance_obs[EXP_SLOTS], fixed_ammo_obs[EXP_SLOTS];
    uint32_t hit_chance_bits[EXP_SLOTS]; /* hit_chance_obs's bits, picked per lane by integer masks */
} ExpLaneSide;

/* Lanes' per-side state during a step: the weapon in hand's values (exp_lanes_hold), and the fire
 * of this step (with the weapon the side started the unit with). */
typedef struct {
    int32_t hp[EXP_LANES], weapon[EXP_LANES], ammo[EXP_SLOTS][EXP_LANES], choice[EXP_LANES];
    int32_t held[EXP_LANES], capacity[EXP_LANES], per_roll[EXP_LANES], rolls[EXP_LANES];
    int32_t fire_rolls[EXP_LANES], dealt[EXP_LANES];
    int32_t bonus[EXP_LANES], maximum_roll[EXP_LANES], base[EXP_LANES], count[EXP_LANES], burst[EXP_LANES];
    uint32_t sides[EXP_LANES], reject_below[EXP_LANES];
} ExpLaneState;

/* yes where mask (all ones), no where not (zero): a select GCC vectorises without branches. */
EXP_INLINE int32_t exp_select(int32_t mask, int32_t yes, int32_t no) { return (yes & mask) | (no & ~mask); }

/* The slot's value of a lane's weapon (weapon in 0..2), by the masks "slot > 0" and "slot > 1":
 * chained conditional expressions on the slot (weapon == 0 ? ... : ...) left their loops scalar. */
EXP_INLINE int32_t exp_pick(int32_t weapon, const int32_t *by_slot) {
    int32_t past0 = -(weapon > 0), past1 = -(weapon > 1);
    return by_slot[0] ^ ((by_slot[0] ^ by_slot[1]) & past0) ^ ((by_slot[1] ^ by_slot[2]) & past1);
}

EXP_INLINE uint32_t exp_pick_u(int32_t weapon, const uint32_t *by_slot) {
    uint32_t past0 = -(uint32_t)(weapon > 0), past1 = -(uint32_t)(weapon > 1);
    return by_slot[0] ^ ((by_slot[0] ^ by_slot[1]) & past0) ^ ((by_slot[1] ^ by_slot[2]) & past1);
}

/* Every lane's weapon in hand: its ammunition, capacity, rounds a roll and rolls a unit. */
EXP_INLINE void exp_lanes_hold(const ExpLaneSide *p, ExpLaneState *s) {
    for (int i = 0; i < EXP_LANES; i++) {
        int32_t weapon = s->weapon[i], ammo0 = s->ammo[0][i], ammo1 = s->ammo[1][i], ammo2 = s->ammo[2][i];
        int32_t past0 = -(weapon > 0), past1 = -(weapon > 1);
        s->held[i] = ammo0 ^ ((ammo0 ^ ammo1) & past0) ^ ((ammo1 ^ ammo2) & past1);
        s->capacity[i] = exp_pick(weapon, p->capacity);
        s->per_roll[i] = exp_pick(weapon, p->per_roll);
        s->rolls[i] = exp_pick(weapon, p->rolls);
    }
}

/* One side's legal actions as bits (the reference's _legal) in lane i, after exp_lanes_hold. */
EXP_INLINE int32_t exp_legal_bits(const ExpLaneSide *p, const ExpLaneState *s, int i) {
    int32_t weapon = s->weapon[i], ammo = s->held[i], capacity = s->capacity[i];
    int32_t fire = (capacity == 0) | (ammo >= s->per_roll[i]);
    int32_t reload = (capacity > 0) & (ammo < capacity);
    return fire | reload << EXP_A_RELOAD | ((weapon != 0) & p->armed[0]) << EXP_A_WEAPON |
           ((weapon != 1) & p->armed[1]) << (EXP_A_WEAPON + 1) | ((weapon != 2) & p->armed[2]) << (EXP_A_WEAPON + 2);
}

/* The action mask's bytes (byte a = bit a of `bits`, bits 0..4), in one little-endian word. */
EXP_INLINE uint64_t exp_mask_bytes(uint32_t bits) {
    uint64_t x = ((uint64_t)bits * 0x0101010101010101ull) & 0x8040201008040201ull;
    return (((((x & 0x7F7F7F7F7F7F7F7Full) + 0x7F7F7F7F7F7F7F7Full) | x) & 0x8080808080808080ull) >> 7);
}

/* One side's choice in every lane, judged legal, and its effect on the side's own state: Fire
 * spends its rounds (the rolls it can pay for, the reference's min(rolls, ammo // per_roll)),
 * Reload refills, Weapon k draws slot k. The fire's parameters are those of the weapon it started with. */
EXP_INLINE void exp_lanes_choose(const ExpLaneSide *p, ExpLaneState *s) {
    exp_lanes_hold(p, s);
    for (int i = 0; i < EXP_LANES; i++) {
        int32_t weapon = s->weapon[i];
        s->bonus[i] = exp_pick(weapon, p->bonus);
        s->maximum_roll[i] = exp_pick(weapon, p->maximum_roll);
        s->base[i] = exp_pick(weapon, p->base);
        s->count[i] = exp_pick(weapon, p->count);
        s->burst[i] = exp_pick(weapon, p->burst);
        s->sides[i] = exp_pick_u(weapon, p->sides);
        s->reject_below[i] = exp_pick_u(weapon, p->reject_below);
    }
    for (int i = 0; i < EXP_LANES; i++) {
        int32_t legal = exp_legal_bits(p, s, i);
        /* The scripted policy: the first legal action (the lowest bit), none when no bit is set. */
        int32_t scripted = EXP_NO_ACTION;
        scripted = (legal & 16) ? EXP_A_WEAPON + 2 : scripted;
        scripted = (legal & 8) ? EXP_A_WEAPON + 1 : scripted;
        scripted = (legal & 4) ? EXP_A_WEAPON : scripted;
        scripted = (legal & 2) ? EXP_A_RELOAD : scripted;
        scripted = (legal & 1) ? EXP_A_FIRE : scripted;
        int32_t scripted_mask = -p->scripted; /* a mask: a select on a loop-invariant flag stayed scalar */
        int32_t choice = (scripted & scripted_mask) | (s->choice[i] & ~scripted_mask);
        choice = (legal >> choice) & 1 ? choice : EXP_NO_ACTION;
        int32_t weapon = s->weapon[i], ammo = s->held[i], capacity = s->capacity[i];
        int32_t per_roll = s->per_roll[i], rolls = s->rolls[i], unlimited = capacity == 0;
        int32_t paid = ((1 <= rolls) & (unlimited | (per_roll <= ammo))) +
                       ((2 <= rolls) & (unlimited | (2 * per_roll <= ammo))) +
                       ((3 <= rolls) & (unlimited | (3 * per_roll <= ammo))) +
                       ((4 <= rolls) & (unlimited | (4 * per_roll <= ammo))) +
                       ((5 <= rolls) & (unlimited | (5 * per_roll <= ammo)));
        int32_t fire = choice == EXP_A_FIRE, reload = choice == EXP_A_RELOAD;
        int32_t fire_rolls = -fire & paid;
        int32_t after = reload ? capacity : ammo - (-(unlimited ^ 1) & fire_rolls * per_roll);
        int32_t past0 = -(weapon > 0), past1 = -(weapon > 1);
        s->ammo[0][i] = exp_select(~past0, after, s->ammo[0][i]);
        s->ammo[1][i] = exp_select(past0 & ~past1, after, s->ammo[1][i]);
        s->ammo[2][i] = exp_select(past1, after, s->ammo[2][i]);
        s->weapon[i] = (choice >= EXP_A_WEAPON) & (choice < EXP_ACTIONS) ? choice - EXP_A_WEAPON : weapon;
        s->choice[i] = choice;
        s->fire_rolls[i] = fire_rolls;
        s->dealt[i] = 0;
    }
}

/* Both sides' fire from each lane's four words, one word a pass: the reference's _fire for side 0,
 * then side 1, as a state machine per lane (whose side fires, rolls left, what the next word is
 * for: 0 a to-hit kilodie, 1 a burst's rounds d4, 2 a damage die). A lane still wanting a word
 * after the fourth, or meeting a rejected one, is marked in `slow`. */
EXP_INLINE void exp_lanes_fire(const ExpLaneSide *sides, ExpLaneState *lanes, const uint32_t words[4][EXP_LANES],
                               int32_t *slow) {
    ExpLaneState *s0 = &lanes[0], *s1 = &lanes[1];
    int32_t side[EXP_LANES], rolls_left[EXP_LANES], phase[EXP_LANES], dice_left[EXP_LANES];
    int32_t rounds_left[EXP_LANES], damage[EXP_LANES];
    for (int i = 0; i < EXP_LANES; i++) {
        int32_t rolls0 = s0->fire_rolls[i], rolls1 = s1->fire_rolls[i];
        side[i] = rolls0 > 0 ? 0 : rolls1 > 0 ? 1 : 2;
        rolls_left[i] = exp_select(-(rolls0 > 0), rolls0, rolls1);
        phase[i] = dice_left[i] = rounds_left[i] = damage[i] = 0;
    }
    for (int w = 0; w < 4; w++) {
        const uint32_t *word_of = words[w];
        for (int i = 0; i < EXP_LANES; i++) {
            int32_t who = side[i], at = phase[i], dice = dice_left[i], rounds_now = rounds_left[i];
            int32_t on = who < 2, second = -(who == 1); /* second: a mask, side 1's values */
            int32_t bar = exp_select(second, sides[1].bar, sides[0].bar);
            int32_t bonus = exp_select(second, s1->bonus[i], s0->bonus[i]);
            int32_t maximum_roll = exp_select(second, s1->maximum_roll[i], s0->maximum_roll[i]);
            int32_t base = exp_select(second, s1->base[i], s0->base[i]);
            int32_t count = exp_select(second, s1->count[i], s0->count[i]);
            int32_t burst = exp_select(second, s1->burst[i], s0->burst[i]);
            uint32_t dice_sides = (uint32_t)exp_select(second, (int32_t)s1->sides[i], (int32_t)s0->sides[i]);
            uint32_t dice_reject =
                (uint32_t)exp_select(second, (int32_t)s1->reject_below[i], (int32_t)s0->reject_below[i]);
            /* Masks, not conditional expressions: GCC widened those to 64 bits before the product. */
            int32_t kilodie_word = -(at == 0), rounds_word = -(at == 1);
            uint32_t die_sides = (uint32_t)exp_select(kilodie_word, EXP_KILODIE,
                                                      exp_select(rounds_word, 4, (int32_t)dice_sides));
            uint32_t reject_below = (uint32_t)exp_select(kilodie_word, (int32_t)EXP_KILODIE_REJECT_BELOW,
                                                         exp_select(rounds_word, 0, (int32_t)dice_reject));
            uint32_t word = word_of[i];
            int32_t value = (int32_t)(((uint64_t)word * (uint64_t)die_sides) >> 32) + 1;
            slow[i] |= on & (word * die_sides < reject_below);
            int32_t to_hit = value + bonus < maximum_roll ? value + bonus : maximum_roll;
            int32_t kilodie = on & (at == 0), rounds_die = on & (at == 1), damage_die = on & (at == 2);
            int32_t hit = kilodie & (to_hit > bar);
            /* A hit lands one round, or a burst's d4 - 1 rounds; each round rolls `count` dice. */
            int32_t rounds_start = (hit & (burst ^ 1)) | (rounds_die & (value > 1));
            int32_t rounds = kilodie ? 1 : value - 1;
            int32_t total = damage[i] + value, dice_after = dice - 1;
            int32_t round_done = damage_die & (dice_after == 0);
            int32_t rounds_after = rounds_now - round_done;
            int32_t next_round = round_done & (rounds_after > 0);
            int32_t roll_done =
                (kilodie & (hit ^ 1)) | (rounds_die & (value == 1)) | (round_done & (rounds_after == 0));
            int32_t landed = -round_done & (total > 0 ? total : 0);
            s0->dealt[i] += ~second & landed;
            s1->dealt[i] += second & landed;
            int32_t fresh = -(rounds_start | next_round), rolling = -damage_die;
            int32_t next_phase = (hit & burst) ? 1 : ((fresh & 1) | (damage_die & (round_done ^ 1))) ? 2 : 0;
            /* Every store a mask select of loaded values: "x = c ? y : x" became branchy masked stores. */
            phase[i] = exp_select(-(on & ((hit & burst) | (fresh & 1) | damage_die | roll_done)), next_phase, at);
            dice_left[i] = exp_select(fresh, count, exp_select(rolling, dice_after, dice));
            damage[i] = exp_select(fresh, base, exp_select(rolling, total, damage[i]));
            rounds_left[i] = exp_select(-rounds_start, rounds, exp_select(rolling, rounds_after, rounds_now));
            int32_t left = rolls_left[i] - roll_done;
            int32_t side_done = roll_done & (left == 0);
            int32_t to_second = -(side_done & (who == 0) & (s1->fire_rolls[i] > 0));
            rolls_left[i] = exp_select(to_second, s1->fire_rolls[i], left);
            side[i] = exp_select(to_second, 1, exp_select(-side_done, 2, who));
        }
    }
    for (int i = 0; i < EXP_LANES; i++)
        slow[i] |= side[i] < 2;
}

/* x / d as the reference writes it into a float32 observation (a float64 quotient, then rounded). */
EXP_INLINE float exp_ratio(int32_t x, int32_t d) { return (float)((double)x / (double)d); }

/* One side's observations of every lane (the reference's _write_obs), as 16 rows of lanes. */
EXP_INLINE void exp_lanes_obs(float rows[EXP_OBS_SIZE][EXP_LANES], uint64_t *mask_bytes, const ExpLaneSide *self,
                              const ExpLaneSide *other, ExpLaneState *s, const ExpLaneState *o,
                              const float *hp_self, const float *hp_other, const float *time_obs) {
    exp_lanes_hold(self, s);
    for (int k = 0; k < EXP_SLOTS; k++) {
        if (self->rolls[k] > 0 && self->capacity[k] > 0)
            for (int i = 0; i < EXP_LANES; i++)
                rows[5 + k][i] = exp_ratio(s->ammo[k][i], self->capacity[k]);
        else
            for (int i = 0; i < EXP_LANES; i++)
                rows[5 + k][i] = self->fixed_ammo_obs[k];
    }
    for (int i = 0; i < EXP_LANES; i++) {
        /* One-hot weapons from the masks "slot > 0" and "slot > 1" (equality tests became table lookups). */
        int32_t own = s->weapon[i], foe = o->weapon[i];
        int32_t own0 = -(own > 0), own1 = -(own > 1), foe0 = -(foe > 0), foe1 = -(foe > 1);
        rows[0][i] = hp_self[i];
        rows[1][i] = hp_other[i];
        rows[2][i] = (float)(1 + own0);
        rows[3][i] = (float)(own1 - own0);
        rows[4][i] = (float)(-own1);
        rows[8][i] = self->hit_chance_obs[0];
        rows[9][i] = self->hit_chance_obs[1];
        rows[10][i] = self->hit_chance_obs[2];
        rows[11][i] = (float)(1 + foe0);
        rows[12][i] = (float)(foe1 - foe0);
        rows[13][i] = (float)(-foe1);
        rows[14][i] = time_obs[i];
        uint32_t foe_chance = exp_pick_u(foe, other->hit_chance_bits);
        memcpy(&rows[15][i], &foe_chance, sizeof foe_chance);
    }
    for (int i = 0; i < EXP_LANES; i++)
        mask_bytes[i] = exp_mask_bytes((uint32_t)exp_legal_bits(self, s, i));
}

EXP_INLINE int32_t exp_in_range(int64_t value) { return value >= -EXP_LANE_RANGE && value <= EXP_LANE_RANGE; }

/* A side's parameters into int32; 0 when one is outside what the lanes take. */
EXP_INLINE int exp_lane_side(ExpLaneSide *s, const int64_t *iparams, int side, int64_t policy) {
    const int64_t *p = iparams + side * EXP_SIDE_PARAMS;
    int64_t bar = iparams[(1 - side) * EXP_SIDE_PARAMS + EXP_P_ARMOUR_RATING] - iparams[EXP_G_HIT_ON_EQUAL];
    if (policy != EXP_POLICY_EXTERNAL && policy != EXP_POLICY_SCRIPTED)
        return 0; /* a random policy draws its choice: the reference's steps */
    if (p[EXP_P_HIT_POINTS] < 1 || p[EXP_P_HIT_POINTS] > EXP_LANE_RANGE || !exp_in_range(bar))
        return 0;
    s->scripted = policy == EXP_POLICY_SCRIPTED;
    s->hit_points = (int32_t)p[EXP_P_HIT_POINTS];
    s->bar = (int32_t)bar;
    for (int k = 0; k < EXP_SLOTS; k++) {
        const int64_t *w = p + EXP_P_SLOTS + k * EXP_SLOT_PARAMS;
        int64_t rolls = w[EXP_P_ROLLS], sides = w[EXP_P_DICE_SIDES];
        if (rolls < 0 || rolls > EXP_MAX_ROLLS || (uint64_t)w[EXP_P_BURST] > 1 ||
            (uint64_t)w[EXP_P_CAPACITY] > EXP_LANE_RANGE || !exp_in_range(w[EXP_P_BONUS]) ||
            !exp_in_range(w[EXP_P_MAXIMUM_ROLL]) || !exp_in_range(w[EXP_P_DAMAGE_ADJUSTMENT]) ||
            !exp_in_range(w[EXP_P_DICE_MODIFIER]))
            return 0;
        /* A slot that fires rolls at least one die of 1..2^20 sides (exp_params makes a constant one d1). */
        if (rolls > 0 && (w[EXP_P_DICE_COUNT] < 1 || w[EXP_P_DICE_COUNT] > EXP_LANE_RANGE || sides < 1 ||
                          sides > EXP_LANE_RANGE))
            return 0;
        s->rolls[k] = (int32_t)rolls;
        s->armed[k] = rolls > 0;
        s->burst[k] = (int32_t)w[EXP_P_BURST];
        s->per_roll[k] = 1 + 2 * s->burst[k];
        s->capacity[k] = (int32_t)w[EXP_P_CAPACITY];
        s->bonus[k] = (int32_t)w[EXP_P_BONUS];
        s->maximum_roll[k] = (int32_t)w[EXP_P_MAXIMUM_ROLL];
        s->base[k] = (int32_t)(w[EXP_P_DICE_MODIFIER] + w[EXP_P_DAMAGE_ADJUSTMENT]);
        s->count[k] = rolls > 0 ? (int32_t)w[EXP_P_DICE_COUNT] : 1;
        s->sides[k] = rolls > 0 ? (uint32_t)sides : 1u;
        s->reject_below[k] = (uint32_t)((0x100000000ull - (uint64_t)s->sides[k]) % s->sides[k]);
        /* The reference's _hit_chance and the fixed ammunition fractions (empty slot 0, none needed 1). */
        int64_t chance = 0, short_by = bar - w[EXP_P_BONUS];
        if (rolls > 0 && w[EXP_P_MAXIMUM_ROLL] > bar)
            chance = EXP_KILODIE - (short_by < 0 ? 0 : short_by > EXP_KILODIE ? EXP_KILODIE : short_by);
        s->hit_chance_obs[k] = (float)((double)chance / (double)EXP_KILODIE);
        memcpy(&s->hit_chance_bits[k], &s->hit_chance_obs[k], sizeof s->hit_chance_bits[k]);
        s->fixed_ammo_obs[k] = rolls == 0 ? 0.0f : 1.0f;
    }
    return 1;
}

/* Steps lanes 0 .. count - 1 (count <= 64; pointers at the first lane's rows; ahead: each lane's
 * first block of the step, four words a lane). Returns the lanes it stepped as bits. */
COMBATSIM_CLONES static uint64_t exp_step_lanes(const int64_t *iparams, int64_t *state, const int64_t *actions,
                                                const int64_t *policies, double shaping, float *obs, float *reward,
                                                uint8_t *terminated, uint8_t *truncated, int8_t *mask_out,
                                                int64_t count, const uint32_t *ahead) {
    ExpLaneSide sides[2];
    ExpLaneState lanes[2];
    uint32_t words[4][EXP_LANES];
    int32_t t[EXP_LANES], reset[EXP_LANES], slow[EXP_LANES], ended[EXP_LANES], cut[EXP_LANES];
    float hp_obs[2][EXP_LANES], time_obs[EXP_LANES];
    uint32_t reward0[EXP_LANES], reward1[EXP_LANES]; /* float32 bits */
    float rows[EXP_OBS_SIZE][EXP_LANES];
    uint64_t mask_bytes[EXP_LANES];
    int64_t max_steps = iparams[EXP_G_MAX_STEPS];
    int n_sides = policies[1] == EXP_POLICY_EXTERNAL ? 2 : 1;
    if (count < EXP_LANES_MIN)
        return 0;
    if (!exp_lane_side(&sides[0], iparams, 0, policies[0]) || !exp_lane_side(&sides[1], iparams, 1, policies[1]))
        return 0;
    if (max_steps < 1 || max_steps > EXP_LANE_RANGE)
        return 0;
    double hit_points0 = (double)sides[0].hit_points, hit_points1 = (double)sides[1].hit_points;

    /* Gather: every lane's state into lanes of int32. A state the reference's own steps never leave
     * (a weapon slot outside 0..2, ammunition or hit points beyond the range) goes to the reference. */
    for (int i = 0; i < count; i++) {
        const int64_t *row = state + i * EXP_STATE_SIZE;
        const int64_t *r0 = row + EXP_S_SIDE, *r1 = r0 + EXP_SIDE_STATE;
        uint64_t ammo = (uint64_t)(r0[EXP_S_AMMO] | r0[EXP_S_AMMO + 1] | r0[EXP_S_AMMO + 2] | r1[EXP_S_AMMO] |
                                   r1[EXP_S_AMMO + 1] | r1[EXP_S_AMMO + 2]);
        int32_t bad = ((uint64_t)row[EXP_S_T] >= (uint64_t)max_steps) | ((uint64_t)r0[EXP_S_WEAPON] > 2) |
                      ((uint64_t)r1[EXP_S_WEAPON] > 2) | (ammo > EXP_LANE_RANGE) |
                      ((uint64_t)(r0[EXP_S_HP] + EXP_LANE_RANGE) > 2 * EXP_LANE_RANGE) |
                      ((uint64_t)(r1[EXP_S_HP] + EXP_LANE_RANGE) > 2 * EXP_LANE_RANGE);
        int32_t good = -(bad ^ 1); /* a lane the reference steps gets zeros: nothing below overflows */
        slow[i] = bad;
        reset[i] = row[EXP_S_NEEDS_RESET] != 0;
        t[i] = (int32_t)row[EXP_S_T] & good;
        for (int side = 0; side < 2; side++) {
            const int64_t *r = side ? r1 : r0;
            ExpLaneState *s = &lanes[side];
            int64_t action = actions[2 * i + side];
            s->hp[i] = (int32_t)r[EXP_S_HP] & good;
            s->weapon[i] = (int32_t)r[EXP_S_WEAPON] & good;
            for (int k = 0; k < EXP_SLOTS; k++)
                s->ammo[k][i] = (int32_t)r[EXP_S_AMMO + k] & good;
            s->choice[i] = (uint64_t)action < EXP_ACTIONS ? (int32_t)action : EXP_NO_ACTION;
        }
        const uint32_t *block = ahead + 4 * i;
        words[0][i] = block[0];
        words[1][i] = block[1];
        words[2][i] = block[2];
        words[3][i] = block[3];
    }
    /* Lanes past count idle through the step (nothing of theirs is written). */
    for (int i = (int)count; i < EXP_LANES; i++) {
        slow[i] = 1;
        reset[i] = t[i] = 0;
        words[0][i] = words[1][i] = words[2][i] = words[3][i] = 0;
        for (int side = 0; side < 2; side++) {
            ExpLaneState *s = &lanes[side];
            s->hp[i] = s->weapon[i] = 0;
            s->ammo[0][i] = s->ammo[1][i] = s->ammo[2][i] = 0;
            s->choice[i] = EXP_NO_ACTION;
        }
    }

    /* Choices (legal on the state at the start of the unit) and their effects, then both fires. */
    exp_lanes_choose(&sides[0], &lanes[0]);
    exp_lanes_choose(&sides[1], &lanes[1]);
    exp_lanes_fire(sides, lanes, words, slow);

    /* Damage lands at once; then the outcome. A lane that resets instead starts its next episode. */
    for (int i = 0; i < EXP_LANES; i++) {
        ExpLaneState *s0 = &lanes[0], *s1 = &lanes[1];
        int32_t keep = -(reset[i] ^ 1);
        int32_t hp0 = s0->hp[i] - s1->dealt[i], hp1 = s1->hp[i] - s0->dealt[i];
        int32_t out0 = hp0 <= 0, out1 = hp1 <= 0;
        int32_t step = (t[i] + 1) & keep;
        ended[i] = (out0 | out1) & keep;
        cut[i] = (ended[i] ^ 1) & (step >= max_steps) & keep;
        double outcome = (double)(out1 & (out0 ^ 1)) - (double)(out0 & (out1 ^ 1));
        double shaped = shaping * ((double)s0->dealt[i] / hit_points1 - (double)s1->dealt[i] / hit_points0);
        float stepped0 = (float)(outcome + shaped), stepped1 = (float)(-outcome - shaped);
        uint32_t bits0, bits1; /* a reset's rewards are +0.0: bits by a mask (a float select stayed scalar) */
        memcpy(&bits0, &stepped0, sizeof bits0);
        memcpy(&bits1, &stepped1, sizeof bits1);
        reward0[i] = bits0 & (uint32_t)keep;
        reward1[i] = bits1 & (uint32_t)keep;
        t[i] = step;
        /* The new episode's state by masks (x = reset ? a : x became a conditional store, kept scalar). */
        s0->hp[i] = (hp0 & keep) | (sides[0].hit_points & ~keep);
        s1->hp[i] = (hp1 & keep) | (sides[1].hit_points & ~keep);
        s0->weapon[i] &= keep;
        s1->weapon[i] &= keep;
        s0->ammo[0][i] = (s0->ammo[0][i] & keep) | (sides[0].capacity[0] & ~keep);
        s0->ammo[1][i] = (s0->ammo[1][i] & keep) | (sides[0].capacity[1] & ~keep);
        s0->ammo[2][i] = (s0->ammo[2][i] & keep) | (sides[0].capacity[2] & ~keep);
        s1->ammo[0][i] = (s1->ammo[0][i] & keep) | (sides[1].capacity[0] & ~keep);
        s1->ammo[1][i] = (s1->ammo[1][i] & keep) | (sides[1].capacity[1] & ~keep);
        s1->ammo[2][i] = (s1->ammo[2][i] & keep) | (sides[1].capacity[2] & ~keep);
        hp_obs[0][i] = exp_ratio(s0->hp[i] > 0 ? s0->hp[i] : 0, sides[0].hit_points);
        hp_obs[1][i] = exp_ratio(s1->hp[i] > 0 ? s1->hp[i] : 0, sides[1].hit_points);
        time_obs[i] = (float)((double)step / (double)max_steps);
    }

    uint64_t done = 0;
    for (int side = 0; side < n_sides; side++) {
        exp_lanes_obs(rows, mask_bytes, &sides[side], &sides[1 - side], &lanes[side], &lanes[1 - side],
                      hp_obs[side], hp_obs[1 - side], time_obs);
        for (int group = 0; group < EXP_LANES / 8; group++) {
            int32_t some_left = 0; /* to the body */
            for (int j = 0; j < 8; j++)
                some_left |= slow[8 * group + j] & (reset[8 * group + j] ^ 1);
            if (8 * group + 8 <= count && !some_left) { /* eight lanes' rows, two transposes */
                LanesFloats8 first8[8], second8[8];
                lanes_rows8(rows, 0, group, first8);
                lanes_rows8(rows, 1, group, second8);
                for (int j = 0; j < 8; j++) {
                    float *o = obs + (2 * (8 * group + j) + side) * EXP_OBS_SIZE;
                    *(LanesFloats8u *)o = first8[j];
                    *(LanesFloats8u *)(o + 8) = second8[j];
                    memcpy(mask_out + (2 * (8 * group + j) + side) * EXP_ACTIONS, &mask_bytes[8 * group + j],
                           EXP_ACTIONS);
                }
                continue;
            }
            for (int i = 8 * group; i < 8 * group + 8 && i < count; i++) {
                float *o = obs + (2 * i + side) * EXP_OBS_SIZE;
                if (slow[i] & (reset[i] ^ 1))
                    continue;
                for (int k = 0; k < EXP_OBS_SIZE; k++)
                    o[k] = rows[k][i];
                memcpy(mask_out + (2 * i + side) * EXP_ACTIONS, &mask_bytes[i], EXP_ACTIONS);
            }
        }
    }
    for (int i = 0; i < count; i++) {
        int64_t *row = state + i * EXP_STATE_SIZE;
        if (slow[i] & (reset[i] ^ 1))
            continue;
        memcpy(&reward[2 * i], &reward0[i], sizeof reward0[i]);
        memcpy(&reward[2 * i + 1], &reward1[i], sizeof reward1[i]);
        terminated[i] = (uint8_t)ended[i];
        truncated[i] = (uint8_t)cut[i];
        row[EXP_S_EPISODE] += reset[i];
        row[EXP_S_T] = t[i];
        row[EXP_S_RETRIES] &= -(int64_t)(reset[i] ^ 1);
        row[EXP_S_NEEDS_RESET] = ended[i] | cut[i];
        for (int side = 0; side < 2; side++) {
            int64_t *r = row + EXP_S_SIDE + side * EXP_SIDE_STATE;
            const ExpLaneState *s = &lanes[side];
            r[EXP_S_HP] = s->hp[i];
            r[EXP_S_WEAPON] = s->weapon[i];
            for (int k = 0; k < EXP_SLOTS; k++)
                r[EXP_S_AMMO + k] = s->ammo[k][i];
        }
        done |= 1ull << i;
    }
    return done;
}

#endif
