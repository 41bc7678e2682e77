"""Race server load benchmark: moves/s and ack latency against a measured floor.

Prints figures; asserts nothing. Three parts, all on loopback:

1. Floor: a bare websockets + msgpack echo server that makes one Redis round trip (an
   EVALSHA of a one-line script) per message, in its own process as the race server is,
   driven by the same clients doing the same work (each picks a legal move on its own
   board before sending it).
2. The race server: N racers in N/2 friend races on a known deal, each sending legal
   moves (or an undo when every move would end their game) as fast as acks come back.
3. Idle memory: C connected clients that said hello, RSS growth of the server process
   divided by C.

The clients of both phases are the same kind: by default raw-frame sockets
(``support.LightSocket``), which leave the shared cores to the servers being measured;
``--client websockets`` uses full websockets clients instead. Each round prints the CPU
used per message by the server, Redis and the clients.

Usage: python bench/race.py [--racers 40] [--seconds 4] [--rounds 9] [--idle 5000]
       [--client light|websockets]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgpack
from websockets.asyncio.client import connect
from websockets.asyncio.server import serve

sys.path.insert(0, str(Path(__file__).resolve().parent))

from support import (
    BenchClient,
    choose_move,
    cpu_seconds,
    light_connect,
    machine,
    percentile,
    rss_kib,
    start_server,
    stop_server,
)

from protocol.game import Board, move_json
from protocol.wire.codec import MSGPACK, encode
from protocol.wire.message import from_dict
from server.embedded import EmbeddedRedis

DEAL = 987654321987


def own_cpu_seconds() -> float:
    """Return the CPU time this process (the clients) has used so far, in seconds."""
    times = os.times()
    return times.user + times.system


# -- floor ------------------------------------------------------------------------------


async def serve_floor(redis_url: str) -> None:
    """Run the floor server until stdin closes (the benchmark starts it as a child process)."""
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(redis_url)
    script = client.register_script("return redis.call('INCR', KEYS[1])")

    async def handler(ws: Any) -> None:
        async for frame in ws:
            request = msgpack.unpackb(frame)
            await script(keys=["floor"], args=[])
            await ws.send(msgpack.packb({"type": "accepted", "ref": request.get("ref"), "v": 1}))

    async with serve(handler, "127.0.0.1", 0, compression=None) as server:
        print(f"ws://127.0.0.1:{server.sockets[0].getsockname()[1]}/", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)


def start_floor(redis_url: str) -> tuple[subprocess.Popen[str], int]:
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve-floor", redis_url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    return process, int(process.stdout.readline().rsplit(":", 1)[1].strip("/\n"))


def stop_floor(process: subprocess.Popen[str]) -> None:
    assert process.stdin is not None
    process.stdin.close()
    process.wait(10)


async def open_client(url: str, client: str, subprotocol: str | None) -> Any:
    """Connect one benchmark client: a raw-frame ``LightSocket`` or a websockets client."""
    if client == "light":
        return await light_connect(url, subprotocol=subprotocol)
    return await connect(
        url,
        subprotocols=[subprotocol] if subprotocol else None,  # type: ignore[list-item]
        max_size=1 << 22,
        compression=None,
    )


async def drive_floor(port: int, racers: int, seconds: float, client: str) -> tuple[int, list[float]]:
    """Drive the echo server with the same client work as the race: each racer picks a
    legal move on its own board, sends the move request, and plays it when answered."""
    latencies: list[float] = []
    count = 0
    stop = time.perf_counter() + seconds

    async def one(index: int) -> None:
        nonlocal count
        rng = random.Random(index)
        board = Board.new("scorpion", DEAL)
        ws = await open_client(f"ws://127.0.0.1:{port}/", client, None)
        try:
            ref = 0
            while time.perf_counter() < stop:
                ref += 1
                move = choose_move(board, rng)
                started = time.perf_counter()
                body: dict[str, Any] = (
                    {"type": "undo"} if move is None else {"type": "move", "move": move_json(move)}
                )
                await ws.send(msgpack.packb({**body, "game": "g0123456789", "v": ref, "ref": ref}))
                msgpack.unpackb(await ws.recv())
                latencies.append(time.perf_counter() - started)
                count += 1
                if move is None:
                    board.pop()
                else:
                    board.push(move)
        finally:
            await ws.close()

    await asyncio.gather(*(one(i) for i in range(racers)))
    return count, latencies


# -- the race server ----------------------------------------------------------------------


async def drive_server(port: int, racers: int, seconds: float, client: str) -> tuple[int, list[float], int]:
    url = f"ws://127.0.0.1:{port}/"
    latencies: list[float] = []
    count = 0
    errors = 0

    async def pair(index: int) -> None:
        nonlocal count, errors
        rng = random.Random(index)
        a_ws = await open_client(url, client, MSGPACK)
        b_ws = await open_client(url, client, MSGPACK)
        a, b = BenchClient(a_ws), BenchClient(b_ws)
        await a.request({"type": "hello", "name": f"A{index}"})
        await b.request({"type": "hello", "name": f"B{index}"})
        room = await a.request({"type": "room_create", "variant": "scorpion", "options": {"undo": True}})
        await b.request({"type": "room_join", "room": room["room"]})
        await b.request({"type": "ready", "ready": True})
        await a.request({"type": "room_start"})
        starts = await asyncio.gather(a.expect("race_started"), b.expect("race_started"))
        stop = time.perf_counter() + seconds

        async def play(racer: BenchClient, start: dict[str, Any]) -> None:
            # The same lean client work as the floor's: msgpack straight on the socket (the
            # setup above goes through the checked protocol client).
            nonlocal count, errors
            board = Board.new("scorpion", DEAL)
            version = start["v"]
            game = start["game"]
            ws, ref = racer.ws, racer.ref
            while time.perf_counter() < stop:
                move = choose_move(board, rng)
                started = time.perf_counter()
                ref += 1
                body: dict[str, Any] = (
                    {"type": "undo"} if move is None else {"type": "move", "move": move_json(move)}
                )
                await ws.send(msgpack.packb({**body, "game": game, "v": version, "ref": ref}))
                while True:
                    answer = msgpack.unpackb(await ws.recv())
                    if answer.get("ref") == ref:
                        break
                latencies.append(time.perf_counter() - started)
                if answer["type"] != "accepted":
                    errors += 1
                    break
                count += 1
                version = answer["v"]
                if move is None:
                    board.pop()
                else:
                    board.push(move)

        await asyncio.gather(play(a, starts[0]), play(b, starts[1]))
        await a_ws.close()
        await b_ws.close()

    await asyncio.gather(*(pair(i) for i in range(racers // 2)))
    return count, latencies, errors


async def idle_memory(port: int, pid: int, clients: int) -> float:
    url = f"ws://127.0.0.1:{port}/"
    await asyncio.sleep(0.5)
    before = rss_kib(pid)
    sockets = []
    for start in range(0, clients, 250):
        batch = await asyncio.gather(
            *(
                connect(url, subprotocols=[MSGPACK], compression=None)  # type: ignore[list-item]
                for _ in range(min(250, clients - start))
            )
        )
        for ws in batch:
            await ws.send(encode(from_dict({"type": "hello", "name": "Idle"}), MSGPACK))
        for ws in batch:
            await ws.recv()
        sockets.extend(batch)
    await asyncio.sleep(1.0)
    after = rss_kib(pid)
    for ws in sockets:
        await ws.close()
    return (after - before) / clients


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--racers", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--idle", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=9, help="floor and server take turns this often")
    parser.add_argument(
        "--client",
        choices=("light", "websockets"),
        default="light",
        help="the racers' clients, in both phases: raw-frame sockets (default), which leave the "
        "shared cores to the servers, or full websockets clients",
    )
    parser.add_argument("--serve-floor", metavar="REDIS_URL", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_floor:
        await serve_floor(args.serve_floor)
        return
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

    with tempfile.TemporaryDirectory() as tmp:
        redis = EmbeddedRedis(Path(tmp) / "redis", appendonly=True)
        redis_url = await redis.start()
        print(f"machine: {machine()}")
        print(
            f"clients: {args.racers} racers ({args.client} clients) for {args.seconds:.0f} s each phase; "
            "Redis with AOF on a unix socket"
        )

        assert redis.process is not None
        redis_pid = redis.process.pid
        floor, floor_port = start_floor(redis_url)
        process, port = start_server(
            redis_url, test_deals=DEAL, countdown_seconds=0.1, message_credits=100000, race_time_limit=3600
        )
        ratios: list[tuple[float, float]] = []
        latencies: list[float] = []
        try:
            # Floor and server take turns, so that a change in the machine's speed (it is
            # shared) falls on both; the ratios' median is the figure.
            for round_number in range(1, args.rounds + 1):
                print(f"round {round_number}:")
                cpu = cpu_seconds(floor.pid), cpu_seconds(redis_pid), own_cpu_seconds()
                f_count, f_lat = await drive_floor(floor_port, args.racers, args.seconds, args.client)
                f_cpu = (
                    cpu_seconds(floor.pid) - cpu[0],
                    cpu_seconds(redis_pid) - cpu[1],
                    own_cpu_seconds() - cpu[2],
                )
                f_rate = f_count / args.seconds
                print(
                    f"  floor  (echo + 1 Redis round trip): {f_rate:6.0f} msg/s   "
                    f"p50 {1000 * percentile(f_lat, 0.5):6.2f} ms   "
                    f"p99 {1000 * percentile(f_lat, 0.99):6.2f} ms"
                    f"   CPU per message: server {1e6 * f_cpu[0] / f_count:4.0f} us,"
                    f" Redis {1e6 * f_cpu[1] / f_count:3.0f} us, clients {1e6 * f_cpu[2] / f_count:3.0f} us"
                )
                cpu = cpu_seconds(process.pid), cpu_seconds(redis_pid), own_cpu_seconds()
                s_count, s_lat, errors = await drive_server(port, args.racers, args.seconds, args.client)
                s_cpu = (
                    cpu_seconds(process.pid) - cpu[0],
                    cpu_seconds(redis_pid) - cpu[1],
                    own_cpu_seconds() - cpu[2],
                )
                s_rate = s_count / args.seconds
                latencies.extend(s_lat)
                print(
                    f"  server (validated moves, Lua commit): {s_rate:6.0f} moves/s "
                    f"p50 {1000 * percentile(s_lat, 0.5):6.2f} ms   "
                    f"p99 {1000 * percentile(s_lat, 0.99):6.2f} ms"
                    f"   CPU per move: server {1e6 * s_cpu[0] / s_count:4.0f} us,"
                    f" Redis {1e6 * s_cpu[1] / s_count:3.0f} us, clients {1e6 * s_cpu[2] / s_count:3.0f} us"
                    f"   errors {errors}"
                )
                ratios.append((s_rate / f_rate, percentile(s_lat, 0.99) / percentile(f_lat, 0.99)))
                print(f"  ratio: throughput {ratios[-1][0]:.2f}x, p99 {ratios[-1][1]:.2f}x")
            throughput = statistics.median(r[0] for r in ratios)
            p99 = statistics.median(r[1] for r in ratios)
            print(
                f"median of {len(ratios)} rounds: throughput {throughput:.2f}x the floor (goal >= 0.7), "
                f"p99 {p99:.2f}x the floor's (goal <= 2)"
            )
            stop_floor(floor)
            if args.idle:
                per_client = await idle_memory(port, process.pid, args.idle)
                print(
                    f"idle memory: {per_client:.1f} KiB per connected client "
                    f"with {args.idle} connections (goal <= 40)"
                )
            print(
                f"load average after: {os.getloadavg()}; "
                f"mean move latency {1000 * statistics.mean(latencies):.2f} ms"
            )
        finally:
            stop_server(process)
            await redis.stop()


if __name__ == "__main__":
    asyncio.run(main())
