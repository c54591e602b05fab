"""Prepared attacks: validate an attack's inputs once, then resolve it many times (game loops).

A ruleset's ``Attack`` (``combatsim.d100.Attack``, ``combatsim.exp.Attack``,
``combatsim.tss.Attack``) takes the attack inputs of its ``simulate_*`` function and checks them
with the same code and the same one-line errors. ``resolve(seed, index)`` is then item ``index``
of ``simulate_*(n, seed=seed, outcomes=True)``, any n above index: the same Philox words and the
same per-item rule code (docs/rng.md), so an outcome depends on (seed, index, inputs) only.
A resolve is one call into the kernel module's one-attack path (Cython's ``OneAttack``, Numba's
``one_attack``), which runs the bulk kernel's own per-item code; the pure-Python backend runs the
reference kernel on the one item.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import types
from collections.abc import Callable, Mapping

import numpy as np

from combatsim.registry import get_kernel, resolve_backend
from combatsim.runner import INT64_MAX_ITEMS, exact_function, keyword_only, passing
from combatsim.validation import SEED_MAX, check_int, check_seed

#: Items are numbered 0 .. ITEM_LIMIT - 1, as in every simulate_* call (n <= INT64_MAX_ITEMS).
ITEM_LIMIT = INT64_MAX_ITEMS
#: resolve_many returns at most this many bytes of outcome arrays.
MAX_OUTCOME_BYTES = 1 << 30

_new_tuple = tuple.__new__


def check_item(seed: object, index: object, name: str = "index") -> tuple[int, int]:
    """A seed in 0..2**64-1 and an item index in 0..ITEM_LIMIT-1, or a one-line error."""
    return check_seed(seed), check_int(name, index, 0, ITEM_LIMIT - 1)


def frozen(value: object) -> object:
    """Read-only views of nested dicts, so a cached answer cannot be changed by a caller."""
    if isinstance(value, dict):
        return types.MappingProxyType({key: frozen(item) for key, item in value.items()})
    return value


class PreparedAttack:
    """The rulesets' ``Attack``: input checks, seed and index checks, the kernel call, the odds
    cache. A subclass sets ``kernel_name``, ``Outcome`` (a NamedTuple of the per-item outputs, in
    the kernel's output order), ``dtypes`` (their array types), ``counts_size``, ``inputs`` (the
    ruleset's function that checks one attack's inputs: its keyword-only parameters are the
    ``Attack``'s, as they are its ``simulate_*``'s) and ``_setup(**inputs)``, which returns the
    kernel's params and the one-attack paths' scalars (see :meth:`_prepare`)."""

    kernel_name: str
    Outcome: type
    dtypes: tuple[type, ...]
    counts_size: int
    inputs: Callable

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "inputs" in cls.__dict__:
            # __init__(self, *, <inputs>, backend="auto"), with Python's own keyword errors
            own = keyword_only(cls.inputs)
            backend = inspect.Parameter("backend", inspect.Parameter.KEYWORD_ONLY, default="auto", annotation="str")
            self = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
            cls.__init__ = exact_function(cls.__name__, [self, *own, backend],
                                          f"self._prepare(backend, *self._setup({passing(own)}))", {})
            cls.__signature__ = inspect.Signature([*own, backend])

    def _setup(self, **inputs: object) -> tuple[tuple, tuple]:
        raise NotImplementedError

    def __new__(cls, *args: object, **arguments: object) -> PreparedAttack:
        # Kept so a prepared attack pickles as its inputs (worker processes, SubprocVecEnv) and is
        # validated again where it is unpickled, never trusted as raw kernel parameters.
        prepared = super().__new__(cls)
        prepared._arguments = arguments
        return prepared

    def __reduce__(self) -> tuple:
        return _rebuild, (type(self), {**self._arguments, "backend": self.backend})

    def _prepare(self, backend: str, params: tuple, scalars: tuple) -> None:
        """``params``: the kernel's parameters; ``scalars``: the one-attack paths' (Cython's
        ``OneAttack(*scalars)``, Numba's ``one_attack(seed, index, *scalars)``)."""
        self.backend = resolve_backend(backend)
        self._params = params
        self._kernel = get_kernel(self.kernel_name, self.backend)
        self._odds: Mapping | None = None
        ruleset = self.kernel_name.partition(".")[0]
        if self.backend == "cython":
            self._one = importlib.import_module(f"combatsim.kernels.{ruleset}._cy").OneAttack(*scalars).resolve
        elif self.backend == "numba":
            one_attack = importlib.import_module(f"combatsim.kernels.{ruleset}._nb").one_attack
            self._one = _compiled_one_attack(one_attack, scalars)
        else:
            self._one = self._one_from_kernel

    def resolve(self, seed: int, index: int):
        """Item ``index`` of ``simulate_*(n, seed=seed, outcomes=True)``, as an ``Outcome``."""
        if not (type(seed) is int and type(index) is int and 0 <= seed <= SEED_MAX and 0 <= index < ITEM_LIMIT):
            seed, index = check_item(seed, index)
        return _new_tuple(self.Outcome, self._one(seed, index))

    def resolve_many(self, seed: int, start: int, count: int):
        """Items ``start`` .. ``start + count - 1``: an ``Outcome`` of arrays, the same as that
        slice of ``simulate_*``'s outcome arrays."""
        seed, start = check_item(seed, start, "start")
        per_item = sum(np.dtype(dtype).itemsize for dtype in self.dtypes)
        count = check_int("count", count, 0, min(ITEM_LIMIT - start, MAX_OUTCOME_BYTES // per_item))
        outputs = [np.empty(count, dtype=dtype) for dtype in self.dtypes]
        if count:
            counts = np.zeros(self.counts_size, dtype=np.int64)
            self._kernel(np.uint64(seed), start, count, *self._params, counts, *outputs)
        return _new_tuple(self.Outcome, outputs)

    def _one_from_kernel(self, seed: int, index: int) -> tuple:
        return tuple(int(values[0]) for values in self.resolve_many(seed, index, 1))

    def odds(self) -> Mapping:
        """The exact probabilities of one attack (the ruleset's odds module), computed once."""
        if self._odds is None:
            self._odds = frozen(self._exact_odds())
        return self._odds

    def _exact_odds(self) -> dict:
        raise NotImplementedError


def _compiled_one_attack(dispatcher: Callable, scalars: tuple) -> Callable[[int, int], tuple]:
    """Numba's one-attack function compiled for these scalars, called as ``(seed, index)``.

    The seed is typed uint64 (Numba would type one below 2**63 as int64 and compile again for a
    larger one). The compiled entry point is called directly: Numba's per-call type dispatch, and
    boxing the seed as np.uint64 for it, cost more than the attack (resolve was 0.8x a numpy
    ``integers`` call through the dispatcher). The seed and index are checked before the call.
    """
    from numba import typeof

    signature = tuple(typeof(value) for value in (np.uint64(0), 0, *scalars))
    dispatcher.compile(signature)
    entry = getattr(dispatcher.overloads.get(signature), "entry_point", None)
    if entry is None:  # a Numba without per-signature entry points: its dispatcher
        return lambda seed, index: dispatcher(np.uint64(seed), index, *scalars)
    return lambda seed, index: entry(seed, index, *scalars)


def _rebuild(cls: type, arguments: dict) -> PreparedAttack:
    return cls(**arguments)


def bench_cases(ruleset: str, make: Callable[[str], PreparedAttack]) -> list:
    """``<ruleset>.resolve_one`` and ``<ruleset>.odds_one`` for ``combatsim bench``: calls per
    second of ``resolve`` (a new index each call) and of ``odds`` (cached after the warm-up call),
    against numpy's one ``Generator.integers(1, 1001)`` call as the baseline. ``make(backend)``
    builds the case's attack, once per backend."""
    from combatsim.bench_case import BenchCase

    attack = functools.cache(make)

    def resolve_calls(backend: str, n: int, threads: int) -> object:
        resolve = attack(backend).resolve
        for index in range(n):
            outcome = resolve(1, index)
        return outcome

    def odds_calls(backend: str, n: int, threads: int) -> object:
        odds = attack(backend).odds
        for _ in range(n):
            answer = odds()
        return answer

    def numpy_calls(n: int) -> object:
        integers = np.random.default_rng(1).integers
        for _ in range(n):
            value = integers(1, 1001)
        return value

    single = dict(numpy=numpy_calls, compiled_items=200_000, python_items=2_000, numpy_items=200_000, threads=(1,))
    return [BenchCase(f"{ruleset}.resolve_one", resolve_calls, **single),
            BenchCase(f"{ruleset}.odds_one", odds_calls, **single)]
