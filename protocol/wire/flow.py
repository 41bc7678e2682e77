"""Which client messages are legal when: the connection's states, checks and transitions.

A connection starts in ``CONNECTED``. The server checks every decoded client message with
:func:`check` (which raises ``hello_first`` or ``not_allowed``) and moves the connection on
with :func:`after` for every message it sends: the state follows what the server said, so
a refused request never changes it.

================  ==========================================================  ===================
state             client messages allowed (plus, everywhere after hello:      left by (server sends)
                  ping, games_list, replay, daily_info, leaderboard,
                  around_me, stats, saved_games, forget_me, analyze,
                  register, logout, password_change, sessions,
                  session_revoke)
================  ==========================================================  ===================
CONNECTED         hello, ping, login                                          welcome -> IDLE
IDLE              room_create, room_join, queue_join, resume, watch,          room -> IN_ROOM,
                  daily_start, solo_new, solo_replay, solo_resume, rematch,   queued -> QUEUED,
                  saved_delete, challenge_new, challenge_take, daily_ghost
                                                                              race_started,
                                                                              batch, snapshot ->
                                                                              RACING, spectate,
                                                                              spectate_batch ->
                                                                              WATCHING
IN_ROOM           ready, room_leave, room_start                               ok(room_leave) ->
                                                                              IDLE, race_started
                                                                              -> RACING
QUEUED            queue_cancel                                                ok(queue_cancel),
                                                                              queue_timeout ->
                                                                              IDLE, race_started
                                                                              -> RACING
RACING            move, deal, undo, hint, resign, resume, solo_new,           race_ended,
                  solo_replay, solo_resume, solo_leave, winnable, finish      ok(solo_leave) ->
                                                                              IDLE
WATCHING          unwatch                                                     ok(unwatch),
                                                                              race_ended -> IDLE
CLOSED            nothing                                                     (final)
================  ==========================================================  ===================

``forgotten`` (the answer to forget_me) and ``ok`` to logout lead from any state to
``CLOSED``; ``error`` never
changes the state.
The module also holds the message credits (rate limit) and the websocket close codes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Final, Literal

from .error import ErrorCode, ProtocolError
from .message import Batch, Message, Ok, SpectateBatch

__all__ = [
    "ALLOWED",
    "ANYWHERE",
    "CLOSE_GOING_AWAY",
    "CLOSE_INTERNAL",
    "CLOSE_NORMAL",
    "CLOSE_POLICY",
    "CLOSE_RESTART",
    "CLOSE_TOO_LARGE",
    "PLAYER_CREDITS",
    "SPECTATOR_CREDITS",
    "STRIKES_BEFORE_CLOSE",
    "TRANSITIONS",
    "Credits",
    "Flow",
    "State",
    "after",
    "allowed",
    "check",
    "transition_key",
]

CLOSE_NORMAL: Final = 1000
"""Close code: the session ended normally (after forget_me, or the client said goodbye)."""
CLOSE_GOING_AWAY: Final = 1001
"""Close code: the server is shutting down for good; reconnect later."""
CLOSE_POLICY: Final = 1008
"""Close code: the client broke the rules (rate limit exceeded again and again, bad token)."""
CLOSE_TOO_LARGE: Final = 1009
"""Close code: the client sent a frame the websocket layer refused as too large."""
CLOSE_INTERNAL: Final = 1011
"""Close code: the server failed; reconnect and resume."""
CLOSE_RESTART: Final = 1012
"""Close code: the server node restarts; reconnect (any node) with the token and resume."""

PLAYER_CREDITS: Final = (60, 10.0)
"""Message credits of a player: at most 60 messages in any 10 seconds."""
SPECTATOR_CREDITS: Final = (20, 10.0)
"""Message credits of a connection that watches: at most 20 messages in any 10 seconds."""
STRIKES_BEFORE_CLOSE: Final = 10
"""Refused (rate_limited) messages after which the server closes with 1008."""


class State(StrEnum):
    """Name where a connection stands in the conversation."""

    CONNECTED = "connected"
    IDLE = "idle"
    IN_ROOM = "in_room"
    QUEUED = "queued"
    RACING = "racing"
    WATCHING = "watching"
    CLOSED = "closed"


ANYWHERE: Final = frozenset(
    {
        "ping",
        "games_list",
        "replay",
        "replay_positions",
        "daily_info",
        "leaderboard",
        "around_me",
        "stats",
        "profile",
        "rating_board",
        "saved_games",
        "forget_me",
        "analyze",
        "challenge_create",
        "challenge_board",
        "challenge_list",
        "register",
        "logout",
        "password_change",
        "sessions",
        "session_revoke",
        "passkey_options",
        "passkey_register",
    }
)
"""Client messages allowed in every state after hello."""

ALLOWED: Final[Mapping[State, frozenset[str]]] = {
    State.CONNECTED: frozenset({"hello", "ping", "login", "passkey_options", "passkey_login"}),
    State.IDLE: ANYWHERE
    | {
        "room_create",
        "room_join",
        "queue_join",
        "resume",
        "watch",
        "daily_start",
        "solo_new",
        "solo_replay",
        "solo_resume",
        "rematch",
        "saved_delete",
        "challenge_new",
        "challenge_take",
        "daily_ghost",
    },
    State.IN_ROOM: ANYWHERE | {"ready", "room_leave", "room_start"},
    State.QUEUED: ANYWHERE | {"queue_cancel"},
    State.RACING: ANYWHERE
    | {
        "move",
        "deal",
        "undo",
        "hint",
        "resign",
        "resume",
        "solo_new",
        "solo_replay",
        "solo_resume",
        "solo_leave",
        "winnable",
        "finish",
    },
    State.WATCHING: ANYWHERE | {"unwatch"},
    State.CLOSED: frozenset(),
}
"""Client message types allowed in each state."""

TRANSITIONS: Final[Mapping[tuple[State, str], State]] = {
    (State.CONNECTED, "welcome"): State.IDLE,
    (State.IDLE, "room"): State.IN_ROOM,
    (State.IN_ROOM, "ok:room_leave"): State.IDLE,
    (State.IN_ROOM, "race_started"): State.RACING,
    (State.IDLE, "queued"): State.QUEUED,
    (State.QUEUED, "ok:queue_cancel"): State.IDLE,
    (State.QUEUED, "queue_timeout"): State.IDLE,
    (State.QUEUED, "race_started"): State.RACING,
    (State.IDLE, "race_started"): State.RACING,
    (State.IDLE, "batch"): State.RACING,
    (State.IDLE, "snapshot"): State.RACING,
    (State.RACING, "race_ended"): State.IDLE,
    (State.RACING, "ok:solo_leave"): State.IDLE,
    (State.IDLE, "spectate"): State.WATCHING,
    (State.IDLE, "spectate_batch"): State.WATCHING,
    (State.WATCHING, "ok:unwatch"): State.IDLE,
    (State.WATCHING, "race_ended"): State.IDLE,
    **{(state, "ok:forget_me"): State.CLOSED for state in State},
    **{(state, "ok:logout"): State.CLOSED for state in State},
    **{(state, "forgotten"): State.CLOSED for state in State},
}
"""Next state after the server sends a message: keyed by state and :func:`transition_key`."""

_STATE_HINT: Final[Mapping[State, str]] = {
    State.IDLE: "outside any room, queue, race or watched game",
    State.IN_ROOM: "in a room",
    State.QUEUED: "in the quick-match queue",
    State.RACING: "racing",
    State.WATCHING: "watching a game",
    State.CLOSED: "after the session was closed",
}


def allowed(state: State) -> frozenset[str]:
    """Return the client message types allowed in ``state``."""
    return ALLOWED[state]


def check(state: State, message: Message, where: str = "") -> None:
    """Raise ``ProtocolError`` (hello_first, not_allowed) unless ``message`` is legal in ``state``.

    ``where`` names what holds the connection in that state (``game 7Kq2``, ``room K7MQ2X``,
    ``queue scorpion``): a refusal says it in brackets after the state, so that a client can
    tell its player which game or room is in the way.
    """
    kind = message.TYPE
    if kind in ALLOWED[state]:
        return
    if state is State.CONNECTED:
        text = f"send 'hello' before {kind!r}: the session is not open yet"
        raise ProtocolError(ErrorCode.HELLO_FIRST, text, ref=message.ref)
    if kind == "hello":
        text = "the session is already open: 'hello' is only the first message"
    else:
        held = f" ({where})" if where else ""
        listed = ", ".join(sorted(ALLOWED[state]))
        text = f"{kind!r} is not allowed {_STATE_HINT[state]}{held}; allowed: {listed}"
    raise ProtocolError(ErrorCode.NOT_ALLOWED, text, ref=message.ref)


def transition_key(message: Message) -> str:
    """Return the key of ``message`` in :data:`TRANSITIONS`: its type, or ``ok:<request type>``."""
    if isinstance(message, Ok):
        return f"ok:{message.to}"
    if isinstance(message, Batch | SpectateBatch) and message.events:
        last = message.events[-1].TYPE
        return "race_ended" if last == "race_ended" else message.TYPE
    return message.TYPE


def after(state: State, message: Message) -> State:
    """Return the connection's state once the server has sent ``message`` (unchanged if no transition)."""
    key = transition_key(message)
    if key == "race_ended" and message.TYPE in ("batch", "spectate_batch") and state is State.IDLE:
        return State.IDLE  # resumed (or came back to watch) a race that had already ended
    return TRANSITIONS.get((state, key), state)


