"""Scenario-file fuzzing: the examples' valid structure with hostile values, wrong types, unknown
keys, control characters in names, deep nesting and hostile raw text, run by ``combatsim fight``.

Every file gets an answer (exit 2 and one stderr line, or exit 0 and JSON that parses), within
the time bound and under the memory bound (tests/_fuzzing.py). Runs stay small (-n 20).

CI runs the reduced form (REDUCED_EXAMPLES examples a test). The full form:

    COMBATSIM_FUZZ_EXAMPLES=2000 pytest -m slow tests/test_fuzz_scenario.py
"""

from __future__ import annotations

import copy
import importlib
import math
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ._fuzzing import FULL_EXAMPLES, REDUCED_EXAMPLES, assert_cli_answered, full_form, sandbox

EXAMPLES = {path.stem: tomllib.loads(path.read_text()) for path in
            sorted((Path(__file__).parent.parent / "examples").glob("*.toml"))}
FIGHT = ["-n", "20", "--json"]

# --- writing TOML (each table inline, so any value can sit anywhere) ------------------------------

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _string(text: str) -> str:
    out = []
    for character in text:
        if character in _ESCAPES:
            out.append(_ESCAPES[character])
        elif ord(character) < 0x20 or ord(character) == 0x7F or 0xD800 <= ord(character) <= 0xDFFF:
            out.append(f"\\u{ord(character):04x}")  # a surrogate's escape is TOML's own error
        else:
            out.append(character)
    return '"' + "".join(out) + '"'


def _key(key: str) -> str:
    return key if key and all(c.isascii() and (c.isalnum() or c in "_-") for c in key) else _string(key)


class Raw(str):
    """TOML text written as it is (a value nested too deep for a recursive writer)."""


def toml_value(value) -> str:
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(type(value))


def toml_document(scenario: dict) -> str:
    return "\n".join(f"{_key(key)} = {toml_value(value)}" for key, value in scenario.items()) + "\n"


# --- hostile values and mutations -----------------------------------------------------------------

HOSTILE_STRINGS = [
    "", " ", "Gu\x1b[31mard\r\nFAKE LINE", "a\x07b", "a\x00b", "\u202eevil", "a\u2028b", "x" * 5000, "名前", "1e999999999",
    "1e-99999999", "nan", "-1", "d1000000", "1000d1000000", "d4w/d4w", "\ud800", "\ufeff", "\u200b",
]
hostile_scalar = st.one_of(
    st.integers(-(2**63), 2**63 - 1),
    st.sampled_from([0, -1, 1, 2**63 - 1, -(2**63), 10**6, 100_000, 1_000_000]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.sampled_from(HOSTILE_STRINGS),
    st.text(max_size=10),
)
hostile_value = st.recursive(hostile_scalar, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=3)), max_leaves=8)


def _paths(node, prefix=()):
    """Every (path, value) in a scenario, tables and arrays included."""
    yield prefix, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, (*prefix, index))


def _get(scenario, path):
    node = scenario
    for part in path:
        node = node[part]
    return node


def _set(scenario, path, value):
    _get(scenario, path[:-1])[path[-1]] = value


def _nested(depth: int, kind: str) -> Raw:
    if kind == "array":
        return Raw("[" * depth + "1" + "]" * depth)
    return Raw("{a = " * depth + "1" + "}" * depth)


def _declared_fields(ruleset: str) -> list[tuple[tuple, object]]:
    """(where in a scenario, Field) for every field its ruleset declares (OPTIONS, MEMBER and their
    tables): a member's path starts at side 0's first member."""
    module = importlib.import_module(f"combatsim.{ruleset}.scenario")
    found = []

    def add(prefix, fields):
        for field in fields:
            found.append(((*prefix, field.name), field))
            if field.kind == "table" and field.fields:
                add((*prefix, field.name), field.fields)

    add(("options",), module.OPTIONS)
    add(("sides", 0, "members", 0), module.MEMBER)
    return found


