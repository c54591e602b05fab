"""A solved policy: a table from what a member observes to its action (or its mix of actions).

The table's keys are the engine's observations with the fields the chain does not track set to
0 (``DecisionChain.observation_keys``), so the policy plays from observations alone, the same in
``combatsim fight --policy``, ``simulate_fights(policies=)`` and the environments. A mixed policy
draws its action from a uniform value the fight itself gives (``uniforms``: in d100 the policy
die the engine rolls for every declaration, elsewhere a counter-based stream of the fight's own,
``stream_uniforms``), so one fight makes one choice however it is played; called without them,
as in an env loop, it samples from its own generator, ``numpy.random.default_rng(seed)`` with
seed 0 until ``reseed(seed)``.

Saved as a NumPy ``.npz``: the ruleset, the scenario's name, the member, the observation keys
(float32 rows), the action probabilities per key (rows over the env actions) and the fields that
``observation_keys`` zeroes, so a loaded policy needs no solver.
"""

from __future__ import annotations

import json
from importlib import import_module
from pathlib import Path

import numpy as np

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
        self.reseed(0)

    @property
    def mixed(self) -> bool:
        return bool((self.probabilities.max(axis=1) < 1).any())

    @property
    def uses_policy_die(self) -> bool:
        """A mixed policy draws its choice in a fight from the fight itself (``policy_uniforms``)."""
        return self.mixed

    def policy_uniforms(self, seeds: np.ndarray, states: np.ndarray, member: int) -> np.ndarray:
        """The uniform values of ``member``'s choice in the engine ``states``: the ruleset's
        ``policy_uniforms`` (``combatsim.solve.keys_<ruleset>``: d100, the engine's policy die), else a
        stream of the fight's own apart from its dice (``stream_uniforms``)."""
        module = import_module(f"combatsim.solve.keys_{self.ruleset}")
        return getattr(module, "policy_uniforms", stream_uniforms)(seeds, states, member)

    def reseed(self, seed: int) -> None:
        """Restart the generator a mixed policy samples from when called without uniforms."""
        from combatsim.validation import check_seed

        self.seed = check_seed(seed)
        self._generator = np.random.default_rng(self.seed)

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
        if not self.mixed:
            return self._most_likely[rows].astype(np.int64)
        if uniforms is None:  # an env loop: a sample of the policy's own
            uniforms = self._generator.random(len(rows))
        cumulative = self._cumulative[rows]
        chosen = (cumulative < np.asarray(uniforms, dtype=np.float64)[:, None]).sum(axis=1)
        return np.minimum(chosen, self.probabilities.shape[1] - 1).astype(np.int64)

    def save(self, path: str | Path) -> None:
        meta = {"format": "combatsim solved policy", "version": 1, "ruleset": self.ruleset,
                "scenario": self.scenario, "member": self.member, "label": self.label,
                "keyer": self.keyer.spec}
        with open(path, "wb") as handle:
            np.savez_compressed(handle, meta=np.array(json.dumps(meta)), keys=self.keys,
                                probabilities=self.probabilities)


def _opaque(rows: np.ndarray) -> np.ndarray:
    """Each float32 row as one opaque (void) value: equal rows, equal values; sortable."""
    rows = np.ascontiguousarray(rows, dtype=np.float32)
    return rows.view(np.dtype((np.void, rows.shape[1] * 4))).ravel()


class SavedKeyer:
    """``observation_keys`` as a saved policy knows it: its ruleset's ``key_observations``
    (``combatsim.solve.keys_<ruleset>``) with the arguments ``spec`` gives."""

    def __init__(self, spec: dict, ruleset: str) -> None:
        self.spec = spec
        self._key = import_module(f"combatsim.solve.keys_{ruleset}").key_observations

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        return self._key(np.asarray(obs), **self.spec)


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
                       probabilities=probabilities, keyer=SavedKeyer(meta["keyer"], meta["ruleset"]),
                       label=meta.get("label", "solved"))


def stream_uniforms(seeds: np.ndarray, states: np.ndarray, member: int) -> np.ndarray:
    """Per fight: a uniform value in [0, 1) for ``member``'s choice in the coming step, from the
    fight's own counter-based stream kept apart from its dice (``combatsim.rng.DOMAIN_POLICY``):
    word ``member % 4`` of Philox block (fight index, steps played, DOMAIN_POLICY | member // 4)
    under the seed, over 2**32. A pure function of (seed, fight, step, member), so a mixed policy
    makes one choice per fight and step on every backend, thread count and chunking; for rulesets
    whose engine rolls no policy die (EXP, TSS)."""
    from combatsim.engine import S_INDEX, S_STEPS
    from combatsim.rng import DOMAIN_POLICY, philox4x32_arrays

    seeds = np.asarray(seeds, dtype=np.int64).astype(np.uint64)
    states = np.asarray(states)
    index = states[:, S_INDEX].astype(np.uint64)
    step = states[:, S_STEPS].astype(np.uint64)
    shift = np.uint64(32)
    domain = np.full(len(states), DOMAIN_POLICY | (member >> 2), dtype=np.uint64)
    words = philox4x32_arrays((index, index >> shift, step, domain), (seeds, seeds >> shift))
    return words[member & 3].astype(np.float64) / 2.0**32
