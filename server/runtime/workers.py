"""``scorpion-server --workers N``: N node processes on one port, under one supervisor.

The supervising process runs no node. It reserves the port, starts the embedded store
once when no ``redis-url`` is given (every worker uses it), and starts N workers. Each
worker is an ordinary node, ``scorpion-server`` itself, with a node name of its own
(``-w1``, ``-w2``, ...), listening on the same address with SO_REUSEPORT: the kernel
spreads new connections among the workers. Workers share nothing but Redis, as nodes on
separate machines do, so a race, its spectators and a resume may span them.

A worker that exits while the supervisor is not stopping is started again after a short
delay, which grows while it keeps failing. SIGTERM or SIGINT to the supervisor is passed
on to every worker as SIGTERM (each closes its clients with 1012 and stops); the
supervisor waits for them a bounded time, stops the store, and exits 0.

Workers are subprocesses running ``python -m server.main`` rather than
``multiprocessing`` children: a worker is then exactly the one-node server (same start,
signals, logs and exit codes), takes its settings through the environment the server
already reads, and says it is listening on its standard output; the supervisor needs no
more than that and its exit code.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import signal
import socket
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

from ..config import Config
from .embedded import EmbeddedRedis
from .lifeline import die_with_parent
from .web import browser_address

__all__ = [
    "RESTART_DELAY",
    "RESTART_MAX_DELAY",
    "STABLE_AFTER",
    "START_TIMEOUT",
    "Supervisor",
    "reserve_port",
    "supervise",
    "worker_environment",
]

log = logging.getLogger("scorpion.workers")

RESTART_DELAY = 0.2
"""Seconds before a worker that died is started again."""

RESTART_MAX_DELAY = 10.0
"""The longest wait between restarts of a worker that keeps dying: a crash loop costs at
most one start per worker this often."""

STABLE_AFTER = 10.0
"""Seconds a worker must have run for its next restart to wait ``RESTART_DELAY`` again;
one that dies sooner waits twice as long as the last time."""

START_TIMEOUT = 60.0
"""Seconds a worker may take to say it is listening before it counts as failed."""

_ROOT = str(Path(__file__).resolve().parents[2])
"""The folder holding this ``server`` package (and ``protocol`` beside it)."""


def reserve_port(host: str, port: int) -> list[socket.socket]:
    """Bind (without listening) every address of ``host`` at ``port`` with SO_REUSEPORT.

    Port 0 is replaced by a free port, the same for every address. The sockets keep the
    port for the workers while one of them is being restarted (only processes of this
    user that ask for SO_REUSEPORT may bind it too), and show at once when the address
    cannot be used. A socket that does not listen receives no connections.
    """
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    reserved: list[socket.socket] = []
    try:
        for family, kind, proto, _name, address in dict.fromkeys(infos):
            sock = socket.socket(family, kind, proto)
            reserved.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)  # as asyncio listens
            if port == 0 and len(reserved) > 1:
                address = (address[0], reserved[0].getsockname()[1], *address[2:])
            sock.bind(address)
    except BaseException:
        for sock in reserved:
            sock.close()
        raise
    return reserved


def _setting(value: object) -> str | None:
    """Return ``value`` as ``load_config`` reads it from the environment (None: unset)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return repr(value)  # reads back as the same float
    return str(value)


def worker_environment(config: Config, index: int, port: int, redis_url: str) -> dict[str, str]:
    """Return the environment of worker ``index`` (from 1): ``config`` as ``SCORPION_*``
    variables, with the worker's node name, the shared port and Redis, and one worker.

    Settings travel in the environment rather than as flags so that secrets (a Redis
    password, the daily secret) do not show in the process list.
    """
    env = dict(os.environ)
    base = config.node_id or f"{socket.gethostname()}-{os.getpid()}"
    settings = {item.name: getattr(config, item.name) for item in fields(Config)}
    settings.update(node_id=f"{base}-w{index}", port=port, redis_url=redis_url, workers=1, reuse_port=True)
    for name, value in settings.items():
        text = _setting(value)
        if text is None:
            env.pop("SCORPION_" + name.upper(), None)
        else:
            env["SCORPION_" + name.upper()] = text
    # The worker imports this very package, not another ``server`` that its working
    # directory may hold (-P keeps the working directory off its path).
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (_ROOT, env.get("PYTHONPATH"))))
    return env


