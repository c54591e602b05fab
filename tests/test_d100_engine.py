"""The d100 engine (combatsim.d100.engine): its fights are the fight kernels' fights, outcome by
outcome; the Python and Numba engines agree step by step under any actions; external actions,
masks and observations do what docs/d100.md ("The engine") says."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from combatsim.d100 import api, engine, layout, model, reference
from combatsim.d100.game import game
from combatsim.engine import (
    DRAW,
    RUNNING,
    S_LENGTH,
    S_OUTCOME,
    S_STEPS,
    SCRIPTED,
    UNFINISHED,
    WINNER_DRAW,
    WINNER_UNFINISHED,
    engine_kernels,
)
from combatsim.registry import get_kernel
from combatsim.scenario import example_names, example_path, load

from .test_d100_kernels import SEEDS, SKIRMISH, _lane_fighters, combatants, run_fight

NONE, FLEE, DISENGAGE, TOGGLE = (layout.ACTION_NONE, layout.ACTION_FLEE, layout.ACTION_DISENGAGE,
                                 layout.ACTION_TOGGLE_DUAL_WIELD)


def d100_examples():
    return [name for name in example_names() if load(example_path(name)).ruleset == "d100"]


def example_game(name, overrides=()):
    scenario = load(example_path(name), list(overrides))
    members = len(scenario.spec["combatants"])
    return game(scenario.spec, [f"member {c}" for c in range(members)], scenario.side_names)


def team_game(fighters, passes=2, max_rounds=6, ambush_side=None, taper="halving"):
    """A Game of ``fighters`` (any side order: the engine takes the table as it is)."""
    spec = {"combatants": list(fighters), "passes": passes, "max_rounds": max_rounds, "ambush_side": ambush_side,
            "taper": taper}
    return game(spec, [f"member {c}" for c in range(len(fighters))], ("side 0", "side 1"))


def assert_fights_equal(seed, start, count, table, passes, max_rounds, ambush_side, oracle="cython"):
    expected = run_fight(oracle, seed, start, count, table, passes, max_rounds, ambush_side)
    got = run_fight("python", seed, start, count, table, passes, max_rounds, ambush_side)
    for value, want in zip(got, expected, strict=True):
        np.testing.assert_array_equal(value, want)
    return expected


# The engine's fight is the fight kernels' fight --------------------------------------------------
def test_the_reference_fight_is_the_engine():
    assert reference.fight is engine.fight
    assert get_kernel("d100.fight", "python") is engine.fight


@pytest.mark.parametrize("name", d100_examples())
@pytest.mark.parametrize("ambush_side", [-1, 0, 1])
def test_engine_fights_equal_the_fight_kernel_on_every_example(name, ambush_side):
    spec = load(example_path(name)).spec
    table = api.fight_table(spec["combatants"], spec["taper"])
    for seed in (0, 7, 2**64 - 1):
        expected = assert_fights_equal(seed, 3, 150, table, spec["passes"], spec["max_rounds"], ambush_side)
        assert expected[0][layout.F_ATTACKS] > 0


@pytest.mark.parametrize("fighters", [SKIRMISH, _lane_fighters()], ids=["skirmish", "lanes"])
def test_engine_fights_equal_the_fight_kernel_on_teams(fighters):
    table = api.fight_table(fighters, model.TAPERS[0])
    for passes, max_rounds, ambush_side in ((2, 20, 1), (1, 3, 0), (3, 8, -1)):
        expected = assert_fights_equal(2026, 0, 200, table, passes, max_rounds, ambush_side)
    counts = expected[0]
    # Every ending happens in these fights, so every branch of the ending is compared.
    assert min(counts[layout.F_WINS], counts[layout.F_WINS + 1], counts[layout.F_ESCAPES + 1]) > 0


@st.composite
def fight_cases(draw):
    side0 = draw(st.lists(combatants(0), min_size=1, max_size=3))
    side1 = draw(st.lists(combatants(1), min_size=1, max_size=3))
    order = draw(st.permutations(side0 + side1))
    table = api.fight_table(order, draw(st.sampled_from(model.TAPERS)))
    return (draw(SEEDS), draw(st.integers(0, 2**40)), draw(st.integers(1, 12)), table, draw(st.integers(1, 3)),
            draw(st.integers(1, 8)), draw(st.sampled_from([-1, 0, 1])))


@settings(max_examples=60)
@given(fight_cases())
def test_engine_fights_equal_the_fight_kernels_on_generated_teams(case):
    assert_fights_equal(*case, oracle="cython")
    assert_fights_equal(*case, oracle="numba")


@pytest.mark.parametrize("seed", [99, 2**64 - 1])
def test_compiled_engine_fights_equal_the_fight_kernel(seed):
    compiled = engine_kernels("combatsim.d100.engine", "numba")
    table = api.fight_table(SKIRMISH, model.TAPERS[0])
    expected = run_fight("cython", seed, 5, 2000, table, 2, 20, 1)
    counts = np.zeros(layout.FIGHT_COUNTS + 21 + len(table), dtype=np.int64)
    winner, rounds = np.zeros(2000, dtype=np.int8), np.zeros(2000, dtype=np.int32)
    compiled.fight(np.uint64(seed), 5, 2000, table, 2, 20, 1, counts, winner, rounds)
    np.testing.assert_array_equal(counts, expected[0])  # the rounds histogram and who stood included
    np.testing.assert_array_equal(winner, expected[1])
    np.testing.assert_array_equal(rounds, expected[2])


# Stepping ----------------------------------------------------------------------------------------
def run_episodes(the_game, backend, seeds, indices, choose, max_steps=400):
    """Resets every env, then steps until all fights end; ``choose(step, mask, rng)`` gives the
    actions. Returns every step's (state, counts, obs, mask) copies."""
    kernels = the_game.engine(backend)
    b = the_game.buffers(len(seeds))
    b["seeds"][:] = seeds
    b["indices"][:] = indices
    kernels.reset(the_game.table, the_game.config, b["seeds"], b["indices"], b["which"], b["state"], b["counts"],
                  b["obs"], b["mask"])
    history = [tuple(b[key].copy() for key in ("state", "counts", "obs", "mask"))]
    for k in range(max_steps):
        if (b["state"][:, S_OUTCOME] != RUNNING).all():
            break
        b["actions"][:] = choose(k, b["mask"])
        kernels.step(the_game.table, the_game.config, b["seeds"], b["state"], b["actions"], b["counts"], b["obs"],
                     b["mask"])
        history.append((*(b[key].copy() for key in ("state", "counts", "obs", "mask")), b["actions"].copy()))
    return history


