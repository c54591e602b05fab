"""Shared integer layouts of the d100 kernels: counts, actions and the fight combatant table.

The Numba kernels import these names; the Cython kernels take those they read from the engine's
kernel rules (``combatsim.d100.engine.KERNEL_CONSTANTS``, written into kernels/d100/kernel_rules.pxi).
"""

from __future__ import annotations

# Roll result tiers, best first (the order quick contests compare in).
CRITICAL_SUCCESS, HARD_SUCCESS, SUCCESS, FAILURE, CRITICAL_FAILURE = 0, 1, 2, 3, 4
TIER_NAMES = ("critical_success", "hard_success", "success", "failure", "critical_failure")

# Wound severities of one damage resolution; NO_WOUND when the attack failed.
NO_WOUND, FLESH, SERIOUS, LETHAL, INSTANT_DEATH = 0, 1, 2, 3, 4

#: "The target is capped at 95" (attack targets and the flee target).
TARGET_CAP = 95
#: Escalation (docs/d100.md, section 6).
FLESH_PER_SERIOUS = 3
SERIOUS_PER_LETHAL = 2
#: Flee under fire: +20 per prior failed attempt.
FLEE_STEP = 20

#: One attack draws one exactly uniform value 1..1000000 = three d100s (model.split_attack_value).
ATTACK_SIDES = 1_000_000
D100 = 100

# "d100.attack" counts: the five tiers (model.CRITICAL_SUCCESS..CRITICAL_FAILURE), then wounds.
A_LETHAL, A_SERIOUS, A_FLESH, A_INSTANT_DEATH = 5, 6, 7, 8
ATTACK_COUNTS = 9
ATTACK_COUNT_NAMES = (
    "critical_success", "hard_success", "success", "failure", "critical_failure",
    "lethal", "serious", "flesh", "instant_death",
)

# "d100.fight" counts (docs/d100.md, "The end of a fight"). Every fight ends in exactly one of: a
# win of side 0 or of side 1 (wins by flight included), a draw, or unfinished at max_rounds.
F_WINS = 0  # F_WINS + side: wins of side 0, of side 1
F_WINS_BY_FLIGHT = 2  # + side: those wins in which at least one foe escaped
F_ESCAPES = 4  # + side: the side's members who fled successfully
F_DRAWS = 6  # everyone out or gone, on both sides
F_UNFINISHED = 7  # still running after max_rounds rounds
F_ROUNDS = 8
F_ATTACKS = 9
F_LETHAL, F_SERIOUS, F_FLESH, F_INSTANT_DEATH = 10, 11, 12, 13
F_ESCALATED_SERIOUS, F_ESCALATED_LETHAL = 14, 15
F_SURPRISED = 16
FIGHT_COUNTS = 17
FIGHT_COUNT_NAMES = (
    "wins_side_0", "wins_side_1", "wins_by_flight_side_0", "wins_by_flight_side_1", "escapes_side_0",
    "escapes_side_1", "draws", "unfinished", "rounds", "attacks", "lethal", "serious", "flesh", "instant_death",
    "escalated_serious", "escalated_lethal", "surprised",
)

# Actions (one per pass). The policy d100 picks among the first eight in this order.
ACTION_NONE = 0
ACTION_ATTACK = 1
ACTION_QUICK_ATTACK = 2
ACTION_DEFEND = 3
ACTION_FLEE = 4
ACTION_PRESS = 5
ACTION_DISENGAGE = 6
ACTION_CHARGE = 7
ACTION_TAKE_COVER = 8
ACTION_TOGGLE_DUAL_WIELD = 9
POLICY_ACTIONS = (
    ACTION_ATTACK, ACTION_QUICK_ATTACK, ACTION_DEFEND, ACTION_FLEE,
    ACTION_PRESS, ACTION_DISENGAGE, ACTION_CHARGE, ACTION_TAKE_COVER,
)
POLICY_NAMES = ("attack", "quick_attack", "defend", "flee", "press", "disengage", "charge", "take_cover")

# Fight combatant table: one int64 row per combatant, these columns.
C_SIDE = 0
C_RANGED = 1
C_ARMOUR = 2
C_DUAL_ALLOWED = 3
C_FLEE_BASE = 4  # floor((Fighting + Parkour) / 2)
CONTEST_FIELDS = 5  # critical bar, hard bar, success bar, critical-failure bar, capped target
C_PRESS = 5  # full attack target without action modifiers
C_AMBUSH_ATTACK = 10
C_AMBUSH_DEFEND = 15
ATTACK_STEPS = 5  # 0..4 penalties of -20 (quick, dual wield, cover if ranged, target defending)
C_ATTACK = 20  # 4 bars per step
C_NONLETHAL = 40  # per weapon
C_DAMAGE = 42  # (lethal bar, serious-or-worse bar) per weapon, cover, target armour, dual wield
C_POLICY = 90  # cumulative policy bounds, one per POLICY_ACTIONS entry, the last = 100
FIELDS = 98

