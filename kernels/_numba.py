"""The one place that decides how Numba kernels are compiled.

``cache=True`` keeps JIT compilation out of every run after the first. A cache directory or file
that is missing, stale, corrupt, emptied, swapped, unreadable or read-only must never break an
import or a call: Numba raises at decoration time when it finds no writable cache location, and
then the kernel compiles uncached instead; every other failure to read an entry or the index is a
miss (the kernel recompiles), and a failure to write one leaves the kernel compiled in memory. An
entry is sealed with the name of its kernel, its index key and a digest of its bytes, and loaded
only when all three match: Numba's own files say nothing of which kernel wrote them, so an entry
copied over another would run the wrong code. Numba checks a cached kernel against its own file's
timestamp only, so after editing a shared module such as rng_nb.py in a source checkout, delete the
kernels' ``__pycache__`` folders (installed copies are rebuilt on upgrade). Set ``NUMBA_CACHE_DIR``
to move the cache (for example when the package is installed read-only).
"""

from __future__ import annotations

import contextlib
import hashlib
import pickle

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core.caching import FunctionCache, IndexDataCacheFile
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import intrinsic, register_jitable


def njit(function=None, **options):
    """``numba.njit`` with ``cache=True``, ``nogil=True`` (threads run kernels in parallel) and
    ``error_model="numpy"``."""
    options.setdefault("cache", True)
    options.setdefault("nogil", True)
    # Kernels never divide by zero (inputs are validated), so skip Python's division checks.
    options.setdefault("error_model", "numpy")

    def decorate(func):
        try:
            dispatcher = numba.njit(**options)(func)
        except (RuntimeError, OSError, PermissionError):
            uncached = dict(options, cache=False)
            return numba.njit(**uncached)(func)
        if isinstance(getattr(dispatcher, "_cache", None), FunctionCache):
            dispatcher._cache = _CheckedCache(dispatcher.py_func)
        return dispatcher

    return decorate if function is None else decorate(function)


class _SealedEntries(IndexDataCacheFile):
    """Numba's index and data files, each entry stored as (kernel and key, digest, payload)."""

    def _load_index(self):
        try:
            overloads = super()._load_index()
        except Exception:  # random bytes, an empty file, a directory: an empty index, rewritten at the next save
            return {}
        return overloads if isinstance(overloads, dict) else {}

    def save(self, key, data):
        payload = self._dump(data)
        super().save(key, (self._identity(key), hashlib.sha256(payload).digest(), payload))

    def load(self, key):
        entry = super().load(key)
        if not (isinstance(entry, tuple) and len(entry) == 3):
            return None
        identity, digest, payload = entry
        if not (isinstance(payload, bytes) and identity == self._identity(key)
                and digest == hashlib.sha256(payload).digest()):
            return None
        return pickle.loads(payload)

    def _identity(self, key):
        # The index file's name holds the kernel's qualified name and line; the key its signature,
        # target and bytecode.
        return self._index_name, key


class _CheckedCache(FunctionCache):
    """Numba's per-kernel cache, for which any entry that fails to load is a miss and any failure
    to save is ignored."""

    def __init__(self, py_func):
        super().__init__(py_func)
        self._cache_file = _SealedEntries(self._cache_path, self._impl.filename_base,
                                          self._impl.locator.get_source_stamp())

    def load_overload(self, sig, target_context):
        try:
            return super().load_overload(sig, target_context)
        except Exception:
            return None

    def save_overload(self, sig, data):
        # A full disk, a directory in the way: the kernel stays compiled in memory.
        with contextlib.suppress(Exception):
            super().save_overload(sig, data)


def intrinsic_or(python):
    """``numba.extending.intrinsic``, whose functions only compiled code can call; under
    NUMBA_DISABLE_JIT (the coverage run, every kernel as plain Python) the name is bound to
    ``python`` instead, which does the same to Python values."""

    def decorate(definition):
        return python if numba.config.DISABLE_JIT else intrinsic(definition)

    return decorate


def _lowest_set_bit_python(bits):
    bits = int(bits) & ((1 << 64) - 1)
    return (bits & -bits).bit_length() - 1


