"""TSS reference kernels: plain loops, the executable specification (tss-combat.txt, RULINGS.md TSS).

Kernel signature (shared by the Numba and Cython twins):
``kernel(seed, start, count, *params, counts, *outputs)``; outputs have length ``count`` or 0.
The int64 tables the kernels take (attack ``config``, fight ``characters``) and the order in
which dice consume each item's words are specified in docs/tss.md and below. The fight is the
engine's (combatsim.tss.engine: reset, then step with every member scripted until the end), and
so are the tier and damage rules the attack shares with it.
"""

from __future__ import annotations

from combatsim.rng import ItemStream, dense_die

from .engine import (  # noqa: F401  the fight is the engine's; its table layout is re-exported here
    FIGHT_COUNTS,
    R_ACTION_CHECK,
    R_ACTIONS,
    R_ARMOUR,
    R_ARMOUR_QUALITY,
    R_ATTACK_STEPS,
    R_DAMAGE,
    R_DEFENCE_STEPS,
    R_HAS_RESOLVE,
    R_MORTAL,
    R_RESOLVE,
    R_SIDE,
    R_SKILL,
    R_STUN,
    R_WEAPON_CLASS,
    R_WEAPON_QUALITY,
    R_WOUND,
    ROW_BASE,
    dealt,
    fight,
    tier_of,
)

# --- attack config (int64 array, CONFIG_SIZE entries) ----------------------------------------
C_AMAZING, C_GOOD, C_ORDINARY = 0, 1, 2  # skill thresholds
C_SIT_SIGN, C_SIT_COUNT, C_SIT_SIDES = 3, 4, 5  # situation die: -1/0/+1, dice, sides
C_DAMAGE_WORDS = 6  # words reserved for damage dice: the largest count over the three tiers
C_ARMOUR_PRESENT, C_ARMOUR_COUNT, C_ARMOUR_SIDES, C_ARMOUR_MODIFIER = 7, 8, 9, 10
#: Damage per tier (AMAZING, GOOD, ORDINARY): dice count, sides, modifier, type after the shift.
C_DAMAGE = 11
#: The joint layout (docs/tss.md): 1 when every die of the attack comes from one joint die of
#: JOINT_SIDES faces; JOINT_DAMAGE is the modulus of each damage position (lcm of the tiers' sides).
C_JOINT, C_JOINT_SIDES, C_JOINT_DAMAGE = 23, 24, 25
CONFIG_SIZE = 26
#: The joint layout is used when the joint die has at most this many faces (so every quotient
#: of its mixed-radix decomposition is exact by multiply-shift in the compiled kernels).
JOINT_MAX_SIDES = 1 << 16
#: counts of the attack kernel: amazing, good, ordinary, failure, critical_failure, stun, wound, mortal.
ATTACK_COUNTS = 8


def attack(seed, start, count, config, counts, tier_out, stun_out, wound_out, mortal_out) -> None:
    """Attacks (Rolling Attack, Rolling Damage, Rolling Armour, Determining Damage & Effects).

    Two word layouts (docs/tss.md), chosen by the API from the dice alone:

    * joint (``config[C_JOINT] == 1``): attack i rolls ONE die of N = 20 * s**S * L**D * a**A
      faces from its dense word (``combatsim.rng.dense_die``) and reads its dice off the value
      v = roll - 1 in mixed radix, least significant first: the control d20 (v % 20), the S
      situation dice, D damage positions r_j (v % L; the tier's die j is r_j % sides + 1), the A
      armour dice. Exactly uniform and independent, one word per attack.
    * per die: attack i uses its item stream, a fixed 1 + S + D + A words whatever the outcome:
      word 0 the control d20; words 1..S the situation dice; the next D words the damage dice
      (the tier's first ``count`` of them, rolled only on a hit); the next A words the armour
      dice (rolled only on a hit). Rejected words retry from the retry domain in that order.
    """
    c = [int(value) for value in config]
    sign, sit_count, sit_sides = c[C_SIT_SIGN], c[C_SIT_COUNT], c[C_SIT_SIDES]
    armour_words = c[C_ARMOUR_COUNT] if c[C_ARMOUR_PRESENT] else 0
    for k in range(count):
        if c[C_JOINT]:
            value = dense_die(seed, start + k, c[C_JOINT_SIDES]) - 1
            value, control = divmod(value, 20)
            situation_total = 0
            for _ in range(sit_count):
                value, die = divmod(value, sit_sides)
                situation_total += die + 1
            positions = []
            for _ in range(c[C_DAMAGE_WORDS]):
                value, position = divmod(value, c[C_JOINT_DAMAGE])
                positions.append(position)
            soak_dice = []
            for _ in range(armour_words):
                value, die = divmod(value, c[C_ARMOUR_SIDES])
                soak_dice.append(die + 1)
            control += 1

            def damage_die(j: int, sides: int, positions=positions) -> int:
                return positions[j] % sides + 1

            def armour_die(j: int, soak_dice=soak_dice) -> int:
                return soak_dice[j]
        else:
            stream = ItemStream(seed, start + k)
            control = stream.die(20)
            situation_total = stream.roll(sit_count, sit_sides)
            damage_words = [stream.word() for _ in range(c[C_DAMAGE_WORDS])]
            soak_words = [stream.word() for _ in range(armour_words)]

            def damage_die(j: int, sides: int, stream=stream, words=damage_words) -> int:
                return stream.bounded(words[j], sides) + 1

            def armour_die(j: int, stream=stream, words=soak_words) -> int:
                return stream.bounded(words[j], c[C_ARMOUR_SIDES]) + 1

        tier = tier_of(control, control + sign * situation_total, c[C_AMAZING], c[C_GOOD], c[C_ORDINARY])
        stun = wound = mortal = 0
        if tier <= 2:
            base = C_DAMAGE + 4 * tier
            dice, sides, modifier, damage_type = c[base : base + 4]
            amount = sum(damage_die(j, sides) for j in range(dice)) + modifier
            soak = 0
            if c[C_ARMOUR_PRESENT]:
                soak = sum(armour_die(j) for j in range(armour_words)) + c[C_ARMOUR_MODIFIER]
            stun, wound, mortal = dealt(amount, damage_type, soak)
        counts[tier] += 1
        counts[5] += stun
        counts[6] += wound
        counts[7] += mortal
        if len(tier_out):
            tier_out[k] = tier
            stun_out[k] = stun
            wound_out[k] = wound
            mortal_out[k] = mortal
