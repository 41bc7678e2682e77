"""A game's clock leaves out the time its storage could not be reached.

The time bonus and the time limit run on the game's clock: the time since the start, less
every outage of Redis during the game. While Redis is down no racer can move, so the
outage is nobody's time: it is neither charged to the racers nor awarded to anyone.

Each node keeps the outages it saw (:class:`server.store.StoreHealth`), from Redis's last
answer before each to its first answer after. Before a game's next action, and before its
end is scored, the node adds the outages it saw during the game to the game's record in
Redis, where the spans reported by every node are merged (an outage seen by two nodes
counts once, over the longer of the two views).
"""

from __future__ import annotations

import json

from ..store import Store
from .live import LiveGame, now_ms

__all__ = ["back_to_saved", "count_outages", "paused_spans"]


def paused_spans(meta: dict[str, str]) -> list[tuple[int, int]]:
    """Return the paused spans kept in a game's meta record."""
    return [(int(a), int(b)) for a, b in json.loads(meta.get("paused") or "[]")]


async def count_outages(store: Store, game: LiveGame) -> None:
    """Add the outages this node saw during ``game`` and has not added yet to its clock.

    Costs nothing (no round trip) unless an outage ended since the game was last brought up
    to date on this node.
    """
    health = store.health
    if game.outages_seen == health.generation:
        return
    seen = health.generation
    spans = health.outages_between(game.start, now_ms())
    if spans:
        game.paused = await store.add_pauses(game.game_id, spans)
    game.outages_seen = seen


async def back_to_saved(store: Store, game: LiveGame) -> None:
    """A saved solo game's player is back: the time it was left (``solo_leave``, or the
    player away past the grace period) is left out of its clock, as an outage is."""
    if not game.saved:
        return
    left = await store.back_to_saved_game(game.game_id)
    if left is not None:
        game.paused = await store.add_pauses(game.game_id, [(left, max(left, now_ms()))])
