"""A scenario's fight as an OpenSpiel game (``pyspiel``), over the solver's decision chain.

``load_game(scenario, agents=[...])`` returns a ``pyspiel.Game`` registered as ``combatsim_fight``
(so ``pyspiel.load_game("combatsim_fight(scenario=d100_duel,agents=Veteran;Guard)")`` works after
``import combatsim.openspiel``). It is a thin view of :mod:`combatsim.solve`'s decision chain:

- the named members are the players (in the order given); everyone else plays its scripted
  policy, folded into the chance outcomes as the chain folds it;
- a decision node is one of the ruleset's steps (a d100 pass); where the rules make the choices
  simultaneous (d100 declarations) the game is simultaneous (``pyspiel.convert_to_turn_based``
  makes it turn-based); a game with one player is sequential;
- actions are the env actions, legal actions the env's mask;
- chance nodes are the chain's: the opening (ambush) and, after each step's decisions, the step's
  dice grouped by result, with the chain's probabilities. Chance outcome 0, 1 and 2 end the fight
  (side 0 wins, side 1 wins, a draw); 3 + k goes to the step's k-th next state;
- returns are the env's rewards (+1 win, -1 loss, 0 draw or unfinished), at the end only;
- a player's observation tensor is the env's observation of the engine state the chain state
  stands for (the fields the chain does not track, last pass's defence and whom a member
  attacked, are 0), and its information-state and observation strings are that observation in
  words, one line a member as the env's ansi render words it. The observation shows the whole
  chain state, so a policy keyed by it (as :func:`table_policy` saves one) plays in
  ``combatsim fight --policy`` and in the envs.

A policy that OpenSpiel computes (CFR's average policy, a best response, any ``open_spiel``
``Policy``) becomes a saved combatsim policy with :func:`table_policy` (docs/openspiel.md).
"""

from __future__ import annotations

import base64
import itertools
import json
import uuid
from collections.abc import Mapping, Sequence

import numpy as np

try:
    import pyspiel
except ModuleNotFoundError as missing:
    if missing.name != "pyspiel":
        raise
    from combatsim.extras import install_hint

    raise ModuleNotFoundError(f"combatsim.openspiel needs the openspiel extra (open-spiel is not installed): "
                              f"{install_hint('openspiel')}", name="pyspiel") from None

from combatsim.engine import UNFINISHED
from combatsim.fight_odds import DEFAULT_MAX_STATES
from combatsim.scenario import Scenario

__all__ = ["ENDS", "GAME_NAME", "FightGame", "FightState", "load_game", "openspiel_policy", "table_policy"]

GAME_NAME = "combatsim_fight"
#: Chance outcomes below this end the fight with that outcome code (0, 1: that side wins; 2: draw).
ENDS = 3
#: Players a game may have: every member of the largest team fight the chain takes.
MAX_PLAYERS = 16

_DEFAULTS = {
    "scenario": "d100_duel",  # an example's name or a scenario file's path
    "agents": "",  # member names, ';' between them; empty: every member
    "set": "",  # --set overrides as PATH:VALUE, ';' between them (a game string cannot hold '=')
    "document": "",  # a scenario document given as data (base64 of its JSON); overrides "scenario"
    "method": "auto",  # the chain's arithmetic: auto, exact or float64
    "max_states": DEFAULT_MAX_STATES,  # refuse a chain whose state bound is larger, before any work
}


def _game_type(dynamics=pyspiel.GameType.Dynamics.SIMULTANEOUS,
               utility=pyspiel.GameType.Utility.GENERAL_SUM) -> pyspiel.GameType:
    """The registered type has the widest choices; each game states its own dynamics and utility."""
    return pyspiel.GameType(
        short_name=GAME_NAME, long_name="combatsim fight", dynamics=dynamics,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.PERFECT_INFORMATION, utility=utility,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL, max_num_players=MAX_PLAYERS, min_num_players=1,
        provides_information_state_string=True, provides_information_state_tensor=True,
        provides_observation_string=True, provides_observation_tensor=True,
        provides_factored_observation_string=False, parameter_specification=_DEFAULTS)


#: Characters a game string cannot carry inside a parameter's value.
_UNWRITABLE = set(",;=()")


