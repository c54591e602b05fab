"""The one dice-expression type: ``NdS+K`` ("3d10", "d4+2", "1d8-1", "7")."""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

MAX_DICE_COUNT = 1000
MAX_SIDES = 1_000_000
MAX_MODIFIER = 1_000_000
#: The longest dice expression read: longer text cannot be in range, so it is refused unread.
MAX_TEXT = 64
#: Exact laws are kept to this many totals, built in at most this many steps (dice x totals),
#: so that building one takes at most about 0.1 s.
MAX_LAW_OUTCOMES = 10_000
MAX_LAW_WORK = 200_000

# ASCII only: int() would also read fullwidth and Arabic-Indic digits.
_EXPRESSION = re.compile(r"^\s*(?:(?P<count>\d+)?[dD](?P<sides>\d+))?\s*(?P<modifier>[+-]\s*\d+)?\s*$", re.ASCII)
_CONSTANT = re.compile(r"^\s*(?P<modifier>[+-]?\d+)\s*$", re.ASCII)


@dataclass(frozen=True, slots=True)
class Dice:
    """``count`` dice of ``sides`` faces plus ``modifier``; ``count == 0`` is a constant."""

    count: int
    sides: int
    modifier: int = 0

    def __post_init__(self) -> None:
        for name, value in (("count", self.count), ("sides", self.sides), ("modifier", self.modifier)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"dice {name} must be an int, got {type(value).__name__}")
        if not 0 <= self.count <= MAX_DICE_COUNT:
            raise ValueError(f"dice count must be in 0..{MAX_DICE_COUNT}, got {self.count}")
        if not 1 <= self.sides <= MAX_SIDES:
            raise ValueError(f"dice sides must be in 1..{MAX_SIDES}, got {self.sides}")
        if self.count == 0 and self.sides != 1:  # as "0d6" is refused: no dice is a constant, Dice(0, 1, K)
            raise ValueError(f"dice count must be in 1..{MAX_DICE_COUNT} for dice of {self.sides} sides "
                             f"(a constant K is Dice(0, 1, K)), got 0")
        if not -MAX_MODIFIER <= self.modifier <= MAX_MODIFIER:
            raise ValueError(f"dice modifier must be in -{MAX_MODIFIER}..{MAX_MODIFIER}, got {self.modifier}")

    @classmethod
    def parse(cls, text: str | Dice, field: str = "dice", constant: bool = True) -> Dice:
        """Parse ``NdS+K``; the error names ``field`` and the accepted form.

        A plain number (``"7"``) is a constant; ``constant=False`` refuses it, for a field that must
        roll at least one die (an armour die)."""
        if isinstance(text, Dice):
            if not constant and text.count == 0:
                raise ValueError(f"{field} must roll at least one die (e.g. 'd6'), got {str(text)!r}")
            return text
        if not isinstance(text, str):
            raise TypeError(f"{field} must be a dice string such as '3d10' or 'd4+2', got {type(text).__name__}")
        if len(text) > MAX_TEXT:
            raise ValueError(f"{field} must look like NdS+K (e.g. '3d10', 'd4+2'), got {len(text)} characters")
        if _CONSTANT.match(text):
            if not constant:
                raise ValueError(f"{field} must roll at least one die (e.g. 'd6', 'd4+1'), got {text!r}")
            return cls(0, 1, int(text))
        match = _EXPRESSION.match(text)
        if not match or match["sides"] is None:
            raise ValueError(f"{field} must look like NdS+K (e.g. '3d10', 'd4+2', '1d8-1'), got {text!r}")
        modifier = int(match["modifier"].replace(" ", "")) if match["modifier"] else 0
        count = int(match["count"]) if match["count"] is not None else 1
        if count < 1:
            raise ValueError(f"{field} must roll at least one die, got {text!r}")
        try:
            return cls(count, int(match["sides"]), modifier)
        except ValueError as error:
            raise ValueError(f"{field}: {error} (in {text!r})") from None

    @property
    def minimum(self) -> int:
        return self.count + self.modifier

    @property
    def maximum(self) -> int:
        return self.count * self.sides + self.modifier

    @property
    def outcomes(self) -> int:
        """How many totals the dice can roll (``minimum..maximum``)."""
        return self.maximum - self.minimum + 1

    def check_law(self, field: str = "dice") -> Dice:
        """Refuse, before any work, dice whose exact law is too large to build quickly."""
        work = self.count * self.outcomes  # the steps ways() takes: one per die and total
        if self.outcomes > MAX_LAW_OUTCOMES or work > MAX_LAW_WORK:
            raise ValueError(
                f"{field} {self} can roll {self.outcomes:,} totals; exact odds are limited "
                f"to {MAX_LAW_OUTCOMES:,} totals and dice x totals <= {MAX_LAW_WORK:,} (simulate it instead)"
            )
        return self

    def ways(self) -> list[int]:
        """How many of the ``sides ** count`` equally likely rolls give each total, ``minimum`` first.

        One die at a time, each total's count is a running sum over the previous counts (a sliding
        window of ``sides`` totals): ``count x outcomes`` integer additions, never ``x sides``.
        Refused before any work when too large (:meth:`check_law`).
        """
        self.check_law()
        counts = [1]
        for _ in range(self.count):
            window = 0
            rolled = []
            for total in range(len(counts) + self.sides - 1):
                if total < len(counts):
                    window += counts[total]
                if total >= self.sides:
                    window -= counts[total - self.sides]
                rolled.append(window)
            counts = rolled
        return counts

    def distribution(self) -> dict[int, Fraction]:
        """The exact law of the total: value -> probability (see :meth:`ways` for its limit)."""
        rolls = self.sides**self.count
        return {self.minimum + k: Fraction(ways, rolls) for k, ways in enumerate(self.ways())}

    def __str__(self) -> str:
        if self.count == 0:
            return str(self.modifier)
        tail = f"{self.modifier:+d}" if self.modifier else ""
        return f"{self.count}d{self.sides}{tail}"