#: The index of a nonzero integer's lowest set bit (LLVM's cttz, one instruction: Numba's
#: trailing_zeros), or its Python twin when NUMBA_DISABLE_JIT runs the kernels as Python.
lowest_set_bit = _lowest_set_bit_python if numba.config.DISABLE_JIT else trailing_zeros


@intrinsic_or(lambda array: array)
def borrow(typingctx, array):
    """The same array without its NRT meminfo (and parent): Numba's reference counting of it
    (an atomic add behind a call, at every assignment and call of an array variable) becomes a
    null test. Only for arrays whose owner outlives the use: the caller's own arguments."""
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, signature, args):
        source = context.make_array(array)(context, builder, value=args[0])
        borrowed = context.make_array(array)(context, builder, value=args[0])
        borrowed.meminfo = cgutils.get_null_value(source.meminfo.type)
        borrowed.parent = cgutils.get_null_value(source.parent.type)
        return borrowed._getvalue()

    return array(array), codegen


@intrinsic_or(lambda rows, columns, dtype: np.empty((rows, columns), dtype=dtype))
def on_stack(typingctx, rows, columns, dtype):
    """An uninitialised C array of rows x columns ``dtype`` on the stack (literal sizes), 64-byte
    aligned and with no meminfo: np.empty's malloc and free, and the NRT's reference counts, cost
    about 3 ns an env step (the TSS RL lanes). Distinct stack arrays cannot alias, so LLVM
    vectorises a loop that reads one and stores to another."""
    if not (isinstance(rows, types.IntegerLiteral) and isinstance(columns, types.IntegerLiteral)
            and isinstance(dtype, types.NumberClass)):
        return None
    shape = (rows.literal_value, columns.literal_value)
    item = dtype.instance_type
    array_type = types.Array(item, 2, "C")

    def codegen(context, builder, signature, args):
        element = context.get_data_type(item)
        with builder.goto_entry_block():
            block = builder.alloca(ir.ArrayType(element, shape[0] * shape[1]))
            block.align = 64
        itemsize = context.get_abi_sizeof(element)
        intp = context.get_value_type(types.intp)
        array = context.make_array(array_type)(context, builder)
        context.populate_array(array, data=builder.bitcast(block, element.as_pointer()),
                               shape=[intp(shape[0]), intp(shape[1])],
                               strides=[intp(shape[1] * itemsize), intp(itemsize)], itemsize=intp(itemsize),
                               meminfo=None)
        return array._getvalue()

    return array_type(rows, columns, dtype), codegen


@register_jitable(error_model="numpy")
def lane_at(row, lane):
    """Row offset ``row`` plus ``lane`` as an unsigned index: in loops over lanes LLVM cannot prove
    ``row + lane`` non-negative, and Numba's negative-index wraparound costs a test and a cmov on
    each access (and can keep the loop scalar)."""
    return np.uint64(row) + np.uint64(lane)


def _shift_python(left):
    def shift(x, n):
        value = int(x) & 0xFFFFFFFF
        value = (value << (int(n) & 31) if left else value >> (int(n) & 31)) & 0xFFFFFFFF
        return np.int32(value - (1 << 32) if value >> 31 else value)

    return shift


def _shift(typingctx, x, n, left):
    """An int32 shift by n mod 32 as one 32-bit LLVM shift: Numba's own shifts work in int64,
    which LLVM does not narrow for a shift by a variable (a loop over lanes with one runs eight
    lanes to a vector, and converts)."""
    if not (isinstance(x, types.Integer) and isinstance(n, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        value = context.cast(builder, args[0], x, types.int32)
        amount = builder.and_(context.cast(builder, args[1], n, types.int32), ir.Constant(ir.IntType(32), 31))
        return builder.shl(value, amount) if left else builder.lshr(value, amount)

    return types.int32(x, n), codegen


@intrinsic_or(_shift_python(True))
def shl32(typingctx, x, n):
    """x << (n mod 32) in int32."""
    return _shift(typingctx, x, n, True)


@intrinsic_or(_shift_python(False))
def shr32(typingctx, x, n):
    """Logical x >> (n mod 32) in int32."""
    return _shift(typingctx, x, n, False)
