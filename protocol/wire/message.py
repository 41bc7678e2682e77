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

This module is the contract's one public module: it registers every message (``MESSAGES``)
and re-exports every name of the modules the contract is written in, which nothing else
imports: :mod:`~protocol.wire.fields` (limits and field types), :mod:`~protocol.wire.base`
(the bases and the decode adapter), :mod:`~protocol.wire.records` (the moves and records
messages carry), and the messages by feature, :mod:`~protocol.wire.race`,
:mod:`~protocol.wire.spectate`, :mod:`~protocol.wire.player` and
:mod:`~protocol.wire.account`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from .base import Message, Record, Reply, Request, _kind, convert, field_error
from .error import ErrorCode, ProtocolError
from .error import Ref as Ref
from .fields import (
    GAME_ID_PATTERN,
    GAME_ID_TEXT,
    GAME_MODES,
    MAX_BAN_REASON,
    MAX_CELLS,
    MAX_COLUMNS,
    MAX_EPOCH_MS,
    MAX_LIST,
    MAX_NAME,
    MAX_PLAYERS,
    MAX_RACERS,
    MAX_REF,
    MAX_REF_TEXT,
    MAX_RETRY_AFTER_MS,
    MAX_VERSION,
    PATTERN_WORDS,
    RACER_STATUSES,
    ROOM_ALPHABET,
    ROOM_CODE_LENGTH,
    VERDICTS,
    CardName,
    CellName,
    Column,
    Count,
    Date,
    DealNumber,
    Deviation,
    Epoch,
    GameMode,
    Hex64,
    Id,
    Name,
    Place,
    PlainMoves,
    RacerStatus,
    Rank,
    Rating,
    RefValue,
    ReserveRuleName,
    RoomCode,
    RoomCodeIn,
    Salt,
    Score,
    Times,
    Token,
    TypeName,
    Variant,
    Verdict,
    Version,
    _bad,
    deal_commitment,
)
from .records import (
    GameInfo,
    Options,
    PlayerLog,
    Racer,
    RacerBoard,
    RacerProgress,
    RoomPlayer,
    Standing,
    WireMove,
)

# The messages by feature, imported in the contract's order (each block apart from isort's
# sorting): the registry lists the messages in the order their classes are defined.
# isort: split
from .race import (
    Accepted,
    Batch,
    Countdown,
    DealReserve,
    Error,
    Hello,
    HintRequest,
    Hints,
    MatchFound,
    Ok,
    Ping,
    PlayMove,
    Pong,
    Progress,
    QueueCancel,
    Queued,
    QueueJoin,
    QueueTimeout,
    RaceEnded,
    RacerEvent,
    RaceStarted,
    Ready,
    Rematch,
    RematchOffered,
    Resign,
    Resume,
    RoomCreate,
    RoomJoin,
    RoomLeave,
    RoomStart,
    RoomState,
    Snapshot,
    Undo,
    Welcome,
)

# isort: split
from .spectate import (
    Games,
    GamesList,
    GamesUpdate,
    Replay,
    ReplayLog,
    ReplayPositions,
    ReplayPositionsInfo,
    SpectateBatch,
    SpectateEvent,
    SpectatorEvent,
    Spectators,
    SpectatorSnapshot,
    Unwatch,
    Watch,
)

# isort: split
from .challenge import (
    MAX_GHOSTS,
    Challenge,
    ChallengeBoard,
    ChallengeBoardInfo,
    ChallengeCreate,
    ChallengeEntry,
    ChallengeList,
    ChallengeListInfo,
    ChallengeNew,
    ChallengeTake,
    ChallengeTaken,
    DailyGhost,
    Ghost,
)

# isort: split
from .player import (
    Analysis,
    Analyze,
    AroundMe,
    Daily,
    DailyInfo,
    DailyStart,
    Finish,
    FinishInfo,
    ForgetMe,
    Forgotten,
    Leaderboard,
    LeaderboardEntry,
    LeaderboardPage,
    Profile,
    ProfileRequest,
    RatingBoard,
    RatingChange,
    RatingDelta,
    RatingEntry,
    RatingInfo,
    RatingPage,
    RecentGame,
    SavedDelete,
    SavedGame,
    SavedGames,
    SavedGamesList,
    SoloLeave,
    SoloNew,
    SoloReplay,
    SoloResume,
    Stats,
    StatsInfo,
    VariantStats,
    Winnable,
    WinnableInfo,
)

