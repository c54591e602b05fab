/* Transposes between the envs' rows and the lockstep lanes' rows (docs/rl.md, "Lockstep lanes").
 *
 * The lanes keep one row per value with one env a column (64 columns), the vector env keeps one
 * row per env (int64 state fields, float32 observations). Moving eight envs at a time through an
 * 8 x 8 transpose in shuffles replaces a scalar copy value by value: GCC vector extensions, so
 * each target clone of a step (clones.h) gets its own instructions.
 */
#ifndef COMBATSIM_RL_LANES_GATHER_H
#define COMBATSIM_RL_LANES_GATHER_H
#include <stdint.h>
#include <string.h>

#define LANES_COLUMNS 64

#if defined(__GNUC__)
#define LANES_INLINE static inline __attribute__((always_inline))
#else
#define LANES_INLINE static inline
#endif

typedef float LanesFloats8 __attribute__((vector_size(32)));
typedef int32_t LanesInts8 __attribute__((vector_size(32)));
typedef int64_t LanesLongs4 __attribute__((vector_size(32)));
typedef uint64_t LanesWords4 __attribute__((vector_size(32)));
/* At any address, and (floats) over int32 rows too: one load or store a vector. A memcpy to or
 * from an array of vectors went through the stack in 16-byte halves, and a vector load after it
 * stalled on store forwarding. */
typedef float LanesFloats8u __attribute__((vector_size(32), aligned(4), may_alias));
typedef int32_t LanesInts8u __attribute__((vector_size(32), aligned(4)));
typedef int64_t LanesLongs4u __attribute__((vector_size(32), aligned(8)));

LANES_INLINE void lanes_transpose8(const LanesFloats8 r[8], LanesFloats8 out[8]) {
    const LanesInts8 lo = {0, 8, 1, 9, 4, 12, 5, 13}, hi = {2, 10, 3, 11, 6, 14, 7, 15};
    const LanesInts8 lo2 = {0, 1, 8, 9, 4, 5, 12, 13}, hi2 = {2, 3, 10, 11, 6, 7, 14, 15};
    const LanesInts8 lo4 = {0, 1, 2, 3, 8, 9, 10, 11}, hi4 = {4, 5, 6, 7, 12, 13, 14, 15};
    LanesFloats8 t0 = __builtin_shuffle(r[0], r[1], lo), t1 = __builtin_shuffle(r[0], r[1], hi);
    LanesFloats8 t2 = __builtin_shuffle(r[2], r[3], lo), t3 = __builtin_shuffle(r[2], r[3], hi);
    LanesFloats8 t4 = __builtin_shuffle(r[4], r[5], lo), t5 = __builtin_shuffle(r[4], r[5], hi);
    LanesFloats8 t6 = __builtin_shuffle(r[6], r[7], lo), t7 = __builtin_shuffle(r[6], r[7], hi);
    LanesFloats8 u0 = __builtin_shuffle(t0, t2, lo2), u1 = __builtin_shuffle(t0, t2, hi2);
    LanesFloats8 u2 = __builtin_shuffle(t1, t3, lo2), u3 = __builtin_shuffle(t1, t3, hi2);
    LanesFloats8 u4 = __builtin_shuffle(t4, t6, lo2), u5 = __builtin_shuffle(t4, t6, hi2);
    LanesFloats8 u6 = __builtin_shuffle(t5, t7, lo2), u7 = __builtin_shuffle(t5, t7, hi2);
    out[0] = __builtin_shuffle(u0, u4, lo4);
    out[1] = __builtin_shuffle(u1, u5, lo4);
    out[2] = __builtin_shuffle(u2, u6, lo4);
    out[3] = __builtin_shuffle(u3, u7, lo4);
    out[4] = __builtin_shuffle(u0, u4, hi4);
    out[5] = __builtin_shuffle(u1, u5, hi4);
    out[6] = __builtin_shuffle(u2, u6, hi4);
    out[7] = __builtin_shuffle(u3, u7, hi4);
}

/* Rows 8 x block .. 8 x block + 7 of columns 8 x group .. 8 x group + 7, transposed: eight envs'
 * values, one env a vector. */
LANES_INLINE void lanes_rows8(const float rows[][LANES_COLUMNS], int block, int group, LanesFloats8 out[8]) {
    LanesFloats8 r[8];
    for (int k = 0; k < 8; k++)
        r[k] = *(const LanesFloats8u *)&rows[8 * block + k][8 * group];
    lanes_transpose8(r, out);
}

/* Envs first .. first + 7 of `state` (rows of `stride` int64; `from`: the first field read;
 * `quads`: 3 or 4, the fields read in fours) into int32 rows fields[k][env] (k < 4 x quads), and
 * wide[env]: whether a field read lies outside int32 (the caller sends that env to the body). The
 * first two fields read, the retries and the reset flag, may hold anything: the callers read the
 * flag in full width and leave the retries alone. */
LANES_INLINE void lanes_gather8(const int64_t *state, int stride, int from, int quads, int first,
                                int32_t fields[][LANES_COLUMNS], int32_t *wide) {
    const LanesInts8 even = {0, 2, 4, 6, 8, 10, 12, 14};
    const LanesWords4 checked = {0, 0, ~0ull, ~0ull};
    LanesFloats8 low[8], high[8], out[8];
    for (int j = 0; j < 8; j++) {
        const LanesLongs4u *row = (const LanesLongs4u *)(state + (int64_t)(first + j) * stride + from);
        LanesLongs4 v0 = row[0], v1 = row[1], v2 = row[2], v3 = {0, 0, 0, 0};
        if (quads > 3)
            v3 = row[3];
        LanesWords4 outside = ((((LanesWords4)v0 + 0x80000000u) >> 32) & checked) |
                              (((LanesWords4)v1 + 0x80000000u) >> 32) | (((LanesWords4)v2 + 0x80000000u) >> 32) |
                              (((LanesWords4)v3 + 0x80000000u) >> 32);
        wide[first + j] = (outside[0] | outside[1] | outside[2] | outside[3]) != 0;
        low[j] = (LanesFloats8)__builtin_shuffle((LanesInts8)v0, (LanesInts8)v1, even);
        high[j] = (LanesFloats8)__builtin_shuffle((LanesInts8)v2, (LanesInts8)v3, even);
    }
    lanes_transpose8(low, out);
    for (int k = 0; k < 8; k++)
        *(LanesInts8u *)&fields[k][first] = (LanesInts8)out[k];
    lanes_transpose8(high, out);
    for (int k = 0; k < 4 * quads - 8; k++)
        *(LanesInts8u *)&fields[8 + k][first] = (LanesInts8)out[k];
}

/* lanes_gather8 for one env (a last group of fewer than eight). */
LANES_INLINE void lanes_gather1(const int64_t *state, int stride, int from, int quads, int env,
                                int32_t fields[][LANES_COLUMNS], int32_t *wide) {
    const int64_t *row = state + (int64_t)env * stride + from;
    wide[env] = 0;
    for (int k = 0; k < 4 * quads; k++) {
        fields[k][env] = (int32_t)row[k];
        wide[env] |= k > 1 && ((uint64_t)row[k] + 0x80000000u) >> 32;
    }
}

#endif
