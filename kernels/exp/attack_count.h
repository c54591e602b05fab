/* EXP "exp.attack" fast path: single-roll attacks whose words fit the item's first Philox block.
 *
 * attack_count(k0, k1, first, last, kilodie_bar, dice_count, sides, dice_threshold, offset,
 *              kilodie_threshold, &damage, &rejected) walks items first..last-1. Item i's block
 * is Philox4x32-10 of counter (i low, i high, 0, DOMAIN_ITEM = 0) (docs/rng.md, docs/exp.md):
 * word 0 is the kilodie, words 1..dice_count the damage dice (dice_count <= 3). It returns the
 * hits (kilodie product >= kilodie_bar), adds each hit's max(dice + dice_count + offset, 0) to
 * *damage, and counts in *rejected the words Lemire's method rejects, so the caller can redo a
 * tile exactly. The AVX2 path (four items per step, one per 64-bit lane) is picked at run time
 * where the CPU has it; results are identical on every path.
 */
#ifndef COMBATSIM_EXP_ATTACK_COUNT_H
#define COMBATSIM_EXP_ATTACK_COUNT_H
#include <stdint.h>

#define EXP_PHILOX_M0 0xD2511F53u
#define EXP_PHILOX_M1 0xCD9E8D57u
#define EXP_PHILOX_W0 0x9E3779B9u
#define EXP_PHILOX_W1 0xBB67AE85u
#define EXP_KILODIE 1000u

static inline int64_t attack_count_scalar(uint32_t k0, uint32_t k1, int64_t first, int64_t last,
                                          uint64_t kilodie_bar, int64_t dice_count, uint64_t sides,
                                          uint32_t dice_threshold, int64_t offset,
                                          uint32_t kilodie_threshold, int64_t *damage,
                                          int64_t *rejected) {
    const int64_t used1 = dice_count >= 1, used2 = dice_count >= 2, used3 = dice_count >= 3;
    const int64_t base = dice_count + offset; /* dice are 1-based: +1 per die */
    int64_t hits = 0, total = 0, rejects = 0;
    for (int64_t i = first; i < last; i++) {
        uint32_t c0 = (uint32_t)i, c1 = (uint32_t)((uint64_t)i >> 32), c2 = 0, c3 = 0;
        uint32_t a = k0, b = k1;
        for (int r = 0; r < 10; r++) {
            uint64_t p0 = (uint64_t)EXP_PHILOX_M0 * c0, p1 = (uint64_t)EXP_PHILOX_M1 * c2;
            uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ a, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ b;
            c1 = (uint32_t)p1; c3 = (uint32_t)p0; c0 = n0; c2 = n2;
            a += EXP_PHILOX_W0; b += EXP_PHILOX_W1;
        }
        uint64_t q0 = (uint64_t)c0 * EXP_KILODIE, q1 = c1 * sides, q2 = c2 * sides, q3 = c3 * sides;
        int64_t hit = q0 >= kilodie_bar;
        int64_t dice = (int64_t)(q1 >> 32) * used1 + (int64_t)(q2 >> 32) * used2 + (int64_t)(q3 >> 32) * used3;
        int64_t dealt = dice + base;
        hits += hit;
        total += hit * (dealt > 0 ? dealt : 0);
        rejects += ((uint32_t)q0 < kilodie_threshold) + ((uint32_t)q1 < dice_threshold) * used1
                 + ((uint32_t)q2 < dice_threshold) * used2 + ((uint32_t)q3 < dice_threshold) * used3;
    }
    *damage = total;
    *rejected = rejects;
    return hits;
}

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(_M_X64))
#include <immintrin.h>
#define COMBATSIM_EXP_HAVE_AVX2_PATH 1

