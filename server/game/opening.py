"""Opening a game: its settings and first event written, the node's copy made from them.

:func:`open_game` writes a new game (:meth:`Store.create_game`) and returns the node's copy
of it built from what it wrote, not read back, so the node that starts a game can answer
its racers without another round trip. :func:`restart` and :func:`save_restart` move the
start of a game of which nothing has been sent yet to the moment its first event is sent
(a challenge game: the taker's clock and the ghosts' schedule count from there).
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from typing import Any, NamedTuple

from protocol.game import Board, ReserveRule, draw_competitive_number, summarize
from protocol.wire.message import deal_commitment

from ..store import UNREACHABLE, Store
from .live import GameSpec, LiveGame, new_game_id, now_ms, race_started_event, racer_fields

__all__ = ["OpenedRace", "open_game", "restart", "save_restart"]

log = logging.getLogger("scorpion.race")


class OpenedRace(NamedTuple):
    """A game just started by this node (:func:`open_game`)."""

    game: LiveGame
    """The node's copy of it, not yet cached (:meth:`RaceService.adopt` it)."""
    first: dict[str, Any]
    """Its first event (``race_started``), version 1."""
    ttls: dict[str, int]
    """Each player's time to live (ms, negative: none), for :meth:`Store.count_start`."""


async def open_game(
    store: Store,
    racers: list[tuple[str, str]],
    spec: GameSpec,
    game_id: str | None,
    limit_ms: int,
    *,
    follow: bool = False,
    announce: bool = True,
) -> OpenedRace:
    """Create a game on a fresh secret deal (or the spec's) with a time limit of
    ``limit_ms``, publish its first event; return the node's copy of it, its first event and
    its players' times to live. ``follow`` and ``announce`` are :meth:`Store.create_game`'s.

    The game's clock starts (``start``) just before its keys are written.
    """
    game_id = game_id or new_game_id()
    number = spec.number if spec.number is not None else draw_competitive_number(secrets.randbelow)
    salt = spec.salt or secrets.token_hex(16)
    variant, options = spec.variant, spec.options
    rule = ReserveRule.parse(options.reserve_rule)
    board = Board.new(variant, number, rule)
    start = now_ms()
    summary = summarize(board, 0).as_dict()
    commitment = deal_commitment(number, salt)
    meta = {
        "variant": variant,
        "rule": rule.value,
        "number": str(number),
        "salt": salt,
        "commitment": commitment,
        "start": start,
        "options": json.dumps(options.to_dict()),
        "room": spec.room or "",
        "limit": limit_ms,
        "mode": spec.mode,
        "daily": spec.daily or "",
        "saved": int(spec.saved),
        "rematch_of": spec.rematch_of or "",
        "challenge": spec.challenge or "",
    }
    first = race_started_event(board, start)
    ttls = await store.create_game(
        game_id,
        meta,
        racers,
        json.dumps(first),
        racer_fields(summary, "playing"),
        follow=follow,
        announce=announce,
    )
    game = LiveGame(
        game_id=game_id,
        variant=variant,
        rule=rule,
        options=options,
        start=start,
        number=number,
        salt=salt,
        commitment=commitment,
        roster=list(racers),
        room=spec.room or None,
        time_limit_ms=limit_ms,
        mode=spec.mode,
        daily=spec.daily or None,
        saved=spec.saved,
        rematch_of=spec.rematch_of or None,
        challenge=spec.challenge or None,
        version=1,
    )
    for pid, _ in racers:
        game.boards[pid] = None
        game.changed[pid] = 1
        game.status[pid] = "playing"
        game.summary[pid] = dict(summary)
        game.locks[pid] = asyncio.Lock()
    return OpenedRace(game, first, ttls)


def restart(opened: OpenedRace) -> None:
    """Start a game just opened here, of which nothing has been sent yet, now instead: its
    copy's ``start`` and its first event's. :func:`save_restart` stores it, in the same loop
    turn as the first event is sent."""
    opened.game.start = opened.first["at"] = now_ms()


async def save_restart(store: Store, opened: OpenedRace) -> None:
    """Store a restarted game's start (:func:`restart`) and first event.

    Queued on the store's move path as this is called, ahead of any action of the game (none
    can be made before its first event has been received). Should Redis not take it, the
    stored start stays the earlier one: a node that loads the game counts the racers' time
    from there, a little more of it (a warning is logged)."""
    game = opened.game
    try:
        await store.restart_game(game.game_id, game.start, json.dumps(opened.first))
    except UNREACHABLE as exc:
        log.warning("could not store a game's start: %s", exc, extra={"game": game.game_id})
