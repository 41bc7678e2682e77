"""Starting games: a race after its countdown, and a one-racer game (solo, daily, practice)."""

from __future__ import annotations

import asyncio
from typing import Any

from protocol.wire.message import Options

from .live import now_ms
from .node import Node
from .session import Session

__all__ = ["launch", "start_single"]


async def launch(
    node: Node,
    racers: list[tuple[str, str]],
    variant: str,
    options: Options,
    room: str | None,
    game_id: str,
    rematch_of: str | None = None,
) -> None:
    """Start a race once its countdown has run, and tell its racers to follow it."""
    await asyncio.sleep(node.config.countdown_seconds)
    number = node.next_test_deal()  # None: a fresh secret number
    await node.race.start_race(
        racers, variant, options, room=room, game_id=game_id, number=number, rematch_of=rematch_of
    )
    if room:
        await node.store.set_room_state(room, "racing")
    for pid, _ in racers:
        await node.store.notify(pid, {"kind": "race", "game": game_id})


async def start_single(
    node: Node,
    session: Session,
    variant: str,
    options: Options,
    *,
    mode: str,
    ref: Any,
    number: int | None = None,
    salt: str | None = None,
    daily: str | None = None,
    save: bool = False,
    game_id: str | None = None,
) -> str:
    """Start a one-racer game (solo, daily attempt or practice) and attach the session."""
    assert session.player is not None
    game_id = await node.race.start_race(
        [(session.player, session.name)],
        variant,
        options,
        game_id=game_id,
        number=number,
        mode=mode,
        daily=daily,
        salt=salt,
        time_limit=0 if mode == "solo" else None,
        saved=save,
    )
    if save:
        await node.store.save_game(session.player, game_id, now_ms())
    if mode != "practice":
        await node.store.count_start(session.player, variant)
    await node.store.set_player_place(session.player, game=game_id)
    await node.feed.attach(session, game_id, 0, ref=ref)
    return game_id
