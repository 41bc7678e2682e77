"""The asyncio client library of Scorpion Race.

:class:`ScorpionClient` opens a websocket to a server (msgpack by default, JSON on request),
says ``hello`` with the stored token, and offers one typed method per request; each returns
the server's answer or raises :class:`ServerError`. Everything the server sends, answers
included, is also delivered by the async iterator :meth:`ScorpionClient.events`, together
with :class:`Disconnected`, :class:`Reconnected`, :class:`Closed`, :class:`Busy` and
:class:`Recovered` notices. The race being played or watched is tracked in
:attr:`ScorpionClient.race` (a :class:`~client.state.RaceState`), which also checks moves
locally with the shared engine.

When the connection drops (node killed, restart with close code 1012, network failure),
the client reconnects by itself with exponential backoff, trying each URL it was given in
turn, says ``hello`` with its token again and resumes the race from the last version it
saw. Requests in flight when the connection dropped raise :class:`ConnectionLost`: the
server may or may not have applied them, and the resumed state tells which.

When the server's storage cannot be reached for a moment, the server refuses requests
with an ``error`` carrying ``retry_after_ms`` (:attr:`ServerError.retryable`). An
``unavailable`` refusal means the request was not carried out: the client sends it again
after the given delay, for up to ``busy_retry_for`` seconds in all, emitting :class:`Busy`
before each wait and :class:`Recovered` once the server answers again. A game action
answered ``outcome_unknown`` may or may not have been applied: the client resumes the game
from the action's version, takes this player's ``accepted`` in the batch as the answer,
and otherwise sends the action again at the same version (the server's version check
cannot apply it twice). Callers get the ``accepted`` or a real error, never both moves.

Example (runnable against a local server)::

    import asyncio
    from client.connection import ScorpionClient

    async def main() -> None:
        async with ScorpionClient("ws://127.0.0.1:8765/", name="Ann") as client:
            room = await client.room_create("scorpion")
            print("share the code", room.room)

    asyncio.run(main())
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from protocol.game import Move, move_from_text
from protocol.wire.codec import JSON, MAX_SERVER_FRAME, MSGPACK, Format, decode, encode
from protocol.wire.error import ErrorCode, ProtocolError
from protocol.wire.flow import CLOSE_NORMAL, CLOSE_POLICY, CLOSE_TOO_LARGE, Flow, State
from protocol.wire.message import (
    Accepted,
    Analysis,
    Analyze,
    AroundMe,
    Batch,
    Countdown,
    Daily,
    DailyInfo,
    DailyStart,
    DealReserve,
    Error,
    ForgetMe,
    Forgotten,
    GameInfo,
    Games,
    GamesList,
    GamesUpdate,
    Hello,
    HintRequest,
    Hints,
    Leaderboard,
    LeaderboardPage,
    Message,
    Ok,
    Options,
    Ping,
    PlayMove,
    Pong,
    Profile,
    ProfileRequest,
    QueueCancel,
    Queued,
    QueueJoin,
    RaceEnded,
    RaceStarted,
    RatingBoard,
    RatingChange,
    RatingPage,
    Ready,
    Rematch,
    RematchOffered,
    Replay,
    ReplayLog,
    ReplayPositions,
    ReplayPositionsInfo,
    Resign,
    Resume,
    RoomCreate,
    RoomJoin,
    RoomLeave,
    RoomStart,
    RoomState,
    SavedGames,
    SavedGamesList,
    Snapshot,
    SoloNew,
    SoloReplay,
    SoloResume,
    SpectateBatch,
    SpectatorSnapshot,
    Stats,
    StatsInfo,
    Undo,
    Unwatch,
    Watch,
    Welcome,
    Winnable,
    WinnableInfo,
    WireMove,
)

from .identity import Identity, TokenStore
from .state import RaceState, final_line

__all__ = [
    "JSON",
    "MSGPACK",
    "Busy",
    "ClientError",
    "Closed",
    "ConnectionLost",
    "Disconnected",
    "Event",
    "IllegalLocally",
    "Reconnected",
    "Recovered",
    "ScorpionClient",
    "ServerError",
    "room_link",
]

CLIENT_NAME = "scorpion-py 0.1"
_M = TypeVar("_M", bound=Message)


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


class ConnectionLost(ClientError):
    """The connection dropped before the answer came; the request may or may not have taken effect."""


class IllegalLocally(ClientError):
    """The local engine says the move is illegal; it was not sent."""


def room_link(server: str, code: str) -> str:
    """Return the browser link of a room on ``server``: the web client is served at ``/``."""
    parts = urlsplit(server)
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
    return urlunsplit((scheme, parts.netloc, "/", f"room={code}", ""))


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

_NO_RECONNECT = {CLOSE_NORMAL, CLOSE_POLICY, CLOSE_TOO_LARGE}


class ScorpionClient:
    """One player's (or spectator's) session with a Scorpion Race server."""

    def __init__(
        self,
        urls: str | Sequence[str],
        name: str,
        *,
        token: str | None = None,
        store: TokenStore | None = None,
        fmt: Format = MSGPACK,
        client_name: str = CLIENT_NAME,
        reconnect: bool = True,
        backoff: tuple[float, float] = (0.1, 5.0),
        give_up_after: float = 120.0,
        request_timeout: float = 15.0,
        auto_resume: bool = True,
        max_events: int = 10_000,
        busy_retry_for: float = 30.0,
    ) -> None:
        """Prepare a session; nothing happens on the network before :meth:`connect`.

        ``urls`` lists the servers to try (the first is used first; on a reconnect the
        others are tried in turn). ``token`` (or the one ``store`` keeps for the first
        URL) makes this the same player as before; the token the server gives back is
        saved in ``store``. ``backoff`` is the first and the longest delay between attempts.
        ``busy_retry_for`` bounds, in seconds, how long a request the server refuses as
        busy is sent again before its :class:`ServerError` is raised.
        """
        self.urls = [urls] if isinstance(urls, str) else list(urls)
        if not self.urls:
            raise ValueError("give at least one server URL")
        self.name = name
        self.store = store
        if token is None and store is not None:
            known = store.load(self.urls[0])
            token = known.token if known else None
        self.token = token
        self.fmt = fmt
        self.client_name = client_name
        self.reconnect = reconnect
        self.backoff = backoff
        self.give_up_after = give_up_after
        self.request_timeout = request_timeout
        self.auto_resume = auto_resume
        self.busy_retry_for = busy_retry_for
        self.flow = Flow()
        self.welcome: Welcome | None = None
        self.race: RaceState | None = None
        self.room: RoomState | None = None
        self.games: dict[str, GameInfo] = {}
        self.leaderboard_page: LeaderboardPage | None = None
        self.analyses: dict[str, Analysis] = {}
        self.rating_changes: dict[str, RatingChange] = {}
        """The rating changes pushed after this player's rated races, by game id."""
        self.results: dict[str, RaceEnded] = {}
        """The ``race_ended`` of the games this session saw end (the latest 64)."""
        self.rematch_offers: dict[str, RematchOffered] = {}
        """The latest ``rematch_offered`` of each ended race, by the race's game id."""
        self.url = self.urls[0]
        self.reconnects = 0
        self.closed: Closed | None = None
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._reconnector: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._refs = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Message]] = {}
        self._waiters: list[tuple[Callable[[Message], bool], asyncio.Future[Message]]] = []
        self._events: deque[Event] = deque(maxlen=max_events)
        self._event_signal = asyncio.Event()
        self._ready = asyncio.Event()
        self._closing = False
        self._opening = False
        self._resuming = False
        self._gap_timer = False
        self.gap_wait = 0.5
        self._version_waiters: list[tuple[str, int, asyncio.Future[None]]] = []
        self._clock_offset = 0.0

    # -- connection -----------------------------------------------------------------------

    @property
    def player(self) -> str | None:
        """Return this player's id (after ``welcome``)."""
        return self.welcome.player if self.welcome else None

    @property
    def connected(self) -> bool:
        """Tell whether the session is open (connected and welcomed)."""
        return self._ready.is_set()

    @property
    def state(self) -> State:
        """Return the connection's state as the server sees it (:mod:`protocol.wire.flow`)."""
        return self.flow.state

    def server_now(self) -> int:
        """Return the server's clock now, in epoch milliseconds (estimated from ``welcome``)."""
        return int(time.time() * 1000 + self._clock_offset)

    async def __aenter__(self) -> ScorpionClient:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def connect(self) -> Welcome:
        """Open the connection to the first URL that answers and say hello; return ``welcome``."""
        last: Exception | None = None
        for url in self.urls:
            try:
                welcome = await self._open(url)
            except (OSError, TimeoutError, InvalidHandshake, InvalidURI, ConnectionLost) as exc:
                last = exc
                continue
            if self.auto_resume and welcome.games and self.race is None:
                await self._resume_quietly(welcome.games[0], 0)
            return welcome
        raise ConnectionError(f"no server answered ({', '.join(self.urls)}): {last}")

    async def _open(self, url: str) -> Welcome:
        ws = await connect(
            url,
            subprotocols=[self.fmt],  # type: ignore[list-item]
            max_size=MAX_SERVER_FRAME,
            compression=None,
            open_timeout=5,
            user_agent_header=self.client_name,
        )
        self._ws, self.url = ws, url
        self.flow = Flow()
        self._opening = True
        self._reader = asyncio.create_task(self._read(ws))
        try:
            welcome = await self._hello()
        except BaseException:
            self._ws = None
            await ws.close()
            raise
        finally:
            self._opening = False
        if self._ws is not ws:
            raise ConnectionLost("the connection closed right after hello")
        self.welcome = welcome
        self._clock_offset = welcome.now - time.time() * 1000
        self._ready.set()
        return welcome

    async def _hello(self) -> Welcome:
        hello = Hello(name=self.name, token=self.token, client=self.client_name)
        try:
            answer = await self._request(hello, need_ready=False)
        except ServerError as exc:
            if exc.code != ErrorCode.BAD_TOKEN.value or self.token is None:
                raise
            self.token = None  # unknown or expired: start afresh, as the protocol advises
            answer = await self._request(Hello(name=self.name, client=self.client_name), need_ready=False)
        assert isinstance(answer, Welcome)
        self.token = answer.token
        if self.store is not None:
            self.store.save(self.urls[0], Identity(answer.token, answer.name, answer.player))
        return answer

    async def close(self) -> None:
        """Close the session for good (no reconnect)."""
        self._closing = True
        if self._reconnector is not None:
            self._reconnector.cancel()
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await self._ws.close()
        if self._reader is not None:
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(self._reader), 5)
        for task in list(self._tasks):
            task.cancel()
        self._finish(CLOSE_NORMAL, "closed by the client")

    async def drop(self) -> None:
        """Abort the transport without a closing handshake (for tests of reconnecting)."""
        if self._ws is not None:
            self._ws.transport.abort()

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- receiving ------------------------------------------------------------------------

    async def _read(self, ws: ClientConnection) -> None:
        try:
            async for frame in ws:
                try:
                    message = decode(frame, self.fmt, limit=MAX_SERVER_FRAME)
                except ProtocolError:
                    continue  # a type this client does not know (a newer server): ignore it
                self._receive(message)
        except ConnectionClosed:
            pass
        except asyncio.CancelledError:
            self._closing = True
            raise
        finally:
            if ws is self._ws:
                self._lost(ws.close_code, ws.close_reason or "")

    def _receive(self, message: Message) -> None:
        self.flow.sent(message)
        self._track(message)
        ref = message.ref
        if isinstance(ref, int) and ref in self._pending:
            future = self._pending.pop(ref)
            if not future.done():
                if isinstance(message, Error):
                    future.set_exception(ServerError.of(message))
                else:
                    future.set_result(message)
        for waiter in list(self._waiters):
            predicate, future = waiter
            if not future.done() and predicate(message):
                future.set_result(message)
                self._waiters.remove(waiter)
        self._emit(message)

    def _track(self, message: Message) -> None:
        me = self.player
        batched = isinstance(message, Batch | SpectateBatch) and message.events
        ended = message.events[-1] if batched else message  # type: ignore[attr-defined]
        if isinstance(ended, RaceEnded):
            self.results[ended.game] = ended
            while len(self.results) > 64:
                del self.results[next(iter(self.results))]
        if isinstance(message, RoomState):
            self.room = message
            if self.race is not None and self.race.ended is not None:
                self.race = None  # in a room again (a rematch, say): the lobby, not the old board
        elif isinstance(message, RematchOffered):
            self.rematch_offers[message.game] = message
            while len(self.rematch_offers) > 64:
                del self.rematch_offers[next(iter(self.rematch_offers))]
        elif isinstance(message, Ok) and message.to == "room_leave":
            self.room = None
        elif isinstance(message, Games):
            self.games = {info.game: info for info in message.games}
        elif isinstance(message, GamesUpdate):
            for game in message.removed:
                self.games.pop(game, None)
            self.games.update((info.game, info) for info in message.added)
        elif isinstance(message, LeaderboardPage):
            self.leaderboard_page = message
        elif isinstance(message, Analysis):
            self.analyses[message.game] = message
        elif isinstance(message, RatingChange):
            self.rating_changes[message.game] = message
        elif isinstance(message, RaceStarted):
            if self.race is None or self.race.game != message.game or self.race.ended is not None:
                self.race = RaceState.from_started(message, me)
                self.room = None
                return
        elif isinstance(message, Snapshot):
            self.race = RaceState.from_snapshot(message, me)
            return
        elif isinstance(message, SpectatorSnapshot):
            self.race = RaceState.from_spectate(message)
            return
        elif isinstance(message, Batch) and (self.race is None or self.race.game != message.game):
            first = message.events[0] if message.events else None
            if isinstance(first, RaceStarted):
                self.race = RaceState.from_started(first, me)
        if self.race is not None:
            result = self.race.apply(message)
            if result.gap and not self.race.spectating and not self._gap_timer:
                self._gap_timer = True
                self._spawn(self._fill_gap(self.race))
            self._version_changed()

    def _version_changed(self) -> None:
        race = self.race
        for waiter in list(self._version_waiters):
            game, v, future = waiter
            if future.done():
                self._version_waiters.remove(waiter)
            elif race is not None and race.game == game and (race.v >= v or race.ended is not None):
                future.set_result(None)
                self._version_waiters.remove(waiter)

    async def _fill_gap(self, race: RaceState) -> None:
        """Give late events a moment to arrive, then ``resume`` if the gap is still open."""
        try:
            await asyncio.sleep(self.gap_wait)
            if self.race is race and race.missing:
                await self._resume_quietly(race.game, race.v)
        finally:
            self._gap_timer = False

    async def caught_up(self, v: int, timeout: float = 10.0) -> None:
        """Wait until the tracked race has applied version ``v`` (or ended)."""
        race = self.race
        if race is None or race.v >= v or race.ended is not None:
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (race.game, v, future)
        self._version_waiters.append(entry)
        try:
            await asyncio.wait_for(future, timeout)
        finally:
            if entry in self._version_waiters:
                self._version_waiters.remove(entry)

    def _emit(self, event: Event) -> None:
        self._events.append(event)
        self._event_signal.set()

    async def events(self) -> AsyncIterator[Event]:
        """Yield every message from the server and every notice (connection, busy server), in order.

        The iterator ends after :class:`Closed`. Events are buffered from the moment the
        client is made, so nothing is missed by starting to iterate late (the buffer keeps
        the latest ``max_events``). Use one iterator at a time.
        """
        while True:
            while self._events:
                event = self._events.popleft()
                yield event
                if isinstance(event, Closed):
                    return
            self._event_signal.clear()
            await self._event_signal.wait()

    async def race_ended(self, game: str, timeout: float = 30.0) -> RaceEnded:
        """Return the ``race_ended`` of ``game``: at once if it has come already, else when it does."""
        known = self.results.get(game)
        if known is not None:
            return known
        return await self.wait_for(RaceEnded, timeout=timeout, game=game)

    async def wait_for(self, *types: type[_M], timeout: float = 30.0, **match: Any) -> _M:
        """Return the next message of one of ``types`` whose fields equal ``match``.

        Independent of :meth:`events` (both see every message).
        """

        def predicate(message: Message) -> bool:
            return isinstance(message, types) and all(
                getattr(message, k, None) == v for k, v in match.items()
            )

        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        entry = (predicate, future)
        self._waiters.append(entry)
        try:
            return await asyncio.wait_for(future, timeout)  # type: ignore[arg-type]
        finally:
            if entry in self._waiters:
                self._waiters.remove(entry)

    # -- losing and regaining the connection ---------------------------------------------

    def _lost(self, code: int | None, reason: str) -> None:
        self._ready.clear()
        self._ws = None
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionLost(f"the connection closed ({code}) before the answer"))
        self._pending.clear()
        if self._closing or self._opening or self.closed is not None:
            return
        if not self.reconnect or code in _NO_RECONNECT or self.flow.state is State.CLOSED:
            self._finish(code, reason or "the server closed the connection")
            return
        self._emit(Disconnected(code, reason, reconnecting=True))
        self._reconnector = asyncio.ensure_future(self._reconnect())

    def _finish(self, code: int | None, reason: str) -> None:
        if self.closed is not None:
            return
        self._ready.clear()
        self.closed = Closed(code, reason)
        for _, future in self._waiters:
            if not future.done():
                future.set_exception(ConnectionLost(reason))
        self._waiters.clear()
        self._emit(self.closed)

    async def _reconnect(self) -> None:
        first, longest = self.backoff
        delay = first
        deadline = time.monotonic() + self.give_up_after
        start = self.urls.index(self.url) if self.url in self.urls else 0
        for attempt in itertools.count():
            url = self.urls[(start + attempt) % len(self.urls)]
            try:
                welcome = await self._open(url)
            except (OSError, TimeoutError, InvalidHandshake, InvalidURI, ConnectionLost, ServerError):
                if time.monotonic() + delay > deadline:
                    self._finish(None, f"gave up reconnecting after {self.give_up_after:.0f} s")
                    return
                await asyncio.sleep(delay * random.uniform(0.8, 1.2))
                delay = min(delay * 2, longest)
                continue
            break
        self.reconnects += 1
        self._emit(Reconnected(url, welcome))
        race = self.race
        if race is not None and race.ended is None:
            if race.spectating:
                with contextlib.suppress(ClientError, TimeoutError):
                    await self.rewatch(race.game, race.v)
            else:
                await self._resume_quietly(race.game, race.v)
        elif self.auto_resume and welcome.games:
            await self._resume_quietly(welcome.games[0], 0)

    async def _resume_quietly(self, game: str, v: int) -> None:
        if self._resuming:
            return
        self._resuming = True
        try:
            await self.resume(game, v)
        except (ClientError, TimeoutError):
            pass
        finally:
            self._resuming = False

    # -- requests -------------------------------------------------------------------------

    async def request(self, message: Message, timeout: float | None = None) -> Message:
        """Send a request (its ``ref`` is set here) and return the answer; raise ``ServerError``.

        Waits for the connection while the client reconnects, and sends the request again
        while the server refuses it as busy (``unavailable`` with ``retry_after_ms``).
        """
        return await self._request(message, timeout=timeout)

    async def _request(
        self,
        message: Message,
        *,
        need_ready: bool = True,
        timeout: float | None = None,
        deadline: float | None = None,
    ) -> Message:
        """Exchange ``message`` for its answer, sending it again while the server is busy.

        An ``unavailable`` refusal with ``retry_after_ms`` says the request was not carried
        out, so sending it again is safe for every request; that goes on until ``deadline``
        (``busy_retry_for`` from now by default), then the refusal is raised.
        """
        if deadline is None:
            deadline = time.monotonic() + self.busy_retry_for
        busy = False
        while True:
            try:
                answer = await self._exchange(message, need_ready=need_ready, timeout=timeout)
            except ServerError as exc:
                refused = exc.code == ErrorCode.UNAVAILABLE.value and exc.retryable
                if refused and await self._wait_busy(exc, message, deadline):
                    busy = True
                    continue
                if busy and not exc.retryable:
                    self._emit(Recovered(message.TYPE))  # the server answers again, with a refusal
                raise
            if busy:
                self._emit(Recovered(message.TYPE))
            return answer

    async def _wait_busy(self, exc: ServerError, message: Message, deadline: float) -> bool:
        """Wait the delay a busy server asked for (a little more); ``False`` past ``deadline``."""
        assert exc.retry_after_ms is not None
        wait = exc.retry_after_ms / 1000 * random.uniform(1.0, 1.2)
        if time.monotonic() + wait > deadline:
            return False
        self._emit(Busy(exc.retry_after_ms, message.TYPE))
        await asyncio.sleep(wait)
        return True

    async def _exchange(self, message: Message, *, need_ready: bool, timeout: float | None) -> Message:
        limit = self.request_timeout if timeout is None else timeout
        if need_ready and not self._ready.is_set():
            if self.closed is not None:
                raise ConnectionLost(f"the session is closed: {self.closed.reason}")
            await asyncio.wait_for(self._ready.wait(), limit)
        ws = self._ws
        if ws is None:
            raise ConnectionLost("not connected")
        ref = next(self._refs)
        message = _with_ref(message, ref)
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._pending[ref] = future
        frame = encode(message, self.fmt)
        decode(frame, self.fmt)  # refuse here what the server would refuse (an id, a name, a code)
        try:
            await ws.send(frame)
        except ConnectionClosed:
            self._pending.pop(ref, None)
            raise ConnectionLost("the connection closed while sending") from None
        try:
            return await asyncio.wait_for(future, limit)
        finally:
            self._pending.pop(ref, None)

    async def _typed(
        self,
        message: Message,
        *expected: type[_M],
        timeout: float | None = None,
        deadline: float | None = None,
    ) -> _M:
        answer = await self._request(message, timeout=timeout, deadline=deadline)
        if not isinstance(answer, expected):
            raise ClientError(f"unexpected answer {answer.TYPE!r} to {message.TYPE!r}")
        return answer

    async def _act(self, action: PlayMove | DealReserve | Undo | Resign) -> Accepted:
        answer = await self._settled(action)
        # The answer may overtake other racers' events; the local state follows once they arrive.
        with contextlib.suppress(TimeoutError):
            await self.caught_up(answer.v, timeout=self.request_timeout)
        return answer

    async def _settled(self, action: PlayMove | DealReserve | Undo | Resign) -> Accepted:
        """Send a game action until its outcome is known, and return its ``accepted``."""
        deadline = time.monotonic() + self.busy_retry_for
        try:
            return await self._typed(action, Accepted, deadline=deadline)
        except ServerError as exc:
            if exc.code != ErrorCode.OUTCOME_UNKNOWN.value or not exc.retryable:
                raise
            unknown = exc
        try:
            answer = await self._settle_unknown(action, unknown, deadline)
        except ServerError as exc:
            if not exc.retryable:
                self._emit(Recovered(action.TYPE))  # the server answers again, with a refusal
            raise
        self._emit(Recovered(action.TYPE))
        return answer

    async def _settle_unknown(
        self, action: PlayMove | DealReserve | Undo | Resign, unknown: ServerError, deadline: float
    ) -> Accepted:
        """Find out whether an action answered ``outcome_unknown`` was applied; if not, send it again.

        After the delay the server asked for, the game is resumed from the action's version:
        this player's ``accepted`` at a later version in the batch is the answer. Otherwise
        the action goes again at the same version, which the server cannot apply twice: a
        ``stale_version`` then means the earlier sending was applied after all.
        """
        while True:
            if not await self._wait_busy(unknown, action, deadline):
                raise unknown
            found = await self._applied(action, deadline, snapshot_tells=False)
            if found is not None:
                return found
            try:
                return await self._typed(action, Accepted, deadline=deadline)
            except ServerError as exc:
                if exc.code == ErrorCode.STALE_VERSION.value:
                    found = await self._applied(action, deadline)
                    if found is None:
                        raise
                    return found
                if exc.code != ErrorCode.OUTCOME_UNKNOWN.value or not exc.retryable:
                    raise
                unknown = exc

    async def _applied(
        self, action: PlayMove | DealReserve | Undo | Resign, deadline: float, *, snapshot_tells: bool = True
    ) -> Accepted | None:
        """Resume the action's game from the action's version; return the action's ``accepted``
        when the missed events hold it.

        Events the tracked race has seen already are skipped by it, so resuming from an older
        version leaves the local state consistent. A ``snapshot`` (too much was missed for a
        batch) holds no events: with ``snapshot_tells`` the action is known to have been
        applied, and its ``accepted`` is the board the snapshot shows.
        """
        resume = Resume(game=action.game, v=action.v)
        caught: Batch | Snapshot = await self._typed(resume, Batch, Snapshot, deadline=deadline)
        if isinstance(caught, Snapshot):
            if not snapshot_tells:
                return None
            return Accepted(
                game=caught.game, v=caught.v, view=caught.view, summary=caught.summary, status=caught.status
            )
        return next((e for e in caught.events if isinstance(e, Accepted) and e.v > action.v), None)

    async def ping(self) -> Pong:
        """Ask for the server's clock."""
        return await self._typed(Ping(), Pong)

    # rooms
    async def room_create(
        self, variant: str = "scorpion", max_players: int = 2, options: Options | None = None
    ) -> RoomState:
        """Open a room (this player is host); the answer holds the code to share."""
        message = RoomCreate(variant=variant, max_players=max_players, options=options or Options())
        return await self._typed(message, RoomState)

    async def room_join(self, room: str) -> RoomState:
        """Join a room by its code."""
        return await self._typed(RoomJoin(room=room.upper()), RoomState)

    async def ready(self, ready: bool = True) -> RoomState:
        """Set this player's ready flag."""
        return await self._typed(Ready(ready=ready), RoomState)

    async def room_leave(self) -> Ok:
        """Leave the room."""
        return await self._typed(RoomLeave(), Ok)

    async def room_start(self) -> Countdown:
        """Start the race (host only, everyone ready); ``race_started`` follows as an event."""
        return await self._typed(RoomStart(), Countdown)

    async def rematch(self, game: str | None = None) -> RoomState:
        """Race the same players again after a race (the current one by default).

        The first racer to ask opens the room and hosts it, the others get
        ``rematch_offered`` and join it by asking too; the race starts as in any room.
        """
        if game is None:
            if self.race is None:
                raise ValueError("no race to ask a rematch of: name its game id")
            game = self.race.game
        return await self._typed(Rematch(game=game), RoomState)

    # quick match
    async def queue_join(self, variant: str = "scorpion", *, rated: bool = True) -> Queued:
        """Wait for a quick match; ``match_found`` and ``race_started`` follow as events.

        A rated match (the default) pairs players of close ratings and changes their
        ratings; ``rated=False`` joins the casual queue.
        """
        return await self._typed(QueueJoin(variant=variant, rated=rated), Queued)

    async def queue_cancel(self) -> Ok:
        """Leave the quick-match queue."""
        return await self._typed(QueueCancel(), Ok)

    # racing
    def _game(self, game: str | None, v: int | None) -> tuple[str, int]:
        race = self.race
        if game is None:
            if race is None:
                raise ClientError("no race is going on: pass the game id")
            game = race.game
        if v is None:
            v = race.v if race is not None and race.game == game else 0
        return game, v

    async def move(
        self, move: Move | str, *, game: str | None = None, v: int | None = None, check: bool = True
    ) -> Accepted:
        """Play a move (a :class:`Move` or text such as ``7H:2-5``); return ``accepted``.

        With ``check`` the shared engine checks the move on the local model first and
        raises :class:`IllegalLocally` instead of sending a move the server would refuse.
        """
        if isinstance(move, str):
            move = move_from_text(move)
        if check and self.race is not None and (game is None or game == self.race.game):
            reason = self.race.explain(move)
            if reason is not None:
                raise IllegalLocally(reason)
        game, v = self._game(game, v)
        if move.is_deal:
            return await self._act(DealReserve(game=game, v=v))
        return await self._act(PlayMove(game=game, v=v, move=WireMove.of(move)))

    async def deal(self, *, game: str | None = None, v: int | None = None) -> Accepted:
        """Deal the reserve."""
        game, v = self._game(game, v)
        return await self._act(DealReserve(game=game, v=v))

    async def undo(self, *, game: str | None = None, v: int | None = None) -> Accepted:
        """Take back this player's last move (when the race allows undo)."""
        game, v = self._game(game, v)
        return await self._act(Undo(game=game, v=v))

    async def hint(self, *, game: str | None = None, v: int | None = None) -> Hints:
        """Ask for hints: legal moves, best first (when the race allows hints)."""
        game, v = self._game(game, v)
        return await self._typed(HintRequest(game=game, v=v), Hints)

    async def resign(self, *, game: str | None = None, v: int | None = None) -> Accepted:
        """Give up this race."""
        game, v = self._game(game, v)
        return await self._act(Resign(game=game, v=v))

    async def resume(self, game: str, v: int = 0) -> Batch | Snapshot:
        """Catch up with a race after version ``v``: a ``batch`` of missed events or a ``snapshot``."""
        return await self._typed(Resume(game=game, v=v), Batch, Snapshot)

    # spectating
    async def games_list(self, variant: str | None = None, subscribe: bool = False) -> Games:
        """List the live races that may be watched.

        With ``subscribe`` the server then pushes ``games_update`` messages; :attr:`games`
        follows them (game id to game info). ``subscribe=False`` ends a subscription.
        """
        return await self._typed(GamesList(variant=variant, subscribe=subscribe), Games)

    async def watch(self, *, game: str | None = None, room: str | None = None) -> SpectatorSnapshot:
        """Watch a race by game id or room code."""
        return await self._typed(Watch(game=game, room=room.upper() if room else None), SpectatorSnapshot)

    async def rewatch(self, game: str, v: int) -> SpectateBatch | SpectatorSnapshot:
        """Watch a race again after a reconnect: the events missed since ``v``, or a snapshot."""
        return await self._typed(Watch(game=game, v=v), SpectateBatch, SpectatorSnapshot)

    async def unwatch(self, game: str | None = None) -> Ok:
        """Stop watching."""
        if game is None:
            game, _ = self._game(None, None)
        return await self._typed(Unwatch(game=game), Ok)

    async def replay(self, game: str) -> ReplayLog:
        """Return the move log of a finished game (every racer's moves and their times)."""
        return await self._typed(Replay(game=game), ReplayLog)

    # solo play
    async def solo_new(
        self, variant: str = "scorpion", reserve_rule: str = "any-time", *, save: bool = True
    ) -> RaceStarted:
        """Start a solo game on a fresh secret deal (New Game); undo and hints are allowed.

        With ``save`` the server keeps the game as it goes: :meth:`saved_games` lists it and
        :meth:`solo_resume` continues it, from any device with this player's token.
        """
        return await self._typed(SoloNew(variant=variant, reserve_rule=reserve_rule, save=save), RaceStarted)

    async def solo_replay(self, game: str | None = None) -> RaceStarted:
        """Play the deal of one of this player's solo games again from the start, as a new game.

        ``game`` defaults to the game being played (or just finished).
        """
        if game is None:
            game, _ = self._game(None, None)
        return await self._typed(SoloReplay(game=game), RaceStarted)

    async def solo_resume(self, game: str) -> Snapshot:
        """Continue a saved solo game; the answer (and :attr:`race`) is its full state."""
        return await self._typed(SoloResume(game=game), Snapshot)

    async def saved_games(self) -> SavedGamesList:
        """Return this player's saved solo games in progress, newest first."""
        return await self._typed(SavedGames(), SavedGamesList)

    # daily tournament, leaderboards, statistics, account
    async def daily_info(self, variant: str = "scorpion") -> Daily:
        """Return today's daily deal: date, commitment, whether played and finished, yesterday's reveal."""
        return await self._typed(DailyInfo(variant=variant), Daily)

    async def daily_start(self, variant: str = "scorpion", *, practice: bool = False) -> RaceStarted:
        """Start today's daily deal: the ranked attempt (once a day), or with ``practice`` an unranked replay.

        Raises ``ServerError`` ``daily_already_played`` for a second ranked attempt and
        ``not_allowed`` for practice before the ranked attempt is over.
        """
        return await self._typed(DailyStart(variant=variant, practice=practice), RaceStarted)

    async def leaderboard(
        self,
        variant: str = "scorpion",
        date: str | None = None,
        *,
        offset: int = 0,
        limit: int = 20,
        subscribe: bool = False,
    ) -> LeaderboardPage:
        """Return ranks ``offset + 1`` to ``offset + limit`` of a day's board (today by default).

        With ``subscribe`` the server pushes a fresh first page (without ``ref``) whenever the
        board changes; :attr:`leaderboard_page` is always the latest page received.
        """
        message = Leaderboard(variant=variant, date=date, offset=offset, limit=limit, subscribe=subscribe)
        return await self._typed(message, LeaderboardPage)

    async def around_me(
        self, variant: str = "scorpion", date: str | None = None, radius: int = 5
    ) -> LeaderboardPage:
        """Return this player's rank with ``radius`` neighbours above and below (empty when absent)."""
        return await self._typed(AroundMe(variant=variant, date=date, radius=radius), LeaderboardPage)

    async def stats(self, variant: str | None = None) -> StatsInfo:
        """Return this player's statistics, per variant (every variant played when ``variant`` is None)."""
        return await self._typed(Stats(variant=variant), StatsInfo)

    # the solver: post-game analysis and practice hints
    async def analyze(self, game: str | None = None) -> Analysis:
        """Return the analysis of one of this player's finished games (the tracked race by default).

        Raises ``ServerError`` ``not_allowed`` while the game runs (or for a daily game
        before its day is over) and ``unavailable`` while it is still being computed (the
        server then pushes it when ready: see :meth:`analysis`).
        """
        if game is None:
            game, _ = self._game(None, None)
        return await self._typed(Analyze(game=game), Analysis)

    async def analysis(self, game: str | None = None, timeout: float = 30.0) -> Analysis:
        """Return the analysis of a finished game, waiting for the server's push if needed.

        The analysis already pushed is returned at once; otherwise it is asked for with
        ``analyze``, and while the server is still computing it (``unavailable``) the push
        is awaited for up to ``timeout`` seconds (``TimeoutError`` then). For the race being
        played, its end is awaited first.
        """
        if game is None:
            game, _ = self._game(None, None)
        known = self.analyses.get(game)
        if known is not None:
            return known
        race = self.race
        if race is not None and race.game == game and not race.spectating and race.ended is None:
            await self.wait_for(RaceEnded, timeout=timeout, game=game)  # analysed once it is over
        pushed = asyncio.ensure_future(self.wait_for(Analysis, timeout=timeout, game=game))
        try:
            try:
                return await self.analyze(game)
            except ServerError as exc:
                if exc.code != ErrorCode.UNAVAILABLE.value or exc.retryable:
                    raise  # refused, or the storage stayed out of reach: not still being computed
            known = self.analyses.get(game)  # pushed before the waiter was in place
            return known if known is not None else await pushed
        finally:
            pushed.cancel()
            with contextlib.suppress(asyncio.CancelledError, ClientError, TimeoutError):
                await pushed

    # ratings and profiles
    async def profile(self, player: str | None = None) -> Profile:
        """Return a player's profile (this player's own by default): ratings, statistics, recent games."""
        return await self._typed(ProfileRequest(player=player), Profile)

    async def rating_board(
        self, variant: str = "scorpion", *, offset: int = 0, limit: int = 20, around_me: bool = False
    ) -> RatingPage:
        """Return a page of a variant's rating board, or (``around_me``) the page around this player."""
        request = RatingBoard(variant=variant, offset=offset, limit=limit, around_me=around_me)
        return await self._typed(request, RatingPage)

    async def rating_change(self, game: str | None = None, timeout: float = 30.0) -> RatingChange:
        """Return how a rated race changed its racers' ratings, waiting for the server's push.

        The tracked race by default. Raises ``TimeoutError`` if none comes (the race was
        not rated).
        """
        if game is None:
            game, _ = self._game(None, None)
        known = self.rating_changes.get(game)
        if known is not None:
            return known
        return await self.wait_for(RatingChange, timeout=timeout, game=game)

    async def replay_positions(self, game: str, player: str) -> ReplayPositionsInfo:
        """Return every position one racer of a finished game went through, move by move."""
        return await self._typed(ReplayPositions(game=game, player=player), ReplayPositionsInfo)

    async def winnable(self, *, game: str | None = None, v: int | None = None) -> WinnableInfo:
        """Ask, in a solo game only, whether the position can still be won, and a winning move.

        The answer's ``move`` (wire form, see :func:`protocol.game.move_from_json`) is a
        first move of a winning line when the verdict is ``winnable``. Races and daily
        games refuse it with ``not_allowed``. :attr:`RaceState.winnable
        <client.state.RaceState.winnable>` keeps the answer while the board is unchanged.
        """
        game, v = self._game(game, v)
        limit = max(self.request_timeout, 30.0)  # the solver may take a few seconds
        return await self._typed(Winnable(game=game, v=v), WinnableInfo, timeout=limit)

    async def slipped_move(self, analysis: Analysis) -> Move | None:
        """Return the player's move after which the game could no longer be won (``None`` if none).

        The analysis gives its index in the player's final line; the line comes from the
        game's ``replay_log`` (undos taken back).
        """
        if analysis.slipped is None:
            return None
        line = final_line(await self.replay(analysis.game), analysis.player)
        return line[analysis.slipped] if 0 <= analysis.slipped < len(line) else None

    async def forget_me(self) -> Forgotten:
        """Erase this player on the server (saved games, statistics, leaderboard entries, identity).

        Returns ``forgotten`` with what was removed; the stored token is deleted and the
        server then closes the session (code 1000: no reconnect).
        """
        answer = await self._typed(ForgetMe(), Forgotten)
        if self.store is not None:
            self.store.forget(self.urls[0])
        self.token = None
        return answer


def _with_ref(message: Message, ref: int) -> Message:
    return message.answering(ref)
