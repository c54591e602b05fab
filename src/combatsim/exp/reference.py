"""EXP reference kernels: plain loops, the executable specification (RULINGS.md, EXP).

Kernel signature (shared by the Numba and Cython twins):
``kernel(seed, start, count, *params, counts, *outputs)``; per-attack params have length 1
(the same for every attack) or ``count``; outputs have length ``count`` or 0 (not wanted).
"""

from __future__ import annotations

from combatsim.rng import dense_die

KILODIE = 1000


def _at(values, k: int) -> int:
    return int(values[k] if len(values) > 1 else values[0])


def to_hit(seed, start, count, bonus, maximum_roll, armour_rating, hit_on_equal, counts, to_hit_out) -> None:
    """Kilodie to-hit (Tables 9.2, 9.5; Ch. 27): to-hit = min(kilodie + bonus, MR).

    A hit needs to-hit greater than the armour rating (RULINGS.md; option: equal suffices).
    ``counts[0]`` gains the hits; ``to_hit_out[k]`` gets attack ``start + k``'s to-hit roll.
    """
    for k in range(count):
        roll = dense_die(seed, start + k, KILODIE)
        total = min(roll + _at(bonus, k), _at(maximum_roll, k))
        armour = _at(armour_rating, k)
        if total > armour or (hit_on_equal and total == armour):
            counts[0] += 1
        if len(to_hit_out):
            to_hit_out[k] = total