@dataclass(slots=True)
class Flow:
    """Track one connection's state: ``check`` what the client sends, ``sent`` what the server sends."""

    state: State = State.CONNECTED

    def check(self, message: Message, where: str = "") -> None:
        """Raise ``ProtocolError`` unless ``message`` is legal now (``where``: see :func:`check`)."""
        check(self.state, message, where)

    def sent(self, message: Message) -> State:
        """Move on after the server sent ``message``; return the new state."""
        self.state = after(self.state, message)
        return self.state


@dataclass(slots=True)
class Credits:
    """Count a connection's message credits: ``capacity`` messages per ``period`` seconds, refilled smoothly.

    The caller passes the clock (``now``, seconds on any monotonic clock), so this stays pure.
    """

    capacity: int = PLAYER_CREDITS[0]
    period: float = PLAYER_CREDITS[1]
    strikes_before_close: int = STRIKES_BEFORE_CLOSE
    _left: float = field(default=-1.0, repr=False)
    _last: float | None = field(default=None, repr=False)
    strikes: int = 0

    def take(self, now: float) -> Literal["ok", "rate_limited", "close"]:
        """Spend a credit at ``now``: ``ok``, else ``rate_limited``, or ``close`` after too many strikes."""
        if self._last is None:
            self._left = float(self.capacity)
        else:
            elapsed = max(0.0, now - self._last)
            self._left = min(float(self.capacity), self._left + elapsed * self.capacity / self.period)
        self._last = now
        if self._left >= 1.0:
            self._left -= 1.0
            self.strikes = 0
            return "ok"
        self.strikes += 1
        return "close" if self.strikes > self.strikes_before_close else "rate_limited"
