"""The TSS steps' lockstep lanes (kernels/rl/tss_lanes.h and its Numba twin tss_lanes_nb.py)
against the reference's step, each test over both backends.

``tss_lanes_alone`` runs the C lanes on envs 0 .. 63 without the seeds (the generator's call is
the one the other rulesets share), so there they read only the step's first block of four words
and leave resets to the body: which envs they take is exact and checked here; the Numba lanes
are run the same way (an empty seeds array). In the whole step they also draw the further blocks
and resetting envs' first blocks; the whole-step tests check those envs against the reference
buffer by buffer, and the Numba lanes, which can be called with the seeds, are also checked to
take exactly the envs that fit their words.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from combatsim.rl import tss_reference
from combatsim.rl._stream import new_state
from combatsim.rl.envs import Buffers
from combatsim.rl.rulesets import RULESETS, tss_params

R = tss_reference
#: Fewest envs the lanes take (the header's TSS_LANES_MIN; the other rulesets' lanes agree).
LANES_MIN = 16
#: The words the lanes read without the seeds: the step's first block.
FIRST_BLOCK = 4
#: The words the lanes read with the seeds (the header's TSS_LANE_WORDS).
LANE_WORDS = 12
#: The lanes' twins.
BACKENDS = ["cython", "numba"]

tss_lane_persona = st.fixed_dictionaries({
    "skill": st.sampled_from(["14/7/3", "20/10/5", "8/4/2", 12, "30/25/20"]),
    "action_check": st.sampled_from(["+14/13/6/3", "+10/9/4/2", "+20/19/15/10"]),
    "actions_per_round": st.integers(1, 4), "situation_steps": st.integers(-10, 10), "two_weapons": st.booleans(),
    "ambidexterity": st.booleans(),
    "damage_track": st.sampled_from(["d4w/d4+2w/d4-1m", "d6s/d6+1w/d4+1m", "2d4s/d8w/3d6m", "0s/d12-3w/4m",
                                     "d20m/2d10w/d2s"]),
    "weapon_grade": st.sampled_from(["marginal", "ordinary", "good", "amazing"]),
    "armour_die": st.sampled_from([0, 4, 6, 12]),
    "armour_grade": st.sampled_from(["marginal", "ordinary", "good", "amazing"]),
    "durability": st.sampled_from(["10/10/5", "4/4/2", "20/15/8", "1/1/1"]),
})
tss_globals = st.fixed_dictionaries({"max_steps": st.integers(1, 40), "one_step_shift": st.booleans()})


def cython():
    return importlib.import_module("combatsim.kernels.rl.tss_cy")


def numba_lanes():
    return importlib.import_module("combatsim.kernels.rl.tss_lanes_nb")


def whole_step(backend):
    """The backend's whole vector step (the lanes and the shared body)."""
    return importlib.import_module(f"combatsim.kernels.rl.tss_{'cy' if backend == 'cython' else 'nb'}").tss_step


def buffers(params, seeds, episode=0):
    b = Buffers(RULESETS["tss"], len(seeds))
    b.seeds[:] = seeds
    b.state[:, R.S_EPISODE] = episode
    R.tss_reset(params, b.seeds, b.state, np.ones(len(seeds), np.uint8), b.obs, b.mask)
    return b


def copy(b):
    return [b.state.copy(), b.obs.copy(), b.mask.copy(), b.reward.copy(), b.terminated.copy(), b.truncated.copy()]


def step_both(backend, params, twin, reference, policies, shaping):
    """One step of the backend's whole vector step and of the reference, buffer by buffer equal."""
    whole_step(backend)(params, twin.seeds, twin.state, twin.actions, policies, shaping, twin.obs, twin.reward,
                        twin.terminated, twin.truncated, twin.mask)
    R.tss_step(params, reference.seeds, reference.state, reference.actions, policies, shaping, reference.obs,
               reference.reward, reference.terminated, reference.truncated, reference.mask)
    for got, want in zip(copy(twin), copy(reference), strict=True):
        np.testing.assert_array_equal(got, want)


def catch_up(b, values):
    for got, want in zip((b.state, b.obs, b.mask, b.reward, b.terminated, b.truncated), values, strict=True):
        got[:] = want


