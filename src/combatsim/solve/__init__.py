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

from combatsim.solve.chain import SCRIPTED, DecisionChain, decision_chain
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

__all__ = ["FILE_PREFIX", "SCRIPTED", "BestResponse", "DecisionChain", "Interrupted", "Outcome", "PolicyError",
           "TablePolicy", "best_response", "decision_chain", "evaluate", "load_policy"]


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

    @property
    def gain(self) -> Fraction | float:
        return self.value.reward - self.scripted.reward

    def as_dict(self) -> dict:
        from combatsim.fight_odds.chain import fraction_text

        return {
            "scenario": self.scenario, "ruleset": self.ruleset, "member": self.member,
            "against": self.against, "method": self.method, "error_bound": self.error_bound,
            "best_response": self.value.as_dict(), "scripted": self.scripted.as_dict(),
            "gain": {"p": fraction_text(self.gain), "float": float(self.gain)},
            "states": {"met": self.states, "peak": self.peak_states}, "conflicts": self.conflicts,
            "seconds": self.seconds, "notes": self.notes,
        }


def _scenario(scenario):
    from combatsim.game import as_scenario

    return as_scenario(scenario)


def _fixed_policies(chain: DecisionChain, against: Mapping | None, deciders: tuple[int, ...]) -> tuple[dict, dict]:
    """``{member row: function (chain, states, t) -> actions}`` and their labels, for ``against``."""
    from combatsim.game import member_index
    from combatsim.policies import checked_actions, policy_label

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

        def evaluate(chain, states, t, policy=policy, name=name, row=row, label=label):
            obs, masks = chain.observations(states, t, row)
            try:
                result = policy(obs, masks)
            except Exception as problem:
                raise PolicyError(f"against: policy {label} of {name!r} raised {type(problem).__name__}: "
                                  f"{str(problem).splitlines()[0] if str(problem) else ''}") from None
            try:
                return checked_actions(policy, name, result, len(states), len(game.action_names))
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
    scenario = _scenario(scenario)
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
        scripted_walk = Walk(chain, (), {**fixed, member: SCRIPTED}, max(bound, 1), line)
        ends, unfinished, _ = play(scripted_walk, _all_options(scripted_walk), line)
        scripted = outcome_for(ends, unfinished, side)
        policy, conflicts = _table(chain, walk, chosen, member, label=f"best response of {agent}")
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

    scenario = _scenario(scenario)
    chain = decision_chain(scenario, method=method, max_states=max_states)
    member = member_index(chain.game, agent, field="agent")
    fixed, _ = _fixed_policies(chain, policies, ())
    line = Progress("evaluate", False)
    walk = Walk(chain, (), fixed, max(chain.state_bound if max_states is None else max_states, 1), line)
    ends, unfinished, _ = play(walk, _all_options(walk), line)
    return outcome_for(ends, unfinished, chain.game.member_sides[member])


def _all_options(walk: Walk) -> list[np.ndarray]:
    """Weights that take each state's one option (a walk without deciders)."""
    return [np.ones(len(o.row), dtype=object if walk.chain.exact else np.float64) for o in walk.options]


def _table(chain: DecisionChain, walk: Walk, chosen: list[np.ndarray], member: int, label: str) -> tuple[TablePolicy, int]:
    """The chosen actions as a table keyed by ``member``'s observation keys; the count of keys of
    one step that two states with different best actions share."""
    actions_count = len(chain.game.action_names)
    keys: dict[bytes, int] = {}
    rows: list[np.ndarray] = []
    actions: list[int] = []
    conflicts = 0
    for t, options in enumerate(walk.options):
        states = options.state[chosen[t]]
        picked = options.actions[chosen[t], 0]
        obs, _ = chain.observations(states.tolist(), t, member)
        for key, action in zip(chain.observation_keys(obs, member), picked.tolist(), strict=True):
            known = keys.get(key)
            if known is None:
                keys[key] = len(actions)
                rows.append(np.frombuffer(key, dtype=np.float32))
                actions.append(action)
            elif actions[known] != action:
                conflicts += 1
    probabilities = np.zeros((len(actions), actions_count))
    probabilities[np.arange(len(actions)), actions] = 1.0
    from combatsim.solve.policy import SavedKeyer

    policy = TablePolicy(ruleset=chain.game.ruleset, scenario=chain.scenario.name, member=chain.game.member_names[member],
                         keys=np.array(rows, dtype=np.float32).reshape(len(rows), -1), probabilities=probabilities,
                         keyer=SavedKeyer(chain.keyer_spec()), label=label)
    return policy, conflicts
