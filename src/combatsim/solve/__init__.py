"""Solving a fight: the exact best response of a member, the two-member equilibrium, exploitability.

The exact chain of ``combatsim odds fight`` walks every state of a fight; here a member's
declarations in it are decisions (``combatsim.solve.chain.DecisionChain``). Backward induction
over the finite horizon gives the best response to the other members' policies (scripted, or
given callables evaluated on the chain's observations), its value as exact fractions where the
chain is exact, and a :class:`combatsim.solve.policy.TablePolicy` that plays it from observations
in ``combatsim fight --policy``, ``simulate_fights(policies=)`` and the environments
(docs/solve.md).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from combatsim.solve.chain import SCRIPTED, DecisionChain
from combatsim.solve.induction import (
    Interrupted,
    Outcome,
    Progress,
    Walk,
    best_response_values,
    chosen_weights,
    float_error_bound,
    outcome_for,
    play,
)
from combatsim.solve.policy import FILE_PREFIX, TablePolicy, load_policy

__all__ = [
    "FILE_PREFIX",
    "SCRIPTED",
    "BestResponse",
    "DecisionChain",
    "Equilibrium",
    "Exploitability",
    "Interrupted",
    "Outcome",
    "PolicyError",
    "TablePolicy",
    "best_response",
    "check_agents",
    "decision_chain",
    "equilibrium",
    "evaluate",
    "exploitability",
    "load_policy",
]


#: The rulesets with a decision chain (``combatsim.solve.<ruleset>``), each imported on first use.
SOLVABLE_RULESETS = ("d100", "exp", "tss")


def decision_chain(scenario, *, method: str = "auto", max_states: int | None = None) -> DecisionChain:
    """The decision chain of a loaded ``combatsim.scenario.Scenario``, built by its ruleset's module
    ``combatsim.solve.<ruleset>`` (its ``decisions(scenario, method, max_states)``). ``method``:
    "auto" (exact where ``combatsim odds fight`` is exact), "exact" or "float64". ``max_states``
    refuses a fight whose state bound is larger, before any work
    (:class:`combatsim.fight_odds.TooManyStates`)."""
    from combatsim.fight_odds import DEFAULT_MAX_STATES, check_method, check_scenario
    from combatsim.validation import check_int

    check_scenario(scenario)
    check_method(method)
    max_states = check_int("max_states", DEFAULT_MAX_STATES if max_states is None else max_states, 1, 10**12)
    # Named one by one, not computed: the ruleset modules build on combatsim.solve.chain, below this one.
    if scenario.ruleset == "d100":
        from combatsim.solve.d100 import decisions
    elif scenario.ruleset == "exp":
        from combatsim.solve.exp import decisions
    elif scenario.ruleset == "tss":
        from combatsim.solve.tss import decisions
    else:
        raise ValueError(f"scenario: solving is available for the {', '.join(SOLVABLE_RULESETS)} rulesets; "
                         f"{scenario.file} is {scenario.ruleset}")
    return decisions(scenario, method, max_states)


class PolicyError(ValueError):
    """A policy that raised, or returned what the chain cannot play, named with its member."""


@dataclass
class BestResponse:
    """The best response of ``member`` against the other members' policies (``against``: member ->
    label; the rest scripted). Outcomes are Fractions (method "exact") or floats within
    ``error_bound``."""

    scenario: str
    ruleset: str
    member: str
    against: dict[str, str]
    method: str
    error_bound: float
    value: Outcome
    scripted: Outcome
    policy: TablePolicy
    #: chain states met, and the most live before one step
    states: int
    peak_states: int
    seconds: float
    #: observations of one step shared by chain states whose best actions differ (0: the
    #: observation determines the best action)
    conflicts: int = 0
    notes: list[str] = field(default_factory=list)
    #: set by ``exploitability``
    exploitability: Exploitability | None = None

    @property
    def gain(self) -> Fraction | float:
        return self.value.reward - self.scripted.reward

    def as_dict(self) -> dict:
        from combatsim.fight_odds.chain import both_forms

        return {
            "scenario": self.scenario, "ruleset": self.ruleset, "member": self.member,
            "against": self.against, "method": self.method, "error_bound": self.error_bound,
            "best_response": self.value.as_dict(), "scripted": self.scripted.as_dict(),
            "gain": both_forms(self.gain),
            "states": {"met": self.states, "peak": self.peak_states}, "conflicts": self.conflicts,
            "seconds": self.seconds, "notes": self.notes,
            **({"exploitability": self.exploitability.as_dict()} if self.exploitability is not None else {}),
        }


def _scenario(scenario, agents=(), policies=None):
    """The loaded scenario, its member names checked before any chain is built: an unknown member
    is named as such, not hidden behind the state bound's refusal."""
    from combatsim.game import as_scenario, member_index, scenario_game

    scenario = as_scenario(scenario)
    game = scenario_game(scenario)
    for name in agents:
        member_index(game, name, field="agent")
    if isinstance(policies, Mapping):
        for name in policies:
            member_index(game, name, field="against")
    return scenario


