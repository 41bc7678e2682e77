"""One pub/sub connection per node, shared by every local subscriber of a channel.

A node subscribes to a game's channel while any local client (racer or spectator) is in
that game, and to ``u:PLAYER`` while that player is connected here. Messages are handed to
the local listeners in arrival order; a listener must not block (it queues and returns).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Callable, Coroutine
from typing import Any

from ..store import Store

__all__ = ["Hub", "Listener"]

log = logging.getLogger("scorpion.hub")

Listener = Callable[[str, str], None]
"""Called with (channel, data) for every message on a subscribed channel."""

RECONNECT_BACKOFF = (0.1, 2.0)
"""The first and the longest delay between reconnection attempts (doubling, jittered)."""
CATCH_UP_ATTEMPTS = 20
"""Times the events missed during a pub/sub outage are asked for before giving up (clients
still find the gap, from the versions, and resume)."""
OPEN_TIMEOUT = 2.0
"""Seconds one attempt to open the pub/sub connection may take."""


class Hub:
    """Reference-counted channel subscriptions over one Redis pub/sub connection."""

    def __init__(self, store: Store, on_error: Callable[[], None] | None = None) -> None:
        self.store = store
        self.subscriber = store.subscriber()
        self.listeners: dict[str, list[Listener]] = {}
        self.task: asyncio.Task[None] | None = None
        self.on_error = on_error
        self.on_reconnect: list[Callable[[], Coroutine[Any, Any, None]]] = []
        """Run after the connection was restored and every channel subscribed again: what
        was published meanwhile never reached this node, and is to be read from the logs."""
        self._catching_up: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        """Open the pub/sub connection and start dispatching."""
        await self.subscriber.open()
        self.task = asyncio.create_task(self._run(), name="hub")

    async def stop(self) -> None:
        """Stop dispatching and close the connection."""
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
        for task in list(self._catching_up):
            task.cancel()
        self.subscriber.close()

    async def subscribe(self, channel: str, listener: Listener) -> None:
        """Deliver ``channel``'s messages to ``listener`` until :meth:`unsubscribe`."""
        listeners = self.listeners.setdefault(channel, [])
        listeners.append(listener)
        if len(listeners) == 1:
            self.subscriber.subscribe(channel)  # while reconnecting: resubscribed after

    async def unsubscribe(self, channel: str, listener: Listener) -> None:
        """Stop delivering ``channel`` to ``listener``."""
        listeners = self.listeners.get(channel)
        if not listeners or listener not in listeners:
            return
        listeners.remove(listener)
        if not listeners:
            del self.listeners[channel]
            self.subscriber.unsubscribe(channel)

    async def _reconnect(self) -> None:
        delay = RECONNECT_BACKOFF[0]
        while True:
            await asyncio.sleep(delay * random.uniform(0.8, 1.2))
            delay = min(delay * 2, RECONNECT_BACKOFF[1])
            try:
                await asyncio.wait_for(self.subscriber.open(), OPEN_TIMEOUT)
            except Exception as exc:
                log.warning("pub/sub reconnection failed: %s", exc)
                continue
            if self.listeners:
                self.subscriber.subscribe(*self.listeners)
            log.warning("pub/sub connection restored", extra={"channels": len(self.listeners)})
            for catch_up in list(self.on_reconnect):
                task = asyncio.create_task(self._catch_up(catch_up))
                self._catching_up.add(task)
                task.add_done_callback(self._caught_up)
            return

    async def _catch_up(self, catch_up: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Read what was missed, trying again while storage is still partly away (a cluster
        whose failed primary is not replaced yet)."""
        delay = RECONNECT_BACKOFF[0]
        for _attempt in range(CATCH_UP_ATTEMPTS - 1):
            try:
                return await catch_up()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("catching up after a reconnection failed; trying again: %s", exc)
                await asyncio.sleep(delay * random.uniform(0.8, 1.2))
                delay = min(delay * 2, RECONNECT_BACKOFF[1])
        await catch_up()

    def _caught_up(self, task: asyncio.Task[None]) -> None:
        self._catching_up.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("catching up after a reconnection failed", exc_info=task.exception())

    async def _run(self) -> None:
        while True:
            try:
                batch = await self.subscriber.messages()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("pub/sub connection failed; reconnecting")
                if self.on_error:
                    self.on_error()
                await self._reconnect()
                continue
            for channel, data in batch:
                for listener in list(self.listeners.get(channel, ())):
                    try:
                        listener(channel, data)
                    except Exception:
                        log.exception("listener failed", extra={"channel": channel})
