"""Rated races: each racer's rating before and after, stored once, announced to the racers.

The rules are in the pure core (:mod:`protocol.rating`); this service reads the racers'
ratings, lets each deviation grow by the time since the racer's last rated race (one
rating period per day), rates the race, stores every racer's new rating exactly once (a
racer whose rating another race changed meanwhile is rated again from it), and tells the
racers. See ``docs/decisions/0009-ratings.md``.
"""

from __future__ import annotations

import itertools
import json
import logging
import time
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from typing import Any, Protocol

from protocol.rating import (
    DEFAULT_RATING,
    Placing,
    Rating,
    Result,
    age,
    pair_key,
    pairwise_results,
    rate,
    rate_race,
)
from protocol.wire.message import RatingDelta, RatingInfo

from .runtime.service import Plumbing, Service
from .store import UNREACHABLE, RatingRecord

__all__ = ["PERIOD_MS", "RatedGame", "RatingService", "rating_of"]


class RatedGame(Protocol):
    """What rating a race needs to know of its game (a :class:`server.game.live.LiveGame`)."""

    @property
    def game_id(self) -> str: ...
    @property
    def variant(self) -> str: ...


log = logging.getLogger("scorpion.ratings")

PERIOD_MS = 24 * 3600 * 1000
"""One Glicko-2 rating period: a day. A racer's deviation grows for each day sat out."""
PAIR_COUNT_TTL_MS = 2 * PERIOD_MS


def rating_of(record: RatingRecord | None, now_ms: int) -> Rating:
    """Return a stored rating as of ``now_ms`` (its deviation grown since its last race)."""
    if record is None:
        return Rating()
    stored = Rating(record.rating, record.deviation, record.volatility)
    return age(stored, max(0, now_ms - record.at) / PERIOD_MS)


def rating_info(variant: str, record: RatingRecord, now_ms: int, rank: int | None) -> RatingInfo:
    """Return the wire form of a player's rating in a variant."""
    current = rating_of(record, now_ms)
    return RatingInfo(
        variant=variant,
        rating=max(0, round(current.rating)),
        deviation=round(current.deviation),
        games=record.games,
        provisional=current.is_provisional,
        rank=None if rank is None else rank + 1,
        best=max(0, round(record.best)),
    )


