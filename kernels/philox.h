/* Philox4x32-10 for the C fast paths (docs/rng.md): one scalar block; dense runs of blocks
 * (counter: index low and high words, 0, domain), twelve at a time in AVX2 lanes; the dense words
 * of a range in block order; an item stream's blocks drawn ahead. The vector paths run where the
 * level clones.h picks allows them, so forcing a clone forces these paths too. The Cython twin of
 * the scalar block is kernels/rng.pxd. Fast paths built on this header leave Lemire's rare
 * rejected words to the exact per-item path.
 */
#ifndef COMBATSIM_PHILOX_H
#define COMBATSIM_PHILOX_H
#include <stdint.h>

#include "clones.h"

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

/* The stream domain of the dense layout (rng.pxd's DOMAIN_DENSE; docs/rng.md). */
#define PHILOX_DENSE_DOMAIN 1u

/* Dense block `block` of `domain` into c (counter: the block index's low and high words, 0, domain). */
static inline void philox_dense_block(uint32_t c[4], uint32_t k0, uint32_t k1, uint32_t domain, uint64_t block) {
    c[0] = (uint32_t)block;
    c[1] = (uint32_t)(block >> 32);
    c[2] = 0;
    c[3] = domain;
    philox4x32_10(c, k0, k1);
}

/* Word r of item `index`'s retry domain (docs/rng.md): word r % 4 of block (index, r // 4, 2). */
static inline uint32_t philox_retry_word(uint32_t k0, uint32_t k1, uint64_t index, uint64_t r) {
    uint32_t c[4] = {(uint32_t)index, (uint32_t)(index >> 32), (uint32_t)(r >> 2), 2u};
    philox4x32_10(c, k0, k1);
    return c[r & 3];
}

/* Blocks an item stream draws at once (rng.pxd's Stream drawn ahead: the fight kernels). A power
 * of two (a word's slot is a mask); docs/kernels.md gives the choice. */
#define PHILOX_AHEAD_BLOCKS 16

/* Blocks first .. first + PHILOX_AHEAD_BLOCKS - 1 of item `index`'s stream (domain 0), their words
 * in stream order. Their chains are independent, so GCC vectorises across the blocks (a round of
 * all of them at once, where one block at a time waits on each round's multiply) in the AVX2
 * clone; the x86-64-v4 level runs philox_item_blocks_avx512 instead. Not inlined: one copy of the
 * rounds, not one at every die that may refill. The rounds are philox4x32_10's, on scalars (GCC
 * did not vectorise the array form). */
static inline __attribute__((always_inline)) int philox_item_blocks_body(uint32_t k0, uint32_t k1, uint64_t index,
                                                                         uint32_t first, uint32_t *out) {
    for (int j = 0; j < PHILOX_AHEAD_BLOCKS; j++) {
        uint32_t c0 = (uint32_t)index, c1 = (uint32_t)(index >> 32), c2 = first + (uint32_t)j, c3 = 0;
        uint32_t key0 = k0, key1 = k1;
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 10
#endif
        for (int r = 0; r < 10; r++) {
            uint64_t p0 = (uint64_t)PHILOX_M0 * c0, p1 = (uint64_t)PHILOX_M1 * c2;
            c0 = (uint32_t)(p1 >> 32) ^ c1 ^ key0;
            c1 = (uint32_t)p1;
            c2 = (uint32_t)(p0 >> 32) ^ c3 ^ key1;
            c3 = (uint32_t)p0;
            key0 += PHILOX_W0;
            key1 += PHILOX_W1;
        }
        out[4 * j] = c0;
        out[4 * j + 1] = c1;
        out[4 * j + 2] = c2;
        out[4 * j + 3] = c3;
    }
    return 0;
}

COMBATSIM_TARGET_AVX2 __attribute__((noinline)) static int philox_item_blocks_avx2(uint32_t k0, uint32_t k1,
                                                                                   uint64_t index, uint32_t first,
                                                                                   uint32_t *out) {
    return philox_item_blocks_body(k0, k1, index, first, out);
}

