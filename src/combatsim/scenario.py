"""Scenario files: TOML, validated before anything runs.

A scenario names its ruleset and two sides of combatants. Each ruleset's
``combatsim.<ruleset>.scenario`` declares its fields once, as :class:`Field` tables (``OPTIONS``
and ``MEMBER``): the same tables validate a file (through :class:`Reader`), print the reference
(``combatsim scenario fields``, docs/scenarios.md) and name the paths that ``--set`` takes. Every
error names the file, the path inside it (``sides[1].members[0].weapon``) and the allowed values.
Sizes, nesting and key counts are capped on the raw text, before the TOML parser sees it.
"""

from __future__ import annotations

import importlib
import math
import re
import tomllib
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from combatsim.registry import RULESETS
from combatsim.validation import brief

MAX_FILE_BYTES = 1 << 20
MAX_MEMBERS_PER_SIDE = 64
SIDES = 2
#: Brackets and braces open at once: a real scenario opens 2 (``[[sides.members]]``, an armour's dice).
MAX_NESTING = 16
#: Parts of one dotted key or table header (``sides.members`` has 2). With MAX_NESTING it bounds
#: a document's depth to 128 tables, well inside Python's recursion limit for copies and walks.
MAX_KEY_PARTS = 8
#: Key/value pairs and table headers in one file: 2 sides of 64 members hold about 3,000.
MAX_KEYS = 20_000
#: Stands for "no default: the field must be given".
REQUIRED = object()


class ScenarioError(ValueError):
    """A scenario file that cannot run; the message names the file and the path inside it."""


# --- the raw text, before tomllib ----------------------------------------------------------------

#: Comments and strings (skipped whole), and the characters that open, close or separate
#: structure. An unterminated string is not matched, so its text counts as structure: the check
#: can only refuse more than tomllib would parse, never less.
_TOML_TOKEN = re.compile(
    r'#[^\n]*|"""(?:\\.|[^\\])*?"""|\'\'\'.*?\'\'\'|"(?:\\.|[^"\\\n])*"|\'[^\'\n]*\'|[\[\]{}=,.\n]', re.S
)


def check_toml_shape(text: str, where: str) -> None:
    """Refuse nesting, dotted keys and key counts that would make tomllib recurse or crawl.

    tomllib recurses once per nested array or inline table (1,000 levels: RecursionError) and
    takes quadratic time over a dotted key's parts (40,000 parts: minutes), so both are bounded
    here in one linear pass over the text.
    """
    depth = dots = keys = 0
    for match in _TOML_TOKEN.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            dots = 0
            if depth > MAX_NESTING:
                raise ScenarioError(f"{where}: arrays and tables nested more than {MAX_NESTING} deep "
                                    f"(line {text.count(chr(10), 0, match.start()) + 1})")
        elif token in "]}":
            depth -= 1
            dots = 0
        elif token == ".":
            dots += 1
            if dots >= MAX_KEY_PARTS:
                raise ScenarioError(f"{where}: a dotted key or table header with more than {MAX_KEY_PARTS} parts "
                                    f"(line {text.count(chr(10), 0, match.start()) + 1})")
        elif token in "=,\n":
            keys += token == "="
            dots = 0
            if keys > MAX_KEYS:
                raise ScenarioError(f"{where}: more than {MAX_KEYS:,} keys; a scenario is a short TOML file")


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
    members = []
    for side, readers in enumerate(sides):
        side_members = []
        for reader in readers:
            side_members.append(read_member(reader, side))
            reader.finish(fields)
        members.append(side_members)
    return members


# --- the top level, shared by every ruleset -------------------------------------------------------


RULESET = Field("ruleset", "choice", "the rules the fight follows", choices=RULESETS)
#: A member's optional name: environments and ``--policy`` name members by it (combatsim.game).
MEMBER_NAME = Field("name", "string", "the member's name in environments and --policy", default=None,
                    note="absent: its side's name if it is alone on its side, else \"SIDE NAME k\" (k from 1)")


