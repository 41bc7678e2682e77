"""Quick match: the queue, rated (matched by rating) or casual, and leaving it."""

from __future__ import annotations

import asyncio

from protocol.wire import message as m
from protocol.wire.error import ErrorCode, ProtocolError

from ..accounts import require_account
from ..game.live import now_ms
from ..launch import start_match
from ..matchmaking import REQUEUE_MEMORY_MS
from ..node import Node
from ..session import Session

__all__ = ["on_queue_cancel", "on_queue_join"]


async def on_queue_join(node: Node, session: Session, message: m.QueueJoin) -> None:
    """Queue the player for a quick match: rated (matched by rating) unless asked otherwise."""
    assert session.player is not None
    variant = message.variant
    if message.rated:
        require_account(session, "the rated queue", "join the casual queue: queue_join with rated: false")
        await node.fairplay.check_ranked(session.player)
        rating = await node.ratings.rating_for_queue(session.player, variant)
        waiting, _ = await node.store.enqueue_rated(
            variant, session.player, now_ms(), rating, REQUEUE_MEMORY_MS
        )
        session.queued = variant
        queued = m.Queued(variant=variant, waiting=waiting, rated=True, rating=round(rating), ref=message.ref)
        session.send(queued)
        session.queue_timer = node.spawn(_queue_timeout(node, session, variant))
        node.matchmaker.poke()
        return
    waiting = await node.store.enqueue(variant, session.player, now_ms())
    session.queued = variant
    session.send(m.Queued(variant=variant, waiting=waiting, ref=message.ref))
    session.queue_timer = node.spawn(_queue_timeout(node, session, variant))
    matched = await node.store.match(variant, node.config.quick_match_size)
    if matched:
        await start_match(node, variant, matched, rated=False)


async def _queue_timeout(node: Node, session: Session, variant: str) -> None:
    await asyncio.sleep(node.config.queue_timeout)
    if (
        session.queued == variant
        and session.player
        and await node.store.leave_queues(variant, session.player, now_ms(), REQUEUE_MEMORY_MS)
    ):
        session.queued = None
        session.send(m.QueueTimeout(variant=variant, waited=int(node.config.queue_timeout)))


async def on_queue_cancel(node: Node, session: Session, message: m.QueueCancel) -> None:
    """Take the player out of the quick match queue."""
    assert session.player is not None
    variant, session.queued = session.queued, None
    if session.queue_timer is not None:
        session.queue_timer.cancel()
    if variant is None or not await node.store.leave_queues(
        variant, session.player, now_ms(), REQUEUE_MEMORY_MS
    ):
        raise ProtocolError(ErrorCode.NOT_IN_QUEUE, "you are not waiting for a quick match")
    session.send(m.Ok(to="queue_cancel", ref=message.ref))
