"""The move path's Redis call through two cluster clients: redis-py's and valkey-glide.

Prints figures; asserts nothing. A 3-primary, 3-replica Valkey Cluster on loopback (append
-only files, fsync every second, as the embedded server keeps its own); N racers, each on
a game of its own spread over every slot range, commit actions as fast as their answers
come back, with the server's real act script (``server.store.scripts.ACT``): the same keys
of one slot, a 1.5 KB event appended to the game's log and published on its shard
channel, the versions checked and bumped.

The clients take turns, each in a process of its own, round after round:

* ``store``: the store's own move path on a cluster (``server.store.cluster``'s
  ``ClusterCalls``: a pipelined connection per primary, routed by redis-py's slot map), as
  a server node runs it;
* ``redis-py``: redis-py's asyncio ``RedisCluster.evalsha`` (its connection pools, parser
  and retries);
* ``valkey-glide``: ``GlideClusterClient.invoke_script`` with the same script, keys and
  arguments (``pip install valkey-glide``; without it, its rounds are left out).

Each round prints actions/s, the answer's p50/p99, and the CPU per action of the client's
process (all its threads: glide's core runs in threads of its own) and of the cluster's
nodes. The summary gives the medians over the rounds.

Usage: python bench/cluster_client.py [--racers 40] [--seconds 4] [--rounds 5]
       [--event-loop auto|uvloop|asyncio]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from support import machine, percentile  # noqa: E402

from server.store import scripts  # noqa: E402

CLIENTS = ("store", "redis-py", "valkey-glide")
EVENT = "x" * 1500
"""A stored event of the size a move's is (the racer's view and summary)."""
SUMMARY = '{"runs":0,"score":0,"moves":1}'


def keys_of(game: str) -> list[str]:
    """The act script's keys for the one racer of ``game``."""
    tag = "{g:" + game + "}:"
    return [tag + "meta", tag + "p:P1", tag + "m:P1", tag + "log", tag + "nodes"]


def arguments(version: int) -> list[str]:
    """The act script's arguments for a move seen at ``version`` (the racer's last change)."""
    return [str(version), str(version), "push", "7D:5-1", EVENT, "bench-a", SUMMARY, "playing", ""]


# -- the worker: one client, one round -------------------------------------------------------


async def setup_games(url: str, games: list[str]) -> None:
    """Create the racers' games: running, at version 0, followed by two nodes (so it publishes)."""
    from server.store.cluster import open_cluster

    cluster = open_cluster(url, 5.0)
    try:
        for game in games:
            meta, racer, moves, log, nodes = keys_of(game)
            async with cluster.pipeline(transaction=False) as pipe:
                pipe.delete(meta, racer, moves, log, nodes)
                pipe.hset(meta, mapping={"state": "racing", "ver": 0})
                pipe.hset(racer, mapping={"changed": 0, "status": "playing"})
                pipe.sadd(nodes, "bench-a", "bench-b")
                await pipe.execute()
    finally:
        await cluster.aclose()


async def store_caller(url: str) -> tuple[Any, Any]:
    """The store's move-path call on a cluster: a pipelined connection per primary, routed by
    redis-py's slot map."""
    from server.store.cluster import ClusterCalls, open_cluster, parse_cluster_url

    cluster = open_cluster(url, 2.0)
    calls = ClusterCalls(cluster, 2.0, parse_cluster_url(url)[1])

    async def act(game: str, version: int) -> Any:
        return await calls.script(scripts.ACT, keys_of(game), arguments(version))

    async def close() -> None:
        await calls.close()
        await cluster.aclose()

    return act, close


async def redis_py_caller(url: str) -> tuple[Any, Any]:
    """The same call through redis-py's ``RedisCluster.evalsha`` (its pool, parser and retries)."""
    import hashlib

    from server.store.cluster import open_cluster

    cluster = open_cluster(url, 2.0)
    sha = hashlib.sha1(scripts.ACT.encode()).hexdigest()
    await cluster.script_load(scripts.ACT)

    async def act(game: str, version: int) -> Any:
        keys = keys_of(game)
        return await cluster.evalsha(sha, len(keys), *keys, *arguments(version))

    return act, cluster.aclose


async def glide_caller(url: str) -> tuple[Any, Any]:
    """The same call through valkey-glide's cluster client."""
    from glide import GlideClusterClient, GlideClusterClientConfiguration, NodeAddress, Script

    seeds = [part.rsplit(":", 1) for part in url.split("://", 1)[1].split(",")]
    config = GlideClusterClientConfiguration(
        [NodeAddress(host, int(port)) for host, port in seeds], request_timeout=2000
    )
    client = await GlideClusterClient.create(config)
    script = Script(scripts.ACT)

    async def act(game: str, version: int) -> Any:
        return await client.invoke_script(script, keys=keys_of(game), args=arguments(version))

    return act, client.close


