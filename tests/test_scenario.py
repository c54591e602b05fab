"""Scenario files: refused clearly before anything runs; the field reference, examples and --set."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from combatsim.cli import main as cli_main
from combatsim.fight_summary import wilson_interval
from combatsim.scenario import (
    EXAMPLES_DIR,
    MAX_FILE_BYTES,
    Field,
    ScenarioError,
    apply_override,
    check_toml_shape,
    example_names,
    example_path,
    load,
    parse_value,
    resolve,
    schema,
)
from combatsim.scenario_fields import walk


def write(tmp_path, text: str, name: str = "s.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_missing_file(tmp_path):
    with pytest.raises(ScenarioError, match="no such scenario file"):
        load(tmp_path / "nothing.toml")


def test_not_toml(tmp_path):
    with pytest.raises(ScenarioError, match=r"s\.toml: not a valid TOML file"):
        load(write(tmp_path, 'ruleset = "exp'))


def test_binary_file(tmp_path):
    path = tmp_path / "s.toml"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ScenarioError, match="not a valid TOML file"):
        load(path)


def test_huge_file_refused_before_parsing(tmp_path):
    with pytest.raises(ScenarioError, match="larger than"):
        load(write(tmp_path, "# " + "x" * (2 << 20)))


def test_unknown_ruleset(tmp_path):
    with pytest.raises(ScenarioError, match=r"s\.toml: ruleset: must be one of 'exp'"):
        load(write(tmp_path, 'ruleset = "gurps"'))


def test_missing_ruleset(tmp_path):
    with pytest.raises(ScenarioError, match="ruleset: is required"):
        load(write(tmp_path, 'name = "x"'))


def test_cli_reports_scenario_errors_without_traceback(tmp_path, capsys):
    assert cli_main(["fight", str(write(tmp_path, 'ruleset = "gurps"'))]) == 2
    err = capsys.readouterr().err
    assert "ruleset: must be one of" in err and "Traceback" not in err


def test_wilson_interval():
    lo, hi = wilson_interval(50, 100)
    assert lo < 0.5 < hi and abs((lo + hi) / 2 - 0.5) < 1e-12
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == pytest.approx(1.0)
    assert hi - lo > wilson_interval(5000, 10000)[1] - wilson_interval(5000, 10000)[0]


# --- the raw text's shape, checked before tomllib (deep nesting hangs or overflows it) -------------

HOSTILE_SHAPES = [
    ("dotted key 40,000 parts", "a" + ".a" * 40_000 + " = 1", "dotted key or table header"),
    ("table header 200,000 parts", "[" + "a." * 200_000 + "a]", "dotted key or table header"),
    ("array of tables header", "[[" + "a." * 50_000 + "a]]", "dotted key or table header"),
    ("arrays 1,000 deep", "x = " + "[" * 1000 + "]" * 1000, "nested more than 16 deep"),
    ("inline tables 1,000 deep", "x = " + "{a = " * 1000 + "1" + "}" * 1000, "nested more than 16 deep"),
    ("many keys", "\n".join(f"k{i} = {i}" for i in range(20_001)), "more than 20,000 keys"),
]


@pytest.mark.parametrize(("text", "message"), [case[1:] for case in HOSTILE_SHAPES], ids=[c[0] for c in HOSTILE_SHAPES])
def test_hostile_toml_shapes_are_refused_at_once(tmp_path, capsys, text, message):
    assert len(text.encode()) < MAX_FILE_BYTES
    path = write(tmp_path, 'ruleset = "d100"\n' + text)
    started = time.perf_counter()
    with pytest.raises(ScenarioError, match=message) as caught:
        load(path)
    assert str(caught.value).startswith(str(path)) and "\n" not in str(caught.value)
    assert cli_main(["fight", str(path)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and message.split()[0] in err
    assert time.perf_counter() - started < 5  # generous: the point is no hang (tomllib took minutes)


def test_shape_check_ignores_strings_and_comments():
    check_toml_shape('name = "' + "[{." * 5000 + '"  # ' + "[[[..." * 100 + "\n" + "x = '" + "{" * 100 + "'", "f")
    check_toml_shape('x = """\n' + "[" * 100 + '\n"""\ny = 1.5\nz = [1.5, 2.5, 3.5]', "f")
    with pytest.raises(ScenarioError):  # an unterminated string counts as structure: refused, not missed
        check_toml_shape('x = "' + "[" * 100, "f")


def test_every_example_passes_the_shape_check():
    from combatsim.registry import RULESETS
    from combatsim.scenario import ruleset_module

    for path in EXAMPLES_DIR.glob("*.toml"):
        check_toml_shape(path.read_text(), str(path))
    for ruleset in RULESETS:  # scenario new prints one of them
        assert (EXAMPLES_DIR / f"{ruleset_module(ruleset).EXAMPLE}.toml").exists()


# --- text fields refuse characters that forge report and CSV lines -------------------------------

FORGING = ["Gu\u001b[31mard", "Gu\u0007ard", "Guard\r\nFAKE LINE", "Gu\u0000ard", "Gu\u202eard", "Gu\u2028ard"]


@pytest.mark.parametrize("name", FORGING, ids=["ESC", "BEL", "CR-LF", "NUL", "U+202E", "U+2028"])
@pytest.mark.parametrize("where", ["scenario", "side", "weapon"])
def test_names_with_control_characters_are_refused(tmp_path, name, where):
    text = (Path(example_path("exp_bob_too")).read_text()
            .replace('name = "Bob Too against a Giant Arctic Sea Slug"', f"name = {json.dumps(name)}"
                     if where == "scenario" else "name = \"x\"")
            .replace('[[sides]]\nname = "Bob Too"', f"[[sides]]\nname = {json.dumps(name)}" if where == "side"
                     else '[[sides]]\nname = "Bob Too"')
            .replace('name = "harpoon"', f"name = {json.dumps(name)}" if where == "weapon" else 'name = "harpoon"'))
    path = write(tmp_path, text)
    with pytest.raises(ScenarioError, match="control or formatting characters") as caught:
        load(path)
    message = str(caught.value)
    assert "\n" not in message and "\r" not in message and "\u001b" not in message and "\u202e" not in message


# --- the field tables are the validation and the reference -----------------------------------------


@pytest.mark.parametrize("ruleset", ["exp", "d100", "tss"])
def test_fields_printout_lists_every_field_of_the_schema_and_examples(capsys, ruleset):
    import tomllib

    assert cli_main(["scenario", "fields", ruleset]) == 0
    out = capsys.readouterr().out
    printed = {line.split(" = ", 1)[0] for line in out.splitlines() if " = " in line and not line.startswith(" ")}
    assert printed == {path for path, _ in walk(schema(ruleset))}
    # every key the starting file and the example use is in the reference, nested tables included

    def paths(table, prefix=""):
        for key, value in table.items():
            path = f"{prefix}.{key}" if prefix else key
            yield path
            if isinstance(value, dict) and key != "dice":
                yield from paths(value, path)
            elif isinstance(value, list) and value and isinstance(value[0], dict):
                for item in value:
                    yield from paths(item, f"{path}[{'S' if key == 'sides' else 'M'}]")

    documents = [tomllib.loads(p.read_text()) for p in EXAMPLES_DIR.glob("*.toml") if ruleset in p.stem]
    used = {path for document in documents for path in paths(document)}
    assert used <= printed, used - printed
    for nested in ("weapon.", "policy." if ruleset == "d100" else "weapon.", "armour." if ruleset == "tss" else "weapon."):
        assert any(nested in path for path in printed)


def concrete(path: str, side: int) -> str:
    return path.replace("[S]", f"[{side}]").replace("[M]", "[0]")


@pytest.mark.parametrize("ruleset", ["exp", "d100", "tss"])
def test_printed_ranges_and_choices_are_the_ones_validation_applies(tmp_path, ruleset):
    """Every integer field one past its printed maximum, and every choice field off its printed
    choices, is refused with that range or those choices: one table serves both."""
    from combatsim.scenario import ruleset_module

    example = example_path(ruleset_module(ruleset).EXAMPLE)
    checked = 0
    for path, f in walk(schema(ruleset)):
        if f.kind not in ("integer", "choice") or f.note or path == "ruleset" or ".second_weapon." in path:
            continue
        value = f.high + 1 if f.kind == "integer" else '"nonesuch"'
        expected = f"{f.low}..{f.high}" if f.kind == "integer" else "must be one of"
        side = 1 if "armour" in path else 0  # the example's side 1 wears armour
        with pytest.raises(ScenarioError, match=re.escape(expected)) as caught:
            load(example, [f"{concrete(path, side)}={value}"])
        assert concrete(path, side) in str(caught.value)
        checked += 1
    assert checked >= 5


def test_field_texts():
    assert Field("x", "integer", "", low=-1, high=1000).type_text() == "integer -1..1,000"
    assert Field("x", "integers", "", low=0, high=10, entries=(0, 10), default=()).default_text() == "[]"
    assert Field("x", "choice", "", choices=("a", "b"), default="a").type_text() == 'one of "a", "b"'


def test_docs_scenarios_md_is_current():
    """docs/scenarios.md is `combatsim scenario fields --markdown`: regenerate it when a field changes."""
    from combatsim.scenario_cli import scenarios_markdown

    docs = Path(__file__).parent.parent / "docs" / "scenarios.md"
    assert docs.read_text() == scenarios_markdown(), "run: combatsim scenario fields --markdown > docs/scenarios.md"


@pytest.mark.parametrize("ruleset", ["exp", "d100", "tss"])
def test_scenario_new_writes_a_commented_file_that_runs(tmp_path, capsys, ruleset):
    assert cli_main(["scenario", "new", ruleset]) == 0
    text = capsys.readouterr().out
    assert text.startswith("# ") and text.count("#") >= 5
    path = write(tmp_path, text, "my.toml")
    assert load(path).ruleset == ruleset
    assert cli_main(["fight", str(path), "-n", "200", "--json", "--backend", "python"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["fights"] == 200 and record["ruleset"] == ruleset


# --- examples ship in the package ------------------------------------------------------------------


def test_examples_ship_in_the_package_and_list_and_show(capsys):
    import combatsim

    assert EXAMPLES_DIR.parent == Path(combatsim.__file__).parent
    assert example_names() == ["d100_duel", "exp_bob_too", "tss_alex_vs_thug", "tss_two_blades"]
    assert cli_main(["example", "list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in listed] == example_names()
    assert cli_main(["example", "show", "d100_duel"]) == 0
    assert capsys.readouterr().out == (EXAMPLES_DIR / "d100_duel.toml").read_text()
    # the repository's examples/ links to the same files (the README runs examples/exp_bob_too.toml)
    repo_examples = Path(__file__).parent.parent / "examples"
    for name in example_names():
        assert (repo_examples / f"{name}.toml").read_text() == (EXAMPLES_DIR / f"{name}.toml").read_text()


def test_packaging_declares_the_examples_as_package_data():
    import tomllib

    project = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())
    assert "examples/*.toml" in project["tool"]["setuptools"]["package-data"]["combatsim"]


def test_example_names_resolve_where_a_path_is_expected(capsys):
    assert example_path("d100_duel") == EXAMPLES_DIR / "d100_duel.toml"
    assert example_path("tss_a") == EXAMPLES_DIR / "tss_alex_vs_thug.toml"  # an unambiguous prefix
    assert example_path("exp_bob_too.toml") == EXAMPLES_DIR / "exp_bob_too.toml"
    with pytest.raises(ScenarioError, match="no such scenario file or example; examples: d100_duel"):
        example_path("gurps")
    assert cli_main(["example", "show", "nonesuch"]) == 2
    assert "examples: d100_duel, exp_bob_too, tss_alex_vs_thug" in capsys.readouterr().err
    assert cli_main(["fight", "d100_duel", "-n", "300", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["scenario"] == "d100 duel: veteran against guard"


def test_a_name_with_a_line_break_is_quoted_in_a_one_line_error(tmp_path):
    for name, expected in (("a\r\nFAKE", "no such scenario file or example"),
                           (f"{tmp_path}/x\nforged", "no such scenario file")):
        with pytest.raises(ScenarioError) as refused:
            path, label = resolve(name)
            load(path, label=label)
        assert "\n" not in str(refused.value) and "\r" not in str(refused.value)
        assert str(refused.value).startswith(repr(name)[:10]) and expected in str(refused.value)


def test_ambiguous_example_prefix(monkeypatch, tmp_path):
    import combatsim.scenario as scenario

    for name in ("duel_a", "duel_b"):
        (tmp_path / f"{name}.toml").write_text('ruleset = "d100"')
    monkeypatch.setattr(scenario, "EXAMPLES_DIR", tmp_path)
    with pytest.raises(ScenarioError, match="ambiguous example name; it starts duel_a, duel_b"):
        example_path("duel")


# --- --set: overrides by path ----------------------------------------------------------------------


def test_values_parse_as_toml_or_a_bare_string():
    assert parse_value("light", "--set") == "light"
    assert parse_value("40", "--set") == 40 and parse_value("-3", "--set") == -3
    assert parse_value("true", "--set") is True and parse_value('"1.5"', "--set") == "1.5"
    assert parse_value("[2, 1]", "--set") == [2, 1] and parse_value("{ lethality = 3 }", "--set") == {"lethality": 3}
    assert parse_value("1d8", "--set") == "1d8"
    with pytest.raises(ScenarioError, match="nested more than"):
        parse_value("[" * 1000 + "]" * 1000, "--set")


def test_set_overrides_fields_and_makes_missing_tables():
    duel = example_path("d100_duel")
    scenario = load(duel, ["sides[0].members[0].torso=heavy", "options.max_rounds=40",
                           "sides[1].members[0].policy.attack=50", "sides[1].members[0].policy.take_cover=0",
                           'sides[0].members[0].weapon.severity="1.5"', "sides[1].name=Warden"])
    veteran, guard = scenario.spec["combatants"]
    assert veteran.torso == "heavy" and scenario.spec["max_rounds"] == 40 and guard.policy[0] == 50
    assert str(veteran.weapon.severity) == "3/2" and scenario.side_names == ["Veteran", "Warden"]
    assert str(load(duel, ["sides[0].members[0].weapon.severity=2.5"]).spec["combatants"][0].weapon.severity) == "5/2"
    document = {"sides": [{"members": [{}]}]}
    apply_override(document, "sides[0].members[0].weapon.lethality=3", "f")
    assert document == {"sides": [{"members": [{"weapon": {"lethality": 3}}]}]}


SET_ERRORS = [
    ("sides[0].members[0].torsoo=none", r"sides\[0\]\.members\[0\]: unknown key\(s\) 'torsoo'; allowed: fighting"),
    ("sides[0].members[0].torso=lite", r"sides\[0\]\.members\[0\]\.torso: must be one of 'none', 'light', 'heavy'"),
    ("sides[0].members[0].parkour=many", r"sides\[0\]\.members\[0\]\.parkour: must be an integer in 0..1000"),
    ("sides[0].members[0].parkour=1001", r"sides\[0\]\.members\[0\]\.parkour: must be in 0..1000, got 1001"),
    ("sides[0].members[0].helmet=1", r"helmet: must be true or false"),
    ("sides[0].members[3].torso=none", r"sides\[0\]\.members\[3\]: no such entry; sides\[0\]\.members holds 1 "
                                       r"\(indices 0..0\)"),
    ("sides[2].name=x", r"sides\[2\]: no such entry; sides holds 2 \(indices 0..1\)"),
    ("sides[0].name.first=x", r"sides\[0\]\.name: is not a table"),
    ("options[0]=1", r"options: is not a list"),
    ('sides[0].members[0].weapon.severity="1e999999999"', r"weapon\.severity: must be a number in 0..100 in tenths"),
    ("sides[0].members[0].weapon.severity=2.55", r"weapon\.severity: must be a number in 0..100 in tenths"),
    ("colour=red", r"\(top level\): unknown key\(s\) 'colour'; allowed: ruleset, name, options, sides"),
    ("torso", r"--set: expected PATH=VALUE"),
    ("sides[x].name=a", r"--set: 'sides\[x\]\.name' is not a path"),
]


@pytest.mark.parametrize(("override", "message"), SET_ERRORS)
def test_bad_set_is_one_line_before_any_fight(capsys, monkeypatch, override, message):
    from combatsim import fights

    monkeypatch.setattr(fights, "run_scenario", lambda *a, **k: pytest.fail("a fight ran"))
    assert cli_main(["fight", "d100_duel", "--set", override]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and re.search(message, err), err
    assert cli_main(["fight", "d100_duel", "--compare", override]) == 2  # --compare checks the same way
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and re.search(message.replace("--set", "--compare"), err), err


def test_the_deepest_document_the_shape_check_allows_is_refused_cleanly(tmp_path):
    """16 nested inline tables, each under a dotted key of 8 parts: 128 levels, no RecursionError."""
    deep = "x = " + "{a.b.c.d.e.f.g.h = " * 15 + "1" + "}" * 15
    check_toml_shape(deep, "f")
    with pytest.raises(ScenarioError, match=r"unknown key\(s\) 'x'"):
        load(write(tmp_path, example_path("d100_duel").read_text().replace("[options]", deep + "\n[options]")))
