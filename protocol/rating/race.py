"""A race's standings: their order, and the pairwise results a rated race is rated from.

The order (decision 12) rewards playing on: score first; then how the racer ended
(:class:`Ending`: finished the deal, ahead of played on until stuck or the time limit,
ahead of resigned or left); then, among those who finished, the shorter time, and among
those who resigned or left, the longer stay. Racers equal on all of these share a place.

A race of n racers is, for each racer, one rating period of n - 1 games: a win against
each racer placed below, a loss against each placed above, and a draw against one with
the same score and the same kind of ending, however the time then placed them. Each
update uses the opponents' ratings from before the race, so the order in which racers
are rated changes nothing.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from .glicko2 import Rating, Result, rate

__all__ = [
    "ABANDONED",
    "Ending",
    "Placing",
    "ending_of",
    "pair_key",
    "pairwise_results",
    "rate_race",
    "standing_key",
]

ABANDONED = frozenset({"resigned", "left"})
"""Racer statuses that count as abandoning a race."""


class Ending(enum.IntEnum):
    """How a racer's race ended, best first: the second key of the standings."""

    FINISHED = 0
    """Won the deal."""
    PLAYED_OUT = 1
    """Played on until no move was left (``stuck``) or the time limit (still ``playing``)."""
    ABANDONED = 2
    """Resigned, or left and never came back."""


_ENDINGS: Mapping[str, Ending] = {
    "finished": Ending.FINISHED,
    "stuck": Ending.PLAYED_OUT,
    "playing": Ending.PLAYED_OUT,
    "resigned": Ending.ABANDONED,
    "left": Ending.ABANDONED,
}


def ending_of(status: str) -> Ending:
    """Return the kind of ending of a racer's final status (``ValueError`` if not a status)."""
    try:
        return _ENDINGS[status]
    except KeyError:
        raise ValueError(f"not a racer status: {status!r}") from None


def standing_key(score: int, status: str, elapsed: int) -> tuple[int, int, int]:
    """Return a racer's place in the standings as a sort key (lower is better).

    Score (high first), then the kind of ending, then the time: the shorter among those
    who finished, the longer stay among those who resigned or left; among those who were
    stuck or still playing at the time limit the time does not count. Equal keys share a
    place.
    """
    ending = ending_of(status)
    if ending is Ending.FINISHED:
        time = elapsed
    elif ending is Ending.ABANDONED:
        time = -elapsed
    else:
        time = 0
    return (-score, int(ending), time)


@dataclass(frozen=True, slots=True)
class Placing:
    """Hold one racer's line of the final standings: place (1 is best), status and score."""

    player: str
    rank: int
    status: str
    score: int

    @property
    def abandoned(self) -> bool:
        """Tell whether the racer gave the race up (resigned or left)."""
        return self.status in ABANDONED

    @property
    def ending(self) -> Ending:
        """Return how the racer's race ended."""
        return ending_of(self.status)


def _score(mine: Placing, theirs: Placing) -> float:
    if (mine.score, mine.ending) == (theirs.score, theirs.ending) or mine.rank == theirs.rank:
        return 0.5
    return 1.0 if mine.rank < theirs.rank else 0.0


def pair_key(a: str, b: str) -> tuple[str, str]:
    """Return the order-free key of two players (for pairs left unrated)."""
    return (a, b) if a <= b else (b, a)


def pairwise_results(
    placings: Sequence[Placing], unrated: Collection[tuple[str, str]] = ()
) -> dict[str, list[tuple[str, float]]]:
    """Return each racer's (opponent, score) games, leaving out the ``unrated`` pairs.

    The better-placed racer of a pair wins (1, and 0 to the other), except that two racers
    with the same score and the same kind of ending draw (0.5 each).
    """
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
