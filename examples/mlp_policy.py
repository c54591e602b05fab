"""Trained policies as batched callables for ``combatsim fight --policy``, in NumPy alone.

The weights of the networks that ``examples/train_sb3.py`` and ``examples/selfplay.py`` trained
ship in ``examples/policies/*.npz``; a new run of either saves its weights in
``examples/trained/`` instead (``--replace-shipped`` writes over the shipped files). This module
plays both without torch or SB3:

    cd examples
    combatsim fight d100_duel -n 1e6 --policy "Veteran=mlp_policy:sb3_veteran"
    combatsim fight d100_duel -n 1e6 --policy "Guard=mlp_policy:selfplay" --policy "Veteran=mlp_policy:selfplay"
    combatsim fight d100_duel -n 1e6 --policy "Veteran=mlp_policy:trained_sb3_veteran"   # your own run's

A file holds ``w0, b0, w1, b1, ...`` (torch's ``Linear`` layout: weight (out, in)), tanh between
layers, and ``observation_names`` / ``action_names`` to check the scenario against. The policy
plays the legal action with the highest logit (the greedy policy).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent / "policies"
#: where the training examples save new weights (not the shipped ones, which the docs measure)
TRAINED = Path(__file__).resolve().parent / "trained"


class MlpPolicy:
    """``policy(obs (N, d) float32, masks (N, a) int8) -> actions (N,) int64`` from a weights file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            with np.load(self.path, allow_pickle=False) as saved:
                data = {key: saved[key] for key in saved.files}
        except (OSError, ValueError) as problem:
            raise ValueError(f"policy file {self.path} does not load ({problem}); expected an .npz "
                             "saved by examples/train_sb3.py or examples/selfplay.py") from None
        layers = sum(1 for key in data if key.startswith("w"))
        if layers == 0 or any(f"w{k}" not in data or f"b{k}" not in data for k in range(layers)):
            raise ValueError(f"policy file {self.path} must hold layers w0, b0, w1, b1, ...; got {sorted(data)}")
        self.weights = [(data[f"w{k}"].astype(np.float32), data[f"b{k}"].astype(np.float32)) for k in range(layers)]
        self.observation_names = tuple(data["observation_names"].tolist()) if "observation_names" in data else None
        self.action_names = tuple(data["action_names"].tolist()) if "action_names" in data else None

    @property
    def sizes(self) -> tuple[int, int]:
        """(observation size, action count) the network takes and gives."""
        return self.weights[0][0].shape[1], self.weights[-1][0].shape[0]

    def logits(self, obs: np.ndarray) -> np.ndarray:
        x = obs
        for k, (weight, bias) in enumerate(self.weights):
            x = x @ weight.T + bias
            if k < len(self.weights) - 1:
                x = np.tanh(x)
        return x

    def __call__(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        size, actions = self.sizes
        if obs.ndim != 2 or obs.shape[1] != size:
            raise ValueError(f"policy {self.path.name} takes observations of shape (N, {size}), got {obs.shape}: "
                             "it was trained on another scenario's observations")
        if masks.ndim != 2 or masks.shape[1] != actions:
            raise ValueError(f"policy {self.path.name} gives {actions} actions, the scenario has {masks.shape[-1]}")
        logits = np.where(masks > 0, self.logits(obs), -np.inf)
        return logits.argmax(axis=1).astype(np.int64)


_loaded: dict[Path, MlpPolicy] = {}


def _saved(name: str, directory: Path = HERE) -> MlpPolicy:
    path = directory / f"{name}.npz"
    if path not in _loaded:
        _loaded[path] = MlpPolicy(path)
    return _loaded[path]


def sb3_veteran(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """MaskablePPO's Veteran of d100_duel (examples/train_sb3.py)."""
    return _saved("sb3_d100_veteran")(obs, masks)


def selfplay(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The self-play policy of d100_duel, either member (examples/selfplay.py)."""
    return _saved("selfplay_d100")(obs, masks)


def trained_sb3_veteran(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The Veteran of your own run of examples/train_sb3.py (examples/trained/)."""
    return _saved("sb3_d100_veteran", TRAINED)(obs, masks)


def trained_selfplay(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The policy of your own run of examples/selfplay.py (examples/trained/)."""
    return _saved("selfplay_d100", TRAINED)(obs, masks)