def lanes_alone(params, b, policies, shaping, backend="cython", keyed=False):
    """The lanes alone on buffers ``b`` (envs 0 .. 63; ``keyed``: with the seeds, Numba only):
    which envs they stepped, as booleans."""
    if backend == "cython":
        assert not keyed
        done = cython().tss_lanes_alone(params, b.seeds, b.state, b.actions, policies, shaping, b.obs, b.reward,
                                        b.terminated, b.truncated, b.mask)
    else:
        from combatsim.kernels.rl import _stream_nb

        ahead = _stream_nb.new_state()
        _stream_nb.stream_ahead(b.seeds, b.state, 0, R.WORDS_PER_STEP, ahead)
        seeds = b.seeds if keyed else np.empty(0, dtype=np.uint64)
        done = numba_lanes().tss_lanes(params, b.state, b.actions, policies, shaping, b.obs, b.reward, b.terminated,
                                       b.truncated, b.mask, 0, ahead, seeds) % 2**64
    assert done >> len(b.seeds) == 0
    return np.array([(done >> e) & 1 for e in range(len(b.seeds))], dtype=bool)


def reference_step_by_env(params, b, policies, shaping, skip=(), keyed=False):
    """The reference's step, one env at a time (each env's step is its own), reading each env's
    stream afterwards: returns the envs the lanes must take without the seeds, a step (not a reset)
    whose dice used at most the first block's words and no Lemire-rejected word (no retry word);
    with the seeds (``keyed``), a step whose dice used at most LANE_WORDS words, or a reset, and no
    rejected word. Envs in ``skip`` are left as they are (and not to be taken)."""
    must = np.zeros(len(b.seeds), dtype=bool)
    for e in range(len(b.seeds)):
        if e in skip:
            continue
        one = slice(e, e + 1)
        reset, retries, t = b.state[e, R.S_NEEDS_RESET] != 0, b.state[e, R.S_RETRIES], b.state[e, R.S_T]
        rng = new_state()
        R._step_all(params, b.seeds[one], b.state[one], b.actions[one], policies, shaping, b.obs[one], b.reward[one],
                    b.terminated[one], b.truncated[one], b.mask[one], rng)
        words = rng.stream.words_used - (t + 1) * R.WORDS_PER_STEP
        if keyed and reset:
            must[e] = rng.stream.retries_used == 0  # the new episode's stream starts with no retries
        else:
            must[e] = (not reset and words <= (LANE_WORDS if keyed else FIRST_BLOCK)
                       and rng.stream.retries_used == retries)
    return must


def assert_lanes_match(lanes, reference, before, stepped):
    """Envs the lanes stepped equal the reference's step; the others are as they were."""
    for got, want, old in zip(copy(lanes), copy(reference), before, strict=True):
        np.testing.assert_array_equal(got[stepped], want[stepped])
        np.testing.assert_array_equal(got[~stepped], old[~stepped])


@pytest.mark.parametrize(("backend", "keyed"), [("cython", False), ("numba", False), ("numba", True)])
@given(agent=tss_lane_persona, opponent=tss_lane_persona, globals_=tss_globals, seed=st.integers(0, 2**64 - 64),
       envs=st.integers(LANES_MIN, 64), external=st.booleans(), shaping=st.sampled_from([0.0, 0.5, -0.25]),
       action_seed=st.integers(0, 1000))
def test_tss_lanes_step_exactly_as_the_reference(backend, keyed, agent, opponent, globals_, seed, envs, external,
                                                 shaping, action_seed):
    """Each env the TSS lanes step ends exactly as the reference's step leaves it, the others
    untouched; and they step exactly the envs whose step needs no more than the first block's
    words (with the seeds: LANE_WORDS words, or a reset) and meets no rejected word. Every
    action, and the illegal -1, 4 and 5."""
    params = tss_params(agent, opponent, **globals_)
    policies = np.array([0, 0 if external else 1], dtype=np.int64)
    seeds = np.arange(seed, seed + envs, dtype=np.uint64)
    lanes, reference = buffers(params, seeds, 7), buffers(params, seeds, 7)
    rng = np.random.default_rng(action_seed)
    taken = 0
    for _ in range(30):
        lanes.actions[:] = reference.actions[:] = rng.integers(-1, R.ACTIONS + 2, size=(envs, 2))
        before = copy(lanes)
        stepped = lanes_alone(params, lanes, policies, shaping, backend, keyed)
        must = reference_step_by_env(params, reference, policies, shaping, keyed=keyed)
        assert_lanes_match(lanes, reference, before, stepped)
        np.testing.assert_array_equal(stepped, must)
        taken += stepped.sum()
        catch_up(lanes, copy(reference))
    assert taken > 0


