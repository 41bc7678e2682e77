"""Ratings: Glicko-2 for one player, and a race's standings as pairwise results.

:mod:`protocol.rating.glicko2` is Glickman's system as his paper states it, with the time
between a player's rated races passed in (no clock here). :mod:`protocol.rating.race`
turns a finished race of 2 to 8 racers into each racer's results against the others and
rates them all at once. ``docs/decisions/0009-ratings.md`` explains the choices.
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
from .race import ABANDONED, Placing, pair_key, pairwise_results, rate_race

__all__ = [
    "ABANDONED",
    "DEFAULT_DEVIATION",
    "DEFAULT_RATING",
    "DEFAULT_VOLATILITY",
    "PROVISIONAL_DEVIATION",
    "TAU",
    "Placing",
    "Rating",
    "Result",
    "age",
    "pair_key",
    "pairwise_results",
    "rate",
    "rate_race",
]
