"""Backends and the kernel registry."""

from __future__ import annotations

import inspect
import warnings

import pytest

from combatsim import registry
from combatsim.registry import BACKENDS, get_kernel, kernel_names, resolve_backend


@pytest.mark.parametrize("name", kernel_names())
def test_every_kernel_exists_in_every_backend_with_one_signature(name):
    python = get_kernel(name, "python")
    numba = get_kernel(name, "numba")
    cython = get_kernel(name, "cython")
    assert python.__name__ == name.split(".")[1]
    parameters = list(inspect.signature(python).parameters)
    assert list(inspect.signature(getattr(numba, "py_func", numba)).parameters) == parameters
    assert parameters[:3] == ["seed", "start", "count"]
    assert callable(cython)
    assert cython.__module__ == f"combatsim.kernels.{name.split('.')[0]}._cy" or name.startswith("rng.")


def test_all_backends_available_here():
    assert registry.available_backends() == list(BACKENDS)


def test_auto_prefers_cython(monkeypatch):
    monkeypatch.delenv(registry.BACKEND_ENVIRONMENT_VARIABLE, raising=False)
    assert resolve_backend("auto") == "cython"
    assert resolve_backend(None) == "cython"


def test_environment_variable_forces_auto(monkeypatch):
    monkeypatch.setenv(registry.BACKEND_ENVIRONMENT_VARIABLE, "numba")
    assert resolve_backend("auto") == "numba"
    assert resolve_backend("python") == "python"  # an explicit choice still wins
    monkeypatch.setenv(registry.BACKEND_ENVIRONMENT_VARIABLE, "fortran")
    for _ in range(2):  # a bad value is refused every time, never remembered
        with pytest.raises(ValueError, match="COMBATSIM_BACKEND must be one of"):
            resolve_backend("auto")
    # each change of the variable is seen by the next call
    for value, found in (("python", "python"), ("", "cython"), ("auto", "cython"), ("numba", "numba")):
        monkeypatch.setenv(registry.BACKEND_ENVIRONMENT_VARIABLE, value)
        assert resolve_backend(None) == found
    monkeypatch.delenv(registry.BACKEND_ENVIRONMENT_VARIABLE)
    assert resolve_backend("auto") == "cython"


def test_fallback_warns_once(monkeypatch):
    monkeypatch.delenv(registry.BACKEND_ENVIRONMENT_VARIABLE, raising=False)
    monkeypatch.setattr(registry, "backend_available", lambda backend: backend != "cython")
    monkeypatch.setattr(registry, "_warned_fallback", False)
    monkeypatch.setattr(registry, "_auto", {})  # what auto found: the backends are found anew here
    with pytest.warns(RuntimeWarning, match="falling back to numba"):
        assert resolve_backend("auto") == "numba"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert resolve_backend("auto") == "numba"
    monkeypatch.setattr(registry, "backend_available", lambda backend: backend == "python")
    monkeypatch.setattr(registry, "_auto", {})
    assert resolve_backend("auto") == "python"
    with pytest.raises(ValueError, match="backend 'cython' is not available"):
        resolve_backend("cython")


@pytest.mark.parametrize("bad", ["fortran", "", "Numba", 3, ["cython"], ("cython",)])
def test_unknown_backend(bad):
    with pytest.raises(ValueError, match="backend must be one of"):
        resolve_backend(bad)


def test_unknown_kernel():
    with pytest.raises(ValueError, match="unknown kernel"):
        get_kernel("exp.nothing", "python")
