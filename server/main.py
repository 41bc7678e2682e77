"""``scorpion-server``: run one node until SIGTERM or SIGINT, with structured logs.

With ``--workers N`` (N above 1) this process runs no node itself: it supervises N node
processes sharing its port (``server/runtime/workers.py``).
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import signal
import sys
import time
from collections.abc import Callable, Sequence

from .app import ScorpionServer
from .config import Config, load_config
from .runtime.web import browser_address
from .runtime.workers import supervise

__all__ = [
    "YOUNG_GC_THRESHOLD",
    "JsonFormatter",
    "event_loop_factory",
    "main",
    "run",
    "tune_gc",
]

_STANDARD = set(vars(logging.makeLogRecord({})))


class JsonFormatter(logging.Formatter):
    """Format log records as one JSON object a line, extra fields included."""

    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, object] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                data[key] = value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)
        if record.exc_info:
            data["exc"] = self.formatException(record.exc_info)
        return json.dumps(data)


def _setup_logging(config: Config) -> None:
    handler = logging.StreamHandler(sys.stderr)
    if config.log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(config.log_level.upper())
    logging.getLogger("websockets").setLevel(logging.WARNING)


YOUNG_GC_THRESHOLD = 50_000
"""Allocations of container objects between two collections of the youngest generation
(Python's default is 700). A move allocates some hundred short-lived dicts and lists that
reference counting frees; collecting every 700 allocations cost about 3 us a move (2-3% of
the server's CPU, bench/race.py) for nothing found."""


def tune_gc() -> None:
    """Set the cyclic collector for a long-running server, once it has started: what exists
    by then (modules, configuration, the rules' tables) lives as long as the process and is
    moved out of the collector's sight (``gc.freeze``), and young objects are collected
    every ``YOUNG_GC_THRESHOLD`` allocations rather than every 700."""
    gc.collect()
    gc.freeze()
    _young, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_GC_THRESHOLD, middle, old)


async def run(config: Config) -> None:
    """Start a node, print where it listens, serve until a stop signal, shut down gracefully."""
    # The stop signals are taken before the node says it listens: whoever starts it may stop
    # it the moment it has (a service manager, a test), and is owed a graceful shutdown.
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    server = ScorpionServer(config)
    await server.start()
    tune_gc()
    print(f"scorpion-server listening on ws://{config.host}:{server.port}/ (node {server.name})", flush=True)
    address = browser_address(config.host, server.port)
    print(f"scorpion-server: open {address} to play in a browser", flush=True)
    await stop.wait()
    await server.shutdown()


def event_loop_factory(choice: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """Return how to make the event loop ``choice`` names (``None``: asyncio's own).

    ``auto`` takes uvloop where it is installed: the same asyncio API over libuv, whose
    transports and scheduling cost less CPU per message (decision 8). ``uvloop`` insists
    on it (ImportError without it).
    """
    if choice == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        if choice == "uvloop":
            raise
        return None
    return uvloop.new_event_loop


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``scorpion-server`` and return its exit code."""
    config = load_config(argv)
    _setup_logging(config)
    try:
        loop_factory = event_loop_factory(config.event_loop)
    except ImportError:
        print("scorpion-server: event-loop uvloop needs the uvloop package", file=sys.stderr)
        return 1
    if config.workers > 1:
        return supervise(config)
    try:
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            runner.run(run(config))
    except RuntimeError as exc:
        print(f"scorpion-server: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
