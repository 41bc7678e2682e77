"""The messages of a session and a race: hello, rooms, quick match, racing and resume.

Public through :mod:`protocol.wire.message`, which registers every message.
"""

from __future__ import annotations

import itertools
from typing import Annotated, Any, Union

import msgspec
from msgspec import Meta

from ..game.move import Move
from .base import Message, Reply, Request
from .error import ErrorCode
from .fields import (
    MAX_BAN_REASON,
    MAX_LIST,
    MAX_NAME,
    MAX_PLAYERS,
    MAX_RACERS,
    MAX_RETRY_AFTER_MS,
    Count,
    Date,
    DealNumber,
    Epoch,
    GameMode,
    Hex64,
    Id,
    Name,
    RacerStatus,
    Rating,
    RoomCode,
    RoomCodeIn,
    Salt,
    Token,
    TypeName,
    Variant,
    Version,
    _bad,
    _check_name,
    _kept,
)
from .records import Options, Racer, RacerProgress, RoomPlayer, Standing, WireMove

# ---------------------------------------------------------------- session


class Hello(Request, tag="hello", frozen=True, kw_only=True):
    """Open a session: a display name, and the secret token of an earlier session to resume it."""

    name: Annotated[str, Meta(max_length=4 * MAX_NAME)]
    token: Token | None = None
    client: Annotated[str, Meta(max_length=64)] | None = None

    def __post_init__(self) -> None:
        name = _check_name(self.name, "name")
        if name is not self.name:
            msgspec.structs.force_setattr(self, "name", name)


class Welcome(Reply, tag="welcome", frozen=True, kw_only=True):
    """Answer hello: the player's id, secret token, name, protocol version, clock and live games."""

    player: Id
    token: Token
    name: Name
    protocol: Annotated[int, Meta(ge=1, le=1000)] = _kept(1)
    now: Epoch
    games: Annotated[tuple[Id, ...], Meta(max_length=16)] = _kept(())
    username: Annotated[str, Meta(min_length=1, max_length=64)] | None = None
    """The account's username; absent for a guest."""
    session: Id | None = None
    """The id of the session the token belongs to (as ``sessions`` lists it)."""
    banned: Annotated[str, Meta(max_length=MAX_BAN_REASON)] | None = None
    """The reason the player is banned from ranked play; absent when they are not."""


class Ping(Request, tag="ping", frozen=True, kw_only=True):
    """Ask for a pong (keep-alive and round-trip time)."""


class Pong(Reply, tag="pong", frozen=True, kw_only=True):
    """Answer ping with the server's clock."""

    now: Epoch


class Ok(Reply, tag="ok", frozen=True, kw_only=True):
    """Acknowledge a request that has no other answer; ``to`` names the request's type."""

    to: TypeName


class Error(Reply, tag="error", frozen=True, kw_only=True):
    """Report a failure: a stable code, a sentence for people, and the offending field if any."""

    code: ErrorCode
    message: Annotated[str, Meta(max_length=512)]
    retry_after_ms: Annotated[int, Meta(ge=0, le=MAX_RETRY_AFTER_MS)] | None = None
    """Present when the same request may be sent again after this many milliseconds
    (the server's storage is passing through an outage)."""
    field: Annotated[str, Meta(max_length=64)] | None = None


# ---------------------------------------------------------------- rooms


class RoomCreate(Request, tag="room_create", frozen=True, kw_only=True):
    """Create a room to race friends; the creator becomes its host."""

    variant: Variant
    max_players: Annotated[int, Meta(ge=2, le=MAX_PLAYERS)] = _kept(2)
    options: Options = msgspec.field(default_factory=Options)


class RoomJoin(Request, tag="room_join", frozen=True, kw_only=True):
    """Join a room by its code."""

    room: RoomCodeIn

    def __post_init__(self) -> None:
        if not self.room.isupper():
            msgspec.structs.force_setattr(self, "room", self.room.upper())


class Ready(Request, tag="ready", frozen=True, kw_only=True):
    """Say whether this player is ready to start."""

    ready: bool


class RoomLeave(Request, tag="room_leave", frozen=True, kw_only=True):
    """Leave the room (a leaving host hands the room to the next player)."""


class RoomStart(Request, tag="room_start", frozen=True, kw_only=True):
    """Start the room's race (host only, every player ready, at least two players)."""


class RoomState(Reply, tag="room", frozen=True, kw_only=True):
    """Tell the room's state: code, variant, options, host and players (sent on every change)."""

    room: RoomCode
    variant: Variant
    max_players: Annotated[int, Meta(ge=2, le=MAX_PLAYERS)]
    options: Options
    host: Id
    players: Annotated[tuple[RoomPlayer, ...], Meta(max_length=MAX_PLAYERS)]


class Countdown(Reply, tag="countdown", frozen=True, kw_only=True):
    """Announce that the room's race starts in ``seconds``, at server time ``start``."""

    room: RoomCode
    seconds: Annotated[int, Meta(ge=0, le=60)]
    start: Epoch


class Rematch(Request, tag="rematch", frozen=True, kw_only=True):
    """Ask to race the same players again after a race between players ended."""

    game: Id


class RematchOffered(Reply, tag="rematch_offered", frozen=True, kw_only=True):
    """Tell a racer that another racer of ``game`` opened ``room`` to race them again."""

    game: Id
    room: RoomCode
    player: Id
    name: Name


# ---------------------------------------------------------------- quick match


class QueueJoin(Request, tag="queue_join", frozen=True, kw_only=True):
    """Enter the quick-match queue for a variant."""

    variant: Variant
    rated: bool = _kept(True)
    """A rated match pairs players of close ratings; ``false`` pairs whoever waits longest."""


