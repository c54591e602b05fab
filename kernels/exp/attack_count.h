/* EXP "exp.attack" counting pass in AVX2 lanes: single-roll units of fire with a joint die
 * (docs/exp.md), the engine's joint_word_tally (combatsim.exp.engine) summed over whole Philox
 * steps while the words are still in registers.
 *
 * exp_joint_pass(k0, k1, first_block, last_block, bar, sides1, sides2, sides3, base, totals, &low)
 * walks the DOMAIN_DENSE blocks first_block .. in whole steps of PHILOX_STEP_BLOCKS, one word w a
 * unit of fire, and returns the blocks it walked. For each word, q0 = w * 1000 (the kilodie
 * product), then q_j = (q_{j-1} mod 2**32) * sides_j (damage die j, 0-based, is q_j >> 32); it adds
 * the hits (q0 >= bar) to totals[0], each hit's max(digits + base, 0) to totals[1], and lowers *low
 * to the smallest last low word (below the die's threshold when Lemire's method rejected a word).
 * The AVX2 and x86-64-v4 clones (clones.h) run it; the portable clone walks no block, and the
 * caller counts the blocks left with the engine's rule as Cython generates it (kernels/exp/
 * _cy.pyx), as it fixes rejected words. docs/kernels.md gives what this pass is worth.
 */
#ifndef COMBATSIM_EXP_ATTACK_COUNT_H
#define COMBATSIM_EXP_ATTACK_COUNT_H
#include <stdint.h>

#include "philox.h"

#define EXP_KILODIE 1000u

static inline __attribute__((always_inline)) int64_t exp_joint_pass_scalar(uint32_t k0, uint32_t k1,
                                                                          int64_t first_block, int64_t last_block,
                                                                          uint64_t bar, uint64_t sides1,
                                                                          uint64_t sides2, uint64_t sides3,
                                                                          int64_t base, int64_t *totals,
                                                                          uint32_t *low) {
    (void)k0, (void)k1, (void)first_block, (void)last_block, (void)bar, (void)sides1, (void)sides2, (void)sides3;
    (void)base, (void)totals, (void)low;
    return 0;
}

#ifdef COMBATSIM_HAVE_AVX2_PATH
__attribute__((target("avx2"), always_inline)) static inline int64_t exp_joint_pass_simd(
    uint32_t k0, uint32_t k1, int64_t first_block, int64_t last_block, uint64_t bar, uint64_t sides1, uint64_t sides2,
    uint64_t sides3, int64_t base, int64_t *totals, uint32_t *low) {
    /* Products stay below 2**63 (the joint die has at most 2**31 faces), so signed compares are
     * exact; _mm256_mul_epu32 reads only a lane's low word, so the chain needs no masking.
     * Rejection needs only "any word rejected?": the running unsigned minimum of the last low
     * words (the even 32-bit lanes). */
    const __m256i zero = _mm256_setzero_si256();
    const __m256i kilodie = _mm256_set1_epi64x(EXP_KILODIE), bar_minus_one = _mm256_set1_epi64x((int64_t)bar - 1);
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
    int64_t h[4], d[4];
    _mm256_storeu_si256((__m256i *)h, hits_v);
    _mm256_storeu_si256((__m256i *)d, damage_v);
    totals[0] += h[0] + h[1] + h[2] + h[3];
    totals[1] += d[0] + d[1] + d[2] + d[3];
    uint32_t vector_low = philox_lowest_word(low_min);
    *low = vector_low < *low ? vector_low : *low;
    return g - first_block;
}
#endif

COMBATSIM_CLONED_SIMD(int64_t, exp_joint_pass,
                      (uint32_t k0, uint32_t k1, int64_t first_block, int64_t last_block, uint64_t bar,
                       uint64_t sides1, uint64_t sides2, uint64_t sides3, int64_t base, int64_t *totals,
                       uint32_t *low),
                      (k0, k1, first_block, last_block, bar, sides1, sides2, sides3, base, totals, low),
                      PHILOX_SCHEDULED)

#endif
