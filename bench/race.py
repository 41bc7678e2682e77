"""Race server load benchmark: moves/s and ack latency against a measured floor.

Prints figures; asserts nothing. Three parts, all on loopback:

1. Floor: a bare websockets + msgpack echo server that makes one Redis round trip (an
   EVALSHA of a one-line script) per message, in its own process as the race server is,
   driven by the same clients doing the same work (each picks a legal move on its own
   board before sending it). The floor is a command (``--floor-command``, run by
   ``floor_runner``): by default the Python floor, ``bench/floor.py``; ``"node
   bench/floor.js"`` is the same floor on Node (``cd bench && npm install`` first).
2. The race server: N racers in N/2 friend races on a known deal, each sending legal
   moves (or an undo when every move would end their game) as fast as acks come back.
3. Idle memory: C connected clients that said hello, RSS growth of the server process
   divided by C.

The clients of both phases are the same kind: by default raw-frame sockets
(``support.LightSocket``), which leave the shared cores to the servers being measured;
``--client websockets`` uses full websockets clients instead. Each round prints the CPU
used per message by the server, Redis and the clients; the summary gives, over the rounds,
the median and interquartile range of the ratios to the floor, CPU per move first (it is
steady on a shared machine, where throughput is not). ``--compare-loops`` runs the race
server twice, on asyncio's own loop and on uvloop, each round taking turns with the floor.
``--workers N`` runs it with ``--workers 1`` and with ``--workers N`` (N processes on one
port), each round taking turns, and compares the two; a server's CPU is that of its
process and all its descendants.

Usage: python bench/race.py [--racers 40] [--seconds 4] [--rounds 9] [--idle 5000]
       [--client light|websockets] [--event-loop auto|uvloop|asyncio] [--compare-loops]
       [--floor-command CMD] [--workers N]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack
from websockets.asyncio.client import connect

sys.path.insert(0, str(Path(__file__).resolve().parent))

from floor_runner import DEFAULT_FLOOR_COMMAND, FloorError, start_floor
from support import (
    BenchClient,
    choose_move,
    cpu_seconds,
    light_connect,
    machine,
    percentile,
    start_server,
    stop_server,
    tree_cpu_seconds,
    tree_rss_kib,
)

from protocol.game import Board, move_json
from protocol.wire.codec import MSGPACK, encode
from protocol.wire.message import from_dict
from server.runtime.embedded import EmbeddedRedis

DEAL = 987654321987


def own_cpu_seconds() -> float:
    """Return the CPU time this process (the clients) has used so far, in seconds."""
    times = os.times()
    return times.user + times.system


# -- floor ------------------------------------------------------------------------------


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


async def drive_floor(url: str, racers: int, seconds: float, client: str) -> tuple[int, list[float]]:
    """Drive the echo server with the same client work as the race: each racer picks a
    legal move on its own board, sends the move request, and plays it when answered."""
    latencies: list[float] = []
    count = 0
    stop = time.perf_counter() + seconds

    async def one(index: int) -> None:
        nonlocal count
        rng = random.Random(index)
        board = Board.new("scorpion", DEAL)
        ws = await open_client(url, client, None)
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
    """Connect ``clients`` idle clients that said hello; return the growth of the server's
    resident memory (its process and any workers, summed) per client, in KiB."""
    url = f"ws://127.0.0.1:{port}/"
    await asyncio.sleep(0.5)
    before = tree_rss_kib(pid)
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
    after = tree_rss_kib(pid)
    for ws in sockets:
        await ws.close()
    return (after - before) / clients


@dataclass
class Round:
    """One phase of one round: messages answered, their latencies, and CPU per message."""

    count: int
    latencies: list[float]
    cpu_us: tuple[float, float, float]
    """CPU per message of the server, Redis and the benchmark's clients, in microseconds."""
    rate: float
    errors: int = 0

    @property
    def p99(self) -> float:
        return percentile(self.latencies, 0.99)

    def line(self, unit: str, per: str) -> str:
        server, redis, clients = self.cpu_us
        return (
            f"{self.rate:6.0f} {unit:7s} p50 {1000 * percentile(self.latencies, 0.5):6.2f} ms   "
            f"p99 {1000 * self.p99:6.2f} ms   CPU per {per}: server {server:4.0f} us, "
            f"Redis {redis:3.0f} us, clients {clients:3.0f} us"
        )


