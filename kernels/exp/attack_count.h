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

#include "philox.h"

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
        uint32_t c[4] = {(uint32_t)i, (uint32_t)((uint64_t)i >> 32), 0, 0};
        philox4x32_10(c, k0, k1);
        uint64_t q0 = (uint64_t)c[0] * EXP_KILODIE, q1 = c[1] * sides, q2 = c[2] * sides, q3 = c[3] * sides;
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

#ifdef COMBATSIM_HAVE_AVX2_PATH
__attribute__((target("avx2")))
static int64_t attack_count_avx2(uint32_t k0, uint32_t k1, int64_t first, int64_t last,
                                 uint64_t kilodie_bar, int64_t dice_count, uint64_t sides,
                                 uint32_t dice_threshold, int64_t offset, uint32_t kilodie_threshold,
                                 int64_t *damage, int64_t *rejected) {
    /* Products stay below 2**63 (sides <= 2**31), so signed compares are exact. */
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
    PhiloxKeys4 keys;
    philox_keys4(&keys, k0, k1);
    __m256i hits_v = zero, damage_v = zero, rejects_v = zero;
    __m256i index = _mm256_setr_epi64x(first, first + 1, first + 2, first + 3);
    int64_t i = first;
    for (; i + 4 <= last; i += 4, index = _mm256_add_epi64(index, step)) {
        __m256i c[4] = {index, _mm256_srli_epi64(index, 32), zero, zero};
        philox4x32_10_avx2(c, &keys);
        __m256i q0 = _mm256_mul_epu32(c[0], kilodie);
        __m256i q1 = _mm256_mul_epu32(c[1], side), q2 = _mm256_mul_epu32(c[2], side), q3 = _mm256_mul_epu32(c[3], side);
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
#ifdef COMBATSIM_HAVE_AVX2_PATH
    if (combatsim_cpu_has_avx2())
        return attack_count_avx2(k0, k1, first, last, kilodie_bar, dice_count, sides, dice_threshold, offset,
                                 kilodie_threshold, damage, rejected);
#endif
    return attack_count_scalar(k0, k1, first, last, kilodie_bar, dice_count, sides, dice_threshold, offset,
                               kilodie_threshold, damage, rejected);
}

#endif
