"""TSS choices inside a round (docs/tss.md, "Choices: aiming, two weapons, broad skills"): aiming,
two-weapon attacks, broad skills and the scripted policy that makes them, in the engine, the
attack kernels and the exact fight odds."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from combatsim.engine import RUNNING, S_OUTCOME, S_WORDS, SCRIPTED, new_stream, stream_resume
from combatsim.fight_odds import fight_odds
from combatsim.scenario import ScenarioError, example_path, load
from combatsim.tss import engine
from combatsim.tss.api import Combatant, attack_config, simulate_attacks, simulate_fights
from combatsim.tss.game import game, taken_actions
from combatsim.tss.odds import attack_odds
from combatsim.tss.prepared import Attack

from .test_tss_engine import scenario

ALEX = {"skill": "16/8/4", "action_check": "+14/13/6/3", "actions_per_round": 2, "durability": [10, 10, 5],
        "attack_steps": -3, "weapon": {"damage": "d4w/d4+2w/d4-1m", "class": "En", "quality": "good"}}
THUG = {"skill": "12/6/3", "action_check": "+12/11/5/2", "durability": [12, 12, 6], "defence_steps": 3,
        "weapon": {"damage": "d4s/d4w/d4+1w", "class": "LI"},
        "armour": {"dice": {"En": "d6"}, "quality": "ordinary"}}


def make_game(sides, **options):
    spec = scenario(sides, **options).spec
    members = sum(len(side) for side in spec["sides"])
    return game(spec, [f"m{c}" for c in range(members)], ["a", "b"])


def start(g, n: int, seed: int):
    kernels = g.engine("python")
    b = g.buffers(n)
    b["seeds"][:] = seed
    b["indices"][:] = np.arange(n)
    kernels.reset(g.table, g.config, b["seeds"], b["indices"], b["which"], b["state"], b["counts"], b["obs"],
                  b["mask"])
    return kernels, b


def step(kernels, g, b):
    kernels.step(g.table, g.config, b["seeds"], b["state"], b["actions"], b["counts"], b["obs"], b["mask"])


def column(c: int, field: int) -> int:
    return engine.S_MEMBERS + engine.M_WIDTH * c + field


# --- aiming ---------------------------------------------------------------------------------------
def test_alex_aims_then_shoots_one_step_easier():
    """Alex (2 actions) aims in her first phase and shoots in the next one, the thug holding: her
    shot is, die for die, the shot of an Alex whose attack steps are one lower (-4, -d12 instead of
    -3, -d8) who held instead of aiming. Aiming draws no die and spends her first action."""
    aiming = make_game([[ALEX], [THUG]])
    steadier = make_game([[{**ALEX, "attack_steps": -4}], [THUG]])
    n = 64
    kernels, a = start(aiming, n, 5)
    _, b = start(steadier, n, 5)
    aim = aiming.action_names.index("aim")
    first = a["state"][:, column(0, engine.M_PHASE)].copy()
    shots = 0
    for phase in range(4):
        a["actions"][:, 1] = b["actions"][:, 1] = engine.HOLD
        a["actions"][:, 0] = np.where(first == phase, aim, np.where(first == phase - 1, engine.ATTACK, engine.HOLD))
        b["actions"][:, 0] = np.where(first == phase - 1, engine.ATTACK, engine.HOLD)
        step(kernels, aiming, a)
        step(kernels, steadier, b)
        aimed = first == phase
        assert (a["state"][aimed, column(0, engine.M_AIM)] == 1).all()
        assert (a["obs"][aimed, 0, aiming.observation_names.index("self.aiming")] == 1).all()
        assert not a["mask"][aimed, 0, aim].any()  # aiming again adds nothing: masked
        for key in ("counts",):
            np.testing.assert_array_equal(a[key][:, :engine.C_MASKED], b[key][:, :engine.C_MASKED])
        np.testing.assert_array_equal(a["state"][:, S_WORDS], b["state"][:, S_WORDS])
        np.testing.assert_array_equal(a["state"][:, column(1, engine.M_STUN)], b["state"][:, column(1, engine.M_STUN)])
        np.testing.assert_array_equal(a["state"][:, column(1, engine.M_WOUND)],
                                      b["state"][:, column(1, engine.M_WOUND)])
        shot = first == phase - 1
        shots += int(shot.sum())
        assert (a["state"][shot, column(0, engine.M_AIM)] == 0).all()  # used up by the shot
        if phase == 3:
            break
    assert shots > 16
    assert (a["counts"][:, engine.C_ATTACKS] == (first <= 2)).all()


def test_aim_is_held_into_the_next_round_and_does_not_stack():
    """Aiming in the Marginal phase keeps the bonus into the next round; a second aim while one is
    held is masked (counted, nothing spent)."""
    g = make_game([[ALEX], [THUG]], max_rounds=3)
    kernels, b = start(g, 16, 9)
    aim = g.action_names.index("aim")
    for phase in range(4):
        b["actions"][:] = engine.HOLD
        if phase == 3:
            b["actions"][:, 0] = aim
        step(kernels, g, b)
    assert (b["state"][:, column(0, engine.M_AIM)] == 1).all()  # the new round began; the aim is held
    assert (b["state"][:, column(0, engine.M_USED)] == 0).all()
    b["actions"][:] = engine.HOLD
    b["actions"][:, 0] = aim
    step(kernels, g, b)
    assert (b["counts"][:, engine.C_MASKED] == 1).all()
    assert (b["state"][:, column(0, engine.M_USED)] == 0).all()
    assert (b["state"][:, column(0, engine.M_AIM)] == 1).all()


# --- two weapons ----------------------------------------------------------------------------------
DUELLIST = {**ALEX, "second_weapon": {"damage": "d6s/d6w/d6m", "class": "LI", "quality": "ordinary"}}


@pytest.mark.parametrize("ambidexterity", [False, True])
def test_two_weapons_are_two_full_attacks_main_hand_first(ambidexterity):
    """A two-weapon action is the main-hand attack at +2 steps (+0 with Ambidexterity), then the
    off-hand attack at +4 (+2) with the second weapon, each with its own dice."""
    g = make_game([[{**DUELLIST, "ambidexterity": ambidexterity, "broad_skill": True}], [THUG]])
    _, b = start(g, 1, 0)
    hands = 0 if ambidexterity else 2
    for seed in range(40):
        state = b["state"].copy()
        counts = b["counts"].copy()
        ours = new_stream()
        stream_resume(ours, seed, 0, 0, 0)
        engine.two_weapon_attack(g.table, g.config, state, counts, 0, ours, 0, 1, -3, 1)
        theirs = new_stream()
        stream_resume(theirs, seed, 0, 0, 0)
        twin, twin_counts = b["state"].copy(), b["counts"].copy()
        # aimed (-1), broad (+1): the hands' steps alone
        engine.attack(g.table, g.config, twin, twin_counts, 0, theirs, 0, 1, 0, -3 + hands)
        engine.attack(g.table, g.config, twin, twin_counts, 0, theirs, 0, 1, engine.SECOND, -3 + hands + 2)
        np.testing.assert_array_equal(state, twin)
        np.testing.assert_array_equal(counts, twin_counts)
        assert counts[0, engine.C_ATTACKS] == 2
        assert ours.stream.words_used == theirs.stream.words_used


def test_off_hand_goes_to_the_next_foe_when_the_first_went_out():
    """Against a one-point foe and a tough one, whenever the main hand takes the first out the off
    hand strikes the second: the action's damage after the first foe's track lands on the second."""
    weak = {**THUG, "durability": [1, 1, 1], "armour": None}
    weak.pop("armour")
    g = make_game([[{**DUELLIST, "policy": {"two_weapons": True}}], [weak, {**THUG, "durability": [50, 50, 50]}]])
    kernels, b = start(g, 200, 2)
    retargeted = 0
    while (b["state"][:, S_OUTCOME] == RUNNING).any():
        before = b["state"].copy()
        b["actions"][:] = SCRIPTED
        step(kernels, g, b)
        took = taken_actions(g, b["state"])[:, 0]
        two = took == g.action_names.index("attack_two_weapons_foe_0")
        first_out = (before[:, column(1, engine.M_IN)] == 1) & (b["state"][:, column(1, engine.M_IN)] == 0)
        second_hit = (b["state"][:, column(2, engine.M_STUN)] + b["state"][:, column(2, engine.M_WOUND)]
                      + b["state"][:, column(2, engine.M_MORTAL)]) > (before[:, column(2, engine.M_STUN)]
                                                                       + before[:, column(2, engine.M_WOUND)]
                                                                       + before[:, column(2, engine.M_MORTAL)])
        # the second foe takes damage in such a step only from the off-hand attack
        retargeted += int((two & first_out & second_hit).sum())
        assert not (two & ~first_out & second_hit & (before[:, column(1, engine.M_IN)] == 1)).any()
    assert retargeted > 5


def test_a_member_without_a_second_weapon_may_not_attack_with_two():
    g = make_game([[DUELLIST], [THUG, THUG]])
    kernels, b = start(g, 8, 1)
    two = g.action_names.index("attack_two_weapons_foe_0")
    assert not b["mask"][:, 1:, two].any()  # the thugs have one weapon
    acting = b["mask"][:, 0, engine.ATTACK].astype(bool)
    np.testing.assert_array_equal(b["mask"][:, 0, two].astype(bool), acting)
    b["actions"][:] = engine.HOLD
    b["actions"][:, 1:] = two
    step(kernels, g, b)
    assert (b["counts"][:, engine.C_ATTACKS] == 0).all()
    with pytest.raises(ScenarioError, match=r"policy\.two_weapons: needs a second_weapon"):
        scenario([[{**ALEX, "policy": {"two_weapons": True}}], [THUG]])
    with pytest.raises(ValueError, match=r"side_a\[0\]\.two_weapons needs a second_weapon"):
        simulate_fights(1, side_a=[Combatant("14/7/3", "13", "d4w/d4w/d4w", two_weapons=True)],
                        side_b=[Combatant("14/7/3", "13", "d4w/d4w/d4w")])


# --- the scripted policy, the fight kernels and the exact odds --------------------------------------
def test_scripted_policy_aims_at_its_chance():
    """A member with a 30% aim chance draws its policy d100 each turn it may act holding no aim:
    aims are 30% of those turns within 5 sigma."""
    g = make_game([[{**ALEX, "policy": {"aim": 30}}], [{**THUG, "durability": [40, 40, 40]}]], max_rounds=6)
    kernels, b = start(g, 400, 3)
    aim = g.action_names.index("aim")
    turns = aims = 0
    while (b["state"][:, S_OUTCOME] == RUNNING).any():
        free = (b["mask"][:, 0, aim] == 1)
        b["actions"][:] = SCRIPTED
        step(kernels, g, b)
        took = taken_actions(g, b["state"])[:, 0]
        turns += int(free.sum())
        aims += int((free & (took == aim)).sum())
    p = 0.3
    assert abs(aims / turns - p) <= 5 * math.sqrt(p * (1 - p) / turns)


def test_defaults_keep_the_fight_identical():
    """The new fields at their defaults give the fight of a scenario without them, fight by fight."""
    plain = load(example_path("tss_alex_vs_thug")).spec
    spelled = scenario([[{**ALEX, "ambidexterity": False, "broad_skill": False,
                          "policy": {"aim": 0, "two_weapons": False}}], [THUG]], max_rounds=50).spec
    results = [simulate_fights(500, side_a=spec["sides"][0], side_b=spec["sides"][1], max_rounds=50, seed=4,
                               outcomes=True) for spec in (plain, spelled)]
    np.testing.assert_array_equal(results[0].winner, results[1].winner)
    np.testing.assert_array_equal(results[0].rounds, results[1].rounds)
    np.testing.assert_array_equal(results[0].counts, results[1].counts)


def test_broad_skill_is_one_step_harder():
    broad = attack_config(skill="14/7/3", damage="d4w/d4w/d4w", steps=-2, broad=True)
    np.testing.assert_array_equal(broad, attack_config(skill="14/7/3", damage="d4w/d4w/d4w", steps=-1))
    plain, = (Combatant("14/7/3", "13", "d4w/d6w/d8m", attack_steps=1),)
    wide = Combatant("14/7/3", "13", "d4w/d6w/d8m", broad_skill=True)
    foe = [Combatant("12/6/3", "12", "d4s/d4w/d4w", durability=(15, 15, 8))]
    a = simulate_fights(300, side_a=[plain], side_b=foe, seed=1, outcomes=True)
    b = simulate_fights(300, side_a=[wide], side_b=foe, seed=1, outcomes=True)
    np.testing.assert_array_equal(a.winner, b.winner)
    np.testing.assert_array_equal(a.counts, b.counts)


def tactics_file(tmp_path, text: str, max_rounds: int):
    path = tmp_path / "t.toml"
    path.write_text(f'ruleset = "tss"\nname = "t"\n[options]\nmax_rounds = {max_rounds}\n' + text)
    return load(path)


SMALL = '''
[[sides]]
name = "A"
[[sides.members]]
skill = "12/6/3"
action_check = "+12/11/5/2"
actions_per_round = 2
durability = [3, 3, 2]
weapon = {{ damage = "d4s/d4w/d4+1w", class = "LI" }}
second_weapon = {{ damage = "1s/d4s/d4w", class = "LI" }}
ambidexterity = {ambidexterity}
broad_skill = true
policy = {{ aim = {aim_a}, two_weapons = {two} }}
[[sides]]
name = "B"
[[sides.members]]
skill = "13/6/3"
action_check = "+12/11/5/2"
durability = [4, 3, 2]
weapon = {{ damage = "d4s/d4w/d4m", class = "En" }}
policy = {{ aim = {aim_b} }}
'''


@pytest.mark.parametrize("choices", [dict(aim_a=0, aim_b=0, two="true", ambidexterity="false"),
                                     dict(aim_a=35, aim_b=100, two="false", ambidexterity="false"),
                                     dict(aim_a=50, aim_b=20, two="true", ambidexterity="true")])
def test_fight_odds_with_choices_agree_with_the_kernels(tmp_path, choices):
    """The exact chain with the scripted policy's choices against 40,000 fights, within 5 sigma."""
    fight = tactics_file(tmp_path, SMALL.format(**choices), max_rounds=5)
    odds = fight_odds(fight)
    assert odds.method == "exact" and sum(odds.wins) + odds.draws + odds.unfinished == 1
    n = 40_000
    result = simulate_fights(n, side_a=fight.spec["sides"][0], side_b=fight.spec["sides"][1], max_rounds=5, seed=8)
    observed = [int(result.counts[0]), int(result.counts[1]), int(result.counts[2])]
    for p, count in zip([*odds.wins, odds.unfinished], observed, strict=True):
        p = float(p)
        assert abs(count / n - p) <= 5 * math.sqrt(p * (1 - p) / n) + 1e-9, (choices, odds.wins, observed)


