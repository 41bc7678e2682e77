"""Tie a child process's life to its parent's, so no server outlives what started it."""

from __future__ import annotations

import ctypes
import signal
import sys

__all__ = ["die_with_parent"]

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
