"""The one dice-expression type: ``NdS+K`` ("3d10", "d4+2", "1d8-1", "7")."""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

MAX_DICE_COUNT = 1000
MAX_SIDES = 1_000_000
MAX_MODIFIER = 1_000_000

_EXPRESSION = re.compile(r"^\s*(?:(?P<count>\d+)?[dD](?P<sides>\d+))?\s*(?P<modifier>[+-]\s*\d+)?\s*$")
_CONSTANT = re.compile(r"^\s*(?P<modifier>[+-]?\d+)\s*$")


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
        if not -MAX_MODIFIER <= self.modifier <= MAX_MODIFIER:
            raise ValueError(f"dice modifier must be in -{MAX_MODIFIER}..{MAX_MODIFIER}, got {self.modifier}")

    @classmethod
    def parse(cls, text: str | Dice, field: str = "dice") -> Dice:
        """Parse ``NdS+K``; the error names ``field`` and the accepted form."""
        if isinstance(text, Dice):
            return text
        if not isinstance(text, str):
            raise TypeError(f"{field} must be a dice string such as '3d10' or 'd4+2', got {type(text).__name__}")
        constant = _CONSTANT.match(text)
        match = _EXPRESSION.match(text)
        if constant:
            return cls(0, 1, int(constant["modifier"]))
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
    def mean_twice(self) -> int:
        """Twice the mean, an exact integer."""
        return self.count * (self.sides + 1) + 2 * self.modifier

    def distribution(self) -> dict[int, Fraction]:
        """The exact law of the total: value -> probability, by convolving the dice."""
        law = {self.modifier: Fraction(1)}
        for _ in range(self.count):
            step: dict[int, Fraction] = {}
            for value, p in law.items():
                for face in range(1, self.sides + 1):
                    step[value + face] = step.get(value + face, Fraction(0)) + p / self.sides
            law = step
        return law

    def __str__(self) -> str:
        if self.count == 0:
            return str(self.modifier)
        tail = f"{self.modifier:+d}" if self.modifier else ""
        return f"{self.count}d{self.sides}{tail}"
