"""A solved policy: a table from what a member observes to its action (or its mix of actions).

The table's keys are the engine's observations with the fields the chain does not track set to
0 (``DecisionChain.observation_keys``), so the policy plays from observations alone, the same in
``combatsim fight --policy``, ``simulate_fights(policies=)`` and the environments. A mixed policy
draws its action from the policy die the engine rolls for every declaration (``uniforms``); called
without them, it plays the most likely action.

Saved as a NumPy ``.npz``: the ruleset, the scenario's name, the member, the observation keys
(float32 rows), the action probabilities per key (rows over the env actions) and the fields that
``observation_keys`` zeroes, so a loaded policy needs no solver.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from combatsim.d100.engine import (
    B_ATTACKED_SELF,
    B_DEFENDING,
    B_DUAL_WIELD,
    B_ENGAGED,
    B_ENGAGED_WITH_SELF,
    B_FLEE_TARGET,
    B_FLESH,
    B_IN_COVER,
    B_IN_FIGHT,
    B_RANGED,
    B_SERIOUS,
    B_TARGETED,
    BLOCK_FIELDS,
    GLOBAL_FIELDS,
)

#: The syntax of a saved policy in ``--policy`` / ``--against``: NAME=file:PATH.
FILE_PREFIX = "file:"


class TablePolicy:
    """``policy(obs, masks) -> actions`` from a table keyed by observation (see the module)."""

    def __init__(self, *, ruleset: str, scenario: str, member: str, keys: np.ndarray, probabilities: np.ndarray,
                 keyer, label: str = "solved") -> None:
        self.ruleset = ruleset
        self.scenario = scenario
        self.member = member
        self.keys = np.ascontiguousarray(keys, dtype=np.float32)
        self.probabilities = np.asarray(probabilities, dtype=np.float64)
        self.keyer = keyer
        self.label = label
        # rows as one opaque value each, sorted, so a batch of observations is looked up at once
        self._order = np.argsort(_opaque(self.keys), kind="stable")
        self._sorted = _opaque(self.keys)[self._order]
        self._cumulative = np.cumsum(self.probabilities, axis=1)
        self._most_likely = np.argmax(self.probabilities, axis=1)
        self.__qualname__ = f"TablePolicy[{label} {member}]"

    @property
    def mixed(self) -> bool:
        return bool((self.probabilities.max(axis=1) < 1).any())

    @property
    def uses_policy_die(self) -> bool:
        """A mixed d100 policy draws from the engine's policy die (``policy_uniforms``)."""
        return self.mixed and self.ruleset == "d100"

    def policy_uniforms(self, seeds: np.ndarray, states: np.ndarray, member: int) -> np.ndarray:
        """The policy die's uniform values for ``member`` in the engine ``states`` (``policy_uniforms``)."""
        return policy_uniforms(seeds, states, member)

    def rows(self, obs: np.ndarray) -> np.ndarray:
        """The table's row of each observation."""
        obs = np.asarray(obs)
        if obs.ndim != 2 or obs.shape[1] != self.keys.shape[1]:
            raise ValueError(f"policy {self.label} of {self.member!r}: observations of shape {obs.shape}; "
                             f"allowed: (n, {self.keys.shape[1]})")
        wanted = _opaque(self.keyer(obs))
        at = np.minimum(np.searchsorted(self._sorted, wanted), max(len(self._sorted) - 1, 0))
        found = self._sorted[at] == wanted if len(self._sorted) else np.zeros(len(wanted), dtype=bool)
        if not found.all():
            missing = int(np.flatnonzero(~found)[0])
            raise ValueError(f"policy {self.label} of {self.member!r}: observation {missing} of {len(wanted)} is "
                             f"not one it was solved for; it plays scenario {self.scenario!r} against the "
                             f"policies it was solved against")
        return self._order[at]

    def mixes(self, obs: np.ndarray, exact: bool = False) -> list[tuple]:
        """Per observation: ((action, probability), ...) over the actions it may take (Fractions
        from the stored floats' exact values when ``exact``, else floats)."""
        from fractions import Fraction

        out = []
        for row in self.probabilities[self.rows(np.asarray(obs))]:
            actions = np.flatnonzero(row > 0).tolist()
            chances = [Fraction(float(row[a])) if exact else float(row[a]) for a in actions]
            chances[-1] = 1 - sum(chances[:-1])  # a distribution, exactly
            out.append(tuple(zip(actions, chances, strict=True)))
        return out

    def __call__(self, obs: np.ndarray, masks: np.ndarray, uniforms: np.ndarray | None = None) -> np.ndarray:
        rows = self.rows(np.asarray(obs))
        if uniforms is None or not self.mixed:
            return self._most_likely[rows].astype(np.int64)
        cumulative = self._cumulative[rows]
        chosen = (cumulative < np.asarray(uniforms, dtype=np.float64)[:, None]).sum(axis=1)
        return np.minimum(chosen, self.probabilities.shape[1] - 1).astype(np.int64)

    def save(self, path: str | Path) -> None:
        meta = {"format": "combatsim solved policy", "version": 1, "ruleset": self.ruleset,
                "scenario": self.scenario, "member": self.member, "label": self.label,
                "keyer": self.keyer.describe()}
        with open(path, "wb") as handle:
            np.savez_compressed(handle, meta=np.array(json.dumps(meta)), keys=self.keys,
                                probabilities=self.probabilities)


