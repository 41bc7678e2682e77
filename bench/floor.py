"""The race benchmark's floor in Python: a websockets + msgpack echo, one EVALSHA a message.

``python bench/floor.py REDIS_URL`` listens on a free loopback port, prints its
``ws://127.0.0.1:PORT/`` URL as the first line of its standard output, and serves until
its standard input closes. Each binary frame is decoded as a msgpack map; the server
runs one EVALSHA of a one-line script (``INCR`` of one key, through redis-py's
registered script) and answers ``{"type": "accepted", "ref": <the request's ref>, "v": 1}``
in msgpack. No subprotocol is selected and no compression is offered; a frame that is not
a msgpack map closes its connection (1011, the handler's error).

``bench/race.py`` runs it through its ``--floor-command`` (this is the default command);
``bench/floor.js`` is the same floor for Node.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import msgpack
from websockets.asyncio.server import serve

SCRIPT = "return redis.call('INCR', KEYS[1])"
"""The floor's one-line script (``bench/floor.js`` runs the same)."""


async def serve_floor(redis_url: str) -> None:
    """Serve the floor until standard input closes (the benchmark starts it as a child process)."""
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(redis_url)
    script = client.register_script(SCRIPT)

    async def handler(ws: Any) -> None:
        async for frame in ws:
            request = msgpack.unpackb(frame)
            await script(keys=["floor"], args=[])
            await ws.send(msgpack.packb({"type": "accepted", "ref": request.get("ref"), "v": 1}))

    async with serve(handler, "127.0.0.1", 0, compression=None) as server:
        print(f"ws://127.0.0.1:{server.sockets[0].getsockname()[1]}/", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await client.aclose()


def main() -> None:
    """Run the floor on the Redis URL given as the last argument."""
    if len(sys.argv) < 2:
        sys.exit("usage: python bench/floor.py REDIS_URL")
    asyncio.run(serve_floor(sys.argv[-1]))


if __name__ == "__main__":
    main()
