"""Exact odds of whole fights: ``combatsim.odds.fight_odds(scenario)`` (docs/fight-odds.md).

The odds of one attack are each ruleset's (``combatsim.exp.odds``, ``combatsim.tss.odds``,
``combatsim.d100.odds``).
"""

from combatsim.fight_odds import DEFAULT_MAX_STATES, FightOdds, TooManyStates, fight_odds
from combatsim.fight_odds.curve import fight_curve

__all__ = ["DEFAULT_MAX_STATES", "FightOdds", "TooManyStates", "fight_curve", "fight_odds"]
