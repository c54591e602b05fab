/* The one scheme of every hand-written C pass: each is compiled as clones for three levels of
 * vector code, and a dispatcher picks one at each call.
 *
 *   level 2, x86-64-v4 (AVX-512: masks and 32 vector registers),
 *   level 1, AVX2,
 *   level 0, portable (plain x86-64, or any other platform).
 *
 * A pass is written once: as a plain loop the compiler vectorises for each clone's target, or as
 * AVX2 intrinsics that the AVX2 and x86-64-v4 clones both compile (the latter with AVX-512's
 * encodings and registers) beside a portable loop. COMBATSIM_CLONED stamps out the clones and the
 * dispatcher of a pass from its always-inline body. The dispatchers pick by combatsim_level(): the
 * CPU's level, capped by what the compiler builds (GCC 12 or later builds all three; older GCC and
 * Clang the AVX2 and portable ones; other compilers the portable one) and by COMBATSIM_CLONE
 * (x86-64-v4, avx2 or portable) or combatsim_set_clone_cap, which the tests use to run every clone
 * this machine can run in turn (combatsim.kernels.clones). Every clone gives the same results. */
#ifndef COMBATSIM_CLONES_H
#define COMBATSIM_CLONES_H
#include <stdlib.h>
#include <string.h>

#define COMBATSIM_PORTABLE 0
#define COMBATSIM_AVX2 1
#define COMBATSIM_V4 2

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(_M_X64))
#include <immintrin.h>
/* The AVX2 intrinsic paths (philox.h and the passes) exist in this build. */
#define COMBATSIM_HAVE_AVX2_PATH 1
#define COMBATSIM_TARGET_AVX2 __attribute__((target("avx2"), unused))
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#define COMBATSIM_BUILD_LEVEL COMBATSIM_V4
#define COMBATSIM_TARGET_V4 __attribute__((target("arch=x86-64-v4"), unused))
#else
#define COMBATSIM_BUILD_LEVEL COMBATSIM_AVX2
#define COMBATSIM_TARGET_V4 COMBATSIM_TARGET_AVX2 /* never picked: the build level caps it */
#endif
#else
#define COMBATSIM_BUILD_LEVEL COMBATSIM_PORTABLE
#define COMBATSIM_TARGET_AVX2 __attribute__((unused))
#define COMBATSIM_TARGET_V4 __attribute__((unused))
#endif

/* The highest level the dispatchers may pick: -2 until COMBATSIM_CLONE is read, then the level it
 * names (2 when unset). Each extension module holds its own. */
static int combatsim_clone_cap = -2;

/* The level of vector code this CPU runs and this build has, asked once. */
static inline int combatsim_cpu_level(void) {
    static int level = -1;
    if (__builtin_expect(level < 0, 0)) {
        level = COMBATSIM_PORTABLE;
#if COMBATSIM_BUILD_LEVEL > COMBATSIM_PORTABLE
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2"))
            level = COMBATSIM_AVX2;
#if COMBATSIM_BUILD_LEVEL > COMBATSIM_AVX2
        if (__builtin_cpu_supports("x86-64-v4"))
            level = COMBATSIM_V4;
#endif
#endif
    }
    return level;
}

/* The level a clone name stands for, -1 for no name. */
static inline int combatsim_clone_level(const char *name) {
    if (name == NULL || !strcmp(name, ""))
        return -1;
    if (!strcmp(name, "x86-64-v4"))
        return COMBATSIM_V4;
    if (!strcmp(name, "avx2"))
        return COMBATSIM_AVX2;
    if (!strcmp(name, "portable"))
        return COMBATSIM_PORTABLE;
    return -1; /* combatsim.kernels.clones refuses other names when combatsim loads */
}

/* The level the dispatchers pick now. */
static inline int combatsim_level(void) {
    if (__builtin_expect(combatsim_clone_cap == -2, 0)) {
        int named = combatsim_clone_level(getenv("COMBATSIM_CLONE"));
        combatsim_clone_cap = named < 0 ? COMBATSIM_V4 : named;
    }
    int cpu = combatsim_cpu_level();
    return cpu < combatsim_clone_cap ? cpu : combatsim_clone_cap;
}

/* Caps the level (-1: no cap) and returns the level the dispatchers pick from now on. */
static inline int combatsim_set_clone_cap(int cap) {
    combatsim_clone_cap = cap < 0 ? COMBATSIM_V4 : cap;
    return combatsim_level();
}

/* ret name params: the dispatcher of a pass whose clones are name_v4, name_avx2 and name_portable. */
#define COMBATSIM_DISPATCH_(ret, name, params, args)                                                    \
    static inline ret name params {                                                                     \
        switch (combatsim_level()) {                                                                     \
        case COMBATSIM_V4:                                                                               \
            return name##_v4 args;                                                                       \
        case COMBATSIM_AVX2:                                                                             \
            return name##_avx2 args;                                                                     \
        default:                                                                                         \
            return name##_portable args;                                                                 \
        }                                                                                                \
    }

/* A pass written as one plain loop: `static inline __attribute__((always_inline)) ret name_body
 * params`, compiled into each clone for its target. `attrs`: more attributes of the clones. */
#define COMBATSIM_CLONED_(ret, name, params, args, attrs)                                              \
    COMBATSIM_TARGET_V4 attrs static ret name##_v4 params { return name##_body args; }                  \
    COMBATSIM_TARGET_AVX2 attrs static ret name##_avx2 params { return name##_body args; }              \
    attrs static ret name##_portable params { return name##_body args; }                                \
    COMBATSIM_DISPATCH_(ret, name, params, args)

/* A pass written as AVX2 intrinsics (name_simd, target("avx2"), always inline), which the AVX2 and
 * x86-64-v4 clones compile, and as a portable loop (name_scalar), which the portable clone runs. */
#ifdef COMBATSIM_HAVE_AVX2_PATH
#define COMBATSIM_CLONED_SIMD_(ret, name, params, args, attrs)                                         \
    COMBATSIM_TARGET_V4 attrs static ret name##_v4 params { return name##_simd args; }                  \
    COMBATSIM_TARGET_AVX2 attrs static ret name##_avx2 params { return name##_simd args; }              \
    static ret name##_portable params { return name##_scalar args; }                                    \
    COMBATSIM_DISPATCH_(ret, name, params, args)
#else
#define COMBATSIM_CLONED_SIMD_(ret, name, params, args, attrs)                                         \
    static inline ret name params { return name##_scalar args; }
#endif

/* (the names and parameters expand before the clones' names are pasted: D100F_F(lanes_pass)) */
#define COMBATSIM_CLONED(...) COMBATSIM_CLONED_(__VA_ARGS__)
#define COMBATSIM_CLONED_SIMD(...) COMBATSIM_CLONED_SIMD_(__VA_ARGS__)

#endif
