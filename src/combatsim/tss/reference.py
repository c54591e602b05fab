"""TSS reference kernels: plain loops, the executable specification (tss-combat.txt, RULINGS.md TSS).

Kernel signature (shared by the Numba and Cython twins):
``kernel(seed, start, count, *params, counts, *outputs)``; outputs have length ``count`` or 0.
The int64 tables the kernels take (attack ``config``, fight ``characters``) and the order in
which dice consume each item's words are specified in docs/tss.md and below.
"""

from __future__ import annotations

from combatsim.rng import ItemStream, dense_die

from .model import MAX_STEPS, MORTAL, STUN, WOUND

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

# --- fight characters (int64 array, one row of ROW_BASE + 4 * n_classes per character) --------
R_SIDE = 0
R_SKILL = 1  # amazing, good, ordinary
R_ACTION_CHECK = 4  # amazing, good, ordinary
R_ACTIONS = 7
R_ATTACK_STEPS, R_DEFENCE_STEPS = 8, 9
R_HAS_RESOLVE, R_RESOLVE = 10, 11  # Resolve-physical amazing, good, ordinary
R_STUN, R_WOUND, R_MORTAL = 14, 15, 16
R_WEAPON_QUALITY, R_WEAPON_CLASS, R_ARMOUR_QUALITY = 17, 18, 19
R_DAMAGE = 20  # per tier (AMAZING, GOOD, ORDINARY): count, sides, modifier, type before any shift
R_ARMOUR = 32  # per damage class: has a die, count, sides, modifier
ROW_BASE = 32
#: counts of the fight kernel: side 0 wins, side 1 wins, draws, rounds, attacks, stun, wound, mortal.
FIGHT_COUNTS = 8


def situation(steps: int) -> tuple[int, int, int]:
    """The Difficulty Scale (sign, count, sides), steps clamped to -5..MAX_STEPS (model.situation_die)."""
    if steps <= -5:
        return -1, 1, 20
    if steps > 7:
        return 1, min(steps, MAX_STEPS) - 4, 20
    return (
        (-1, 1, 12),
        (-1, 1, 8),
        (-1, 1, 6),
        (-1, 1, 4),
        (0, 0, 1),
        (1, 1, 4),
        (1, 1, 6),
        (1, 1, 8),
        (1, 1, 12),
        (1, 1, 20),
        (1, 2, 20),
        (1, 3, 20),
    )[steps + 4]


def tier_of(control: int, total: int, amazing: int, good: int, ordinary: int) -> int:
    """0 Amazing, 1 Good, 2 Ordinary, 3 failure, 4 critical failure (a control die of 20)."""
    if control == 20:
        return 4
    if total <= amazing:
        return 0
    if total <= good:
        return 1
    if total <= ordinary:
        return 2
    return 3


def dealt(amount: int, damage_type: int, soak: int) -> tuple[int, int, int]:
    """(stun, wound, mortal): secondary from the pre-armour amount, soak off the primary only."""
    amount = max(0, amount)
    primary = max(0, amount - max(0, soak))
    half = amount >> 1
    stun = primary if damage_type == STUN else (half if damage_type >= WOUND else 0)
    wound = primary if damage_type == WOUND else (half if damage_type == MORTAL else 0)
    mortal = primary if damage_type == MORTAL else 0
    return stun, wound, mortal


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


def _dazed(row, lost_stun: int, lost_wound: int, lost_mortal: int, negated: int) -> int:
    """Being dazed: +1 at half the stun track, +1 at half the wound track, +1 per mortal point,
    less the round's Resolve-physical negation, never below 0."""
    penalty = int(2 * lost_stun >= row[R_STUN]) + int(2 * lost_wound >= row[R_WOUND]) + lost_mortal
    return max(0, penalty - negated)