def load_game(scenario: Scenario | str | Mapping = "d100_duel", agents: Sequence[str] | None = None, *,
              overrides: Sequence[str] = (), method: str = "auto", max_states: int | None = None) -> pyspiel.Game:
    """The fight of ``scenario`` (an example's name, a path, a loaded Scenario or a scenario
    document) as a ``pyspiel`` game whose players are the members ``agents`` names (all members
    when None); ``overrides`` are ``--set`` style ``PATH=VALUE`` edits of a named scenario;
    ``method`` and ``max_states`` are the chain's, as in ``combatsim solve``."""
    from combatsim.fight_odds import check_method
    from combatsim.rl.fight_parallel import agent_rows
    from combatsim.validation import check_int

    check_method(method)
    params: dict[str, object] = {"method": method}
    if max_states is not None:
        # an OpenSpiel game parameter is a C++ int: 32 bits
        params["max_states"] = check_int("max_states", max_states, 1, 2**31 - 1)
    if isinstance(overrides, str) or not isinstance(overrides, Sequence):
        raise TypeError(f"overrides must be a list of PATH=VALUE strings, got {type(overrides).__name__}")
    if isinstance(scenario, Scenario | Mapping):
        if overrides:
            raise ValueError("overrides: give them with a scenario's name or path; a loaded scenario already has its own")
        document = scenario.document if isinstance(scenario, Scenario) else dict(scenario)
        try:
            text = json.dumps(document, sort_keys=True, separators=(",", ":"))
        except (TypeError, ValueError) as problem:
            raise ValueError(f"scenario: the document cannot be written as JSON ({problem})") from None
        params["document"] = base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")
        # only a label here, for the game string: its name as far as a game string can write it
        name = scenario.name if isinstance(scenario, Scenario) else str(dict(scenario).get("name", "document"))
        params["scenario"] = "".join(" " if mark in _UNWRITABLE else mark for mark in name)
    elif isinstance(scenario, str):
        params["scenario"] = _writable("scenario", scenario)
        params["set"] = ";".join(_override_param(text) for text in overrides)
    else:
        raise TypeError(f"scenario must be an example's name, a path, a Scenario or a scenario document; "
                        f"got {type(scenario).__name__}")
    if agents is not None:
        # the envs' own checks and errors, on the scenario's members
        from combatsim.game import scenario_game

        if isinstance(agents, str) or not isinstance(agents, Sequence):
            raise TypeError(f"agents must be a list of member names, got {type(agents).__name__}")
        agent_rows(scenario_game(_scenario_from({**_DEFAULTS, **params})), list(agents))
        params["agents"] = ";".join(_writable("agents", name) for name in agents)
    return pyspiel.load_game(GAME_NAME, params)


def _writable(field: str, text: str) -> str:
    bad = sorted(_UNWRITABLE & set(text))
    if bad:
        raise ValueError(f"{field}: {text!r} holds {' '.join(bad)}, which a game string cannot carry; "
                         f"rename it or load the scenario as a document")
    return text


def _override_param(text: str) -> str:
    if not isinstance(text, str) or "=" not in text:
        raise ValueError(f"overrides: expected PATH=VALUE, got {text!r}")
    path, _, value = text.partition("=")
    return f"{path}:{_writable('overrides', value)}"


def _scenario_from(params: Mapping) -> Scenario:
    from combatsim.game import as_scenario
    from combatsim.scenario import load, resolve

    document = params["document"]
    if document:
        try:
            data = json.loads(base64.urlsafe_b64decode(document + "=" * (-len(document) % 4)))
        except ValueError:
            raise ValueError("document: not a scenario document written by combatsim.openspiel.load_game") from None
        return as_scenario(data)
    overrides = []
    for item in filter(None, params["set"].split(";")):
        cut = min((item.find(mark) for mark in "=:" if mark in item), default=-1)
        if cut < 0:
            raise ValueError(f"set: expected PATH:VALUE items separated by ';', got {item!r}")
        overrides.append(f"{item[:cut]}={item[cut + 1:]}")
    path, label = resolve(params["scenario"])
    return load(path, overrides, label=label)


class _Shared(tuple):
    """A tuple that states share: never copied (pyspiel clones a state by deepcopy)."""

    def __deepcopy__(self, memo):
        return self


