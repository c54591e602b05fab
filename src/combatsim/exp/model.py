"""EXP data model: personas, weapons and the combat table (docs/exp.md, Chapter 9).

Everything here is exact integer arithmetic: "round" is half up on the exact value,
``(2x + 1) // 2`` style. Validation happens in the constructors, so an object that exists is valid.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from combatsim.dice import Dice
from combatsim.validation import check_bool, check_choice, check_int, check_text

#: Persona classes (Table 9.4, Table 9.7).
CLASSES = ("biologist", "knite", "mechanic", "mercenary", "nomad", "nothing", "spie", "veterinarian", "alien", "robot")
#: Classes with no combat-table row of their own: they use an adopted class's row, if any.
SPECIAL_CLASSES = ("alien", "robot")
#: The rows of the combat table.
ROWS = ("A", "B", "C")
ROW_NAMES = {"A": "A (contact)", "B": "B (ranged)", "C": "C (powered)"}
#: Weapon types: D, E, F and fully automatic use row C.
WEAPON_TYPES = ("A", "B", "C", "D", "E", "F", "automatic")
#: To-hit rolls per unit of fire: D/E/F make 2/3/4; fully automatic makes 5 bursts.
ROLLS_PER_UNIT = {"A": 1, "B": 1, "C": 1, "D": 2, "E": 3, "F": 4, "automatic": 5}
#: Rounds of ammunition (or charges) per to-hit roll: a fully automatic burst is 3 rounds.
ROUNDS_PER_ROLL = {"A": 1, "B": 1, "C": 1, "D": 1, "E": 1, "F": 1, "automatic": 3}
#: Rounds a fully automatic burst that hits can land: uniform 0..3.
ROUNDS_PER_BURST = 3

#: Table 9.4: BNP as a percentage of BP, per class and row.
BNP_PERCENT: dict[str, tuple[int, int, int]] = {
    "biologist": (0, 0, 15),
    "knite": (25, 20, 30),
    "mechanic": (15, 10, 15),
    "mercenary": (100, 100, 100),
    "nomad": (15, 35, 0),
    "nothing": (5, 0, 10),
    "spie": (25, 20, 25),
    "veterinarian": (0, 0, 10),
}

#: Table 9.7: the levels at which a proficiency slot is gained, per class and row ("2@1" is 1, 1).
PROFICIENCY_LEVELS: dict[str, tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]] = {
    "biologist": ((1, 3, 6, 9, 12), (1, 5, 8, 11, 14), (1, 4, 7, 10, 13)),
    "knite": ((1, 1, 2, 4, 6, 8), (1, 3, 6, 9, 12), (1, 1, 2, 4, 6, 8)),
    "mechanic": ((1, 3, 6, 9, 12), (1, 4, 7, 10, 13), (1, 1, 2, 4, 6, 8)),
    "nomad": ((1, 3, 6, 9, 12), (1, 1, 1, 4, 7, 10, 12), (1, 5, 8, 11, 14)),
    "spie": ((1, 2, 4, 6, 8), (1, 2, 4, 6, 8), (1, 2, 4, 6, 8)),
    "veterinarian": ((1, 3, 6, 9, 12), (1, 5, 8, 11, 14), (1, 4, 7, 10, 13)),
}
#: A Nothing has one proficiency in all, ever (Table 9.7, "Special").
NOTHING_PROFICIENCIES = 1

#: Table 9.5: base maximum roll per row; MR = base + BP.
MR_BASE = {"A": 625, "B": 650, "C": 675}

#: Validation bounds (they keep every sum far inside int64).
MAX_ATTRIBUTE = 1000
MAX_LEVEL = 100
MAX_EXPERIENCE_BONUS = 100_000
MAX_HIT_POINTS = 1_000_000_000
MAX_AMMUNITION = 1_000_000_000


def round_half_up(numerator: int, denominator: int) -> int:
    """Exact numerator / denominator rounded half up."""
    return (2 * numerator + denominator) // (2 * denominator)


def attribute_bonus(row: str, awe: int, dex: int, int_: int, pstr: int) -> int:
    """Table 9.2's attribute part of BP, exactly.

    A: round((3·AWE + 4·DEX + 3·INT + 10·PSTR) / 2), i.e. 1.5/2/1.5/5 times; B: AWE + 4·DEX + INT +
    2·PSTR; C: AWE + 9·DEX + INT + PSTR.
    """
    if row == "A":
        return round_half_up(3 * awe + 4 * dex + 3 * int_ + 10 * pstr, 2)
    if row == "B":
        return awe + 4 * dex + int_ + 2 * pstr
    return awe + 9 * dex + int_ + pstr


def damage_adjustment(row: str, pstr: int) -> int:
    """Table 9.6: round(PSTR / 2) for A, round(PSTR / 4) for B, 0 for C and above."""
    if row == "A":
        return round_half_up(pstr, 2)
    if row == "B":
        return round_half_up(pstr, 4)
    return 0


def row_of(weapon_type: str) -> str:
    """The combat-table row a weapon type uses: D, E, F and automatic use row C."""
    return weapon_type if weapon_type in ROWS else "C"


@dataclass(frozen=True)
class Weapon:
    """A weapon: type (A..F or automatic), damage dice, ammunition or charge (None: never runs out).

    ``natural`` marks a creature's own attack (claws, a malfunctioning peripheral): an alien or
    robot without a class is always proficient with its natural weapons and can use no other.
    """

    name: str
    weapon_type: str
    damage: Dice
    ammunition: int | None = None
    natural: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"weapon name must be a non-empty string, got {self.name!r}")
        check_text("weapon name", self.name)
        check_choice("weapon_type", self.weapon_type, WEAPON_TYPES)
        object.__setattr__(self, "damage", Dice.parse(self.damage, "damage"))
        if self.ammunition is not None:
            check_int("ammunition", self.ammunition, 0, MAX_AMMUNITION)
        object.__setattr__(self, "natural", check_bool("natural", self.natural))

    @property
    def row(self) -> str:
        return row_of(self.weapon_type)

    @property
    def rolls_per_unit(self) -> int:
        return ROLLS_PER_UNIT[self.weapon_type]

    @property
    def rounds_per_roll(self) -> int:
        return ROUNDS_PER_ROLL[self.weapon_type]

    @property
    def automatic(self) -> bool:
        return self.weapon_type == "automatic"

    def shots(self, ammunition: int | None = None) -> int:
        """To-hit rolls the load allows: ammunition // rounds per roll, or -1 for unlimited."""
        load = self.ammunition if ammunition is None else ammunition
        return -1 if load is None else load // self.rounds_per_roll


