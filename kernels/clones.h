/* The target clones of the lockstep kernels (GCC picks one at load time by the CPU): x86-64-v4
 * (AVX-512: masks and 32 vector registers; 10 % off the RL lanes' step on Zen 4), AVX2, and a
 * portable one. Other compilers and platforms build the portable code alone. */
#ifndef COMBATSIM_CLONES_H
#define COMBATSIM_CLONES_H

/* COMBATSIM_CODE_LEVEL: the widest vector code a cloned function can run, 2 AVX-512, 1 AVX2, 0
 * neither. A kernel whose path pays only in vector code takes it where both this and the CPU
 * (philox.h, combatsim_cpu_level) allow: built by GCC 11, an AVX-512 CPU runs the AVX2 clone, in
 * which the d100 fights' int16 lanes (AVX-512BW shifts) ran 4x slower than the int32 ones. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#if __GNUC__ >= 12
#define COMBATSIM_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#define COMBATSIM_CLONES_LEVEL 2
#else
#define COMBATSIM_CLONES __attribute__((target_clones("avx2", "default")))
#define COMBATSIM_CLONES_LEVEL 1
#endif
#else
#define COMBATSIM_CLONES
#define COMBATSIM_CLONES_LEVEL 0
#endif

/* A build for the machine (COMBATSIM_NATIVE=1: -march=native) runs its own vector code everywhere. */
#if defined(__AVX512BW__)
#define COMBATSIM_CODE_LEVEL 2
#elif defined(__AVX2__) && COMBATSIM_CLONES_LEVEL < 1
#define COMBATSIM_CODE_LEVEL 1
#else
#define COMBATSIM_CODE_LEVEL COMBATSIM_CLONES_LEVEL
#endif

#endif
