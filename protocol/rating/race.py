"""A finished race as rated games: every racer against every other, from the standings.

A race of n racers is, for each racer, one rating period of n - 1 games: a win against
each racer placed below, a loss against each placed above, a draw against one of the same
place. A racer who abandoned (resigned, or left and never came back) loses to everyone
who did not, whatever the scores. Each update uses the opponents' ratings from before the
race, so the order in which racers are rated changes nothing.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from .glicko2 import Rating, Result, rate

__all__ = ["ABANDONED", "Placing", "pair_key", "pairwise_results", "rate_race"]

ABANDONED = frozenset({"resigned", "left"})
"""Racer statuses that count as abandoning a rated race."""


@dataclass(frozen=True, slots=True)
class Placing:
    """Hold one racer's line of the final standings: place (1 is best) and status."""

    player: str
    rank: int
    status: str

    @property
    def abandoned(self) -> bool:
        """Tell whether the racer gave the race up (it then counts as a loss)."""
        return self.status in ABANDONED


def _score(mine: Placing, theirs: Placing) -> float:
    if mine.abandoned != theirs.abandoned:
        return 0.0 if mine.abandoned else 1.0
    if mine.rank == theirs.rank:
        return 0.5
    return 1.0 if mine.rank < theirs.rank else 0.0


def pair_key(a: str, b: str) -> tuple[str, str]:
    """Return the order-free key of two players (for pairs left unrated)."""
    return (a, b) if a <= b else (b, a)


def pairwise_results(
    placings: Sequence[Placing], unrated: Collection[tuple[str, str]] = ()
) -> dict[str, list[tuple[str, float]]]:
    """Return each racer's (opponent, score) games, leaving out the ``unrated`` pairs."""
    games: dict[str, list[tuple[str, float]]] = {p.player: [] for p in placings}
    for mine in placings:
        for theirs in placings:
            if theirs.player == mine.player or pair_key(mine.player, theirs.player) in unrated:
                continue
            games[mine.player].append((theirs.player, _score(mine, theirs)))
    return games


def rate_race(
    before: Mapping[str, Rating],
    placings: Sequence[Placing],
    unrated: Collection[tuple[str, str]] = (),
) -> dict[str, Rating]:
    """Return every racer's rating after the race, from ``before`` (already aged).

    A racer all of whose pairs are unrated keeps the rating unchanged.
    """
    if len({p.player for p in placings}) != len(placings) or len(placings) < 2:
        raise ValueError("a rated race needs two or more distinct racers")
    after: dict[str, Rating] = {}
    for player, games in pairwise_results(placings, unrated).items():
        results = [Result(opponent=before[other], score=score) for other, score in games]
        after[player] = rate(before[player], results) if results else before[player]
    return after
