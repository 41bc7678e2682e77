"""Crowd benchmark: one race watched by many spectators over two server processes.

Prints figures; asserts nothing. A racer on node A makes moves at a steady pace; the
spectators are split between node A and node B. For every move we record the time the
racer's ack arrives and the time each spectator receives the event of that version:
delivery latency = receipt - ack. The racer's ack latency is measured first without the
crowd, then with it.

Usage: python bench/spectators.py [--spectators 1000] [--moves 300] [--pace 0.05]
       [--crowd-client light|websockets] [--crowd-nice 19]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgpack
from websockets.asyncio.client import connect

sys.path.insert(0, str(Path(__file__).resolve().parent))

from support import (
    BenchClient,
    LightSocket,
    choose_move,
    light_connect,
    machine,
    percentile,
    start_server,
    stop_server,
)

from protocol.game import Board, move_json
from protocol.wire.codec import MSGPACK, decode_dict, encode
from protocol.wire.message import Hello, Watch
from server.runtime.embedded import EmbeddedRedis

DEAL = 271828182845


async def racing_moves(
    racer: BenchClient, start: dict[str, Any], moves: int, pace: float, board: Board, acks: dict[int, float]
) -> list[float]:
    """Make up to ``moves`` legal moves (undoing when stuck); return the ack latencies."""
    rng = random.Random(len(acks))
    latencies = []
    version = max(acks, default=start["v"])
    for _ in range(moves):
        chosen = choose_move(board, rng, deal=False)
        began = time.monotonic()
        if chosen is None:
            answer = await racer.request({"type": "undo", "game": start["game"], "v": version})
            board.pop()
        else:
            answer = await racer.request(
                {"type": "move", "game": start["game"], "v": version, "move": move_json(chosen)}
            )
            board.push(chosen)
        now = time.monotonic()
        latencies.append(now - began)
        if answer["type"] != "accepted":
            raise RuntimeError(f"the racer's action was refused: {answer}")
        version = answer["v"]
        acks[version] = now
        await asyncio.sleep(pace)
    return latencies


async def spectator(url: str, room: str, receipts: list[dict[int, float]], joined: list[int]) -> None:
    ws = await connect(url, subprotocols=[MSGPACK], max_size=1 << 22, compression=None)  # type: ignore[list-item]
    await ws.send(encode(Hello(name="Fan"), MSGPACK))
    await ws.recv()
    await ws.send(encode(Watch(room=room), MSGPACK))
    mine: dict[int, float] = {}
    receipts.append(mine)
    joined.append(1)
    try:
        async for frame in ws:
            data = decode_dict(frame, MSGPACK, limit=1 << 22)
            if data["type"] == "spectate_event":
                mine[data["v"]] = time.monotonic()
            elif data["type"] == "race_ended":
                break
    finally:
        await ws.close()


class LightSpectator(LightSocket):
    """A spectator on a raw-frame socket (see ``LightSocket``): says hello, watches the
    room, and notes when each event arrives, in the socket's read callback."""

    def __init__(self, host: str, port: int, room: str, mine: dict[int, float], joined: list[int]) -> None:
        super().__init__(host, port)
        self.room = room
        self.mine = mine
        self.joined = joined

    def opened(self) -> None:
        self.write_frame(msgpack.packb({"type": "hello", "name": "Fan"}))

    def on_frame(self, payload: bytes) -> None:
        data = msgpack.unpackb(payload)
        kind = data["type"]
        if kind == "spectate_event":
            self.mine[data["v"]] = time.monotonic()
        elif kind == "welcome":
            self.write_frame(msgpack.packb({"type": "watch", "room": self.room, "ref": 1}))
        elif kind == "spectate":
            self.joined.append(1)


async def light_spectator(url: str, room: str, receipts: list[dict[int, float]], joined: list[int]) -> None:
    mine: dict[int, float] = {}
    receipts.append(mine)
    socket = await light_connect(url, LightSpectator, room=room, mine=mine, joined=joined)
    try:
        await asyncio.Event().wait()
    finally:
        await socket.close()


async def crowd(urls: list[str], room: str, count: int, conn: Any, client: str) -> None:
    """Run ``count`` spectators (in their own process); report receipt times when told."""
    receipts: list[dict[int, float]] = []
    joined: list[int] = []
    tasks = []
    one = light_spectator if client == "light" else spectator
    for index in range(count):
        tasks.append(asyncio.create_task(one(urls[index % len(urls)], room, receipts, joined)))
        if index % 100 == 99:
            await asyncio.sleep(0.2)
    while len(joined) < count:
        await asyncio.sleep(0.1)
    conn.send("joined")
    await asyncio.get_running_loop().run_in_executor(None, conn.recv)  # wait for "report"
    conn.send(receipts)
    for task in tasks:
        task.cancel()


