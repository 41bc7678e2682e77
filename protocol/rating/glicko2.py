"""Glicko-2 (Mark Glickman, "Example of the Glicko-2 system", 2012), step by step.

A :class:`Rating` is the public rating ``r``, its deviation ``RD`` (how unsure the system
is: 350 for a newcomer) and the volatility ``sigma`` (how erratic the player's results
are). :func:`rate` applies one rating period's results; :func:`age` lets a deviation grow
over the periods a player sat out. The step numbers in the comments are the paper's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

__all__ = [
    "DEFAULT_DEVIATION",
    "DEFAULT_RATING",
    "DEFAULT_VOLATILITY",
    "PROVISIONAL_DEVIATION",
    "TAU",
    "Rating",
    "Result",
    "age",
    "rate",
]

DEFAULT_RATING = 1500.0
DEFAULT_DEVIATION = 350.0
DEFAULT_VOLATILITY = 0.06
TAU = 0.5
"""The system constant: how much volatility may change in one period (the paper: 0.3-1.2)."""
PROVISIONAL_DEVIATION = 110.0
"""Above this deviation a rating is provisional: too few recent games to trust it."""

_SCALE = 173.7178  # Glicko's rating points per Glicko-2 unit (400 / ln 10)
_EPSILON = 1e-6  # convergence tolerance of step 5's iteration


@dataclass(frozen=True, slots=True)
class Rating:
    """Hold one player's Glicko-2 rating in a variant, on the Glicko scale (1500, 350)."""

    rating: float = DEFAULT_RATING
    deviation: float = DEFAULT_DEVIATION
    volatility: float = DEFAULT_VOLATILITY

    @property
    def is_provisional(self) -> bool:
        """Tell whether the deviation is still too high for the rating to be trusted."""
        return self.deviation > PROVISIONAL_DEVIATION

    def __post_init__(self) -> None:
        if not (math.isfinite(self.rating) and 0 < self.deviation <= DEFAULT_DEVIATION):
            raise ValueError(f"not a rating: {self.rating}, deviation {self.deviation}")
        if not 0 < self.volatility < 1:
            raise ValueError(f"not a volatility: {self.volatility}")


@dataclass(frozen=True, slots=True)
class Result:
    """Hold one game of a period: the opponent's rating before it, and the score (1, 0.5 or 0)."""

    opponent: Rating
    score: float


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _expected(mu: float, mu_j: float, phi_j: float) -> float:
    return 1.0 / (1.0 + math.exp(-_g(phi_j) * (mu - mu_j)))


def age(rating: Rating, periods: float) -> Rating:
    """Return ``rating`` after ``periods`` rating periods without a game (step 6 alone).

    The deviation grows as ``sqrt(phi^2 + periods * sigma^2)``, never past a newcomer's;
    ``periods`` may be fractional (the time since the last rated game, in periods).
    """
    if periods <= 0:
        return rating
    phi = rating.deviation / _SCALE
    grown = math.sqrt(phi * phi + periods * rating.volatility**2) * _SCALE
    return replace(rating, deviation=min(grown, DEFAULT_DEVIATION))


def rate(rating: Rating, results: Sequence[Result], tau: float = TAU) -> Rating:
    """Return the rating after one period with ``results`` (steps 2 to 8 of the paper).

    Every opponent is taken at their rating before the period, as the paper requires. A
    period without results only lets the deviation grow (step 6).
    """
    if not results:
        return age(rating, 1.0)
    # Step 2: to the Glicko-2 scale.
    mu = (rating.rating - DEFAULT_RATING) / _SCALE
    phi = rating.deviation / _SCALE
    sigma = rating.volatility
    # Steps 3 and 4: the estimated variance v and improvement delta.
    inverse_v = 0.0
    gain = 0.0
    for result in results:
        mu_j = (result.opponent.rating - DEFAULT_RATING) / _SCALE
        phi_j = result.opponent.deviation / _SCALE
        g_j = _g(phi_j)
        e_j = _expected(mu, mu_j, phi_j)
        inverse_v += g_j * g_j * e_j * (1.0 - e_j)
        gain += g_j * (result.score - e_j)
    v = 1.0 / inverse_v
    delta = v * gain
    # Step 5: the new volatility, by the Illinois algorithm.
    sigma = _volatility(delta, phi, v, sigma, tau)
    # Steps 6 and 7: the new deviation and rating.
    phi_star = math.sqrt(phi * phi + sigma * sigma)
    phi = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
    mu = mu + phi * phi * gain
    # Step 8: back to the Glicko scale.
    deviation = min(phi * _SCALE, DEFAULT_DEVIATION)
    return Rating(rating=mu * _SCALE + DEFAULT_RATING, deviation=deviation, volatility=sigma)


def _volatility(delta: float, phi: float, v: float, sigma: float, tau: float) -> float:
    a = math.log(sigma * sigma)
    delta2, phi2 = delta * delta, phi * phi

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta2 - phi2 - v - ex) / (2.0 * (phi2 + v + ex) ** 2) - (x - a) / (tau * tau)

    big_a = a
    if delta2 > phi2 + v:
        big_b = math.log(delta2 - phi2 - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > _EPSILON:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2.0)
