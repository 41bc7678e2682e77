"""Whether Redis answers, as this node sees it, and the outages it has seen.

A node learns that Redis is gone from a request that failed to reach it, or from its
probe (a ``PING`` every half second). While Redis is down, requests that need it are
refused at once (``unavailable`` with ``retry_after_ms``) instead of each waiting for its
own timeout, and the probe tries again with a growing, jittered delay. Once a probe is
answered, Redis is up again and the outage, from the last answer before it to the first
after, is kept so that the race clocks of the games it interrupted can leave it out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable

__all__ = ["COMMAND_TIMEOUT", "Outage", "StoreHealth"]

log = logging.getLogger("scorpion.store")

COMMAND_TIMEOUT = 2.0
"""Seconds a command may wait for Redis's answer before Redis counts as unreachable: the
bound on how long any request waits on a Redis that has gone away."""

PROBE_EVERY = 0.5
"""Seconds between probes while Redis answers."""
PROBE_TIMEOUT = COMMAND_TIMEOUT
"""Seconds a probe waits for its answer: as long as any command (a busy machine that
stalls a node for a second must not count as an outage)."""
BACKOFF = (0.1, 0.5)
"""The first and the longest delay between probes while Redis is down (doubling, jittered).
Short: the node serves again (and stops the outage's clock) at most this long after Redis is back."""
KEEP_OUTAGES_MS = 6 * 3600 * 1000
"""How long an outage is remembered (longer than any race lasts)."""

Outage = tuple[int, int]
"""From when to when (milliseconds, server clock) Redis did not answer."""


def _now_ms() -> int:
    return int(time.time() * 1000)


class StoreHealth:
    """Track Redis's reachability; probe it while it is down; remember its outages."""

    def __init__(self, probe: Callable[[], Awaitable[object]], clock: Callable[[], int] = _now_ms) -> None:
        self.probe = probe
        self.clock = clock
        self.up = True
        self.last_ok = clock()
        """When Redis last answered a probe."""
        self.down_since: int | None = None
        """When the present outage began (the last answer before it), while Redis is down."""
        self.outages: list[Outage] = []
        """The outages seen, oldest first (those of the last few hours)."""
        self.generation = 0
        """Counts the outages that have ended."""
        self.next_probe = 0.0
        self.delay = BACKOFF[0]
        self.woken = asyncio.Event()
        self.on_change: list[Callable[[bool], None]] = []
        """Called with the new state each time Redis goes down or comes back."""

    def failed(self) -> None:
        """Say that a request could not reach Redis: it counts as down until a probe is answered."""
        if self.up:
            self.up = False
            self.down_since = self.last_ok
            self.delay = BACKOFF[0]
            self.next_probe = time.monotonic() + self.delay
            log.warning("Redis is unreachable; refusing requests that need it until it answers")
            self._changed()
            self.woken.set()

    def retry_after_ms(self) -> int:
        """Return how long a client should wait before sending a refused request again."""
        if self.up:
            return int(BACKOFF[0] * 1000)
        return max(100, int((self.next_probe - time.monotonic()) * 1000) + 50)

    async def wait_to_retry(self) -> None:
        """Wait as long as a refused client is told to (``retry_after_ms``), before trying again."""
        await asyncio.sleep(self.retry_after_ms() / 1000)

    def outages_between(self, start: int, end: int) -> list[Outage]:
        """Return the outages, ended or not, that overlap ``start``..``end`` (clipped to it)."""
        spans = list(self.outages)
        if self.down_since is not None:
            spans.append((self.down_since, self.clock()))
        return [(max(a, start), min(b, end)) for a, b in spans if b > start and a < end]

    async def run(self) -> None:
        """Probe Redis for as long as the node runs."""
        while True:
            try:
                if self.up:
                    await self._sleep(PROBE_EVERY)
                else:
                    await asyncio.sleep(max(0.0, self.next_probe - time.monotonic()))
                ok = await self._probe()
                if ok:
                    self._answered()
                elif self.up:
                    self.failed()
                else:
                    self.delay = min(self.delay * 2, BACKOFF[1])
                    self.next_probe = time.monotonic() + self.delay * random.uniform(0.8, 1.2)
            except asyncio.CancelledError:
                raise
            except Exception:  # never let the probe die: it is how the node recovers
                log.exception("the Redis probe failed")
                await asyncio.sleep(BACKOFF[0])

    async def _sleep(self, seconds: float) -> None:
        self.woken.clear()
        # asyncio.timeout, not wait_for: on Python 3.11 wait_for drops a cancellation that
        # comes as the event is set (a request failing as the node shuts down), and this
        # loop would then run on after the node has stopped.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self.woken.wait()

    async def _probe(self) -> bool:
        try:
            await asyncio.wait_for(self.probe(), PROBE_TIMEOUT)
            return True
        except asyncio.CancelledError:
            raise
        except Exception:
            return False

    def _answered(self) -> None:
        now = self.clock()
        self.last_ok = now
        if self.up:
            return
        began = self.down_since if self.down_since is not None else now
        self.outages.append((began, now))
        self.outages = [o for o in self.outages if o[1] > now - KEEP_OUTAGES_MS]
        self.generation += 1
        self.up = True
        self.down_since = None
        log.warning("Redis answers again", extra={"outage_ms": now - began})
        self._changed()

    def _changed(self) -> None:
        for callback in list(self.on_change):
            try:
                callback(self.up)
            except Exception:
                log.exception("an outage listener failed")
