"""Exact fight odds (combatsim.fight_odds): worked cases by hand, mirror matches, the two EXP
chains against each other, and agreement with the fight kernels within 5 sigma."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import pytest

from combatsim.cli import main as cli_main
from combatsim.fight_odds import TooManyStates, fight_odds
from combatsim.fight_odds.chain import Tally
from combatsim.fight_odds.curve import MAX_POINTS, fight_curve, parse_vary
from combatsim.fight_odds.exp import ExpChain
from combatsim.scenario import ScenarioError, load, resolve, ruleset_module

EXAMPLES = Path(__file__).parent.parent / "examples"
#: The million-fight agreement tests run only when ``-m slow`` selects them (minutes of CPU).
million_fights = pytest.mark.skipif(
    "'slow' not in (config.getoption('markexpr') or '').replace('not slow', '')",
    reason="the million-fight form: pytest -m slow tests/test_fight_odds.py")


def creature(name: str, hit_points: int, armour_rating: int, bonus: int, damage: str, *, weapon_type: str = "A",
             maximum_roll: int = 1000, ammunition: int | None = None, damage_adjustment: int = 0) -> str:
    load_text = f", ammunition = {ammunition}" if ammunition is not None else ""
    return f'''
[[sides.members]]
kind = "creature"
name = "{name}"
hit_points = {hit_points}
armour_rating = {armour_rating}
bonus = {bonus}
maximum_roll = {maximum_roll}
damage_adjustment = {damage_adjustment}
weapon = {{ name = "w", type = "{weapon_type}", damage = "{damage}", natural = true{load_text} }}
'''


def exp_scenario(tmp_path: Path, sides: list[list[str]], unit_limit: int = 100, name: str = "s"):
    text = f'ruleset = "exp"\nname = "{name}"\n[options]\nunit_limit = {unit_limit}\n'
    for index, members in enumerate(sides):
        text += f'[[sides]]\nname = "side {index}"\n' + "".join(members)
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return load(path)


def example(name: str, overrides=()):
    path, label = resolve(name)
    return load(path, list(overrides), label=label)


# --- worked cases, by hand ------------------------------------------------------------------------


def test_one_hit_duel_by_hand(tmp_path):
    """A hits on kilodie > 500 (1/2), B on kilodie > 750 (1/4); one hit kills; two units.
    Per unit: A alone hits 1/2 x 3/4 = 3/8, B alone 1/8, both 1/8, neither q = 3/8.
    Over two units: A wins 3/8 (1 + q) = 33/64, B 11/64, draws 11/64, unfinished q^2 = 9/64."""
    scenario = exp_scenario(tmp_path, [[creature("A", 1, 750, 0, "1")], [creature("B", 1, 500, 0, "1")]],
                            unit_limit=2)
    odds = fight_odds(scenario)
    assert odds.method == "exact" and odds.error_bound == 0
    assert odds.wins == [Fraction(33, 64), Fraction(11, 64)]
    assert odds.draws == Fraction(11, 64) and odds.unfinished == Fraction(9, 64)
    assert odds.escapes == 0 and odds.wins_by_flight == [0, 0]
    assert odds.length == {1: Fraction(5, 8), 2: Fraction(3, 8)}


def test_two_hits_needed_against_one_by_hand(tmp_path):
    """A (2 hit points) against B (1), one unit: each hits on 1/2 for 1 damage. A's hit takes
    B out; B's hit leaves A on 1 hit point. So A wins 1/2, and 1/2 is unfinished at the limit."""
    scenario = exp_scenario(tmp_path, [[creature("A", 2, 500, 0, "1")], [creature("B", 1, 500, 0, "1")]],
                            unit_limit=1)
    odds = fight_odds(scenario)
    assert odds.wins == [Fraction(1, 2), 0] and odds.draws == 0 and odds.unfinished == Fraction(1, 2)


