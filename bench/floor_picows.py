"""The race benchmark's floor on picows: ``bench/floor.py``'s floor with another websocket layer.

``python bench/floor_picows.py [--asyncio-transport] REDIS_URL`` is ``bench/floor.py``
with its websocket layer on picows (Cython) instead of websockets: the same Redis client,
script and answer (``floor.redis_answers``), the same start and stop (its ``ws://`` URL on
the first line of its standard output, serving until its standard input closes), and the
same behaviour on the wire as websockets' server gives ``bench/floor.py``:

- the same answers, byte for byte, one message at a time per connection, in order;
- no subprotocol selected and no extension (compression) negotiated, whatever the client offers;
- messages up to ``floor.MAX_SIZE`` (1 MiB, fragmented or not), reassembled; a larger one
  closes its connection with 1009, more than 4096 fragments too;
- a message that is not a msgpack map closes its connection with 1011, through a closing
  handshake (the peer's close awaited 10 s, then the connection is dropped), and the error
  is logged; a text message with broken UTF-8 closes it with 1007, reserved bits or a
  misplaced continuation frame with 1002;
- a close frame is echoed and the connection closed; an answer not yet sent is dropped;
- a ping every 20 s, and 1011 ("keepalive ping timeout") without its pong within 20 s;
  pings are answered;
- 10 s for the opening handshake; reading paused beyond 16 waiting messages (resumed at 4);
  an answer waits while more than 32 KiB wait to be written (until 8 KiB);
- on exit, 1001 to every open connection.

Where it differs: the 101 response carries no ``Date`` or ``Server`` header; a single
frame over 1 MiB gets picows' own reason with its 1009 (and its protocol errors picows'
reasons with their 1002); and picows sets ``TCP_QUICKACK`` on its sockets.

picows serves its connections through aiofastnet's transports (installed with it) unless
``--asyncio-transport`` is given: then asyncio's own. Both run on asyncio's own loop, as
``bench/floor.py`` does. ``python bench/race.py --floor-command "python bench/floor_picows.py"``
runs the race server against it.
"""

from __future__ import annotations

import asyncio
import logging
import random
import struct
import sys
from collections import deque
from typing import Any

from floor import MAX_SIZE, Answer, announce, redis_answers, until_stdin_closes
from picows import (
    WSCloseCode,
    WSFrame,
    WSListener,
    WSMsgType,
    WSTransport,
    WSUpgradeRequest,
    ws_create_server,
)

# websockets' defaults, which bench/floor.py keeps.
OPEN_TIMEOUT = 10.0
PING_INTERVAL = 20.0
PING_TIMEOUT = 20.0
CLOSE_TIMEOUT = 10.0
MAX_QUEUE = 16
"""Messages waiting to be answered beyond which reading pauses (resumed at a quarter of it)."""
WRITE_LIMIT = 2**15
"""Bytes waiting to be written beyond which an answer waits (until a quarter of it)."""
MAX_FRAGMENTS = 4096

BINARY, TEXT, CONTINUATION = WSMsgType.BINARY, WSMsgType.TEXT, WSMsgType.CONTINUATION
CLOSE, PONG = WSMsgType.CLOSE, WSMsgType.PONG

logger = logging.getLogger("floor_picows")


