"""TSS data model: scores, the action check, the Difficulty Scale, damage tracks, armour (docs/tss.md).

Everything here is exact integer arithmetic on rule values and validates
its input with errors that name the field. The kernels never see these objects: the API flattens
them into int64 tables (layouts in docs/tss.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from combatsim.dice import Dice
from combatsim.tss.engine import dazed_steps, own_steps, tier_of  # the rules these functions apply
from combatsim.tss.layout import DIFFICULTY_SCALE, MAX_STEPS, MORTAL, NOTHING, STUN, WOUND, situation_die  # noqa: F401
from combatsim.validation import brief, check_int, check_text

#: The largest score (skill, action check, Resolve-physical) accepted.
MAX_SCORE = 1000
#: Limits on one damage tier's or one armour's dice, so a fixed word layout stays small.
MAX_DAMAGE_DICE = 20
MAX_ARMOUR_DICE = 10
MAX_DIE_SIDES = 1000
MAX_DICE_MODIFIER = 1000
#: The largest durability track (stun, wound or mortal points).
MAX_DURABILITY = 1000

#: Degrees of success, best first; the kernels use these codes for the tier of an attack.
AMAZING, GOOD, ORDINARY, FAILURE, CRITICAL_FAILURE = 0, 1, 2, 3, 4
TIER_NAMES = ("amazing", "good", "ordinary", "failure", "critical_failure")

DAMAGE_TYPE_LETTERS = {"s": STUN, "w": WOUND, "m": MORTAL}

#: Quality grades of weapons and armour; the type shift is the difference of grades.
QUALITIES = ("marginal", "ordinary", "good", "amazing")
_QUALITY_LETTERS = {"m": "marginal", "o": "ordinary", "g": "good", "a": "amazing"}


def _named(field: str, make, *args):
    """Call ``make(*args)``, naming ``field`` in any error."""
    try:
        return make(*args)
    except (TypeError, ValueError) as error:
        raise type(error)(f"{field}: {error}") from None


def quality_grade(quality: str | int, name: str = "quality") -> int:
    """marginal 0, ordinary 1, good 2, amazing 3 (also the letters M/O/G/A)."""
    if isinstance(quality, int) and not isinstance(quality, bool):
        return check_int(name, quality, 0, 3)
    if not isinstance(quality, str):
        raise TypeError(f"{name} must be one of {', '.join(QUALITIES)}, got {type(quality).__name__}")
    text = quality.strip().lower()
    text = _QUALITY_LETTERS.get(text, text)
    if text not in QUALITIES:
        raise ValueError(f"{name} must be one of {', '.join(QUALITIES)} (or M/O/G/A), got {quality!r}")
    return QUALITIES.index(text)


@dataclass(frozen=True, slots=True)
class Score:
    """A score written Ordinary/Good/Amazing, e.g. ``16/8/4``; success at or under."""

    ordinary: int
    good: int
    amazing: int

    def __post_init__(self) -> None:
        for name in ("ordinary", "good", "amazing"):
            check_int(f"score {name}", getattr(self, name), 0, MAX_SCORE)
        if not self.ordinary >= self.good >= self.amazing:
            raise ValueError(
                f"score must be non-increasing Ordinary/Good/Amazing such as 16/8/4, got "
                f"{self.ordinary}/{self.good}/{self.amazing}"
            )

    @classmethod
    def of(cls, ordinary: int) -> Score:
        """One score S gives S / floor(S/2) / floor(S/4)."""
        ordinary = check_int("score", ordinary, 0, MAX_SCORE)
        return cls(ordinary, ordinary // 2, ordinary // 4)

    @classmethod
    def parse(cls, text: str | int | Score, field: str = "skill") -> Score:
        """``"16/8/4"``, ``"16"`` or 16."""
        if isinstance(text, Score):
            return text
        if isinstance(text, int) and not isinstance(text, bool):
            return _named(field, cls.of, text)
        if not isinstance(text, str):
            raise TypeError(f"{field} must be a score such as '16/8/4' or '16', got {type(text).__name__}")
        parts = text.strip().split("/")
        if not all(re.fullmatch(r"\s*\d{1,9}\s*", part, re.ASCII) for part in parts) or len(parts) not in (1, 3):
            raise ValueError(f"{field} must look like Ordinary/Good/Amazing (e.g. '16/8/4') or one score, "
                             f"got {brief(text)}")
        values = [int(part) for part in parts]
        if len(values) == 1:
            return _named(field, cls.of, values[0])
        return _named(field, cls, *values)

    def tier(self, total: int) -> int:
        """AMAZING, GOOD, ORDINARY or FAILURE for a check total (the control die's 20 is separate)."""
        return tier_of(0, total, self.amazing, self.good, self.ordinary)

    def __str__(self) -> str:
        return f"{self.ordinary}/{self.good}/{self.amazing}"


@dataclass(frozen=True, slots=True)
class ActionCheck:
    """An action check ``+14/13/6/3``: Marginal above Ordinary, never a failure."""

    score: Score

    @classmethod
    def parse(cls, text: str | int | ActionCheck | Score, field: str = "action_check") -> ActionCheck:
        """``"+14/13/6/3"``, ``"13/6/3"`` or ``"13"``; the Marginal part must be Ordinary + 1."""
        if isinstance(text, ActionCheck):
            return text
        if isinstance(text, Score):
            return cls(text)
        if isinstance(text, str):
            match = re.fullmatch(r"\s*\+(\d{1,9})\s*/(.*)", text, re.ASCII)
            if match:
                score = Score.parse(match[2], field)
                if int(match[1]) != score.ordinary + 1:
                    raise ValueError(
                        f"{field}: the Marginal part must be Ordinary + 1 ({score.ordinary + 1}), got +{match[1]}"
                    )
                return cls(score)
        return cls(Score.parse(text, field))

    @property
    def marginal(self) -> int:
        return self.score.ordinary + 1

    def phase(self, roll: int) -> int:
        """The first phase (0 Amazing .. 3 Marginal) a character may act in after rolling ``roll``."""
        tier = self.score.tier(roll)
        return tier if tier != FAILURE else 3

    def __str__(self) -> str:
        return f"+{self.marginal}/{self.score}"


def phases_played(first_phase: int, actions_per_round: int) -> tuple[int, ...]:
    """The phases a character acts in: its own and the following ones, one action each, until its
    actions per round are spent (the fight policy: act as early as allowed, distinct phases)."""
    first_phase = check_int("phase", first_phase, 0, 3)
    actions_per_round = check_int("actions_per_round", actions_per_round, 1, 4)
    return tuple(range(first_phase, min(4, first_phase + actions_per_round)))


def situation_die_text(steps: int) -> str:
    sign, count, sides = situation_die(steps)
    if count == 0:
        return "-d0"
    return f"{'+' if sign > 0 else '-'}{'' if count == 1 else count}d{sides}"


#: ``two_weapons``: which attack of a two-weapon action (None: one weapon), as the engine's hand codes.
HANDS = {None: 0, "main": 1, "off": 2}


def check_hand(two_weapons: str | None, name: str = "two_weapons") -> int:
    """The engine's hand code of ``two_weapons``: None, "main" or "off"."""
    if two_weapons not in HANDS:
        raise ValueError(f"{name} must be 'main' or 'off' (or none), got {two_weapons!r}")
    return HANDS[two_weapons]


def two_weapon_steps(hand: str, ambidexterity: bool = False) -> int:
    """Attacking with two weapons: +2 main / +4 off hand, +0 / +2 with the Ambidexterity feat."""
    if hand is None:
        raise ValueError("two_weapons must be 'main' or 'off', got None")
    return own_steps(0, 0, check_hand(hand), 1 if ambidexterity else 0)


def attack_steps(
    *,
    skill: int = 0,
    accuracy: int = 0,
    weapon_range: int = 0,
    resistance: int = 0,
    defence: int = 0,
    attacker_equipment: int = 0,
    defender_equipment: int = 0,
    aiming: bool = False,
    two_weapons: str | None = None,
    ambidexterity: bool = False,
    broad: bool = False,
    dazed: int = 0,
) -> int:
    """Sum the attack modifiers of "Determining Attack Modifiers" (negative is a bonus).

    ``aiming``: an action spent aiming gives -1 on the next attack. ``broad``: a broad skill
    costs +1. ``dazed``: the attacker's dazed penalty (see :func:`dazed_penalty`).
    """
    total = 0
    for name, value in (
        ("skill", skill),
        ("accuracy", accuracy),
        ("weapon_range", weapon_range),
        ("resistance", resistance),
        ("defence", defence),
        ("attacker_equipment", attacker_equipment),
        ("defender_equipment", defender_equipment),
        ("dazed", dazed),
    ):
        total += check_int(name, value, -1000, 1000)
    total -= 1 if aiming else 0
    total += 1 if broad else 0
    if two_weapons is not None:
        total += two_weapon_steps(two_weapons, ambidexterity)
    return total


def dazed_penalty(
    stun_lost: int, stun: int, wound_lost: int, wound: int, mortal_lost: int, mortal: int, resolve: int = 0
) -> int:
    """Dazed steps (Being dazed): +1 for at least half the stun track lost, +1 for at least half
    the wound track, +1 per mortal point lost; cumulative. A Resolve-physical success negates
    1/2/3 (``resolve`` = 0 none, 1 Ordinary, 2 Good, 3 Amazing), never below 0."""
    for name, value in (("stun", stun), ("wound", wound), ("mortal", mortal)):
        check_int(name, value, 1, MAX_DURABILITY)
    check_int("resolve", resolve, 0, 3)
    return dazed_steps(stun_lost, stun, wound_lost, wound, mortal_lost, resolve)


@dataclass(frozen=True, slots=True)
class DamageTier:
    dice: Dice
    type: int  # STUN, WOUND or MORTAL

    def __str__(self) -> str:
        return f"{self.dice}{'swm'[self.type - 1]}"


_TIER = re.compile(r"^\s*(?P<dice>[^swmSWM]+?)\s*(?P<type>[swmSWM])\s*$")


@dataclass(frozen=True, slots=True)
class DamageTrack:
    """A weapon's damage per degree of success, written Ordinary/Good/Amazing: ``d4w/d4+2w/d4-1m``."""

    ordinary: DamageTier
    good: DamageTier
    amazing: DamageTier

    @classmethod
    def parse(cls, text: str | DamageTrack, field: str = "damage") -> DamageTrack:
        if isinstance(text, DamageTrack):
            return text
        if not isinstance(text, str):
            raise TypeError(f"{field} must be a damage track such as 'd4w/d4+2w/d4-1m', got {type(text).__name__}")
        parts = text.split("/")
        if len(parts) != 3:
            raise ValueError(
                f"{field} must have three tiers Ordinary/Good/Amazing like 'd4w/d4+2w/d4-1m', got {brief(text)}"
            )
        tiers = []
        for tier_name, part in zip(("ordinary", "good", "amazing"), parts, strict=True):
            match = _TIER.match(part)
            if not match:
                raise ValueError(
                    f"{field} {tier_name} tier must be dice and a type s/w/m (e.g. 'd4+2w'), got {part!r}"
                )
            dice = Dice.parse(match["dice"], f"{field} {tier_name} tier")
            _check_dice(f"{field} {tier_name} tier", dice, MAX_DAMAGE_DICE)
            tiers.append(DamageTier(dice, DAMAGE_TYPE_LETTERS[match["type"].lower()]))
        return cls(*tiers)

    def tier(self, degree: int) -> DamageTier:
        """The damage for AMAZING, GOOD or ORDINARY."""
        return (self.amazing, self.good, self.ordinary)[degree]

    def __str__(self) -> str:
        return f"{self.ordinary}/{self.good}/{self.amazing}"


def _check_dice(field: str, dice: Dice, max_count: int) -> None:
    if dice.count > max_count:
        raise ValueError(f"{field} must roll at most {max_count} dice, got {dice.count}")
    if dice.sides > MAX_DIE_SIDES:
        raise ValueError(f"{field} dice must have at most {MAX_DIE_SIDES} sides, got {dice.sides}")
    if abs(dice.modifier) > MAX_DICE_MODIFIER:
        raise ValueError(f"{field} modifier must be in -{MAX_DICE_MODIFIER}..{MAX_DICE_MODIFIER}, got {dice.modifier}")


@dataclass(frozen=True, slots=True)
class Weapon:
    """A damage track, a damage class (e.g. ``En``) and a quality: "En/G" is Energy, Good quality."""

    damage: DamageTrack
    damage_class: str = "En"
    quality: int = 1

    @classmethod
    def make(cls, damage: str | DamageTrack, damage_class: str = "En", quality: str | int = "ordinary") -> Weapon:
        if not isinstance(damage_class, str) or not damage_class.strip():
            raise ValueError(f"damage_class must be a non-empty name such as 'En', got {damage_class!r}")
        check_text("damage_class", damage_class)
        return cls(DamageTrack.parse(damage), damage_class.strip(), quality_grade(quality, "weapon_quality"))

    @classmethod
    def parse_type(cls, damage: str | DamageTrack, damage_type: str) -> Weapon:
        """A weapon from its track and its damage type written class/quality, e.g. ``En/G``."""
        damage_class, slash, quality = damage_type.partition("/")
        if not slash:
            raise ValueError(f"damage type must look like class/quality, e.g. 'En/G', got {damage_type!r}")
        return cls.make(damage, damage_class, quality)


@dataclass(frozen=True, slots=True)
class Armour:
    """Armour: a soak die per damage class (e.g. ``{"En": "d6"}``) and a quality.

    A class without a die gives no soak and no shift.
    """

    dice: dict[str, Dice] = field(default_factory=dict)
    quality: int = 1

    @classmethod
    def make(cls, dice: dict[str, str | Dice] | str | Dice, quality: str | int = "ordinary",
             damage_class: str = "En") -> Armour:
        """``dice``: a mapping class -> die, or one die that covers ``damage_class``."""
        if isinstance(dice, str | Dice):
            dice = {damage_class: dice}
        if not isinstance(dice, dict):
            raise TypeError(f"armour must be a die such as 'd6' or a mapping class -> die, got {type(dice).__name__}")
        parsed = {}
        for name, die in dice.items():
            check_text("armour's damage class", name, 40)  # as a weapon's class: no control characters
            parsed[name.strip()] = value = Dice.parse(die, f"armour {name}", constant=False)
            _check_dice(f"armour {name}", value, MAX_ARMOUR_DICE)
        return cls(parsed, quality_grade(quality, "armour_quality"))

    def die_for(self, damage_class: str) -> Dice | None:
        """The soak die for ``damage_class`` (case ignored), or None: no soak and no shift."""
        return next((die for name, die in self.dice.items() if name.lower() == damage_class.lower()), None)