__attribute__((noinline, unused)) static int philox_item_blocks_portable(uint32_t k0, uint32_t k1, uint64_t index,
                                                                         uint32_t first, uint32_t *out) {
    return philox_item_blocks_body(k0, k1, index, first, out);
}

#ifdef COMBATSIM_HAVE_AVX2_PATH

/* Dense blocks, three groups of four at a time, one block per 64-bit lane holding a 32-bit word.
 * _mm256_mul_epu32 multiplies the low 32 bits of each lane, so the high garbage the rounds leave
 * never needs masking until a word is used: words come out in the low 32 bits of each lane.
 *
 * A run of dense blocks shares its counter words c1 (the block index's high word), c2 = 0 and
 * c3 = domain, so the first two rounds are mostly constant: round 0 multiplies only c0 (c2 is 0),
 * round 1's c0 product is the same for every block and is computed once. Three independent
 * groups per step keep the multiplier pipes busy through the rounds' dependency chains. */
#define PHILOX_GROUPS 3
#define PHILOX_STEP_BLOCKS (4 * PHILOX_GROUPS)

/* philox_item_blocks for `items` (1 or 2) items at once in AVX-512 (the caller checks the CPU):
 * item j's blocks first[j] .. into out[j]. Eight blocks to a vector, a block a 64-bit lane: one
 * vpmuludq a product (it reads the low 32 bits of each lane, so the garbage the xors leave above
 * them never needs masking until the words are packed). GCC's vector code for the 32-bit form
 * widened, multiplied in vpmullq and packed back every round. Two items' four vectors of
 * dependency chains keep the multiplier busier than one's two. */
__attribute__((target("avx512f"), always_inline)) static inline void philox_items_blocks_avx512(
    uint32_t k0, uint32_t k1, const uint64_t *index, const uint32_t *first, uint32_t *const *out, int items) {
    enum { GROUPS = PHILOX_AHEAD_BLOCKS / 8 };
    const __m512i m0 = _mm512_set1_epi64(PHILOX_M0), m1 = _mm512_set1_epi64(PHILOX_M1);
    const __m512i step = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
    const __m512i first_half = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11);
    const __m512i second_half = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
    __m512i c0[2 * GROUPS], c1[2 * GROUPS], c2[2 * GROUPS], c3[2 * GROUPS];
    const int groups = GROUPS * items;
    for (int g = 0; g < groups; g++) {
        uint64_t item = index[g / GROUPS];
        c0[g] = _mm512_set1_epi64((uint32_t)item);
        c1[g] = _mm512_set1_epi64((uint32_t)(item >> 32));
        c2[g] = _mm512_add_epi64(_mm512_set1_epi64(first[g / GROUPS] + 8u * (uint32_t)(g % GROUPS)), step);
        c3[g] = _mm512_setzero_si512();
    }
    for (int r = 0; r < 10; r++) {
        __m512i key0 = _mm512_set1_epi64(k0 + (uint32_t)r * PHILOX_W0);
        __m512i key1 = _mm512_set1_epi64(k1 + (uint32_t)r * PHILOX_W1);
        for (int g = 0; g < groups; g++) {
            __m512i p0 = _mm512_mul_epu32(c0[g], m0), p1 = _mm512_mul_epu32(c2[g], m1);
            c0[g] = _mm512_ternarylogic_epi64(_mm512_srli_epi64(p1, 32), c1[g], key0, 0x96);
            c1[g] = p1;
            c2[g] = _mm512_ternarylogic_epi64(_mm512_srli_epi64(p0, 32), c3[g], key1, 0x96);
            c3[g] = p0;
        }
    }
    for (int g = 0; g < groups; g++) {
        uint32_t *to = out[g / GROUPS] + 32 * (g % GROUPS);
        __m512i c01 = _mm512_mask_blend_epi32(0xAAAA, c0[g], _mm512_slli_epi64(c1[g], 32));
        __m512i c23 = _mm512_mask_blend_epi32(0xAAAA, c2[g], _mm512_slli_epi64(c3[g], 32));
        __m512i even = _mm512_unpacklo_epi64(c01, c23), odd = _mm512_unpackhi_epi64(c01, c23);
        _mm512_storeu_si512((void *)to, _mm512_permutex2var_epi64(even, first_half, odd));
        _mm512_storeu_si512((void *)(to + 16), _mm512_permutex2var_epi64(even, second_half, odd));
    }
}

