"""The server object: startup, the websocket handler and its dispatch, HTTP, shutdown.

Shaped like uvicorn's server: :meth:`ScorpionServer.start` brings up Redis (embedded or
given), pub/sub and the listening socket; :meth:`ScorpionServer.serve` runs until a signal;
:meth:`ScorpionServer.shutdown` stops accepting, closes every connection with code 1012 so
clients resume on another node, and waits a bounded time. Acknowledged moves are already
in Redis when they are acknowledged, so a shutdown (or a crash) loses none of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import json
import logging
import os
import socket
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from http import HTTPStatus
from pathlib import Path
from typing import Any, ClassVar

import orjson
from websockets.asyncio.server import Server, ServerConnection, broadcast, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from protocol.game import VARIANTS, move_text
from protocol.wire.codec import MAX_CLIENT_FRAME, MSGPACK, SUBPROTOCOLS, Format, decode, encode, format_of
from protocol.wire.error import ErrorCode, ProtocolError
from protocol.wire.flow import CLOSE_NORMAL, CLOSE_POLICY, CLOSE_RESTART, State
from protocol.wire.message import (
    MAX_PLAYERS,
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
    Leaderboard,
    LeaderboardEntry,
    LeaderboardPage,
    MatchFound,
    Message,
    Ok,
    Options,
    Ping,
    PlayMove,
    Pong,
    QueueCancel,
    Queued,
    QueueJoin,
    QueueTimeout,
    Racer,
    Ready,
    Rematch,
    RematchOffered,
    Replay,
    Resign,
    Resume,
    RoomCreate,
    RoomJoin,
    RoomLeave,
    RoomPlayer,
    RoomStart,
    RoomState,
    SavedGame,
    SavedGames,
    SavedGamesList,
    SoloNew,
    SoloReplay,
    SoloResume,
    SpectateBatch,
    Spectators,
    Stats,
    StatsInfo,
    Undo,
    Unwatch,
    VariantStats,
    Watch,
    Welcome,
    Winnable,
    WinnableInfo,
)

from .analysis import analyze_game, check_position
from .config import Config
from .daily import DailyService, leaderboard_key
from .embedded import EmbeddedRedis
from .hub import Hub
from .lifeline import worker_pool
from .metrics import CONTENT_TYPE, Metrics
from .race import LiveGame, RaceService, new_game_id, now_ms, project
from .session import Session
from .store import (
    LIVE_CHANNEL,
    UNREACHABLE,
    Store,
    StoreError,
    board_channel,
    game_channel,
    player_channel,
)

__all__ = ["ScorpionServer"]

log = logging.getLogger("scorpion.server")

FRAME_CACHE = 4096
"""Encoded spectator frames kept (a few seconds of every live game's events)."""
RESUME_BATCH_LIMIT = 100
"""Missed events above which a resuming client gets a snapshot instead of a batch."""
FAN_OUT_BATCH = 64
"""Spectator sockets written to between two turns of the event loop."""


def _listen_error(exc: OSError) -> str:
    """Say why a listening socket could not be opened, and what to try."""
    if isinstance(exc, socket.gaierror):
        return f"{exc.strerror} (is --host a name or address of this machine?)"
    if exc.errno == errno.EADDRINUSE:
        return "the port is in use (is another server running there? choose another --port)"
    if exc.errno == errno.EADDRNOTAVAIL:
        return "that address is not one of this machine's (choose another --host)"
    if exc.errno == errno.EACCES:
        return "permission denied (ports below 1024 need privileges: choose another --port)"
    return os.strerror(exc.errno) if exc.errno and exc.errno > 0 else str(exc)


class ScorpionServer:
    """One node of Scorpion Race."""

    def __init__(self, config: Config, clock: Callable[[], float] = time.time) -> None:
        self.config = config
        self.clock = clock
        self.node = config.node_id or f"{socket.gethostname()}-{os.getpid()}"
        self.metrics = Metrics()
        self.embedded: EmbeddedRedis | None = None
        self.store: Store
        self.hub: Hub
        self.race: RaceService
        self.server: Server | None = None
        self.sessions: set[Session] = set()
        self.by_player: dict[str, set[Session]] = {}
        self.tasks: set[asyncio.Task[Any]] = set()
        self.watchers: dict[str, set[Session]] = {}
        self.fanouts: dict[str, deque[tuple[int, dict[str, Any]]]] = {}
        """Per game, events waiting to be written to this node's spectators, in order."""
        self.followed: set[str] = set()
        self.board_watchers: dict[tuple[str, str], set[Session]] = {}
        self.list_watchers: set[Session] = set()
        self.frames: OrderedDict[tuple[str, int, str], bytes | str] = OrderedDict()
        self.solver_pool: ProcessPoolExecutor | None = None
        self.spectator_totals: dict[str, int] = {}
        self.stopping = False
        self.web_dir = _find_web_dir(config.web_dir)
        self.test_deals = [int(n) for n in config.test_deals.split(",") if n.strip()]
        if self.test_deals:
            log.warning(
                "using fixed test deals: never do this in production", extra={"deals": config.test_deals}
            )

    # -- lifecycle ----------------------------------------------------------------------

    async def start(self) -> None:
        """Bring up Redis, pub/sub and the listening socket.

        If any of it fails, what was brought up is stopped again (the embedded store first
        of all) before the error is raised.
        """
        try:
            await self._start()
        except BaseException:
            await self._abandon_start()
            raise

    async def _abandon_start(self) -> None:
        for task in list(self.tasks):
            task.cancel()
        with contextlib.suppress(Exception):
            if hasattr(self, "hub"):
                await self.hub.stop()
        with contextlib.suppress(Exception):
            if hasattr(self, "store"):
                await self.store.close()
        if self.embedded is not None:
            await self.embedded.stop()

    async def _start(self) -> None:
        url = self.config.redis_url
        if url is None:
            self.embedded = EmbeddedRedis(self.config.data_dir, on_restart=self.metrics.store_restarts.inc)
            url = await self.embedded.start()
        instance = f"{self.node}#{uuid.uuid4().hex[:8]}"
        self.store = Store(url, daily_secret=self.config.daily_secret, origin=self.node, instance=instance)
        if not await self.store.ping():
            raise RuntimeError(f"Redis at {url} does not answer")
        self.hub = Hub(self.store, on_error=self.metrics.redis_errors.inc)
        await self.hub.start()
        self.race = RaceService(
            self.store,
            node=self.node,
            time_limit=self.config.race_time_limit,
            keep_finished=self.config.finished_game_ttl,
            on_game_loaded=self._game_loaded,
            on_race_done=self._race_done,
            on_event=self._local_event,
        )
        self.spawn(self._count_spectators())
        self.spawn(self._heartbeat())
        self.daily = DailyService(self.store, clock=self.clock, keep_days=self.config.leaderboard_days)
        try:
            self.server = await self._listen()
        except OSError as exc:
            raise RuntimeError(
                f"cannot listen on {self.config.host}:{self.config.port}: {_listen_error(exc)}"
            ) from None
        log.info("listening", extra={"host": self.config.host, "port": self.port, "node": self.node})

    async def _listen(self) -> Server:
        return await serve(
            self.handle,
            self.config.host,
            self.config.port,
            subprotocols=list(SUBPROTOCOLS),  # type: ignore[arg-type]
            select_subprotocol=_select_subprotocol,
            process_request=self.http,
            max_size=8 * MAX_CLIENT_FRAME,
            ping_interval=self.config.ping_interval,
            ping_timeout=self.config.ping_timeout,
            close_timeout=self.config.close_timeout,
            compression=None,
            server_header="scorpion-race",
        )

    @property
    def port(self) -> int:
        """Return the TCP port actually bound (useful with ``--port 0``)."""
        assert self.server is not None
        for sock in self.server.sockets:
            return int(sock.getsockname()[1])
        return self.config.port

    async def shutdown(self) -> None:
        """Stop accepting, close clients with 1012, wait a bounded time, stop Redis."""
        if self.stopping:
            return
        self.stopping = True
        if self.server is not None:
            self.server.close(close_connections=False)
        closing = [
            asyncio.create_task(s.ws.close(CLOSE_RESTART, "server restarting: reconnect and resume"))
            for s in list(self.sessions)
        ]
        if closing:
            await asyncio.wait(closing, timeout=self.config.shutdown_timeout)
        if self.server is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.server.wait_closed(), self.config.shutdown_timeout)
        for task in list(self.tasks):
            task.cancel()
        if self.solver_pool is not None:
            self.solver_pool.shutdown(wait=False, cancel_futures=True)
        await self.hub.stop()
        await self.store.close()
        if self.embedded is not None:
            await self.embedded.stop()
        log.info("stopped", extra={"node": self.node})

    def spawn(self, coro: Awaitable[Any], name: str = "") -> asyncio.Task[Any]:
        """Run a background task the server keeps track of (and cancels at shutdown)."""
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task failed", exc_info=task.exception())

    # -- HTTP ---------------------------------------------------------------------------

    async def http(self, connection: ServerConnection, request: Request) -> Response | None:
        """Answer plain HTTP requests on the websocket port: health, metrics, the browser client.

        Only GET and HEAD are served (a websocket handshake is a GET); a HEAD gets the
        GET's headers without its body.
        """
        if request.method not in ("GET", "HEAD"):
            text = f"{request.method} is not served here: use GET\n".encode()
            refused = _response(HTTPStatus.METHOD_NOT_ALLOWED, text, "text/plain; charset=utf-8")
            refused.headers["Allow"] = "GET, HEAD"
            return refused
        response = await self._http_get(request)
        if response is not None and request.method == "HEAD":
            response = dataclasses.replace(response, body=b"")
        return response

    async def _http_get(self, request: Request) -> Response | None:
        path = request.path.split("?", 1)[0]
        if path == "/healthz":
            healthy = await self.store.ping()
            status = HTTPStatus.OK if healthy and not self.stopping else HTTPStatus.SERVICE_UNAVAILABLE
            body = b"ok\n" if status is HTTPStatus.OK else b"unavailable\n"
            return _response(status, body, "text/plain; charset=utf-8")
        if path == "/metrics":
            self.metrics.live_games.set(sum(1 for g in self.race.games.values() if not g.ended))
            return _response(HTTPStatus.OK, self.metrics.render(), CONTENT_TYPE)
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return None
        return self.static(path)

    def static(self, path: str) -> Response:
        """Serve a file of the browser client (``/`` is its ``index.html``)."""
        root = self.web_dir
        if root is None:
            return _response(HTTPStatus.NOT_FOUND, b"the browser client is not installed\n", "text/plain")
        relative = "index.html" if path in ("", "/") else path.lstrip("/")
        target = (root / relative).resolve()
        if not target.is_relative_to(root) or not target.is_file():
            return _response(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain; charset=utf-8")
        kind = _CONTENT_TYPES.get(target.suffix, "application/octet-stream")
        response = _response(HTTPStatus.OK, target.read_bytes(), kind)
        response.headers["Cache-Control"] = "no-cache"
        for name, value in _PAGE_HEADERS.items():
            response.headers[name] = value
        return response

    # -- connections --------------------------------------------------------------------

    async def handle(self, ws: ServerConnection) -> None:
        """Serve one websocket connection until it closes."""
        fmt = MSGPACK if ws.subprotocol is None else format_of(ws.subprotocol)
        session = Session(self, ws, fmt)
        self.sessions.add(session)
        self.metrics.connections.inc()
        session.writer = asyncio.create_task(session.run_writer())
        try:
            async for frame in ws:
                verdict = session.spend_credit()
                if verdict != "ok":
                    self._refuse(
                        session, ProtocolError(ErrorCode.RATE_LIMITED, "too many messages: slow down")
                    )
                    if verdict == "close":
                        await session.close_after_flush(CLOSE_POLICY, "rate limit exceeded")
                        break
                    continue
                await self.receive(session, frame)
        except ConnectionClosed:
            pass
        finally:
            await self._disconnect(session)

    async def receive(self, session: Session, frame: bytes | str) -> None:
        """Decode, check and dispatch one frame; every failure becomes an ``error``."""
        message: Message | None = None
        try:
            expected = bytes if session.fmt == MSGPACK else str
            if not isinstance(frame, expected):
                raise ProtocolError(
                    ErrorCode.BAD_FRAME,
                    f"{session.fmt} uses {'binary' if expected is bytes else 'text'} frames",
                )
            message = decode(frame, session.fmt)
            session.flow.check(message)
            await self.dispatch(session, message)
        except ProtocolError as exc:
            self._refuse(session, exc.with_ref(message.ref if message else None))
        except StoreError as exc:
            self._refuse(session, ProtocolError(exc.code, exc.message, ref=message.ref if message else None))
        except UNREACHABLE as exc:
            self.metrics.redis_errors.inc()
            log.warning("storage unavailable", extra={"error": repr(exc)})
            ref = message.ref if message else None
            self._refuse(
                session, ProtocolError(ErrorCode.UNAVAILABLE, "storage is unavailable; retry", ref=ref)
            )
        except Exception:
            log.exception("request failed", extra={"session": session.id})
            ref = message.ref if message else None
            self._refuse(
                session, ProtocolError(ErrorCode.INTERNAL, "the server failed on this request", ref=ref)
            )

    def _refuse(self, session: Session, error: ProtocolError) -> None:
        self.metrics.errors_sent.labels(error.code.value).inc()
        session.send(
            Error(code=error.code.value, message=error.message[:512], field=error.field, ref=error.ref)
        )

    async def _disconnect(self, session: Session) -> None:
        self.sessions.discard(session)
        self.metrics.connections.dec()
        session.close_queue()
        if session.writer is not None:
            session.writer.cancel()
        for game_id in list(session.watching):
            await self._stop_watching(session, game_id)
        await self._stop_following_list(session)
        for key in list(session.boards):
            watchers = self.board_watchers.get(key, set())
            watchers.discard(session)
            if not watchers:
                self.board_watchers.pop(key, None)
                with contextlib.suppress(Exception):
                    await self.hub.unsubscribe(board_channel(*key), self._on_board_change)
        if session.player is None:
            return
        player = session.player
        peers = self.by_player.get(player, set())
        peers.discard(session)
        if not peers:
            self.by_player.pop(player, None)
            with contextlib.suppress(Exception):
                await self.hub.unsubscribe(player_channel(player), self._on_player_notice)
        for game_id in list(session.games):
            await self._detach(session, game_id)
        if session.forgotten:
            return  # nothing of theirs is left to clean up
        with contextlib.suppress(Exception):
            remaining = await self.store.presence(player, -1)
            if session.queued:
                await self.store.dequeue(session.queued, player)
            if session.room and session.flow.state is State.IN_ROOM and remaining == 0:
                await self._leave_room(session)
            if remaining == 0:
                places = await self.store.player_places(player)
                if "game" in places:
                    self.spawn(self._grace(player, places["game"]))

    async def _heartbeat(self) -> None:
        """Tell the other nodes this one is alive; take over the racers of nodes that died.

        A node killed without closing its connections leaves its players counted as
        connected. Once it has been silent for ``node_timeout``, every other node drops
        that node's connections of the racers in the games it follows and starts their
        grace period, as if they had just disconnected (a racer who comes back in time,
        to any node, races on). A node that finds itself silent for that long (stalled,
        or cut off from Redis) states its own connections again.
        """
        handled: set[str] = set()
        timeout_ms = int(self.config.node_timeout * 1000)
        last = now_ms()
        while True:
            try:
                now = now_ms()
                silent = await self.store.heartbeat(now, timeout_ms)
                if now - last > timeout_ms:
                    await self.store.restate_presence({p: len(s) for p, s in self.by_player.items()})
                last = now
                for node in silent:
                    if node not in handled:
                        handled.add(node)
                        await self._take_over(node)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.metrics.redis_errors.inc()
                log.warning("heartbeat failed", extra={"error": repr(exc)})
            await asyncio.sleep(self.config.node_heartbeat)

    async def _take_over(self, node: str) -> None:
        log.warning("a node went silent: its racers get their grace period", extra={"silent": node})
        for game in list(self.race.games.values()):
            if game.ended:
                continue
            for player, status in list(game.status.items()):
                if status == "playing" and await self.store.forget_node_presence(player, node) == 0:
                    self.spawn(self._grace(player, game.game_id))

    async def _grace(self, player: str, game_id: str) -> None:
        await asyncio.sleep(self.config.grace_period)
        if await self.store.presence(player, 0) > 0:
            return
        game = await self.race.load(game_id)
        if game is not None and game.saved:
            return  # a saved solo game waits for its player
        await self.race.mark_left(game_id, player)

    async def _own_game(self, session: Session, game_id: str, stranger: str) -> LiveGame:
        """Return a kept game the session's player races in; else ``no_such_game`` or ``not_your_game``."""
        game = await self.race.load(game_id)
        if game is None:
            raise ProtocolError(ErrorCode.NO_SUCH_GAME, f"no game {game_id!r} is kept")
        if session.player not in game.status:
            raise ProtocolError(ErrorCode.NOT_YOUR_GAME, stranger)
        return game

    # -- dispatch -----------------------------------------------------------------------

    async def dispatch(self, session: Session, message: Message) -> None:
        """Run the handler of one checked client message."""
        handler = self._handlers.get(type(message))
        if handler is None:
            raise ProtocolError(ErrorCode.UNAVAILABLE, f"{message.TYPE!r} is not served by this version yet")
        await handler(self, session, message)

    async def on_hello(self, session: Session, message: Hello) -> None:
        if message.token:
            found = await self.store.player_by_token(message.token)
            if found is None:
                raise ProtocolError(
                    ErrorCode.BAD_TOKEN, "that token is unknown: say hello without it to start anew"
                )
            player, name = found
            token = message.token
            if name != message.name:
                await self.store.rename_player(player, message.name)
        else:
            player, token = await self.store.create_player(message.name, now_ms())
        session.player, session.name = player, message.name
        peers = self.by_player.setdefault(player, set())
        if not peers:
            await self.hub.subscribe(player_channel(player), self._on_player_notice)
        peers.add(session)
        await self.store.presence(player, 1)
        places = await self.store.player_places(player)
        games: tuple[str, ...] = ()
        if "game" in places:
            game = await self.race.load(places["game"])
            if game is not None and not game.ended:
                games = (game.game_id,)
        session.send(
            Welcome(player=player, token=token, name=message.name, now=now_ms(), games=games, ref=message.ref)
        )

    async def on_ping(self, session: Session, message: Ping) -> None:
        session.send(Pong(now=now_ms(), ref=message.ref))

    # rooms ------------------------------------------------------------------------------

    async def on_room_create(self, session: Session, message: RoomCreate) -> None:
        assert session.player is not None
        settings = {
            "variant": message.variant,
            "max_players": message.max_players,
            "options": json.dumps(message.options.to_dict()),
        }
        code = await self.store.create_room(session.player, settings, int(self.config.room_ttl * 1000))
        session.room = code
        await self.store.set_player_place(session.player, room=code)
        await self._publish_room(code, ref_to=(session, message.ref))

    async def on_room_join(self, session: Session, message: RoomJoin) -> None:
        assert session.player is not None
        await self.store.join_room(message.room, session.player, int(self.config.room_ttl * 1000))
        session.room = message.room
        await self.store.set_player_place(session.player, room=message.room)
        await self._publish_room(message.room, ref_to=(session, message.ref))

    async def on_ready(self, session: Session, message: Ready) -> None:
        assert session.player is not None and session.room is not None
        await self.store.set_ready(session.room, session.player, message.ready)
        await self._publish_room(session.room, ref_to=(session, message.ref))

    async def on_room_leave(self, session: Session, message: RoomLeave) -> None:
        await self._leave_room(session)
        session.send(Ok(to="room_leave", ref=message.ref))

    async def _leave_room(self, session: Session) -> None:
        assert session.player is not None
        code, session.room = session.room, None
        if code is None:
            return
        result = await self.store.leave_room(code, session.player)
        await self.store.set_player_place(session.player, room="")
        if result == "ok":
            await self._publish_room(code)

    async def on_room_start(self, session: Session, message: RoomStart) -> None:
        assert session.player is not None and session.room is not None
        room = await self.store.room(session.room)
        if room is None:
            raise ProtocolError(ErrorCode.NO_SUCH_ROOM, "the room is gone")
        if room["host"] != session.player:
            raise ProtocolError(ErrorCode.NOT_HOST, "only the room's host can start the race")
        others = [m for m in room["members"] if m != room["host"]]
        if not others:
            raise ProtocolError(ErrorCode.NOT_READY, "a race needs at least two players")
        unready = [
            n
            for m, n in zip(room["members"], room["names"], strict=True)
            if m in others and m not in room["ready"]
        ]
        if unready:
            raise ProtocolError(ErrorCode.NOT_READY, f"not ready yet: {', '.join(unready)}")
        game_id = new_game_id()
        await self.store.start_room(session.room, session.player, game_id)
        start = now_ms() + int(self.config.countdown_seconds * 1000)
        seconds = round(self.config.countdown_seconds)
        session.send(Countdown(room=session.room, seconds=seconds, start=start, ref=message.ref))
        notice = {"kind": "countdown", "room": session.room, "seconds": seconds, "start": start}
        for member in room["members"]:
            if member != session.player:
                await self.store.notify(member, notice)
        racers = list(zip(room["members"], room["names"], strict=True))
        options = Options.from_dict(json.loads(room["options"]))
        rematch_of = room.get("rematch_of") or None
        self.spawn(self._launch(racers, room["variant"], options, session.room, game_id, rematch_of))

    async def _launch(
        self,
        racers: list[tuple[str, str]],
        variant: str,
        options: Options,
        room: str | None,
        game_id: str,
        rematch_of: str | None = None,
    ) -> None:
        await asyncio.sleep(self.config.countdown_seconds)
        number = self._next_test_deal()  # None: a fresh secret number
        await self.race.start_race(
            racers, variant, options, room=room, game_id=game_id, number=number, rematch_of=rematch_of
        )
        if room:
            await self.store.set_room_state(room, "racing")
        for pid, _ in racers:
            await self.store.notify(pid, {"kind": "race", "game": game_id})

    async def _publish_room(self, code: str, ref_to: tuple[Session, Any] | None = None) -> None:
        room = await self.store.room(code)
        if room is None:
            return
        state = self._room_state(room)
        if ref_to is not None:
            session, ref = ref_to
            session.send(dataclasses.replace(state, ref=ref))
        for member in room["members"]:
            if ref_to is not None and member == ref_to[0].player:
                continue
            await self.store.notify(member, {"kind": "room", "room": state.to_dict()})

    def _room_state(self, room: dict[str, Any]) -> RoomState:
        players = tuple(
            RoomPlayer(player=m, name=n, ready=m in room["ready"] or m == room["host"])
            for m, n in zip(room["members"], room["names"], strict=True)
        )
        return RoomState(
            room=room["code"],
            variant=room["variant"],
            max_players=int(room["max_players"]),
            options=Options.from_dict(json.loads(room["options"])),
            host=room["host"],
            players=players,
        )

    async def on_rematch(self, session: Session, message: Rematch) -> None:
        """Put the player in the room of a race's rematch, opening it if nobody has yet.

        The room has the race's variant, options and size, and its first player is its
        host; the race's other racers are told (``rematch_offered``) and join it the same
        way. A rematch room that closed, started or filled up is replaced by a new one.
        """
        assert session.player is not None
        game = await self._own_game(session, message.game, "only the race's own racers can ask for a rematch")
        await self._maybe_forget(game)  # only read here: not kept on this node for it
        if game.mode != "race" or len(game.roster) < 2:
            raise ProtocolError(
                ErrorCode.NOT_ALLOWED,
                "a rematch is for races between players (solo games have New game and Replay)",
            )
        if not game.ended:
            raise ProtocolError(ErrorCode.NOT_ALLOWED, "the race is still on: a rematch comes after it")
        ttl_ms = int(self.config.room_ttl * 1000)
        for _ in range(3):
            code = await self.store.rematch_room(game.game_id)
            if code is not None:
                try:
                    await self.store.join_room(code, session.player, ttl_ms)
                except StoreError as exc:
                    if exc.code not in ("no_such_room", "room_started", "room_full"):
                        raise
                    await self.store.drop_rematch(game.game_id, code)
                    continue
                opened = False
            else:
                if await self.store.rematch_openings(game.game_id, session.player) >= REMATCH_OPENINGS:
                    raise ProtocolError(
                        ErrorCode.NOT_ALLOWED,
                        f"you have opened {REMATCH_OPENINGS} rematch rooms for this race already:"
                        " open a room instead and share its code",
                    )
                size = max(len(game.roster), await self.store.room_size(game.room) if game.room else 0)
                settings = {
                    "variant": game.variant,
                    "max_players": min(size, MAX_PLAYERS),
                    "options": json.dumps(game.options.to_dict()),
                    "rematch_of": game.game_id,
                }
                code = await self.store.create_room(session.player, settings, ttl_ms)
                held = await self.store.claim_rematch(game.game_id, code, ttl_ms)
                if held != code:  # another racer opened one at the same moment: go there
                    await self.store.leave_room(code, session.player)
                    continue
                opened = True
                await self.store.count_rematch_opening(game.game_id, session.player, ttl_ms)
                self.metrics.rematches.inc()
            session.room = code
            await self.store.set_player_place(session.player, room=code)
            await self._publish_room(code, ref_to=(session, message.ref))
            if opened:
                notice = {
                    "kind": "rematch",
                    "game": game.game_id,
                    "room": code,
                    "player": session.player,
                    "name": session.name or "?",
                }
                for racer, _ in game.roster:
                    if racer != session.player:
                        await self.store.notify(racer, notice)
            return
        raise ProtocolError(ErrorCode.UNAVAILABLE, "the rematch room could not be opened; try again")

    # quick match ------------------------------------------------------------------------

    async def on_queue_join(self, session: Session, message: QueueJoin) -> None:
        assert session.player is not None
        waiting = await self.store.enqueue(message.variant, session.player, now_ms())
        session.queued = message.variant
        session.send(Queued(variant=message.variant, waiting=waiting, ref=message.ref))
        session.queue_timer = self.spawn(self._queue_timeout(session, message.variant))
        matched = await self.store.match(message.variant, self.config.quick_match_size)
        if matched:
            names = []
            for pid in matched:
                found = await self.store.redis.hget(f"player:{pid}", "name")
                names.append(found or "?")
            racers = list(zip(matched, names, strict=True))
            start = now_ms() + int(self.config.countdown_seconds * 1000)
            roster = [{"player": p, "name": n} for p, n in racers]
            for pid in matched:
                await self.store.notify(
                    pid, {"kind": "match", "variant": message.variant, "players": roster, "start": start}
                )
            options = Options(undo=True, hints=True, spectators=True)
            self.spawn(self._launch(racers, message.variant, options, None, new_game_id()))

    async def _queue_timeout(self, session: Session, variant: str) -> None:
        await asyncio.sleep(self.config.queue_timeout)
        if session.queued == variant and session.player and await self.store.dequeue(variant, session.player):
            session.queued = None
            session.send(QueueTimeout(variant=variant, waited=int(self.config.queue_timeout)))

    async def on_queue_cancel(self, session: Session, message: QueueCancel) -> None:
        assert session.player is not None
        variant, session.queued = session.queued, None
        if session.queue_timer is not None:
            session.queue_timer.cancel()
        if variant is None or not await self.store.dequeue(variant, session.player):
            raise ProtocolError(ErrorCode.NOT_IN_QUEUE, "you are not waiting for a quick match")
        session.send(Ok(to="queue_cancel", ref=message.ref))

    # notices to one player ----------------------------------------------------------------

    def _on_player_notice(self, channel: str, data: str) -> None:
        player = channel[2:]
        notice = json.loads(data)
        for session in list(self.by_player.get(player, ())):
            self.spawn(self._apply_notice(session, notice))

    async def _apply_notice(self, session: Session, notice: dict[str, Any]) -> None:
        kind = notice["kind"]
        if kind == "room":
            session.send(RoomState.from_dict(notice["room"]))
        elif kind == "countdown":
            session.send(Countdown(room=notice["room"], seconds=notice["seconds"], start=notice["start"]))
        elif kind == "match":
            session.queued = None
            if session.queue_timer is not None:
                session.queue_timer.cancel()
            players = tuple(Racer(**p) for p in notice["players"])
            session.send(MatchFound(variant=notice["variant"], players=players, start=notice["start"]))
        elif kind == "race":
            session.room = None
            await self._attach(session, notice["game"], 0)
        elif kind == "analysis":
            session.send(Analysis(game=notice["game"], player=session.player or "", **notice["analysis"]))
        elif kind == "rematch":
            session.send(
                RematchOffered(
                    game=notice["game"], room=notice["room"], player=notice["player"], name=notice["name"]
                )
            )

    # racing ---------------------------------------------------------------------------------

    def _game_loaded(self, game: LiveGame) -> None:
        if game.ended or not game.time_limit_ms:
            return  # over already, or no time limit (solo games)
        delay = max(0.0, (game.start + game.time_limit_ms - now_ms()) / 1000)
        game.timer = self.spawn(self._time_limit(game.game_id, delay))

    async def _time_limit(self, game_id: str, delay: float) -> None:
        await asyncio.sleep(delay)
        await self.race.end_race(game_id)

    async def _follow(self, game_id: str) -> None:
        """Subscribe this node to a game's events (once, however many local followers)."""
        if game_id not in self.followed:
            self.followed.add(game_id)
            await self.hub.subscribe(game_channel(game_id), self._on_game_event)

    async def _attach(self, session: Session, game_id: str, after: int, ref: Any = None) -> None:
        """Make a racer's connection follow a game from version ``after`` on.

        With a ``ref``, the game's first event answers the request that started it.
        """
        game = await self.race.load(game_id)
        if game is None:
            raise ProtocolError(ErrorCode.NO_SUCH_GAME, f"there is no game {game_id!r}")
        game = self.race.adopt(game)
        game.listeners.add(session)
        session.games[game_id] = after
        await self._follow(game_id)
        for version, raw in await self.store.events(game_id, after):
            event = json.loads(raw)
            self.race.note_event(game, version, event)
            if version == 1 and ref is not None and session.games[game_id] < 1:
                first = project(game, version, event, session.player)
                if first is not None:
                    session.games[game_id] = 1
                    session.send(dataclasses.replace(first, ref=ref))
                    continue
            session.deliver(game_id, version, event, spectator=False)

    async def _detach(self, session: Session, game_id: str) -> None:
        session.games.pop(game_id, None)
        game = self.race.games.get(game_id)
        if game is None:
            return
        game.listeners.discard(session)
        await self._maybe_forget(game)

    async def _maybe_forget(self, game: LiveGame) -> None:
        if game.listeners or self.watchers.get(game.game_id):
            return
        if game.game_id in self.followed:
            self.followed.discard(game.game_id)
            with contextlib.suppress(Exception):
                await self.hub.unsubscribe(game_channel(game.game_id), self._on_game_event)
        if game.timer is not None:
            game.timer.cancel()
            game.timer = None
        self.race.games.pop(game.game_id, None)

    def _on_game_event(self, channel: str, data: str) -> None:
        version_text, origin, raw = data.split("|", 2)
        if origin == self.node:
            return  # made here: delivered to this node's clients when it was committed
        game = self.race.games.get(channel[3 : channel.index("}")])
        if game is not None:
            self._dispatch_event(game, int(version_text), orjson.loads(raw))

    def _local_event(self, game_id: str, version: int, event: dict[str, Any]) -> None:
        """Deliver an event this node just committed, without waiting for its pub/sub echo."""
        game = self.race.games.get(game_id)
        if game is not None:
            self._dispatch_event(game, version, event)

    def _dispatch_event(self, game: LiveGame, version: int, event: dict[str, Any]) -> None:
        """Hand one game event to this node's racers and spectators of that game."""
        game_id = game.game_id
        self.race.note_event(game, version, event)
        for session in list(game.listeners):
            session.deliver(game_id, version, event, spectator=False)
        if self.watchers.get(game_id):
            self._fan_out(game, version, event)
        if event["type"] == "race_ended":
            self.spawn(self._race_over(game))

    def _fan_out(self, game: LiveGame, version: int, event: dict[str, Any]) -> None:
        """Queue an event for this node's spectators of ``game``; one task per game writes them.

        Racers come first. The task starts ``spectator_lag`` seconds after the event (a few
        milliseconds): by then the racer's answer has gone out, from this node or from the
        node that committed the event, so writing to a crowd (and the crowd's devices waking
        up to read) does not compete with it for a machine's cores, as when two nodes share
        one. It yields to the loop every ``FAN_OUT_BATCH`` writes, so a racer's request that
        arrives meanwhile is not held up behind a thousand sockets. One queue per game keeps
        every spectator's events in order.
        """
        queue = self.fanouts.get(game.game_id)
        if queue is None:
            queue = self.fanouts[game.game_id] = deque()
            self.spawn(self._run_fan_out(game, queue, self.config.spectator_lag))
        queue.append((version, event))

    async def _run_fan_out(
        self, game: LiveGame, queue: deque[tuple[int, dict[str, Any]]], lag: float
    ) -> None:
        try:
            await asyncio.sleep(lag)
            while queue:
                version, event = queue.popleft()
                await self._deliver_to_spectators(game, version, event)
        finally:
            if self.fanouts.get(game.game_id) is queue:
                del self.fanouts[game.game_id]

    async def _deliver_to_spectators(self, game: LiveGame, version: int, event: dict[str, Any]) -> None:
        """Hand one game event to this node's spectators of that game."""
        game_id = game.game_id
        delay = game.options.spectator_delay
        if delay:
            # The spectator stream runs ``delay`` seconds behind the race (anti-cheating for
            # tournaments and streamers); the snapshot started from the same point.
            wait = max(0.0, delay - (now_ms() - int(event.get("at", now_ms()))) / 1000)
            loop = asyncio.get_running_loop()
            for session in list(self.watchers.get(game_id, ())):
                loop.call_later(wait, session.deliver, game_id, version, event, True)
        elif event["type"] in ("move", "status"):
            # One encoding per format, written straight to every spectator that is keeping
            # up (websockets' broadcast); the others go through their bounded queues.
            frames: dict[Format, bytes | str] = {}
            batches: dict[Format, list[ServerConnection]] = {}
            written = 0
            for session in list(self.watchers.get(game_id, ())):
                if not session.takes_broadcast(game_id, version):
                    session.deliver(game_id, version, event, spectator=True)
                    continue
                session.watching[game_id] = version
                batch = batches.setdefault(session.fmt, [])
                batch.append(session.ws)
                written += 1
                if written % FAN_OUT_BATCH == 0:
                    self._write_batches(game, version, event, frames, batches)
                    await asyncio.sleep(0)
            self._write_batches(game, version, event, frames, batches)
        else:
            for session in list(self.watchers.get(game_id, ())):
                session.deliver(game_id, version, event, spectator=True)

    def _write_batches(
        self,
        game: LiveGame,
        version: int,
        event: dict[str, Any],
        frames: dict[Format, bytes | str],
        batches: dict[Format, list[ServerConnection]],
    ) -> None:
        for fmt, connections in batches.items():
            if connections:
                frame = frames.get(fmt)
                if frame is None:
                    frame = frames[fmt] = self.spectator_frame(game, version, event, fmt)
                broadcast(connections, frame)
                connections.clear()

    async def _race_over(self, game: LiveGame) -> None:
        await asyncio.sleep(1.0)  # let the final events drain
        for session in list(game.listeners):
            if session.player:
                await self.store.set_player_place(session.player, game="")
            await self._detach(session, game.game_id)
        for session in list(self.watchers.get(game.game_id, ())):
            await self._stop_watching(session, game.game_id)

    async def _action(self, session: Session, message: Message, kind: str) -> None:
        assert session.player is not None
        started = asyncio.get_running_loop().time()
        game_id: str = message.game  # type: ignore[attr-defined]
        seen: int = message.v  # type: ignore[attr-defined]
        if game_id not in session.games:
            game = await self.race.load(game_id)
            if game is None:
                raise ProtocolError(ErrorCode.NO_SUCH_GAME, f"there is no game {game_id!r}")
            if session.player not in game.status:
                raise ProtocolError(ErrorCode.NOT_YOUR_GAME, "you are not racing in that game")
            raise ProtocolError(ErrorCode.NOT_ALLOWED, "resume that game first")
        try:
            answer = await self.race.act(
                game_id, session.player, kind, seen, getattr(message, "move", None), session.id, message.ref
            )
        except ProtocolError:
            self.metrics.moves.rejected += 1
            raise
        self.metrics.moves.accepted += 1
        version = getattr(answer, "v", 0)
        if kind != "hint":
            session.games[game_id] = max(session.games.get(game_id, 0), version)
        session.send(answer)
        self.metrics.moves.observe(asyncio.get_running_loop().time() - started)

    async def on_move(self, session: Session, message: PlayMove) -> None:
        await self._action(session, message, "move")

    async def on_deal(self, session: Session, message: DealReserve) -> None:
        await self._action(session, message, "deal")

    async def on_undo(self, session: Session, message: Undo) -> None:
        await self._action(session, message, "undo")

    async def on_hint(self, session: Session, message: HintRequest) -> None:
        await self._action(session, message, "hint")

    async def on_resign(self, session: Session, message: Resign) -> None:
        await self._action(session, message, "resign")

    async def on_resume(self, session: Session, message: Resume) -> None:
        assert session.player is not None
        game = await self._own_game(session, message.game, "you are not racing in that game")
        missed = await self._missed_events(game, message.v, session.player)
        if missed is None:
            await self._resume_with_snapshot(session, game, message.ref)
            return
        events, last = missed
        session.games[game.game_id] = last
        game = self.race.adopt(game)
        game.listeners.add(session)
        await self._follow(game.game_id)
        session.send(Batch(game=game.game_id, v=last, events=tuple(events), ref=message.ref))

    async def _missed_events(
        self, game: LiveGame, since: int, viewer: str | None
    ) -> tuple[list[Message], int] | None:
        """Return what ``viewer`` (a racer, or ``None`` for a spectator) missed after version
        ``since``, and the last version; ``None`` when too many were missed for a batch."""
        missed = await self.store.events(game.game_id, since)
        if len(missed) > RESUME_BATCH_LIMIT:
            return None
        events = []
        for version, raw in missed:
            event = orjson.loads(raw)
            self.race.note_event(game, version, event)
            projected = project(game, version, event, viewer)
            if projected is not None:
                events.append(projected)
        return events, missed[-1][0] if missed else since

    async def _resume_with_snapshot(self, session: Session, game: LiveGame, ref: Any) -> None:
        assert session.player is not None
        snapshot = await self.race.snapshot(game, session.player)
        session.games[game.game_id] = snapshot.v
        game = self.race.adopt(game)
        game.listeners.add(session)
        await self._follow(game.game_id)
        session.send(dataclasses.replace(snapshot, ref=ref))

    # solo play ------------------------------------------------------------------------------

    async def _start_single(
        self,
        session: Session,
        variant: str,
        options: Options,
        *,
        mode: str,
        ref: Any,
        number: int | None = None,
        salt: str | None = None,
        daily: str | None = None,
        save: bool = False,
        game_id: str | None = None,
    ) -> str:
        """Start a one-racer game (solo, daily attempt or practice) and attach the session."""
        assert session.player is not None
        game_id = await self.race.start_race(
            [(session.player, session.name)],
            variant,
            options,
            game_id=game_id,
            number=number,
            mode=mode,
            daily=daily,
            salt=salt,
            time_limit=0 if mode == "solo" else None,
            saved=save,
        )
        if save:
            await self.store.save_game(session.player, game_id, now_ms())
        if mode != "practice":
            await self.store.count_start(session.player, variant)
        await self.store.set_player_place(session.player, game=game_id)
        await self._attach(session, game_id, 0, ref=ref)
        return game_id

    async def on_solo_new(self, session: Session, message: SoloNew) -> None:
        options = Options(undo=True, hints=True, spectators=False, reserve_rule=message.reserve_rule)
        number = self._next_test_deal()
        await self._start_single(
            session, message.variant, options, mode="solo", ref=message.ref, number=number, save=message.save
        )

    async def _own_solo_game(self, session: Session, game_id: str) -> LiveGame:
        game = await self.race.load(game_id)
        if game is None:
            raise ProtocolError(ErrorCode.NO_SUCH_GAME, f"there is no game {game_id!r}")
        if session.player not in game.status or game.mode != "solo":
            raise ProtocolError(ErrorCode.NOT_YOUR_GAME, "that is not one of your solo games")
        return game

    async def on_solo_replay(self, session: Session, message: SoloReplay) -> None:
        game = await self._own_solo_game(session, message.game)
        await self._start_single(
            session,
            game.variant,
            game.options,
            mode="solo",
            ref=message.ref,
            number=game.number,
            save=game.saved,
        )

    async def on_solo_resume(self, session: Session, message: SoloResume) -> None:
        game = await self._own_solo_game(session, message.game)
        if game.ended:
            raise ProtocolError(ErrorCode.GAME_OVER, "that game is over: replay it or start a new one")
        await self._resume_with_snapshot(session, game, message.ref)

    async def on_saved_games(self, session: Session, message: SavedGames) -> None:
        assert session.player is not None
        games = []
        for game_id in await self.store.saved_games(session.player):
            record = await self.store.game(game_id, with_moves=False)
            mine = [r for r in record.racers if r.player_id == session.player] if record else []
            if record is None or not mine or record.meta.get("state") != "racing":
                await self.store.unsave_game(session.player, game_id)
                continue
            summary = json.loads(mine[0].fields.get("summary", "{}"))
            games.append(
                SavedGame(
                    game=game_id,
                    variant=record.meta["variant"],
                    start=int(record.meta["start"]),
                    summary=summary,
                )
            )
        session.send(SavedGamesList(games=tuple(games), ref=message.ref))

    # daily tournament -------------------------------------------------------------------------

    async def on_daily_info(self, session: Session, message: DailyInfo) -> None:
        assert session.player is not None
        date = self.daily.today()
        deal = await self.daily.deal(date, message.variant)
        attempt, done = await self.attempt_over(date, message.variant, session.player)
        previous = None
        before = self.daily.previous_day(date)
        revealed = await self.store.daily_deal(before, message.variant)
        if "commitment" in revealed:
            previous = {"date": before, **revealed}
        session.send(
            Daily(
                date=date,
                variant=message.variant,
                commitment=deal.commitment,
                ends=self.daily.bounds(date)[1],
                played=attempt is not None,
                finished=done,
                previous=previous,
                ref=message.ref,
            )
        )

    async def on_daily_start(self, session: Session, message: DailyStart) -> None:
        assert session.player is not None
        date = self.daily.today()
        variant = message.variant
        deal = await self.daily.deal(date, variant)
        attempt, done = await self.attempt_over(date, variant, session.player)
        keep = self.daily.keep_ms
        if message.practice:
            if not done:
                raise ProtocolError(
                    ErrorCode.NOT_ALLOWED, "practice opens once your ranked attempt of today is over"
                )
            options = Options(undo=True, hints=False, spectators=False)
            await self._start_single(
                session,
                variant,
                options,
                mode="practice",
                ref=message.ref,
                number=deal.number,
                salt=deal.salt,
                daily=date,
            )
            return
        game_id = new_game_id()
        if attempt is not None or not await self.store.claim_daily_attempt(
            date, variant, session.player, game_id, keep
        ):
            raise ProtocolError(
                ErrorCode.DAILY_ALREADY_PLAYED,
                "you have used today's ranked attempt: resume it, "
                "or ask with practice: true to replay the deal unranked",
            )
        options = Options(undo=True, hints=False, spectators=True)
        await self._start_single(
            session,
            variant,
            options,
            mode="daily",
            ref=message.ref,
            number=deal.number,
            salt=deal.salt,
            daily=date,
            game_id=game_id,
        )

    async def attempt_over(self, date: str, variant: str, player: str) -> tuple[str | None, bool]:
        """Return the player's ranked attempt of a day and whether it is over.

        The attempt's game ending counts too: its end is published a moment before the
        node that ended it records the attempt as over.
        """
        attempt, done = await self.store.daily_attempt(date, variant, player)
        if attempt is not None and not done:
            state = await self.store.game_state(attempt)
            done = state is not None and state != "racing"
        return attempt, done

    async def may_see_daily(self, player: str | None, game: LiveGame) -> bool:
        """Tell whether a player may see a daily game: only once their own attempt is over."""
        if game.daily is None or player is None:
            return game.daily is None
        _, done = await self.attempt_over(game.daily, game.variant, player)
        return done

    async def _race_done(
        self, game: LiveGame, standings: list[dict[str, Any]], finished: dict[str, int]
    ) -> None:
        """Record a finished game: statistics, saved games, the daily leaderboard."""
        for row in standings:
            player = row["player"]
            won = row["status"] == "finished"
            if game.mode != "practice":
                await self.store.count_finish(
                    player,
                    game.variant,
                    won=won,
                    score=row["score"],
                    elapsed=row["elapsed"],
                    daily=game.mode == "daily",
                )
                await self.store.add_result(player, game.game_id)
            if game.mode == "solo":
                await self.store.unsave_game(player, game.game_id)
            if game.mode != "practice":
                self.spawn(self._analyze(game, player))
            if game.mode == "daily" and game.daily:
                keep = self.daily.keep_ms
                await self.store.finish_daily_attempt(game.daily, game.variant, player, keep)
                day_start = self.daily.bounds(game.daily)[0]
                key = leaderboard_key(row["score"], row["elapsed"], finished[player], day_start)
                entry = json.dumps(
                    {
                        "name": row["name"],
                        "score": row["score"],
                        "elapsed": row["elapsed"],
                        "finished": finished[player],
                    }
                )
                await self.store.submit_score(game.daily, game.variant, player, key, entry, keep)

    # solver: post-game analysis and practice hints ------------------------------------------

    async def run_solver(self, function: Callable[..., Any], *args: Any) -> Any:
        """Run a solver function in the node's worker process (never on the event loop).

        A worker that died (the kernel's out-of-memory killer, a kill) leaves its pool
        broken for good: a new pool takes its place and the call is tried once more, so
        one lost worker costs no analysis or hint, now or later.
        """
        try:
            return await self._in_solver_worker(function, args)
        except BrokenProcessPool:
            return await self._in_solver_worker(function, args)

    async def _in_solver_worker(self, function: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        if self.solver_pool is None:
            self.solver_pool = worker_pool()
        pool = self.solver_pool
        try:
            return await asyncio.get_running_loop().run_in_executor(pool, function, *args)
        except BrokenProcessPool:
            if self.solver_pool is pool:  # not replaced yet by another call that met it
                self.solver_pool = None
                pool.shutdown(wait=False, cancel_futures=True)
                log.warning("the solver's worker process died; starting another", extra={"node": self.node})
            raise

    async def _analyze(self, game: LiveGame, player: str) -> None:
        """Compute, store and push one racer's post-game analysis."""
        racer = await self.store.racer(game.game_id, player)
        if racer is None:
            return
        result = await self.run_solver(analyze_game, game.variant, game.number, game.rule.value, racer.moves)
        await self.store.save_analysis(
            game.game_id, player, json.dumps(result), int(self.config.finished_game_ttl * 1000)
        )
        if game.daily and not self.daily.is_over(game.daily):
            return  # it would give the day's deal away: asked for once the day is over
        await self.store.notify(player, {"kind": "analysis", "game": game.game_id, "analysis": result})

    async def on_analyze(self, session: Session, message: Analyze) -> None:
        assert session.player is not None
        game = await self._own_game(session, message.game, "only the game's own racers get its analysis")
        if not game.ended:
            raise ProtocolError(ErrorCode.NOT_ALLOWED, "the analysis comes when the game is over")
        if game.daily and not self.daily.is_over(game.daily):
            raise ProtocolError(ErrorCode.NOT_ALLOWED, "a daily game's analysis opens when its day is over")
        stored = await self.store.analysis(game.game_id, session.player)
        await self._maybe_forget(game)
        if stored is None:
            raise ProtocolError(
                ErrorCode.UNAVAILABLE, "the analysis is still being computed; it is sent when ready"
            )
        session.send(
            Analysis(game=game.game_id, player=session.player, **json.loads(stored), ref=message.ref)
        )

    async def on_winnable(self, session: Session, message: Winnable) -> None:
        assert session.player is not None
        game = await self._own_game(session, message.game, "you are not playing that game")
        if game.mode != "solo":
            raise ProtocolError(ErrorCode.NOT_ALLOWED, "the solver's help is for solo practice only")
        if game.ended:
            raise ProtocolError(ErrorCode.GAME_OVER, "that game is over")
        board = await self.race.board_of(game, session.player)
        actions = [move_text(m) for m in board.move_stack]
        answer = await self.run_solver(check_position, game.variant, game.number, game.rule.value, actions)
        session.send(WinnableInfo(game=game.game_id, v=game.version, ref=message.ref, **answer))

    # leaderboards -------------------------------------------------------------------------------

    async def _board_page(
        self, player: str | None, variant: str, date: str, offset: int, limit: int, ref: Any = None
    ) -> LeaderboardPage:
        total, rows = await self.store.board_page(date, variant, offset, limit)
        entries = []
        for index, (pid, raw) in enumerate(rows):
            entry = json.loads(raw)
            entries.append(
                LeaderboardEntry(
                    rank=offset + index + 1,
                    player=pid,
                    name=entry["name"],
                    score=entry["score"],
                    elapsed=entry["elapsed"],
                    finished=entry["finished"],
                )
            )
        rank = await self.store.board_rank(date, variant, player) if player else None
        return LeaderboardPage(
            variant=variant,
            date=date,
            offset=offset,
            total=total,
            entries=tuple(entries),
            me=None if rank is None else rank + 1,
            ref=ref,
        )

    async def on_leaderboard(self, session: Session, message: Leaderboard) -> None:
        date = message.date or self.daily.today()
        page = await self._board_page(
            session.player, message.variant, date, message.offset, message.limit, message.ref
        )
        session.send(page)
        if message.subscribe:
            key = (date, message.variant)
            watchers = self.board_watchers.setdefault(key, set())
            if not watchers:
                await self.hub.subscribe(board_channel(date, message.variant), self._on_board_change)
            watchers.add(session)
            session.boards[key] = message.limit

    async def on_around_me(self, session: Session, message: AroundMe) -> None:
        assert session.player is not None
        date = message.date or self.daily.today()
        rank = await self.store.board_rank(date, message.variant, session.player)
        if rank is None:
            total, _ = await self.store.board_page(date, message.variant, 0, 0)
            session.send(
                LeaderboardPage(
                    variant=message.variant, date=date, offset=0, total=total, entries=(), ref=message.ref
                )
            )
            return
        offset = max(0, rank - message.radius)
        limit = rank - offset + message.radius + 1
        session.send(
            await self._board_page(session.player, message.variant, date, offset, limit, message.ref)
        )

    def _on_board_change(self, channel: str, data: str) -> None:
        _, date, variant = channel.split(":", 2)
        for session in list(self.board_watchers.get((date, variant), ())):
            limit = session.boards.get((date, variant), 20)
            self.spawn(self._push_board(session, variant, date, limit))

    async def _push_board(self, session: Session, variant: str, date: str, limit: int) -> None:
        session.send(await self._board_page(session.player, variant, date, 0, limit))

    # statistics and forget-me -------------------------------------------------------------------

    async def on_stats(self, session: Session, message: Stats) -> None:
        assert session.player is not None
        variants = [message.variant] if message.variant else list(VARIANTS)
        rows = []
        for variant, raw in (await self.store.stats(session.player, variants)).items():
            finished = int(raw.get("finished", 0))
            rows.append(
                VariantStats(
                    variant=variant,
                    started=int(raw.get("started", 0)),
                    won=int(raw.get("won", 0)),
                    best_score=max(0, int(raw.get("best_score", 0))),
                    best_time=int(raw["best_time"]) if "best_time" in raw else None,
                    average_score=int(raw.get("total_score", 0)) // finished if finished else 0,
                    streak=int(raw.get("streak", 0)),
                    longest_streak=int(raw.get("longest_streak", 0)),
                    dailies=int(raw.get("dailies", 0)),
                )
            )
        session.send(StatsInfo(stats=tuple(rows), ref=message.ref))

    async def on_forget_me(self, session: Session, message: ForgetMe) -> None:
        assert session.player is not None
        player = session.player
        places = await self.store.player_places(player)
        if "game" in places and places["game"] not in await self.store.saved_games(player):
            await self.race.mark_left(places["game"], player)  # rivals see them leave
        removed = await self.store.forget_player(player, list(VARIANTS))
        session.send(Forgotten(removed=removed, ref=message.ref))
        for peer in list(self.by_player.get(player, ())):
            peer.forgotten = True
            peer.closing = True
            self.spawn(peer.close_after_flush(CLOSE_NORMAL, "forgotten"))

    def _next_test_deal(self) -> int | None:
        if not self.test_deals:
            return None
        return self.test_deals.pop(0) if len(self.test_deals) > 1 else self.test_deals[0]

    # spectating (live list and watching) -------------------------------------------------------

    def spectator_frame(
        self, game: LiveGame, version: int, event: dict[str, Any], fmt: Format
    ) -> bytes | str:
        """Return the encoded spectator frame of an event, encoding it once for the whole crowd."""
        key = (game.game_id, version, fmt)
        frame = self.frames.get(key)
        if frame is None:
            projected = project(game, version, event, None)
            assert projected is not None
            frame = encode(projected, fmt)
            self.frames[key] = frame
            if len(self.frames) > FRAME_CACHE:
                self.frames.popitem(last=False)
        return frame

    def spectator_count(self, game_id: str) -> int:
        """Return how many spectators this node has for a game."""
        return len(self.watchers.get(game_id, ()))

    async def on_games_list(self, session: Session, message: GamesList) -> None:
        infos = []
        for game_id in await self.store.live_games():
            game = await self.race.load(game_id)
            if game is None or game.ended:
                # Off the list at its end (a separate step from ending it, which a node
                # could die between): whoever lists the games next finishes the job.
                await self.store.drop_live(game_id)
                continue
            info = await self._game_info(session, game, message.variant)
            if info is not None:
                infos.append(info)
            await self._maybe_forget(game)
        session.send(Games(games=tuple(infos), ref=message.ref))
        if message.subscribe:
            if not self.list_watchers:
                await self.hub.subscribe(LIVE_CHANNEL, self._on_live_change)
            self.list_watchers.add(session)
            session.list_variant = message.variant
        else:
            await self._stop_following_list(session)

    async def _stop_following_list(self, session: Session) -> None:
        if session in self.list_watchers:
            self.list_watchers.discard(session)
            if not self.list_watchers:
                with contextlib.suppress(Exception):
                    await self.hub.unsubscribe(LIVE_CHANNEL, self._on_live_change)

    async def on_watch(self, session: Session, message: Watch) -> None:
        game_id = message.game
        if game_id is None:
            room = await self.store.room(message.room or "")
            if room is None or not room.get("game"):
                raise ProtocolError(ErrorCode.NO_SUCH_ROOM, "no race is running in that room")
            game_id = room["game"]
        game = await self.race.load(game_id)
        if game is None:
            raise ProtocolError(ErrorCode.NO_SUCH_GAME, "no game with that id is running")
        if game.ended:
            raise ProtocolError(
                ErrorCode.NO_SUCH_GAME, f"that game is over: replay it instead (game {game_id})"
            )
        if not game.options.spectators:
            raise ProtocolError(ErrorCode.SPECTATING_FORBIDDEN, "this race's host does not allow spectators")
        if session.player in game.status:
            raise ProtocolError(ErrorCode.SPECTATING_FORBIDDEN, "you cannot watch a race you are in")
        if not await self.may_see_daily(session.player, game):
            raise ProtocolError(
                ErrorCode.SPECTATING_FORBIDDEN,
                "that is a game of today's daily deal: finish your own ranked attempt before watching it",
            )
        game = self.race.adopt(game)
        watchers = self.watchers.setdefault(game_id, set())
        watchers.add(session)
        await self._follow(game_id)
        self.metrics.spectators.inc()
        count = self.spectator_totals.get(game_id, len(watchers))
        if message.v is not None and not game.options.spectator_delay:
            batch = await self._spectator_batch(game, message.v, count, message.ref)
            if batch is not None:
                session.watching[game_id] = batch.v
                session.send(batch)
                return
        delay_ms = game.options.spectator_delay * 1000
        snapshot = await self.race.spectator_snapshot(game, count, delay_ms)
        session.watching[game_id] = snapshot.v
        session.send(dataclasses.replace(snapshot, ref=message.ref))

    async def _spectator_batch(
        self, game: LiveGame, since: int, count: int, ref: Any
    ) -> SpectateBatch | None:
        """Return the spectator events after version ``since``, or ``None`` (send a snapshot).

        ``None`` when too many were missed, or when ``since`` is ahead of the game.
        """
        missed = await self._missed_events(game, since, None)
        if missed is None or (missed[1] == since and since > game.version):
            return None
        events, last = missed
        return SpectateBatch(game=game.game_id, v=last, spectators=count, events=tuple(events), ref=ref)

    async def on_replay(self, session: Session, message: Replay) -> None:
        game = await self.race.load(message.game)
        if game is None:
            raise ProtocolError(ErrorCode.NO_SUCH_GAME, "no game with that id is kept")
        if not game.ended:
            raise ProtocolError(ErrorCode.NOT_ALLOWED, "that game is still running: watch it instead")
        if game.daily and not self.daily.is_over(game.daily):
            raise ProtocolError(
                ErrorCode.SPECTATING_FORBIDDEN, "daily games are replayable once their day is over"
            )
        replay = await self.race.replay_log(game)
        await self._maybe_forget(game)
        session.send(dataclasses.replace(replay, ref=message.ref))

    def _on_live_change(self, channel: str, data: str) -> None:
        self.spawn(self._push_live_change(data[0] == "+", data[1:]))

    async def _push_live_change(self, started: bool, game_id: str) -> None:
        for session in list(self.list_watchers):
            if started:
                game = await self.race.load(game_id)
                if game is None:
                    continue
                info = await self._game_info(session, game, session.list_variant)
                await self._maybe_forget(game)
                if info is not None:
                    session.send(GamesUpdate(added=(info,)))
            else:
                session.send(GamesUpdate(removed=(game_id,)))

    async def _game_info(self, session: Session, game: LiveGame, variant: str | None) -> GameInfo | None:
        """Return a live game's entry for this session's list, or ``None`` if it must not see it."""
        if game.ended or not game.options.spectators:
            return None
        if variant and game.variant != variant:
            return None
        if not await self.may_see_daily(session.player, game):
            return None
        return GameInfo(
            game=game.game_id,
            variant=game.variant,
            players=game.racers(),
            start=game.start,
            spectators=self.spectator_totals.get(game.game_id, self.spectator_count(game.game_id)),
            room=game.room,
            racers=game.progress(),
            rematch_of=game.rematch_of,
        )

    async def _count_spectators(self) -> None:
        """Every tick, publish this node's spectator counts and push changed totals.

        Counts go out in batches, never per join, so a crowd arriving costs one message
        a tick to each racer and spectator.
        """
        while True:
            await asyncio.sleep(self.config.spectator_tick)
            for game_id in list(self.followed):
                game = self.race.games.get(game_id)
                if game is None or game.ended:
                    self.spectator_totals.pop(game_id, None)
                    continue
                try:
                    total = await self.store.set_spectators(game_id, self.node, self.spectator_count(game_id))
                except Exception:
                    self.metrics.redis_errors.inc()
                    continue
                if self.spectator_totals.get(game_id, 0) != total:
                    self.spectator_totals[game_id] = total
                    notice = Spectators(game=game_id, count=total)
                    for follower in list(game.listeners) + list(self.watchers.get(game_id, ())):
                        follower.send(notice)

    async def on_unwatch(self, session: Session, message: Unwatch) -> None:
        await self._stop_watching(session, message.game)
        session.send(Ok(to="unwatch", ref=message.ref))

    async def _stop_watching(self, session: Session, game_id: str) -> None:
        if session.watching.pop(game_id, None) is None:
            return
        self.metrics.spectators.dec()
        watchers = self.watchers.get(game_id)
        if watchers is not None:
            watchers.discard(session)
            if not watchers:
                del self.watchers[game_id]
        game = self.race.games.get(game_id)
        if game is not None:
            await self._maybe_forget(game)

    _handlers: ClassVar[dict[type[Message], Callable[[ScorpionServer, Session, Any], Awaitable[None]]]] = {
        Hello: on_hello,
        Ping: on_ping,
        RoomCreate: on_room_create,
        RoomJoin: on_room_join,
        Ready: on_ready,
        RoomLeave: on_room_leave,
        RoomStart: on_room_start,
        Rematch: on_rematch,
        QueueJoin: on_queue_join,
        QueueCancel: on_queue_cancel,
        PlayMove: on_move,
        DealReserve: on_deal,
        Undo: on_undo,
        HintRequest: on_hint,
        Resign: on_resign,
        Resume: on_resume,
        GamesList: on_games_list,
        Watch: on_watch,
        Unwatch: on_unwatch,
        Replay: on_replay,
        Analyze: on_analyze,
        Winnable: on_winnable,
        SoloNew: on_solo_new,
        SoloReplay: on_solo_replay,
        SoloResume: on_solo_resume,
        SavedGames: on_saved_games,
        DailyInfo: on_daily_info,
        DailyStart: on_daily_start,
        Leaderboard: on_leaderboard,
        AroundMe: on_around_me,
        Stats: on_stats,
        ForgetMe: on_forget_me,
    }


def _select_subprotocol(connection: ServerConnection, subprotocols: Any) -> Any:
    """Pick the client's first offered subprotocol we speak; msgpack when it offers none."""
    for offered in subprotocols:
        if offered in SUBPROTOCOLS:
            return offered
    return None


_CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".json": "application/json",
    ".webmanifest": "application/manifest+json",
}


def _find_web_dir(configured: Path | None) -> Path | None:
    """Locate the browser client's files: configured, or installed beside this package.

    The server reads them as files; it never imports the client package.
    """
    candidate = configured or Path(__file__).resolve().parent.parent / "client" / "web"
    return candidate.resolve() if candidate.is_dir() else None


REMATCH_OPENINGS = 3
"""Rematch rooms one racer may open for one race (each tells the other racers)."""

_PAGE_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    # The browser client is this server's own files and its websocket, nothing else: no
    # inline script, no other origin, and no page of another site may frame it (a framed
    # game could be tricked into a click on Resign).
    "Content-Security-Policy": (
        "default-src 'self'; connect-src 'self'; img-src 'self' data:; object-src 'none'; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "Referrer-Policy": "no-referrer",
}
"""Headers on every file of the browser client."""


def _response(status: HTTPStatus, body: bytes, content_type: str) -> Response:
    headers = Headers([("Content-Type", content_type), ("Content-Length", str(len(body)))])
    return Response(status.value, status.phrase, headers, body)
