/* d100 "d100.attack" fast path: the tallies of a run of dense words (docs/d100.md, "fast path").
 *
 * Every bar is a threshold on the 32-bit word itself: with r1 = 100 w mod 2^32 and
 * r2 = 100 r1 mod 2^32, the attack digit is below B when w < ceil(B 2^32 / 100), the damage digits
 * likewise with r1 and r2, and Lemire's low word is 100 r2 mod 2^32. d100_word_tally writes the
 * ten tallies of words[0 .. n-1] and their rejected words into tallies[0 .. 10] (32-bit: the
 * caller's runs are short). GCC builds an AVX2 clone and a portable one and picks at load time,
 * because the portable build has no unsigned 32-bit vector compares and the loop is all of them.
 */
#ifndef COMBATSIM_D100_WORD_TALLY_H
#define COMBATSIM_D100_WORD_TALLY_H
#include <stdint.h>

typedef struct {
    uint32_t critical, hard, success, critical_failure; /* attack-digit bars */
    uint32_t lethal1, worse1, lethal2, worse2;          /* damage-digit bars, weapon 1 and 2 */
    uint32_t two;                                       /* 1 when dual wielding */
} D100WordBars;

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define D100_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define D100_CLONES
#endif

D100_CLONES static void d100_word_tally(const uint32_t *words, int64_t n, const D100WordBars *b, uint32_t threshold,
                                        uint32_t tallies[11]) {
    uint32_t t0 = 0, t1 = 0, t2 = 0, t3 = 0, t4 = 0, t5 = 0, t6 = 0, t7 = 0, t8 = 0, t9 = 0, rejected = 0;
    const uint32_t cb = b->critical, hb = b->hard, sb = b->success, fb = b->critical_failure;
    const uint32_t lb1 = b->lethal1, wb1 = b->worse1, lb2 = b->lethal2, wb2 = b->worse2, two = b->two;
    for (int64_t j = 0; j < n; j++) {
        uint32_t w = words[j], r1 = w * 100u, r2 = r1 * 100u;
        uint32_t critical = w < cb, success = w < sb;
        uint32_t lethal1 = success & (r1 < lb1), lethal2 = success & two & (r2 < lb2);
        rejected += r2 * 100u < threshold;
        t0 += critical;
        t1 += w < hb;
        t2 += success;
        t3 += w >= fb;
        t4 += lethal1;
        t5 += success & (r1 < wb1);
        t6 += lethal1 & critical;
        t7 += lethal2;
        t8 += success & two & (r2 < wb2);
        t9 += lethal2 & critical;
    }
    tallies[0] = t0;
    tallies[1] = t1;
    tallies[2] = t2;
    tallies[3] = t3;
    tallies[4] = t4;
    tallies[5] = t5;
    tallies[6] = t6;
    tallies[7] = t7;
    tallies[8] = t8;
    tallies[9] = t9;
    tallies[10] = rejected;
}

#endif
