"""The daily deal: one per UTC day and variant, unpredictable, provably winnable, revealed later.

A day's number derives from a server secret (shared by all nodes through the store) and
the date with an HMAC, so nobody can predict it and every node computes the same one. The
solver then vets candidates: the first number it proves winnable within its budget is the
day's deal. Time is read through an injected clock so tests can move across midnight.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import hmac
import logging
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from protocol.game import COMPETITIVE_MIN, MAX_NUMBER, ReserveRule
from protocol.rating import Ending, ending_of
from protocol.solver import Budget, pick_winnable
from protocol.wire.message import deal_commitment

from .limits import subject_of
from .runtime.lifeline import worker_pool
from .store import Store

__all__ = ["CANDIDATES", "DailyDeal", "DailyService", "candidate_numbers", "leaderboard_key"]

log = logging.getLogger("scorpion.daily")

CANDIDATES = 64
"""Numbers tried per day before giving up on a proof (then the first candidate is used)."""
SOLVER_NODES = 300_000
"""Search budget per candidate: typical deals are decided in far fewer nodes."""
MAX_SCORE = 4 * 100 + 500 + 1200


@dataclass(frozen=True, slots=True)
class DailyDeal:
    """A day's deal: its number and salt stay server-side until the day is over."""

    date: str
    variant: str
    number: int
    salt: str
    commitment: str


def candidate_numbers(secret: str, date: str, variant: str) -> Iterator[int]:
    """Yield the day's candidate deal numbers, all in the large (Mersenne Twister) range."""
    span = MAX_NUMBER - COMPETITIVE_MIN + 1
    for index in range(CANDIDATES):
        digest = hmac.new(secret.encode(), f"deal:{date}:{variant}:{index}".encode(), hashlib.sha256).digest()
        yield COMPETITIVE_MIN + int.from_bytes(digest[:16], "big") % span


def choose_number(secret: str, date: str, variant: str) -> int:
    """Return the first candidate the solver proves winnable (the daily tournament's hook)."""
    chosen = pick_winnable(
        variant, candidate_numbers(secret, date, variant), ReserveRule.ANY_TIME, Budget(nodes=SOLVER_NODES)
    )
    if chosen is None:
        log.warning("no candidate proven winnable; using the first", extra={"date": date, "variant": variant})
        chosen = next(candidate_numbers(secret, date, variant))
    return chosen


_TIME_BITS = 17
_TIME_MAX = (1 << _TIME_BITS) - 1
"""Seconds in a 17-bit field: 36 hours, past a day plus any time limit."""