def test_mirror_match_is_exactly_even(tmp_path):
    fighter = creature("X", 12, 600, 100, "2d6", maximum_roll=900)
    odds = fight_odds(exp_scenario(tmp_path, [[fighter], [fighter]]))
    assert odds.wins[0] == odds.wins[1] == (1 - odds.draws - odds.unfinished) / 2
    assert odds.wins[0] + odds.wins[1] + odds.draws + odds.unfinished == 1


def test_team_mirror_match_is_exactly_even(tmp_path):
    side = [creature("X", 3, 600, 100, "1d3", maximum_roll=900), creature("Y", 2, 550, 50, "1d2")]
    odds = fight_odds(exp_scenario(tmp_path, [side, side], unit_limit=30))
    assert odds.wins[0] == odds.wins[1]
    assert sum(odds.wins) + odds.draws + odds.unfinished == 1


def test_the_duel_chain_equals_the_general_chain(tmp_path):
    """The one-against-one shortcut (independent tracks) and the general chain over joint states
    give the same fractions, to the last digit."""
    scenario = exp_scenario(tmp_path, [[creature("A", 9, 540, 60, "1d6+1", weapon_type="D", ammunition=9)],
                                       [creature("B", 11, 500, 20, "2d4", weapon_type="automatic",
                                                 ammunition=30)]], unit_limit=12)
    duel = Tally(exact=True)
    ExpChain(scenario.spec).run(duel, 10**6)
    general = Tally(exact=True)
    chain = ExpChain(scenario.spec)
    laws, denominators = chain._laws(True)
    chain._teams(general, laws, denominators, 10**6)
    keys = [("wins", 0), ("wins", 1), ("draws",), ("unfinished",)]
    assert [duel.probability(k) for k in keys] == [general.probability(k) for k in keys]
    assert duel.lengths() == general.lengths()
    assert sum(duel.lengths().values()) == 1


def test_float64_is_within_its_bound_of_the_exact_odds():
    exact = fight_odds(example("exp_bob"), method="exact")
    rough = fight_odds(example("exp_bob"), method="float64")
    assert rough.method == "float64" and 0 < rough.error_bound < 1e-9
    for a, b in zip([*exact.wins, exact.draws, exact.unfinished], [*rough.wins, rough.draws, rough.unfinished],
                    strict=True):
        assert abs(float(a) - b) <= rough.error_bound + 1e-17


def test_too_many_states_is_one_line_before_any_work():
    with pytest.raises(TooManyStates, match=r"up to 17,794 states.*limit of 100;.*combatsim fight --target-error"):
        fight_odds(example("exp_bob"), max_states=100)


# --- agreement with the fight kernels -------------------------------------------------------------


def agree(scenario, n: int, seed: int = 11, max_states: int = 10**8, backend: str = "auto") -> None:
    """Each side's wins, the draws (with unfinished fights, which the kernels count as draws) and
    the mean length agree with n simulated fights within 5 sigma."""
    odds = fight_odds(scenario, max_states=max_states)
    summary = ruleset_module(scenario.ruleset).run(scenario.spec, n=n, seed=seed, backend=backend, threads=None)
    assert summary.fights == n
    expected = [*odds.wins, odds.draws + odds.unfinished]
    observed = [*summary.wins, summary.draws + (getattr(summary, "unfinished", None) or 0)]
    for p, count in zip(expected, observed, strict=True):
        p = float(p)
        assert abs(count / n - p) <= 5 * math.sqrt(max(p * (1 - p), 0.0) / n) + 1e-9, (scenario.name, expected, observed)
    mean = sum(k * float(p) for k, p in odds.length.items())
    variance = sum(k * k * float(p) for k, p in odds.length.items()) - mean * mean
    simulated = sum(k * c for k, c in summary.rounds_histogram.items()) / n
    assert abs(simulated - mean) <= 5 * math.sqrt(max(variance, 0.0) / n) + 1e-9