class _Fight:
    """What every state of one game shares: the chain, the players' member rows and sides. One
    object per game, never copied with a state (``pyspiel`` clones a Python state by deepcopy)."""

    def __init__(self, chain, rows: tuple[int, ...]) -> None:
        self.chain = chain
        self.rows = rows
        game = chain.game
        self.sides = tuple(game.member_sides[row] for row in rows)
        self.members = len(game.member_names)
        self.observation_size = len(game.observation_names)
        self.blocks = _block_names(game)
        self.token = uuid.uuid4().hex
        self._words: dict[tuple, str] = {}
        self._outcomes: dict[tuple, tuple] = {}

    def __deepcopy__(self, memo):
        return self

    def decisions(self, actions: Sequence[int]) -> tuple:
        """The chain's decisions: the players' actions in their members' places, SCRIPTED elsewhere."""
        from combatsim.solve import SCRIPTED

        decisions = [SCRIPTED] * self.members
        for row, action in zip(self.rows, actions, strict=True):
            decisions[row] = int(action)
        return tuple(decisions)

    def outcomes(self, state: int, t: int, decisions: tuple) -> tuple:
        """The chance node after ``decisions`` in ``state`` before step ``t``: ((outcome, p, next
        state or None, end code or None), ...), ends first, then next states in the chain's order."""
        key = (state, t, decisions)
        found = self._outcomes.get(key)
        if found is None:
            step = self.chain.transitions(state, t, decisions)
            ends: dict[int, object] = {}
            for code, p in zip(step.ended, step.ended_p, strict=True):
                ends[code] = ends.get(code, 0) + p
            moved: dict[int, object] = {}
            for after, p in zip(step.moved, step.moved_p, strict=True):
                moved[after] = moved.get(after, 0) + p
            found = _Shared(tuple((code, float(p), None, code) for code, p in sorted(ends.items()) if p) + tuple(
                (ENDS + k, float(p), after, None) for k, (after, p) in enumerate(moved.items())))
            self._outcomes[key] = found
        return found

    def key(self, state: int, t: int, row: int) -> bytes:
        """Member row ``row``'s observation key (what the chain tracks) in ``state`` before step ``t``."""
        obs, _ = self.chain.observations([state], t, row)
        return self.chain.observation_keys(obs, row)[0]


def _block_names(game) -> dict[int, dict[str, str]]:
    """Per member row: the observation's block prefix ("self", "ally0", "foe0"...) -> the member it
    shows (after its own block, its allies' then its foes', each in table order)."""
    names = {}
    for c, name in enumerate(game.member_names):
        allies = [o for o in range(len(game.member_names)) if o != c and game.member_sides[o] == game.member_sides[c]]
        foes = [o for o in range(len(game.member_names)) if game.member_sides[o] != game.member_sides[c]]
        names[c] = {"self": name, **{f"ally{k}": game.member_names[o] for k, o in enumerate(allies)},
                    **{f"foe{k}": game.member_names[o] for k, o in enumerate(foes)}}
    return names


class FightGame(pyspiel.Game):
    """The fight of one scenario with its players (see the module)."""

    def __init__(self, params: Mapping | None = None) -> None:
        from combatsim.rl.fight_parallel import agent_rows
        from combatsim.solve import decision_chain

        params = {**_DEFAULTS, **(params or {})}
        chain = decision_chain(_scenario_from(params), method=params["method"], max_states=params["max_states"])
        text = params["agents"]
        names = None if text == "" else [name for name in text.split(";") if name]
        rows = tuple(agent_rows(chain.game, names).values())
        self.fight = _Fight(chain, rows)
        sides = self.fight.sides
        players = len(rows)
        if players == 2 and sides[0] != sides[1]:
            utility, utility_sum = pyspiel.GameType.Utility.ZERO_SUM, 0.0
        elif players > 1 and len(set(sides)) == 1:
            utility, utility_sum = pyspiel.GameType.Utility.IDENTICAL, None
        else:
            utility, utility_sum = pyspiel.GameType.Utility.GENERAL_SUM, None
        dynamics = pyspiel.GameType.Dynamics.SIMULTANEOUS if players > 1 else pyspiel.GameType.Dynamics.SEQUENTIAL
        info = pyspiel.GameInfo(
            num_distinct_actions=len(chain.game.action_names),
            # a step's results are at most every state of the chain, and the three ends
            max_chance_outcomes=ENDS + max(chain.state_bound, len(chain.initial())),
            num_players=players, min_utility=-1.0, max_utility=1.0, utility_sum=utility_sum,
            max_game_length=chain.horizon)
        super().__init__(_game_type(dynamics, utility), info, params)

    @property
    def chain(self):
        return self.fight.chain

    def new_initial_state(self) -> FightState:
        return FightState(self)

    def make_py_observer(self, iig_obs_type=None, params=None) -> FightObserver:
        if params:
            raise ValueError(f"observer parameters: none are taken, got {params!r}")
        return FightObserver(self.fight)


