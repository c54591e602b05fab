"""``combatsim/Fight-v0``: a Gymnasium environment on any scenario, one member the agent.

The named member is the agent; every other member plays its scripted policy. An episode is one
fight of the ruleset's engine (combatsim.engine), the very calls ``combatsim fight`` makes:
episode ``k`` of an environment seeded ``s`` is fight ``k`` of ``combatsim fight --seed s``.
Spaces, names, rewards and the outcome info are described in docs/rl.md ("Scenario environments").
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from combatsim.engine import DRAW, ENGINE_BACKENDS, RUNNING, S_LENGTH, S_OUTCOME, S_STEPS, SCRIPTED, UNFINISHED, Game
from combatsim.game import member_index, scenario_game
from combatsim.scenario import Scenario
from combatsim.validation import brief, check_choice, check_seed

#: Members whose in/out pattern is looked up in a table of 2**members tuples (else built one by one).
MAX_TABLED_MEMBERS = 12


def observation_box(size: int) -> gym.spaces.Box:
    """The engines write every observation field as a fraction in 0..1 (combatsim.engine)."""
    return gym.spaces.Box(0.0, 1.0, shape=(size,), dtype=np.float32)


def as_game(scenario: Scenario | str | Path | Mapping | Game) -> Game:
    """A Game as it is, or the Game of a scenario (Scenario, path, example name or document)."""
    return scenario if isinstance(scenario, Game) else scenario_game(scenario)


def check_action(action: object, actions: int) -> int:
    """An integer action 0..actions-1 (Python or NumPy integer, or a 0-d integer array)."""
    if type(action) is int and 0 <= action < actions:  # most steps' action: checked first, it is their cost
        return action
    value = action[()] if isinstance(action, np.ndarray) and action.ndim == 0 else action
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise TypeError(f"action must be an integer in 0..{actions - 1}, got {type(action).__name__} {brief(action)}")
    if not 0 <= value < actions:
        raise ValueError(f"action must be in 0..{actions - 1}, got {int(value)}")
    return int(value)


#: a fight's end in words, by outcome code ({0}, {1}: the sides' names)
OUTCOME_WORDS = {0: "{0} wins", 1: "{1} wins", DRAW: "draw", UNFINISHED: "unfinished at the limit"}


class Outcomes:
    """What the end of a fight says (``info["outcome"]``), worked out for many envs at once.

    ``columns`` gives each field as an array over all envs, batched as Gymnasium batches the infos
    of the envs that ended: another env's entry is None, False or 0. An ended env's fields are
    looked up in tables: by its end code (outcome, wins by flight, escape counts) and by which
    members are in or escaped; the fields of one kind (objects, flags, integers) are the columns of
    one block, written for all the ended envs at once: the vector env's ``final_info`` costs the
    same few array operations however many envs end. The single env takes row 0.
    """

    def __init__(self, game: Game) -> None:
        self.game = game
        names = game.observation_names
        self.in_fight = names.index("self.in_fight") if "self.in_fight" in names else None
        self.escaped = names.index("self.escaped") if "self.escaped" in names else None
        self.count_names = game.count_names
        count_index = {name: k for k, name in enumerate(game.count_names)}
        members = game.members
        # An ended env's text, winner, escapes and flags (draw, unfinished, by_flight) follow from
        # its end code: outcome + 4 * (wins-by-flight counts > 0, one binary digit a side)
        # + 4 * 2**flights * (escape counts, one digit 0..members a side). The flags of a code are
        # the 4-byte word of one row of columns()'s flag block.
        flights = [count_index.get(f"wins_by_flight_side_{side}") for side in (0, 1)]
        escapes = [count_index.get(f"escapes_side_{side}") for side in (0, 1)]
        digits = [(count, 2) for count in flights if count is not None]  # (count, radix)
        digits += [(count, members + 1) for count in escapes if count is not None]
        self.code_counts = [count for count, _ in digits]
        self.code_caps = np.array([radix - 1 for _, radix in digits], dtype=np.int64)
        self.code_weights = 4 * np.cumprod([1] + [radix for _, radix in digits])[:-1].astype(np.int64)
        codes = 4 * int(np.prod([radix for _, radix in digits]))
        self.end_objects = np.empty((codes, 3), dtype=object)
        end_flags = np.zeros((codes, 4), dtype=np.bool_)
        winners = (*game.side_names, None, None)
        for code in range(codes):
            outcome, rest = code % 4, code // 4
            values = {}
            for count, radix in digits:
                values[count], rest = rest % radix, rest // radix
            by_flight = outcome < DRAW and values.get(flights[outcome], 0) > 0
            text = OUTCOME_WORDS[outcome].format(*game.side_names) + (" by flight" if by_flight else "")
            self.end_objects[code] = text, winners[outcome], tuple(values.get(count, 0) for count in escapes)
            end_flags[code, :3] = outcome == DRAW, outcome == UNFINISHED, by_flight
        self.end_flag_words = end_flags.view(np.int32)[:, 0]
        self.bits = (1 << np.arange(members, dtype=np.int64)) if members <= MAX_TABLED_MEMBERS else None
        if self.bits is not None:
            self.name_sets = np.empty(1 << members, dtype=object)
            for pattern in range(1 << members):
                self.name_sets[pattern] = tuple(n for c, n in enumerate(game.member_names) if pattern >> c & 1)
        self.no_names = np.empty(1, dtype=object)  # broadcasts () to every env
        self.no_names[0] = ()
        self.state_fields = [S_LENGTH, S_STEPS]

    def _names(self, obs: np.ndarray, field: int | None) -> np.ndarray:
        """Per env, the tuple of member names whose flag ``field`` is set (obs (n, members, d));
        where the game has no such field, one empty tuple that broadcasts to every env."""
        if field is None:
            return self.no_names
        flags = obs[:, :, field] > 0.5
        if self.bits is not None:
            return self.name_sets.take(flags @ self.bits)
        out = np.empty(len(flags), dtype=object)
        for row, line in enumerate(flags):
            out[row] = tuple(n for n, flag in zip(self.game.member_names, line, strict=True) if flag)
        return out

    def _end_codes(self, outcome: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Each env's end code (see __init__), from its outcome (n,) and counts (n, K)."""
        if not self.code_counts:
            return outcome
        return np.minimum(counts.take(self.code_counts, axis=1), self.code_caps) @ self.code_weights + outcome

    def columns(self, state: np.ndarray, counts: np.ndarray, obs: np.ndarray, rows: np.ndarray,
                envs: int) -> dict[str, Any]:
        """The outcome fields of ``envs`` envs, each an array over them, from the envs in ``rows``
        (whose fights ended): their state (n, S), counts (n, K) and obs (n, members, d)."""
        ends = self._end_codes(state[:, S_OUTCOME], counts)
        ended = np.empty((len(rows), 5), dtype=object)
        ended[:, :3] = self.end_objects.take(ends, axis=0)
        ended[:, 3] = self._names(obs, self.escaped)
        ended[:, 4] = self._names(obs, self.in_fight)
        objects = np.empty((envs, 5), dtype=object)  # None throughout
        objects[rows] = ended
        flags = np.zeros((envs, 4), dtype=np.bool_)  # the fourth column pads a row to one int32
        flags.view(np.int32)[:, 0][rows] = self.end_flag_words.take(ends)
        fields = len(self.count_names)
        numbers = np.zeros((envs, fields + 2), dtype=np.int64)
        numbers[rows, :fields] = counts
        numbers[rows, fields:] = state.take(self.state_fields, axis=1)
        text, winner, escapes, escaped, standing = objects.T
        draw, unfinished, by_flight, _ = flags.T
        *counts, length, steps = numbers.T
        return {"text": text, "winner": winner, "draw": draw, "unfinished": unfinished, "by_flight": by_flight,
                "escapes": escapes, "escaped": escaped, "standing": standing, "length": length, "steps": steps,
                "counts": dict(zip(self.count_names, counts, strict=True))}

    def single(self, state: np.ndarray, counts: np.ndarray, obs: np.ndarray) -> dict[str, Any]:
        """One env's outcome as plain Python values (state (S,), counts (K,), obs (members, d))."""
        columns = self.columns(state[None], counts[None], obs[None], np.zeros(1, dtype=np.int64), 1)
        return {key: ({k: int(v[0]) for k, v in value.items()} if isinstance(value, dict) else value[0].item()
                      if isinstance(value[0], np.generic) else value[0]) for key, value in columns.items()}


