"""Ratings: Glicko-2 for one player, and a race's standings as pairwise results.

:mod:`protocol.rating.glicko2` is Glickman's system as his paper states it, with the time
between a player's rated races passed in (no clock here). :mod:`protocol.rating.race`
orders a race's standings (score, then how each racer ended, then time) and turns a
finished race of 2 to 8 racers into each racer's results against the others, rating them
all at once. ``docs/decisions/0009-ratings.md`` and ``0012-standings-reward-playing-on.md``
explain the choices.
"""

from .glicko2 import (
    DEFAULT_DEVIATION,
    DEFAULT_RATING,
    DEFAULT_VOLATILITY,
    PROVISIONAL_DEVIATION,
    TAU,
    Rating,
    Result,
    age,
    rate,
)
from .race import ABANDONED, Ending, Placing, ending_of, pair_key, pairwise_results, rate_race, standing_key

__all__ = [
    "ABANDONED",
    "DEFAULT_DEVIATION",
    "DEFAULT_RATING",
    "DEFAULT_VOLATILITY",
    "PROVISIONAL_DEVIATION",
    "TAU",
    "Ending",
    "Placing",
    "Rating",
    "Result",
    "age",
    "ending_of",
    "pair_key",
    "pairwise_results",
    "rate",
    "rate_race",
    "standing_key",
]