def _fixed_policies(chain: DecisionChain, against: Mapping | None, deciders: tuple[int, ...]) -> tuple[dict, dict]:
    """``{member row: function (chain, states, t) -> actions}`` and their labels, for ``against``."""
    from combatsim.game import member_index
    from combatsim.policies import call_policy, policy_label

    if against is None:
        return {}, {}
    if not isinstance(against, Mapping):
        raise TypeError(f"against must be a mapping of member name -> policy(obs, masks) -> actions, "
                        f"got {type(against).__name__}")
    game = chain.game
    fixed, labels = {}, {}
    for name, policy in against.items():
        row = member_index(game, name, field="against")
        if row in deciders:
            raise ValueError(f"against: {name!r} is the member being solved for; give policies to the others")
        if not callable(policy):
            raise TypeError(f"against[{name!r}] must be callable as policy(obs, masks) -> actions, "
                            f"got {type(policy).__name__}")
        label = getattr(policy, "label", None) if isinstance(policy, TablePolicy) else policy_label(policy)

        def evaluate(chain, states, t, policy=policy, name=name, row=row):
            obs, masks = chain.observations(states, t, row)
            if isinstance(policy, TablePolicy) and policy.mixed:
                return policy.mixes(obs, exact=chain.exact)
            try:
                return call_policy(policy, name, obs, masks, len(game.action_names))
            except (TypeError, ValueError) as problem:
                raise PolicyError(f"against: {problem}") from None

        fixed[row] = evaluate
        labels[name] = label
    return fixed, labels


def best_response(scenario, agent: str, *, against: Mapping | None = None, method: str = "auto",
                  max_states: int | None = None, progress: bool = False) -> BestResponse:
    """The best response of the member named ``agent`` in ``scenario`` (a Scenario, a path, an
    example's name or a document) to everyone else's scripted policy, or to the policies
    ``against`` gives (member name -> ``policy(obs, masks) -> actions``, deterministic).

    ``method``: "auto" (exact fractions where ``combatsim odds fight`` is exact), "exact" or
    "float64"; ``max_states`` refuses a larger fight before any work; ``progress`` writes a
    progress line on stderr once the work passes 2 s.
    """
    from combatsim.game import member_index

    started = time.perf_counter()
    scenario = _scenario(scenario, (agent,), against)
    chain = decision_chain(scenario, method=method, max_states=max_states)
    member = member_index(chain.game, agent, field="agent")
    fixed, labels = _fixed_policies(chain, against, (member,))
    bound = chain.state_bound if max_states is None else max_states
    line = Progress(f"solve {agent}", progress)
    try:
        walk = Walk(chain, (member,), fixed, max(bound, 1), line)
        chosen, _ = best_response_values(walk, member, line)
        side = chain.game.member_sides[member]
        ends, unfinished, _ = play(walk, chosen_weights(walk, chosen), line)
        value = outcome_for(ends, unfinished, side)
        scripted, scripted_walk = _fixed_outcome(chain, {**fixed, member: SCRIPTED}, max(bound, 1), side, line)

        def per_step(t):  # the chosen option's action, for certain
            options = walk.options[t]
            return options.state[chosen[t]], np.eye(len(chain.game.action_names))[options.actions[chosen[t], 0]]

        policy, conflicts = _table(chain, walk, per_step, member, label=f"best response of {agent}")
    finally:
        line.done()
    error = 0.0 if chain.exact else float_error_bound(chain.horizon, max(walk.rows.widest, scripted_walk.rows.widest))
    return BestResponse(
        scenario=scenario.name, ruleset=scenario.ruleset, member=agent, against=labels,
        method="exact" if chain.exact else "float64", error_bound=error, value=value, scripted=scripted,
        policy=policy, states=chain.state_count(), peak_states=walk.peak, seconds=time.perf_counter() - started,
        conflicts=conflicts)