class Queued(Reply, tag="queued", frozen=True, kw_only=True):
    """Confirm the player waits in the queue; ``waiting`` counts the players waiting."""

    variant: Variant
    waiting: Count
    rated: bool = _kept(False)
    rating: Rating | None = None
    """The player's rating in the variant, which the rated queue matches on."""


class QueueCancel(Request, tag="queue_cancel", frozen=True, kw_only=True):
    """Leave the quick-match queue."""


class MatchFound(Reply, tag="match_found", frozen=True, kw_only=True):
    """Announce the opponents found; the race starts at server time ``start``."""

    variant: Variant
    players: Annotated[tuple[Racer, ...], Meta(max_length=MAX_PLAYERS)]
    start: Epoch


class QueueTimeout(Reply, tag="queue_timeout", frozen=True, kw_only=True):
    """Tell the player nobody was found after ``waited`` seconds; they are out of the queue."""

    variant: Variant
    waited: Count


# ---------------------------------------------------------------- racing


class RaceStarted(Reply, tag="race_started", frozen=True, kw_only=True):
    """Start a race (event ``v`` 1): the deal's commitment, the player's own view, the roster."""

    game: Id
    v: Version
    variant: Variant
    options: Options
    start: Epoch
    commitment: Hex64
    view: dict[str, Any]
    roster: Annotated[tuple[Racer, ...], Meta(max_length=MAX_RACERS)]
    room: RoomCode | None = None
    daily: Date | None = None
    mode: GameMode = _kept("race")


class PlayMove(Request, tag="move", frozen=True, kw_only=True):
    """Play a move in a game, based on the last version the client saw."""

    game: Id
    v: Version
    move: WireMove

    @property
    def engine_move(self) -> Move:
        """Return the move in the engine's terms."""
        return self.move.to_move()


class DealReserve(Request, tag="deal", frozen=True, kw_only=True):
    """Deal the reserve stock onto the columns."""

    game: Id
    v: Version


class Undo(Request, tag="undo", frozen=True, kw_only=True):
    """Take back the player's last move (when the race allows undo)."""

    game: Id
    v: Version


class HintRequest(Request, tag="hint", frozen=True, kw_only=True):
    """Ask for hints on the current board (when the race allows hints)."""

    game: Id
    v: Version


class Resign(Request, tag="resign", frozen=True, kw_only=True):
    """Give up the race."""

    game: Id
    v: Version


class Accepted(Reply, tag="accepted", frozen=True, kw_only=True):
    """Tell the player their move, deal, undo or resignation took effect: new view, version, summary."""

    game: Id
    v: Version
    view: dict[str, Any]
    summary: dict[str, Any]
    status: RacerStatus = _kept("playing")


class Hints(Reply, tag="hints", frozen=True, kw_only=True):
    """Answer hint: the suggested moves, best first, for the board at version ``v``."""

    game: Id
    v: Version
    moves: Annotated[tuple[dict[str, Any], ...], Meta(max_length=64)]


class Progress(Reply, tag="progress", frozen=True, kw_only=True):
    """Tell a racer another racer's progress: summary and status, never the board."""

    game: Id
    v: Version
    player: Id
    summary: dict[str, Any]
    status: RacerStatus


class RaceEnded(Reply, tag="race_ended", frozen=True, kw_only=True):
    """End the race: the standings, and the deal number and salt that prove the commitment."""

    game: Id
    v: Version
    standings: Annotated[tuple[Standing, ...], Meta(max_length=MAX_RACERS)]
    number: DealNumber | None = None
    salt: Salt | None = None
    """Absent for a daily game until its day is over: everyone plays that deal all day."""


# ---------------------------------------------------------------- resume


class Resume(Request, tag="resume", frozen=True, kw_only=True):
    """Rejoin a game after a reconnect, giving the last version seen (0: none)."""

    game: Id
    v: Version


RacerEvent = Union["RaceStarted", "Accepted", "Progress", "RaceEnded"]
"""The events of a racer's stream (what a batch holds)."""


def _check_event_run(game: str, v: int, events: tuple[Message, ...]) -> None:
    """Raise unless ``events`` are consecutive versions of ``game`` ending at ``v``."""
    versions = [getattr(e, "v", 0) for e in events]
    if any(b != a + 1 for a, b in itertools.pairwise(versions)):
        raise _bad("events", "must have consecutive versions")
    if versions and versions[-1] != v:
        raise _bad("v", "must be the version of the last event")
    if any(getattr(e, "game", game) != game for e in events):
        raise _bad("events", "must all belong to the batch's game")


class Batch(Reply, tag="batch", frozen=True, kw_only=True):
    """Answer resume with exactly the events missed, oldest first; ``v`` is the latest version."""

    game: Id
    v: Version
    events: Annotated[tuple[RacerEvent, ...], Meta(max_length=MAX_LIST)]

    def __post_init__(self) -> None:
        _check_event_run(self.game, self.v, self.events)


class Snapshot(Reply, tag="snapshot", frozen=True, kw_only=True):
    """Answer resume with the whole state of the player's race at version ``v``."""

    game: Id
    v: Version
    variant: Variant
    options: Options
    start: Epoch
    now: Epoch
    commitment: Hex64
    roster: Annotated[tuple[Racer, ...], Meta(max_length=MAX_RACERS)]
    view: dict[str, Any]
    summary: dict[str, Any]
    status: RacerStatus
    racers: Annotated[tuple[RacerProgress, ...], Meta(max_length=MAX_RACERS)]
    mode: GameMode = _kept("race")
    daily: Date | None = None
