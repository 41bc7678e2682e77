"""The connection under the client library: the websocket, reconnection, requests and answers.

:class:`Connection` opens a websocket to a server (msgpack by default, JSON on request),
says ``hello`` with the stored token, sends each request with a ``ref`` and returns the
answer bearing it (or raises :class:`~client.errors.ServerError`), and delivers everything
the server sends, with its own notices, through :meth:`Connection.events`. The typed
requests and the state they expose are :class:`client.api.ScorpionClient`, built on it.

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
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, Self, TypeVar

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from protocol.wire.codec import MAX_SERVER_FRAME, MSGPACK, Format, decode, encode
from protocol.wire.error import ErrorCode, ProtocolError
from protocol.wire.flow import CLOSE_NORMAL, CLOSE_POLICY, CLOSE_TOO_LARGE, Flow, State
from protocol.wire.message import (
    Accepted,
    Analysis,
    Batch,
    DealReserve,
    Error,
    GameInfo,
    Hello,
    LeaderboardPage,
    Message,
    PlayMove,
    RaceEnded,
    RatingChange,
    RematchOffered,
    Resign,
    Resume,
    RoomState,
    Snapshot,
    SpectateBatch,
    SpectatorSnapshot,
    Undo,
    Watch,
    Welcome,
)

from .errors import (
    Busy,
    ClientError,
    Closed,
    ConnectionLost,
    Disconnected,
    Event,
    Reconnected,
    Recovered,
    ServerError,
)
from .identity import Identity, TokenStore
from .state import RaceState

__all__ = ["CLIENT_NAME", "Connection"]

CLIENT_NAME = "scorpion-py 0.1"
_M = TypeVar("_M", bound=Message)

_NO_RECONNECT = {CLOSE_NORMAL, CLOSE_POLICY, CLOSE_TOO_LARGE}


class Connection:
    """The connection of one player's (or spectator's) session with a Scorpion Race server."""

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
        # What the server's messages tell, followed by ScorpionClient._track (client/api.py);
        # a reconnect resumes the race from its last version.
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
        self._gap_timer = False
        self.gap_wait = 0.5
        self._version_waiters: list[tuple[str, int, asyncio.Future[None]]] = []
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

    async def __aenter__(self) -> Self:
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
        """Follow the session's state (the race, the room, pushed lists) in a message: the API's part."""

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

    async def resume(self, game: str, v: int = 0) -> Batch | Snapshot:
        """Catch up with a race after version ``v``: a ``batch`` of missed events or a ``snapshot``."""
        return await self._typed(Resume(game=game, v=v), Batch, Snapshot)

    async def rewatch(self, game: str, v: int) -> SpectateBatch | SpectatorSnapshot:
        """Watch a race again after a reconnect: the events missed since ``v``, or a snapshot."""
        return await self._typed(Watch(game=game, v=v), SpectateBatch, SpectatorSnapshot)

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
            async with asyncio.timeout(limit):  # not wait_for, which can drop a cancellation (3.11)
                await self._ready.wait()
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


def _with_ref(message: Message, ref: int) -> Message:
    return message.answering(ref)