def _opaque(rows: np.ndarray) -> np.ndarray:
    """Each float32 row as one opaque (void) value: equal rows, equal values; sortable."""
    rows = np.ascontiguousarray(rows, dtype=np.float32)
    return rows.view(np.dtype((np.void, rows.shape[1] * 4))).ravel()


class SavedKeyer:
    """``observation_keys`` as a saved policy knows it: the fields to zero, by rule."""

    def __init__(self, spec: dict) -> None:
        self.spec = spec

    def describe(self) -> dict:
        return self.spec

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        return key_observations(np.asarray(obs), **self.spec)


def load_policy(path: str | Path, flag: str = "--policy") -> TablePolicy:
    """A policy saved by ``combatsim solve --out`` (or ``Solution.policy.save``)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            keys = data["keys"]
            probabilities = data["probabilities"]
    except FileNotFoundError:
        raise ValueError(f"{flag}: no file {str(path)!r}") from None
    except Exception as problem:
        raise ValueError(f"{flag}: {str(path)!r} is not a saved solved policy ({type(problem).__name__})") from None
    if meta.get("format") != "combatsim solved policy" or keys.ndim != 2 or probabilities.shape[0] != keys.shape[0]:
        raise ValueError(f"{flag}: {str(path)!r} is not a saved solved policy")
    return TablePolicy(ruleset=meta["ruleset"], scenario=meta["scenario"], member=meta["member"], keys=keys,
                       probabilities=probabilities, keyer=SavedKeyer(meta["keyer"]), label=meta.get("label", "solved"))


def key_observations(obs: np.ndarray, passes: int, blocks: int, friend_blocks: int) -> np.ndarray:
    """Each observation's key (``DecisionChain.observation_keys``): the fields the chain does not
    track set to 0: every block's defence and whom it attacked (the last pass's; no law reads
    them), and, as the chain merges them, a mark before a round's first pass and, before its last
    pass, on whoever cannot flee (out or engaged); cover where no foe's weapon is ranged; and of a
    member out of the fight, all but whether it escaped, its mark and what never changes."""
    obs = np.array(obs, dtype=np.float32, copy=True).reshape(len(obs), -1)
    n = len(obs)
    body = obs[:, GLOBAL_FIELDS:GLOBAL_FIELDS + BLOCK_FIELDS * blocks].reshape(n, blocks, BLOCK_FIELDS)
    body[:, :, B_DEFENDING] = 0
    body[:, :, B_ATTACKED_SELF] = 0
    first_pass = obs[:, 0] == 0
    last_pass = (obs[:, 0] == np.float32((passes - 1) / passes)) & (passes > 1)
    in_fight = body[:, :, B_IN_FIGHT] != 0
    cannot_flee = ~in_fight | (body[:, :, B_ENGAGED] != 0)
    body[:, :, B_TARGETED] *= ~(first_pass[:, None] | (last_pass[:, None] & cannot_flee))
    friend_ranged = (body[:, :friend_blocks, B_RANGED] != 0).any(axis=1)
    foe_ranged = (body[:, friend_blocks:, B_RANGED] != 0).any(axis=1)
    body[:, :friend_blocks, B_IN_COVER] *= foe_ranged[:, None]
    body[:, friend_blocks:, B_IN_COVER] *= friend_ranged[:, None]
    # an out member's mark stays: the chain keeps it until the round's last pass
    for field in (B_FLESH, B_SERIOUS, B_IN_COVER, B_DUAL_WIELD, B_ENGAGED, B_ENGAGED_WITH_SELF, B_FLEE_TARGET):
        body[:, :, field] *= in_fight
    obs[:, GLOBAL_FIELDS:GLOBAL_FIELDS + BLOCK_FIELDS * blocks] = body.reshape(n, -1)
    return obs


def policy_uniforms(seeds: np.ndarray, states: np.ndarray, member: int) -> np.ndarray:
    """Per fight: the uniform value in [0, 1) of the policy die the engine rolls for ``member``'s
    declaration in the coming pass, which it ignores for an action given from outside: the die's
    32-bit item word over 2**32 (the die itself is that value's first decimal digit, plus 1). In
    the pass, every member in the fight rolls it in table order, but a surprised member in the
    first pass (engine._play_pass, _declare); 0 for a member who rolls none. A mixed solved policy
    draws its action from it, so one fight makes one choice wherever it is played."""
    from combatsim.d100.engine import M_ACTIVE, M_SURPRISED, MEMBER_FIELDS, S_MEMBERS
    from combatsim.d100.layout import D100
    from combatsim.engine import S_INDEX, S_LENGTH, S_RETRIES, S_WORDS, StreamHolder, stream_resume

    out = np.zeros(len(states))
    holder = StreamHolder()
    for e, s in enumerate(states):
        first_pass = s[S_LENGTH] == 0

        def rolls(c, s=s, first_pass=first_pass):
            base = S_MEMBERS + c * MEMBER_FIELDS
            return s[base + M_ACTIVE] != 0 and not (first_pass and s[base + M_SURPRISED] != 0)

        if not rolls(member):
            continue
        stream_resume(holder, seeds[e], s[S_INDEX], s[S_WORDS], s[S_RETRIES])
        for c in range(member):
            if rolls(c):
                holder.stream.die(D100)
        out[e] = holder.stream.word() / 2.0**32
    return out
