"""EXP combat tables (exp-combat-table.txt Chapter 9, exp-tactical-combat.txt Table 27.1)."""

from __future__ import annotations

import json

import pytest

from combatsim.cli import main
from combatsim.exp.model import (
    BNP_PERCENT,
    CombatRow,
    Persona,
    Weapon,
    attribute_bonus,
    damage_adjustment,
    round_half_up,
)


def bob_too(persona_class: str = "nomad", **changes) -> Persona:
    """Chapter 9's Bob Too: AWE 10, DEX 16, INT 12, PSTR 12."""
    values = dict(awe=10, cha=10, con=10, dex=16, int_=12, mstr=10, pstr=12, hit_points=20,
                  persona_class=persona_class)
    values.update(changes)
    return Persona(**values)


def third_level_nomad(**changes) -> Persona:
    """Table 27.1's nomad: AWE 12, CHA 6, CON 17, DEX 15, INT 12, MSTR 4, PSTR 10, HPS 43, level 3."""
    values = dict(awe=12, cha=6, con=17, dex=15, int_=12, mstr=4, pstr=10, hit_points=43,
                  persona_class="nomad", level=3, experience_bonus=(60, 80, 65))
    values.update(changes)
    return Persona(**values)


# --- worked examples ---------------------------------------------------------------------------
def test_table_9_3_bob_too_bonus_proficient():
    # 1.5·10 + 2·16 + 1.5·12 + 5·12 = 15 + 32 + 18 + 60 = 125; 10 + 64 + 12 + 24 = 110; 10 + 144 + 12 + 12 = 178
    assert attribute_bonus("A", 10, 16, 12, 12) == 125
    assert attribute_bonus("B", 10, 16, 12, 12) == 110
    assert attribute_bonus("C", 10, 16, 12, 12) == 178
    table = bob_too().combat_table()
    assert (table.A.bp, table.B.bp, table.C.bp) == (125, 110, 178)


def test_bob_too_pstr_drop_of_two():
    # "subtract 10 from the type A BP, 4 from the B BP, and 2 from the type C BP"
    before = bob_too().combat_table()
    after = bob_too(pstr=10).combat_table()
    assert (before.A.bp - after.A.bp, before.B.bp - after.B.bp, before.C.bp - after.C.bp) == (10, 4, 2)


def test_table_9_8_bob_too_nomad_combat_table():
    table = bob_too().combat_table()
    assert CombatRow(bp=125, bnp=19, mr=750, da=6) == table.A
    assert CombatRow(bp=110, bnp=39, mr=760, da=3) == table.B
    assert CombatRow(bp=178, bnp=0, mr=853, da=0) == table.C


def test_nomad_bnp_example_100_gives_15():
    # "if a first level nomad's BP for weapon Type A were 100, then her BNP would be 15"
    assert round_half_up(100 * BNP_PERCENT["nomad"][0], 100) == 15


def test_table_27_1_third_level_nomad_with_known_errors():
    """BP 176/184/234, MR 801/909 and DA 5/3/0 as printed; the BNP column (87/104/74) and
    MR 843 for B are the text's known errors (RULINGS.md): the formulas give 26/64/0 and 834."""
    table = third_level_nomad().combat_table()
    assert (table.A.bp, table.B.bp, table.C.bp) == (176, 184, 234)
    assert (table.A.mr, table.C.mr) == (801, 909)
    assert (table.A.da, table.B.da, table.C.da) == (5, 3, 0)
    known_errors = {"B.mr": 843, "A.bnp": 87, "B.bnp": 104, "C.bnp": 74}
    assert table.B.mr == 834 != known_errors["B.mr"]
    assert (table.A.bnp, table.B.bnp, table.C.bnp) == (26, 64, 0)


def test_table_27_1_experience_bonus_as_data():
    data = {"nomad": {2: (30, 40, 30), 3: (60, 80, 65)}}
    persona = third_level_nomad(experience_bonus=None, experience_data=data)
    assert persona.combat_table() == third_level_nomad().combat_table()


def test_veterinarian_maximum_roll_720_then_731():
    # MR = 625 + BP for type A: BP 95 -> 720, BP 106 -> 731. Attributes giving BP_A = 95 / 106:
    vet = Persona(awe=10, cha=0, con=0, dex=10, int_=10, mstr=0, pstr=9, hit_points=1,
                  persona_class="veterinarian", experience_bonus=(0, 0, 0))
    assert vet.combat_table().A.bp == 95
    assert vet.combat_table().A.mr == 720
    grown = Persona(awe=10, cha=0, con=0, dex=10, int_=10, mstr=0, pstr=9, hit_points=1,
                    persona_class="veterinarian", level=2, experience_bonus=(11, 0, 0))
    assert grown.combat_table().A.bp == 106
    assert grown.combat_table().A.mr == 731