def random_actions(seed, illegal=0.2, scripted=0.3):
    """Per member: SCRIPTED, a random legal action, or (sometimes) a random masked one."""
    rng = np.random.default_rng(seed)

    def choose(step, mask):
        n, m = mask.shape[:2]
        actions = np.empty((n, m), dtype=np.int64)
        for e in range(n):
            for c in range(m):
                legal = np.flatnonzero(mask[e, c])
                masked = np.flatnonzero(mask[e, c] == 0)
                draw = rng.random()
                if draw < scripted:
                    actions[e, c] = SCRIPTED
                elif draw < scripted + illegal and len(masked):
                    actions[e, c] = rng.choice(masked)
                else:
                    actions[e, c] = rng.choice(legal)
        return actions

    return choose


GAMES = {
    "skirmish": lambda: team_game(SKIRMISH, passes=2, max_rounds=8, ambush_side=1),
    "lanes": lambda: team_game(_lane_fighters(), passes=3, max_rounds=5, ambush_side=0),
    "uneven": lambda: team_game([*SKIRMISH[:3], SKIRMISH[1]], passes=1, max_rounds=12),
    **{name: (lambda name=name: example_game(name)) for name in d100_examples()},
}


@pytest.mark.parametrize("name", list(GAMES))
def test_python_and_numba_engines_agree_step_by_step(name):
    the_game = GAMES[name]()
    n = 24
    seeds = np.arange(n, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    indices = np.arange(n, dtype=np.int64) * 3 + 1
    python = run_episodes(the_game, "python", seeds, indices, random_actions(5))
    numba = run_episodes(the_game, "numba", seeds, indices, random_actions(5))
    assert len(python) == len(numba)
    for step, (want, got) in enumerate(zip(python, numba, strict=True)):
        for value, expected in zip(got, want, strict=True):
            np.testing.assert_array_equal(value, expected, err_msg=f"step {step}")
    final_state, final_counts = python[-1][0], python[-1][1]
    assert (final_state[:, S_OUTCOME] != RUNNING).all()
    assert final_counts[:, engine.C_MASKED].sum() > 0


def scripted_actions(step, mask):
    return np.full(mask.shape[:2], SCRIPTED, dtype=np.int64)


@pytest.mark.parametrize("name", list(GAMES))
def test_a_step_by_step_scripted_episode_is_the_fight(name):
    the_game = GAMES[name]()
    passes, max_rounds, ambush = (int(the_game.config[f]) for f in (engine.G_PASSES, engine.G_MAX_ROUNDS,
                                                                     engine.G_AMBUSH_SIDE))
    n = 40
    history = run_episodes(the_game, "numba", np.full(n, 77, dtype=np.uint64), np.arange(n) + 10, scripted_actions)
    state, counts = history[-1][0], history[-1][1]
    fixed, winner, rounds = run_fight("cython", 77, 10, n, the_game.table, passes, max_rounds, ambush)
    np.testing.assert_array_equal(counts[:, : layout.FIGHT_COUNTS].sum(axis=0), fixed[: layout.FIGHT_COUNTS])
    members = len(the_game.table)
    standing = [np.count_nonzero(engine.member_standing(state, slice(None), members, c)) for c in range(members)]
    np.testing.assert_array_equal(fixed[layout.FIGHT_COUNTS + max_rounds + 1:], standing)
    outcome = state[:, S_OUTCOME]
    expected = np.where(winner == WINNER_DRAW, DRAW, np.where(winner == WINNER_UNFINISHED, UNFINISHED, winner))
    np.testing.assert_array_equal(outcome, expected)
    np.testing.assert_array_equal(state[:, S_LENGTH], rounds)
    assert (counts[:, engine.C_MASKED] == 0).all()


def declared_actions(history, m):
    """The actions the scripted members declared at each step (the state keeps them; a member
    out of the fight declares nothing: "none")."""
    columns = [engine.S_MEMBERS + c * engine.MEMBER_FIELDS + engine.M_ACTION for c in range(m)]
    return [state[:, columns].copy() for state, *_ in history[1:]]


@pytest.mark.parametrize("name", list(GAMES))
def test_external_actions_equal_to_the_scripted_choice_give_the_same_fight(name):
    the_game = GAMES[name]()
    n, m = 16, the_game.members
    seeds, indices = np.full(n, 3, dtype=np.uint64), np.arange(n) * 5
    scripted = run_episodes(the_game, "numba", seeds, indices, scripted_actions)
    chosen = declared_actions(scripted, m)
    # One member at a time plays the scripted choices from outside, the others stay scripted.
    for c in range(m):
        def replay(step, mask, c=c):
            actions = np.full(mask.shape[:2], SCRIPTED, dtype=np.int64)
            actions[:, c] = chosen[step][:, c]
            return actions

        external = run_episodes(the_game, "python" if c == 0 else "numba", seeds, indices, replay)
        assert len(external) == len(scripted)
        for (state, counts, obs, mask, *_), (want_state, want_counts, want_obs, want_mask, *_) in zip(
                external, scripted, strict=True):
            np.testing.assert_array_equal(state, want_state)
            np.testing.assert_array_equal(counts, want_counts)
            np.testing.assert_array_equal(obs, want_obs)
            np.testing.assert_array_equal(mask, want_mask)


@pytest.mark.parametrize("name", ["skirmish", "uneven"])
def test_a_masked_action_does_nothing_and_is_counted(name):
    """Each masked action replaced by "none" gives the same fight, one masked count fewer."""
    the_game = GAMES[name]()
    n = 16
    seeds, indices = np.arange(n, dtype=np.uint64), np.zeros(n, dtype=np.int64)
    mixed = run_episodes(the_game, "numba", seeds, indices, random_actions(11, illegal=0.4, scripted=0.2))
    given_actions = [entry[4] for entry in mixed[1:]]
    masks = [entry[3] for entry in mixed[:-1]]

    def unmasked(step, mask):
        actions = given_actions[step].copy()
        actions[(actions >= 0) & (np.take_along_axis(masks[step], np.maximum(actions, 0)[..., None], 2)[..., 0] == 0)] \
            = NONE
        return actions

    clean = run_episodes(the_game, "numba", seeds, indices, unmasked)
    masked_total = 0
    for step in range(len(given_actions)):
        actions, mask = given_actions[step], masks[step]
        illegal = (actions >= 0) & (np.take_along_axis(mask, np.maximum(actions, 0)[..., None], 2)[..., 0] == 0)
        running = mixed[step][0][:, S_OUTCOME] == RUNNING  # an ended fight takes no more actions
        masked_total += int(illegal[running].sum())
    assert masked_total > 0
    for (state, counts, obs, mask, *_), (want_state, want_counts, want_obs, want_mask, *_) in zip(
            mixed, clean, strict=True):
        np.testing.assert_array_equal(state, want_state)
        np.testing.assert_array_equal(counts[:, : layout.FIGHT_COUNTS], want_counts[:, : layout.FIGHT_COUNTS])
        np.testing.assert_array_equal(obs, want_obs)
        np.testing.assert_array_equal(mask, want_mask)
    assert mixed[-1][1][:, engine.C_MASKED].sum() == masked_total
    assert (clean[-1][1][:, engine.C_MASKED] == 0).all()


# Masks and observations --------------------------------------------------------------------------
def member_field(state, field, c):
    return state[:, engine.S_MEMBERS + c * engine.MEMBER_FIELDS + field]


@pytest.mark.parametrize("name", list(GAMES))
def test_masks_follow_the_rules_and_shapes_follow_the_names(name):
    the_game = GAMES[name]()
    m = the_game.members
    history = run_episodes(the_game, "python", np.arange(12, dtype=np.uint64), np.zeros(12, dtype=np.int64),
                           random_actions(2))
    assert history[0][2].shape[1:] == (m, len(the_game.observation_names))
    assert history[0][3].shape[1:] == (m, len(the_game.action_names))
    assert len(the_game.observation_names) == engine.observation_size(
        int(the_game.config[engine.G_ALLY_SLOTS]), int(the_game.config[engine.G_FOE_SLOTS]))
    assert len(set(the_game.observation_names)) == len(the_game.observation_names)
    assert the_game.action_names == engine.ACTION_NAMES and the_game.count_names[-1] == "masked"
    seen_engaged = False
    for state, _, obs, mask, *_ in history:
        assert (mask[..., NONE] == 1).all()  # always one legal action
        running = state[:, S_OUTCOME] == RUNNING
        for c in range(m):
            active = member_field(state, engine.M_ACTIVE, c) != 0
            engaged = member_field(state, engine.M_PARTNER, c) >= 0
            surprised = (member_field(state, engine.M_SURPRISED, c) != 0) & (state[:, S_LENGTH] == 0)
            acting = active & ~surprised
            seen_engaged |= bool((engaged & running).any())
            assert (mask[~acting, c, 1:] == 0).all()
            assert (mask[acting, c, FLEE] == ~engaged[acting]).all()
            assert (mask[acting, c, DISENGAGE] == engaged[acting]).all()
            allowed = the_game.table[c, layout.C_DUAL_ALLOWED] != 0
            dual_on = member_field(state, engine.M_DUAL, c) != 0
            assert (mask[acting, c, TOGGLE] == (allowed & ~dual_on[acting])).all()
            for action in (layout.ACTION_ATTACK, layout.ACTION_QUICK_ATTACK, layout.ACTION_DEFEND,
                           layout.ACTION_PRESS, layout.ACTION_CHARGE, layout.ACTION_TAKE_COVER):
                assert (mask[acting, c, action] == 1).all()
            # the member's own "in the fight" field, and its "self" block in general
            assert (obs[:, c, the_game.observation_names.index("self.in_fight")] == active).all()
        assert ((obs >= 0) & (obs <= 1)).all()
    assert seen_engaged


def test_observations_name_allies_and_foes_in_table_order():
    the_game = team_game([*SKIRMISH[:3], SKIRMISH[1]], passes=1, max_rounds=4)  # sides of 3 and 1
    names = the_game.observation_names
    assert names[:2] == ("pass", "round")
    assert names[2 : 2 + len(engine.MEMBER_NAMES)] == tuple(f"self.{f}" for f in engine.MEMBER_NAMES)
    assert "ally1.in_fight" in names and "ally2.in_fight" not in names and "foe2.in_fight" in names
    b = the_game.buffers(1)
    the_game.engine("python").reset(the_game.table, the_game.config, b["seeds"], b["indices"], b["which"],
                                    b["state"], b["counts"], b["obs"], b["mask"])
    obs = b["obs"][0]
    armour = [int(row[layout.C_ARMOUR]) / 2 for row in the_game.table]
    field = names.index
    # member 3 (side 0): allies 0, 1; foe 2; no third foe (padding: all zero)
    assert obs[3, field("self.armour")] == armour[3]
    assert [obs[3, field(f"ally{k}.armour")] for k in range(2)] == [armour[0], armour[1]]
    assert obs[3, field("foe0.armour")] == armour[2] and obs[3, field("foe0.in_fight")] == 1
    assert obs[3, field("foe0.target_of_self")] == 1
    assert obs[3, field("foe1.in_fight")] == 0 and not obs[3, field("foe1.in_fight") :].any()
    # member 2 (side 1): no allies (padding), foes 0, 1, 3 in table order
    assert not obs[2, field("ally0.in_fight") : field("foe0.in_fight")].any()
    assert [obs[2, field(f"foe{k}.armour")] for k in range(3)] == [armour[0], armour[1], armour[3]]
    assert obs[2, field("foe0.target_of_self")] == 1 and obs[2, field("foe1.target_of_self")] == 0


def test_a_surprised_member_may_only_do_nothing_in_the_first_pass():
    hidden = api.Combatant(0, 60, api.Weapon(30, 2), parkour=50, perception=50)
    sleepy = api.Combatant(1, 10, api.Weapon(30, 2))
    the_game = team_game([hidden, sleepy], passes=2, max_rounds=3, ambush_side=0)
    n = 50
    history = run_episodes(the_game, "python", np.arange(n, dtype=np.uint64), np.zeros(n, dtype=np.int64),
                           lambda step, mask: np.full(mask.shape[:2], layout.ACTION_ATTACK, dtype=np.int64))
    state, counts, obs, mask = history[0]
    surprised = member_field(state, engine.M_SURPRISED, 1) != 0
    assert 0 < surprised.sum() < n and counts[:, layout.F_SURPRISED].sum() == surprised.sum()
    assert (mask[surprised, 1, 1:] == 0).all() and (mask[~surprised, 1, 1:].sum(axis=1) == 7).all()
    assert (obs[:, 1, the_game.observation_names.index("self.surprised")] == surprised).all()
    # its "attack" in pass 1 is masked: counted, and no attack by it (side 0 attacked once)
    after = history[1]
    assert (after[1][surprised, engine.C_MASKED] == 1).all() and (after[1][~surprised, engine.C_MASKED] == 0).all()
    assert (after[1][surprised, layout.F_ATTACKS] == 1).all()
    assert (after[2][:, 1, the_game.observation_names.index("self.surprised")] == 0).all()


def test_steps_count_passes_and_the_round_limit_is_unfinished():
    # Two members who only ever defend: every fight runs to the round limit.
    calm = api.Combatant(0, 50, api.Weapon(0, 0), policy=(0, 0, 100, 0, 0, 0, 0, 0))
    the_game = team_game([calm, api.Combatant(1, 50, api.Weapon(0, 0), policy=(0, 0, 100, 0, 0, 0, 0, 0))],
                         passes=3, max_rounds=4)
    history = run_episodes(the_game, "numba", np.arange(4, dtype=np.uint64), np.zeros(4, dtype=np.int64),
                           scripted_actions)
    state, counts = history[-1][:2]
    assert len(history) == 1 + 12
    assert (state[:, S_OUTCOME] == UNFINISHED).all() and (state[:, S_STEPS] == 12).all()
    assert (state[:, S_LENGTH] == 4).all() and (counts[:, layout.F_UNFINISHED] == 1).all()
    assert (counts[:, layout.F_ROUNDS] == 4).all()


def test_damage_columns_fill_the_layout_block():
    """Each weapon, cover, target armour and dual wield has its own pair of bars, together exactly the
    table's columns C_DAMAGE .. C_POLICY - 1."""
    columns = sorted(engine.damage_column(weapon, cover, armour, dual) + bar for weapon in range(2)
                     for cover in range(2) for armour in range(3) for dual in range(2) for bar in range(2))
    assert columns == list(range(layout.C_DAMAGE, layout.C_POLICY))


def test_game_checks_its_names():
    spec = load(example_path("d100_duel")).spec
    with pytest.raises(ValueError, match="member_names"):
        game(spec, ["one"], ("a", "b"))
    the_game = game(spec, ["Veteran", "Guard"], ["Veteran", "Guard"])
    assert the_game.member_sides == (0, 1) and the_game.step_name == "pass" and the_game.length_unit == "round"
    assert the_game.state_size == engine.state_size(2)


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_reset_only_touches_the_chosen_envs_and_ended_fights_stay_as_they_are(backend):
    the_game = GAMES["skirmish"]()
    kernels = the_game.engine(backend)
    b = the_game.buffers(6)
    b["seeds"][:] = 21
    b["indices"][:] = np.arange(6)
    args = (b["state"], b["counts"], b["obs"], b["mask"])
    kernels.reset(the_game.table, the_game.config, b["seeds"], b["indices"], b["which"], *args)
    for _ in range(200):
        kernels.step(the_game.table, the_game.config, b["seeds"], b["state"], b["actions"], b["counts"], b["obs"],
                     b["mask"])
    assert (b["state"][:, S_OUTCOME] != RUNNING).all()
    ended = [array.copy() for array in args]
    kernels.step(the_game.table, the_game.config, b["seeds"], b["state"], b["actions"], b["counts"], b["obs"],
                 b["mask"])
    for array, before in zip(args, ended, strict=True):
        np.testing.assert_array_equal(array, before)
    # Reset envs 1 and 4 only: they start again (fight 1 and 4 as from a fresh reset), the others keep their end.
    b["which"][:] = 0
    b["which"][[1, 4]] = 1
    kernels.reset(the_game.table, the_game.config, b["seeds"], b["indices"], b["which"], *args)
    fresh = the_game.buffers(6)
    fresh["seeds"][:] = 21
    fresh["indices"][:] = np.arange(6)
    kernels.reset(the_game.table, the_game.config, fresh["seeds"], fresh["indices"], fresh["which"], fresh["state"],
                  fresh["counts"], fresh["obs"], fresh["mask"])
    for array, before, new in zip(args, ended, (fresh["state"], fresh["counts"], fresh["obs"], fresh["mask"]),
                                  strict=True):
        np.testing.assert_array_equal(array[[0, 2, 3, 5]], before[[0, 2, 3, 5]])
        np.testing.assert_array_equal(array[[1, 4]], new[[1, 4]])


def test_observations_of_a_known_state():
    """A duel after a flee under fire failed once: the fleeing member's flee target rose by 20,
    it is in cover, targeted this round, and its foe sees it so."""
    runner = api.Combatant(0, 50, api.Weapon(30, 2), parkour=30, policy=(0, 0, 0, 100, 0, 0, 0, 0))
    shooter = api.Combatant(1, 0, api.Weapon(30, 2, category="pistol"), torso="light",
                            policy=(100, 0, 0, 0, 0, 0, 0, 0))
    the_game = team_game([runner, shooter], passes=2, max_rounds=3)
    n = 64
    history = run_episodes(the_game, "python", np.arange(n, dtype=np.uint64), np.zeros(n, dtype=np.int64),
                           scripted_actions)
    state, counts, obs, _, _ = history[1]
    names = the_game.observation_names
    failed = member_field(state, engine.M_FAILED_FLEE, 0) == 1
    assert 0 < failed.sum() < n  # flee target 40: some runners fail, the others escape
    assert (counts[~failed, layout.F_ESCAPES] == 1).all()
    for field, value in (("self.flee_target", 0.6), ("self.in_cover", 1), ("self.targeted", 1), ("self.in_fight", 1),
                         ("foe0.ranged", 1), ("foe0.armour", 0.5), ("foe0.target_of_self", 1), ("pass", 0.5),
                         ("round", 1 / 3), ("foe0.attack_target", 0)):
        np.testing.assert_allclose(obs[failed, 0, names.index(field)], value, rtol=1e-6, err_msg=field)
    for field, value in (("foe0.flee_target", 0.6), ("foe0.in_cover", 1), ("foe0.targeted", 1), ("self.armour", 0.5)):
        np.testing.assert_allclose(obs[failed, 1, names.index(field)], value, rtol=1e-6, err_msg=field)
    assert (obs[~failed, 1, names.index("foe0.escaped")] == 1).all()
    assert (obs[~failed, 1, names.index("foe0.in_fight")] == 0).all()


def test_action_names_follow_the_layout_numbers():
    assert engine.ACTION_NAMES[layout.ACTION_NONE] == "none"
    assert tuple(engine.ACTION_NAMES[a] for a in layout.POLICY_ACTIONS) == layout.POLICY_NAMES
    assert engine.ACTION_NAMES[layout.ACTION_TOGGLE_DUAL_WIELD] == "toggle_dual_wield"
    assert len(engine.ACTION_NAMES) == engine.ACTIONS == layout.ACTION_TOGGLE_DUAL_WIELD + 1
