/* d100 duel steps in lockstep: the Cython vector env's fast path (docs/rl.md, "Lockstep lanes").
 *
 * combatsim.rl.d100_reference steps one environment at a time, and its branches (hit or miss, the
 * wound's severity, a new episode) follow the dice, so a CPU mispredicts several of them a step.
 * d100_step_lanes steps up to 64 environments at once, without those branches, in loops over
 * lanes that GCC vectorises (target clones picked at load time: clones.h), and does
 * exactly what the reference's step does to every lane it reports done. A lane it does not take
 * is left untouched, and the caller steps it with the reference's body:
 * - a side whose pass rolls a die other than an attack's or a wound's (a flee, a contested
 *   disengage, a random policy's choice),
 * - a step whose dice need more than the step's first block of four words (each env's, drawn
 *   ahead by the caller) or hit a Lemire-rejected word,
 * - a state outside what the reference's own steps leave (counters out of range).
 * The layout constants below are the reference's (tests/test_rl_kernels.py compares them).
 */
#ifndef COMBATSIM_RL_D100_LANES_H
#define COMBATSIM_RL_D100_LANES_H
#include <stdint.h>
#include <string.h>

#include "clones.h"

#define D100_P_SKILL 0
#define D100_P_RANGED 1
#define D100_P_NONLETHAL 2
#define D100_P_DUAL_ALLOWED 3
#define D100_P_LETHALITY 5
#define D100_P_SERIOUS 9
#define D100_SIDE_PARAMS 13
#define D100_G_MAX_STEPS 26
#define D100_G_PASSES 27
#define D100_G_START_ENGAGED 28
#define D100_S_EPISODE 0
#define D100_S_T 1
#define D100_S_RETRIES 2
#define D100_S_NEEDS_RESET 3
#define D100_S_ENGAGED 4
#define D100_S_SIDE 5
#define D100_S_FLESH 0
#define D100_S_SERIOUS 1
#define D100_S_LETHAL 2
#define D100_S_COVER 3
#define D100_S_DUAL 4
#define D100_S_FAILED_FLEE 5
#define D100_S_TARGETED 6
#define D100_S_ESCAPED 7
#define D100_SIDE_STATE 8
#define D100_STATE_SIZE 21
#define D100_A_ATTACK 0
#define D100_A_QUICK_ATTACK 1
#define D100_A_DEFEND 2
#define D100_A_FLEE 3
#define D100_A_PRESS 4
#define D100_A_DISENGAGE 5
#define D100_A_TAKE_COVER 6
#define D100_A_TOGGLE_DUAL 7
#define D100_ACTIONS 8
#define D100_OBS_SIZE 16
#define D100_POLICY_EXTERNAL 0
#define D100_POLICY_SCRIPTED 1
#define D100_LANES 64
/* Fewer envs than this (a single env, a batch's last few) are stepped by the reference's body: the
 * lanes' loops cost the same for 1 env as for 64. */
#define D100_LANES_MIN 16
/* An action that does nothing: an illegal choice (the reference's -1). */
#define D100_NO_ACTION 8
/* Lemire's threshold for a d100: (2^32 - 100) mod 100. */
#define D100_REJECT_BELOW 96u

typedef struct {
    int32_t skill, ranged, nonlethal, dual_allowed, scripted;
    int32_t lethality[4], serious[4]; /* index 2 x cover + dual */
    float skill_obs, ranged_obs;
} D100LaneSide;

/* One side's legal actions as bits (the reference's _legal), on a state of 0/1 flags. */
static inline int32_t d100_legal_bits(int32_t engaged, int32_t cover, int32_t ranged, int32_t dual_allowed) {
    int32_t attack = engaged | ranged;
    return attack | attack << 1 | 1 << D100_A_DEFEND | (engaged ^ 1) << D100_A_FLEE | 1 << D100_A_PRESS |
           engaged << D100_A_DISENGAGE | ((engaged | cover) ^ 1) << D100_A_TAKE_COVER |
           dual_allowed << D100_A_TOGGLE_DUAL;
}

