"""The race benchmark's floor in Python: a websockets + msgpack echo, one EVALSHA a message.

``python bench/floor.py REDIS_URL`` listens on a free loopback port, prints its
``ws://127.0.0.1:PORT/`` URL as the first line of its standard output, and serves until
its standard input closes. Each binary frame is decoded as a msgpack map; the server
runs one EVALSHA of a one-line script (``INCR`` of one key, through redis-py's
registered script) and answers ``{"type": "accepted", "ref": <the request's ref>, "v": 1}``
in msgpack. No subprotocol is selected and no compression is offered; a frame that is not
a msgpack map closes its connection (1011, the handler's error).

``bench/race.py`` runs it through its ``--floor-command`` (this is the default command);
``bench/floor.js`` is the same floor for Node, and ``bench/floor_picows.py`` the same
floor on picows instead of websockets: it shares this module's Redis client, script and
answer (``redis_answers``) and its start and stop (``announce``, ``until_stdin_closes``).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import msgpack
from websockets.asyncio.server import serve

SCRIPT = "return redis.call('INCR', KEYS[1])"
"""The floor's one-line script (``bench/floor.js`` runs the same)."""

MAX_SIZE = 2**20
"""The largest message a floor takes, in bytes (websockets' default ``max_size``); a larger
one closes its connection with 1009."""

Answer = Callable[[Any], Awaitable[bytes]]
"""The floor's work on one message: decode it, one EVALSHA, the encoded answer. It raises
on a message that is not a msgpack map (after the EVALSHA, for msgpack that is no map)."""


@contextlib.asynccontextmanager
async def redis_answers(redis_url: str) -> AsyncIterator[Answer]:
    """Yield the floor's ``Answer`` on one redis-py client (one pool of connections for all
    the floor's websocket connections), and close the client on the way out."""
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(redis_url)
    script = client.register_script(SCRIPT)

    async def answer(frame: Any) -> bytes:
        request = msgpack.unpackb(frame)
        await script(keys=["floor"], args=[])
        return msgpack.packb({"type": "accepted", "ref": request.get("ref"), "v": 1})  # type: ignore[no-any-return]

    try:
        yield answer
    finally:
        await client.aclose()


def announce(port: int) -> None:
    """Print the floor's URL, the first line of its standard output (``floor_runner`` waits for it)."""
    print(f"ws://127.0.0.1:{port}/", flush=True)


async def until_stdin_closes() -> None:
    """Return once standard input closes: the benchmark's signal for a floor to exit."""
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)


async def serve_floor(redis_url: str) -> None:
    """Serve the floor until standard input closes (the benchmark starts it as a child process)."""
    async with redis_answers(redis_url) as answer:

        async def handler(ws: Any) -> None:
            async for frame in ws:
                await ws.send(await answer(frame))

        async with serve(handler, "127.0.0.1", 0, compression=None, max_size=MAX_SIZE) as server:
            announce(server.sockets[0].getsockname()[1])
            await until_stdin_closes()


def main() -> None:
    """Run the floor on the Redis URL given as the last argument."""
    if len(sys.argv) < 2:
        sys.exit("usage: python bench/floor.py REDIS_URL")
    asyncio.run(serve_floor(sys.argv[-1]))


if __name__ == "__main__":
    main()
