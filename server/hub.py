"""One pub/sub connection per node, shared by every local subscriber of a channel.

A node subscribes to a game's channel while any local client (racer or spectator) is in
that game, and to ``u:PLAYER`` while that player is connected here. Messages are handed to
the local listeners in arrival order; a listener must not block (it queues and returns).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from .store import Store

__all__ = ["Hub", "Listener"]

log = logging.getLogger("scorpion.hub")

Listener = Callable[[str, str], None]
"""Called with (channel, data) for every message on a subscribed channel."""


class Hub:
    """Reference-counted channel subscriptions over one Redis pub/sub connection."""

    def __init__(self, store: Store, on_error: Callable[[], None] | None = None) -> None:
        self.store = store
        self.pubsub = store.pubsub()
        self.listeners: dict[str, list[Listener]] = {}
        self.task: asyncio.Task[None] | None = None
        self.on_error = on_error
        self._lock = asyncio.Lock()

    async def start(self) -> None:
        """Open the pub/sub connection and start dispatching."""
        # A placeholder subscription keeps the connection open before any real one.
        await self.pubsub.subscribe("node:hello")
        self.task = asyncio.create_task(self._run(), name="hub")

    async def stop(self) -> None:
        """Stop dispatching and close the connection."""
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
        with contextlib.suppress(Exception):
            await self.pubsub.aclose()

    async def subscribe(self, channel: str, listener: Listener) -> None:
        """Deliver ``channel``'s messages to ``listener`` until :meth:`unsubscribe`."""
        async with self._lock:
            listeners = self.listeners.setdefault(channel, [])
            first = not listeners
            listeners.append(listener)
            if first:
                await self.pubsub.subscribe(channel)

    async def unsubscribe(self, channel: str, listener: Listener) -> None:
        """Stop delivering ``channel`` to ``listener``."""
        async with self._lock:
            listeners = self.listeners.get(channel)
            if not listeners or listener not in listeners:
                return
            listeners.remove(listener)
            if not listeners:
                del self.listeners[channel]
                await self.pubsub.unsubscribe(channel)

    async def _run(self) -> None:
        while True:
            try:
                message: dict[str, Any] | None = await self.pubsub.get_message(timeout=1.0)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("pub/sub connection failed; reconnecting")
                if self.on_error:
                    self.on_error()
                await asyncio.sleep(0.5)
                continue
            if message is None or message.get("type") != "message":
                continue
            channel, data = message["channel"], message["data"]
            for listener in list(self.listeners.get(channel, ())):
                try:
                    listener(channel, data)
                except Exception:
                    log.exception("listener failed", extra={"channel": channel})
