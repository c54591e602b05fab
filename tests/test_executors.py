"""A Dask cluster gives bit-identical results to a local run."""

from __future__ import annotations

import json

import numpy as np
import pytest

from combatsim.cli import main as cli_main
from combatsim.executors import resolve_executor, use_executor
from combatsim.exp import simulate_to_hit

distributed = pytest.importorskip("dask.distributed")


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    with distributed.Client(cluster) as dask_client:
        yield dask_client
    cluster.close()


@pytest.mark.parametrize("chunk_size", [None, 333, 4096])
def test_dask_to_hit_equals_local(client, chunk_size):
    n = 20_000
    bonus = np.arange(n, dtype=np.int64) % 300
    local = simulate_to_hit(n, bonus=bonus, maximum_roll=800, armour_rating=600, seed=11, backend="numba",
                            outcomes=True)
    remote = simulate_to_hit(n, bonus=bonus, maximum_roll=800, armour_rating=600, seed=11, backend="cython",
                             outcomes=True, executor=resolve_executor("dask", client), chunk_size=chunk_size)
    assert remote.hits == local.hits and remote.attacks == n and not remote.partial
    np.testing.assert_array_equal(remote.to_hit, local.to_hit)


def test_use_executor_context(client):
    with use_executor("dask", client):
        remote = simulate_to_hit(3_000_000, bonus=110, maximum_roll=760, armour_rating=580, seed=4, chunk_size=1 << 20)
    assert remote.hits == simulate_to_hit(3_000_000, bonus=110, maximum_roll=760, armour_rating=580, seed=4).hits


def test_cli_dask_executor(client, capsys):
    address = client.scheduler.address
    args = ["attack", "exp", "--bonus", "110", "--max-roll", "760", "--armour-rating", "580", "-n", "500000",
            "--seed", "9", "--json"]
    assert cli_main([*args, "--executor", "dask", "--scheduler", address]) == 0
    remote = json.loads(capsys.readouterr().out)
    assert cli_main(args) == 0
    local = json.loads(capsys.readouterr().out)
    assert remote["hits"] == local["hits"]


def test_unknown_executor():
    with pytest.raises(ValueError, match="executor must be one of"):
        simulate_to_hit(10, bonus=1, maximum_roll=900, armour_rating=5, executor="ray")


def test_missing_dask_says_how_to_install(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    with pytest.raises(ValueError, match=r'pip install "\.\[dask\]" in the clone of combatsim'):
        resolve_executor("dask")


def test_dask_fights_equal_local(client):
    from combatsim.d100.api import Combatant, Weapon, simulate_fights
    from combatsim.exp.api import Combatant as ExpCombatant
    from combatsim.exp.api import simulate_fight
    from combatsim.exp.model import Weapon as ExpWeapon

    fighters = [Combatant(side=0, fighting=60, weapon=Weapon(30, 2)), Combatant(side=1, fighting=55, weapon=Weapon(40, 2))]
    local = simulate_fights(30_000, fighters, seed=5, outcomes=True)
    with use_executor("dask", client):
        remote = simulate_fights(30_000, fighters, seed=5, outcomes=True, chunk_size=7_000)
    assert remote.counts == local.counts and remote.rounds_histogram == local.rounds_histogram
    np.testing.assert_array_equal(remote.winner, local.winner)

    claw = ExpWeapon("claw", "A", "2d6")
    side0 = [ExpCombatant("a", 30, 500, claw, 120, 760)]
    side1 = [ExpCombatant("b", 35, 520, claw, 100, 740)]
    local = simulate_fight(20_000, side0, side1, seed=9)
    with use_executor("dask", client):
        remote = simulate_fight(20_000, side0, side1, seed=9, chunk_size=3_000)
    assert (remote.wins, remote.draws, remote.damage) == (local.wins, local.draws, local.damage)
    np.testing.assert_array_equal(remote.units_histogram, local.units_histogram)
