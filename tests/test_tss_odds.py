"""``combatsim odds tss``: exact odds through the CLI (the enumeration itself is checked against
Monte Carlo and icepool in test_tss_stats.py)."""

from __future__ import annotations

import json
from fractions import Fraction

import icepool

from combatsim.cli import main as cli_main


def test_cli_odds_alex(capsys):
    args = ["odds", "tss", "--skill", "16/8/4", "--steps", "-1", "--damage", "d4w/d4+2w/d4-1m",
            "--weapon-quality", "good", "--armour", "d6", "--armour-quality", "ordinary", "--json"]
    assert cli_main(args) == 0
    record = json.loads(capsys.readouterr().out)
    tiers = {key: Fraction(value) for key, value in record["probabilities"].items()}
    assert sum(tiers.values()) == 1
    assert tiers["critical_failure"] == Fraction(1, 20)  # a control die of 20, whatever the total
    # Amazing: control 1..19 minus a d4 at or under 4 (icepool, independently)
    total = icepool.d(19) - icepool.d4
    assert tiers["amazing"] == Fraction(19, 20) * total.probability("<=", 4)
    assert set(record["means"]) == {"stun", "wound", "mortal"}


def test_cli_odds_errors(capsys):
    assert cli_main(["odds", "tss", "--skill", "4/8/16", "--damage", "d4w/d4+2w/d4-1m"]) == 2
    assert "skill: score must be non-increasing" in capsys.readouterr().err
    assert cli_main(["odds", "tss", "--skill", "16", "--damage", "d4q/d4w/d4m"]) == 2
    assert "damage" in capsys.readouterr().err