@dataclass(frozen=True)
class CombatRow:
    bp: int
    bnp: int
    mr: int
    da: int

    def as_dict(self) -> dict[str, int]:
        return {"bp": self.bp, "bnp": self.bnp, "mr": self.mr, "da": self.da}


@dataclass(frozen=True)
class CombatTable:
    """Chapter 9's combat table: BP, BNP, MR and DA for rows A, B and C."""

    A: CombatRow
    B: CombatRow
    C: CombatRow

    def row(self, weapon_type: str) -> CombatRow:
        return getattr(self, row_of(weapon_type))

    def as_dict(self) -> dict[str, dict[str, int]]:
        return {row: self.row(row).as_dict() for row in ROWS}

    def format(self) -> str:
        """Laid out like Table 9.8."""
        lines = [f"{'Weapon Type':<13s} {'BP':>6s} {'BNP':>6s} {'MR':>6s} {'DA':>6s}"]
        for row in ROWS:
            r = self.row(row)
            lines.append(f"{ROW_NAMES[row]:<13s} {r.bp:>6d} {r.bnp:>6d} {r.mr:>6d} {r.da:>6d}")
        return "\n".join(lines)


ExperienceData = Mapping[str, Mapping[int, Iterable[int]]]


def _check_bonus_triple(name: str, values: object) -> tuple[int, int, int]:
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be three integers (A, B, C), got {type(values).__name__}")
    items = list(values)  # type: ignore[arg-type]
    if len(items) != 3:
        raise ValueError(f"{name} must be three integers (A, B, C), got {len(items)}")
    return tuple(  # type: ignore[return-value]
        check_int(f"{name}[{row}]", v, -MAX_EXPERIENCE_BONUS, MAX_EXPERIENCE_BONUS)
        for row, v in zip(ROWS, items, strict=True)
    )