FIELDS = {name: _declared_fields(example["ruleset"]) for name, example in EXAMPLES.items()}


def edge_values(field) -> st.SearchStrategy:
    """Values at and just past a declared field's limits, or beside its choices."""
    if field.kind == "integer":
        return st.sampled_from([field.low - 1, field.low, field.high, field.high + 1, float(field.low), str(field.low)])
    if field.kind == "integers":
        low, high = field.entries
        return st.sampled_from([[field.low] * low, [field.high] * high, [field.low - 1] * low, [field.high + 1] * high,
                                [field.low] * (high + 1), [], [field.low] * max(0, low - 1), [[field.low]] * low])
    if field.kind == "choice":
        return st.sampled_from([*field.choices[:1], field.choices[0].upper() if field.choices else "X", "", " ", 1])
    if field.kind == "boolean":
        return st.sampled_from([True, 0, 1, "true", "yes"])
    return hostile_value


def _put(scenario, path, value):
    node = scenario
    for part in path[:-1]:
        if isinstance(part, str) and part not in node:
            node[part] = {}
        node = node[part]
    node[path[-1]] = value


@st.composite
def scenarios(draw) -> tuple[str, str]:
    """An example scenario with up to 3 mutations: a declared field set at or past its limits, a
    value replaced by a hostile one, a key added or removed, a name with control characters, a
    value nested deep; as (example, TOML text)."""
    name = draw(st.sampled_from(sorted(EXAMPLES)))
    scenario = copy.deepcopy(EXAMPLES[name])
    path, field = draw(st.sampled_from(FIELDS[name]))  # one declared field at or past its edges
    if draw(st.booleans()):
        _put(scenario, path, draw(edge_values(field)))
    for _ in range(draw(st.integers(0, 2))):
        paths = [path for path, _ in _paths(scenario) if path]
        path = draw(st.sampled_from(paths))
        mutation = draw(st.sampled_from(["replace", "replace", "replace", "unknown key", "remove", "name", "nest"]))
        if mutation == "replace":
            _set(scenario, path, draw(hostile_value))
        elif mutation == "unknown key":
            node = _get(scenario, path[:-1])
            if isinstance(node, dict):
                node[draw(st.sampled_from(["colour", "unit_limit", "Name", "passes", "x" * 300, ""]))] = draw(
                    hostile_scalar)
        elif mutation == "remove":
            del _get(scenario, path[:-1])[path[-1]]
        elif mutation == "name":  # the name of the table holding path, or the scenario's
            parent = _get(scenario, path[:-1])
            (parent if isinstance(parent, dict) else scenario)["name"] = draw(st.sampled_from(HOSTILE_STRINGS))
        else:
            _set(scenario, path, _nested(draw(st.sampled_from([2, 15, 17, 100, 1000])),
                                         draw(st.sampled_from(["array", "table"]))))
    return name, toml_document(scenario)


def _check_file(text: str | bytes, *extra: str) -> None:
    directory = Path(sandbox_dir())
    path = directory / "s.toml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    outcome = sandbox.cli(["fight", str(path), *FIGHT, *extra], cwd=str(directory))
    assert_cli_answered(outcome)


_DIRECTORY: list[str] = []


def sandbox_dir() -> str:
    """One scratch folder for the generated files (Hypothesis examples cannot take tmp_path)."""
    if not _DIRECTORY:
        import tempfile

        _DIRECTORY.append(tempfile.mkdtemp(prefix="combatsim-fuzz-"))
    return _DIRECTORY[0]


@settings(max_examples=REDUCED_EXAMPLES)
@given(case=scenarios())
def test_hostile_scenario_files_are_answered(case):
    _check_file(case[1])


