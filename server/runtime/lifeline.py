"""Tie a child process's life to its parent's, so no server outlives what started it."""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
from concurrent.futures import ProcessPoolExecutor

__all__ = ["die_with_parent", "worker_pool"]

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Ask the kernel to send SIGTERM to this process when its parent dies (Linux only).

    Meant as ``preexec_fn`` of a child process; elsewhere it does nothing.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass


def worker_pool() -> ProcessPoolExecutor:
    """Return a pool of one worker process for CPU work kept off the event loop.

    The worker is spawned (it inherits no event loop, socket or lock) and dies with this
    process, even when this one is killed outright: a pool's worker holds both ends of its
    task queue, so it would otherwise wait on it forever.
    """
    return ProcessPoolExecutor(
        max_workers=1, mp_context=multiprocessing.get_context("spawn"), initializer=_tie_worker
    )


def _tie_worker() -> None:
    """Tie a pool's worker to the process that started it, as the worker starts.

    The worker takes a moment to start: if its parent died in that moment, the kernel's
    signal was asked for too late, so the worker leaves at once.
    """
    die_with_parent()
    parent = multiprocessing.parent_process()
    if parent is not None and os.getppid() != parent.pid:
        os._exit(0)