class RatingService(Service):
    """Rate finished rated races and keep the rating boards."""

    def __init__(self, plumbing: Plumbing) -> None:
        super().__init__(plumbing)
        self.pair_limit = plumbing.config.rated_pair_limit

    async def rating_for_queue(self, player_id: str, variant: str) -> float:
        """Return the rating a player is matched on in a variant (1500 when unrated)."""
        record = (await self.store.ratings([player_id], variant))[player_id]
        return record.rating if record else DEFAULT_RATING

    async def rate(
        self, game: RatedGame, standings: Sequence[dict[str, Any]], forgotten: AbstractSet[str] = frozenset()
    ) -> list[RatingDelta]:
        """Rate a finished race, store every racer's new rating once, and tell the racers.

        Safe to call again for the same race (after an outage, say): a racer whose change
        is stored already keeps it. A racer all of whose pairs are over the day's limit
        keeps their rating (a change of 0). Returns the changes.

        A ``forgotten`` racer (who asked to be forgotten during the race) still counts for
        the others, who are rated from their place as usual (against the rating they had,
        or a newcomer's once it is erased), but nothing is stored of them: no rating, no
        change, no board place, no count of their pairs, and no notice names them
        (decision 15).
        """
        now = int(time.time() * 1000)
        placings = [
            Placing(row["player"], int(row["rank"]), row["status"], int(row["score"])) for row in standings
        ]
        players = [p.player for p in placings]
        names = {row["player"]: row["name"] for row in standings}
        day = time.strftime("%Y-%m-%d", time.gmtime(now / 1000))
        kept = [pid for pid in players if pid not in forgotten]
        pairs = [pair_key(a, b) for a, b in itertools.combinations(kept, 2)]
        counts = await self.store.count_rated_pairs(day, pairs, PAIR_COUNT_TTL_MS)
        unrated = {pair for pair, count in counts.items() if count > self.pair_limit}
        records = await self.store.ratings(players, game.variant)
        before = {pid: rating_of(records[pid], now) for pid in players}
        after = rate_race(before, placings, unrated)
        games_of = pairwise_results(placings, unrated)
        # Every racer's new rating, stored in one go; a racer whose rating another race
        # changed meanwhile is rated again from it, alone.
        rated = [pid for pid in kept if games_of[pid]]
        updates = [_update(game.variant, pid, names[pid], records[pid], after[pid], now) for pid in rated]
        outcomes = await self.store.apply_ratings(game.variant, game.game_id, [u[:4] for u in updates])
        stored: dict[str, RatingDelta] = {}
        for pid, update, outcome in zip(rated, updates, outcomes, strict=True):
            if outcome == "moved":
                results = [Result(before[other], score) for other, score in games_of[pid]]
                moved = await self._store_again(game, pid, names[pid], results, now)
                if moved is not None:
                    stored[pid] = moved
            elif outcome == "done":  # stored before (this is a retry): keep what was stored
                stored[pid] = await self._stored_change(pid, game.game_id) or update[4]
            else:
                self.metrics.ratings_updated.inc()
                stored[pid] = update[4]
        changes = [
            stored[pid] if pid in stored else _delta(pid, names[pid], before[pid], before[pid])
            for pid in kept
            if pid in stored or not games_of[pid]
        ]
        notice = {
            "kind": "rating",
            "game": game.game_id,
            "variant": game.variant,
            "changes": [c.to_dict() for c in changes],
        }
        await self.store.notify_each(kept, notice)
        return changes

    async def _store_again(
        self, game: RatedGame, player: str, name: str, results: list[Result], now: int
    ) -> RatingDelta | None:
        """Rate one racer again from their stored rating (it moved meanwhile) and store it once."""
        for _attempt in range(5):
            record = (await self.store.ratings([player], game.variant))[player]
            new = rate(rating_of(record, now), results)
            based_on, stored, change, delta = _update(game.variant, player, name, record, new, now)[1:]
            outcome = await self.store.apply_rating(
                player, game.variant, game.game_id, based_on, stored, change
            )
            if outcome == "ok":
                self.metrics.ratings_updated.inc()
                return delta
            if outcome == "done":
                return await self._stored_change(player, game.game_id) or delta
        log.warning("rating not stored: it kept changing", extra={"game": game.game_id, "player": player})
        return None

    async def _stored_change(self, player: str, game_id: str) -> RatingDelta | None:
        kept = (await self.store.rating_changes(player, [game_id])).get(game_id)
        if not kept:
            return None
        data = json.loads(kept)
        data.pop("variant", None)
        return RatingDelta.from_dict(data)

    async def rate_when_reachable(
        self, game: RatedGame, standings: Sequence[dict[str, Any]], forgotten: AbstractSet[str] = frozenset()
    ) -> None:
        """Rate a race, trying again while Redis cannot be reached (for up to an hour)."""
        for _attempt in range(7200):
            try:
                await self.rate(game, standings, forgotten)
                return
            except UNREACHABLE:
                await self.store.health.wait_to_retry()
        log.error("race not rated: Redis stayed unreachable", extra={"game": game.game_id})


def _delta(player: str, name: str, before: Rating, after: Rating) -> RatingDelta:
    return RatingDelta(
        player=player,
        name=name,
        before=max(0, round(before.rating)),
        after=max(0, round(after.rating)),
        deviation=round(after.deviation),
        provisional=after.is_provisional,
    )


def _update(
    variant: str, player: str, name: str, record: RatingRecord | None, new: Rating, now: int
) -> tuple[str, int, RatingRecord, str, RatingDelta]:
    """Return what storing a racer's new rating takes: player, the count it rests on, the new
    record, the stored change (JSON), and the change as sent."""
    games = record.games if record else 0
    stored = RatingRecord(
        rating=new.rating,
        deviation=new.deviation,
        volatility=new.volatility,
        games=games + 1,
        at=now,
        best=max(new.rating, record.best if record else new.rating),
    )
    delta = _delta(player, name, rating_of(record, now), new)
    return player, games, stored, json.dumps({"variant": variant, **delta.to_dict()}), delta