async def measure(pids: tuple[int, int | tuple[int, ...]], drive: Any, seconds: float) -> Round:
    """Run one phase (``drive``, ``seconds`` long), measuring the CPU the server (its process
    and all its descendants: workers, or whatever a floor command starts), Redis (all its
    processes, for a cluster) and this process used per message."""
    redis_pids = pids[1] if isinstance(pids[1], tuple) else (pids[1],)

    def redis_cpu() -> float:
        return sum(cpu_seconds(pid) for pid in redis_pids)

    before = tree_cpu_seconds(pids[0]), redis_cpu(), own_cpu_seconds()
    count, latencies, *errors = await drive
    after = tree_cpu_seconds(pids[0]), redis_cpu(), own_cpu_seconds()
    cpu = tuple(1e6 * (b - a) / max(count, 1) for a, b in zip(before, after, strict=True))
    return Round(count, latencies, cpu, count / seconds, errors[0] if errors else 0)  # type: ignore[arg-type]


def spread(values: list[float], digits: int = 2) -> str:
    """Say a figure's median and interquartile range."""
    if len(values) < 2:
        return f"{values[0]:.{digits}f}"
    low, _, high = statistics.quantiles(values, n=4, method="inclusive")
    return f"{statistics.median(values):.{digits}f} (IQR {low:.{digits}f} to {high:.{digits}f})"


def summarize(floors: list[Round], rounds: dict[str, list[Round]]) -> None:
    """Print, over the rounds, the medians and interquartile ranges of the figures that count.

    CPU per move is the primary figure: on a shared machine it holds still where
    throughput does not.
    """
    median_cpu = [statistics.median(f.cpu_us[i] for f in floors) for i in range(3)]
    print(
        f"floor over {len(floors)} rounds: CPU per message server {median_cpu[0]:.0f} us, "
        f"Redis {median_cpu[1]:.0f} us, clients {median_cpu[2]:.0f} us (medians)"
    )
    for name, runs in rounds.items():
        throughput = [ratio(r.rate, f.rate) for r, f in zip(runs, floors, strict=True)]
        p99 = [ratio(r.p99, f.p99) for r, f in zip(runs, floors, strict=True)]
        server = [r.cpu_us[0] - f.cpu_us[0] for r, f in zip(runs, floors, strict=True)]
        redis = [ratio(r.cpu_us[1], f.cpu_us[1]) for r, f in zip(runs, floors, strict=True)]
        print(
            f"server on {name}: CPU per move server {statistics.median(r.cpu_us[0] for r in runs):.0f} us "
            f"(the floor's + {spread(server, 0)} us, goal <= +30), "
            f"Redis {spread(redis)}x the floor's (goal <= 2)"
        )
        print(
            f"server on {name}: median of {len(runs)} rounds: throughput {spread(throughput)}x the floor "
            f"(goal >= 1.0), p99 {spread(p99)}x the floor's (goal <= 1.5)"
        )


def ratio(value: float, floor: float) -> float:
    """Return ``value`` over the floor's; NaN where the floor measured nothing (a short run's
    Redis CPU can round to 0)."""
    return value / floor if floor > 0 else math.nan


