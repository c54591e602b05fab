/* Counting dense-layout dice against a bar, four Philox blocks at a time.
 *
 * dense_count(k0, k1, first_block, last_block, bar, threshold, &rejected) walks the
 * DOMAIN_DENSE blocks (docs/rng.md) and, for every 32-bit word w, forms w * sides (the
 * caller's bar and threshold fix the die): it counts products >= bar, and counts the words
 * Lemire's method rejects (low 32 bits < threshold) so the caller can redo those exactly.
 * `bar` is (first value that counts) << 32, with value 0-based. Results are identical on every
 * path; the AVX2 path is picked at run time where the CPU has it (GCC/Clang on x86-64),
 * because the portable build targets plain x86-64 and GCC does not vectorise the 32x32->64
 * Philox products well on its own.
 */
#ifndef COMBATSIM_DENSE_COUNT_H
#define COMBATSIM_DENSE_COUNT_H
#include <stdint.h>

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u
#define DENSE_DOMAIN 1u

static inline int64_t dense_count_scalar(uint32_t k0, uint32_t k1, int64_t first_block,
                                         int64_t last_block, uint64_t sides, uint64_t bar,
                                         uint32_t threshold, int64_t *rejected) {
    int64_t hits = 0, rejects = 0;
    for (int64_t g = first_block; g < last_block; g++) {
        uint32_t c0 = (uint32_t)g, c1 = (uint32_t)((uint64_t)g >> 32), c2 = 0, c3 = DENSE_DOMAIN;
        uint32_t a = k0, b = k1;
        for (int r = 0; r < 10; r++) {
            uint64_t p0 = (uint64_t)PHILOX_M0 * c0, p1 = (uint64_t)PHILOX_M1 * c2;
            uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ a, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ b;
            c1 = (uint32_t)p1; c3 = (uint32_t)p0; c0 = n0; c2 = n2;
            a += PHILOX_W0; b += PHILOX_W1;
        }
        uint64_t q0 = c0 * sides, q1 = c1 * sides, q2 = c2 * sides, q3 = c3 * sides;
        hits += (q0 >= bar) + (q1 >= bar) + (q2 >= bar) + (q3 >= bar);
        rejects += ((uint32_t)q0 < threshold) + ((uint32_t)q1 < threshold)
                 + ((uint32_t)q2 < threshold) + ((uint32_t)q3 < threshold);
    }
    *rejected = rejects;
    return hits;
}

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(_M_X64))
#include <immintrin.h>
#define COMBATSIM_HAVE_AVX2_PATH 1

__attribute__((target("avx2")))
static int64_t dense_count_avx2(uint32_t k0, uint32_t k1, int64_t first_block, int64_t last_block,
                                uint64_t sides, uint64_t bar, uint32_t threshold, int64_t *rejected) {
    /* Four blocks per step, one per 64-bit lane; _mm256_mul_epu32 multiplies the low 32 bits
     * of each lane, so high garbage never needs masking until the words leave the rounds.
     * Products word * sides stay below 2**63 for sides < 2**31, so signed compares are exact. */
    const __m256i m0 = _mm256_set1_epi64x(PHILOX_M0), m1 = _mm256_set1_epi64x(PHILOX_M1);
    const __m256i low = _mm256_set1_epi64x(0xFFFFFFFFLL), side = _mm256_set1_epi64x((int64_t)sides);
    const __m256i bar_minus_one = _mm256_set1_epi64x((int64_t)bar - 1);
    const __m256i threshold_v = _mm256_set1_epi64x((int64_t)threshold);
    const __m256i domain = _mm256_set1_epi64x(DENSE_DOMAIN), step = _mm256_set1_epi64x(4);
    __m256i keys0[10], keys1[10];
    uint32_t a = k0, b = k1;
    for (int r = 0; r < 10; r++) {
        keys0[r] = _mm256_set1_epi64x(a);
        keys1[r] = _mm256_set1_epi64x(b);
        a += PHILOX_W0; b += PHILOX_W1;
    }
    __m256i hits_v = _mm256_setzero_si256(), rejects_v = _mm256_setzero_si256();
    __m256i g = _mm256_setr_epi64x(first_block, first_block + 1, first_block + 2, first_block + 3);
    int64_t g_scalar = first_block;
    for (; g_scalar + 4 <= last_block; g_scalar += 4, g = _mm256_add_epi64(g, step)) {
        __m256i c0 = g, c1 = _mm256_srli_epi64(g, 32), c2 = _mm256_setzero_si256(), c3 = domain;
        for (int r = 0; r < 10; r++) {
            __m256i p0 = _mm256_mul_epu32(c0, m0), p1 = _mm256_mul_epu32(c2, m1);
            c0 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p1, 32), c1), keys0[r]);
            c2 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p0, 32), c3), keys1[r]);
            c1 = p1;
            c3 = p0;
        }
        __m256i words[4] = {c0, c1, c2, c3};
        for (int w = 0; w < 4; w++) {
            __m256i q = _mm256_mul_epu32(words[w], side);
            hits_v = _mm256_sub_epi64(hits_v, _mm256_cmpgt_epi64(q, bar_minus_one));
            rejects_v = _mm256_sub_epi64(rejects_v, _mm256_cmpgt_epi64(threshold_v, _mm256_and_si256(q, low)));
        }
    }
    int64_t lanes[4], rejected_lanes[4], tail_rejects;
    _mm256_storeu_si256((__m256i *)lanes, hits_v);
    _mm256_storeu_si256((__m256i *)rejected_lanes, rejects_v);
    int64_t hits = lanes[0] + lanes[1] + lanes[2] + lanes[3];
    hits += dense_count_scalar(k0, k1, g_scalar, last_block, sides, bar, threshold, &tail_rejects);
    *rejected = rejected_lanes[0] + rejected_lanes[1] + rejected_lanes[2] + rejected_lanes[3] + tail_rejects;
    return hits;
}
#endif

static inline int64_t dense_count(uint32_t k0, uint32_t k1, int64_t first_block, int64_t last_block,
                                  uint64_t sides, uint64_t bar, uint32_t threshold, int64_t *rejected) {
#ifdef COMBATSIM_HAVE_AVX2_PATH
    static int avx2 = -1;
    if (avx2 < 0) {
        __builtin_cpu_init();
        avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
    }
    if (avx2)
        return dense_count_avx2(k0, k1, first_block, last_block, sides, bar, threshold, rejected);
#endif
    return dense_count_scalar(k0, k1, first_block, last_block, sides, bar, threshold, rejected);
}

#endif
