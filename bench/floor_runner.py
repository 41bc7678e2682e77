"""Run the race benchmark's floor as a command (``bench/race.py --floor-command``).

A floor is any program that takes the Redis URL as its last argument, prints its
``ws://`` URL as the first line of its standard output, answers the benchmark's msgpack
move requests (one Redis round trip each) until its standard input closes, and then
exits. ``bench/floor.py`` (the default, run with this Python) and ``bench/floor.js``
(Node: ``cd bench && npm install`` first) are two. The command is split as a shell would
(``shlex``), without a shell, and run from the repository's root.
"""

from __future__ import annotations

import contextlib
import shlex
import subprocess
import sys
import threading
from dataclasses import dataclass

from support import ROOT, descendants_of, stop_tree

DEFAULT_FLOOR_COMMAND = shlex.join([sys.executable, "bench/floor.py"])
"""The Python floor, run through the same path as any other floor command."""

START_TIMEOUT = 60.0
"""Seconds a floor has to print its URL (Node's and Python's start in well under one)."""


class FloorError(RuntimeError):
    """The floor command did not start: it exited, or printed something else than its URL."""


@dataclass
class Floor:
    """A running floor: its process (the command's own; ``pid`` for the CPU counters) and URL."""

    command: str
    process: subprocess.Popen[str]
    url: str
    stopped: bool = False

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self, timeout: float = 10.0) -> None:
        """Close the floor's standard input (its signal to exit), wait for it, and kill it,
        and any process it started that outlives it, if it does not exit in time. Once only."""
        if self.stopped:
            return
        self.stopped = True
        descendants = descendants_of(self.process.pid)
        if self.process.stdin is not None and not self.process.stdin.closed:
            with contextlib.suppress(BrokenPipeError):
                self.process.stdin.close()
        stop_tree(self.process, descendants, timeout)


def _forward(stream: object, prefix: str) -> None:
    """Copy what a floor prints after its URL to our standard error (it must not fill the pipe)."""
    for line in stream:  # type: ignore[attr-defined]
        print(f"{prefix}{line.rstrip()}", file=sys.stderr, flush=True)


def start_floor(command: str, redis_url: str, timeout: float = START_TIMEOUT) -> Floor:
    """Start ``command`` with ``redis_url`` as its last argument; return it once it has
    printed its ``ws://`` URL. Raise ``FloorError`` if it exits first, prints another first
    line, or is silent for ``timeout`` seconds."""
    argv = [*shlex.split(command), redis_url]
    try:
        process = subprocess.Popen(argv, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    except OSError as exc:
        raise FloorError(f"the floor command {command!r} could not be run: {exc}") from exc
    assert process.stdout is not None
    first: list[str] = []
    reader = threading.Thread(target=lambda: first.append(process.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(timeout)
    line = first[0].strip() if first else ""
    if not line.startswith("ws://"):
        floor = Floor(command, process, "")
        floor.stop(timeout=2)
        if not first:
            why = f"printed nothing in {timeout:.0f} s"
        elif not line:
            why = f"exited (code {process.returncode}) before printing its ws:// URL"
        else:
            why = f"printed {line[:200]!r} where its ws:// URL was expected"
        raise FloorError(f"the floor command {command!r} {why}")
    threading.Thread(target=_forward, args=(process.stdout, "floor: "), daemon=True).start()
    return Floor(command, process, line)