@full_form
@settings(max_examples=FULL_EXAMPLES)
@given(case=scenarios())
def test_hostile_scenario_files_are_answered_full(case):
    _check_file(case[1])


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_examples_round_trip_and_run(name):
    text = toml_document(EXAMPLES[name])
    assert tomllib.loads(text) == EXAMPLES[name]
    outcome = sandbox.cli(["fight", name, *FIGHT], cwd=sandbox_dir())
    assert_cli_answered(outcome)
    assert outcome.code == 0, outcome.describe()


# --- --set overrides: a path of the grammar, a hostile value ---------------------------------------

SET_PATHS = {
    "d100_duel": ["options.passes", "options.max_rounds", "options.ambush_side", "sides[0].members[0].fighting",
                  "sides[0].members[0].specialty", "sides[1].members[0].weapon.severity",
                  "sides[1].members[0].weapon.lethality", "sides[0].name", "sides[0].members[0].torso",
                  "sides[5].members[0].fighting", "sides[0].members[-1].parkour", "nosuch", "sides..name", "",
                  "sides[0].members[0].arcane", "sides[1].members[0].weapon.category"],
    "exp_bob_too": ["options.unit_limit", "sides[0].members[0].hit_points", "sides[1].members[0].bonus",
                    "sides[1].members[0].weapon.damage", "sides[0].members[0].class", "sides[1].name"],
    "tss_alex_vs_thug": ["options.max_rounds", "sides[0].members[0].skill", "sides[0].members[0].durability",
                         "sides[1].members[0].armour.dice.En", "sides[0].members[0].weapon.damage",
                         "sides[0].members[0].second_weapon", "sides[0].members[0].second_weapon.damage",
                         "sides[0].members[0].ambidexterity", "sides[0].members[0].broad_skill",
                         "sides[0].members[0].policy.aim", "sides[0].members[0].policy.two_weapons",
                         "sides[1].members[0].policy"],
}
SET_VALUES = st.one_of(st.sampled_from(["1e999999999", "[[[[1]]]]", "{a = 1}", "nan", "-1", "0", "1000000",
                                        '"\\u001b[31m"', "\x1b[31m", "", "=", "d1000000", "light", "true"]),
                       hostile_scalar.map(lambda v: toml_value(v) if not isinstance(v, str) else v))


@st.composite
def overrides(draw) -> list[str]:
    name = draw(st.sampled_from(sorted(SET_PATHS)))
    flags = []
    for _ in range(draw(st.integers(1, 2))):
        flags += [draw(st.sampled_from(["--set", "--compare"])),
                  f"{draw(st.sampled_from(SET_PATHS[name]))}={draw(SET_VALUES)}"]
    return [name, *flags]


@settings(max_examples=REDUCED_EXAMPLES)
@given(argv=overrides())
def test_hostile_overrides_are_answered(argv):
    assert_cli_answered(sandbox.cli(["fight", *argv, *FIGHT], cwd=sandbox_dir()))


@full_form
@settings(max_examples=FULL_EXAMPLES)
@given(argv=overrides())
def test_hostile_overrides_are_answered_full(argv):
    assert_cli_answered(sandbox.cli(["fight", *argv, *FIGHT], cwd=sandbox_dir()))


# --- issue 29's scenario files, as regression examples --------------------------------------------


def _with(example: str, path: tuple, value) -> str:
    scenario = copy.deepcopy(EXAMPLES[example])
    _set(scenario, path, value)
    return toml_document(scenario)


