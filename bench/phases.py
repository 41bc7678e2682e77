"""Where the race server's CPU goes per move, phase by phase, from a profile of a bench run.

Profile the server while ``bench/race.py`` drives it, then read the profile::

    BENCH_PROFILE=/tmp/server.prof python bench/race.py --rounds 1 --idle 0 --seconds 6
    python bench/phases.py /tmp/server.prof

Each function's own time (cProfile's ``tottime``) is put in one phase by the module it
belongs to; time spent waiting in ``epoll`` is left out. Under the profiler the server runs
slower than without it, so the figures are read as shares: multiply a share by the CPU per
move that ``bench/race.py`` measures unprofiled. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import collections
import pstats
from collections.abc import Callable

WAITING = "<method 'poll' of 'select.epoll' objects>"

PHASES: list[tuple[str, Callable[[str, str], bool]]] = [
    ("frame read: socket reads", lambda f, n: "recv" in n and "socket" in n),
    ("answer and progress: socket writes", lambda f, n: "send" in n and "socket" in n),
    ("websocket framing", lambda f, n: "websockets" in f),
    ("event loop (asyncio or uvloop)", lambda f, n: "asyncio" in f or "selectors.py" in f or "uvloop" in f),
    ("decode, validate, encode (codec, messages)", lambda f, n: "protocol/wire" in f or "msgpack" in f),
    ("engine: legality, move, views", lambda f, n: "protocol/game" in f),
    ("Lua commit: Redis client side", lambda f, n: "server/store" in f or "hiredis" in n or "redis" in f),
    ("rival's progress and spectators", lambda f, n: "server/session.py" in f or "server/game/feed.py" in f),
    ("move handling (race, handlers, app)", lambda f, n: "server/" in f),
]


def phase_of(filename: str, name: str) -> str:
    for phase, belongs in PHASES:
        if belongs(filename, name):
            return phase
    return "other (builtins called from all of the above)"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("profile", help="a cProfile output file of the server (BENCH_PROFILE)")
    args = parser.parse_args()
    stats = pstats.Stats(args.profile).stats  # type: ignore[attr-defined]
    moves = sum(
        calls[1] for (f, _, n), calls in stats.items() if n == "act" and f.endswith("server/game/race.py")
    )
    spent: collections.Counter[str] = collections.Counter()
    for (filename, _, name), (_, _, own, _, _) in stats.items():
        if name != WAITING:
            spent[phase_of(filename, name)] += own
    busy = sum(spent.values())
    print(f"{moves} moves; {1e6 * busy / max(moves, 1):.0f} us of CPU per move under the profiler")
    print(f"{'phase':46s} {'share':>6s} {'us/move (profiled)':>19s}")
    for phase, seconds in spent.most_common():
        print(f"{phase:46s} {100 * seconds / busy:5.1f}% {1e6 * seconds / max(moves, 1):12.1f}")


if __name__ == "__main__":
    main()
