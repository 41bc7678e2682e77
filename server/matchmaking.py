"""Rated quick match: who is matched with whom, and the node that forms the matches.

Each waiting player accepts opponents within a window of ratings around their own, and
the window widens the longer they wait: ``base + widening * seconds``, without bound once
they have waited ``max_wait`` seconds. Two players may be matched when their windows
overlap, that is when their ratings differ by at most the sum of their half-widths; a
group of more must overlap pairwise. So a newcomer meets players of their level at first,
and nobody waits much longer than ``max_wait`` while anyone else is waiting.

Matches are formed in rounds (every ``match_interval`` seconds) by one node per variant,
the holder of a lease in Redis; if it dies, another node takes the lease over when it
lapses. A round reads the whole queue, forms groups (longest-waiting first, each with the
nearest ratings it accepts) and takes each group out of the queue in one atomic step that
fails if any of its players has left meanwhile. See ``docs/decisions/0009-ratings.md``.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import logging
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from protocol.game import VARIANTS

from .runtime.service import Plumbing, Service
from .store import UNREACHABLE, Waiting

__all__ = ["REQUEUE_MEMORY_MS", "Matchmaker", "Window", "form_groups"]

log = logging.getLogger("scorpion.matchmaking")

REQUEUE_MEMORY_MS = 60_000
"""A player who leaves the rated queue and comes back within this resumes the wait they had."""


@dataclass(frozen=True, slots=True)
class Window:
    """How far from their own rating a waiting player accepts opponents, by time waited."""

    base: float = 50.0
    """Rating points either side at first."""
    widening: float = 25.0
    """Rating points added either side per second of waiting."""
    max_wait: float = 30.0
    """Seconds after which anyone is accepted."""

    def half_width(self, waited_ms: int) -> float:
        """Return the rating points either side a player accepts after ``waited_ms``."""
        seconds = max(0.0, waited_ms / 1000)
        if seconds >= self.max_wait:
            return math.inf
        return self.base + self.widening * seconds


def form_groups(waiting: Sequence[Waiting], now_ms: int, size: int, window: Window) -> list[list[Waiting]]:
    """Return groups of ``size`` players to match now (pure: no Redis, no clock).

    The longest-waiting player chooses first, taking the nearest ratings among those whose
    windows overlap theirs and every player chosen so far; who cannot complete a group
    waits for the next round.
    """
    by_rating = sorted(waiting, key=lambda w: (w.rating, w.joined, w.player))
    ratings = [w.rating for w in by_rating]
    width = {w.player: window.half_width(now_ms - w.joined) for w in waiting}
    widest = max(width.values(), default=0.0)
    taken: set[str] = set()
    groups: list[list[Waiting]] = []
    for seeker in sorted(waiting, key=lambda w: (w.joined, w.player)):
        if seeker.player in taken:
            continue
        group = [seeker]
        reach = width[seeker.player] + widest  # no one farther can overlap the seeker
        at = bisect.bisect_left(ratings, seeker.rating)
        below, above = at - 1, at
        while len(group) < size:
            # The nearest candidate not yet looked at, on either side.
            pick = None
            if below >= 0 and (
                above >= len(by_rating) or seeker.rating - ratings[below] <= ratings[above] - seeker.rating
            ):
                pick, below = by_rating[below], below - 1
            elif above < len(by_rating):
                pick, above = by_rating[above], above + 1
            if pick is None or abs(pick.rating - seeker.rating) > reach:
                break
            if pick.player in taken or pick.player == seeker.player:
                continue
            if all(abs(pick.rating - m.rating) <= width[pick.player] + width[m.player] for m in group):
                group.append(pick)
        if len(group) == size:
            groups.append(group)
            taken.update(m.player for m in group)
    return groups


OnMatch = Callable[[str, list[str]], Awaitable[None]]
"""Start the race of a match: the variant and its players' ids (longest-waiting first)."""


class Matchmaker(Service):
    """Form rated matches, on the node holding a variant's lease, in rounds."""

    def __init__(
        self,
        plumbing: Plumbing,
        clock: Callable[[], int],
        on_match: OnMatch | None = None,
        variants: Sequence[str] = tuple(VARIANTS),
    ) -> None:
        super().__init__(plumbing)
        config = plumbing.config
        self.on_match = on_match
        self.clock = clock
        self.variants = tuple(variants)
        self.size = config.quick_match_size
        self.interval = config.match_interval
        self.window = Window(config.match_window, config.match_widening, config.match_max_wait)
        self.lease_ms = int(max(3 * self.interval, 2.0) * 1000)
        self._wake = asyncio.Event()

    def poke(self) -> None:
        """Run a round soon (a player just joined)."""
        self._wake.set()

    async def run(self) -> None:
        """Run matching rounds until cancelled (a round is skipped while Redis is down)."""
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.interval):  # not wait_for: see StoreHealth._sleep
                    await self._wake.wait()
            self._wake.clear()
            if not self.store.health.up:
                continue
            for variant in self.variants:
                try:
                    await self.round(variant)
                except UNREACHABLE:
                    break
                except Exception:
                    log.exception("matchmaking round failed", extra={"variant": variant})
            await asyncio.sleep(self.interval / 5)  # joins in a burst share one round

    async def round(self, variant: str) -> int:
        """Form and start this round's matches of ``variant`` if this node leads it; return how many."""
        if await self.store.lead_matchmaking(variant, self.lease_ms) < self.size:
            return 0
        now = self.clock()
        groups = form_groups(await self.store.rated_waiting(variant), now, self.size, self.window)
        if not groups:
            return 0
        players = [[w.player for w in group] for group in groups]
        taken = [
            g for g, ok in zip(players, await self.store.claim_matches(variant, players), strict=True) if ok
        ]
        self.metrics.rated_matches.inc(len(taken))
        if self.on_match is not None:
            for group in taken:
                await self.on_match(variant, group)
        return len(taken)
