"""Challenge benchmark: takers racing ghosts at once across two nodes.

Prints figures; asserts nothing. On loopback, an embedded Redis and two server nodes:

1. The recorded run: one player plays a fresh deal first (``challenge_new``), ``--actions``
   moves ``--gap`` seconds apart, then resigns; its run becomes the challenge's ghost.
2. Ghosts: ``--takers`` players, half on each node, take the challenge at once and play
   nothing; each receives the ghost's actions as ``progress``. Lateness is the time a
   progress frame reached its taker's socket (the kernel's receive timestamp) less the time
   it was due (the taker's race start plus the action's recorded time): the node's timer,
   the commit in Redis, the delivery. That is what a taker's own device would see. This
   one process stands in for a thousand devices on the two cores the servers use, so it
   also says how late it got to each frame itself, after serving the takers before it.
   Server CPU (both nodes, Redis) is measured from the first action due to the last one
   received, per ghost event delivered.
3. Live rivals: ``--takers`` players in pairs (each pair on one node, the pairs split
   between the nodes), one of each pair playing moves at the recorded run's pace, the
   other receiving them as ``progress``; server CPU per progress event, measured as for
   the ghosts (the pairs begin within the same ``--spread``, the window opens once all have).

The summary gives lateness p99 at the takers' sockets (goal <= 50 ms) and the ratio of CPU per ghost
event to CPU per live rival's progress event (goal <= 1.2).

``--spread S`` starts the takers at random moments within S seconds instead of all at once.

Usage: python bench/challenges.py [--takers 1000] [--actions 12] [--gap 0.4] [--spread 0]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import socket
import struct
import sys
import tempfile
import time
from collections import deque
from pathlib import Path
from typing import Any

import msgpack
from redis.asyncio import Redis

sys.path.insert(0, str(Path(__file__).resolve().parent))

from support import (
    BenchClient,
    LightSocket,
    choose_move,
    machine,
    percentile,
    start_server,
    stop_server,
    tree_cpu_seconds,
)

from protocol.game import Board, move_json
from server.runtime.embedded import EmbeddedRedis

DEAL = 987654321987


def now_ms() -> float:
    return time.time() * 1000


SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Linux's value; not named by every Python


class StampedSocket(LightSocket):
    """A light client socket that notes, for each frame, when its bytes reached the socket:
    the kernel's receive timestamp (``SO_TIMESTAMPNS``), the moment a taker's own device
    would have had it, whatever this one process was doing for its other takers then."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.arrived_at = 0.0
        """The receive timestamp of the socket read being parsed (ms)."""
        self.stamps: deque[float] = deque()
        self.last_arrival = 0.0

    def on_frame(self, payload: bytes) -> None:
        self.stamps.append(self.arrived_at)
        super().on_frame(payload)

    async def recv(self) -> bytes:
        payload = await super().recv()
        self.last_arrival = self.stamps.popleft()
        return payload


class StampingTransport:
    """Just enough of an asyncio transport for a :class:`StampedSocket`: reads with
    ``recvmsg`` to get each read's receive timestamp, which asyncio's own transports drop."""

    def __init__(self, sock: socket.socket, protocol: StampedSocket) -> None:
        self.sock, self.protocol = sock, protocol
        self.loop = asyncio.get_running_loop()
        self.closing = False
        self.pending = bytearray()
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.loop.add_reader(sock.fileno(), self._read)
        protocol.connection_made(self)

    def _read(self) -> None:
        try:
            data, ancillary, _, _ = self.sock.recvmsg(262144, socket.CMSG_SPACE(16))
        except (BlockingIOError, InterruptedError):
            return
        except OSError as error:
            self._lost(error)
            return
        if not data:
            self._lost(None)
            return
        stamp = now_ms()
        for level, kind, value in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                seconds, nanoseconds = struct.unpack("qq", value[:16])
                stamp = seconds * 1000 + nanoseconds / 1e6
        self.protocol.arrived_at = stamp
        self.protocol.data_received(data)

    def write(self, data: bytes) -> None:
        if self.closing:
            return
        if not self.pending:
            try:
                sent = self.sock.send(data)
            except (BlockingIOError, InterruptedError):
                sent = 0
            data = data[sent:]
            if not data:
                return
            self.loop.add_writer(self.sock.fileno(), self._flush)
        self.pending += data

    def _flush(self) -> None:
        try:
            sent = self.sock.send(self.pending)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as error:
            self._lost(error)
            return
        del self.pending[:sent]
        if not self.pending:
            self.loop.remove_writer(self.sock.fileno())

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self._lost(None)

    def _lost(self, error: Exception | None) -> None:
        if self.closing:
            return
        self.closing = True
        self.loop.remove_reader(self.sock.fileno())
        if self.pending:
            self.loop.remove_writer(self.sock.fileno())
        self.sock.close()
        self.protocol.connection_lost(error)