def schema(ruleset: str) -> tuple[Field, ...]:
    """A ruleset's whole scenario table: its module's OPTIONS and MEMBER under the shared top level."""
    module = ruleset_module(ruleset)
    return (
        RULESET,
        Field("name", "string", "the scenario's name in reports", default=None, note="absent: the file's name"),
        Field("options", "table", "how the fight runs", default={}, fields=module.OPTIONS),
        Field("sides", "tables", "the two sides, side 0 first", entries=(SIDES, SIDES), fields=(
            Field("name", "string", "the side's name in reports", default=None, note='absent: "side 0", "side 1"'),
            Field("members", "tables", "the side's combatants", entries=(1, module.MAX_MEMBERS), fields=module.MEMBER,
                  note=getattr(module, "MEMBERS_NOTE", "")),
        )),
    )


def ruleset_module(ruleset: str) -> ModuleType:
    return importlib.import_module(f"combatsim.{ruleset}.scenario")


@dataclass
class Scenario:
    file: str
    ruleset: str
    name: str
    spec: object
    side_names: list[str]
    #: the validated document (with any overrides applied), for --compare to override again
    document: dict = field(default_factory=dict, repr=False)


def parse_document(text: str, file: str) -> dict:
    check_toml_shape(text, file)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as problem:
        raise ScenarioError(f"{file}: not a valid TOML file: {problem}") from None
    except ValueError:  # int() of a TOML integer past Python's 4300 digits
        raise ScenarioError(f"{file}: {TOO_MANY_DIGITS}") from None


#: What tomllib's int() says of an integer past Python's limit on digits, in the project's words.
TOO_MANY_DIGITS = "an integer has more than 4300 digits; every field's range is far smaller"


def read_document(path: str | Path, label: str | None = None) -> tuple[dict, str]:
    """A scenario file's TOML document, its size and shape checked before parsing."""
    file = brief(label or str(path)) if len(label or str(path)) > 200 else label or str(path)
    source = Path(path)
    try:
        if not source.is_file():
            raise ScenarioError(f"{file}: no such scenario file")
        if source.stat().st_size > MAX_FILE_BYTES:
            raise ScenarioError(f"{file}: larger than {MAX_FILE_BYTES} bytes; a scenario is a short TOML file")
        with source.open("rb") as handle:  # at most the limit: /proc and device files report size 0
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as problem:
        raise ScenarioError(f"{file}: cannot read the scenario file: {problem.strerror or problem}") from None
    if len(data) > MAX_FILE_BYTES:
        raise ScenarioError(f"{file}: larger than {MAX_FILE_BYTES} bytes; a scenario is a short TOML file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as problem:
        raise ScenarioError(f"{file}: not a valid TOML file: {problem}") from None
    # universal newlines, as text mode reads them
    return parse_document(text.replace("\r\n", "\n").replace("\r", "\n"), file), file


def load(path: str | Path, overrides: Sequence[str] = (), label: str | None = None) -> Scenario:
    """Read and validate a scenario file, with ``--set``-style overrides applied; nothing runs yet."""
    if isinstance(overrides, str) or not isinstance(overrides, Sequence):  # a str would be read letter by letter
        raise TypeError(f"overrides must be a list of PATH=VALUE strings, got {type(overrides).__name__}")
    document, file = read_document(path, label)
    for override in overrides:
        apply_override(document, override, file)
    return validate(document, file, default_name=Path(path).stem)


def validate(document: dict, file: str, default_name: str) -> Scenario:
    top = Reader(file, document)
    ruleset = top.read(RULESET)
    fields = schema(ruleset)
    name = top.read(fields[1]) if "name" in document else default_name
    if not printable(name):
        raise top.error("name", f"must not hold control or formatting characters, got {name!r}")
    options = top.read(fields[2])
    sides = top.read(fields[3])
    side_fields = fields[3].fields
    side_names = [side.read(side_fields[0]) if side.has(side_fields[0]) else f"side {index}"
                  for index, side in enumerate(sides)]
    members = [side.read(side_fields[1]) for side in sides]
    for member in (member for side in members for member in side):
        member.read(MEMBER_NAME)  # every ruleset's members may be named; checked here, used by combatsim.game
    module = ruleset_module(ruleset)
    spec = module.build(options, members)
    options.finish(module.OPTIONS)
    for side in sides:
        side.finish(side_fields)
    top.finish(fields)
    return Scenario(file, ruleset, name, spec, side_names, document)


# --- overrides: --set and --compare ---------------------------------------------------------------

#: A name and its list indices; an index has at most 9 digits (ASCII), far beyond any list allowed.
_PATH_PART = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)((?:\[[0-9]{1,9}\])*)")


