/* EXP "exp.attack" fast path: single-roll units of fire with a joint die (docs/exp.md).
 *
 * attack_count(k0, k1, first_block, last_block, kilodie_bar, sides1, sides2, sides3, base,
 *              threshold, &damage) walks the DOMAIN_DENSE blocks first_block ..
 * last_block - 1: one word w per unit of fire. The joint die's digits come from a chain of
 * multiplies, most significant first: q0 = w * 1000 (the kilodie, 0-based, is q0 >> 32), then
 * q_j = (q_{j-1} mod 2**32) * sides_j (damage die j, 0-based, is q_j >> 32). A damage die the
 * weapon does not roll has sides 1, so its digit is 0 and the chain passes through it. The
 * last product's low word is the joint product's low word, which decides Lemire's rejection.
 * It returns the hits (q0 >= kilodie_bar), adds each hit's max(digits + base, 0) to *damage
 * (base: the dice count, as dice are 1-based, plus the damage modifier and DA). A word Lemire's
 * method rejects is replaced by the unit's retry words, exactly as the reference does. The fast
 * pass's AVX2 path (twelve blocks a step, one per 64-bit lane) is picked at run time where the CPU has
 * it; results are identical on every path.
 */
#ifndef COMBATSIM_EXP_ATTACK_COUNT_H
#define COMBATSIM_EXP_ATTACK_COUNT_H
#include <stdint.h>

#include "philox.h"

#define EXP_KILODIE 1000u

/* One word's hit and damage (the scalar twin of a lane below); returns the chain's last low word. */
static inline uint32_t attack_word(uint32_t w, uint64_t kilodie_bar, uint64_t sides1, uint64_t sides2,
                                   uint64_t sides3, int64_t base, int64_t *hit, int64_t *dealt) {
    uint64_t q0 = (uint64_t)w * EXP_KILODIE;
    uint64_t q1 = (q0 & 0xFFFFFFFFu) * sides1, q2 = (q1 & 0xFFFFFFFFu) * sides2, q3 = (q2 & 0xFFFFFFFFu) * sides3;
    int64_t damage = (int64_t)(q1 >> 32) + (int64_t)(q2 >> 32) + (int64_t)(q3 >> 32) + base;
    *hit = q0 >= kilodie_bar;
    *dealt = damage > 0 ? damage : 0;
    return (uint32_t)q3;
}

static inline int64_t attack_pass_scalar(uint32_t k0, uint32_t k1, int64_t first_block, int64_t last_block,
                                          uint64_t kilodie_bar, uint64_t sides1, uint64_t sides2,
                                          uint64_t sides3, int64_t base, uint32_t threshold, int64_t *damage,
                                          int64_t *rejected) {
    int64_t hits = 0, total = 0, rejects = 0, hit, dealt;
    for (int64_t g = first_block; g < last_block; g++) {
        uint32_t c[4];
        philox_dense_block(c, k0, k1, PHILOX_DENSE_DOMAIN, (uint64_t)g);
        for (int j = 0; j < 4; j++) {
            rejects += attack_word(c[j], kilodie_bar, sides1, sides2, sides3, base, &hit, &dealt) < threshold;
            hits += hit;
            total += hit * dealt;
        }
    }
    *damage = total;
    *rejected = rejects;
    return hits;
}

