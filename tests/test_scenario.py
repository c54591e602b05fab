"""Scenario files: refused clearly, with the file and the path inside it, before anything runs."""

from __future__ import annotations

import pytest

from combatsim.cli import main as cli_main
from combatsim.scenario import ScenarioError, load, wilson_interval


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
