"""Validation at the API boundary: every error names the field and its allowed range."""

from __future__ import annotations

import functools
import numbers
import os
import re
import unicodedata
from collections.abc import Callable, Sequence
from decimal import Decimal, InvalidOperation
from fractions import Fraction

import numpy as np

SEED_MAX = 2**64 - 1


#: Digits as Python's literals write them: ASCII only, an underscore only between two digits.
_DIGITS = r"[0-9](?:_?[0-9])*"
#: A number as Python's int and float literals write it, with a sign: 12, -3, 1_000, 1e9, 2.5e3, .5
_NUMBER = re.compile(rf"[+-]?(?:{_DIGITS}(?:\.(?:{_DIGITS})?)?|\.{_DIGITS})(?:[eE][+-]?{_DIGITS})?")
#: Longer number text is refused unread: no option's range needs it, and reading it could be slow.
MAX_NUMBER_TEXT = 64
#: A number's integer part has at most this many digits (seeds have 20): beyond every range.
MAX_NUMBER_DIGITS = 40


def parse_number(text: object) -> Decimal | None:
    """The number ``text`` writes, exactly, or None.

    Accepted: what Python's int and float literals accept, with a sign and surrounding spaces
    (12, -3, 1_000, 1e9, 2.5e3, 0.5, .5); refused: misplaced underscores (1_, 1__0), digits of
    other scripts (fullwidth, Arabic-Indic), nan, inf, fractions such as 1/2, text longer than
    MAX_NUMBER_TEXT and magnitudes of more than MAX_NUMBER_DIGITS digits.
    """
    if not isinstance(text, str) or len(text) > MAX_NUMBER_TEXT:
        return None
    text = text.strip(" \t")
    if not _NUMBER.fullmatch(text):
        return None
    try:
        value = Decimal(text.replace("_", ""))
    except (ArithmeticError, InvalidOperation):
        return None
    if value and value.adjusted() >= MAX_NUMBER_DIGITS:
        return None
    return value


def parse_integer(text: object) -> int | None:
    """The integer ``text`` writes (12, -3, 1_000, 1e9, 2.5e3: read exactly, never through a
    float), or None: a fraction, or anything parse_number refuses."""
    value = parse_number(text)
    if value is None or value != value.to_integral_value():
        return None
    return int(value)


def brief(value: object, limit: int = 60) -> str:
    """``repr(value)``, cut to about ``limit`` characters: an error quotes a bad value, never all of
    a huge one."""
    if isinstance(value, int) and value.bit_length() > 3 * limit:  # str() of 4300+ digits raises
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1:,} digits"
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]!r}... ({len(value):,} characters)"
    if isinstance(value, list | tuple | dict | set) and len(value) > limit:
        return f"a {type(value).__name__} of {len(value):,} entries"
    try:
        text = repr(value)
    except Exception:
        text = f"a {type(value).__name__}"
    if "\n" in text:  # an array's repr: one line
        text = " ".join(text.split())
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def check_int(name: str, value: object, low: int | None = None, high: int | None = None) -> int:
    """An exact integer (bools, floats, strings and numpy timedeltas refused) within [low, high]."""
    if type(value) is not int:
        if isinstance(value, bool | np.bool_ | np.timedelta64) or not isinstance(value, numbers.Integral):
            raise TypeError(f"{name} must be an integer{_range(low, high)}, got {type(value).__name__} {brief(value)}")
        value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{name} must be{_range(low, high)}, got {brief(value)}")
    return value


def check_bool(name: str, value: object) -> bool:
    """A real bool (numpy's included); 0, 1 and "yes" are refused."""
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return bool(value)


