/* The target clones of the lockstep kernels (GCC picks one at load time by the CPU): x86-64-v4
 * (AVX-512: masks and 32 vector registers; 10 % off the RL lanes' step on Zen 4), AVX2, and a
 * portable one. Other compilers and platforms build the portable code alone. */
#ifndef COMBATSIM_CLONES_H
#define COMBATSIM_CLONES_H

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#if __GNUC__ >= 12
#define COMBATSIM_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define COMBATSIM_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#else
#define COMBATSIM_CLONES
#endif

#endif