def test_damage_adjustment_pstr_11_long_sword_plus_6_throwing_dagger_plus_3():
    # "If a persona with an 11 PSTR were to hit with a long sword, she would add 6 HPS to her d8"
    assert damage_adjustment("A", 11) == 6
    assert damage_adjustment("B", 11) == 3
    assert damage_adjustment("C", 11) == 0
    persona = bob_too(pstr=11)
    sword = Weapon("long sword", "A", "d8")
    _, _, da = persona.attack_profile(sword)
    assert da == 6 and str(sword.damage) == "1d8"


def test_damage_adjustment_table_9_8_and_27_1():
    assert (damage_adjustment("A", 12), damage_adjustment("B", 12)) == (6, 3)
    assert (damage_adjustment("A", 10), damage_adjustment("B", 10)) == (5, 3)  # 2.5 rounds half up


def test_nomad_proficiencies_three_type_b_at_level_1():
    """Table 9.7: a first-level nomad has one A, three B (not three powered: RULINGS.md) and one C."""
    nomad = bob_too()
    assert nomad.proficiency_slots() == {"A": 1, "B": 3, "C": 1}
    bows = tuple(Weapon(name, "B", "d6") for name in ("bow", "sling", "harpoon"))
    Persona(**{**_fields(nomad), "proficiencies": bows})
    with pytest.raises(ValueError, match="proficiencies.*type B"):
        Persona(**{**_fields(nomad), "proficiencies": (*bows, Weapon("dart", "B", "d3"))})
    with pytest.raises(ValueError, match="proficiencies.*type C"):
        Persona(**{**_fields(nomad), "proficiencies": (Weapon("laser", "C", "d10"), Weapon("smg", "automatic", "d6"))})
    # "she would have to wait until 3rd level before she can add another non-powered weapon"
    assert third_level_nomad().proficiency_slots() == {"A": 2, "B": 3, "C": 1}


def _fields(persona: Persona) -> dict:
    return {name: getattr(persona, name) for name in persona.__dataclass_fields__}


# --- Table 9.7 and special classes ------------------------------------------------------------
@pytest.mark.parametrize(
    ("persona_class", "level", "slots"),
    [
        ("biologist", 1, {"A": 1, "B": 1, "C": 1}),
        ("biologist", 14, {"A": 5, "B": 5, "C": 5}),
        ("knite", 1, {"A": 2, "B": 1, "C": 2}),
        ("knite", 2, {"A": 3, "B": 1, "C": 3}),
        ("mechanic", 4, {"A": 2, "B": 2, "C": 4}),
        ("nomad", 12, {"A": 5, "B": 7, "C": 4}),
        ("spie", 8, {"A": 5, "B": 5, "C": 5}),
        ("veterinarian", 7, {"A": 3, "B": 2, "C": 3}),
    ],
)
def test_table_9_7_slots(persona_class, level, slots):
    persona = bob_too(persona_class, level=level, experience_bonus=(0, 0, 0))
    assert persona.proficiency_slots() == slots


def test_mercenary_proficient_with_every_weapon():
    merc = bob_too("mercenary")
    laser = Weapon("laser", "C", "d10")
    assert merc.is_proficient(laser)
    table = merc.combat_table()
    assert table.A.bnp == table.A.bp  # Table 9.4: 100 %
    assert merc.attack_profile(laser) == (table.C.bp, table.C.mr, 0)


def test_nothing_has_one_proficiency_ever():
    club = Weapon("club", "A", "d6")
    bob_too("nothing", level=20, experience_bonus=(0, 0, 0), proficiencies=(club,))
    with pytest.raises(ValueError, match="proficiencies.*nothing"):
        bob_too("nothing", level=20, experience_bonus=(0, 0, 0), proficiencies=(club, Weapon("bow", "B", "d6")))