class _Worker:
    """One running worker process and the task relaying its standard output."""

    def __init__(self, index: int, process: asyncio.subprocess.Process) -> None:
        self.index = index
        self.process = process
        self.relay: asyncio.Task[None] | None = None

    @property
    def pid(self) -> int:
        """The worker's process id."""
        return self.process.pid

    async def listening(self) -> bool:
        """Wait for the worker's first two lines (it prints where it listens and where to
        open it in a browser once it listens); False if it exited or said nothing in
        ``START_TIMEOUT`` seconds. The supervisor says both for all its workers."""
        assert self.process.stdout is not None
        for _ in range(2):
            try:
                line = await asyncio.wait_for(self.process.stdout.readline(), START_TIMEOUT)
            except TimeoutError:
                return False
            if not line:
                return False
        self.relay = asyncio.create_task(self._relay())
        return True

    async def _relay(self) -> None:
        """Pass on whatever else the worker prints (so that its pipe never fills)."""
        assert self.process.stdout is not None
        while line := await self.process.stdout.readline():
            sys.stdout.write(line.decode(errors="replace"))
            sys.stdout.flush()

    def signal(self, sig: int) -> None:
        """Send ``sig`` to the worker if it is still running."""
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(sig)


class Supervisor:
    """Start ``config.workers`` workers on one port; restart those that die; stop them all."""

    def __init__(self, config: Config, port: int, redis_url: str) -> None:
        self.config = config
        self.port = port
        self.redis_url = redis_url
        self.workers: dict[int, _Worker] = {}
        """The running worker of each slot, from 1."""
        self.restarts = 0
        """Workers started again after they died."""
        self.stopping = False
        self._keepers: list[asyncio.Task[None]] = []

    async def _spawn(self, index: int) -> _Worker:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-P",
            "-m",
            "server.main",
            env=worker_environment(self.config, index, self.port, self.redis_url),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            # A worker of its own process group gets no SIGINT from a terminal's Ctrl-C:
            # only the supervisor does, which stops the workers in order (and does not
            # take their exits for crashes to restart).
            process_group=0,
            preexec_fn=die_with_parent,  # killed outright, the supervisor leaves no worker behind
        )
        worker = self.workers[index] = _Worker(index, process)
        log.info(
            "started worker %d: pid %d",
            index,
            worker.pid,
            extra={"worker": index, "pid": worker.pid},
        )
        return worker

    async def start(self) -> list[int]:
        """Start every worker and wait until each listens; return their pids.

        Raise ``RuntimeError`` if one exits first: at start a failure is a setting or the
        environment, which a restart would not mend.
        """
        workers = [await self._spawn(index) for index in range(1, self.config.workers + 1)]
        ready = await asyncio.gather(*(worker.listening() for worker in workers))
        failed = [worker for worker, ok in zip(workers, ready, strict=True) if not ok]
        if failed:
            raise RuntimeError(f"worker {failed[0].index} did not start (pid {failed[0].pid})")
        self._keepers = [asyncio.create_task(self._keep(worker)) for worker in workers]
        return [worker.pid for worker in workers]

    async def _keep(self, worker: _Worker) -> None:
        """Start a worker's slot again each time its worker exits, until stopping."""
        loop = asyncio.get_running_loop()
        delay = RESTART_DELAY
        started = loop.time()
        while True:
            code = await worker.process.wait()
            if self.stopping:
                return
            if worker.relay is not None:
                worker.relay.cancel()
            delay = RESTART_DELAY if loop.time() - started >= STABLE_AFTER else delay
            log.warning(
                "worker %d (pid %d) exited with code %d; starting it again in %g s",
                worker.index,
                worker.pid,
                code,
                delay,
                extra={"worker": worker.index, "pid": worker.pid, "code": code, "delay": delay},
            )
            await asyncio.sleep(delay)
            delay = min(2 * delay, RESTART_MAX_DELAY)
            if self.stopping:
                return
            started = loop.time()
            old = worker.pid
            worker = await self._spawn(worker.index)
            self.restarts += 1
            if await worker.listening():
                log.warning(
                    "worker %d restarted: pid %d replaces pid %d",
                    worker.index,
                    worker.pid,
                    old,
                    extra={"worker": worker.index, "pid": worker.pid, "replaced": old},
                )
            else:
                worker.signal(signal.SIGKILL)  # silent past START_TIMEOUT: started again below

    async def stop(self) -> None:
        """Pass SIGTERM to every worker, wait for them a bounded time, kill what remains."""
        self.stopping = True
        for keeper in self._keepers:
            keeper.cancel()
        await asyncio.gather(*self._keepers, return_exceptions=True)
        workers = list(self.workers.values())
        for worker in workers:
            worker.signal(signal.SIGTERM)
        # A worker waits up to shutdown-timeout for its clients to close and as long again
        # for its listener, then stops its own children: that, and a margin.
        bound = 2 * self.config.shutdown_timeout + self.config.close_timeout + 5.0
        waits = [asyncio.create_task(worker.process.wait()) for worker in workers]
        if waits:
            _done, late = await asyncio.wait(waits, timeout=bound)
            if late:
                log.error("workers did not stop in time: killing them", extra={"late": len(late)})
                for worker in workers:
                    worker.signal(signal.SIGKILL)
                await asyncio.wait(waits)
        # A worker's own children (its solver) may hold its output open a moment longer:
        # nothing they print matters now.
        for worker in workers:
            if worker.relay is not None:
                worker.relay.cancel()


