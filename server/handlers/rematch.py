"""Race again: a new room for the racers of a finished race (decision 5)."""

from __future__ import annotations

import json

from protocol.wire.error import ErrorCode, ProtocolError
from protocol.wire.message import MAX_PLAYERS, Rematch

from ..node import Node
from ..rooms import publish_room
from ..session import Session
from ..store import StoreError

__all__ = ["REMATCH_OPENINGS", "on_rematch"]

REMATCH_OPENINGS = 3
"""Rematch rooms one racer may open for one race (each tells the other racers)."""


async def on_rematch(node: Node, session: Session, message: Rematch) -> None:
    """Put the player in the room of a race's rematch, opening it if nobody has yet.

    The room has the race's variant, options and size, and its first player is its
    host; the race's other racers are told (``rematch_offered``) and join it the same
    way. A rematch room that closed, started or filled up is replaced by a new one.
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
                "max_players": min(size, MAX_PLAYERS),
                "options": json.dumps(game.options.to_dict()),
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