/* The action mask's eight bytes (byte a = bit a of `bits`), in one little-endian word. */
static inline uint64_t d100_mask_bytes(uint32_t bits) {
    uint64_t x = ((uint64_t)bits * 0x0101010101010101ull) & 0x8040201008040201ull;
    return (((((x & 0x7F7F7F7F7F7F7F7Full) + 0x7F7F7F7F7F7F7F7Full) | x) & 0x8080808080808080ull) >> 7);
}

static inline uint32_t d100_word_at(const uint32_t *w0, const uint32_t *w1, const uint32_t *w2, const uint32_t *w3,
                                    int i, int32_t position) {
    uint32_t word = position == 1 ? w1[i] : w0[i];
    word = position == 2 ? w2[i] : word;
    return position == 3 ? w3[i] : word;
}

/* Lanes' per-side state during a step (0/1 flags and small counters, as int32). */
typedef struct {
    int32_t flesh[D100_LANES], serious[D100_LANES], lethal[D100_LANES], cover[D100_LANES], dual[D100_LANES];
    int32_t targeted[D100_LANES], escaped[D100_LANES], failed_flee[D100_LANES];
    int32_t choice[D100_LANES], defend[D100_LANES], dealt[D100_LANES];
} D100LaneState;

/* One side's attack in every lane where `active`: the reference's _attack, word for word on each
 * lane's words (position[i] is the lane's next word; a lane needing a fifth word, or a rejected
 * one, is marked in `slow`). */
static inline void d100_lanes_attack(const D100LaneSide *attacker, D100LaneState *a, D100LaneState *d,
                                     const int32_t *active, int32_t quick, int32_t *position, int32_t *slow,
                                     const uint32_t *w0, const uint32_t *w1, const uint32_t *w2, const uint32_t *w3) {
    for (int i = 0; i < D100_LANES; i++) {
        int32_t on = active[i], dual = a->dual[i], cover = attacker->ranged & d->cover[i];
        int32_t full = attacker->skill - 20 * (quick + d->defend[i] + dual + cover);
        int32_t capped = full < 95 ? full : 95, at = position[i];
        uint32_t word = d100_word_at(w0, w1, w2, w3, i, at & 3);
        uint32_t first = d100_word_at(w0, w1, w2, w3, i, (at + 1) & 3);
        uint32_t second = d100_word_at(w0, w1, w2, w3, i, (at + 2) & 3);
        int32_t roll = (int32_t)(((uint64_t)word * 100u) >> 32) + 1;
        int32_t hit = on & (roll <= capped);
        int32_t both = hit & dual;
        slow[i] |= (on & ((word * 100u < D100_REJECT_BELOW) | (at > 3))) |
                   (hit & ((first * 100u < D100_REJECT_BELOW) | (at > 2))) |
                   (both & ((second * 100u < D100_REJECT_BELOW) | (at > 1)));
        position[i] = at + on + hit + both;
        d->targeted[i] |= on;
        int32_t lethality = attacker->lethality[2 * cover + dual], serious = attacker->serious[2 * cover + dual];
        int32_t roll1 = (int32_t)(((uint64_t)first * 100u) >> 32) + 1;
        int32_t roll2 = (int32_t)(((uint64_t)second * 100u) >> 32) + 1;
        int32_t lethal1 = roll1 <= lethality, lethal2 = both & (roll2 <= lethality);
        int32_t serious1 = (roll1 <= serious) & (lethal1 ^ 1), serious2 = both & (roll2 <= serious) & (lethal2 ^ 1);
        int32_t lethals = -hit & (lethal1 + lethal2), seriouses = -hit & (serious1 + serious2);
        int32_t fleshes = hit + both - lethals - seriouses;
        /* A nonlethal weapon's lethal result is serious and its flesh wounds do not count. */
        int32_t nonlethal = -attacker->nonlethal;
        seriouses += lethals & nonlethal;
        lethals &= ~nonlethal;
        fleshes &= ~nonlethal;
        a->dealt[i] += 6 * lethals + 3 * seriouses + fleshes;
        /* Escalation from at most two new wounds on a flesh <= 2, serious <= 1 state. */
        int32_t flesh = d->flesh[i] + fleshes, escalated = flesh >= 3;
        int32_t serious_total = d->serious[i] + seriouses + escalated;
        d->flesh[i] = flesh - 3 * escalated;
        d->serious[i] = serious_total & 1;
        d->lethal[i] += lethals + (serious_total >> 1);
    }
}

