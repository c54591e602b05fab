/* EXP "exp.attack" fast path: single-roll attacks whose words fit the item's first Philox block.
 *
 * attack_count(k0, k1, first, last, kilodie_bar, dice_count, sides, dice_threshold, offset,
 *              kilodie_threshold, &damage, &rejected) walks items first..last-1. Item i's block
 * is Philox4x32-10 of counter (i low, i high, 0, DOMAIN_ITEM = 0) (docs/rng.md, docs/exp.md):
 * word 0 is the kilodie, words 1..dice_count the damage dice (dice_count <= 3). It returns the
 * hits (kilodie product >= kilodie_bar), adds each hit's max(dice + dice_count + offset, 0) to
 * *damage, and sets *rejected nonzero when any word is one Lemire's method rejects, so the caller
 * can redo a tile exactly. The AVX2 path (twelve items per step, one per 64-bit lane) is picked at run time
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
/* The lowest of the even 32-bit lanes (the products' low words) is below threshold. */
__attribute__((target("avx2"))) static inline int attack_low_word_below(__m256i low_min, uint32_t threshold) {
    uint32_t lanes[8];
    _mm256_storeu_si256((__m256i *)lanes, low_min);
    return lanes[0] < threshold || lanes[2] < threshold || lanes[4] < threshold || lanes[6] < threshold;
}

__attribute__((target("avx2")))
static int64_t attack_count_avx2(uint32_t k0, uint32_t k1, int64_t first, int64_t last,
                                 uint64_t kilodie_bar, int64_t dice_count, uint64_t sides,
                                 uint32_t dice_threshold, int64_t offset, uint32_t kilodie_threshold,
                                 int64_t *damage, int64_t *rejected) {
    /* Products stay below 2**63 (sides <= 2**31), so signed compares are exact. Rejection needs
     * only "any word rejected?": running unsigned minima of the products' low words, with unused
     * dice words forced to all ones. */
    const __m256i zero = _mm256_setzero_si256(), ones = _mm256_set1_epi32(-1);
    const __m256i kilodie = _mm256_set1_epi64x(EXP_KILODIE), side = _mm256_set1_epi64x((int64_t)sides);
    const __m256i bar_minus_one = _mm256_set1_epi64x((int64_t)kilodie_bar - 1);
    const __m256i used1 = _mm256_set1_epi64x(dice_count >= 1 ? -1 : 0);
    const __m256i used2 = _mm256_set1_epi64x(dice_count >= 2 ? -1 : 0);
    const __m256i used3 = _mm256_set1_epi64x(dice_count >= 3 ? -1 : 0);
    const __m256i unused1 = _mm256_xor_si256(used1, ones), unused2 = _mm256_xor_si256(used2, ones);
    const __m256i unused3 = _mm256_xor_si256(used3, ones);
    const __m256i base = _mm256_set1_epi64x(dice_count + offset);
    PhiloxDense dense;
    philox_dense_init(&dense, k0, k1, 0); /* item i's first block is dense block i of DOMAIN_ITEM */
    __m256i hits_v = zero, damage_v = zero, kilodie_low_min = ones, dice_low_min = ones;
    int64_t i = first;
    for (; i + PHILOX_STEP_BLOCKS <= last; i += PHILOX_STEP_BLOCKS) {
        __m256i words[PHILOX_GROUPS][4];
        philox_dense_blocks(&dense, i, words);
        for (int g = 0; g < PHILOX_GROUPS; g++) {
            const __m256i *c = words[g];
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
            kilodie_low_min = _mm256_min_epu32(kilodie_low_min, q0);
            dice_low_min = _mm256_min_epu32(dice_low_min, _mm256_or_si256(q1, unused1));
            dice_low_min = _mm256_min_epu32(dice_low_min, _mm256_or_si256(q2, unused2));
            dice_low_min = _mm256_min_epu32(dice_low_min, _mm256_or_si256(q3, unused3));
        }
    }
    int64_t h[4], d[4], tail_damage, tail_rejects;
    _mm256_storeu_si256((__m256i *)h, hits_v);
    _mm256_storeu_si256((__m256i *)d, damage_v);
    int64_t hits = h[0] + h[1] + h[2] + h[3];
    hits += attack_count_scalar(k0, k1, i, last, kilodie_bar, dice_count, sides, dice_threshold, offset,
                                kilodie_threshold, &tail_damage, &tail_rejects);
    *damage = d[0] + d[1] + d[2] + d[3] + tail_damage;
    *rejected = tail_rejects || attack_low_word_below(kilodie_low_min, kilodie_threshold)
             || attack_low_word_below(dice_low_min, dice_threshold);
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