__attribute__((target("avx512f"), unused)) static void philox_item_blocks_avx512(uint32_t k0, uint32_t k1,
                                                                                 uint64_t index, uint32_t first,
                                                                                 uint32_t *out) {
    philox_items_blocks_avx512(k0, k1, &index, &first, &out, 1);
}

__attribute__((target("avx512f"), unused)) static void philox_item_pair_avx512(uint32_t k0, uint32_t k1,
                                                                               const uint64_t *index,
                                                                               const uint32_t *first,
                                                                               uint32_t *const *out) {
    philox_items_blocks_avx512(k0, k1, index, first, out, 2);
}

/* For the loops that run these steps. GCC's x86 default allocates registers in source order, and
 * the twelve state vectors of a step then spill across the rounds; scheduling first, with an eye
 * on register pressure, keeps them in registers. Clang's scheduler already runs before register
 * allocation. */
#if defined(__GNUC__) && !defined(__clang__)
#define PHILOX_SCHEDULED __attribute__((optimize("schedule-insns", "sched-pressure")))
#else
#define PHILOX_SCHEDULED
#endif

typedef struct {
    __m256i key0[10], key1[10];
    __m256i round0_c2, round1_c2, round2_c2; /* constants folded into rounds 0..2 */
} PhiloxDenseKeys;

__attribute__((target("avx2"))) static inline __m256i philox_broadcast(uint32_t word) {
    return _mm256_set1_epi64x((int64_t)word);
}

/* Round constants for blocks whose index has high word `high`, in stream `domain`. */
__attribute__((target("avx2"))) static inline void philox_dense_keys(PhiloxDenseKeys *keys, uint32_t k0,
                                                                     uint32_t k1, uint32_t high,
                                                                     uint32_t domain) {
    uint32_t round_k0[10], round_k1[10];
    for (int r = 0; r < 10; r++) {
        round_k0[r] = k0 + (uint32_t)r * PHILOX_W0;
        round_k1[r] = k1 + (uint32_t)r * PHILOX_W1;
        keys->key0[r] = philox_broadcast(round_k0[r]);
        keys->key1[r] = philox_broadcast(round_k1[r]);
    }
    uint64_t shared = (uint64_t)PHILOX_M0 * (high ^ round_k0[0]); /* round 1's c0 product */
    keys->round0_c2 = philox_broadcast(domain ^ round_k1[0]);
    keys->round1_c2 = philox_broadcast((uint32_t)(shared >> 32) ^ round_k1[1]);
    keys->round2_c2 = philox_broadcast((uint32_t)shared ^ round_k1[2]);
}

/* The blocks whose low index words are in the lanes of low[0..2]: words[g][j] holds word j of the
 * four blocks of group g. */
__attribute__((target("avx2"))) static inline void philox_dense_step(const PhiloxDenseKeys *keys,
                                                                     const __m256i low[PHILOX_GROUPS],
                                                                     __m256i words[PHILOX_GROUPS][4]) {
    const __m256i m0 = _mm256_set1_epi64x(PHILOX_M0), m1 = _mm256_set1_epi64x(PHILOX_M1);
    __m256i c0[PHILOX_GROUPS], c1[PHILOX_GROUPS], c2[PHILOX_GROUPS], c3[PHILOX_GROUPS];
    for (int g = 0; g < PHILOX_GROUPS; g++) { /* round 0: c1 ^ k0 is shared, c2 = 0 */
        __m256i p0 = _mm256_mul_epu32(low[g], m0);
        c2[g] = _mm256_xor_si256(_mm256_srli_epi64(p0, 32), keys->round0_c2);
        c3[g] = p0;
    }
    for (int g = 0; g < PHILOX_GROUPS; g++) { /* round 1: c1 = 0, the c0 product is shared */
        __m256i p1 = _mm256_mul_epu32(c2[g], m1);
        c0[g] = _mm256_xor_si256(_mm256_srli_epi64(p1, 32), keys->key0[1]);
        c1[g] = p1;
        c2[g] = _mm256_xor_si256(c3[g], keys->round1_c2);
    }
    for (int g = 0; g < PHILOX_GROUPS; g++) { /* round 2: c3 is shared */
        __m256i p0 = _mm256_mul_epu32(c0[g], m0), p1 = _mm256_mul_epu32(c2[g], m1);
        c0[g] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p1, 32), c1[g]), keys->key0[2]);
        c2[g] = _mm256_xor_si256(_mm256_srli_epi64(p0, 32), keys->round2_c2);
        c1[g] = p1;
        c3[g] = p0;
    }
    for (int r = 3; r < 10; r++) {
        for (int g = 0; g < PHILOX_GROUPS; g++) {
            __m256i p0 = _mm256_mul_epu32(c0[g], m0), p1 = _mm256_mul_epu32(c2[g], m1);
            c0[g] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p1, 32), c1[g]), keys->key0[r]);
            c2[g] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p0, 32), c3[g]), keys->key1[r]);
            c1[g] = p1;
            c3[g] = p0;
        }
    }
    for (int g = 0; g < PHILOX_GROUPS; g++) {
        words[g][0] = c0[g];
        words[g][1] = c1[g];
        words[g][2] = c2[g];
        words[g][3] = c3[g];
    }
}