def evaluate(scenario, agent: str, policies: Mapping | None = None, *, method: str = "auto",
             max_states: int | None = None) -> Outcome:
    """The outcome for ``agent``'s side when the members ``policies`` names play those policies
    (``policy(obs, masks) -> actions``, deterministic) and the rest their scripted policies,
    over the exact chain."""
    from combatsim.game import member_index

    scenario = _scenario(scenario, (agent,), policies)
    chain = decision_chain(scenario, method=method, max_states=max_states)
    member = member_index(chain.game, agent, field="agent")
    fixed, _ = _fixed_policies(chain, policies, ())
    limit = max(chain.state_bound if max_states is None else max_states, 1)
    return _fixed_outcome(chain, fixed, limit, chain.game.member_sides[member], Progress("evaluate", False))[0]


def _fixed_outcome(chain: DecisionChain, fixed: dict, max_states: int, side: int, line: Progress) -> tuple[Outcome, Walk]:
    """The outcome for ``side`` when the members ``fixed`` names play those policies and the rest
    their scripted ones (a walk without deciders: each state's one option), and the walk."""
    walk = Walk(chain, (), fixed, max_states, line)
    ends, unfinished, _ = play(walk, [np.ones(len(o.row), dtype=object if chain.exact else np.float64)
                                      for o in walk.options], line)
    return outcome_for(ends, unfinished, side), walk


def _table(chain: DecisionChain, walk: Walk, per_step, member: int, label: str) -> tuple[TablePolicy, int]:
    """A table keyed by ``member``'s observation keys: ``per_step(t)`` gives, per step, the live
    states and each one's action probabilities (rows over the env actions). Also the count of
    keys of one step that two states with different probabilities share."""
    from combatsim.solve.policy import _opaque

    keyer = chain.keyer()
    step_keys, step_chances = [], []
    for t in range(len(walk.options)):
        states, chances = per_step(t)
        obs, _ = chain.observations(states.tolist(), t, member)
        step_keys.append(keyer(obs))
        step_chances.append(np.asarray(chances, dtype=np.float64).reshape(len(states), -1))
    width = len(chain.game.observation_names)
    all_keys = np.concatenate(step_keys) if step_keys else np.zeros((0, width), dtype=np.float32)
    all_chances = np.concatenate(step_chances) if step_chances else np.zeros((0, len(chain.game.action_names)))
    # each key's first meeting, in the order met; a later meeting with other chances is a conflict
    _, first, inverse = np.unique(_opaque(all_keys), return_index=True, return_inverse=True)
    conflicts = int((np.abs(all_chances - all_chances[first[inverse.ravel()]]).max(axis=1, initial=0) > 1e-9).sum())
    first.sort()
    policy = TablePolicy(ruleset=chain.game.ruleset, scenario=chain.scenario.name, member=chain.game.member_names[member],
                         keys=all_keys[first], probabilities=all_chances[first], keyer=keyer, label=label)
    return policy, conflicts