/* One side's cover and dual wield after the pass's movement; a resetting lane's side (keep 0) starts afresh. */
static inline void d100_lane_move(D100LaneState *s, int i, int32_t press, int32_t keep) {
    s->cover[i] = (s->cover[i] | (s->choice[i] == D100_A_TAKE_COVER)) & (press ^ 1) & keep;
    s->dual[i] = (s->dual[i] ^ (s->choice[i] == D100_A_TOGGLE_DUAL)) & keep;
    s->flesh[i] &= keep;
    s->serious[i] &= keep;
    s->lethal[i] &= keep;
    s->targeted[i] &= keep;
    s->escaped[i] &= keep;
    s->failed_flee[i] &= keep;
}

static inline int32_t d100_flag(int64_t value) { return (uint64_t)value <= 1; }

/* A wound threshold against a d100 roll: anything outside 0..100 acts as -1 or 101. */
static inline int32_t d100_clamp_threshold(int64_t value) { return value < -1 ? -1 : value > 101 ? 101 : (int32_t)value; }

/* x mod passes as x - passes floor(x m / 2^32), m = ceil(2^32 / passes): exact for x < 2^32 / passes. */
static inline int32_t d100_into_round(int32_t x, int32_t passes, uint64_t magic) {
    return x - passes * (int32_t)(((uint64_t)(uint32_t)x * magic) >> 32);
}

/* One side's observations of every lane (the reference's _write_obs), as 16 rows of lanes. */
static inline void d100_lanes_obs(float rows[D100_OBS_SIZE][D100_LANES], uint64_t *mask_bytes,
                                  const D100LaneSide *self, const D100LaneSide *other, const D100LaneState *s,
                                  const D100LaneState *o, const int32_t *engaged, const float *round_obs,
                                  const float *time_obs) {
    for (int i = 0; i < D100_LANES; i++) {
        int32_t fled = s->failed_flee[i] < 5 ? s->failed_flee[i] : 5;
        rows[0][i] = (float)((double)s->flesh[i] / 3.0);
        rows[1][i] = (float)((double)s->serious[i] / 2.0);
        rows[2][i] = (float)((double)o->flesh[i] / 3.0);
        rows[3][i] = (float)((double)o->serious[i] / 2.0);
        rows[4][i] = (float)engaged[i];
        rows[5][i] = (float)s->cover[i];
        rows[6][i] = (float)o->cover[i];
        rows[7][i] = (float)s->dual[i];
        rows[8][i] = (float)o->dual[i];
        rows[9][i] = self->skill_obs;
        rows[10][i] = other->skill_obs;
        rows[11][i] = (float)((double)fled / 5.0);
        rows[12][i] = (float)s->targeted[i];
        rows[13][i] = round_obs[i];
        rows[14][i] = time_obs[i];
        rows[15][i] = self->ranged_obs;
    }
    for (int i = 0; i < D100_LANES; i++)
        mask_bytes[i] = d100_mask_bytes((uint32_t)d100_legal_bits(engaged[i], s->cover[i], self->ranged,
                                                                  self->dual_allowed));
}

/* Steps lanes 0 .. count - 1 (count <= 64; pointers at the first lane's rows; ahead: each lane's
 * first block of the step, four words a lane). Returns the lanes it stepped as bits. */
