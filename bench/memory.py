"""Redis memory per guest, per account and per finished game, measured with MEMORY USAGE.

Prints figures; asserts nothing. A guest, a solo game, a two-player race and an account
(a password, a passkey and a few sessions) go through a real server.

Usage: python bench/memory.py [--sessions 3]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import secrets
import sys
import tempfile
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis
from websockets.asyncio.client import connect

sys.path.insert(0, str(Path(__file__).resolve().parent))

from support import BenchClient, start_server, stop_server

from protocol.wire.codec import MSGPACK
from server.runtime.embedded import EmbeddedRedis
from tests.server.authenticator import Authenticator


async def usage(redis: aioredis.Redis, keys: list[str]) -> dict[str, int]:
    """Return each existing key's MEMORY USAGE in bytes."""
    sizes = {key: await redis.memory_usage(key, samples=0) for key in keys}
    return {key: int(size) for key, size in sizes.items() if size is not None}


async def keys_of(redis: aioredis.Redis, player: str, token: str) -> list[str]:
    found = [key async for key in redis.scan_iter(match=f"*{player}*", count=1000)]
    found = [key for key in found if not key.startswith("{g:")]
    return sorted([*found, "token:" + hashlib.sha256(token.encode()).hexdigest()])


async def game_keys(redis: aioredis.Redis, game: str) -> list[str]:
    return sorted([key async for key in redis.scan_iter(match=f"{{g:{game}}}*", count=1000)])


def show(label: str, sizes: dict[str, int]) -> None:
    print(f"{label}: {sum(sizes.values())} B in {len(sizes)} keys")
    for key, size in sorted(sizes.items()):
        print(f"  {key}: {size} B")


async def open_player(url: str, name: str) -> tuple[Any, BenchClient, dict[str, Any]]:
    ws = await connect(url, subprotocols=[MSGPACK], max_size=1 << 22)  # type: ignore[list-item]
    client = BenchClient(ws)
    welcome = await client.request({"type": "hello", "name": name})
    return ws, client, welcome


async def account(redis: aioredis.Redis, url: str, sessions: int) -> dict[str, int]:
    """Make an account through the server: a guest registers with a password, adds a passkey
    (a software authenticator's), and logs in ``sessions - 1`` more times; return the sizes
    of its identity, username, sessions, tokens and passkeys (games and ratings aside)."""
    origin = url.replace("ws://", "http://").rstrip("/")
    ws = await connect(url, subprotocols=[MSGPACK], additional_headers={"Origin": origin})  # type: ignore[list-item]
    client = BenchClient(ws)
    welcome = await client.request({"type": "hello", "name": "Ann"})
    username = "ann" + secrets.token_hex(4)
    password = "correct horse battery"
    granted = await client.request({"type": "register", "username": username, "password": password})
    assert granted["type"] == "session", granted
    challenge = await client.request({"type": "passkey_options", "purpose": "register"})
    added = await client.request(
        {"type": "passkey_register", "credential": Authenticator(origin).create(challenge["options"])}
    )
    assert added["type"] == "ok", added
    for index in range(sessions - 1):
        other = await connect(url, subprotocols=[MSGPACK])  # type: ignore[list-item]
        login = BenchClient(other)
        session = {"type": "login", "username": username, "password": password}
        answer = await login.request({**session, "device": f"Firefox on Linux {index}"})
        assert answer["type"] == "session", answer
        await other.close()
    await ws.close()
    await asyncio.sleep(0.5)
    player = welcome["player"]
    keys = await keys_of(redis, player, granted["token"])
    shape = await redis.hget(f"player:{player}", "skeleton")
    keys.append("username:" + hashlib.sha256(str(shape).encode()).hexdigest())
    for entry in (await redis.hgetall(f"sessions:{player}")).values():
        keys.append(json.loads(entry)["token"])
    return await usage(redis, sorted(set(keys)))


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=3, help="sessions the account opens")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        embedded = EmbeddedRedis(Path(tmp) / "redis")
        redis_url = await embedded.start()
        process, port = start_server(redis_url, daily_secret="bench")
        url = f"ws://127.0.0.1:{port}/"
        redis = aioredis.Redis.from_url(redis_url, decode_responses=True)
        try:
            ws, _, gone = await open_player(url, "Gone")
            await ws.close()
            await asyncio.sleep(0.5)  # the disconnect is handled
            show(
                "a guest who said hello and left",
                await usage(redis, await keys_of(redis, gone["player"], gone["token"])),
            )

            ws, ann, welcome = await open_player(url, "Ann")
            start = await ann.request({"type": "solo_new", "variant": "scorpion"})
            await ann.request({"type": "resign", "game": start["game"], "v": start["v"]})
            await ann.expect("race_ended")
            await ws.close()
            await asyncio.sleep(0.5)
            show(
                "a guest after one finished solo game",
                await usage(redis, await keys_of(redis, welcome["player"], welcome["token"])),
            )
            show("a finished solo game's own keys", await usage(redis, await game_keys(redis, start["game"])))

            ws1, host, _ = await open_player(url, "Host")
            ws2, guest, _ = await open_player(url, "Guest")
            room = await host.request({"type": "room_create", "variant": "scorpion"})
            await guest.request({"type": "room_join", "room": room["room"]})
            await guest.request({"type": "ready", "ready": True})
            await host.request({"type": "room_start"})
            for racer in (host, guest):
                began = await racer.expect("race_started")
                await racer.request({"type": "resign", "game": began["game"], "v": began["v"]})
            await host.expect("race_ended")
            await asyncio.sleep(0.5)
            show(
                "a finished two-player race's own keys",
                await usage(redis, await game_keys(redis, began["game"])),
            )
            await ws1.close()
            await ws2.close()

            sizes = await account(redis, url, args.sessions)
            show(f"an account with a passkey and {args.sessions} sessions (no game played)", sizes)
            print(f"used_memory: {(await redis.info('memory'))['used_memory']} B in all")
        finally:
            await redis.aclose()
            stop_server(process)
            await embedded.stop()


if __name__ == "__main__":
    asyncio.run(main())