def test_alien_without_class_natural_weapons_only():
    claws = Weapon("claws", "A", "2d4", natural=True)
    alien = bob_too("alien", proficiencies=(claws,))
    assert alien.proficiency_slots() == {"A": 0, "B": 0, "C": 0}
    assert alien.is_proficient(claws)
    assert alien.attack_profile(claws)[0] == alien.combat_table().A.bp
    table = alien.combat_table()
    assert (table.A.bnp, table.B.bnp, table.C.bnp) == (0, 0, 0)
    with pytest.raises(ValueError, match="weapon: an alien without a class"):
        alien.attack_profile(Weapon("sword", "A", "d8"))
    with pytest.raises(ValueError, match="proficiencies: an alien"):
        bob_too("alien", proficiencies=(Weapon("sword", "A", "d8"),))


def test_android_with_class_uses_that_row():
    robot = bob_too("robot", adopted_class="spie")
    assert robot.combat_table() == bob_too("spie").combat_table()
    assert robot.proficiency_slots() == bob_too("spie").proficiency_slots()


def test_bnp_uses_persona_bnp_when_not_proficient():
    nomad = bob_too(proficiencies=(Weapon("harpoon", "B", "d8"),))
    assert nomad.attack_profile(Weapon("harpoon", "B", "d8"))[0] == 110
    assert nomad.attack_profile(Weapon("icepick", "A", "d4"))[0] == 19
    # D, E, F and automatic use row C
    assert nomad.attack_profile(Weapon("rifle", "E", "2d6")) == (0, 853, 0)


# --- validation ----------------------------------------------------------------------------------
def test_level_above_one_without_experience_is_an_error():
    with pytest.raises(ValueError, match="level 3 needs experience_bonus"):
        third_level_nomad(experience_bonus=None)
    with pytest.raises(ValueError, match="experience_data has no entry"):
        third_level_nomad(experience_bonus=None, experience_data={"nomad": {2: (1, 1, 1)}})


@pytest.mark.parametrize(
    ("changes", "error", "match"),
    [
        ({"dex": -1}, ValueError, "dex must be in 0..1000"),
        ({"awe": 1.5}, TypeError, "awe must be an integer"),
        ({"persona_class": "wizard"}, ValueError, "persona_class must be one of"),
        ({"level": 0}, ValueError, "level must be in 1..100"),
        ({"experience_bonus": (1, 2)}, ValueError, "experience_bonus must be three integers"),
        ({"adopted_class": "spie"}, ValueError, "adopted_class is only for an alien or robot"),
        ({"proficiencies": ("sword",)}, TypeError, "proficiencies must be Weapon objects"),
    ],
)
def test_persona_validation(changes, error, match):
    with pytest.raises(error, match=match):
        bob_too(**changes)


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        (("sword", "G", "d8"), ValueError, "weapon_type must be one of"),
        (("sword", "A", "8x"), ValueError, "damage must look like"),
        (("", "A", "d8"), ValueError, "weapon name"),
    ],
)
def test_weapon_validation(args, error, match):
    with pytest.raises(error, match=match):
        Weapon(*args)
    with pytest.raises(ValueError, match="ammunition must be in 0.."):
        Weapon("gun", "C", "d6", ammunition=-1)


# --- CLI -----------------------------------------------------------------------------------------
def test_cli_table_exp_table_9_8(capsys):
    assert main(["table", "exp", "--class", "nomad", "--level", "1", "--awe", "10", "--dex", "16", "--int", "12",
                 "--pstr", "12"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["Weapon", "Type", "BP", "BNP", "MR", "DA"]
    assert out[1].split() == ["A", "(contact)", "125", "19", "750", "6"]
    assert out[2].split() == ["B", "(ranged)", "110", "39", "760", "3"]
    assert out[3].split() == ["C", "(powered)", "178", "0", "853", "0"]


def test_cli_table_exp_json_table_27_1(capsys):
    assert main(["table", "exp", "--class", "nomad", "--level", "3", "--awe", "12", "--dex", "15", "--int", "12",
                 "--pstr", "10", "--experience-bonus", "60,80,65", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "A": {"bp": 176, "bnp": 26, "mr": 801, "da": 5},
        "B": {"bp": 184, "bnp": 64, "mr": 834, "da": 3},
        "C": {"bp": 234, "bnp": 0, "mr": 909, "da": 0},
    }


def test_cli_table_exp_level_without_experience_errors(capsys):
    assert main(["table", "exp", "--class", "nomad", "--level", "3", "--awe", "12", "--dex", "15", "--int", "12",
                 "--pstr", "10"]) == 2
    assert "level 3 needs experience_bonus" in capsys.readouterr().err
