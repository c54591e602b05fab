"""The engines' Cython builds (kernels/<ruleset>/engine_cy.pyx, written by combatsim.engine_cython from
combatsim.<ruleset>.engine) against the pure-Python reference: array by array after every reset and
step, and fight by fight."""

from __future__ import annotations

import copy
import importlib
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from combatsim import registry
from combatsim.engine import RUNNING, S_OUTCOME, SCRIPTED, built_from_current_source, engine_kernels
from combatsim.engine_cython import FLOOR_FUNCTIONS, RULESETS, _body, engine_sources, generate_rules
from combatsim.game import scenario_game
from combatsim.scenario import example_names, example_path, load


def scenario_documents():
    """Every example scenario, and each as a 2-against-2 (every member twice)."""
    found = []
    for name in example_names():
        document = load(example_path(name)).document
        found.append(pytest.param(document, id=name))
        teams = copy.deepcopy(document)
        for side in teams["sides"]:
            doubled = []
            for member in side["members"]:
                twin = copy.deepcopy(member)
                if "name" in twin:
                    twin["name"] += " twin"
                doubled += [member, twin]
            side["members"] = doubled
        found.append(pytest.param(teams, id=f"{name}-2v2"))
    return found


def read_only(array):
    view = array.view()
    view.flags.writeable = False
    return view


def both_engines(game):
    return engine_kernels(game.engine_module, "python"), engine_kernels(game.engine_module, "cython")


def test_every_cython_engine_is_built_from_the_current_source():
    """The build is stamped with the engine's sources (its file and those it takes names from) and
    their digest as they are now (else: rebuild)."""
    for ruleset in RULESETS:
        built = importlib.import_module(f"combatsim.kernels.{ruleset}.engine_cy")
        assert engine_sources(ruleset) == built.ENGINE_SOURCES, ruleset
        assert f"{ruleset}/engine.py" in built.ENGINE_SOURCES and "engine.py" in built.ENGINE_SOURCES
        assert built_from_current_source(built), ruleset


def test_every_kernel_module_includes_the_current_rules():
    """Each Cython attack kernel module's included rules (kernels/<ruleset>/kernel_rules.pxi) are stamped
    with the engine's current sources, and a build from other sources is refused."""
    for ruleset in RULESETS:
        engine = importlib.import_module(f"combatsim.{ruleset}.engine")
        if not getattr(engine, "KERNEL_RULES", ()):
            continue
        built = importlib.import_module(f"combatsim.kernels.{ruleset}._cy")
        assert engine_sources(ruleset) == built.ENGINE_SOURCES, ruleset
        registry._check_kernel_rules(ruleset, built)
        stale = types.SimpleNamespace(__name__=built.__name__, ENGINE_SOURCES=built.ENGINE_SOURCES,
                                      ENGINE_SOURCE_DIGEST="0" * 64)
        with pytest.raises(ValueError, match=f"{built.__name__} was built from older combatsim.{ruleset}.engine"):
            registry._check_kernel_rules(ruleset, stale)


def test_an_edited_source_no_longer_matches_the_stamp(tmp_path, monkeypatch):
    """The stamp covers the files' text: one byte more in an engine's source is a stale build."""
    import combatsim.engine as engine_module

    built = importlib.import_module("combatsim.kernels.tss.engine_cy")
    for name in built.ENGINE_SOURCES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes((Path(engine_module.__file__).parent / name).read_bytes())
    monkeypatch.setattr(engine_module, "__file__", str(tmp_path / "engine.py"))
    assert built_from_current_source(built)
    with (tmp_path / "tss/engine.py").open("a") as handle:
        handle.write("\n")
    assert not built_from_current_source(built)