/* A dense stream for the AVX2 paths: its round constants, kept for the high index word they
 * were made for. */
typedef struct {
    PhiloxDenseKeys keys;
    uint32_t k0, k1, domain, high;
} PhiloxDense;

__attribute__((target("avx2"))) static inline void philox_dense_init(PhiloxDense *dense, uint32_t k0, uint32_t k1,
                                                                     uint32_t domain) {
    dense->k0 = k0;
    dense->k1 = k1;
    dense->domain = domain;
    dense->high = 0;
    philox_dense_keys(&dense->keys, k0, k1, 0, domain);
}

/* The PHILOX_STEP_BLOCKS blocks first, first + 1, ...: words[g][j] holds word j of blocks
 * first + 4g .. first + 4g + 3, one per lane. */
__attribute__((target("avx2"))) static inline void philox_dense_blocks(PhiloxDense *dense, int64_t first,
                                                                       __m256i words[PHILOX_GROUPS][4]) {
    uint32_t high = (uint32_t)((uint64_t)first >> 32);
    /* The two rare cases are marked unlikely so that GCC lays the common step out as one straight
     * loop body, not three jumps. */
    if (__builtin_expect(high != (uint32_t)((uint64_t)(first + PHILOX_STEP_BLOCKS - 1) >> 32), 0)) {
        /* The step straddles a high word (once in 2**32 blocks): block by block. */
        uint32_t w[PHILOX_GROUPS][4][4];
        for (int b = 0; b < PHILOX_STEP_BLOCKS; b++) {
            uint32_t c[4];
            philox_dense_block(c, dense->k0, dense->k1, dense->domain, (uint64_t)(first + b));
            for (int j = 0; j < 4; j++)
                w[b / 4][j][b % 4] = c[j];
        }
        for (int g = 0; g < PHILOX_GROUPS; g++)
            for (int j = 0; j < 4; j++)
                words[g][j] = _mm256_setr_epi64x(w[g][j][0], w[g][j][1], w[g][j][2], w[g][j][3]);
        return;
    }
    if (__builtin_expect(high != dense->high, 0)) {
        dense->high = high;
        philox_dense_keys(&dense->keys, dense->k0, dense->k1, high, dense->domain);
    }
    const __m256i base = _mm256_set1_epi64x((int64_t)(uint32_t)first);
    __m256i low[PHILOX_GROUPS];
    for (int g = 0; g < PHILOX_GROUPS; g++)
        low[g] = _mm256_add_epi64(base, _mm256_setr_epi64x(4 * g, 4 * g + 1, 4 * g + 2, 4 * g + 3));
    philox_dense_step(&dense->keys, low, words);
}