async def client(url: str, name: str) -> BenchClient:
    host, port = url.split("//")[1].rstrip("/").split(":")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setblocking(False)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    await asyncio.get_running_loop().sock_connect(sock, (host, int(port)))
    protocol = StampedSocket(host, int(port))
    StampingTransport(sock, protocol)
    await protocol.handshake
    bench = BenchClient(protocol)
    await bench.request({"type": "hello", "name": name})
    return bench


def server_cpu(pids: list[int]) -> float:
    return sum(tree_cpu_seconds(pid) for pid in pids)


async def record(url: str, redis_url: str, actions: int, gap: float) -> tuple[str, list[int]]:
    """Play the recorded run; return the challenge's code and its actions' times (ms)."""
    ann = await client(url, "Ann")
    start = await ann.request({"type": "challenge_new"})
    board, rng, v = Board.new("scorpion", DEAL), random.Random(7), start["v"]
    for _ in range(actions):
        await asyncio.sleep(gap)
        move = choose_move(board, rng)
        body = {"type": "undo"} if move is None else {"type": "move", "move": move_json(move)}
        answer = await ann.request({**body, "game": start["game"], "v": v})
        v = answer["v"]
        if move is None:
            board.pop()
        else:
            board.push(move)
    await asyncio.sleep(gap)
    await ann.request({"type": "resign", "game": start["game"], "v": v})
    made = await ann.expect("challenge")
    await ann.ws.close()
    redis = Redis.from_url(redis_url)  # the ghost's recorded times, as the challenge keeps them
    ghost = json.loads((await redis.lrange("ch:{" + made["code"] + "}:ghosts", 0, 0))[0])
    await redis.aclose()
    offsets = [int(action[0]) for action in ghost["actions"]]
    return made["code"], offsets


async def commit_lateness(redis_url: str, games: list[str], offsets: list[int]) -> list[float]:
    """Return how late each ghost action was committed by its node (the event's ``at`` in
    the game's log, less its race's start plus the action's recorded time), in ms: the
    server's part of the lateness, without the delivery and the bench's own clients."""
    redis = Redis.from_url(redis_url)
    out: list[float] = []
    for game in games:
        meta = await redis.hget(f"{{g:{game}}}:meta", "start")
        start, step = int(meta or 0), 0
        for raw in await redis.lrange(f"{{g:{game}}}:log", 0, -1):
            event = json.loads(raw)
            if event.get("player") == "ghost-1" and step < len(offsets):
                out.append(int(event["at"]) - start - offsets[step])
                step += 1
    await redis.aclose()
    return sorted(out)