def test_a_fresh_process_runs_without_the_translator():
    """The first fight of a fresh process checks the builds by their stamps: the translator
    (combatsim.engine_cython) is never imported, so no time goes to translating at run time."""
    code = ("import sys, combatsim\n"
            "from combatsim.d100.api import Combatant, Weapon, simulate_fights\n"
            "from combatsim.engine import engine_kernels\n"
            "weapon = Weapon(lethality=30, severity=2)\n"
            "r = simulate_fights(100, [Combatant(side=0, fighting=60, weapon=weapon),"
            " Combatant(side=1, fighting=50, weapon=weapon)], seed=1, backend='cython')\n"
            "assert r.backend == 'cython', r.backend\n"
            "for ruleset in ('exp', 'd100', 'tss'):\n"
            "    assert engine_kernels(f'combatsim.{ruleset}.engine', 'auto').backend == 'cython'\n"
            "print('combatsim.engine_cython' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_included_rules_divide_as_python_does():
    """The attack kernel modules compile with C division, which truncates; the rules they include
    (d100's tier bars divide a negative skill) must floor as the reference does, so every ``//``
    and ``%`` there is a call of the floor functions, whose arithmetic is checked against Python's
    here for the positive divisors the rules use."""
    import re

    for ruleset in RULESETS:
        if not getattr(importlib.import_module(f"combatsim.{ruleset}.engine"), "KERNEL_RULES", ()):
            continue
        text = generate_rules(ruleset)
        body = text.split(FLOOR_FUNCTIONS)[1]
        assert not re.search(r"//|\s%\s|%=", body), ruleset
    # The floor functions' C arithmetic, written out in Python with truncating division.
    def truncating(a, b):
        return int(a / b) if abs(a) < 2**52 else -(-a // b) if (a < 0) != (b < 0) else a // b

    for a in [*range(-45, 46), -(2**62) - 7, 2**62 + 7]:
        for b in (1, 2, 3, 10, 20, 10000):  # positive divisors: dice sides and constants
            q, r = truncating(a, b), a - b * truncating(a, b)
            assert q - (r < 0) == a // b
            assert r + b * (r < 0) == a % b


def test_auto_is_the_cython_build_and_unknown_backends_are_refused():
    game = scenario_game("exp_bob_too")
    assert game.engine("auto").backend == "cython"
    assert game.engine("auto").step is game.engine("cython").step
    with pytest.raises(ValueError, match="backend must be one of 'auto', 'cython', 'numba', 'python'"):
        game.engine("fortran")


def choose_actions(rng, mask):
    """Per member: SCRIPTED, a legal action (from the mask) or any action (often masked)."""
    n, members, actions = mask.shape
    chosen = np.full((n, members), SCRIPTED, dtype=np.int64)
    kinds = rng.integers(0, 3, size=(n, members))
    for e, c in zip(*np.nonzero(kinds == 1), strict=True):
        chosen[e, c] = rng.choice(np.flatnonzero(mask[e, c]))
    anything = kinds == 2
    chosen[anything] = rng.integers(0, actions, size=int(anything.sum()))
    return chosen


@pytest.mark.parametrize("document", scenario_documents())
def test_cython_engine_steps_as_the_reference(document):
    """48 envs of varied seeds, 100 steps of mixed actions; ended envs restart with new fight
    indices. State, counts, observations and masks equal after every reset and step. The inputs
    the kernels only read are read-only arrays, as they may be for Numba."""
    game = scenario_game(document)
    python, cython = both_engines(game)
    table, config = read_only(game.table), read_only(game.config)
    n = 48
    rng = np.random.default_rng(11)
    buffers = {name: game.buffers(n) for name in ("python", "cython")}
    for b in buffers.values():
        b["seeds"][:] = np.arange(n, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        b["indices"][:] = np.arange(n) * 7
    ended_fights = 0

    def compare(when):
        for key in ("state", "counts", "obs", "mask"):
            np.testing.assert_array_equal(buffers["python"][key], buffers["cython"][key], err_msg=f"{key} {when}")

    def reset():
        for kernels, b in ((python, buffers["python"]), (cython, buffers["cython"])):
            kernels.reset(table, config, read_only(b["seeds"]), read_only(b["indices"]), read_only(b["which"]),
                          b["state"], b["counts"], b["obs"], b["mask"])
        compare("after a reset")

    reset()
    for k in range(100):
        actions = choose_actions(rng, buffers["python"]["mask"])
        for kernels, b in ((python, buffers["python"]), (cython, buffers["cython"])):
            b["actions"][:] = actions
            kernels.step(table, config, read_only(b["seeds"]), b["state"], read_only(b["actions"]), b["counts"],
                         b["obs"], b["mask"])
        compare(f"after step {k}")
        ended = buffers["python"]["state"][:, S_OUTCOME] != RUNNING
        ended_fights += int(ended.sum())
        for b in buffers.values():
            b["which"][:] = ended
            b["indices"][ended] += 1
        if ended.any():
            reset()
    assert ended_fights > n


def fight_arguments(game, seed, start, count):
    """The ruleset's fight kernel arguments for ``count`` fights of ``game`` (outputs zeroed)."""
    engine = engine_kernels(game.engine_module, "python")
    table, config = game.table, game.config
    winner = np.zeros(count, dtype=np.int8)
    length = np.zeros(count, dtype=np.int32)
    if game.ruleset == "exp":
        unit_limit = int(config[engine.CF_UNIT_LIMIT])
        counts = np.zeros(engine.FIGHT_COUNTS + unit_limit + game.members, dtype=np.int64)
        return (seed, start, count, table, unit_limit, int(config[engine.CF_HIT_ON_EQUAL]),
                int(config[engine.CF_CRITICAL]), counts, winner, length)
    if game.ruleset == "d100":
        max_rounds = int(config[engine.G_MAX_ROUNDS])
        counts = np.zeros(engine.FIGHT_COUNTS + max_rounds + 1 + game.members, dtype=np.int64)
        return (seed, start, count, table, int(config[engine.G_PASSES]), max_rounds, int(config[engine.G_AMBUSH_SIDE]),
                counts, winner, length)
    max_rounds = int(config[engine.K_MAX_ROUNDS])
    counts = np.zeros(engine.FIGHT_COUNTS + max_rounds + 1 + game.members, dtype=np.int64)
    return (seed, start, count, np.ascontiguousarray(table).ravel(), table.shape[0],
            (table.shape[1] - engine.ROW_BASE) // 4, max_rounds, int(config[engine.K_ONE_STEP]), counts, winner, length)


@pytest.mark.parametrize("document", scenario_documents())
def test_cython_fight_is_the_reference_fight(document):
    """300 fights of two seeds: counts, winners and lengths equal, fight by fight."""
    game = scenario_game(document)
    python, cython = both_engines(game)
    for seed in (3, 2**64 - 1):
        expected = fight_arguments(game, seed, 40, 300)
        got = fight_arguments(game, seed, 40, 300)
        python.fight(np.uint64(seed), *expected[1:])
        cython.fight(np.uint64(seed), *got[1:])
        for a, b in zip(expected[-3:], got[-3:], strict=True):
            np.testing.assert_array_equal(a, b)
        assert expected[-3].sum() > 0


def test_a_build_older_than_its_source_is_refused_and_auto_falls_back(monkeypatch):
    """auto: Cython where built from the current source, else Numba, else the reference."""
    import combatsim.engine as engine_module

    built = importlib.import_module("combatsim.kernels.tss.engine_cy")
    monkeypatch.setattr(built, "ENGINE_SOURCE_DIGEST", "0" * 64)
    monkeypatch.setattr(engine_module, "_ENGINES", {})
    with pytest.raises(ValueError, match="older than its source .*setup.py build_ext"):
        engine_kernels("combatsim.tss.engine", "cython")
    assert engine_kernels("combatsim.tss.engine", "auto").backend == "numba"
    monkeypatch.setattr(engine_module, "_ENGINES", {})
    monkeypatch.setitem(sys.modules, "combatsim.kernels.engine_nb", None)  # as if Numba would not import
    assert engine_kernels("combatsim.tss.engine", "auto") is importlib.import_module("combatsim.tss.engine")


def test_an_index_from_the_end_is_refused(tmp_path, monkeypatch):
    (tmp_path / "tail_engine.py").write_text("def step(table, config, seeds, state, actions, counts, obs, mask):\n"
                                             "    state[0, -1] = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match=r"step: state\[0, -1\] counts from the end"):
        _body(importlib.import_module("tail_engine"))


def test_an_int_literal_beyond_32_bits_is_a_c_integer(tmp_path, monkeypatch):
    """Cython makes such a literal a Python int, which a function without the GIL cannot use (the TSS
    attack passes mask words with 0xFFFFFFFF): the translation casts it to int64_t."""
    (tmp_path / "mask_engine.py").write_text("def step(table, config, seeds, state, actions, counts, obs, mask):\n"
                                             "    state[0, 0] = (state[0, 1] & 0xFFFFFFFF) + 7\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    text = _body(importlib.import_module("mask_engine"))
    assert "state[0, 0] = (state[0, 1] & <int64_t>(4294967295)) + 7" in text
