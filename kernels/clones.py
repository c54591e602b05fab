"""Which clone of the hand-written C passes runs (kernels/clones.h; docs/kernels.md).

Every hand-written C pass of the Cython kernels is built in clones for three levels of vector
code, ``CLONES``, and each call runs the highest one the CPU and the build allow. The environment
variable ``COMBATSIM_CLONE`` (one of ``CLONES``) caps that level for a whole process, and
:func:`forced` for a block of code; the tests run every clone this machine can run this way, so
that a CPU without AVX-512 or AVX2 runs code that was tested. Every clone gives the same results.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import warnings
from collections.abc import Iterator

#: The clones, from the portable one up: their index is the level clones.h numbers them by.
CLONES = ("portable", "avx2", "x86-64-v4")
#: The Cython modules built with clones (each includes kernels/clones.pxi).
MODULES = ("combatsim.kernels.rng_cy", "combatsim.kernels.exp._cy", "combatsim.kernels.tss._cy",
           "combatsim.kernels.d100._cy")
ENVIRONMENT = "COMBATSIM_CLONE"


def check_environment() -> None:
    """Warns once when COMBATSIM_CLONE names no clone (the C passes then take no cap)."""
    value = os.environ.get(ENVIRONMENT, "")
    if value and value not in CLONES:
        warnings.warn(f"{ENVIRONMENT} must be one of {', '.join(CLONES)}; got {value!r} (ignored)", stacklevel=2)


def _modules() -> list:
    return [importlib.import_module(name) for name in MODULES]


def available() -> tuple[str, ...]:
    """The clones this CPU and this build run, portable first."""
    return CLONES[: min(module._clone_level("cpu") for module in _modules()) + 1]


def current() -> str:
    """The clone the passes run now."""
    return CLONES[min(module._clone_level() for module in _modules())]


@contextlib.contextmanager
def forced(clone: str) -> Iterator[None]:
    """Runs the block with every C pass in ``clone`` (one of :func:`available`), in every module."""
    if clone not in CLONES:
        raise ValueError(f"clone must be one of {', '.join(CLONES)}; got {clone!r}")
    if clone not in available():
        raise ValueError(f"clone {clone!r} does not run here: this CPU and build run {', '.join(available())}")
    level = CLONES.index(clone)
    before = os.environ.get(ENVIRONMENT)
    # The engines' Cython builds read the variable when they first draw a stream ahead.
    os.environ[ENVIRONMENT] = clone
    modules = _modules()
    try:
        for module in modules:
            module._clone_level(level)
        yield
    finally:
        if before is None:
            del os.environ[ENVIRONMENT]
        else:
            os.environ[ENVIRONMENT] = before
        cap = CLONES.index(before) if before in CLONES else -1
        for module in modules:
            module._clone_level(cap)