def crowd_process(urls: list[str], room: str, count: int, conn: Any, client: str, niceness: int) -> None:
    """Process entry point of the crowd."""
    os.nice(niceness)
    resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
    asyncio.run(crowd(urls, room, count, conn, client))


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--spectators", type=int, default=1000)
    parser.add_argument("--moves", type=int, default=300)
    parser.add_argument("--pace", type=float, default=0.05)
    parser.add_argument(
        "--crowd-client",
        choices=("light", "websockets"),
        default="light",
        help="spectators as raw-frame readers (default), or as full websockets clients, which "
        "on a small machine take more CPU than the servers they watch",
    )
    parser.add_argument(
        "--crowd-nice",
        type=int,
        default=19,
        help="scheduling niceness of the crowd's process (default 19: the crowd stands for "
        "spectators' own devices and yields this machine's cores to the servers; 0 lets it compete)",
    )
    args = parser.parse_args()
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    with tempfile.TemporaryDirectory() as tmp:
        redis = EmbeddedRedis(Path(tmp) / "redis")
        redis_url = await redis.start()
        settings = {
            "test_deals": DEAL,
            "countdown_seconds": 0.1,
            "message_credits": 100_000,
            "send_queue": 256,
        }
        node_a, port_a = start_server(redis_url, **settings)
        node_b, port_b = start_server(redis_url, **settings)
        url_a, url_b = f"ws://127.0.0.1:{port_a}/", f"ws://127.0.0.1:{port_b}/"
        try:
            print(f"machine: {machine()}")
            print(
                f"{args.spectators} spectators ({args.crowd_client} clients, niceness {args.crowd_nice}) "
                f"over two server processes; {args.moves} moves per phase"
            )
            ann_ws = await connect(url_a, subprotocols=[MSGPACK], max_size=1 << 22, compression=None)  # type: ignore[list-item]
            bob_ws = await connect(url_a, subprotocols=[MSGPACK], max_size=1 << 22, compression=None)  # type: ignore[list-item]
            ann, bob = BenchClient(ann_ws), BenchClient(bob_ws)
            await ann.request({"type": "hello", "name": "Ann"})
            await bob.request({"type": "hello", "name": "Bob"})
            room = await ann.request(
                {"type": "room_create", "variant": "scorpion", "options": {"undo": True}}
            )
            await bob.request({"type": "room_join", "room": room["room"]})
            await bob.request({"type": "ready", "ready": True})
            await ann.request({"type": "room_start"})
            start = await ann.expect("race_started")
            board = Board.new("scorpion", DEAL)
            acks: dict[int, float] = {}
            alone = await racing_moves(ann, start, args.moves, args.pace, board, acks)

            # The crowd runs in its own process so that decoding its frames does not
            # delay the racer's acks in this one.
            parent, child = multiprocessing.Pipe()
            spectators = multiprocessing.Process(
                target=crowd_process,
                args=(
                    [url_a, url_b],
                    room["room"],
                    args.spectators,
                    child,
                    args.crowd_client,
                    args.crowd_nice,
                ),
            )
            spectators.start()
            await asyncio.get_running_loop().run_in_executor(None, parent.recv)  # "joined"
            await asyncio.sleep(1.0)
            crowd_acks: dict[int, float] = {max(acks): 0.0}
            crowded = await racing_moves(ann, start, args.moves, args.pace, board, crowd_acks)
            del crowd_acks[max(acks)]
            await asyncio.sleep(2.0)
            parent.send("report")
            receipts = await asyncio.get_running_loop().run_in_executor(None, parent.recv)
            spectators.join(10)
            delays = [mine[v] - at for mine in receipts for v, at in crowd_acks.items() if v in mine]
            expected = len(crowd_acks) * args.spectators
            print(
                f"delivery ack->spectator: p50 {1000 * percentile(delays, 0.5):7.1f} ms   "
                f"p99 {1000 * percentile(delays, 0.99):7.1f} ms   (goal p99 <= 250 ms; "
                f"{len(delays)} of {expected} deliveries seen)"
            )
            p99_alone, p99_crowd = percentile(alone, 0.99), percentile(crowded, 0.99)
            print(
                f"racer ack without crowd: p50 {1000 * percentile(alone, 0.5):6.2f} ms  "
                f"p99 {1000 * p99_alone:6.2f} ms"
            )
            print(
                f"racer ack with crowd:    p50 {1000 * percentile(crowded, 0.5):6.2f} ms  "
                f"p99 {1000 * p99_crowd:6.2f} ms  ({p99_crowd / p99_alone:.2f}x; goal <= 1.2x)"
            )
            await ann.request({"type": "resign", "game": start["game"], "v": max(crowd_acks)})
            print(f"after: {machine()}")
        finally:
            stop_server(node_a)
            stop_server(node_b)
            await redis.stop()


if __name__ == "__main__":
    asyncio.run(main())