async def _serve(config: Config, stop: asyncio.Event) -> int:
    """Run the store and the workers until ``stop`` is set; return the exit code."""
    try:
        reserved = reserve_port(config.host, config.port)
    except OSError as exc:
        reason = "the port is in use" if exc.errno == errno.EADDRINUSE else exc.strerror or str(exc)
        print(f"scorpion-server: cannot listen on {config.host}:{config.port}: {reason}", file=sys.stderr)
        return 1
    port = int(reserved[0].getsockname()[1])
    embedded: EmbeddedRedis | None = None
    supervisor: Supervisor | None = None
    try:
        url = config.redis_url
        if url is None:
            embedded = EmbeddedRedis(config.data_dir)
            url = await embedded.start()
        supervisor = Supervisor(config, port, url)
        starting = asyncio.create_task(supervisor.start())
        stopped = asyncio.create_task(stop.wait())
        await asyncio.wait((starting, stopped), return_when=asyncio.FIRST_COMPLETED)
        if starting.done():
            pids = starting.result()  # raises RuntimeError if a worker did not start
            print(
                f"scorpion-server listening on ws://{config.host}:{port}/ "
                f"({len(pids)} workers: pids {', '.join(map(str, pids))})",
                flush=True,
            )
            address = browser_address(config.host, port)
            print(f"scorpion-server: open {address} to play in a browser", flush=True)
            log.info("listening", extra={"host": config.host, "port": port, "workers": len(pids)})
            await stopped
        else:
            starting.cancel()
            with contextlib.suppress(asyncio.CancelledError, RuntimeError):
                await starting
        stopped.cancel()
        log.info("stopping workers", extra={"workers": len(supervisor.workers)})
        return 0
    except RuntimeError as exc:
        print(f"scorpion-server: {exc}", file=sys.stderr)
        return 1
    finally:
        if supervisor is not None:
            await supervisor.stop()
        if embedded is not None:
            await embedded.stop()
        for sock in reserved:
            sock.close()
        log.info("stopped", extra={"restarts": supervisor.restarts if supervisor else 0})


async def _main(config: Config) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    return await _serve(config, stop)


def supervise(config: Config) -> int:
    """Run ``config.workers`` workers until SIGTERM or SIGINT; return the exit code."""
    # asyncio's own loop: the supervisor only waits on a few processes.
    return asyncio.run(_main(config))
