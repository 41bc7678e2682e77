"""Starting games: a race after its countdown, and a one-racer game (solo, daily, practice)."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import msgspec

from protocol.wire.message import Options

from .game.live import GameSpec, new_game_id, now_ms
from .node import Node
from .session import Session

__all__ = ["launch", "rated_rules", "start_match", "start_single"]


def rated_rules(options: Options) -> Options:
    """Return a race's effective options: a rated race has no undo and no hints (decision 13).

    Whatever a room's host or a client's defaults asked for, a rated race is played without
    taking moves back (a free peek at the card a move turned up, a free look ahead) and
    without the server's hints; an unrated race keeps the options it was given.
    """
    if options.rated and (options.undo or options.hints):
        return msgspec.structs.replace(options, undo=False, hints=False)
    return options


async def launch(node: Node, racers: list[tuple[str, str]], spec: GameSpec, game_id: str) -> None:
    """Start a race once its countdown has run, and tell its racers to follow it.

    Every race between players starts here, so here a rated one loses undo and hints
    whatever its room stored (a room opened before the rule, say).
    """
    await asyncio.sleep(node.config.countdown_seconds)
    number = node.next_test_deal()  # None: a fresh secret number
    spec = dataclasses.replace(spec, number=number, options=rated_rules(spec.options))
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
    # A casual match allows undo and hints; a rated one neither (decision 13).
    options = rated_rules(Options(undo=True, hints=True, spectators=True, rated=rated))
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
    if spec.mode not in ("practice", "solo"):  # a solo game counts once a move is made (handlers/race.py)
        await node.store.count_start(session.player, spec.variant)
    await node.store.set_player_place(session.player, game=game_id)
    await node.feed.attach(session, game_id, 0, ref=ref)
    return game_id
