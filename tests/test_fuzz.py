"""Hostile input: every public entry point answers with a result or a clear error, never a crash.

Errors are ValueError or TypeError naming the field; the CLI prints one line and exits 2.
"""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from combatsim.cli import main as cli_main
from combatsim.dice import Dice
from combatsim.exp import simulate_to_hit

FIELDS = ("bonus", "maximum_roll", "armour_rating")

hostile_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.binary(max_size=4),
    st.lists(st.integers(-5, 5), max_size=3),
    st.just(object()),
)
hostile_arrays = hnp.arrays(
    dtype=st.sampled_from([np.int8, np.int64, np.uint64, np.float64, np.bool_, np.complex64, object]),
    shape=hnp.array_shapes(min_dims=0, max_dims=2, max_side=5),
    elements=st.integers(0, 1),
)


def _strided(values):
    """A non-contiguous view, which kernels must never see as such."""
    return np.asarray(values, dtype=np.int64).repeat(2)[::2]


@given(field=st.sampled_from(FIELDS), value=st.one_of(hostile_scalars, hostile_arrays), n=st.integers(-3, 5))
def test_to_hit_rejects_or_runs(field, value, n):
    arguments = dict(bonus=100, maximum_roll=800, armour_rating=500)
    arguments[field] = value
    try:
        result = simulate_to_hit(n, seed=1, backend="cython", outcomes=True, **arguments)
    except (ValueError, TypeError) as error:
        message = str(error)
        assert field in message or message.startswith("n must"), message
        return
    assert result.attacks == n
    assert 0 <= result.hits <= n
    assert len(result.to_hit) == n


@given(values=st.lists(st.integers(-1000, 1000), min_size=1, max_size=40), seed=st.integers(0, 2**64 - 1))
def test_non_contiguous_arrays_equal_contiguous(values, seed):
    strided = _strided(values)
    assert not strided.flags.c_contiguous or len(values) == 1
    one = simulate_to_hit(len(values), bonus=strided, maximum_roll=900, armour_rating=400, seed=seed, outcomes=True)
    other = simulate_to_hit(len(values), bonus=np.array(values), maximum_roll=900, armour_rating=400, seed=seed,
                            outcomes=True)
    np.testing.assert_array_equal(one.to_hit, other.to_hit)


@given(st.text(max_size=12))
def test_dice_parse_never_crashes(text):
    try:
        dice = Dice.parse(text, field="damage")
    except ValueError as error:
        assert "damage" in str(error)
        return
    assert dice.minimum <= dice.maximum


WORDS = ["attack", "exp", "d100", "tss", "--bonus", "--max-roll", "--armour-rating", "-n", "--seed", "--backend",
         "--threads", "--json", "numba", "python", "fortran", "1e3", "-1", "0", "nan", "inf", "3.5", "100", "2**64",
         "18446744073709551616", "backends", "odds", "curve", "1:5:1", "fight", "x.toml", "--executor", "table",
         "--class", "nomad", "wizard", "--level", "3", "--awe", "--dex", "--int", "--pstr", "--pool", "--lethality",
         "--severity", "--skill", "16/8/4", "4/8/16", "--damage", "d4w/d4+2w/d4-1m", "3d", "d8", "--modifier", "quick",
         "cover", "--armor", "heavy", "shiny", "--weapon-type", "automatic", "--ammunition", "--experience-bonus",
         "60,80,65", "--target-error", "0.01"]


