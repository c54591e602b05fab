"""The one dice-expression type."""

from __future__ import annotations

import pytest

from combatsim.dice import Dice


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3d10", Dice(3, 10, 0)),
        ("d4+2", Dice(1, 4, 2)),
        ("1d8-1", Dice(1, 8, -1)),
        ("D6", Dice(1, 6, 0)),
        (" 2d6 + 3 ", Dice(2, 6, 3)),
        ("7", Dice(0, 1, 7)),
        ("-2", Dice(0, 1, -2)),
    ],
)
def test_parse(text, expected):
    assert Dice.parse(text) == expected


@pytest.mark.parametrize("text", ["3d", "1d0", "d4x", "", "0d6", "d", "2d6+", "1.5d6", "d-4", "3d10d2", "++1"])
def test_malformed_expressions_name_the_field(text):
    with pytest.raises(ValueError, match="damage"):
        Dice.parse(text, field="damage")


def test_wrong_type():
    with pytest.raises(TypeError, match="damage must be a dice string"):
        Dice.parse(3, field="damage")


def test_limits():
    with pytest.raises(ValueError, match="sides must be in 1..1000000"):
        Dice.parse("1d1000001")
    with pytest.raises(ValueError, match="count must be in 0..1000"):
        Dice(1001, 6)


@pytest.mark.parametrize(("text", "low", "high", "mean_twice"), [("3d10", 3, 30, 33), ("d4+2", 3, 6, 9), ("1d8-1", 0, 7, 7)])
def test_range_and_mean(text, low, high, mean_twice):
    dice = Dice.parse(text)
    mean = sum(total * probability for total, probability in dice.distribution().items())
    assert (dice.minimum, dice.maximum, 2 * mean) == (low, high, mean_twice)
    assert Dice.parse(str(dice)) == dice
