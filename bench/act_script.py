"""Redis's CPU per action of the act script, against the floor's one-line script.

Prints figures; asserts nothing. One Redis (the embedded server, with and without its
append-only file), 40 racers committing actions back to back through the move path's
pipelined connection, each on a game of its own, with:

* ``act``: the real act script and arguments of a move (a 0.6 KB event with the racer's
  view, the summary, the status);
* ``act, 60-byte event``: the same with a tiny event (what the event's size costs);
* ``act, no summary``: the same with an empty summary (what storing it costs);
* ``one hash``: the act script's work with the racer's fields kept in the game's hash
  (one ``HMGET`` and one ``HSET`` where the act script has two of each) and one
  ``SRANDMEMBER`` for who follows the game (what another key layout would save);
* ``one hash, no move list``: the same without appending the move to the racer's list;
* ``act, 10 a call``: ten racers' actions committed by one script call (the act script's
  body run for each in turn: what committing a loop turn's actions together would save);
* ``least``: a script doing the least a commit must (read the game's version, write the
  next, append the event), with the same keys and arguments;
* ``floor``: the race benchmark's floor script, one ``INCR``.

Each variant runs ``--seconds`` a round, the variants taking turns for ``--rounds``
rounds; Redis's CPU per action is the figure, and the part of it spent inside the script
call (``INFO commandstats``: the rest is reading the requests, writing the replies and
the append-only file). The medians are printed last.

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
from server.runtime.embedded import EmbeddedRedis  # noqa: E402
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

ONE_HASH = """
local m = redis.call('HMGET', KEYS[1], 'state', 'ver', ARGV[10] .. 'changed', ARGV[10] .. 'status')
if m[1] ~= 'racing' then return {'over', m[1] or ''} end
local changed = tonumber(m[3] or '-1')
if changed ~= tonumber(ARGV[2]) then return {'conflict', tostring(changed)} end
if m[4] ~= 'playing' then return {'done', m[4] or ''} end
local ver = tonumber(m[2]) + 1
redis.call('HSET', KEYS[1], 'ver', ver, ARGV[10] .. 'changed', ver, ARGV[10] .. 'summary', ARGV[7],
  ARGV[10] .. 'status', ARGV[8])
if ARGV[3] == 'push' then redis.call('RPUSH', KEYS[3], ARGV[4]) end
redis.call('RPUSH', KEYS[4], ARGV[5])
local followers = redis.call('SRANDMEMBER', KEYS[5], 2)
if #followers ~= 1 or followers[1] ~= ARGV[6] then
  redis.call('SPUBLISH', string.sub(KEYS[1], 1, -5) .. 'ev', ver .. '|' .. ARGV[6] .. '|' .. ARGV[5])
end
return {'ok', tostring(ver)}
"""
"""The act script's checks and writes with the racer's fields in the game's hash (ARGV[10]
is the racer's field prefix)."""

BATCH = 10
MANY = (
    "local function act(KEYS, ARGV)\n"
    + scripts.ACT.strip()
    + """
end
local answers = {}
for i = 0, tonumber(ARGV[1]) - 1 do
  local keys, args = {}, {}
  for j = 1, 5 do keys[j] = KEYS[i * 5 + j] end
  for j = 1, 9 do args[j] = ARGV[1 + i * 9 + j] end
  answers[i + 1] = act(keys, args)
end
return answers
"""
)
"""The act script's body run for each of ARGV[1] actions, each with its 5 keys and 9 arguments."""


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

    def act(event: bytes, summary: bytes, op: str = "push", *more: str) -> Callable[[int], list[Any]]:
        return lambda v: [v, v, op, "7D:5-1", event, "n1", summary, "playing", "", *more]

    return {
        "act": (scripts.ACT, act(event, summary)),
        "act, 60-byte event": (scripts.ACT, act(b"x" * 60, summary)),
        "act, no summary": (scripts.ACT, act(event, b"")),
        "one hash": (ONE_HASH, act(event, summary, "push", "P1.")),
        "one hash, no move list": (ONE_HASH, act(event, summary, "none", "P1.")),
        f"act, {BATCH} a call": (MANY, act(event, summary)),
        "least": (LEAST, act(event, summary)),
        "floor": (FLOOR, None),
    }


async def one_round(
    url: str, pid: int, source: str, arguments: Callable[[int], list[Any]] | None, racers: int, seconds: float
) -> tuple[float, float]:
    """Run one variant for ``seconds``; return actions/s, Redis's CPU per action and the
    part of it inside the script call, in µs."""
    pipeline = _Pipeline(url, 2.0)
    games = [f"{time.time_ns()}-{index}" for index in range(racers)]
    for game in games:
        meta, racer, _moves, _log, nodes = keys_of(game)
        racer_fields = ("P1.changed", 0, "P1.status", "playing")  # for the one-hash variants
        await pipeline.call("HSET", meta, "state", "racing", "ver", 0, *racer_fields)
        await pipeline.call("HSET", racer, "changed", 0, "status", "playing")
        await pipeline.call("SADD", nodes, "n1")  # followed by this node alone: not published
    await pipeline.call("CONFIG", "RESETSTAT")
    count = 0

    def checked(answer: list[Any]) -> int:
        if answer[0] != "ok":
            raise RuntimeError(f"the script answered {answer}")
        return int(answer[1])

    async def racer(game: str) -> None:
        nonlocal count
        version = 0
        while time.monotonic() < deadline:
            if arguments is None:
                await pipeline.script(source, ["{g:" + game + "}:count"], [])
            else:
                version = checked(await pipeline.script(source, keys_of(game), arguments(version)))
            count += 1

    async def batch(group: list[str]) -> None:  # MANY: one call commits an action of each
        nonlocal count
        assert arguments is not None
        versions = [0] * len(group)
        while time.monotonic() < deadline:
            keys = [key for game in group for key in keys_of(game)]
            args = [len(group)] + [a for v in versions for a in arguments(v)]
            versions = [checked(answer) for answer in await pipeline.script(source, keys, args)]
            count += len(group)

    before = cpu_seconds(pid)
    deadline = time.monotonic() + seconds
    if source is MANY:
        await asyncio.gather(*(batch(games[i : i + BATCH]) for i in range(0, racers, BATCH)))
    else:
        await asyncio.gather(*(racer(game) for game in games))
    used = cpu_seconds(pid) - before
    stats = await pipeline.call("INFO", "commandstats")
    await pipeline.close()
    text = stats.decode() if isinstance(stats, bytes) else stats
    inside = sum(
        int(line.split("usec=", 1)[1].split(",", 1)[0])
        for line in text.splitlines()
        if line.startswith("cmdstat_evalsha:")
    )
    return count / seconds, 1e6 * used / max(count, 1), inside / max(count, 1)


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
            cost: dict[str, list[tuple[float, float]]] = {name: [] for name in chosen}
            try:
                for number in range(1, args.rounds + 1):
                    for name, (source, arguments) in chosen.items():
                        rate, us, inside = await one_round(
                            url, redis.process.pid, source, arguments, args.racers, args.seconds
                        )
                        cost[name].append((us, inside))
                        print(
                            f"  round {number} {name:24s} {rate:9,.0f} actions/s   "
                            f"Redis {us:5.1f} us an action, {inside:5.1f} inside the script call"
                        )
            finally:
                await redis.stop()
            for name, values in cost.items():
                print(
                    f"  median {name:24s} Redis {statistics.median(v[0] for v in values):5.1f} us an action, "
                    f"{statistics.median(v[1] for v in values):5.1f} inside the script call"
                )


if __name__ == "__main__":
    asyncio.run(main())