COMBATSIM_CLONES static uint64_t d100_step_lanes(const int64_t *iparams, int64_t *state, const int64_t *actions,
                                                 const int64_t *policies, double shaping, float *obs, float *reward,
                                                 uint8_t *terminated, uint8_t *truncated, int8_t *mask_out,
                                                 int64_t count, const uint32_t *ahead) {
    D100LaneSide sides[2];
    D100LaneState lanes[2];
    uint32_t w0[D100_LANES], w1[D100_LANES], w2[D100_LANES], w3[D100_LANES];
    int32_t t[D100_LANES], engaged[D100_LANES], reset[D100_LANES], slow[D100_LANES], new_round[D100_LANES];
    int32_t position[D100_LANES], active[D100_LANES], ended[D100_LANES], cut[D100_LANES];
    float round_obs[D100_LANES], time_obs[D100_LANES], reward0[D100_LANES], reward1[D100_LANES];
    float rows[D100_OBS_SIZE][D100_LANES];
    uint64_t mask_bytes[D100_LANES];
    int64_t max_steps = iparams[D100_G_MAX_STEPS], passes = iparams[D100_G_PASSES];
    int64_t start_engaged = iparams[D100_G_START_ENGAGED];
    int n_sides = policies[1] == D100_POLICY_EXTERNAL ? 2 : 1;
    if (count < D100_LANES_MIN)
        return 0;
    for (int side = 0; side < 2; side++) {
        const int64_t *p = iparams + side * D100_SIDE_PARAMS;
        D100LaneSide *s = &sides[side];
        if (policies[side] != D100_POLICY_EXTERNAL && policies[side] != D100_POLICY_SCRIPTED)
            return 0; /* a random policy draws its choice: the reference's steps */
        if (p[D100_P_SKILL] < -1000 || p[D100_P_SKILL] > 1000)
            return 0;
        s->scripted = policies[side] == D100_POLICY_SCRIPTED;
        s->skill = (int32_t)p[D100_P_SKILL];
        s->ranged = p[D100_P_RANGED] != 0;
        s->nonlethal = p[D100_P_NONLETHAL] != 0;
        s->dual_allowed = p[D100_P_DUAL_ALLOWED] != 0;
        for (int k = 0; k < 4; k++) {
            s->lethality[k] = d100_clamp_threshold(p[D100_P_LETHALITY + k]);
            s->serious[k] = d100_clamp_threshold(p[D100_P_SERIOUS + k]);
        }
        s->skill_obs = (float)((double)p[D100_P_SKILL] / 100.0);
        s->ranged_obs = s->ranged ? 1.0f : 0.0f;
    }
    if (passes < 1 || passes > 100 || max_steps < 1 || max_steps > 1000000 || !d100_flag(start_engaged))
        return 0;
    uint64_t magic = ((1ull << 32) + (uint64_t)passes - 1) / (uint64_t)passes;

    /* Gather: every lane's state into lanes of int32. A state the reference's own steps never leave
     * (a flag not 0/1, flesh > 2, serious > 1, huge counters) goes to the reference. */
    for (int i = 0; i < count; i++) {
        const int64_t *row = state + i * D100_STATE_SIZE;
        const int64_t *r0 = row + D100_S_SIDE, *r1 = r0 + D100_SIDE_STATE;
        uint64_t flags = (uint64_t)(row[D100_S_ENGAGED] | r0[D100_S_SERIOUS] | r0[D100_S_COVER] | r0[D100_S_DUAL] |
                                    r0[D100_S_TARGETED] | r0[D100_S_ESCAPED] | r1[D100_S_SERIOUS] | r1[D100_S_COVER] |
                                    r1[D100_S_DUAL] | r1[D100_S_TARGETED] | r1[D100_S_ESCAPED]);
        uint64_t counters = (uint64_t)(r0[D100_S_LETHAL] | r0[D100_S_FAILED_FLEE] | r1[D100_S_LETHAL] |
                                       r1[D100_S_FAILED_FLEE]);
        int32_t bad = ((uint64_t)row[D100_S_T] >= (uint64_t)max_steps) | (flags > 1) | (counters >= (1u << 30)) |
                      ((uint64_t)r0[D100_S_FLESH] > 2) | ((uint64_t)r1[D100_S_FLESH] > 2);
        slow[i] = bad;
        reset[i] = row[D100_S_NEEDS_RESET] != 0;
        t[i] = (int32_t)row[D100_S_T] & -(bad ^ 1); /* 0 in a lane the reference steps: no overflow below */
        engaged[i] = (int32_t)row[D100_S_ENGAGED];
        for (int side = 0; side < 2; side++) {
            const int64_t *r = side ? r1 : r0;
            D100LaneState *s = &lanes[side];
            int64_t action = actions[2 * i + side];
            s->flesh[i] = (int32_t)r[D100_S_FLESH];
            s->serious[i] = (int32_t)r[D100_S_SERIOUS];
            s->lethal[i] = (int32_t)r[D100_S_LETHAL];
            s->cover[i] = (int32_t)r[D100_S_COVER];
            s->dual[i] = (int32_t)r[D100_S_DUAL];
            s->targeted[i] = (int32_t)r[D100_S_TARGETED];
            s->escaped[i] = (int32_t)r[D100_S_ESCAPED];
            s->failed_flee[i] = (int32_t)r[D100_S_FAILED_FLEE];
            s->choice[i] = (uint64_t)action < D100_ACTIONS ? (int32_t)action : D100_NO_ACTION;
        }
        const uint32_t *words = ahead + 4 * i;
        w0[i] = words[0];
        w1[i] = words[1];
        w2[i] = words[2];
        w3[i] = words[3];
    }
    /* Lanes past count idle through the step (nothing of theirs is written). */
    for (int i = (int)count; i < D100_LANES; i++) {
        slow[i] = 1;
        reset[i] = t[i] = engaged[i] = 0;
        w0[i] = w1[i] = w2[i] = w3[i] = 0;
        for (int side = 0; side < 2; side++) {
            D100LaneState *s = &lanes[side];
            s->flesh[i] = s->serious[i] = s->lethal[i] = s->cover[i] = s->dual[i] = 0;
            s->targeted[i] = s->escaped[i] = s->failed_flee[i] = 0;
            s->choice[i] = D100_NO_ACTION;
        }
    }
    for (int i = 0; i < D100_LANES; i++) {
        position[i] = 0;
        lanes[0].dealt[i] = lanes[1].dealt[i] = 0;
        new_round[i] = d100_into_round(t[i], (int32_t)passes, magic) == 0;
    }

    /* Choices, judged legal on the state at the start of the pass. */
    for (int side = 0; side < 2; side++) {
        const D100LaneSide *p = &sides[side];
        D100LaneState *s = &lanes[side];
        for (int i = 0; i < D100_LANES; i++) {
            int32_t legal = d100_legal_bits(engaged[i], s->cover[i], p->ranged, p->dual_allowed);
            int32_t scripted = (legal & 1) ? D100_A_ATTACK : D100_A_PRESS;
            int32_t choice = p->scripted ? scripted : s->choice[i];
            choice = (legal >> choice) & 1 ? choice : D100_NO_ACTION;
            slow[i] |= (choice == D100_A_FLEE) | (choice == D100_A_DISENGAGE);
            s->choice[i] = choice;
            s->defend[i] = choice == D100_A_DEFEND;
            s->targeted[i] &= new_round[i] ^ 1; /* a new round: "targeted this round" starts afresh */
        }
    }
    /* Quick attacks land first, together; then standard attacks of the sides still standing. */
    for (int side = 0; side < 2; side++) {
        int32_t any = 0;
        for (int i = 0; i < D100_LANES; i++) {
            active[i] = lanes[side].choice[i] == D100_A_QUICK_ATTACK;
            any |= active[i];
        }
        if (any)
            d100_lanes_attack(&sides[side], &lanes[side], &lanes[1 - side], active, 1, position, slow, w0, w1, w2, w3);
    }
    int32_t standing[2][D100_LANES];
    for (int i = 0; i < D100_LANES; i++) {
        standing[0][i] = lanes[0].lethal[i] == 0;
        standing[1][i] = lanes[1].lethal[i] == 0;
    }
    for (int side = 0; side < 2; side++) {
        for (int i = 0; i < D100_LANES; i++)
            active[i] = (lanes[side].choice[i] == D100_A_ATTACK) & standing[side][i];
        d100_lanes_attack(&sides[side], &lanes[side], &lanes[1 - side], active, 0, position, slow, w0, w1, w2, w3);
    }
    /* Movement: cover, then a press that closes in (both leave cover), then dual-wield toggles; then
     * the outcome. A lane that resets instead starts its next episode. */
    for (int i = 0; i < D100_LANES; i++) {
        D100LaneState *s0 = &lanes[0], *s1 = &lanes[1];
        int32_t press = (engaged[i] ^ 1) & (((s0->choice[i] == D100_A_PRESS) & (s0->escaped[i] ^ 1)) |
                                            ((s1->choice[i] == D100_A_PRESS) & (s1->escaped[i] ^ 1)));
        int32_t keep = -(reset[i] ^ 1);
        d100_lane_move(s0, i, press, keep);
        d100_lane_move(s1, i, press, keep);
        engaged[i] = reset[i] ? (int32_t)start_engaged : engaged[i] | press;
        int32_t out0 = s0->lethal[i] > 0, out1 = s1->lethal[i] > 0;
        int32_t step = (t[i] + 1) & keep;
        ended[i] = out0 | out1 | s0->escaped[i] | s1->escaped[i];
        cut[i] = (ended[i] ^ 1) & (step >= max_steps) & keep;
        double outcome = (double)(out1 & (out0 ^ 1)) - (double)(out0 & (out1 ^ 1));
        double shaped = shaping * (double)((s0->dealt[i] - s1->dealt[i]) & keep) / 6.0;
        reward0[i] = (float)(outcome + shaped);
        reward1[i] = (float)(-outcome - shaped);
        t[i] = step;
        round_obs[i] = (float)((double)d100_into_round(step, (int32_t)passes, magic) / (double)passes);
        time_obs[i] = (float)((double)step / (double)max_steps);
    }

    uint64_t done = 0;
    for (int side = 0; side < n_sides; side++) {
        d100_lanes_obs(rows, mask_bytes, &sides[side], &sides[1 - side], &lanes[side], &lanes[1 - side], engaged,
                       round_obs, time_obs);
        for (int i = 0; i < count; i++) {
            float *o = obs + (2 * i + side) * D100_OBS_SIZE;
            if (slow[i] & (reset[i] ^ 1))
                continue;
            for (int k = 0; k < D100_OBS_SIZE; k++)
                o[k] = rows[k][i];
            memcpy(mask_out + (2 * i + side) * D100_ACTIONS, &mask_bytes[i], 8);
        }
    }
    for (int i = 0; i < count; i++) {
        int64_t *row = state + i * D100_STATE_SIZE;
        if (slow[i] & (reset[i] ^ 1))
            continue;
        reward[2 * i] = reward0[i];
        reward[2 * i + 1] = reward1[i];
        terminated[i] = (uint8_t)ended[i];
        truncated[i] = (uint8_t)cut[i];
        row[D100_S_EPISODE] += reset[i];
        row[D100_S_T] = t[i];
        row[D100_S_RETRIES] &= -(int64_t)(reset[i] ^ 1);
        row[D100_S_NEEDS_RESET] = ended[i] | cut[i];
        row[D100_S_ENGAGED] = engaged[i];
        for (int side = 0; side < 2; side++) {
            int64_t *r = row + D100_S_SIDE + side * D100_SIDE_STATE;
            const D100LaneState *s = &lanes[side];
            r[D100_S_FLESH] = s->flesh[i];
            r[D100_S_SERIOUS] = s->serious[i];
            r[D100_S_LETHAL] = s->lethal[i];
            r[D100_S_COVER] = s->cover[i];
            r[D100_S_DUAL] = s->dual[i];
            r[D100_S_FAILED_FLEE] = s->failed_flee[i];
            r[D100_S_TARGETED] = s->targeted[i];
            r[D100_S_ESCAPED] = s->escaped[i];
        }
        done |= 1ull << i;
    }
    return done;
}

#endif
