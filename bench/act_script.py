"""Redis's CPU per call of the act script, against the floor's one-line script.

Prints figures; asserts nothing. One Redis (the embedded server, with and without its
append-only file), 40 racers committing actions back to back through the move path's
pipelined connection, each on a game of its own, with:

* ``act``: the real act script and arguments of a move (a 0.6 KB event with the racer's
  view, the summary, the status);
* ``act, 60-byte event``: the same with a tiny event (what the event's size costs);
* ``act, no summary``: the same with an empty summary (what storing it costs);
* ``least``: a script doing the least a commit must (read the game's version, write the
  next, append the event), with the same keys and arguments;
* ``floor``: the race benchmark's floor script, one ``INCR``.

Each variant runs ``--seconds`` a round, the variants taking turns for ``--rounds``
rounds; Redis's CPU per call is the figure (the medians are printed last).

Usage: python bench/act_script.py [--racers 40] [--seconds 3] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cluster_client import keys_of  # noqa: E402
from support import cpu_seconds, machine  # noqa: E402

from protocol.game import Board, summary_data, view_data  # noqa: E402
from server.embedded import EmbeddedRedis  # noqa: E402
from server.store import scripts  # noqa: E402
from server.store.connection import _Pipeline  # noqa: E402

FLOOR = "return redis.call('INCR', KEYS[1])"
LEAST = """
local ver = tonumber(redis.call('HGET', KEYS[1], 'ver')) + 1
redis.call('HSET', KEYS[1], 'ver', ver)
redis.call('RPUSH', KEYS[4], ARGV[5])
return {'ok', tostring(ver)}
"""
"""The least a commit does: read the game's version, write the next, append the event."""


def a_move() -> tuple[bytes, bytes]:
    """The event and summary of a real move: Scorpion deal 1 after its first legal move."""
    board = Board.new("scorpion", 1)
    board.push(board.legal_moves()[0])
    summary = summary_data(board, 3, board.status())
    record = {
        "type": "move", "player": "P1", "action": "move", "move": "7D:5-1", "view": view_data(board),
        "summary": summary, "status": "playing", "origin": "n1/12", "at": 1733000000000,
    }  # fmt: skip
    return orjson.dumps(record), orjson.dumps(summary)


def variants() -> dict[str, tuple[str, Callable[[int], list[Any]] | None]]:
    """Each variant's script and its arguments at a version (``None``: the floor's)."""
    event, summary = a_move()

    def act(event: bytes, summary: bytes) -> Callable[[int], list[Any]]:
        return lambda v: [v, v, "push", "7D:5-1", event, "n1", summary, "playing", ""]

    return {
        "act": (scripts.ACT, act(event, summary)),
        "act, 60-byte event": (scripts.ACT, act(b"x" * 60, summary)),
        "act, no summary": (scripts.ACT, act(event, b"")),
        "least": (LEAST, act(event, summary)),
        "floor": (FLOOR, None),
    }


async def one_round(
    url: str, pid: int, source: str, arguments: Callable[[int], list[Any]] | None, racers: int, seconds: float
) -> tuple[float, float]:
    """Run one variant for ``seconds``; return calls/s and Redis's CPU per call in µs."""
    pipeline = _Pipeline(url, 2.0)
    games = [f"{time.time_ns()}-{index}" for index in range(racers)]
    for game in games:
        meta, racer, _moves, _log, nodes = keys_of(game)
        await pipeline.call("HSET", meta, "state", "racing", "ver", 0)
        await pipeline.call("HSET", racer, "changed", 0, "status", "playing")
        await pipeline.call("SADD", nodes, "n1")  # followed by this node alone: not published
    count = 0

    async def racer(game: str) -> None:
        nonlocal count
        version = 0
        while time.monotonic() < deadline:
            if arguments is None:
                await pipeline.script(source, ["{g:" + game + "}:count"], [])
            else:
                answer = await pipeline.script(source, keys_of(game), arguments(version))
                if answer[0] != "ok":
                    raise RuntimeError(f"the act script answered {answer}")
                version = int(answer[1])
            count += 1

    before = cpu_seconds(pid)
    deadline = time.monotonic() + seconds
    await asyncio.gather(*(racer(game) for game in games))
    used = cpu_seconds(pid) - before
    await pipeline.close()
    return count / seconds, 1e6 * used / max(count, 1)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--racers", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    chosen = variants()
    with tempfile.TemporaryDirectory() as tmp:
        for appendonly in (True, False):
            redis = EmbeddedRedis(Path(tmp) / f"redis-{appendonly}", appendonly=appendonly)
            url = await redis.start()
            assert redis.process is not None
            print(f"append-only file: {'on, fsync every second' if appendonly else 'off'}")
            cost: dict[str, list[float]] = {name: [] for name in chosen}
            try:
                for number in range(1, args.rounds + 1):
                    for name, (source, arguments) in chosen.items():
                        rate, us = await one_round(
                            url, redis.process.pid, source, arguments, args.racers, args.seconds
                        )
                        cost[name].append(us)
                        print(f"  round {number} {name:20s} {rate:9,.0f} calls/s   Redis {us:5.1f} us a call")
            finally:
                await redis.stop()
            for name, values in cost.items():
                print(f"  median {name:20s} Redis {statistics.median(values):5.1f} us a call")


if __name__ == "__main__":
    asyncio.run(main())
