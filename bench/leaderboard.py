"""Daily leaderboard benchmark: 100,000 entries, queries and submissions through the server.

Prints figures; asserts nothing.

1. Fill today's board of Scorpion with N entries (directly in Redis, as finished attempts
   would leave them).
2. Through the server: top-100 pages and around-me pages (radius 5) for a player in the
   middle of the board, latency p50/p99.
3. Under load: players finishing ranked attempts (daily_start then resign) concurrently
   with a client querying the top page; submission latency (resign sent to race_ended
   received) and query latency during the load.

Usage: python bench/leaderboard.py [--entries 100000] [--queries 300] [--submitters 50]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import random
import sys
import tempfile
import time
from pathlib import Path

from websockets.asyncio.client import connect

sys.path.insert(0, str(Path(__file__).resolve().parent))

from support import BenchClient, machine, percentile, start_server, stop_server

from protocol.wire.codec import MSGPACK
from server.daily import leaderboard_key
from server.runtime.embedded import EmbeddedRedis
from server.store import Store


async def fill(redis_url: str, entries: int, me: str) -> str:
    """Put ``entries`` results on today's board, one of them ``me`` in the middle."""
    store = Store(redis_url)
    day = dt.datetime.now(dt.UTC).date().isoformat()
    day_start = int(dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC).timestamp() * 1000)
    rng = random.Random(1)
    key, entry_key = f"lb:{day}:scorpion", f"lb:{day}:scorpion:e"
    for start in range(0, entries, 5000):
        async with store.redis.pipeline(transaction=False) as pipe:
            for index in range(start, min(entries, start + 5000)):
                player = me if index == entries // 2 else f"x{index}"
                score = rng.choice((0, 100, 200, 300, 400)) + rng.choice((0, 0, 500 + rng.randrange(1200)))
                elapsed = rng.randrange(60, 1800)
                finished = day_start + rng.randrange(80_000_000)
                pipe.zadd(key, {player: leaderboard_key(score, elapsed, finished, day_start)})
                value = {"name": f"P{index}", "score": score, "elapsed": elapsed, "finished": finished}
                pipe.hset(entry_key, player, json.dumps(value))
            await pipe.execute()
    await store.close()
    return day


async def timed(client: BenchClient, message: dict[str, object], count: int) -> list[float]:
    latencies = []
    for _ in range(count):
        began = time.perf_counter()
        answer = await client.request(message)
        latencies.append(time.perf_counter() - began)
        assert answer["type"] == "leaderboard_page", answer
    return latencies


def show(label: str, latencies: list[float]) -> None:
    print(
        f"{label:<44} p50 {1000 * percentile(latencies, 0.5):7.2f} ms   "
        f"p99 {1000 * percentile(latencies, 0.99):7.2f} ms   ({len(latencies)} requests)"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--submitters", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        redis = EmbeddedRedis(Path(tmp) / "redis")
        redis_url = await redis.start()
        process, port = start_server(redis_url, message_credits=100_000, daily_secret="bench")
        url = f"ws://127.0.0.1:{port}/"
        try:
            print(f"machine: {machine()}")
            ws = await connect(url, subprotocols=[MSGPACK], max_size=1 << 22)  # type: ignore[list-item]
            client = BenchClient(ws)
            me = (await client.request({"type": "hello", "name": "Bench"}))["player"]
            began = time.perf_counter()
            await fill(redis_url, args.entries, me)
            print(f"filled {args.entries} entries in {time.perf_counter() - began:.1f} s")
            top = await timed(client, {"type": "leaderboard", "limit": 100}, args.queries)
            show(f"top-100 page of {args.entries} entries", top)
            around = await timed(client, {"type": "around_me", "radius": 5}, args.queries)
            show("around-me page (radius 5)", around)

            submit: list[float] = []

            async def submitter(index: int) -> None:
                sock = await connect(url, subprotocols=[MSGPACK], max_size=1 << 22)  # type: ignore[list-item]
                player = BenchClient(sock)
                await player.request({"type": "hello", "name": f"S{index}"})
                start = await player.request({"type": "daily_start"})
                began = time.perf_counter()
                await player.request({"type": "resign", "game": start["game"], "v": start["v"]})
                await player.expect("race_ended")
                submit.append(time.perf_counter() - began)
                await sock.close()

            during: list[float] = []

            async def reader() -> None:
                while len(submit) < args.submitters:
                    during.extend(await timed(client, {"type": "leaderboard", "limit": 100}, 1))

            await asyncio.gather(reader(), *(submitter(i) for i in range(args.submitters)))
            show(f"finished attempt to race_ended ({args.submitters} at once)", submit)
            show("top-100 page while they submit", during)
            board = await client.request({"type": "leaderboard", "limit": 1})
            print(
                f"board size after: {board['total']}; load average now: {machine().split('load average ')[1]}"
            )
            await ws.close()
        finally:
            stop_server(process)
            await redis.stop()


if __name__ == "__main__":
    asyncio.run(main())