@pytest.mark.parametrize("backend", BACKENDS)
@given(agent=tss_lane_persona, opponent=tss_lane_persona, globals_=tss_globals, seed=st.integers(0, 2**64 - 200),
       envs=st.integers(LANES_MIN, 140), external=st.booleans(), shaping=st.sampled_from([0.0, 0.5]),
       action_seed=st.integers(0, 1000))
def test_tss_step_equals_the_reference(backend, agent, opponent, globals_, seed, envs, external, shaping, action_seed):
    """The whole step of either twin (the lanes drawing further blocks and resets' first blocks,
    the body the rest) leaves every buffer as the reference's step does, step after step."""
    params = tss_params(agent, opponent, **globals_)
    policies = np.array([0, 0 if external else 1], dtype=np.int64)
    seeds = np.arange(seed, seed + envs, dtype=np.uint64)
    twin, reference = buffers(params, seeds, 3), buffers(params, seeds, 3)
    rng = np.random.default_rng(action_seed)
    for _ in range(12):
        twin.actions[:] = reference.actions[:] = rng.integers(-1, R.ACTIONS + 2, size=(envs, 2))
        step_both(backend, params, twin, reference, policies, shaping)


@pytest.mark.parametrize("backend", BACKENDS)
def test_tss_step_of_many_envs_equals_the_reference(backend):
    """200 envs (three groups of 64 through the lanes, the last 8 through the body alone) of the
    bench's duel and of two-weapon fighters, 40 steps: every buffer as the reference's, resets and all."""
    for params, external in ((RULESETS["tss"].build(), False),
                             (tss_params({"situation_steps": -2, "ambidexterity": True}, {"armour_die": 0}), True)):
        policies = np.array([0, 0 if external else 1], dtype=np.int64)
        seeds = np.arange(40, 240, dtype=np.uint64)
        twin, reference = buffers(params, seeds), buffers(params, seeds)
        rng = np.random.default_rng(1)
        for _ in range(40):
            twin.actions[:] = reference.actions[:] = rng.integers(-1, R.ACTIONS + 1, size=(len(seeds), 2))
            step_both(backend, params, twin, reference, policies, 0.5)
        assert reference.state[:, R.S_EPISODE].sum() > 0  # episodes ended and restarted along the way


def retries_and_resets():
    """The bench duel's parameters and policies, and two copies of 64 envs holding 7 retries each,
    every other one due to reset."""
    params = RULESETS["tss"].build()
    seeds = np.arange(5, 69, dtype=np.uint64)
    pair = buffers(params, seeds), buffers(params, seeds)
    for b in pair:
        b.state[:, R.S_RETRIES] = 7
        b.state[::2, R.S_NEEDS_RESET] = 1
    return params, np.array([0, 1], dtype=np.int64), *pair


@pytest.mark.parametrize("backend", BACKENDS)
def test_tss_step_restarts_the_retry_count_at_a_reset(backend):
    """Retries left by rejected words (rare at random) carry over from step to step, and a reset
    starts its new episode's stream with none: the whole step of either twin leaves them as the
    reference does."""
    params, policies, twin, reference = retries_and_resets()
    step_both(backend, params, twin, reference, policies, 0.0)
    assert (reference.state[::2, R.S_RETRIES] == 0).all() and (reference.state[1::2, R.S_RETRIES] == 7).all()


def test_tss_numba_lanes_restart_the_retry_count_at_a_reset():
    """The Numba lanes with the seeds take every reset of the bench's duel, retries and all."""
    params, policies, lanes, reference = retries_and_resets()
    before = copy(lanes)
    stepped = lanes_alone(params, lanes, policies, 0.0, "numba", keyed=True)
    must = reference_step_by_env(params, reference, policies, 0.0, keyed=True)
    assert_lanes_match(lanes, reference, before, stepped)
    np.testing.assert_array_equal(stepped, must)
    assert stepped[::2].all()
    assert (lanes.state[::2, R.S_RETRIES] == 0).all()