def fight(seed, start, count, characters, n_characters, n_classes, max_rounds, one_step, counts,
          winner_out, rounds_out) -> None:
    """Fights between side 0 and side 1 (The Combat Round), the policy in docs/tss.md.

    Each round, for every character still in the fight in index order: a Resolve-physical d20
    if it has that skill (negates 1/2/3 dazed steps this round), the action check d20 and its
    situation dice (the dazed penalty), one raw word as the tie-break die. Then the four phases
    run; in each, characters act in order of action check score (high first), tie-break word
    (high first), index. A character acts in its own phase and the following ones until its
    actions per round are spent. Its attack targets the lowest-index enemy still in the fight:
    control d20, situation dice, then on a hit the damage dice and the target's armour dice.
    A character is out when stun or wound lost reach the track (knocked out) or mortal lost does
    (dying). A fight ends when one side is out; after ``max_rounds`` rounds it is a draw.
    """
    width = ROW_BASE + 4 * int(n_classes)
    n = int(n_characters)
    rows = [[int(characters[i * width + f]) for f in range(width)] for i in range(n)]
    for k in range(count):
        stream = ItemStream(seed, start + k)
        lost = [[0, 0, 0] for _ in range(n)]
        active = [True] * n
        negated = [0] * n
        phase = [0] * n
        used = [0] * n
        tiebreak = [0] * n
        winner = -1
        rounds = 0
        attacks = 0
        dealt_total = [0, 0, 0]
        for round_number in range(1, int(max_rounds) + 1):
            rounds = round_number
            for i in range(n):
                if not active[i]:
                    continue
                row = rows[i]
                negated[i] = 0
                if row[R_HAS_RESOLVE]:
                    roll = stream.die(20)
                    tier = tier_of(roll, roll, row[R_RESOLVE], row[R_RESOLVE + 1], row[R_RESOLVE + 2])
                    negated[i] = 3 - tier if tier <= 2 else 0
                sign, dice, sides = situation(_dazed(row, *lost[i], negated[i]))
                roll = stream.die(20)
                roll += sign * stream.roll(dice, sides)
                # The action check never fails: above Ordinary is the Marginal phase.
                phase[i] = min(3, tier_of(0, roll, *row[R_ACTION_CHECK : R_ACTION_CHECK + 3]))
                tiebreak[i] = stream.word()
                used[i] = 0
            order = sorted(
                (i for i in range(n) if active[i]),
                key=lambda i: (-rows[i][R_ACTION_CHECK + 2], -tiebreak[i], i),
            )
            for current in range(4):
                for i in order:
                    row = rows[i]
                    if not active[i] or phase[i] > current or used[i] >= row[R_ACTIONS]:
                        continue
                    used[i] += 1
                    attacks += 1
                    target = next(j for j in range(n) if active[j] and rows[j][R_SIDE] != row[R_SIDE])
                    defender = rows[target]
                    steps = row[R_ATTACK_STEPS] + defender[R_DEFENCE_STEPS] + _dazed(row, *lost[i], negated[i])
                    sign, dice, sides = situation(steps)
                    control = stream.die(20)
                    total = control + sign * stream.roll(dice, sides)
                    tier = tier_of(control, total, *row[R_SKILL : R_SKILL + 3])
                    if tier <= 2:
                        base = R_DAMAGE + 4 * tier
                        amount = stream.roll(row[base], row[base + 1], row[base + 2])
                        damage_type = row[base + 3]
                        armour = R_ARMOUR + 4 * row[R_WEAPON_CLASS]
                        soak = 0
                        if defender[armour]:
                            shift = row[R_WEAPON_QUALITY] - defender[R_ARMOUR_QUALITY]
                            if one_step:
                                shift = max(-1, min(1, shift))
                            damage_type = max(0, min(MORTAL, damage_type + shift))
                            soak = stream.roll(defender[armour + 1], defender[armour + 2], defender[armour + 3])
                        stun, wound, mortal = dealt(amount, damage_type, soak)
                        lost[target][0] += stun
                        lost[target][1] += wound
                        lost[target][2] += mortal
                        dealt_total[0] += stun
                        dealt_total[1] += wound
                        dealt_total[2] += mortal
                        s, w, m = lost[target]
                        if s >= defender[R_STUN] or w >= defender[R_WOUND] or m >= defender[R_MORTAL]:
                            active[target] = False
                            if not any(active[j] and rows[j][R_SIDE] == defender[R_SIDE] for j in range(n)):
                                winner = row[R_SIDE]
                                break
                if winner >= 0:
                    break
            if winner >= 0:
                break
        counts[winner if winner >= 0 else 2] += 1
        counts[3] += rounds
        counts[FIGHT_COUNTS + rounds] += 1  # the rounds histogram follows the fixed counts
        counts[4] += attacks
        counts[5] += dealt_total[0]
        counts[6] += dealt_total[1]
        counts[7] += dealt_total[2]
        if len(winner_out):
            winner_out[k] = winner
            rounds_out[k] = rounds
