"""The TSS engine (combatsim.tss.engine): the fight stepped one phase at a time.

Its whole-fight run is the registry's python fight: it equals the Cython fight kernel fight by
fight; the Numba-compiled engine equals the Python engine array by array after every step, with
external actions legal and masked mixed with scripted ones.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from combatsim.engine import RUNNING, S_LENGTH, S_OUTCOME, SCRIPTED, UNFINISHED, engine_kernels
from combatsim.registry import get_kernel
from combatsim.scenario import example_path, load, validate
from combatsim.tss import engine
from combatsim.tss.api import fight_table, simulate_fights
from combatsim.tss.game import game, taken_actions

from .test_tss_kernels import combatants

FIGHTER = {"skill": "14/7/3", "action_check": "+13/12/6/3", "actions_per_round": 2, "durability": [6, 6, 3],
           "resolve": "10/5/2", "weapon": {"damage": "d4s/d4w/d4+1w", "class": "LI", "quality": "good"},
           "armour": {"dice": {"LI": "d4"}, "quality": "ordinary"}}
SHOOTER = {"skill": "12/6/3", "action_check": "+12/11/5/2", "actions_per_round": 1, "durability": [5, 5, 2],
           "defence_steps": 1, "weapon": {"damage": "d4w/d6w/d4m", "class": "En"}}
THUG = {"skill": "13/6/3", "action_check": "+12/11/5/2", "actions_per_round": 3, "durability": [7, 7, 3],
        "weapon": {"damage": "d6s/d4w/d4+1w", "class": "LI", "quality": "marginal"},
        "armour": {"dice": {"En": "d4"}, "quality": "good"}}


def scenario(sides: list[list[dict]], **options):
    document = {"ruleset": "tss", "name": "engine", "options": options,
                "sides": [{"name": f"side {index}", "members": copy.deepcopy(members)}
                          for index, members in enumerate(sides)]}
    return validate(document, "engine", "engine")


#: Two weapons (Ambidexterity), a broad skill and a 40% aim chance; the thug always aims first.
DUELLIST = {**FIGHTER, "second_weapon": {"damage": "d4s/d4+1s/d4w", "class": "En", "quality": "amazing"},
            "ambidexterity": True, "broad_skill": True, "policy": {"aim": 40, "two_weapons": True}}
AIMER = {**THUG, "policy": {"aim": 100}}

SCENARIOS = {
    "tss_alex_vs_thug": lambda: load(example_path("tss_alex_vs_thug")),
    "mirror": lambda: scenario([[FIGHTER], [FIGHTER]], max_rounds=6),
    "teams": lambda: scenario([[FIGHTER, SHOOTER], [THUG, THUG, SHOOTER]], max_rounds=8, one_step_shift=True),
    "tactics": lambda: scenario([[DUELLIST, SHOOTER], [AIMER, {**THUG, "policy": {"aim": 25}}]], max_rounds=8),
}


def scenario_game(name: str):
    fight = SCENARIOS[name]()
    members = [member for side in fight.spec["sides"] for member in side]
    return game(fight.spec, [f"m{c}" for c in range(len(members))], ["side 0", "side 1"])


def run_fight(backend, seed, start, count, table, n_characters, n_classes, max_rounds, one_step):
    counts = np.zeros(engine.FIGHT_COUNTS + max_rounds + 1 + n_characters, dtype=np.int64)  # then who stood
    winner = np.full(count, -2, dtype=np.int8)
    rounds = np.full(count, -2, dtype=np.int32)
    if backend == "engine numba":
        kernel, seed = engine_kernels("combatsim.tss.engine", "numba").fight, np.uint64(seed)
    else:
        kernel = get_kernel("tss.fight", backend)
    kernel(seed, start, count, table, n_characters, n_classes, max_rounds, one_step, counts, winner, rounds)
    return counts, winner, rounds


def assert_same_fights(sides, seed, start, count, max_rounds, one_step):
    table, n_characters, n_classes = fight_table(*sides)
    expected = run_fight("cython", seed, start, count, table, n_characters, n_classes, max_rounds, one_step)
    for backend in ("python", "engine numba"):
        got = run_fight(backend, seed, start, count, table, n_characters, n_classes, max_rounds, one_step)
        for a, b in zip(got, expected, strict=True):
            np.testing.assert_array_equal(a, b)


# --- the engine's fight is the fight -------------------------------------------------------------
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_engine_fight_equals_the_fight_kernel_fight_by_fight(name):
    spec = SCENARIOS[name]().spec
    assert_same_fights(spec["sides"], 7, 0, 300, spec["max_rounds"], spec["one_step_shift"])


@given(side_a=st.lists(combatants(), min_size=1, max_size=3), side_b=st.lists(combatants(), min_size=1, max_size=3),
       seed=st.integers(0, 2**64 - 1), start=st.integers(0, 2**40), count=st.integers(0, 8),
       max_rounds=st.integers(1, 20), one_step=st.booleans())
def test_engine_fight_equals_the_fight_kernel_for_generated_teams(side_a, side_b, seed, start, count, max_rounds,
                                                                 one_step):
    assert_same_fights((side_a, side_b), seed, start, count, max_rounds, one_step)


def test_no_round_is_a_draw_in_round_zero():
    spec = SCENARIOS["mirror"]().spec
    table, n_characters, n_classes = fight_table(*spec["sides"])
    for backend in ("python", "cython"):
        counts, winner, rounds = run_fight(backend, 1, 0, 3, table, n_characters, n_classes, 0, False)
        assert counts.tolist() == [0, 0, 3, 0, 0, 0, 0, 0, 3, 3, 3]  # then both characters stood in all 3
        assert winner.tolist() == [-1] * 3 and rounds.tolist() == [0] * 3


# --- stepping ------------------------------------------------------------------------------------
def start(g, n: int, seed: int, backend: str = "python"):
    kernels = g.engine(backend)
    buffers = g.buffers(n)
    buffers["seeds"][:] = seed + np.arange(n, dtype=np.uint64)
    buffers["indices"][:] = np.arange(n) * 3
    kernels.reset(g.table, g.config, buffers["seeds"], buffers["indices"], buffers["which"], buffers["state"],
                  buffers["counts"], buffers["obs"], buffers["mask"])
    return kernels, buffers


def step(kernels, g, b):
    kernels.step(g.table, g.config, b["seeds"], b["state"], b["actions"], b["counts"], b["obs"], b["mask"])


def running(b):
    return b["state"][:, S_OUTCOME] == RUNNING


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_numba_engine_equals_python_engine_step_by_step(name):
    """Random actions, legal and masked, mixed with SCRIPTED; ended envs restart with a new fight."""
    g = scenario_game(name)
    envs, chooser = 24, np.random.default_rng(5)
    python, ours = start(g, envs, 11)
    numba, theirs = start(g, envs, 11, "numba")
    actions = len(g.action_names)
    restarts = 0
    for _ in range(160):
        choice = chooser.integers(-1, actions, size=(envs, g.members))
        choice[chooser.random((envs, g.members)) < 0.3] = SCRIPTED
        ours["actions"][:] = theirs["actions"][:] = choice
        step(python, g, ours)
        step(numba, g, theirs)
        for key in ("state", "counts", "obs", "mask"):
            np.testing.assert_array_equal(theirs[key], ours[key], err_msg=key)
        ended = ~running(ours)
        if ended.any():
            restarts += int(ended.sum())
            for b in (ours, theirs):
                b["which"][:] = ended
                b["indices"][ended] += 1
            for kernels, b in ((python, ours), (numba, theirs)):
                kernels.reset(g.table, g.config, b["seeds"], b["indices"], b["which"], b["state"], b["counts"],
                              b["obs"], b["mask"])
            for key in ("state", "counts", "obs", "mask"):
                np.testing.assert_array_equal(theirs[key], ours[key], err_msg=key)
    assert restarts > envs
    assert ours["counts"][:, engine.C_MASKED].sum() > 0


@given(side_a=st.lists(combatants(), min_size=1, max_size=3), side_b=st.lists(combatants(), min_size=1, max_size=3),
       max_rounds=st.integers(1, 6), one_step=st.booleans(), seed=st.integers(0, 2**64 - 8),
       actions_seed=st.integers(0, 2**32 - 1))
def test_numba_engine_equals_python_engine_for_generated_teams(side_a, side_b, max_rounds, one_step, seed,
                                                              actions_seed):
    spec = {"sides": [side_a, side_b], "max_rounds": max_rounds, "one_step_shift": one_step}
    members = len(side_a) + len(side_b)
    g = game(spec, [f"m{c}" for c in range(members)], ["a", "b"])
    envs, chooser = 6, np.random.default_rng(actions_seed)
    python, ours = start(g, envs, 0)
    numba, theirs = start(g, envs, 0, "numba")
    for b in (ours, theirs):
        b["seeds"][:] = np.uint64(seed) + np.arange(envs, dtype=np.uint64)
    for kernels, b in ((python, ours), (numba, theirs)):
        kernels.reset(g.table, g.config, b["seeds"], b["indices"], b["which"], b["state"], b["counts"], b["obs"],
                      b["mask"])
    while running(ours).any():
        choice = chooser.integers(-1, len(g.action_names), size=(envs, members))
        ours["actions"][:] = theirs["actions"][:] = choice
        step(python, g, ours)
        step(numba, g, theirs)
        for key in ("state", "counts", "obs", "mask"):
            np.testing.assert_array_equal(theirs[key], ours[key], err_msg=key)
    assert (ours["state"][:, S_LENGTH] <= max_rounds).all()


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_external_scripted_choice_plays_the_scripted_fight(name):
    """Each step, the actions the scripted policy took (policy dice included: a member with an aim
    chance draws its d100 whatever it does) given from outside play the same step word for word."""
    g = scenario_game(name)
    envs = 8
    python, scripted = start(g, envs, 3)
    _, chosen = start(g, envs, 3)
    kinds = set()
    while running(scripted).any():
        before = {key: value.copy() for key, value in chosen.items()}
        step(python, g, scripted)
        chosen["actions"][:] = taken_actions(g, scripted["state"])
        kinds |= set(chosen["actions"].ravel().tolist())
        step(python, g, chosen)
        for key in ("state", "counts", "obs", "mask"):
            np.testing.assert_array_equal(chosen[key], scripted[key], err_msg=key)
        # every action taken in a running fight was legal by the mask of the step
        took = chosen["actions"]
        legal = before["mask"][np.arange(envs)[:, None], np.arange(g.members)[None, :], took]
        assert legal[before["state"][:, S_OUTCOME] == RUNNING].all()
    assert not chosen["counts"][:, engine.C_MASKED].any()
    assert set(scripted["state"][:, S_OUTCOME].tolist()) <= {0, 1, UNFINISHED}
    if name == "tactics":  # hold, attacks, aim and two-weapon attacks all played
        names = {g.action_names[k].rstrip("0123456789") for k in kinds}
        assert names == {"hold", "attack_foe_", "aim", "attack_two_weapons_foe_"}


def test_masked_action_does_nothing_and_counts():
    g = scenario_game("teams")
    python, held = start(g, 16, 9)
    _, masked = start(g, 16, 9)
    for _ in range(60):
        # every member: the first masked action it has, else hold; the twin env holds throughout
        mask = held["mask"]
        illegal = (mask == 0).argmax(axis=2)
        has_illegal = (mask == 0).any(axis=2)
        masked["actions"][:] = np.where(has_illegal, illegal, engine.HOLD)
        held["actions"][:] = engine.HOLD
        expected_masked = masked["counts"][:, engine.C_MASKED] + (has_illegal & running(held)[:, None]).sum(axis=1)
        step(python, g, held)
        step(python, g, masked)
        np.testing.assert_array_equal(masked["counts"][:, engine.C_MASKED], expected_masked)
        for key in ("state", "obs", "mask"):
            np.testing.assert_array_equal(masked[key], held[key], err_msg=key)
        np.testing.assert_array_equal(masked["counts"][:, :engine.C_MASKED], held["counts"][:, :engine.C_MASKED])
    # holding every action, nobody attacks, and the fights run to the round limit
    assert (held["state"][:, S_OUTCOME] == UNFINISHED).all()
    assert (held["state"][:, S_LENGTH] == g.config[engine.K_MAX_ROUNDS]).all()
    assert not held["counts"][:, engine.C_ATTACKS].any()
    assert masked["counts"][:, engine.C_MASKED].sum() > 0


def test_a_held_action_is_kept_for_a_later_phase():
    """Alex (2 actions a round) holds in every phase but the Marginal one, the thug always: nothing
    is spent, so in the Marginal phase Alex may always act, and attacks once (once a phase)."""
    g = scenario_game("tss_alex_vs_thug")
    python, b = start(g, 32, 4)
    used = engine.S_MEMBERS + engine.M_USED
    marginal_turns = 0
    while running(b).any():
        phase = b["state"][:, engine.S_PHASE].copy()
        b["actions"][:, 0] = np.where(phase == 3, SCRIPTED, engine.HOLD)
        b["actions"][:, 1] = engine.HOLD
        alive = running(b)
        assert (b["state"][alive, used] == 0).all()
        at_marginal = alive & (phase == 3)
        np.testing.assert_array_equal(b["mask"][alive, 0, engine.ATTACK], at_marginal[alive] | (
            b["state"][alive, engine.S_MEMBERS + engine.M_PHASE] <= phase[alive]))
        attacks = b["counts"][:, engine.C_ATTACKS].copy()
        step(python, g, b)
        np.testing.assert_array_equal(b["counts"][:, engine.C_ATTACKS] - attacks, at_marginal)
        marginal_turns += int(at_marginal.sum())
    assert marginal_turns > 32
    assert set(b["state"][:, S_OUTCOME].tolist()) <= {0, UNFINISHED}


def test_shapes_names_and_masks():
    g = scenario_game("teams")
    assert g.members == 5 and g.member_sides == (0, 0, 1, 1, 1)
    assert g.action_names == ("hold", "attack_foe_0", "attack_foe_1", "attack_foe_2", "aim")
    # 2 globals, then self, two ally slots (side 1 has three members) and three foe slots
    assert len(g.observation_names) == 2 + 11 * 6
    assert g.observation_names[:3] == ("phase", "round", "self.in_fight")
    assert "ally1.may_act" in g.observation_names and g.observation_names[-1] == "foe2.negated"
    assert g.count_names[-1] == "masked" and g.step_name == "phase" and g.length_unit == "rounds"
    python, b = start(g, 4, 1)
    assert b["obs"].shape == (4, 5, len(g.observation_names)) and b["mask"].shape == (4, 5, 5)
    assert (b["mask"][:, :, engine.HOLD] == 1).all()
    # side 0 has two foes... three: attack_foe_2 is legal for side 0 (when it may act), never for side 1
    assert not b["mask"][:, 2:, engine.ATTACK + 2].any()
    assert (b["obs"] >= 0).all() and (b["obs"] <= 1).all()
    # the padding slot of side 0's second ally stays zero
    ally1 = g.observation_names.index("ally1.in_fight")
    assert not b["obs"][:, :2, ally1].any() and b["obs"][:, 2:, ally1].all()
    while running(b).any():
        step(python, g, b)
        mask, state = b["mask"], b["state"]
        for c in range(g.members):
            out = state[:, engine.S_MEMBERS + engine.M_WIDTH * c + engine.M_IN] == 0
            assert (mask[out, c, 1:] == 0).all()  # a member out of the fight may only hold
            np.testing.assert_array_equal(b["obs"][:, c, g.observation_names.index("self.in_fight")], ~out)
    assert (b["mask"][:, :, 1:] == 0).all()  # nobody acts once the fight is over
    assert (b["obs"] >= 0).all() and (b["obs"] <= 1).all()


def test_game_refuses_names_that_do_not_fit():
    spec = SCENARIOS["mirror"]().spec
    with pytest.raises(ValueError, match="member_names"):
        game(spec, ["one"], ["a", "b"])


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_scripted_episodes_are_the_fights_of_the_scenario(name):
    """Env e stepped with every member scripted is fight indices[e] of its seed, as `combatsim fight`
    plays it (the Cython fight kernel): the Game carries the scenario's options."""
    fight = SCENARIOS[name]()
    g = scenario_game(name)
    result = simulate_fights(24, side_a=fight.spec["sides"][0], side_b=fight.spec["sides"][1],
                             max_rounds=fight.spec["max_rounds"], one_step_shift=fight.spec["one_step_shift"],
                             seed=21, backend="cython", outcomes=True)
    python, b = start(g, 8, 21)
    b["seeds"][:] = 21
    b["indices"][:] = np.arange(8) * 3
    python.reset(g.table, g.config, b["seeds"], b["indices"], b["which"], b["state"], b["counts"], b["obs"],
                 b["mask"])
    while running(b).any():
        step(python, g, b)
    outcome = b["state"][:, S_OUTCOME]
    np.testing.assert_array_equal(np.where(outcome == UNFINISHED, -1, outcome), result.winner[::3])
    np.testing.assert_array_equal(b["state"][:, S_LENGTH], result.rounds[::3])
    np.testing.assert_array_equal(b["counts"][:, engine.C_ROUNDS], result.rounds[::3])


