"""Shared pieces of the benchmarks: a Redis-compatible server, server processes, a client.

Benchmarks print figures and assert nothing (the machines are shared and noisy).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import random  # noqa: E402

from protocol.codec import MSGPACK, decode_dict, encode  # noqa: E402
from protocol.game import Board, Move  # noqa: E402
from protocol.message import from_dict  # noqa: E402

__all__ = [
    "ROOT",
    "BenchClient",
    "choose_move",
    "cpu_seconds",
    "machine",
    "percentile",
    "rss_kib",
    "start_server",
    "stop_server",
]


def choose_move(board: Board, rng: random.Random, *, deal: bool = True) -> Move | None:
    """Pick a random legal move that keeps the game going, or ``None`` (then undo)."""
    moves = [m for m in board.legal_moves() if deal or not m.is_deal]
    rng.shuffle(moves)
    for move in moves:
        board.push(move)
        alive = board.status().value == "in_play"
        board.pop()
        if alive:
            return move
    return None


def percentile(values: list[float], fraction: float) -> float:
    """Return the value below which ``fraction`` of ``values`` lie."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def rss_kib(pid: int) -> int:
    """Return the resident memory of a process in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def cpu_seconds(pid: int) -> float:
    """Return the CPU time (user + system) a process has used so far, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine() -> str:
    """Describe the machine and its load, for the record next to the figures."""
    model = "unknown CPU"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"{os.cpu_count()} cores ({model}), load average {load}"


def start_server(redis_url: str, **settings: Any) -> tuple[subprocess.Popen[str], int]:
    """Start a ``scorpion-server`` process on a free loopback port; return it and the port."""
    env = {**os.environ, "SCORPION_REDIS_URL": redis_url, "SCORPION_LOG_LEVEL": "warning"}
    env.update({f"SCORPION_{k.upper()}": str(v) for k, v in settings.items()})
    command = [sys.executable, "-m", "server.main", "--port", "0"]
    if os.environ.get("BENCH_PROFILE"):  # profile the server: BENCH_PROFILE=/tmp/server.prof
        command[1:1] = ["-m", "cProfile", "-o", os.environ["BENCH_PROFILE"]]
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    match = re.search(r":(\d+)/", process.stdout.readline())
    if match is None:
        process.kill()
        raise RuntimeError("the server did not start")
    return process, int(match.group(1))


def stop_server(process: subprocess.Popen[str]) -> None:
    """Stop a server process gracefully."""
    process.send_signal(signal.SIGINT)
    try:
        process.wait(20)
    except subprocess.TimeoutExpired:
        process.kill()


class BenchClient:
    """A minimal msgpack protocol client: requests by ref, other messages by type."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.ref = 0

    async def request(self, message: dict[str, Any]) -> dict[str, Any]:
        self.ref += 1
        ref = self.ref
        await self.ws.send(encode(from_dict({**message, "ref": ref}), MSGPACK))
        while True:
            data = decode_dict(await self.ws.recv(), MSGPACK, limit=1 << 22)
            if data.get("ref") == ref:
                return data

    async def expect(self, kind: str) -> dict[str, Any]:
        while True:
            data = decode_dict(await self.ws.recv(), MSGPACK, limit=1 << 22)
            if data["type"] == kind:
                return data
