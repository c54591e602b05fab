/* The histogram pass of the TSS attack kernel's joint layout (docs/tss.md), for Cython.
 *
 * joint_histogram(k0, k1, first_block, count, faces, histogram) walks the dense blocks
 * first_block .. first_block + count - 1 (counter: block index low and high words, 0,
 * DOMAIN_DENSE = 1; docs/rng.md), forms each word's Lemire product p = word * faces, adds 1 to
 * histogram[p >> 32] and returns the smallest low word (uint32_t)p seen (0xFFFFFFFF for no
 * block). A result below the die's rejection threshold means some word was rejected: the caller
 * moves those words' counts to their retried values. Every path gives the same histogram and
 * result: the AVX2 and x86-64-v4 clones (clones.h) multiply eight words at once while they are
 * still in registers and keep the minimum as one vector, then count the values; the portable
 * clone goes a block at a time.
 */
#ifndef COMBATSIM_TSS_JOINT_HISTOGRAM_H
#define COMBATSIM_TSS_JOINT_HISTOGRAM_H
#include <stdint.h>

#include "philox.h"

static inline __attribute__((always_inline)) uint32_t joint_histogram_scalar(uint32_t k0, uint32_t k1, int64_t first_block, int64_t count,
                                              uint32_t faces, uint32_t *histogram) {
    uint32_t low = 0xFFFFFFFFu;
    for (int64_t b = 0; b < count; b++) {
        uint32_t c[4];
        philox_dense_block(c, k0, k1, PHILOX_DENSE_DOMAIN, (uint64_t)(first_block + b));
        for (int j = 0; j < 4; j++) {
            uint64_t product = (uint64_t)c[j] * faces;
            histogram[product >> 32]++;
            low = (uint32_t)product < low ? (uint32_t)product : low;
        }
    }
    return low;
}

#ifdef COMBATSIM_HAVE_AVX2_PATH
__attribute__((target("avx2"), always_inline)) static inline uint32_t joint_histogram_simd(
    uint32_t k0, uint32_t k1, int64_t first_block, int64_t count, uint32_t faces, uint32_t *histogram) {
    /* _mm256_mul_epu32 takes the low 32 bits of each 64-bit lane (the word), so the product's
     * high half (the value) is the odd 32-bit lane and its low word the even one. */
    const __m256i side = _mm256_set1_epi64x((int64_t)faces);
    __m256i low_min = _mm256_set1_epi32(-1);
    uint32_t products[8 * 4 * PHILOX_GROUPS] __attribute__((aligned(32)));
    PhiloxDense dense;
    philox_dense_init(&dense, k0, k1, PHILOX_DENSE_DOMAIN);
    int64_t b = 0;
    for (; b + PHILOX_STEP_BLOCKS <= count; b += PHILOX_STEP_BLOCKS) {
        __m256i words[PHILOX_GROUPS][4];
        philox_dense_blocks(&dense, first_block + b, words);
        for (int group = 0; group < PHILOX_GROUPS; group++) {
            for (int w = 0; w < 4; w++) {
                __m256i q = _mm256_mul_epu32(words[group][w], side);
                low_min = _mm256_min_epu32(low_min, q);
                _mm256_store_si256((__m256i *)(products + 8 * (4 * group + w)), q);
            }
        }
        for (int j = 1; j < 8 * 4 * PHILOX_GROUPS; j += 2)
            histogram[products[j]]++;
    }
    uint32_t low = joint_histogram_scalar(k0, k1, first_block + b, count - b, faces, histogram);
    uint32_t vector_low = philox_lowest_word(low_min);
    return vector_low < low ? vector_low : low;
}
#endif

COMBATSIM_CLONED_SIMD(uint32_t, joint_histogram,
                      (uint32_t k0, uint32_t k1, int64_t first_block, int64_t count, uint32_t faces,
                       uint32_t *histogram),
                      (k0, k1, first_block, count, faces, histogram), PHILOX_SCHEDULED)

#endif
