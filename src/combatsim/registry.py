"""Backends and the kernel registry.

Every kernel has one name and three implementations with one signature:
``python`` (the reference in ``combatsim.<ruleset>.reference``), ``numba``
(``combatsim.kernels.<ruleset>._nb``) and ``cython`` (``combatsim.kernels.<ruleset>._cy``).
Tests and benchmarks iterate :data:`KERNELS`, so no kernel can exist in one backend only.
"""

from __future__ import annotations

import importlib
import os
import warnings
from collections.abc import Callable

BACKENDS = ("python", "numba", "cython")
BACKEND_CHOICES = ("auto", *BACKENDS)
#: Forces the backend that ``"auto"`` resolves to (an explicit backend argument still wins).
BACKEND_ENVIRONMENT_VARIABLE = "COMBATSIM_BACKEND"

#: ruleset -> kernel names. Each name resolves to the same function name in each backend module.
KERNELS: dict[str, tuple[str, ...]] = {
    "rng": ("dense_dice", "item_dice"),
    "exp": ("to_hit", "attack", "fight"),
    "d100": ("attack", "fight"),
    "tss": ("attack", "fight"),
}

#: The rule systems (every registry family but the generator's own dice kernels).
RULESETS = tuple(family for family in KERNELS if family != "rng")

_MODULES = {
    "python": "combatsim.{ruleset}.reference",
    "numba": "combatsim.kernels.{ruleset}._nb",
    "cython": "combatsim.kernels.{ruleset}._cy",
}
#: The dice kernels live beside the generator they test rather than in a ruleset folder.
_MODULE_OVERRIDES = {
    "rng": {"python": "combatsim.rng", "numba": "combatsim.kernels.rng_nb", "cython": "combatsim.kernels.rng_cy"}
}
_PROBE = _MODULE_OVERRIDES["rng"]
_warned_fallback = False
#: Resolved kernels and backend probes, so a call after the first costs a dictionary lookup.
_kernels: dict[tuple[str, str], Callable] = {}
_available: dict[str, bool] = {}
#: ENGINE_SOURCE_DIGESTs found current (each engine's sources are read once a process).
_current_rules: set[str] = set()


def kernel_names() -> list[str]:
    """All registered kernels as ``ruleset.kernel``."""
    return [f"{ruleset}.{name}" for ruleset, names in KERNELS.items() for name in names]


def backend_available(backend: str) -> bool:
    if backend not in _available:
        try:
            importlib.import_module(_PROBE[backend])
            _available[backend] = True
        except ImportError:
            _available[backend] = False
    return _available[backend]


def available_backends() -> list[str]:
    return [backend for backend in BACKENDS if backend_available(backend)]


#: What ``auto`` resolved to, by the environment variable's value (None: unset): a call's default
#: backend costs one environment read and a lookup.
_auto: dict[str | None, str] = {}


def resolve_backend(backend: str | None = "auto") -> str:
    """Turn ``auto`` into a concrete backend: cython, then numba, then python (warning once)."""
    if backend is None or backend == "auto":
        forced = os.environ.get(BACKEND_ENVIRONMENT_VARIABLE)
        found = _auto.get(forced)
        if found is None:
            found = _auto[forced] = _resolve_backend("auto")
        return found
    return _resolve_backend(backend)


def _resolve_backend(backend: str) -> str:
    global _warned_fallback
    if not isinstance(backend, str) or backend not in BACKEND_CHOICES:
        raise ValueError(f"backend must be one of {', '.join(BACKEND_CHOICES)}; got {backend!r}")
    if backend == "auto":
        forced = os.environ.get(BACKEND_ENVIRONMENT_VARIABLE, "").strip()
        if forced and forced != "auto":
            if forced not in BACKENDS:
                raise ValueError(
                    f"{BACKEND_ENVIRONMENT_VARIABLE} must be one of {', '.join(BACKEND_CHOICES)}; got {forced!r}"
                )
            backend = forced
        else:
            for candidate in BACKENDS[::-1]:
                if backend_available(candidate):
                    if candidate != "cython" and not _warned_fallback:
                        _warned_fallback = True
                        warnings.warn(
                            f"combatsim: the cython backend is unavailable; falling back to {candidate}",
                            RuntimeWarning,
                            stacklevel=3,
                        )
                    return candidate
    if not backend_available(backend):
        raise ValueError(f"backend {backend!r} is not available here; available: {', '.join(available_backends())}")
    return backend


def get_kernel(name: str, backend: str) -> Callable:
    """The implementation of kernel ``ruleset.kernel`` in ``backend`` (already resolved)."""
    found = _kernels.get((name, backend))
    if found is not None:
        return found
    ruleset, _, kernel = name.partition(".")
    if kernel not in KERNELS.get(ruleset, ()):
        raise ValueError(f"unknown kernel {name!r}; known: {', '.join(kernel_names())}")
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}; got {backend!r}")
    path = _MODULE_OVERRIDES.get(ruleset, _MODULES)[backend].format(ruleset=ruleset)
    module = importlib.import_module(path)
    if backend == "cython":
        _check_kernel_rules(ruleset, module)
    found = _kernels[(name, backend)] = getattr(module, kernel)
    return found


def _check_kernel_rules(ruleset: str, module: object) -> None:
    """A Cython kernel module includes its engine's kernel rules (combatsim.engine_cython): refuse
    one built from another source than the engine's current one, as the engine builds are."""
    built = getattr(module, "ENGINE_SOURCE_DIGEST", None)
    if built is None or built in _current_rules:
        return
    from combatsim.engine import built_from_current_source

    if not built_from_current_source(module):
        raise ValueError(f"backend cython: {module.__name__} was built from older combatsim.{ruleset}.engine kernel "
                         "rules (rebuild the extensions: python setup.py build_ext --inplace)")
    _current_rules.add(built)
