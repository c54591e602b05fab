"""Whole duels on built-in policies through the streaming runner (the registry's "rl" kernels)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from combatsim.rl.envs import POLICIES, check_shaping
from combatsim.rl.rulesets import RULESETS
from combatsim.runner import Work, check_run, simulate
from combatsim.validation import check_choice

#: The duel counts' index of the steps played (side 0 wins, side 1 wins, other ends, steps).
DUEL_STEPS = 3


@dataclass(frozen=True)
class DuelsResult:
    duels: int
    side_0_wins: int
    side_1_wins: int
    other_ends: int
    steps: int
    backend: str
    #: Per duel +1 (side 0 won), -1 (side 1 won) or 0, when asked for with ``outcomes=True``.
    outcomes: np.ndarray | None = None


def simulate_duels(
    ruleset: str,
    n: int,
    *,
    agent: str = "scripted",
    opponent: str = "random",
    seed: int = 0,
    shaping: float = 0.0,
    backend: str = "auto",
    threads: int | None = None,
    chunk_size: int | None = None,
    outcomes: bool = False,
    **config: Any,
) -> DuelsResult:
    """``n`` duels (episodes 0..n-1 of env seed ``seed``) with both sides on built-in policies.

    Duel ``k`` is exactly episode ``k`` of an environment seeded ``seed`` whose both sides play
    those policies, whatever the threads or chunk size.
    """
    run = check_run(n, seed=seed, threads=threads, chunk_size=chunk_size, backend=backend, outcomes=outcomes,
                    output_bytes_per_item=8)
    spec = RULESETS[check_choice("ruleset", ruleset, tuple(RULESETS))]
    policies = np.array(
        [POLICIES[check_choice("agent", agent, ("scripted", "random"))],
         POLICIES[check_choice("opponent", opponent, ("scripted", "random"))]],
        dtype=np.int64,
    )
    params = spec.build(**config)
    out = np.zeros(run.n if run.outcomes else 0, dtype=np.int64)
    max_steps = int(params[importlib.import_module(f"combatsim.rl.{spec.name}_reference").G_MAX_STEPS])
    result, used, _ = simulate(
        f"rl.{spec.name}_duels", run, params=[params, policies, check_shaping(shaping)],
        per_item=[False, False, False], counts_size=4, outputs=[out],
        work=Work(least=1, most=max_steps, counted=DUEL_STEPS, per_count=1),
    )
    counts = result.counts
    return DuelsResult(int(result.items_done), int(counts[0]), int(counts[1]), int(counts[2]), int(counts[3]), used,
                       out if run.outcomes else None)