@pytest.mark.parametrize("backend", BACKENDS)
def test_tss_lanes_leave_rejected_words_to_the_body(backend):
    """Envs whose damage die meets a Lemire-rejected word (a retry word follows) go to the body;
    the search below finds such steps (rare at random: the differential tests may never meet one)."""
    from combatsim.rng import DOMAIN_ITEM, block, rejection_threshold

    sides = 999760  # rejects 998096 of 2^32 words
    params = tss_params({"skill": "100/100/100", "action_check": "+0/100/100/100", "armour_die": 0},
                        {"skill": "100/100/100", "action_check": "+0/100/100/100", "armour_die": 0})
    for side in range(2):  # every hit is Amazing, and rolls one die of `sides` (no builder allows one so big)
        params[side * R.SIDE_PARAMS + R.P_TRACK + 6: side * R.SIDE_PARAMS + R.P_TRACK + 9] = (1, sides, 0)
    first_block = R.WORDS_PER_STEP // 4  # episode 0, step 1
    # Both sides attack in the Amazing phase, and the first hit (a mortal wound) ends the fight: word 0
    # is the first mover's control die, word 1 its damage die unless the control die is a 20.
    def damage_word_rejected(words):
        return (words[0] * 20) >> 32 != 19 and words[1] * sides % 2**32 < rejection_threshold(sides)

    rejected = [seed for seed in range(60_000) if damage_word_rejected(block(seed, 0, first_block, DOMAIN_ITEM))][:3]
    assert len(rejected) == 3
    seeds = np.array([*rejected, *range(60_000, 60_029)], dtype=np.uint64)
    lanes, reference = buffers(params, seeds), buffers(params, seeds)
    assert (lanes.state[:, R.S_SIDE + R.S_FIRST_PHASE] == 0).all()
    before = copy(lanes)
    policies = np.array([1, 1], dtype=np.int64)
    stepped = lanes_alone(params, lanes, policies, 0.0, backend)
    must = reference_step_by_env(params, reference, policies, 0.0)
    assert_lanes_match(lanes, reference, before, stepped)
    assert list(np.flatnonzero(~must)) == [0, 1, 2]
    np.testing.assert_array_equal(stepped, must)


@pytest.mark.parametrize("envs", [64, 61])
@pytest.mark.parametrize(("backend", "keyed"), [("cython", False), ("numba", False), ("numba", True)])
def test_tss_lanes_leave_states_the_reference_never_reaches_to_the_body(backend, keyed, envs):
    """A phase, first mover, first phase, aim or actions left out of range, a negative or huge
    track, or a step count at max_steps: that env goes to the body, its neighbours are still taken.
    Among them values whose low 32 bits look legal (the C lanes gather fields as int32), in a full
    group of eight envs and, with 61 envs, in the last partial one."""
    params = RULESETS["tss"].build()
    policies = np.array([0, 1], dtype=np.int64)
    seeds = np.arange(envs, dtype=np.uint64)
    lanes = buffers(params, seeds)
    s, o = R.S_SIDE, R.S_SIDE + R.SIDE_STATE
    odd = {1: (R.S_PHASE, 4), 2: (R.S_FIRST_MOVER, 2), 3: (s + R.S_FIRST_PHASE, -1), 4: (o + R.S_AIMED, 2),
           5: (s + R.S_ACTIONS_LEFT, 3), 6: (o + R.S_STUN, -1), 7: (s + R.S_MORTAL, 2**40), 8: (R.S_T, 200),
           envs - 1: (o + R.S_WOUND, 2**32 + 1), envs - 3: (R.S_PHASE, 2**32 + 1), 12: (s + R.S_STUN, -(2**32))}
    # (the reference is not asked to step these: a first mover of 2 is no side it could index)
    for e, (column, value) in odd.items():
        lanes.state[e, column] = value
    reference = buffers(params, seeds)
    reference.state[:] = lanes.state
    before = copy(lanes)
    stepped = lanes_alone(params, lanes, policies, 0.0, backend, keyed)
    must = reference_step_by_env(params, reference, policies, 0.0, skip=set(odd), keyed=keyed)
    np.testing.assert_array_equal(stepped, must)
    assert stepped.sum() > 20
    assert_lanes_match(lanes, reference, before, stepped)


@pytest.mark.parametrize("backend", BACKENDS)
def test_tss_lanes_take_most_of_the_bench_duel_from_the_first_block(backend):
    """The bench's duel (default personas, side 0 attacking, side 1 scripted): without the seeds
    the lanes take every step that fits the first block, well over half of them."""
    params = RULESETS["tss"].build()
    policies = np.array([0, 1], dtype=np.int64)
    seeds = np.arange(3, 67, dtype=np.uint64)
    lanes, reference = buffers(params, seeds), buffers(params, seeds)
    taken = 0
    for _ in range(40):
        before = copy(lanes)
        stepped = lanes_alone(params, lanes, policies, 0.0, backend)
        must = reference_step_by_env(params, reference, policies, 0.0)
        assert_lanes_match(lanes, reference, before, stepped)
        np.testing.assert_array_equal(stepped, must)
        taken += stepped.sum()
        catch_up(lanes, copy(reference))
    assert taken > 0.6 * 40 * len(seeds)