class Connection(WSListener):
    """One websocket connection: picows calls ``on_ws_*`` with each frame; ``handle``, one
    task a connection as websockets' handler is, answers the messages one at a time."""

    def __init__(self, floor: Floor) -> None:
        self.floor = floor
        self.loop = asyncio.get_running_loop()
        self.transport: WSTransport | None = None
        self.messages: deque[bytes | str | UnicodeDecodeError] = deque()
        self.waiter: asyncio.Future[None] | None = None  # the handler waiting for a message
        self.fragments: list[bytes] | None = None  # a fragmented message being received
        self.fragmented_text = False
        self.fragments_size = 0
        self.reading_paused = False
        self.writable: asyncio.Future[None] | None = None  # set while writing is paused
        self.closing = False  # a close frame went out, or the connection is gone
        self.close_timer: asyncio.TimerHandle | None = None
        self.pong: tuple[bytes, asyncio.Future[None]] | None = None
        self.handler: asyncio.Task[None] | None = None
        self.keepalive: asyncio.Task[None] | None = None

    # -- picows' callbacks -----------------------------------------------------------

    def on_ws_connected(self, transport: WSTransport) -> None:
        self.transport = transport
        transport.underlying_transport.set_write_buffer_limits(WRITE_LIMIT)
        self.floor.connections.add(self)
        self.handler = self.loop.create_task(self.handle())
        self.keepalive = self.loop.create_task(self.keep_alive())

    def on_ws_frame(self, transport: WSTransport, frame: WSFrame) -> None:
        kind = frame.msg_type
        if kind is BINARY or kind is TEXT or kind is CONTINUATION:
            if self.closing:
                return
            if frame.rsv1 or frame.rsv2 or frame.rsv3:
                self.fail(WSCloseCode.PROTOCOL_ERROR, "reserved bits must be 0")
            elif kind is BINARY and frame.fin and self.fragments is None:
                self.deliver(frame.get_payload_as_bytes())
            else:
                self.reassemble(kind, frame)
        elif kind is CLOSE:
            if self.fragments is not None and not self.closing:
                self.fail(WSCloseCode.PROTOCOL_ERROR, "incomplete fragmented message")
                return
            if not self.closing:
                transport.send(CLOSE, frame.get_payload_as_bytes())  # the peer's close, echoed
                self.closing = True
            transport.disconnect()
        elif kind is PONG and self.pong is not None:
            data, received = self.pong
            if frame.get_payload_as_bytes() == data and not received.done():
                received.set_result(None)

    def on_ws_disconnected(self, transport: WSTransport) -> None:
        self.closing = True
        self.floor.connections.discard(self)
        if self.close_timer is not None:
            self.close_timer.cancel()
        if self.keepalive is not None:
            self.keepalive.cancel()
        self.wake()
        if self.writable is not None and not self.writable.done():
            self.writable.set_result(None)

    def pause_writing(self) -> None:
        self.writable = self.loop.create_future()

    def resume_writing(self) -> None:
        if self.writable is not None and not self.writable.done():
            self.writable.set_result(None)
        self.writable = None

    # -- messages in -----------------------------------------------------------------

    def deliver(self, message: bytes | str | UnicodeDecodeError) -> None:
        self.messages.append(message)
        if len(self.messages) > MAX_QUEUE and not self.reading_paused:
            self.reading_paused = True
            self.underlying().pause_reading()
        self.wake()

    def wake(self) -> None:
        if self.waiter is not None:
            if not self.waiter.done():
                self.waiter.set_result(None)
            self.waiter = None

    def reassemble(self, kind: WSMsgType, frame: WSFrame) -> None:
        """A text message, or a frame of a fragmented message (websockets' checks and reasons)."""
        if kind is CONTINUATION:
            if self.fragments is None:
                self.fail(WSCloseCode.PROTOCOL_ERROR, "unexpected continuation frame")
                return
            size = frame.payload_size
            if self.fragments_size + size > MAX_SIZE:
                self.fail(
                    WSCloseCode.MESSAGE_TOO_BIG,
                    f"frame with {size} bytes after reading {self.fragments_size} bytes "
                    f"exceeds limit of {MAX_SIZE} bytes",
                )
                return
            if len(self.fragments) >= MAX_FRAGMENTS:
                self.fail(WSCloseCode.MESSAGE_TOO_BIG, "too many fragments")
                return
            self.fragments.append(frame.get_payload_as_bytes())
            self.fragments_size += size
        elif self.fragments is not None:
            self.fail(WSCloseCode.PROTOCOL_ERROR, "expected a continuation frame")
            return
        else:
            self.fragments, self.fragmented_text = [frame.get_payload_as_bytes()], kind is TEXT
            self.fragments_size = frame.payload_size
        if not frame.fin:
            return
        data, text = b"".join(self.fragments), self.fragmented_text
        self.fragments, self.fragments_size = None, 0
        if not text:
            self.deliver(data)
            return
        try:
            self.deliver(data.decode())
        except UnicodeDecodeError as exc:
            self.deliver(exc)  # websockets fails when its handler reaches the message

    # -- the handler -----------------------------------------------------------------

    async def handle(self) -> None:
        """Answer the messages in order, as bench/floor.py's handler does with ``async for``."""
        answer, messages, transport = self.floor.answer, self.messages, self.transport
        assert transport is not None
        while True:
            if not messages:
                if self.closing:
                    return
                self.waiter = self.loop.create_future()
                await self.waiter
                continue
            message = messages.popleft()
            if self.reading_paused and len(messages) <= MAX_QUEUE // 4:
                self.reading_paused = False
                self.underlying().resume_reading()
            if isinstance(message, UnicodeDecodeError):
                self.fail(WSCloseCode.INVALID_TEXT, f"{message.reason} at position {message.start}")
                return
            try:
                reply = await answer(message)
            except Exception:
                logger.error("connection handler failed", exc_info=True)
                self.close(WSCloseCode.INTERNAL_ERROR)
                return
            if self.closing:  # closed meanwhile: websockets' send would raise, ending the handler
                return
            transport.send(BINARY, reply)
            if self.writable is not None:
                await self.writable

    async def keep_alive(self) -> None:
        """A ping every ``PING_INTERVAL`` seconds; no pong within ``PING_TIMEOUT``: 1011."""
        assert self.transport is not None
        latency = 0.0
        while not self.closing:
            await asyncio.sleep(PING_INTERVAL - latency)
            if self.closing:
                return
            data = struct.pack("!I", random.getrandbits(32))
            received: asyncio.Future[None] = self.loop.create_future()
            self.pong = (data, received)
            sent = self.loop.time()
            self.transport.send_ping(data)
            try:
                async with asyncio.timeout(PING_TIMEOUT):
                    await received
            except TimeoutError:
                self.fail(WSCloseCode.INTERNAL_ERROR, "keepalive ping timeout")
                return
            finally:
                self.pong = None
            latency = self.loop.time() - sent

    # -- closing ---------------------------------------------------------------------

    def underlying(self) -> Any:
        assert self.transport is not None
        return self.transport.underlying_transport

    def fail(self, code: WSCloseCode, reason: str) -> None:
        """Fail the connection as websockets' server does: a close frame, then TCP closed at once."""
        if self.transport is None or self.transport.is_disconnected:
            return
        if not self.closing:
            self.transport.send_close(code, reason)
            self.closing = True
        self.messages.clear()
        self.wake()
        self.transport.disconnect()

    def close(self, code: WSCloseCode) -> None:
        """Start the closing handshake: a close frame; TCP closed when the peer's close comes
        back (``on_ws_frame``), or dropped after ``CLOSE_TIMEOUT`` seconds."""
        if self.transport is None or self.closing:
            return
        self.transport.send_close(code)
        self.closing = True
        self.messages.clear()
        self.wake()
        self.close_timer = self.loop.call_later(CLOSE_TIMEOUT, self.underlying().abort)