__attribute__((target("avx2")))
static int64_t attack_count_avx2(uint32_t k0, uint32_t k1, int64_t first, int64_t last,
                                 uint64_t kilodie_bar, int64_t dice_count, uint64_t sides,
                                 uint32_t dice_threshold, int64_t offset, uint32_t kilodie_threshold,
                                 int64_t *damage, int64_t *rejected) {
    /* _mm256_mul_epu32 multiplies the low 32 bits of each lane, so the high garbage left by the
     * rounds never needs masking. Products stay below 2**63 (sides <= 2**31), so signed
     * compares are exact. */
    const __m256i m0 = _mm256_set1_epi64x(EXP_PHILOX_M0), m1 = _mm256_set1_epi64x(EXP_PHILOX_M1);
    const __m256i low = _mm256_set1_epi64x(0xFFFFFFFFLL), zero = _mm256_setzero_si256();
    const __m256i kilodie = _mm256_set1_epi64x(EXP_KILODIE), side = _mm256_set1_epi64x((int64_t)sides);
    const __m256i bar_minus_one = _mm256_set1_epi64x((int64_t)kilodie_bar - 1);
    const __m256i kilodie_threshold_v = _mm256_set1_epi64x((int64_t)kilodie_threshold);
    const __m256i dice_threshold_v = _mm256_set1_epi64x((int64_t)dice_threshold);
    const __m256i used1 = _mm256_set1_epi64x(dice_count >= 1 ? -1 : 0);
    const __m256i used2 = _mm256_set1_epi64x(dice_count >= 2 ? -1 : 0);
    const __m256i used3 = _mm256_set1_epi64x(dice_count >= 3 ? -1 : 0);
    const __m256i base = _mm256_set1_epi64x(dice_count + offset);
    const __m256i step = _mm256_set1_epi64x(4);
    __m256i keys0[10], keys1[10];
    uint32_t a = k0, b = k1;
    for (int r = 0; r < 10; r++) {
        keys0[r] = _mm256_set1_epi64x(a);
        keys1[r] = _mm256_set1_epi64x(b);
        a += EXP_PHILOX_W0; b += EXP_PHILOX_W1;
    }
    __m256i hits_v = zero, damage_v = zero, rejects_v = zero;
    __m256i index = _mm256_setr_epi64x(first, first + 1, first + 2, first + 3);
    int64_t i = first;
    for (; i + 4 <= last; i += 4, index = _mm256_add_epi64(index, step)) {
        __m256i c0 = index, c1 = _mm256_srli_epi64(index, 32), c2 = zero, c3 = zero;
        for (int r = 0; r < 10; r++) {
            __m256i p0 = _mm256_mul_epu32(c0, m0), p1 = _mm256_mul_epu32(c2, m1);
            c0 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p1, 32), c1), keys0[r]);
            c2 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p0, 32), c3), keys1[r]);
            c1 = p1;
            c3 = p0;
        }
        __m256i q0 = _mm256_mul_epu32(c0, kilodie);
        __m256i q1 = _mm256_mul_epu32(c1, side), q2 = _mm256_mul_epu32(c2, side), q3 = _mm256_mul_epu32(c3, side);
        __m256i hit = _mm256_cmpgt_epi64(q0, bar_minus_one); /* all ones where the kilodie hits */
        __m256i dice = _mm256_add_epi64(
            _mm256_add_epi64(_mm256_and_si256(_mm256_srli_epi64(q1, 32), used1),
                             _mm256_and_si256(_mm256_srli_epi64(q2, 32), used2)),
            _mm256_and_si256(_mm256_srli_epi64(q3, 32), used3));
        __m256i dealt = _mm256_add_epi64(dice, base);
        dealt = _mm256_andnot_si256(_mm256_cmpgt_epi64(zero, dealt), dealt); /* never below 0 */
        hits_v = _mm256_sub_epi64(hits_v, hit);
        damage_v = _mm256_add_epi64(damage_v, _mm256_and_si256(hit, dealt));
        rejects_v = _mm256_sub_epi64(rejects_v, _mm256_cmpgt_epi64(kilodie_threshold_v, _mm256_and_si256(q0, low)));
        rejects_v = _mm256_sub_epi64(
            rejects_v, _mm256_and_si256(_mm256_cmpgt_epi64(dice_threshold_v, _mm256_and_si256(q1, low)), used1));
        rejects_v = _mm256_sub_epi64(
            rejects_v, _mm256_and_si256(_mm256_cmpgt_epi64(dice_threshold_v, _mm256_and_si256(q2, low)), used2));
        rejects_v = _mm256_sub_epi64(
            rejects_v, _mm256_and_si256(_mm256_cmpgt_epi64(dice_threshold_v, _mm256_and_si256(q3, low)), used3));
    }
    int64_t h[4], d[4], x[4], tail_damage, tail_rejects;
    _mm256_storeu_si256((__m256i *)h, hits_v);
    _mm256_storeu_si256((__m256i *)d, damage_v);
    _mm256_storeu_si256((__m256i *)x, rejects_v);
    int64_t hits = h[0] + h[1] + h[2] + h[3];
    hits += attack_count_scalar(k0, k1, i, last, kilodie_bar, dice_count, sides, dice_threshold, offset,
                                kilodie_threshold, &tail_damage, &tail_rejects);
    *damage = d[0] + d[1] + d[2] + d[3] + tail_damage;
    *rejected = x[0] + x[1] + x[2] + x[3] + tail_rejects;
    return hits;
}
#endif

static inline int64_t attack_count(uint32_t k0, uint32_t k1, int64_t first, int64_t last,
                                   uint64_t kilodie_bar, int64_t dice_count, uint64_t sides,
                                   uint32_t dice_threshold, int64_t offset, uint32_t kilodie_threshold,
                                   int64_t *damage, int64_t *rejected) {
#ifdef COMBATSIM_EXP_HAVE_AVX2_PATH
    static int avx2 = -1;
    if (avx2 < 0) {
        __builtin_cpu_init();
        avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
    }
    if (avx2)
        return attack_count_avx2(k0, k1, first, last, kilodie_bar, dice_count, sides, dice_threshold, offset,
                                 kilodie_threshold, damage, rejected);
#endif
    return attack_count_scalar(k0, k1, first, last, kilodie_bar, dice_count, sides, dice_threshold, offset,
                               kilodie_threshold, damage, rejected);
}

#endif
