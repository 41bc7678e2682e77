"""Rooms to race friends in, and the quick match queue."""

from __future__ import annotations

import asyncio
import json

from protocol.wire import message as m
from protocol.wire.error import ErrorCode, ProtocolError

from ..game.launch import launch, start_match
from ..game.live import GameSpec, new_game_id, now_ms
from ..matchmaking import REQUEUE_MEMORY_MS
from ..node import Node
from ..rooms import leave_room, publish_room
from ..session import Session

__all__ = [
    "on_queue_cancel",
    "on_queue_join",
    "on_ready",
    "on_room_create",
    "on_room_join",
    "on_room_leave",
    "on_room_start",
]


async def on_room_create(node: Node, session: Session, message: m.RoomCreate) -> None:
    """Open a room hosted by the player, with the race's variant, size and options."""
    assert session.player is not None
    settings = {
        "variant": message.variant,
        "max_players": message.max_players,
        "options": json.dumps(message.options.to_dict()),
    }
    code = await node.store.create_room(session.player, settings, int(node.config.room_ttl * 1000))
    session.room = code
    await node.store.set_player_place(session.player, room=code)
    await publish_room(node.store, code, ref_to=(session, message.ref))


async def on_room_join(node: Node, session: Session, message: m.RoomJoin) -> None:
    """Put the player in a room by its code."""
    assert session.player is not None
    await node.store.join_room(message.room, session.player, int(node.config.room_ttl * 1000))
    session.room = message.room
    await node.store.set_player_place(session.player, room=message.room)
    await publish_room(node.store, message.room, ref_to=(session, message.ref))


async def on_ready(node: Node, session: Session, message: m.Ready) -> None:
    """Mark the player ready (or not) in their room."""
    assert session.player is not None and session.room is not None
    await node.store.set_ready(session.room, session.player, message.ready)
    await publish_room(node.store, session.room, ref_to=(session, message.ref))


async def on_room_leave(node: Node, session: Session, message: m.RoomLeave) -> None:
    """Take the player out of their room."""
    await leave_room(node.store, session)
    session.send(m.Ok(to="room_leave", ref=message.ref))


async def on_room_start(node: Node, session: Session, message: m.RoomStart) -> None:
    """Start the room's race (host only, everyone ready) after the countdown."""
    assert session.player is not None and session.room is not None
    room = await node.store.room(session.room)
    if room is None:
        raise ProtocolError(ErrorCode.NO_SUCH_ROOM, "the room is gone")
    if room["host"] != session.player:
        raise ProtocolError(ErrorCode.NOT_HOST, "only the room's host can start the race")
    others = [m for m in room["members"] if m != room["host"]]
    if not others:
        raise ProtocolError(ErrorCode.NOT_READY, "a race needs at least two players")
    unready = [
        n
        for m, n in zip(room["members"], room["names"], strict=True)
        if m in others and m not in room["ready"]
    ]
    if unready:
        raise ProtocolError(ErrorCode.NOT_READY, f"not ready yet: {', '.join(unready)}")
    game_id = new_game_id()
    await node.store.start_room(session.room, session.player, game_id)
    start = now_ms() + int(node.config.countdown_seconds * 1000)
    seconds = round(node.config.countdown_seconds)
    session.send(m.Countdown(room=session.room, seconds=seconds, start=start, ref=message.ref))
    notice = {"kind": "countdown", "room": session.room, "seconds": seconds, "start": start}
    for member in room["members"]:
        if member != session.player:
            await node.store.notify(member, notice)
    racers = list(zip(room["members"], room["names"], strict=True))
    options = m.Options.from_dict(json.loads(room["options"]))
    rematch_of = room.get("rematch_of") or None
    spec = GameSpec(variant=room["variant"], options=options, room=session.room, rematch_of=rematch_of)
    node.spawn(launch(node, racers, spec, game_id))


async def on_queue_join(node: Node, session: Session, message: m.QueueJoin) -> None:
    """Queue the player for a quick match: rated (matched by rating) unless asked otherwise."""
    assert session.player is not None
    variant = message.variant
    if message.rated:
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
