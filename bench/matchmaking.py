"""Rated matchmaking benchmark: 10,000 players queued across two nodes, then a steady flow.

Prints figures; asserts nothing.

Two matchmakers, as two nodes run them (each with its own connections to one Redis, one
of them holding the lease), serve one variant's rated queue:

1. A burst: ``--queued`` players (ratings drawn around 1500, sd 300) join at once, half
   through each node. Figures: the first round's time with them all waiting (reading the
   queue, forming groups, claiming them), pairs made per second until the queue is down
   to the few left without a partner, and the wait-to-match p50/p99.
2. A steady flow: players join at ``--rate`` a second for ``--seconds``, alternating
   nodes, on top of what the burst left. Figures: pairs per second, wait-to-match
   p50/p99/max, and the longest queue seen.
3. Rating updates: the cost of rating a finished race of 2 and of 8 racers (reading the
   ratings, Glicko-2, storing each racer's rating once, the notices), wall time and this
   process's CPU per race.

Usage: python bench/matchmaking.py [--queued 10000] [--rate 200] [--seconds 20] [--races 200]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from support import machine, percentile

from server.config import Config
from server.matchmaking import REQUEUE_MEMORY_MS, Matchmaker
from server.ratings import RatingService
from server.runtime.embedded import EmbeddedRedis
from server.runtime.metrics import Metrics
from server.runtime.service import Plumbing
from server.runtime.tasks import Tasks
from server.store import Store

VARIANT = "scorpion"


class Nodes:
    """Two matchmaking nodes on one Redis, and when each player joined and was matched."""

    def __init__(self, redis_url: str, config: Config) -> None:
        self.stores = [Store(redis_url, origin=n, instance=n) for n in ("node-a", "node-b")]
        self.joined: dict[str, float] = {}
        self.waits: list[float] = []
        self.pairs = 0
        self.rounds: list[tuple[int, float, int]] = []  # (waiting, seconds, pairs) of the leader's rounds
        self.matchmakers = [self._matchmaker(store, config) for store in self.stores]

    def _matchmaker(self, store: Store, config: Config) -> Matchmaker:
        plumbing = Plumbing(store.instance, config, store, None, Metrics(), Tasks())  # type: ignore[arg-type]

        async def on_match(variant: str, players: list[str]) -> None:
            now = time.perf_counter()
            self.pairs += 1
            self.waits.extend(now - self.joined.pop(p) for p in players)

        matchmaker = Matchmaker(
            plumbing, clock=lambda: int(time.time() * 1000), on_match=on_match, variants=[VARIANT]
        )
        timed_round = matchmaker.round

        async def round_(variant: str) -> int:
            began = time.perf_counter()
            waiting = len(self.joined)
            started = await timed_round(variant)
            if store is self.stores[0]:  # the leader's rounds (it took the lease first)
                self.rounds.append((waiting, time.perf_counter() - began, started))
            return started

        matchmaker.round = round_  # type: ignore[method-assign]
        return matchmaker

    async def lead(self) -> None:
        """Let node a take the lease first, so the figures below are of its rounds."""
        assert await self.stores[0].lead_matchmaking(VARIANT, 2000) >= 0

    async def join(self, index: int, player: str, rating: float) -> None:
        store = self.stores[index % 2]
        self.joined[player] = time.perf_counter()
        await store.enqueue_rated(VARIANT, player, int(time.time() * 1000), rating, REQUEUE_MEMORY_MS)
        self.matchmakers[index % 2].poke()  # as a join does on the node it reaches

    async def close(self) -> None:
        for store in self.stores:
            await store.close()


def show_waits(label: str, waits: list[float]) -> None:
    if not waits:
        print(f"{label}: nobody matched")
        return
    print(
        f"{label}: wait-to-match p50 {percentile(waits, 0.5):.2f} s, p99 {percentile(waits, 0.99):.2f} s, "
        f"max {max(waits):.2f} s ({len(waits)} players)"
    )


async def burst(nodes: Nodes, queued: int, rng: random.Random) -> None:
    began = time.perf_counter()
    for start in range(0, queued, 500):
        await asyncio.gather(
            *(nodes.join(i, f"b{i}", rng.gauss(1500, 300)) for i in range(start, min(queued, start + 500)))
        )
    print(f"burst: {queued} players queued across two nodes in {time.perf_counter() - began:.2f} s,")
    print("  then matching starts (waits below are counted from then)")
    nodes.rounds.clear()
    nodes.waits.clear()
    await nodes.lead()
    began = time.perf_counter()
    for player in nodes.joined:  # the wait counted from when matching starts
        nodes.joined[player] = began
    tasks = [asyncio.create_task(m.run()) for m in nodes.matchmakers]
    while len(nodes.joined) > 2 and time.perf_counter() - began < 60:
        await asyncio.sleep(0.01)
    elapsed = time.perf_counter() - began
    for task in tasks:
        task.cancel()
    waiting, seconds, pairs = next(r for r in nodes.rounds if r[0] >= 2)
    print(
        f"  first round with {waiting} waiting: {pairs} pairs in {1000 * seconds:.0f} ms "
        f"({pairs / seconds:.0f} pairs/s within the round)"
    )
    print(
        f"  all {nodes.pairs} pairs in {elapsed:.2f} s ({len(nodes.rounds)} rounds; the last wait for their "
        f"windows to widen); {len(nodes.joined)} left waiting"
    )
    show_waits("  burst", nodes.waits)


async def flow(nodes: Nodes, rate: float, seconds: float, rng: random.Random) -> None:
    nodes.pairs = 0
    nodes.waits.clear()
    nodes.rounds.clear()
    tasks = [asyncio.create_task(m.run()) for m in nodes.matchmakers]
    began = time.perf_counter()
    longest = 0
    index = 0
    while (now := time.perf_counter()) - began < seconds:
        due = int((now - began) * rate)
        while index < due:
            await nodes.join(index, f"f{index}", rng.gauss(1500, 300))
            index += 1
        longest = max(longest, len(nodes.joined))
        await asyncio.sleep(0.005)
    await asyncio.sleep(2)  # the last arrivals' rounds
    elapsed = time.perf_counter() - began
    for task in tasks:
        task.cancel()
    print(f"steady flow: {index} players joined at {rate:.0f}/s for {seconds:.0f} s, alternating nodes")
    print(f"  {nodes.pairs} pairs: {nodes.pairs / elapsed:.0f} pairs/s; longest queue {longest}")
    round_ms = [1000 * s for _, s, _ in nodes.rounds]
    if round_ms:
        print(f"  round time p50 {percentile(round_ms, 0.5):.1f} ms, p99 {percentile(round_ms, 0.99):.1f} ms")
    show_waits("  flow", nodes.waits)


async def ratings(redis_url: str, races: int) -> None:
    store = Store(redis_url, origin="node-a", instance="node-a")
    config = Config()
    service = RatingService(Plumbing("node-a", config, store, None, Metrics(), Tasks()))  # type: ignore[arg-type]
    try:
        for size in (2, 8):
            walls: list[float] = []
            cpu_began = time.process_time()
            for race in range(races):
                players = [f"r{size}-{race % 50}-{i}" for i in range(size)]
                game: Any = SimpleNamespace(game_id=f"G{size}x{race}", variant=VARIANT)
                standings = [
                    {
                        "player": p,
                        "name": p,
                        "rank": rank,
                        "status": "finished" if rank == 1 else "stuck",
                        "score": 1700 if rank == 1 else 100 * (size - rank),
                    }
                    for rank, p in enumerate(players, start=1)
                ]
                began = time.perf_counter()
                await service.rate(game, standings)
                walls.append(time.perf_counter() - began)
            cpu = (time.process_time() - cpu_began) / races
            print(
                f"rating a race of {size}: wall p50 {1000 * percentile(walls, 0.5):.2f} ms, "
                f"p99 {1000 * percentile(walls, 0.99):.2f} ms; "
                f"this process's CPU {1000 * cpu:.2f} ms per race ({races} races)"
            )
    finally:
        await store.close()


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--queued", type=int, default=10_000)
    parser.add_argument("--rate", type=float, default=200.0)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--races", type=int, default=200)
    args = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        redis = EmbeddedRedis(Path(tmp) / "redis")
        redis_url = await redis.start()
        try:
            print(f"machine: {machine()}")
            nodes = Nodes(redis_url, Config())
            try:
                await burst(nodes, args.queued, rng)
                await flow(nodes, args.rate, args.seconds, rng)
            finally:
                await nodes.close()
            await ratings(redis_url, args.races)
        finally:
            await redis.stop()


if __name__ == "__main__":
    asyncio.run(main())