def test_fight_odds_float_chain_equals_the_exact_one_with_choices(tmp_path):
    fight = tactics_file(tmp_path, SMALL.format(aim_a=35, aim_b=100, two="true", ambidexterity="false"), 4)
    exact = fight_odds(fight)
    floating = fight_odds(fight, method="float64")
    for a, b in zip(exact.wins, floating.wins, strict=True):
        assert abs(float(a) - b) < 1e-12


# --- attacks and their odds -------------------------------------------------------------------------
@pytest.mark.parametrize(("choices", "steps"), [({"aim": True}, -1), ({"two_weapons": "main"}, 2),
                                                ({"two_weapons": "off"}, 4),
                                                ({"two_weapons": "main", "ambidexterity": True}, 0),
                                                ({"two_weapons": "off", "ambidexterity": True}, 2),
                                                ({"broad": True}, 1),
                                                ({"aim": True, "broad": True, "two_weapons": "off"}, 4)])
def test_attack_choices_are_steps(choices, steps):
    arguments = dict(skill="14/7/3", damage="d4w/d4+2w/d4-1m", armour="d6", weapon_quality="good")
    chosen = simulate_attacks(20_000, **arguments, steps=1, **choices, seed=3, outcomes=True)
    plain = simulate_attacks(20_000, **arguments, steps=1 + steps, seed=3, outcomes=True)
    np.testing.assert_array_equal(chosen.tier, plain.tier)
    np.testing.assert_array_equal(chosen.counts, plain.counts)
    prepared = Attack(**arguments, steps=1, **choices)
    assert prepared.resolve(3, 7) == Attack(**arguments, steps=1 + steps).resolve(3, 7)
    assert prepared.odds()["amazing"] == Attack(**arguments, steps=1 + steps).odds()["amazing"]