async def ghosts(
    urls: list[str],
    redis_url: str,
    code: str,
    offsets: list[int],
    takers: int,
    pids: list[int],
    spread: float,
) -> dict[str, Any]:
    clients = [await client(urls[i % 2], f"T{i}") for i in range(takers)]
    # (when the event was due, how late it reached the taker's socket, how late this process
    # got to it), ms
    late: list[tuple[float, float, float]] = []
    by_step: list[list[float]] = [[] for _ in offsets]  # how late each action of the run came, ms
    answered: list[tuple[float, float]] = []  # (asked -> race start, race start -> answer), ms
    counted = 0
    window: dict[str, float] = {}
    started_all = asyncio.Event()
    pending = [takers]

    async def take(bench: BenchClient, delay: float) -> tuple[str, int]:
        nonlocal counted
        await asyncio.sleep(delay)  # takers who start within ``spread`` seconds of each other
        asked = now_ms()
        started = await bench.request({"type": "challenge_take", "code": code})
        answered.append((started["start"] - asked, now_ms() - started["start"]))
        pending[0] -= 1
        if not pending[0]:  # every race has started: the CPU window opens
            window["cpu0"], window["t0"], window["at"] = server_cpu(pids), time.perf_counter(), now_ms()
            started_all.set()
        game, start, step = started["game"], started["start"], 0
        v = started["v"]
        while True:
            data = msgpack.unpackb(await bench.ws.recv())
            if data.get("type") != "progress" or data.get("game") != game:
                continue
            arrived = now_ms()
            due = start + offsets[min(step, len(offsets) - 1)]
            late.append((due, bench.ws.last_arrival - due, arrived - due))
            by_step[min(step, len(offsets) - 1)].append(bench.ws.last_arrival - due)
            if started_all.is_set():
                counted += 1
            step += 1
            if data["status"] != "playing":
                return game, v

    rng = random.Random(3)
    tasks = [asyncio.create_task(take(c, rng.uniform(0, spread))) for c in clients]
    played = await asyncio.gather(*tasks)
    cpu = server_cpu(pids) - window["cpu0"]  # before the takers resign: no race's end counted
    seconds = time.perf_counter() - window["t0"]
    for c, (game, v) in zip(clients, played, strict=True):
        await c.request({"type": "resign", "game": game, "v": v})
        await c.ws.close()
    committed = await commit_lateness(redis_url, [game for game, _ in played], offsets)
    return {
        "late": late,
        "by_step": [sorted(lateness) for lateness in by_step],
        "answered": answered,
        "committed": committed,
        "counted": counted,
        "cpu": cpu,
        "seconds": seconds,
        "all_started": window["at"],
    }


