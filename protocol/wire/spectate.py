"""The messages of spectating and replays: live games, watching, a finished game's log.

Public through :mod:`protocol.wire.message`, which registers every message.
"""

from __future__ import annotations

from typing import Annotated, Any, Union

import msgspec
from msgspec import Meta

from .base import Reply, Request
from .fields import (
    MAX_LIST,
    MAX_RACERS,
    Count,
    DealNumber,
    Epoch,
    Id,
    Name,
    RacerStatus,
    RoomCode,
    RoomCodeIn,
    Salt,
    Variant,
    Verdict,
    Version,
    _bad,
    _kept,
)
from .race import RaceEnded, _check_event_run
from .records import GameInfo, Options, PlayerLog, RacerBoard, Standing

SpectatorEvent = Union["SpectateEvent", "RaceEnded"]
"""The events of a spectator's stream (what a spectate_batch holds)."""


# ---------------------------------------------------------------- spectating


class GamesList(Request, tag="games_list", frozen=True, kw_only=True):
    """List live games (of one variant, or all); with ``subscribe``, receive games updates after."""

    variant: Variant | None = None
    subscribe: bool = _kept(False)


class Games(Reply, tag="games", frozen=True, kw_only=True):
    """Answer games_list with the live games that may be watched."""

    games: Annotated[tuple[GameInfo, ...], Meta(max_length=MAX_LIST)]


class GamesUpdate(Reply, tag="games_update", frozen=True, kw_only=True):
    """Tell a subscriber which live games were added (or changed) and which were removed."""

    added: Annotated[tuple[GameInfo, ...], Meta(max_length=MAX_LIST)] = _kept(())
    removed: Annotated[tuple[Id, ...], Meta(max_length=MAX_LIST)] = _kept(())


class Watch(Request, tag="watch", frozen=True, kw_only=True):
    """Watch a live game, named by its game id or by its room's code (exactly one)."""

    # A spectator coming back after a dropped connection names the game and ``v``, the last
    # version it saw: it then gets the events it missed (``spectate_batch``) when they are few.
    game: Id | None = None
    room: RoomCodeIn | None = None
    v: Version | None = None

    def __post_init__(self) -> None:
        if self.room is not None and not self.room.isupper():
            msgspec.structs.force_setattr(self, "room", self.room.upper())
        if (self.game is None) == (self.room is None):
            raise _bad("game", "or 'room' must be given, and not both")
        if self.v is not None and self.game is None:
            raise _bad("v", "needs 'game': a spectator resumes a game by its id")


class Unwatch(Request, tag="unwatch", frozen=True, kw_only=True):
    """Stop watching a game."""

    game: Id


class SpectatorSnapshot(Reply, tag="spectate", frozen=True, kw_only=True):
    """Answer watch with every racer's board as spectators see it, the clock and the audience."""

    game: Id
    v: Version
    variant: Variant
    options: Options
    start: Epoch
    now: Epoch
    spectators: Count
    racers: Annotated[tuple[RacerBoard, ...], Meta(max_length=MAX_RACERS)]
    room: RoomCode | None = None


class SpectateEvent(Reply, tag="spectate_event", frozen=True, kw_only=True):
    """Tell spectators one racer's board changed (delayed by the race's spectator delay)."""

    game: Id
    v: Version
    player: Id
    view: dict[str, Any]
    summary: dict[str, Any]
    status: RacerStatus


class SpectateBatch(Reply, tag="spectate_batch", frozen=True, kw_only=True):
    """Answer a spectator's watch with ``v``: exactly the events missed, oldest first."""

    # ``v`` is the last event's version (or the version the spectator gave, when it missed
    # nothing); ``spectators`` is the audience now.
    game: Id
    v: Version
    spectators: Count
    events: Annotated[tuple[SpectatorEvent, ...], Meta(max_length=MAX_LIST)]

    def __post_init__(self) -> None:
        _check_event_run(self.game, self.v, self.events)


class Spectators(Reply, tag="spectators", frozen=True, kw_only=True):
    """Tell everyone in a game how many spectators watch it now."""

    game: Id
    count: Count


class Replay(Request, tag="replay", frozen=True, kw_only=True):
    """Ask for the move log of a finished game."""

    game: Id


class ReplayLog(Reply, tag="replay_log", frozen=True, kw_only=True):
    """Answer replay: the deal (number, salt), options and every racer's moves with their times."""

    game: Id
    variant: Variant
    options: Options
    start: Epoch
    number: DealNumber
    salt: Salt
    logs: Annotated[tuple[PlayerLog, ...], Meta(max_length=MAX_RACERS)]
    standings: Annotated[tuple[Standing, ...], Meta(max_length=MAX_RACERS)] = _kept(())


class ReplayPositions(Request, tag="replay_positions", frozen=True, kw_only=True):
    """Ask for every position one racer of a finished game went through, to step through it."""

    game: Id
    player: Id


class ReplayPositionsInfo(Reply, tag="replay_positions_info", frozen=True, kw_only=True):
    """Answer replay_positions: the racer's views from the deal on, one after each move."""

    game: Id
    player: Id
    name: Name
    variant: Variant
    views: Annotated[tuple[dict[str, Any], ...], Meta(max_length=MAX_LIST + 1)]
    """``views[0]`` is the deal, ``views[i + 1]`` the board after ``moves[i]``, as the racer saw it."""
    moves: Annotated[tuple[dict[str, Any], ...], Meta(max_length=MAX_LIST)]
    """The racer's moves in the order played; an undo is ``{"undo": true}``."""
    times: Annotated[tuple[Epoch, ...], Meta(max_length=MAX_LIST)]
    verdict: Verdict | None = None
    """The post-game analysis's verdict on the deal, once it is computed."""
    slipped: Count | None = None
    """The index in ``moves`` of the move after which the deal could no longer be won."""

    def __post_init__(self) -> None:
        if len(self.views) != len(self.moves) + 1 or len(self.times) != len(self.moves):
            raise _bad("views", "must hold one view more than there are moves, and one time per move")
