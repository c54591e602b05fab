"""Scenario fields: the :class:`Field` tables a ruleset declares its scenario keys in, and the
:class:`Reader` that checks one TOML table against them.

Each ruleset's ``combatsim.<ruleset>.scenario`` builds on these; ``combatsim.scenario`` reads a file
and hands each ruleset its tables, so this module imports no ruleset.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

MAX_MEMBERS_PER_SIDE = 64
#: Stands for "no default: the field must be given".
REQUIRED = object()


class ScenarioError(ValueError):
    """A scenario file that cannot run; the message names the file and the path inside it."""


def printable(text: str) -> bool:
    """No control, format (bidirectional overrides, zero-width) or line-separator characters:
    they would forge or reorder lines of a report or a CSV file."""
    return all(unicodedata.category(c) not in ("Cc", "Cf", "Zl", "Zp") for c in text)


# --- fields ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Field:
    """One key of a scenario table: what it holds, its range or choices, and its default.

    ``kind`` is one of integer, boolean, string, choice, text (a string in a syntax that
    ``parse(text, path)`` checks), integers (a list of integers), mapping (free names ->
    strings), table (``fields``) or tables (an array of tables with ``fields``).
    """

    name: str
    kind: str
    help: str
    default: object = REQUIRED
    low: int | None = None
    high: int | None = None
    choices: tuple[str, ...] = ()
    #: integers and tables: the allowed number of entries
    entries: tuple[int, int] = (0, 0)
    #: text: the accepted syntax, in words, and the function that checks it
    syntax: str = ""
    parse: Callable[[str, str], object] | None = None
    fields: tuple[Field, ...] = ()
    #: text: a TOML number is also accepted, read as the number's text (severity = 1.5)
    numbers: bool = False
    #: when the field applies or what replaces it (e.g. 'kind = "creature" only')
    note: str = ""

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def type_text(self) -> str:
        """The type and its allowed values, as the reference prints them."""
        if self.kind == "integer":
            return f"integer {self.low:,}..{self.high:,}"
        if self.kind == "boolean":
            return "true or false"
        if self.kind == "string":
            return "string"
        if self.kind == "choice":
            return "one of " + ", ".join(f'"{c}"' for c in self.choices)
        if self.kind == "text":
            return f"{'number or string' if self.numbers else 'string'}: {self.syntax}"
        if self.kind == "integers":
            low, high = self.entries
            size = f"{low}" if low == high else f"{low}..{high}"
            return f"list of {size} integers in {self.low:,}..{self.high:,}"
        if self.kind == "mapping":
            return f"table of name = string: {self.syntax}"
        if self.kind == "table":
            return "table"
        low, high = self.entries
        return f"array of {low}..{high} tables" if low != high else f"array of {low} tables"

    def default_text(self) -> str:
        if self.required:
            return "required"
        if self.default is None:
            return "absent"
        if isinstance(self.default, bool):
            return "true" if self.default else "false"
        if isinstance(self.default, str):
            return f'"{self.default}"'
        if isinstance(self.default, dict):
            return "{}"
        if isinstance(self.default, list | tuple):
            return "[" + ", ".join(str(v) for v in self.default) + "]"
        return f"{self.default:,}" if isinstance(self.default, int) else str(self.default)


def walk(fields: Sequence[Field], prefix: str = "") -> list[tuple[str, Field]]:
    """Every field under ``fields`` with its path (arrays' indices as ``[S]``, ``[M]``)."""
    rows = []
    for f in fields:
        path = f"{prefix}.{f.name}" if prefix else f.name
        rows.append((path, f))
        if f.kind == "table":
            rows.extend(walk(f.fields, path))
        elif f.kind == "tables":
            rows.extend(walk(f.fields, f"{path}[{'S' if f.name == 'sides' else 'M'}]"))
    return rows


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

    def has(self, f: Field) -> bool:
        return f.name in self.table

    def read(self, f: Field):
        """``f``'s value from this table, checked against ``f``; a table comes back as a Reader.

        An absent optional field gives its default (a table with default ``{}`` gives a Reader
        on an empty table, so its own fields' defaults apply).
        """
        self.used.add(f.name)
        if f.name not in self.table:
            if f.required:
                raise self.error(f.name, "is required")
            if f.kind == "table" and f.default is not None:
                return Reader(self.file, {}, self.child_path(f.name))
            return f.default
        value = self.table[f.name]
        reader = getattr(self, f"_{f.kind}")
        return reader(f, value)

    def _integer(self, f: Field, value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(f.name, f"must be an integer in {f.low}..{f.high}, got {value!r}")
        if not f.low <= value <= f.high:
            raise self.error(f.name, f"must be in {f.low}..{f.high}, got {value}")
        return value

    def _boolean(self, f: Field, value: object) -> bool:
        if not isinstance(value, bool):
            raise self.error(f.name, f"must be true or false, got {value!r}")
        return value

    def _string(self, f: Field, value: object, max_length: int = 200) -> str:
        if not isinstance(value, str) or not value.strip() or len(value) > max_length:
            raise self.error(f.name, f"must be a non-empty string of at most {max_length} characters, got {value!r}")
        if not printable(value):
            raise self.error(f.name, f"must not hold control or formatting characters, got {value!r}")
        return value

    def _choice(self, f: Field, value: object) -> str:
        if value not in f.choices:
            raise self.error(f.name, f"must be one of {', '.join(map(repr, f.choices))}; got {value!r}")
        return value

    def _text(self, f: Field, value: object):
        if f.numbers and isinstance(value, int | float) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            raise self.error(f.name, f"must be a string ({f.syntax}), got {value!r}")
        self._string(f, value)
        try:
            return f.parse(value, f.name)
        except (ValueError, TypeError) as problem:
            message = str(problem)  # the parser names the field too: say it once
            if message.startswith(f.name):
                message = message[len(f.name):].lstrip(": ")
            raise self.error(f.name, message) from None

    def _integers(self, f: Field, value: object) -> tuple[int, ...]:
        low, high = f.entries
        if not isinstance(value, list) or not low <= len(value) <= high or not all(
            isinstance(v, int) and not isinstance(v, bool) and f.low <= v <= f.high for v in value
        ):
            size = f"{low}" if low == high else f"at most {high}" if low == 0 else f"{low}..{high}"
            raise self.error(f.name, f"must be a list of {size} integers in {f.low}..{f.high}, got {value!r}")
        return tuple(value)

    def _mapping(self, f: Field, value: object) -> dict[str, str]:
        if not isinstance(value, dict) or not value:
            raise self.error(f.name, f"must be a non-empty table of name = string ({f.syntax}), got {value!r}")
        sub = Reader(self.file, value, self.child_path(f.name))
        return {key: sub._string(Field(key, "string", ""), text) for key, text in value.items()}

    def _table(self, f: Field, value: object) -> Reader:
        if not isinstance(value, dict):
            raise self.error(f.name, f"must be a table, got {value!r}")
        return Reader(self.file, value, self.child_path(f.name))

    def _tables(self, f: Field, value: object) -> list[Reader]:
        low, high = f.entries
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise self.error(f.name, "must be an array of tables ([[...]])")
        if not low <= len(value) <= high:
            raise self.error(f.name, f"must hold {low}..{high} entries, got {len(value)}")
        base = self.child_path(f.name)
        return [Reader(self.file, item, f"{base}[{index}]") for index, item in enumerate(value)]

    def read_all(self, fields: Sequence[Field]) -> dict:
        """Every field of ``fields``, by name (see read), then ``finish``: the whole table."""
        values = {f.name: self.read(f) for f in fields}
        self.finish(fields)
        return values

    def finish(self, fields: Sequence[Field]) -> None:
        """Refuse keys the table does not declare: a typo must not silently fall back to a default."""
        allowed = {f.name for f in fields}
        unknown = sorted(set(self.table) - allowed)
        if unknown:
            raise self.error(None, f"unknown key(s) {', '.join(map(repr, unknown))}; allowed: "
                                   f"{', '.join(f.name for f in fields)}")


def call(reader: Reader, factory: Callable, *args, **kwargs):
    """Run an API constructor or check, giving its ValueError/TypeError this table's path."""
    try:
        return factory(*args, **kwargs)
    except ScenarioError:
        raise
    except (ValueError, TypeError) as problem:
        raise reader.error(None, str(problem)) from None


def read_sides(sides: list[list[Reader]], read_member: Callable[[Reader, int], object],
               fields: Sequence[Field]) -> list[list]:
    """Each side's members as ``read_member(reader, side)`` makes them, in file order; each
    member's table is then checked for keys that ``fields`` does not declare."""
    def read(reader: Reader, side: int) -> object:
        member = read_member(reader, side)
        reader.finish(fields)
        return member

    return [[read(reader, side) for reader in readers] for side, readers in enumerate(sides)]


#: A member's optional name: environments and ``--policy`` name members by it (combatsim.game).
MEMBER_NAME = Field("name", "string", "the member's name in environments and --policy", default=None,
                    note="absent: its side's name if it is alone on its side, else \"SIDE NAME k\" (k from 1)")