class FightState(pyspiel.State):
    """A node: the opening chance node, a decision before step ``t`` in a chain state, the chance
    node of that step's dice after the players' decisions, or the end.

    The chain numbers its states as it meets them, so a number means something only in the chain
    of the game that made it: a state restored into another game of the same parameters (OpenSpiel's
    deserialization restores the attributes and the history) finds its node again by replaying
    the history (``_node``)."""

    def __init__(self, game: FightGame) -> None:
        super().__init__(game)
        self._token = game.fight.token
        self._t = 0
        self._state: int | None = None  # the chain state; None before the opening
        self._pending: tuple | None = None  # the chance node after decisions: its outcomes
        self._end: int | None = None  # the engine's outcome code once the fight is over

    def _node(self) -> _Fight:
        fight = self.get_game().fight
        if self._token != fight.token:
            history = self.history()
            self._token, self._t, self._state, self._pending, self._end = fight.token, 0, None, None, None
            players = len(fight.rows)
            at = 0
            while at < len(history):
                if self._state is not None and self._pending is None and players > 1:
                    self._decide(fight, history[at:at + players])
                    at += players
                else:
                    self._move(fight, history[at])
                    at += 1
        return fight

    # --- what the node is --------------------------------------------------------------------------
    def current_player(self) -> int:
        fight = self._node()
        if self._end is not None:
            return pyspiel.PlayerId.TERMINAL
        if self._state is None or self._pending is not None:
            return pyspiel.PlayerId.CHANCE
        return 0 if len(fight.rows) == 1 else pyspiel.PlayerId.SIMULTANEOUS

    def is_terminal(self) -> bool:
        self._node()
        return self._end is not None

    def _legal_actions(self, player: int) -> list[int]:
        fight = self._node()
        if self._end is not None or self._state is None or self._pending is not None:
            return []
        return list(fight.chain.legal(self._state, self._t, fight.rows[player]))

    def chance_outcomes(self) -> list[tuple[int, float]]:
        fight = self._node()
        if self._state is None:
            return [(k, float(p)) for k, (_, p) in enumerate(fight.chain.initial())]
        if self._pending is not None:
            return [(outcome, p) for outcome, p, _, _ in self._pending]
        return []

    # --- moves -------------------------------------------------------------------------------------
    def _apply_action(self, action: int) -> None:
        self._move(self._node(), action)

    def _apply_actions(self, actions: Sequence[int]) -> None:
        self._decide(self._node(), actions)

    def _move(self, fight: _Fight, action: int) -> None:
        if self._state is None:  # the opening
            self._state = fight.chain.initial()[action][0]
        elif self._pending is not None:
            self._chance(fight, action)
        else:  # the one player's decision
            self._decide(fight, [action])

    def _decide(self, fight: _Fight, actions: Sequence[int]) -> None:
        self._pending = fight.outcomes(self._state, self._t, fight.decisions(actions))

    def _chance(self, fight: _Fight, action: int) -> None:
        found = next((outcome for outcome in self._pending if outcome[0] == action), None)
        if found is None:
            raise ValueError(f"chance outcome {action} is not one of this node's")
        _, _p, after, end = found
        self._pending = None
        self._t += 1
        if end is not None:
            self._end = end
        else:
            self._state = after
            if self._t == fight.chain.horizon:
                self._end = UNFINISHED

    def returns(self) -> list[float]:
        from combatsim.solve.chain import reward

        fight = self._node()
        if self._end is None:
            return [0.0] * len(fight.rows)
        return [float(reward(self._end, side)) for side in fight.sides]

    # --- words -------------------------------------------------------------------------------------
    def _action_to_string(self, player: int, action: int) -> str:
        fight = self._node()
        chain = fight.chain
        if player != pyspiel.PlayerId.CHANCE:
            return chain.game.action_names[action]
        if self._state is None:
            return f"opening {action}: {chain.describe(chain.initial()[action][0])}"
        if action < ENDS:
            return _end_words(chain.game, action)
        for outcome, _p, after, _end in self._pending or ():
            if outcome == action:
                return f"result {action - ENDS}: {chain.describe(after)}"
        return f"chance outcome {action}"

    def __str__(self) -> str:
        # every member's view together names the chain state (str is what value iteration keys on)
        view = self._words(range(self._node().members))
        return view + ("" if self._pending is None else "\n(declared; the dice roll next)")

    def _words(self, rows) -> str:
        """The node in words: the fight's end, before the opening, or the views of members ``rows``."""
        fight = self._node()
        if self._end is not None:
            return _end_words(fight.chain.game, self._end)
        if self._state is None:
            return f"{fight.chain.game.ruleset}: before the fight"
        return "\n".join(_render_member(fight, self._state, self._t, c) for c in rows)


