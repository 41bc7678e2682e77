"""Starting games: a race after its countdown, and a one-racer game (solo, daily, practice)."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from protocol.wire.message import Options

from ..node import Node
from ..session import Session
from .live import GameSpec, new_game_id, now_ms

__all__ = ["launch", "start_match", "start_single"]


async def launch(node: Node, racers: list[tuple[str, str]], spec: GameSpec, game_id: str) -> None:
    """Start a race once its countdown has run, and tell its racers to follow it."""
    await asyncio.sleep(node.config.countdown_seconds)
    spec = dataclasses.replace(spec, number=node.next_test_deal())  # None: a fresh secret number
    await node.race.start_race(racers, spec, game_id)
    for pid, _ in racers:
        await node.store.count_start(pid, spec.variant)  # a race is a game played, as a solo one is
    if spec.room:
        await node.store.set_room_state(spec.room, "racing")
    for pid, _ in racers:
        await node.store.notify(pid, {"kind": "race", "game": game_id})


async def start_match(node: Node, variant: str, players: list[str], *, rated: bool) -> None:
    """Tell a quick match's players who they race, and start their race after the countdown."""
    names = await node.store.player_names(players)
    racers = list(zip(players, names, strict=True))
    start = now_ms() + int(node.config.countdown_seconds * 1000)
    roster = [{"player": p, "name": n} for p, n in racers]
    for pid in players:
        await node.store.notify(pid, {"kind": "match", "variant": variant, "players": roster, "start": start})
    options = Options(undo=True, hints=True, spectators=True, rated=rated)
    node.spawn(launch(node, racers, GameSpec(variant=variant, options=options), new_game_id()))


async def start_single(
    node: Node, session: Session, spec: GameSpec, ref: Any, game_id: str | None = None
) -> str:
    """Start a one-racer game (solo, daily attempt or practice) and attach the session."""
    assert session.player is not None
    if spec.mode == "solo":
        spec = dataclasses.replace(spec, time_limit=0)  # a solo game has no time limit
    game_id = await node.race.start_race([(session.player, session.name)], spec, game_id)
    if spec.saved:
        await node.store.save_game(session.player, game_id, now_ms())
    if spec.mode != "practice":
        await node.store.count_start(session.player, spec.variant)
    await node.store.set_player_place(session.player, game=game_id)
    await node.feed.attach(session, game_id, 0, ref=ref)
    return game_id
