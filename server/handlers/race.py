"""A racer's actions in their game: move, deal, undo, hint, resign, and resume."""

from __future__ import annotations

import asyncio
from typing import cast

from protocol.wire.error import ErrorCode, ProtocolError
from protocol.wire.message import (
    Batch,
    DealReserve,
    HintRequest,
    PlayMove,
    RacerEvent,
    Resign,
    Resume,
    Undo,
)

from ..game.clock import back_to_saved
from ..game.race import BoardAction
from ..node import Node
from ..session import Session

__all__ = ["on_deal", "on_hint", "on_move", "on_resign", "on_resume", "on_undo"]


async def _followed(node: Node, session: Session, game_id: str) -> None:
    """Refuse a request about a game this connection does not follow, saying why."""
    if game_id not in session.games:
        await node.own_game(session, game_id)  # no such game, or not yours
        raise ProtocolError(ErrorCode.NOT_ALLOWED, "resume that game first")


FIRST_ACTION = 2
"""The version of a game's first action (its start is version 1)."""


async def _act(node: Node, session: Session, action: BoardAction) -> None:
    assert session.player is not None
    started = asyncio.get_running_loop().time()
    await _followed(node, session, action.game)
    try:
        answer = await node.race.act(session.player, action, session.id)
    except ProtocolError:
        node.metrics.moves.rejected += 1
        raise
    node.metrics.moves.accepted += 1
    session.games[action.game] = max(session.games.get(action.game, 0), answer.v)
    session.send(answer)
    if answer.v == FIRST_ACTION and isinstance(action, PlayMove | DealReserve):
        game = node.race.games.get(action.game)
        if game is not None and game.mode == "solo":  # played once a move is made, not at New game
            node.results.solo_played(session.player, game.variant)
    node.metrics.moves.observe(asyncio.get_running_loop().time() - started)


async def on_move(node: Node, session: Session, message: PlayMove) -> None:
    """Play one move on the racer's own board."""
    await _act(node, session, message)


async def on_deal(node: Node, session: Session, message: DealReserve) -> None:
    """Deal the reserve onto the racer's board."""
    await _act(node, session, message)


async def on_undo(node: Node, session: Session, message: Undo) -> None:
    """Take back the racer's last action, where the game allows it."""
    await _act(node, session, message)


async def on_resign(node: Node, session: Session, message: Resign) -> None:
    """Give up the game."""
    await _act(node, session, message)


async def on_hint(node: Node, session: Session, message: HintRequest) -> None:
    """Send the racer hints for their position, where the game allows them."""
    assert session.player is not None
    await _followed(node, session, message.game)
    session.send(await node.race.hint(session.player, message))


async def on_resume(node: Node, session: Session, message: Resume) -> None:
    """Send a returning racer exactly what they missed (or a snapshot) and follow the game."""
    assert session.player is not None
    game = await node.own_game(session, message.game)
    await back_to_saved(node.store, game)
    missed = await node.feed.missed_events(game, message.v, session.player)
    if missed is None:
        await node.feed.resume_with_snapshot(session, game, message.ref)
        return
    events, last = missed
    await node.feed.listen_as_racer(session, game, last)
    racer_events = cast("tuple[RacerEvent, ...]", tuple(events))
    session.send(Batch(game=game.game_id, v=last, events=racer_events, ref=message.ref))