def _end_words(game, code: int) -> str:
    from combatsim.engine import DRAW

    if code == UNFINISHED:
        return f"{game.ruleset}: fight over, unfinished (draw)"
    if code == DRAW:
        return f"{game.ruleset}: fight over, a draw"
    return f"{game.ruleset}: fight over, {game.side_names[code]} wins"


def _step_words(chain, t: int) -> str:
    pass_of = getattr(chain, "pass_of", None)
    if pass_of is not None:
        round_number, pass_number = pass_of(t)
        max_rounds = chain.horizon // chain.passes
        return f"round {round_number} of {max_rounds}, pass {pass_number} of {chain.passes}"
    return f"{chain.game.step_name} {t + 1} of {chain.horizon}"


def _render_member(fight: _Fight, state: int, t: int, c: int) -> str:
    """Member row ``c``'s observation (its key: what the chain tracks) in words."""
    words = fight._words.get((state, t, c))
    if words is None:
        key = np.frombuffer(fight.key(state, t, c), dtype=np.float32)
        words = fight._words[state, t, c] = _render_key(fight.chain.game, fight.blocks[c], key, _step_words(fight.chain, t))
    return words


#: Block fields about the member who looks, in its words.
_TOWARD_YOU = {"engaged_with_self": "engaged with you", "attacked_self": "attacked you",
               "target_of_self": "your target"}
#: Block fields that describe the persona, not its condition (they never change in a fight).
_PERSONA = {"dual_allowed", "ranged", "armour", "armour_rating"}


def _render_key(game, blocks: Mapping[str, str], key: np.ndarray, header: str) -> str:
    """An observation key in words: a header line, then one line a block (self first), each field
    that is not 0 in words, as the env's ansi render words them; every field the key holds shows."""
    from combatsim.rl.fight_env import RENDER_COUNTS, RENDER_FLAGS, RENDER_SHARES, _count, _percent

    lines = [f"{game.ruleset}: {header}, {blocks['self']} sees"]
    by_block: dict[str, list[str]] = {}
    for name, value in zip(game.observation_names, key.tolist(), strict=True):
        prefix, dot, field = name.partition(".")
        if not dot:
            continue
        words = by_block.setdefault(prefix, [])
        if prefix not in blocks:  # an empty slot
            continue
        if field in ("in_fight", "escaped"):
            if field == "in_fight":
                words.insert(0, "in" if value > 0.5 else "out")
            elif value > 0.5:
                words.append("escaped")
        elif field in _PERSONA:
            continue
        elif field in RENDER_COUNTS:
            count, (_, one, many) = _count(field, value), RENDER_COUNTS[field]
            if count:
                words.append(f"{count} {one if count == 1 else many}")
        elif field in RENDER_SHARES:
            words.append(f"{RENDER_SHARES[field]} {_percent(value)}")
        elif field in RENDER_FLAGS or field in _TOWARD_YOU:
            if value > 0.5:
                words.append(RENDER_FLAGS.get(field) or _TOWARD_YOU[field])
        elif value != 0:
            words.append(f"{field.replace('_', ' ')} {value:.4g}")
    width = max(len(name) for name in blocks.values()) + 6
    for prefix, words in by_block.items():
        if prefix in blocks:
            who = "you" if prefix == "self" else "ally" if prefix.startswith("ally") else "foe"
            lines.append(f"  {f'{blocks[prefix]} ({who})':<{width}}  {', '.join(words)}")
    return "\n".join(lines)


