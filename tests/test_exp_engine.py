"""The EXP engine (combatsim.exp.engine): the fight as reset + steps, Python against Numba, actions, masks."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from combatsim.engine import (
    DRAW,
    RUNNING,
    S_INDEX,
    S_OUTCOME,
    S_RETRIES,
    S_WORDS,
    SCRIPTED,
    UNFINISHED,
    engine_kernels,
    stream_resume,
)
from combatsim.engine import new_stream as python_stream
from combatsim.exp import engine
from combatsim.exp.api import Combatant, combatant_table
from combatsim.exp.game import game
from combatsim.exp.model import Weapon
from combatsim.registry import get_kernel
from combatsim.scenario import example_names, example_path, load, validate

WEAPON_TYPES = ("A", "B", "C", "D", "E", "F", "automatic")
PYTHON = engine_kernels("combatsim.exp.engine", "python")


@pytest.fixture(scope="module")
def numba_engine():
    return engine_kernels("combatsim.exp.engine", "numba")


def run_fight(kernel, seed, start, count, table, unit_limit, hit_on_equal=False, critical=False):
    counts = np.zeros(engine.FIGHT_COUNTS + unit_limit + len(table), dtype=np.int64)  # then who stood
    winner = np.zeros(count, dtype=np.int8)
    units = np.zeros(count, dtype=np.int32)
    kernel(np.uint64(seed), start, count, table, unit_limit, hit_on_equal, critical, counts, winner, units)
    return counts, winner, units


combatants = st.builds(
    lambda hp, ar, bonus, mr, adj, dice, da, wtype, ammo: Combatant(
        "c", hp, ar, Weapon("w", wtype, dice, ammunition=ammo), bonus, mr, da, adj
    ),
    st.integers(1, 40),
    st.integers(0, 900),
    st.integers(-100, 400),
    st.integers(300, 1100),
    st.integers(-100, 100),
    st.sampled_from(["d4", "d6", "2d6", "d8", "3d10", "d4-2", "5", "d1000000"]),
    st.integers(-2, 6),
    st.sampled_from(WEAPON_TYPES),
    st.one_of(st.none(), st.integers(0, 20)),
)


def example_scenarios():
    return [load(example_path(name)) for name in example_names() if name.startswith("exp")]


# --- the engine's fight is the fight the kernels play ----------------------------------------------
def test_example_fights_equal_the_fight_kernels(numba_engine):
    """Every EXP example, 400 fights of two seeds: winner, units and all counts, fight by fight."""
    scenarios = example_scenarios()
    assert scenarios
    for scenario in scenarios:
        spec = scenario.spec
        table = combatant_table(*spec["sides"])
        for seed in (0, 2**64 - 1):
            options = (spec["unit_limit"], spec["hit_on_equal"], spec["critical"])
            expected = run_fight(get_kernel("exp.fight", "cython"), seed, 5, 400, table, *options)
            for kernel in (PYTHON.fight, numba_engine.fight):
                for a, b in zip(expected, run_fight(kernel, seed, 5, 400, table, *options), strict=True):
                    np.testing.assert_array_equal(a, b)


@settings(max_examples=60)
@given(
    st.lists(combatants, min_size=1, max_size=3),
    st.lists(combatants, min_size=1, max_size=3),
    st.integers(0, 2**64 - 1),
    st.integers(0, 2**40),
    st.integers(1, 25),
    st.booleans(),
    st.booleans(),
)
def test_generated_team_fights_equal_the_fight_kernels(numba_engine, side0, side1, seed, start, unit_limit,
                                                       hit_on_equal, critical):
    table = combatant_table(side0, side1)
    options = (unit_limit, hit_on_equal, critical)
    expected = run_fight(get_kernel("exp.fight", "cython"), seed, start, 8, table, *options)
    for kernel in (PYTHON.fight, numba_engine.fight, get_kernel("exp.fight", "numba")):
        for a, b in zip(expected, run_fight(kernel, seed, start, 8, table, *options), strict=True):
            np.testing.assert_array_equal(a, b)


# --- Python against Numba, step by step --------------------------------------------------------------
def team_scenario(unit_limit=30):
    """Two against three with a burst gun, a D-type gun with little ammunition and melee."""
    def creature(hit_points, armour_rating, bonus, damage, weapon_type="A", ammunition=None):
        weapon = {"name": "w", "type": weapon_type, "damage": damage}
        if ammunition is not None:
            weapon["ammunition"] = ammunition
        return {"kind": "creature", "hit_points": hit_points, "armour_rating": armour_rating, "bonus": bonus,
                "maximum_roll": 900, "weapon": weapon}
    document = {"ruleset": "exp", "name": "teams", "options": {"unit_limit": unit_limit},
                "sides": [{"name": "left", "members": [creature(30, 600, 200, "2d6", "automatic", 40),
                                                       creature(25, 550, 150, "d8", "D", 5)]},
                          {"name": "right", "members": [creature(20, 500, 250, "d10"), creature(15, 650, 100, "d6"),
                                                        creature(35, 450, 120, "d4+1", "E", 12)]}]}
    return validate(copy.deepcopy(document), "teams", "teams")


def make_game(scenario):
    members = sum(len(side) for side in scenario.spec["sides"])
    return game(scenario.spec, [f"m{c}" for c in range(members)], scenario.side_names)


def random_actions(rng, buffers, game_):
    """Per member: SCRIPTED, hold, a legal fire, or any action (often masked)."""
    n, members = buffers["actions"].shape
    actions = np.full((n, members), SCRIPTED, dtype=np.int64)
    kinds = rng.integers(0, 4, size=(n, members))
    for e in range(n):
        for c in range(members):
            if kinds[e, c] == 1:
                actions[e, c] = engine.HOLD
            elif kinds[e, c] == 2:
                legal = np.flatnonzero(buffers["mask"][e, c])
                actions[e, c] = rng.choice(legal)
            elif kinds[e, c] == 3:
                actions[e, c] = rng.integers(0, len(game_.action_names))
    return actions


@pytest.mark.parametrize("scenario", ["example", "teams"])
def test_python_and_numba_engines_step_identically(numba_engine, scenario):
    """Random actions (scripted, hold, legal, masked) over 40 envs; envs that end are reset with the
    next fight index; state, counts, observations and masks equal after every step."""
    game_ = make_game(example_scenarios()[0] if scenario == "example" else team_scenario())
    rng = np.random.default_rng(17)
    python, compiled = game_.buffers(40), game_.buffers(40)
    for buffers in (python, compiled):
        buffers["seeds"][:] = np.arange(40, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        buffers["indices"][:] = np.arange(40)
    outcomes = set()
    masked = 0

    def call(kernels, buffers, name):
        b = buffers
        if name == "reset":
            kernels.reset(game_.table, game_.config, b["seeds"], b["indices"], b["which"], b["state"], b["counts"],
                          b["obs"], b["mask"])
        else:
            kernels.step(game_.table, game_.config, b["seeds"], b["state"], b["actions"], b["counts"], b["obs"],
                         b["mask"])

    for name in ("reset", *["step"] * 120):
        if name == "step":
            actions = random_actions(rng, python, game_)
            python["actions"][:] = actions
            compiled["actions"][:] = actions
        call(PYTHON, python, name)
        call(numba_engine, compiled, name)
        for key in ("state", "counts", "obs", "mask"):
            np.testing.assert_array_equal(python[key], compiled[key], err_msg=key)
        ended = python["state"][:, S_OUTCOME] != RUNNING
        outcomes.update(int(o) for o in python["state"][ended, S_OUTCOME])
        masked += int(python["counts"][ended, engine.COUNT_MASKED].sum())
        for buffers in (python, compiled):
            buffers["which"][:] = ended
            buffers["indices"][ended] += 40
        if ended.any():
            call(PYTHON, python, "reset")
            call(numba_engine, compiled, "reset")
            assert (python["state"][:, S_OUTCOME] == RUNNING).all()
    assert masked > 0
    assert {0, 1} <= outcomes


# --- external actions keep the dice aligned ------------------------------------------------------------
def scripted_targets(game_, seed, state):
    """The row each member's scripted policy fires at in this unit (-1: it does not fire), worked out
    from the documented word layout: per member able to fire, its target die, then per to-hit roll
    a kilodie and its damage dice (a burst: a d4 and three rounds' dice)."""
    table, members = game_.table, game_.members
    hit_points = state[engine.ST_HIT_POINTS:engine.ST_HIT_POINTS + members]
    shots = state[engine.ST_HIT_POINTS + members:engine.ST_HIT_POINTS + 2 * members]
    holder = python_stream()
    stream_resume(holder, seed, state[S_INDEX], state[S_WORDS], state[S_RETRIES])
    stream = holder.stream
    targets = [-1] * members
    for a in range(members):
        if hit_points[a] <= 0 or shots[a] == 0:
            continue
        row = [int(v) for v in table[a]]
        enemies = [t for t in range(members) if table[t, engine.C_SIDE] != row[engine.C_SIDE] and hit_points[t] > 0]
        targets[a] = enemies[stream.die(len(enemies)) - 1]
        rolls = row[engine.C_ROLLS] if shots[a] < 0 else min(row[engine.C_ROLLS], int(shots[a]))
        bursts = engine.ROUNDS_PER_BURST if row[engine.C_AUTOMATIC] else 1
        for _ in range(rolls):
            stream.die(engine.KILODIE)
            if row[engine.C_AUTOMATIC]:
                stream.die(engine.ROUNDS_PER_BURST + 1)
            stream.roll(bursts * row[engine.C_DICE_COUNT], row[engine.C_DICE_SIDES])
    return targets


def foe_action(game_, member, target):
    foes = [t for t in range(game_.members) if game_.member_sides[t] != game_.member_sides[member]]
    return engine.FIRE_AT_FOE + foes.index(target)


@pytest.mark.parametrize("scenario", ["example", "teams"])
def test_external_actions_equal_to_the_scripted_choice_play_the_scripted_fight(scenario):
    """Members chosen at random take, as an external action, the foe their scripted policy would pick:
    the fight is the scripted fight, step by step (hold for a member that cannot fire)."""
    game_ = make_game(example_scenarios()[0] if scenario == "example" else team_scenario())
    rng = np.random.default_rng(5)
    n = 24
    scripted, external = game_.buffers(n), game_.buffers(n)
    for buffers in (scripted, external):
        buffers["seeds"][:] = 99
        buffers["indices"][:] = np.arange(n)
        PYTHON.reset(game_.table, game_.config, buffers["seeds"], buffers["indices"], buffers["which"],
                     buffers["state"], buffers["counts"], buffers["obs"], buffers["mask"])
    while (scripted["state"][:, S_OUTCOME] == RUNNING).any():
        for e in np.flatnonzero(scripted["state"][:, S_OUTCOME] == RUNNING):
            targets = scripted_targets(game_, 99, scripted["state"][e])
            for c in range(game_.members):
                if rng.random() < 0.6:
                    action = engine.HOLD if targets[c] < 0 else foe_action(game_, c, targets[c])
                    assert external["mask"][e, c, action] == 1
                    external["actions"][e, c] = action
                else:
                    external["actions"][e, c] = SCRIPTED
        for buffers in (scripted, external):
            PYTHON.step(game_.table, game_.config, buffers["seeds"], buffers["state"], buffers["actions"],
                        buffers["counts"], buffers["obs"], buffers["mask"])
        for key in ("state", "counts", "obs", "mask"):
            np.testing.assert_array_equal(scripted[key], external[key], err_msg=key)


def test_a_held_unit_draws_the_dice_it_would_have_fired():
    """A member that holds spends no shots and deals no damage, yet the stream is where the scripted
    unit leaves it, so every other member's dice are the same."""
    game_ = make_game(team_scenario())
    scripted, held = game_.buffers(200), game_.buffers(200)
    for buffers in (scripted, held):
        buffers["indices"][:] = np.arange(200)
        PYTHON.reset(game_.table, game_.config, buffers["seeds"], buffers["indices"], buffers["which"],
                     buffers["state"], buffers["counts"], buffers["obs"], buffers["mask"])
    held["actions"][:, 1] = engine.HOLD
    for buffers in (scripted, held):
        PYTHON.step(game_.table, game_.config, buffers["seeds"], buffers["state"], buffers["actions"],
                    buffers["counts"], buffers["obs"], buffers["mask"])
    for key in (S_WORDS, S_RETRIES):
        np.testing.assert_array_equal(scripted["state"][:, key], held["state"][:, key])
    shots = engine.ST_HIT_POINTS + game_.members + 1
    assert (held["state"][:, shots] == 5).all() and (scripted["state"][:, shots] == 3).all()
    # Side 1 fires the same dice at the same targets: the same damage to side 0.
    np.testing.assert_array_equal(scripted["counts"][:, engine.FIGHT_DAMAGE_SIDE1],
                                  held["counts"][:, engine.FIGHT_DAMAGE_SIDE1])
    assert (held["counts"][:, engine.FIGHT_ROLLS_SIDE0] == 5).all()  # the burst gun only
    assert (held["counts"][:, engine.COUNT_MASKED] == 0).all()


# --- masks -----------------------------------------------------------------------------------------------
def test_masked_actions_hold_and_are_counted(numba_engine):
    """Firing at a foe slot the scenario does not fill, or at a foe already out, is masked: the member
    holds and ``masked`` counts it; the fight is the one in which it held."""
    game_ = make_game(team_scenario())
    n = 100
    for kernels in (PYTHON, numba_engine):
        held, masked = game_.buffers(n), game_.buffers(n)
        for buffers in (held, masked):
            buffers["indices"][:] = np.arange(n)
            kernels.reset(game_.table, game_.config, buffers["seeds"], buffers["indices"], buffers["which"],
                          buffers["state"], buffers["counts"], buffers["obs"], buffers["mask"])
        # Side 0 faces three foes; side 1 has three foe slots but only two foes: slot 2 is never filled.
        assert (masked["mask"][:, 2:, engine.FIRE_AT_FOE + 2] == 0).all()
        expected_masked = np.zeros(n, dtype=np.int64)
        for _ in range(game_.config[engine.CF_UNIT_LIMIT]):
            running = masked["state"][:, S_OUTCOME] == RUNNING
            held["actions"][:, 2] = engine.HOLD
            masked["actions"][:, 2] = engine.FIRE_AT_FOE + 2
            # member 3 fires at foe 0 when it is masked (foe 0 out, or member 3 out), else holds
            illegal = masked["mask"][:, 3, engine.FIRE_AT_FOE] == 0
            held["actions"][:, 3] = engine.HOLD
            masked["actions"][:, 3] = np.where(illegal, engine.FIRE_AT_FOE, engine.HOLD)
            expected_masked += running * (1 + illegal)
            for buffers in (held, masked):
                kernels.step(game_.table, game_.config, buffers["seeds"], buffers["state"], buffers["actions"],
                             buffers["counts"], buffers["obs"], buffers["mask"])
            for key in ("state", "obs", "mask"):
                np.testing.assert_array_equal(held[key], masked[key], err_msg=key)
        not_masked = [f for f in range(engine.ENGINE_COUNTS) if f != engine.COUNT_MASKED]
        np.testing.assert_array_equal(held["counts"][:, not_masked], masked["counts"][:, not_masked])
        np.testing.assert_array_equal(masked["counts"][:, engine.COUNT_MASKED], expected_masked)
        assert (held["counts"][:, engine.COUNT_MASKED] == 0).all()


def test_masks_follow_the_observation():
    """Hold is always legal; fire at foe j exactly when foe j is in the fight and the member can fire."""
    game_ = make_game(team_scenario(unit_limit=12))
    n = 50
    b = game_.buffers(n)
    b["indices"][:] = np.arange(n)
    PYTHON.reset(game_.table, game_.config, b["seeds"], b["indices"], b["which"], b["state"], b["counts"], b["obs"],
                 b["mask"])
    names = game_.observation_names
    foe_in = [names.index(f"foe{j}.in_fight") for j in range(3)]
    self_in, self_ammunition = names.index("self.in_fight"), names.index("self.ammunition")
    seen_out = False
    while (b["state"][:, S_OUTCOME] == RUNNING).any():
        obs, mask = b["obs"], b["mask"]
        assert (mask[..., engine.HOLD] == 1).all()
        able = (obs[..., self_in] == 1) & (obs[..., self_ammunition] > 0)
        for j in range(3):
            np.testing.assert_array_equal(mask[..., engine.FIRE_AT_FOE + j], able & (obs[..., foe_in[j]] == 1))
        seen_out |= bool((obs[..., self_in] == 0).any())
        PYTHON.step(game_.table, game_.config, b["seeds"], b["state"], b["actions"], b["counts"], b["obs"], b["mask"])
    assert seen_out


# --- the Game and its names ----------------------------------------------------------------------------
def test_game_names_match_the_arrays():
    scenario = team_scenario()
    game_ = make_game(scenario)
    assert game_.action_names == ("hold", "fire_at_foe_0", "fire_at_foe_1", "fire_at_foe_2")
    assert game_.observation_names[:3] == ("units", "self.in_fight", "self.health")
    assert "ally1.in_fight" in game_.observation_names and "ally2.in_fight" not in game_.observation_names
    assert game_.observation_names[-1] == "foe2.armour_rating"
    assert game_.member_sides == (0, 0, 1, 1, 1)
    assert game_.count_names[engine.COUNT_MASKED] == "masked"
    assert game_.count_names[engine.COUNT_UNFINISHED] == "unfinished"
    b = game_.buffers(3)
    PYTHON.reset(game_.table, game_.config, b["seeds"], b["indices"], b["which"], b["state"], b["counts"], b["obs"],
                 b["mask"])
    assert b["obs"].shape == (3, 5, len(game_.observation_names))
    assert b["mask"].shape == (3, 5, len(game_.action_names))
    assert b["counts"].shape[1] == len(game_.count_names) == engine.ENGINE_COUNTS
    # Member 2 (side 1, first) sees itself, its two allies (3, 4), then side 0 (0, 1) and an empty slot.
    obs = b["obs"][0, 2]
    field = {name: obs[k] for k, name in enumerate(game_.observation_names)}
    assert field["units"] == 0
    assert field["self.hit_points"] == pytest.approx(0.20) and field["self.armour_rating"] == pytest.approx(0.5)
    assert field["ally0.hit_points"] == pytest.approx(0.15) and field["ally1.hit_points"] == pytest.approx(0.35)
    assert field["foe0.hit_points"] == pytest.approx(0.30) and field["foe1.ammunition"] == 1
    assert field["foe2.in_fight"] == 0 and field["foe2.armour_rating"] == 0
    assert list(b["mask"][0, 2]) == [1, 1, 1, 0]


def test_outcomes_unfinished_and_draw():
    """Nobody hits: unfinished at the unit limit (a draw in the fight's counts); one hit each kills: a draw."""
    def fighter(bonus, damage):
        return {"kind": "creature", "hit_points": 5, "armour_rating": 500, "bonus": bonus, "maximum_roll": 2000,
                "weapon": {"name": "w", "type": "A", "damage": damage}}
    for bonus, outcome, length in ((-2000, UNFINISHED, 4), (2000, DRAW, 1)):
        document = {"ruleset": "exp", "options": {"unit_limit": 4},
                    "sides": [{"members": [fighter(bonus, "5")]}, {"members": [fighter(bonus, "9")]}]}
        game_ = make_game(validate(document, "duel", "duel"))
        b = game_.buffers(1)
        PYTHON.reset(game_.table, game_.config, b["seeds"], b["indices"], b["which"], b["state"], b["counts"],
                     b["obs"], b["mask"])
        steps = 0
        while b["state"][0, S_OUTCOME] == RUNNING:
            PYTHON.step(game_.table, game_.config, b["seeds"], b["state"], b["actions"], b["counts"], b["obs"],
                        b["mask"])
            steps += 1
        counts = dict(zip(game_.count_names, b["counts"][0], strict=True))
        assert (b["state"][0, S_OUTCOME], steps, counts["units"], counts["draws"]) == (outcome, length, length, 1)
        assert (counts["unfinished"], counts["mutual"]) == ((1, 0) if outcome == UNFINISHED else (0, 1))
        if outcome == UNFINISHED:
            assert b["obs"][0, 0, 0] == 1.0  # all the units played
        else:
            assert (b["mask"][0, :, engine.FIRE_AT_FOE] == 0).all()  # both out: only hold


# --- the attack kernels' rules (engine.KERNEL_RULES) -----------------------------------------------
@given(st.integers(0, 2**32 - 1), st.sampled_from([(0, 1), (1, 4), (1, 8), (2, 6), (3, 10), (1, 2_000_000), (5, 7)]))
def test_fire_joint_reads_the_documented_digits_from_the_word(word, dice):
    """fire_joint's chain of multiplies gives the kilodie and damage dice docs/exp.md reads from the
    joint die's value v = word x faces >> 32, in mixed radix (reference.joint_dice)."""
    from combatsim.exp.reference import joint_dice

    count, sides = dice
    faces = engine.joint_faces(1, 0, count, sides)
    assert faces == 1000 * sides**count
    kilodie, rolled = joint_dice((word * faces) >> 32, count, sides)
    # no cap, no adjustment: hit exactly when kilodie > AR; damage = the dice + 2 - 1
    for armour_rating, hits in ((kilodie - 1, 1), (kilodie, 0)):
        assert engine.fire_joint(word, 0, 10_000, armour_rating, 0, count, sides, 2, -1, False, False) == (
            hits, hits * (sum(rolled) + 1), hits)


def test_joint_faces_only_single_rolls_that_fit():
    assert engine.joint_faces(1, 0, 2, 6) == 36_000 and engine.joint_faces(1, 0, 0, 1) == 1000
    assert engine.joint_faces(2, 0, 1, 6) == engine.joint_faces(1, 1, 1, 6) == 0
    assert engine.joint_faces(1, 0, 1, engine.JOINT_FACES_LIMIT // 1000) == 1000 * (engine.JOINT_FACES_LIMIT // 1000)
    assert engine.joint_faces(1, 0, 1, engine.JOINT_FACES_LIMIT // 1000 + 1) == 0
    assert engine.joint_faces(1, 0, 40, 2) == 0


@given(st.integers(-1200, 1200), st.integers(-100, 1300), st.integers(-100, 1300), st.integers(-300, 300),
       st.booleans(), st.booleans())
def test_kilodie_bar_is_the_least_kilodie_that_hits(bonus, maximum_roll, armour_rating, adjustment, hit_on_equal,
                                                    critical):
    hitting = [v for v in range(engine.KILODIE) if engine.is_hit(
        engine.to_hit_roll(v + 1, bonus, maximum_roll, adjustment, critical), armour_rating, hit_on_equal)]
    bar = engine.kilodie_bar(bonus, maximum_roll, armour_rating, adjustment, hit_on_equal, critical)
    assert hitting == list(range(bar, engine.KILODIE))
