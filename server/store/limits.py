"""Abuse limits per client address: counters and lockouts that expire by themselves.

Every key of one limit and address shares one hash tag (``limit:{KIND:SUBJECT}``), so each
script touches one Redis Cluster slot; every key is written with its expiry in the same
script, so none is ever left without one.
"""

from __future__ import annotations

from typing import Any

from . import scripts
from .base import StoreBase
from .keys import limit_key

__all__ = ["LimitStore"]


class LimitStore(StoreBase):
    """Counters per address and kind of request, and lockouts after failed logins.

    Counting and peeking go through the move path's connection (written once a loop turn):
    they come before many requests (a challenge's code, a guest's hello), a burst of which
    would otherwise cost a round trip of the pool's each."""

    _fail_script: Any = None

    async def count_hit(self, kind: str, subject: str, limit: int, window_ms: int) -> int:
        """Count one ``kind`` request from ``subject`` in a window of ``window_ms``; return 0
        if it is within ``limit``, else the ms until the window ends."""
        key = limit_key(kind, subject)
        return int(await self._pipeline.script(scripts.LIMIT_COUNT, [key], [window_ms, limit]))

    async def uncount_hit(self, kind: str, subject: str) -> None:
        """Take back one counted request of ``subject`` (never below zero)."""
        key = limit_key(kind, subject)
        if int(await self.redis.decr(key)) < 0:
            await self.redis.delete(key)

    async def hits_wait(self, kind: str, subject: str, limit: int) -> int:
        """Return the ms until ``subject`` may make one more ``kind`` request (0: now)."""
        return int(await self._pipeline.script(scripts.LIMIT_PEEK, [limit_key(kind, subject)], [limit]))

    async def lockout(
        self,
        kind: str,
        subject: str,
        failures: int,
        first_ms: int,
        longest_ms: int,
        memory_ms: int,
        record: bool,
    ) -> int:
        """Record one failure of ``subject`` (if ``record``); return the ms it stays locked
        out: after ``failures`` failures for ``first_ms``, each next lockout twice as long
        up to ``longest_ms``; failures and lockouts are forgotten ``memory_ms`` after the
        last failure."""
        if self._fail_script is None:
            self._fail_script = self._script(scripts.LIMIT_FAIL)
        keys = [limit_key(kind, subject), limit_key(kind, subject, "lock")]
        args = [failures, first_ms, longest_ms, memory_ms, 1 if record else 0]
        return int(await self._fail_script(keys=keys, args=args))