class FightObserver:
    """A player's observation (tensor: the env's; string: it in words). The observation shows the
    chain state, so the information state is the observation (perfect recall adds nothing a
    policy could use: the fight from here on depends on the state alone)."""

    def __init__(self, fight: _Fight) -> None:
        self._fight = fight
        self.tensor = np.zeros(fight.observation_size, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: FightState, player: int) -> None:
        fight = state._node()
        if state._state is None or state._end is not None:
            self.tensor.fill(0)
        else:
            self.tensor[:] = fight.chain.observations([state._state], state._t, fight.rows[player])[0][0]

    def string_from(self, state: FightState, player: int) -> str:
        return state._words([state._node().rows[player]])


def table_policy(game: FightGame, policy, player: int | str, *, pure: bool = False, label: str = "openspiel"):
    """``policy`` (an ``open_spiel.python.policy.Policy`` of ``game`` or of
    ``pyspiel.convert_to_turn_based(game)``, such as CFR's average policy, or one of pyspiel's own)
    for ``player`` (its number or member name) as a combatsim :class:`~combatsim.solve.TablePolicy`:
    a table from the member's observation key to its action probabilities, over every state the
    player can meet. ``.save(path)`` writes it for ``combatsim fight --policy NAME=file:PATH``,
    ``simulate_fights(policies=)`` and the envs.

    A mixed table draws its action from a uniform value the fight gives in ``fight`` and
    ``simulate_fights`` (d100: the engine's policy die); called as ``policy(obs, masks)`` alone
    (as in an env loop) it samples from its own seeded generator. ``pure`` keeps only each
    state's most likely action (the lowest-numbered of equals)."""
    from combatsim.solve.policy import TablePolicy

    fight: _Fight = game.fight
    chain = fight.chain
    if isinstance(player, str):
        names = [chain.game.member_names[row] for row in fight.rows]
        if player not in names:
            raise ValueError(f"player: no player is named {player!r}; the game's players: {', '.join(map(repr, names))}")
        player = names.index(player)
    if not 0 <= player < len(fight.rows):
        raise ValueError(f"player: {player} is not a player; allowed: 0..{len(fight.rows) - 1}")
    # a policy of the turn-based form (OpenSpiel's CFR, its C++ policies, which name no game) is
    # asked at the turn-based node where the player declares
    simultaneous = game.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS
    policy_game = getattr(policy, "game", None)
    turn_game = None
    if simultaneous and (policy_game is None or policy_game.get_type().dynamics != game.get_type().dynamics):
        turn_game = policy_game or pyspiel.convert_to_turn_based(game)
    row = fight.rows[player]
    actions = len(chain.game.action_names)
    table: dict[bytes, np.ndarray] = {}
    for state in _decision_states(game):
        key = fight.key(state._state, state._t, row)
        if key in table:
            continue
        asked = state if turn_game is None else _turn_of(turn_game, state, player)
        try:
            chances = policy.action_probabilities(asked, player)
        except TypeError:  # pyspiel's own policies take the state alone
            chances = policy.action_probabilities(asked)
        probabilities = np.zeros(actions)
        for action, p in chances.items():
            probabilities[action] += p
        if pure:
            probabilities = np.eye(actions)[int(np.argmax(probabilities))]
        table[key] = probabilities / probabilities.sum()
    keys = np.array([np.frombuffer(k, dtype=np.float32) for k in table], dtype=np.float32)
    return TablePolicy(ruleset=chain.game.ruleset, scenario=chain.scenario.name, member=chain.game.member_names[row],
                       keys=keys.reshape(len(table), fight.observation_size),
                       probabilities=np.array(list(table.values())).reshape(len(table), actions),
                       keyer=chain.keyer(), label=label)