def server_setups(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """Name each race server the run compares and give ``start_server``'s arguments for it:
    one per event loop (two with ``--compare-loops``), and with ``--workers N`` each of those
    with ``--workers 1`` and ``--workers N`` (N processes sharing one port)."""
    loops = ("asyncio", "uvloop") if args.compare_loops else (args.event_loop,)
    counts = sorted({1, args.workers}) if args.workers else [None]
    setups: dict[str, dict[str, Any]] = {}
    for loop in loops:
        for workers in counts:
            settings: dict[str, Any] = {
                "test_deals": DEAL,
                "countdown_seconds": 0.1,
                "message_credits": 100000,
                "race_time_limit": 3600,
                "event_loop": loop,
            }
            if workers is None:
                setups[loop] = settings
            else:
                name = f"{loop}, {workers} worker{'s' if workers > 1 else ''}"
                setups[name] = {**settings, "args": ("--workers", str(workers)), "workers": workers}
    return setups


def summarize_workers(rounds: dict[str, list[Round]], setups: dict[str, dict[str, Any]]) -> None:
    """Print, for each event loop, N workers against 1: throughput and server CPU per move
    (the CPU of all the server's processes), medians over the rounds, taking turns."""
    singles = {s["event_loop"]: name for name, s in setups.items() if s.get("workers") == 1}
    for name, setup in setups.items():
        single = singles.get(setup["event_loop"])
        if setup.get("workers", 1) == 1 or single is None:
            continue
        many, one = rounds[name], rounds[single]
        throughput = [m.rate / o.rate for m, o in zip(many, one, strict=True)]
        cpu = [m.cpu_us[0] - o.cpu_us[0] for m, o in zip(many, one, strict=True)]
        print(
            f"workers ({setup['event_loop']}): {setup['workers']} workers "
            f"{statistics.median(m.rate for m in many):.0f} moves/s, server CPU per move "
            f"{statistics.median(m.cpu_us[0] for m in many):.0f} us; 1 worker "
            f"{statistics.median(o.rate for o in one):.0f} moves/s, "
            f"{statistics.median(o.cpu_us[0] for o in one):.0f} us; throughput {spread(throughput)}x "
            f"1 worker's, server CPU per move {spread(cpu, 0)} us more than 1 worker's"
        )


async def main() -> None:
    """Parse the options, then run the floor and the race servers taking turns."""
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
    parser.add_argument(
        "--event-loop",
        choices=("auto", "uvloop", "asyncio"),
        default="auto",
        help="the race server's event loop (its --event-loop); the Python floor always runs asyncio's own",
    )
    parser.add_argument(
        "--compare-loops",
        action="store_true",
        help="run the race server twice, on asyncio's loop and on uvloop, taking turns with the floor",
    )
    parser.add_argument(
        "--floor-command",
        metavar="CMD",
        default=DEFAULT_FLOOR_COMMAND,
        help="run the floor with this command (split as a shell would, run from the repository's "
        "root, given the Redis URL as its last argument; it prints its ws:// URL on its first "
        'line and exits when its standard input closes), e.g. "node bench/floor.js" '
        "(default: the Python floor, %(default)s)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="run the race server with --workers 1 and with --workers N (N processes on one port), "
        "each round taking turns with the floor, and compare them (CPU of all their processes)",
    )
    parser.add_argument(
        "--cluster",
        action="store_true",
        help="race on a 3-primary Redis Cluster (one replica each) against the single Redis, "
        "taking turns, and on the cluster again with --redis-wait-replicas 1",
    )
    args = parser.parse_args()
    if args.workers is not None and args.workers < 1:
        parser.error("--workers takes a number of processes, 1 or more")
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if args.cluster:
        await cluster_rounds(args)
        return
    try:
        await race_rounds(args)
    except FloorError as exc:
        sys.exit(f"race.py: {exc}")


async def race_rounds(args: argparse.Namespace) -> None:
    """The floor and the race server(s) on one Redis, taking turns for ``args.rounds`` rounds."""
    with tempfile.TemporaryDirectory() as tmp:
        redis = EmbeddedRedis(Path(tmp) / "redis", appendonly=True)
        redis_url = await redis.start()
        assert redis.process is not None
        redis_pid = redis.process.pid
        setups = server_setups(args)
        servers: dict[str, tuple[Any, int]] = {}
        floor = None
        try:
            print(f"machine: {machine()}")
            print(
                f"clients: {args.racers} racers ({args.client} clients) for {args.seconds:.0f} s each "
                "phase; Redis with AOF on a unix socket"
            )
            floor = start_floor(args.floor_command, redis_url)
            print(f"floor: {floor.command} (pid {floor.pid}) at {floor.url}")
            for name, setup in setups.items():
                settings = {k: v for k, v in setup.items() if k != "workers"}
                servers[name] = start_server(redis_url, **settings)
            process, port = next(iter(servers.values()))
            floors: list[Round] = []
            rounds: dict[str, list[Round]] = {name: [] for name in servers}
            latencies: list[float] = []
            # Floor and server take turns, so that a change in the machine's speed (it is
            # shared) falls on both; the ratios' median is the figure.
            for round_number in range(1, args.rounds + 1):
                print(f"round {round_number}:")
                pids = (floor.pid, redis_pid)
                drive = drive_floor(floor.url, args.racers, args.seconds, args.client)
                floors.append(await measure(pids, drive, args.seconds))
                print(f"  floor  (echo + 1 Redis round trip): {floors[-1].line('msg/s', 'message')}")
                for name, (server, server_port) in servers.items():
                    pids = (server.pid, redis_pid)
                    drive = drive_server(server_port, args.racers, args.seconds, args.client)
                    done = await measure(pids, drive, args.seconds)
                    rounds[name].append(done)
                    latencies.extend(done.latencies)
                    print(
                        f"  server on {name:7s} (validated moves, Lua commit): "
                        f"{done.line('moves/s', 'move')}   errors {done.errors}"
                    )
                    print(
                        f"    ratio: throughput {done.rate / floors[-1].rate:.2f}x, "
                        f"p99 {done.p99 / floors[-1].p99:.2f}x, "
                        f"server CPU per move {done.cpu_us[0] - floors[-1].cpu_us[0]:+.0f} us"
                    )
            summarize(floors, rounds)
            summarize_workers(rounds, setups)
            floor.stop()
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
            if floor is not None:
                floor.stop()
            for server, _ in servers.values():
                stop_server(server)
            await redis.stop()


async def cluster_rounds(args: argparse.Namespace) -> None:
    """The race server on one Redis and on a 3-primary cluster, in the same run, taking turns."""
    from tests.valkey_cluster import ValkeyCluster

    with tempfile.TemporaryDirectory() as tmp:
        redis = EmbeddedRedis(Path(tmp) / "redis", appendonly=True)
        redis_url = await redis.start()
        cluster = ValkeyCluster(
            Path(tmp) / "cluster",
            primaries=3,
            replicas_per_primary=1,
            node_timeout_ms=5000,
            appendfsync="everysec",  # as the one Redis (the embedded server's setting)
        )
        cluster.start()
        print(f"machine: {machine()}")
        print(
            f"clients: {args.racers} racers ({args.client} clients) for {args.seconds:.0f} s each phase; "
            "one Redis with AOF on a unix socket, against a cluster of 3 primaries and 3 replicas on "
            "loopback TCP (AOF, both fsync every second)"
        )
        assert redis.process is not None
        settings: dict[str, Any] = {
            "test_deals": DEAL,
            "countdown_seconds": 0.1,
            "message_credits": 100000,
            "race_time_limit": 3600,
            "event_loop": args.event_loop,
        }
        servers = {
            "one Redis": (start_server(redis_url, **settings), (redis.process.pid,)),
        }
        every = tuple(node.process.pid for node in cluster.nodes.values() if node.process is not None)
        servers["cluster"] = (start_server(cluster.url, **settings), every)
        servers["cluster, wait 1"] = (start_server(cluster.url, redis_wait_replicas=1, **settings), every)
        primaries = [cluster.nodes[port].process.pid for port in cluster.current_primaries()]  # type: ignore[union-attr]
        runs: dict[str, list[Round]] = {name: [] for name in servers}
        primary_cpu: list[float] = []
        try:
            for round_number in range(1, args.rounds + 1):
                print(f"round {round_number}:")
                for name, ((server, port), pids) in servers.items():
                    before = sum(cpu_seconds(pid) for pid in primaries)
                    done = await measure(
                        (server.pid, pids),
                        drive_server(port, args.racers, args.seconds, args.client),
                        args.seconds,
                    )
                    if name == "cluster":
                        primary_cpu.append(
                            1e6 * (sum(cpu_seconds(pid) for pid in primaries) - before) / max(done.count, 1)
                        )
                    runs[name].append(done)
                    print(f"  {name:16s} {done.line('moves/s', 'move')}   errors {done.errors}")
            single = runs["one Redis"]
            for name in ("cluster", "cluster, wait 1"):
                ratio = [r.rate / s.rate for r, s in zip(runs[name], single, strict=True)]
                p99 = [r.p99 / s.p99 for r, s in zip(runs[name], single, strict=True)]
                print(
                    f"{name}: median of {args.rounds} rounds: throughput {spread(ratio)}x one Redis's "
                    f"(goal >= 0.7 for the cluster), p99 {spread(p99)}x"
                )
            per_primary = statistics.median(primary_cpu)
            server_us = statistics.median(r.cpu_us[0] for r in runs["cluster"])
            print(
                f"projection: the cluster's primaries spent {per_primary:.0f} us of CPU per move (median), "
                f"so each added primary can take about {1e6 / per_primary:,.0f} moves/s more, one core "
                f"each, given server nodes to send them (a server node spends {server_us:.0f} us a move: "
                f"about {1e6 / server_us:,.0f} moves/s a core)"
            )
            print(f"load average after: {os.getloadavg()}")
        finally:
            for (server, _), _pids in servers.values():
                stop_server(server)
            cluster.stop()
            await redis.stop()


if __name__ == "__main__":
    asyncio.run(main())
