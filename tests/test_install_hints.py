"""Every "needs the X extra" message gives commands that work from a clone of combatsim."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from combatsim.extras import EXTRAS, install_hint

ROOT = Path(__file__).resolve().parent.parent


def test_the_extras_are_pyprojects():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for extra, packages in EXTRAS.items():
        assert tuple(declared[extra]) == packages


@pytest.mark.parametrize("extra", sorted(EXTRAS))
def test_a_hint_names_the_clone_command_and_the_packages(extra):
    hint = install_hint(extra)
    assert f'pip install ".[{extra}]" in the clone of combatsim' in hint
    assert "combatsim[" not in hint  # combatsim is not on an index: "combatsim[x]" cannot install
    for package in EXTRAS[extra]:
        assert f'"{package}"' in hint


def test_no_message_in_the_source_asks_for_combatsim_from_an_index():
    for path in (ROOT / "src").rglob("*.py"):
        assert not re.search(r"pip install [\"']?combatsim\[", path.read_text()), path


@pytest.mark.parametrize(("module", "call", "extra"), [
    ("matplotlib", "from combatsim.plotting import plot_stacked_bars; "
                   "plot_stacked_bars([1], [('a', [1])], 'x.png', 't', 'x', 'y')", "plot"),
    ("dask", "from combatsim.executors import require_dask; require_dask()", "dask"),
    ("scipy", "from combatsim.solve.games import _linprog; _linprog()", "solve"),
])
def test_missing_extras_say_how_to_install_them(module, call, extra):
    code = textwrap.dedent(f"""
        import sys
        sys.modules[{module!r}] = None
        sys.modules[{module + '.distributed'!r}] = None
        sys.modules[{module + '.pyplot'!r}] = None
        try:
            {call}
        except ValueError as error:
            print(error)
        """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout
    assert f"the {extra} extra" in out and f'pip install ".[{extra}]" in the clone of combatsim' in out


def test_openspiel_without_pyspiel_says_how_to_install_it():
    code = textwrap.dedent("""
        import sys
        sys.modules["pyspiel"] = None
        try:
            import combatsim.openspiel
        except ModuleNotFoundError as error:
            print(error)
        """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout
    assert "the openspiel extra" in out and 'pip install ".[openspiel]" in the clone of combatsim' in out
