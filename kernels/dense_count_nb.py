"""Counting dense-layout dice against a bar in Numba: the twin of kernels/dense_count.h.

LLVM's loop vectoriser turns ``rng_nb.block`` in a loop into four blocks per vector, but leaves
the rounds' dependency chains to stall the multipliers. ``_dense_count_steps`` writes the loop as
LLVM vector code through Numba's documented extension API (``numba.extending.intrinsic``), the
same schedule as ``philox.h``: twelve blocks a step in three independent groups of four 64-bit
lanes, the first rounds' shared constants folded (docs/rng.md), and "any word rejected?" as a
running unsigned minimum of the products' low words. LLVM lowers the vectors to whatever the CPU
has (AVX2 here, SSE2 on older x86, NEON elsewhere), so the results never depend on it.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import config, types
from numba.core import cgutils
from numba.extending import intrinsic

from ._numba import njit
from .rng_nb import DOMAIN_DENSE, MASK32, block

_M0, _M1, _W0, _W1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85
#: Independent groups of four blocks per step.
GROUPS = 3
#: Blocks per step of the vector code.
STEP_BLOCKS = 4 * GROUPS

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_LANES = ir.VectorType(_I64, 4)
_HALVES = ir.VectorType(_I32, 8)


def _splat(builder, value):
    vector = ir.Constant(_LANES, ir.Undefined)
    for lane in range(4):
        vector = builder.insert_element(vector, value, ir.Constant(_I32, lane))
    return vector


def _constant(value):
    return ir.Constant(_LANES, [value] * 4)


def _dense_count_steps_python(round_keys, k0, k1, high, low_first, steps, bar, sides, domain):
    """_dense_count_steps block by block, for the coverage run (NUMBA_DISABLE_JIT)."""
    hits, lowest = 0, 0xFFFFFFFF
    for j in range(int(steps) * STEP_BLOCKS):
        index = (int(high) << 32) + int(low_first) + j
        for word in block(np.uint64(k0), np.uint64(k1), np.uint64(index), 0, np.uint64(domain)):
            product = int(word) * int(sides)
            hits += product >= int(bar)
            lowest = min(lowest, product & 0xFFFFFFFF)
    return hits, lowest


def _dense_count_steps(typingctx, round_keys, k0, k1, high, low_first, steps, bar, sides, domain):
    """(hits, lowest low word) over ``steps`` steps of STEP_BLOCKS dense blocks.

    The blocks are ``high * 2**32 + low_first + j`` for j < STEP_BLOCKS * steps (the caller keeps
    them under one high word). A word w counts when w * sides >= bar; the lowest low word of those
    products says whether Lemire's method rejected any. ``round_keys`` is ``dense_keys(k0, k1)``.

    Each group xors its own copy of the round keys, read from that array inside the loop: every
    load then has one use, which LLVM folds into its xor. Shared keys held in registers spilled
    the three groups' state instead (1.57e9 against 1.70e9 words/s, A/B in one process; with
    two groups and shared keys, 1.57e9).
    """
    signature = types.UniTuple(types.int64, 2)(round_keys, k0, k1, high, low_first, steps, bar, sides, domain)

    def codegen(context, builder, sig, args):
        keys_array, k0, k1, high, low_first, steps, bar, sides, domain = args
        key_vectors = builder.bitcast(context.make_array(sig.args[0])(context, builder, value=keys_array).data,
                                      _LANES.as_pointer())

        def key(g, word, r):  # round r's key for counter word 0 or 2 (k0 or k1), group g's copy
            offset = ir.Constant(_I64, (g * 2 + word // 2) * 10 + r)
            return builder.load(builder.gep(key_vectors, [offset]), align=8)

        mask, shift = _constant(0xFFFFFFFF), _constant(32)
        m0, m1 = _constant(_M0), _constant(_M1)

        def low32(value):
            return builder.and_(value, ir.Constant(_I64, 0xFFFFFFFF))

        def product(value, factor):  # masking the input makes it one vpmuludq
            return builder.mul(builder.and_(value, mask), factor)

        round_k1 = [low32(builder.add(k1, ir.Constant(_I64, r * _W1))) for r in range(3)]
        shared = builder.mul(builder.xor(high, low32(k0)), ir.Constant(_I64, _M0))  # round 1's c0 product
        round0_c2 = _splat(builder, builder.xor(domain, round_k1[0]))
        round1_c2 = _splat(builder, builder.xor(builder.lshr(shared, ir.Constant(_I64, 32)), round_k1[1]))
        round2_c2 = _splat(builder, builder.xor(low32(shared), round_k1[2]))
        bar_minus_one = _splat(builder, builder.sub(bar, ir.Constant(_I64, 1)))
        # Masked, so LLVM sees both factors of every count product fit 32 bits: one vpmuludq each,
        # not a 64x64 multiply built of three (the to-hit loop ran about 10 % slower that way).
        side = _splat(builder, low32(sides))
        first = _splat(builder, low_first)
        hits_slot = cgutils.alloca_once_value(builder, ir.Constant(_LANES, [0] * 4))
        low_slot = cgutils.alloca_once_value(builder, ir.Constant(_HALVES, [0xFFFFFFFF] * 8))
        with cgutils.for_range(builder, steps) as loop:
            base = builder.add(first, _splat(builder, builder.mul(loop.index, ir.Constant(_I64, STEP_BLOCKS))))
            c0, c1, c2, c3 = [None] * GROUPS, [None] * GROUPS, [None] * GROUPS, [None] * GROUPS
            for g in range(GROUPS):  # round 0: c2 = 0, c1 ^ k0 is shared
                p0 = product(builder.add(base, ir.Constant(_LANES, [4 * g + lane for lane in range(4)])), m0)
                c2[g] = builder.xor(builder.lshr(p0, shift), round0_c2)
                c3[g] = p0
            for g in range(GROUPS):  # round 1: c1 = 0, the c0 product is shared
                p1 = product(c2[g], m1)
                c0[g] = builder.xor(builder.lshr(p1, shift), key(g, 0, 1))
                c1[g] = p1
                c2[g] = builder.xor(c3[g], round1_c2)
            for g in range(GROUPS):  # round 2: c3 is shared
                p0, p1 = product(c0[g], m0), product(c2[g], m1)
                c0[g] = builder.xor(builder.xor(builder.lshr(p1, shift), c1[g]), key(g, 0, 2))
                c2[g] = builder.xor(builder.lshr(p0, shift), round2_c2)
                c1[g], c3[g] = p1, p0
            for r in range(3, 10):
                for g in range(GROUPS):
                    p0, p1 = product(c0[g], m0), product(c2[g], m1)
                    c0[g] = builder.xor(builder.xor(builder.lshr(p1, shift), c1[g]), key(g, 0, r))
                    c2[g] = builder.xor(builder.xor(builder.lshr(p0, shift), c3[g]), key(g, 2, r))
                    c1[g], c3[g] = p1, p0
            hits, lows = builder.load(hits_slot), builder.load(low_slot)
            for g in range(GROUPS):
                for word in (c0[g], c1[g], c2[g], c3[g]):
                    q = product(word, side)  # below 2**63: signed compares are exact
                    hits = builder.sub(hits, builder.sext(builder.icmp_signed(">", q, bar_minus_one), _LANES))
                    halves = builder.bitcast(q, _HALVES)
                    lows = builder.select(builder.icmp_unsigned("<", halves, lows), halves, lows)
            builder.store(hits, hits_slot)
            builder.store(lows, low_slot)
        hits, lows = builder.load(hits_slot), builder.load(low_slot)
        total = ir.Constant(_I64, 0)
        for lane in range(4):
            total = builder.add(total, builder.extract_element(hits, ir.Constant(_I32, lane)))
        lowest = ir.Constant(_I32, 0xFFFFFFFF)
        for half in (0, 2, 4, 6):  # the products' low words; the odd halves are their values
            value = builder.extract_element(lows, ir.Constant(_I32, half))
            lowest = builder.select(builder.icmp_unsigned("<", value, lowest), value, lowest)
        return context.make_tuple(builder, sig.return_type, [total, builder.zext(lowest, _I64)])

    return signature, codegen


# An intrinsic only compiled code can call: under NUMBA_DISABLE_JIT (the coverage run, every kernel as
# plain Python) the name is bound to its Python twin instead, which does the same to Python values.
_dense_count_steps = _dense_count_steps_python if config.DISABLE_JIT else intrinsic(_dense_count_steps)


@njit
def dense_keys(k0, k1):
    """Round r's keys (k0, k1) for every group: [group][k0 or k1][round][lane], uint64."""
    keys = np.empty(GROUPS * 2 * 10 * 4, dtype=np.uint64)
    for r in range(10):
        key0 = (np.uint64(k0) + np.uint64(r * _W0)) & MASK32
        key1 = (np.uint64(k1) + np.uint64(r * _W1)) & MASK32
        for group in range(GROUPS):
            for lane in range(4):
                keys[((group * 2) * 10 + r) * 4 + lane] = key0
                keys[((group * 2 + 1) * 10 + r) * 4 + lane] = key1
    return keys