@dataclass(frozen=True)
class Persona:
    """A persona: attributes, hit points, class, level, proficiencies (named weapons).

    ``experience_bonus`` is an explicit (A, B, C) bonus; ``experience_data`` maps class -> level ->
    (A, B, C) (the rules do not give Chapter 15's progression). Level 1 has no bonus;
    a level above 1 needs one of the two, never a silent 0. ``adopted_class`` is the class whose
    rows a tool-using alien or an android uses.
    """

    awe: int
    cha: int
    con: int
    dex: int
    int_: int
    mstr: int
    pstr: int
    hit_points: int
    persona_class: str
    level: int = 1
    proficiencies: tuple[Weapon, ...] = ()
    experience_bonus: tuple[int, int, int] | None = None
    experience_data: ExperienceData | None = field(default=None, repr=False, compare=False)
    adopted_class: str | None = None

    def __post_init__(self) -> None:
        for name in ("awe", "cha", "con", "dex", "int_", "mstr", "pstr"):
            check_int(name.rstrip("_"), getattr(self, name), 0, MAX_ATTRIBUTE)
        check_int("hit_points", self.hit_points, -MAX_HIT_POINTS, MAX_HIT_POINTS)
        check_choice("persona_class", self.persona_class, CLASSES)
        check_int("level", self.level, 1, MAX_LEVEL)
        if self.adopted_class is not None:
            if self.persona_class not in SPECIAL_CLASSES:
                raise ValueError(
                    f"adopted_class is only for an alien or robot, got persona_class {self.persona_class!r}"
                )
            check_choice("adopted_class", self.adopted_class, [c for c in CLASSES if c not in SPECIAL_CLASSES])
        proficiencies = tuple(self.proficiencies)
        for weapon in proficiencies:
            if not isinstance(weapon, Weapon):
                raise TypeError(f"proficiencies must be Weapon objects, got {type(weapon).__name__}")
        names = [w.name for w in proficiencies]
        if len(set(names)) != len(names):
            raise ValueError(f"proficiencies must name each weapon once, got {names}")
        object.__setattr__(self, "proficiencies", proficiencies)
        if self.experience_bonus is not None:
            object.__setattr__(self, "experience_bonus", _check_bonus_triple("experience_bonus", self.experience_bonus))
        self._resolved_experience_bonus()  # a level above 1 without data is an error now, not later
        self._check_proficiency_slots()

    @property
    def table_class(self) -> str | None:
        """The class whose Table 9.4 and 9.7 rows apply (None: an alien or robot without a class)."""
        if self.persona_class in SPECIAL_CLASSES:
            return self.adopted_class
        return self.persona_class

    def _resolved_experience_bonus(self) -> tuple[int, int, int]:
        if self.experience_bonus is not None:
            return self.experience_bonus
        by_level = (self.experience_data or {}).get(self.persona_class) or {}
        if self.level in by_level:
            return _check_bonus_triple(f"experience_data[{self.persona_class!r}][{self.level}]", by_level[self.level])
        if self.level == 1:
            return (0, 0, 0)  # "There is no experience bonus at level one"
        if self.experience_data is not None:
            raise ValueError(f"experience_data has no entry for class {self.persona_class!r} at level {self.level}")
        raise ValueError(
            f"level {self.level} needs experience_bonus (A, B, C) or experience_data: Chapter 15's "
            "progression is not in the rule texts"
        )

    def proficiency_slots(self) -> dict[str, int]:
        """Table 9.7 slots per row at this level; a Nothing's single slot is reported as "any"."""
        cls = self.table_class
        if cls is None:
            return {"A": 0, "B": 0, "C": 0}
        if cls == "mercenary":
            return {"A": -1, "B": -1, "C": -1}  # proficient in every weapon: no slots needed
        if cls == "nothing":
            return {"any": NOTHING_PROFICIENCIES}
        levels = PROFICIENCY_LEVELS[cls]
        return {row: sum(1 for lv in levels[i] if lv <= self.level) for i, row in enumerate(ROWS)}

    def _check_proficiency_slots(self) -> None:
        if not self.proficiencies:
            return
        cls = self.table_class
        if self.persona_class in SPECIAL_CLASSES and cls is None:
            unnatural = [w.name for w in self.proficiencies if not w.natural]
            if unnatural:
                raise ValueError(
                    f"proficiencies: an {self.persona_class} without a class gains no proficiencies "
                    f"(only natural weapons), got {unnatural}"
                )
            return
        if cls == "mercenary":
            return
        if cls == "nothing":
            if len(self.proficiencies) > NOTHING_PROFICIENCIES:
                raise ValueError(
                    f"proficiencies: a nothing has {NOTHING_PROFICIENCIES} proficiency in all, "
                    f"got {len(self.proficiencies)}"
                )
            return
        slots = self.proficiency_slots()
        for row in ROWS:
            taken = [w.name for w in self.proficiencies if w.row == row]
            if len(taken) > slots[row]:
                raise ValueError(
                    f"proficiencies: a level {self.level} {cls} has {slots[row]} type {row} slot(s) "
                    f"(Table 9.7), got {len(taken)}: {taken}"
                )

    def combat_table(self) -> CombatTable:
        """Chapter 9: BP = attribute bonus + experience bonus; BNP = round(BP × Table 9.4 % / 100);
        MR = Table 9.5 base + BP; DA from Table 9.6."""
        bonus = self._resolved_experience_bonus()
        cls = self.table_class
        percent = BNP_PERCENT[cls] if cls is not None else (0, 0, 0)
        rows = []
        for i, row in enumerate(ROWS):
            bp = attribute_bonus(row, self.awe, self.dex, self.int_, self.pstr) + bonus[i]
            rows.append(
                CombatRow(
                    bp=bp,
                    bnp=round_half_up(bp * percent[i], 100),
                    mr=MR_BASE[row] + bp,
                    da=damage_adjustment(row, self.pstr),
                )
            )
        return CombatTable(*rows)

    def is_proficient(self, weapon: Weapon) -> bool:
        """Mercenaries are proficient with every weapon; aliens and robots without a class with their
        natural weapons; everyone else with the weapons named in ``proficiencies``."""
        if self.table_class == "mercenary":
            return True
        if self.table_class is None and weapon.natural:
            return True
        return any(w.name == weapon.name for w in self.proficiencies)

    def can_use(self, weapon: Weapon) -> bool:
        """An alien or robot without a class cannot pick up weapons (Table 9.4, "Aliens and Robots")."""
        return self.table_class is not None or weapon.natural or self.is_proficient(weapon)

    def attack_profile(self, weapon: Weapon) -> tuple[int, int, int]:
        """(bonus, maximum roll, damage adjustment) for attacks with ``weapon``: BP if proficient,
        else BNP; MR and DA of the weapon's row whichever bonus applies (Table 9.5)."""
        if not self.can_use(weapon):
            raise ValueError(
                f"weapon: an {self.persona_class} without a class cannot use {weapon.name!r} "
                "(only its natural weapons)"
            )
        row = self.combat_table().row(weapon.weapon_type)
        return (row.bp if self.is_proficient(weapon) else row.bnp), row.mr, row.da