EXAMPLE_TEXT = {name: (Path(__file__).parent.parent / "examples" / f"{name}.toml").read_text() for name in EXAMPLES}
D100_WEAPON = ("sides", 1, "members", 0, "weapon", "severity")
REFUSED_FILES = {
    "severity 1e999999999 (string)": _with("d100_duel", D100_WEAPON, "1e999999999"),
    "severity 1e-99999999 (string)": _with("d100_duel", D100_WEAPON, "1e-99999999"),
    "severity 1e999999999 (number)": EXAMPLE_TEXT["d100_duel"].replace('severity = "1.5"', "severity = 1e999999999"),
    "dotted key 40,000 parts": EXAMPLE_TEXT["d100_duel"] + "a" + ".a" * 40_000 + " = 1\n",
    "dotted key 200,000 parts": EXAMPLE_TEXT["d100_duel"] + "a" + ".a" * 200_000 + " = 1\n",
    "table header 40,000 parts": EXAMPLE_TEXT["d100_duel"] + "[a" + ".a" * 40_000 + "]\nx = 1\n",
    "table header 200,000 parts": EXAMPLE_TEXT["d100_duel"] + "[a" + ".a" * 200_000 + "]\nx = 1\n",
    "arrays 1,000 deep": EXAMPLE_TEXT["d100_duel"] + "deep = " + "[" * 1000 + "]" * 1000 + "\n",
    "inline tables 1,000 deep": EXAMPLE_TEXT["d100_duel"] + "deep = " + "{a = " * 1000 + "1" + "}" * 1000 + "\n",
    "name with ESC and CR-LF": _with("d100_duel", ("sides", 1, "name"), "Gu\x1b[31mard\r\nFAKE LINE"),
    "name with BEL": _with("d100_duel", ("sides", 0, "name"), "Vet\x07eran"),
    "name with NUL": _with("exp_bob_too", ("sides", 0, "members", 0, "name"), "Bob\x00Too"),
    "name with U+202E": _with("tss_alex_vs_thug", ("name",), "Alex \u202eguht"),
    "scenario name with CR-LF": _with("exp_bob_too", ("name",), "Bob\r\nFAKE LINE"),
    "NUL in the raw text": EXAMPLE_TEXT["d100_duel"] + "\x00\n",
    "invalid UTF-8": EXAMPLE_TEXT["d100_duel"].encode() + b"\nname = \"\xff\xfe\"\n",
    "a 2 MB file": EXAMPLE_TEXT["d100_duel"] + "# " + "x" * (2 << 20) + "\n",
    "unknown key": EXAMPLE_TEXT["d100_duel"].replace("passes = 2", "passes = 2\ncolour = 3"),
    "unit_limit as a float": EXAMPLE_TEXT["exp_bob_too"].replace("unit_limit = 100", "unit_limit = 1e9"),
}


@pytest.mark.parametrize("text", list(REFUSED_FILES.values()), ids=list(REFUSED_FILES))
def test_issue_29_files_are_refused(tmp_path, text):
    path = tmp_path / "s.toml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    outcome = sandbox.cli(["fight", str(path), *FIGHT], cwd=str(tmp_path))
    assert_cli_answered(outcome)
    assert outcome.code == 2, f"accepted: {outcome.describe()}"


#: Large limits and many threads, which must stay under the memory bound; and a severity that
#: TOML itself reads as 0.0 (a valid severity).
HEAVY = {
    "severity 1e-99999999 (a number: 0.0)": (
        EXAMPLE_TEXT["d100_duel"].replace('severity = "1.5"', "severity = 1e-99999999"), []),
    "exp unit_limit 1,000,000, 100 threads": (
        EXAMPLE_TEXT["exp_bob_too"].replace("unit_limit = 100", "unit_limit = 1000000"), ["--threads", "100"]),
    "d100 max_rounds 100,000, 1,000 threads": (
        EXAMPLE_TEXT["d100_duel"].replace("max_rounds = 20", "max_rounds = 100000"), ["--threads", "1000"]),
    "tss max_rounds 100,000, 1,000 threads": (
        EXAMPLE_TEXT["tss_alex_vs_thug"].replace("max_rounds = 50", "max_rounds = 100000"), ["--threads", "1000"]),
}


@pytest.mark.parametrize("text, flags", list(HEAVY.values()), ids=list(HEAVY))
def test_heavy_but_valid_files_are_answered(tmp_path, text, flags):
    path = tmp_path / "s.toml"
    path.write_text(text)
    outcome = sandbox.cli(["fight", str(path), *FIGHT, *flags], cwd=str(tmp_path))
    assert_cli_answered(outcome)