/* The four blocks of one group, in lane order, as sixteen words: out[4 * i + j] is word j of lane i. */
__attribute__((target("avx2"))) static inline void philox_store_blocks(__m256i c[4], uint32_t *out) {
    __m256i low = _mm256_blend_epi32(c[0], _mm256_slli_epi64(c[1], 32), 0xAA); /* (w0, w1) a lane */
    __m256i high = _mm256_blend_epi32(c[2], _mm256_slli_epi64(c[3], 32), 0xAA); /* (w2, w3) */
    __m256i even = _mm256_unpacklo_epi64(low, high), odd = _mm256_unpackhi_epi64(low, high);
    _mm256_storeu_si256((__m256i *)out, _mm256_permute2x128_si256(even, odd, 0x20));
    _mm256_storeu_si256((__m256i *)(out + 8), _mm256_permute2x128_si256(even, odd, 0x31));
}

/* Words of a step in block order: out[4 * b + j] is word j of block first + b. */
__attribute__((target("avx2"))) static inline void philox_store_words(__m256i words[PHILOX_GROUPS][4],
                                                                      uint32_t *out) {
    for (int g = 0; g < PHILOX_GROUPS; g++)
        philox_store_blocks(words[g], out + 16 * g);
}

/* The smallest low word a running _mm256_min_epu32 of 64-bit products saw (its even 32-bit
 * lanes): below a die's threshold when Lemire's method rejected some word. */
__attribute__((target("avx2"))) static inline uint32_t philox_lowest_word(__m256i low_min) {
    uint32_t lanes[8];
    _mm256_storeu_si256((__m256i *)lanes, low_min);
    uint32_t low = lanes[0];
    for (int j = 2; j < 8; j += 2)
        low = lanes[j] < low ? lanes[j] : low;
    return low;
}

/* Four independent blocks in the 64-bit lanes (one 32-bit word each, high halves garbage), each
 * under its own key: round keys advance lane-wise. Two groups a call keep both multipliers busy. */
__attribute__((target("avx2"))) static inline void philox_keyed_step(__m256i c[2][4], __m256i k0[2], __m256i k1[2]) {
    const __m256i m0 = _mm256_set1_epi64x(PHILOX_M0), m1 = _mm256_set1_epi64x(PHILOX_M1);
    const __m256i w0 = _mm256_set1_epi32((int)PHILOX_W0), w1 = _mm256_set1_epi32((int)PHILOX_W1);
    for (int r = 0; r < 10; r++) {
        for (int g = 0; g < 2; g++) {
            __m256i p0 = _mm256_mul_epu32(c[g][0], m0), p1 = _mm256_mul_epu32(c[g][2], m1);
            c[g][0] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p1, 32), c[g][1]), k0[g]);
            c[g][2] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p0, 32), c[g][3]), k1[g]);
            c[g][1] = p1;
            c[g][3] = p0;
            k0[g] = _mm256_add_epi32(k0[g], w0);
            k1[g] = _mm256_add_epi32(k1[g], w1);
        }
    }
}

__attribute__((target("avx2"))) static inline int64_t philox_keyed_blocks_avx2(int64_t n, const uint64_t *keys,
                                                                               const uint64_t *items,
                                                                               const uint32_t *blocks,
                                                                               uint32_t domain, uint32_t *out) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i c[2][4], k0[2], k1[2];
        for (int g = 0; g < 2; g++) {
            __m256i key = _mm256_loadu_si256((const __m256i *)(keys + i + 4 * g));
            __m256i item = _mm256_loadu_si256((const __m256i *)(items + i + 4 * g));
            k0[g] = key;
            k1[g] = _mm256_srli_epi64(key, 32);
            c[g][0] = item;
            c[g][1] = _mm256_srli_epi64(item, 32);
            c[g][2] = _mm256_cvtepu32_epi64(_mm_loadu_si128((const __m128i *)(blocks + i + 4 * g)));
            c[g][3] = _mm256_set1_epi64x(domain);
        }
        philox_keyed_step(c, k0, k1);
        philox_store_blocks(c[0], out + 4 * i);
        philox_store_blocks(c[1], out + 4 * i + 16);
    }
    return i;
}
#endif

/* Blocks of independent streams: block i is block blocks[i] of item items[i] in `domain` under
 * key keys[i] (a 64-bit seed), and out[4 * i + j] is its word j: rng.pxd's block(), many streams
 * at once (the RL step kernels draw every environment's first block of a step this way). */