def test_observation_fields_say_what_their_names_say():
    g = scenario_game("teams")
    names = g.observation_names
    python, b = start(g, 16, 2)
    chooser = np.random.default_rng(8)
    foe_sides = {0: [2, 3, 4], 1: [0, 1]}
    places, negated = set(), set()
    while running(b).any():
        b["actions"][:] = chooser.integers(-1, len(g.action_names), size=b["actions"].shape)
        step(python, g, b)
        state, obs, mask = b["state"], b["obs"], b["mask"]
        for c in range(g.members):
            member = engine.S_MEMBERS + engine.M_WIDTH * c
            np.testing.assert_array_equal(obs[:, c, names.index("self.in_fight")], state[:, member + engine.M_IN])
            stun = state[:, member + engine.M_STUN]
            np.testing.assert_allclose(obs[:, c, names.index("self.stun_left")],
                                       np.maximum(0, g.table[c, engine.R_STUN] - stun) / g.table[c, engine.R_STUN],
                                       rtol=1e-6)
            # may_act: some attack is legal (while the fight runs, a member that may act has a foe in)
            np.testing.assert_array_equal(obs[:, c, names.index("self.may_act")], mask[:, c, 1:].any(axis=1))
            # negated: this round's Resolve-physical negation, beyond what the dazed field shows
            np.testing.assert_array_equal(obs[:, c, names.index("self.negated")],
                                          (state[:, member + engine.M_NEGATED] / 3).astype(np.float32))
            for j, foe in enumerate(foe_sides[g.member_sides[c]]):
                np.testing.assert_array_equal(obs[:, c, names.index(f"foe{j}.in_fight")],
                                              state[:, engine.S_MEMBERS + engine.M_WIDTH * foe + engine.M_IN])
                np.testing.assert_array_equal(obs[:, c, names.index(f"foe{j}.stun_left")],
                                              obs[:, foe, names.index("self.stun_left")])
        # acting_place: the place in this round's acting order among the members still in
        for e in range(len(state)):
            order = [int(state[e, engine.S_MEMBERS + engine.M_WIDTH * slot + engine.M_ORDER])
                     for slot in range(state[e, engine.S_ORDERED])]
            standing = [c for c in order if state[e, engine.S_MEMBERS + engine.M_WIDTH * c + engine.M_IN]]
            for c in range(g.members):
                place = standing.index(c) / (g.members - 1) if c in standing else 0
                assert obs[e, c, names.index("self.acting_place")] == np.float32(place)
                places.add((c, place))
        negated.update(obs[:, 0, names.index("self.negated")].tolist())
        np.testing.assert_array_equal(obs[:, :, names.index("round")],
                                      np.repeat(state[:, S_LENGTH, None] / 8, g.members, axis=1).astype(np.float32))
    # the thugs and the shooter tie their action checks: the tie-break words order them differently
    assert {(2, 0.5), (2, 0.75), (3, 0.5), (3, 0.75)} <= places
    assert len(negated) > 2  # the fighter's Resolve-physical negates 0 to 3 steps
