"""Every message of the wire contract, one small frozen dataclass each, validating itself.

A message is built with keywords (``PlayMove(game="g1", v=3, move=...)``) and checks its
fields on construction: a wrong type, a value out of range or an over-long string raises
:class:`~protocol.wire.error.ProtocolError` with code ``bad_field`` naming the field. The same
check runs when a message is decoded, so a server never holds an unchecked message.

On the wire a message is a map with a ``type`` (the class's ``TYPE``) and its fields under
the names listed in docs/protocol.md; :meth:`Message.to_dict` and :func:`from_dict` convert.
``None`` optional fields are left out of the map; a ``null`` on the wire means "absent".

Payloads the server builds from the engine (board views, summaries, move lists the server
sends) are carried as plain data and only checked for shape; everything a client sends is
checked completely, moves included.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self, TypeVar

from ..game.move import CELL_BASE, Move, move_from_json, move_json
from ..game.variant import VARIANTS, ReserveRule
from .error import ErrorCode, ProtocolError, Ref

__all__ = [
    "CLIENT_TYPES",
    "EVENT_TYPES",
    "GAME_ID_PATTERN",
    "GAME_ID_TEXT",
    "GAME_MODES",
    "MAX_EPOCH_MS",
    "MAX_NAME",
    "MAX_REF",
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
    "Progress",
    "QueueCancel",
    "QueueJoin",
    "QueueTimeout",
    "Queued",
    "RaceEnded",
    "RaceStarted",
    "Racer",
    "RacerBoard",
    "RacerProgress",
    "Ready",
    "Rematch",
    "RematchOffered",
    "Replay",
    "ReplayLog",
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
    "SpectatorSnapshot",
    "Spectators",
    "Standing",
    "Stats",
    "StatsInfo",
    "Struct",
    "Undo",
    "Unwatch",
    "VariantStats",
    "Watch",
    "Welcome",
    "Winnable",
    "WinnableInfo",
    "deal_commitment",
    "error_message",
    "from_dict",
]

MAX_VERSION = 2**31 - 1
"""Largest event version (versions count from 1; a request's ``v`` of 0 means "seen nothing")."""
MAX_REF = 2**53 - 1
"""Largest absolute value of an integer ``ref`` (exact in every JSON implementation)."""
MAX_REF_TEXT = 64
"""Longest text ``ref``."""
MAX_EPOCH_MS = 2**53 - 1
"""Largest timestamp (milliseconds since the Unix epoch, server clock)."""
MAX_RETRY_AFTER_MS = 60_000
"""Longest wait an ``error`` may ask for before the same request is sent again."""
MAX_NAME = 24
"""Longest display name, after stripping surrounding spaces."""
ROOM_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
"""The letters of room codes: no 0/O, 1/I/L to confuse."""
ROOM_CODE_LENGTH = 6
"""Length of a room code."""
MAX_PLAYERS = 8
"""Most racers in one race."""
GAME_ID_PATTERN = r"[A-Za-z0-9_-]{1,32}"
"""What a game id (and every other id on the wire) looks like, as a regular expression."""
GAME_ID_TEXT = "1 to 32 letters, digits, '-' or '_'"
"""The same, in words."""
MAX_COLUMNS = max(v.columns for v in VARIANTS.values())
"""Most tableau columns of any variant (moves' ``from``/``to`` are at most this)."""
MAX_CELLS = max(v.cells for v in VARIANTS.values())
"""Most open reserve cells of any variant (``R1``, ``R2``)."""
MAX_LIST = 1000
"""Longest list a server message carries (games, events of a batch, moves of a replay)."""
GAME_MODES = ("race", "solo", "daily", "practice")
"""What a game is: a race of 2-8, a solo game, a ranked daily attempt, or unranked daily practice."""
VERDICTS = ("winnable", "unwinnable", "unknown")
"""What the solver says of a deal or position: a line exists, none does, or undecided."""
RACER_STATUSES = ("playing", "finished", "stuck", "resigned", "left")
"""Where a racer stands: still playing, won the deal, no move left, gave up, disconnected for good."""


def _bad(wire: str, why: str, inner: str | None = None) -> ProtocolError:
    """Refuse a field; ``inner`` names the field inside it at fault (``field`` is then ``move.to``)."""
    return ProtocolError(
        ErrorCode.BAD_FIELD, f"field {wire!r} {why}", field=f"{wire}.{inner}" if inner else wire
    )


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


Check = Callable[[Any, str], Any]
Dump = Callable[[Any], Any]


def _spec(check: Check, dump: Dump | None = None) -> dict[str, Any]:
    return {"check": check, "dump": dump}


# ---------------------------------------------------------------- field checks


def _int(lo: int, hi: int) -> Check:
    def check(value: Any, wire: str) -> int:
        if type(value) is not int:
            raise _bad(wire, f"must be an integer, not {_kind(value)}")
        if not lo <= value <= hi:
            raise _bad(wire, f"must be from {lo} to {hi}, not {value}")
        return value

    return check


def _bool(value: Any, wire: str) -> bool:
    if type(value) is not bool:
        raise _bad(wire, f"must be true or false, not {_kind(value)}")
    return value


def _pattern(regex: str, what: str) -> Check:
    compiled = re.compile(regex)

    def check(value: Any, wire: str) -> str:
        if type(value) is not str:
            raise _bad(wire, f"must be text, not {_kind(value)}")
        if compiled.fullmatch(value) is None:
            shown = value if len(value) <= 40 else value[:40] + "…"
            raise _bad(wire, f"must be {what}, not {shown!r}")
        return value

    return check


def _text(max_len: int) -> Check:
    def check(value: Any, wire: str) -> str:
        if type(value) is not str:
            raise _bad(wire, f"must be text, not {_kind(value)}")
        if len(value) > max_len:
            raise _bad(wire, f"must be at most {max_len} characters, not {len(value)}")
        return value

    return check


def _choice(values: tuple[str, ...]) -> Check:
    allowed = frozenset(values)
    listed = ", ".join(values)

    def check(value: Any, wire: str) -> str:
        if type(value) is not str or value not in allowed:
            raise _bad(wire, f"must be one of {listed}")
        return value

    return check


def _name(value: Any, wire: str) -> str:
    if type(value) is not str:
        raise _bad(wire, f"must be text, not {_kind(value)}")
    if len(value) > 4 * MAX_NAME:
        raise _bad(wire, f"must be 1 to {MAX_NAME} characters")
    name = value.strip()
    if not 1 <= len(name) <= MAX_NAME:
        raise _bad(wire, f"must be 1 to {MAX_NAME} characters after removing outer spaces")
    if not name.isprintable():
        raise _bad(wire, "must contain printable characters only (no control or invisible characters)")
    return name


def _room(value: Any, wire: str) -> str:
    if type(value) is not str:
        raise _bad(wire, f"must be text, not {_kind(value)}")
    code = value.upper()
    if len(code) != ROOM_CODE_LENGTH or not all(c in ROOM_ALPHABET for c in code):
        raise _bad(wire, f"must be {ROOM_CODE_LENGTH} characters from {ROOM_ALPHABET}")
    return code


def _plain_map(value: Any, wire: str) -> Any:
    if type(value) is not dict:
        raise _bad(wire, f"must be an object, not {_kind(value)}")
    return value


def _deal_number(value: Any, wire: str) -> int:
    if type(value) is str and _DIGITS.fullmatch(value):
        return int(value)
    if type(value) is int and 1 <= value < 10**20:
        return value
    raise _bad(wire, "must be a deal number written in decimal digits, 1 to 20 digits, no leading zero")


_DIGITS = re.compile(r"[1-9][0-9]{0,19}")


def _move(value: Any, wire: str) -> Move:
    if isinstance(value, Move):
        move = value
    else:
        if type(value) is not dict:
            example = "{'card': '7H', 'from': 2, 'to': 5}"
            raise _bad(wire, f"must be an object such as {example}, not {_kind(value)}")
        try:
            move = move_from_json(value)
        except (ValueError, TypeError) as exc:
            inner = getattr(exc, "field", None)
            raise _bad(wire, f"is not a move: {exc}", inner) from None
    if not move.is_deal:
        source, target = move.source, move.target
        if not (0 <= source < MAX_COLUMNS or CELL_BASE <= source < CELL_BASE + MAX_CELLS):
            raise _bad(
                wire, f"has a 'from' that is no column (1-{MAX_COLUMNS}) or cell (R1-R{MAX_CELLS})", "from"
            )
        if not 0 <= target < MAX_COLUMNS:
            raise _bad(wire, f"has a 'to' that is no column (1-{MAX_COLUMNS})", "to")
        if not 0 <= move.card < 52:
            raise _bad(wire, "has a card that is no card", "card")
    return move


def _list(item: Check, max_len: int, item_dump: Dump | None = None) -> dict[str, Any]:
    def check(value: Any, wire: str) -> tuple[Any, ...]:
        if type(value) is not list and type(value) is not tuple:
            raise _bad(wire, f"must be a list, not {_kind(value)}")
        if len(value) > max_len:
            raise _bad(wire, f"must have at most {max_len} items, not {len(value)}")
        return tuple(item(x, wire) for x in value)

    def dump(value: tuple[Any, ...]) -> list[Any]:
        if item_dump is None:
            return list(value)
        return [item_dump(x) for x in value]

    return _spec(check, dump)


def _struct_check(cls: type[Struct]) -> Check:
    def check(value: Any, wire: str) -> Struct:
        if isinstance(value, cls):
            return value
        if type(value) is not dict:
            raise _bad(wire, f"must be an object, not {_kind(value)}")
        try:
            return cls.from_dict(value)
        except ProtocolError as exc:
            # Name the field inside: 'options.undo', not only 'options'.
            inner = exc.field
            path = f"{wire}.{inner}" if inner else wire
            prefix = f"field {inner!r} "
            if inner and exc.message.startswith(prefix):
                message = f"field {path!r} {exc.message[len(prefix) :]}"
            else:
                message = f"field {wire!r} is wrong: {exc.message}"
            raise ProtocolError(ErrorCode.BAD_FIELD, message, field=path) from None

    return check


def _struct(cls: type[Struct]) -> dict[str, Any]:
    return _spec(_struct_check(cls), _dump_struct)


def _dump_struct(value: Struct) -> dict[str, Any]:
    return value.to_dict()


def _structs(cls: type[Struct], max_len: int) -> dict[str, Any]:
    return _list(_struct_check(cls), max_len, _dump_struct)


_ID = _spec(_pattern(GAME_ID_PATTERN, GAME_ID_TEXT))
_TOKEN = _spec(_pattern(r"[A-Za-z0-9_-]{16,128}", "16 to 128 letters, digits, '-' or '_'"))
_VERSION = _spec(_int(0, MAX_VERSION))
_EPOCH = _spec(_int(0, MAX_EPOCH_MS))
_COUNT = _spec(_int(0, MAX_VERSION))
_NAME = _spec(_name)
_ROOM = _spec(_room)
_VARIANT = _spec(_choice(tuple(VARIANTS)))
_STATUS = _spec(_choice(RACER_STATUSES))
_VIEW = _spec(_plain_map)
_SUMMARY = _spec(_plain_map)
_MOVE = _spec(_move, move_json)
_HEX64 = _spec(_pattern(r"[0-9a-f]{64}", "64 lowercase hexadecimal digits (a sha256)"))
_SALT = _spec(_pattern(r"[0-9a-f]{32,64}", "32 to 64 lowercase hexadecimal digits"))
_NUMBER = _spec(_deal_number, str)
_RULES = tuple(rule.value for rule in ReserveRule)
_DATE = _spec(_pattern(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", "a date written YYYY-MM-DD"))
_TYPE_NAME = _spec(_pattern(r"[a-z_]{1,32}", "a message type name"))
_PLAIN_MOVES = _list(_plain_map, MAX_LIST)
_RATING = _spec(_int(0, 10_000))
_DEVIATION = _spec(_int(0, 350))


def _ref(value: Any, wire: str) -> Ref:
    if type(value) is int:
        if not -MAX_REF <= value <= MAX_REF:
            raise _bad(wire, f"must be an integer of at most {MAX_REF} in size, or text")
        return value
    if type(value) is str:
        if len(value) > MAX_REF_TEXT:
            raise _bad(wire, f"must be text of at most {MAX_REF_TEXT} characters, or an integer")
        return value
    raise _bad(wire, f"must be text or an integer, not {_kind(value)}")


def deal_commitment(number: int, salt: str) -> str:
    """Return the commitment to a secret deal: sha256 hex of the ASCII text ``"<number>:<salt>"``."""
    return hashlib.sha256(f"{number}:{salt}".encode("ascii")).hexdigest()


# ---------------------------------------------------------------- machinery


class _Field:
    __slots__ = ("attr", "check", "default", "dump", "required", "wire")

    def __init__(self, f: dataclasses.Field[Any]) -> None:
        self.attr = f.name
        self.wire = f.metadata.get("wire", f.name)
        self.check: Check = f.metadata["check"]
        self.dump: Dump | None = f.metadata["dump"]
        self.required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        factory = f.default_factory
        self.default: Callable[[], Any] | None = (
            None
            if self.required or f.default is None
            else factory
            if factory is not dataclasses.MISSING
            else (lambda value=f.default: value)
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Struct:
    """Be the base of every wire record: checked on construction, converted by ``to_dict``/``from_dict``."""

    _FIELDS: ClassVar[tuple[_Field, ...]] = ()
    _WIRE: ClassVar[Mapping[str, _Field]] = {}

    def __post_init__(self) -> None:
        for f in self._fields():
            value = getattr(self, f.attr)
            if value is None and not f.required:
                if f.default is not None:  # None means "absent": the default applies
                    object.__setattr__(self, f.attr, f.default())
                continue
            checked = f.check(value, f.wire)
            if checked is not value:
                object.__setattr__(self, f.attr, checked)
        self._check()

    @classmethod
    def trusted(cls, **values: Any) -> Self:
        """Build a record from data the server itself derived, skipping the field checks.

        For the server's hot path only (answers and progress built from the engine's own
        output). The integration tests' clients check every frame the server sends against
        the contract, so a record built this way that broke it would fail them.
        """
        record = object.__new__(cls)
        for f in cls._fields():
            if f.attr in values:
                object.__setattr__(record, f.attr, values[f.attr])
            else:
                object.__setattr__(record, f.attr, None if f.default is None else f.default())
        return record

    @classmethod
    def _fields(cls) -> tuple[_Field, ...]:
        fields = cls.__dict__.get("_FIELDS") or ()
        if not fields:
            own = [_Field(f) for f in dataclasses.fields(cls)]
            own.sort(key=lambda f: f.attr == "ref")  # the ref goes last on the wire
            fields = tuple(own)
            cls._FIELDS = fields
            cls._WIRE = {f.wire: f for f in fields}
        return fields

    def _check(self) -> None:
        """Check relations between fields (overridden where there are some)."""

    def to_dict(self) -> dict[str, Any]:
        """Return the wire map of this record (plain dicts, lists, text, integers, booleans)."""
        out: dict[str, Any] = {}
        for f in self._fields():
            value = getattr(self, f.attr)
            if value is None:
                continue
            out[f.wire] = value if f.dump is None else f.dump(value)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """Return the record a wire map describes, or raise ``ProtocolError`` (``bad_field``)."""
        cls._fields()
        known = cls._WIRE
        kwargs: dict[str, Any] = {}
        for key, value in data.items():
            f = known.get(key)
            if f is None:
                if key == "type" and issubclass(cls, Message):
                    continue
                raise _bad(str(key)[:40], f"is not a field of {cls._describe()}")
            if value is not None:
                kwargs[f.attr] = value
        for f in cls._FIELDS:
            if f.required and f.attr not in kwargs:
                raise _bad(f.wire, f"is missing: {cls._describe()} requires it")
        return cls(**kwargs)

    @classmethod
    def _describe(cls) -> str:
        return f"a {cls.__name__} record"


@dataclass(frozen=True, slots=True, kw_only=True)
class Message(Struct):
    """Be the base of every message: a ``TYPE`` name and an optional client-chosen ``ref``."""

    TYPE: ClassVar[str] = ""
    FROM: ClassVar[str] = ""
    ref: Ref | None = field(default=None, metadata=_spec(_ref))

    def answering(self, ref: Ref | None) -> Self:
        """Return this message carrying ``ref`` (no checks are repeated: only ``ref`` changes)."""
        values = {f.attr: getattr(self, f.attr) for f in self._fields()}
        values["ref"] = ref
        return type(self).trusted(**values)

    def to_dict(self) -> dict[str, Any]:
        """Return the wire map of this message, ``type`` first."""
        out: dict[str, Any] = {"type": self.TYPE}
        for f in self._fields():
            value = getattr(self, f.attr)
            if value is None:
                continue
            out[f.wire] = value if f.dump is None else f.dump(value)
        return out

    @classmethod
    def _describe(cls) -> str:
        return f"a {cls.TYPE!r} message"


MESSAGES: dict[str, type[Message]] = {}
"""Every message class by its ``type`` name."""

_CLIENT = "client"
_SERVER = "server"


_M = TypeVar("_M", bound=type[Message])
_S = TypeVar("_S", bound=type[Struct])


def _message(sender: str) -> Callable[[_M], _M]:
    def register(cls: _M) -> _M:
        assert cls.TYPE and cls.TYPE not in MESSAGES, cls
        cls.FROM = sender
        cls._fields()
        MESSAGES[cls.TYPE] = cls
        return cls

    return register


def _struct_done(cls: _S) -> _S:
    cls._fields()
    return cls


# ---------------------------------------------------------------- nested records


@_struct_done
@dataclass(frozen=True, slots=True, kw_only=True)
class Options(Struct):
    """Hold the options of a race: undo, hints, spectators, reserve rule, spectator delay.

    Friend races and quick matches allow undo and hints unless the host says otherwise.
    """

    undo: bool = field(default=True, metadata=_spec(_bool))
    hints: bool = field(default=True, metadata=_spec(_bool))
    spectators: bool = field(default=True, metadata=_spec(_bool))
    reserve_rule: str = field(
        default=ReserveRule.ANY_TIME.value, metadata=_spec(_choice(tuple(r.value for r in ReserveRule)))
    )
    spectator_delay: int = field(default=0, metadata=_spec(_int(0, 300)))
    rated: bool = field(default=False, metadata=_spec(_bool))
    """Whether the race changes its racers' ratings (quick matches are; a friend's room opts in)."""


@_struct_done
@dataclass(frozen=True, slots=True, kw_only=True)
class RoomPlayer(Struct):
    """Describe one player in a room: id, display name, ready flag."""

    player: str = field(metadata=_ID)
    name: str = field(metadata=_NAME)
    ready: bool = field(metadata=_spec(_bool))


@_struct_done
@dataclass(frozen=True, slots=True, kw_only=True)
class Racer(Struct):
    """Name one racer of a race (the roster entry): player id and display name."""

    player: str = field(metadata=_ID)
    name: str = field(metadata=_NAME)


@_struct_done
@dataclass(frozen=True, slots=True, kw_only=True)
class RacerProgress(Struct):
    """Show one other racer's progress: summary and status, never the board."""

    player: str = field(metadata=_ID)
    summary: dict[str, Any] = field(metadata=_SUMMARY)
    status: str = field(metadata=_STATUS)


@_struct_done
@dataclass(frozen=True, slots=True, kw_only=True)
class RacerBoard(Struct):
    """Show one racer to spectators: spectator view, summary and status."""

    player: str = field(metadata=_ID)
    name: str = field(metadata=_NAME)
    view: dict[str, Any] = field(metadata=_VIEW)
    summary: dict[str, Any] = field(metadata=_SUMMARY)
    status: str = field(metadata=_STATUS)


@_struct_done
@dataclass(frozen=True, slots=True, kw_only=True)
class Standing(Struct):
    """Give one line of a race's final standings."""

    player: str = field(metadata=_ID)
    name: str = field(metadata=_NAME)
    score: int = field(metadata=_spec(_int(0, 10**6)))
    runs: int = field(metadata=_spec(_int(0, 8)))
    elapsed: int = field(metadata=_COUNT)
    status: str = field(metadata=_STATUS)
    rank: int = field(metadata=_spec(_int(1, MAX_PLAYERS)))


@_struct_done
@dataclass(frozen=True, slots=True, kw_only=True)
class GameInfo(Struct):
    """Describe one live game in the spectators' list."""

    game: str = field(metadata=_ID)
    variant: str = field(metadata=_VARIANT)
    players: tuple[Racer, ...] = field(metadata=_structs(Racer, MAX_PLAYERS))
    start: int = field(metadata=_EPOCH)
    spectators: int = field(metadata=_COUNT)
    room: str | None = field(default=None, metadata=_ROOM)
    racers: tuple[RacerProgress, ...] = field(default=(), metadata=_structs(RacerProgress, MAX_PLAYERS))
    """Each racer's score and progress now (elapsed time is ``now - start``)."""
    rematch_of: str | None = field(default=None, metadata=_ID)
    """The race this one is a rematch of, when its racers asked to race again."""


@_struct_done
@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerLog(Struct):
    """Hold one racer's move log in a replay: moves with their times (ms after the start)."""

    player: str = field(metadata=_ID)
    name: str = field(metadata=_NAME)
    moves: tuple[dict[str, Any], ...] = field(metadata=_PLAIN_MOVES)
    times: tuple[int, ...] = field(metadata=_list(_int(0, MAX_EPOCH_MS), MAX_LIST))

    def _check(self) -> None:
        if len(self.moves) != len(self.times):
            raise _bad("times", "must have one time for each move")


# ---------------------------------------------------------------- session


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class Hello(Message):
    """Open a session: a display name, and the secret token of an earlier session to resume it."""

    TYPE: ClassVar[str] = "hello"
    name: str = field(metadata=_NAME)
    token: str | None = field(default=None, metadata=_TOKEN)
    client: str | None = field(default=None, metadata=_spec(_text(64)))


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class Welcome(Message):
    """Answer hello: the player's id, secret token, name, protocol version, clock and live games."""

    TYPE: ClassVar[str] = "welcome"
    player: str = field(metadata=_ID)
    token: str = field(metadata=_TOKEN)
    name: str = field(metadata=_NAME)
    protocol: int = field(default=1, metadata=_spec(_int(1, 1000)))
    now: int = field(metadata=_EPOCH)
    games: tuple[str, ...] = field(default=(), metadata=_list(_ID["check"], 16))


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class Ping(Message):
    """Ask for a pong (keep-alive and round-trip time)."""

    TYPE: ClassVar[str] = "ping"


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class Pong(Message):
    """Answer ping with the server's clock."""

    TYPE: ClassVar[str] = "pong"
    now: int = field(metadata=_EPOCH)


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class Ok(Message):
    """Acknowledge a request that has no other answer; ``to`` names the request's type."""

    TYPE: ClassVar[str] = "ok"
    to: str = field(metadata=_TYPE_NAME)


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class Error(Message):
    """Report a failure: a stable code, a sentence for people, and the offending field if any."""

    TYPE: ClassVar[str] = "error"
    code: str = field(metadata=_spec(_choice(tuple(c.value for c in ErrorCode))))
    message: str = field(metadata=_spec(_text(512)))
    retry_after_ms: int | None = field(default=None, metadata=_spec(_int(0, MAX_RETRY_AFTER_MS)))
    """Present when the same request may be sent again after this many milliseconds
    (the server's storage is passing through an outage)."""
    field: str | None = field(default=None, metadata=_spec(_text(64)))


def error_message(error: ProtocolError) -> Error:
    """Return the ``error`` message reporting ``error`` (text clipped to the limits)."""
    return Error(
        code=error.code.value,
        message=error.message[:512],
        field=None if error.field is None else error.field[:64],
        retry_after_ms=error.retry_after_ms,
        ref=error.ref,
    )


# ---------------------------------------------------------------- rooms


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class RoomCreate(Message):
    """Create a room to race friends; the creator becomes its host."""

    TYPE: ClassVar[str] = "room_create"
    variant: str = field(metadata=_VARIANT)
    max_players: int = field(default=2, metadata=_spec(_int(2, MAX_PLAYERS)))
    options: Options = field(default_factory=Options, metadata=_struct(Options))


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class RoomJoin(Message):
    """Join a room by its code."""

    TYPE: ClassVar[str] = "room_join"
    room: str = field(metadata=_ROOM)


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class Ready(Message):
    """Say whether this player is ready to start."""

    TYPE: ClassVar[str] = "ready"
    ready: bool = field(metadata=_spec(_bool))


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class RoomLeave(Message):
    """Leave the room (a leaving host hands the room to the next player)."""

    TYPE: ClassVar[str] = "room_leave"


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class RoomStart(Message):
    """Start the room's race (host only, every player ready, at least two players)."""

    TYPE: ClassVar[str] = "room_start"


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class RoomState(Message):
    """Tell the room's state: code, variant, options, host and players (sent on every change)."""

    TYPE: ClassVar[str] = "room"
    room: str = field(metadata=_ROOM)
    variant: str = field(metadata=_VARIANT)
    max_players: int = field(metadata=_spec(_int(2, MAX_PLAYERS)))
    options: Options = field(metadata=_struct(Options))
    host: str = field(metadata=_ID)
    players: tuple[RoomPlayer, ...] = field(metadata=_structs(RoomPlayer, MAX_PLAYERS))


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class Countdown(Message):
    """Announce that the room's race starts in ``seconds``, at server time ``start``."""

    TYPE: ClassVar[str] = "countdown"
    room: str = field(metadata=_ROOM)
    seconds: int = field(metadata=_spec(_int(0, 60)))
    start: int = field(metadata=_EPOCH)


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class Rematch(Message):
    """Ask to race the same players again after a race between players ended."""

    TYPE: ClassVar[str] = "rematch"
    game: str = field(metadata=_ID)


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class RematchOffered(Message):
    """Tell a racer that another racer of ``game`` opened ``room`` to race them again."""

    TYPE: ClassVar[str] = "rematch_offered"
    game: str = field(metadata=_ID)
    room: str = field(metadata=_ROOM)
    player: str = field(metadata=_ID)
    name: str = field(metadata=_NAME)


# ---------------------------------------------------------------- quick match


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class QueueJoin(Message):
    """Enter the quick-match queue for a variant."""

    TYPE: ClassVar[str] = "queue_join"
    variant: str = field(metadata=_VARIANT)
    rated: bool = field(default=True, metadata=_spec(_bool))
    """A rated match pairs players of close ratings; ``false`` pairs whoever waits longest."""


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class Queued(Message):
    """Confirm the player waits in the queue; ``waiting`` counts the players waiting."""

    TYPE: ClassVar[str] = "queued"
    variant: str = field(metadata=_VARIANT)
    waiting: int = field(metadata=_COUNT)
    rated: bool = field(default=False, metadata=_spec(_bool))
    rating: int | None = field(default=None, metadata=_RATING)
    """The player's rating in the variant, which the rated queue matches on."""


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class QueueCancel(Message):
    """Leave the quick-match queue."""

    TYPE: ClassVar[str] = "queue_cancel"


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class MatchFound(Message):
    """Announce the opponents found; the race starts at server time ``start``."""

    TYPE: ClassVar[str] = "match_found"
    variant: str = field(metadata=_VARIANT)
    players: tuple[Racer, ...] = field(metadata=_structs(Racer, MAX_PLAYERS))
    start: int = field(metadata=_EPOCH)


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class QueueTimeout(Message):
    """Tell the player nobody was found after ``waited`` seconds; they are out of the queue."""

    TYPE: ClassVar[str] = "queue_timeout"
    variant: str = field(metadata=_VARIANT)
    waited: int = field(metadata=_COUNT)


# ---------------------------------------------------------------- racing


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class RaceStarted(Message):
    """Start a race (event ``v`` 1): the deal's commitment, the player's own view, the roster."""

    TYPE: ClassVar[str] = "race_started"
    game: str = field(metadata=_ID)
    v: int = field(metadata=_VERSION)
    variant: str = field(metadata=_VARIANT)
    options: Options = field(metadata=_struct(Options))
    start: int = field(metadata=_EPOCH)
    commitment: str = field(metadata=_HEX64)
    view: dict[str, Any] = field(metadata=_VIEW)
    roster: tuple[Racer, ...] = field(metadata=_structs(Racer, MAX_PLAYERS))
    room: str | None = field(default=None, metadata=_ROOM)
    daily: str | None = field(default=None, metadata=_DATE)
    mode: str = field(default="race", metadata=_spec(_choice(GAME_MODES)))


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class PlayMove(Message):
    """Play a move in a game, based on the last version the client saw."""

    TYPE: ClassVar[str] = "move"
    game: str = field(metadata=_ID)
    v: int = field(metadata=_VERSION)
    move: Move = field(metadata=_MOVE)


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class DealReserve(Message):
    """Deal the reserve stock onto the columns."""

    TYPE: ClassVar[str] = "deal"
    game: str = field(metadata=_ID)
    v: int = field(metadata=_VERSION)


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class Undo(Message):
    """Take back the player's last move (when the race allows undo)."""

    TYPE: ClassVar[str] = "undo"
    game: str = field(metadata=_ID)
    v: int = field(metadata=_VERSION)


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class HintRequest(Message):
    """Ask for hints on the current board (when the race allows hints)."""

    TYPE: ClassVar[str] = "hint"
    game: str = field(metadata=_ID)
    v: int = field(metadata=_VERSION)


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class Resign(Message):
    """Give up the race."""

    TYPE: ClassVar[str] = "resign"
    game: str = field(metadata=_ID)
    v: int = field(metadata=_VERSION)


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class Accepted(Message):
    """Tell the player their move, deal, undo or resignation took effect: new view, version, summary."""

    TYPE: ClassVar[str] = "accepted"
    game: str = field(metadata=_ID)
    v: int = field(metadata=_VERSION)
    view: dict[str, Any] = field(metadata=_VIEW)
    summary: dict[str, Any] = field(metadata=_SUMMARY)
    status: str = field(default="playing", metadata=_STATUS)


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class Hints(Message):
    """Answer hint: the suggested moves, best first, for the board at version ``v``."""

    TYPE: ClassVar[str] = "hints"
    game: str = field(metadata=_ID)
    v: int = field(metadata=_VERSION)
    moves: tuple[dict[str, Any], ...] = field(metadata=_list(_plain_map, 64))


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class Progress(Message):
    """Tell a racer another racer's progress: summary and status, never the board."""

    TYPE: ClassVar[str] = "progress"
    game: str = field(metadata=_ID)
    v: int = field(metadata=_VERSION)
    player: str = field(metadata=_ID)
    summary: dict[str, Any] = field(metadata=_SUMMARY)
    status: str = field(metadata=_STATUS)


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class RaceEnded(Message):
    """End the race: the standings, and the deal number and salt that prove the commitment."""

    TYPE: ClassVar[str] = "race_ended"
    game: str = field(metadata=_ID)
    v: int = field(metadata=_VERSION)
    standings: tuple[Standing, ...] = field(metadata=_structs(Standing, MAX_PLAYERS))
    number: int | None = field(default=None, metadata=_NUMBER)
    salt: str | None = field(default=None, metadata=_SALT)
    """Absent for a daily game until its day is over: everyone plays that deal all day."""


# ---------------------------------------------------------------- resume


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class Resume(Message):
    """Rejoin a game after a reconnect, giving the last version seen (0: none)."""

    TYPE: ClassVar[str] = "resume"
    game: str = field(metadata=_ID)
    v: int = field(metadata=_VERSION)


EVENT_TYPES = frozenset({"race_started", "accepted", "progress", "race_ended"})
"""Types of the versioned events of a racer's stream (what a batch may hold)."""


def _event_of(value: Any, wire: str) -> Message:
    if isinstance(value, Message):
        return value
    if type(value) is dict:
        try:
            return from_dict(value)
        except ProtocolError as exc:
            raise _bad(wire, f"holds a wrong event: {exc.message}") from None
    raise _bad(wire, f"must hold event objects, not {_kind(value)}")


def _event(value: Any, wire: str) -> Message:
    message = _event_of(value, wire)
    if message.TYPE not in EVENT_TYPES:
        raise _bad(wire, f"must hold only events ({', '.join(sorted(EVENT_TYPES))}), not {message.TYPE!r}")
    return message


def _check_event_run(game: str, v: int, events: tuple[Message, ...]) -> None:
    versions = [getattr(e, "v", 0) for e in events]
    if any(b != a + 1 for a, b in itertools.pairwise(versions)):
        raise _bad("events", "must have consecutive versions")
    if versions and versions[-1] != v:
        raise _bad("v", "must be the version of the last event")
    if any(getattr(e, "game", game) != game for e in events):
        raise _bad("events", "must all belong to the batch's game")


def _dump_message(value: Message) -> dict[str, Any]:
    return value.to_dict()


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class Batch(Message):
    """Answer resume with exactly the events missed, oldest first; ``v`` is the latest version."""

    TYPE: ClassVar[str] = "batch"
    game: str = field(metadata=_ID)
    v: int = field(metadata=_VERSION)
    events: tuple[Message, ...] = field(metadata=_list(_event, MAX_LIST, _dump_message))

    def _check(self) -> None:
        _check_event_run(self.game, self.v, self.events)


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class Snapshot(Message):
    """Answer resume with the whole state of the player's race at version ``v``."""

    TYPE: ClassVar[str] = "snapshot"
    game: str = field(metadata=_ID)
    v: int = field(metadata=_VERSION)
    variant: str = field(metadata=_VARIANT)
    options: Options = field(metadata=_struct(Options))
    start: int = field(metadata=_EPOCH)
    now: int = field(metadata=_EPOCH)
    commitment: str = field(metadata=_HEX64)
    roster: tuple[Racer, ...] = field(metadata=_structs(Racer, MAX_PLAYERS))
    view: dict[str, Any] = field(metadata=_VIEW)
    summary: dict[str, Any] = field(metadata=_SUMMARY)
    status: str = field(metadata=_STATUS)
    racers: tuple[RacerProgress, ...] = field(metadata=_structs(RacerProgress, MAX_PLAYERS))
    mode: str = field(default="race", metadata=_spec(_choice(GAME_MODES)))
    daily: str | None = field(default=None, metadata=_DATE)


# ---------------------------------------------------------------- spectating


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class GamesList(Message):
    """List live games (of one variant, or all); with ``subscribe``, receive games updates after."""

    TYPE: ClassVar[str] = "games_list"
    variant: str | None = field(default=None, metadata=_VARIANT)
    subscribe: bool = field(default=False, metadata=_spec(_bool))


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class Games(Message):
    """Answer games_list with the live games that may be watched."""

    TYPE: ClassVar[str] = "games"
    games: tuple[GameInfo, ...] = field(metadata=_structs(GameInfo, MAX_LIST))


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class GamesUpdate(Message):
    """Tell a subscriber which live games were added (or changed) and which were removed."""

    TYPE: ClassVar[str] = "games_update"
    added: tuple[GameInfo, ...] = field(default=(), metadata=_structs(GameInfo, MAX_LIST))
    removed: tuple[str, ...] = field(default=(), metadata=_list(_ID["check"], MAX_LIST))


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class Watch(Message):
    """Watch a live game, named by its game id or by its room's code (exactly one)."""

    # A spectator coming back after a dropped connection names the game and ``v``, the last
    # version it saw: it then gets the events it missed (``spectate_batch``) when they are few.
    TYPE: ClassVar[str] = "watch"
    game: str | None = field(default=None, metadata=_ID)
    room: str | None = field(default=None, metadata=_ROOM)
    v: int | None = field(default=None, metadata=_VERSION)

    def _check(self) -> None:
        if (self.game is None) == (self.room is None):
            raise _bad("game", "or 'room' must be given, and not both")
        if self.v is not None and self.game is None:
            raise _bad("v", "needs 'game': a spectator resumes a game by its id")


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class Unwatch(Message):
    """Stop watching a game."""

    TYPE: ClassVar[str] = "unwatch"
    game: str = field(metadata=_ID)


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class SpectatorSnapshot(Message):
    """Answer watch with every racer's board as spectators see it, the clock and the audience."""

    TYPE: ClassVar[str] = "spectate"
    game: str = field(metadata=_ID)
    v: int = field(metadata=_VERSION)
    variant: str = field(metadata=_VARIANT)
    options: Options = field(metadata=_struct(Options))
    start: int = field(metadata=_EPOCH)
    now: int = field(metadata=_EPOCH)
    spectators: int = field(metadata=_COUNT)
    racers: tuple[RacerBoard, ...] = field(metadata=_structs(RacerBoard, MAX_PLAYERS))
    room: str | None = field(default=None, metadata=_ROOM)


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class SpectateEvent(Message):
    """Tell spectators one racer's board changed (delayed by the race's spectator delay)."""

    TYPE: ClassVar[str] = "spectate_event"
    game: str = field(metadata=_ID)
    v: int = field(metadata=_VERSION)
    player: str = field(metadata=_ID)
    view: dict[str, Any] = field(metadata=_VIEW)
    summary: dict[str, Any] = field(metadata=_SUMMARY)
    status: str = field(metadata=_STATUS)


SPECTATOR_EVENT_TYPES = frozenset({"spectate_event", "race_ended"})
"""Types of the versioned events of a spectator's stream (what a spectate_batch may hold)."""


def _spectator_event(value: Any, wire: str) -> Message:
    message = _event_of(value, wire)
    if message.TYPE not in SPECTATOR_EVENT_TYPES:
        allowed = ", ".join(sorted(SPECTATOR_EVENT_TYPES))
        raise _bad(wire, f"must hold only spectator events ({allowed}), not {message.TYPE!r}")
    return message


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class SpectateBatch(Message):
    """Answer a spectator's watch with ``v``: exactly the events missed, oldest first."""

    # ``v`` is the last event's version (or the version the spectator gave, when it missed
    # nothing); ``spectators`` is the audience now.
    TYPE: ClassVar[str] = "spectate_batch"
    game: str = field(metadata=_ID)
    v: int = field(metadata=_VERSION)
    spectators: int = field(metadata=_COUNT)
    events: tuple[Message, ...] = field(metadata=_list(_spectator_event, MAX_LIST, _dump_message))

    def _check(self) -> None:
        _check_event_run(self.game, self.v, self.events)


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class Spectators(Message):
    """Tell everyone in a game how many spectators watch it now."""

    TYPE: ClassVar[str] = "spectators"
    game: str = field(metadata=_ID)
    count: int = field(metadata=_COUNT)


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class Replay(Message):
    """Ask for the move log of a finished game."""

    TYPE: ClassVar[str] = "replay"
    game: str = field(metadata=_ID)


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayLog(Message):
    """Answer replay: the deal (number, salt), options and every racer's moves with their times."""

    TYPE: ClassVar[str] = "replay_log"
    game: str = field(metadata=_ID)
    variant: str = field(metadata=_VARIANT)
    options: Options = field(metadata=_struct(Options))
    start: int = field(metadata=_EPOCH)
    number: int = field(metadata=_NUMBER)
    salt: str = field(metadata=_SALT)
    logs: tuple[PlayerLog, ...] = field(metadata=_structs(PlayerLog, MAX_PLAYERS))
    standings: tuple[Standing, ...] = field(default=(), metadata=_structs(Standing, MAX_PLAYERS))


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayPositions(Message):
    """Ask for every position one racer of a finished game went through, to step through it."""

    TYPE: ClassVar[str] = "replay_positions"
    game: str = field(metadata=_ID)
    player: str = field(metadata=_ID)


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayPositionsInfo(Message):
    """Answer replay_positions: the racer's views from the deal on, one after each move."""

    TYPE: ClassVar[str] = "replay_positions_info"
    game: str = field(metadata=_ID)
    player: str = field(metadata=_ID)
    name: str = field(metadata=_NAME)
    variant: str = field(metadata=_VARIANT)
    views: tuple[dict[str, Any], ...] = field(metadata=_list(_plain_map, MAX_LIST + 1))
    """``views[0]`` is the deal, ``views[i + 1]`` the board after ``moves[i]``, as the racer saw it."""
    moves: tuple[dict[str, Any], ...] = field(metadata=_PLAIN_MOVES)
    """The racer's moves in the order played; an undo is ``{"undo": true}``."""
    times: tuple[int, ...] = field(metadata=_list(_int(0, MAX_EPOCH_MS), MAX_LIST))
    verdict: str | None = field(default=None, metadata=_spec(_choice(VERDICTS)))
    """The post-game analysis's verdict on the deal, once it is computed."""
    slipped: int | None = field(default=None, metadata=_COUNT)
    """The index in ``moves`` of the move after which the deal could no longer be won."""

    def _check(self) -> None:
        if len(self.views) != len(self.moves) + 1 or len(self.times) != len(self.moves):
            raise _bad("views", "must hold one view more than there are moves, and one time per move")


# ---------------------------------------------------------------- daily tournament, account


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class DailyInfo(Message):
    """Ask about today's daily deal of a variant (and yesterday's revealed one)."""

    TYPE: ClassVar[str] = "daily_info"
    variant: str = field(default="scorpion", metadata=_VARIANT)


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class Daily(Message):
    """Answer daily_info: the date, commitment, closing time, the player's attempt, yesterday's reveal."""

    TYPE: ClassVar[str] = "daily"
    date: str = field(metadata=_DATE)
    variant: str = field(metadata=_VARIANT)
    commitment: str = field(metadata=_HEX64)
    ends: int = field(metadata=_EPOCH)
    played: bool = field(metadata=_spec(_bool))
    finished: bool = field(default=False, metadata=_spec(_bool))
    previous: dict[str, Any] | None = field(default=None, metadata=_spec(_plain_map))
    """Yesterday's deal revealed: {"date", "number" (text), "salt", "commitment"}."""


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class DailyStart(Message):
    """Start today's daily deal: the one ranked attempt, or unranked practice once it is over."""

    TYPE: ClassVar[str] = "daily_start"
    variant: str = field(default="scorpion", metadata=_VARIANT)
    practice: bool = field(default=False, metadata=_spec(_bool))


@_struct_done
@dataclass(frozen=True, slots=True, kw_only=True)
class LeaderboardEntry(Struct):
    """One line of a daily leaderboard."""

    rank: int = field(metadata=_spec(_int(1, MAX_VERSION)))
    player: str = field(metadata=_ID)
    name: str = field(metadata=_NAME)
    score: int = field(metadata=_spec(_int(0, 10**6)))
    elapsed: int = field(metadata=_COUNT)
    finished: int = field(metadata=_EPOCH)


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class Leaderboard(Message):
    """Ask for a page of a day's leaderboard (today by default); ``subscribe`` pushes updates."""

    TYPE: ClassVar[str] = "leaderboard"
    variant: str = field(default="scorpion", metadata=_VARIANT)
    date: str | None = field(default=None, metadata=_DATE)
    offset: int = field(default=0, metadata=_spec(_int(0, MAX_VERSION)))
    limit: int = field(default=20, metadata=_spec(_int(1, 100)))
    subscribe: bool = field(default=False, metadata=_spec(_bool))


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class AroundMe(Message):
    """Ask for the player's own rank with ``radius`` neighbours above and below."""

    TYPE: ClassVar[str] = "around_me"
    variant: str = field(default="scorpion", metadata=_VARIANT)
    date: str | None = field(default=None, metadata=_DATE)
    radius: int = field(default=5, metadata=_spec(_int(0, 50)))


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class LeaderboardPage(Message):
    """Answer leaderboard/around_me (or push an update): entries from rank ``offset + 1``."""

    TYPE: ClassVar[str] = "leaderboard_page"
    variant: str = field(metadata=_VARIANT)
    date: str = field(metadata=_DATE)
    offset: int = field(metadata=_COUNT)
    total: int = field(metadata=_COUNT)
    entries: tuple[LeaderboardEntry, ...] = field(metadata=_structs(LeaderboardEntry, 101))
    me: int | None = field(default=None, metadata=_spec(_int(1, MAX_VERSION)))
    """The asking player's rank, when they are on this day's board."""


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class SoloNew(Message):
    """Start a solo game on a fresh secret deal (New Game); ``save`` keeps it resumable."""

    TYPE: ClassVar[str] = "solo_new"
    variant: str = field(default="scorpion", metadata=_VARIANT)
    reserve_rule: str = field(
        default="any-time", metadata=_spec(_choice(tuple(r.value for r in ReserveRule)))
    )
    save: bool = field(default=True, metadata=_spec(_bool))


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class SoloReplay(Message):
    """Start the same deal as one of the player's solo games again (Replay)."""

    TYPE: ClassVar[str] = "solo_replay"
    game: str = field(metadata=_ID)


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class SoloResume(Message):
    """Continue a saved solo game, from any device (answered with snapshot)."""

    TYPE: ClassVar[str] = "solo_resume"
    game: str = field(metadata=_ID)


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class SavedGames(Message):
    """List the player's saved solo games in progress."""

    TYPE: ClassVar[str] = "saved_games"


@_struct_done
@dataclass(frozen=True, slots=True, kw_only=True)
class SavedGame(Struct):
    """One saved solo game."""

    game: str = field(metadata=_ID)
    variant: str = field(metadata=_VARIANT)
    start: int = field(metadata=_EPOCH)
    summary: dict[str, Any] = field(metadata=_SUMMARY)


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class SavedGamesList(Message):
    """Answer saved_games: the saved solo games, newest first."""

    TYPE: ClassVar[str] = "saved_games_list"
    games: tuple[SavedGame, ...] = field(metadata=_structs(SavedGame, MAX_LIST))


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class Stats(Message):
    """Ask for the player's statistics (every variant, or one)."""

    TYPE: ClassVar[str] = "stats"
    variant: str | None = field(default=None, metadata=_VARIANT)


@_struct_done
@dataclass(frozen=True, slots=True, kw_only=True)
class VariantStats(Struct):
    """A player's record in one variant (kept separately per variant)."""

    variant: str = field(metadata=_VARIANT)
    started: int = field(metadata=_COUNT)
    won: int = field(metadata=_COUNT)
    best_score: int = field(metadata=_COUNT)
    best_time: int | None = field(default=None, metadata=_COUNT)
    average_score: int = field(metadata=_COUNT)
    streak: int = field(metadata=_COUNT)
    longest_streak: int = field(metadata=_COUNT)
    dailies: int = field(metadata=_COUNT)


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class StatsInfo(Message):
    """Answer stats."""

    TYPE: ClassVar[str] = "stats_info"
    stats: tuple[VariantStats, ...] = field(metadata=_structs(VariantStats, len(VARIANTS)))


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class ForgetMe(Message):
    """Erase the player's identity and records (answered with forgotten, then the server closes)."""

    TYPE: ClassVar[str] = "forget_me"


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class Forgotten(Message):
    """Answer forget_me with what was removed; the old token no longer works."""

    TYPE: ClassVar[str] = "forgotten"
    removed: dict[str, Any] = field(metadata=_spec(_plain_map))


# ---------------------------------------------------------------- ratings and profiles


@_struct_done
@dataclass(frozen=True, slots=True, kw_only=True)
class RatingInfo(Struct):
    """A player's Glicko-2 rating in one variant (rounded), and their place on its board."""

    variant: str = field(metadata=_VARIANT)
    rating: int = field(metadata=_RATING)
    deviation: int = field(metadata=_DEVIATION)
    games: int = field(metadata=_COUNT)
    """Rated races played in the variant."""
    provisional: bool = field(metadata=_spec(_bool))
    """The deviation is above 110: too few recent rated races to trust the rating yet."""
    rank: int | None = field(default=None, metadata=_spec(_int(1, MAX_VERSION)))
    best: int | None = field(default=None, metadata=_RATING)
    """The highest rating reached in the variant."""


@_struct_done
@dataclass(frozen=True, slots=True, kw_only=True)
class RatingDelta(Struct):
    """One racer's rating before and after a rated race (the change is ``after - before``)."""

    player: str = field(metadata=_ID)
    name: str = field(metadata=_NAME)
    before: int = field(metadata=_RATING)
    after: int = field(metadata=_RATING)
    deviation: int = field(metadata=_DEVIATION)
    provisional: bool = field(metadata=_spec(_bool))


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class RatingChange(Message):
    """Tell a racer how a rated race they finished changed every racer's rating."""

    TYPE: ClassVar[str] = "rating_change"
    game: str = field(metadata=_ID)
    variant: str = field(metadata=_VARIANT)
    changes: tuple[RatingDelta, ...] = field(metadata=_structs(RatingDelta, MAX_PLAYERS))


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class ProfileRequest(Message):
    """Ask for a player's profile (the asking player's own when ``player`` is absent)."""

    TYPE: ClassVar[str] = "profile"
    player: str | None = field(default=None, metadata=_ID)


@_struct_done
@dataclass(frozen=True, slots=True, kw_only=True)
class RecentGame(Struct):
    """One finished game on a profile: what it was, how the player placed, whether it replays."""

    game: str = field(metadata=_ID)
    variant: str = field(metadata=_VARIANT)
    mode: str = field(metadata=_spec(_choice(GAME_MODES)))
    start: int = field(metadata=_EPOCH)
    racers: int = field(metadata=_spec(_int(1, MAX_PLAYERS)))
    rank: int = field(metadata=_spec(_int(1, MAX_PLAYERS)))
    score: int = field(metadata=_spec(_int(0, 10**6)))
    status: str = field(metadata=_STATUS)
    rated: bool = field(default=False, metadata=_spec(_bool))
    change: int | None = field(default=None, metadata=_spec(_int(-10_000, 10_000)))
    """The rating change the game made, for a rated race."""
    replayable: bool = field(default=True, metadata=_spec(_bool))
    """Whether ``replay`` serves it now (a daily game's day must be over first)."""


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class Profile(Message):
    """Answer profile: name, ratings and statistics per variant, and the newest finished games."""

    TYPE: ClassVar[str] = "profile_info"
    player: str = field(metadata=_ID)
    name: str = field(metadata=_NAME)
    ratings: tuple[RatingInfo, ...] = field(metadata=_structs(RatingInfo, len(VARIANTS)))
    stats: tuple[VariantStats, ...] = field(metadata=_structs(VariantStats, len(VARIANTS)))
    recent: tuple[RecentGame, ...] = field(metadata=_structs(RecentGame, 50))
    me: bool = field(default=False, metadata=_spec(_bool))
    """Whether the profile is the asking player's own."""


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class RatingBoard(Message):
    """Ask for a page of a variant's rating leaderboard, or the player's own place with neighbours."""

    TYPE: ClassVar[str] = "rating_board"
    variant: str = field(default="scorpion", metadata=_VARIANT)
    offset: int = field(default=0, metadata=_spec(_int(0, MAX_VERSION)))
    limit: int = field(default=20, metadata=_spec(_int(1, 100)))
    around_me: bool = field(default=False, metadata=_spec(_bool))
    """When true, the page is centred on the player (``limit`` is then the page's size)."""


@_struct_done
@dataclass(frozen=True, slots=True, kw_only=True)
class RatingEntry(Struct):
    """One line of a rating leaderboard."""

    rank: int = field(metadata=_spec(_int(1, MAX_VERSION)))
    player: str = field(metadata=_ID)
    name: str = field(metadata=_NAME)
    rating: int = field(metadata=_RATING)
    deviation: int = field(metadata=_DEVIATION)
    games: int = field(metadata=_COUNT)
    provisional: bool = field(metadata=_spec(_bool))


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class RatingPage(Message):
    """Answer rating_board: entries from rank ``offset + 1``, and the player's own rank if rated."""

    TYPE: ClassVar[str] = "rating_page"
    variant: str = field(metadata=_VARIANT)
    offset: int = field(metadata=_COUNT)
    total: int = field(metadata=_COUNT)
    entries: tuple[RatingEntry, ...] = field(metadata=_structs(RatingEntry, 100))
    me: int | None = field(default=None, metadata=_spec(_int(1, MAX_VERSION)))


# ---------------------------------------------------------------- solver: analysis and practice hints



@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class Analyze(Message):
    """Ask for the post-game analysis of one of the player's finished games."""

    TYPE: ClassVar[str] = "analyze"
    game: str = field(metadata=_ID)


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class Analysis(Message):
    """Tell a player whether the deal was winnable, a winning line, and where their win slipped away."""

    TYPE: ClassVar[str] = "analysis"
    game: str = field(metadata=_ID)
    player: str = field(metadata=_ID)
    verdict: str = field(metadata=_spec(_choice(VERDICTS)))
    line: tuple[dict[str, Any], ...] = field(default=(), metadata=_PLAIN_MOVES)
    """A winning line from the deal's opening (empty unless the verdict is winnable)."""
    moves: int = field(default=0, metadata=_COUNT)
    """How many moves of the player's game were analysed (their final line, undos applied)."""
    slipped: int | None = field(default=None, metadata=_COUNT)
    """Index (from 0) of the player's move after which the game could no longer be won."""
    won: bool = field(default=False, metadata=_spec(_bool))


@_message(_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class Winnable(Message):
    """Ask, in a solo game only, whether the position is still winnable and for a winning move."""

    TYPE: ClassVar[str] = "winnable"
    game: str = field(metadata=_ID)
    v: int = field(metadata=_VERSION)


@_message(_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class WinnableInfo(Message):
    """Answer winnable: the verdict on the current position and, if winnable, a winning move."""

    TYPE: ClassVar[str] = "winnable_info"
    game: str = field(metadata=_ID)
    v: int = field(metadata=_VERSION)
    verdict: str = field(metadata=_spec(_choice(VERDICTS)))
    move: dict[str, Any] | None = field(default=None, metadata=_spec(_plain_map))


RESERVED_TYPES = frozenset({"solo_started", "daily_result"})
"""Type names kept for a later version of the protocol; receiving one is ``unavailable``."""

CLIENT_TYPES = frozenset(t for t, c in MESSAGES.items() if c.FROM == _CLIENT)
"""Types of the messages clients send."""
SERVER_TYPES = frozenset(t for t, c in MESSAGES.items() if c.FROM == _SERVER)
"""Types of the messages the server sends."""


def from_dict(data: object) -> Message:
    """Return the message a wire map describes, or raise ``ProtocolError`` saying what is wrong."""
    if type(data) is not dict:
        raise ProtocolError(ErrorCode.BAD_FRAME, f"a message must be a map with a 'type', not {_kind(data)}")
    ref: Ref | None = None
    raw_ref = data.get("ref")
    if raw_ref is not None:
        ref = _ref(raw_ref, "ref") if type(raw_ref) in (int, str) else None
        if ref is None:
            raise _bad("ref", f"must be text or an integer, not {_kind(raw_ref)}")
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
        return cls.from_dict(data)
    except ProtocolError as exc:
        raise exc.with_ref(ref) from None