def leaderboard_key(score: int, status: str, elapsed: int, finished_ms: int, day_start_ms: int) -> float:
    """Return the sort key of a daily attempt (lower ranks higher): the standings' order.

    Score (high first); then how the attempt ended (finished, then stuck or at the time
    limit, then resigned or left); then the time: the shorter for a finished attempt, the
    longer stay for one resigned or left, none for the others; then the earlier finish.
    Packed in 48 bits, so the float a sorted set stores is exact; the score sits above bit
    36 as it did before the kind of ending was added, so entries stored earlier that day
    keep their place among the scores.
    """
    ending = ending_of(status)
    spent = min(max(elapsed, 0), _TIME_MAX)
    if ending is Ending.FINISHED:
        stay = spent
    elif ending is Ending.ABANDONED:
        stay = _TIME_MAX - spent
    else:
        stay = 0
    finish = max(0, min((finished_ms - day_start_ms) // 1000, _TIME_MAX))
    return float(((MAX_SCORE - score) << 36) + (int(ending) << 34) + (stay << _TIME_BITS) + finish)


class DailyService:
    """Find and cache each day's deal; tell days apart with an injected clock."""

    def __init__(self, store: Store, clock: Callable[[], float] = time.time, keep_days: int = 30) -> None:
        self.store = store
        self.clock = clock
        self.keep_ms = (keep_days + 2) * 86_400_000
        self._pending: dict[tuple[str, str], asyncio.Task[DailyDeal]] = {}

    def today(self) -> str:
        """Return today's date (UTC) as YYYY-MM-DD."""
        return dt.datetime.fromtimestamp(self.clock(), dt.UTC).date().isoformat()

    @staticmethod
    def bounds(date: str) -> tuple[int, int]:
        """Return the start and end (epoch ms) of a UTC day."""
        day = dt.datetime.fromisoformat(date).replace(tzinfo=dt.UTC)
        start = int(day.timestamp() * 1000)
        return start, start + 86_400_000

    @staticmethod
    def previous_day(date: str) -> str:
        """Return the day before ``date``."""
        return (dt.date.fromisoformat(date) - dt.timedelta(days=1)).isoformat()

    async def deal(self, date: str, variant: str) -> DailyDeal:
        """Return the deal of a day, choosing it (once, for all nodes) when needed."""
        stored = await self.store.daily_deal(date, variant)
        if "commitment" not in stored:
            key = (date, variant)
            task = self._pending.get(key)
            if task is None:
                task = asyncio.ensure_future(self._choose(date, variant))
                self._pending[key] = task
                task.add_done_callback(lambda _t: self._pending.pop(key, None))
            return await task
        return DailyDeal(date, variant, int(stored["number"]), stored["salt"], stored["commitment"])

    async def _choose(self, date: str, variant: str) -> DailyDeal:
        secret = await self.store.daily_secret()
        # The search is pure-Python CPU work: run it in another process so it never holds
        # the event loop (a thread would, through the GIL).
        loop = asyncio.get_running_loop()
        pool = worker_pool()
        try:
            number = await loop.run_in_executor(pool, choose_number, secret, date, variant)
        finally:
            # Not the pool's own "with", whose exit waits for the worker on the event loop:
            # for the whole search when this task is cancelled, holding up the node.
            pool.shutdown(wait=False, cancel_futures=True)
        salt = hmac.new(secret.encode(), f"salt:{date}:{variant}".encode(), hashlib.sha256).hexdigest()[:32]
        proposal = {"number": str(number), "salt": salt, "commitment": deal_commitment(number, salt)}
        stored = await self.store.set_daily_deal(date, variant, proposal, self.keep_ms)
        return DailyDeal(date, variant, int(stored["number"]), stored["salt"], stored["commitment"])

    def is_over(self, date: str) -> bool:
        """Tell whether a day has ended (its deal may then be revealed)."""
        return date < self.today()

    async def attempt_over(self, date: str, variant: str, player: str) -> tuple[str | None, bool]:
        """Return the player's ranked attempt of a day and whether it is over.

        The attempt's game ending counts too: its end is published a moment before the
        node that ended it records the attempt as over.
        """
        attempt, done = await self.store.daily_attempt(date, variant, player)
        if attempt is not None and not done:
            state = await self.store.game_state(attempt)
            done = state is not None and state != "racing"
        return attempt, done

    async def _address_mark(self, date: str, address: str) -> str:
        """Return the keyed hash (HMAC with the daily secret) of a client address on a day."""
        secret = await self.store.daily_secret()
        text = f"forgotten:{date}:{subject_of(address)}"
        return hmac.new(secret.encode(), text.encode(), hashlib.sha256).hexdigest()

    async def remember_forgotten(self, player: str, address: str, variants: Iterable[str]) -> bool:
        """Before a player is forgotten: if they had a ranked attempt of today's deal, keep a
        keyed hash of their address for the rest of the day (decision 15); return whether."""
        date = self.today()
        attempts = [await self.store.daily_attempt(date, variant, player) for variant in variants]
        if not address or all(game is None for game, _ in attempts):
            return False
        _, end = self.bounds(date)
        left = max(end - int(self.clock() * 1000), 0) + 3_600_000
        await self.store.note_forgotten_address(date, await self._address_mark(date, address), left)
        return True

    async def used_by_the_forgotten(self, date: str, address: str) -> bool:
        """Tell whether a player forgotten after a ranked attempt of ``date`` left from this
        address (the day's ranked attempt of an account made that day there stays used)."""
        return bool(address) and await self.store.forgotten_address(
            date, await self._address_mark(date, address)
        )

    async def may_see(self, player: str | None, daily: str | None, variant: str) -> bool:
        """Tell whether a player may see a game of the daily ``daily`` (``None``: not a daily).

        A daily game is seen only once the player's own ranked attempt of that day is over.
        """
        if daily is None or player is None:
            return daily is None
        _, done = await self.attempt_over(daily, variant, player)
        return done
