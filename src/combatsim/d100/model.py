"""d100 combat math as pure functions (docs/d100.md).

Every function here is exact integer (or :class:`fractions.Fraction`) arithmetic: multipliers
such as the specialty multiplier (1.0..1.5) and the lethality factors (x 0.5, x 0.75) are
rationals, and each result rounds down once at the end (the rules round down where they say
nothing else), so no value can land on x.9999.
The API builds kernel parameters from these functions. The per-attack rules (tier and damage
bars, wound severity, the split of an attack value) are :mod:`combatsim.d100.engine`'s, which
every backend's kernels run; this module names them too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction

# The per-attack rules are the engine's, which every backend runs; model.X names them as well.
from combatsim.d100.engine import _tier, damage_bars, escalate, split_attack_value, tier_bars, wound_severity  # noqa: F401
from combatsim.d100.engine import flee_target as engine_flee_target

# The rules' codes and numbers the engine reads too are the layout's; model.X names them as well.
from combatsim.d100.layout import (  # noqa: F401
    CRITICAL_FAILURE,
    CRITICAL_SUCCESS,
    FAILURE,
    FLEE_STEP,
    FLESH,
    FLESH_PER_SERIOUS,
    HARD_SUCCESS,
    INSTANT_DEATH,
    LETHAL,
    SERIOUS,
    SERIOUS_PER_LETHAL,
    SUCCESS,
    TARGET_CAP,
    TIER_NAMES,
)

# Armour classes.
ARMOUR_NONE, ARMOUR_LIGHT, ARMOUR_HEAVY = 0, 1, 2
ARMOUR_NAMES = ("none", "light", "heavy")
TORSO_COVERAGES = ("none", "light", "heavy")

# Weapon categories (the distant-attack modifiers depend on them).
CATEGORIES = ("melee", "pistol", "thrown", "archery", "carbine", "long_gun", "elementalism")
#: An active Elementalism blast: attacked with the Arcane score as its pool, a ranged attack for
#: cover, no distant modifier.
ELEMENTALISM = "elementalism"

#: "Serious threshold: min(90, final_lethality x weapon_severity)".
SERIOUS_CAP = 90
#: "min(1.5, ...)": the specialty multiplier never exceeds 1.5.
SPECIALTY_CAP = Fraction(3, 2)
#: Specialty taper readings (an option; the first is the default).
TAPERS = ("halving", "highest", "flat")

# Attack modifiers (docs/d100.md, section 2).
QUICK_ATTACK = -20
AUTOMATIC_FIRE = 20
TARGET_IN_COVER = -20
TARGET_DEFENDING = -20
DUAL_WIELD = -20
DISTANT = {"pistol": -30, "thrown": -30, "archery": -20, "carbine": -20, "long_gun": -10, "melee": 0,
           "elementalism": 0}

# Lethality factors (docs/d100.md, section 4).
COVER_FACTOR = Fraction(1, 2)
ARMOUR_FACTOR = (Fraction(1), Fraction(3, 4), Fraction(1, 2))
DUAL_WIELD_FACTOR = Fraction(3, 4)


def fighting_score(combat: int, athletics: int, strength: int, agility: int, endurance: int, perception: int) -> int:
    """Fighting = floor((Combat x 4 + Athletics + Strength + Agility + Endurance + Perception) / 9)."""
    return (combat * 4 + athletics + strength + agility + endurance + perception) // 9


def specialty_multiplier(ranks: Iterable[int], taper: str = "halving") -> Fraction:
    """The weapon specialty multiplier, exact.

    One rank: min(1.5, 1.0 + 0.1 x rank). Several ranks, sorted high to low:
    1 + 0.1 r1 + sum over k >= 2 of 0.1 r_k 0.5^(k-1), capped at 1.5 (``taper="halving"``).
    The taper is an option: ``"highest"`` counts the highest rank only, ``"flat"`` adds every
    further rank at full value. No ranks: 1.
    """
    ordered = sorted((int(rank) for rank in ranks), reverse=True)
    if taper not in TAPERS:
        raise ValueError(f"taper must be one of {', '.join(map(repr, TAPERS))}; got {taper!r}")
    if not ordered:
        return Fraction(1)
    bonus = Fraction(ordered[0], 10)
    for k, rank in enumerate(ordered[1:], start=2):
        if taper == "halving":
            bonus += Fraction(rank, 10) / 2 ** (k - 1)
        elif taper == "flat":
            bonus += Fraction(rank, 10)
    return min(SPECIALTY_CAP, 1 + bonus)


def attack_modifiers(
    *,
    quick: bool = False,
    automatic_fire: bool = False,
    target_in_cover: bool = False,
    ranged: bool = False,
    target_defending: bool = False,
    dual_wield: bool = False,
    distant: bool = False,
    category: str = "melee",
    long_range: bool = False,
) -> int:
    """The sum of the action modifiers of one attack (docs/d100.md, section 2).

    Cover counts for ranged attacks only. ``distant`` marks a ranged attack at a distance: -30
    with a pistol or thrown weapon, -20 with archery or a carbine, -10 with a long gun without
    the ``long_range`` tag (0 with it), 0 for melee.
    """
    total = 0
    total += QUICK_ATTACK if quick else 0
    total += AUTOMATIC_FIRE if automatic_fire else 0
    total += TARGET_IN_COVER if (target_in_cover and ranged) else 0
    total += TARGET_DEFENDING if target_defending else 0
    total += DUAL_WIELD if dual_wield else 0
    if distant and not (category == "long_gun" and long_range):
        total += DISTANT[category]
    return total


def full_skill(pool: int, multiplier: Fraction = Fraction(1), modifiers: int = 0) -> int:
    """full_skill = floor(pool x specialty multiplier) + action modifiers, uncapped."""
    return pool * multiplier.numerator // multiplier.denominator + modifiers


def capped_target(skill: int) -> int:
    """capped_target = min(95, full_skill)."""
    return min(TARGET_CAP, skill)


def tier(roll: int, skill: int) -> int:
    """The result tier of a d100 ``roll`` against ``full_skill`` ``skill``."""
    return _tier(roll, *tier_bars(skill))


def armour_class(torso: str = "none", helmet: bool = False) -> int:
    """Heavy torso plus helmet is heavy; heavy torso alone, light torso, or a helmet alone is
    light; otherwise none (docs/d100.md, section 4)."""
    if torso not in TORSO_COVERAGES:
        raise ValueError(f"torso must be one of {', '.join(map(repr, TORSO_COVERAGES))}; got {torso!r}")
    if torso == "heavy" and helmet:
        return ARMOUR_HEAVY
    if torso in ("heavy", "light") or helmet:
        return ARMOUR_LIGHT
    return ARMOUR_NONE


def lethality_factor(*, cover: bool = False, ranged: bool = False, armour: int = ARMOUR_NONE,
                     dual_wield: bool = False) -> Fraction:
    """The product of the protection multipliers (cover counts for ranged attacks only)."""
    factor = Fraction(1)
    if cover and ranged:
        factor *= COVER_FACTOR
    factor *= ARMOUR_FACTOR[armour]
    if dual_wield:
        factor *= DUAL_WIELD_FACTOR
    return factor


def final_lethality(weapon_lethality: int, factor: Fraction = Fraction(1)) -> int:
    """All applicable factors multiplied, rounded down once."""
    return weapon_lethality * factor.numerator // factor.denominator


def serious_threshold(lethality: int, severity: Fraction | int) -> int:
    """Serious threshold = min(90, floor(final lethality x weapon severity))."""
    severity = Fraction(severity)
    return min(SERIOUS_CAP, lethality * severity.numerator // severity.denominator)


def record_wound(
    deadly_flesh: int, serious: int, lethal: int, severity: int, nonlethal: bool
) -> tuple[int, int, int, int, int]:
    """Record one wound on a combatant in one combat, then escalate (cascading, docs/d100.md, section 6).

    Three deadly flesh wounds (flesh wounds from weapons that are not nonlethal) become one
    serious wound; two serious wounds (nonlethal ones included) become one lethal wound.
    Returns (deadly_flesh, serious, lethal, flesh-to-serious escalations, serious-to-lethal
    escalations). Nonlethal flesh wounds leave the counters unchanged.
    """
    if severity == FLESH and not nonlethal:
        deadly_flesh += 1
    elif severity == SERIOUS:
        serious += 1
    elif severity in (LETHAL, INSTANT_DEATH):
        lethal += 1
    return escalate(deadly_flesh, serious, lethal)


def flee_target(fighting: int, parkour: int, failed_attempts: int = 0) -> int:
    """floor((Fighting + Parkour) / 2) + 20 per prior failed attempt, capped at 95."""
    return engine_flee_target((fighting + parkour) // 2, failed_attempts)


def ambush_attacker_target(fighting: int, parkour: int, perception: int,
                           ambush_specialist: Fraction = Fraction(1)) -> int:
    """average(Fighting, Fighting, Parkour, Perception) rounded down, times the Ambush
    Specialist multiplier (a specialty multiplier, rounded down once)."""
    return full_skill((2 * fighting + parkour + perception) // 4, ambush_specialist)


def ambush_defender_target(fighting: int, parkour: int, perception: int,
                           combat_reflexes: Fraction = Fraction(1)) -> int:
    """average(Fighting, Parkour, Perception, Perception) rounded down, times the Combat
    Reflexes multiplier (a specialty multiplier, rounded down once)."""
    return full_skill((fighting + parkour + 2 * perception) // 4, combat_reflexes)


def dual_wield_allowed(two_weapon_style: int, two_gun_style: int, categories: Sequence[str]) -> bool:
    """Two-Weapon Style rank 2 with two melee weapons, or Two-Gun Style rank 2 with two pistols."""
    if len(categories) != 2:
        return False
    if two_weapon_style >= 2 and all(category == "melee" for category in categories):
        return True
    return two_gun_style >= 2 and all(category == "pistol" for category in categories)
