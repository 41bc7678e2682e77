"""Rooms to race friends in, and racing again: a new room for the racers of a finished race
(decision 5)."""

from __future__ import annotations

import json

from protocol.wire import message as m
from protocol.wire.error import ErrorCode, ProtocolError

from ..accounts import require_account
from ..game.live import GameSpec, new_game_id, now_ms
from ..launch import launch, rated_rules
from ..node import Node
from ..rooms import leave_room, publish_room
from ..session import Session
from ..store import StoreError

__all__ = [
    "REMATCH_OPENINGS",
    "on_ready",
    "on_rematch",
    "on_room_create",
    "on_room_join",
    "on_room_leave",
    "on_room_start",
]


async def on_room_create(node: Node, session: Session, message: m.RoomCreate) -> None:
    """Open a room hosted by the player, with the race's variant, size and options.

    A rated room has no undo and no hints, whatever was asked (clients send the defaults,
    both true): the room is opened with them off, and its ``room`` state shows the options
    the race will have (decision 13).
    """
    assert session.player is not None
    if message.options.rated:
        require_account(session, "a rated room", "open an unrated room: options with rated: false")
        await node.fairplay.check_ranked(session.player)
    settings = {
        "variant": message.variant,
        "max_players": message.max_players,
        "options": json.dumps(rated_rules(message.options).to_dict()),
    }
    code = await node.store.create_room(session.player, settings, int(node.config.room_ttl * 1000))
    session.room = code
    await node.store.set_player_place(session.player, room=code)
    await publish_room(node.store, code, ref_to=(session, message.ref))


async def on_room_join(node: Node, session: Session, message: m.RoomJoin) -> None:
    """Put the player in a room by its code (a rated room's only if they are an account
    and not banned).

    Codes that name no room are limited per client address (``room_code``): past the
    limit every code is refused with ``rate_limited`` for a while, good or not, so that
    codes cannot be found by guessing.
    """
    assert session.player is not None
    await node.limits.check(session.address, "room_code")
    banned = await node.store.banned(session.player) is not None
    if session.username is None or banned:
        room = await node.store.room(message.room)
        if room is not None and json.loads(room.get("options") or "{}").get("rated"):
            require_account(session, "a rated room", "join or open an unrated room")
            await node.fairplay.check_ranked(session.player)
    try:
        await node.store.join_room(message.room, session.player, int(node.config.room_ttl * 1000))
    except StoreError as exc:
        if exc.code == "no_such_room":
            await node.limits.take(session.address, "room_code")
        raise
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
    if json.loads(room["options"]).get("rated"):
        for member in room["members"]:
            await node.fairplay.check_ranked(member)
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


REMATCH_OPENINGS = 3
"""m.Rematch rooms one racer may open for one race (each tells the other racers)."""


async def on_rematch(node: Node, session: Session, message: m.Rematch) -> None:
    """Put the player in the room of a race's rematch, opening it if nobody has yet.

    The room has the race's variant, options (a rated race's without undo and hints, as
    every rated room's) and size, and its first player is its host; the race's other
    racers are told (``rematch_offered``) and join it the same way. A rematch room that
    closed, started or filled up is replaced by a new one.
    """
    assert session.player is not None
    game = await node.own_game(session, message.game, "only the race's own racers can ask for a rematch")
    await node.feed.maybe_forget(game)  # only read here: not kept on this node for it
    if game.mode != "race" or len(game.roster) < 2:
        raise ProtocolError(
            ErrorCode.NOT_ALLOWED,
            "a rematch is for races between players (solo games have New game and Replay)",
        )
    if not game.ended:
        raise ProtocolError(ErrorCode.NOT_ALLOWED, "the race is still on: a rematch comes after it")
    if game.options.rated:
        require_account(session, "a rated rematch", "open an unrated room")
        await node.fairplay.check_ranked(session.player)
    store = node.store
    ttl_ms = int(node.config.room_ttl * 1000)
    for _ in range(3):
        code = await store.rematch_room(game.game_id)
        if code is not None:
            try:
                await store.join_room(code, session.player, ttl_ms)
            except StoreError as exc:
                if exc.code not in ("no_such_room", "room_started", "room_full"):
                    raise
                await store.drop_rematch(game.game_id, code)
                continue
            opened = False
        else:
            if await store.rematch_openings(game.game_id, session.player) >= REMATCH_OPENINGS:
                raise ProtocolError(
                    ErrorCode.NOT_ALLOWED,
                    f"you have opened {REMATCH_OPENINGS} rematch rooms for this race already:"
                    " open a room instead and share its code",
                )
            size = max(len(game.roster), await store.room_size(game.room) if game.room else 0)
            settings = {
                "variant": game.variant,
                "max_players": min(size, m.MAX_PLAYERS),
                "options": json.dumps(rated_rules(game.options).to_dict()),
                "rematch_of": game.game_id,
            }
            code = await store.create_room(session.player, settings, ttl_ms)
            held = await store.claim_rematch(game.game_id, code, ttl_ms)
            if held != code:  # another racer opened one at the same moment: go there
                await store.leave_room(code, session.player)
                continue
            opened = True
            await store.count_rematch_opening(game.game_id, session.player, ttl_ms)
            node.metrics.rematches.inc()
        session.room = code
        await store.set_player_place(session.player, room=code)
        await publish_room(store, code, ref_to=(session, message.ref))
        if opened:
            notice = {
                "kind": "rematch",
                "game": game.game_id,
                "room": code,
                "player": session.player,
                "name": session.name or "?",
            }
            for racer, _ in game.roster:
                if racer != session.player:
                    await store.notify(racer, notice)
        return
    raise ProtocolError(ErrorCode.UNAVAILABLE, "the rematch room could not be opened; try again")
