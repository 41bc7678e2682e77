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
import json
import logging
import os
import socket
from collections.abc import Awaitable, Callable
from http import HTTPStatus
from pathlib import Path
from typing import Any, ClassVar

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from protocol.codec import MAX_CLIENT_FRAME, MSGPACK, SUBPROTOCOLS, decode, format_of
from protocol.error import ErrorCode, ProtocolError
from protocol.flow import CLOSE_POLICY, CLOSE_RESTART, State
from protocol.message import (
    Batch,
    Countdown,
    DealReserve,
    Error,
    GameInfo,
    Games,
    GamesList,
    Hello,
    HintRequest,
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
    Resign,
    Resume,
    RoomCreate,
    RoomJoin,
    RoomLeave,
    RoomPlayer,
    RoomStart,
    RoomState,
    Undo,
    Unwatch,
    Watch,
    Welcome,
)

from .config import Config
from .embedded import EmbeddedRedis
from .hub import Hub
from .metrics import CONTENT_TYPE, Metrics
from .race import LiveGame, RaceService, new_game_id, now_ms, project
from .session import Session
from .store import Store, StoreError, game_channel, player_channel

__all__ = ["ScorpionServer"]

log = logging.getLogger("scorpion.server")

RESUME_BATCH_LIMIT = 100
"""Missed events above which a resuming client gets a snapshot instead of a batch."""


