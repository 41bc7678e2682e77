"""The one error type of the wire contract and its stable machine-readable codes.

Every failure the server reports is an ``error`` message carrying one of the codes of
:class:`ErrorCode`, a sentence for people and the ``ref`` of the request that failed. Inside
Python the same failure is a :class:`ProtocolError`; :attr:`ProtocolError.fault` says whose
fault it is (the client's, or the server's for ``internal`` and ``unavailable``).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

__all__ = ["CLIENT_FAULT", "SERVER_FAULT", "ErrorCode", "ProtocolError", "Ref"]

Ref = str | int
"""A client-chosen request reference: text of at most 64 characters, or a bounded integer."""

CLIENT_FAULT: Literal["client"] = "client"
"""The request was wrong; sending it again unchanged fails again."""

SERVER_FAULT: Literal["server"] = "server"
"""The server failed or is not able to serve; the request itself may be fine."""


class ErrorCode(StrEnum):
    """Name every way a request can fail; the values are the wire codes and never change."""

    BAD_FRAME = "bad_frame"
    """The frame is not a msgpack/JSON map, or has the wrong frame type for the subprotocol."""
    TOO_LARGE = "too_large"
    """The frame is longer than the limit (8 KiB for frames sent by clients)."""
    UNKNOWN_TYPE = "unknown_type"
    """The ``type`` names no message of this protocol version."""
    BAD_FIELD = "bad_field"
    """A field is missing, unknown, of the wrong type or out of range."""
    HELLO_FIRST = "hello_first"
    """Anything but ``hello`` (or ``ping``) was sent before ``hello``."""
    NOT_ALLOWED = "not_allowed"
    """The message is valid but not allowed in the connection's current state."""
    BAD_TOKEN = "bad_token"
    """The resume token in ``hello`` is unknown or expired."""
    ILLEGAL_MOVE = "illegal_move"
    """The move is well-formed but the rules forbid it on the current board."""
    STALE_VERSION = "stale_version"
    """The request was based on a version older (or newer) than the player's own board."""
    NOT_YOUR_GAME = "not_your_game"
    """The game id names a game this player is not racing in."""
    NO_SUCH_GAME = "no_such_game"
    """The game id names no live or finished game."""
    GAME_OVER = "game_over"
    """The player's part of the race is already over (finished, stuck, resigned)."""
    RATE_LIMITED = "rate_limited"
    """The connection sent more messages than its credits allow."""
    ROOM_FULL = "room_full"
    """The room already has its maximum number of players."""
    NO_SUCH_ROOM = "no_such_room"
    """No open room has this code."""
    NOT_STARTED = "not_started"
    """The room's race has not started yet: it can be watched once it has."""
    NOT_HOST = "not_host"
    """Only the room's host may do this."""
    ROOM_STARTED = "room_started"
    """The room's race has already started."""
    NOT_READY = "not_ready"
    """The host asked to start while a player is not ready, or alone."""
    NOT_IN_QUEUE = "not_in_queue"
    """The player cancelled a quick match it is not queued for."""
    NO_SUCH_PLAYER = "no_such_player"
    """The player id names nobody (never seen, or forgotten at their request)."""
    UNDO_FORBIDDEN = "undo_forbidden"
    """The race's options do not allow undo."""
    HINTS_FORBIDDEN = "hints_forbidden"
    """The race's options do not allow hints."""
    SPECTATING_FORBIDDEN = "spectating_forbidden"
    """The race's options do not allow spectators."""
    NO_SUCH_CHALLENGE = "no_such_challenge"
    """No challenge has this code (never made, or expired)."""
    DAILY_ALREADY_PLAYED = "daily_already_played"
    """The player has already started today's daily deal."""
    ACCOUNT_REQUIRED = "account_required"
    """Ranked play (the rated queue, a rated room, the daily's ranked attempt) needs an
    account: a guest registers first, or plays the casual form."""
    USERNAME_TAKEN = "username_taken"
    """The username, or one that looks the same, belongs to another account."""
    BAD_LOGIN = "bad_login"
    """No account has this username, or the password is wrong."""
    BAD_PASSKEY = "bad_passkey"
    """The passkey's answer does not verify: no challenge of this connection asked for it,
    it was answered already, or its signature, origin or relying party is wrong."""
    LOGIN_LOCKED = "login_locked"
    """Too many wrong passwords for the account in a row: logins wait until the lockout ends."""
    BANNED = "banned"
    """The player is banned from ranked play (rated races, the daily's ranked attempt); the
    message says why. Unrated play is still open to them."""
    UNAVAILABLE = "unavailable"
    """The feature is reserved for a later version, the server is shutting down, or its
    storage cannot be reached just now (then the error carries ``retry_after_ms``). A
    request refused this way was not carried out."""
    OUTCOME_UNKNOWN = "outcome_unknown"
    """The storage did not confirm a game action in time: it may or may not have been
    applied. Resume the game to see which; sending the action again at the same version
    cannot apply it twice."""
    INTERNAL = "internal"
    """The server failed; the request may be retried."""

    @property
    def fault(self) -> Literal["client", "server"]:
        """Return whose fault an error with this code is."""
        return SERVER_FAULT if self in _SERVER_CODES else CLIENT_FAULT


_SERVER_CODES = frozenset({ErrorCode.INTERNAL, ErrorCode.UNAVAILABLE, ErrorCode.OUTCOME_UNKNOWN})


class ProtocolError(Exception):
    """Raise for every failure of the contract, with a stable code and a sentence saying what was wrong."""

    __slots__ = ("code", "field", "message", "ref", "retry_after_ms")

    def __init__(
        self,
        code: ErrorCode | str,
        message: str,
        *,
        ref: Ref | None = None,
        field: str | None = None,
        retry_after_ms: int | None = None,
    ) -> None:
        """Build the error; ``field`` names the offending field, ``ref`` the failed request,
        ``retry_after_ms`` when the same request may be sent again (a passing outage)."""
        self.code = ErrorCode(code)
        self.message = message
        self.ref = ref
        self.field = field
        self.retry_after_ms = retry_after_ms
        super().__init__(message)

    @property
    def fault(self) -> Literal["client", "server"]:
        """Return whose fault the error is: ``"client"`` or ``"server"``."""
        return self.code.fault

    def with_ref(self, ref: Ref | None) -> ProtocolError:
        """Return this error carrying ``ref`` (itself when it already carries one)."""
        if self.ref is not None or ref is None:
            return self
        return ProtocolError(
            self.code, self.message, ref=ref, field=self.field, retry_after_ms=self.retry_after_ms
        )

    def __repr__(self) -> str:
        return f"ProtocolError({self.code.value!r}, {self.message!r}, ref={self.ref!r})"

    def __str__(self) -> str:
        return f"{self.code.value}: {self.message}"