#ifdef COMBATSIM_HAVE_AVX2_PATH
__attribute__((target("avx2"))) PHILOX_SCHEDULED
static int64_t attack_pass_avx2(uint32_t k0, uint32_t k1, int64_t first_block, int64_t last_block,
                                 uint64_t kilodie_bar, uint64_t sides1, uint64_t sides2, uint64_t sides3,
                                 int64_t base, uint32_t threshold, int64_t *damage, int64_t *rejected) {
    /* Products stay below 2**63 (the joint die has at most 2**31 faces), so signed compares are
     * exact; _mm256_mul_epu32 reads only a lane's low word, so the chain needs no masking.
     * Rejection needs only "any word rejected?": the running unsigned minimum of the last low
     * words (the even 32-bit lanes). */
    const __m256i zero = _mm256_setzero_si256();
    const __m256i kilodie = _mm256_set1_epi64x(EXP_KILODIE), bar_minus_one = _mm256_set1_epi64x((int64_t)kilodie_bar - 1);
    const __m256i s1 = _mm256_set1_epi64x((int64_t)sides1), s2 = _mm256_set1_epi64x((int64_t)sides2);
    const __m256i s3 = _mm256_set1_epi64x((int64_t)sides3), base_v = _mm256_set1_epi64x(base);
    __m256i hits_v = zero, damage_v = zero, low_min = _mm256_set1_epi32(-1);
    PhiloxDense dense;
    philox_dense_init(&dense, k0, k1, PHILOX_DENSE_DOMAIN);
    int64_t g = first_block;
    for (; g + PHILOX_STEP_BLOCKS <= last_block; g += PHILOX_STEP_BLOCKS) {
        __m256i words[PHILOX_GROUPS][4];
        philox_dense_blocks(&dense, g, words);
        for (int group = 0; group < PHILOX_GROUPS; group++) {
            for (int j = 0; j < 4; j++) {
                __m256i q0 = _mm256_mul_epu32(words[group][j], kilodie);
                __m256i q1 = _mm256_mul_epu32(q0, s1), q2 = _mm256_mul_epu32(q1, s2), q3 = _mm256_mul_epu32(q2, s3);
                __m256i hit = _mm256_cmpgt_epi64(q0, bar_minus_one); /* all ones where the kilodie hits */
                __m256i dealt = _mm256_add_epi64(
                    _mm256_add_epi64(_mm256_srli_epi64(q1, 32), _mm256_srli_epi64(q2, 32)),
                    _mm256_add_epi64(_mm256_srli_epi64(q3, 32), base_v));
                dealt = _mm256_andnot_si256(_mm256_cmpgt_epi64(zero, dealt), dealt); /* never below 0 */
                hits_v = _mm256_sub_epi64(hits_v, hit);
                damage_v = _mm256_add_epi64(damage_v, _mm256_and_si256(hit, dealt));
                low_min = _mm256_min_epu32(low_min, q3);
            }
        }
    }
    int64_t h[4], d[4], tail_damage, tail_rejects;
    _mm256_storeu_si256((__m256i *)h, hits_v);
    _mm256_storeu_si256((__m256i *)d, damage_v);
    int64_t hits = h[0] + h[1] + h[2] + h[3];
    hits += attack_pass_scalar(k0, k1, g, last_block, kilodie_bar, sides1, sides2, sides3, base, threshold,
                                &tail_damage, &tail_rejects);
    *damage = d[0] + d[1] + d[2] + d[3] + tail_damage;
    *rejected = tail_rejects || philox_lowest_word(low_min) < threshold;
    return hits;
}
#endif

static inline int64_t attack_pass(uint32_t k0, uint32_t k1, int64_t first_block, int64_t last_block,
                                  uint64_t kilodie_bar, uint64_t sides1, uint64_t sides2, uint64_t sides3,
                                  int64_t base, uint32_t threshold, int64_t *damage, int64_t *rejected) {
#ifdef COMBATSIM_HAVE_AVX2_PATH
    if (combatsim_cpu_has_avx2())
        return attack_pass_avx2(k0, k1, first_block, last_block, kilodie_bar, sides1, sides2, sides3, base,
                                threshold, damage, rejected);
#endif
    return attack_pass_scalar(k0, k1, first_block, last_block, kilodie_bar, sides1, sides2, sides3, base,
                              threshold, damage, rejected);
}

/* Blocks per tile: a tile whose pass saw a rejected word has those words fixed. */
#define EXP_ATTACK_TILE_BLOCKS 240

/* The exact hits and damage of the units in blocks first_block .. last_block - 1: the fast pass
 * tile by tile; in a tile with a rejected word, each rejected word's tally is replaced by that
 * of the word that replaces it, from the unit's retry domain (docs/rng.md). */
static inline int64_t attack_count(uint32_t k0, uint32_t k1, int64_t first_block, int64_t last_block,
                                   uint64_t kilodie_bar, uint64_t sides1, uint64_t sides2, uint64_t sides3,
                                   int64_t base, uint32_t threshold, int64_t *damage) {
    uint32_t words[4 * EXP_ATTACK_TILE_BLOCKS];
    int64_t hits = 0, total = 0;
    for (int64_t tile = first_block; tile < last_block; tile += EXP_ATTACK_TILE_BLOCKS) {
        int64_t tile_end = last_block - tile < EXP_ATTACK_TILE_BLOCKS ? last_block : tile + EXP_ATTACK_TILE_BLOCKS;
        int64_t tile_damage, rejected, hit, dealt;
        hits += attack_pass(k0, k1, tile, tile_end, kilodie_bar, sides1, sides2, sides3, base, threshold,
                            &tile_damage, &rejected);
        total += tile_damage;
        if (!rejected)
            continue;
        philox_dense_words(k0, k1, PHILOX_DENSE_DOMAIN, tile, tile_end - tile, words);
        for (int64_t j = 0; j < 4 * (tile_end - tile); j++) {
            if (attack_word(words[j], kilodie_bar, sides1, sides2, sides3, base, &hit, &dealt) >= threshold)
                continue;
            hits -= hit;
            total -= hit * dealt;
            uint64_t unit = (uint64_t)(4 * tile + j), retry = 0;
            uint32_t word;
            do {
                word = philox_retry_word(k0, k1, unit, retry++);
            } while (attack_word(word, kilodie_bar, sides1, sides2, sides3, base, &hit, &dealt) < threshold);
            hits += hit;
            total += hit * dealt;
        }
    }
    *damage = total;
    return hits;
}

#endif
