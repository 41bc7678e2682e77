"""The errors the client library raises and the notices it delivers.

Errors: :class:`ServerError` (the server refused a request), :class:`ConnectionLost` (the
answer never came), :class:`IllegalLocally` (the local engine refused a move before it was
sent), all :class:`ClientError`. Notices come out of
:meth:`ScorpionClient.events <client.api.ScorpionClient.events>` among the server's
messages: :class:`Disconnected`, :class:`Reconnected` and :class:`Closed` tell what the
connection does, :class:`Busy` and :class:`Recovered` what a busy server does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from protocol.wire.error import ErrorCode
from protocol.wire.message import Error, Message, Welcome

__all__ = [
    "Busy",
    "ClientError",
    "Closed",
    "ConnectionLost",
    "Disconnected",
    "Event",
    "IllegalLocally",
    "Reconnected",
    "Recovered",
    "ServerError",
]


class ClientError(Exception):
    """Base of the errors the client library raises."""


class ServerError(ClientError):
    """The server refused a request with an ``error`` message.

    ``retry_after_ms`` is set when the server's storage is passing through an outage: the
    same request may be sent again after that many milliseconds (see :attr:`retryable`).
    """

    def __init__(
        self, code: str, message: str, field: str | None = None, retry_after_ms: int | None = None
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.field = field
        self.retry_after_ms = retry_after_ms

    @classmethod
    def of(cls, error: Error) -> ServerError:
        """Return the error an ``error`` message reports."""
        return cls(error.code, error.message, error.field, error.retry_after_ms)

    @property
    def retryable(self) -> bool:
        """Tell whether the server asked for the request again later (a passing storage outage).

        With ``unavailable`` the request was not carried out; with ``outcome_unknown`` (game
        actions) it may have been: resume the game to see which.
        """
        return self.retry_after_ms is not None

    @property
    def unavailable(self) -> bool:
        """Tell whether the server does not offer this request (an older or newer server)."""
        return not self.retryable and self.code in (ErrorCode.UNAVAILABLE.value, ErrorCode.UNKNOWN_TYPE.value)

    def in_the_way(self, mode: str | None = None) -> str | None:
        """Say in words why a request was ``not_allowed`` where the connection's state refused it.

        The server names what holds the connection (``(game 7Kq2)``, ``(room K7MQ2X)``):
        the words say which game or room is in the way and how to leave it. ``mode`` is the
        mode of that game when the client knows it (``solo`` has its own way out). ``None``
        for any other refusal.
        """
        found = _REFUSAL.match(self.message) if self.code == ErrorCode.NOT_ALLOWED.value else None
        if found is None:
            return None
        kind, state, what, name = found.groups()
        act = _ACTS.get(kind, f"send {kind!r}")
        if what == "game" and state == "watching a game":
            way = f"you are watching game {name}: stop watching it first (q in the full-screen client)"
        elif what == "game" and mode == "solo":
            way = (
                f"your solo game {name} is still open (it is saved): resume it with "
                f"`scorpion play --resume {name}`, then finish it or resign it (R twice)"
            )
        elif what == "game":
            way = (
                f"you are still a racer in game {name}: resign it (R twice in the full-screen client), "
                "or wait until it ends; a racer who left is out a minute later"
            )
        elif what == "room":
            way = f"you are in room {name}: leave it first (q in the full-screen client)"
        elif what == "queue":
            way = f"you are waiting for a {name} quick match: give up waiting first (q)"
        elif state == "racing":
            way = "you are still in a game: finish it or resign it (R twice) first"
        else:
            way = f"you are {state} now"
        return f"you cannot {act} now: {way}"


_REFUSAL = re.compile(r"'(\w+)' is not allowed ([^;(]+?)(?: \((game|room|queue) ([^)]+)\))?;")

_ACTS = {
    "room_create": "open a room",
    "room_join": "join a room",
    "queue_join": "join a quick match",
    "solo_new": "start a solo game",
    "solo_replay": "replay a deal",
    "solo_resume": "resume a saved game",
    "daily_start": "start the daily",
    "watch": "watch a game",
    "rewatch": "watch a game",
    "rematch": "ask for a rematch",
    "move": "play a move",
}


class ConnectionLost(ClientError):
    """The connection dropped before the answer came; the request may or may not have taken effect."""


class IllegalLocally(ClientError):
    """The local engine says the move is illegal; it was not sent."""


@dataclass(frozen=True, slots=True)
class Disconnected:
    """The connection dropped; ``reconnecting`` tells whether the client is trying again."""

    code: int | None
    reason: str
    reconnecting: bool


@dataclass(frozen=True, slots=True)
class Reconnected:
    """The client is connected again (to ``url``) and said hello with its token."""

    url: str
    welcome: Welcome


@dataclass(frozen=True, slots=True)
class Closed:
    """The session is over for good (closed by us, ``forget_me``, a policy close, or given up)."""

    code: int | None
    reason: str


@dataclass(frozen=True, slots=True)
class Busy:
    """The server is busy (its storage cannot be reached): ``request`` goes again in ``retry_after_ms``.

    Emitted before each wait; a UI shows a notice such as "server busy, retrying…" until
    :class:`Recovered` (or the request's error, once the client gives up).
    """

    retry_after_ms: int
    request: str


@dataclass(frozen=True, slots=True)
class Recovered:
    """The server answered ``request`` again after it had been refused as busy: clear the notice."""

    request: str


Event = Message | Disconnected | Reconnected | Closed | Busy | Recovered