def check_choice(name: str, value: object, choices: tuple[str, ...] | list[str]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {brief(value)}")
    return value


def check_seed(seed: object) -> int:
    return check_int("seed", seed, 0, SEED_MAX)


#: Threads a caller may ask for (the runner uses at most the cores).
MAX_THREADS = 1024


#: Read once: os.cpu_count() reads /sys on every call (tens of microseconds on a VM).
CPU_COUNT = os.cpu_count() or 1


def check_threads(threads: object) -> int:
    """Threads asked for: 1..MAX_THREADS, or None for one a core."""
    if threads is None:
        return CPU_COUNT
    return check_int("threads", threads, 1, MAX_THREADS)


def check_progress(progress: object) -> Callable[[int, int], None] | None:
    """A progress callback ``progress(done, n)``, or None."""
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be a callable progress(done, n) or None, got {type(progress).__name__}")
    return progress


def check_text(name: str, value: object, max_length: int = 200) -> str:
    """A non-empty one-line name: no control or format characters (ESC, CR, LF, NUL, U+202E)."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {type(value).__name__}")
    if not 1 <= len(value) <= max_length:
        raise ValueError(f"{name} must be 1..{max_length} characters long, got {len(value)}")
    if not value.isprintable():
        for character in value:
            if unicodedata.category(character) in ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"):
                raise ValueError(f"{name} must not contain control or format characters, "
                                 f"got U+{ord(character):04X} in {brief(value)}")
    return value


_SIMPLE_TYPES = frozenset((int, bool, str, type(None)))


def simple_key(values: tuple, held: list) -> tuple | None:
    """``values`` with their exact types, when every one is an int, bool, str, None, a tuple of
    those or an instance of an immutable class (see register_immutable: keyed by identity, and
    appended to ``held`` so that the identity stays its own while the key is used); else None.
    Equal keys mean identical inputs (1, True and 1.0 stay apart), so a validated result can be
    reused for them."""
    kinds = tuple(map(type, values))
    if _SIMPLE_TYPES.issuperset(kinds):
        return kinds, values
    key = []
    for kind, value in zip(kinds, values, strict=True):
        if kind in _SIMPLE_TYPES:
            key.append((kind, value))
        elif kind is tuple:
            inner = simple_key(value, held)
            if inner is None:
                return None
            key.append((tuple, inner))
        elif kind in _immutable:
            held.append(value)
            key.append((kind, id(value)))
        else:
            return None
    return tuple(key)


_immutable: set[type] = set()


def register_immutable(*classes: type) -> None:
    """Classes whose instances never change once made and checked (frozen, every field immutable:
    a Dice, a weapon), so a result checked for one instance stands for that instance. Not, for
    instance, a frozen class holding a dict or a caller's list."""
    _immutable.update(classes)


def remember(cache: dict, key: object, value: object, limit: int = 4096) -> object:
    """``cache[key] = value``, the cache emptied first when it holds ``limit`` entries: the caches
    a game loop fills stay bounded whatever the inputs. Returns ``value``."""
    if len(cache) >= limit:
        cache.clear()
    cache[key] = value
    return value


#: Values parsed from text, ints or Fractions, by (parser, type, value): see parsed.
_parses: dict[tuple, object] = {}


def parsed(parse: Callable, value: object, *field: str) -> object:
    """``parse(value, *field)``, remembered for text, ints and Fractions (immutable, hashable):
    parsing "16/8/4" or "1.5" again costs microseconds a field. Errors name the field each time."""
    kind = type(value)
    if kind is not str and kind is not int and kind is not Fraction:
        return parse(value, *field)
    key = (parse, kind, value)
    found = _parses.get(key)
    if found is None:
        found = remember(_parses, key, parse(value, *field))
    return found


def memoize_simple(function: Callable) -> Callable:
    """Cache ``function(**arguments)`` by the dict ``arguments`` when its values are simple (see
    simple_key): the memoized function takes that dict itself, so a caller that holds one already
    (a ``simulate_*``'s attack inputs) passes it without packing it again.

    For pure validate-and-derive functions whose inputs a game loop repeats: a call with simple
    inputs seen before returns the same result (which callers must not modify) without the work;
    anything else, and any input that fails validation, takes the full path every time.
    """
    cache: dict[tuple, tuple] = {}

    def memoized(arguments: dict) -> object:
        held: list = []
        key = simple_key(tuple(arguments.values()), held)
        if key is None:
            return function(**arguments)
        key = (tuple(arguments), key)
        found = cache.get(key)
        if found is None:
            found = remember(cache, key, (function(**arguments), held))
        return found[0]

    return functools.update_wrapper(memoized, function)


def refuse_masked(name: str, value: object) -> None:
    """A numpy masked array with masked entries has no value there: refused, never read through
    its mask (np.asarray would take the hidden data)."""
    if isinstance(value, np.ma.MaskedArray) and np.ma.getmaskarray(value).any():
        raise ValueError(f"{name} must not have masked entries (a numpy masked array holds no value there); "
                         f"got {int(np.ma.getmaskarray(value).sum()):,} masked")


def check_sequence(name: str, value: object, what: str) -> Sequence | np.ndarray:
    """A finite sequence (list, tuple, range) or 1-D array; iterators and generators are refused,
    since one can be endless."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence | np.ndarray):
        raise TypeError(f"{name} must be {what} as a list, tuple or array, got {type(value).__name__}")
    refuse_masked(name, value)
    return value


def check_int_array(
    name: str, value: object, length: int, low: int | None = None, high: int | None = None
) -> np.ndarray:
    """A scalar or a 1-D integer array of ``length`` -> C-contiguous int64 of length 1 or ``length``."""
    if type(value) is int:
        if (low is not None and value < low) or (high is not None and value > high):
            check_int(name, value, low, high)  # raises the range error
        return np.array([value], dtype=np.int64)
    if np.isscalar(value) or (isinstance(value, np.ndarray) and value.ndim == 0):
        refuse_masked(name, value)
        scalar = value[()] if isinstance(value, np.ndarray) else value
        return np.array([check_int(name, scalar, low, high)], dtype=np.int64)
    check_sequence(name, value, f"integers{_range(low, high)}")
    array = np.asarray(value)
    if array.ndim != 1:
        raise ValueError(f"{name} must be a scalar or a 1-D array of length {length}, got shape {array.shape}")
    if array.dtype.kind not in "iu":
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


def available_memory() -> int | None:
    """Bytes of memory available now (Linux's MemAvailable, else the free pages), or None."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None
