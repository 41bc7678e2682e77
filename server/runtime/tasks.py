"""The node's background tasks: started in one place, logged when they fail, stopped at shutdown."""

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
        """Cancel every task still running (when a start is abandoned)."""
        for task in list(self.running):
            task.cancel()

    async def stop_all(self, timeout: float = 2.0) -> None:
        """Cancel every task still running and wait for them to end (at shutdown). A task
        that lets a cancellation go by (a library that swallows one) is cancelled again,
        then named in the log if it still runs after ``timeout``."""
        for _ in range(2):
            if not self.running:
                return
            self.cancel_all()
            await asyncio.wait(list(self.running), timeout=timeout / 2)
        for task in list(self.running):
            log.warning("a background task ignored its cancellation", extra={"task": task.get_name()})

    def _done(self, task: asyncio.Task[Any]) -> None:
        self.running.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task failed", exc_info=task.exception())
