"""TSS reference kernels: plain loops, the executable specification (docs/tss.md).

Kernel signature (shared by the Numba and Cython twins):
``kernel(seed, start, count, *params, counts, *outputs)``; outputs have length ``count`` or 0.
The int64 tables the kernels take (attack ``config``, fight ``characters``) and the order in
which dice consume each item's words are specified in docs/tss.md and below. The fight is the
engine's (combatsim.tss.engine: reset, then step with every member scripted until the end), and
so is each attack's outcome (its ``attack_outcome`` and ``joint_outcome``); this loop draws the
attacks' dice.
"""

from __future__ import annotations

from combatsim.engine import new_stream, stream_resume
from combatsim.rng import dense_die

from .engine import C_JOINT, C_JOINT_SIDES, attack_outcome, fight, joint_outcome  # noqa: F401  fight: the engine's


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
    rng = new_stream()
    for k in range(count):
        if c[C_JOINT]:
            tier, stun, wound, mortal = joint_outcome(c, dense_die(seed, start + k, c[C_JOINT_SIDES]) - 1)
        else:
            stream_resume(rng, seed, start + k, 0, 0)
            tier, stun, wound, mortal = attack_outcome(rng, c)
        counts[tier] += 1
        counts[5] += stun
        counts[6] += wound
        counts[7] += mortal
        if len(tier_out):
            tier_out[k] = tier
            stun_out[k] = stun
            wound_out[k] = wound
            mortal_out[k] = mortal
