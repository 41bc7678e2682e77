"""Ranked play: player profiles and the rating leaderboards (rated matching is in rooms.py)."""

from __future__ import annotations

from protocol.wire import message as m

from ..game.live import now_ms
from ..node import Node
from ..profile import build_profile
from ..ratings import rating_of
from ..session import Session

__all__ = ["on_profile", "on_rating_board"]


async def on_profile(node: Node, session: Session, message: m.ProfileRequest) -> None:
    """Send a player's profile (the asking player's own by default)."""
    assert session.player is not None
    player = message.player or session.player
    profile = await build_profile(node.store, node.daily, player, session.player)
    session.send(profile.answering(message.ref))


async def on_rating_board(node: Node, session: Session, message: m.RatingBoard) -> None:
    """Send a page of a variant's rating board, or the page around the asking player."""
    assert session.player is not None
    variant, limit = message.variant, message.limit
    mine = await node.store.rating_rank(variant, session.player)
    offset = message.offset
    if message.around_me:
        offset = max(0, mine - limit // 2) if mine is not None else 0
    total, players = await node.store.rating_board(variant, offset, limit)
    if message.around_me and mine is None:
        players = []
    records = await node.store.ratings(players, variant)
    names = await node.store.player_names(players)
    now = now_ms()
    entries = []
    for rank, (player, name) in enumerate(zip(players, names, strict=True), start=offset + 1):
        record = records[player]
        if record is None:
            continue  # forgotten between the two reads
        current = rating_of(record, now)
        entries.append(
            m.RatingEntry(
                rank=rank,
                player=player,
                name=name,
                rating=max(0, round(current.rating)),
                deviation=round(current.deviation),
                games=record.games,
                provisional=current.is_provisional,
            )
        )
    me = None if mine is None else mine + 1
    session.send(
        m.RatingPage(
            variant=variant, offset=offset, total=total, entries=tuple(entries), me=me, ref=message.ref
        )
    )