class EngineEnv:
    """What every env on a game's engine keeps: the game, its engine's kernels, ``envs`` fights'
    buffers and the outcome tables. Pickles without the kernels (a module), which are looked up
    again from the game on load."""

    def _use_game(self, game: Game, backend: str, envs: int) -> None:
        self.game = game
        self.backend = check_choice("backend", backend, ENGINE_BACKENDS)
        self.observation_names = game.observation_names
        self.action_names = game.action_names
        self._engine = game.engine(self.backend)
        self._b = game.buffers(envs)
        self._masked = game.count_names.index("masked")
        self._outcomes = Outcomes(game)
        self._started = False

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_engine"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._engine = self.game.engine(self.backend)


class OneFight(EngineEnv):
    """One fight played step by step, some members' actions given (FightEnv, FightParallelEnv),
    and what the ansi render shows of it."""

    def _start_game(self, game: Game, backend: str, render_mode: str | None, rows: Sequence[int]) -> None:
        """Set up ``game`` with the members in ``rows`` played from outside."""
        self._use_game(game, backend, 1)
        supported = self.metadata["render_modes"]
        if render_mode is not None and render_mode not in supported:  # make_vec_env asks for "rgb_array"
            warnings.warn(f"render_mode {render_mode!r} is not supported (supported: {supported}); rendering is off",
                          stacklevel=3)
            render_mode = None
        self.render_mode = render_mode
        b = self._b
        # The engine's step arguments, gathered once: a step is a few microseconds.
        self._step_arguments = (game.table, game.config, b["seeds"], b["state"], b["actions"], b["counts"], b["obs"],
                                b["mask"])
        self._last: dict[int, int | None] = dict.fromkeys(rows)  # each row's last action (ansi render)
        self._before: np.ndarray | None = None  # every member's observation before the last step (ansi render)

    def _info(self, row: int) -> dict[str, Any]:
        b = self._b
        return {"action_mask": b["mask"][0, row].copy(), "masked_actions": int(b["counts"][0, self._masked])}

    def _reset_fight(self, seed: int | None, np_random: np.random.Generator) -> None:
        """Start the next fight: fight 0 of a new ``seed``, else (a first reset without one) fight 0
        of a seed drawn from ``np_random``, else the next fight index of the same seed, so episode k
        after ``reset(seed=s)`` is fight k of ``combatsim fight --seed s``."""
        b = self._b
        if seed is not None or not self._started:
            b["seeds"][0] = seed if seed is not None else int(np_random.integers(0, 2**63))
            b["indices"][0] = 0
        else:
            b["indices"][0] += 1
        self._started = True
        self._last = dict.fromkeys(self._last)
        self._before = None
        self._engine.reset(self.game.table, self.game.config, b["seeds"], b["indices"], b["which"], b["state"],
                           b["counts"], b["obs"], b["mask"])

    def _step_fight(self, actions: Mapping[int, object]) -> int:
        """One step with ``actions`` (member row -> action, each checked), the other members
        scripted; the fight's outcome code after it."""
        b = self._b
        b["actions"][0, :] = SCRIPTED
        for row, action in actions.items():
            b["actions"][0, row] = self._last[row] = check_action(action, len(self.action_names))
        if self.render_mode == "ansi":
            self._before = b["obs"][0].copy()
        self._engine.step(*self._step_arguments)
        return int(b["state"][0, S_OUTCOME])

    def _outcome(self) -> dict[str, Any]:
        """The ended fight's ``info["outcome"]``."""
        return self._outcomes.single(self._b["state"][0], self._b["counts"][0], self._b["obs"][0])

    def render(self):
        if self.render_mode != "ansi":
            return None
        if not self._started:  # the buffers hold no fight yet: their zeros would read as an ended one
            raise RuntimeError("render() before reset(): call reset() first")
        return render_text(self.game, self._b["state"][0], self._b["obs"][0], self._last, self._before)


