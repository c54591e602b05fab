"""Shared fixtures: every differential test runs against every backend from the registry."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

from combatsim.registry import BACKENDS, KERNELS, available_backends, get_kernel

# A suite started in the background by a shell without job control (`nohup pytest &`) inherits
# SIGINT ignored, and so would every command its Ctrl-C tests start: Python installs its
# KeyboardInterrupt handler only where SIGINT is not ignored. Give this process Python's handler;
# the commands it starts then begin with SIGINT at its default, as from a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# JIT compilation makes the first example slow; CI runs fewer examples than a local deep run.
settings.register_profile(
    "default", deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("ci", deadline=None, max_examples=30, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("deep", deadline=None, max_examples=1000, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default"))

COMPILED = ("numba", "cython")


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    """Each backend in turn; a backend missing here is a failure, not a skip, on CI."""
    if request.param not in available_backends():
        pytest.fail(f"backend {request.param} is not available")
    return request.param


@pytest.fixture(params=COMPILED)
def compiled_backend(request) -> str:
    return request.param


def all_kernels() -> list[str]:
    return [f"{family}.{name}" for family, names in KERNELS.items() for name in names]


def kernel(name: str, backend: str):
    return get_kernel(name, backend)


def int64(*values) -> np.ndarray:
    return np.array(values, dtype=np.int64)
