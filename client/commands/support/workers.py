"""Work spread over worker processes that a long command can stop at any moment.

``scorpion study`` solves its deals here: each worker has a pipe of its own, so a worker
that dies, or all of them at once, never leaves this process waiting, and
:class:`StopSignals` turns Ctrl-C and SIGTERM into a stop the command can report on.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable, Generator
from multiprocessing.connection import Connection, wait
from types import FrameType
from typing import TypeVar

__all__ = ["StopSignals", "Stopped", "WorkerLost", "run_in_workers"]

Task = TypeVar("Task")
Result = TypeVar("Result")

_PR_SET_PDEATHSIG = 1


def _die_with(parent: int) -> None:
    """End this worker process when its parent ``parent`` ends, even killed outright
    (``kill -9``), rather than let it finish minutes of work for nobody (Linux; elsewhere
    a worker ends when its next result cannot be sent)."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):
            return
        if os.getppid() != parent:  # it ended before that was asked for
            os._exit(1)


def _serve(work: Callable[[Task], Result], channel: Connection, parent: int) -> None:
    """A worker process: do ``work`` on the tasks sent on ``channel`` until told to stop."""
    # Ctrl-C reaches every process of the terminal's group: the parent stops the workers
    # and reports what they did, so they leave SIGINT to it; SIGTERM (a kill of the group)
    # just ends them, rather than running the handler inherited from the parent.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _die_with(parent)
    while (task := channel.recv()) is not None:
        try:
            channel.send((True, work(task)))
        except Exception as exc:  # the parent stops with it, as it would doing the work itself
            channel.send((False, f"{type(exc).__name__}: {exc}"))


class WorkerLost(Exception):
    """A worker process failed at task ``index`` (``error``: the exception it raised, as
    text) or died doing it (``error`` None; ``exit_code``: minus the signal that ended it,
    if one did, or None if it is not known)."""

    def __init__(self, index: int, error: str | None = None, exit_code: int | None = None) -> None:
        super().__init__(error or f"a worker process ended (exit code {exit_code})")
        self.index = index
        self.error = error
        self.exit_code = exit_code


def run_in_workers(
    work: Callable[[Task], Result], tasks: list[Task], workers: int, tick: float
) -> Generator[tuple[int, Result] | None, None, None]:
    """Do ``work`` (a module-level function) on ``tasks`` in up to ``workers`` processes,
    yielding each task's index and result as it is done (in the order they finish), and
    ``None`` after ``tick`` seconds without one. Closing the generator kills the workers.

    Raises :class:`WorkerLost` when a worker fails or dies.
    """
    # A pipe per worker process rather than multiprocessing.Pool: a pool's shared queue
    # has a lock that an idle worker holds while it waits, so a worker killed there (by a
    # kill of the process group, or the kernel's out-of-memory killer) would hang the
    # pool's shutdown; here each worker is killed and reaped on its own.
    started: list[tuple[Connection, multiprocessing.Process]] = []
    try:
        for _ in range(min(workers, len(tasks))):
            ours, theirs = multiprocessing.Pipe()
            process = multiprocessing.Process(target=_serve, args=(work, theirs, os.getpid()), daemon=True)
            process.start()
            theirs.close()
            started.append((ours, process))
        queue = iter(enumerate(tasks))
        busy: dict[Connection, tuple[int, multiprocessing.Process]] = {}
        for channel, process in started:
            index, task = next(queue)
            channel.send(task)
            busy[channel] = (index, process)
        while busy:
            finished = wait(list(busy), timeout=tick)
            if not finished:
                yield None
            for ready in finished:
                assert isinstance(ready, Connection)
                index, process = busy.pop(ready)
                try:
                    ok, value = ready.recv()
                except EOFError:
                    process.join(1)
                    raise WorkerLost(index, exit_code=process.exitcode) from None
                if not ok:
                    raise WorkerLost(index, error=value)
                following = next(queue, None)
                if following is not None:
                    ready.send(following[1])
                    busy[ready] = (following[0], process)
                yield index, value
    finally:
        for _, process in started:
            if process.is_alive():
                process.kill()
        for channel, process in started:
            process.join()
            channel.close()


class Stopped(Exception):
    """Ctrl-C or SIGTERM arrived while :class:`StopSignals` raises."""


class StopSignals:
    """While in use, SIGINT and SIGTERM stop the command: while ``raising``, by raising
    :class:`Stopped`; after (while it writes what it did), they are only noted, so that a
    second Ctrl-C cannot cut that short. ``received`` is the first one. The handlers
    before are put back at the end."""

    WATCHED = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.received = 0
        self.raising = True
        self._before: dict[int, object] = {}

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():  # else signals cannot be caught
            self._before = {number: signal.signal(number, self._on_signal) for number in self.WATCHED}
        return self

    def __exit__(self, *exc: object) -> None:
        for number, before in self._before.items():
            signal.signal(number, before)  # type: ignore[arg-type]

    def _on_signal(self, number: int, frame: FrameType | None) -> None:
        self.received = self.received or number
        if self.raising:
            raise Stopped