# isort: split
from .account import (
    MAX_USERNAME,
    Login,
    Logout,
    PasskeyChallenge,
    PasskeyLogin,
    PasskeyOptions,
    PasskeyRegister,
    PasswordChange,
    Register,
    SessionEntry,
    SessionGranted,
    SessionRevoke,
    Sessions,
    SessionsList,
)

__all__ = [
    "CLIENT_TYPES",
    "EVENT_TYPES",
    "GAME_ID_PATTERN",
    "GAME_ID_TEXT",
    "GAME_MODES",
    "MAX_BAN_REASON",
    "MAX_CELLS",
    "MAX_COLUMNS",
    "MAX_EPOCH_MS",
    "MAX_GHOSTS",
    "MAX_LIST",
    "MAX_NAME",
    "MAX_PLAYERS",
    "MAX_RACERS",
    "MAX_REF",
    "MAX_REF_TEXT",
    "MAX_RETRY_AFTER_MS",
    "MAX_USERNAME",
    "MAX_VERSION",
    "MESSAGES",
    "PATTERN_WORDS",
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
    "CardName",
    "CellName",
    "Challenge",
    "ChallengeBoard",
    "ChallengeBoardInfo",
    "ChallengeCreate",
    "ChallengeEntry",
    "ChallengeList",
    "ChallengeListInfo",
    "ChallengeNew",
    "ChallengeTake",
    "ChallengeTaken",
    "Column",
    "Count",
    "Countdown",
    "Daily",
    "DailyGhost",
    "DailyInfo",
    "DailyStart",
    "Date",
    "DealNumber",
    "DealReserve",
    "Deviation",
    "Epoch",
    "Error",
    "Finish",
    "FinishInfo",
    "ForgetMe",
    "Forgotten",
    "GameInfo",
    "GameMode",
    "Games",
    "GamesList",
    "GamesUpdate",
    "Ghost",
    "Hello",
    "Hex64",
    "HintRequest",
    "Hints",
    "Id",
    "Leaderboard",
    "LeaderboardEntry",
    "LeaderboardPage",
    "Login",
    "Logout",
    "MatchFound",
    "Message",
    "Name",
    "Ok",
    "Options",
    "PasskeyChallenge",
    "PasskeyLogin",
    "PasskeyOptions",
    "PasskeyRegister",
    "PasswordChange",
    "Ping",
    "Place",
    "PlainMoves",
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
    "RacerStatus",
    "Rank",
    "Rating",
    "RatingBoard",
    "RatingChange",
    "RatingDelta",
    "RatingEntry",
    "RatingInfo",
    "RatingPage",
    "Ready",
    "RecentGame",
    "Record",
    "RefValue",
    "Register",
    "Rematch",
    "RematchOffered",
    "Replay",
    "ReplayLog",
    "ReplayPositions",
    "ReplayPositionsInfo",
    "Reply",
    "Request",
    "ReserveRuleName",
    "Resign",
    "Resume",
    "RoomCode",
    "RoomCodeIn",
    "RoomCreate",
    "RoomJoin",
    "RoomLeave",
    "RoomPlayer",
    "RoomStart",
    "RoomState",
    "Salt",
    "SavedDelete",
    "SavedGame",
    "SavedGames",
    "SavedGamesList",
    "Score",
    "SessionEntry",
    "SessionGranted",
    "SessionRevoke",
    "Sessions",
    "SessionsList",
    "Snapshot",
    "SoloLeave",
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
    "Times",
    "Token",
    "TypeName",
    "Undo",
    "Unwatch",
    "Variant",
    "VariantStats",
    "Verdict",
    "Version",
    "Watch",
    "Welcome",
    "Winnable",
    "WinnableInfo",
    "WireMove",
    "convert",
    "deal_commitment",
    "error_message",
    "field_error",
    "from_dict",
]

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