def test_attack_choices_bad_input_is_one_line():
    with pytest.raises(ValueError, match=r"^two_weapons must be 'main' or 'off'"):
        simulate_attacks(10, skill="14", damage="d4w/d4w/d4w", two_weapons="left")
    with pytest.raises(ValueError, match=r"^ambidexterity needs two_weapons"):
        simulate_attacks(10, skill="14", damage="d4w/d4w/d4w", ambidexterity=True)
    with pytest.raises(TypeError, match=r"^aim"):
        Attack(skill="14", damage="d4w/d4w/d4w", aim="yes")


def test_odds_of_an_aimed_off_hand_attack_by_hand():
    """Skill 10/5/2, steps 0, aim (-1) and the off hand with Ambidexterity (+2): +1, +d4. A d20
    plus a d4 at or under 10: sum over the d4 of (10 - k)/20, over 4: (9 + 8 + 7 + 6)/80 = 3/8
    (with the control die's 20 above 10 anyway)."""
    from types import SimpleNamespace

    args = SimpleNamespace(skill="10/5/2", steps=0, damage="1w/1w/1w", weapon_quality="ordinary", armour=None,
                           armour_quality="ordinary", one_step_shift=False, aim=True, two_weapons="off",
                           ambidexterity=True, broad=False)
    odds, _ = attack_odds(args)
    assert odds["amazing"] + odds["good"] + odds["ordinary"] == Fraction(3, 8)


@pytest.mark.parametrize(("change", "least"), [("sides[0].members[0].policy.two_weapons=false", 0.05),
                                               ("sides[1].members[0].policy.aim=0", 0.05)])
def test_the_two_blades_example_turns_on_the_choices(change, least):
    """tss_two_blades: Kara's second blade, and the marksman's aiming, each move Kara's win rate by
    more than 5 percentage points (about 16 and 12: far beyond 20,000 fights' noise)."""
    path = example_path("tss_two_blades")
    rates = []
    for overrides in ([], [change]):
        spec = load(path, overrides).spec
        result = simulate_fights(20_000, side_a=spec["sides"][0], side_b=spec["sides"][1],
                                 max_rounds=spec["max_rounds"], seed=1)
        rates.append(result.counts[0] / 20_000)
    assert rates[0] - rates[1] > least