def exp_cases(tmp_path) -> list:
    return [
        example("exp_bob"),
        # lopsided: the slug on 12 hit points
        example("exp_bob", ["sides[1].members[0].hit_points=12", "sides[0].members[0].weapon.ammunition=40"]),
        # close: two near-equal creatures
        exp_scenario(tmp_path, [[creature("A", 14, 560, 80, "1d8", maximum_roll=800)],
                                [creature("B", 13, 540, 70, "2d4", maximum_roll=780)]], name="close"),
        # teams: two against one, an automatic weapon and a type E with little ammunition
        exp_scenario(tmp_path, [[creature("A", 6, 500, 40, "1d4", weapon_type="automatic", ammunition=24),
                                 creature("B", 5, 520, 60, "1d3", weapon_type="E", ammunition=7)],
                                [creature("C", 14, 520, 150, "1d6+1", maximum_roll=900)]], unit_limit=20,
                     name="teams"),
    ]


def test_exp_odds_agree_with_the_kernels(tmp_path):
    for scenario in exp_cases(tmp_path):
        agree(scenario, n=40_000)


@pytest.mark.slow
@million_fights
def test_exp_odds_agree_with_the_kernels_a_million_fights(tmp_path):
    for scenario in exp_cases(tmp_path):
        agree(scenario, n=1_000_000, seed=12)


# --- curves ---------------------------------------------------------------------------------------


def test_parse_vary_ranges_and_values():
    assert parse_vary("a.b=1:5:2") == ("a.b", [1, 3, 5])
    assert parse_vary("a=5:1:-2") == ("a", [5, 3, 1])
    assert parse_vary("a=1.0:2.0:0.5") == ("a", [1.0, 1.5, 2.0])
    assert parse_vary("sides[0].members[0].torso=none,light,heavy")[1] == ["none", "light", "heavy"]
    for text, message in (("a=1:5:0", "nonzero"), ("a=1:5:-1", "nonzero"), ("a=5:1:1", "nonzero"),
                          ("a=1:5", "three numbers"), ("a=", "expected PATH"),
                          (f"a=1:{MAX_POINTS + 1}:1", f"at most {MAX_POINTS} points"),
                          ("a[x]=1:2:1", "is not a path")):
        with pytest.raises(ValueError, match=message):
            parse_vary(text)


def test_curve_points_equal_odds_at_each_value():
    curve = fight_curve(example("exp_bob"), "sides[1].members[0].hit_points=38:42:2")
    assert [p["value"] for p in curve["points"]] == [38, 40, 42]
    middle = fight_odds(example("exp_bob"))
    assert curve["points"][1]["sides"][0]["wins"]["p"] == str(middle.wins[0])
    assert all(p["method"] == "exact" for p in curve["points"])
    assert curve["axis"] == "sides[1].members[0].hit_points (hit points)"


def test_curve_refuses_a_bad_value_naming_the_path_before_any_work(monkeypatch):
    import combatsim.fight_odds.curve as curve_module

    monkeypatch.setattr(curve_module, "fight_odds", lambda *a, **k: pytest.fail("work before validation"))
    with pytest.raises(ScenarioError, match=r"--vary sides\[0\]\.members\[0\]\.armour_rating=2000001: .*"
                                            r"armour_rating: must be in"):
        fight_curve(example("exp_bob"), "sides[0].members[0].armour_rating=1999999:2000001:1")
    with pytest.raises(ScenarioError, match=r"unknown key\(s\) 'armur'"):
        fight_curve(example("exp_bob"), "sides[0].members[0].armur=1:2:1")


@pytest.mark.parametrize("given", ["exp_bob_too", {"ruleset": "exp"}, None])
def test_a_scenario_not_loaded_gets_one_line_naming_the_loader(given):
    for call in (lambda: fight_odds(given), lambda: fight_curve(given, "unit_limit=5,6")):
        with pytest.raises(TypeError, match=r"^scenario must be a loaded combatsim\.scenario\.Scenario "
                                            r"\(combatsim\.scenario\.load\(path\); .*got " + type(given).__name__ + "$"):
            call()


def test_curve_simulates_a_point_too_large_for_exact_odds():
    curve = fight_curve(example("exp_bob"), "sides[1].members[0].hit_points=40,41", max_states=18_000, n=2000)
    assert [p["method"] for p in curve["points"]] == ["exact", "simulated"]
    assert curve["points"][1]["fights"] == 2000