def parse_path(path: str, flag: str) -> list[str | int]:
    """``sides[0].members[1].torso`` -> ['sides', 0, 'members', 1, 'torso']."""
    parts: list[str | int] = []
    for piece in path.split("."):
        match = _PATH_PART.fullmatch(piece.strip())
        if match is None:
            raise ScenarioError(f"{flag}: {brief(path)} is not a path such as sides[0].members[0].torso "
                                f"(names joined by '.', list entries as [index], an index of at most 9 digits)")
        parts.append(match.group(1))
        parts.extend(int(index) for index in re.findall(r"\[([0-9]+)\]", match.group(2)))
    if len(parts) > 2 * MAX_KEY_PARTS:
        raise ScenarioError(f"{flag}: {brief(path)} has more than {2 * MAX_KEY_PARTS} parts")
    return parts


def parse_value(text: str, flag: str) -> object:
    """A TOML value (numbers, true/false, "quoted", [lists], {tables}); anything else is a bare string."""
    line = f"value = {text}"
    check_toml_shape(line, flag)
    try:
        return tomllib.loads(line)["value"]
    except tomllib.TOMLDecodeError:
        return text
    except ValueError:  # int() of a TOML integer past Python's 4300 digits
        raise ScenarioError(f"{flag}: {TOO_MANY_DIGITS}, in {brief(text)}") from None


def _path_text(parts: Sequence[str | int]) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def apply_override(document: dict, override: str, file: str, flag: str = "--set") -> None:
    """Set ``PATH=VALUE`` in ``document``; tables on the way are made when absent.

    A list index past the list's end, or a path through a value that is not a table or list, is
    refused here; the value itself is checked by the scenario's validation, which names the path.
    """
    path, equals, value_text = override.partition("=")
    if not equals or not path.strip():
        raise ScenarioError(f"{flag}: expected PATH=VALUE such as sides[0].members[0].torso=light, got {override!r}")
    parts = parse_path(path.strip(), flag)
    value = parse_value(value_text.strip(), flag)
    node: object = document
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        here = _path_text(parts[:depth]) or "(top level)"
        if isinstance(part, int):
            if not isinstance(node, list):
                raise ScenarioError(f"{file}: {here}: is not a list, so [{part}] cannot index it")
            if part >= len(node):
                allowed = f"0..{len(node) - 1}" if node else "none: the list is empty"
                raise ScenarioError(f"{file}: {_path_text(parts[:depth + 1])}: no such entry; "
                                    f"{here} holds {len(node)} (indices {allowed})")
        elif not isinstance(node, dict):
            raise ScenarioError(f"{file}: {here}: is not a table, so it has no key {part!r}")
        if last:
            node[part] = value
        else:
            if isinstance(part, str) and part not in node:
                node[part] = {}
            node = node[part]


# --- example scenarios (shipped in the package) ---------------------------------------------------

EXAMPLES_DIR = Path(__file__).parent / "examples"


def example_names() -> list[str]:
    return sorted(path.stem for path in EXAMPLES_DIR.glob("*.toml"))


def example_path(name: str) -> Path:
    """The example called ``name`` (or the one whose name starts with it); errors list them all."""
    names = example_names()
    stem = name.removesuffix(".toml")
    matches = [stem] if stem in names else [n for n in names if n.startswith(stem)]
    if len(matches) == 1:
        return EXAMPLES_DIR / f"{matches[0]}.toml"
    if matches:
        raise ScenarioError(f"{name}: ambiguous example name; it starts {', '.join(matches)}")
    raise ScenarioError(f"{name}: no such scenario file or example; examples: {', '.join(names)}")


def resolve(name_or_path: str) -> tuple[Path, str]:
    """A scenario file's path, or an example's for a bare example name; and the label errors use."""
    try:
        is_file = Path(name_or_path).is_file()
    except (OSError, ValueError):  # a name too long for a file, or one with NUL: read_document says why
        is_file = True
    if is_file or "/" in name_or_path or "\\" in name_or_path:
        return Path(name_or_path), name_or_path
    path = example_path(name_or_path)
    return path, f"example {path.stem}"


def wilson_interval(successes: int, trials: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """95% Wilson score interval for a win rate (well behaved at 0 and 1, unlike the normal one)."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)
