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
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from combatsim.registry import RULESETS
from combatsim.scenario_fields import MEMBER_NAME, Field, Reader, ScenarioError, printable
from combatsim.validation import brief

MAX_FILE_BYTES = 1 << 20
SIDES = 2
#: Brackets and braces open at once: a real scenario opens 2 (``[[sides.members]]``, an armour's dice).
MAX_NESTING = 16
#: Parts of one dotted key or table header (``sides.members`` has 2). With MAX_NESTING it bounds
#: a document's depth to 128 tables, well inside Python's recursion limit for copies and walks.
MAX_KEY_PARTS = 8
#: Key/value pairs and table headers in one file: 2 sides of 64 members hold about 3,000.
MAX_KEYS = 20_000


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


# --- the top level, shared by every ruleset -------------------------------------------------------


RULESET = Field("ruleset", "choice", "the rules the fight follows", choices=RULESETS)


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


def _shown(name: str) -> str:
    """A file or example name as an error starts with it: as given, unless it is long or holds a
    line break or another unprintable character, which would forge lines of the message."""
    return name if len(name) <= 200 and printable(name) else brief(name)


def read_document(path: str | Path, label: str | None = None) -> tuple[dict, str]:
    """A scenario file's TOML document, its size and shape checked before parsing."""
    file = _shown(label or str(path))
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
        raise ScenarioError(f"{_shown(name)}: ambiguous example name; it starts {', '.join(matches)}")
    raise ScenarioError(f"{_shown(name)}: no such scenario file or example; examples: {', '.join(names)}")


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
