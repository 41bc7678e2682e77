"""Shared fixtures: a real Redis-compatible server started by the suite itself."""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.runtime.embedded import find_server_binary
from server.runtime.lifeline import die_with_parent


def stop_process(process: subprocess.Popen[Any], sig: int = signal.SIGTERM, wait: float = 10) -> None:
    """Stop a process the suite started: ``sig``, then SIGKILL if it has not exited in ``wait`` s."""
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(wait)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def child_pids(parent: int) -> list[int]:
    """The processes whose parent is ``parent`` (read from Linux's /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:  # ended meanwhile
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
                found.append(int(entry.name))
    return found


def is_running(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended (a zombie has ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


class RedisServer:
    """A private valkey/redis server on a unix socket, for one test session."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.socket = directory / "redis.sock"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"unix://{self.socket}"

    def arguments(self) -> list[str]:
        """Return where and how this server listens."""
        return ["--port", "0", "--unixsocket", str(self.socket), "--unixsocketperm", "700"]

    def persistence(self) -> list[str]:
        """Return how this server keeps its data (by default it does not)."""
        return ["--save", "", "--appendonly", "no"]

    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [
                find_server_binary(),
                *self.arguments(),
                "--dir",
                str(self.directory),
                *self.persistence(),
                "--loglevel",
                "warning",
                "--logfile",
                str(self.directory / "redis.log"),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=die_with_parent,
        )
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self._ping():
                return
            if self.process.poll() is not None:
                raise RuntimeError((self.directory / "redis.log").read_text(errors="replace"))
            time.sleep(0.05)
        raise RuntimeError("the test Redis server did not start")

    def _ping(self) -> bool:
        import socket

        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(1)
                sock.connect(str(self.socket))
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def flush(self) -> None:
        import socket

        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(str(self.socket))
            sock.sendall(b"FLUSHALL\r\n")
            sock.recv(16)

    def stop(self) -> None:
        if self.process is not None:
            stop_process(self.process)


def _serve(server: RedisServer) -> Iterator[Any]:
    server.start()
    yield server
    server.stop()
    shutil.rmtree(server.directory, ignore_errors=True)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """Start one real Redis-compatible server for the session."""
    yield from _serve(RedisServer(tmp_path_factory.mktemp("redis")))


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """Return the URL of an empty Redis database for one test."""
    redis_server.flush()
    return redis_server.url


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A Redis of the test's own, to stop, pause and start again."""
    redis = RedisServer(tmp_path / "r")
    redis.start()
    try:
        yield redis
    finally:
        if redis.process is not None and redis.process.poll() is None:
            redis.process.send_signal(signal.SIGCONT)
        redis.stop()


class ClusterServer(RedisServer):
    """A one-node Redis Cluster (cluster mode on, every slot served), on a loopback port.

    Valkey refuses, in cluster mode, a script whose declared keys lie in several slots
    and a MULTI transaction over several slots: running the server against it shows that
    every such operation stays within one slot, as a real cluster needs.
    """

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.port = _free_port_pair()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def arguments(self) -> list[str]:
        return [
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            str(self.directory / "nodes.conf"),
        ]

    def start(self) -> None:
        super().start()
        self._command(b"CLUSTER ADDSLOTSRANGE 0 16383")
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if b"cluster_state:ok" in self._command(b"CLUSTER INFO"):
                return
            time.sleep(0.05)
        raise RuntimeError("the test cluster did not come up")

    def _ping(self) -> bool:
        return self._command(b"PING").startswith(b"+PONG")

    def _command(self, line: bytes) -> bytes:
        import socket

        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock:
                sock.sendall(line + b"\r\n")
                return sock.recv(65536)
        except OSError:
            return b""

    def flush(self) -> None:
        self._command(b"FLUSHALL")


def _free_port_pair() -> int:
    """Return a free loopback port whose cluster bus port (+10000) is free too."""
    import socket

    for _ in range(100):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if port + 10000 > 65535:
            continue
        with socket.socket() as bus:
            try:
                bus.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port
    raise RuntimeError("no free port pair for the test cluster")


@pytest.fixture(scope="session")
def cluster_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterServer]:
    """Start one real one-node Redis Cluster for the session."""
    yield from _serve(ClusterServer(tmp_path_factory.mktemp("cluster")))