@njit
def dense_count(round_keys, k0, k1, first_block, last_block, sides, bar, threshold):
    """(count, any rejected) over the DOMAIN_DENSE blocks first_block .. last_block - 1.

    Every word w with w * sides >= bar counts (``bar`` = first value that counts << 32);
    "any rejected" is true when a word's product has a low word below ``threshold``, so the
    caller can redo the range exactly. Same results as dense_count.h. ``round_keys`` is
    ``dense_keys(k0, k1)``, which loops over tiles make once.
    """
    hits = np.int64(0)
    rejected = False
    g = first_block
    while g < last_block:
        high = g >> 32
        run_end = min(last_block, (high + 1) << 32)  # the steps share the index's high word
        steps = (run_end - g) // STEP_BLOCKS
        if steps:
            count, lowest = _dense_count_steps(round_keys, np.int64(k0), np.int64(k1), np.int64(high),
                                               np.int64(g & 0xFFFFFFFF),
                                               np.int64(steps), np.int64(bar), np.int64(sides),
                                               np.int64(DOMAIN_DENSE))
            hits += count
            rejected |= lowest < np.int64(threshold)
            g += steps * STEP_BLOCKS
        for tail in range(g, run_end):  # the rest of the run, fewer than a step
            for word in block(k0, k1, tail, 0, DOMAIN_DENSE):
                product = word * np.uint64(sides)
                hits += np.int64(product >= np.uint64(bar))
                rejected |= (product & MASK32) < np.uint64(threshold)
        g = run_end
    return hits, rejected
