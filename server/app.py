"""The server object: startup, the websocket handler and its dispatch, shutdown.

Shaped like uvicorn's server: :meth:`ScorpionServer.start` brings up Redis (embedded or
given), pub/sub and the listening socket; ``server/main.py`` runs it until a signal;
:meth:`ScorpionServer.shutdown` stops accepting, closes every connection with code 1012 so
clients resume on another node, and waits a bounded time. Acknowledged moves are already
in Redis when they are acknowledged, so a shutdown (or a crash) loses none of them.

Each client message goes to its feature's handler through one table
(:data:`server.handlers.HANDLERS`); what the features share is the :class:`~server.node.Node`.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import functools
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from protocol.wire.codec import MSGPACK, SUBPROTOCOLS, decode, format_of, peek_ref
from protocol.wire.error import ErrorCode, ProtocolError
from protocol.wire.flow import CLOSE_POLICY, CLOSE_RESTART
from protocol.wire.message import Message, Ping, error_message

from .config import Config
from .handlers import HANDLERS
from .launch import start_match
from .node import Node
from .runtime.embedded import EmbeddedRedis
from .runtime.hub import Hub
from .runtime.metrics import Metrics
from .runtime.proxy import TrustedProxies, client_address, proxied_connection
from .runtime.service import Plumbing
from .runtime.tasks import Tasks
from .runtime.web import HttpSite, find_web_dir
from .session import Session, SessionLimits
from .store import UNREACHABLE, Store, StoreError, StoreHealth

__all__ = ["ScorpionServer"]

log = logging.getLogger("scorpion.server")


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
        self.name = config.node_id or f"{socket.gethostname()}-{os.getpid()}"
        self.metrics = Metrics()
        self.tasks = Tasks()
        self.embedded: EmbeddedRedis | None = None
        self.store: Store | None = None
        self.hub: Hub | None = None
        self.node: Node | None = None
        self.server: Server | None = None
        self.stopping = False
        self.limits = SessionLimits(
            message_credits=config.message_credits,
            spectator_credits=config.spectator_credits,
            credit_window=config.credit_window,
            rate_limit_strikes=config.rate_limit_strikes,
            send_queue=config.send_queue,
        )
        self.trusted = TrustedProxies.parse(config.trusted_proxies)
        self.site = HttpSite(
            find_web_dir(config.web_dir),
            self._healthy,
            self._metrics_page,
            origins=config.allowed_origins.split(","),
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
        self.tasks.cancel_all()
        with contextlib.suppress(Exception):
            if self.hub is not None:
                await self.hub.stop()
        with contextlib.suppress(Exception):
            if self.store is not None:
                await self.store.close()
        if self.embedded is not None:
            await self.embedded.stop()

    async def _start(self) -> None:
        url = self.config.redis_url
        if url is None:
            self.embedded = EmbeddedRedis(self.config.data_dir, on_restart=self.metrics.store_restarts.inc)
            url = await self.embedded.start()
        instance = f"{self.name}#{uuid.uuid4().hex[:8]}"
        self.store = Store(
            url,
            daily_secret=self.config.daily_secret,
            origin=self.name,
            instance=instance,
            wait_replicas=self.config.redis_wait_replicas,
        )
        if not await self.store.ping():
            raise RuntimeError(f"Redis at {url} does not answer")
        self.tasks.spawn(self.store.health.run())
        self.hub = Hub(self.store, on_error=self.metrics.redis_errors.inc)
        await self.hub.start()
        plumbing = Plumbing(self.name, self.config, self.store, self.hub, self.metrics, self.tasks)
        node = self.node = Node(plumbing, self.clock)
        self.tasks.spawn(node.feed.count_spectators())
        self.tasks.spawn(node.presence.heartbeat())
        node.matchmaker.on_match = functools.partial(start_match, node, rated=True)
        self.tasks.spawn(node.matchmaker.run())
        try:
            self.server = await self._listen()
        except OSError as exc:
            raise RuntimeError(
                f"cannot listen on {self.config.host}:{self.config.port}: {_listen_error(exc)}"
            ) from None
        log.info("listening", extra={"host": self.config.host, "port": self.port, "node": self.name})

    async def _listen(self) -> Server:
        return await serve(
            self.handle,
            self.config.host,
            self.config.port,
            subprotocols=list(SUBPROTOCOLS),  # type: ignore[arg-type]
            select_subprotocol=_select_subprotocol,
            process_request=self.site.http,
            max_size=8 * self.config.max_frame,  # up to this, a frame is answered with too_large
            ping_interval=self.config.ping_interval,
            ping_timeout=self.config.ping_timeout,
            close_timeout=self.config.close_timeout,
            compression=None,
            server_header="scorpion-race",
            reuse_port=self.config.reuse_port or None,  # a worker of --workers shares the port
            create_connection=proxied_connection(self.trusted) if self.trusted else None,
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
        sessions = self.node.sessions if self.node is not None else set()
        closing = [
            asyncio.create_task(s.ws.close(CLOSE_RESTART, "server restarting: reconnect and resume"))
            for s in list(sessions)
        ]
        if closing:
            await asyncio.wait(closing, timeout=self.config.shutdown_timeout)
        if self.server is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.server.wait_closed(), self.config.shutdown_timeout)
        await self.tasks.stop_all()
        if self.node is not None:
            self.node.solver.shutdown()
        if self.hub is not None:
            await self.hub.stop()
        if self.store is not None:
            await self.store.close()
        if self.embedded is not None:
            await self.embedded.stop()
        log.info("stopped", extra={"node": self.name})

    # -- HTTP ---------------------------------------------------------------------------

    async def _healthy(self) -> bool:
        return self.store is not None and self.store.health.up and not self.stopping

    def _metrics_page(self) -> bytes:
        if self.node is not None:
            self.metrics.live_games.set(sum(1 for g in self.node.race.games.values() if not g.ended))
        if self.store is not None:
            self.metrics.store_up.set(1 if self.store.health.up else 0)
            self.metrics.store_waiting.set(self.store.calls_waiting)
        return self.metrics.render()

    # -- connections --------------------------------------------------------------------

    async def handle(self, ws: ServerConnection) -> None:
        """Serve one websocket connection until it closes."""
        node = self.node
        assert node is not None
        fmt = MSGPACK if ws.subprotocol is None else format_of(ws.subprotocol)
        session = Session(
            ws,
            fmt,
            self.name,
            self.limits,
            node.feed,
            on_resync=self.metrics.resyncs.inc,
            address=client_address(ws, self.trusted),
        )
        node.sessions.add(session)
        self.metrics.connections.inc()
        session.writer = asyncio.create_task(session.run_writer())
        try:
            async for frame in ws:
                verdict = session.spend_credit()
                if verdict != "ok":
                    ref = peek_ref(frame, session.fmt, limit=self.config.max_frame)
                    refused = ProtocolError(ErrorCode.RATE_LIMITED, "too many messages: slow down", ref=ref)
                    self._refuse(session, refused)
                    if verdict == "close":
                        await session.close_after_flush(CLOSE_POLICY, "rate limit exceeded")
                        break
                    continue
                await self.receive(session, frame)
        except ConnectionClosed:
            pass
        finally:
            await self._disconnect(node, session)

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
            message = decode(frame, session.fmt, limit=self.config.max_frame)
            session.flow.check(message, session.place())
            if not self.store_health.up and not isinstance(message, Ping):
                raise self._store_unavailable()
            await self.dispatch(session, message)
        except ProtocolError as exc:
            self._refuse(session, exc.with_ref(message.ref if message else None))
        except StoreError as exc:
            self._refuse(session, ProtocolError(exc.code, exc.message, ref=message.ref if message else None))
        except UNREACHABLE as exc:
            self.metrics.redis_errors.inc()
            log.warning("storage unavailable", extra={"error": repr(exc)})
            self.store_health.failed()
            self._refuse(session, self._store_unavailable().with_ref(message.ref if message else None))
        except Exception:
            log.exception("request failed", extra={"session": session.id})
            ref = message.ref if message else None
            self._refuse(
                session, ProtocolError(ErrorCode.INTERNAL, "the server failed on this request", ref=ref)
            )

    async def dispatch(self, session: Session, message: Message) -> None:
        """Run the handler of one checked client message (every client type has one)."""
        assert self.node is not None
        await HANDLERS[type(message)](self.node, session, message)

    @property
    def store_health(self) -> StoreHealth:
        """Whether this node reaches Redis."""
        assert self.store is not None
        return self.store.health

    def _store_unavailable(self) -> ProtocolError:
        """The refusal of a request that needs Redis while it cannot be reached (not carried out)."""
        return ProtocolError(
            ErrorCode.UNAVAILABLE,
            "storage is unavailable; retry",
            retry_after_ms=self.store_health.retry_after_ms(),
        )

    def _refuse(self, session: Session, error: ProtocolError) -> None:
        self.metrics.errors_sent.labels(error.code.value).inc()
        session.send(error_message(error))

    async def _disconnect(self, node: Node, session: Session) -> None:
        node.sessions.discard(session)
        self.metrics.connections.dec()
        session.close_queue()
        if session.writer is not None:
            session.writer.cancel()
        await node.feed.drop(session)
        await node.leaderboards.drop(session)
        await node.presence.leave(session)


def _select_subprotocol(connection: ServerConnection, subprotocols: Any) -> Any:
    """Pick the client's first offered subprotocol we speak (a handshake offering none of
    them was refused already, by :class:`HttpSite`)."""
    for offered in subprotocols:
        if offered in SUBPROTOCOLS:
            return offered
    return None
