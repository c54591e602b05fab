/* d100 "d100.attack" fast path: the tallies of a run of dense words (docs/kernels.md, "The fast
 * paths' arithmetic"), the engine's word_tallies (combatsim.d100.engine) summed, in vector lanes.
 *
 * Every bar is a threshold on the 32-bit word itself: with r1 = 100 w mod 2^32 and
 * r2 = 100 r1 mod 2^32, the attack digit is below B when w < ceil(B 2^32 / 100), the damage digits
 * likewise with r1 and r2, and Lemire's low word is 100 r2 mod 2^32. d100_word_tally writes the
 * ten tallies of words[0 .. n-1] and their rejected words into tallies[0 .. 10] (32-bit: the
 * caller's runs are short). A plain loop, compiled in each clone (clones.h: x86-64-v4, AVX2,
 * portable), because the portable build has no unsigned 32-bit vector compares and the loop is all
 * of them.
 */
#ifndef COMBATSIM_D100_WORD_TALLY_H
#define COMBATSIM_D100_WORD_TALLY_H
#include <stdint.h>

#include "clones.h"

typedef struct {
    uint32_t critical, hard, success, critical_failure; /* attack-digit bars */
    uint32_t lethal1, worse1, lethal2, worse2;          /* damage-digit bars, weapon 1 and 2 */
    uint32_t two;                                       /* 1 when dual wielding */
} D100WordBars;

/* Unsigned a < b as one signed compare: AVX2 has signed 32-bit compares only, and GCC emulates
 * each unsigned one with two or three instructions, so words and bars are flipped once instead. */
static inline int32_t d100_flip(uint32_t value) { return (int32_t)(value ^ 0x80000000u); }

/* The tally loop for one value of `two` (a constant after inlining: single weapons skip the
 * second damage digit's four tallies). */
static inline __attribute__((always_inline)) void d100_word_tally_loop(const uint32_t *words, int64_t n,
                                                                     const D100WordBars *b, uint32_t threshold,
                                                                     uint32_t two, uint32_t tallies[11]) {
    uint32_t t[11] = {0}; /* the ten tallies, then the rejected words */
    const int32_t cb = d100_flip(b->critical), hb = d100_flip(b->hard), sb = d100_flip(b->success);
    const int32_t fb = d100_flip(b->critical_failure), lb1 = d100_flip(b->lethal1), wb1 = d100_flip(b->worse1);
    const int32_t lb2 = d100_flip(b->lethal2), wb2 = d100_flip(b->worse2), bar = d100_flip(threshold);
    for (int64_t j = 0; j < n; j++) {
        uint32_t w = words[j], r1 = w * 100u, r2 = r1 * 100u;
        int32_t ws = d100_flip(w), r1s = d100_flip(r1), r2s = d100_flip(r2);
        uint32_t critical = ws < cb, success = ws < sb;
        uint32_t lethal1 = success & (r1s < lb1);
        t[0] += critical;
        t[1] += ws < hb;
        t[2] += success;
        t[3] += ws >= fb;
        t[4] += lethal1;
        t[5] += success & (r1s < wb1);
        t[6] += lethal1 & critical;
        if (two) {
            uint32_t lethal2 = success & (r2s < lb2);
            t[7] += lethal2;
            t[8] += success & (r2s < wb2);
            t[9] += lethal2 & critical;
        }
        t[10] += d100_flip(r2 * 100u) < bar;
    }
    memcpy(tallies, t, sizeof t);
}

static inline __attribute__((always_inline)) int d100_word_tally_body(const uint32_t *words, int64_t n,
                                                                      const D100WordBars *b, uint32_t threshold,
                                                                      uint32_t tallies[11]) {
    if (b->two)
        d100_word_tally_loop(words, n, b, threshold, 1, tallies);
    else
        d100_word_tally_loop(words, n, b, threshold, 0, tallies);
    return 0;
}

COMBATSIM_CLONED(int, d100_word_tally,
                 (const uint32_t *words, int64_t n, const D100WordBars *b, uint32_t threshold, uint32_t tallies[11]),
                 (words, n, b, threshold, tallies), )

#endif
