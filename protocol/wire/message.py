"""Every message of the wire contract, declared once as a typed msgspec ``Struct``.

A message is a frozen ``Struct`` whose fields carry their constraints in their types
(``Annotated[int, Meta(ge=0)]``, ``Literal``, patterns, lengths); msgspec checks them in C
while it decodes a frame (:mod:`protocol.wire.codec`), so a server never holds an unchecked
message from a client. Building a message in Python checks nothing beyond the few rules
that span fields (``__post_init__``): what the server builds from its own state is trusted,
and every integration test's client decodes, and so checks, every frame it receives.

On the wire a message is a map with a ``type`` (the class's ``TYPE``, msgspec's tag) and its
fields under the names listed in docs/protocol.md; :meth:`Record.to_dict` and
:func:`from_dict` convert. ``None`` optional fields are left out of the map; a ``null`` on the
wire means "absent" (:func:`from_dict` drops it before conversion).
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Iterator
from typing import Annotated, Any, ClassVar, Final, Self, TypeVar, Union, get_args, get_origin

import msgspec
from msgspec import Meta

from ..game.card import card_from_text, card_text
from ..game.move import CELL_BASE, DEAL, Move
from ..game.variant import VARIANTS, ReserveRule
from .error import ErrorCode, ProtocolError
from .error import Ref as Ref

__all__ = [
    "CLIENT_TYPES",
    "EVENT_TYPES",
    "GAME_ID_PATTERN",
    "GAME_ID_TEXT",
    "GAME_MODES",
    "MAX_EPOCH_MS",
    "MAX_NAME",
    "MAX_REF",
    "MAX_REF_TEXT",
    "MAX_RETRY_AFTER_MS",
    "MAX_VERSION",
    "MESSAGES",
    "RACER_STATUSES",
    "RESERVED_TYPES",
    "ROOM_ALPHABET",
    "ROOM_CODE_LENGTH",
    "SERVER_TYPES",
    "SPECTATOR_EVENT_TYPES",
    "VERDICTS",
    "Accepted",
    "Analysis",
    "Analyze",
    "AroundMe",
    "Batch",
    "Countdown",
    "Daily",
    "DailyInfo",
    "DailyStart",
    "DealReserve",
    "Error",
    "ForgetMe",
    "Forgotten",
    "GameInfo",
    "Games",
    "GamesList",
    "GamesUpdate",
    "Hello",
    "HintRequest",
    "Hints",
    "Leaderboard",
    "LeaderboardEntry",
    "LeaderboardPage",
    "MatchFound",
    "Message",
    "Ok",
    "Options",
    "Ping",
    "PlayMove",
    "PlayerLog",
    "Pong",
    "Profile",
    "ProfileRequest",
    "Progress",
    "QueueCancel",
    "QueueJoin",
    "QueueTimeout",
    "Queued",
    "RaceEnded",
    "RaceStarted",
    "Racer",
    "RacerBoard",
    "RacerEvent",
    "RacerProgress",
    "RatingBoard",
    "RatingChange",
    "RatingDelta",
    "RatingEntry",
    "RatingInfo",
    "RatingPage",
    "Ready",
    "RecentGame",
    "Record",
    "Rematch",
    "RematchOffered",
    "Replay",
    "ReplayLog",
    "ReplayPositions",
    "ReplayPositionsInfo",
    "Reply",
    "Request",
    "Resign",
    "Resume",
    "RoomCreate",
    "RoomJoin",
    "RoomLeave",
    "RoomPlayer",
    "RoomStart",
    "RoomState",
    "SavedGame",
    "SavedGames",
    "SavedGamesList",
    "Snapshot",
    "SoloNew",
    "SoloReplay",
    "SoloResume",
    "SpectateBatch",
    "SpectateEvent",
    "SpectatorEvent",
    "SpectatorSnapshot",
    "Spectators",
    "Standing",
    "Stats",
    "StatsInfo",
    "Undo",
    "Unwatch",
    "VariantStats",
    "Watch",
    "Welcome",
    "Winnable",
    "WinnableInfo",
    "WireMove",
    "convert",
    "deal_commitment",
    "error_message",
    "from_dict",
]

MAX_VERSION: Final = 2**31 - 1
"""Largest event version (versions count from 1; a request's ``v`` of 0 means "seen nothing")."""
MAX_REF: Final = 2**53 - 1
"""Largest absolute value of an integer ``ref`` (exact in every JSON implementation)."""
MAX_REF_TEXT: Final = 64
"""Longest text ``ref``."""
MAX_EPOCH_MS: Final = 2**53 - 1
"""Largest timestamp (milliseconds since the Unix epoch, server clock)."""
MAX_RETRY_AFTER_MS: Final = 60_000
"""Longest wait an ``error`` may ask for before the same request is sent again."""
MAX_NAME: Final = 24
"""Longest display name, after stripping surrounding spaces."""
ROOM_ALPHABET: Final = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
"""The letters of room codes: no 0/O, 1/I/L to confuse."""
ROOM_CODE_LENGTH: Final = 6
"""Length of a room code."""
MAX_PLAYERS: Final = 8
"""Most racers in one race."""
GAME_ID_PATTERN: Final = r"[A-Za-z0-9_-]{1,32}"
"""What a game id (and every other id on the wire) looks like, as a regular expression."""
GAME_ID_TEXT: Final = "1 to 32 letters, digits, '-' or '_'"
"""The same, in words."""
MAX_COLUMNS: Final = max(v.columns for v in VARIANTS.values())
"""Most tableau columns of any variant (moves' ``from``/``to`` are at most this)."""
MAX_CELLS: Final = max(v.cells for v in VARIANTS.values())
"""Most open reserve cells of any variant (``R1``, ``R2``)."""
MAX_LIST: Final = 1000
"""Longest list a server message carries (games, events of a batch, moves of a replay)."""
GAME_MODES: Final = ("race", "solo", "daily", "practice")
"""What a game is: a race of 2-8, a solo game, a ranked daily attempt, or unranked daily practice."""
VERDICTS: Final = ("winnable", "unwinnable", "unknown")
"""What the solver says of a deal or position: a line exists, none does, or undecided."""
RACER_STATUSES: Final = ("playing", "finished", "stuck", "resigned", "left")
"""Where a racer stands: still playing, won the deal, no move left, gave up, disconnected for good."""


def _whole(regex: str) -> str:
    r"""Return ``regex`` anchored at both ends (msgspec searches; ``\Z`` refuses a final newline)."""
    return rf"^(?:{regex})\Z"


# ---------------------------------------------------------------- field types
# Each names one kind of value of the contract, with its limits; PATTERN_WORDS says each
# pattern in words for the error a client gets.

Id = Annotated[str, Meta(pattern=_whole(GAME_ID_PATTERN))]
Token = Annotated[str, Meta(pattern=_whole(r"[A-Za-z0-9_-]{16,128}"))]
Version = Annotated[int, Meta(ge=0, le=MAX_VERSION)]
Epoch = Annotated[int, Meta(ge=0, le=MAX_EPOCH_MS)]
Count = Annotated[int, Meta(ge=0, le=MAX_VERSION)]
Name = Annotated[str, Meta(min_length=1, max_length=MAX_NAME)]
RoomCode = Annotated[str, Meta(pattern=_whole(f"[{ROOM_ALPHABET}]{{{ROOM_CODE_LENGTH}}}"))]


def _one_of(values: tuple[str, ...]) -> str:
    """Return the pattern of exactly one of ``values`` (typed ``str`` in Python, checked on decode)."""
    return _whole("|".join(re.escape(v) for v in values))


Variant = Annotated[str, Meta(pattern=_one_of(tuple(VARIANTS)))]
ReserveRuleName = Annotated[str, Meta(pattern=_one_of(tuple(r.value for r in ReserveRule)))]
RacerStatus = Annotated[str, Meta(pattern=_one_of(RACER_STATUSES))]
GameMode = Annotated[str, Meta(pattern=_one_of(GAME_MODES))]
Verdict = Annotated[str, Meta(pattern=_one_of(VERDICTS))]
Hex64 = Annotated[str, Meta(pattern=_whole(r"[0-9a-f]{64}"))]
Salt = Annotated[str, Meta(pattern=_whole(r"[0-9a-f]{32,64}"))]
DealNumber = Annotated[str, Meta(pattern=_whole(r"[1-9][0-9]{0,19}"))]
Date = Annotated[str, Meta(pattern=_whole(r"[0-9]{4}-[0-9]{2}-[0-9]{2}"))]
TypeName = Annotated[str, Meta(pattern=_whole(r"[a-z_]{1,32}"))]
Rating = Annotated[int, Meta(ge=0, le=10_000)]
Deviation = Annotated[int, Meta(ge=0, le=350)]
Score = Annotated[int, Meta(ge=0, le=10**6)]
Rank = Annotated[int, Meta(ge=1, le=MAX_VERSION)]
Place = Annotated[int, Meta(ge=1, le=MAX_PLAYERS)]
Column = Annotated[int, Meta(ge=1, le=MAX_COLUMNS)]
RoomCodeIn = Annotated[str, Meta(pattern=_whole(f"(?i:[{ROOM_ALPHABET}]{{{ROOM_CODE_LENGTH}}})"))]
CellName = Annotated[str, Meta(pattern=_whole(f"[Rr][1-{MAX_CELLS}]"))]
CardName = Annotated[str, Meta(pattern=_whole(r"[2-9TJQKAtjqka][SHDCshdc]"))]
RefValue = Annotated[int, Meta(ge=-MAX_REF, le=MAX_REF)] | Annotated[str, Meta(max_length=MAX_REF_TEXT)]
PlainMoves = Annotated[tuple[dict[str, Any], ...], Meta(max_length=MAX_LIST)]
Times = Annotated[tuple[Epoch, ...], Meta(max_length=MAX_LIST)]

PATTERN_WORDS: Final = {
    **{
        _one_of(values): "one of " + ", ".join(values)
        for values in (
            tuple(VARIANTS),
            tuple(r.value for r in ReserveRule),
            RACER_STATUSES,
            GAME_MODES,
            VERDICTS,
        )
    },
    _whole(GAME_ID_PATTERN): GAME_ID_TEXT,
    _whole(r"[A-Za-z0-9_-]{16,128}"): "16 to 128 letters, digits, '-' or '_'",
    _whole(f"[{ROOM_ALPHABET}]{{{ROOM_CODE_LENGTH}}}"): f"{ROOM_CODE_LENGTH} characters from {ROOM_ALPHABET}",
    _whole(
        f"(?i:[{ROOM_ALPHABET}]{{{ROOM_CODE_LENGTH}}})"
    ): f"{ROOM_CODE_LENGTH} characters from {ROOM_ALPHABET}",
    _whole(r"[0-9a-f]{64}"): "64 lowercase hexadecimal digits (a sha256)",
    _whole(r"[0-9a-f]{32,64}"): "32 to 64 lowercase hexadecimal digits",
    _whole(r"[1-9][0-9]{0,19}"): "a deal number written in decimal digits, 1 to 20 digits, no leading zero",
    _whole(r"[0-9]{4}-[0-9]{2}-[0-9]{2}"): "a date written YYYY-MM-DD",
    _whole(r"[a-z_]{1,32}"): "a message type name",
    _whole(f"[Rr][1-{MAX_CELLS}]"): f"a column number or a reserve cell R1-R{MAX_CELLS}",
    _whole(
        r"[2-9TJQKAtjqka][SHDCshdc]"
    ): "a card such as '7H': a rank from A23456789TJQK, then a suit from SHDC",
}
"""Each pattern of the contract in words, for the errors clients get."""


def deal_commitment(number: int | str, salt: str) -> str:
    """Return the commitment to a secret deal: sha256 hex of the ASCII text ``"<number>:<salt>"``."""
    return hashlib.sha256(f"{number}:{salt}".encode("ascii")).hexdigest()


def _kept(value: Any) -> Any:
    """Return a field's default that the wire always carries.

    msgspec leaves out of a frame every field equal to its default (``omit_defaults``),
    which is what an absent optional field (``None``) needs; but the contract carries
    every field that has a value, defaults included (``"status": "playing"``), so a
    default other than ``None`` is given by a factory, which msgspec never omits.
    """
    return msgspec.field(default_factory=lambda: value)


def _bad(wire: str, why: str) -> ProtocolError:
    """Return the ``bad_field`` error refusing field ``wire`` (a path such as ``move.to``)."""
    return ProtocolError(ErrorCode.BAD_FIELD, f"field {wire!r} {why}", field=wire)


# ---------------------------------------------------------------- bases

_ENCODER: Final = msgspec.msgpack.Encoder()
_PLAIN_DECODER: Final = msgspec.msgpack.Decoder()


class Record(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """The base of every wire record: frozen, typed, unknown fields refused, defaults left out."""

    def to_dict(self) -> dict[str, Any]:
        """Return the wire map of this record (plain dicts, lists, text, integers, booleans)."""
        # Through msgpack rather than msgspec.to_builtins, which keeps tuples as tuples: the
        # map is exactly what a peer decodes (lists, dicts, text, integers, booleans).
        data: dict[str, Any] = _PLAIN_DECODER.decode(_ENCODER.encode(self))
        return data

    @classmethod
    def from_dict(cls, data: object) -> Self:
        """Return the record a wire map describes, or raise ``ProtocolError`` (``bad_field``)."""
        return convert(data, cls)


class Message(Record, tag_field="type", frozen=True, kw_only=True):
    """The base of every message: a ``TYPE`` name (the tag) and an optional client-chosen ``ref``."""

    TYPE: ClassVar[str] = ""
    FROM: ClassVar[str] = ""
    ref: RefValue | None = None

    def answering(self, ref: Ref | None) -> Self:
        """Return this message carrying ``ref`` (nothing else changes)."""
        return msgspec.structs.replace(self, ref=ref)


class Request(Message, frozen=True, kw_only=True):
    """The base of the messages a client sends."""

    FROM: ClassVar[str] = "client"


class Reply(Message, frozen=True, kw_only=True):
    """The base of the messages the server sends (answers and events)."""

    FROM: ClassVar[str] = "server"


def _check_name(value: str, wire: str) -> str:
    """Return a display name without its outer spaces, or raise: 1 to 24 printable characters."""
    name = value.strip()
    if not 1 <= len(name) <= MAX_NAME:
        raise _bad(wire, f"must be 1 to {MAX_NAME} characters after removing outer spaces")
    if not name.isprintable():
        raise _bad(wire, "must contain printable characters only (no control or invisible characters)")
    return name


class WireMove(Record, frozen=True, kw_only=True, rename={"source": "from", "target": "to"}):
    """A move as the wire carries it: ``{"card": "7H", "from": 2, "to": 5}`` or ``{"deal": true}``.

    ``from`` is a column number from 1 or a reserve cell ``R1``/``R2``; ``to`` a column.
    """

    card: CardName | None = None
    source: Column | CellName | None = None
    target: Column | None = None
    deal: bool | None = None

    def __post_init__(self) -> None:
        if self.deal is not None:
            if self.deal is not True or not (
                self.card is None and self.source is None and self.target is None
            ):
                raise ValueError("a move has exactly the fields card, from and to (or only deal: true)")
            return
        if self.card is None or self.source is None or self.target is None:
            raise ValueError("a move has exactly the fields card, from and to (or only deal: true)")
        if not self.card.isupper():
            msgspec.structs.force_setattr(self, "card", self.card.upper())
        if type(self.source) is str and not self.source.isupper():
            msgspec.structs.force_setattr(self, "source", self.source.upper())

    @classmethod
    def of(cls, move: Move) -> WireMove:
        """Return the wire form of an engine move."""
        if move.is_deal:
            return cls(deal=True)
        source: int | str = f"R{move.source - CELL_BASE + 1}" if move.source >= CELL_BASE else move.source + 1
        return cls(card=card_text(move.card), source=source, target=move.target + 1)

    def to_move(self) -> Move:
        """Return the engine's move (the fields were checked when the record was decoded)."""
        if self.deal:
            return DEAL
        assert self.card is not None and self.source is not None and self.target is not None
        source = self.source
        index = CELL_BASE + int(source[1:]) - 1 if type(source) is str else int(source) - 1
        return Move(card_from_text(self.card), index, self.target - 1)


# ---------------------------------------------------------------- nested records


class Options(Record, frozen=True, kw_only=True):
    """Hold the options of a race: undo, hints, spectators, reserve rule, spectator delay.

    Friend races and quick matches allow undo and hints unless the host says otherwise.
    """

    undo: bool = _kept(True)
    hints: bool = _kept(True)
    spectators: bool = _kept(True)
    reserve_rule: ReserveRuleName = _kept("any-time")
    spectator_delay: Annotated[int, Meta(ge=0, le=300)] = _kept(0)
    rated: bool = _kept(False)
    """Whether the race changes its racers' ratings (quick matches are; a friend's room opts in)."""


class RoomPlayer(Record, frozen=True, kw_only=True):
    """Describe one player in a room: id, display name, ready flag."""

    player: Id
    name: Name
    ready: bool


class Racer(Record, frozen=True, kw_only=True):
    """Name one racer of a race (the roster entry): player id and display name."""

    player: Id
    name: Name


class RacerProgress(Record, frozen=True, kw_only=True):
    """Show one other racer's progress: summary and status, never the board."""

    player: Id
    summary: dict[str, Any]
    status: RacerStatus


class RacerBoard(Record, frozen=True, kw_only=True):
    """Show one racer to spectators: spectator view, summary and status."""

    player: Id
    name: Name
    view: dict[str, Any]
    summary: dict[str, Any]
    status: RacerStatus


class Standing(Record, frozen=True, kw_only=True):
    """Give one line of a race's final standings."""

    player: Id
    name: Name
    score: Annotated[int, Meta(ge=0, le=10**6)]
    runs: Annotated[int, Meta(ge=0, le=8)]
    elapsed: Count
    status: RacerStatus
    rank: Annotated[int, Meta(ge=1, le=MAX_PLAYERS)]


class GameInfo(Record, frozen=True, kw_only=True):
    """Describe one live game in the spectators' list."""

    game: Id
    variant: Variant
    players: Annotated[tuple[Racer, ...], Meta(max_length=MAX_PLAYERS)]
    start: Epoch
    spectators: Count
    room: RoomCode | None = None
    racers: Annotated[tuple[RacerProgress, ...], Meta(max_length=MAX_PLAYERS)] = _kept(())
    """Each racer's score and progress now (elapsed time is ``now - start``)."""
    rematch_of: Id | None = None
    """The race this one is a rematch of, when its racers asked to race again."""


class PlayerLog(Record, frozen=True, kw_only=True):
    """Hold one racer's move log in a replay: moves with their times (ms after the start)."""

    player: Id
    name: Name
    moves: Annotated[tuple[dict[str, Any], ...], Meta(max_length=MAX_LIST)]
    times: Annotated[tuple[Epoch, ...], Meta(max_length=MAX_LIST)]

    def __post_init__(self) -> None:
        if len(self.moves) != len(self.times):
            raise _bad("times", "must have one time for each move")


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
    roster: Annotated[tuple[Racer, ...], Meta(max_length=MAX_PLAYERS)]
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
    standings: Annotated[tuple[Standing, ...], Meta(max_length=MAX_PLAYERS)]
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
SpectatorEvent = Union["SpectateEvent", "RaceEnded"]
"""The events of a spectator's stream (what a spectate_batch holds)."""


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
    roster: Annotated[tuple[Racer, ...], Meta(max_length=MAX_PLAYERS)]
    view: dict[str, Any]
    summary: dict[str, Any]
    status: RacerStatus
    racers: Annotated[tuple[RacerProgress, ...], Meta(max_length=MAX_PLAYERS)]
    mode: GameMode = _kept("race")
    daily: Date | None = None


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
    racers: Annotated[tuple[RacerBoard, ...], Meta(max_length=MAX_PLAYERS)]
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
    logs: Annotated[tuple[PlayerLog, ...], Meta(max_length=MAX_PLAYERS)]
    standings: Annotated[tuple[Standing, ...], Meta(max_length=MAX_PLAYERS)] = _kept(())


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


# ---------------------------------------------------------------- daily tournament, account


class DailyInfo(Request, tag="daily_info", frozen=True, kw_only=True):
    """Ask about today's daily deal of a variant (and yesterday's revealed one)."""

    variant: Variant = _kept("scorpion")


class Daily(Reply, tag="daily", frozen=True, kw_only=True):
    """Answer daily_info: the date, commitment, closing time, the player's attempt, yesterday's reveal."""

    date: Date
    variant: Variant
    commitment: Hex64
    ends: Epoch
    played: bool
    finished: bool = _kept(False)
    previous: dict[str, Any] | None = None
    """Yesterday's deal revealed: {"date", "number" (text), "salt", "commitment"}."""


class DailyStart(Request, tag="daily_start", frozen=True, kw_only=True):
    """Start today's daily deal: the one ranked attempt, or unranked practice once it is over."""

    variant: Variant = _kept("scorpion")
    practice: bool = _kept(False)


class LeaderboardEntry(Record, frozen=True, kw_only=True):
    """One line of a daily leaderboard."""

    rank: Annotated[int, Meta(ge=1, le=MAX_VERSION)]
    player: Id
    name: Name
    score: Annotated[int, Meta(ge=0, le=10**6)]
    elapsed: Count
    finished: Epoch


class Leaderboard(Request, tag="leaderboard", frozen=True, kw_only=True):
    """Ask for a page of a day's leaderboard (today by default); ``subscribe`` pushes updates."""

    variant: Variant = _kept("scorpion")
    date: Date | None = None
    offset: Annotated[int, Meta(ge=0, le=MAX_VERSION)] = _kept(0)
    limit: Annotated[int, Meta(ge=1, le=100)] = _kept(20)
    subscribe: bool = _kept(False)


class AroundMe(Request, tag="around_me", frozen=True, kw_only=True):
    """Ask for the player's own rank with ``radius`` neighbours above and below."""

    variant: Variant = _kept("scorpion")
    date: Date | None = None
    radius: Annotated[int, Meta(ge=0, le=50)] = _kept(5)


class LeaderboardPage(Reply, tag="leaderboard_page", frozen=True, kw_only=True):
    """Answer leaderboard/around_me (or push an update): entries from rank ``offset + 1``."""

    variant: Variant
    date: Date
    offset: Count
    total: Count
    entries: Annotated[tuple[LeaderboardEntry, ...], Meta(max_length=101)]
    me: Annotated[int, Meta(ge=1, le=MAX_VERSION)] | None = None
    """The asking player's rank, when they are on this day's board."""


class SoloNew(Request, tag="solo_new", frozen=True, kw_only=True):
    """Start a solo game on a fresh secret deal (New Game); ``save`` keeps it resumable."""

    variant: Variant = _kept("scorpion")
    reserve_rule: ReserveRuleName = _kept("any-time")
    save: bool = _kept(True)


class SoloReplay(Request, tag="solo_replay", frozen=True, kw_only=True):
    """Start the same deal as one of the player's solo games again (Replay)."""

    game: Id


class SoloResume(Request, tag="solo_resume", frozen=True, kw_only=True):
    """Continue a saved solo game, from any device (answered with snapshot)."""

    game: Id


class SavedGames(Request, tag="saved_games", frozen=True, kw_only=True):
    """List the player's saved solo games in progress."""


class SavedGame(Record, frozen=True, kw_only=True):
    """One saved solo game."""

    game: Id
    variant: Variant
    start: Epoch
    summary: dict[str, Any]


class SavedGamesList(Reply, tag="saved_games_list", frozen=True, kw_only=True):
    """Answer saved_games: the saved solo games, newest first."""

    games: Annotated[tuple[SavedGame, ...], Meta(max_length=MAX_LIST)]


class Stats(Request, tag="stats", frozen=True, kw_only=True):
    """Ask for the player's statistics (every variant, or one)."""

    variant: Variant | None = None


class VariantStats(Record, frozen=True, kw_only=True):
    """A player's record in one variant (kept separately per variant)."""

    variant: Variant
    started: Count
    won: Count
    best_score: Count
    best_time: Count | None = None
    average_score: Count
    streak: Count
    longest_streak: Count
    dailies: Count


class StatsInfo(Reply, tag="stats_info", frozen=True, kw_only=True):
    """Answer stats."""

    stats: Annotated[tuple[VariantStats, ...], Meta(max_length=len(VARIANTS))]


class ForgetMe(Request, tag="forget_me", frozen=True, kw_only=True):
    """Erase the player's identity and records (answered with forgotten, then the server closes)."""


class Forgotten(Reply, tag="forgotten", frozen=True, kw_only=True):
    """Answer forget_me with what was removed; the old token no longer works."""

    removed: dict[str, Any]


# ---------------------------------------------------------------- ratings and profiles


class RatingInfo(Record, frozen=True, kw_only=True):
    """A player's Glicko-2 rating in one variant (rounded), and their place on its board."""

    variant: Variant
    rating: Rating
    deviation: Deviation
    games: Count
    """Rated races played in the variant."""
    provisional: bool
    """The deviation is above 110: too few recent rated races to trust the rating yet."""
    rank: Annotated[int, Meta(ge=1, le=MAX_VERSION)] | None = None
    best: Rating | None = None
    """The highest rating reached in the variant."""


class RatingDelta(Record, frozen=True, kw_only=True):
    """One racer's rating before and after a rated race (the change is ``after - before``)."""

    player: Id
    name: Name
    before: Rating
    after: Rating
    deviation: Deviation
    provisional: bool


class RatingChange(Reply, tag="rating_change", frozen=True, kw_only=True):
    """Tell a racer how a rated race they finished changed every racer's rating."""

    game: Id
    variant: Variant
    changes: Annotated[tuple[RatingDelta, ...], Meta(max_length=MAX_PLAYERS)]


class ProfileRequest(Request, tag="profile", frozen=True, kw_only=True):
    """Ask for a player's profile (the asking player's own when ``player`` is absent)."""

    player: Id | None = None


class RecentGame(Record, frozen=True, kw_only=True):
    """One finished game on a profile: what it was, how the player placed, whether it replays."""

    game: Id
    variant: Variant
    mode: GameMode
    start: Epoch
    racers: Annotated[int, Meta(ge=1, le=MAX_PLAYERS)]
    rank: Annotated[int, Meta(ge=1, le=MAX_PLAYERS)]
    score: Annotated[int, Meta(ge=0, le=10**6)]
    status: RacerStatus
    rated: bool = _kept(False)
    change: Annotated[int, Meta(ge=-10_000, le=10_000)] | None = None
    """The rating change the game made, for a rated race."""
    replayable: bool = _kept(True)
    """Whether ``replay`` serves it now (a daily game's day must be over first)."""


class Profile(Reply, tag="profile_info", frozen=True, kw_only=True):
    """Answer profile: name, ratings and statistics per variant, and the newest finished games."""

    player: Id
    name: Name
    ratings: Annotated[tuple[RatingInfo, ...], Meta(max_length=len(VARIANTS))]
    stats: Annotated[tuple[VariantStats, ...], Meta(max_length=len(VARIANTS))]
    recent: Annotated[tuple[RecentGame, ...], Meta(max_length=50)]
    me: bool = _kept(False)
    """Whether the profile is the asking player's own."""


class RatingBoard(Request, tag="rating_board", frozen=True, kw_only=True):
    """Ask for a page of a variant's rating leaderboard, or the player's own place with neighbours."""

    variant: Variant = _kept("scorpion")
    offset: Annotated[int, Meta(ge=0, le=MAX_VERSION)] = _kept(0)
    limit: Annotated[int, Meta(ge=1, le=100)] = _kept(20)
    around_me: bool = _kept(False)
    """When true, the page is centred on the player (``limit`` is then the page's size)."""


class RatingEntry(Record, frozen=True, kw_only=True):
    """One line of a rating leaderboard."""

    rank: Annotated[int, Meta(ge=1, le=MAX_VERSION)]
    player: Id
    name: Name
    rating: Rating
    deviation: Deviation
    games: Count
    provisional: bool


class RatingPage(Reply, tag="rating_page", frozen=True, kw_only=True):
    """Answer rating_board: entries from rank ``offset + 1``, and the player's own rank if rated."""

    variant: Variant
    offset: Count
    total: Count
    entries: Annotated[tuple[RatingEntry, ...], Meta(max_length=100)]
    me: Annotated[int, Meta(ge=1, le=MAX_VERSION)] | None = None


# ---------------------------------------------------------------- solver: analysis and practice hints


class Analyze(Request, tag="analyze", frozen=True, kw_only=True):
    """Ask for the post-game analysis of one of the player's finished games."""

    game: Id


class Analysis(Reply, tag="analysis", frozen=True, kw_only=True):
    """Tell a player whether the deal was winnable, a winning line, and where their win slipped away."""

    game: Id
    player: Id
    verdict: Verdict
    line: Annotated[tuple[dict[str, Any], ...], Meta(max_length=MAX_LIST)] = _kept(())
    """A winning line from the deal's opening (empty unless the verdict is winnable)."""
    moves: Count = _kept(0)
    """How many moves of the player's game were analysed (their final line, undos applied)."""
    slipped: Count | None = None
    """Index (from 0) of the player's move after which the game could no longer be won."""
    won: bool = _kept(False)


class Winnable(Request, tag="winnable", frozen=True, kw_only=True):
    """Ask, in a solo game only, whether the position is still winnable and for a winning move."""

    game: Id
    v: Version


class WinnableInfo(Reply, tag="winnable_info", frozen=True, kw_only=True):
    """Answer winnable: the verdict on the current position and, if winnable, a winning move."""

    game: Id
    v: Version
    verdict: Verdict
    move: dict[str, Any] | None = None


RESERVED_TYPES: Final = frozenset({"solo_started", "daily_result"})
"""Type names kept for a later version of the protocol; receiving one is ``unavailable``."""


def _message_classes(base: type[Message]) -> Iterator[type[Message]]:
    for cls in base.__subclasses__():
        yield cls
        yield from _message_classes(cls)


def _register() -> dict[str, type[Message]]:
    registry: dict[str, type[Message]] = {}
    for cls in _message_classes(Message):
        tag = cls.__struct_config__.tag
        if isinstance(tag, str) and tag != cls.__name__:  # the bases are tagged by class name
            assert tag not in registry, cls
            cls.TYPE = tag
            registry[tag] = cls
    return registry


MESSAGES: Final = _register()
"""Every message class by its ``type`` name."""
CLIENT_TYPES: Final = frozenset(t for t, c in MESSAGES.items() if c.FROM == "client")
"""Types of the messages clients send."""
SERVER_TYPES: Final = frozenset(t for t, c in MESSAGES.items() if c.FROM == "server")
"""Types of the messages the server sends."""
EVENT_TYPES: Final = frozenset({"race_started", "accepted", "progress", "race_ended"})
"""Types of the versioned events of a racer's stream (what a batch may hold)."""
SPECTATOR_EVENT_TYPES: Final = frozenset({"spectate_event", "race_ended"})
"""Types of the versioned events of a spectator's stream (what a spectate_batch may hold)."""


def error_message(error: ProtocolError) -> Error:
    """Return the ``error`` message reporting ``error`` (text clipped to the limits)."""
    return Error(
        code=error.code,
        message=error.message[:512],
        field=None if error.field is None else error.field[:64],
        retry_after_ms=error.retry_after_ms,
        ref=error.ref,
    )


# ---------------------------------------------------------------- the decode adapter
# msgspec names the failing field only inside its error's text ("... - at `$.move.to`");
# error.field is part of the contract, so one place turns the one into the other.

_AT = re.compile(r"^(?P<what>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.DOTALL)
_UNKNOWN_FIELD = re.compile(r"^Object contains unknown field `(?P<name>[^`]*)`$")
_MISSING_FIELD = re.compile(r"^Object missing required field `(?P<name>[^`]*)`$")
_REGEX = re.compile(r"^Expected `str` matching regex '(?P<regex>.*)'$", re.DOTALL)


_INDEX = re.compile(r"\[\d+\]")


def _path(raw: str) -> str:
    """Return msgspec's path (``.move.to``, ``.roster[2].name``) as the contract writes it.

    The contract names fields, not items: ``roster.name``; an item of a list of events
    whose ``type`` is refused is the list's fault (``events``).
    """
    path = _INDEX.sub("", raw).lstrip(".")
    if path.endswith(".type"):
        path = path[: -len(".type")]
    return path


def _describe(cls: type[Record]) -> str:
    return f"a {cls.TYPE!r} message" if issubclass(cls, Message) else f"a {cls.__name__} record"


def _value_at(data: Any, raw_path: str) -> Any:
    """Return the value at msgspec's ``raw_path`` (``.roster[1].name``) in ``data``, or ``None``."""
    for key, index in re.findall(r"\.([^.\[]+)|\[(\d+)\]", raw_path):
        if key and type(data) is dict:
            data = data.get(key)
        elif index and type(data) is list and int(index) < len(data):
            data = data[int(index)]
        else:
            return None
    return data


def field_error(exc: msgspec.ValidationError, cls: type[Record], data: Any = None) -> ProtocolError:
    """Return the ``bad_field`` error saying, with its field path, what msgspec refused in ``data``."""
    match = _AT.match(str(exc))
    assert match is not None  # the pattern matches any text
    what, path = match["what"], _path(match["path"] or "")
    unknown = _UNKNOWN_FIELD.match(what)
    if unknown:
        name = unknown["name"][:40]
        field = f"{path}.{name}" if path else name
        return _bad(field, f"is not a field of {_describe(cls) if not path else 'this record'}")
    missing = _MISSING_FIELD.match(what)
    if missing:
        field = f"{path}.{missing['name']}" if path else missing["name"]
        return _bad(field, f"is missing: {_describe(cls) if not path else 'this record'} requires it")
    regex = _REGEX.match(what)
    if regex:
        what = f"must be {_PATTERN_WORDS_SHOWN.get(regex['regex'], 'of the documented form')}"
        value = _value_at(data, match["path"] or "")
        if type(value) is str:
            what += f", not {value if len(value) <= 40 else value[:40] + '…'!r}"
    elif what.startswith("Expected "):
        what = "must be " + what[len("Expected ") :].replace("`", "")
    elif what.startswith("Invalid value "):
        what = f"holds a message of a type it may not hold ({what[len('Invalid value ') :]})"
    elif what.startswith("Invalid enum value "):
        what = f"must be one of {', '.join(c.value for c in ErrorCode)}"
    else:
        what = f"is wrong: {what}"
    if not path:
        return ProtocolError(ErrorCode.BAD_FIELD, f"{_describe(cls)} {what}")
    return _bad(path, what)


_R = TypeVar("_R", bound=Record)

_PATTERN_WORDS_SHOWN: Final = {repr(pattern)[1:-1]: words for pattern, words in PATTERN_WORDS.items()}
"""PATTERN_WORDS by the form msgspec shows a pattern in (its repr)."""

_NESTED: dict[type[Record], dict[str, tuple[type[Record], bool]]] = {}


def _records_in(annotation: Any) -> type[Record] | None:
    """Return the record type a field holds (alone, optional or in a tuple), if any."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _records_in(get_args(annotation)[0])
    if isinstance(annotation, type) and issubclass(annotation, Record):
        return annotation
    for arg in get_args(annotation):
        found = _records_in(arg)
        if found is not None:
            return found
    return None


def _nested(cls: type[Record]) -> dict[str, tuple[type[Record], bool]]:
    """Return, by wire name, the fields of ``cls`` that hold records (and whether as a list)."""
    known = _NESTED.get(cls)
    if known is None:
        known = {}
        for info in msgspec.structs.fields(cls):
            inner = _records_in(info.type)
            if inner is not None and not issubclass(inner, Message):
                known[info.encode_name] = (inner, "tuple" in repr(info.type))
        _NESTED[cls] = known
    return known


def _without_nulls(data: dict[Any, Any], cls: type[Record]) -> dict[Any, Any]:
    """Return ``data`` without its ``null`` values, in it and in the records it holds."""
    nested = _nested(cls)
    out: dict[Any, Any] = {}
    for key, value in data.items():
        if value is None:
            continue
        inner = nested.get(key) if type(key) is str else None
        if inner is not None:
            record, many = inner
            if many and type(value) is list:
                value = [_without_nulls(v, record) if type(v) is dict else v for v in value]
            elif not many and type(value) is dict:
                value = _without_nulls(value, record)
        out[key] = value
    return out


def convert(data: object, cls: type[_R]) -> _R:
    """Return the record of type ``cls`` that plain ``data`` describes, or raise ``ProtocolError``."""
    if type(data) is not dict:
        raise ProtocolError(ErrorCode.BAD_FIELD, f"{_describe(cls)} must be an object, not {_kind(data)}")
    try:
        return msgspec.convert(_without_nulls(data, cls), cls)
    except msgspec.ValidationError as exc:
        raise field_error(exc, cls, data) from None


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _ref_of(data: dict[Any, Any]) -> Ref | None:
    raw = data.get("ref")
    if raw is None:
        return None
    if type(raw) is int and -MAX_REF <= raw <= MAX_REF:
        return raw
    if type(raw) is str and len(raw) <= MAX_REF_TEXT:
        return raw
    if type(raw) is int:
        raise _bad("ref", f"must be an integer of at most {MAX_REF} in size, or text")
    if type(raw) is str:
        raise _bad("ref", f"must be text of at most {MAX_REF_TEXT} characters, or an integer")
    raise _bad("ref", f"must be text or an integer, not {_kind(raw)}")


def from_dict(data: object) -> Message:
    """Return the message a wire map describes, or raise ``ProtocolError`` saying what is wrong."""
    if type(data) is not dict:
        raise ProtocolError(ErrorCode.BAD_FRAME, f"a message must be a map with a 'type', not {_kind(data)}")
    ref = _ref_of(data)
    kind = data.get("type")
    if type(kind) is not str:
        if kind is None:
            raise ProtocolError(ErrorCode.BAD_FIELD, "the message has no 'type'", ref=ref, field="type")
        raise ProtocolError(ErrorCode.BAD_FIELD, "field 'type' must be text", ref=ref, field="type")
    cls = MESSAGES.get(kind)
    if cls is None:
        shown = kind if len(kind) <= 40 else kind[:40] + "…"
        if kind in RESERVED_TYPES:
            raise ProtocolError(
                ErrorCode.UNAVAILABLE, f"{shown!r} is reserved for a later version of the protocol", ref=ref
            )
        raise ProtocolError(ErrorCode.UNKNOWN_TYPE, f"no message has type {shown!r}", ref=ref)
    try:
        return convert(data, cls)
    except ProtocolError as exc:
        raise exc.with_ref(ref) from None
