/* Philox4x32-10 for the C fast paths (docs/rng.md): one scalar block, four blocks in AVX2 lanes,
 * and the run-time check for AVX2. The Cython twin of the scalar block is kernels/rng.pxd; the
 * fast paths that include this header count four blocks at a time and leave Lemire's rare
 * rejected words to the exact per-item path.
 */
#ifndef COMBATSIM_PHILOX_H
#define COMBATSIM_PHILOX_H
#include <stdint.h>

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

/* One block, in place: c[0..3] is the counter on entry and the four words on exit. */
static inline void philox4x32_10(uint32_t c[4], uint32_t k0, uint32_t k1) {
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)PHILOX_M0 * c[0], p1 = (uint64_t)PHILOX_M1 * c[2];
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c[1] ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c[3] ^ k1;
        c[1] = (uint32_t)p1;
        c[3] = (uint32_t)p0;
        c[0] = n0;
        c[2] = n2;
        k0 += PHILOX_W0;
        k1 += PHILOX_W1;
    }
}

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(_M_X64))
#include <immintrin.h>
#define COMBATSIM_HAVE_AVX2_PATH 1

/* The ten round keys, broadcast to every lane. */
typedef struct {
    __m256i k0[10], k1[10];
} PhiloxKeys4;

__attribute__((target("avx2"))) static inline void philox_keys4(PhiloxKeys4 *keys, uint32_t k0, uint32_t k1) {
    for (int r = 0; r < 10; r++) {
        keys->k0[r] = _mm256_set1_epi64x(k0);
        keys->k1[r] = _mm256_set1_epi64x(k1);
        k0 += PHILOX_W0;
        k1 += PHILOX_W1;
    }
}

/* Four blocks, one per 64-bit lane holding a 32-bit word. _mm256_mul_epu32 multiplies the low
 * 32 bits of each lane, so the high garbage the rounds leave never needs masking until a word is
 * used: words come out in the low 32 bits of each lane. */
__attribute__((target("avx2"))) static inline void philox4x32_10_avx2(__m256i c[4], const PhiloxKeys4 *keys) {
    const __m256i m0 = _mm256_set1_epi64x(PHILOX_M0), m1 = _mm256_set1_epi64x(PHILOX_M1);
    __m256i c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3];
    for (int r = 0; r < 10; r++) {
        __m256i p0 = _mm256_mul_epu32(c0, m0), p1 = _mm256_mul_epu32(c2, m1);
        c0 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p1, 32), c1), keys->k0[r]);
        c2 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p0, 32), c3), keys->k1[r]);
        c1 = p1;
        c3 = p0;
    }
    c[0] = c0;
    c[1] = c1;
    c[2] = c2;
    c[3] = c3;
}

static inline int combatsim_cpu_has_avx2(void) {
    static int avx2 = -1;
    if (avx2 < 0) {
        __builtin_cpu_init();
        avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
    }
    return avx2;
}
#endif

#endif
