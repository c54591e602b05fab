"""The rulesets' APIs share one skeleton: the run options of every ``simulate_*``, the fight
record's common keys, and the prepared attack's keyword checks."""

from __future__ import annotations

import inspect

import pytest

from combatsim import d100, exp, tss
from combatsim.d100.api import simulate_attacks, simulate_fights
from combatsim.d100.bench import FIGHTERS
from combatsim.exp import api as exp_api
from combatsim.exp.bench import FIGHTERS as EXP_SIDES
from combatsim.runner import RUN_OPTIONS
from combatsim.tss import api as tss_api
from combatsim.tss.bench import ALEX, THUG

SIMULATIONS = [simulate_attacks, simulate_fights, exp_api.simulate_to_hit, exp_api.simulate_attack,
               exp_api.simulate_fight, tss_api.simulate_attacks, tss_api.simulate_fights]


@pytest.mark.parametrize("simulate", SIMULATIONS, ids=lambda f: f"{f.__module__}.{f.__name__}")
def test_every_simulation_takes_the_run_options_by_keyword(simulate):
    parameters = inspect.signature(simulate).parameters
    assert next(iter(parameters)) == "n"
    for option in RUN_OPTIONS:
        assert parameters[option.name].kind is inspect.Parameter.KEYWORD_ONLY
        assert parameters[option.name].default == option.default
    assert "threads" in simulate.__doc__ and simulate.__name__.startswith("simulate_")
    required = {name: object() for name, parameter in parameters.items()
                if name != "n" and parameter.default is inspect.Parameter.empty}
    with pytest.raises(ValueError, match="^seed must be"):
        simulate(1, **required, seed=-1)  # the run options are checked first, whatever the ruleset inputs


@pytest.mark.parametrize(("call", "words"), [
    (lambda: simulate_attacks(1), "simulate_attacks() missing 1 required keyword-only argument: 'lethality'"),
    (lambda: simulate_attacks(1, pool=1, lethality=1, pol=1), "simulate_attacks() got an unexpected keyword argument 'pol'"),
    (lambda: tss_api.simulate_attacks(1, skill=9), "simulate_attacks() missing 1 required keyword-only argument: 'damage'"),
    (lambda: exp_api.simulate_attack(1, armour_rating=1, bon=2), "simulate_attack() got an unexpected keyword argument 'bon'"),
    (lambda: d100.Attack(pool=1), "Attack() missing 1 required keyword-only argument: 'lethality'"),
    (lambda: tss.Attack(skill=9, damage="d4w/d4w/d4w", seed=1), "Attack() got an unexpected keyword argument 'seed'"),
])
def test_keyword_errors_name_the_public_call(call, words):
    with pytest.raises(TypeError) as raised:
        call()
    assert str(raised.value) == words


def test_prepared_attacks_take_their_simulations_attack_inputs():
    for attack, simulate in ((d100.Attack, simulate_attacks), (exp.Attack, exp_api.simulate_attack),
                             (tss.Attack, tss_api.simulate_attacks)):
        own = [name for name in inspect.signature(simulate).parameters if name != "n"]
        assert [*own[:len(own) - len(RUN_OPTIONS)], "backend"] == list(inspect.signature(attack).parameters)


def test_fight_records_begin_with_the_shared_keys():
    shared = ["fights", "wins", "win_rates", "draws", "draw_rate", "standing"]
    results = [simulate_fights(300, FIGHTERS, seed=3), exp_api.simulate_fight(300, *EXP_SIDES, seed=3),
               tss_api.simulate_fights(300, side_a=[ALEX], side_b=[THUG], seed=3)]
    for result in results:
        record = result.as_dict()
        assert list(record)[:len(shared)] == shared
        assert record["wins"] == list(result.wins) and sum(record["wins"]) + record["draws"] <= record["fights"]
        assert record["win_rates"] == [wins / result.fights for wins in result.wins]
        assert list(record)[-4:] == ["seed", "backend", "threads", "partial"]
