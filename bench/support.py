"""Shared pieces of the benchmarks: a Redis-compatible server, server processes, a client.

Benchmarks print figures and assert nothing (the machines are shared and noisy).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import re
import signal
import subprocess
import sys
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import random  # noqa: E402

from protocol.game import Board, Move  # noqa: E402
from protocol.wire.codec import MSGPACK, decode_dict, encode  # noqa: E402
from protocol.wire.message import from_dict  # noqa: E402

__all__ = [
    "ROOT",
    "BenchClient",
    "LightSocket",
    "choose_move",
    "cpu_seconds",
    "descendants_of",
    "light_connect",
    "machine",
    "percentile",
    "rss_kib",
    "start_server",
    "stop_server",
    "stop_tree",
    "tree_cpu_seconds",
    "tree_pids",
    "tree_rss_kib",
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


def _stat(pid: int) -> list[str] | None:
    """Return the fields of ``/proc/<pid>/stat`` after the command's name (state first), or
    ``None`` if the process is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None


def tree_pids(pid: int) -> list[int]:
    """Return ``pid`` and every live process descended from it (children, theirs, ...)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields is not None:
                children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, queue = [pid], [pid]
    while queue:
        for child in children.get(queue.pop(), ()):
            found.append(child)
            queue.append(child)
    return found


def tree_cpu_seconds(pid: int) -> float:
    """Return the CPU time (user + system) a process and all its descendants have used so
    far, in seconds: each live process's own time plus what it has collected from children
    that ended (so a worker that exits between two readings still counts, in its parent's)."""
    ticks = 0
    for member in tree_pids(pid):
        fields = _stat(member)
        if fields is not None:
            ticks += sum(int(field) for field in fields[11:15])  # utime stime cutime cstime
    return ticks / os.sysconf("SC_CLK_TCK")


def tree_rss_kib(pid: int) -> int:
    """Return the resident memory of a process and its descendants, summed, in KiB."""
    total = 0
    for member in tree_pids(pid):
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            total += rss_kib(member)
    return total


def stop_tree(process: subprocess.Popen[str], descendants: list[tuple[int, str]], timeout: float) -> None:
    """Wait up to ``timeout`` seconds for ``process`` (already asked to stop) to exit, kill it
    if it has not, then kill whichever of its ``descendants`` (pid and start time, taken
    before the stop) outlived it."""
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(5)
    for pid, started in descendants:
        fields = _stat(pid)
        if fields is not None and fields[19] == started:  # the same process, not a reused pid
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def descendants_of(pid: int) -> list[tuple[int, str]]:
    """Return the live descendants of ``pid`` with their start times (for ``stop_tree``)."""
    found = []
    for member in tree_pids(pid)[1:]:
        fields = _stat(member)
        if fields is not None:
            found.append((member, fields[19]))
    return found


def machine() -> str:
    """Describe the machine and its load, for the record next to the figures."""
    model = "unknown CPU"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"{os.cpu_count()} cores ({model}), load average {load}"


def start_server(
    redis_url: str, *, args: Sequence[str] = (), **settings: Any
) -> tuple[subprocess.Popen[str], int]:
    """Start a ``scorpion-server`` process on a free loopback port, with ``args`` added to
    its command line (``--workers 2``); return it and the port."""
    env = {**os.environ, "SCORPION_REDIS_URL": redis_url, "SCORPION_LOG_LEVEL": "warning"}
    # Every simulated player comes from loopback: the per-address limits would stop them.
    env.update({"SCORPION_GUESTS_PER_MINUTE": "1000000", "SCORPION_ROOM_CODES_PER_MINUTE": "1000000"})
    env.update({"SCORPION_ACCOUNTS_PER_DAY": "1000000", "SCORPION_LOGIN_FAILURES": "1000000"})
    env.update({"SCORPION_LOGINS_PER_MINUTE": "1000000"})
    env.update({f"SCORPION_{k.upper()}": str(v) for k, v in settings.items()})
    command = [sys.executable, "-m", "server.main", "--port", "0", *args]
    if os.environ.get("BENCH_PROFILE"):  # profile the server: BENCH_PROFILE=/tmp/server.prof
        command[1:1] = ["-m", "cProfile", "-o", os.environ["BENCH_PROFILE"]]
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    line = process.stdout.readline()
    match = re.search(r"ws://[^\s/]*:(\d+)/", line)
    if match is None:
        process.kill()
        process.wait(5)
        raise RuntimeError(f"the server did not start ({' '.join(command[1:])}): {line.strip()!r}")
    return process, int(match.group(1))


def stop_server(process: subprocess.Popen[str]) -> None:
    """Stop a server process gracefully (SIGINT), and any of its processes that outlive it."""
    descendants = descendants_of(process.pid)
    process.send_signal(signal.SIGINT)
    stop_tree(process, descendants, 20)


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


class LightSocket(asyncio.Protocol):
    """A websocket client that costs its machine little: raw frames, no library.

    The benchmarks' clients share the machine's two cores with the servers they measure,
    where real players and spectators would use their own devices; a full websocket client
    per connection can make the clients' process the machine's biggest CPU user and measure
    that, not the server. This one does the opening handshake, answers pings, and hands
    over each binary frame's payload, all in one callback per socket read. Its own frames
    use a zero mask, which the protocol allows. Subclasses override ``opened`` and
    ``on_frame``; by default frames are queued for ``recv``.
    """

    def __init__(self, host: str, port: int, subprotocol: str | None = MSGPACK) -> None:
        self.host, self.port, self.subprotocol = host, port, subprotocol
        self.buffer = bytearray()
        self.is_open = False
        self.transport: Any = None
        self.frames: deque[bytes] = deque()
        self.waiter: asyncio.Future[None] | None = None
        self.handshake: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        key = base64.b64encode(os.urandom(16)).decode()
        protocol = f"Sec-WebSocket-Protocol: {self.subprotocol}\r\n" if self.subprotocol else ""
        transport.write(
            (
                f"GET / HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                f"{protocol}\r\n"
            ).encode()
        )

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.handshake.done():
            self.handshake.set_exception(ConnectionError("closed before the handshake"))
        self._wake()

    def write_frame(self, payload: bytes, opcode: int = 0x2) -> None:
        """Write one masked (zero mask) frame."""
        length = len(payload)
        if length < 126:
            header = bytes((0x80 | opcode, 0x80 | length))
        elif length < 65536:
            header = bytes((0x80 | opcode, 0x80 | 126)) + length.to_bytes(2, "big")
        else:
            header = bytes((0x80 | opcode, 0x80 | 127)) + length.to_bytes(8, "big")
        self.transport.write(header + b"\0\0\0\0" + payload)

    async def send(self, payload: bytes) -> None:
        """Send one binary frame (awaitable, like a websockets connection's ``send``)."""
        self.write_frame(payload)

    async def recv(self) -> bytes:
        """Return the next binary frame's payload."""
        while not self.frames:
            if self.transport.is_closing():
                raise ConnectionError("the connection is closed")
            self.waiter = asyncio.get_running_loop().create_future()
            await self.waiter
        return self.frames.popleft()

    async def close(self) -> None:
        if not self.transport.is_closing():
            self.write_frame(b"\x03\xe8", 0x8)
            self.transport.close()

    def opened(self) -> None:
        """Called once the handshake is done."""

    def on_frame(self, payload: bytes) -> None:
        """Called with each binary frame's payload."""
        self.frames.append(payload)
        self._wake()

    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        if not self.is_open:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            if not buffer.startswith(b"HTTP/1.1 101"):
                error = RuntimeError(f"handshake refused: {bytes(buffer[:80])!r}")
                self.handshake.set_exception(error)
                self.transport.close()
                return
            del buffer[: end + 4]
            self.is_open = True
            self.handshake.set_result(None)
            self.opened()
        while len(buffer) >= 2:
            length, offset = buffer[1] & 0x7F, 2
            if length == 126:
                if len(buffer) < 4:
                    return
                length, offset = int.from_bytes(buffer[2:4], "big"), 4
            elif length == 127:
                if len(buffer) < 10:
                    return
                length, offset = int.from_bytes(buffer[2:10], "big"), 10
            if len(buffer) < offset + length:
                return
            opcode = buffer[0] & 0x0F
            payload = bytes(buffer[offset : offset + length])
            del buffer[: offset + length]
            if opcode == 0x2:
                self.on_frame(payload)
            elif opcode == 0x9:
                self.write_frame(payload, 0xA)  # pong
            elif opcode == 0x8:
                self.transport.close()
                return


async def light_connect(url: str, factory: Any = LightSocket, **kwargs: Any) -> Any:
    """Open a ``LightSocket`` (or a subclass, made by ``factory(host, port, **kwargs)``) to
    ``ws://host:port/`` and wait for its handshake."""
    host, port = url.split("//")[1].rstrip("/").split(":")
    _transport, protocol = await asyncio.get_running_loop().create_connection(
        lambda: factory(host, int(port), **kwargs), host, int(port)
    )
    await protocol.handshake
    return protocol