class ScorpionServer:
    """One node of Scorpion Race."""

    def __init__(self, config: Config) -> None:
        self.config = config
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
        self.stopping = False
        self.web_dir = _find_web_dir(config.web_dir)
        self.test_deals = [int(n) for n in config.test_deals.split(",") if n.strip()]
        if self.test_deals:
            log.warning(
                "using fixed test deals: never do this in production", extra={"deals": config.test_deals}
            )

    # -- lifecycle ----------------------------------------------------------------------

    async def start(self) -> None:
        """Bring up Redis, pub/sub and the listening socket."""
        url = self.config.redis_url
        if url is None:
            self.embedded = EmbeddedRedis(self.config.data_dir)
            url = await self.embedded.start()
        self.store = Store(url)
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
        )
        self.server = await serve(
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
        log.info("listening", extra={"host": self.config.host, "port": self.port, "node": self.node})

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
        """Answer plain HTTP requests on the websocket port: health and metrics."""
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
        response.headers["X-Content-Type-Options"] = "nosniff"
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
        except (ConnectionError, OSError, TimeoutError) as exc:
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

    async def _grace(self, player: str, game_id: str) -> None:
        await asyncio.sleep(self.config.grace_period)
        if await self.store.presence(player, 0) > 0:
            return
        await self.race.mark_left(game_id, player)

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
        self.spawn(self._launch(racers, room["variant"], options, session.room, game_id))

    async def _launch(
        self, racers: list[tuple[str, str]], variant: str, options: Options, room: str | None, game_id: str
    ) -> None:
        await asyncio.sleep(self.config.countdown_seconds)
        number = None
        if self.test_deals:  # used in turn; the last one repeats
            number = self.test_deals.pop(0) if len(self.test_deals) > 1 else self.test_deals[0]
        await self.race.start_race(racers, variant, options, room=room, game_id=game_id, number=number)
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

    # quick match ------------------------------------------------------------------------

    async def on_queue_join(self, session: Session, message: QueueJoin) -> None:
        assert session.player is not None
        await self.store.enqueue(message.variant, session.player, now_ms())
        session.queued = message.variant
        session.send(Queued(variant=message.variant, waiting=0, ref=message.ref))
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

    # racing ---------------------------------------------------------------------------------

    def _game_loaded(self, game: LiveGame) -> None:
        if game.ended:
            return
        delay = max(0.0, (game.start + game.time_limit_ms - now_ms()) / 1000)
        game.timer = self.spawn(self._time_limit(game.game_id, delay))

    async def _time_limit(self, game_id: str, delay: float) -> None:
        await asyncio.sleep(delay)
        await self.race.end_race(game_id)

    async def _attach(self, session: Session, game_id: str, after: int) -> None:
        """Make a racer's connection follow a game from version ``after`` on."""
        game = await self.race.load(game_id)
        if game is None:
            raise ProtocolError(ErrorCode.NO_SUCH_GAME, f"there is no game {game_id!r}")
        first = not game.listeners
        game.listeners.add(session)
        session.games[game_id] = after
        if first:
            await self.hub.subscribe(game_channel(game_id), self._on_game_event)
        for version, raw in await self.store.events(game_id, after):
            event = json.loads(raw)
            self.race.note_event(game, version, event)
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
        with contextlib.suppress(Exception):
            await self.hub.unsubscribe(game_channel(game.game_id), self._on_game_event)
        if game.timer is not None:
            game.timer.cancel()
        self.race.games.pop(game.game_id, None)

    def _on_game_event(self, channel: str, data: str) -> None:
        game_id = channel[3 : channel.index("}")]
        game = self.race.games.get(game_id)
        if game is None:
            return
        version_text, _, raw = data.partition("|")
        version = int(version_text)
        event = json.loads(raw)
        self.race.note_event(game, version, event)
        for session in list(game.listeners):
            session.deliver(game_id, version, event, spectator=False)
        for session in list(self.watchers.get(game_id, ())):
            session.deliver(game_id, version, event, spectator=True)
        if event["type"] == "race_ended":
            self.spawn(self._race_over(game))

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
                game_id, session.player, kind, seen, getattr(message, "move", None), session.id
            )
        except ProtocolError:
            self.metrics.moves_rejected.inc()
            raise
        self.metrics.moves_accepted.inc()
        answer = dataclasses.replace(answer, ref=message.ref)
        version = getattr(answer, "v", 0)
        if kind != "hint":
            session.games[game_id] = max(session.games.get(game_id, 0), version)
        session.send(answer)
        self.metrics.move_latency.observe(asyncio.get_running_loop().time() - started)

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
        game = await self.race.load(message.game)
        if game is None:
            raise ProtocolError(ErrorCode.NO_SUCH_GAME, f"there is no game {message.game!r}")
        if session.player not in game.status:
            raise ProtocolError(ErrorCode.NOT_YOUR_GAME, "you are not racing in that game")
        missed = await self.store.events(message.game, message.v)
        if len(missed) > RESUME_BATCH_LIMIT:
            snapshot = await self.race.snapshot(game, session.player)
            session.games[game.game_id] = snapshot.v
            game.listeners.add(session)
            await self.hub.subscribe(game_channel(game.game_id), self._on_game_event)
            session.send(dataclasses.replace(snapshot, ref=message.ref))
            return
        events = []
        for version, raw in missed:
            event = json.loads(raw)
            self.race.note_event(game, version, event)
            projected = project(game, version, event, session.player)
            if projected is not None:
                events.append(projected)
        last = missed[-1][0] if missed else message.v
        session.games[game.game_id] = last
        if len(game.listeners) == 0:
            await self.hub.subscribe(game_channel(game.game_id), self._on_game_event)
        game.listeners.add(session)
        session.send(Batch(game=game.game_id, v=last, events=tuple(events), ref=message.ref))

    # spectating (live list and watching) -------------------------------------------------------

    def spectator_count(self, game_id: str) -> int:
        """Return how many spectators this node has for a game."""
        return len(self.watchers.get(game_id, ()))

    async def on_games_list(self, session: Session, message: GamesList) -> None:
        infos = []
        for game_id in await self.store.live_games():
            game = await self.race.load(game_id)
            if game is None or game.ended or not game.options.spectators:
                continue
            if message.variant and game.variant != message.variant:
                continue
            infos.append(
                GameInfo(
                    game=game_id,
                    variant=game.variant,
                    players=game.racers(),
                    start=game.start,
                    spectators=self.spectator_count(game_id),
                    room=game.room,
                )
            )
            await self._maybe_forget(game)
        session.send(Games(games=tuple(infos), ref=message.ref))

    async def on_watch(self, session: Session, message: Watch) -> None:
        game_id = message.game
        if game_id is None:
            room = await self.store.room(message.room or "")
            if room is None or not room.get("game"):
                raise ProtocolError(ErrorCode.NO_SUCH_ROOM, "no race is running in that room")
            game_id = room["game"]
        game = await self.race.load(game_id)
        if game is None or game.ended:
            raise ProtocolError(ErrorCode.NO_SUCH_GAME, "that game is not running")
        if not game.options.spectators:
            raise ProtocolError(ErrorCode.SPECTATING_FORBIDDEN, "this race's host does not allow spectators")
        if session.player in game.status:
            raise ProtocolError(ErrorCode.SPECTATING_FORBIDDEN, "you cannot watch a race you are in")
        watchers = self.watchers.setdefault(game_id, set())
        if not watchers and not game.listeners:
            await self.hub.subscribe(game_channel(game_id), self._on_game_event)
        watchers.add(session)
        self.metrics.spectators.inc()
        snapshot = await self.race.spectator_snapshot(game, len(watchers))
        session.watching[game_id] = snapshot.v
        session.send(dataclasses.replace(snapshot, ref=message.ref))

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


def _response(status: HTTPStatus, body: bytes, content_type: str) -> Response:
    headers = Headers([("Content-Type", content_type), ("Content-Length", str(len(body)))])
    return Response(status.value, status.phrase, headers, body)
