"""Scenario files: TOML, validated before anything runs.

A scenario names its ruleset and two sides of combatants; ``combatsim.<ruleset>.scenario``
turns the rest into that ruleset's fight specification. Every error names the file, the path
inside it (``sides[1].members[0].weapon``) and the allowed values. Sizes are capped here, before
anything is allocated.
"""

from __future__ import annotations

import importlib
import math
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from combatsim.registry import RULESETS

MAX_FILE_BYTES = 1 << 20
MAX_MEMBERS_PER_SIDE = 64
SIDES = 2


class ScenarioError(ValueError):
    """A scenario file that cannot run; the message names the file and the path inside it."""


@dataclass
class Reader:
    """Typed access to one TOML table, remembering where it came from for error messages."""

    file: str
    table: dict
    path: str = ""
    used: set[str] = field(default_factory=set)

    def error(self, key: str | None, message: str) -> ScenarioError:
        where = self.child_path(key) if key is not None else (self.path or "(top level)")
        return ScenarioError(f"{self.file}: {where}: {message}")

    def child_path(self, key: str | int) -> str:
        if isinstance(key, int):
            return f"{self.path}[{key}]"
        return f"{self.path}.{key}" if self.path else key

    def _get(self, key: str, default: object, required: bool) -> object:
        self.used.add(key)
        if key not in self.table:
            if required:
                raise self.error(key, "is required")
            return default
        return self.table[key]

    def integer(self, key: str, low: int, high: int, default: int | None = None) -> int:
        value = self._get(key, default, default is None)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(key, f"must be an integer in {low}..{high}, got {value!r}")
        if not low <= value <= high:
            raise self.error(key, f"must be in {low}..{high}, got {value}")
        return value

    def boolean(self, key: str, default: bool = False) -> bool:
        value = self._get(key, default, False)
        if not isinstance(value, bool):
            raise self.error(key, f"must be true or false, got {value!r}")
        return value

    def string(self, key: str, default: str | None = None, max_length: int = 200) -> str:
        value = self._get(key, default, default is None)
        if not isinstance(value, str) or not value.strip() or len(value) > max_length:
            raise self.error(key, f"must be a non-empty string of at most {max_length} characters, got {value!r}")
        return value

    def choice(self, key: str, choices: Sequence[str], default: str | None = None) -> str:
        value = self._get(key, default, default is None)
        if value not in choices:
            raise self.error(key, f"must be one of {', '.join(map(repr, choices))}; got {value!r}")
        return value

    def strings(self, key: str, max_items: int = 64) -> list[str]:
        value = self._get(key, [], False)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value) or len(value) > max_items:
            raise self.error(key, f"must be a list of at most {max_items} strings, got {value!r}")
        return value

    def parsed(self, key: str, parse, default: str | None = None):
        """A string turned into a value by ``parse(text, field)``; its ValueError gets our path."""
        text = self._get(key, default, default is None)
        if not isinstance(text, str):
            raise self.error(key, f"must be a string, got {text!r}")
        try:
            return parse(text, self.child_path(key))
        except (ValueError, TypeError) as problem:
            raise self.error(key, str(problem)) from None

    def sub(self, key: str, required: bool = True) -> Reader:
        value = self._get(key, {}, required)
        if not isinstance(value, dict):
            raise self.error(key, f"must be a table, got {value!r}")
        return Reader(self.file, value, self.child_path(key))

    def items(self, key: str, max_items: int, min_items: int = 1) -> list[Reader]:
        value = self._get(key, None, True)
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise self.error(key, "must be an array of tables ([[...]])")
        if not min_items <= len(value) <= max_items:
            raise self.error(key, f"must hold {min_items}..{max_items} entries, got {len(value)}")
        base = self.child_path(key)
        return [Reader(self.file, item, f"{base}[{index}]") for index, item in enumerate(value)]

    def finish(self) -> None:
        """Refuse keys nobody asked for: a typo must not silently fall back to a default."""
        unknown = sorted(set(self.table) - self.used)
        if unknown:
            raise self.error(None, f"unknown key(s) {', '.join(map(repr, unknown))}; allowed: "
                                   f"{', '.join(sorted(self.used)) or 'none'}")


@dataclass
class Scenario:
    file: str
    ruleset: str
    name: str
    spec: object
    side_names: list[str]


def load(path: str | Path) -> Scenario:
    """Read and validate a scenario file; nothing is simulated or allocated for it yet."""
    file = str(path)
    source = Path(path)
    if not source.is_file():
        raise ScenarioError(f"{file}: no such scenario file")
    if source.stat().st_size > MAX_FILE_BYTES:
        raise ScenarioError(f"{file}: larger than {MAX_FILE_BYTES} bytes; a scenario is a short TOML file")
    try:
        document = tomllib.loads(source.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as problem:
        raise ScenarioError(f"{file}: not a valid TOML file: {problem}") from None
    top = Reader(file, document)
    ruleset = top.choice("ruleset", RULESETS)
    name = top.string("name", default=Path(file).stem)
    module = importlib.import_module(f"combatsim.{ruleset}.scenario")
    sides = top.items("sides", SIDES, SIDES)
    side_names = [side.string("name", default=f"side {index}") for index, side in enumerate(sides)]
    spec = module.build(top, sides)
    for side in sides:
        side.finish()
    top.finish()
    return Scenario(file, ruleset, name, spec, side_names)


def wilson_interval(successes: int, trials: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """95% Wilson score interval for a win rate (well behaved at 0 and 1, unlike the normal one)."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)