def openspiel_policy(game, policies: Mapping):
    """combatsim policies as one ``open_spiel.python.policy.Policy`` of ``game`` (a fight game or
    its ``pyspiel.convert_to_turn_based`` form), so OpenSpiel's ``exploitability``,
    ``best_response`` and ``expected_game_score`` measure them. ``policies``: every player's member
    name -> ``policy(obs, masks) -> actions`` (a saved or solved :class:`~combatsim.solve.TablePolicy`
    gives its mix; an action that is not legal is played as the engine plays it: "none")."""
    from open_spiel.python import policy as policy_lib

    from combatsim.policies import checked_actions, policy_label

    fight: _Fight = (game if isinstance(game, FightGame) else _fight_game(game)).fight
    chain = fight.chain
    names = [chain.game.member_names[row] for row in fight.rows]
    if not isinstance(policies, Mapping):
        raise TypeError(f"policies must be a mapping of member name -> policy(obs, masks) -> actions, "
                        f"got {type(policies).__name__}")
    unknown = [name for name in policies if name not in names]
    missing = [name for name in names if name not in policies]
    if unknown or missing:
        raise ValueError(f"policies: give one policy to each player {names!r}"
                         + (f"; {unknown!r} are not players" if unknown else "")
                         + (f"; {missing!r} have none" if missing else ""))
    by_player = [policies[name] for name in names]
    size = fight.observation_size
    actions = len(chain.game.action_names)

    class CombatsimPolicy(policy_lib.Policy):
        def action_probabilities(self, state, player_id=None):
            player = state.current_player() if player_id is None else player_id
            legal = state.legal_actions(player)
            if not legal:
                return {}
            obs = np.asarray(state.observation_tensor(player), dtype=np.float32)[-size:][None, :]
            masks = np.zeros((1, actions), dtype=np.int8)
            masks[0, legal] = 1
            policy = by_player[player]
            mixes = getattr(policy, "probabilities", None)
            if mixes is not None and hasattr(policy, "rows"):
                chances = mixes[policy.rows(obs)[0]]
            else:
                chosen = checked_actions(policy, names[player], policy(obs, masks), 1, actions)
                chances = np.zeros(actions)
                chances[chosen[0]] = 1.0
            played = dict.fromkeys(legal, 0.0)
            for action in np.flatnonzero(chances).tolist():
                at = action if action in played else 0
                played[at] = played.get(at, 0.0) + float(chances[action])
            return played

    made = CombatsimPolicy(game, list(range(len(names))))
    made.labels = {name: policy_label(policy) for name, policy in zip(names, by_player, strict=True)}
    return made


def _fight_game(game) -> FightGame:
    """The fight game under a turn-based conversion (loaded again from its parameters)."""
    params = game.get_parameters()
    inner = params.get("game") if isinstance(params.get("game"), Mapping) else None
    if inner is None or inner.get("name") != GAME_NAME:
        raise TypeError(f"game: a {GAME_NAME} game or its turn-based form, got {game}")
    return pyspiel.load_game(GAME_NAME, {key: value for key, value in inner.items() if key != "name"})


def _decision_states(game: FightGame):
    """Every decision node reachable whatever the players choose, each chain state and step once."""
    seen: set[tuple[int, int]] = set()
    frontier = [game.new_initial_state()]
    while frontier:
        state = frontier.pop()
        if state.is_terminal():
            continue
        if state.is_chance_node():
            for action, _p in state.chance_outcomes():
                frontier.append(state.child(action))
            continue
        node = (state._t, state._state)
        if node in seen:
            continue
        seen.add(node)
        yield state
        legal = [state.legal_actions(p) for p in range(game.num_players())]
        for joint in itertools.product(*legal):
            child = state.clone()
            if game.num_players() == 1:
                child.apply_action(joint[0])
            else:
                child.apply_actions(list(joint))
            frontier.append(child)


def _turn_of(turn_game, state: FightState, player: int):
    """The turn-based game's node where ``player`` declares in ``state`` (the players before it
    declared action 0... the first legal action, which its information state does not show)."""
    turn = turn_game.new_initial_state()
    for action in state.history():
        turn.apply_action(action)
    for _ in range(player):
        turn.apply_action(turn.legal_actions()[0])
    return turn


pyspiel.register_game(_game_type(), FightGame)