class Floor:
    """The server's state: the shared answer and the open connections."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.connections: set[Connection] = set()

    def accept(self, request: WSUpgradeRequest) -> Connection:
        """picows' listener factory: every request on any path gets a connection, with no
        subprotocol (the default 101 response names none) and no extension."""
        return Connection(self)

    async def close(self) -> None:
        """1001 to every open connection, and wait until they are all closed."""
        connections = list(self.connections)
        for connection in connections:
            connection.close(WSCloseCode.GOING_AWAY)
        for connection in connections:
            if connection.transport is not None:
                await connection.transport.wait_disconnected()


async def serve_floor(redis_url: str, aiofastnet: bool) -> None:
    """Serve the floor until standard input closes (the benchmark starts it as a child process)."""
    async with redis_answers(redis_url) as answer:
        floor = Floor(answer)
        server = await ws_create_server(
            floor.accept,
            "127.0.0.1",
            0,
            max_frame_size=MAX_SIZE,
            websocket_handshake_timeout=OPEN_TIMEOUT,
            enable_auto_ping=False,  # the keepalive is websockets', in Connection.keep_alive
            enable_auto_pong=True,
            use_aiofastnet=aiofastnet,
        )
        try:
            announce(server.sockets[0].getsockname()[1])
            await until_stdin_closes()
        finally:
            server.close()
            await floor.close()
            await server.wait_closed()


def main() -> None:
    """Run the floor on the Redis URL given as the last argument."""
    options = sys.argv[1:-1]
    if len(sys.argv) < 2 or any(option != "--asyncio-transport" for option in options):
        sys.exit("usage: python bench/floor_picows.py [--asyncio-transport] REDIS_URL")
    asyncio.run(serve_floor(sys.argv[-1], aiofastnet="--asyncio-transport" not in options))


if __name__ == "__main__":
    main()
