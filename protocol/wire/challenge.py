"""Challenges: a deal and the recorded runs (ghosts) of the players who raced it, for friends
to race later, each against the ghosts at the pace they were recorded.

Public through :mod:`protocol.wire.message`, which registers every message.
"""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from .base import Record, Reply, Request
from .fields import (
    MAX_PLAYERS,
    MAX_RACERS,
    MAX_VERSION,
    Count,
    Epoch,
    Id,
    Name,
    RacerStatus,
    ReserveRuleName,
    RoomCode,
    RoomCodeIn,
    Score,
    Variant,
    _kept,
)
from .records import Options

MAX_GHOSTS = MAX_PLAYERS
"""Most recorded runs one challenge carries (a race of 8)."""
MAX_CHALLENGES = 50
"""Most challenges a player's list shows (the newest)."""
MAX_TAKERS = 200
"""Most takers a challenge board shows (the best)."""


class Ghost(Record, frozen=True, kw_only=True):
    """One recorded run of a challenge: who played it and how it ended."""

    player: Id
    """The id the ghost races under in a challenge game (``ghost-1`` to ``ghost-8``)."""
    name: Name
    score: Score
    elapsed: Count
    status: RacerStatus
    moves: Count


class ChallengeEntry(Record, frozen=True, kw_only=True):
    """One taker's result on a challenge's board."""

    rank: Annotated[int, Meta(ge=1, le=MAX_VERSION)]
    player: Id
    name: Name
    score: Score
    elapsed: Count
    status: RacerStatus
    place: Annotated[int, Meta(ge=1, le=MAX_RACERS)]
    """Where the taker placed in their race against the ghosts (1: ahead of every ghost)."""
    game: Id
    finished: Epoch


class ChallengeCreate(Request, tag="challenge_create", frozen=True, kw_only=True):
    """Turn one of the player's finished games into a challenge (a challenge game: pass it on)."""

    game: Id


class ChallengeNew(Request, tag="challenge_new", frozen=True, kw_only=True):
    """Play a fresh deal first: its run becomes the first ghost of a challenge when it ends."""

    variant: Variant = _kept("scorpion")
    reserve_rule: ReserveRuleName = _kept("any-time")
    undo: bool = _kept(True)
    hints: bool = _kept(True)


class ChallengeTake(Request, tag="challenge_take", frozen=True, kw_only=True):
    """Race a challenge's deal against its ghosts."""

    code: RoomCodeIn


class ChallengeBoard(Request, tag="challenge_board", frozen=True, kw_only=True):
    """Ask for a challenge's ghosts and its takers' results."""

    code: RoomCodeIn


class ChallengeList(Request, tag="challenge_list", frozen=True, kw_only=True):
    """Ask for the player's own challenges, each with its takers' results."""


class DailyGhost(Request, tag="daily_ghost", frozen=True, kw_only=True):
    """Practise today's daily deal against a board player's run, once one's own attempt is over."""

    variant: Variant = _kept("scorpion")
    player: Id | None = None


class Challenge(Reply, tag="challenge", frozen=True, kw_only=True):
    """Describe a challenge: its code, rules, ghosts and expiry."""

    code: RoomCode
    variant: Variant
    options: Options
    owner: Id
    ghosts: Annotated[tuple[Ghost, ...], Meta(min_length=1, max_length=MAX_GHOSTS)]
    expires: Epoch


class ChallengeBoardInfo(Reply, tag="challenge_board_info", frozen=True, kw_only=True):
    """A challenge's ghosts and its takers' results, best first."""

    code: RoomCode
    variant: Variant
    owner: Id
    ghosts: Annotated[tuple[Ghost, ...], Meta(min_length=1, max_length=MAX_GHOSTS)]
    entries: Annotated[tuple[ChallengeEntry, ...], Meta(max_length=MAX_TAKERS)]
    expires: Epoch


class ChallengeListInfo(Reply, tag="challenge_list_info", frozen=True, kw_only=True):
    """The player's challenges still kept, newest first, each with its board."""

    challenges: Annotated[tuple[ChallengeBoardInfo, ...], Meta(max_length=MAX_CHALLENGES)]


class ChallengeTaken(Reply, tag="challenge_taken", frozen=True, kw_only=True):
    """Tell a challenge's creator that someone raced it, and how they did."""

    code: RoomCode
    entry: ChallengeEntry