async def live(
    urls: list[str], offsets: list[int], takers: int, pids: list[int], spread: float
) -> dict[str, Any]:
    pairs = max(1, takers // 2)
    events = 0
    ready = asyncio.Event()
    starts: list[asyncio.Future[None]] = []
    delays = random.Random(3)
    window: dict[str, float] = {}
    waiting = [pairs]

    async def pair(index: int, delay: float) -> tuple[BenchClient, BenchClient]:
        nonlocal events
        url = urls[index % 2]
        a, b = await client(url, f"A{index}"), await client(url, f"B{index}")
        room = await a.request({"type": "room_create", "variant": "scorpion", "options": {"undo": True}})
        await b.request({"type": "room_join", "room": room["room"]})
        await b.request({"type": "ready", "ready": True})
        await a.request({"type": "room_start"})
        start_a, _ = await asyncio.gather(a.expect("race_started"), b.expect("race_started"))
        starts[index].set_result(None)
        await ready.wait()
        await asyncio.sleep(delay)  # as the takers began: within ``spread`` seconds
        game, v = start_a["game"], start_a["v"]
        board, rng = Board.new("scorpion", DEAL), random.Random(index)
        begin = now_ms()
        waiting[0] -= 1
        if not waiting[0]:  # every pair has begun: the CPU window opens, as for the ghosts
            window["cpu0"], window["t0"] = server_cpu(pids), time.perf_counter()

        async def receive() -> None:
            nonlocal events
            got = 0
            while got < len(offsets) - 1:
                data = msgpack.unpackb(await b.ws.recv())
                if data.get("type") == "progress" and data.get("game") == game:
                    got += 1
                    events += "t0" in window

        receiving = asyncio.create_task(receive())
        for offset in offsets[:-1]:
            await asyncio.sleep(max(0.0, (begin + offset - offsets[0] - now_ms()) / 1000))
            move = choose_move(board, rng)
            body = {"type": "undo"} if move is None else {"type": "move", "move": move_json(move)}
            v = (await a.request({**body, "game": game, "v": v}))["v"]
            if move is None:
                board.pop()
            else:
                board.push(move)
        await receiving
        return a, b  # closed once the window has: a closing connection costs the server too

    loop = asyncio.get_running_loop()
    starts.extend(loop.create_future() for _ in range(pairs))
    tasks = [asyncio.create_task(pair(i, delays.uniform(0, spread))) for i in range(pairs)]
    await asyncio.gather(*starts)
    ready.set()
    played = await asyncio.gather(*tasks)
    cpu, seconds = server_cpu(pids) - window["cpu0"], time.perf_counter() - window["t0"]
    for a, b in played:
        await a.ws.close()
        await b.ws.close()
    return {"events": events, "cpu": cpu, "seconds": seconds}


async def main(args: argparse.Namespace) -> None:
    print(f"machine: {machine()}")
    with tempfile.TemporaryDirectory() as tmp:
        redis = EmbeddedRedis(Path(tmp) / "redis")
        redis_url = await redis.start()
        assert redis.process is not None
        nodes = [
            start_server(
                redis_url, test_deals=DEAL, countdown_seconds=0.2, node_id=f"node{i + 1}", grace_period=120
            )
            for i in range(2)
        ]
        urls = [f"ws://127.0.0.1:{port}/" for _, port in nodes]
        pids = [process.pid for process, _ in nodes] + [redis.process.pid]
        try:
            code, offsets = await record(urls[0], redis_url, args.actions, args.gap)
            print(f"challenge {code}: a ghost of {len(offsets)} actions over {offsets[-1] / 1000:.1f} s")
            g = await ghosts(urls, redis_url, code, offsets, args.takers, pids, args.spread)
            arrival = sorted(lateness for _, lateness, _ in g["late"])
            late = sorted(lateness for _, _, lateness in g["late"])
            steady = sorted(lateness for due, lateness, _ in g["late"] if due >= g["all_started"])
            ghost_cpu = g["cpu"] / max(1, g["counted"])
            print(
                f"ghosts: {args.takers} takers on 2 nodes, starting within {args.spread:g} s, "
                f"{len(late)} ghost events; lateness at the takers' sockets p50 "
                f"{percentile(arrival, 0.5):.1f} ms p99 {percentile(arrival, 0.99):.1f} ms "
                f"max {arrival[-1]:.1f} ms"
            )
            print(
                f"  as this one client process got to them (after serving its other takers' frames): "
                f"p50 {percentile(late, 0.5):.1f} ms p99 {percentile(late, 0.99):.1f} ms "
                f"max {late[-1]:.1f} ms"
            )
            print(
                "  by the run's action, lateness p99: "
                + ", ".join(f"{i + 1}: {percentile(s, 0.99):.0f}" for i, s in enumerate(g["by_step"]) if s)
                + " ms"
            )
            queued = sorted(a for a, _ in g["answered"])
            sent = sorted(b for _, b in g["answered"])
            print(
                f"  race starts: request to the race's start p50 {percentile(queued, 0.5):.0f} ms "
                f"max {queued[-1]:.0f} ms; the start to its answer at the taker p50 "
                f"{percentile(sent, 0.5):.0f} ms p99 {percentile(sent, 0.99):.0f} ms max {sent[-1]:.0f} ms"
            )
            committed = g["committed"]
            if committed:
                print(
                    f"  committed by the nodes ({len(committed)} events): lateness p50 "
                    f"{percentile(committed, 0.5):.1f} ms p99 {percentile(committed, 0.99):.1f} ms "
                    f"max {committed[-1]:.1f} ms"
                )
            if steady:
                print(
                    f"  once every race had started ({len(steady)} events): lateness p50 "
                    f"{percentile(steady, 0.5):.1f} ms p99 {percentile(steady, 0.99):.1f} ms; "
                    f"server CPU {ghost_cpu * 1e6:.0f} us per ghost event ({g['counted']} events, "
                    f"{g['seconds']:.1f} s)"
                )
            r = await live(urls, offsets, args.takers, pids, args.spread)
            live_cpu = r["cpu"] / max(1, r["events"])
            print(
                f"live rivals: {args.takers // 2} races on 2 nodes, {r['events']} progress events in "
                f"{r['seconds']:.1f} s; server CPU {live_cpu * 1e6:.0f} us per progress event"
            )
            print(
                f"summary: lateness p99 at the takers' sockets {percentile(arrival, 0.99):.1f} ms, "
                f"once all had started {percentile(steady or arrival, 0.99):.1f} ms (goal <= 50), "
                f"as this client process got to them {percentile(late, 0.99):.1f} ms; "
                f"CPU per ghost event / live progress event {ghost_cpu / live_cpu:.2f}x (goal <= 1.2x)"
            )
        finally:
            for process, _ in nodes:
                stop_server(process)
            await redis.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--takers", type=int, default=1000)
    parser.add_argument("--actions", type=int, default=12, help="moves of the recorded run")
    parser.add_argument("--gap", type=float, default=0.4, help="seconds between its moves")
    parser.add_argument("--spread", type=float, default=0.0, help="seconds over which the takers start")
    asyncio.run(main(parser.parse_args()))