def test_tss_numba_lanes_with_the_seeds_take_nearly_all_of_the_bench_duel():
    """With the seeds the Numba lanes draw further blocks and resets' first blocks themselves: of
    the bench's duel they take every step that fits LANE_WORDS words and every reset, nearly all."""
    params = RULESETS["tss"].build()
    policies = np.array([0, 1], dtype=np.int64)
    seeds = np.arange(3, 67, dtype=np.uint64)
    lanes, reference = buffers(params, seeds), buffers(params, seeds)
    taken = resets = 0
    for _ in range(40):
        before = copy(lanes)
        stepped = lanes_alone(params, lanes, policies, 0.0, "numba", keyed=True)
        must = reference_step_by_env(params, reference, policies, 0.0, keyed=True)
        assert_lanes_match(lanes, reference, before, stepped)
        np.testing.assert_array_equal(stepped, must)
        taken += stepped.sum()
        resets += (stepped & (before[0][:, R.S_NEEDS_RESET] != 0)).sum()
        catch_up(lanes, copy(reference))
    assert taken > 0.95 * 40 * len(seeds)
    assert resets > 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_tss_lanes_leave_small_batches_to_the_body(backend):
    """A single env, or fewer than LANES_MIN, is stepped by the shared body (the lanes take none)."""
    params = RULESETS["tss"].build()
    policies = np.array([0, 1], dtype=np.int64)
    for envs in (1, LANES_MIN - 1):
        b = buffers(params, np.arange(envs, dtype=np.uint64))
        assert not lanes_alone(params, b, policies, 0.0, backend).any()


@pytest.mark.parametrize("backend", BACKENDS)
def test_tss_lanes_leave_random_policies_to_the_body(backend):
    """A random policy draws its choice from the stream: the whole batch goes to the body."""
    params = RULESETS["tss"].build()
    b = buffers(params, np.arange(64, dtype=np.uint64))
    assert not lanes_alone(params, b, np.array([0, 2], dtype=np.int64), 0.0, backend).any()
    assert not lanes_alone(params, b, np.array([2, 1], dtype=np.int64), 0.0, backend).any()


def test_tss_lanes_header_has_the_reference_layout():
    from combatsim.rng import rejection_threshold

    header = (Path(__file__).parents[1] / "kernels" / "rl" / "tss_lanes.h").read_text()
    defines = dict(re.findall(r"^#define TSS_(\w+) (\d+)u?$", header, flags=re.MULTILINE))
    shared = {name: value for name, value in defines.items() if hasattr(R, name)}
    assert len(shared) >= 40
    for name, value in shared.items():
        assert getattr(R, name) == int(value), name
    assert int(defines["LANES"]) == R.AHEAD_ENVS
    assert int(defines["NO_ACTION"]) == R.ACTIONS
    assert int(defines["LANES_MIN"]) == LANES_MIN
    assert int(defines["D20_REJECT_BELOW"]) == rejection_threshold(R.D20)
    assert int(defines["LANE_WORDS"]) % 4 == 0
    assert int(defines["LANE_WORDS"]) == LANE_WORDS
    # The Numba twin's own constants are the header's.
    from combatsim.kernels.rl import _stream_nb

    twin = numba_lanes()
    assert int(defines["LANES"]) == twin.LANES
    assert twin.LANES_MIN == _stream_nb.LANES_MIN == int(defines["LANES_MIN"])
    assert int(defines["NO_ACTION"]) == twin.NO_ACTION
    assert int(defines["LANE_WORDS"]) == twin.LANE_WORDS
    assert int(defines["D20_REJECT_BELOW"]) == twin.D20_REJECT_BELOW
    assert (R.POLICY_EXTERNAL, R.POLICY_SCRIPTED) == (0, 1)  # as lanes_may_take reads them
    shift = re.search(r"^#define TSS_LANE_RANGE \(1 << (\d+)\)$", header, flags=re.MULTILINE)
    assert 1 << int(shift.group(1)) == twin.LANE_RANGE
