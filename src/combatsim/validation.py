"""Validation at the API boundary: every error names the field and its allowed range."""

from __future__ import annotations

import numbers
import os

import numpy as np

INT64_MAX = 2**63 - 1
SEED_MAX = 2**64 - 1


def check_int(name: str, value: object, low: int | None = None, high: int | None = None) -> int:
    """An exact integer (bools, floats and strings refused) within [low, high]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer{_range(low, high)}, got {type(value).__name__} {value!r}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{name} must be{_range(low, high)}, got {value}")
    return value


def check_bool(name: str, value: object) -> bool:
    """A real bool (numpy's included); 0, 1 and "yes" are refused."""
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return bool(value)


def check_choice(name: str, value: object, choices: tuple[str, ...] | list[str]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


def check_seed(seed: object) -> int:
    return check_int("seed", seed, 0, SEED_MAX)


def check_threads(threads: object) -> int:
    if threads is None:
        return os.cpu_count() or 1
    return check_int("threads", threads, 1, 1024)


def check_int_array(
    name: str, value: object, length: int, low: int | None = None, high: int | None = None
) -> np.ndarray:
    """A scalar or a 1-D integer array of ``length`` -> C-contiguous int64 of length 1 or ``length``."""
    if np.isscalar(value) or (isinstance(value, np.ndarray) and value.ndim == 0):
        scalar = value.item() if isinstance(value, np.generic | np.ndarray) else value
        return np.array([check_int(name, scalar, low, high)], dtype=np.int64)
    array = np.asarray(value)
    if array.ndim != 1:
        raise ValueError(f"{name} must be a scalar or a 1-D array of length {length}, got shape {array.shape}")
    if array.dtype == np.bool_ or not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"{name} must hold integers{_range(low, high)}, got dtype {array.dtype}")
    if array.shape[0] != length:
        raise ValueError(f"{name} must have one entry per attack ({length}), got {array.shape[0]}")
    if length and low is not None and int(array.min()) < low:
        raise ValueError(f"{name} must be{_range(low, high)}, got {int(array.min())}")
    if length and high is not None and int(array.max()) > high:
        raise ValueError(f"{name} must be{_range(low, high)}, got {int(array.max())}")
    return np.ascontiguousarray(array, dtype=np.int64)


def _range(low: int | None, high: int | None) -> str:
    if low is not None and high is not None:
        return f" in {low}..{high}"
    if low is not None:
        return f" >= {low}"
    if high is not None:
        return f" <= {high}"
    return ""