class FightEnv(OneFight, gym.Env):
    """One scenario's fight with one member, ``agent``, played from outside (docs/rl.md)."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(self, scenario: Scenario | str | Path | Mapping | Game, agent: str, *, backend: str = "auto",
                 render_mode: str | None = None) -> None:
        game = as_game(scenario)
        self.agent = agent
        self.agent_index = member_index(game, agent)
        self._start_game(game, backend, render_mode, [self.agent_index])
        self.observation_space = observation_box(len(game.observation_names))
        self.action_space = gym.spaces.Discrete(len(game.action_names))
        self._side = game.member_sides[self.agent_index]

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            seed = check_seed(seed)
        super().reset(seed=seed)
        self._reset_fight(seed, self.np_random)
        return self._b["obs"][0, self.agent_index].copy(), self._info(self.agent_index)

    def step(self, action):
        b = self._b
        if not self._started or b["state"][0, S_OUTCOME] != RUNNING:
            raise RuntimeError("step() outside an episode: call reset() first, and again after an episode ends")
        outcome = self._step_fight({self.agent_index: action})
        reward = 1.0 if outcome == self._side else -1.0 if outcome == 1 - self._side else 0.0
        info = self._info(self.agent_index)
        if outcome != RUNNING:
            # No "episode" key: that is what Gymnasium's RecordEpisodeStatistics adds, and it refuses
            # an info that has one. The return is this last reward; the length is outcome["steps"].
            info["outcome"] = self._outcome()
        return (b["obs"][0, self.agent_index].copy(), reward, outcome in (0, 1, DRAW), outcome == UNFINISHED,
                info)

    def action_masks(self) -> np.ndarray:
        """The agent's legal actions now (sb3-contrib's MaskablePPO calls this)."""
        return self._b["mask"][0, self.agent_index].astype(bool)


#: How render() words a member's own observed fields (docs/<ruleset>.md, "The engine"): counts as
#: (scale, one, many) with the field = count / scale; shares of a whole in percent; flags by their
#: words. The fields that describe the persona rather than its condition are left out.
RENDER_COUNTS = {"flesh": (3, "flesh wound", "flesh wounds"), "serious": (2, "serious wound", "serious wounds"),
                 "hit_points": (100, "hit point", "hit points"), "dazed": (8, "dazed step", "dazed steps"),
                 "actions_left": (4, "action left", "actions left"),
                 "negated": (3, "dazed step negated", "dazed steps negated")}
RENDER_SHARES = {"ammunition": "ammunition", "stun_left": "stun", "wound_left": "wound", "mortal_left": "mortal"}
RENDER_FLAGS = {"in_cover": "in cover", "defending": "defending", "dual_wield": "dual wielding", "engaged": "engaged",
                "targeted": "targeted", "surprised": "surprised", "may_act": "may act"}
RENDER_HIDDEN = {"in_fight", "escaped", "health", "dual_allowed", "engaged_with_self", "flee_target", "ranged",
                 "armour", "attack_target", "attacked_self", "target_of_self", "armour_rating", "action_phase",
                 "acting_place"}


def _count(field: str, value: float) -> int:
    return int(np.floor(value * RENDER_COUNTS[field][0] + 0.5))


def _percent(value: float) -> str:
    return f"{int(np.floor(value * 100 + 0.5))}%"


def _condition(fields: Mapping[str, float]) -> str:
    """A member's condition in words, from its own fields (name without "self." -> value)."""
    words = []
    for field, value in fields.items():
        if field in RENDER_COUNTS:
            count, (_, one, many) = _count(field, value), RENDER_COUNTS[field]
            if count or field == "hit_points":
                words.append(f"{count} {one if count == 1 else many}")
        elif field in RENDER_SHARES:
            words.append(f"{RENDER_SHARES[field]} {_percent(value)}")
        elif field in RENDER_FLAGS:
            if value > 0.5:
                words.append(RENDER_FLAGS[field])
        elif field not in RENDER_HIDDEN and value != 0:
            words.append(f"{field} {value:.3g}")
    return ", ".join(words) or "unhurt"