@dataclass
class Equilibrium:
    """The zero-sum game between ``members`` (A, B; everyone else scripted): its value to A,
    within [low, high] (certified; ``error_bound`` adds float64 rounding), A's outcome when both
    play their equilibrium policies, and the best responses against the scripted opponents."""

    scenario: str
    ruleset: str
    members: tuple[str, str]
    value: float
    low: float
    high: float
    error_bound: float
    outcome: Outcome
    policies: dict[str, TablePolicy]
    #: A's best response against the scripted B, and B's against the scripted A (each its own reward)
    best_responses: dict[str, BestResponse]
    #: matrix games solved by each method: one-sided (one member has one action), pure (a saddle
    #: point after removing dominated actions), linear program
    games: dict[str, int]
    states: int
    peak_states: int
    seconds: float
    conflicts: int = 0

    @property
    def method(self) -> str:
        return "float64; matrix games by dominance, saddle points and linear programs (scipy HiGHS)"

    def as_dict(self) -> dict:
        a, b = self.members
        return {
            "scenario": self.scenario, "ruleset": self.ruleset, "members": list(self.members),
            "method": self.method, "error_bound": self.error_bound,
            "value": {"float": self.value, "low": self.low, "high": self.high},
            "outcome": self.outcome.as_dict(),
            "best_response": {a: self.best_responses[a].as_dict(), b: self.best_responses[b].as_dict()},
            "bounds_hold": self.bounds_hold, "games": self.games,
            "states": {"met": self.states, "peak": self.peak_states}, "conflicts": self.conflicts,
            "seconds": self.seconds,
        }

    @property
    def bounds_hold(self) -> bool:
        """V <= A's best response to the scripted B, and V >= -(B's best response to the scripted A),
        within the error bounds."""
        a, b = self.members
        slack = self.error_bound + self.best_responses[a].error_bound + self.best_responses[b].error_bound
        return (self.value <= float(self.best_responses[a].value.reward) + slack
                and self.value >= -float(self.best_responses[b].value.reward) - slack)


def check_agents(game, agents) -> tuple[int, int]:
    from combatsim.game import member_index

    if isinstance(agents, str):
        agents = [name.strip() for name in agents.split(",")]
    agents = list(agents)
    if len(agents) != 2:
        raise ValueError(f"agents: name exactly two members of opposite sides, as A,B; got {len(agents)}")
    rows = tuple(member_index(game, name, field="agents") for name in agents)
    if game.member_sides[rows[0]] == game.member_sides[rows[1]]:
        raise ValueError(f"agents: {agents[0]!r} and {agents[1]!r} are on one side; name members of opposite sides")
    return rows


def equilibrium(scenario, agents, *, max_states: int | None = None, progress: bool = False) -> Equilibrium:
    """The equilibrium of the zero-sum fight between the two members ``agents`` (names, or "A,B"),
    everyone else on its scripted policy: each state a matrix game of their simultaneous
    declarations (docs/solve.md). Computed in float64 with a certified error bound."""
    from combatsim.game import scenario_game
    from combatsim.solve.games import _linprog, equilibrium_values

    started = time.perf_counter()
    scenario = _scenario(scenario)
    first, second = check_agents(scenario_game(scenario), agents)  # before the state bound's check
    chain = decision_chain(scenario, method="float64", max_states=max_states)
    _linprog()
    names = (chain.game.member_names[first], chain.game.member_names[second])
    bound = chain.state_bound if max_states is None else max_states
    line = Progress(f"solve {names[0]},{names[1]}", progress)
    try:
        walk = Walk(chain, (first, second), {}, max(bound, 1), line)
        weights, mixes, values, low, high, games = equilibrium_values(walk, first, line)
        ends, unfinished, _ = play(walk, weights, line)
        outcome = outcome_for(ends, unfinished, chain.game.member_sides[first])
        value, low_value, high_value = (float(sum(p * before[s] for s, p in chain.initial()))
                                        for before in (values, low, high))
        policies, conflicts = {}, 0
        actions_count = len(chain.game.action_names)
        for index, (member, name) in enumerate(zip((first, second), names, strict=True)):
            def per_step(t, index=index):
                states = np.array(sorted(mixes[t]), dtype=np.int64)
                chances = np.zeros((len(states), actions_count))
                for k, state in enumerate(states.tolist()):
                    actions, mix = mixes[t][state][2 * index:2 * index + 2]
                    chances[k, actions] = mix
                return states, chances

            policies[name], shared = _table(chain, walk, per_step, member, label=f"equilibrium of {name}")
            conflicts += shared
    finally:
        line.done()
    rounding = float_error_bound(chain.horizon, walk.rows.widest)
    responses = {name: best_response(scenario, name, max_states=max_states, method="float64", progress=progress)
                 for name in names}
    return Equilibrium(
        scenario=scenario.name, ruleset=scenario.ruleset, members=names, value=value, low=low_value, high=high_value,
        error_bound=max(high_value - value, value - low_value) + rounding, outcome=outcome, policies=policies,
        best_responses=responses, games=games, states=chain.state_count(), peak_states=walk.peak,
        seconds=time.perf_counter() - started, conflicts=conflicts)


