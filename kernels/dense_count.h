/* Counting dense-layout dice against a bar, twelve Philox blocks at a time.
 *
 * dense_count(k0, k1, first_block, last_block, bar, threshold, &rejected) walks the
 * DOMAIN_DENSE blocks (docs/rng.md) and, for every 32-bit word w, forms w * sides (the
 * caller's bar and threshold fix the die): it counts products >= bar, and sets *rejected
 * nonzero when any word is one Lemire's method rejects (low 32 bits < threshold), so the caller
 * can redo the range exactly.
 * `bar` is (first value that counts) << 32, with value 0-based. Results are identical in every
 * clone (clones.h): the AVX2 and x86-64-v4 clones run the AVX2 intrinsics below, because GCC does
 * not vectorise the 32x32->64 Philox products well on its own; the portable clone a block at a time.
 */
#ifndef COMBATSIM_DENSE_COUNT_H
#define COMBATSIM_DENSE_COUNT_H
#include <stdint.h>

#include "philox.h"

static inline __attribute__((always_inline)) int64_t dense_count_scalar(uint32_t k0, uint32_t k1, int64_t first_block,
                                         int64_t last_block, uint64_t sides, uint64_t bar,
                                         uint32_t threshold, int64_t *rejected) {
    int64_t hits = 0, rejects = 0;
    for (int64_t g = first_block; g < last_block; g++) {
        uint32_t c[4];
        philox_dense_block(c, k0, k1, PHILOX_DENSE_DOMAIN, (uint64_t)g);
        uint64_t q0 = c[0] * sides, q1 = c[1] * sides, q2 = c[2] * sides, q3 = c[3] * sides;
        hits += (q0 >= bar) + (q1 >= bar) + (q2 >= bar) + (q3 >= bar);
        rejects += ((uint32_t)q0 < threshold) + ((uint32_t)q1 < threshold)
                 + ((uint32_t)q2 < threshold) + ((uint32_t)q3 < threshold);
    }
    *rejected = rejects;
    return hits;
}

#ifdef COMBATSIM_HAVE_AVX2_PATH
__attribute__((target("avx2"), always_inline)) static inline int64_t dense_count_simd(
    uint32_t k0, uint32_t k1, int64_t first_block, int64_t last_block, uint64_t sides, uint64_t bar, uint32_t threshold,
    int64_t *rejected) {
    /* Products word * sides stay below 2**63 for sides < 2**31, so signed compares are exact.
     * Rejection needs only "any word rejected?": the running unsigned minimum of the products'
     * low words (the even 32-bit lanes) costs one instruction a vector. */
    const __m256i side = _mm256_set1_epi64x((int64_t)sides);
    const __m256i bar_minus_one = _mm256_set1_epi64x((int64_t)bar - 1);
    __m256i hits_v = _mm256_setzero_si256(), low_min = _mm256_set1_epi32(-1);
    PhiloxDense dense;
    philox_dense_init(&dense, k0, k1, PHILOX_DENSE_DOMAIN);
    int64_t g = first_block;
    for (; g + PHILOX_STEP_BLOCKS <= last_block; g += PHILOX_STEP_BLOCKS) {
        __m256i words[PHILOX_GROUPS][4];
        philox_dense_blocks(&dense, g, words);
        for (int group = 0; group < PHILOX_GROUPS; group++) {
            for (int w = 0; w < 4; w++) {
                __m256i q = _mm256_mul_epu32(words[group][w], side);
                hits_v = _mm256_sub_epi64(hits_v, _mm256_cmpgt_epi64(q, bar_minus_one));
                low_min = _mm256_min_epu32(low_min, q);
            }
        }
    }
    int64_t lanes[4], tail_rejects;
    _mm256_storeu_si256((__m256i *)lanes, hits_v);
    int64_t hits = lanes[0] + lanes[1] + lanes[2] + lanes[3];
    hits += dense_count_scalar(k0, k1, g, last_block, sides, bar, threshold, &tail_rejects);
    *rejected = tail_rejects || philox_lowest_word(low_min) < threshold;
    return hits;
}
#endif

COMBATSIM_CLONED_SIMD(int64_t, dense_count,
                      (uint32_t k0, uint32_t k1, int64_t first_block, int64_t last_block, uint64_t sides,
                       uint64_t bar, uint32_t threshold, int64_t *rejected),
                      (k0, k1, first_block, last_block, sides, bar, threshold, rejected), PHILOX_SCHEDULED)

#endif