static inline void philox_keyed_blocks(int64_t n, const uint64_t *keys, const uint64_t *items, const uint32_t *blocks,
                                       uint32_t domain, uint32_t *out) {
    int64_t i = 0;
#ifdef COMBATSIM_HAVE_AVX2_PATH
    if (combatsim_level() >= COMBATSIM_AVX2) {
        i = philox_keyed_blocks_avx2(n, keys, items, blocks, domain, out);
        if (i < n) { /* the last few blocks as one group too (padded with the first): a scalar block costs two groups' time */
            uint64_t group_keys[8], group_items[8];
            uint32_t group_blocks[8], group_out[32];
            for (int j = 0; j < 8; j++) {
                int64_t from = i + j < n ? i + j : i;
                group_keys[j] = keys[from];
                group_items[j] = items[from];
                group_blocks[j] = blocks[from];
            }
            philox_keyed_blocks_avx2(8, group_keys, group_items, group_blocks, domain, group_out);
            for (int64_t j = 0; j < 4 * (n - i); j++)
                out[4 * i + j] = group_out[j];
            i = n;
        }
    }
#endif
    for (; i < n; i++) {
        uint32_t *c = out + 4 * i;
        c[0] = (uint32_t)items[i];
        c[1] = (uint32_t)(items[i] >> 32);
        c[2] = blocks[i];
        c[3] = domain;
        philox4x32_10(c, (uint32_t)keys[i], (uint32_t)(keys[i] >> 32));
    }
}

/* philox_item_blocks' words by the level (clones.h): philox_item_blocks_avx512 at x86-64-v4, the
 * AVX2 or portable clone of the loop below it. Every item stream drawn ahead (rng.pxd's Stream,
 * the d100 fight lanes). */
static inline void philox_ahead_blocks(uint32_t k0, uint32_t k1, uint64_t index, uint32_t first, uint32_t *out) {
#ifdef COMBATSIM_HAVE_AVX2_PATH
    int level = combatsim_level();
    if (level == COMBATSIM_V4) {
        philox_item_blocks_avx512(k0, k1, index, first, out);
        return;
    }
    if (level == COMBATSIM_AVX2) {
        philox_item_blocks_avx2(k0, k1, index, first, out);
        return;
    }
#endif
    philox_item_blocks_portable(k0, k1, index, first, out);
}

/* philox_ahead_blocks for two items: item j's blocks first[j] .. into out[j]. */
static inline void philox_ahead_pair(uint32_t k0, uint32_t k1, const uint64_t *index, const uint32_t *first,
                                     uint32_t *const *out) {
#ifdef COMBATSIM_HAVE_AVX2_PATH
    if (combatsim_level() == COMBATSIM_V4) {
        philox_item_pair_avx512(k0, k1, index, first, out);
        return;
    }
#endif
    philox_ahead_blocks(k0, k1, index[0], first[0], out[0]);
    philox_ahead_blocks(k0, k1, index[1], first[1], out[1]);
}

/* Words of blocks first .. first + count - 1 of a dense stream (counter: block index low and
 * high words, 0, domain) in block order: out[4 * b + j] is word j of block first + b, in AVX2
 * lanes where the level (clones.h) allows; both give the same words. */
static inline void philox_dense_words(uint32_t k0, uint32_t k1, uint32_t domain, int64_t first, int64_t count,
                                      uint32_t *out) {
    int64_t b = 0;
#ifdef COMBATSIM_HAVE_AVX2_PATH
    if (combatsim_level() >= COMBATSIM_AVX2 && count >= PHILOX_STEP_BLOCKS) {
        PhiloxDense dense;
        philox_dense_init(&dense, k0, k1, domain);
        for (; b + PHILOX_STEP_BLOCKS <= count; b += PHILOX_STEP_BLOCKS) {
            __m256i words[PHILOX_GROUPS][4];
            philox_dense_blocks(&dense, first + b, words);
            philox_store_words(words, out + 4 * b);
        }
    }
#endif
    for (; b < count; b++)
        philox_dense_block(out + 4 * b, k0, k1, domain, (uint64_t)(first + b));
}

#endif