async def worker(client: str, url: str, racers: int, seconds: float, prefix: str) -> dict[str, Any]:
    """Run one round of ``client`` and return its counts, latencies and CPU."""
    games = [f"{prefix}-{index}" for index in range(racers)]
    await setup_games(url, games)
    callers = {"store": store_caller, "redis-py": redis_py_caller, "valkey-glide": glide_caller}
    act, close = await callers[client](url)
    for game in games:  # warm up: every primary's connection opened, the script loaded
        await act(game, 0)
    latencies: list[float] = []
    count = 0
    failures = 0

    async def racer(game: str) -> None:
        nonlocal count, failures
        version = 1
        while time.monotonic() < deadline:
            started = time.perf_counter()
            answer = await act(game, version)
            latencies.append(time.perf_counter() - started)
            status = answer[0].decode() if isinstance(answer[0], bytes) else answer[0]
            if status != "ok":
                failures += 1
                break
            version = int(answer[1])
            count += 1

    cpu = time.process_time()
    deadline = time.monotonic() + seconds
    started = time.monotonic()
    await asyncio.gather(*(racer(game) for game in games))
    wall = time.monotonic() - started
    cpu = time.process_time() - cpu
    await close()
    return {
        "count": count,
        "failures": failures,
        "rate": count / wall,
        "p50_ms": 1000 * percentile(latencies, 0.5),
        "p99_ms": 1000 * percentile(latencies, 0.99),
        "cpu_us": 1e6 * cpu / max(count, 1),
    }


def run_worker(args: argparse.Namespace) -> None:
    """The ``--worker`` side: one round, its figures as one JSON line."""
    from server.main import event_loop_factory

    with asyncio.Runner(loop_factory=event_loop_factory(args.event_loop)) as runner:
        figures = runner.run(worker(args.worker, args.url, args.racers, args.seconds, args.prefix))
    print(json.dumps(figures))


# -- the parent: the cluster and the rounds ---------------------------------------------------


def one_round(client: str, url: str, args: argparse.Namespace, prefix: str, cluster: Any) -> dict[str, Any]:
    """Run one client's round in a process of its own; add the cluster's CPU per action."""
    before = sum(cluster.cpu_seconds().values())
    done = subprocess.run(
        [
            sys.executable, __file__, "--worker", client, "--url", url, "--racers", str(args.racers),
            "--seconds", str(args.seconds), "--prefix", prefix, "--event-loop", args.event_loop,
        ],
        capture_output=True,
        text=True,
        timeout=120 + args.seconds,
        cwd=ROOT,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"{client} round failed:\n{done.stderr[-3000:]}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    figures["cluster_us"] = 1e6 * (sum(cluster.cpu_seconds().values()) - before) / max(figures["count"], 1)
    return figures


def line(figures: dict[str, Any]) -> str:
    """One round's figures as a line."""
    return (
        f"{figures['rate']:8,.0f} actions/s  p50 {figures['p50_ms']:.2f} ms  p99 {figures['p99_ms']:.2f} ms  "
        f"CPU per action: client {figures['cpu_us']:.0f} us, cluster {figures['cluster_us']:.0f} us  "
        f"failures {figures['failures']:.0f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--racers", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--event-loop", default="auto", choices=("auto", "uvloop", "asyncio"))
    parser.add_argument("--worker", choices=CLIENTS, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--prefix", default="bench", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        run_worker(args)
        return

    from tests.valkey_cluster import ValkeyCluster

    clients = [c for c in CLIENTS if c != "valkey-glide" or importlib.util.find_spec("glide")]
    width = max(len(c) for c in clients)
    print(f"machine: {machine()}")
    print(
        f"{args.racers} racers, {args.seconds:.0f} s a round, {args.rounds} rounds; a cluster of 3 "
        "primaries and 3 replicas on loopback TCP (AOF, fsync every second); event loop "
        f"{args.event_loop}"
    )
    if "valkey-glide" not in clients:
        print("valkey-glide is not installed (pip install valkey-glide): its rounds are left out")
    with tempfile.TemporaryDirectory() as tmp:
        cluster = ValkeyCluster(Path(tmp) / "cluster", node_timeout_ms=5000, appendfsync="everysec")
        cluster.start()
        runs: dict[str, list[dict[str, Any]]] = {client: [] for client in clients}
        try:
            for number in range(1, args.rounds + 1):
                print(f"round {number}:")
                shift = (number - 1) % len(clients)  # each client first in turn
                order = clients[shift:] + clients[:shift]
                for client in order:
                    figures = one_round(client, cluster.url, args, f"r{number}-{client}", cluster)
                    runs[client].append(figures)
                    print(f"  {client:{width}s} {line(figures)}")
        finally:
            cluster.stop()
    print("median of the rounds:")
    for client, rounds in runs.items():
        medians = {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
        print(f"  {client:{width}s} {line(medians)}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