# --- the command line -----------------------------------------------------------------------------


def test_cli_odds_fight_json(capsys):
    assert cli_main(["odds", "fight", "exp_bob", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["method"] == "exact" and record["ruleset"] == "exp"
    total = sum(Fraction(side["wins"]["p"]) for side in record["sides"])
    total += Fraction(record["draws"]["p"]) + Fraction(record["unfinished"]["p"]) + Fraction(record["escapes"]["p"])
    assert total == 1
    assert sum(Fraction(v["p"]) for v in record["length"]["distribution"].values()) == 1


def test_cli_max_states_error_is_one_line(capsys):
    assert cli_main(["odds", "fight", "exp_bob", "--max-states", "10"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "17,794 states" in err and "--target-error" in err


def test_cli_curve_plot_is_written_whole(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    target = tmp_path / "curve.png"
    assert cli_main(["curve", "fight", "exp_bob", "--vary", "sides[0].members[0].armour_rating=500:540:20",
                     "--plot", str(target), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert len(record["points"]) == 3 and target.read_bytes()[:4] == b"\x89PNG"
    assert [p.name for p in tmp_path.iterdir()] == ["curve.png"]  # no temporary left behind


def test_cli_curve_bad_vary_leaves_no_file(capsys, tmp_path):
    target = tmp_path / "curve.png"
    assert cli_main(["curve", "fight", "exp_bob", "--vary", "sides[0].members[0].armour_rating=500:700:0",
                     "--plot", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "sides[0].members[0].armour_rating" in err and "step" in err
    assert list(tmp_path.iterdir()) == []


# --- TSS ------------------------------------------------------------------------------------------


def tss_member(skill="10/5/2", action_check="20/20/20", actions=1, durability=(1, 1, 1), damage="1s/1s/1s",
               weapon_class="LI", quality="ordinary", armour: str = "", resolve: str = "", attack_steps=0,
               defence_steps=0) -> str:
    text = f'''
[[sides.members]]
skill = "{skill}"
action_check = "{action_check}"
actions_per_round = {actions}
durability = [{", ".join(map(str, durability))}]
attack_steps = {attack_steps}
defence_steps = {defence_steps}
weapon = {{ damage = "{damage}", class = "{weapon_class}", quality = "{quality}" }}
'''
    if armour:
        text += f"armour = {armour}\n"
    if resolve:
        text += f'resolve = "{resolve}"\n'
    return text


def tss_scenario(tmp_path: Path, sides: list[list[str]], max_rounds: int = 100, name: str = "t"):
    text = f'ruleset = "tss"\nname = "{name}"\n[options]\nmax_rounds = {max_rounds}\n'
    for index, members in enumerate(sides):
        text += f'[[sides]]\nname = "side {index}"\n' + "".join(members)
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return load(path)


def test_tss_one_round_by_hand(tmp_path):
    """Both always act in the Amazing phase (action check 20/20/20) with equal scores, so the
    tie-break words order them: A (index 0) first with f = P(word_A > word_B) + P(equal) =
    (N + 1) / 2N, N = 2^32. Each hits on a control die of 1..10 (1/2) and any hit takes the other
    out. A wins f/2 + (1 - f)/4 = (1 + f)/4, B (2 - f)/4; a quarter goes on to round 2."""
    scenario = tss_scenario(tmp_path, [[tss_member()], [tss_member()]], max_rounds=1)
    odds = fight_odds(scenario)
    f = Fraction(2**32 + 1, 2**33)
    assert odds.method == "exact"
    assert odds.wins == [(1 + f) / 4, (2 - f) / 4] and odds.unfinished == Fraction(1, 4)
    assert odds.wins[0] == Fraction(2**33 + 2**32 + 1, 2**35)
    assert odds.draws == 0 and odds.length == {1: 1}


def test_tss_mirror_match_leans_to_index_order_by_the_tie_break_only(tmp_path):
    """Equal tie-break words go to the lower index (docs/tss.md), a 2^-32 chance a round: a mirror
    match is even but for that."""
    member = tss_member(skill="12/6/3", action_check="13/6/3", actions=2, durability=(3, 3, 2),
                        damage="d4s/d4w/d4+1w")
    odds = fight_odds(tss_scenario(tmp_path, [[member], [member]], max_rounds=3))
    assert 0 < odds.wins[0] - odds.wins[1] < 1e-8
    assert sum(odds.wins) + odds.unfinished == 1


def tss_cases(tmp_path, rounds: int) -> list:
    return [
        example("tss_alex", [f"options.max_rounds={rounds}"]),
        # lopsided: Alex against a thug on small tracks
        example("tss_alex", [f"options.max_rounds={rounds}", "sides[1].members[0].durability=[5, 4, 2]"]),
        # close: two near-equal fighters, one with Resolve-physical, armour that shifts a type down
        tss_scenario(tmp_path, [[tss_member("12/6/3", "+12/11/5/2", 2, (4, 4, 2), "d4s/d4w/d4+1w")],
                                [tss_member("13/6/3", "+12/11/5/2", 1, (5, 4, 2), "d4s/d4w/d4m", "En", "good",
                                            '{ dice = { LI = "d4" }, quality = "good" }', "12/6/3")]],
                     max_rounds=rounds, name="close"),
        # teams: two against one
        tss_scenario(tmp_path, [[tss_member("12/6/3", "+11/10/5/2", 1, (3, 3, 2), "d4s/d4w/d4+1w"),
                                 tss_member("10/5/2", "+13/12/6/3", 1, (3, 2, 2), "d4s/d4s/d4w")],
                                [tss_member("14/7/3", "+12/11/5/2", 2, (5, 5, 3), "d4s/d4w/d6w",
                                            defence_steps=1)]], max_rounds=rounds, name="teams"),
    ]


def test_tss_odds_agree_with_the_kernels(tmp_path):
    for scenario in tss_cases(tmp_path, rounds=6):
        agree(scenario, n=40_000)


@pytest.mark.slow
@million_fights
def test_tss_odds_agree_with_the_kernels_a_million_fights(tmp_path):
    for scenario in [example("tss_alex"), *tss_cases(tmp_path, rounds=50)[1:]]:
        agree(scenario, n=1_000_000, seed=12)


# --- d100 -----------------------------------------------------------------------------------------


POLICY_NAMES = ("attack", "quick_attack", "defend", "flee", "press", "disengage", "charge", "take_cover")


def d100_member(fighting=50, lethality=40, severity="1", category="melee", policy: str = "attack = 100",
                extra: str = "") -> str:
    weights = dict.fromkeys(POLICY_NAMES, 0)
    for line in policy.splitlines():
        name, _, value = line.partition("=")
        weights[name.strip()] = int(value)
    policy = "\n".join(f"{name} = {value}" for name, value in weights.items())
    return f'''
[[sides.members]]
fighting = {fighting}
parkour = 40
perception = 40
weapon = {{ lethality = {lethality}, severity = "{severity}", category = "{category}" }}
{extra}
[sides.members.policy]
{policy}
'''


def d100_scenario(tmp_path: Path, sides: list[list[str]], passes=1, max_rounds=1, ambush_side=-1, name="d"):
    text = (f'ruleset = "d100"\nname = "{name}"\n[options]\npasses = {passes}\nmax_rounds = {max_rounds}\n'
            f'ambush_side = {ambush_side}\n')
    for index, members in enumerate(sides):
        text += f'[[sides]]\nname = "side {index}"\n' + "".join(members)
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return load(path)


def test_d100_one_pass_by_hand(tmp_path):
    """Both attack (RULINGS: standard attacks of a pass land together). A succeeds on 1..50 and is
    lethal on a damage d100 of 1..40: 1/5; B on 1..25 and 1..20: 1/20; severity 1 makes no
    serious wounds. A wins 1/5 x 19/20 = 19/100, B 1/20 x 4/5 = 1/25, both go out 1/100, and
    76/100 is unfinished after the one pass."""
    scenario = d100_scenario(tmp_path, [[d100_member(50, 40)], [d100_member(25, 20)]])
    odds = fight_odds(scenario, method="exact")
    assert odds.method == "exact"
    assert odds.wins == [Fraction(19, 100), Fraction(1, 25)]
    assert odds.draws == Fraction(1, 100) and odds.unfinished == Fraction(76, 100)
    assert odds.escapes == 0 and odds.wins_by_flight == [0, 0]


def test_d100_flight_by_hand(tmp_path):
    """A always flees, B always shoots (a carbine: no engagement). B's declaration targets A, so A
    must roll: its flee target is floor((50 + 40) / 2) = 45. Attacks come first: B succeeds on
    1..50 and is lethal on 1..40 (1/5): A is out, a plain win. Otherwise A flees with 45/100: B
    wins by flight; else the pass ends with both in."""
    scenario = d100_scenario(tmp_path, [[d100_member(policy="flee = 100")], [d100_member(category="carbine")]])
    odds = fight_odds(scenario, method="exact")
    assert odds.wins_by_flight == [0, Fraction(4, 5) * Fraction(45, 100)]
    assert odds.wins == [0, Fraction(1, 5) + Fraction(4, 5) * Fraction(45, 100)]
    assert odds.escapes == Fraction(4, 5) * Fraction(45, 100)
    assert odds.unfinished == Fraction(4, 5) * Fraction(55, 100)


def test_d100_mirror_match_is_exactly_even(tmp_path):
    member = d100_member(55, 30, "2", policy="attack = 40\nquick_attack = 10\ndefend = 10\nflee = 5\npress = 10\n"
                                            "disengage = 5\ncharge = 10\ntake_cover = 10")
    odds = fight_odds(d100_scenario(tmp_path, [[member], [member]], passes=2, max_rounds=2), method="exact")
    assert odds.wins[0] == odds.wins[1] and odds.wins_by_flight[0] == odds.wins_by_flight[1]
    assert sum(odds.wins) + odds.draws + odds.unfinished == 1


def d100_cases(tmp_path, rounds: int) -> list:
    default = ("attack = 40\nquick_attack = 10\ndefend = 10\nflee = 5\npress = 10\ndisengage = 5\ncharge = 10\n"
               "take_cover = 10")
    return [
        example("d100", [f"options.max_rounds={rounds}"]),
        # lopsided: the guard without armour and with a weak carbine
        example("d100", [f"options.max_rounds={rounds}", "sides[1].members[0].torso=none",
                         "sides[1].members[0].helmet=false", "sides[1].members[0].weapon.lethality=10"]),
        # close: a melee fighter against a ranged one, both with the default policy
        d100_scenario(tmp_path, [[d100_member(55, 30, "2", policy=default)],
                                 [d100_member(52, 35, "1.5", "pistol", policy=default)]],
                      passes=2, max_rounds=rounds, name="close"),
        # teams: two against one, with an ambush
        d100_scenario(tmp_path, [[d100_member(45, 20, "2", policy="attack = 60\nquick_attack = 20\ntake_cover = 20"),
                                  d100_member(40, 25, "1.5", "thrown", policy="attack = 70\nflee = 30")],
                                 [d100_member(60, 35, "2", policy="attack = 50\ncharge = 30\ndefend = 20")]],
                      passes=1, max_rounds=rounds, ambush_side=1, name="teams"),
    ]


@pytest.mark.parametrize("backend", ["numba", "cython"])
def test_d100_odds_agree_with_the_kernels(tmp_path, backend):
    for scenario in d100_cases(tmp_path, rounds=1):
        agree(scenario, n=40_000, backend=backend)


@pytest.mark.slow
@million_fights
@pytest.mark.parametrize("backend", ["numba", "cython"])
def test_d100_odds_agree_with_the_kernels_a_million_fights(tmp_path, backend):
    for scenario in [example("d100"), *d100_cases(tmp_path, rounds=20)[1:]]:
        agree(scenario, n=1_000_000, seed=12, backend=backend)


def test_tss_duel_matrices_equal_the_exact_chain(tmp_path):
    """One against one in float64, the chain runs as matrices (numpy); it agrees with the exact
    chain over dict states within its stated bound, outcome by outcome and length by length."""
    scenario = tss_cases(tmp_path, rounds=4)[2]
    exact = fight_odds(scenario, method="exact")
    rough = fight_odds(scenario, method="float64")
    assert rough.method == "float64" and exact.method == "exact"
    pairs = [*zip(exact.wins, rough.wins, strict=True), (exact.unfinished, rough.unfinished),
             *((exact.length[k], rough.length.get(k, 0.0)) for k in exact.length)]
    for a, b in pairs:
        assert abs(float(a) - b) <= rough.error_bound + 1e-15


def _pass_by_pairs(chain, people: tuple, targeted: tuple, surprised: tuple) -> dict:
    """The d100 chain's ``_pass`` the direct way, every declaration with every outcome of the
    attacks, its results unnumbered (("end", keys) or (people, targeted))."""
    results: dict[tuple, Fraction] = {}
    for kinds, _, _, plans in chain._plans(people, targeted, surprised):
        for wounded, attacked, w in chain._attack_outcomes(people, kinds):
            state = chain._after_attacks(people, wounded)
            for p, _, actions, targets, marks in plans:
                for result, q in chain._engage_and_move(state, actions, targets, attacked, marks):
                    results[result] = results.get(result, 0) + p * w * q
    return results


@pytest.mark.parametrize("every", [pytest.param(1, marks=pytest.mark.slow), 6])
def test_d100_passes_equal_the_direct_enumeration(tmp_path, every):
    """A pass's transitions are built from the attacks' outcomes grouped by skeleton (wounds
    zeroed) and the moves mixed over each group of declarations once per skeleton; in every state
    each fight meets (CI: every sixth), they equal the direct enumeration (every declaration with
    every outcome of the attacks), fraction by fraction."""
    from combatsim.fight_odds.d100 import D100Chain

    # two against one: the one attacks the first foe, who often flees wounded while the fight goes on
    flight = d100_scenario(tmp_path, [[d100_member(45, 20, policy="attack = 40\nflee = 60"), d100_member(40, 25)],
                                      [d100_member(60, 15, policy="attack = 80\ncharge = 20")]],
                           max_rounds=3, name="flight")
    for scenario in [*d100_cases(tmp_path, rounds=2), flight]:
        chain = D100Chain(scenario.spec)
        chain.run(Tally(exact=True), max_states=10**9)
        assert len(chain._passes) > 20
        for (people, targeted, surprised), results in list(chain._passes.items())[::every]:
            direct = _pass_by_pairs(chain, people, targeted, surprised)
            assert all(isinstance(p, Fraction) for p in direct.values())
            fast: dict[tuple, Fraction] = {}
            for number, p in results:  # two codes can name one result (a combatant fled wounded)
                fast[chain._result(number)] = fast.get(chain._result(number), 0) + p
            assert fast == direct


def test_d100_float64_chain_is_within_its_bound_of_the_exact_chain(tmp_path):
    """In float64 the d100 chain steps a weight vector through sparse per-pass transitions; with
    escapes, engagement and two passes it agrees with the exact chain over dictionaries within its
    stated bound, outcome by outcome and length by length."""
    scenario = d100_cases(tmp_path, rounds=2)[2]
    exact = fight_odds(scenario, method="exact")
    rough = fight_odds(scenario, method="float64")
    assert rough.method == "float64" and exact.method == "exact" and 0 < rough.error_bound < 1e-9
    assert exact.escapes > 0 and exact.length.keys() == rough.length.keys()
    pairs = [*zip(exact.wins, rough.wins, strict=True), *zip(exact.wins_by_flight, rough.wins_by_flight, strict=True),
             (exact.escapes, rough.escapes), (exact.draws, rough.draws), (exact.unfinished, rough.unfinished),
             *((exact.length[k], rough.length[k]) for k in exact.length)]
    for a, b in pairs:
        assert abs(float(a) - b) <= rough.error_bound + 1e-15
