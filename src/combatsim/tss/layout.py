"""The TSS rules' codes and tables that the engine reads as well as the model (combatsim.tss.model
names them too): the Difficulty Scale and the damage types."""

from __future__ import annotations

from combatsim.validation import check_int

#: The largest summed difficulty penalty: +24 is +20d20 ("+N beyond +7 is +(N-4)d20").
MAX_STEPS = 24
#: The most dazed steps a round's Resolve-physical roll negates (an Amazing success).
MOST_NEGATED = 3
#: Damage types along the shift scale "mortal > wounds > stun > nothing".
NOTHING, STUN, WOUND, MORTAL = 0, 1, 2, 3

#: The printed Difficulty Scale: steps -> (sign, dice count, die sides); "-d0" is no die.
DIFFICULTY_SCALE = {
    -5: (-1, 1, 20),  # No Sweat!
    -4: (-1, 1, 12),  # Piece'o'Cake
    -3: (-1, 1, 8),  # Super Easy
    -2: (-1, 1, 6),  # Very Easy
    -1: (-1, 1, 4),  # Easy
    0: (0, 0, 1),  # Average: -d0
    1: (1, 1, 4),  # Tough
    2: (1, 1, 6),  # Hard
    3: (1, 1, 8),  # Challenging
    4: (1, 1, 12),  # Formidable
    5: (1, 1, 20),  # Grueling
    6: (1, 2, 20),  # Well shit!
    7: (1, 3, 20),  # The Tom Cruise
}


def situation_die(steps: int) -> tuple[int, int, int]:
    """The Difficulty Scale: summed steps -> (sign, dice count, sides) of the situation die.

    Bonuses stop at -d20; a penalty +N beyond +7 is +(N-4)d20. Steps 0 is
    "-d0": no die (count 0).
    """
    steps = max(check_int("steps", steps, None, MAX_STEPS), -5)
    if steps > 7:
        return 1, steps - 4, 20
    return DIFFICULTY_SCALE[steps]
