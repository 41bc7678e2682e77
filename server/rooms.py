"""A room as its members see it: its state published to them, and leaving it."""

from __future__ import annotations

import json
from typing import Any

from protocol.wire.message import Options, RoomPlayer, RoomState

from .session import Session
from .store import Store

__all__ = ["leave_room", "leave_rooms", "publish_room", "room_state"]


async def publish_room(store: Store, code: str, ref_to: tuple[Session, Any] | None = None) -> None:
    """Send a room's state to its members; with ``ref_to``, as that session's answer."""
    room = await store.room(code)
    if room is None:
        return
    state = room_state(room)
    if ref_to is not None:
        session, ref = ref_to
        session.send(state.answering(ref))
    for member in room["members"]:
        if ref_to is not None and member == ref_to[0].player:
            continue
        await store.notify(member, {"kind": "room", "room": state.to_dict()})


def room_state(room: dict[str, Any]) -> RoomState:
    """Return a stored room as its ``room`` message."""
    players = tuple(
        RoomPlayer(player=m, name=n, ready=m in room["ready"] or m == room["host"])
        for m, n in zip(room["members"], room["names"], strict=True)
    )
    return RoomState(
        room=room["code"],
        variant=room["variant"],
        max_players=int(room["max_players"]),
        options=Options.from_dict(json.loads(room["options"])),
        host=room["host"],
        players=players,
    )


async def leave_room(store: Store, session: Session) -> None:
    """Take the session's player out of its room, and tell the members who stay."""
    assert session.player is not None
    code, session.room = session.room, None
    if code is None:
        return
    result = await store.leave_room(code, session.player)
    await store.set_player_place(session.player, room="")
    if result == "ok":
        await publish_room(store, code)


async def leave_rooms(store: Store, player: str) -> None:
    """Take a player who is gone out of every open room they host or sit in, whichever
    connection entered it: a room they host passes to the longest-present member, or closes
    if none is left; the members who stay are told."""
    codes = await store.player_rooms(player)
    for code in codes:
        room = await store.room(code)
        if room is None or room["state"] != "open":
            await store.forget_player_room(player, code)  # closed, expired, or its race began
            continue
        if await store.leave_room(code, player) == "ok":
            await publish_room(store, code)
    if codes and (await store.player_places(player)).get("room") in codes:
        await store.set_player_place(player, room="")