@dataclass
class Exploitability:
    """How much more than the equilibrium value a best response gets against a policy."""

    #: the best response's expected reward against the policy, minus the equilibrium value (>= 0 up
    #: to the error bound: no policy of the opponent holds the responder below the value)
    value: float
    #: the equilibrium value of the game between the responder and the policy's member
    equilibrium: float
    error_bound: float

    def as_dict(self) -> dict:
        return {"value": self.value, "equilibrium": self.equilibrium, "error_bound": self.error_bound}


def exploitability(scenario, agent: str, against: Mapping, *, method: str = "auto", max_states: int | None = None,
                   progress: bool = False) -> BestResponse:
    """The best response of ``agent`` against ``against`` (one member of the other side and its
    policy; anyone else scripted), with ``.exploitability``: its expected reward minus the value of
    the game between ``agent`` and that member."""
    from combatsim.game import member_index, scenario_game

    if not isinstance(against, Mapping) or len(against) != 1:
        raise ValueError("against: exploitability measures one policy: give one member of the other side and its "
                         "policy")

    scenario = _scenario(scenario)
    opponent = next(iter(against))
    game = scenario_game(scenario)
    if game.member_sides[member_index(game, opponent, "against")] == game.member_sides[member_index(game, agent)]:
        raise ValueError(f"against: {opponent!r} is on {agent!r}'s side; exploitability is against a foe's policy")
    response = best_response(scenario, agent, against=against, method=method, max_states=max_states,
                             progress=progress)
    game_value = equilibrium(scenario, (agent, opponent), max_states=max_states, progress=progress)
    response.exploitability = Exploitability(
        value=float(response.value.reward) - game_value.value, equilibrium=game_value.value,
        error_bound=response.error_bound + game_value.error_bound)
    return response


def best_response_share(scenario, agent: str, policy, *, against: Mapping | None = None, max_states: int | None = None,
                        progress: bool = False) -> dict:
    """How a policy of ``agent`` compares with the best response to the same opponents (scripted,
    or ``against``), both evaluated exactly on the chain: their outcomes, and the policy's share
    of the best response's expected reward and of its gain over the scripted policy."""
    response = best_response(scenario, agent, against=against, max_states=max_states, progress=progress)
    own = evaluate(scenario, agent, {**(against or {}), agent: policy}, max_states=max_states)
    best, scripted = float(response.value.reward), float(response.scripted.reward)
    return {"policy": own, "best_response": response.value, "scripted": response.scripted,
            "share_of_value": float(own.reward) / best if best > 0 else float("nan"),
            "share_of_gain": (float(own.reward) - scripted) / (best - scripted) if best > scripted else float("nan")}


def share_report(agent: str, share: dict) -> str:
    """One line for a training script's end: the trained policy against the best response."""
    own, best = share["policy"], share["best_response"]
    return (f"{agent}: trained policy wins {float(own.win):.2%}, expected reward {float(own.reward):+.4f}; the best "
            f"response wins {float(best.win):.2%}, {float(best.reward):+.4f}: the trained policy has "
            f"{share['share_of_value']:.1%} of its value ({share['share_of_gain']:.1%} of its gain over the scripted "
            f"policy; combatsim solve, docs/solve.md)")