@given(st.lists(st.sampled_from(WORDS), max_size=10))
def test_cli_never_prints_a_traceback(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            # whatever else it says, keep any simulation small
            code = cli_main([*argv, "-n", "50"] if "attack" in argv or "fight" in argv else argv)
        except SystemExit as exit_:  # argparse's own usage errors
            code = exit_.code
    assert "Traceback" not in err.getvalue() + out.getvalue()
    assert code in (0, 2, 130), (argv, err.getvalue())
    if code == 2:  # one line naming the problem, and nothing else
        assert len(err.getvalue().splitlines()) == 1 and not out.getvalue(), (argv, err.getvalue())


# Every ruleset's attack API: one argument at a time replaced by something hostile.
def _exp_attack(**overrides):
    from combatsim.exp.api import simulate_attack

    arguments = dict(bonus=150, maximum_roll=850, armour_rating=600, damage="2d6", weapon_type="C", adjustment=0)
    arguments.update(overrides)
    return simulate_attack(50, seed=3, **arguments)


def _d100_attack(**overrides):
    from combatsim.d100.api import simulate_attacks

    arguments = dict(pool=60, specialty=[2], modifiers=["quick"], lethality=30, severity=2, armour="light")
    arguments.update(overrides)
    return simulate_attacks(50, seed=3, **arguments)


def _tss_attack(**overrides):
    from combatsim.tss.api import simulate_attacks

    arguments = dict(skill="16/8/4", steps=-1, damage="d4w/d4+2w/d4-1m", weapon_quality="good", armour="d6",
                     armour_quality="ordinary")
    arguments.update(overrides)
    return simulate_attacks(50, seed=3, **arguments)


ATTACK_APIS = {
    _exp_attack: ("bonus", "maximum_roll", "armour_rating", "damage", "weapon_type", "adjustment"),
    _d100_attack: ("pool", "specialty", "modifiers", "lethality", "severity", "armour", "arcane"),
    _tss_attack: ("skill", "steps", "damage", "weapon_quality", "armour", "armour_quality", "aim", "two_weapons",
                  "ambidexterity", "broad"),
}
hostile = st.one_of(
    hostile_scalars,
    st.sampled_from(["3d", "1d0", "d4x", "4/8/16", "d4q/d4w/d4m", "wizard", "", "-", "nan", "1e999", "+24/0/0"]),
    st.integers(-(2**64), 2**64),
)


@given(api=st.sampled_from(list(ATTACK_APIS)), data=st.data())
def test_ruleset_attack_apis_reject_or_run(api, data):
    field = data.draw(st.sampled_from(ATTACK_APIS[api]))
    value = data.draw(hostile)
    try:
        result = api(**{field: value})
    except (ValueError, TypeError) as error:
        assert str(error), field
        return
    assert result is not None


@pytest.mark.parametrize("text", ["4/8/16", "16/8/4/2", "a/b/c", "0/0/-1", "", "16//4"])
def test_malformed_scores(text):
    from combatsim.tss.model import Score

    with pytest.raises(ValueError, match="skill"):
        Score.parse(text, "skill")


@pytest.mark.parametrize("api", list(ATTACK_APIS), ids=["exp", "d100", "tss"])
@pytest.mark.parametrize("backend", ["Numba", "gpu", "", 3])
def test_unknown_backends_everywhere(api, backend):
    with pytest.raises(ValueError, match="backend must be one of"):
        api(backend=backend)


# Every ruleset's fight API: one combatant field at a time replaced by something hostile.
def _d100_fight(field, value):
    from combatsim.d100.api import Combatant, Weapon, simulate_fights

    arguments = dict(side=0, fighting=60, weapon=Weapon(30, 2), parkour=20, perception=30, specialty=(2,))
    arguments[field] = value
    return simulate_fights(5, [Combatant(**arguments), Combatant(side=1, fighting=50, weapon=Weapon(30, 2))], seed=1)


def _exp_fight(field, value):
    from combatsim.exp.api import Combatant, simulate_fight
    from combatsim.exp.model import Weapon

    arguments = dict(name="a", hit_points=20, armour_rating=500, weapon=Weapon("claw", "A", "d6"), bonus=100,
                     maximum_roll=750)
    arguments[field] = value
    other = Combatant("b", 20, 500, Weapon("claw", "A", "d6"), 100, 750)
    return simulate_fight(5, [Combatant(**arguments)], [other], seed=1)


def _tss_fight(field, value):
    from combatsim.tss.api import Combatant, simulate_fights

    arguments = dict(skill="14/7/3", action_check="+12/11/5/2", weapon="d4w/d4+1w/d4m")
    arguments[field] = value
    other = Combatant(skill="12", action_check="13/6/3", weapon="d4s/d4w/d4w")
    return simulate_fights(5, side_a=[Combatant(**arguments)], side_b=[other], seed=1)


FIGHT_APIS = {
    _d100_fight: ("fighting", "weapon", "parkour", "perception", "specialty", "torso", "policy", "side", "arcane"),
    _exp_fight: ("hit_points", "armour_rating", "weapon", "bonus", "maximum_roll", "ammunition"),
    _tss_fight: ("skill", "action_check", "weapon", "durability", "actions_per_round", "resolve", "attack_steps",
                 "second_weapon", "ambidexterity", "broad_skill", "aim_chance", "two_weapons"),
}


@given(api=st.sampled_from(list(FIGHT_APIS)), data=st.data())
def test_ruleset_fight_apis_reject_or_run(api, data):
    field = data.draw(st.sampled_from(FIGHT_APIS[api]))
    value = data.draw(hostile)
    try:
        result = api(field, value)
    except (ValueError, TypeError) as error:
        assert field in str(error) or field.rstrip("s") in str(error), str(error)
        return
    assert result.fights == 5


SCENARIO_LINES = [
    'ruleset = "exp"', 'ruleset = "d100"', 'ruleset = "tss"', 'ruleset = 3', "[options]", "passes = 0", "max_rounds = -1",
    "unit_limit = 1e9", "[[sides]]", 'name = "x"', "[[sides.members]]", "fighting = 50", 'fighting = "a"',
    "weapon = { lethality = 30 }", 'weapon = { name = "w", type = "A", damage = "d6" }', 'kind = "creature"',
    'kind = "dragon"', "hit_points = 10", "armour_rating = 500", "bonus = 100", "maximum_roll = 800",
    'skill = "16/8/4"', 'skill = "4/8/16"', 'action_check = "+14/13/6/3"', 'weapon = { damage = "d4w/d4w/d4w" }',
    "durability = [1, 2]", "[weapon]", "= broken", "[[[", 'name = "\\udcff"', "x = inf", "y = nan",
]


@given(st.lists(st.sampled_from(SCENARIO_LINES), max_size=25))
def test_malformed_scenario_files_are_refused_clearly(tmp_path_factory, lines):
    from combatsim.scenario import ScenarioError, load

    path = tmp_path_factory.mktemp("scenario") / "s.toml"
    path.write_text("\n".join(lines))
    try:
        scenario = load(path)
    except ScenarioError as error:
        assert str(error).startswith(str(path))
        return
    assert scenario.ruleset in ("exp", "d100", "tss") and len(scenario.side_names) == 2


RL_IDS = ["combatsim/ExpDuel-v0", "combatsim/D100Duel-v0", "combatsim/TssDuel-v0", "combatsim/Fight-v0"]


@given(env_id=st.sampled_from(RL_IDS), field=st.sampled_from(["scenario", "agent", "backend"]),
       value=hostile)
def test_rl_environments_reject_or_build(env_id, field, value):
    gymnasium = pytest.importorskip("gymnasium")
    import combatsim.rl  # noqa: F401  (registers the ids)

    arguments = {"scenario": "d100_duel", "agent": "Guard"} if env_id == "combatsim/Fight-v0" else {}
    arguments[field] = value
    try:
        env = gymnasium.make(env_id, **arguments)
    except (ValueError, TypeError) as error:
        assert str(error) and "\n" not in str(error)
        return
    observation, info = env.reset(seed=1)
    assert env.observation_space.contains(observation) and "action_mask" in info
    env.close()