def _result(before: Mapping[str, float], after: Mapping[str, float]) -> str:
    """What the last step did to a member: its status and condition counts, before -> after."""
    changes = []
    if before.get("in_fight", 0) > 0.5 >= after.get("in_fight", 0):
        changes.append("escaped" if after.get("escaped", 0) > 0.5 else "out of the fight")
    for field, (_, one, many) in RENDER_COUNTS.items():
        if field in after and field != "actions_left":
            delta = _count(field, after[field]) - _count(field, before[field])
            if delta:
                changes.append(f"{delta:+d} {one if abs(delta) == 1 else many}")
    for field, word in RENDER_SHARES.items():
        if field in after and after[field] != before[field]:
            changes.append(f"{word} {_percent(before[field])} -> {_percent(after[field])}")
    return ", ".join(changes) or "no change"


def render_text(game: Game, state: np.ndarray, obs: np.ndarray, last_actions: Mapping[int, int | None],
                before: np.ndarray | None = None) -> str:
    """One line a member: name, side, in or out, its condition in words, its last action
    (members played by their scripted policy: "scripted") and what the last step did to it
    (``before``: every member's observation before that step)."""
    names = game.observation_names
    own = [(k, name.removeprefix("self.")) for k, name in enumerate(names) if name.startswith("self.")]
    in_fight = names.index("self.in_fight") if "self.in_fight" in names else None
    outcome = int(state[S_OUTCOME])
    lines = [f"{game.ruleset}: {game.step_name} {int(state[S_STEPS])}, "
             f"{'running' if outcome == RUNNING else OUTCOME_WORDS[outcome].format(*game.side_names)}"]
    width = max(len(name) for name in game.member_names)
    side_width = max(len(name) for name in game.side_names)
    for c, name in enumerate(game.member_names):
        status = "" if in_fight is None else "in " if obs[c, in_fight] > 0.5 else "out"
        fields = {field: float(obs[c, k]) for k, field in own}
        action = last_actions.get(c, "scripted")
        last = "scripted" if action == "scripted" else "-" if action is None else game.action_names[action]
        result = "" if before is None else f" -> {_result({f: float(before[c, k]) for k, f in own}, fields)}"
        lines.append(f"  {name:<{width}}  side {game.side_names[game.member_sides[c]]:<{side_width}}  {status}  "
                     f"{_condition(fields)}  last action: {last}{result}")
    return "\n".join(lines)
