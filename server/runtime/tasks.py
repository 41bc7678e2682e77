"""The node's background tasks: started in one place, logged when they fail, cancelled at shutdown."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import Any

__all__ = ["Tasks"]

log = logging.getLogger("scorpion.server")


class Tasks:
    """Keep track of a node's background tasks."""

    def __init__(self) -> None:
        self.running: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Awaitable[Any]) -> asyncio.Task[Any]:
        """Run ``coro`` in the background; a failure is logged, never lost silently."""
        task = asyncio.ensure_future(coro)
        self.running.add(task)
        task.add_done_callback(self._done)
        return task

    def cancel_all(self) -> None:
        """Cancel every task still running (at shutdown, or when a start is abandoned)."""
        for task in list(self.running):
            task.cancel()

    def _done(self, task: asyncio.Task[Any]) -> None:
        self.running.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task failed", exc_info=task.exception())
